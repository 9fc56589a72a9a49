//! Text renderings of stored records: one run, the list of runs, a survey's characterization.
//! Every rate is labelled with its unit; a figure that may come from a cache says so.

use crate::measure::Spread;
use crate::record::{RunRecord, Status};
use crate::spec::Op;
use crate::store::RunRow;
use crate::units::{format_size, format_time, gb_per_s, mib_per_s, secs};
use std::fmt::Write;

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

fn mib(v: Option<f64>) -> String {
    opt(v, |b| format!("{:.1}", mib_per_s(b)))
}

/// The full text of one run: context, a line per phase, the spread over iterations.
pub fn run_text(r: &RunRecord) -> String {
    let mut s = String::new();
    let id = r.id.map_or("unsaved".to_string(), |i| i.to_string());
    let _ = writeln!(s, "run {id}: {}", r.workload.label());
    let e = &r.env;
    let _ = writeln!(
        s,
        "target {} ({} on {}{}), host {}, kernel {}, {} CPUs, {} RAM",
        e.target,
        e.fs_type,
        e.mount_source,
        e.block_device.as_deref().map(|d| format!(" [{d}]")).unwrap_or_default(),
        e.host,
        e.kernel,
        e.cpu_count,
        format_size(e.ram_bytes)
    );
    let w = &r.workload;
    let mut options = Vec::new();
    for (on, name) in [
        (w.direct, "direct"),
        (w.fsync, "fsync"),
        (w.fsync_each, "fsync-each"),
        (w.verify, "verify"),
        (w.reorder, "reorder"),
        (w.drop_caches, "drop-caches"),
    ] {
        if on {
            options.push(name.to_string());
        }
    }
    if let Some(sw) = w.stonewall_secs {
        options.push(format!("stonewall {sw}s{}", if w.wear_out { " + wear-out" } else { "" }));
    }
    if !options.is_empty() {
        let _ = writeln!(s, "options: {}", options.join(", "));
    }
    let _ = writeln!(
        s,
        "\n{:<6} {:>4} {:>12} {:>8} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9}  notes",
        "phase", "iter", "MiB/s", "GB/s", "IOPS", "xfer MiB/s", "task min", "task max", "1st-done", "time s"
    );
    for p in &r.phases {
        let f = &p.figures;
        let mut notes = Vec::new();
        if let Some(c) = &p.possibly_cached {
            notes.push(format!("possibly cached: {c}"));
        }
        if let Some(v) = &p.verify {
            notes.push(if v.bad == 0 {
                format!("verified {} transfers", v.checked)
            } else {
                format!("{} of {} transfers BAD", v.bad, v.checked)
            });
        }
        let _ = writeln!(
            s,
            "{:<6} {:>4} {:>12} {:>8} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9.3}  {}",
            p.op.name(),
            p.iteration + 1,
            mib(f.bandwidth),
            opt(f.bandwidth, |b| format!("{:.2}", gb_per_s(b))),
            opt(f.iops, |v| format!("{v:.0}")),
            mib(f.transfer_rate),
            mib(f.task_min),
            mib(f.task_max),
            mib(f.first_finish_rate),
            secs(f.window_ns),
            notes.join("; ")
        );
    }
    let timed: Vec<_> = r.phases.iter().filter(|p| p.latency.count > 0).collect();
    if !timed.is_empty() {
        let _ = writeln!(
            s,
            "\nlatency per transfer (us, engine {}, iodepth {}):\n{:<6} {:>4} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            w.engine,
            w.iodepth,
            "phase", "iter", "count", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"
        );
        for p in timed {
            let l = &p.latency;
            let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
            let _ = writeln!(
                s,
                "{:<6} {:>4} {:>10} {:>9.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                p.op.name(),
                p.iteration + 1,
                l.count,
                l.mean / 1e3,
                us(l.p50),
                us(l.p90),
                us(l.p99),
                us(l.p999),
                us(l.p9999),
                us(l.max)
            );
        }
        for p in r.phases.iter().filter(|p| p.series.bytes.len() > 1) {
            let secs = p.series.interval_ns as f64 / 1e9;
            let rates: Vec<f64> = p.series.bytes.iter().map(|&b| mib_per_s(b as f64 / secs)).collect();
            let (lo, hi) = rates.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
            let _ = writeln!(
                s,
                "{} {}: {} intervals of {secs} s, {lo:.1} to {hi:.1} MiB/s (first and last partial)",
                p.op.name(),
                p.iteration + 1,
                rates.len()
            );
        }
    }
    if r.hosts.len() > 1 {
        let _ = writeln!(
            s,
            "\nper node (MiB/s), {} nodes, clock uncertainty {} us:",
            r.hosts.len(),
            r.clock_uncertainty_ns / 1000
        );
        for p in &r.phases {
            let cells: Vec<String> = RunRecord::per_node(p)
                .into_iter()
                .map(|(n, f)| format!("{}={}", r.hosts.get(n as usize).map_or("?", String::as_str), mib(f.bandwidth)))
                .collect();
            let _ = writeln!(s, "{:<6} {:>4}  {}", p.op.name(), p.iteration + 1, cells.join(" "));
        }
    }
    if w.reorder {
        let _ = writeln!(
            s,
            "reorder: {}",
            if r.reorder_crosses_nodes {
                "every task read data written on another node"
            } else {
                "tasks read a neighbour's data on the same node (the page cache is shared)"
            }
        );
    }
    if w.iterations > 1 {
        let _ = writeln!(s, "\nover {} iterations (MiB/s): min / mean / max / stddev", w.iterations);
        for sum in r.summaries() {
            if let Some(b) = sum.bandwidth {
                let _ = writeln!(s, "{:<6} {}", sum.op.name(), spread_text(&b, mib_per_s));
            }
        }
    }
    for warning in &r.warnings {
        let _ = writeln!(s, "warning: {warning}");
    }
    if r.status == Status::Failed {
        let _ = writeln!(s, "FAILED: {}", r.error.as_deref().unwrap_or("unknown error"));
    }
    s
}

