//! A target survey (`iosurvey targets`, docs/methodology.md "Target surveys"): the same
//! workload on each target alone, then on k targets at once. Per target: its mean rate over
//! its runs with their interval, and its share of the median target. Across targets: min,
//! median, max and spread ((max - min) / max), and each target outside a robust band named
//! with how far, when its runs' interval lies outside the band too. Targets behind one adapter (the sysfs path up to its host, port or
//! controller) are set side by side, so a slow adapter stands out from a slow LUN. The k at
//! once table gives scaling efficiency against k x the median single target.

use super::outliers;
use super::{Cell, Chart, Finding, Report, Table};
use crate::record::RunRecord;
use crate::spec::Op;
use crate::stats::mean_interval;

/// A target stands apart beyond this share of the median, as well as beyond three scaled
/// MADs: tighter than a task's 20% (outliers::MATERIAL), since LUNs of one model are built
/// alike and the paper's slow LUN stood 15% below its peers.
pub const MATERIAL: f64 = 0.10;

pub use crate::study::targets::{counts, Role};

/// A run's rate in `op`, MiB/s: its phases of that op, mean over iterations.
fn rate(r: &RunRecord, op: Op) -> Option<f64> {
    let v: Vec<f64> = r.phases.iter().filter(|p| p.op == op).filter_map(|p| p.figures.bandwidth).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64 / 1048576.0)
}

/// One target's runs alone.
struct Member {
    label: String,
    adapter: Option<String>,
    rates: Vec<f64>,
    ids: Vec<i64>,
}

impl Member {
    fn mean(&self) -> f64 {
        self.rates.iter().sum::<f64>() / self.rates.len().max(1) as f64
    }
}

fn interval_cells(rates: &[f64]) -> [Cell; 2] {
    match mean_interval(rates) {
        // A rate is never below zero, whatever a t-interval of two runs says.
        Some(i) => [Cell::num(Some(i.lo.max(0.0)), 1), Cell::num(Some(i.hi), 1)],
        None => [Cell::Empty, Cell::Empty],
    }
}

/// How a number of runs is said: "a single run" or "3 runs".
fn runs_said(n: usize) -> String {
    match n {
        1 => "a single run".into(),
        n => format!("{n} runs"),
    }
}

/// The survey `number`'s tables, findings and charts, per op its runs measured.
pub fn report(number: i64, records: &[RunRecord]) -> Report {
    let mut report = Report::default();
    let first = records.first();
    report.heading.push(format!(
        "target survey t{number}: {} runs{}",
        records.len(),
        first.map(|r| format!(", {}", r.workload.label())).unwrap_or_default()
    ));
    let mut ops: Vec<Op> = Vec::new();
    for p in records.iter().flat_map(|r| &r.phases) {
        if !ops.contains(&p.op) {
            ops.push(p.op);
        }
    }
    for op in ops {
        op_section(&mut report, number, records, op);
    }
    let failed: Vec<&RunRecord> = records.iter().filter(|r| r.status != crate::record::Status::Ok).collect();
    if !failed.is_empty() {
        report.heading.push(format!(
            "INCOMPLETE: {} of its runs failed and are left out of every figure (listed at the end)",
            failed.len()
        ));
    }
    report.footer.extend(failed.iter().map(|r| {
        format!(
            "run {} ({}) failed: {}",
            r.id.unwrap_or(0),
            r.name.as_deref().unwrap_or("-"),
            r.error.as_deref().unwrap_or("?")
        )
    }));
    report
}

