//! Stored records turned into what a reader is shown: typed tables and findings, computed
//! here and rendered elsewhere (the report room's exporters), so that every renderer (text,
//! JSON, CSV, Markdown, HTML to come) shows the same numbers, and a finding is computed once.

pub mod campaign;
mod charts;
pub mod cliffs;
mod grouped;
pub mod guard;
pub mod matrix;
mod meta;
pub mod objects;
pub mod outliers;
pub mod reference;
pub mod scaling;
pub mod shapes;
pub mod study;
pub mod targets;
pub mod timeline;
pub mod train;

use crate::measure::Spread;
use crate::plan::Role;
use crate::record::net::NetResult;
use crate::record::{imported_from, PhaseRecord, RunRecord, Status};
use crate::spec::{Op, Workload};
use crate::store::RunRow;
use crate::units::{format_size, format_time, gb_per_s, mib_per_s, secs};
use serde::Serialize;

pub use grouped::grouped;

/// One value of a table; numbers keep their value, with the decimals to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// Words.
    Text(String),
    /// A count.
    Int(u64),
    /// A measured value.
    Num {
        /// The value.
        value: f64,
        /// Decimals to print.
        #[serde(skip)]
        decimals: usize,
    },
    /// Nothing to show (printed as "-").
    Empty,
}

impl Cell {
    fn num(value: Option<f64>, decimals: usize) -> Cell {
        value.map_or(Cell::Empty, |value| Cell::Num { value, decimals })
    }

    fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// Whether the cell holds a number (renderers align those right).
    pub fn is_number(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Num { .. })
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Text(s) => f.write_str(s),
            Cell::Int(n) => write!(f, "{n}"),
            Cell::Num { value, decimals } => write!(f, "{value:.decimals$}"),
            Cell::Empty => f.write_str("-"),
        }
    }
}

/// A titled table with its notes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// What it shows.
    pub title: String,
    /// Column headers, with units.
    pub columns: Vec<String>,
    /// Rows of cells, as many as columns.
    pub rows: Vec<Vec<Cell>>,
    /// Lines to read with it (series ranges, footnotes).
    pub notes: Vec<String>,
}

impl Table {
    fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// A sentence the stored numbers defend, with its number and the runs behind it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Finding {
    /// The sentence.
    pub text: String,
    /// Its number.
    pub value: f64,
    /// Ids of the runs it rests on.
    pub runs: Vec<i64>,
    /// What ran too briefly to measure, when that is what the finding says: a report gathers
    /// these into one paragraph from the data, not from the sentence.
    #[serde(skip)]
    pub too_short: Option<guard::TooShort>,
}

/// A chart: named series of (x, y) points, as lines or as bars, each with its numbers in a
/// table of the same report (charts only draw; the table is the record).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Chart {
    /// What it shows.
    pub title: String,
    /// The x axis, with its unit.
    pub x: String,
    /// The y axis, with its unit.
    pub y: String,
    /// (name, points) per line (or group of bars).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// Bars at whole x positions (one per task, node or phase) rather than lines.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bars: bool,
    /// Names of x positions that are categories (hosts, phases), in place of their numbers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ticks: Vec<(f64, String)>,
    /// A heat map in place of lines or bars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heat: Option<Heat>,
    /// Error bars, by series (same order as `series`): (x, low, high) per point that has
    /// repetitions to give it a spread.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Vec<(f64, f64, f64)>>,
    /// Figures to read the series against, each drawn as a level across the chart: a
    /// published system's (name, value in the chart's unit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<(String, f64)>,
    /// Published points measured at a stated x (a system's peak at 64 clients): (name with
    /// the setting it was measured at, x, y in the chart's unit), drawn as black diamonds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<(String, f64, f64)>,
    /// Moments on the x axis, each drawn as a vertical dashed line and named in the legend
    /// (a run's events on its time line).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<(String, f64)>,
    /// Ids of the runs whose numbers it draws.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<i64>,
}

/// A heat map: a value per row and column (a matrix kind's MiB/s, files down and records
/// across), with the boundaries where a cliff lies drawn between rows or columns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Heat {
    /// Row names, top to bottom.
    pub rows: Vec<String>,
    /// Column names, left to right.
    pub columns: Vec<String>,
    /// `values[row][column]`; none where nothing was measured.
    pub values: Vec<Vec<Option<f64>>>,
    /// Cliffs between row i and row i + 1, by i.
    pub row_cliffs: Vec<usize>,
    /// Cliffs between column i and column i + 1, by i.
    pub column_cliffs: Vec<usize>,
}

impl Chart {
    /// The chart's numbers as a table: a row per x, a column per series (a heat map's grid as
    /// it is drawn).
    pub fn table(&self) -> Table {
        if let Some(h) = &self.heat {
            let mut columns = vec![format!("{} \\ {}", self.y, self.x)];
            columns.extend(h.columns.iter().cloned());
            let rows = h
                .rows
                .iter()
                .zip(&h.values)
                .map(|(name, v)| {
                    std::iter::once(Cell::text(name.clone())).chain(v.iter().map(|x| Cell::num(*x, 0))).collect()
                })
                .collect();
            return Table { title: self.title.clone(), columns, rows, notes: Vec::new() };
        }
        let mut xs: Vec<f64> = self.series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut columns = vec![self.x.clone()];
        columns.extend(self.series.iter().map(|(name, _)| format!("{name} ({})", self.y)));
        let rows = xs
            .iter()
            .map(|&x| {
                let named = self.ticks.iter().find(|(at, _)| *at == x).map(|(_, name)| Cell::text(name.clone()));
                let decimals = if x.fract() == 0.0 { 0 } else { 3 };
                let mut row = vec![named.unwrap_or(Cell::num(Some(x), decimals))];
                row.extend(self.series.iter().map(|(_, p)| Cell::num(p.iter().find(|q| q.0 == x).map(|q| q.1), 1)));
                row
            })
            .collect();
        Table { title: self.title.clone(), columns, rows, notes: Vec::new() }
    }
}

/// What a command shows: a heading, tables, findings, charts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Lines of context before the tables.
    pub heading: Vec<String>,
    /// The tables, in order.
    pub tables: Vec<Table>,
    /// The findings.
    pub findings: Vec<Finding>,
    /// Lines after everything (warnings, failure).
    pub footer: Vec<String>,
    /// Charts of the tables' numbers (drawn by the HTML exporter only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub charts: Vec<Chart>,
}

