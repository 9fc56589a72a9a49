//! IOzone's output from a matrix: the report (a row per file and record size, a column per
//! test, KiB/s or with -O operations/s), the `-R` tables (one per test, a row per file size,
//! a column per record size), and throughput mode's lines per test.
//!
//! A cell's figure is the matrix's (the median of its samples' whole-team rates, under the
//! matrix's timing). Throughput mode's lines come from the tasks of the run that measured the
//! cell: "Children see" is the sum of each task's own rate (its bytes over its own transfer
//! start to its end under the timing), "Parent sees" the whole team's, min, max and average
//! per task, and "Min xfer" the least any task had moved when the first one finished.

use crate::compat::iozone::Settings;
use crate::measure::{TaskTiming, WindowEnd};
use crate::plan::matrix::{passes, Kind};
use crate::record::{MatrixCell, MatrixRecord, PhaseRecord, RunRecord};
use std::fmt::Write;

/// IOzone's columns and the names of its `-R` tables, by kind.
const COLUMNS: [(Kind, &str, &str, &str); 14] = [
    (Kind::Write, "write", "Writer report", "initial writers"),
    (Kind::Rewrite, "rewrite", "Re-writer report", "rewriters"),
    (Kind::Read, "read", "Reader report", "readers"),
    (Kind::Reread, "reread", "Re-Reader report", "re-readers"),
    (Kind::RandomRead, "random read", "Random read report", "random readers"),
    (Kind::RandomWrite, "random write", "Random write report", "random writers"),
    (Kind::BackwardRead, "bkwd read", "Backward read report", "reverse readers"),
    (Kind::RecordRewrite, "record rewrite", "Record rewrite report", "record rewriters"),
    (Kind::StrideRead, "stride read", "Stride read report", "stride readers"),
    (Kind::StreamWrite, "fwrite", "Fwrite report", "fwriters"),
    (Kind::StreamRead, "fread", "Fread report", "freaders"),
    (Kind::Mix, "random mix", "Mixed workload report", "mixed workload"),
    (Kind::VectoredWrite, "pwritev", "Pwritev report", "pwritev writers"),
    (Kind::VectoredRead, "preadv", "Preadv report", "preadv readers"),
];

/// A cell's figure as IOzone prints it: KiB/s, or operations (records) per second.
fn figure(cell: &MatrixCell, ops: bool) -> Option<f64> {
    let rate = cell.rate()?;
    Some(if ops { rate / cell.record as f64 } else { rate / 1024.0 })
}

fn cell(m: &MatrixRecord, kind: Kind, at: (u64, u64)) -> Option<&MatrixCell> {
    m.cells.iter().find(|c| c.kind == kind && (c.file, c.record) == at)
}

/// The automatic mode's report and, with -R, its tables.
pub fn report(s: &Settings, m: &MatrixRecord) -> String {
    let columns: Vec<_> = COLUMNS.iter().filter(|c| m.kinds.contains(&c.0)).collect();
    let mut out = String::new();
    let _ = writeln!(out, "\tIozone: Performance Test of File I/O (iosurvey {})", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "\tCommand line used: iozone {}", s.command_line);
    let _ = writeln!(out, "\tOutput is in {}\n", if s.ops { "operations per second" } else { "kBytes/sec" });
    let _ = write!(out, "{:>16}{:>8}", "kB", "reclen");
    for c in &columns {
        let _ = write!(out, "{:>16}", c.1);
    }
    out.push('\n');
    for at in m.grid.cells() {
        if !columns.iter().any(|c| cell(m, c.0, at).is_some()) {
            continue;
        }
        let _ = write!(out, "{:>16}{:>8}", at.0 / 1024, at.1 / 1024);
        for c in &columns {
            match cell(m, c.0, at).and_then(|x| figure(x, s.ops)) {
                Some(v) => {
                    let _ = write!(out, "{:>16.0}", v);
                }
                None => out.push_str(&" ".repeat(16)),
            }
        }
        out.push('\n');
    }
    out.push_str("\niozone test complete.\n");
    if s.excel {
        out.push_str(&excel(s, m));
    }
    out
}

