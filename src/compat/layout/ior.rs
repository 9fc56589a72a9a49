//! IOR's output from iosurvey's records: the header and options, the results table (a row per
//! phase), "Max Write/Read", the "Summary of all tests" table, and its JSON and CSV forms.
//!
//! IOR's times are its timers reduced over tasks: a span is the latest end of a stage minus the
//! earliest start (open: first open start to last open end; wr/rd: first transfer to the last
//! transfer's end or, with -e, the fsync's end, which IOR times inside wr/rd; close: from there
//! to the last close end; total: first open to last close). Bandwidth is bytes over total; IOPS
//! is transfers over the wr/rd span; latency is the smallest over tasks of a task's wr/rd time
//! per transfer.

use super::{ctime, finished, spread};
use crate::compat::ior::{Settings, Summary, Test};
use crate::record::{PhaseRecord, RunRecord};
use crate::spec::{Access, Data, Op};
use std::fmt::Write;

const MIB: f64 = 1_048_576.0;

/// One phase as a row of IOR's results table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// write or read.
    pub access: &'static str,
    /// MiB/s.
    pub bw_mib: f64,
    /// Transfers per second of the wr/rd span.
    pub iops: f64,
    /// Seconds per transfer, the best task's.
    pub latency: f64,
    /// Seconds: open, wr/rd, close, total.
    pub times: [f64; 4],
    /// Repetition, from 0.
    pub iter: u32,
}

/// The row of one phase, or none for a phase IOR has no row for (a rewrite, a mix).
pub fn row(p: &PhaseRecord) -> Option<Row> {
    let access = match p.op {
        Op::Write => "write",
        Op::Read => "read",
        _ => return None,
    };
    let t = &p.tasks;
    let secs = |ns: u64| ns as f64 / 1e9;
    let span = |start: fn(&crate::measure::TaskTiming) -> u64, end: fn(&crate::measure::TaskTiming) -> u64| {
        let first = t.iter().map(start).min().unwrap_or(0);
        let last = t.iter().map(end).max().unwrap_or(0);
        secs(last.saturating_sub(first))
    };
    let total = secs(p.figures.window_ns);
    let (open, wrrd, close) = match t.is_empty() {
        // Imported figures: the window alone is known.
        true => (0.0, total, 0.0),
        // IOR's -e fsync is inside its wr/rd timer, so that span ends at the sync.
        false => (
            span(|t| t.open_start, |t| t.xfer_start),
            span(|t| t.xfer_start, |t| t.sync_end),
            span(|t| t.sync_end, |t| t.close_end),
        ),
    };
    let latency = t
        .iter()
        .filter(|t| t.ops > 0)
        .map(|t| secs(t.sync_end.saturating_sub(t.xfer_start)) / t.ops as f64)
        .fold(f64::INFINITY, f64::min);
    Some(Row {
        access,
        bw_mib: p.figures.bandwidth.unwrap_or(0.0) / MIB,
        iops: if wrrd > 0.0 { p.figures.ops as f64 / wrrd } else { 0.0 },
        latency: if latency.is_finite() { latency } else { 0.0 },
        times: [open, wrrd, close, total],
        iter: p.iteration,
    })
}

/// A number as IOR's tables print it: 6 decimals under 1, 2 under 3600, none above, left in
/// 10 columns.
fn pp(out: &mut String, number: f64, after: &str) {
    let decimals = match number {
        n if n < 1.0 => 6,
        n if n < 3600.0 => 2,
        _ => 0,
    };
    let _ = write!(out, "{:<10.*}{after}", decimals, number);
}

fn data_of(r: &RunRecord) -> Data {
    r.workload.data().cloned().unwrap_or_default()
}

/// Tasks per node of the run's first node, as IOR's tPN.
fn per_node(r: &RunRecord) -> usize {
    let nodes = r.hosts.len().max(1);
    r.workload.tasks.div_ceil(nodes)
}

/// The aggregate bytes a phase of the run moves, MiB.
fn aggregate_mib(r: &RunRecord) -> f64 {
    let d = data_of(r);
    (d.block * d.segments * r.workload.tasks as u64) as f64 / MIB
}

/// IOR's text output for every test run.
pub fn text(s: &Settings, runs: &[(&Test, &RunRecord)]) -> String {
    let mut out = String::new();
    let began = runs.first().map_or(0, |(_, r)| r.started);
    let _ = writeln!(out, "IOR-{}+iosurvey: MPI Coordinated Test of Parallel I/O", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "Began               : {}", ctime(began));
    let _ = writeln!(out, "Command line        : {}", s.command_line);
    let _ = writeln!(out, "Machine             : Linux {}", runs.first().map_or("", |(_, r)| r.env.host.as_str()));
    for (id, (test, r)) in runs.iter().enumerate() {
        test_text(&mut out, id, test, r);
    }
    summary_text(&mut out, runs);
    let _ = writeln!(out, "Finished            : {}", ctime(runs.last().map_or(0, |(_, r)| finished(r))));
    out
}

