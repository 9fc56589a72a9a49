//! Per-task measurements and the rules that turn them into team-wide figures.
//!
//! Times are nanoseconds on one monotonic clock shared by the team (the run's epoch). The
//! rules follow IOR's definitions; docs/methodology.md states them with examples.

pub mod histogram;

use crate::units::rate;
use serde::{Deserialize, Serialize};

/// What one task measured in one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskTiming {
    /// Task index in the team.
    pub task: u32,
    /// Node the task ran on.
    pub node: u32,
    /// Bytes moved.
    pub bytes: u64,
    /// I/O calls completed.
    pub ops: u64,
    /// Just before open.
    pub open_start: u64,
    /// After open, before the first transfer.
    pub xfer_start: u64,
    /// After the last transfer.
    pub xfer_end: u64,
    /// After the end-of-phase fsync (equal to `xfer_end` without one).
    pub sync_end: u64,
    /// After close: the task's end.
    pub close_end: u64,
    /// Bytes this task had moved when the first task of the team finished.
    pub bytes_at_first_finish: u64,
}

/// Team-wide figures of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    /// Bytes moved by all tasks.
    pub bytes: u64,
    /// I/O calls made by all tasks.
    pub ops: u64,
    /// Latest end minus earliest start (open, fsync and close inside).
    pub window_ns: u64,
    /// bytes / window: the headline bandwidth (IOR's definition).
    pub bandwidth: Option<f64>,
    /// bytes / (latest transfer end - earliest transfer start): without open, fsync, close.
    pub transfer_rate: Option<f64>,
    /// ops / window.
    pub iops: Option<f64>,
    /// Slowest task's own rate: its bytes over its own open-to-close time.
    pub task_min: Option<f64>,
    /// Fastest task's own rate.
    pub task_max: Option<f64>,
    /// Bytes all tasks had moved when the first finished, over the time from the earliest
    /// start to that moment (the stonewall view: the rate while every task was still busy).
    pub first_finish_rate: Option<f64>,
    /// Latest start minus earliest start over the tasks: how far apart they began the phase,
    /// inside the window. `None` for an imported phase.
    #[serde(default)]
    pub start_skew_ns: Option<u64>,
}

/// Applies the aggregation rules to one phase's task timings.
pub fn aggregate(tasks: &[TaskTiming]) -> PhaseFigures {
    let bytes = tasks.iter().map(|t| t.bytes).sum();
    let ops = tasks.iter().map(|t| t.ops).sum();
    // The window opens when the first task starts opening and closes when the last task has
    // closed: slow opens and closes are part of what the user waits for.
    let start = tasks.iter().map(|t| t.open_start).min().unwrap_or(0);
    let end = tasks.iter().map(|t| t.close_end).max().unwrap_or(0);
    let window_ns = end.saturating_sub(start);
    let xfer_start = tasks.iter().map(|t| t.xfer_start).min().unwrap_or(0);
    let xfer_end = tasks.iter().map(|t| t.xfer_end).max().unwrap_or(0);
    let own = |t: &TaskTiming| rate(t.bytes, t.close_end.saturating_sub(t.open_start));
    let own_rates: Vec<f64> = tasks.iter().filter_map(own).collect();
    let first_end = tasks.iter().map(|t| t.close_end).min().unwrap_or(0);
    let at_first: u64 = tasks.iter().map(|t| t.bytes_at_first_finish).sum();
    PhaseFigures {
        bytes,
        ops,
        window_ns,
        bandwidth: rate(bytes, window_ns),
        transfer_rate: rate(bytes, xfer_end.saturating_sub(xfer_start)),
        iops: rate(ops, window_ns),
        task_min: own_rates.iter().copied().reduce(f64::min),
        task_max: own_rates.iter().copied().reduce(f64::max),
        first_finish_rate: rate(at_first, first_end.saturating_sub(start)),
        start_skew_ns: tasks.iter().map(|t| t.open_start).max().map(|last| last - start),
    }
}

