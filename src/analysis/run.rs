//! One run shown in full (`show`), and the list of stored runs (`ls`).

use super::document::mib;
use super::{charts, meta, objects, outliers, timeline};
use super::{Cell, Chart, Finding, Report, Table};
use crate::measure::Spread;
use crate::record::{imported_from, PhaseRecord, RunRecord, Status};
use crate::spec::Op;
use crate::store::RunRow;
use crate::units::{format_size, format_time, gb_per_s, mib_per_s, secs};

/// A phase's notes: whether its figure may be the page cache's, and what verification found
/// among its `units` (transfers, files).
pub(super) fn phase_notes(p: &PhaseRecord, units: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(c) = &p.possibly_cached {
        notes.push(format!("possibly cached: {c}"));
    }
    if let Some(v) = &p.verify {
        notes.push(match v.bad {
            0 => format!("verified {} {units}", v.checked),
            bad => format!("{bad} of {} {units} BAD", v.checked),
        });
    }
    notes
}

/// A block device as a heading names it: kernel name, size, model, blocks, rotation, scheduler.
fn device_said(d: &crate::target::device::DeviceFacts) -> String {
    let model = if d.model.is_empty() { String::new() } else { format!(" {}", crate::escape::visible(&d.model)) };
    format!(
        "block device {}{model}, {}, logical/physical block {}/{} B, {}, scheduler {}",
        d.name,
        format_size(d.size_bytes),
        d.logical_block,
        d.physical_block,
        if d.rotational { "rotational" } else { "non-rotational" },
        if d.scheduler.is_empty() { "-" } else { &d.scheduler }
    )
}

/// The run's events that ran, as marks on its time series: seconds into the phase the first
/// one fell in (every phase's series starts at 0 on the chart).
fn event_marks(r: &RunRecord, t: &timeline::Timeline) -> Vec<(String, f64)> {
    r.events
        .iter()
        .filter_map(|e| {
            let at = e.started_ns?.checked_sub(t.origin_ns)? as f64 / 1e9;
            let command = crate::escape::visible(&e.command);
            let short: String = command.chars().take(40).collect();
            let ellipsis = if short.len() < command.len() { "..." } else { "" };
            Some((format!("event at {at:.1} s: {short}{ellipsis}"), at))
        })
        .collect()
}

/// A phase's time series as (seconds into the phase, rate): MiB/s, or items/s for metadata.
fn series_rates(p: &PhaseRecord, meta: bool) -> impl Iterator<Item = (f64, f64)> + '_ {
    let width = p.series.interval_ns as f64 / 1e9;
    let counts = if meta { &p.series.ops } else { &p.series.bytes };
    let scale = if meta { 1.0 } else { 1.0 / 1048576.0 };
    let last = charts::last_interval_secs(p);
    counts.iter().enumerate().map(move |(i, &n)| {
        let length = if i + 1 == counts.len() { last.unwrap_or(width) } else { width };
        (i as f64 * width, n as f64 * scale / length)
    })
}

fn series_unit(meta: bool) -> &'static str {
    if meta {
        "items/s"
    } else {
        "MiB/s"
    }
}

fn group(r: &crate::store::RunRow) -> String {
    match (r.survey_id, r.sweep_id, r.campaign_id, r.targets_id) {
        (Some(i), ..) => format!("s{i}"),
        (_, Some(i), ..) => format!("w{i}"),
        (_, _, Some(i), _) => format!("c{i}"),
        (.., Some(i)) => format!("t{i}"),
        _ => "-".into(),
    }
}