fn op_section(report: &mut Report, number: i64, records: &[RunRecord], op: Op) {
    let name = op.name();
    let (members, mut together) = members(records, op);
    if members.is_empty() {
        return;
    }
    let means: Vec<f64> = members.iter().map(Member::mean).collect();
    let median = crate::measure::median(&means).unwrap_or(0.0);
    let band = outliers::band(&means, MATERIAL);
    let ids: Vec<i64> = members.iter().flat_map(|m| m.ids.clone()).collect();
    let (per, apart) = per_target(number, &name, &members, median, band);
    report.tables.push(per);
    // Across targets.
    let (min, max) = means.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let spread = if max > 0.0 { 100.0 * (max - min) / max } else { 0.0 };
    let mut across = Table::new(
        format!("t{number} {name}: across {} targets (MiB/s)", members.len()),
        &["min", "median", "max", "spread %"],
    );
    across.rows.push(vec![
        Cell::num(Some(min), 1),
        Cell::num(Some(median), 1),
        Cell::num(Some(max), 1),
        Cell::num(Some(spread), 0),
    ]);
    report.tables.push(across);
    let fewest = members.iter().map(|m| m.rates.len()).min().unwrap_or(0);
    report.findings.push(Finding {
        text: format!(
            "t{number} {name}: {} targets from {min:.1} to {max:.1} MiB/s, median {median:.1}: a spread of {spread:.0}% ((max - min) / max; at least {} each)",
            members.len(),
            runs_said(fewest)
        ),
        value: spread,
        runs: ids.clone(),
        ..Default::default()
    });
    for (m, how) in &apart {
        let noise = match mean_interval(&m.rates) {
            Some(i) => format!("its {} runs: {:.1} to {:.1} MiB/s at 95%", m.rates.len(), i.lo.max(0.0), i.hi),
            None => "a single run: no interval".into(),
        };
        report.findings.push(Finding {
            text: format!("t{number} {name}: {}: {how} ({:.1} MiB/s; {noise})", m.label, m.mean()),
            value: m.mean(),
            runs: m.ids.clone(),
            ..Default::default()
        });
    }
    if apart.is_empty() && band.is_some() {
        report.findings.push(Finding {
            text: format!("t{number} {name}: no target stands outside the band around the median"),
            value: median,
            runs: ids.clone(),
            ..Default::default()
        });
    }
    adapters(report, number, &name, &members, median);
    scaling(report, number, &name, &mut together, median);
    charts(report, number, &name, &members, (median, band));
}