/// Where a timed window ends, for the matrix's IOzone-style timing: after the last transfer
/// (IOzone's default), after the end-of-phase fsync (its -e), or after close (its -c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowEnd {
    /// After the last transfer.
    #[default]
    Transfers,
    /// After the fsync that ends a write phase.
    Fsync,
    /// After close.
    Close,
}

/// One phase under IOzone's timing: the open is never inside the window, the end is `end`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TimedFigures {
    /// All bytes over (latest end - earliest transfer start): the whole team's rate.
    pub team: Option<f64>,
    /// Bytes moved until the first task ended its transfers, over the time from the earliest
    /// transfer start to then: the rate while every task was still busy (IOzone's stonewall).
    pub all_busy: Option<f64>,
    /// The slowest task's own rate: its bytes over its own transfer start to its end.
    pub task_min: Option<f64>,
    /// The fastest task's.
    pub task_max: Option<f64>,
}

/// Applies IOzone's timing to one phase's task timings (docs/methodology.md, "The matrix").
pub fn timed(tasks: &[TaskTiming], end: WindowEnd) -> TimedFigures {
    let end_of = |t: &TaskTiming| match end {
        WindowEnd::Transfers => t.xfer_end,
        WindowEnd::Fsync => t.sync_end,
        WindowEnd::Close => t.close_end,
    };
    let bytes: u64 = tasks.iter().map(|t| t.bytes).sum();
    let start = tasks.iter().map(|t| t.xfer_start).min().unwrap_or(0);
    let last = tasks.iter().map(end_of).max().unwrap_or(0);
    // The matrix's engine takes each task's first-done count when the first task's transfers
    // end, before the fsync and close it makes untimed.
    let first_done = tasks.iter().map(|t| t.xfer_end).min().unwrap_or(0);
    let at_first: u64 = tasks.iter().map(|t| t.bytes_at_first_finish).sum();
    let own: Vec<f64> = tasks.iter().filter_map(|t| rate(t.bytes, end_of(t).saturating_sub(t.xfer_start))).collect();
    TimedFigures {
        team: rate(bytes, last.saturating_sub(start)),
        all_busy: rate(at_first, first_done.saturating_sub(start)),
        task_min: own.iter().copied().reduce(f64::min),
        task_max: own.iter().copied().reduce(f64::max),
    }
}

/// The median of some values; none of none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Checkpoints a task records while it transfers: (time, transfers done), at the start, every
/// 1/[`CHECKPOINTS`] of its transfers, and at the end.
pub type Progression = Vec<(u64, u64)>;

/// How many checkpoints a task records per phase (bounding the first-done error to 1/256 of
/// a task's transfers).
pub const CHECKPOINTS: u64 = 256;

/// Transfers a task had completed at time `t`, interpolated linearly between its checkpoints.
pub fn done_at(points: &[(u64, u64)], t: u64) -> u64 {
    let Some(&(t_last, n_last)) = points.last() else { return 0 };
    if t >= t_last {
        return n_last;
    }
    let after = points.partition_point(|&(time, _)| time <= t);
    if after == 0 {
        return 0;
    }
    let (t0, n0) = points[after - 1];
    let (t1, n1) = points[after];
    if t1 == t0 {
        return n0;
    }
    n0 + ((n1 - n0) as u128 * (t - t0) as u128 / (t1 - t0) as u128) as u64
}

/// Bytes and transfers per interval of a phase, from a common origin (the team's start of the
/// phase): interval i covers [origin + i x interval, origin + (i + 1) x interval).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Start of interval 0, ns on the team clock.
    pub origin_ns: u64,
    /// Interval width, ns.
    pub interval_ns: u64,
    /// Bytes completed in each interval.
    pub bytes: Vec<u64>,
    /// Transfers completed in each interval.
    pub ops: Vec<u64>,
}

