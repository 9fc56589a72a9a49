//! Training runs against the accelerators they fed: iosurvey's own `train` runs and DLIO's
//! imported summaries alike (both file `train.*`), AU and samples/s per accelerator count,
//! one line per target and workload, the workload's AU threshold drawn across the AU chart:
//! where a line crosses it is the most accelerators that storage feeds. And `compare` of
//! training or checkpoint runs by those figures (a checkpoint's by its slowest rank's), each
//! with its interval over runs, or over one run's epochs or checkpoints.

use super::study::Study;
use super::{Cell, Chart, Finding, Report, Side, Table};
use crate::record::train::{said, TrainRecord, Training};
use crate::record::{RunRecord, Status};
use crate::spec::Op;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One run's point: its line, accelerators, AU (a fraction), samples/s, threshold.
struct Point {
    line: String,
    accelerators: f64,
    au: f64,
    samples: Option<f64>,
    threshold: Option<f64>,
    id: i64,
}

/// A run's training figures, if it is a training run.
fn trained(r: &RunRecord) -> Option<Cow<'_, TrainRecord>> {
    match r.training()? {
        Cow::Borrowed(Training::Train(t)) => Some(Cow::Borrowed(&**t)),
        Cow::Owned(Training::Train(t)) => Some(Cow::Owned(*t)),
        _ => None,
    }
}

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite())
}

fn point(r: &RunRecord) -> Option<Point> {
    if r.status != Status::Ok {
        return None;
    }
    let t = trained(r)?;
    let target = r.label.clone().unwrap_or_else(|| r.env.target.clone());
    let source = if r.provenance.starts_with(crate::record::IMPORTED) { " (DLIO)" } else { "" };
    Some(Point {
        line: format!("{} on {target}{source}", t.workload),
        accelerators: t.accelerators? as f64,
        au: finite(t.au)?,
        samples: finite(t.samples_per_s),
        threshold: finite(t.au_target),
        id: r.id?,
    })
}

/// The training study of `runs`, if any of them is a training run: AU and samples/s against
/// accelerators (the mean of a count's runs), the AU threshold drawn, and per line the most
/// accelerators whose mean AU reaches it.
pub fn study(runs: &[RunRecord]) -> Option<Study> {
    let points: Vec<Point> = runs.iter().filter_map(point).collect();
    if points.is_empty() {
        return None;
    }
    // (line, accelerators) -> the runs' AUs and samples/s.
    let mut by: BTreeMap<(String, u64), Vec<&Point>> = BTreeMap::new();
    for p in &points {
        by.entry((p.line.clone(), p.accelerators as u64)).or_default().push(p);
    }
    let mean = |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    let mut au_lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut rate_lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut table = Table::new(
        "Training: accelerator utilization and samples/s by accelerators",
        &["line", "accelerators", "runs", "AU %", "samples/s", "threshold %"],
    );
    for ((line, k), ps) in &by {
        let au = mean(&ps.iter().map(|p| p.au).collect::<Vec<_>>()).unwrap_or(0.0);
        let samples = mean(&ps.iter().filter_map(|p| p.samples).collect::<Vec<_>>());
        au_lines.entry(line.clone()).or_default().push((*k as f64, au * 100.0));
        if let Some(s) = samples {
            rate_lines.entry(line.clone()).or_default().push((*k as f64, s));
        }
        let threshold = ps.iter().find_map(|p| p.threshold);
        table.rows.push(vec![
            Cell::text(line.clone()),
            Cell::Int(*k),
            Cell::Int(ps.len() as u64),
            Cell::num(Some(au * 100.0), 1),
            Cell::num(samples, 1),
            Cell::num(threshold.map(|t| t * 100.0), 0),
        ]);
    }
    // One threshold per workload: each line's own, drawn once per value.
    let mut thresholds: Vec<(String, f64)> = Vec::new();
    for p in &points {
        if let Some(t) = p.threshold {
            let name = format!("AU threshold {:.0}%", t * 100.0);
            if !thresholds.iter().any(|(n, _)| *n == name) {
                thresholds.push((name, t * 100.0));
            }
        }
    }
    let ids: Vec<i64> = points.iter().map(|p| p.id).collect();
    let findings = most_fed(&points, &au_lines);
    let au_chart = Chart {
        title: "Training: accelerator utilization against accelerators".into(),
        x: "accelerators".into(),
        y: "AU %".into(),
        series: au_lines.into_iter().collect(),
        references: thresholds,
        runs: ids.clone(),
        ..Chart::default()
    };
    let rate_chart = Chart {
        title: "Training: samples/s against accelerators".into(),
        x: "accelerators".into(),
        y: "samples/s".into(),
        series: rate_lines.into_iter().collect(),
        runs: ids,
        ..Chart::default()
    };
    Some(Study {
        title: "Training: accelerators fed".into(),
        // The runs stay in the studies of their workloads: this one reads them again by
        // accelerators, and cites them in its charts and findings.
        runs: Vec::new(),
        report: Report { tables: vec![table], findings, charts: vec![au_chart, rate_chart], ..Report::default() },
    })
}