/// The `-R` tables.
pub fn excel(s: &Settings, m: &MatrixRecord) -> String {
    let mut out = String::from("Excel output is below:\n");
    for (kind, _, title, _) in COLUMNS.iter().filter(|c| m.kinds.contains(&c.0)) {
        let records: Vec<u64> = m
            .grid
            .records
            .iter()
            .copied()
            .filter(|&r| m.cells.iter().any(|c| c.kind == *kind && c.record == r))
            .collect();
        let _ = write!(out, "\n\"{title}\"\n      ");
        for r in &records {
            let _ = write!(out, "  \"{}\"", r / 1024);
        }
        out.push('\n');
        for &file in &m.grid.files {
            let row: Vec<String> = records
                .iter()
                .filter_map(|&r| cell(m, *kind, (file, r)).and_then(|c| figure(c, s.ops)))
                .map(|v| format!("{v:.0}"))
                .collect();
            if !row.is_empty() {
                let _ = writeln!(out, "\"{}\"   {} ", file / 1024, row.join("  "));
            }
        }
    }
    out
}

/// The phase of `run` that measured `kind`: the pass that holds the kind names the run, and
/// the kind's place in the pass names the phase.
fn phase_of<'a>(kinds: &[Kind], kind: Kind, run: &'a RunRecord) -> Option<&'a PhaseRecord> {
    let pass = passes(kinds).into_iter().find(|p| p.phases.iter().any(|(_, k)| *k == Some(kind)))?;
    // A run is named after its pass, then its cell's sizes.
    if !run.name.as_deref().is_some_and(|n| n.starts_with(&format!("{} ", pass.name()))) {
        return None;
    }
    let at = pass.phases.iter().position(|(_, k)| *k == Some(kind))?;
    let per_iteration = pass.phases.len();
    // The last repetition's phase of that place.
    run.phases.chunks(per_iteration).last().and_then(|c| c.get(at))
}

/// IOzone's figures of one test in throughput mode, in bytes/s (the per-process ones) and
/// bytes (`least`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    /// "Children see": the sum of the per-process rates.
    pub children: f64,
    /// "Parent sees".
    pub parent: f64,
    /// "Min throughput per process".
    pub min: f64,
    /// "Max throughput per process".
    pub max: f64,
    /// "Min xfer": the least any process had counted.
    pub least: u64,
}

/// IOzone's throughput-mode figures from the tasks of one phase, as its throughput test
/// computes them (src/iozone.c, `throughput_test` and the `thread_*_test` children):
/// - a child's clock runs from its first transfer to its last, or to its fsync's end (-e) or
///   its close's (-c); the fsync and close it makes after that are its own, untimed;
/// - with stonewalling (IOzone's default, `-x` turns it off) the first child to end its
///   transfers stops the others: each counts what it had moved by then, over its time until
///   then (with -e or -c its fsync or close at the stop inside, taken here as long as the one
///   it made at its end);
/// - "Children see" adds the children's rates; "Parent sees" is what they counted over the
///   parent's clock, from the children's start until the last of them has exited, its
///   untimed fsync and close done. A stopped writer writes on to its file's end, uncounted,
///   before it exits; a stopped rewriter or reader leaves its loop at the stop (its
///   `thread_*_test` breaks on the stop flag), so it exits at the stop plus its fsync and
///   close, taken as long as the ones iosurvey's task made at its end (its task reads or
///   rewrites on, and that time is not IOzone's).
///
/// The stop's moment is the first task's end of transfers, where the matrix's engine records
/// each task's bytes (`bytes_at_first_finish`).
pub fn figures(tasks: &[TaskTiming], end: WindowEnd, stonewall: bool, kind: Kind) -> Figures {
    let end_of = |t: &TaskTiming| match end {
        WindowEnd::Transfers => t.xfer_end,
        WindowEnd::Fsync => t.sync_end,
        WindowEnd::Close => t.close_end,
    };
    let stop = tasks.iter().map(|t| t.xfer_end).min().unwrap_or(0);
    // (bytes counted, time in ns) of each child.
    let counted: Vec<(u64, u64)> = tasks
        .iter()
        .map(|t| {
            let timed_tail = end_of(t).saturating_sub(t.xfer_end);
            match stonewall && t.bytes_at_first_finish < t.bytes {
                true => (t.bytes_at_first_finish, stop.saturating_sub(t.xfer_start) + timed_tail),
                false => (t.bytes, end_of(t).saturating_sub(t.xfer_start)),
            }
        })
        .collect();
    let own: Vec<f64> = counted.iter().map(|&(b, ns)| crate::units::rate(b, ns).unwrap_or(0.0)).collect();
    let (max, min, _, _) = crate::compat::layout::spread(&own, false);
    let start = tasks.iter().map(|t| t.xfer_start).min().unwrap_or(0);
    // IOzone's initial and random writers write on after the stop; its other children stop.
    let writes_on = matches!(kind, Kind::Write | Kind::RandomWrite | Kind::StreamWrite | Kind::VectoredWrite);
    let exited = tasks
        .iter()
        .map(|t| match stonewall && !writes_on && t.bytes_at_first_finish < t.bytes {
            true => stop + t.close_end.saturating_sub(t.xfer_end),
            false => t.close_end,
        })
        .max()
        .unwrap_or(0);
    Figures {
        children: own.iter().sum(),
        parent: crate::units::rate(counted.iter().map(|c| c.0).sum(), exited.saturating_sub(start)).unwrap_or(0.0),
        min,
        max,
        least: counted.iter().map(|c| c.0).min().unwrap_or(0),
    }
}