/// The most intervals a series holds; a longer phase doubles the interval width instead, so
/// memory stays bounded (16 bytes per interval per task) however long the phase runs.
pub const MAX_SERIES_POINTS: usize = 1 << 16;

/// The narrowest interval a series may have: finer widths only measure the clock.
pub const MIN_INTERVAL_NS: u64 = 1_000_000;

impl Series {
    /// Counts one completed transfer of `bytes` at time `t`.
    #[inline]
    pub fn add(&mut self, t: u64, bytes: u64) {
        let mut i = t.saturating_sub(self.origin_ns) / self.interval_ns.max(1);
        while i >= MAX_SERIES_POINTS as u64 {
            self.coarsen_to(self.interval_ns.max(1) * 2);
            i = t.saturating_sub(self.origin_ns) / self.interval_ns;
        }
        let i = i as usize;
        if i >= self.bytes.len() {
            // Once per interval, not per transfer.
            self.bytes.resize(i + 1, 0);
            self.ops.resize(i + 1, 0);
        }
        self.bytes[i] += bytes;
        self.ops[i] += 1;
    }

    /// Widens the intervals to `width`, a power-of-two multiple of the current width, adding
    /// the counts of the intervals that merge (they share the origin, so they nest exactly).
    pub fn coarsen_to(&mut self, width: u64) {
        let old = self.interval_ns.max(1);
        if width <= old {
            return;
        }
        let factor = (width / old) as usize;
        let merge = |v: &[u64]| v.chunks(factor).map(|c| c.iter().sum()).collect::<Vec<u64>>();
        self.bytes = merge(&self.bytes);
        self.ops = merge(&self.ops);
        self.interval_ns = width;
    }
}

/// Summary of one figure over the iterations of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Smallest value.
    pub min: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Largest value.
    pub max: f64,
    /// Sample standard deviation (n - 1); missing for a single value.
    pub stddev: Option<f64>,
    /// Number of values.
    pub n: usize,
}

/// min, mean, max and sample standard deviation; `None` for no values.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let stddev = (n > 1).then(|| {
        let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    Some(Spread {
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        mean,
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        stddev,
        n,
    })
}

#[cfg(test)]
mod series_tests {
    use super::*;

    #[test]
    fn a_long_series_widens_its_intervals_and_keeps_every_count() {
        let mut s = Series { interval_ns: MIN_INTERVAL_NS, ..Series::default() };
        let points = MAX_SERIES_POINTS as u64 * 5 / 2;
        for k in 0..points {
            s.add(k * MIN_INTERVAL_NS, 10);
        }
        assert!(s.bytes.len() <= MAX_SERIES_POINTS);
        assert_eq!(s.interval_ns, 4 * MIN_INTERVAL_NS, "doubled twice: 2.5x the points");
        assert_eq!(s.ops.iter().sum::<u64>(), points);
        assert_eq!(s.bytes.iter().sum::<u64>(), points * 10);
        assert_eq!(s.ops[0], 4);
    }