/// A test's part of IOR's text: its options, a row per phase, its best figures.
fn test_text(out: &mut String, id: usize, test: &Test, r: &RunRecord) {
    let d = data_of(r);
    let _ = writeln!(out, "TestID              : {id}");
    let _ = writeln!(out, "StartTime           : {}", ctime(r.started));
    let _ = writeln!(out, "Path                : {}", r.env.target);
    let _ = writeln!(out, "\nOptions: ");
    let shared = d.access == Access::Shared;
    let lines: [(&str, String); 13] = [
        ("api", "POSIX".into()),
        ("test filename", test.test_file.clone()),
        ("access", if shared { "single-shared-file" } else { "file-per-process" }.into()),
        ("type", "independent".into()),
        ("segments", d.segments.to_string()),
        (
            "ordering in a file",
            if d.pattern == crate::spec::Pattern::Sequential { "sequential" } else { "random" }.into(),
        ),
        ("ordering inter file", if d.reorder { "constant task offset" } else { "no tasks offsets" }.into()),
        ("nodes", r.hosts.len().max(1).to_string()),
        ("tasks", r.workload.tasks.to_string()),
        ("clients per node", per_node(r).to_string()),
        ("repetitions", r.workload.iterations.to_string()),
        ("xfersize", crate::units::format_size(d.transfer)),
        ("blocksize", crate::units::format_size(d.block)),
    ];
    for (k, v) in lines {
        let _ = writeln!(out, "{k:<20}: {v}");
    }
    let _ =
        writeln!(out, "{:<20}: {}", "aggregate filesize", crate::units::format_size((aggregate_mib(r) * MIB) as u64));
    out.push_str("\nResults: \n\naccess    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter\n");
    out.push_str("------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----\n");
    for row in r.phases.iter().filter_map(row) {
        let _ = write!(out, "{:<10}", row.access);
        pp(out, row.bw_mib, " ");
        pp(out, row.iops, " ");
        pp(out, row.latency, "  ");
        pp(out, d.block as f64 / 1024.0, " ");
        pp(out, d.transfer as f64 / 1024.0, " ");
        for t in row.times {
            pp(out, t, " ");
        }
        let _ = writeln!(out, "{:<4}", row.iter);
    }
    for (op, name, pad) in [(Op::Write, "Write", ""), (Op::Read, "Read", " ")] {
        let best = r
            .phases
            .iter()
            .filter(|p| p.op == op)
            .filter_map(|p| p.figures.bandwidth)
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
        if let Some(bw) = best {
            let _ = writeln!(out, "Max {name}: {pad}{:.2} MiB/sec ({:.2} MB/sec)", bw / MIB, bw / 1e6);
        }
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "ERROR: {e}");
    }
}

/// IOR's "Summary of all tests": a line per test and op.
fn summary_text(out: &mut String, runs: &[(&Test, &RunRecord)]) {
    out.push_str("\nSummary of all tests:\n");
    let _ = writeln!(
        out,
        "{:<9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13} Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt {:>8} {:>8} {:>9} {:>5} RefNum",
        "Operation", "Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev", "Max(OPs)", "Min(OPs)", "Mean(OPs)", "StdDev", "Mean(s)", "Stonewall(s)", "Stonewall(MiB)", " blksiz", "xsize", "aggs(MiB)", "API"
    );
    for (id, (test, r)) in runs.iter().enumerate() {
        for line in summary(r) {
            let d = data_of(r);
            let _ = write!(out, "{:<9} ", line.op);
            for v in [line.bw.0, line.bw.1, line.bw.2, line.bw.3, line.ops.0, line.ops.1, line.ops.2, line.ops.3] {
                let _ = write!(out, "{v:>10.2} ");
            }
            let _ = write!(out, "{:>10.5} ", line.mean_secs);
            match line.stonewall {
                Some((secs, mib)) => {
                    let _ = write!(out, "{secs:>10.2} {mib:>13.2} ");
                }
                None => {
                    let _ = write!(out, "{:>10} {:>13} ", "NA", "NA");
                }
            }
            let _ = writeln!(
                out,
                "{id:>5} {:>6} {:>3} {:>4} {:>3} {:>5} {:>8} {:>9} {:>4} {:>6} {:>8} {:>8} {:>9.1} {:>3} {:>6}",
                r.workload.tasks,
                per_node(r),
                r.workload.iterations,
                test.file_per_proc as u8,
                d.reorder as u8,
                1,
                0,
                0,
                d.segments,
                d.block,
                d.transfer,
                aggregate_mib(r),
                "POSIX",
                test.ref_num
            );
        }
    }
}

