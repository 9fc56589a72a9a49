//! `iosurvey train` and `iosurvey checkpoint`: the studies of `iosurvey::study::train`,
//! played through the library as every study is; this says their figures.

use super::Cli;
use iosurvey::record::RunRecord;
use iosurvey::study::Outcome;

/// `train`'s lines for what it stored.
pub(super) fn trained(cli: &Cli, played: &Outcome) {
    for r in played.records.iter().filter(|_| !cli.quiet) {
        say_train(r);
    }
    // The answer of --find-max: said even with -q, as it is what was asked.
    for note in &played.notes {
        outln!("{note}");
    }
}

/// A stored figure by its key, as stored, or `-`.
fn figure<'r>(r: &'r RunRecord, key: &str) -> &'r str {
    r.tool_params.get(key).map_or("-", String::as_str)
}

fn say_train(r: &RunRecord) {
    let id = r.id.unwrap_or_default();
    let get = |k: &str| figure(r, &format!("train.{k}"));
    if r.error.is_some() {
        return;
    }
    let num = |k: &str| get(k).parse::<f64>().ok();
    let pct = |k: &str| num(k).map_or("-".into(), |v| format!("{:.1}%", v * 100.0));
    let ms = |k: &str| num(k).map_or("-".into(), |v| format!("{:.2} ms", v * 1e3));
    outln!(
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
    );
}

/// `checkpoint`'s line for what it stored.
pub(super) fn checkpointed(cli: &Cli, played: &Outcome) {
    for r in played.records.iter().filter(|r| !cli.quiet && r.error.is_none()) {
        let get = |k: &str| figure(r, &format!("ckpt.{k}"));
        let rank_bytes = get("rank_bytes").parse::<u64>().map_or("-".into(), iosurvey::units::format_size);
        outln!(
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
        );
        for w in &r.warnings {
            say!("iosurvey: warning: {w}");
        }
    }
}
