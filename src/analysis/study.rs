//! A report's runs as studies, the way an evaluation reads: each survey, each workload swept
//! over clients (every label and every repetition of it on one chart per op, with the spread
//! of the repetitions), each run of neither; and what a reader must know before the first
//! figure (what was measured, how) and after the last (every run, its settings, where it ran).
//! Each run belongs to exactly one study, so no run is laid out twice.

use super::{mean_of, random, reference, survey, Cell, Chart, Report, Table};
pub use crate::campaign::Summary;
use crate::record::{RunRecord, Status};
use crate::spec::{Access, Op};
use crate::units::{format_size, format_time, mib_per_s};

/// One section of a report: its title, the runs it rests on, and what the analysis made of
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    /// What it studies.
    pub title: String,
    /// Ids of its runs, each in no other study.
    pub runs: Vec<i64>,
    /// Its figures, tables and findings.
    pub report: Report,
}

/// The studies of `runs`, in the order of their first runs: a survey's runs make its study,
/// swept runs of one workload make one study over clients whatever their label or sweep,
/// and every other run is a study of its own. `reference` names a published system whose
/// figures the charts over clients are read against.
pub fn studies(runs: &[RunRecord], reference: Option<&str>) -> Vec<Study> {
    #[derive(PartialEq)]
    enum Key {
        Survey(i64),
        Targets(i64),
        Swept(String),
        Alone(i64),
    }
    let key = |r: &RunRecord| match (r.survey_id, r.targets_id, r.sweep_id) {
        (Some(s), ..) => Key::Survey(s),
        (None, Some(t), _) => Key::Targets(t),
        (None, None, Some(_)) => Key::Swept(r.workload.key()),
        (None, None, None) => Key::Alone(r.id.unwrap_or(0)),
    };
    let mut order: Vec<(Key, Vec<&RunRecord>)> = Vec::new();
    for r in runs {
        let k = key(r);
        match order.iter_mut().find(|(o, _)| *o == k) {
            Some((_, members)) => members.push(r),
            None => order.push((k, vec![r])),
        }
    }
    order
        .into_iter()
        .map(|(k, members)| {
            let ids: Vec<i64> = members.iter().filter_map(|r| r.id).collect();
            let (title, report) = match k {
                Key::Survey(s) => (
                    format!("Survey s{s} of {}", members[0].env.target),
                    survey(s, &members.iter().map(|r| (*r).clone()).collect::<Vec<_>>()),
                ),
                Key::Targets(t) => (
                    format!(
                        "Target survey t{t}: {} targets",
                        members
                            .iter()
                            .filter_map(|r| r.name.as_deref())
                            .filter(|n| n.starts_with("alone "))
                            .collect::<std::collections::BTreeSet<_>>()
                            .len()
                    ),
                    super::targets::report(t, &members.iter().map(|r| (*r).clone()).collect::<Vec<_>>()),
                ),
                Key::Swept(_) => (
                    format!("{} over clients", capitalized(&members[0].workload.shape_label())),
                    over_clients(&members, reference),
                ),
                Key::Alone(id) => (format!("Run {id}: {}", members[0].workload.label()), super::run(members[0])),
            };
            Study { title, runs: ids, report }
        })
        .collect()
}