/// Each target alone on a table titled by survey `number` and op `name`: its mean, interval
/// and share of the `median`, and whether it stands outside the `band`; and those that do,
/// with how far.
fn per_target<'m>(
    number: i64,
    name: &str,
    members: &'m [Member],
    median: f64,
    band: Option<(f64, f64)>,
) -> (Table, Vec<(&'m Member, String)>) {
    let mut per = Table::new(
        format!("t{number} {name}: each target alone (MiB/s)"),
        &["target", "runs", "mean", "95% low", "95% high", "% of median", "adapter", "stands apart"],
    );
    let mut apart = Vec::new();
    for m in members {
        let mean = m.mean();
        let share = 100.0 * mean / median;
        let outside = outside(m, median, band);
        if let Some(how) = &outside {
            apart.push((m, how.clone()));
        }
        let [lo, hi] = interval_cells(&m.rates);
        per.rows.push(vec![
            Cell::text(m.label.clone()),
            Cell::Int(m.rates.len() as u64),
            Cell::num(Some(mean), 1),
            lo,
            hi,
            Cell::num(Some(share), 0),
            Cell::text(m.adapter.clone().unwrap_or_else(|| "-".into())),
            Cell::text(outside.unwrap_or_default()),
        ]);
    }
    match band {
        Some((_, half)) => per.notes.push(format!(
            "the band: the median {median:.1} MiB/s +- {half:.1} (the larger of 3 scaled median absolute deviations and {:.0}% of the median)",
            100.0 * MATERIAL
        )),
        None => per.notes.push(format!("fewer than {} targets: none is judged to stand apart", outliers::AT_LEAST)),
    }
    (per, apart)
}

/// The targets k at once, by k: their rates and runs.
type Together = Vec<(usize, Vec<f64>, Vec<i64>)>;

/// The rate of each target alone on `op` over its runs, and of the targets k at once.
fn members(records: &[RunRecord], op: Op) -> (Vec<Member>, Together) {
    let mut members: Vec<Member> = Vec::new();
    let mut together: Together = Vec::new();
    // A failed run's figure is of the part it ran: the footer names it, no table counts it.
    for r in records.iter().filter(|r| r.status == crate::record::Status::Ok) {
        let (Some(role), Some(rate)) = (r.name.as_deref().and_then(Role::of), rate(r, op)) else { continue };
        let id = r.id.unwrap_or(0);
        match role {
            Role::Alone(label) => {
                let adapter = r.env.devices.first().and_then(|d| d.adapter());
                match members.iter_mut().find(|m| m.label == label) {
                    Some(m) => {
                        m.rates.push(rate);
                        m.ids.push(id);
                    }
                    None => members.push(Member { label, adapter, rates: vec![rate], ids: vec![id] }),
                }
            }
            Role::Together(k) => match together.iter_mut().find(|t| t.0 == k) {
                Some(t) => {
                    t.1.push(rate);
                    t.2.push(id);
                }
                None => together.push((k, vec![rate], vec![id])),
            },
        }
    }
    (members, together)
}

/// How far target `m` stands outside the `band` around the `median`, when it does.
fn outside(m: &Member, median: f64, band: Option<(f64, f64)>) -> Option<String> {
    let mean = m.mean();
    // Outside the band, and so is its interval when it has one: a target whose own runs
    // reach into the band is within its noise.
    let beyond = |x: f64, half: f64| (x - median).abs() > half && (x < median) == (mean < median);
    let interval = mean_interval(&m.rates);
    band.filter(|&(_, half)| {
        beyond(mean, half) && interval.as_ref().is_none_or(|i| beyond(i.lo, half) && beyond(i.hi, half))
    })
    .map(|_| {
        let how = 100.0 * (mean - median).abs() / median;
        let side = if mean < median { "below" } else { "above" };
        // Whole percents, unless rounding would say 100% below (a rate of 0).
        let decimals = usize::from((99.5..100.0).contains(&how));
        format!("{how:.decimals$}% {side} the median")
    })
}

/// Targets grouped by adapter, when some share one: a slow adapter has every target behind it
/// slow; a slow LUN is alone among its adapter's.
fn adapters(report: &mut Report, number: i64, name: &str, members: &[Member], median: f64) {
    let mut groups: Vec<(String, Vec<&Member>)> = Vec::new();
    for m in members {
        let Some(a) = &m.adapter else { continue };
        match groups.iter_mut().find(|g| &g.0 == a) {
            Some(g) => g.1.push(m),
            None => groups.push((a.clone(), vec![m])),
        }
    }
    if groups.len() < 2 || groups.iter().all(|g| g.1.len() < 2) {
        return;
    }
    let mut t = Table::new(
        format!("t{number} {name}: by adapter (MiB/s)"),
        &["adapter", "targets", "median", "% of all targets' median"],
    );
    for (a, ms) in &groups {
        let means: Vec<f64> = ms.iter().map(|m| m.mean()).collect();
        let med = crate::measure::median(&means).unwrap_or(0.0);
        t.rows.push(vec![
            Cell::text(a.clone()),
            Cell::Int(ms.len() as u64),
            Cell::num(Some(med), 1),
            Cell::num(Some(100.0 * med / median), 0),
        ]);
    }
    let medians: Vec<(String, f64)> = groups
        .iter()
        .map(|(a, ms)| {
            (a.clone(), crate::measure::median(&ms.iter().map(|m| m.mean()).collect::<Vec<_>>()).unwrap_or(0.0))
        })
        .collect();
    for (a, med) in &medians {
        let others: Vec<f64> = medians.iter().filter(|(b, _)| b != a).map(|m| m.1).collect();
        let rest = crate::measure::median(&others).unwrap_or(0.0);
        if rest > 0.0 && *med < (1.0 - MATERIAL) * rest {
            report.findings.push(Finding {
                text: format!(
                    "t{number} {name}: the targets behind {a} run at {:.0}% of the other adapters' median: the adapter (or its path), not one target",
                    100.0 * med / rest
                ),
                value: *med,
                runs: Vec::new(),
                ..Default::default()
            });
        }
    }
    report.tables.push(t);
}

/// The k-at-once table: each k's mean rate against k x the median single target.
fn scaling(report: &mut Report, number: i64, name: &str, together: &mut [(usize, Vec<f64>, Vec<i64>)], median: f64) {
    if together.is_empty() {
        return;
    }
    together.sort_by_key(|t| t.0);
    let mut t = Table::new(
        format!("t{number} {name}: k targets at once (MiB/s)"),
        &["k", "runs", "mean", "95% low", "95% high", "k x median alone", "efficiency %"],
    );
    for (k, rates, _) in together.iter() {
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        let ideal = *k as f64 * median;
        let [lo, hi] = interval_cells(rates);
        t.rows.push(vec![
            Cell::Int(*k as u64),
            Cell::Int(rates.len() as u64),
            Cell::num(Some(mean), 1),
            lo,
            hi,
            Cell::num(Some(ideal), 1),
            Cell::num(Some(100.0 * mean / ideal), 0),
        ]);
    }
    if let Some((k, rates, ids)) = together.last() {
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        report.findings.push(Finding {
            text: format!(
                "t{number} {name}: {k} targets at once ran at {mean:.1} MiB/s, {:.0}% of {k} x the median single target ({})",
                100.0 * mean / (*k as f64 * median),
                runs_said(rates.len())
            ),
            value: mean,
            runs: ids.clone(),
            ..Default::default()
        });
    }
    report.tables.push(t);
    report.charts.push(Chart {
        title: format!("t{number} {name}: k targets at once"),
        x: "targets at once".into(),
        y: "MiB/s".into(),
        series: vec![
            (
                "measured (mean)".into(),
                together.iter().map(|(k, r, _)| (*k as f64, r.iter().sum::<f64>() / r.len().max(1) as f64)).collect(),
            ),
            ("k x median alone".into(), together.iter().map(|(k, _, _)| (*k as f64, *k as f64 * median)).collect()),
        ],
        errors: vec![
            together.iter().filter_map(|(k, r, _)| mean_interval(r).map(|i| (*k as f64, i.lo, i.hi))).collect(),
            Vec::new(),
        ],
        runs: together.iter().flat_map(|t| t.2.clone()).collect(),
        ..Chart::default()
    });
}

/// Sorted bars, one per target, with the median and the band as levels.
fn charts(report: &mut Report, number: i64, name: &str, members: &[Member], (median, band): (f64, Option<(f64, f64)>)) {
    let mut sorted: Vec<&Member> = members.iter().collect();
    sorted.sort_by(|a, b| a.mean().total_cmp(&b.mean()));
    let mut references = vec![("median".to_string(), median)];
    if let Some((_, half)) = band {
        references.push(("band low".into(), median - half));
        references.push(("band high".into(), median + half));
    }
    report.charts.push(Chart {
        title: format!("t{number} {name}: each target alone, slowest first"),
        x: "target".into(),
        y: "MiB/s".into(),
        series: vec![(
            "mean over its runs".into(),
            sorted.iter().enumerate().map(|(i, m)| (i as f64, m.mean())).collect(),
        )],
        bars: true,
        ticks: sorted.iter().enumerate().map(|(i, m)| (i as f64, m.label.clone())).collect(),
        errors: vec![sorted
            .iter()
            .enumerate()
            .filter_map(|(i, m)| mean_interval(&m.rates).map(|iv| (i as f64, iv.lo, iv.hi)))
            .collect()],
        references,
        runs: sorted.iter().flat_map(|m| m.ids.clone()).collect(),
        ..Chart::default()
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::device::DeviceFacts;

    fn run(id: i64, role: Role, read_mib: f64, adapter: Option<&str>) -> RunRecord {
        let mut r = crate::record::fixtures::run(None);
        r.id = Some(id);
        r.name = Some(role.name());
        r.phases.retain(|p| p.op == Op::Read);
        for p in &mut r.phases {
            p.figures.bandwidth = Some(read_mib * 1048576.0);
        }
        if let Some(a) = adapter {
            r.env.devices = vec![DeviceFacts { sysfs_path: format!("{a}/target0/block/x"), ..DeviceFacts::default() }];
        }
        r
    }

    #[test]
    fn the_slow_target_is_named_with_its_share_and_k_at_once_gets_its_efficiency() {
        let mut runs = Vec::new();
        let mut id = 0;
        for rep in 0..3 {
            for (t, base) in [100.0, 102.0, 98.0, 101.0, 40.0, 99.0].iter().enumerate() {
                id += 1;
                runs.push(run(id, Role::Alone(format!("loop{t}")), base + rep as f64, None));
            }
        }
        for (k, rate) in [(1, 100.0), (2, 190.0), (4, 300.0), (6, 420.0)] {
            id += 1;
            runs.push(run(id, Role::Together(k), rate, None));
        }
        let r = report(7, &runs);
        let text: Vec<&str> = r.findings.iter().map(|f| f.text.as_str()).collect();
        assert!(
            text.iter().any(|t| t.starts_with("t7 read: loop4: 59% below the median (41.0 MiB/s; its 3 runs: ")),
            "{text:?}"
        );
        assert_eq!(text.iter().filter(|t| t.contains("below the median") || t.contains("above the median")).count(), 1);
        let spread = r.findings.iter().find(|f| f.text.contains("spread")).unwrap();
        assert!((spread.value - 100.0 * (103.0 - 41.0) / 103.0).abs() < 1e-6, "{}", spread.text);
        let k = r.tables.iter().find(|t| t.title.contains("at once")).unwrap();
        assert_eq!(k.rows.len(), 4);
        // Median of the six means (100.0+1, 102+1, 98+1, 101+1, 41, 99+1): 100.5.
        assert_eq!(k.rows[3][6], Cell::num(Some(100.0 * 420.0 / (6.0 * 100.5)), 0));
        assert_eq!(counts(6), [1, 2, 4, 6]);
        assert_eq!(counts(4), [1, 2, 4]);
        assert_eq!(counts(1), [1]);
    }

    #[test]
    fn a_slow_adapter_stands_out_from_a_slow_target() {
        let mut runs = Vec::new();
        let specs = [("a", 100.0), ("a", 101.0), ("a", 99.0), ("b", 60.0), ("b", 61.0), ("b", 59.0)];
        for (t, (adapter, rate)) in specs.iter().enumerate() {
            let path = if *adapter == "a" { "/sys/devices/pci0/host1" } else { "/sys/devices/pci0/host2" };
            runs.push(run(t as i64 + 1, Role::Alone(format!("sd{t}")), *rate, Some(path)));
        }
        let r = report(1, &runs);
        assert!(r.tables.iter().any(|t| t.title.contains("by adapter")));
        let text: Vec<&str> = r.findings.iter().map(|f| f.text.as_str()).collect();
        assert!(text.iter().any(|t| t.contains("behind /sys/devices/pci0/host2 run at 60%")), "{text:?}");
        assert!(!text.iter().any(|t| t.contains("host1 run at")), "{text:?}");
    }

    #[test]
    fn roles_read_back_from_their_names() {
        for role in [Role::Alone("loop3".into()), Role::Together(4)] {
            assert_eq!(Role::of(&role.name()), Some(role));
        }
        assert_eq!(Role::of("seq-file-per-task"), None);
    }
}
