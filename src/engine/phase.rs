//! The phase driver: what every phase has, whatever it does to the storage. All tasks meet at
//! the phase's origin; each runs its part of the phase kind; then the team reduces what every
//! phase has (the first task's finish and how far each task had come by then, merged latency,
//! the time series, whether anyone failed) and the lead gathers every task's record. What a
//! phase does to the storage is a [`PhaseKind`]: data transfers today ([`super::transfer`]),
//! metadata operations and IOzone's kinds next.

use super::backends::TestClock;
use super::{Execution, PhaseOutcome, TaskFailure, VerifyTally};
use crate::measure::histogram::Histogram;
use crate::measure::{done_at, Progression, Series, TaskTiming, CHECKPOINTS};
use crate::spec::Op;
use crate::target::cache;
use crate::team::clock::monotonic_ns;
use crate::team::Member;
use serde::{Deserialize, Serialize};

/// The team's clock for one task: the lead's monotonic clock, counted from the team's start;
/// or the clock the task's engine keeps its time on, when it keeps one (the delay engine's
/// test clock). Which one is decided once, when the engine is made: a task of any other engine
/// reads the monotonic clock and nothing else.
pub(super) struct TaskClock {
    offset: i64,
    epoch: u64,
    /// The engine's own clock; `None`: the monotonic clock.
    engine: Option<TestClock>,
}

impl TaskClock {
    /// The task's clock, zero at the earliest task's start (collective): the monotonic clock
    /// until the engine gives one of its own ([`TaskClock::follow`]).
    pub(super) fn of<M: Member>(m: &M) -> Self {
        let mut clock = TaskClock { offset: m.clock_offset(), epoch: 0, engine: None };
        clock.epoch = m.min(clock.raw());
        clock
    }

    /// The monotonic clock as it is, for timing the clock itself (`iosurvey overhead`).
    pub(super) fn monotonic() -> Self {
        TaskClock { offset: 0, epoch: 0, engine: None }
    }

    /// From now on, the time the task's engine keeps, if it keeps its own.
    pub(super) fn follow(&mut self, engine: Option<TestClock>) {
        self.engine = engine;
    }

    /// CLOCK_MONOTONIC ns of team time 0 on this process.
    pub(super) fn epoch_monotonic(&self) -> u64 {
        (self.epoch as i64 + self.offset).max(0) as u64
    }

    fn raw(&self) -> u64 {
        let now = match &self.engine {
            Some(clock) => clock.now(),
            None => monotonic_ns(),
        };
        (now as i64 - self.offset).max(0) as u64
    }

    pub(super) fn now(&self) -> u64 {
        self.raw().saturating_sub(self.epoch)
    }

    /// Returns at team time `t` (at once if it has passed): asleep until shortly before,
    /// then yielding, so that a task waiting on a busy node leaves the core to the others.
    /// An engine's own clock is moved on to `t` instead: its time passes only by its waits.
    pub(super) fn wait_until(&self, t: u64) {
        if let Some(clock) = &self.engine {
            clock.advance_to((t.saturating_add(self.epoch) as i64 + self.offset).max(0) as u64);
            return;
        }
        loop {
            let now = self.now();
            if now >= t {
                return;
            }
            match t - now {
                left if left > 2 * WAKE_NS => std::thread::sleep(std::time::Duration::from_nanos(left - WAKE_NS)),
                _ => std::thread::yield_now(),
            }
        }
    }
}

/// What waking from a sleep may take on a busy node: the aligned start sleeps until this long
/// before the start, then yields until it.
const WAKE_NS: u64 = 100_000;

/// The shortest and longest lead of the aligned start.
const MIN_LEAD_NS: u64 = 20_000;
const MAX_LEAD_NS: u64 = 20_000_000;

/// The lead of a phase's aligned start after a reduction that the latest task left `exit_ns`
/// after the last arrival: twice that, so a task that takes as long again still starts on
/// time, within bounds (a task descheduled for long starts late rather than make every phase
/// wait for it).
pub(super) fn lead_after(exit_ns: u64) -> u64 {
    exit_ns.saturating_mul(2).clamp(MIN_LEAD_NS, MAX_LEAD_NS)
}