/// A phase's notes: whether its figure may be the page cache's, and what verification found
/// among its `units` (transfers, files).
fn phase_notes(p: &PhaseRecord, units: &str) -> Vec<String> {
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

fn mib(v: Option<f64>) -> Cell {
    Cell::num(v.map(mib_per_s), 1)
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
    let e = &r.env;
    let mut report = Report::default();
    let id = r.id.map_or("unsaved".to_string(), |i| i.to_string());
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
    let meta = w.meta().is_some();
    if meta {
        report.tables.extend(meta::phases(r));
    } else {
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
        report.tables.push(phases);
    }
    let timed: Vec<_> = r.phases.iter().filter(|p| p.latency.count > 0).collect();
    if !timed.is_empty() {
        let title = match w.data() {
            None => "latency per item (us)".to_string(),
            Some(d) => format!("latency per transfer (us, engine {}, iodepth {})", d.engine, d.iodepth),
        };
        let mut lat =
            Table::new(title, &["phase", "iter", "count", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"]);
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
        report.tables.push(lat);
    }
    report.tables.extend(objects::requests(r));
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
    report.charts.extend(charts::run(r, &id));
    if r.hosts.len() > 1 {
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
        report.tables.push(nodes);
    }
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

/// Which ops' figures may be the page cache's, and why.
fn cache_notes(r: &RunRecord) -> Vec<String> {
    r.summaries()
        .into_iter()
        .filter_map(|x| x.possibly_cached.map(|c| format!("{} possibly cached: {c}", x.op.name())))
        .collect()
}

/// The note a table of one figure per run carries when some run has several iterations:
/// the figure is their mean (`ls` alone shows the best).
fn mean_over_iterations<'a>(mut runs: impl Iterator<Item = &'a RunRecord>) -> Option<String> {
    runs.any(|r| r.workload.iterations > 1).then(|| "each run's figure is the mean over its iterations".into())
}

/// Mean bandwidth (or IOPS) of an op over a run's iterations.
fn mean_of(r: &RunRecord, op: Op, iops: bool) -> Option<f64> {
    let sum = r.summaries().into_iter().find(|s| s.op == op)?;
    (if iops { sum.iops } else { sum.bandwidth }).map(|s| s.mean)
}

fn random(r: &RunRecord) -> bool {
    r.workload.random()
}

/// The mean IOPS (random work) or MiB/s (sequential) of an op.
fn headline(r: &RunRecord, op: Op) -> Cell {
    match random(r) {
        true => Cell::num(mean_of(r, op, true), 0),
        false => mib(mean_of(r, op, false)),
    }
}

fn failure_or(r: &RunRecord, notes: Vec<String>) -> Cell {
    match r.status {
        Status::Failed => Cell::text(format!("FAILED: {}", r.error.as_deref().unwrap_or(""))),
        Status::Ok => Cell::text(notes.join("; ")),
    }
}

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

/// A sweep: a row per point, team size against write and read (IOPS for random work).
pub fn sweep(sweep_id: Option<i64>, runs: &[RunRecord]) -> Report {
    let first = runs.first().map(|r| r.workload.shape_label()).unwrap_or_default();
    let unit = if runs.first().is_some_and(random) { "IOPS" } else { "MiB/s" };
    let (write, read) = (format!("write {unit}"), format!("read {unit}"));
    let mut t = Table::new(
        format!("sweep {} over clients: {first}", sweep_id.map_or("-".into(), |i| i.to_string())),
        &["clients", "run", &write, &read, "notes"],
    );
    for r in runs {
        t.rows.push(vec![
            Cell::Int(r.workload.tasks as u64),
            r.id.map_or(Cell::Empty, |i| Cell::Int(i as u64)),
            headline(r, Op::Write),
            headline(r, Op::Read),
            failure_or(r, cache_notes(r)),
        ]);
    }
    t.notes.extend(mean_over_iterations(runs.iter()));
    let is_random = runs.first().is_some_and(random);
    let ok: Vec<&RunRecord> = runs.iter().filter(|r| r.status == Status::Ok).collect();
    let findings = [Op::Write, Op::Read].into_iter().flat_map(|op| scaled(&op.name(), &ok, op, is_random)).collect();
    let series = [Op::Write, Op::Read]
        .into_iter()
        .map(|op| {
            let points = runs
                .iter()
                .filter(|r| r.status == Status::Ok)
                .filter_map(|r| {
                    let v = mean_of(r, op, is_random)?;
                    Some((r.workload.tasks as f64, if is_random { v } else { mib_per_s(v) }))
                })
                .collect::<Vec<_>>();
            (op.name(), points)
        })
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let chart = Chart { title: t.title.clone(), x: "clients".into(), y: unit.into(), series, ..Chart::default() };
    Report { tables: vec![t], findings, charts: vec![chart], ..Report::default() }
}

/// Sweeps of one workload on several systems (labels) on one chart, a line per system and op
/// against clients: the seeds' line charts. Several runs at one client count are averaged.
pub fn sweeps_by_system(runs: &[RunRecord]) -> Report {
    let swept: Vec<&RunRecord> =
        runs.iter().filter(|r| r.sweep_id.is_some() && r.label.is_some() && r.status == Status::Ok).collect();
    // Computed once per run: a key is the workload's canonical text.
    let keyed: Vec<String> = swept.iter().map(|r| r.workload.key()).collect();
    let mut keys = keyed.clone();
    keys.sort();
    keys.dedup();
    let (mut charts, mut findings) = (Vec::new(), Vec::new());
    for key in keys {
        let group: Vec<&RunRecord> = swept.iter().zip(&keyed).filter(|(_, k)| **k == key).map(|(r, _)| *r).collect();
        let mut labels: Vec<&str> = group.iter().filter_map(|r| r.label.as_deref()).collect();
        labels.sort_unstable();
        labels.dedup();
        if labels.len() < 2 {
            continue;
        }
        let is_random = random(group[0]);
        let mut series = Vec::new();
        for label in &labels {
            for op in [Op::Write, Op::Read] {
                let of_label: Vec<&RunRecord> =
                    group.iter().copied().filter(|r| r.label.as_deref() == Some(*label)).collect();
                findings.extend(scaled(&format!("{label} {}", op.name()), &of_label, op, is_random));
                let mut counts: Vec<usize> = of_label.iter().map(|r| r.workload.tasks).collect();
                counts.sort_unstable();
                counts.dedup();
                let points: Vec<(f64, f64)> = counts
                    .iter()
                    .filter_map(|&n| {
                        let at: Vec<&RunRecord> = of_label.iter().copied().filter(|r| r.workload.tasks == n).collect();
                        let xs = samples(&at, op);
                        (!xs.is_empty()).then(|| (n as f64, mean_of_samples(&xs)))
                    })
                    .collect();
                if !points.is_empty() {
                    series.push((format!("{label} {}", op.name()), points));
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let unit = if is_random { "IOPS" } else { "MiB/s" };
        charts.push(Chart {
            title: format!("{}: {unit} against clients, by system", group[0].workload.shape_label()),
            x: "clients".into(),
            y: unit.into(),
            series,
            ..Chart::default()
        });
    }
    Report { charts, findings, ..Report::default() }
}

/// The scaling findings of `runs` (the repeated sweeps of one system on one workload) for an
/// op: every run is a sample of its client count. A finding resting on a run whose phase may
/// have measured the page cache says so.
pub(crate) fn scaled(what: &str, runs: &[&RunRecord], op: Op, is_random: bool) -> Vec<Finding> {
    // Metadata is counted in operations per second, as mdtest says it.
    let counted = if runs.first().is_some_and(|r| r.workload.meta().is_some()) { "ops/s" } else { "IOPS" };
    let show = |v: f64| if is_random { format!("{v:.0} {counted}") } else { format!("{:.1} MiB/s", mib_per_s(v)) };
    // A figure from a phase too brief to measure is listed as such, never read for a peak or
    // a step of the curve.
    let brief = guard::too_short(what, runs, op).map(|t| t.finding(runs, op));
    let points: Vec<scaling::Point> = runs
        .iter()
        .filter(|r| !guard::too_brief(r, op))
        .filter_map(|r| {
            Some(scaling::Point { clients: r.workload.tasks as u64, value: mean_of(r, op, is_random)?, run: r.id? })
        })
        .collect();
    let cached: Vec<i64> = runs
        .iter()
        .filter(|r| r.phases.iter().any(|p| p.op == op && p.possibly_cached.is_some()))
        .filter_map(|r| r.id)
        .collect();
    let mut found = scaling::findings(what, &points, show);
    for f in &mut found {
        let mine: Vec<i64> = f.runs.iter().copied().filter(|id| cached.contains(id)).collect();
        if mine.len() == f.runs.len() {
            f.text.push_str(&format!("; {CACHED}"));
        } else if !mine.is_empty() {
            f.text.push_str(&format!("; {CACHED}, in runs {}", study::spans(&mine)));
        }
    }
    found.extend(brief);
    found
}

/// The caveat of a figure whose reads may have come from the page cache, after its finding.
pub const CACHED: &str = "possibly the page cache's, not the storage's";

/// The 95% interval of a mean as a table shows it: "± h" when symmetric, else "(lo to hi)".
pub fn interval_cell(i: &crate::stats::Interval, decimals: usize) -> Cell {
    Cell::text(crate::stats::around(i.value, i.lo, i.hi, decimals))
}

/// A survey figure whose runs vary more than this (coefficient of variation) is called
/// unstable: its mean cannot be trusted to say how good the storage is.
pub const UNSTABLE_CV: f64 = 0.20;

/// A phase shorter than this measures start-up and the clock as much as the storage.
pub const BRIEF_PHASE_SECS: f64 = 1.0;

/// The characterization of a survey, and what it finds: N-to-1 against N-to-N. A row per
/// workload: the mean over its runs (each run's own mean over iterations), the half-width
/// of its 95% interval and the runs' coefficient of variation, from 2 runs on. The notes say
/// what ± is, which figures are unstable (above [`UNSTABLE_CV`]) and which phases ran too
/// briefly (under [`BRIEF_PHASE_SECS`]), each with what to do.
pub fn survey(survey_id: i64, runs: &[RunRecord]) -> Report {
    let target = runs.first().map(|r| format!("{} ({})", r.env.target, r.env.fs_type)).unwrap_or_default();
    // An imported IO500 list says where it came from in its title.
    let from =
        runs.first().and_then(|r| imported_from(&r.provenance)).map_or(String::new(), |t| format!(", imported:{t}"));
    let mut t = Table::new(
        format!("survey {survey_id} of {target}{from}"),
        &["workload", "runs", "write", "± write", "cv write %", "read", "± read", "cv read %", "unit", "notes"],
    );
    let mut unstable = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        let name = r.name.as_deref().unwrap_or("-");
        if !names.contains(&name) {
            names.push(name);
        }
    }
    for name in names {
        let group: Vec<&RunRecord> = runs.iter().filter(|r| r.name.as_deref().unwrap_or("-") == name).collect();
        // The notes and metadata rates of the first run that succeeded (else of the first).
        let first = group.iter().copied().find(|r| r.status == Status::Ok).unwrap_or(group[0]);
        let mut notes = cache_notes(first);
        if first.workload.data().is_some_and(|d| d.direct) {
            notes.push("O_DIRECT".into());
        }
        if first.workload.meta().is_some() {
            // Metadata phases have no write or read column: their rates lead the notes.
            let rates = first.summaries().into_iter().filter_map(|s| Some((s.op.name(), s.iops?.mean)));
            let rates: Vec<String> = rates.map(|(op, rate)| format!("{op} {rate:.0} items/s")).collect();
            notes.splice(0..0, rates);
        }
        for r in group.iter().filter(|r| r.status == Status::Failed) {
            notes.push(format!("FAILED: run {}: {}", r.id.unwrap_or(0), r.error.as_deref().unwrap_or("")));
        }
        let mut row = vec![Cell::text(name), Cell::Int(group.len() as u64)];
        for op in [Op::Write, Op::Read] {
            let xs = samples(&group, op);
            let decimals = if random(first) { 0 } else { 1 };
            let interval = crate::stats::mean_interval(&xs)
                .map(|i| interval_cell(&i, decimals))
                .or_else(|| crate::stats::unbounded(&xs).then(|| Cell::text(crate::stats::UNBOUNDED)));
            let mean = (!xs.is_empty()).then(|| mean_of_samples(&xs));
            let cv = coefficient_of_variation(&xs);
            if let Some(cv) = cv.filter(|&cv| cv > UNSTABLE_CV) {
                unstable.push(format!("{name} {} ({:.0}% over {} runs)", op.name(), 100.0 * cv, xs.len()));
            }
            row.extend([
                Cell::num(mean, decimals),
                interval.unwrap_or(Cell::Empty),
                Cell::num(cv.map(|cv| 100.0 * cv), 0),
            ]);
        }
        row.push(Cell::text(match (first.workload.meta().is_some(), random(first)) {
            (true, _) => "items/s",
            (_, true) => "IOPS",
            _ => "MiB/s",
        }));
        row.push(Cell::text(notes.join("; ")));
        t.rows.push(row);
    }
    t.notes.extend(mean_over_iterations(runs.iter()));
    t.notes.push(
        "± is half the 95% interval of the mean over runs (Student's t below 10 runs, bootstrap from 10), given by its ends when not symmetric; cv is the runs' standard deviation over their mean"
            .into(),
    );
    if !unstable.is_empty() {
        t.notes.push(format!(
            "unstable, the runs vary by more than {:.0}%: {}; such a mean cannot be trusted: run more --repetitions, or a larger --size so each phase runs longer",
            100.0 * UNSTABLE_CV,
            unstable.join(", ")
        ));
    }
    t.notes.extend(brief_phases(runs));
    Report { tables: vec![t], findings: shared_vs_own_files(runs), charts: own_and_shared(runs), ..Report::default() }
}

/// The survey's workloads whose phases ran under [`BRIEF_PHASE_SECS`], each with its shortest
/// phase and the `--size` that would make that phase last the second (the size scales the
/// time a phase takes at the rate it ran).
fn brief_phases(runs: &[RunRecord]) -> Vec<String> {
    let mut shortest: Vec<(&str, f64, &RunRecord)> = Vec::new();
    for r in runs.iter().filter(|r| r.status == Status::Ok) {
        let name = r.name.as_deref().unwrap_or("-");
        for p in r.phases.iter().filter(|p| p.op.moves_data()) {
            let secs = p.figures.window_ns as f64 / 1e9;
            match shortest.iter_mut().find(|(n, ..)| *n == name) {
                Some(entry) if secs < entry.1 => *entry = (name, secs, r),
                Some(_) => {}
                None => shortest.push((name, secs, r)),
            }
        }
    }
    shortest
        .into_iter()
        .filter(|&(_, secs, _)| secs < BRIEF_PHASE_SECS)
        .map(|(name, secs, r)| {
            let fix = format!("give {}", guard::fix(r, secs));
            format!("{name}: a phase ran {secs:.3} s, under the {BRIEF_PHASE_SECS} s a figure needs: {fix}")
        })
        .collect()
}

/// The survey's sequential workloads side by side: N-to-N and N-to-1, write and read, the
/// mean over their runs, with the 95% interval of each mean as its error bar (from two runs).
fn own_and_shared(runs: &[RunRecord]) -> Vec<Chart> {
    type Bars = (String, Vec<(f64, f64)>, Vec<(f64, f64, f64)>);
    let drawn: Vec<Bars> = [(Role::SeqFilePerTask, "N-to-N"), (Role::SeqShared, "N-to-1")]
        .into_iter()
        .map(|(role, name)| {
            let group: Vec<&RunRecord> =
                runs.iter().filter(|r| r.name.as_deref().and_then(Role::from_name) == Some(role)).collect();
            let (mut points, mut errors) = (Vec::new(), Vec::new());
            for (k, op) in [Op::Write, Op::Read].into_iter().enumerate() {
                let xs = samples(&group, op);
                if xs.is_empty() {
                    continue;
                }
                points.push((k as f64, mean_of_samples(&xs)));
                errors.extend(crate::stats::mean_interval(&xs).map(|i| (k as f64, i.lo, i.hi)));
            }
            (name.to_string(), points, errors)
        })
        .filter(|(_, p, _)| !p.is_empty())
        .collect();
    if drawn.len() < 2 {
        return Vec::new();
    }
    let (series, errors) = drawn.into_iter().map(|(name, points, errors)| ((name, points), errors)).unzip();
    vec![Chart {
        title: "N-to-N and N-to-1, sequential (mean over runs)".into(),
        x: "phase".into(),
        y: "MiB/s".into(),
        series,
        errors,
        bars: true,
        ticks: vec![(0.0, "write".into()), (1.0, "read".into())],
        ..Chart::default()
    }]
}

/// The figure of merit of each successful run of `group` for `op`: IOPS for random work, MiB/s
/// otherwise (each run's mean over its iterations).
fn samples(group: &[&RunRecord], op: Op) -> Vec<f64> {
    group
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| {
            let v = mean_of(r, op, random(r))?;
            Some(if random(r) { v } else { mib_per_s(v) })
        })
        .collect()
}

/// N-to-1 bandwidth as a share of N-to-N, per op, from the survey's two sequential roles, with
/// the interval the repetitions allow (none from single runs, said so; a ratio whose interval
/// holds 1 is said to be no difference). With one task the two workloads are the same, so no
/// ratio is made.
fn shared_vs_own_files(runs: &[RunRecord]) -> Vec<Finding> {
    let of_role = |role: Role| -> Vec<&RunRecord> {
        runs.iter().filter(|r| r.name.as_deref().and_then(Role::from_name) == Some(role)).collect()
    };
    let (own, shared) = (of_role(Role::SeqFilePerTask), of_role(Role::SeqShared));
    if own.first().is_none_or(|r| r.workload.tasks < 2) || shared.is_empty() {
        return Vec::new();
    }
    let ids: Vec<i64> = own.iter().chain(&shared).filter_map(|r| r.id).collect();
    [Op::Write, Op::Read]
        .into_iter()
        .filter_map(|op| {
            let (a, b) = (samples(&own, op), samples(&shared, op));
            let (ma, mb) = (a.first().map(|_| mean_of_samples(&a))?, b.first().map(|_| mean_of_samples(&b))?);
            let value = 100.0 * mb / ma;
            let op = op.name();
            let text = match crate::stats::ratio_interval(&b, &a) {
                None => format!(
                    "N-to-1 {op} is {value:.0}% of N-to-N (from {} and {} run(s): no interval; --repetitions 3 gives one)",
                    b.len(),
                    a.len()
                ),
                Some(iv) if crate::stats::verdict(&iv) == crate::stats::Verdict::NoDifference => format!(
                    "N-to-1 {op} and N-to-N {op} cannot be told apart: ratio {:.2} ({} {:.2} to {:.2}, {} and {} runs)",
                    iv.value,
                    iv.method.name(),
                    iv.lo,
                    iv.hi,
                    b.len(),
                    a.len()
                ),
                Some(iv) => format!(
                    "N-to-1 {op} is {value:.0}% of N-to-N ({} {:.0}% to {:.0}%, {} and {} runs)",
                    iv.method.name(),
                    100.0 * iv.lo,
                    100.0 * iv.hi,
                    b.len(),
                    a.len()
                ),
            };
            Some(Finding { text, value, runs: ids.clone(), ..Default::default() })
        })
        .collect()
}

/// The network ceilings of a run's nodes (their table) and its storage figures as shares of
/// the ceiling, when its target is reached over a network ([`crate::env::is_network_fs`]): the pattern its clients make (N-to-1 from several nodes, else 1-to-1), from senders among its hosts, the
/// highest such ceiling (so the share is not flattered), named in full.
pub fn against_ceiling(record: &RunRecord, ceilings: &[NetResult]) -> Report {
    // A local disk or a memory file system is reached over no network: no ceiling bounds it.
    // An imported run does not say its file system (empty): it may be reached over one.
    let fs = &record.env.fs_type;
    if !fs.is_empty() && !crate::env::is_network_fs(fs) {
        return Report::default();
    }
    let nodes = record.hosts.len();
    let pattern = if nodes > 1 { crate::net::Pattern::ManyToOne } else { crate::net::Pattern::OneToOne };
    let best = ceilings
        .iter()
        .filter(|c| c.pattern == pattern && !c.both_ways && !c.one_node)
        .filter(|c| c.senders.iter().all(|h| record.hosts.contains(h)))
        .filter_map(|c| Some((c, c.bandwidth?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    // The ceilings' table stands beside a target reached over the network only.
    let table = net(ceilings);
    let Some((ceiling, limit)) = best else { return table };
    let findings = record
        .index()
        .headline
        .iter()
        .filter_map(|b| {
            let value = 100.0 * b.bandwidth? / limit;
            let mut receivers = ceiling.receivers.clone();
            receivers.dedup();
            Some(Finding {
                text: format!(
                    "{} reaches {value:.0}% of the {} {} ceiling of these nodes ({} stream{}, {} -> {}: {:.1} MiB/s)",
                    b.op,
                    crate::spec::variant_name(&ceiling.mode),
                    pattern.name(),
                    ceiling.streams,
                    if ceiling.streams == 1 { "" } else { "s" },
                    ceiling.senders.join(","),
                    receivers.join(","),
                    mib_per_s(limit)
                ),
                value,
                runs: record.id.into_iter().collect(),
                ..Default::default()
            })
        })
        .collect();
    table.and(Report { findings, ..Report::default() })
}

/// One side of a comparison: a name (ids or a label, as the user gave it) and its runs.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    /// How the user named it.
    pub name: &'a str,
    /// Its runs.
    pub runs: &'a [RunRecord],
}

/// The completed runs of one workload (one key: what is measured, docs/findings.md) at one
/// team size, for one op: each run's mean over iterations, in the unit of merit (IOPS for
/// random workloads, bytes/s otherwise). Runs of different keys are never in one group.
struct Figures<'a> {
    /// The workload of its first run (the others have its key and team).
    workload: &'a Workload,
    /// Its key.
    key: String,
    /// The op.
    op: String,
    /// IOPS, not bandwidth, is its figure of merit.
    random: bool,
    /// A figure per run.
    xs: Vec<f64>,
    /// Those runs' ids.
    runs: Vec<i64>,
    /// Why any of those runs' figures may be the page cache's, the first reason seen.
    cached: Option<String>,
}

impl Figures<'_> {
    /// The same workload at the same team size.
    fn same_workload(&self, other: &Figures) -> bool {
        self.key == other.key && self.workload.tasks == other.workload.tasks
    }

    /// The same workload, team and op: figures that may be set side by side.
    fn same(&self, other: &Figures) -> bool {
        self.same_workload(other) && self.op == other.op
    }
}

/// Each completed run's figure per workload (key and team size) and op, in the order first seen.
fn figures_by_workload(runs: &[RunRecord]) -> Vec<Figures<'_>> {
    let mut out: Vec<Figures> = Vec::new();
    for r in runs.iter().filter(|r| r.status == Status::Ok) {
        let (random, key) = (r.workload.random(), r.workload.key());
        for s in r.summaries() {
            let figure = if random { s.iops } else { s.bandwidth };
            let Some(f) = figure.map(|x| x.mean) else { continue };
            let op = s.op.name();
            match out.iter_mut().find(|g| g.key == key && g.workload.tasks == r.workload.tasks && g.op == op) {
                Some(g) => {
                    g.xs.push(f);
                    g.runs.extend(r.id);
                    g.cached = g.cached.take().or(s.possibly_cached);
                }
                None => out.push(Figures {
                    workload: &r.workload,
                    key: key.clone(),
                    op,
                    random,
                    xs: vec![f],
                    runs: r.id.into_iter().collect(),
                    cached: s.possibly_cached,
                }),
            }
        }
    }
    out
}

/// How each workload of `groups` is named in a table: its label; where workloads of different
/// keys share a label, the label and, in brackets, its own values of the settings they differ
/// in ("..., 1 task [direct=true]"), so that no two rows of unlike runs read alike.
struct Names(Vec<(String, usize, String)>);

impl Names {
    fn new<'a>(groups: impl IntoIterator<Item = &'a Figures<'a>>) -> Names {
        let mut distinct: Vec<&Figures> = Vec::new();
        for g in groups {
            if !distinct.iter().any(|d| d.same_workload(g)) {
                distinct.push(g);
            }
        }
        let labels: Vec<String> = distinct.iter().map(|d| d.workload.label()).collect();
        let names = distinct
            .iter()
            .zip(&labels)
            .map(|(g, label)| {
                let twins: Vec<&Workload> =
                    distinct.iter().zip(&labels).filter(|(_, l)| *l == label).map(|(d, _)| d.workload).collect();
                let mut settings: Vec<String> =
                    twins.iter().flat_map(|t| twins[0].key_differences(t)).map(|(setting, ..)| setting).collect();
                settings.sort();
                settings.dedup();
                let shown = match settings.is_empty() {
                    true => label.clone(),
                    false => {
                        let own: Vec<String> =
                            settings.iter().map(|s| format!("{s}={}", g.workload.key_setting(s))).collect();
                        format!("{label} [{}]", own.join(", "))
                    }
                };
                (g.key.clone(), g.workload.tasks, shown)
            })
            .collect();
        Names(names)
    }

    /// The name of a group's workload.
    fn of(&self, g: &Figures) -> &str {
        self.0.iter().find(|(key, tasks, _)| *key == g.key && *tasks == g.workload.tasks).map_or("", |n| n.2.as_str())
    }
}

/// The caveat a figure carries wherever it goes: which of `sides` (name and figures) may have
/// measured the page cache rather than the storage, and why (empty when none).
fn cached_caveat(sides: &[(&str, &Figures)]) -> String {
    let cached: Vec<(&str, &String)> = sides.iter().filter_map(|(name, g)| Some((*name, g.cached.as_ref()?))).collect();
    match cached.as_slice() {
        [] => String::new(),
        // One reason for all: said once.
        [(_, why), rest @ ..] if rest.iter().all(|(_, w)| w == why) => {
            let names: Vec<&str> = cached.iter().map(|(name, _)| *name).collect();
            format!("{} possibly cached ({why})", names.join(" and "))
        }
        _ => cached.iter().map(|(name, why)| format!("{name} possibly cached ({why})")).collect::<Vec<_>>().join("; "),
    }
}

/// Workloads only one side ran that share a label with one only the other side ran: the same
/// shape measured differently (with and without O_DIRECT, say). They are never pooled; a finding
/// per such pair names the settings they differ in, with each side's value.
fn unlike(a: Side, fa: &[Figures], b: Side, fb: &[Figures]) -> Vec<Finding> {
    let only = |mine: &'_ [Figures<'_>], other: &[Figures]| -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for (i, g) in mine.iter().enumerate() {
            if !other.iter().any(|o| o.same_workload(g)) && !out.iter().any(|&j| mine[j].same_workload(g)) {
                out.push(i);
            }
        }
        out
    };
    let runs_of = |mine: &[Figures], g: &Figures| -> Vec<i64> {
        let mut ids: Vec<i64> = mine.iter().filter(|o| o.same_workload(g)).flat_map(|o| o.runs.clone()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let mut out = Vec::new();
    for ga in only(fa, fb).into_iter().map(|i| &fa[i]) {
        let label = ga.workload.label();
        // An object run and a file run of one shape are set beside each other by `compare`.
        let set_beside = |gb: &&Figures| objects::across_kinds(ga.workload, gb.workload);
        for gb in only(fb, fa).into_iter().map(|i| &fb[i]).filter(|gb| gb.workload.label() == label && !set_beside(gb))
        {
            let differ = ga.workload.key_differences(gb.workload);
            let said: Vec<String> =
                differ.iter().map(|(setting, x, y)| format!("{setting} ({}: {x}, {}: {y})", a.name, b.name)).collect();
            out.push(Finding {
                text: format!(
                    "{label}: {}'s runs and {}'s differ in {}: not compared",
                    a.name,
                    b.name,
                    said.join(", ")
                ),
                value: differ.len() as f64,
                runs: runs_of(fa, ga).into_iter().chain(runs_of(fb, gb)).collect(),
                ..Default::default()
            });
        }
    }
    out
}

/// Two sides set like with like: for each workload (key and team size) and op both have,
/// their means over runs, the ratio A / B with its interval over the runs (docs/findings.md)
/// and the verdict in one line; workloads only one side has are listed apart, and where the
/// two sides ran one shape differently (same label, different keys) a finding names how.
pub fn compare(a: Side, b: Side) -> Report {
    // Training and checkpoint runs by their own figures: AU, samples/s, the slowest rank's.
    if let Some(report) = train::compare(a, b) {
        return report;
    }
    let (fa, fb) = (figures_by_workload(a.runs), figures_by_workload(b.runs));
    let names = Names::new(fa.iter().chain(&fb));
    let mut t = Table::new(
        format!("{} against {}", a.name, b.name),
        &["workload", "op", "unit", "A", "A runs", "B", "B runs", "A/B", "95% low", "95% high", "verdict", "caveat"],
    );
    let mut findings = Vec::new();
    let ids = |runs: &[RunRecord]| runs.iter().filter_map(|r| r.id).collect::<Vec<_>>();
    // Like with like, then an object run against a file run of one shape, named as what it is.
    let like = fa.iter().filter_map(|ga| Some((ga, fb.iter().find(|g| g.same(ga))?, names.of(ga).to_string())));
    let across = fa.iter().flat_map(|ga| {
        fb.iter()
            .filter(move |gb| gb.op == ga.op && objects::across_kinds(ga.workload, gb.workload))
            .map(move |gb| (ga, gb, objects::identity(ga.workload, gb.workload, &ga.op)))
    });
    let pairs: Vec<(&Figures, &Figures, String)> = like.chain(across).collect();
    for (ga, gb, workload) in &pairs {
        let (op, random, xa, xb) = (&ga.op, ga.random, &ga.xs, &gb.xs);
        let (ma, mb) = (mean_of_samples(xa), mean_of_samples(xb));
        let unit = if random { "IOPS" } else { "MiB/s" };
        let shown = |v: f64| if random { Cell::num(Some(v), 0) } else { Cell::num(Some(mib_per_s(v)), 1) };
        let interval = crate::stats::ratio_interval(xa, xb);
        let verdict = match &interval {
            Some(r) => crate::stats::sentence(a.name, b.name, r),
            None => "a single run on a side: no interval, no verdict".to_string(),
        };
        t.rows.push(vec![
            Cell::text(workload),
            Cell::text(op),
            Cell::text(unit),
            shown(ma),
            Cell::Int(xa.len() as u64),
            shown(mb),
            Cell::Int(xb.len() as u64),
            Cell::num(Some(ma / mb), 3),
            Cell::num(interval.map(|r| r.lo), 3),
            Cell::num(interval.map(|r| r.hi), 3),
            Cell::text(&verdict),
        ]);
        // A figure that may be the page cache's says so wherever it goes.
        let caveat = cached_caveat(&[(a.name, ga), (b.name, gb)]);
        t.rows.last_mut().expect("just pushed").push(Cell::text(&caveat));
    }
    findings.extend(unlike(a, &fa, b, &fb));
    for (side, figures) in [(&a, &fa), (&b, &fb)] {
        findings.extend(figures.iter().filter_map(|g| {
            let cv = coefficient_of_variation(&g.xs)?;
            Some(Finding {
                text: format!(
                    "{}: {} {} varies by {:.1}% over {} runs (coefficient of variation)",
                    side.name,
                    names.of(g),
                    g.op,
                    100.0 * cv,
                    g.xs.len()
                ),
                value: 100.0 * cv,
                runs: ids(side.runs),
                ..Default::default()
            })
        }));
    }
    let mut apart = Table::new("set apart: on one side only", &["side", "workload", "op"]);
    for (side, mine, other) in [(a.name, &fa, &fb), (b.name, &fb, &fa)] {
        let paired = |g: &Figures| {
            other.iter().any(|o| o.same(g) || (o.op == g.op && objects::across_kinds(o.workload, g.workload)))
        };
        for g in mine.iter().filter(|g| !paired(g)) {
            apart.rows.push(vec![Cell::text(side), Cell::text(names.of(g)), Cell::text(&g.op)]);
        }
    }
    t.notes.extend(mean_over_iterations(a.runs.iter().chain(b.runs)));
    let mut tables = vec![t];
    if !apart.rows.is_empty() {
        tables.push(apart);
    }
    Report { tables, findings, ..Report::default() }
}

/// Sample standard deviation over mean, for 2 samples or more.
fn coefficient_of_variation(xs: &[f64]) -> Option<f64> {
    let spread = crate::measure::spread(xs)?;
    Some(spread.stddev? / spread.mean).filter(|cv| cv.is_finite())
}

/// Which side to pick for each I/O pattern: per workload and op any two sides ran, the side
/// with the highest mean, the runner-up, their ratio's interval over runs, and whether the
/// pick stands beyond the noise.
pub fn recommend(sides: &[Side]) -> Report {
    let figures: Vec<Vec<Figures>> = sides.iter().map(|s| figures_by_workload(s.runs)).collect();
    let names = Names::new(figures.iter().flatten());
    let mut keys: Vec<&Figures> = Vec::new();
    for g in figures.iter().flatten() {
        if !keys.iter().any(|k| k.same(g)) {
            keys.push(g);
        }
    }
    let mut t = Table::new(
        "which system for which I/O pattern",
        &["workload", "op", "best", "unit", "mean", "next", "mean", "best/next", "stands", "caveat"],
    );
    let mut findings = Vec::new();
    for key in keys {
        let mut means: Vec<(&str, f64, &Vec<f64>, &Figures)> = sides
            .iter()
            .zip(&figures)
            .filter_map(|(side, f)| {
                f.iter().find(|g| g.same(key)).map(|g| (side.name, mean_of_samples(&g.xs), &g.xs, g))
            })
            .collect();
        if means.len() < 2 {
            continue;
        }
        let workload = names.of(key);
        // Among several systems, the slow one on this workload (the seeds' slow target).
        let members: Vec<(String, f64)> = means.iter().map(|m| (m.0.to_string(), m.1)).collect();
        let (slow, median) = outliers::slow(&members);
        findings.extend(slow.into_iter().filter_map(|(name, v)| {
            // Beyond its own runs' noise: even its best run stays below the bar; from one
            // run it is said as resting on that run.
            let xs = means.iter().find(|m| m.0 == name)?.2;
            let best_run = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let single = means.iter().filter(|m| m.2.len() < 2).count();
            let support = match (xs.len(), single) {
                (1, 1) => "; on a single run: run it again to confirm".to_string(),
                (_, 1..) => {
                    format!("; {single} of the {} systems rest on a single run: run them again to confirm", means.len())
                }
                (n, _) if best_run < outliers::MATERIAL * median => format!(", each of its {n} runs below 80% of it"),
                _ => return None,
            };
            Some(Finding {
                text: format!(
                    "{name} is the slow one on {workload} {}: {:.0}% of the median of {} systems{support}",
                    key.op,
                    100.0 * v / median,
                    members.len()
                ),
                value: 100.0 * v / median,
                runs: sides
                    .iter()
                    .filter(|s| s.name == name)
                    .flat_map(|s| s.runs.iter().filter_map(|r| r.id))
                    .collect(),
                ..Default::default()
            })
        }));
        means.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (best, next) = (means[0], means[1]);
        let random = key.random;
        let shown = |v: f64| if random { Cell::num(Some(v), 0) } else { Cell::num(Some(mib_per_s(v)), 1) };
        let stands = match crate::stats::ratio_interval(best.2, next.2) {
            Some(r) if crate::stats::verdict(&r) == crate::stats::Verdict::Higher => {
                format!("yes ({} {:.2} to {:.2})", r.method.name(), r.lo, r.hi)
            }
            Some(_) => "no: within the noise".into(),
            None => "unknown: a single run on a side".into(),
        };
        t.rows.push(vec![
            Cell::text(workload),
            Cell::text(&key.op),
            Cell::text(best.0),
            Cell::text(if random { "IOPS" } else { "MiB/s" }),
            shown(best.1),
            Cell::text(next.0),
            shown(next.1),
            Cell::num(Some(best.1 / next.1), 2),
            Cell::text(stands),
            // A pick that may rest on the page cache says so beside its verdict.
            Cell::text(cached_caveat(&[(best.0, best.3), (next.0, next.3)])),
        ]);
    }
    t.notes.extend(mean_over_iterations(sides.iter().flat_map(|s| s.runs)));
    Report { tables: vec![t], findings, ..Report::default() }
}

fn mean_of_samples(xs: &[f64]) -> f64 {
    crate::measure::spread(xs).map_or(0.0, |s| s.mean)
}

/// Network ceilings between nodes, a row per pattern.
pub fn net(results: &[NetResult]) -> Report {
    if results.is_empty() {
        return Report::default();
    }
    let mut t = Table::new(
        "network ceiling",
        &["mode", "pattern", "streams", "senders", "receivers", "message", "MiB/s", "min MiB/s", "max MiB/s", "GB/s"],
    );
    let hosts = |v: &[String]| {
        let mut h = v.to_vec();
        h.sort();
        h.dedup();
        h.join(",")
    };
    for n in results {
        let (min, max) = n.spread().unzip();
        let pattern = if n.both_ways && n.pattern != crate::net::Pattern::Bisection {
            format!("{} both ways", n.pattern.name())
        } else {
            n.pattern.name()
        };
        let mode = crate::spec::variant_name(&n.mode);
        let mode = match n.provenance.as_deref().and_then(imported_from) {
            Some(tool) => format!("{mode} (imported:{tool})"),
            None => mode,
        };
        t.rows.push(vec![
            Cell::text(mode),
            Cell::text(pattern),
            Cell::num(Some(n.streams as f64), 0),
            Cell::text(hosts(&n.senders)),
            Cell::text(hosts(&n.receivers)),
            Cell::text(crate::units::format_size(n.message)),
            mib(n.bandwidth),
            mib(min),
            mib(max),
            Cell::num(n.bandwidth.map(gb_per_s), 2),
        ]);
    }
    let mut report = Report { tables: vec![t], ..Report::default() };
    if results.iter().any(|n| n.one_node) {
        report.footer.push(
            "all endpoints are processes of one node: these figures are the node's own loopback and memory, not a network"
                .into(),
        );
    }
    report
}

impl Report {
    /// This report followed by another's tables and lines.
    pub fn and(mut self, other: Report) -> Report {
        self.heading.extend(other.heading);
        self.tables.extend(other.tables);
        self.findings.extend(other.findings);
        self.footer.extend(other.footer);
        self.charts.extend(other.charts);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures;

    fn ceiling(mode: &str, pattern: &str, senders: &[&str], streams: usize, mib: f64) -> NetResult {
        serde_json::from_value(serde_json::json!({
            "mode": mode, "pattern": pattern, "streams": streams, "senders": senders,
            "receivers": vec!["srv"; senders.len()], "message": 1, "bytes": 1, "window_ns": 1,
            "bandwidth": mib * 1048576.0,
        }))
        .unwrap()
    }

    /// A run of the fixture's workload whose write and read ran at `write` and `read` MiB/s.
    fn run_at(id: i64, write: f64, read: f64) -> RunRecord {
        let mut r = fixtures::run(None);
        r.id = Some(id);
        for p in &mut r.phases {
            p.figures.bandwidth = Some(if p.op == Op::Write { write } else { read } * 1048576.0);
        }
        r
    }

    /// Systems ost0, ost1, ... each with a run per scale of the fixture's rates (run ids
    /// 10 x system + run + 1).
    fn systems(scales: &[&[f64]]) -> Vec<(String, Vec<RunRecord>)> {
        let run = |k: usize, i: usize, scale: f64| {
            let mut r = fixtures::run(None);
            r.id = Some(10 * k as i64 + i as i64 + 1);
            for p in &mut r.phases {
                p.figures.bandwidth = p.figures.bandwidth.map(|b| b * scale);
            }
            r
        };
        let runs = |k: usize, of: &[f64]| of.iter().enumerate().map(|(i, &scale)| run(k, i, scale)).collect();
        scales.iter().enumerate().map(|(k, of)| (format!("ost{k}"), runs(k, of))).collect()
    }

    /// The findings of `recommend` over those systems, the first `count` of them.
    fn recommended(systems: &[(String, Vec<RunRecord>)], count: usize) -> Vec<Finding> {
        let sides: Vec<Side> = systems.iter().take(count).map(|(name, runs)| Side { name, runs }).collect();
        recommend(&sides).findings
    }

    #[test]
    fn among_five_systems_the_slow_one_is_named() {
        let five = systems(&[&[1.0], &[1.05], &[0.97], &[1.02], &[0.4]]);
        let found = recommended(&five, 5);
        assert_eq!(found.len(), 2, "write and read: {found:?}");
        assert!(found[0].text.starts_with("ost4 is the slow one on file-per-task"), "{}", found[0].text);
        let said = "40% of the median of 5 systems; 5 of the 5 systems rest on a single run: run them again to confirm";
        assert!(found[0].text.ends_with(said), "{}", found[0].text);
        assert_eq!(found[0].runs, [41]);
        assert!(recommended(&five, 4).is_empty(), "none stands apart among the four others");
    }

    #[test]
    fn a_slow_system_of_several_runs_is_named_only_when_each_of_its_runs_is_slow() {
        // Five systems of two runs each; the fifth's mean is 54% of the median (1.01).
        let with = |fifth: &[f64]| systems(&[&[1.0, 1.02], &[1.05, 1.03], &[0.97, 0.99], &[1.02, 1.0], fifth]);
        let slow = recommended(&with(&[0.5, 0.6]), 5);
        assert!(
            slow[0].text.ends_with("54% of the median of 5 systems, each of its 2 runs below 80% of it"),
            "{slow:?}"
        );
        // The same mean from runs of which one reaches the others: not beyond its noise.
        assert!(recommended(&with(&[0.2, 0.9]), 5).is_empty());
        // A median of single runs is said as such.
        let mut one_short = with(&[0.5, 0.6]);
        one_short[0].1.truncate(1);
        let said = &recommended(&one_short, 5)[0].text;
        assert!(said.ends_with("; 1 of the 5 systems rest on a single run: run them again to confirm"), "{said}");
    }

    #[test]
    fn the_surveys_bars_carry_the_interval_of_each_mean() {
        let mut runs = Vec::new();
        for (role, scale) in [(Role::SeqFilePerTask, 1.0), (Role::SeqShared, 0.5)] {
            for k in 0..3 {
                let mut r = fixtures::run(None);
                r.id = Some(runs.len() as i64 + 1);
                r.name = Some(role.name().into());
                for p in &mut r.phases {
                    p.figures.bandwidth = Some(scale * (100.0 + k as f64) * 1048576.0);
                }
                runs.push(r);
            }
        }
        let chart = &own_and_shared(&runs)[0];
        assert_eq!(chart.errors.len(), 2, "a set of bars for each series");
        // In the chart's unit (MiB/s), as the bars.
        let own = crate::stats::mean_interval(&[100.0, 101.0, 102.0]).unwrap();
        let (x, lo, hi) = chart.errors[0][0];
        assert!(x == 0.0 && (lo - own.lo).abs() < 1e-9 && (hi - own.hi).abs() < 1e-9, "{:?} {own:?}", chart.errors);
        // One run a workload: no interval to draw.
        assert!(own_and_shared(&[runs[0].clone(), runs[3].clone()])[0].errors.iter().all(Vec::is_empty));
    }

    #[test]
    fn repeated_sweeps_of_a_system_pool_their_runs_per_client_count() {
        let mut runs = Vec::new();
        for (label, scale) in [("a", 1.0), ("b", 2.0)] {
            for sweep in 0..3 {
                for tasks in [1usize, 2, 4] {
                    let mut r = crate::record::fixtures::run(None);
                    r.id = Some(runs.len() as i64 + 1);
                    r.sweep_id = Some(sweep + if label == "b" { 10 } else { 0 });
                    r.label = Some(label.into());
                    r.workload.tasks = tasks;
                    // Linear to 2 clients, 2% lower at 4; each sweep 1% from the others.
                    let flat = if tasks > 2 { 0.98 } else { 1.0 };
                    let rate = 100.0 * tasks.min(2) as f64 * flat * scale * (1.0 + 0.01 * sweep as f64);
                    for p in &mut r.phases {
                        p.figures.bandwidth = Some(rate * 1048576.0);
                        p.figures.window_ns = 2_000_000_000;
                    }
                    runs.push(r);
                }
            }
        }
        let found = sweeps_by_system(&runs).findings;
        let a: Vec<&Finding> = found.iter().filter(|f| f.text.starts_with("a write")).collect();
        assert!(a[0].text.starts_with("a write peaks at 202.0 MiB/s with 2 clients, 95% t-interval"), "{}", a[0].text);
        // The fixture's writes are small and unsynced: the caveat follows the figure.
        assert!(
            a[0].text.ends_with(
                "over its 3 runs (mean of at least 3 runs per point); possibly the page cache's, not the storage's"
            ),
            "{}",
            a[0].text
        );
        assert_eq!(a[0].runs.len(), 3, "the peak's three runs");
        assert_eq!(a[1].runs.len(), 9, "the three sweeps of a");
        assert!(a.iter().any(|f| f.text.starts_with("a write bends at 2 clients")), "{a:?}");
    }

    #[test]
    fn a_comparison_sets_like_beside_like_with_its_interval_and_verdict() {
        let a: Vec<RunRecord> = [(1, 200.0, 100.0), (2, 204.0, 130.0), (3, 198.0, 90.0)]
            .iter()
            .map(|&(id, w, r)| run_at(id, w, r))
            .collect();
        let b: Vec<RunRecord> = [(4, 100.0, 110.0), (5, 101.0, 95.0), (6, 99.0, 120.0)]
            .iter()
            .map(|&(id, w, r)| run_at(id, w, r))
            .collect();
        let mut other = run_at(7, 1.0, 1.0);
        other.workload.data_mut().transfer *= 2;
        let b_all: Vec<RunRecord> = b.iter().cloned().chain([other]).collect();
        let report = compare(Side { name: "fast", runs: &a }, Side { name: "slow", runs: &b_all });
        let t = &report.tables[0];
        assert_eq!(t.rows.len(), 2, "write and read of the one shared workload");
        let verdicts: Vec<String> = t.rows.iter().map(|r| format!("{:?}", r[10])).collect();
        assert!(verdicts[0].contains("fast is 2.01 ± "), "{verdicts:?}");
        assert!(verdicts[1].contains("no difference beyond the noise"), "{verdicts:?}");
        assert_eq!(report.tables[1].rows.len(), 2, "the other workload's write and read, set apart");
        // The table says each verdict; no finding says it again.
        let said: Vec<&str> = report.findings.iter().map(|f| f.text.as_str()).collect();
        assert!(said.iter().all(|t| !t.contains("fast is ")), "{said:?}");
        let cv: Vec<&str> = report.findings.iter().map(|f| f.text.as_str()).filter(|t| t.contains("varies")).collect();
        // fast's writes 200, 204, 198: sd 3.06 over mean 200.67.
        assert!(cv[0].starts_with("fast: ") && cv[0].contains("write varies by 1.5% over 3 runs"), "{cv:?}");
        assert_eq!(cv.len(), 4, "write and read on each side; the single-run workload says nothing");
        let single = compare(Side { name: "a", runs: &a[..1] }, Side { name: "b", runs: &b });
        assert!(format!("{:?}", single.tables[0].rows[0][10]).contains("single run"));
        assert!(single.findings.iter().all(|f| f.text.contains("varies")), "no comparison claimed from a single run");
    }

    #[test]
    fn runs_that_differ_only_in_direct_are_never_pooled_and_the_difference_is_named() {
        let side = |first: i64, direct: bool| -> Vec<RunRecord> {
            [(0, 200.0, 100.0), (1, 204.0, 130.0), (2, 198.0, 90.0)]
                .iter()
                .map(|&(k, w, r)| {
                    let mut run = run_at(first + k, w, r);
                    run.workload.data_mut().direct = direct;
                    run
                })
                .collect()
        };
        let (buffered, direct) = (side(1, false), side(4, true));
        let label = buffered[0].workload.label();
        assert_eq!(label, direct[0].workload.label(), "one label, two keys");
        let report = compare(Side { name: "a", runs: &buffered }, Side { name: "b", runs: &direct });
        assert!(report.tables[0].rows.is_empty(), "no row pools them: {:?}", report.tables[0].rows);
        let texts: Vec<&str> = report.findings.iter().map(|f| f.text.as_str()).collect();
        assert!(texts.iter().all(|t| !t.contains("faster") && !t.contains("no difference")), "{texts:?}");
        let unlike: Vec<&Finding> = report.findings.iter().filter(|f| f.text.contains("not compared")).collect();
        assert_eq!(unlike.len(), 1, "{texts:?}");
        assert_eq!(
            unlike[0].text,
            format!("{label}: a's runs and b's differ in direct (a: false, b: true): not compared")
        );
        assert_eq!((unlike[0].value, unlike[0].runs.as_slice()), (1.0, &[1, 2, 3, 4, 5, 6][..]));
        // Set apart, each under a name that says which it is.
        let apart: Vec<String> = report.tables[1].rows.iter().map(|r| r[1].to_string()).collect();
        assert_eq!(apart.len(), 4, "{apart:?}");
        assert!(apart[..2].iter().all(|n| *n == format!("{label} [direct=false]")), "{apart:?}");
        assert!(apart[2..].iter().all(|n| *n == format!("{label} [direct=true]")), "{apart:?}");
        assert!(recommend(&[Side { name: "a", runs: &buffered }, Side { name: "b", runs: &direct }]).tables[0]
            .rows
            .is_empty());
        // Both sides ran both: like beside like, each row named, nothing said about unlike runs.
        let a: Vec<RunRecord> = buffered.iter().chain(&side(11, true)).cloned().collect();
        let b: Vec<RunRecord> = direct.iter().chain(&side(21, false)).cloned().collect();
        let both = compare(Side { name: "a", runs: &a }, Side { name: "b", runs: &b });
        let rows: Vec<String> = both.tables[0].rows.iter().map(|r| format!("{} {}", r[0], r[1])).collect();
        assert_eq!(
            rows,
            [
                format!("{label} [direct=false] write"),
                format!("{label} [direct=false] read"),
                format!("{label} [direct=true] write"),
                format!("{label} [direct=true] read")
            ]
        );
        assert!(both.findings.iter().all(|f| !f.text.contains("not compared")));
        assert_eq!(both.tables.len(), 1, "nothing set apart");
    }

    #[test]
    fn a_survey_says_what_its_spread_means_which_figures_are_unstable_and_which_phases_were_too_brief() {
        // Two workloads, 3 runs each: "steady" within 2% and 2 s long; "shaky" varying by half
        // and its shortest phase 0.25 s long, of 1 GiB per phase.
        let runs: Vec<RunRecord> = [("steady", [1.0, 1.02, 0.98], 2.0), ("shaky", [1.0, 2.0, 0.5], 0.25)]
            .into_iter()
            .flat_map(|(name, scales, secs)| {
                scales.into_iter().enumerate().map(move |(k, scale)| {
                    let mut r = fixtures::run(None);
                    r.name = Some(name.into());
                    let data = crate::spec::Data { block: 512 << 20, transfer: 1 << 20, ..Default::default() };
                    r.workload = Workload { tasks: 2, ..data.into() };
                    for p in &mut r.phases {
                        p.figures.bandwidth = Some(scale * 1e9);
                        p.figures.window_ns = ((secs + k as f64) * 1e9) as u64;
                    }
                    r
                })
            })
            .collect();
        let t = &survey(1, &runs).tables[0];
        let cv = |row: usize, col: usize| t.rows[row][col].to_string();
        let columns: Vec<&str> = t.columns.iter().map(String::as_str).collect();
        assert_eq!(columns[2..5], ["write", "± write", "cv write %"]);
        let shaky = coefficient_of_variation(&[1e9, 2e9, 0.5e9].map(mib_per_s)).unwrap();
        assert_eq!(cv(1, 4), format!("{:.0}", 100.0 * shaky), "the cv of the runs' figures, in percent");
        assert_eq!(cv(0, 4), "2");
        let notes = t.notes.join("\n");
        assert!(notes.contains("± is half the 95% interval of the mean over runs"), "{notes}");
        let unstable = t.notes.iter().find(|n| n.starts_with("unstable")).expect("an unstability note");
        assert!(unstable.contains("shaky write (") && unstable.contains("shaky read ("), "{unstable}");
        assert!(!unstable.contains("steady"), "2% is within the {UNSTABLE_CV} threshold: {unstable}");
        assert!(unstable.contains("--repetitions") && unstable.contains("--size"), "{unstable}");
        // The shortest phase of shaky, 0.25 s of 1 GiB: 4 times the size lasts the second.
        let brief: Vec<&String> = t.notes.iter().filter(|n| n.contains("under the 1 s")).collect();
        assert_eq!(brief.len(), 1, "{brief:?}");
        assert!(
            brief[0].starts_with("shaky: a phase ran 0.250 s") && brief[0].ends_with("--size 4 GiB or more"),
            "{}",
            brief[0]
        );
        // A phase its stonewall stopped names the stonewall, not the size.
        let mut walled = runs.clone();
        for r in &mut walled {
            r.workload.stonewall_secs = Some(0.25);
        }
        let notes = survey(1, &walled).tables[0].notes.join("\n");
        assert!(
            notes.contains("shaky: a phase ran 0.250 s, under the 1 s a figure needs: give --random-secs 1 or more"),
            "{notes}"
        );
    }

    #[test]
    fn the_possibly_cached_caveat_follows_its_figure_into_compare_and_the_recommendation() {
        let side = |ids: [i64; 3], read: f64, cached: bool| -> Vec<RunRecord> {
            ids.iter()
                .enumerate()
                .map(|(k, &id)| {
                    let mut r = run_at(id, 100.0 + k as f64, read + k as f64);
                    for p in &mut r.phases {
                        p.possibly_cached = (cached || p.op == Op::Write).then(|| "target is tmpfs".to_string());
                    }
                    r
                })
                .collect()
        };
        let (shm, disk) = (side([1, 2, 3], 900.0, true), side([4, 5, 6], 100.0, false));
        let (a, b) = (Side { name: "shm", runs: &shm }, Side { name: "disk", runs: &disk });
        let report = compare(a, b);
        let t = &report.tables[0];
        let caveat = |op: &str| {
            let row = t.rows.iter().find(|r| r[1].to_string() == op).unwrap();
            (row[10].to_string(), row[11].to_string())
        };
        let (verdict, read) = caveat("read");
        assert!(verdict.starts_with("shm is"), "{verdict}");
        assert_eq!(read, "shm possibly cached (target is tmpfs)", "only the cached side is named");
        assert_eq!(caveat("write").1, "shm and disk possibly cached (target is tmpfs)", "one reason, said once");
        let pick = recommend(&[a, b]);
        let row = pick.tables[0].rows.iter().find(|r| r[1].to_string() == "read").unwrap();
        assert_eq!(
            (row[2].to_string(), row[9].to_string()),
            ("shm".into(), "shm possibly cached (target is tmpfs)".into())
        );
    }

    #[test]
    fn tables_of_one_figure_per_run_say_it_is_the_mean_over_iterations() {
        let mut runs = vec![run_at(1, 200.0, 100.0), run_at(2, 210.0, 110.0)];
        let says = |report: &Report| report.tables[0].notes.iter().any(|n| n.contains("mean over its iterations"));
        assert!(!says(&sweep(Some(1), &runs)), "one iteration: nothing to say");
        runs[1].workload.iterations = 3;
        assert!(says(&sweep(Some(1), &runs)));
        let side = |runs| Side { name: "a", runs };
        assert!(says(&compare(side(&runs[..1]), side(&runs[1..]))));
        assert!(says(&recommend(&[side(&runs[..1]), side(&runs[1..])])));
    }

    #[test]
    fn the_recommendation_picks_the_best_side_per_pattern_and_says_if_it_stands() {
        let make = |rows: &[(i64, f64, f64)]| rows.iter().map(|&(id, w, r)| run_at(id, w, r)).collect::<Vec<_>>();
        let a = make(&[(1, 200.0, 100.0), (2, 204.0, 130.0), (3, 198.0, 90.0)]);
        let b = make(&[(4, 100.0, 110.0), (5, 101.0, 95.0), (6, 99.0, 120.0)]);
        let c = make(&[(7, 50.0, 60.0)]);
        let report =
            recommend(&[Side { name: "a", runs: &a }, Side { name: "b", runs: &b }, Side { name: "c", runs: &c }]);
        let rows: Vec<Vec<String>> =
            report.tables[0].rows.iter().map(|r| r.iter().map(|c| format!("{c:?}")).collect()).collect();
        assert_eq!(rows.len(), 2);
        assert!(
            rows[0][2].contains("\"a\"") && rows[0][5].contains("\"b\"") && rows[0][8].contains("yes"),
            "{:?}",
            rows[0]
        );
        assert!(
            rows[1][2].contains("\"b\"") && rows[1][8].contains("within the noise"),
            "read: b by a hair: {:?}",
            rows[1]
        );
    }

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

    #[test]
    fn storage_figures_are_shares_of_the_highest_ceiling_of_their_nodes_and_pattern() {
        let mut r = fixtures::run(None);
        r.id = Some(4);
        r.env.fs_type = "lustre".into();
        r.hosts = vec!["n1".into(), "n2".into()];
        for p in &mut r.phases {
            let mib = if p.op == Op::Write { 500.0 } else { 1500.0 };
            p.figures.bandwidth = Some(mib * 1048576.0);
        }
        let ceilings = [
            ceiling("tcp", "N-to-1", &["n1", "n2"], 1, 1000.0),
            ceiling("tcp", "N-to-1", &["n1", "n2"], 4, 2000.0),
            ceiling("mpi", "1-to-1", &["n2"], 1, 9000.0),
            ceiling("tcp", "N-to-1", &["n1", "x9"], 4, 8000.0),
        ];
        let beside = against_ceiling(&r, &ceilings);
        assert_eq!(beside.tables.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(), ["network ceiling"]);
        let found = beside.findings;
        let texts: Vec<&str> = found.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "write reaches 25% of the tcp N-to-1 ceiling of these nodes (4 streams, n1,n2 -> srv: 2000.0 MiB/s)",
                "read reaches 75% of the tcp N-to-1 ceiling of these nodes (4 streams, n1,n2 -> srv: 2000.0 MiB/s)",
            ],
            "the 1-to-1 figure is another pattern, the 8000 one comes from a node outside the run"
        );
        assert_eq!((found[0].value, found[0].runs.as_slice()), (25.0, &[4][..]));
        for local in ["ext4", "tmpfs", "xfs"] {
            let r = RunRecord { env: crate::env::Environment { fs_type: local.into(), ..r.env.clone() }, ..r.clone() };
            let beside = against_ceiling(&r, &ceilings);
            assert!(beside.findings.is_empty(), "{local} is reached over no network");
            assert!(beside.tables.is_empty() && beside.footer.is_empty(), "no ceiling's table beside {local}");
        }
        r.hosts.truncate(1);
        assert!(against_ceiling(&r, &ceilings).findings.is_empty(), "one node: no 1-to-1 from n1 was measured");
    }
}
