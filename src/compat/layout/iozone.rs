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

/// A task's own rate under the matrix's timing.
fn own_rate(t: &TaskTiming, end: WindowEnd) -> f64 {
    let last = match end {
        WindowEnd::Transfers => t.xfer_end,
        WindowEnd::Fsync => t.sync_end,
        WindowEnd::Close => t.close_end,
    };
    crate::units::rate(t.bytes, last.saturating_sub(t.xfer_start)).unwrap_or(0.0)
}

/// Throughput mode's lines for every kind measured, from the runs that measured each.
pub fn throughput(s: &Settings, m: &MatrixRecord, runs: &[RunRecord]) -> String {
    let n = m.shape.tasks;
    let mut out = String::new();
    let _ = writeln!(out, "\tIozone: Performance Test of File I/O (iosurvey {})", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "\tCommand line used: iozone {}", s.command_line);
    let _ = writeln!(out, "\tThroughput test with {n} processes");
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
        let own: Vec<f64> = phase.tasks.iter().map(|t| scale(own_rate(t, m.timing))).collect();
        let children: f64 = own.iter().sum();
        let parent = c.samples.last().and_then(|x| x.team).map_or(0.0, scale);
        let least = phase.tasks.iter().map(|t| t.bytes_at_first_finish).min().unwrap_or(0);
        let least = if s.ops { least as f64 / c.record as f64 } else { least as f64 / 1024.0 };
        let (max, min, _, _) = crate::compat::layout::spread(&own, false);
        let _ = writeln!(out, "\n\tChildren see throughput for {n:>2} {name:<16}\t= {children:>10.2} {unit}");
        let _ = writeln!(out, "\tParent sees throughput for {n:>2} {name:<16}\t= {parent:>10.2} {unit}");
        let _ = writeln!(out, "\tMin throughput per process \t\t\t= {min:>10.2} {unit} ");
        let _ = writeln!(out, "\tMax throughput per process \t\t\t= {max:>10.2} {unit}");
        let _ =
            writeln!(out, "\tAvg throughput per process \t\t\t= {:>10.2} {unit}", children / own.len().max(1) as f64);
        let _ = writeln!(out, "\tMin xfer \t\t\t\t\t= {least:>10.2} {per}");
    }
    out.push_str("\n\n\niozone test complete.\n");
    out
}
