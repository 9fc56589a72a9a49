//! Training runs against the accelerators they fed: iosurvey's own `train` runs and DLIO's
//! imported summaries alike (both file `train.*`), AU and samples/s per accelerator count,
//! one line per target and workload, the workload's AU threshold drawn across the AU chart:
//! where a line crosses it is the most accelerators that storage feeds.

use super::study::Study;
use super::{Cell, Chart, Finding, Report, Table};
use crate::record::{RunRecord, Status};
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

fn point(r: &RunRecord) -> Option<Point> {
    let get = |k: &str| r.tool_params.get(&format!("train.{k}"));
    let num = |k: &str| get(k).and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite());
    if r.status != Status::Ok {
        return None;
    }
    let target = r.label.clone().unwrap_or_else(|| r.env.target.clone());
    let workload = get("workload").map_or("train", String::as_str);
    let source = if r.provenance.starts_with(crate::record::IMPORTED) { " (DLIO)" } else { "" };
    Some(Point {
        line: format!("{workload} on {target}{source}"),
        accelerators: num("accelerators")?,
        au: num("au")?,
        samples: num("samples_per_s"),
        threshold: num("au_target"),
        id: r.id?,
    })
}

/// The training study of `runs`, if any of them is a training run: AU and samples/s against
/// accelerators (the mean of a count's runs), the AU threshold drawn, and per line the most
/// accelerators whose mean AU reaches it.
#[allow(clippy::too_many_lines)] // TODO(lead): owned by another branch this session
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
    let mut findings = Vec::new();
    for (line, pts) in &au_lines {
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
}
