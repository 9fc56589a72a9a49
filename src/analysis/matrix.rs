//! A file x record matrix read: a grid per kind, each kind's peak and best record size, and
//! its cliffs along file sizes and record sizes with their likely causes; two matrices' findings
//! side by side, and how many of them agree.

use super::cliffs::{cliffs, Cliff, Point};
use super::{Cell, Finding, Report, Table};
use crate::escape::csv_field;
use crate::plan::matrix::{decides, At, Kind, MIN_TRANSFERS};
use crate::record::{MatrixCell, MatrixRecord, Status};
use crate::units::{format_size, format_time, mib_per_s};

/// Which way a cliff runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Growing files (the data per node), the best record at each.
    File,
    /// Growing records, the best file size at each.
    Record,
}

/// What a matrix says about one kind.
#[derive(Debug, Clone, PartialEq)]
pub struct KindFindings {
    /// The kind.
    pub kind: Kind,
    /// Its best cell: (rate in bytes/s, cell).
    pub peak: Option<(f64, At)>,
    /// Its cliffs, along either axis.
    pub cliffs: Vec<(Axis, Cliff)>,
}

impl KindFindings {
    /// The record size of the peak: the best record size.
    pub fn best_record(&self) -> Option<u64> {
        self.peak.map(|(_, (_, r))| r)
    }
}

/// The rate of a kind in a cell (bytes/s), if measured.
pub fn rate(m: &MatrixRecord, kind: Kind, (file, record): At) -> Option<f64> {
    cell(m, kind, (file, record)).and_then(MatrixCell::rate)
}

fn cell(m: &MatrixRecord, kind: Kind, (file, record): At) -> Option<&MatrixCell> {
    m.cells.iter().find(|c| c.kind == kind && c.file == file && c.record == record)
}

/// The kinds measured, in the matrix's order.
fn kinds(m: &MatrixRecord) -> Vec<Kind> {
    Kind::ALL.into_iter().filter(|k| m.cells.iter().any(|c| c.kind == *k)).collect()
}

/// Each kind's profile along an axis: at each size, the best rate over the other axis, of the
/// cells that [`decides`]. An adaptive matrix's file profile follows its spine instead (at each
/// file size the record nearest the spine that the file holds [`MIN_TRANSFERS`] times: the one
/// column it measures at every coarse file size), so that rows
/// measured whole (a best of many cells) and rows measured at the spine alone (one cell) are
/// never set against each other as if they were alike.
fn profile(m: &MatrixRecord, kind: Kind, axis: Axis) -> Vec<Point> {
    let spine = m.spine.filter(|_| m.adaptive && axis == Axis::File);
    let column = |file: u64| m.grid.nearest_record(file, spine?);
    let mut measured = crate::plan::matrix::Measured::new();
    for c in m.cells.iter().filter(|c| c.kind == kind && column(c.file).is_none_or(|r| c.record == r)) {
        let rates = c.samples.iter().filter_map(|s| s.team).collect();
        measured.entry((c.file, c.record)).or_default().insert(kind, rates);
    }
    // The file axis is the data a node holds: a node's tasks share its caches.
    let per_node = if axis == Axis::File { m.shape.per_node.max(1) as u64 } else { 1 };
    crate::plan::matrix::profile(&measured, &m.grid, kind, axis == Axis::File)
        .into_iter()
        .map(|(size, rate, cell)| Point::new(size * per_node, rate, measured[&cell][&kind].clone()))
        .collect()
}

/// What the matrix says about each kind measured, from the cells that [`decides`] only.
pub fn findings(m: &MatrixRecord) -> Vec<KindFindings> {
    kinds(m)
        .into_iter()
        .map(|kind| {
            let peak = m
                .cells
                .iter()
                .filter(|c| c.kind == kind && decides((c.file, c.record)))
                .filter_map(|c| Some((c.rate()?, (c.file, c.record))))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            // An engine that touches no storage moves no bytes through the caches: no limit of
            // theirs can explain its cliffs.
            let limits = if m.shape.stand_in.is_some() { &[][..] } else { &m.limits[..] };
            let mut found = Vec::new();
            for axis in [Axis::File, Axis::Record] {
                found.extend(cliffs(&profile(m, kind, axis), m.fraction, limits).into_iter().map(|c| (axis, c)));
            }
            KindFindings { kind, peak, cliffs: found }
        })
        .collect()
}