    #[test]
    fn coarsening_merges_aligned_intervals() {
        let mut s = Series { interval_ns: 10, bytes: vec![1, 2, 3, 4, 5], ops: vec![1, 1, 1, 1, 1], origin_ns: 0 };
        s.coarsen_to(40);
        assert_eq!((s.interval_ns, s.bytes, s.ops), (40, vec![10, 5], vec![4, 1]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn close(a: Option<f64>, b: f64) {
        let a = a.expect("a figure");
        assert!((a - b).abs() <= 1e-9 * b.abs(), "{a} != {b}");
    }

    fn task(task: u32, bytes: u64, times_ms: [u64; 5], at_first: u64) -> TaskTiming {
        let [open_start, xfer_start, xfer_end, sync_end, close_end] = times_ms.map(|t| t * MS);
        TaskTiming {
            task,
            node: 0,
            bytes,
            ops: bytes / 100,
            open_start,
            xfer_start,
            xfer_end,
            sync_end,
            close_end,
            bytes_at_first_finish: at_first,
        }
    }

    #[test]
    fn iozone_timing_leaves_open_out_and_ends_where_asked() {
        // A: open 0, transfers 100..900, fsync to 950, close 1000, 1000 bytes.
        // B: open 200, transfers 300..1700, fsync to 1800, close 2000, 3000 bytes; 1200 when A's
        // transfers ended.
        let tasks = [task(0, 1000, [0, 100, 900, 950, 1000], 1000), task(1, 3000, [200, 300, 1700, 1800, 2000], 1200)];
        let t = timed(&tasks, WindowEnd::Transfers);
        close(t.team, 4000.0 / 1.6); // 100 ms to 1700 ms
        close(t.task_min, 1000.0 / 0.8);
        close(t.task_max, 3000.0 / 1.4);
        close(t.all_busy, 2200.0 / 0.8); // to A's end of transfers at 900 ms
        close(timed(&tasks, WindowEnd::Fsync).team, 4000.0 / 1.7);
        close(timed(&tasks, WindowEnd::Close).team, 4000.0 / 1.9);
        close(timed(&tasks, WindowEnd::Close).task_min, 1000.0 / 0.9);
    }

    #[test]
    fn bandwidth_spans_earliest_open_to_latest_close() {
        // Task 0: 0..1000 ms moving 1000 bytes; task 1: 200..2000 ms moving 3000 bytes.
        let tasks = [task(0, 1000, [0, 100, 900, 950, 1000], 1000), task(1, 3000, [200, 300, 1800, 1900, 2000], 1200)];
        let f = aggregate(&tasks);
        assert_eq!(f.bytes, 4000);
        assert_eq!(f.ops, 40);
        assert_eq!(f.window_ns, 2000 * MS);
        close(f.bandwidth, 2000.0); // 4000 B / 2 s
        close(f.iops, 20.0); // 40 ops / 2 s
                             // Transfers ran from 100 ms to 1800 ms.
        close(f.transfer_rate, 4000.0 / 1.7);
        // Own rates: 1000 B / 1 s and 3000 B / 1.8 s.
        close(f.task_min, 1000.0);
        close(f.task_max, 3000.0 / 1.8);
        // When task 0 finished at 1 s, the team had moved 1000 + 1200 bytes.
        close(f.first_finish_rate, 2200.0);
        assert_eq!(f.start_skew_ns, Some(200 * MS), "B began 200 ms after A");
    }

    #[test]
    fn series_put_each_transfer_in_its_interval() {
        let mut s = Series { origin_ns: 1000, interval_ns: 100, ..Series::default() };
        for t in [1000, 1050, 1099, 1100, 1350, 900] {
            s.add(t, 10);
        }
        assert_eq!(s.bytes, vec![40, 10, 0, 10], "a time before the origin counts in interval 0");
        assert_eq!(s.ops, vec![4, 1, 0, 1]);
    }

    #[test]
    fn progress_is_interpolated_between_checkpoints() {
        let points = [(100, 0), (200, 10), (400, 20), (500, 21)];
        assert_eq!(done_at(&points, 50), 0);
        assert_eq!(done_at(&points, 150), 5);
        assert_eq!(done_at(&points, 200), 10);
        assert_eq!(done_at(&points, 300), 15);
        assert_eq!(done_at(&points, 9999), 21);
        assert_eq!(done_at(&[], 5), 0);
    }

    #[test]
    fn empty_windows_give_missing_figures_not_zero() {
        let f = aggregate(&[task(0, 0, [5, 5, 5, 5, 5], 0)]);
        assert_eq!((f.bandwidth, f.iops, f.task_min), (None, None, None));
    }

    #[test]
    fn spread_uses_the_sample_standard_deviation() {
        let s = spread(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.min, s.mean, s.max, s.n), (2.0, 5.0, 9.0, 8));
        assert!((s.stddev.unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(spread(&[3.0]).unwrap().stddev, None);
        assert!(spread(&[]).is_none());
    }
}
