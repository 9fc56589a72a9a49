//! Sides set like with like: `compare` of two sides, and `recommend` of the best side per
//! workload among several.

use super::figures::{coefficient_of_variation, mean_of_samples, mean_over_iterations};
use super::{objects, outliers};
use super::{Cell, Finding, Report, Table};
use crate::record::train::Training;
use crate::record::{RunRecord, Status};
use crate::spec::{Shape, Workload};
use crate::units::mib_per_s;
use std::borrow::Cow;

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

/// What a run is, as `compare` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// Bytes through files (`run`, and imported IOR, fio, ...).
    Data,
    /// Items in trees of directories (`meta`, imported mdtest).
    Metadata,
    /// Bytes through an object store (the s3 engine).
    Objects,
    /// Emulated accelerators fed (`train`, imported DLIO).
    Train,
    /// A model's checkpoint written and read back (`checkpoint`).
    Checkpoint,
}

impl RunKind {
    /// The kind of a run.
    pub fn of(r: &RunRecord) -> RunKind {
        match (r.training().as_deref(), &r.workload.shape) {
            (Some(Training::Train(_)), _) => RunKind::Train,
            (Some(Training::Checkpoint(_)), _) => RunKind::Checkpoint,
            (None, Shape::Meta(_)) => RunKind::Metadata,
            (None, Shape::Data(_)) if objects::is_object(&r.workload) => RunKind::Objects,
            (None, Shape::Data(_)) => RunKind::Data,
        }
    }
}

/// One way of comparing two sides, and the kinds of run it reads.
struct Comparison {
    /// The kinds it compares, with each other as well (an object run beside a file run).
    kinds: &'static [RunKind],
    /// The report of two sides' runs of those kinds; `None` when it has nothing to say.
    compare: fn(Side, Side) -> Option<Report>,
    /// Whether it lists, set apart, its runs on one side when the other side has none of its
    /// kinds. Either way it runs when its kinds are all that the sides hold.
    one_sided: bool,
}

/// How each kind of run is compared, the reports joined in this order: a new kind is an
/// entry here (or a kind added to one).
const COMPARISONS: [Comparison; 2] = [
    // By their own figures: AU, samples/s, the slowest rank's; a training run's read phase
    // says nothing of the accelerators it fed.
    Comparison { kinds: &[RunKind::Train, RunKind::Checkpoint], compare: super::train::compare, one_sided: true },
    // By their phases' rates.
    Comparison {
        kinds: &[RunKind::Data, RunKind::Metadata, RunKind::Objects],
        compare: |a, b| Some(by_phases(a, b)),
        one_sided: false,
    },
];

impl Comparison {
    /// The runs of `runs` it compares: all of them borrowed, or a copy of its own.
    fn runs_of<'r>(&self, runs: &'r [RunRecord]) -> Cow<'r, [RunRecord]> {
        let mine = |r: &RunRecord| self.kinds.contains(&RunKind::of(r));
        match runs.iter().all(mine) {
            true => Cow::Borrowed(runs),
            false => Cow::Owned(runs.iter().filter(|r| mine(r)).cloned().collect()),
        }
    }
}

/// Two sides set like with like, each kind of run by its own comparison ([`COMPARISONS`]),
/// their reports joined.
pub fn compare(a: Side, b: Side) -> Report {
    let every = a.runs.len() + b.runs.len();
    let mut report: Option<Report> = None;
    for c in &COMPARISONS {
        let (ra, rb) = (c.runs_of(a.runs), c.runs_of(b.runs));
        let (na, nb) = (ra.len(), rb.len());
        if !((na > 0 && nb > 0) || (c.one_sided && na + nb > 0) || na + nb == every) {
            continue;
        }
        let Some(more) = (c.compare)(Side { name: a.name, runs: &ra }, Side { name: b.name, runs: &rb }) else {
            continue;
        };
        report = Some(match report {
            Some(r) => r.and(more),
            None => more,
        });
    }
    report.unwrap_or_default()
}