/// A cliff in words.
fn said(kind: Kind, axis: Axis, c: &Cliff) -> String {
    let what = match axis {
        Axis::File => format!("{} over growing files (data per node)", kind.name()),
        Axis::Record => format!("{} over growing records", kind.name()),
    };
    format!("{} ({:.0} to {:.0} MiB/s)", c.sentence(&what), mib_per_s(c.before), mib_per_s(c.after))
}

/// A kind's cliffs as findings.
fn cliffs_said(f: &KindFindings) -> Vec<Finding> {
    f.cliffs
        .iter()
        .map(|(axis, c)| Finding { text: said(f.kind, *axis, c), value: 100.0 * c.drop(), ..Default::default() })
        .collect()
}

/// Every kind's cliffs as findings, the peaks left to a table ([`findings`] gives them).
pub fn cliff_findings(m: &MatrixRecord) -> Vec<Finding> {
    findings(m).iter().flat_map(cliffs_said).collect()
}

/// The matrix in full: a grid per kind (MiB/s; files down, records across), the findings,
/// the whole-team and all-busy rates when several tasks ran, and what was skipped; how a cell
/// is timed is a line of its heading.
pub fn matrix(m: &MatrixRecord) -> Report {
    let mut report = untimed(m);
    report.heading.insert(2.min(report.heading.len()), timing_said(m));
    report
}

/// How the matrix's cells are timed, as a line: the same for every matrix a campaign runs,
/// so a campaign's report says it once where [`matrix`] says it under each one.
pub fn timing_said(m: &MatrixRecord) -> String {
    format!("timing: {}", timing_words(m))
}

/// [`matrix`] without the line of how its cells are timed.
pub fn untimed(m: &MatrixRecord) -> Report {
    let mut report = Report { heading: heading(m), ..Report::default() };
    for kind in kinds(m) {
        report.tables.push(grid(m, kind));
    }
    report.charts = heat_maps(m);
    if m.shape.tasks > 1 {
        report.tables.push(throughput(m));
    }
    for f in findings(m) {
        let Some((best, (file, record))) = f.peak else { continue };
        report.findings.push(Finding {
            text: format!(
                "{} peaks at {:.0} MiB/s with {} files and {} records",
                f.kind.name(),
                mib_per_s(best),
                format_size(file),
                format_size(record)
            ),
            value: mib_per_s(best),
            runs: cell(m, f.kind, (file, record)).map(|c| c.runs.clone()).unwrap_or_default(),
            ..Default::default()
        });
        report.findings.extend(cliffs_said(&f));
    }
    report.footer = footer(m);
    report
}

/// A matrix's heading: its grid and shape, the machine it ran on, and where it came from.
fn heading(m: &MatrixRecord) -> Vec<String> {
    let id = m.id.map_or("matrix".to_string(), |i| format!("matrix m{i}"));
    let mut heading = Vec::new();
    heading.push(format!(
        "{id}: {} mode, {} kinds, files {} to {}, records {} to {}, {} task{} each on its own file{}",
        if m.adaptive { "adaptive" } else { "full" },
        m.kinds.len(),
        format_size(m.grid.files.first().copied().unwrap_or(0)),
        format_size(m.grid.files.last().copied().unwrap_or(0)),
        format_size(m.grid.records.first().copied().unwrap_or(0)),
        format_size(m.grid.records.last().copied().unwrap_or(0)),
        m.shape.tasks,
        if m.shape.tasks == 1 { "" } else { "s" },
        if m.shape.direct { ", O_DIRECT" } else { "" },
    ));
    heading.push(format!(
        "target {} ({} on {}), host {}, {} CPUs, {} RAM, started {}",
        m.env.target,
        m.env.fs_type,
        m.env.mount_source,
        m.env.host,
        m.env.cpu_count,
        format_size(m.env.ram_bytes),
        format_time(m.started)
    ));
    if let Some(tool) = m.provenance.as_deref().and_then(crate::record::imported_from) {
        let file = m.tool_params.get("import.file").map_or(String::new(), |f| format!(" file {f}"));
        heading.push(format!(
            "imported from {tool}{file}: the figures {tool} reported, one per cell, not measured by iosurvey; command: {}",
            m.command_line
        ));
    }
    if let Some(engine) = &m.shape.stand_in {
        heading.push(format!(
            "every pass ran on the stand-in engine {engine}, which touches no storage: these are not the target's figures"
        ));
    }
    heading
}