/// The lead of the run's first phase: how late tasks leave a reduction, measured over three
/// (the first phase has no phase before it to learn from), and at least [`FIRST_LEAD_NS`].
pub(super) fn first_lead<M: Member>(m: &M, clock: &TaskClock) -> u64 {
    let mut worst = 0;
    for _ in 0..3 {
        let origin = m.max(clock.now());
        worst = worst.max(m.max(clock.now().saturating_sub(origin)));
    }
    lead_after(worst).max(FIRST_LEAD_NS)
}

/// The least lead of a run's first phase. Three reductions back to back are left within
/// microseconds, but the first phase's origin follows the lead's filing and printing, which
/// the others wait out inside the reduction, and under mpirun they left that one up to 2 ms
/// late (a metadata run's first phase started its ranks 0.3-2.1 ms apart on a quiet 2-core
/// machine where every later phase's started 0.1-2 us apart). Waiting this long once per run,
/// outside every phase's time, costs nothing a figure shows.
const FIRST_LEAD_NS: u64 = 5_000_000;

/// What a task measured in one phase besides its timing record.
pub(super) struct PhaseTrace {
    /// (time, items done) at the start, at checkpoints and at the end.
    pub progression: Progression,
    /// Latency of every operation.
    pub histogram: Histogram,
    /// Bytes and operations per interval.
    pub series: Series,
    /// Each kind of object-store request, apart.
    pub requests: super::requests::RequestTrace,
}

/// One task's part of a phase, as its kind reports it.
#[derive(Serialize, Deserialize)]
pub(super) struct TaskPart {
    /// Open, transfer, sync and close times, bytes and operations.
    pub timing: TaskTiming,
    /// What verification found (nothing checked when not asked).
    pub verify: VerifyTally,
    /// Why it failed, if it did.
    pub failure: Option<TaskFailure>,
}

/// What a phase does to the storage, for one task.
pub(super) trait PhaseKind {
    /// The op it records as.
    fn op(&self) -> Op;
    /// Bytes one counted item moves (for the stonewall view: items done by the first finish).
    fn item_bytes(&self) -> u64;
    /// When this task is done, for the stonewall view: by default its close.
    fn finished_at(&self, t: &TaskTiming) -> u64 {
        t.close_end
    }
    /// What a task does before the phase's origin, outside its time (checks, opens that are
    /// not part of the measure).
    fn prepare(&mut self) {}
    /// Runs this task's part, from its open to its close, recording into `trace`.
    fn run<M: Member>(&mut self, m: &M, clock: &TaskClock, trace: &mut PhaseTrace) -> TaskPart;
}

/// Where a phase sits in its run.
pub(super) struct Step {
    /// 0-based iteration.
    pub iteration: u32,
    /// Whether the page cache was dropped on every node just before.
    pub caches_dropped: bool,
    /// Width of the time series' intervals, ns.
    pub interval_ns: u64,
    /// Whether the phase's verification tally is a result (verified reads).
    pub verified: bool,
    /// How long after the last task's arrival every task starts ([`lead_after`]).
    pub lead_ns: u64,
}

/// How a phase ended for this task.
pub(super) struct PhaseEnd {
    /// Whether any task of the team failed.
    pub failed: bool,
    /// Operations this task completed.
    pub ops: u64,
    /// How long after the last arrival the latest task left the phase's origin reduction:
    /// what the next phase's lead is made from.
    pub exit_ns: u64,
}

