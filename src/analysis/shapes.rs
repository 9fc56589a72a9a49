//! A campaign study's figure follows what the study varies, as its paper draws it: over client
//! (or thread) counts a line per target ([`super::study::over_clients_as`]); over a setting the
//! targets stand for (stripe counts, cache states) at one client count, grouped bars in the
//! targets' natural order ([`by_setting`]); over many like targets at one setting (the LUNs of
//! one array), bars sorted from the fastest with the median and its band, the spread, the
//! extremes and the target that stands apart ([`across_targets`]). Which one is decided from
//! the study's runs and targets ([`varies`]), never from a flag.

use super::study::{Study, Summary};
use super::{guard, mean_of, outliers, Cell, Chart, Finding, Report, Table};
use crate::record::{RunRecord, Status};
use crate::spec::Op;
use crate::stats::Interval;
use crate::units::mib_per_s;
use std::cmp::Ordering;

/// What a study varies, which decides its figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Varies {
    /// Client or thread counts: a line per target against them.
    Clients,
    /// A setting the targets stand for, at one client count: grouped bars in natural order.
    Setting,
    /// Many like targets at one setting: sorted bars with the median and its band.
    Targets,
}

/// What the study of `runs` varies: more than one client count is a curve over clients; one
/// client count over at least [`outliers::AT_LEAST`] targets that nothing but their names
/// tells apart (`alike`: the campaign file describes them alike) is a survey of like targets;
/// anything else at one client count is a setting.
pub fn varies(runs: &[&RunRecord], alike: bool) -> Varies {
    let mut clients: Vec<usize> = runs.iter().map(|r| r.workload.tasks).collect();
    clients.sort_unstable();
    clients.dedup();
    let targets = labels(runs).len();
    match clients.len() > 1 {
        true => Varies::Clients,
        false if alike && targets >= outliers::AT_LEAST => Varies::Targets,
        false => Varies::Setting,
    }
}

/// Names in the order a reader counts them: the digits in a name compared as numbers, so
/// ost2, ost4, ost6, ost8, ost24 (not ost2, ost24, ost4).
pub fn natural(a: &str, b: &str) -> Ordering {
    fn pieces(s: &str) -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let digit = c.is_ascii_digit();
            match out.last_mut() {
                Some((d, piece)) if *d == digit => piece.push(c),
                _ => out.push((digit, c.to_string())),
            }
        }
        out
    }
    let (pa, pb) = (pieces(a), pieces(b));
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x.0, y.0) {
            (true, true) => {
                let (tx, ty) = (x.1.trim_start_matches('0'), y.1.trim_start_matches('0'));
                tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty))
            }
            _ => x.1.cmp(&y.1),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

/// The labels of `runs` in natural order.
pub fn labels(runs: &[&RunRecord]) -> Vec<String> {
    let mut out: Vec<String> = runs.iter().map(|r| label(r).to_string()).collect();
    out.sort_by(|a, b| natural(a, b));
    out.dedup();
    out
}

fn label(r: &RunRecord) -> &str {
    r.label.as_deref().unwrap_or("unlabelled")
}

/// Every op the runs measured, in the order their phases ran: a rewrite phase is shown as the
/// write and read are.
pub fn ops(runs: &[&RunRecord]) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::new();
    for p in runs.iter().filter(|r| r.status == Status::Ok).flat_map(|r| &r.phases) {
        if !out.contains(&p.op) {
            out.push(p.op);
        }
    }
    out
}

/// The unit a study's figures are in: metadata in operations per second (as mdtest says it),
/// random I/O in IOPS, sequential in MiB/s.
pub fn unit(runs: &[&RunRecord]) -> &'static str {
    match runs.first() {
        Some(r) if r.workload.meta().is_some() => "ops/s",
        Some(r) if r.workload.random() => "IOPS",
        _ => "MiB/s",
    }
}