/// What a matrix's footer says: the cells measured and the time taken, the cells that decide
/// nothing, the page cache's figures, its notes and its failure.
fn footer(m: &MatrixRecord) -> Vec<String> {
    let mut footer = Vec::new();
    let cells = m.grid.cells().len();
    let measured: std::collections::BTreeSet<At> = m.cells.iter().map(|c| (c.file, c.record)).collect();
    footer.push(format!(
        "{} of {cells} cells measured in {:.1} s{}",
        measured.len(),
        m.wall_secs,
        match m.full_secs {
            // An estimate needs a measured cell to scale from.
            Some(full) if m.adaptive && full > 0.0 && !measured.is_empty() => format!(
                "; the full matrix would take about {full:.0} s ({}), skipping {} cells",
                share_of(m.wall_secs, full),
                m.skipped
            ),
            _ => String::new(),
        }
    ));
    let few: std::collections::BTreeSet<At> = measured.iter().copied().filter(|&c| !decides(c)).collect();
    if !few.is_empty() {
        footer.push(format!(
            "{} cells of fewer than {MIN_TRANSFERS} records (file under {MIN_TRANSFERS} x record) are shown but decide no \
             peak or cliff: their first transfer, often the slowest, weighs too much",
            few.len()
        ));
    }
    if m.cells.iter().any(|c| c.possibly_cached.is_some()) {
        footer.push(format!(
            "* possibly the page cache's figure: {}",
            m.cells.iter().find_map(|c| c.possibly_cached.as_deref()).unwrap_or_default()
        ));
    }
    footer.extend(m.notes.iter().cloned());
    if m.status == Status::Failed {
        footer.push(format!("FAILED: {}", m.error.as_deref().unwrap_or("unknown error")));
    }
    footer
}

/// A heat map per kind (MiB/s), its cliffs drawn between the sizes they fall between.
pub fn heat_maps(m: &MatrixRecord) -> Vec<super::Chart> {
    let found = findings(m);
    kinds(m)
        .into_iter()
        .map(|kind| {
            let index = |sizes: &[u64], s: u64| sizes.iter().position(|&x| x == s);
            let cliffs = found.iter().find(|f| f.kind == kind).map(|f| f.cliffs.clone()).unwrap_or_default();
            let per_node = m.shape.per_node.max(1) as u64;
            let heat = super::Heat {
                rows: m.grid.files.iter().map(|&f| format_size(f)).collect(),
                columns: m.grid.records.iter().map(|&r| format_size(r)).collect(),
                values: m
                    .grid
                    .files
                    .iter()
                    .map(|&f| m.grid.records.iter().map(|&r| rate(m, kind, (f, r)).map(mib_per_s)).collect())
                    .collect(),
                row_cliffs: cliffs
                    .iter()
                    .filter(|(a, _)| *a == Axis::File)
                    .filter_map(|(_, c)| index(&m.grid.files, c.from / per_node))
                    .collect(),
                column_cliffs: cliffs
                    .iter()
                    .filter(|(a, _)| *a == Axis::Record)
                    .filter_map(|(_, c)| index(&m.grid.records, c.from))
                    .collect(),
            };
            super::Chart {
                title: format!("{} (MiB/s){}", kind.name(), if cliffs.is_empty() { "" } else { "; cliffs in red" }),
                x: "record".into(),
                y: "file".into(),
                heat: Some(heat),
                ..super::Chart::default()
            }
        })
        .collect()
}

/// What the timed window holds, in words.
fn timing_words(m: &MatrixRecord) -> &'static str {
    use crate::measure::WindowEnd;
    match m.timing {
        WindowEnd::Transfers => "IOzone's: from the first transfer to the last, open, fsync and close outside",
        WindowEnd::Fsync => "from the first transfer to the end of the write phases' fsync (IOzone -e)",
        WindowEnd::Close => "from the first transfer to close (IOzone -c)",
    }
}

/// One kind's grid: MiB/s, a row per file size, a column per record size.
/// The first column of a kind's grid.
const GRID_CORNER: &str = "file \\ record";

/// Whether `t` is one of [`matrix`]'s grids (files down, records across).
pub fn is_grid(t: &Table) -> bool {
    t.columns.first().is_some_and(|c| c == GRID_CORNER)
}