fn spread_text(sp: &Spread, scale: impl Fn(f64) -> f64) -> String {
    format!(
        "{:.1} / {:.1} / {:.1} / {}",
        scale(sp.min),
        scale(sp.mean),
        scale(sp.max),
        sp.stddev.map_or("-".to_string(), |d| format!("{:.1}", scale(d)))
    )
}

/// A sweep: one line per point, team size against write and read (IOPS for random work).
pub fn sweep_text(sweep_id: Option<i64>, runs: &[RunRecord]) -> String {
    let mut s = String::new();
    let first = runs.first().map(|r| r.workload.label()).unwrap_or_default();
    let _ = writeln!(s, "sweep {} over clients: {first}", sweep_id.map_or("-".into(), |i| i.to_string()));
    let random = runs.first().is_some_and(|r| r.workload.pattern != crate::spec::Pattern::Sequential);
    let unit = if random { "IOPS" } else { "MiB/s" };
    let _ = writeln!(
        s,
        "{:>8} {:>6} {:>14} {:>14}  notes",
        "clients",
        "run",
        format!("write {unit}"),
        format!("read {unit}")
    );
    for r in runs {
        let cell = |op| headline(r, op, random, false);
        let notes = cache_notes(r);
        let _ = writeln!(
            s,
            "{:>8} {:>6} {:>14} {:>14}  {}",
            r.workload.tasks,
            r.id.map_or("-".into(), |i| i.to_string()),
            cell(Op::Write),
            cell(Op::Read),
            if r.status == Status::Failed {
                format!("FAILED: {}", r.error.as_deref().unwrap_or(""))
            } else {
                notes.join("; ")
            }
        );
    }
    s
}

/// Network ceilings between nodes, one line per pattern.
pub fn net_text(results: &[crate::net::NetResult]) -> String {
    let mut s = String::new();
    if results.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\nnetwork ceiling (MPI point to point):");
    for n in results {
        let mut senders = n.senders.clone();
        senders.dedup();
        let mut receivers = n.receivers.clone();
        receivers.sort();
        receivers.dedup();
        let _ = writeln!(
            s,
            "{:<7} {} -> {}: {}",
            n.pattern,
            senders.join(","),
            receivers.join(","),
            n.bandwidth.map_or("-".to_string(), crate::units::format_rate)
        );
    }
    s
}