/// Runs one phase of `kind` for this task and, on the lead, adds the team's record to `out`.
pub(super) fn drive<M: Member, K: PhaseKind>(
    m: &M,
    clock: &TaskClock,
    kind: &mut K,
    step: Step,
    out: &mut Execution,
) -> PhaseEnd {
    kind.prepare();
    // The phase's time origin: every task is past it when the reduction returns.
    let origin = m.max(clock.now());
    // Each task leaves the reduction in its own time (microseconds apart on one node, up to
    // milliseconds under MPI on a busy one): every task waits for one start time on the team's
    // clock instead, so the tasks' starts are apart by the clocks' error and the wake-up.
    let exit = clock.now().saturating_sub(origin);
    clock.wait_until(origin + step.lead_ns);
    let mut trace = PhaseTrace {
        progression: Vec::with_capacity(CHECKPOINTS as usize + 3),
        histogram: Histogram::default(),
        series: Series { origin_ns: origin, interval_ns: step.interval_ns, bytes: Vec::new(), ops: Vec::new() },
        requests: Default::default(),
    };
    let mut part = kind.run(m, clock, &mut trace);
    // The first task to finish defines the stonewall view; every task says how far it had
    // come by then.
    let first_end = m.min(kind.finished_at(&part.timing));
    part.timing.bytes_at_first_finish = done_at(&trace.progression, first_end) * kind.item_bytes();
    let latency = team_histogram(m, &trace.histogram).summary();
    let requests = trace.requests.reduce(m);
    // Every task's series widened to the widest any task needed, so they add up.
    let mut series = trace.series;
    series.coarsen_to(m.max(series.interval_ns));
    let series = Series { bytes: m.sum_vec(series.bytes), ops: m.sum_vec(series.ops), ..series };
    let failed = m.max(part.failure.is_some() as u64) > 0;
    let exit_ns = m.max(exit);
    let ops = part.timing.ops;
    if let Some(parts) = m.gather(part) {
        let mut tally = VerifyTally::default();
        let mut tasks = Vec::with_capacity(parts.len());
        for p in parts {
            tasks.push(p.timing);
            tally.add(p.verify);
            out.failure = out.failure.take().or(p.failure);
        }
        out.phases.push(PhaseOutcome {
            op: kind.op(),
            iteration: step.iteration,
            tasks,
            verify: step.verified.then_some(tally),
            caches_dropped: step.caches_dropped,
            latency,
            series,
            requests,
        });
    }
    PhaseEnd { failed, ops, exit_ns }
}

/// Merges every task's latencies: bucket counts and sums add, extremes reduce.
pub(super) fn team_histogram<M: Member>(m: &M, h: &Histogram) -> Histogram {
    let counts = m.sum_vec(h.counts().to_vec());
    Histogram::from_parts(counts, m.sum(h.sum), m.min(h.min), m.max(h.max))
}

/// Drops the page cache once per node, by the node's first task, between two barriers.
pub(super) fn drop_on_each_node<M: Member>(m: &M, leads_node: bool) -> bool {
    m.barrier();
    let ok = !leads_node || cache::drop_caches().is_ok();
    m.min(ok as u64) == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::backends::{self, IoBufs};
    use crate::spec::EngineName;

    #[test]
    fn a_task_clock_reads_the_monotonic_clock_even_beside_a_delay_engines_test_clock() {
        // A delay engine on this thread whose test clock has moved 1,000 s ahead.
        let bufs = IoBufs::try_new(1, 4096).unwrap();
        let mut delay = backends::open(&EngineName::new("delay", Some("1000s")), 1, bufs).unwrap();
        delay.attach(None, Op::Write, 4096).unwrap();
        delay.submit(0, 0, Op::Write).unwrap();
        delay.reap(1, &mut Vec::new()).unwrap();
        // Another engine's task on the same thread keeps the machine's time.
        let clock = TaskClock::monotonic();
        let (before, read, after) = (monotonic_ns(), clock.now(), monotonic_ns());
        assert!((before..=after).contains(&read), "{before} <= {read} <= {after}");
    }

    #[test]
    fn the_first_phase_waits_out_a_cold_exit_however_quick_the_calibrating_reductions() {
        // Two threads leave a reduction within microseconds, which alone would give the first
        // phase the least lead of any phase.
        let leads: Vec<u64> = std::thread::scope(|s| {
            let tasks: Vec<_> = crate::team::local::LocalTeam::threads(2)
                .into_iter()
                .map(|m| s.spawn(move || first_lead(&m, &TaskClock::monotonic())))
                .collect();
            tasks.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert!(leads.iter().all(|&l| l == leads[0] && l >= FIRST_LEAD_NS), "{leads:?}");
        assert!(lead_after(1_000) < FIRST_LEAD_NS, "a later phase's lead still follows its exit");
    }
}
