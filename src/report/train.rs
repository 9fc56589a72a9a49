//! The lines `iosurvey train` and `iosurvey checkpoint` say for a stored run: its figures as
//! the record holds them ([`RunRecord::training`]), in the forms they are stored in as text.

use crate::record::train::{said, Training};
use crate::record::RunRecord;

/// A training run's line: AU and whether it passed, samples/s, read rate, data wait and CPU
/// per sample; none for a run that failed, or that is no training run.
pub fn trained(r: &RunRecord) -> Option<String> {
    let id = r.id.unwrap_or_default();
    if r.error.is_some() {
        return None;
    }
    let training = r.training()?;
    let Training::Train(t) = training.as_ref() else { return None };
    let pct = |v: Option<f64>| said(v.map(|v| format!("{:.1}%", v * 100.0)));
    let ms = |v: Option<f64>| said(v.map(|v| format!("{:.2} ms", v * 1e3)));
    Some(format!(
        "run {id}: {} on {} x{}: AU {} ({} at {}), {} samples/s, {} MiB/s read, data wait p50 {} p99 {}, CPU {} per sample",
        t.workload,
        said(t.accelerator.as_ref()),
        said(t.accelerators),
        pct(t.au),
        said(t.pass.map(|p| if p { "pass" } else { "fail" })),
        said(t.au_target.map(|v| format!("{:.0}%", v * 100.0))),
        said(t.samples_per_s.map(|v| format!("{v:.2}"))),
        said(t.read_mib_s.map(|v| format!("{v:.2}"))),
        ms(t.wait_p50_s),
        ms(t.wait_p99_s),
        said(t.cpu_per_sample_s.map(|c| format!("{:.1} us", c * 1e6))),
    ))
}

/// A checkpoint run's line: the slowest rank's write and read, and the recovery time.
pub fn checkpointed(r: &RunRecord) -> String {
    let training = r.training();
    let c = match training.as_deref() {
        Some(Training::Checkpoint(c)) => c.clone(),
        _ => Default::default(),
    };
    format!(
        "run {}: {} checkpoints of {} on {} ranks ({} a rank): write {} s max, {} GiB/s min over ranks; read {} s max, {} GiB/s min; recovery {} s",
        r.id.unwrap_or_default(),
        said(c.checkpoints),
        if c.model.is_empty() { "-" } else { &c.model },
        said(c.ranks),
        said(c.rank_bytes.map(crate::units::format_size)),
        said(c.write_max_duration_s),
        said(c.write_min_gib_s),
        said(c.read_max_duration_s),
        said(c.read_min_gib_s),
        said(c.recovery_s),
    )
}