/// Per line of `au_lines` (accelerators, AU %), the most accelerators whose mean AU reaches
/// the line's threshold, or that none tried does.
fn most_fed(points: &[Point], au_lines: &BTreeMap<String, Vec<(f64, f64)>>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (line, pts) in au_lines {
        let Some(t) = points.iter().find(|p| p.line == *line).and_then(|p| p.threshold) else { continue };
        let passing = pts
            .iter()
            .filter(|(_, au)| *au >= t * 100.0)
            .map(|(k, _)| *k)
            .fold(None, |m: Option<f64>, k| Some(m.map_or(k, |m| m.max(k))));
        let runs: Vec<i64> = points.iter().filter(|p| p.line == *line).map(|p| p.id).collect();
        findings.push(match passing {
            Some(k) => Finding {
                text: format!("{line}: the most accelerators that reach the {:.0}% AU is {k}", t * 100.0),
                value: k,
                runs,
                ..Default::default()
            },
            None => Finding {
                text: format!("{line}: no accelerator count tried reaches the {:.0}% AU", t * 100.0),
                value: 0.0,
                runs,
                ..Default::default()
            },
        });
    }
    findings
}

/// The two kinds of run compared by their own figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Train,
    Checkpoint,
}

fn kind(t: &Training) -> Kind {
    match t {
        Training::Train(_) => Kind::Train,
        Training::Checkpoint(_) => Kind::Checkpoint,
    }
}

/// Whether `compare` sets a run beside others by its own figures (a training run, iosurvey's
/// or DLIO's, or a checkpoint run) rather than by its phases as a workload: a training run's
/// read phase says nothing of the accelerators it fed.
pub fn own_figures(r: &RunRecord) -> bool {
    r.training().is_some()
}

/// What a run measured, setting by setting, in the order the identity line says them; the
/// target last, for a workload on two systems is what a comparison is mostly for.
fn identity(r: &RunRecord, t: &Training) -> Vec<(&'static str, String)> {
    let scale = |n: Option<u64>| said(n.map(|n| format!("1/{n}")));
    let mut out = match t {
        Training::Train(t) => vec![
            ("workload", t.workload.clone()),
            ("accelerator", said(t.accelerator.as_ref())),
            ("accelerators", said(t.accelerators)),
            ("batch", said(t.batch)),
            ("compute s", said(t.compute_s)),
            ("sample bytes", said(t.sample_bytes)),
            ("files", said(t.files)),
            ("scale", scale(t.scale)),
        ],
        Training::Checkpoint(c) => vec![
            ("model", c.model.clone()),
            ("ranks", said(c.ranks)),
            ("shards", said(c.shards)),
            ("rank bytes", said(c.rank_bytes)),
            ("checkpoints", said(c.checkpoints)),
            ("reads", said(c.reads)),
            ("shift", said(c.shift)),
            ("scale", scale(c.scale)),
        ],
    };
    out.push(("hosts", r.hosts.len().to_string()));
    out.push(("source", crate::record::imported_from(&r.provenance).unwrap_or("iosurvey").to_string()));
    out.push(("target", r.label.clone().unwrap_or_else(|| r.env.target.clone())));
    out
}

/// One figure of one run: its value, and the samples the run itself holds of it (a value
/// per epoch, or per checkpoint).
struct Measure {
    figure: &'static str,
    unit: &'static str,
    decimals: usize,
    value: f64,
    within: Vec<f64>,
    /// What the samples within are ("epochs", "checkpoints written").
    of: &'static str,
}