fn grid(m: &MatrixRecord, kind: Kind) -> Table {
    let mut columns = vec![GRID_CORNER.to_string()];
    columns.extend(m.grid.records.iter().map(|&r| format_size(r)));
    let rows = m
        .grid
        .files
        .iter()
        .map(|&f| {
            let mut row = vec![Cell::text(format_size(f))];
            row.extend(m.grid.records.iter().map(|&r| match cell(m, kind, (f, r)) {
                Some(c) => Cell::num(c.rate().map(mib_per_s), 0),
                None => Cell::Empty,
            }));
            row
        })
        .collect();
    let mut notes = Vec::new();
    if m.adaptive {
        notes.push("- : not measured (outside the grid, or skipped by the adaptive mode)".into());
    }
    Table { title: format!("{} (MiB/s)", kind.name()), columns, rows, notes }
}

/// Throughput mode: per cell, the whole team's rate beside the rate while every task was still
/// busy, and the slowest and fastest task's own rate.
fn throughput(m: &MatrixRecord) -> Table {
    let mut t = Table::new(
        format!("throughput of {} tasks (MiB/s, medians over samples)", m.shape.tasks),
        &["kind", "file", "record", "team", "until first done", "slowest task", "fastest task"],
    );
    let med = |c: &MatrixCell, f: fn(&crate::measure::TimedFigures) -> Option<f64>| {
        crate::measure::median(&c.samples.iter().filter_map(f).collect::<Vec<_>>()).map(mib_per_s)
    };
    for c in &m.cells {
        t.rows.push(vec![
            Cell::text(c.kind.name()),
            Cell::text(format_size(c.file)),
            Cell::text(format_size(c.record)),
            Cell::num(med(c, |s| s.team), 1),
            Cell::num(med(c, |s| s.all_busy), 1),
            Cell::num(med(c, |s| s.task_min), 1),
            Cell::num(med(c, |s| s.task_max), 1),
        ]);
    }
    t.notes.push(
        "team: all bytes over the time from the first transfer of any task to the end of the last; \
         until first done: the bytes moved before the first task closed its file, over that time; \
         IOzone's 'children see' (a sum of each task's own rate) is not given: it counts tasks that did not overlap as if they had"
            .into(),
    );
    t
}

/// The matrices of `iosurvey ls`: a line each (their cells' runs are not listed one by one).
pub fn list(ms: &[MatrixRecord]) -> Report {
    if ms.is_empty() {
        return Report::default();
    }
    let mut t = Table::new(
        "matrices",
        &["id", "label", "started", "host", "status", "fs", "mode", "cells", "wall s", "best read MiB/s", "target"],
    );
    for m in ms {
        let best_read =
            findings(m).into_iter().find(|f| f.kind == Kind::Read).and_then(|f| f.peak).map(|p| mib_per_s(p.0));
        t.rows.push(vec![
            Cell::text(m.id.map_or(String::new(), |i| format!("m{i}"))),
            Cell::text(super::labelled(m.label.as_deref(), m.provenance.as_deref().unwrap_or(crate::record::MEASURED))),
            Cell::text(format_time(m.started)),
            Cell::text(&m.env.host),
            Cell::text(m.status.name()),
            Cell::text(&m.env.fs_type),
            Cell::text(if m.adaptive { "adaptive" } else { "full" }),
            Cell::Int(
                m.cells.iter().map(|c| (c.file, c.record)).collect::<std::collections::BTreeSet<_>>().len() as u64
            ),
            Cell::num(Some(m.wall_secs), 1),
            Cell::num(best_read, 0),
            Cell::text(&m.env.target),
        ]);
    }
    Report { tables: vec![t], ..Report::default() }
}

/// The lines of a matrix as CSV: a line per kind and cell measured (`mib_s` the median rate).
pub fn csv(m: &MatrixRecord) -> String {
    let mut out = String::from("kind,file_bytes,record_bytes,mib_s,samples\n");
    for c in &m.cells {
        let rate = c.rate().map(|r| format!("{:.3}", mib_per_s(r))).unwrap_or_default();
        // The kind's name is iosurvey's own, but every CSV field goes through one rule.
        out.push_str(&format!("{},{},{},{},{}\n", csv_field(&c.kind.name()), c.file, c.record, rate, c.samples.len()));
    }
    out
}

