//! The lines `iosurvey train` and `iosurvey checkpoint` say for a stored run: its figures as
//! the study stored them (`train.*`, `ckpt.*` among the run's tool parameters).

use crate::record::RunRecord;

/// A stored figure by its key, as stored, or `-`.
fn figure<'r>(r: &'r RunRecord, key: &str) -> &'r str {
    r.tool_params.get(key).map_or("-", String::as_str)
}

/// A training run's line: AU and whether it passed, samples/s, read rate, data wait and CPU
/// per sample; none for a run that failed.
pub fn trained(r: &RunRecord) -> Option<String> {
    let id = r.id.unwrap_or_default();
    let get = |k: &str| figure(r, &format!("train.{k}"));
    if r.error.is_some() {
        return None;
    }
    let num = |k: &str| get(k).parse::<f64>().ok();
    let pct = |k: &str| num(k).map_or("-".into(), |v| format!("{:.1}%", v * 100.0));
    let ms = |k: &str| num(k).map_or("-".into(), |v| format!("{:.2} ms", v * 1e3));
    Some(format!(
        "run {id}: {} on {} x{}: AU {} ({} at {}), {} samples/s, {} MiB/s read, data wait p50 {} p99 {}, CPU {} per sample",
        get("workload"),
        get("accelerator"),
        get("accelerators"),
        pct("au"),
        get("pass"),
        num("au_target").map_or("-".into(), |v| format!("{:.0}%", v * 100.0)),
        get("samples_per_s"),
        get("read_mib_s"),
        ms("wait_p50_s"),
        ms("wait_p99_s"),
        num("cpu_per_sample_s").map_or("-".into(), |c| format!("{:.1} us", c * 1e6)),
    ))
}

/// A checkpoint run's line: the slowest rank's write and read, and the recovery time.
pub fn checkpointed(r: &RunRecord) -> String {
    let get = |k: &str| figure(r, &format!("ckpt.{k}"));
    let rank_bytes = get("rank_bytes").parse::<u64>().map_or("-".into(), crate::units::format_size);
    format!(
        "run {}: {} checkpoints of {} on {} ranks ({} a rank): write {} s max, {} GiB/s min over ranks; read {} s max, {} GiB/s min; recovery {} s",
        r.id.unwrap_or_default(),
        get("checkpoints"),
        get("model"),
        get("ranks"),
        rank_bytes,
        get("write_max_duration_s"),
        get("write_min_gib_s"),
        get("read_max_duration_s"),
        get("read_min_gib_s"),
        get("recovery_s"),
    )
}