/// What IOzone's children were: its default forks a process per child, -T starts threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Children {
    /// Threads of one process (iosurvey's tasks without a launcher): IOzone's -T.
    Threads,
    /// A process per child (MPI ranks of one task each): IOzone's default.
    Processes,
}

/// Throughput mode's lines for every kind measured, from the runs that measured each, in
/// IOzone's words for `children` ("threads" as -T prints them, or "processes").
pub fn throughput(s: &Settings, m: &MatrixRecord, runs: &[RunRecord], children: Children) -> String {
    let n = m.shape.tasks;
    // IOzone's words: "Throughput test with N threads", "... per thread" (or processes).
    let (many, one) = match children {
        Children::Threads => ("threads", "thread"),
        Children::Processes => ("processes", "process"),
    };
    let mut out = String::new();
    let _ = writeln!(out, "\tIozone: Performance Test of File I/O (iosurvey {})", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "\tCommand line used: iozone {}", s.command_line);
    let _ = writeln!(out, "\tThroughput test with {n} {many}");
    if children == Children::Threads {
        // The figures are -T's: on ext4 IOzone's forked children rewrote and read slower than
        // its threads on the same line (docs/methodology.md, "Agreement").
        let _ =
            writeln!(out, "\tiosurvey's children are threads, as iozone -T measures; IOzone's default forks processes");
    }
    let (unit, per) = if s.ops { ("ops/sec", "ops") } else { ("kB/sec", "kB") };
    for c in &m.cells {
        let Some((_, _, _, name)) = COLUMNS.iter().find(|k| k.0 == c.kind) else { continue };
        let phase = c
            .runs
            .iter()
            .filter_map(|id| runs.iter().find(|r| r.id == Some(*id)))
            .find_map(|r| phase_of(&m.kinds, c.kind, r));
        let Some(phase) = phase else { continue };
        let scale = |bytes_per_s: f64| if s.ops { bytes_per_s / c.record as f64 } else { bytes_per_s / 1024.0 };
        let f = figures(&phase.tasks, m.timing, !s.no_stonewall, c.kind);
        let (children, parent, min, max) = (scale(f.children), scale(f.parent), scale(f.min), scale(f.max));
        let least = if s.ops { f.least as f64 / c.record as f64 } else { f.least as f64 / 1024.0 };
        let _ = writeln!(out, "\n\tChildren see throughput for {n:>2} {name:<16}\t= {children:>10.2} {unit}");
        // IOzone prints no parent's figure in its distributed mode (-+m).
        if s.clients.is_empty() {
            let _ = writeln!(out, "\tParent sees throughput for {n:>2} {name:<16}\t= {parent:>10.2} {unit}");
        }
        let _ = writeln!(out, "\tMin throughput per {one} \t\t\t= {min:>10.2} {unit} ");
        let _ = writeln!(out, "\tMax throughput per {one} \t\t\t= {max:>10.2} {unit}");
        let _ = writeln!(
            out,
            "\tAvg throughput per {one} \t\t\t= {:>10.2} {unit}",
            children / phase.tasks.len().max(1) as f64
        );
        let _ = writeln!(out, "\tMin xfer \t\t\t\t\t= {least:>10.2} {per}");
    }
    out.push_str("\n\n\niozone test complete.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;
    const GIB: u64 = 1 << 30;

    /// A task that transferred `bytes` from `start` to `xfer_end`, synced to `sync_end` and
    /// closed at `close_end` (seconds), and had moved `at_stop` bytes when the first task's
    /// transfers ended.
    fn task(bytes: u64, at_stop: u64, (start, xfer_end, sync_end, close_end): (f64, f64, f64, f64)) -> TaskTiming {
        let ns = |s: f64| (s * S as f64) as u64;
        TaskTiming {
            bytes,
            ops: bytes >> 20,
            open_start: 0,
            xfer_start: ns(start),
            xfer_end: ns(xfer_end),
            sync_end: ns(sync_end),
            close_end: ns(close_end),
            bytes_at_first_finish: at_stop,
            ..TaskTiming::default()
        }
    }

    fn near(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Two writers of 1 GiB: the first ends its writes at 1 s, fsyncs (untimed) to 3 s and
    /// closes at 3.1 s; the second had written half its file by then, ends its writes at 2 s
    /// and is closed at 5.5 s. IOzone's parent waits for the last child to exit.
    fn writers() -> [TaskTiming; 2] {
        [task(GIB, GIB, (0.0, 1.0, 3.0, 3.1)), task(GIB, GIB / 2, (0.0, 2.0, 5.0, 5.5))]
    }

    #[test]
    fn the_parent_waits_for_every_childs_fsync_and_close_and_counts_what_they_moved_by_the_stonewall() {
        let f = figures(&writers(), WindowEnd::Transfers, true, Kind::Write);
        assert!(near(f.parent, 1.5 * GIB as f64 / 5.5), "{f:?}");
        // Each child's own: the first its whole file over its writes, the second what it had
        // written when the first finished, over the time until then.
        assert!(near(f.max, GIB as f64) && near(f.min, GIB as f64 / 2.0), "{f:?}");
        assert!(near(f.children, 1.5 * GIB as f64), "{f:?}");
        assert_eq!(f.least, GIB / 2);
    }

    #[test]
    fn without_the_stonewall_every_child_counts_its_whole_file() {
        let f = figures(&writers(), WindowEnd::Transfers, false, Kind::Write);
        assert!(near(f.parent, 2.0 * GIB as f64 / 5.5), "{f:?}");
        assert!(near(f.children, GIB as f64 + GIB as f64 / 2.0), "{f:?}");
        assert_eq!(f.least, GIB);
    }

    /// IOzone's rewriters and readers leave their loop at the stop (`break` on its stop flag
    /// in thread_rwrite_test, thread_read_test, ...), close and exit; its writers write on.
    /// Two readers: the first reads 1 GiB by 1 s and closes at 1.1 s; the second had read half
    /// by then and would close at 2.2 s, 0.2 s after its last read.
    #[test]
    fn a_stopped_reader_or_rewriter_exits_at_the_stop_so_the_parents_clock_ends_there() {
        let readers = [task(GIB, GIB, (0.0, 1.0, 1.0, 1.1)), task(GIB, GIB / 2, (0.0, 2.0, 2.0, 2.2))];
        for kind in [Kind::Read, Kind::Reread, Kind::Rewrite, Kind::RandomRead] {
            let f = figures(&readers, WindowEnd::Transfers, true, kind);
            // The second leaves at the stop (1 s) and closes as long as it did: 1.2 s.
            assert!(near(f.parent, 1.5 * GIB as f64 / 1.2), "{kind:?}: {f:?}");
        }
        // Writers write on to their file's end, uncounted: the parent waits for that.
        let f = figures(&readers, WindowEnd::Transfers, true, Kind::Write);
        assert!(near(f.parent, 1.5 * GIB as f64 / 2.2), "{f:?}");
        // Without the stonewall nobody stops.
        let f = figures(&readers, WindowEnd::Transfers, false, Kind::Read);
        assert!(near(f.parent, 2.0 * GIB as f64 / 2.2), "{f:?}");
    }

    #[test]
    fn with_e_a_stopped_child_times_its_fsync_too() {
        // -e: the first child's time runs to its fsync's end (3 s); the stopped one's to the
        // stop plus its own fsync (1 s + 3 s).
        let f = figures(&writers(), WindowEnd::Fsync, true, Kind::Write);
        assert!(near(f.max, GIB as f64 / 3.0), "{f:?}");
        assert!(near(f.min, (GIB / 2) as f64 / 4.0), "{f:?}");
        assert!(near(f.parent, 1.5 * GIB as f64 / 5.5), "{f:?}");
    }
}