/// Two sides' runs compared by their phases: for each workload (key and team size) and op
/// both have, their means over runs, the ratio A / B with its interval over the runs
/// (docs/findings.md) and the verdict in one line; workloads only one side has are listed
/// apart, and where the two sides ran one shape differently (same label, different keys) a
/// finding names how.
fn by_phases(a: Side, b: Side) -> Report {
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
        findings.extend(slow_system(sides, &means, workload, &key.op));
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

/// The system among `means` (a side's name, mean, figures and group, per side that ran
/// `workload` `op`) that stands apart, slow, beyond its own runs' noise.
fn slow_system(sides: &[Side], means: &[(&str, f64, &Vec<f64>, &Figures)], workload: &str, op: &str) -> Vec<Finding> {
    let members: Vec<(String, f64)> = means.iter().map(|m| (m.0.to_string(), m.1)).collect();
    let (slow, median) = outliers::slow(&members);
    slow.into_iter()
        .filter_map(|(name, v)| {
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
                    op,
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
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{run_at, trained};
    use crate::analysis::sweep;
    use crate::record::fixtures;
    use crate::spec::Op;

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

    /// Every kind is read by exactly one comparison.
    #[test]
    fn each_kind_of_run_has_one_comparison() {
        use RunKind::*;
        for kind in [Data, Metadata, Objects, Train, Checkpoint] {
            assert_eq!(COMPARISONS.iter().filter(|c| c.kinds.contains(&kind)).count(), 1, "{kind:?}");
        }
        let mut meta = run_at(1, 1.0, 1.0);
        meta.workload.shape = Shape::Meta(Default::default());
        let ckpt = crate::record::train::Training::Checkpoint(Default::default());
        let checkpoint = RunRecord { training: Some(ckpt), ..run_at(2, 1.0, 1.0) };
        let kinds = [&run_at(3, 1.0, 1.0), &meta, &checkpoint, &trained(4, "x", 1, (0.9, &[], &[]))].map(RunKind::of);
        assert_eq!(kinds, [Data, Metadata, Checkpoint, Train]);
    }

    /// Sides of mixed kinds, as `compare` has always set them: training runs by their own
    /// figures (those of one side only set apart) and the other runs by their phases, only
    /// when both sides hold some; where the sides hold nothing but those, by their phases.
    #[test]
    fn sides_of_mixed_kinds_compare_each_kind_by_its_own_figures() {
        let titles = |r: &Report| r.tables.iter().map(|t| t.title.clone()).collect::<Vec<_>>();
        fn side<'r>(name: &'r str, runs: &'r [RunRecord]) -> Side<'r> {
            Side { name, runs }
        }
        let train = trained(1, "lustre", 4, (0.93, &[0.91, 0.95], &[0.93]));
        let (data, more) = (run_at(2, 200.0, 100.0), run_at(3, 100.0, 50.0));
        // Training on one side, data on the other: the training run set apart, the data run
        // not compared with anything.
        let report = compare(side("a", std::slice::from_ref(&train)), side("b", std::slice::from_ref(&data)));
        assert_eq!(titles(&report), ["set apart: on one side only"]);
        assert_eq!(report.tables[0].rows.len(), 1);
        assert_eq!(report.tables[0].rows[0][0], Cell::text("a"));
        // Training and data on one side, data on the other: both comparisons, training first.
        let both = [train.clone(), data.clone()];
        let report = compare(side("a", &both), side("b", std::slice::from_ref(&more)));
        assert_eq!(titles(&report), ["set apart: on one side only", "a against b"]);
        assert_eq!(report.tables[1].rows.len(), 2, "write and read");
        // A checkpoint run against a training run: neither set beside the other.
        let ckpt = crate::record::train::Training::Checkpoint(Default::default());
        let checkpoint = RunRecord { training: Some(ckpt), ..run_at(4, 1.0, 1.0) };
        let report = compare(side("a", std::slice::from_ref(&checkpoint)), side("b", std::slice::from_ref(&train)));
        assert_eq!(titles(&report), ["set apart: on one side only"]);
        assert_eq!(report.tables[0].rows.len(), 2);
        // Data alone, on one side only: set apart by the phases' comparison.
        let report = compare(side("a", std::slice::from_ref(&data)), side("b", &[]));
        assert_eq!(titles(&report), ["a against b", "set apart: on one side only"]);
    }
}