/// One run's figure of `op` in the study's unit.
pub fn value(r: &RunRecord, op: Op) -> Option<f64> {
    let counted = r.workload.meta().is_some() || r.workload.random();
    mean_of(r, op, counted).map(|v| if counted { v } else { mib_per_s(v) })
}

/// A point made of runs' figures as the campaign asked: their mean with its 95% interval
/// (and whether two runs are too far apart to bound it), their best or their median.
pub fn summarized(xs: &[f64], summary: Summary) -> (f64, Option<Interval>, bool) {
    match summary {
        Summary::Mean => {
            (xs.iter().sum::<f64>() / xs.len() as f64, crate::stats::mean_interval(xs), crate::stats::unbounded(xs))
        }
        Summary::Best => (xs.iter().copied().fold(f64::MIN, f64::max), None, false),
        Summary::Median => (crate::measure::median(xs).unwrap_or_default(), None, false),
    }
}

/// A target's figure of one op: its point, and the runs behind it.
struct Figure {
    value: f64,
    interval: Option<Interval>,
    unbounded: bool,
    runs: Vec<i64>,
    brief: bool,
}

fn figure(runs: &[&RunRecord], target: &str, op: Op, summary: Summary) -> Option<Figure> {
    let at: Vec<&RunRecord> = runs.iter().copied().filter(|r| r.status == Status::Ok && label(r) == target).collect();
    let xs: Vec<f64> = at.iter().filter_map(|r| value(r, op)).collect();
    if xs.is_empty() {
        return None;
    }
    let (value, interval, unbounded) = summarized(&xs, summary);
    Some(Figure {
        value,
        interval,
        unbounded,
        runs: at.iter().filter_map(|r| r.id).collect(),
        brief: at.iter().any(|r| guard::too_brief(r, op)),
    })
}

fn interval_cell(f: &Figure, decimals: usize) -> Cell {
    match (&f.interval, f.unbounded) {
        (Some(i), _) => super::interval_cell(i, decimals),
        (None, true) => Cell::text(crate::stats::UNBOUNDED),
        _ => Cell::Empty,
    }
}

fn show(v: f64, unit: &str) -> String {
    match unit {
        "MiB/s" => format!("{v:.1} {unit}"),
        _ => format!("{v:.0} {unit}"),
    }
}

/// The runs of `target` whose `op` phase was too brief, as the guard lists them.
fn too_short(runs: &[&RunRecord], targets: &[String], op: Op) -> Vec<Finding> {
    targets
        .iter()
        .filter_map(|t| {
            let mine: Vec<&RunRecord> = runs.iter().copied().filter(|r| label(r) == t).collect();
            Some(guard::too_short(&format!("{t} {}", op.name()), &mine, op)?.finding(&mine, op))
        })
        .collect()
}