/// One op's line of IOR's summary: bandwidth (MiB/s) and operations (per second) as max, min,
/// mean and population standard deviation over the repetitions.
pub struct SummaryLine {
    /// write or read.
    pub op: &'static str,
    /// MiB/s.
    pub bw: (f64, f64, f64, f64),
    /// Transfers per second: bandwidth over the transfer size, as IOR's OPs.
    pub ops: (f64, f64, f64, f64),
    /// Mean total time, seconds.
    pub mean_secs: f64,
    /// With a stonewall: its seconds and the rate while every task was busy, MiB/s.
    pub stonewall: Option<(f64, f64)>,
}

/// The summary's lines of a run, write then read.
pub fn summary(r: &RunRecord) -> Vec<SummaryLine> {
    let d = data_of(r);
    let mut out = Vec::new();
    for (op, name) in [(Op::Write, "write"), (Op::Read, "read")] {
        let phases: Vec<&PhaseRecord> = r.phases.iter().filter(|p| p.op == op).collect();
        if phases.is_empty() {
            continue;
        }
        let bw: Vec<f64> = phases.iter().map(|p| p.figures.bandwidth.unwrap_or(0.0) / MIB).collect();
        let ops: Vec<f64> = bw.iter().map(|b| b * MIB / d.transfer.max(1) as f64).collect();
        let times: Vec<f64> = phases.iter().map(|p| p.figures.window_ns as f64 / 1e9).collect();
        let stonewall = r.workload.stonewall_secs.map(|secs| {
            let busy: Vec<f64> = phases.iter().filter_map(|p| p.figures.first_finish_rate).collect();
            (secs, spread(&busy, false).2 / MIB)
        });
        out.push(SummaryLine {
            op: name,
            bw: spread(&bw, false),
            ops: spread(&ops, false),
            mean_secs: spread(&times, false).2,
            stonewall,
        });
    }
    out
}

/// IOR's CSV: the results table's columns, a row per phase.
pub fn csv(runs: &[(&Test, &RunRecord)]) -> String {
    let mut out = String::from(
        "access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter\n",
    );
    for (_, r) in runs {
        let d = data_of(r);
        for row in r.phases.iter().filter_map(row) {
            let [open, wrrd, close, total] = row.times;
            let _ = writeln!(
                out,
                "{},{:.4},{:.4},{:.4},{:.4},{:.4},{open:.4},{wrrd:.4},{close:.4},{total:.4},{},{}",
                row.access,
                row.bw_mib,
                row.iops,
                row.latency,
                d.block as f64 / 1024.0,
                d.transfer as f64 / 1024.0,
                r.workload.tasks,
                row.iter
            );
        }
    }
    out
}