/// One run in full: context, a row per phase, latency, per node, the spread over iterations.
pub fn run(r: &RunRecord) -> Report {
    let w = &r.workload;
    let mut report = Report::default();
    let id = r.id.map_or("unsaved".to_string(), |i| i.to_string());
    context(r, &id, &mut report);
    let meta = w.meta().is_some();
    match meta {
        true => report.tables.extend(meta::phases(r)),
        false => report.tables.push(phases(r)),
    }
    report.tables.extend(latency(r, meta));
    report.tables.extend(objects::requests(r));
    over_time(r, &id, meta, &mut report);
    report.charts.extend(charts::run(r, &id));
    report.tables.extend(per_node(r, meta));
    if w.data().is_some_and(|d| d.reorder) {
        report.footer.push(format!(
            "reorder: {}",
            if r.reorder_crosses_nodes {
                "every task read data written on another node"
            } else {
                "tasks read a neighbour's data on the same node (the page cache is shared)"
            }
        ));
    }
    if w.iterations > 1 {
        let mut spread =
            Table::new(format!("over {} iterations (MiB/s)", w.iterations), &["op", "min", "mean", "max", "stddev"]);
        for sum in r.summaries() {
            if let Some(b) = sum.bandwidth {
                spread.rows.push(spread_row(sum.op, &b));
            }
        }
        report.tables.push(spread);
    }
    report.footer.extend(r.warnings.iter().map(|w| format!("warning: {w}")));
    if r.status == Status::Failed {
        report.footer.push(format!("FAILED: {}", r.error.as_deref().unwrap_or("unknown error")));
    }
    report.findings.extend(slow_ones(r));
    report.findings.extend(read_from_cache(r));
    report
}

/// A run's context: its heading (workload, target, machine, options, where an imported run
/// came from) and the parameters another tool or a study gave it.
fn context(r: &RunRecord, id: &str, report: &mut Report) {
    let (w, e) = (&r.workload, &r.env);
    report.heading.push(format!("run {id}: {}", w.label()));
    let on = match e.devices.is_empty() {
        true => format!(
            "{} on {}{}",
            e.fs_type,
            e.mount_source,
            e.block_device.as_deref().map(|d| format!(" [{d}]")).unwrap_or_default()
        ),
        false => e.devices.iter().map(device_said).collect::<Vec<_>>().join("; "),
    };
    let imported = imported_from(&r.provenance).is_some();
    report.heading.push(match imported {
        // Another tool's file says no more of the machine than these.
        true => format!("target {}, host {}, started {}", e.target, e.host, format_time(r.started)),
        false => format!(
            "target {} ({on}), host {}, kernel {}, {} CPUs, {} RAM, started {}",
            e.target,
            e.host,
            e.kernel,
            e.cpu_count,
            format_size(e.ram_bytes),
            format_time(r.started)
        ),
    });
    let options = w.changed();
    if !options.is_empty() {
        report.heading.push(format!("options: {}", options.join(", ")));
    }
    if let Some(tool) = imported_from(&r.provenance) {
        let file = r.tool_params.get("import.file").map_or(String::new(), |f| format!(" file {f}"));
        report.heading.push(format!(
            "imported from {tool}{file}: the figures {tool} reported, not measured by iosurvey; command: {}",
            r.command_line
        ));
        let mut params = Table::new("the tool's own parameters", &["parameter", "value"]);
        for (k, v) in r.tool_params.iter().filter(|(k, _)| k.as_str() != "import.file") {
            params.rows.push(vec![Cell::text(k), Cell::text(v)]);
        }
        if !params.rows.is_empty() {
            report.tables.push(params);
        }
    } else if !r.tool_params.is_empty() {
        // A study measured beside the data phases (train): its own figures, by name.
        let mut figures = Table::new("the study's figures", &["figure", "value"]);
        for (k, v) in &r.tool_params {
            figures.rows.push(vec![Cell::text(k), Cell::text(v)]);
        }
        report.tables.push(figures);
    }
}

/// A data run's phases, a row each: its rates, time and notes.
fn phases(r: &RunRecord) -> Table {
    let mut phases = Table::new(
        "phases",
        &[
            "phase",
            "iter",
            "MiB/s",
            "GB/s",
            "IOPS",
            "xfer MiB/s",
            "task min",
            "task max",
            "1st-done",
            "time s",
            "notes",
        ],
    );
    for p in &r.phases {
        let f = &p.figures;
        let notes = phase_notes(p, "transfers");
        phases.rows.push(vec![
            Cell::text(p.op.name()),
            Cell::Int(p.iteration as u64 + 1),
            mib(f.bandwidth),
            Cell::num(f.bandwidth.map(gb_per_s), 2),
            Cell::num(f.iops, 0),
            mib(f.transfer_rate),
            mib(f.task_min),
            mib(f.task_max),
            mib(f.first_finish_rate),
            Cell::num(Some(secs(f.window_ns)), 3),
            Cell::text(notes.join("; ")),
        ]);
    }
    phases
}

