//! Object-store figures: each kind of request a phase made (PUT, GET, HEAD, LIST, DELETE)
//! with its own rates, latency percentiles and, for GET, time to first byte; and object runs
//! set beside file runs of one label, always named as what they are ("GET 4 MiB objects vs
//! 4 MiB file reads"), never as like with like.

use super::study::Study;
use super::{Cell, Chart, Report, Table};
use crate::measure::histogram::Latency;
use crate::record::{RunRecord, Status};
use crate::spec::{Op, Workload};
use crate::units::{format_size, mib_per_s};

/// Whether a workload moves objects (the s3 engine) rather than file data.
pub fn is_object(w: &Workload) -> bool {
    w.data().is_some_and(|d| d.engine.base() == "s3")
}

/// The table of a run's requests, one row per kind and phase (`None` for a file run).
pub(super) fn requests(r: &RunRecord) -> Option<Table> {
    let mut t = Table::new(
        "per request (object store; latency and time to first byte in ms)",
        &[
            "phase", "iter", "request", "count", "MiB/s", "ops/s", "p50", "p90", "p99", "max", "ttfb p50", "ttfb p90",
            "ttfb p99", "ttfb max",
        ],
    );
    let ms = |ns: u64| Cell::num(Some(ns as f64 / 1e6), 3);
    let percentiles = |l: &Latency| [l.p50, l.p90, l.p99, l.max].map(ms);
    for p in &r.phases {
        for q in &p.requests {
            let mut row =
                vec![Cell::text(p.op.name()), Cell::Int(p.iteration as u64 + 1), Cell::text(q.request.name())];
            row.extend([Cell::Int(q.count), Cell::num(q.bandwidth.map(mib_per_s), 1), Cell::num(q.ops_per_s, 1)]);
            row.extend(percentiles(&q.latency));
            // A PUT's answer has no body: no first byte to time.
            row.extend(q.first_byte.as_ref().map_or_else(|| [(); 4].map(|()| Cell::Empty), percentiles));
            t.rows.push(row);
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// What an op of a workload does, in its target's own words: "GET 4 MiB objects", "PUT 1 MiB
/// parts of 8 MiB objects", "GET objects of random:1k-1m bytes", "4 MiB file reads".
fn doing(w: &Workload, op: Op) -> String {
    let Some(d) = w.data() else { return op.name() };
    let (transfer, block) = (format_size(d.transfer), format_size(d.block));
    if !is_object(w) {
        let verb = if op.direction() == Op::Write { "writes" } else { "reads" };
        return format!("{transfer} file {verb}");
    }
    let (request, piece) = match op.direction() {
        Op::Write => ("PUT", "parts"),
        _ => ("GET", "ranges"),
    };
    match d.transfer >= d.block {
        // Each object of its own drawn size: the draw is what the objects are.
        true if !d.object_size.is_block() => format!("{request} objects of {} bytes", d.object_size),
        true => format!("{request} {block} objects"),
        false => format!("{request} {transfer} {piece} of {block} objects"),
    }
}

/// Whether two workloads are an object run and a file run of one shape seen from each side:
/// the same op sizes per request, pattern and team, the one through S3 and the other through
/// files. They are set beside each other, named as what they are.
pub(super) fn across_kinds(a: &Workload, b: &Workload) -> bool {
    let (Some(da), Some(db)) = (a.data(), b.data()) else { return false };
    is_object(a) != is_object(b) && a.tasks == b.tasks && da.transfer == db.transfer && da.pattern == db.pattern
}

/// The name of a comparison of op `op` between an object workload and a file workload (either
/// side first): what each does, that the target kinds differ, and every other setting in
/// which they differ.
pub(super) fn identity(a: &Workload, b: &Workload, op: &str) -> String {
    let op = serde_json::from_value(serde_json::Value::String(op.into())).unwrap_or(Op::Read);
    let mut other: Vec<String> =
        a.key_differences(b).into_iter().map(|(s, ..)| s).filter(|s| s != "engine" && s != "ops").collect();
    other.dedup();
    let also = match other.is_empty() {
        true => String::new(),
        false => format!("; also differ in {}", other.join(", ")),
    };
    let tasks = if a.tasks == 1 { "1 task".to_string() } else { format!("{} tasks", a.tasks) };
    format!("{} vs {}, {tasks} (target kinds differ: S3 objects against files{also})", doing(a, op), doing(b, op))
}

/// A bar of [`beside_files`]: (op, request size, tasks), each run's mean bandwidth by kind
/// (files, objects), and the runs' ids.
type Point = ((Op, u64, usize), [Vec<f64>; 2], Vec<i64>);

/// The bandwidths of `runs` by op, request size and tasks, files' apart from objects', and
/// the runs behind each: only those both kinds measured, writes first at each size.
fn both_kinds(runs: &[&RunRecord]) -> Vec<Point> {
    let mut points: Vec<Point> = Vec::new();
    for r in runs {
        let Some(d) = r.workload.data() else { continue };
        let kind = usize::from(is_object(&r.workload));
        for s in r.summaries() {
            let Some(bw) = s.bandwidth.map(|b| b.mean) else { continue };
            let at = (s.op.direction(), d.transfer, r.workload.tasks);
            let i = match points.iter().position(|p| p.0 == at) {
                Some(i) => i,
                None => {
                    points.push((at, [Vec::new(), Vec::new()], Vec::new()));
                    points.len() - 1
                }
            };
            points[i].1[kind].push(bw);
            points[i].2.extend(r.id);
        }
    }
    points.retain(|p| p.1.iter().all(|xs| !xs.is_empty()));
    points.sort_by_key(|p| (p.0 .2, p.0 .1, p.0 .0 != Op::Write));
    points
}

/// For each label that has completed object runs and file runs, a study whose chart draws
/// both kinds' bandwidth per op and request size on one set of bars, and whose table holds
/// the same numbers (each the mean over that kind's runs of the run's mean over iterations).
pub fn beside_files(runs: &[RunRecord]) -> Vec<Study> {
    let mut labels: Vec<&str> = runs.iter().filter_map(|r| r.label.as_deref()).collect();
    labels.sort_unstable();
    labels.dedup();
    let mut out = Vec::new();
    for label in labels {
        let mine: Vec<&RunRecord> =
            runs.iter().filter(|r| r.label.as_deref() == Some(label) && r.status == Status::Ok).collect();
        let points = both_kinds(&mine);
        if points.is_empty() {
            continue;
        }
        let fs: Vec<&str> = mine.iter().filter(|r| !is_object(&r.workload)).map(|r| r.env.fs_type.as_str()).collect();
        let files = format!("files ({})", fs.first().copied().unwrap_or("?"));
        let mut table = Table::new(
            format!("{label}: objects beside files (MiB/s, mean over runs)"),
            &["op", "request size", "tasks", "objects", "runs", &files, "runs", "objects/files"],
        );
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        let mut series = [Vec::new(), Vec::new()];
        let mut ticks = Vec::new();
        let mut ids: Vec<i64> = Vec::new();
        for (x, ((op, transfer, tasks), kinds, runs)) in points.iter().enumerate() {
            let (file, object) = (mean(&kinds[0]), mean(&kinds[1]));
            let said = match op {
                Op::Write => "PUT / write",
                _ => "GET / read",
            };
            ticks.push((x as f64, format!("{said} {}, {tasks} tasks", format_size(*transfer))));
            series[0].push((x as f64, mib_per_s(object)));
            series[1].push((x as f64, mib_per_s(file)));
            table.rows.push(vec![
                Cell::text(said),
                Cell::text(format_size(*transfer)),
                Cell::Int(*tasks as u64),
                Cell::num(Some(mib_per_s(object)), 1),
                Cell::Int(kinds[1].len() as u64),
                Cell::num(Some(mib_per_s(file)), 1),
                Cell::Int(kinds[0].len() as u64),
                Cell::num(Some(object / file), 3),
            ]);
            ids.extend(runs);
        }
        ids.sort_unstable();
        ids.dedup();
        table.notes.push(
            "the target kinds differ: S3 requests (PUT, GET) against file system calls (write, read) of the same size"
                .into(),
        );
        let [objects, on_files] = series;
        let chart = Chart {
            title: format!("{label}: objects and files, MiB/s by op and request size"),
            x: "op, request size, tasks".into(),
            y: "MiB/s".into(),
            series: vec![("objects (S3)".into(), objects), (files, on_files)],
            bars: true,
            ticks,
            runs: ids,
            ..Chart::default()
        };
        // Its runs are each in a study of their own already; the chart cites them.
        out.push(Study {
            title: format!("{label}: objects beside files"),
            runs: Vec::new(),
            report: Report { tables: vec![table], charts: vec![chart], ..Report::default() },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::Histogram;
    use crate::measure::{Series, TaskTiming};
    use crate::record::execution::{Execution, PhaseOutcome, Request, RequestTally};
    use crate::record::RunFacts;
    use crate::spec::EngineName;

    fn latency(values: &[u64]) -> crate::measure::histogram::Latency {
        let mut h = Histogram::default();
        values.iter().for_each(|&v| h.record(v));
        h.summary()
    }

    /// A run of one phase of `op` by one task over exactly 1 s, moving `bytes`, whose
    /// requests are `requests`, on the engine `engine` (s3 for objects).
    fn record(engine: &str, label: &str, op: Op, bytes: u64, requests: Vec<(Request, RequestTally)>) -> RunRecord {
        let mut w = Workload::default();
        w.data_mut().engine = EngineName::new(engine, None);
        // Objects of one request each, as the file's transfers are.
        w.data_mut().block = 1 << 20;
        let ops = requests.iter().map(|(_, t)| t.count).sum::<u64>().max(1);
        let task =
            TaskTiming { bytes, ops, close_end: 1_000_000_000, xfer_end: 1_000_000_000, ..TaskTiming::default() };
        let phase = PhaseOutcome {
            op,
            iteration: 0,
            tasks: vec![task],
            verify: None,
            caches_dropped: false,
            latency: latency(&[1]),
            series: Series::default(),
            requests,
        };
        let exec = Execution { phases: vec![phase], ..Execution::default() };
        let mut r = RunRecord::assemble(w, exec, RunFacts::default());
        r.label = Some(label.into());
        r.env.fs_type = if engine == "s3" { "s3" } else { "xfs" }.into();
        r
    }

    #[test]
    fn each_kind_of_a_mixed_phase_is_divided_by_the_phases_window_and_only_get_shows_a_first_byte() {
        let mib = 1u64 << 20;
        let get = RequestTally {
            count: 45,
            bytes: 45 * mib,
            latency: latency(&[2_000_000; 45]),
            first_byte: Some(latency(&[500_000; 45])),
        };
        let head = RequestTally { count: 30, bytes: 0, latency: latency(&[1_000_000; 30]), first_byte: None };
        let r = record("s3", "box", Op::Read, 45 * mib, vec![(Request::Get, get), (Request::Head, head)]);
        let q = &r.phases[0].requests;
        assert_eq!((q[0].request, q[0].ops_per_s, q[0].bandwidth), (Request::Get, Some(45.0), Some(45.0 * mib as f64)));
        assert_eq!((q[1].request, q[1].ops_per_s, q[1].bandwidth), (Request::Head, Some(30.0), None));
        let total: f64 = q.iter().filter_map(|q| q.ops_per_s).sum();
        assert_eq!(total, 75.0, "the kinds' ops/s add up over the one window");
        let t = requests(&r).expect("a table of requests");
        let text = |row: &[Cell], i: usize| match &row[i] {
            Cell::Num { value, .. } => format!("{value:.3}"),
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Empty => "-".into(),
        };
        let get_row: Vec<String> = (0..t.columns.len()).map(|i| text(&t.rows[0], i)).collect();
        // MiB/s, ops/s, then p50 .. max and ttfb p50 .. max in ms.
        assert_eq!(
            get_row[2..],
            ["GET", "45", "45.000", "45.000", "2.000", "2.000", "2.000", "2.000", "0.500", "0.500", "0.500", "0.500"]
        );
        let head_row: Vec<String> = (0..t.columns.len()).map(|i| text(&t.rows[1], i)).collect();
        assert_eq!(
            head_row[2..],
            ["HEAD", "30", "-", "30.000", "1.000", "1.000", "1.000", "1.000", "-", "-", "-", "-"]
        );
        assert!(requests(&record("sync", "box", Op::Read, mib, Vec::new())).is_none(), "a file run has none");
    }

    #[test]
    fn an_object_run_beside_a_file_run_is_named_for_what_each_does_and_drawn_on_one_chart() {
        let (object, file) =
            (record("s3", "box", Op::Read, 300, Vec::new()), record("sync", "box", Op::Read, 100, Vec::new()));
        assert!(across_kinds(&object.workload, &file.workload));
        assert!(!across_kinds(&file.workload, &file.workload), "files against files are like with like");
        let name = identity(&object.workload, &file.workload, "read");
        assert!(name.starts_with("GET 1 MiB objects vs 1 MiB file reads, 1 task (target kinds differ"), "{name}");
        assert_eq!(
            identity(&file.workload, &object.workload, "write").split(',').next(),
            Some("1 MiB file writes vs PUT 1 MiB objects")
        );
        let mut ranged = object.workload.clone();
        ranged.data_mut().block = 8 << 20;
        assert!(identity(&ranged, &file.workload, "read").starts_with("GET 1 MiB ranges of 8 MiB objects vs"));
        let studies = beside_files(&[object, file, record("sync", "other", Op::Read, 1, Vec::new())]);
        assert_eq!(studies.len(), 1, "only a label with both kinds");
        let chart = &studies[0].report.charts[0];
        assert_eq!(chart.series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), ["objects (S3)", "files (xfs)"]);
        assert_eq!((chart.series[0].1[0].1, chart.series[1].1[0].1), (mib_per_s(300.0), mib_per_s(100.0)));
        let row = &studies[0].report.tables[0].rows[0];
        assert_eq!(row[7], Cell::Num { value: 3.0, decimals: 3 }, "objects over files");
    }
}
