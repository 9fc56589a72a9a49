//! What the data path adds to each transfer besides the I/O (`iosurvey overhead`): the clock,
//! the histogram, the time series, the progress counter and abort flag, and verification's fill
//! and check, each timed here and now.

use super::data::{check, fill_verified, Stamp};
use super::phase::TaskClock;
use crate::measure::histogram::Histogram;
use crate::measure::Series;
use crate::team::clock::monotonic_ns;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Nanoseconds per call of `f`, over enough calls to take about 0.2 s.
fn per_call(mut f: impl FnMut(u64)) -> f64 {
    let mut n = 1u64 << 10;
    loop {
        let t = Instant::now();
        for i in 0..n {
            f(i);
        }
        let elapsed = t.elapsed().as_secs_f64();
        if elapsed > 0.2 {
            return elapsed * 1e9 / n as f64;
        }
        n *= 4;
    }
}

/// What the data path adds to each transfer besides the I/O, measured here and now.
pub fn report() -> String {
    use std::hint::black_box;
    let clock = per_call(|_| {
        black_box(monotonic_ns());
    });
    // What the data path pays: the task's clock as the phase driver reads it, around the
    // monotonic clock.
    let task = TaskClock::monotonic();
    let task_clock = per_call(|_| {
        black_box(task.now());
    });
    let mut h = Histogram::default();
    let hist = per_call(|i| h.record(black_box(i * 7919 % 1_000_000)));
    let mut series = Series { interval_ns: 1_000_000, ..Series::default() };
    let add = per_call(|i| series.add(black_box(i * 10), 4096));
    let (counter, flag) = (AtomicU64::new(0), AtomicBool::new(false));
    let atomics = per_call(|i| {
        counter.store(i, Ordering::Relaxed);
        black_box(flag.load(Ordering::Relaxed));
    });
    let mut buf = vec![0u8; 1 << 20];
    let mut scratch = vec![0u8; 1 << 20];
    let stamp = Stamp { token: 1, task: 0, offset: 0 };
    let fill = per_call(|_| fill_verified(black_box(&mut buf), stamp));
    let verify = per_call(|_| {
        black_box(check(&buf, stamp, &mut scratch));
    });
    let gib = |ns: f64| (1u64 << 20) as f64 / ns;
    format!(
        "clock read             {clock:>8.1} ns\n\
         task clock read        {task_clock:>8.1} ns (two per transfer)\n\
         histogram record       {hist:>8.1} ns\n\
         time-series add        {add:>8.1} ns\n\
         progress + abort flag  {atomics:>8.1} ns\n\
         per transfer in all    {:>8.1} ns\n\
         verify: write fill     {:>8.2} GB/s ({fill:.0} ns per MiB)\n\
         verify: read check     {:>8.2} GB/s ({verify:.0} ns per MiB)\n",
        2.0 * task_clock + hist + add + atomics,
        gib(fill),
        gib(verify)
    )
}