/// The latency of each timed phase, and in its notes the range of each phase's time series.
fn latency(r: &RunRecord, meta: bool) -> Option<Table> {
    let timed: Vec<_> = r.phases.iter().filter(|p| p.latency.count > 0).collect();
    if timed.is_empty() {
        return None;
    }
    let title = match r.workload.data() {
        None => "latency per item (us)".to_string(),
        Some(d) => format!("latency per transfer (us, engine {}, iodepth {})", d.engine, d.iodepth),
    };
    let mut lat = Table::new(title, &["phase", "iter", "count", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"]);
    let us = |ns: u64| Cell::num(Some(ns as f64 / 1e3), 1);
    for p in timed {
        let l = &p.latency;
        lat.rows.push(vec![
            Cell::text(p.op.name()),
            Cell::Int(p.iteration as u64 + 1),
            Cell::Int(l.count),
            Cell::num(Some(l.mean / 1e3), 1),
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.p999),
            us(l.p9999),
            us(l.max),
        ]);
    }
    for p in r.phases.iter().filter(|p| p.series.bytes.len() > 1) {
        let width = p.series.interval_ns as f64 / 1e9;
        let rates: Vec<f64> = series_rates(p, meta).map(|(_, r)| r).collect();
        let (lo, hi) = rates.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        lat.notes.push(format!(
            "{} {}: {} intervals of {width} s, {lo:.1} to {hi:.1} {} (first and last partial)",
            p.op.name(),
            p.iteration + 1,
            rates.len(),
            series_unit(meta)
        ));
    }
    Some(lat)
}

/// The run over time: each phase's time series on one chart, marked with the run's events,
/// and the time line's table and findings.
fn over_time(r: &RunRecord, id: &str, meta: bool, report: &mut Report) {
    // Read once: the chart marks the events, the table and findings split the run at them.
    let line = timeline::of(r);
    let series: Vec<(String, Vec<(f64, f64)>)> = r
        .phases
        .iter()
        .filter(|p| p.series.bytes.len() > 1)
        .map(|p| (format!("{} {}", p.op.name(), p.iteration + 1), series_rates(p, meta).collect()))
        .collect();
    if !series.is_empty() {
        report.charts.push(Chart {
            title: format!("run {id}: {} over time, by phase", series_unit(meta)),
            x: "seconds into the phase".into(),
            y: series_unit(meta).into(),
            series,
            marks: line.as_ref().map_or_else(Vec::new, |t| event_marks(r, t)),
            ..Chart::default()
        });
    }
    if let Some((table, findings)) = line.as_ref().map(|t| timeline::tables(r, t)) {
        report.tables.push(table);
        report.findings.extend(findings);
    }
}

/// Each phase's rate on each node, when the run had several.
fn per_node(r: &RunRecord, meta: bool) -> Option<Table> {
    if r.hosts.len() < 2 {
        return None;
    }
    let title = format!(
        "per node ({}), {} nodes, clock uncertainty {} us",
        if meta { "items/s" } else { "MiB/s" },
        r.hosts.len(),
        r.clock_uncertainty_ns / 1000
    );
    let mut columns = vec!["phase", "iter"];
    columns.extend(r.hosts.iter().map(String::as_str));
    let mut nodes = Table::new(title, &columns);
    for p in &r.phases {
        let mut row = vec![Cell::text(p.op.name()), Cell::Int(p.iteration as u64 + 1)];
        let per_node = RunRecord::per_node(p);
        row.extend((0..r.hosts.len()).map(|n| {
            let figures = per_node.iter().find(|(k, _)| *k as usize == n).map(|(_, f)| f);
            match meta {
                true => Cell::num(figures.and_then(|f| f.iops), 0),
                false => mib(figures.and_then(|f| f.bandwidth)),
            }
        }));
        nodes.rows.push(row);
    }
    Some(nodes)
}

fn spread_row(op: Op, s: &Spread) -> Vec<Cell> {
    let m = |v: f64| Cell::num(Some(mib_per_s(v)), 1);
    vec![Cell::text(op.name()), m(s.min), m(s.mean), m(s.max), s.stddev.map_or(Cell::Empty, m)]
}

/// What a list says of imported runs.
pub const IMPORTED_NOTE: &str =
    "imported: the figures another tool reported, read from its output, not measured by iosurvey ('iosurvey show ID' names the file)";

/// A run's label cell: its `--label`, marked when another tool measured it.
pub fn labelled(label: Option<&str>, provenance: &str) -> String {
    match (label, imported_from(provenance)) {
        (Some(l), Some(tool)) => format!("{l} (imported:{tool})"),
        (None, Some(tool)) => format!("imported:{tool}"),
        (l, None) => l.unwrap_or("-").to_string(),
    }
}

/// `iosurvey ls`: a row per stored run; the group (`s3` a survey, `w2` a sweep) is what `show`
/// takes too. Sequential runs show their best MiB/s per op, random ones their best IOPS; `*`
/// marks a figure that may be the page cache's.
pub fn list(rows: &[RunRow]) -> Report {
    let mut t =
        Table::new("runs", &["id", "group", "label", "started", "host", "status", "fs", "best", "workload", "target"]);
    let mut cached = false;
    let mut means = false;
    for r in rows {
        // An imported mdtest file gives each phase its mean over the iterations, its max only
        // as a parameter: the figure is said to be the mean, not passed off as the best.
        let mean = imported_from(&r.provenance).is_some_and(|t| t.starts_with("mdtest"));
        means |= mean;
        let best: Vec<String> = r
            .best
            .iter()
            .map(|b| {
                cached |= b.possibly_cached;
                let mark = match (b.possibly_cached, mean) {
                    (true, _) => "*",
                    (false, true) => MEAN_MARK,
                    _ => "",
                };
                // Metadata is counted in operations per second, as mdtest says it.
                let counted = serde_json::from_value::<Op>(serde_json::Value::String(b.op.clone()))
                    .is_ok_and(|op| !op.moves_data());
                match (r.random, counted) {
                    (_, true) => format!("{}={} ops/s{mark}", b.op, Cell::num(b.iops, 0)),
                    (true, false) => format!("{}={} IOPS{mark}", b.op, Cell::num(b.iops, 0)),
                    (false, false) => format!("{}={} MiB/s{mark}", b.op, mib(b.bandwidth)),
                }
            })
            .collect();
        t.rows.push(vec![
            Cell::Int(r.id as u64),
            Cell::text(group(r)),
            Cell::text(labelled(r.system.as_deref(), &r.provenance)),
            Cell::text(format_time(r.started)),
            Cell::text(&r.host),
            Cell::text(&r.status),
            Cell::text(&r.fs_type),
            Cell::text(best.join(" ")),
            Cell::text(&r.label),
            Cell::text(&r.target),
        ]);
    }
    t.notes.push("best: each op's highest figure over its run's iterations (IOR's Max)".into());
    if rows.iter().any(|r| imported_from(&r.provenance).is_some()) {
        t.notes.push(IMPORTED_NOTE.into());
    }
    if cached {
        t.notes.push("* possibly the page cache's figure, not the storage's ('iosurvey show ID' says why)".into());
    }
    if means {
        t.notes.push(format!(
            "{MEAN_MARK} the mean over the run's iterations: an imported mdtest file gives each phase its mean ('iosurvey show ID' gives its max)"
        ));
    }
    Report { tables: vec![t], ..Report::default() }
}

/// The mark of a best figure that is a mean (an imported mdtest run's).
const MEAN_MARK: &str = "~";

/// Reads at least twice as fast as the run's own writes, while flagged as possibly cached:
/// the page cache's figure, most likely (the seeds' reads "beyond" the storage).
fn read_from_cache(r: &RunRecord) -> Vec<Finding> {
    let s = r.summaries();
    let of = |op: Op| s.iter().find(|x| x.op == op);
    let (Some(w), Some(rd)) = (of(Op::Write), of(Op::Read)) else { return Vec::new() };
    let (Some(wb), Some(rb)) = (w.bandwidth.map(|b| b.mean), rd.bandwidth.map(|b| b.mean)) else { return Vec::new() };
    let Some(why) = &rd.possibly_cached else { return Vec::new() };
    if wb <= 0.0 || rb < 2.0 * wb {
        return Vec::new();
    }
    vec![Finding {
        text: format!(
            "read runs at {:.1}x the write of the same data ({why}): most likely the page cache's figure, not the storage's",
            rb / wb
        ),
        value: rb / wb,
        runs: r.id.into_iter().collect(),
        ..Default::default()
    }]
}

/// Tasks and nodes whose rate stands apart, slow, from their peers', per phase.
fn slow_ones(r: &RunRecord) -> Vec<Finding> {
    let meta = r.workload.meta().is_some();
    let host = |n: u32| r.hosts.get(n as usize).cloned().unwrap_or_else(|| format!("node {n}"));
    let mut out = Vec::new();
    for p in &r.phases {
        let tasks: Vec<(String, f64)> = p
            .tasks
            .iter()
            .filter_map(|t| Some((format!("task {} on {}", t.task, host(t.node)), charts::task_rate(t, meta)?)))
            .collect();
        let nodes: Vec<(String, f64)> = RunRecord::per_node(p)
            .into_iter()
            .filter_map(|(n, f)| Some((host(n), if meta { f.iops? } else { f.bandwidth? })))
            .collect();
        for (members, kind) in [(&tasks, "task"), (&nodes, "node")] {
            let (slow, median) = outliers::slow(members);
            let shown = |v: f64| if meta { format!("{v:.0} items/s") } else { format!("{:.1} MiB/s", mib_per_s(v)) };
            out.extend(slow.into_iter().map(|(name, rate)| Finding {
                text: format!(
                    "{} {}: {name} ran at {}, {:.0}% of the median {kind} ({})",
                    p.op.name(),
                    p.iteration + 1,
                    shown(*rate),
                    100.0 * rate / median,
                    shown(median)
                ),
                value: 100.0 * rate / median,
                runs: r.id.into_iter().collect(),
                ..Default::default()
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::run_at;
    use crate::record::fixtures;

    #[test]
    fn reads_far_above_the_runs_writes_while_possibly_cached_are_called_the_caches() {
        let mut r = run_at(3, 100.0, 350.0);
        for p in &mut r.phases {
            p.possibly_cached = (p.op == Op::Read).then(|| "read without --direct".to_string());
        }
        let found = read_from_cache(&r);
        assert_eq!(found.len(), 1);
        assert!(found[0].text.starts_with("read runs at 3.5x the write of the same data (read without --direct)"));
        for p in &mut r.phases {
            p.possibly_cached = None;
        }
        assert!(read_from_cache(&r).is_empty(), "not flagged: no claim");
        assert!(read_from_cache(&run_at(4, 100.0, 150.0)).is_empty());
    }

    #[test]
    fn a_slow_task_among_many_is_found_and_named() {
        let mut r = fixtures::run(None);
        r.id = Some(9);
        r.hosts = vec!["n0".into(), "n1".into()];
        let base = r.phases[0].tasks[0];
        // Six tasks moving 1 GiB each in 1 s, but task 4 (on n0) takes 2.5 s.
        r.phases[0].tasks = (0..6u32)
            .map(|t| crate::measure::TaskTiming {
                task: t,
                node: t % 2,
                bytes: 1 << 30,
                open_start: 0,
                close_end: if t == 4 { 2_500_000_000 } else { 1_000_000_000 },
                ..base
            })
            .collect();
        let found: Vec<String> = slow_ones(&r).into_iter().map(|f| f.text).collect();
        assert_eq!(found, ["write 1: task 4 on n0 ran at 409.6 MiB/s, 40% of the median task (1024.0 MiB/s)"]);
        assert!(run(&r).findings.iter().any(|f| f.text.contains("task 4 on n0")), "shown with the run");
    }
}