/// A figure of a training run: its name, unit, decimals, value, its epochs' values, and what
/// it is multiplied by as shown.
type Figure<'t> = (&'static str, &'static str, usize, Option<f64>, &'t [f64], f64);

/// A training run's figures: AU, samples/s, read MiB/s and the step wait, each with its
/// epochs' values where the run stored them.
fn train_measures(t: &TrainRecord) -> Vec<Measure> {
    let e = &t.epoch;
    let figures: [Figure; 5] = [
        ("AU", "%", 1, t.au, &e.au, 100.0),
        ("samples/s", "samples/s", 1, t.samples_per_s, &e.samples_per_s, 1.0),
        ("read", "MiB/s", 1, t.read_mib_s, &e.read_mib_s, 1.0),
        ("step wait p50", "ms", 3, t.wait_p50_s, &e.wait_p50_s, 1000.0),
        ("step wait p99", "ms", 3, t.wait_p99_s, &e.wait_p99_s, 1000.0),
    ];
    figures
        .into_iter()
        .filter_map(|(figure, unit, decimals, value, each, times)| {
            Some(Measure {
                figure,
                unit,
                decimals,
                value: finite(value)? * times,
                within: each.iter().filter(|x| x.is_finite()).map(|x| x * times).collect(),
                of: "epochs",
            })
        })
        .collect()
}

/// A checkpoint run's figures from its phases, each checkpoint a sample: the slowest rank's
/// throughput and duration of each write and read (DLIO's minimum and maximum over ranks),
/// and the recovery (the first read's duration).
fn checkpoint_measures(r: &RunRecord) -> Vec<Measure> {
    use crate::train::checkpoint::Phase;
    let phases = |op: Op| -> Vec<Phase> {
        r.phases
            .iter()
            .filter(|p| p.op == op && !p.tasks.is_empty())
            .map(|p| Phase { tasks: p.tasks.clone() })
            .collect()
    };
    let gib = (1u64 << 30) as f64;
    let mut out = Vec::new();
    for (op, of, rate, duration) in [
        (Op::Write, "checkpoints written", "write, slowest rank", "write duration, slowest rank"),
        (Op::Read, "checkpoints read", "read, slowest rank", "read duration, slowest rank"),
    ] {
        let each = phases(op);
        if each.is_empty() {
            continue;
        }
        let rates: Vec<f64> = each.iter().map(|p| p.min_rate() / gib).collect();
        let secs: Vec<f64> = each.iter().map(Phase::max_secs).collect();
        for (figure, unit, decimals, within) in [(rate, "GiB/s", 3, rates), (duration, "s", 3, secs)] {
            let value = within.iter().sum::<f64>() / within.len() as f64;
            out.push(Measure { figure, unit, decimals, value, within, of });
        }
        if op == Op::Read {
            let value = each[0].max_secs();
            out.push(Measure { figure: "recovery", unit: "s", decimals: 3, value, within: Vec::new(), of });
        }
    }
    out
}

/// A side's runs of one identity.
struct Group<'a> {
    kind: Kind,
    identity: Vec<(&'static str, String)>,
    runs: Vec<&'a RunRecord>,
}

impl Group<'_> {
    /// The identity without the target: what must agree for two groups to be set side by side.
    fn workload(&self) -> &[(&'static str, String)] {
        &self.identity[..self.identity.len() - 1]
    }

    fn name(&self) -> String {
        self.runs[0].name.clone().unwrap_or_else(|| format!("{:?}", self.kind).to_lowercase())
    }

    fn measures(&self) -> Vec<Vec<Measure>> {
        self.runs
            .iter()
            .map(|r| match self.kind {
                Kind::Train => trained(r).map_or_else(Vec::new, |t| train_measures(&t)),
                Kind::Checkpoint => checkpoint_measures(r),
            })
            .collect()
    }
}

/// A side's completed training and checkpoint runs, by identity, in the order first seen.
fn groups(runs: &[RunRecord]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for r in runs.iter().filter(|r| r.status == Status::Ok) {
        let Some(t) = r.training() else { continue };
        let (k, identity) = (kind(&t), identity(r, &t));
        match out.iter_mut().find(|g| g.kind == k && g.identity == identity) {
            Some(g) => g.runs.push(r),
            None => out.push(Group { kind: k, identity, runs: vec![r] }),
        }
    }
    out
}