/// A JSON string.
fn js(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// IOR's JSON: the tests with their parameters and results, the summary, in IOR's key order.
pub fn json(s: &Settings, runs: &[(&Test, &RunRecord)]) -> String {
    let mut out = String::from("{\n");
    let began = runs.first().map_or(0, |(_, r)| r.started);
    let _ = writeln!(out, "  \"Version\": {},", js(&format!("iosurvey {}", env!("CARGO_PKG_VERSION"))));
    let _ = writeln!(out, "  \"Began\": {},", js(&ctime(began)));
    let _ = writeln!(out, "  \"Command line\": {},", js(&s.command_line));
    let _ = writeln!(
        out,
        "  \"Machine\": {},",
        js(&format!("Linux {}", runs.first().map_or("", |(_, r)| r.env.host.as_str())))
    );
    out.push_str("  \"tests\": [\n");
    let tests: Vec<String> = runs.iter().enumerate().map(|(id, (test, r))| test_json(id, test, r)).collect();
    out.push_str(&tests.join(",\n"));
    out.push_str("\n  ],\n  \"summary\": [\n");
    let mut lines = Vec::new();
    for (id, (test, r)) in runs.iter().enumerate() {
        let d = data_of(r);
        for l in summary(r) {
            lines.push(format!(
                "    {{\"operation\": {}, \"API\": \"POSIX\", \"TestID\": {id}, \"ReferenceNumber\": {}, \"segmentCount\": {}, \"blockSize\": {}, \"transferSize\": {}, \"numTasks\": {}, \"tasksPerNode\": {}, \"repetitions\": {}, \"filePerProc\": {}, \"reorderTasks\": {}, \"taskPerNodeOffset\": 1, \"reorderTasksRandom\": 0, \"reorderTasksRandomSeed\": 0, \"bwMaxMIB\": {:.4}, \"bwMinMIB\": {:.4}, \"bwMeanMIB\": {:.4}, \"bwStdMIB\": {:.4}, \"OPsMax\": {:.4}, \"OPsMin\": {:.4}, \"OPsMean\": {:.4}, \"OPsSD\": {:.4}, \"MeanTime\": {:.4}, \"xsizeMiB\": {:.4}}}",
                js(l.op), test.ref_num, d.segments, d.block, d.transfer, r.workload.tasks, per_node(r), r.workload.iterations,
                test.file_per_proc as u8, d.reorder as u8, l.bw.0, l.bw.1, l.bw.2, l.bw.3, l.ops.0, l.ops.1, l.ops.2, l.ops.3, l.mean_secs, aggregate_mib(r)
            ));
        }
    }
    out.push_str(&lines.join(",\n"));
    let end = runs.last().map_or(0, |(_, r)| finished(r));
    let _ = write!(out, "\n  ],\n  \"Finished\": {}\n}}\n", js(&ctime(end)));
    out
}

fn test_json(id: usize, test: &Test, r: &RunRecord) -> String {
    let d = data_of(r);
    let results: Vec<String> = r
        .phases
        .iter()
        .filter_map(row)
        .map(|row| {
            let [open, wrrd, close, total] = row.times;
            format!(
                "        {{\"access\": {}, \"bwMiB\": {:.4}, \"blockKiB\": {:.4}, \"xferKiB\": {:.4}, \"iops\": {:.4}, \"latency\": {:.6}, \"openTime\": {open:.6}, \"wrRdTime\": {wrrd:.6}, \"closeTime\": {close:.6}, \"totalTime\": {total:.6}, \"iteration\": {}}}",
                js(row.access), row.bw_mib, d.block as f64 / 1024.0, d.transfer as f64 / 1024.0, row.iops, row.latency, row.iter
            )
        })
        .collect();
    format!(
        "    {{\n      \"TestID\": {id},\n      \"StartTime\": {},\n      \"Path\": {},\n      \"Parameters\": {{\"testID\": {id}, \"refnum\": {}, \"api\": \"POSIX\", \"testFileName\": {}, \"deadlineForStonewall\": {}, \"stoneWallingWearOut\": {}, \"repetitions\": {}, \"fsync\": {}, \"fsyncperwrite\": {}, \"filePerProc\": {}, \"reorderTasks\": {}, \"randomOffset\": {}, \"keepFile\": {}, \"segmentCount\": {}, \"transferSize\": {}, \"blockSize\": {}, \"numTasks\": {}, \"tasksPerNode\": {}, \"useO_DIRECT\": {}}},\n      \"Results\": [\n{}\n      ]\n    }}",
        js(&ctime(r.started)),
        js(&r.env.target),
        test.ref_num,
        js(&test.test_file),
        r.workload.stonewall_secs.unwrap_or(0.0),
        r.workload.wear_out as u8,
        r.workload.iterations,
        d.fsync as u8,
        d.fsync_each as u8,
        test.file_per_proc as u8,
        d.reorder as u8,
        (d.pattern != crate::spec::Pattern::Sequential) as u8,
        test.keep as u8,
        d.segments,
        d.transfer,
        d.block,
        r.workload.tasks,
        per_node(r),
        d.direct as u8,
        results.join(",\n")
    )
}

/// The output in the format `-O summaryFormat` asked for.
pub fn render(s: &Settings, runs: &[(&Test, &RunRecord)]) -> String {
    match s.summary {
        Summary::Text => text(s, runs),
        Summary::Json => json(s, runs),
        Summary::Csv => csv(runs),
    }
}

/// Stored runs as IOR's JSON, a test each: for dashboards that read IOR (`iosurvey export
/// --format ior-json`). Each test's file name is the run's target.
pub fn of_runs(runs: &[RunRecord]) -> String {
    let tests: Vec<Test> = runs
        .iter()
        .map(|r| Test {
            test_file: r.env.target.clone(),
            ref_num: r.id.unwrap_or_default(),
            verbose: 0,
            file_per_proc: data_of(r).access == Access::FilePerTask,
            keep: false,
            delay_secs: 0,
        })
        .collect();
    let command_line = runs.first().map_or(String::new(), |r| r.command_line.clone());
    let settings = Settings { tests: Vec::new(), summary: Summary::Json, summary_file: None, command_line };
    let pairs: Vec<(&Test, &RunRecord)> = tests.iter().zip(runs).collect();
    json(&settings, &pairs)
}