/// Whether two matrices' findings agree, finding by finding: per kind measured in both, the
/// peak (within 10% of each other), the best record size (the same, or one's best within 10%
/// of the best in the other's record profile), and each cliff of either (the other has one on the same
/// axis ending within one size step, or its profile falls there by half the threshold).
/// Returns (agreeing, total) and a line per finding.
pub fn agreement(a: &MatrixRecord, b: &MatrixRecord) -> (usize, usize, Vec<String>) {
    let (fa, fb) = (findings(a), findings(b));
    let mut lines = Vec::new();
    let mut agree = 0;
    let mut total = 0;
    let mut say = |ok: bool, text: String| {
        total += 1;
        agree += ok as usize;
        lines.push(format!("{} {text}", if ok { "agree:   " } else { "DISAGREE:" }));
    };
    let near = |x: f64, y: f64| (x - y).abs() <= NEAR * x.max(y);
    for ka in &fa {
        let Some(kb) = fb.iter().find(|k| k.kind == ka.kind) else { continue };
        let name = ka.kind.name();
        if let (Some((pa, ca)), Some((pb, cb))) = (ka.peak, kb.peak) {
            say(
                near(pa, pb),
                format!(
                    "{name} peak {:.0} MiB/s ({}/{}) vs {:.0} MiB/s ({}/{})",
                    mib_per_s(pa),
                    format_size(ca.0),
                    format_size(ca.1),
                    mib_per_s(pb),
                    format_size(cb.0),
                    format_size(cb.1)
                ),
            );
            // One's best record is a best record of the other too (the other's record profile
            // there within 10% of its peak): on a flat top either is the best.
            let share = |m: &MatrixRecord, best: f64, record: u64| {
                profile(m, ka.kind, Axis::Record).iter().find(|p| p.size == record).map(|p| p.rate / best)
            };
            let (in_b, in_a) = (share(b, pb, ca.1), share(a, pa, cb.1));
            let ok = ca.1 == cb.1 || in_b.is_some_and(|x| x >= 1.0 - NEAR) || in_a.is_some_and(|x| x >= 1.0 - NEAR);
            let shares = match ca.1 == cb.1 {
                true => String::new(),
                false => {
                    let pct =
                        |x: Option<f64>| x.map_or("unmeasured".into(), |x| format!("{:.0}% of its best", 100.0 * x));
                    format!(
                        " ({} in the second: {}; {} in the first: {})",
                        format_size(ca.1),
                        pct(in_b),
                        format_size(cb.1),
                        pct(in_a)
                    )
                }
            };
            say(ok, format!("{name} best record {} vs {}{shares}", format_size(ca.1), format_size(cb.1)));
        }
        for (one, other, first) in [(ka, kb, true), (kb, ka, false)] {
            for (axis, c) in &one.cliffs {
                // The other sees it too when it has a cliff there, or its profile falls there
                // by half the threshold at least: a drop near the threshold is called by one
                // and missed by the other for noise alone.
                let step = |x: u64, y: u64| (x as f64 / y as f64).log2().abs() <= 1.0 + 1e-9;
                let m = if first { b } else { a };
                let falls = profile(m, ka.kind, *axis)
                    .windows(2)
                    .any(|w| step(c.to, w[1].size) && w[1].rate < w[0].rate * (1.0 - m.fraction / 2.0));
                let ok = falls || other.cliffs.iter().any(|(ax, d)| ax == axis && step(c.to, d.to));
                let whose = if first { "first" } else { "second" };
                say(ok, format!("{name} cliff of the {whose}: {}", said(ka.kind, *axis, c)));
            }
        }
    }
    (agree, total, lines)
}

/// How near two matrices' peaks must be to agree, as a share of the larger; a best record
/// agrees when it reaches `1 - NEAR` of the other's peak in the other's record profile.
pub const NEAR: f64 = 0.10;

/// The tolerances [`agreement`] holds two matrices' findings to, in words.
pub fn tolerances() -> String {
    format!(
        "agreement tolerances: peaks within {pct}% of the larger; a best record is the same, or reaches {keep}% of \
         the other's peak in the other's record profile; a cliff has one in the other ending within one size \
         step, or the other's profile falls there by half the threshold",
        pct = 100.0 * NEAR,
        keep = 100.0 * (1.0 - NEAR)
    )
}