/// A side's samples of a figure and what they are: a value per run where it has several
/// runs, else its one run's epochs or checkpoints, else that run's one value.
fn samples(ms: &[&Measure]) -> (Vec<f64>, String) {
    match ms {
        [one] if one.within.len() >= 2 => (one.within.clone(), format!("{} {} of 1 run", one.within.len(), one.of)),
        [one] => (vec![one.value], "1 run: a single sample".into()),
        many => (many.iter().map(|m| m.value).collect(), format!("{} runs", many.len())),
    }
}

/// A side's mean with its 95% interval ("93.1 ± 1.2"), or as the single sample it is.
fn with_interval(xs: &[f64], decimals: usize) -> String {
    let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    match crate::stats::mean_interval(xs) {
        Some(i) => format!("{mean:.decimals$} {}", crate::stats::around(i.value, i.lo, i.hi, decimals)),
        None if xs.len() >= 2 => format!("{mean:.decimals$} ({})", crate::stats::UNBOUNDED),
        None => format!("{mean:.decimals$}"),
    }
}

/// The lowest and highest rank's AU over a side's runs, in percent.
fn rank_spread(runs: &[&RunRecord]) -> Option<String> {
    let aus: Vec<f64> = runs.iter().filter_map(|r| trained(r)).flat_map(|t| t.rank_au.clone()).collect();
    let lo = aus.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = aus.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (!aus.is_empty()).then(|| format!("{:.1} to {:.1}", lo * 100.0, hi * 100.0))
}

/// The identity line: the settings in which two groups differ, each side's value named.
fn differences(a: Side, ga: &Group, b: Side, gb: &Group) -> String {
    let said: Vec<String> = ga
        .identity
        .iter()
        .zip(&gb.identity)
        .filter(|(x, y)| x.1 != y.1)
        .map(|((setting, x), (_, y))| format!("{setting} ({}: {x}, {}: {y})", a.name, b.name))
        .collect();
    match said.is_empty() {
        true => "what differs: nothing of the workload, the accelerators, the hosts or the target".into(),
        false => format!("what differs: {}", said.join(", ")),
    }
}

/// Each run's measure of `figure`, where it has one.
fn of<'m>(side: &'m [Vec<Measure>], figure: &str) -> Vec<&'m Measure> {
    side.iter().filter_map(|run| run.iter().find(|m| m.figure == figure)).collect()
}