/// Run ids as a reader counts them: runs in a row as a span ("1-4, 9, 12-13").
pub fn spans(ids: &[i64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < sorted.len() {
        let mut end = k;
        while end + 1 < sorted.len() && sorted[end + 1] == sorted[end] + 1 {
            end += 1;
        }
        parts.push(if end == k { sorted[k].to_string() } else { format!("{}-{}", sorted[k], sorted[end]) });
        k = end + 1;
    }
    parts.join(", ")
}

fn capitalized(text: &str) -> String {
    let mut c = text.chars();
    c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// The label of each run, or "unlabelled".
fn label_of(r: &RunRecord) -> &str {
    r.label.as_deref().unwrap_or("unlabelled")
}

/// One workload's runs over clients: a chart per op with a line per label, each point the
/// mean over that label's runs at that client count and its error bar the 95% t-interval of
/// that mean (none from one run); a table of the same numbers with the runs behind each; per
/// label and op, where it peaks and how it scales. A published system's figure on the same
/// workload, when `reference` names one, is drawn as a level on the chart of its op.
pub fn over_clients(runs: &[&RunRecord], reference: Option<&str>) -> Report {
    over_clients_as(runs, reference.map(|name| (name, None)), Summary::Mean)
}

/// As [`over_clients`], each point the runs' `summary`: their mean with its interval, or
/// their best or median (no interval: a best of few runs has none that means what it says).
/// A metadata workload's chart and columns are its phases'.
/// `reference` names a published system and the volume the study moves (its file's block or
/// total), by which the published figure measured nearest it is chosen.
pub fn over_clients_as(
    runs: &[&RunRecord],
    reference: Option<(&str, Option<reference::Volume>)>,
    summary: Summary,
) -> Report {
    let curve = Curve::of(runs, summary);
    let is_random = runs.first().is_some_and(|r| random(r));
    let is_meta = runs.first().is_some_and(|r| r.workload.meta().is_some());
    let (unit, ok) = (curve.unit, &curve.ok);
    let what = shape_said(runs);
    let mut report = Report::default();
    let table = curve.table(&what);
    let published = reference.map(|(name, volume)| published(name, runs, volume)).unwrap_or_default();
    for &op in &curve.ops {
        let mut chart = Chart {
            title: format!("{what}: {} {unit} against clients", op.name()),
            x: "clients".into(),
            y: unit.into(),
            runs: ok.iter().filter_map(|r| r.id).collect(),
            ..Chart::default()
        };
        for label in &curve.labels {
            let points: Vec<(f64, f64, Option<crate::stats::Interval>, Vec<i64>)> = curve
                .clients
                .iter()
                .filter_map(|&n| curve.point(label, op, n).map(|(mean, iv, ids, _)| (n as f64, mean, iv, ids)))
                .collect();
            if points.is_empty() {
                continue;
            }
            chart.series.push((label.to_string(), points.iter().map(|p| (p.0, p.1)).collect()));
            chart.errors.push(points.iter().filter_map(|p| Some((p.0, p.2.as_ref()?.lo, p.2.as_ref()?.hi))).collect());
            let of_label: Vec<&RunRecord> = ok.iter().copied().filter(|r| label_of(r) == *label).collect();
            report.findings.extend(super::scaled(&format!("{label} {}", op.name()), &of_label, op, is_random));
        }
        // A published figure measured at a stated client count is a point on the same axes;
        // one without is a level across them.
        for (_, name, at, v) in published.iter().filter(|p| p.0 == op) {
            match at {
                Some(x) => chart.published.push((name.clone(), *x, *v)),
                None => chart.references.push((name.clone(), *v)),
            }
        }
        if !chart.series.is_empty() {
            report.charts.push(chart);
        }
    }
    // A metadata study's phases share one chart, as mdtest's readers draw create, stat and
    // remove side by side: a line per phase (and target).
    if is_meta && report.charts.len() > 1 {
        let mut one = Chart {
            title: format!("{what}: {unit} of every phase against clients"),
            x: "clients".into(),
            y: unit.into(),
            runs: ok.iter().filter_map(|r| r.id).collect(),
            ..Chart::default()
        };
        for (c, op) in std::mem::take(&mut report.charts).into_iter().zip(&curve.ops) {
            for ((name, points), bars) in c.series.into_iter().zip(c.errors) {
                let name = if curve.labels.len() == 1 { op.name() } else { format!("{name} {}", op.name()) };
                one.series.push((name, points));
                one.errors.push(bars);
            }
        }
        report.charts.push(one);
    }
    report.tables.push(table);
    report
}

/// A point of a curve: its figure, interval, runs, and whether its runs are too few to bound
/// it.
type CurvePoint = (f64, Option<crate::stats::Interval>, Vec<i64>, bool);

/// A study's runs over clients as its table and charts read them: the runs that succeeded,
/// the phases measured (a rewrite shown as the write and read are), the labels and client
/// counts, the unit, and how a point summarizes its runs.
struct Curve<'a> {
    ok: Vec<&'a RunRecord>,
    ops: Vec<Op>,
    labels: Vec<&'a str>,
    clients: Vec<usize>,
    unit: &'static str,
    summary: Summary,
}

impl<'a> Curve<'a> {
    fn of(runs: &[&'a RunRecord], summary: Summary) -> Curve<'a> {
        let ok: Vec<&RunRecord> = runs.iter().copied().filter(|r| r.status == Status::Ok).collect();
        let mut labels: Vec<&str> = runs.iter().map(|&r| label_of(r)).collect();
        labels.sort_unstable();
        labels.dedup();
        let mut clients: Vec<usize> = ok.iter().map(|r| r.workload.tasks).collect();
        clients.sort_unstable();
        clients.dedup();
        Curve { ok, ops: super::shapes::ops(runs), labels, clients, unit: super::shapes::unit(runs), summary }
    }

    /// The table of the curve's points, a row per label and client count, titled by `what`.
    fn table(&self, what: &str) -> Table {
        let said = match self.summary {
            Summary::Mean => "mean",
            Summary::Best => "best",
            Summary::Median => "median",
        };
        let mut columns = vec!["label".to_string(), "clients".into(), "runs".into()];
        for op in &self.ops {
            columns.push(op.name().to_string());
            columns.push(format!("± {}", op.name()));
        }
        columns.extend(["unit".to_string(), "run ids".into(), "caveat".into()]);
        let mut table = Table::new(format!("{what}: {} against clients, {said} over runs", self.unit), &[]);
        table.columns = columns;
        for label in &self.labels {
            table.rows.extend(self.clients.iter().filter_map(|&n| self.row(label, n)));
        }
        table.notes.push(match self.summary {
            Summary::Mean => "each run's figure is its mean over iterations; a row's figure is the mean over its runs, with the 95% interval of that mean (Student's t below 10 runs, bootstrap from 10; ± half its width when symmetric, else its ends), none from one run".into(),
            Summary::Best => "each run's figure is its mean over iterations; a row's figure is the best of its runs (as the evaluation asked), with no interval: a best of few runs is not an estimate of the typical one".into(),
            Summary::Median => "each run's figure is its mean over iterations; a row's figure is the median of its runs, with no interval".into(),
        });
        table
    }

    /// The point of `label` and `op` at `n` clients.
    fn point(&self, label: &str, op: Op, n: usize) -> Option<CurvePoint> {
        let at: Vec<&RunRecord> =
            self.ok.iter().copied().filter(|r| label_of(r) == label && r.workload.tasks == n).collect();
        let xs: Vec<f64> = at.iter().filter_map(|r| super::shapes::value(r, op)).collect();
        (!xs.is_empty()).then(|| {
            let ids = at.iter().filter_map(|r| r.id).collect();
            let (value, interval, unbounded) = super::shapes::summarized(&xs, self.summary);
            (value, interval, ids, unbounded)
        })
    }

    /// The table's row of `label` at `n` clients, when it has runs there.
    fn row(&self, label: &str, n: usize) -> Option<Vec<Cell>> {
        let figures: Vec<_> = self.ops.iter().map(|&op| self.point(label, op, n)).collect();
        let ids = figures.iter().flatten().next().map(|p| p.2.clone()).unwrap_or_default();
        if ids.is_empty() {
            return None;
        }
        let decimals = if self.unit == "MiB/s" { 1 } else { 0 };
        let mut row = vec![Cell::text(label), Cell::Int(n as u64), Cell::Int(ids.len() as u64)];
        for p in &figures {
            row.push(Cell::num(p.as_ref().map(|p| p.0), decimals));
            row.push(match p {
                Some((_, Some(i), _, _)) => super::interval_cell(i, decimals),
                Some((.., true)) => Cell::text(crate::stats::UNBOUNDED),
                _ => Cell::Empty,
            });
        }
        row.push(Cell::text(self.unit));
        row.push(Cell::text(ids.iter().map(i64::to_string).collect::<Vec<_>>().join(" ")));
        // A figure that may be the page cache's says so beside it, as every table does.
        let cached: Vec<String> = self
            .ops
            .iter()
            .copied()
            .filter(|&op| {
                self.ok.iter().any(|r| {
                    label_of(r) == label
                        && r.workload.tasks == n
                        && r.phases.iter().any(|p| p.op == op && p.possibly_cached.is_some())
                })
            })
            .map(|op| op.name())
            .collect();
        row.push(match cached.is_empty() {
            true => Cell::Empty,
            false => Cell::text(format!("{} possibly cached", cached.join(" and "))),
        });
        Some(row)
    }
}

/// The workload of `runs` as a title says it: a sweep that divides a fixed total over its
/// clients is titled by that total ("512 MiB in all"), not by one point's share of it.
pub fn shape_said(runs: &[&RunRecord]) -> String {
    let Some(first) = runs.first() else { return String::new() };
    let label = first.workload.shape_label();
    let Some(data) = first.workload.data() else { return label };
    let mut teams: Vec<usize> = runs.iter().map(|r| r.workload.tasks).collect();
    teams.sort_unstable();
    teams.dedup();
    let total = |r: &RunRecord| r.workload.data().map(|d| d.block * d.segments * r.workload.tasks as u64);
    // A total divided over the clients is rounded to whole transfers per task.
    let near = |r: &RunRecord| match (total(r), total(first), r.workload.data()) {
        (Some(a), Some(b), Some(d)) => a.abs_diff(b) <= d.transfer.max(1) * d.segments * r.workload.tasks as u64,
        _ => false,
    };
    let fixed = teams.len() > 1 && runs.iter().all(|r| near(r));
    match (fixed, total(first)) {
        (true, Some(all)) => label.replace(
            &format!(", {} per task", format_size(data.block * data.segments)),
            &format!(", {} in all", format_size(all)),
        ),
        _ => label,
    }
}

/// The published figures of system `name` on the workload of `runs` (of several measured at
/// different volumes, the one nearest `volume`): (op, "name published (figure, the setting
/// it was measured at)", the client count it was measured at when the source says, value in
/// the runs' unit). A figure in bytes per second beside a study in IOPS is counted in its
/// stated transfers.
fn published(
    name: &str,
    runs: &[&RunRecord],
    volume: Option<reference::Volume>,
) -> Vec<(Op, String, Option<f64>, f64)> {
    let Some(first) = runs.first() else { return Vec::new() };
    let access = match first.workload.data().map(|d| d.access) {
        Some(Access::FilePerTask) => "N-to-N",
        Some(Access::Shared) => "N-to-1",
        _ => return Vec::new(),
    };
    let kind = if random(first) { "random" } else { "sequential" };
    let wanted = if random(first) { "IOPS" } else { "MiB/s" };
    let figures: Vec<reference::Published> = reference::catalog()
        .into_iter()
        .filter(|p| reference::short_name(&p.system) == name && p.access == access)
        .filter(|p| p.workload.starts_with(kind))
        .collect();
    // A figure chosen among several of its workload at other sizes says so.
    let rivals = |p: &reference::Published, of: &[reference::Published]| {
        of.iter().filter(|q| q.system == p.system && q.workload == p.workload && q.access == p.access).count()
    };
    let kept = reference::nearest_volume(figures.clone(), volume);
    kept.iter()
        .map(|p| (p.clone(), rivals(p, &figures) > rivals(p, &kept)))
        .filter_map(|(p, chosen)| {
            let op = [Op::Write, Op::Read].into_iter().find(|op| p.workload == format!("{kind} {}", op.name()))?;
            let (value, unit) = reference::converted(&p)?;
            let transfer = crate::import::text::size(&p.transfer).filter(|t| *t > 0);
            let (value, counted) = match (unit, wanted, transfer) {
                (u, w, _) if u == w => (value, String::new()),
                ("MiB/s", "IOPS", Some(t)) => {
                    let iops = value * 1048576.0 / t as f64;
                    // In transfers of the stated size, which the study's are too.
                    (iops, format!(" = {iops:.0} IOPS"))
                }
                _ => return None,
            };
            let at = if p.clients.is_empty() { String::new() } else { format!(", {} clients", p.clients) };
            let size = match (p.size.is_empty(), chosen) {
                (true, _) => String::new(),
                (false, false) => format!(", {}", p.size),
                (false, true) => format!(", {}, size matched", p.size),
            };
            let said = format!(
                "{} published ({} {}{counted}{}{at}{size})",
                p.system,
                p.value,
                p.metric,
                match p.qualifier.as_str() {
                    "" => String::new(),
                    q => format!(", {q}"),
                }
            );
            Some((op, said, p.clients.parse::<f64>().ok(), value))
        })
        .collect()
}

/// Every run in one compact table: id, study group, label, workload, clients, the mean write
/// and read, status.
pub fn runs_table(runs: &[RunRecord]) -> Table {
    let mut t =
        Table::new("Every run", &["run", "group", "label", "workload", "clients", "write", "read", "unit", "status"]);
    for r in runs {
        let figure = |op| {
            let v = mean_of(r, op, random(r));
            Cell::num(if random(r) { v } else { v.map(mib_per_s) }, if random(r) { 0 } else { 1 })
        };
        t.rows.push(vec![
            r.id.map_or(Cell::Empty, |i| Cell::Int(i as u64)),
            Cell::text(r.group().map_or("-".to_string(), |g| g.to_string())),
            Cell::text(r.label.clone().unwrap_or_default()),
            Cell::text(r.workload.shape_label()),
            Cell::Int(r.workload.tasks as u64),
            figure(Op::Write),
            figure(Op::Read),
            Cell::text(if random(r) { "IOPS" } else { "MiB/s" }),
            Cell::text(match r.status {
                Status::Ok => "ok".to_string(),
                Status::Failed => format!("FAILED: {}", r.error.as_deref().unwrap_or("")),
            }),
        ]);
    }
    t.notes.push("write and read: each run's mean over its iterations (ls shows the best)".into());
    t
}

/// Each run's full settings: the command that made it and what it changed from the defaults.
pub fn settings_table(runs: &[RunRecord]) -> Table {
    let mut t = Table::new("Settings of every run", &["run", "command", "settings changed from the defaults"]);
    for r in runs {
        // An imported run's command is the other tool's, said as such.
        let command = match crate::record::imported_from(&r.provenance) {
            Some(tool) => format!("imported from {tool}: {}", r.command_line),
            None => r.command_line.clone(),
        };
        t.rows.push(vec![
            r.id.map_or(Cell::Empty, |i| Cell::Int(i as u64)),
            Cell::text(command),
            Cell::text(r.workload.changed().join(" ")),
        ]);
    }
    if runs.iter().any(|r| crate::record::imported_from(&r.provenance).is_some()) {
        t.notes.push(super::IMPORTED_NOTE.into());
    }
    t
}

/// Where the runs ran: a row per distinct host, kernel and target, with the runs there.
pub fn environment_table(runs: &[RunRecord]) -> Table {
    let mut t = Table::new(
        "Environment",
        &["target", "label", "file system", "mount", "options", "host", "kernel", "CPUs", "RAM", "version", "runs"],
    );
    let place = |r: &RunRecord| {
        let e = &r.env;
        vec![
            e.target.clone(),
            r.label.clone().unwrap_or_default(),
            e.fs_type.clone(),
            format!(
                "{} on {}{}",
                e.mount_source,
                e.mount_point,
                e.block_device.as_deref().map(|d| format!(" [{d}]")).unwrap_or_default()
            ),
            e.mount_options.clone(),
            e.host.clone(),
            e.kernel.clone(),
            e.cpu_count.to_string(),
            format_size(e.ram_bytes),
            e.tool_version.clone(),
        ]
    };
    let mut places: Vec<(Vec<String>, Vec<i64>)> = Vec::new();
    for r in runs {
        let p = place(r);
        match places.iter_mut().find(|(q, _)| *q == p) {
            Some((_, ids)) => ids.extend(r.id),
            None => places.push((p, r.id.into_iter().collect())),
        }
    }
    for (p, ids) in places {
        let mut row: Vec<Cell> = p.into_iter().map(Cell::Text).collect();
        row.push(Cell::text(spans(&ids)));
        t.rows.push(row);
    }
    t
}

/// What was measured and how, in a few lines: the targets, the nodes, when, the version; the
/// cache policy, the repetitions and how a figure summarizes them.
pub fn about(runs: &[RunRecord]) -> (Vec<(String, String)>, Vec<String>) {
    // What a run does not know (an imported run's host or mount) is left out, not said empty.
    let distinct = |f: &dyn Fn(&RunRecord) -> String| {
        let mut v: Vec<String> = runs.iter().map(f).filter(|v| !v.trim().is_empty()).collect();
        v.sort();
        v.dedup();
        v.join("; ")
    };
    let last = runs.iter().map(|r| r.started).max().unwrap_or(0);
    let facts = vec![
        (
            "targets".to_string(),
            distinct(&|r| {
                let on = match (r.env.fs_type.as_str(), r.env.mount_source.as_str()) {
                    ("", "") => String::new(),
                    (fs, "") => format!(" ({fs})"),
                    ("", source) => format!(" (on {source})"),
                    (fs, source) => format!(" ({fs} on {source})"),
                };
                // A run on several directories at once (a target survey's k at once): their
                // count is what a reader needs, each directory being a target of its own runs.
                match r.env.targets.len() {
                    0 | 1 => format!("{} = {}{on}", label_of(r), r.env.target),
                    k => format!("{} = {k} directories at once{on}", label_of(r)),
                }
            }),
        ),
        ("nodes".into(), distinct(&|r| r.hosts.join(", ").chars().take(200).collect::<String>()).to_string()),
        ("kernel".into(), distinct(&|r| r.env.kernel.clone())),
        // A run of unknown date (0) is no date at all, not 1970.
        (
            "when".into(),
            match (runs.iter().map(|r| r.started).filter(|&t| t > 0).min(), last) {
                (Some(first), last) if last > 0 => format!("{} to {}", format_time(first), format_time(last)),
                _ => String::new(),
            },
        ),
        ("tool".into(), distinct(&|r| format!("iosurvey {}", r.env.tool_version))),
        (
            "runs".into(),
            format!("{} ({} failed)", runs.len(), runs.iter().filter(|r| r.status == Status::Failed).count()),
        ),
    ];
    let facts: Vec<(String, String)> = facts.into_iter().filter(|(_, v)| !v.trim().is_empty()).collect();
    let phases = || runs.iter().flat_map(|r| r.phases.iter());
    let dropped = phases().filter(|p| p.caches_dropped).count();
    let cached = phases().filter(|p| p.possibly_cached.is_some()).count();
    let direct = runs.iter().filter(|r| r.workload.data().is_some_and(|d| d.direct)).count();
    let mut method = vec![format!(
        "Caches: dropped before {dropped} of {} phases; {direct} of {} runs used O_DIRECT; {cached} phases may have been served from the page cache and are marked where shown.",
        phases().count(),
        runs.len()
    )];
    method.push(
        "Each phase's bandwidth is all bytes over the time from the first task's open to the last task's close (IOR's definition); a run's figure is its mean over its iterations."
            .into(),
    );
    method.push(
        "A figure over clients draws, per label, the mean over the runs at each client count, with error bars spanning the 95% Student's t interval of that mean when there are two runs or more; its table beneath gives the same numbers and the runs behind each."
            .into(),
    );
    (facts, method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_figure_is_matched_to_the_study_by_its_size() {
        // Random writes of 4 KiB at 1 and 2 clients, file per task: the H600 published its
        // random write at 32 GB per client (0.8 GB/s) and at 8 GB per client (5.8 GB/s).
        let runs: Vec<RunRecord> = [1usize, 2]
            .iter()
            .map(|&n| {
                let mut r = crate::record::fixtures::run(None);
                r.id = Some(n as i64);
                r.label = Some("h600".into());
                r.workload.tasks = n;
                let d = r.workload.data_mut();
                d.pattern = crate::spec::Pattern::Random;
                d.access = Access::FilePerTask;
                d.transfer = 4096;
                for p in &mut r.phases {
                    p.figures.iops = Some(1000.0 * n as f64);
                    p.figures.window_ns = 2_000_000_000;
                }
                r
            })
            .collect();
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let at = |volume| published("isilon-h600", &refs, volume);
        let per_client = |gb: f64| Some(reference::Volume::PerClient(gb * 1073741824.0));
        let big = at(per_client(32.0));
        let write: Vec<&(Op, String, Option<f64>, f64)> = big.iter().filter(|p| p.0 == Op::Write).collect();
        assert_eq!(write.len(), 1, "one of the two: {big:?}");
        let legend = &write[0].1;
        assert!(legend.contains("0.8 GB/s = 19531") && legend.contains(" IOPS, peak"), "{legend}");
        assert!(legend.contains("32GB per client, size matched)"), "{legend}");
        assert!((write[0].3 - 0.8e9 / 4096.0).abs() < 1e-6, "counted in its transfers");
        let small = at(per_client(8.0));
        let said = format!("{small:?}");
        assert!(small.iter().any(|p| p.0 == Op::Write && p.1.contains("5.8 GB/s")), "{said}");
        assert!(!said.contains("32GB"), "{said}");
        // A study whose volume is not known is set beside both, each said with its size.
        assert_eq!(at(None).iter().filter(|p| p.0 == Op::Write).count(), 2);
    }
}
