//! Groups of runs: a sweep over team sizes, sweeps of several systems on one chart, and a
//! survey's characterization with what it finds.

use super::document::mib;
use super::figures::{cache_notes, coefficient_of_variation, mean_of, mean_of_samples, mean_over_iterations, random};
use super::{guard, scaling, study};
use super::{interval_cell, Cell, Chart, Finding, Report, Table};
use crate::plan::Role;
use crate::record::{imported_from, RunRecord, Status};
use crate::spec::Op;
use crate::units::mib_per_s;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures;
    use crate::spec::Workload;

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
}