/// The table of one pair of groups: a row per figure, each side's mean with its interval
/// (or said a single sample), the ratio A / B with its interval and the verdict.
fn pair_table(a: Side, ga: &Group, b: Side, gb: &Group) -> (Table, Vec<Finding>) {
    let (na, nb) = (ga.name(), gb.name());
    let what = if na == nb { na } else { format!("{na} against {nb}") };
    let mut t = Table::new(
        format!("{} against {}: {what}", a.name, b.name),
        &["figure", "unit", "A", "A samples", "B", "B samples", "A/B", "95% low", "95% high", "verdict"],
    );
    t.notes.push(differences(a, ga, b, gb));
    let (ma, mb) = (ga.measures(), gb.measures());
    let mut figures: Vec<(&str, &str, usize)> = Vec::new();
    for m in ma.iter().chain(&mb).flatten() {
        if !figures.iter().any(|f| f.0 == m.figure) {
            figures.push((m.figure, m.unit, m.decimals));
        }
    }
    let mut findings = Vec::new();
    for (figure, unit, decimals) in figures {
        let (sa, sb) = (of(&ma, figure), of(&mb, figure));
        let side = |ms: &[&Measure]| match ms.is_empty() {
            true => (Cell::Empty, Cell::text("not measured"), Vec::new()),
            false => {
                let (xs, said) = samples(ms);
                (Cell::text(with_interval(&xs, decimals)), Cell::text(said), xs)
            }
        };
        let ((ca, sa_said, xa), (cb, sb_said, xb)) = (side(&sa[..]), side(&sb[..]));
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
        let ratio = (!xa.is_empty() && !xb.is_empty() && mean(&xb) > 0.0).then(|| mean(&xa) / mean(&xb));
        let interval = crate::stats::ratio_interval(&xa, &xb);
        let verdict = match (&interval, ratio) {
            (_, None) => String::new(),
            (None, Some(_)) => "a single sample on a side: no interval, no verdict".into(),
            (Some(r), Some(_)) => match crate::stats::verdict(r) {
                crate::stats::Verdict::Higher => format!("higher on {}", a.name),
                crate::stats::Verdict::Lower => format!("higher on {}", b.name),
                crate::stats::Verdict::NoDifference => "no difference beyond the noise".into(),
            },
        };
        if figure == "AU" {
            if let (Some(r), Some(i)) = (ratio, interval) {
                findings.push(Finding {
                    text: format!(
                        "{what}: {}'s AU is {} times {}'s ({}): {verdict}",
                        a.name,
                        crate::stats::spread_text(r, i.lo, i.hi),
                        b.name,
                        i.method.name()
                    ),
                    value: r,
                    runs: ga.runs.iter().chain(&gb.runs).filter_map(|r| r.id).collect(),
                    ..Default::default()
                });
            }
        }
        t.rows.push(vec![
            Cell::text(figure),
            Cell::text(unit),
            ca,
            sa_said,
            cb,
            sb_said,
            Cell::num(ratio, 3),
            Cell::num(interval.map(|r| r.lo), 3),
            Cell::num(interval.map(|r| r.hi), 3),
            Cell::text(verdict),
        ]);
    }
    if ga.kind == Kind::Train {
        let (lo_a, lo_b) = (rank_spread(&ga.runs), rank_spread(&gb.runs));
        if lo_a.is_some() || lo_b.is_some() {
            let cell = |s: Option<String>| s.map_or(Cell::Empty, Cell::text);
            let mut row = vec![Cell::text("AU over ranks"), Cell::text("% lowest to highest"), cell(lo_a)];
            row.extend([Cell::text("every rank"), cell(lo_b), Cell::text("every rank")]);
            row.extend([Cell::Empty, Cell::Empty, Cell::Empty, Cell::Empty]);
            t.rows.insert(1, row);
        }
        findings.extend([(a, ga), (b, gb)].into_iter().filter_map(|(side, g)| threshold_finding(side, g)));
    }
    (t, findings)
}

/// Whether a side's mean AU reaches its workload's threshold.
fn threshold_finding(side: Side, g: &Group) -> Option<Finding> {
    let t = g.runs.iter().find_map(|r| trained(r)?.au_target)?;
    let aus: Vec<f64> = g.runs.iter().filter_map(|r| trained(r)?.au).collect();
    let au = aus.iter().sum::<f64>() / aus.len().max(1) as f64;
    let verdict = if au >= t { "reaches" } else { "falls short of" };
    Some(Finding {
        text: format!(
            "{}: {} at {:.1}% AU {verdict} the {:.0}% threshold ({} run{})",
            side.name,
            g.name(),
            au * 100.0,
            t * 100.0,
            aus.len(),
            if aus.len() == 1 { "" } else { "s" }
        ),
        value: au * 100.0,
        runs: g.runs.iter().filter_map(|r| r.id).collect(),
        ..Default::default()
    })
}

/// Groups set side by side: those of one workload (all but the target agree), then, where a
/// side has a single group of a kind left and so has the other, those two, the identity line
/// naming how they differ. The rest are set apart.
fn pairs<'g, 'r>(fa: &'g [Group<'r>], fb: &'g [Group<'r>]) -> Vec<(&'g Group<'r>, &'g Group<'r>)> {
    let mut out: Vec<(&Group, &Group)> = Vec::new();
    for ga in fa {
        if let Some(gb) = fb.iter().find(|gb| gb.kind == ga.kind && gb.workload() == ga.workload()) {
            out.push((ga, gb));
        }
    }
    for k in [Kind::Train, Kind::Checkpoint] {
        let left = |side: &'g [Group<'r>], a: bool| -> Vec<&'g Group<'r>> {
            side.iter()
                .filter(|g| g.kind == k && !out.iter().any(|p| std::ptr::eq(if a { p.0 } else { p.1 }, *g)))
                .collect()
        };
        if let ([ga], [gb]) = (left(fa, true).as_slice(), left(fb, false).as_slice()) {
            out.push((*ga, *gb));
        }
    }
    out
}