/// Two matrices' findings side by side, and their agreement.
pub fn compare(a: &MatrixRecord, b: &MatrixRecord) -> Report {
    // An imported matrix says so beside its name.
    let name = |m: &MatrixRecord| {
        let id = m.id.map_or("?".into(), |i| format!("m{i}"));
        match m.provenance.as_deref().and_then(crate::record::imported_from) {
            Some(tool) => format!("{id} imported:{tool}"),
            None => id,
        }
    };
    let (agree, total, lines) = agreement(a, b);
    let mut report = Report::default();
    report.heading.push(format!(
        "{} ({}, {:.1} s) against {} ({}, {:.1} s)",
        name(a),
        if a.adaptive { "adaptive" } else { "full" },
        a.wall_secs,
        name(b),
        if b.adaptive { "adaptive" } else { "full" },
        b.wall_secs
    ));
    report.heading.extend(lines);
    report.footer.push(format!("agreement: {agree} of {total} findings"));
    report.footer.push(tolerances());
    report
}

/// How the adaptive mode's wall time compares with the full matrix's estimate: a percentage,
/// or, from ten times over, "N times as long" (the estimate counts the cells' visits only, so a
/// run of few cells, most of its time spent choosing and setting up, may exceed it).
fn share_of(wall: f64, full: f64) -> String {
    let ratio = wall / full;
    if ratio >= 10.0 {
        format!("this took {ratio:.0} times as long")
    } else {
        format!("this is {:.0}% of it", 100.0 * ratio)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::TimedFigures;
    use crate::plan::matrix::Grid;
    use crate::units::{KIB, MIB};

    /// A matrix whose read rate is `rate(file, record)` in every cell of the grid, one sample
    /// each.
    pub(crate) fn synthetic(rate: impl Fn(u64, u64) -> f64, adaptive: bool) -> MatrixRecord {
        sampled(rate, adaptive, &[1.0])
    }

    /// A matrix whose read rate is `rate(file, record)` times each of `noise` in every cell:
    /// a sample per factor.
    pub(crate) fn sampled(rate: impl Fn(u64, u64) -> f64, adaptive: bool, noise: &[f64]) -> MatrixRecord {
        let grid = Grid::new((64 * KIB, 64 * MIB), (4 * KIB, MIB), false);
        let cells = grid
            .cells()
            .into_iter()
            .map(|(file, record)| MatrixCell {
                kind: Kind::Read,
                file,
                record,
                samples: noise
                    .iter()
                    .map(|n| TimedFigures { team: Some(rate(file, record) * n), ..TimedFigures::default() })
                    .collect(),
                runs: Vec::new(),
                possibly_cached: None,
            })
            .collect();
        let shape =
            crate::plan::matrix::Shape { tasks: 1, per_node: 1, direct: false, fsync: false, seed: 1, stand_in: None };
        MatrixRecord {
            id: Some(1),
            adaptive,
            cells,
            limits: vec![crate::env::Limit { name: "the L2 unified cache".into(), bytes: 2 * MIB }],
            wall_secs: 1.0,
            ..MatrixRecord::new(grid, vec![Kind::Read], shape, 0.3)
        }
    }

    #[test]
    fn a_grid_with_a_cache_cliff_names_it_and_its_peak() {
        // 4 GB/s up to 2 MiB files, 1 GB/s beyond; best with 256 KiB records.
        let rate = |f, r| if f <= 2 * MIB { 4e9 } else { 1e9 } * if r == 256 * KIB { 1.0 } else { 0.9 };
        let m = sampled(rate, false, &[0.99, 1.0, 1.01]);
        let f = findings(&m);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].peak.map(|p| p.1 .1), Some(256 * KIB));
        assert_eq!(f[0].cliffs.len(), 2, "{:?}", f[0].cliffs);
        let (axis, c) = &f[0].cliffs[0];
        assert_eq!((*axis, c.from, c.to), (Axis::File, 2 * MIB, 4 * MIB));
        assert_eq!(c.cause.as_deref(), Some("crosses the L2 unified cache (2 MiB)"));
        // The same edge along records: a 1 MiB record decides only on files of 4 MiB and more.
        let (axis, c) = &f[0].cliffs[1];
        assert_eq!((*axis, c.from, c.to), (Axis::Record, 512 * KIB, MIB));
        assert_eq!(c.cause, None, "the L2 does not lie between 512 KiB and 1 MiB records");
        let text = matrix(&m);
        assert!(text.findings.iter().any(|f| f.text.starts_with(
            "read over growing files (data per node) drops 75% from 2 MiB to 4 MiB (3 and 3 samples, apart beyond \
             their spread): it crosses the L2"
        )));
        assert!(!text.heading.iter().any(|l| l.contains("stand-in")));
        let mut stood_in = m.clone();
        stood_in.shape.stand_in = Some(crate::spec::EngineName::new("delay", Some("1ms")));
        assert!(matrix(&stood_in)
            .heading
            .iter()
            .any(|l| l.starts_with("every pass ran on the stand-in engine delay:1ms")));
        assert!(findings(&stood_in)[0].cliffs.iter().all(|(_, c)| c.cause.is_none()), "no cache lies on its path");
        // The same matrix of one sample a cell says so, and names no cause.
        let once = findings(&synthetic(rate, false));
        assert!(once[0].cliffs.iter().all(|(_, c)| c.support == crate::stats::Support::Single && c.cause.is_none()));
        // Its own agreement is whole.
        let (agree, total, _) = agreement(&m, &m);
        assert_eq!((agree, total), (6, 6), "peak, best record, each cliff both ways");
        // The CSV has a line per cell and the header.
        assert_eq!(csv(&m).lines().count(), m.grid.cells().len() + 1);
        assert!(csv(&m).contains("\nread,2097152,262144,3814.697,3\n"), "{}", csv(&m));
    }

    #[test]
    fn a_plateau_and_noise_are_no_cliff() {
        let flat = synthetic(|_, _| 1e9, false);
        assert!(findings(&flat)[0].cliffs.is_empty());
        // +-15% around 1 GB/s, drawn per cell.
        let noisy = synthetic(
            |f, r| 1e9 * (1.0 + 0.15 * (((f / 4096 + r / 512) * 2654435761 % 1000) as f64 / 500.0 - 1.0)),
            false,
        );
        assert!(findings(&noisy)[0].cliffs.is_empty(), "{:?}", findings(&noisy)[0].cliffs);
    }

    #[test]
    fn the_adaptive_mode_finds_what_the_full_matrix_finds_on_a_synthetic_grid() {
        // A cache edge past 2 MiB files, a record edge past 256 KiB, the best at 64 KiB
        // records, and +-8% of noise per cell.
        let rate = |f: u64, r: u64| {
            let noise = 1.0 + 0.08 * ((((f >> 12) * 31 + (r >> 12) * 17) % 100) as f64 / 50.0 - 1.0);
            let file = if f <= 2 * MIB { 4e9 } else { 1e9 };
            let record = if r > 256 * KIB {
                0.5
            } else if r == 64 * KIB {
                1.0
            } else {
                0.85
            };
            file * record * noise
        };
        let full = synthetic(rate, false);
        let mut adaptive = crate::plan::matrix::Adaptive::new(full.grid.clone(), full.fraction);
        let mut measured = crate::plan::matrix::Measured::new();
        loop {
            let cells = adaptive.next(&measured);
            if cells.is_empty() {
                break;
            }
            for (f, r) in cells {
                measured.entry((f, r)).or_default().entry(Kind::Read).or_default().push(rate(f, r));
            }
        }
        let cells = measured
            .iter()
            .map(|(&(file, record), m)| MatrixCell {
                kind: Kind::Read,
                file,
                record,
                samples: m[&Kind::Read]
                    .iter()
                    .map(|&x| TimedFigures { team: Some(x), ..TimedFigures::default() })
                    .collect(),
                runs: Vec::new(),
                possibly_cached: None,
            })
            .collect();
        let part = MatrixRecord { adaptive: true, cells, spine: adaptive.spine, ..full.clone() };
        assert!(part.cells.len() < full.cells.len(), "{} of {}", part.cells.len(), full.cells.len());
        let (agree, total, lines) = agreement(&part, &full);
        assert_eq!(agree, total, "{lines:#?}");
        // The cache edge along files, the record edge, and the cache edge again along records
        // (records over 512 KiB decide only on files past it).
        assert!(findings(&full)[0].cliffs.len() == 3, "{:?}", findings(&full)[0].cliffs);
    }

    /// A flat 1 GB/s, but a cell of fewer than four records is 100 times as fast on files up to
    /// 128 KiB (a time below a timer's tick) and 100 times as slow beyond (a first transfer's
    /// cost, alone).
    fn planted(f: u64, r: u64) -> f64 {
        match (decides((f, r)), f <= 128 * KIB) {
            (true, _) => 1e9,
            (false, true) => 1e11,
            (false, false) => 1e7,
        }
    }

    #[test]
    fn cells_of_too_few_records_decide_no_peak_or_cliff_in_either_mode() {
        let full = synthetic(planted, false);
        // Counted like any other, the planted cells make the peak and cliffs: the best over
        // records falls from the small files' one-record cells, and an adaptive matrix that
        // measured its largest records on files of their own size falls along records.
        let every = |by_file: bool, m: &MatrixRecord| -> Vec<Point> {
            let sizes = if by_file { &m.grid.files } else { &m.grid.records };
            let at = |c: &MatrixCell| if by_file { c.file } else { c.record };
            sizes
                .iter()
                .filter_map(|&s| {
                    let best = m.cells.iter().filter(|c| at(c) == s).filter_map(|c| c.rate()).reduce(f64::max)?;
                    Some(Point::new(s, best, vec![best]))
                })
                .collect()
        };
        assert!(!cliffs(&every(true, &full), full.fraction, &[]).is_empty());
        let kept = |c: &MatrixCell| c.file <= 512 * KIB || c.file == c.record;
        let adaptive = MatrixRecord {
            adaptive: true,
            cells: full.cells.iter().filter(|c| kept(c)).cloned().collect(),
            ..full.clone()
        };
        assert!(!cliffs(&every(false, &adaptive), adaptive.fraction, &[]).is_empty());
        for m in [&full, &adaptive] {
            let f = &findings(m)[0];
            assert!(f.cliffs.is_empty(), "adaptive {}: {:?}", m.adaptive, f.cliffs);
            let (best, cell) = f.peak.unwrap();
            assert_eq!(best, 1e9, "adaptive {}: the peak at {cell:?}", m.adaptive);
            assert!(decides(cell));
        }
        let shown = matrix(&full);
        assert!(
            shown
                .footer
                .iter()
                .any(|l| l.contains("cells of fewer than 4 records") && l.contains("decide no peak or cliff")),
            "{:?}",
            shown.footer
        );
    }

    #[test]
    fn disagreement_is_counted() {
        let a = synthetic(|f, _| if f <= 2 * MIB { 4e9 } else { 1e9 }, false);
        let b = synthetic(|f, _| if f <= 8 * MIB { 4e9 } else { 1e9 }, false);
        let (agree, total, lines) = agreement(&a, &b);
        // Peak and best record agree; the file cliffs are two steps apart, each way; the first's
        // edge shows along records too (1 MiB records decide on 4 MiB files only), the second's
        // lies beyond the records' reach.
        assert_eq!((agree, total), (2, 5), "{lines:?}");
        // Best records that differ are shown with what each reaches in the other: within the
        // tolerance they agree, beyond it they do not.
        let best_at = |best: u64, other: f64| move |_: u64, r: u64| if r == best { 1e9 } else { other };
        let (one, two) = (synthetic(best_at(64 * KIB, 0.95e9), false), synthetic(best_at(256 * KIB, 0.95e9), false));
        let (_, _, lines) = agreement(&one, &two);
        let line = lines.iter().find(|l| l.contains("best record")).unwrap();
        assert_eq!(line, "agree:    read best record 64 KiB vs 256 KiB (64 KiB in the second: 95% of its best; 256 KiB in the first: 95% of its best)");
        let (one, two) = (synthetic(best_at(64 * KIB, 0.7e9), false), synthetic(best_at(256 * KIB, 0.7e9), false));
        let (_, _, lines) = agreement(&one, &two);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("DISAGREE: read best record 64 KiB vs 256 KiB (64 KiB in the second: 70%")),
            "{lines:?}"
        );
        assert!(compare(&one, &two).footer.iter().any(|l| l.starts_with("agreement tolerances: peaks within 10%")));
    }

    #[test]
    fn the_time_against_the_full_matrix_is_a_percentage_or_so_many_times() {
        assert_eq!(share_of(30.0, 120.0), "this is 25% of it");
        assert_eq!(share_of(120.0, 100.0), "this is 120% of it");
        assert_eq!(share_of(7230.0, 1.0), "this took 7230 times as long");
    }
}
