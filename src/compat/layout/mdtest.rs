//! mdtest's output from a metadata run's record: the launch line, the command, and the
//! SUMMARY table of each phase's rate over the iterations (max, min, mean and the sample
//! standard deviation, 0 for one iteration, as mdtest prints them), and with -P the times.

use super::{ctime, finished, spread};
use crate::compat::mdtest::Settings;
use crate::record::RunRecord;
use crate::spec::Op;
use std::fmt::Write;

/// mdtest's name of each phase, in the order its summary lists them.
const NAMES: [(Op, &str); 9] = [
    (Op::DirCreate, "Directory creation"),
    (Op::DirStat, "Directory stat"),
    (Op::DirRemove, "Directory removal"),
    (Op::FileCreate, "File creation"),
    (Op::FileStat, "File stat"),
    (Op::FileRead, "File read"),
    (Op::FileRemove, "File removal"),
    (Op::TreeCreate, "Tree creation"),
    (Op::TreeRemove, "Tree removal"),
];

/// Each phase's figure per iteration: items per second, or seconds.
pub fn per_iteration(r: &RunRecord, op: Op, times: bool) -> Vec<f64> {
    r.phases
        .iter()
        .filter(|p| p.op == op)
        .map(|p| match times {
            true => p.figures.window_ns as f64 / 1e9,
            false => p.figures.iops.unwrap_or(0.0),
        })
        .collect()
}

/// mdtest's output.
pub fn text(s: &Settings, r: &RunRecord) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "-- started at {} --\n", ctime(r.started));
    let nodes = r.hosts.len().max(1);
    let _ = writeln!(
        out,
        "mdtest-{}+iosurvey was launched with {} total task(s) on {nodes} node(s)",
        env!("CARGO_PKG_VERSION"),
        r.workload.tasks
    );
    let _ = writeln!(out, "Command line used: mdtest {}", s.command_line);
    let _ = writeln!(out, "Path                : {}", s.dir);
    let items = r.workload.meta().map_or(0, |m| m.items);
    let _ = writeln!(out, "{} tasks, {} files/directories", r.workload.tasks, items * r.workload.tasks as u64);
    let tables: &[(bool, &str)] = match s.times {
        true => &[(false, "rate (in ops/sec)"), (true, "time (in sec)")],
        false => &[(false, "rate (in ops/sec)")],
    };
    for &(times, what) in tables {
        let _ = writeln!(out, "\nSUMMARY {what}: (of {} iterations)", r.workload.iterations);
        out.push_str("   Operation                     Max            Min           Mean        Std Dev\n");
        out.push_str("   ---------                     ---            ---           ----        -------\n");
        for (op, name) in NAMES {
            let values = per_iteration(r, op, times);
            if values.is_empty() {
                continue;
            }
            let (max, min, mean, sd) = spread(&values, true);
            let _ = writeln!(out, "   {name:<18}     {max:14.3} {min:14.3} {mean:14.3} {sd:14.3}");
        }
    }
    if let Some(e) = &r.error {
        let _ = writeln!(out, "ERROR: {e}");
    }
    let _ = writeln!(out, "-- finished at {} --", ctime(finished(r)));
    out
}