/// `compare` of the training and checkpoint runs of two sides (`analysis::compare` gives
/// each kind of run to its own comparison): each pair of like runs by their own figures (see
/// [`pair_table`]); runs of one side only set apart; other runs passed over. `None` when
/// neither side holds such a run.
pub fn compare(a: Side, b: Side) -> Option<Report> {
    if !a.runs.iter().chain(b.runs).any(own_figures) {
        return None;
    }
    let (fa, fb) = (groups(a.runs), groups(b.runs));
    let paired = pairs(&fa, &fb);
    let mut report = Report::default();
    for (ga, gb) in &paired {
        let (t, findings) = pair_table(a, ga, b, gb);
        report.tables.push(t);
        report.findings.extend(findings);
    }
    let mut apart = Table::new("set apart: on one side only", &["side", "runs", "of", "target"]);
    for (side, mine, first) in [(a.name, &fa, true), (b.name, &fb, false)] {
        for g in mine.iter().filter(|g| !paired.iter().any(|p| std::ptr::eq(if first { p.0 } else { p.1 }, *g))) {
            let target = g.identity.last().map_or(String::new(), |t| t.1.clone());
            apart.rows.push(vec![
                Cell::text(side),
                Cell::Int(g.runs.len() as u64),
                Cell::text(g.name()),
                Cell::text(target),
            ]);
        }
    }
    if !apart.rows.is_empty() {
        report.tables.push(apart);
    }
    Some(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: i64, k: u32, au: f64) -> RunRecord {
        let mut r = RunRecord::assemble(Default::default(), Default::default(), Default::default());
        r.id = Some(id);
        r.label = Some("lustre".into());
        for (key, v) in [
            ("workload", "unet3d".to_string()),
            ("accelerators", k.to_string()),
            ("au", au.to_string()),
            ("samples_per_s", "10".into()),
            ("au_target", "0.9".into()),
        ] {
            r.tool_params.insert(format!("train.{key}"), v);
        }
        r
    }

    #[test]
    fn au_against_accelerators_with_the_threshold_drawn_and_the_most_that_pass_found() {
        let runs = [run(1, 1, 0.99), run(2, 2, 0.95), run(3, 2, 0.93), run(4, 4, 0.6)];
        let s = study(&runs).expect("training runs make the study");
        let au = &s.report.charts[0];
        assert_eq!(au.references, [("AU threshold 90%".to_string(), 90.0)]);
        let (name, points) = &au.series[0];
        assert_eq!(name, "unet3d on lustre");
        assert_eq!(points.len(), 3, "one point per accelerator count: {points:?}");
        assert!((points[1].1 - 94.0).abs() < 1e-9, "the mean of a count's runs");
        assert_eq!(s.report.findings[0].value, 2.0);
        assert!(study(&[RunRecord::assemble(Default::default(), Default::default(), Default::default())]).is_none());
    }

    fn on(label: &str, r: RunRecord, epoch_au: &str) -> RunRecord {
        let mut r = RunRecord { label: Some(label.into()), ..r };
        r.tool_params.insert("train.epoch_au".into(), epoch_au.into());
        r
    }

    /// One run a side: AU compared over one side's epochs, the other said a single sample, the
    /// identity line naming the target and the accelerators; two runs a side: over runs.
    #[test]
    fn train_runs_are_compared_by_au_with_intervals_where_they_hold_samples() {
        let a = [on("lustre", run(1, 4, 0.91), "0.90,0.91,0.92")];
        let b = [on("gpfs", run(2, 8, 0.6), "0.6")];
        let report = compare(Side { name: "a", runs: &a }, Side { name: "b", runs: &b }).expect("compared");
        let t = &report.tables[0];
        assert!(t.notes[0].contains("accelerators (a: 4, b: 8)"), "{:?}", t.notes);
        assert!(t.notes[0].ends_with("target (a: lustre, b: gpfs)"), "{:?}", t.notes);
        let au = &t.rows[0];
        assert_eq!(au[0], Cell::text("AU"));
        assert_eq!(au[3], Cell::text("3 epochs of 1 run"));
        assert_eq!(au[5], Cell::text("1 run: a single sample"));
        assert_eq!(au[9], Cell::text("a single sample on a side: no interval, no verdict"));
        assert!(report.findings.iter().any(|f| f.text.contains("60.0% AU falls short of the 90% threshold")));
        let a2 = [on("lustre", run(1, 4, 0.91), ""), on("lustre", run(3, 4, 0.93), "")];
        let b2 = [on("gpfs", run(2, 4, 0.6), ""), on("gpfs", run(4, 4, 0.62), "")];
        let report = compare(Side { name: "a", runs: &a2 }, Side { name: "b", runs: &b2 }).unwrap();
        let au = &report.tables[0].rows[0];
        assert_eq!((&au[3], &au[9]), (&Cell::text("2 runs"), &Cell::text("higher on a")));
        assert!(report.tables[0].notes[0].ends_with("target (a: lustre, b: gpfs)"));
        let none = RunRecord::assemble(Default::default(), Default::default(), Default::default());
        let none = std::slice::from_ref(&none);
        assert!(compare(Side { name: "a", runs: none }, Side { name: "b", runs: none }).is_none());
    }

    /// The record JSON of the old shape: `training` taken out, the text in `tool_params` left.
    fn old_shape(r: &RunRecord) -> RunRecord {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("training").expect("typed figures to take out");
        serde_json::from_value(v).unwrap()
    }

    /// A run filed before the record held its figures typed compares, and charts, with the
    /// same figures as the same run filed now.
    #[test]
    fn a_run_of_the_old_shape_compares_with_the_same_figures_as_its_typed_twin() {
        use crate::analysis::fixtures::trained;
        let a = [trained(1, "lustre", 4, (0.93, &[0.91, 0.95, 0.93], &[0.92, 0.94]))];
        let b = [trained(2, "gpfs", 8, (0.61, &[0.6], &[0.6, 0.62])), trained(3, "gpfs", 8, (0.63, &[0.6], &[0.63]))];
        fn side<'r>(name: &'r str, runs: &'r [RunRecord]) -> Side<'r> {
            Side { name, runs }
        }
        let now = compare(side("a", &a), side("b", &b)).expect("compared");
        let (old_a, old_b): (Vec<RunRecord>, Vec<RunRecord>) =
            (a.iter().map(old_shape).collect(), b.iter().map(old_shape).collect());
        assert_eq!(compare(side("a", &old_a), side("b", &old_b)).as_ref(), Some(&now));
        let t = &now.tables[0];
        assert_eq!(
            (&t.rows[0][0], &t.rows[0][3], &t.rows[0][5]),
            (&Cell::text("AU"), &Cell::text("3 epochs of 1 run"), &Cell::text("2 runs"))
        );
        assert_eq!((&t.rows[1][0], &t.rows[1][2]), (&Cell::text("AU over ranks"), &Cell::text("92.0 to 94.0")));
        assert!(t.notes[0].contains("accelerators (a: 4, b: 8)"), "{:?}", t.notes);
        let all: Vec<RunRecord> = a.iter().chain(&b).cloned().collect();
        let old: Vec<RunRecord> = old_a.into_iter().chain(old_b).collect();
        assert_eq!(study(&old).map(|s| s.report), study(&all).map(|s| s.report));
    }

    /// Where a run's text disagrees with its typed figures, compare says the typed ones.
    #[test]
    fn compare_reads_the_typed_figures_where_the_text_disagrees() {
        use crate::analysis::fixtures::trained;
        let mut a = trained(1, "lustre", 4, (0.93, &[0.91, 0.95, 0.93], &[0.93]));
        for (key, said) in
            [("au", "0.1"), ("epoch_au", "0.1,0.1,0.1"), ("accelerators", "16"), ("workload", "resnet50")]
        {
            a.tool_params.insert(format!("train.{key}"), said.into());
        }
        let b = [trained(2, "gpfs", 4, (0.6, &[0.6, 0.62], &[0.6]))];
        let report = compare(Side { name: "a", runs: &[a] }, Side { name: "b", runs: &b }).expect("compared");
        let t = &report.tables[0];
        assert_eq!(t.notes[0], "what differs: target (a: lustre, b: gpfs)", "one workload, 4 accelerators a side");
        assert!(t.rows[0][2].to_string().starts_with("93.0 "), "{:?}", t.rows[0]);
        assert!(
            report.findings.iter().any(|f| f.text.contains("93.0% AU reaches the 90% threshold")),
            "{:?}",
            report.findings
        );
    }
}