/// `iosurvey ls`: a line per stored run; the group (`s3` a survey, `w2` a sweep) is what
/// `iosurvey show` takes too. Sequential runs show their best MiB/s per op, random ones their
/// best IOPS; `*` marks a figure that may be the page cache's.
pub fn list_text(rows: &[RunRow]) -> String {
    let mut s = format!(
        "{:>5} {:>6} {:<23} {:<12} {:<7} {:<10} {:<36} {:<44} {}\n",
        "id", "group", "started", "host", "status", "fs", "best", "workload", "target"
    );
    let mut cached = false;
    for r in rows {
        let best: Vec<String> = r
            .best
            .iter()
            .map(|b| {
                cached |= b.possibly_cached;
                let mark = if b.possibly_cached { "*" } else { "" };
                match r.random {
                    true => format!("{}={} IOPS{mark}", b.op, opt(b.iops, |v| format!("{v:.0}"))),
                    false => format!("{}={} MiB/s{mark}", b.op, mib(b.bandwidth)),
                }
            })
            .collect();
        let _ = writeln!(
            s,
            "{:>5} {:>6} {:<23} {:<12} {:<7} {:<10} {:<36} {:<44} {}",
            r.id,
            match (r.survey_id, r.sweep_id) {
                (Some(i), _) => format!("s{i}"),
                (_, Some(i)) => format!("w{i}"),
                _ => "-".into(),
            },
            format_time(r.started),
            r.host,
            r.status,
            r.fs_type,
            best.join(" "),
            r.label,
            r.target
        );
    }
    if cached {
        s.push_str("* possibly the page cache's figure, not the storage's ('iosurvey show ID' says why)\n");
    }
    s
}

/// Which ops' figures may be the page cache's, and why.
fn cache_notes(r: &RunRecord) -> Vec<String> {
    r.summaries()
        .into_iter()
        .filter_map(|x| x.possibly_cached.map(|c| format!("{} possibly cached: {c}", x.op.name())))
        .collect()
}

/// The mean IOPS (random work) or MiB/s (sequential) of an op, with its unit if asked.
fn headline(r: &RunRecord, op: Op, random: bool, unit: bool) -> String {
    match (mean_of(r, op, random), random) {
        (None, _) => "-".to_string(),
        (Some(v), true) => format!("{v:.0}{}", if unit { " IOPS" } else { "" }),
        (Some(v), false) => format!("{:.1}{}", mib_per_s(v), if unit { " MiB/s" } else { "" }),
    }
}

/// Mean bandwidth (or IOPS) of an op over a run's iterations.
fn mean_of(r: &RunRecord, op: Op, iops: bool) -> Option<f64> {
    let sum = r.summaries().into_iter().find(|s| s.op == op)?;
    (if iops { sum.iops } else { sum.bandwidth }).map(|s| s.mean)
}

/// The compact characterization printed at the end of a survey.
pub fn survey_text(survey_id: i64, runs: &[RunRecord]) -> String {
    let mut s = String::new();
    let target = runs.first().map(|r| format!("{} ({})", r.env.target, r.env.fs_type)).unwrap_or_default();
    let _ = writeln!(s, "survey {survey_id} of {target}");
    let _ = writeln!(s, "{:<20} {:>16} {:>16}  notes", "workload", "write", "read");
    for r in runs {
        let random = r.workload.pattern != crate::spec::Pattern::Sequential;
        let cell = |op| headline(r, op, random, true);
        let mut notes = cache_notes(r);
        if r.workload.direct {
            notes.push("O_DIRECT".into());
        }
        if r.status == Status::Failed {
            notes.push(format!("FAILED: {}", r.error.as_deref().unwrap_or("")));
        }
        let _ = writeln!(
            s,
            "{:<20} {:>16} {:>16}  {}",
            r.name.as_deref().unwrap_or("-"),
            cell(Op::Write),
            cell(Op::Read),
            notes.join("; ")
        );
    }
    let by_name = |n: &str| runs.iter().find(|r| r.name.as_deref() == Some(n));
    if let (Some(fpt), Some(shared)) = (by_name("seq-file-per-task"), by_name("seq-shared")) {
        for op in [Op::Write, Op::Read] {
            if let (Some(a), Some(b)) = (mean_of(fpt, op, false), mean_of(shared, op, false)) {
                let _ = writeln!(s, "N-to-1 {} is {:.0}% of N-to-N", op.name(), 100.0 * b / a);
            }
        }
    }
    s
}
