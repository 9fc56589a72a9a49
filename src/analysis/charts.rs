//! A run's charts besides its time series: each task's own rate (with the slow ones named),
//! each node's, the latency percentiles, and a metadata run's rate per phase.

use super::{outliers, Chart};
use crate::measure::TaskTiming;
use crate::record::RunRecord;
use crate::units::mib_per_s;

/// A task's own rate: bytes (or, for metadata, items) over its own start to end, per second.
pub(super) fn task_rate(t: &TaskTiming, meta: bool) -> Option<f64> {
    let done = if meta { t.ops } else { t.bytes };
    crate::units::rate(done, t.close_end.saturating_sub(t.open_start)).filter(|_| done > 0)
}

/// The true length of a phase's last series interval, in seconds: from its start to the last
/// transfer's end, when that comes before the nominal width is up. A phase rarely ends on an
/// interval's boundary, and its bytes over the full width would draw the end of every phase
/// as a collapse that never happened.
pub(super) fn last_interval_secs(p: &crate::record::PhaseRecord) -> Option<f64> {
    let s = &p.series;
    let n = if p.series.bytes.is_empty() { s.ops.len() } else { s.bytes.len() } as u64;
    let start = s.origin_ns + n.checked_sub(1)? * s.interval_ns;
    // Transfers are counted when they complete; a metadata phase's items by its tasks' close.
    let end = p.tasks.iter().map(|t| if t.xfer_end > 0 { t.xfer_end } else { t.close_end }).max()?;
    let length = end.checked_sub(start).filter(|&l| l > 0 && l < s.interval_ns)?;
    Some(length as f64 / 1e9)
}

/// The charts of run `r` (its id shown as `id`).
pub(super) fn run(r: &RunRecord, id: &str) -> Vec<Chart> {
    let meta = r.workload.meta().is_some();
    let (unit, scale) = if meta { ("items/s", 1.0) } else { ("MiB/s", mib_per_s(1.0)) };
    let mut charts: Vec<Chart> = tasks(r, id, meta).into_iter().collect();
    if r.hosts.len() > 1 {
        let series = r
            .phases
            .iter()
            .map(|p| {
                let per_node = RunRecord::per_node(p).into_iter();
                let points =
                    per_node.filter_map(|(n, f)| Some((n as f64, if meta { f.iops? } else { f.bandwidth? * scale })));
                (name(p), points.collect())
            })
            .collect();
        let ticks = r.hosts.iter().enumerate().map(|(n, h)| (n as f64, h.clone())).collect();
        charts.push(Chart {
            title: format!("run {id}: each node's rate, by phase"),
            x: "node".into(),
            y: unit.into(),
            series,
            bars: true,
            ticks,
            ..Chart::default()
        });
    }
    charts.extend(latency(r, id));
    if meta {
        let points = r.phases.iter().enumerate().filter_map(|(k, p)| Some((k as f64, p.figures.iops?))).collect();
        let ticks = r.phases.iter().enumerate().map(|(k, p)| (k as f64, name(p))).collect();
        charts.push(Chart {
            title: format!("run {id}: items/s per phase"),
            x: "phase".into(),
            y: "items/s".into(),
            series: vec![("items/s".into(), points)],
            bars: true,
            ticks,
            ..Chart::default()
        });
    }
    charts
}

/// A phase as a chart's series names it: its op and iteration.
fn name(p: &crate::record::PhaseRecord) -> String {
    format!("{} {}", p.op.name(), p.iteration + 1)
}

/// Each task's own rate by phase, the slow ones named in the title, when there are several.
fn tasks(r: &RunRecord, id: &str, meta: bool) -> Option<Chart> {
    let (unit, scale) = if meta { ("items/s", 1.0) } else { ("MiB/s", mib_per_s(1.0)) };
    if r.phases.iter().map(|p| p.tasks.len()).max().unwrap_or(0) < 2 {
        return None;
    }
    let mut slow = Vec::new();
    let series = r
        .phases
        .iter()
        .map(|p| {
            let rates: Vec<(String, f64)> =
                p.tasks.iter().filter_map(|t| Some((t.task.to_string(), task_rate(t, meta)?))).collect();
            slow.extend(outliers::slow(&rates).0.into_iter().map(|(task, _)| format!("task {task} in {}", name(p))));
            (name(p), rates.iter().map(|(t, v)| (t.parse().unwrap_or(0.0), v * scale)).collect())
        })
        .collect();
    let marked = if slow.is_empty() { String::new() } else { format!(" (slow: {})", slow.join(", ")) };
    Some(Chart {
        title: format!("run {id}: each task's own rate, by phase{marked}"),
        x: "task".into(),
        y: unit.into(),
        series,
        bars: true,
        ..Chart::default()
    })
}

/// The latency percentiles of each timed phase.
fn latency(r: &RunRecord, id: &str) -> Option<Chart> {
    let timed: Vec<_> = r.phases.iter().filter(|p| p.latency.count > 0).collect();
    if timed.is_empty() {
        return None;
    }
    // The percentiles side by side, in order (their spacing on a probability scale would
    // put p50 at a position no axis labels).
    let names = ["p50", "p90", "p99", "p99.9", "p99.99"];
    let series = timed
        .iter()
        .map(|p| {
            let l = &p.latency;
            let values = [l.p50, l.p90, l.p99, l.p999, l.p9999];
            (name(p), values.iter().enumerate().map(|(k, &v)| (k as f64, v as f64 / 1e3)).collect())
        })
        .collect();
    let ticks = names.iter().enumerate().map(|(k, n)| (k as f64, n.to_string())).collect();
    Some(Chart {
        title: format!("run {id}: latency percentiles, by phase"),
        x: "percentile".into(),
        y: "us".into(),
        series,
        ticks,
        ..Chart::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_last_interval_is_drawn_at_its_true_rate() {
        let mut r = crate::record::fixtures::run(None);
        let p = &mut r.phases[0];
        // Three 100 ms intervals; the phase's last transfer ends 25 ms into the third.
        p.series = crate::measure::Series {
            origin_ns: 1_000_000_000,
            interval_ns: 100_000_000,
            bytes: vec![10 << 20, 10 << 20, 10 << 20 >> 2],
            ops: vec![10, 10, 2],
        };
        p.tasks = vec![TaskTiming { xfer_end: 1_225_000_000, close_end: 1_226_000_000, ..TaskTiming::default() }];
        assert_eq!(last_interval_secs(p), Some(0.025));
        let chart = super::super::run(&r).charts.into_iter().find(|c| c.title.contains("over time")).unwrap();
        let rates: Vec<f64> = chart.series[0].1.iter().map(|q| q.1).collect();
        // 2.5 MiB in 25 ms is 100 MiB/s, as fast as the full intervals, not a fall to 25.
        assert_eq!(rates, [100.0, 100.0, 100.0]);
        // A phase that ends on the boundary keeps the nominal width.
        r.phases[0].tasks[0].xfer_end = 1_300_000_000;
        assert_eq!(last_interval_secs(&r.phases[0]), None);
    }

    #[test]
    fn a_task_rate_is_bytes_or_items_over_its_own_time() {
        let t = TaskTiming {
            bytes: 1 << 20,
            ops: 500,
            open_start: 1_000_000_000,
            close_end: 1_250_000_000,
            ..TaskTiming::default()
        };
        assert_eq!(task_rate(&t, false), Some(4.0 * 1048576.0));
        assert_eq!(task_rate(&t, true), Some(2000.0));
        assert_eq!(task_rate(&TaskTiming { ops: 5, ..TaskTiming::default() }, true), None, "no time, no rate");
    }
}