/// A study over a setting the targets stand for, at one client count: a bar per target and op,
/// grouped by target in natural order, each with its interval; the table of the same numbers;
/// per op, the highest and the lowest target and their ratio (not from phases too brief).
pub fn by_setting(runs: &[&RunRecord], what: &str, summary: Summary) -> Report {
    let targets = labels(runs);
    let ops = ops(runs);
    let unit = unit(runs);
    let decimals = if unit == "MiB/s" { 1 } else { 0 };
    let clients = runs.first().map_or(0, |r| r.workload.tasks);
    let mut report = Report::default();
    let mut chart = Chart {
        title: format!("{what}: {} by target at {clients} client{}", unit, if clients == 1 { "" } else { "s" }),
        x: "target".into(),
        y: unit.into(),
        bars: true,
        ticks: targets.iter().enumerate().map(|(k, t)| ((k + 1) as f64, t.clone())).collect(),
        runs: runs.iter().filter_map(|r| r.id).collect(),
        ..Chart::default()
    };
    let mut columns = vec!["target".to_string(), "clients".into(), "runs".into()];
    for op in &ops {
        columns.push(op.name());
        columns.push(format!("± {}", op.name()));
    }
    columns.extend(["unit".to_string(), "run ids".into()]);
    let mut table = Table::new(format!("{what}: {unit} by target at {clients} clients"), &[]);
    table.columns = columns;
    for t in &targets {
        let figures: Vec<Option<Figure>> = ops.iter().map(|&op| figure(runs, t, op, summary)).collect();
        let Some(ids) = figures.iter().flatten().next().map(|f| f.runs.clone()) else { continue };
        let mut row = vec![Cell::text(t), Cell::Int(clients as u64), Cell::Int(ids.len() as u64)];
        for f in &figures {
            row.push(Cell::num(f.as_ref().map(|f| f.value), decimals));
            row.push(f.as_ref().map_or(Cell::Empty, |f| interval_cell(f, decimals)));
        }
        row.push(Cell::text(unit));
        row.push(Cell::text(ids.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")));
        table.rows.push(row);
    }
    for &op in &ops {
        let mut points = Vec::new();
        let mut bars = Vec::new();
        let mut measured: Vec<(String, f64, Vec<i64>)> = Vec::new();
        for (k, t) in targets.iter().enumerate() {
            let Some(f) = figure(runs, t, op, summary) else { continue };
            let x = (k + 1) as f64;
            points.push((x, f.value));
            if let Some(i) = &f.interval {
                bars.push((x, i.lo, i.hi));
            }
            if !f.brief {
                measured.push((t.clone(), f.value, f.runs));
            }
        }
        if points.is_empty() {
            continue;
        }
        chart.series.push((op.name(), points));
        chart.errors.push(bars);
        report.findings.extend(extremes(op, &measured, unit));
        report.findings.extend(too_short(runs, &targets, op));
    }
    if !chart.series.is_empty() {
        report.charts.push(chart);
    }
    report.tables.push(table);
    report
}

/// The highest of the targets `measured` (name, figure, runs) on `op` against the lowest,
/// when there are two or more.
fn extremes(op: Op, measured: &[(String, f64, Vec<i64>)], unit: &str) -> Option<Finding> {
    let highest = measured.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let lowest = measured.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let (Some(hi), Some(lo), true) = (highest, lowest, measured.len() > 1) else { return None };
    (lo.1 > 0.0).then(|| Finding {
        text: format!(
            "{} is highest on {} ({}), {:.2}x the lowest, {} ({})",
            op.name(),
            hi.0,
            show(hi.1, unit),
            hi.1 / lo.1,
            lo.0,
            show(lo.1, unit)
        ),
        value: hi.1 / lo.1,
        runs: hi.2.iter().chain(&lo.2).copied().collect(),
        ..Default::default()
    })
}

/// A study over many like targets at one setting: per op, a bar per target sorted from the
/// highest, the median and the band a target must leave to stand apart drawn across
/// ([`outliers::band`]); the table of the same numbers with each one's share of the median;
/// the spread (highest over lowest), the extremes, and the targets below the band, or that
/// none is.
pub fn across_targets(runs: &[&RunRecord], what: &str, summary: Summary) -> Report {
    let targets = labels(runs);
    let unit = unit(runs);
    let decimals = if unit == "MiB/s" { 1 } else { 0 };
    let clients = runs.first().map_or(0, |r| r.workload.tasks);
    let mut report = Report::default();
    for op in ops(runs) {
        let mut members: Vec<(String, Figure)> =
            targets.iter().filter_map(|t| Some((t.clone(), figure(runs, t, op, summary)?))).collect();
        if members.is_empty() {
            continue;
        }
        members.sort_by(|a, b| b.1.value.total_cmp(&a.1.value).then_with(|| natural(&a.0, &b.0)));
        let values: Vec<f64> = members.iter().map(|m| m.1.value).collect();
        let band = outliers::band(&values, 1.0 - outliers::MATERIAL);
        let mut chart = Chart {
            title: format!("{what}: {} {unit} of each target at {clients} clients, highest first", op.name()),
            x: "target".into(),
            y: unit.into(),
            bars: true,
            ticks: members.iter().enumerate().map(|(k, m)| ((k + 1) as f64, m.0.clone())).collect(),
            runs: members.iter().flat_map(|m| m.1.runs.iter().copied()).collect(),
            ..Chart::default()
        };
        chart.series.push((op.name(), members.iter().enumerate().map(|(k, m)| ((k + 1) as f64, m.1.value)).collect()));
        chart.errors.push(
            members
                .iter()
                .enumerate()
                .filter_map(|(k, m)| Some(((k + 1) as f64, m.1.interval.as_ref()?.lo, m.1.interval.as_ref()?.hi)))
                .collect(),
        );
        if let Some((median, half)) = band {
            chart.references.push((format!("median {}", show(median, unit)), median));
            chart.references.push((format!("band's lower edge {}", show(median - half, unit)), median - half));
        }
        report.charts.push(chart);
        let mut table = Table::new(
            format!("{what}: {} {unit} of each target, highest first", op.name()),
            &["target", "clients", "runs", "figure", "±", "share of median %", "unit", "run ids"],
        );
        for (t, f) in &members {
            table.rows.push(vec![
                Cell::text(t),
                Cell::Int(clients as u64),
                Cell::Int(f.runs.len() as u64),
                Cell::num(Some(f.value), decimals),
                interval_cell(f, decimals),
                Cell::num(band.map(|(m, _)| 100.0 * f.value / m), 0),
                Cell::text(unit),
                Cell::text(f.runs.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")),
            ]);
        }
        report.tables.push(table);
        // Nothing is read from a phase too brief to measure.
        if members.iter().any(|m| m.1.brief) {
            report.findings.extend(too_short(runs, &targets, op));
            continue;
        }
        report.findings.extend(spread_said(op, &members, band, unit));
    }
    report
}

/// What the targets' figures on `op` (sorted from the highest) say against their median and
/// its `band`: their spread, the slow ones, or that none stands apart.
fn spread_said(op: Op, members: &[(String, Figure)], band: Option<(f64, f64)>, unit: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let (first, last) = (&members[0], &members[members.len() - 1]);
    let all: Vec<i64> = members.iter().flat_map(|m| m.1.runs.iter().copied()).collect();
    if let (Some((median, _)), true) = (band, last.1.value > 0.0) {
        out.push(Finding {
            text: format!(
                "{} over {} targets: median {}, spread {:.0}% from the lowest ({} {}) to the highest ({} {})",
                op.name(),
                members.len(),
                show(median, unit),
                100.0 * (first.1.value / last.1.value - 1.0),
                last.0,
                show(last.1.value, unit),
                first.0,
                show(first.1.value, unit)
            ),
            value: 100.0 * (first.1.value / last.1.value - 1.0),
            runs: all.clone(),
            ..Default::default()
        });
    }
    let named: Vec<(String, f64)> = members.iter().map(|m| (m.0.clone(), m.1.value)).collect();
    let (slow, median) = outliers::slow(&named);
    if slow.is_empty() {
        if band.is_some() {
            out.push(Finding {
                text: format!(
                    "{}: no target stands apart (each within the band of the median, {:.0}% of it or more)",
                    op.name(),
                    100.0 * outliers::MATERIAL
                ),
                value: 0.0,
                runs: all,
                ..Default::default()
            });
        }
    } else {
        for (name, v) in slow {
            out.push(Finding {
                text: format!(
                    "{} is the slow one of {}: {}, {:.0}% of the median {}",
                    name,
                    op.name(),
                    show(*v, unit),
                    100.0 * v / median,
                    show(median, unit)
                ),
                value: 100.0 * v / median,
                runs: members.iter().find(|m| &m.0 == name).map(|m| m.1.runs.clone()).unwrap_or_default(),
                ..Default::default()
            });
        }
    }
    out
}

/// Per study, each target's peak of each op: the highest point over its client counts
/// (each point its runs' summary as the campaign asked), with its interval and client
/// count; a peak from a phase too brief to measure is marked.
pub fn peaks(studies: &[Study], runs: &[RunRecord], summary: Summary) -> Option<Table> {
    let peaks = peaks_of_runs(studies, runs, summary);
    // A study of no run (a matrix) gives its peaks as a table of its own, its rows the
    // summary's less the study's name.
    let mut t = peaks.unwrap_or_else(|| Table::new(PEAKS_SUMMARY, &PEAK_COLUMNS));
    for s in studies {
        let name = s.title.split(':').next().unwrap_or(&s.title);
        for own in s.report.tables.iter().filter(|t| t.title == PEAKS) {
            t.rows.extend(own.rows.iter().map(|row| {
                let mut row = row.clone();
                row.insert(0, Cell::text(name));
                row
            }));
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

/// The title of a study's own table of peaks, which the summary gathers (and the study's
/// section does not show).
pub const PEAKS: &str = "peaks";
const PEAKS_SUMMARY: &str = "Peak of each op of each target, per study";
const PEAK_COLUMNS: [&str; 8] = ["study", "target", "op", "peak", "95% interval", "clients", "runs", "unit"];

/// One target's peak of one op in one study: the point over its client counts that is
/// highest, as the campaign summarizes its runs.
struct Peak {
    study: String,
    target: String,
    op: Op,
    value: f64,
    interval: Option<Interval>,
    unbounded: bool,
    clients: usize,
    /// The figures of the runs behind the point.
    xs: Vec<f64>,
    brief: bool,
    unit: &'static str,
}

fn peaks_each(studies: &[Study], runs: &[RunRecord], summary: Summary) -> Vec<Peak> {
    let mut out = Vec::new();
    for s in studies {
        let members: Vec<&RunRecord> =
            runs.iter().filter(|r| r.status == Status::Ok && r.id.is_some_and(|i| s.runs.contains(&i))).collect();
        if members.is_empty() {
            continue;
        }
        let unit = unit(&members);
        let name = s.title.split(':').next().unwrap_or(&s.title).to_string();
        for target in labels(&members) {
            let mine: Vec<&RunRecord> =
                members.iter().copied().filter(|r| r.label.as_deref().unwrap_or("unlabelled") == target).collect();
            for op in ops(&mine) {
                let mut clients: Vec<usize> = mine.iter().map(|r| r.workload.tasks).collect();
                clients.sort_unstable();
                clients.dedup();
                let best = clients
                    .iter()
                    .filter_map(|&n| {
                        let at: Vec<&RunRecord> = mine.iter().copied().filter(|r| r.workload.tasks == n).collect();
                        let xs: Vec<f64> = at.iter().filter_map(|r| value(r, op)).collect();
                        (!xs.is_empty()).then(|| (n, summarized(&xs, summary), at, xs))
                    })
                    .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0));
                let Some((n, (value, interval, unbounded), at, xs)) = best else { continue };
                out.push(Peak {
                    study: name.clone(),
                    target: target.clone(),
                    op,
                    value,
                    interval,
                    unbounded,
                    clients: n,
                    xs,
                    brief: at.iter().any(|r| guard::too_brief(r, op)),
                    unit,
                });
            }
        }
    }
    out
}

fn peaks_of_runs(studies: &[Study], runs: &[RunRecord], summary: Summary) -> Option<Table> {
    let mut t = Table::new(PEAKS_SUMMARY, &PEAK_COLUMNS);
    let peaks = peaks_each(studies, runs, summary);
    for p in &peaks {
        let decimals = if p.unit == "MiB/s" { 1 } else { 0 };
        t.rows.push(vec![
            Cell::text(&p.study),
            Cell::text(&p.target),
            Cell::text(if p.brief { format!("{} *", p.op.name()) } else { p.op.name() }),
            Cell::num(Some(p.value), decimals),
            match (&p.interval, p.unbounded) {
                (Some(i), _) => Cell::text(crate::stats::around(i.value, i.lo, i.hi, decimals)),
                (None, true) => Cell::text(crate::stats::UNBOUNDED),
                _ => Cell::Empty,
            },
            Cell::Int(p.clients as u64),
            Cell::Int(p.xs.len() as u64),
            Cell::text(p.unit),
        ]);
    }
    if peaks.iter().any(|p| p.brief) {
        t.notes.push(format!(
            "* from a phase shorter than {} s: too short to measure, shown as what ran, not as the system's figure",
            super::BRIEF_PHASE_SECS
        ));
    }
    (!t.rows.is_empty()).then_some(t)
}

/// Per study and op measured on two targets or more, the headline a paper's summary gives: how
/// far the highest target's peak stands above the lowest's ("f800 read peaks 251% above nss"),
/// with the 95% interval of that ratio from the runs behind each peak, said as not told apart
/// when the interval holds 1 and as unbounded when too few runs stand behind a peak. A peak
/// from a phase too brief to measure ranks nothing: such a study gives no headline. Each with
/// the position of its study in `studies`.
pub fn headlines(studies: &[Study], runs: &[RunRecord], summary: Summary) -> Vec<(usize, Finding)> {
    let peaks = peaks_each(studies, runs, summary);
    let mut out = Vec::new();
    let mut seen: Vec<(&str, Op)> = Vec::new();
    for p in &peaks {
        if seen.contains(&(p.study.as_str(), p.op)) {
            continue;
        }
        seen.push((p.study.as_str(), p.op));
        let of: Vec<&Peak> = peaks.iter().filter(|q| q.study == p.study && q.op == p.op).collect();
        if of.len() < 2 || of.iter().any(|q| q.brief) {
            continue;
        }
        let top = of.iter().max_by(|a, b| a.value.total_cmp(&b.value)).copied().unwrap_or(p);
        let low = of.iter().min_by(|a, b| a.value.total_cmp(&b.value)).copied().unwrap_or(p);
        if low.value <= 0.0 {
            continue;
        }
        let ratio = top.value / low.value;
        let honest = match crate::stats::ratio_interval(&top.xs, &low.xs).filter(|_| summary == Summary::Mean) {
            Some(i) if i.lo > 1.0 => {
                format!("95% interval of the ratio {:.2}x to {:.2}x", i.lo, i.hi)
            }
            Some(i) => format!("not told apart: the 95% interval of the ratio, {:.2}x to {:.2}x, holds 1", i.lo, i.hi),
            None => "too few runs to bound the ratio: run the study again to confirm".to_string(),
        };
        let k = studies.iter().position(|s| s.title.split(':').next() == Some(p.study.as_str())).unwrap_or(0);
        out.push((
            k,
            Finding {
                text: format!(
                    "{}: {} {} peaks {:.0}% above {} ({} vs {} at {} and {} clients; {honest})",
                    p.study,
                    top.target,
                    p.op.name(),
                    100.0 * (ratio - 1.0),
                    low.target,
                    show(top.value, top.unit),
                    show(low.value, low.unit),
                    top.clients,
                    low.clients,
                ),
                value: ratio,
                ..Default::default()
            },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures;

    /// A run of `label` at `tasks` clients moving `mib_s` per op, its phases lasting 2 s.
    pub(crate) fn run(id: i64, label: &str, tasks: usize, mib_s: f64) -> RunRecord {
        let mut r = fixtures::run(None);
        r.id = Some(id);
        r.label = Some(label.into());
        r.campaign_id = Some(1);
        r.workload.tasks = tasks;
        for p in &mut r.phases {
            p.figures.bandwidth = Some(mib_s * 1048576.0);
            p.figures.window_ns = 2_000_000_000;
        }
        r
    }

    #[test]
    fn names_with_numbers_are_in_the_order_a_reader_counts() {
        let mut v = vec!["ost24", "ost4", "ost2", "ost8", "ost6"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["ost2", "ost4", "ost6", "ost8", "ost24"]);
        let mut v = vec!["lun10", "lun02", "lun1", "b", "a"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["a", "b", "lun1", "lun02", "lun10"]);
    }

    #[test]
    fn what_a_study_varies_is_read_from_its_runs() {
        let swept: Vec<RunRecord> = [1, 2, 4].iter().map(|&n| run(n as i64, "a", n, 100.0)).collect();
        assert_eq!(varies(&swept.iter().collect::<Vec<_>>(), false), Varies::Clients);
        let stripes: Vec<RunRecord> =
            ["ost2", "ost4", "ost8", "ost24"].iter().enumerate().map(|(k, t)| run(k as i64, t, 1, 100.0)).collect();
        let refs: Vec<&RunRecord> = stripes.iter().collect();
        assert_eq!(varies(&refs, false), Varies::Setting, "targets told apart by their settings");
        assert_eq!(varies(&refs, true), Varies::Targets, "like targets");
        assert_eq!(varies(&refs[..3], true), Varies::Setting, "three are too few to survey");
    }

    #[test]
    fn a_setting_is_drawn_as_bars_in_natural_order_with_no_line() {
        let runs: Vec<RunRecord> = [("ost24", 500.0), ("ost2", 200.0), ("ost8", 1000.0), ("ost4", 400.0)]
            .iter()
            .enumerate()
            .map(|(k, (t, v))| run(k as i64 + 1, t, 1, *v))
            .collect();
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let r = by_setting(&refs, "ost-ratio", Summary::Mean);
        assert_eq!(r.charts.len(), 1, "write and read share the chart");
        let c = &r.charts[0];
        assert!(c.bars, "bars, not a line");
        let names: Vec<&str> = c.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(names, ["ost2", "ost4", "ost8", "ost24"]);
        assert_eq!(c.series.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), ["write", "read"]);
        let svg = crate::report::figures::svg(c);
        assert!(svg.contains("<rect") && !svg.contains("stroke=\"#0072B2\" stroke-width=\"2\" points="), "no line");
        assert_eq!(r.tables[0].rows.len(), 4);
        let texts: Vec<&str> = r.findings.iter().map(|f| f.text.as_str()).collect();
        assert!(
            texts.contains(&"write is highest on ost8 (1000.0 MiB/s), 5.00x the lowest, ost2 (200.0 MiB/s)"),
            "{texts:?}"
        );
    }

    #[test]
    fn like_targets_are_sorted_with_the_median_band_spread_and_the_slow_one() {
        let values = [400.0, 410.0, 395.0, 405.0, 240.0, 402.0, 398.0, 401.0, 399.0, 403.0, 397.0, 404.0];
        let runs: Vec<RunRecord> =
            values.iter().enumerate().map(|(k, v)| run(k as i64 + 1, &format!("lun{:02}", k + 1), 4, *v)).collect();
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let r = across_targets(&refs, "all-luns", Summary::Mean);
        let c = &r.charts[0];
        assert!(c.bars && c.ticks[0].1 == "lun02" && c.ticks.last().unwrap().1 == "lun05", "{:?}", c.ticks);
        assert!(c.references.iter().any(|(n, _)| n.starts_with("median 400.5")), "{:?}", c.references);
        let texts: Vec<&str> = r.findings.iter().map(|f| f.text.as_str()).collect();
        assert!(texts.iter().any(|t| t.contains("spread 71% from the lowest (lun05 240.0 MiB/s)")), "{texts:?}");
        assert!(texts.iter().any(|t| t.starts_with("lun05 is the slow one of write: 240.0 MiB/s, 60%")), "{texts:?}");
    }

    #[test]
    fn a_brief_setting_gives_no_highest_and_says_too_short() {
        let mut runs: Vec<RunRecord> =
            [("a", 100.0), ("b", 50.0)].iter().enumerate().map(|(k, (t, v))| run(k as i64, t, 1, *v)).collect();
        for p in runs.iter_mut().flat_map(|r| &mut r.phases) {
            p.figures.window_ns = 8_000_000;
        }
        let r = by_setting(&runs.iter().collect::<Vec<_>>(), "s", Summary::Mean);
        assert!(r.findings.iter().all(|f| !f.text.contains("highest")), "{:?}", r.findings);
        assert!(r.findings.iter().any(|f| f.text.contains("too short to measure")));
    }

    #[test]
    fn what_an_imported_run_does_not_know_is_left_out_of_the_title_block() {
        let mut r = run(1, "a", 1, 100.0);
        r.started = 0;
        r.hosts.clear();
        r.env.fs_type.clear();
        r.env.mount_source.clear();
        let (facts, _) = super::super::study::about(&[r]);
        let text = format!("{facts:?}");
        assert!(!facts.iter().any(|f| f.0 == "when" || f.0 == "nodes"), "{text}");
        assert!(!text.contains("( on )") && !text.contains("1970"), "{text}");
    }

    #[test]
    fn a_run_on_several_directories_at_once_is_named_by_their_count_in_the_title_block() {
        let mut many = run(1, "all-luns", 4, 100.0);
        many.env.on_several(["/t/lun01", "/t/lun02", "/t/lun03"].map(String::from).to_vec());
        let mut one = run(2, "all-luns", 1, 100.0);
        one.env.target = "/t/lun01".into();
        let (facts, _) = super::super::study::about(&[many, one]);
        let targets = &facts.iter().find(|f| f.0 == "targets").unwrap().1;
        assert!(targets.contains("all-luns = 3 directories at once"), "{targets}");
        assert!(targets.contains("all-luns = /t/lun01") && !targets.contains('@'), "{targets}");
    }

    #[test]
    fn a_headline_ratio_between_systems_is_honest_about_its_interval() {
        let study = |runs: &[RunRecord]| Study {
            title: "seq: run over clients".into(),
            runs: runs.iter().filter_map(|r| r.id).collect(),
            report: Report::default(),
        };
        let said = |runs: Vec<RunRecord>| -> Vec<String> {
            headlines(&[study(&runs)], &runs, Summary::Mean)
                .into_iter()
                .map(|(k, f)| {
                    assert_eq!(k, 0, "the study it belongs to");
                    f.text
                })
                .collect()
        };
        // f800 three runs near 1000 MiB/s at 2 clients, nss three near 400: apart.
        let apart: Vec<RunRecord> = [("f800", [990.0, 1000.0, 1010.0]), ("nss", [395.0, 400.0, 405.0])]
            .iter()
            .flat_map(|(t, vs)| vs.map(|v| (*t, v)))
            .enumerate()
            .map(|(k, (t, v))| run(k as i64 + 1, t, 2, v))
            .collect();
        let texts = said(apart);
        assert_eq!(texts.len(), 2, "write and read: {texts:?}");
        assert!(texts[0].starts_with("seq: f800 write peaks 150% above nss (1000.0 MiB/s vs 400.0 MiB/s at 2 and 2 clients; 95% interval of the ratio "), "{}", texts[0]);
        // Two systems whose runs overlap are not told apart.
        let close: Vec<RunRecord> = [("a", [900.0, 1000.0, 1100.0]), ("b", [880.0, 960.0, 1060.0])]
            .iter()
            .flat_map(|(t, vs)| vs.map(|v| (*t, v)))
            .enumerate()
            .map(|(k, (t, v))| run(k as i64 + 1, t, 2, v))
            .collect();
        assert!(said(close)[0].contains("not told apart: the 95% interval of the ratio"), "overlap");
        // One run each bounds nothing.
        let once = vec![run(1, "a", 2, 1000.0), run(2, "b", 2, 500.0)];
        assert!(said(once)[0].ends_with("too few runs to bound the ratio: run the study again to confirm)"));
        // A peak from a phase of 8 ms ranks nothing.
        let mut brief = vec![run(1, "a", 2, 1000.0), run(2, "b", 2, 500.0)];
        brief[0].phases.iter_mut().for_each(|p| p.figures.window_ns = 8_000_000);
        assert!(said(brief).is_empty());
    }
}
