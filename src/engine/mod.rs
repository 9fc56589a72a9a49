//! The data path: tasks move bytes through the POSIX backend while the engine times them.
//!
//! Every task runs the same loop on its own thread: meet the team at a barrier, open, transfer,
//! optionally fsync, close, each step stamped on the run's monotonic clock. Errors never leave
//! a phase early; the task records the error, raises the abort flag so the others stop after
//! their current transfer, and meets them at the end of the phase, so nobody waits forever.

pub mod cache;
pub mod data;
pub mod error;
pub mod offsets;
pub mod placement;
pub mod target;

use crate::measure::{done_at, Progression, TaskTiming, CHECKPOINTS};
use crate::spec::{Op, Workload};
use crate::team::clock::monotonic_ns;
use crate::team::{Member, Team};
use data::{check, fill_random, fill_verified, stamp_plain, AlignedBuf, Fault, Mismatch, Stamp};
pub use error::EngineError;
use offsets::{mix, OffsetMap, Visitor};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::IntoRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Set from a signal handler (SIGINT, SIGTERM): every task stops after its current transfer
/// and the run ends as failed, stored and cleaned up, instead of dying half way.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A counter on its own cache line, so tasks updating theirs never contend.
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// Live progress of this process's tasks, read by whoever draws a progress bar.
pub struct Progress {
    done: Vec<Padded>,
    phase: Mutex<String>,
    phase_bytes: AtomicU64,
}

impl Progress {
    /// Counters for `threads` tasks of this process.
    pub fn new(threads: usize) -> Arc<Self> {
        Arc::new(Progress {
            done: (0..threads).map(|_| Padded::default()).collect(),
            phase: Mutex::new(String::new()),
            phase_bytes: AtomicU64::new(0),
        })
    }

    /// (phase label, bytes this process's tasks moved so far in it, bytes the phase moves).
    pub fn read(&self) -> (String, u64, u64) {
        let done = self.done.iter().map(|c| c.0.load(Relaxed)).sum();
        (self.phase.lock().map(|s| s.clone()).unwrap_or_default(), done, self.phase_bytes.load(Relaxed))
    }
}

/// Verification results of one phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct VerifyTally {
    /// Transfers checked.
    pub checked: u64,
    /// Transfers with at least one wrong byte.
    pub bad: u64,
    /// Of those, transfers written by another run.
    pub stale: u64,
    /// The first bad transfer seen.
    pub first: Option<BadTransfer>,
}

impl VerifyTally {
    fn add(&mut self, other: VerifyTally) {
        self.checked += other.checked;
        self.bad += other.bad;
        self.stale += other.stale;
        if self.first.is_none() {
            self.first = other.first;
        }
    }
}

/// Where the first bad transfer was.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BadTransfer {
    /// The file.
    pub path: PathBuf,
    /// The first wrong byte.
    pub mismatch: Mismatch,
}

/// A task's failure, as it reaches the lead task (possibly from another node).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskFailure {
    /// Team rank of the failing task.
    pub task: usize,
    /// Its node.
    pub node: u32,
    /// What failed and why.
    pub message: String,
    /// What the user can do.
    pub hint: String,
    /// Whether a signal stopped it.
    pub interrupted: bool,
}

/// One phase as the whole team ran it.
#[derive(Debug, Clone)]
pub struct PhaseOutcome {
    /// Write or read.
    pub op: Op,
    /// 0-based iteration.
    pub iteration: u32,
    /// Every task's timings, in rank order.
    pub tasks: Vec<TaskTiming>,
    /// Verification, when asked for on a read.
    pub verify: Option<VerifyTally>,
    /// Whether the page cache was dropped (on every node) just before this phase.
    pub caches_dropped: bool,
}

/// What a run's execution produced, on the lead task: the phases that ran, and the error
/// that stopped it.
#[derive(Debug)]
pub struct Execution {
    /// Completed (or, for the last one on error, partial) phases.
    pub phases: Vec<PhaseOutcome>,
    /// The first failure of any task.
    pub failure: Option<TaskFailure>,
    /// Whether `--reorder` made every task read data written on another node.
    pub reorder_crosses_nodes: bool,
}

/// What every task of this process shares.
struct Context<'a> {
    w: &'a Workload,
    map: OffsetMap,
    files: &'a [PathBuf],
    token: u64,
    drop_caches: bool,
    progress: Arc<Progress>,
}

/// Runs the workload's phases on `files` with `threads` tasks in this process. The team may
/// be larger than `w.tasks` (a sweep point): then `w.tasks` tasks chosen round-robin over
/// nodes work and the others wait. `token` marks this run's data for verification;
/// `drop_caches` is whether dropping is both asked for and allowed. The lead process gets the
/// execution; the others get `None`.
pub fn execute<T: Team>(
    team: &T,
    threads: usize,
    w: &Workload,
    files: &[PathBuf],
    token: u64,
    drop_caches: bool,
    progress: Arc<Progress>,
) -> Option<Execution> {
    let ctx = Context { w, map: OffsetMap::new(w), files, token, drop_caches, progress };
    let results: Vec<Option<Execution>> = std::thread::scope(|s| {
        let handles: Vec<_> = team
            .members(threads)
            .into_iter()
            .map(|m| {
                let ctx = &ctx;
                s.spawn(move || run_thread(ctx, m))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("task thread panicked")).collect()
    });
    results.into_iter().flatten().next()
}

/// Picks this thread's part: a working task of the (sub-)team, or a waiting one.
fn run_thread<M: Member>(ctx: &Context, m: M) -> Option<Execution> {
    if ctx.w.tasks >= m.size() {
        return run_task(ctx, &m);
    }
    let active = placement::round_robin(m.nodes(), ctx.w.tasks).contains(&m.rank());
    let sub = m.split(active);
    let out = if active { run_task(ctx, &sub) } else { None };
    // The waiting tasks wait here for the working ones.
    m.barrier();
    out
}

struct Buffers {
    write: AlignedBuf,
    read: AlignedBuf,
    scratch: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct TaskReport {
    timing: TaskTiming,
    verify: VerifyTally,
    failure: Option<TaskFailure>,
}

/// The team's clock for one task: the lead's monotonic clock, counted from the team's start.
struct TaskClock {
    offset: i64,
    epoch: u64,
}

impl TaskClock {
    fn raw(offset: i64) -> u64 {
        (monotonic_ns() as i64 - offset).max(0) as u64
    }
    fn now(&self) -> u64 {
        Self::raw(self.offset).saturating_sub(self.epoch)
    }
}

fn run_task<M: Member>(ctx: &Context, m: &M) -> Option<Execution> {
    let w = ctx.w;
    let size = w.transfer as usize;
    let mut bufs = Buffers {
        write: AlignedBuf::new(size),
        read: AlignedBuf::new(size),
        scratch: if w.verify { vec![0; size] } else { Vec::new() },
    };
    // Generated before any clock starts: plain writes only stamp their offset into it.
    fill_random(bufs.write.as_mut_slice(), mix(w.seed ^ ctx.token, m.rank() as u64));
    let clock = TaskClock { offset: m.clock_offset(), epoch: m.min(TaskClock::raw(m.clock_offset())) };
    let (sources, reorder_crosses_nodes) =
        if w.reorder { placement::reorder_sources(m.nodes()) } else { ((0..m.size()).collect(), false) };
    let leads_node = placement::leads_its_node(m.nodes(), m.rank());
    let mut out = Execution { phases: Vec::new(), failure: None, reorder_crosses_nodes };
    // After a stonewalled write, reads cover only what every task managed to write.
    let mut written = ctx.map.per_task();
    'run: for iteration in 0..w.iterations {
        for &op in &w.ops {
            let caches_dropped = ctx.drop_caches && drop_on_each_node(m, leads_node);
            if m.local_index() == 0 {
                *ctx.progress.phase.lock().expect("progress") =
                    format!("{} {}/{}", op.name(), iteration + 1, w.iterations);
                ctx.progress.phase_bytes.store(w.bytes_per_phase(), Relaxed);
            }
            ctx.progress.done[m.local_index()].0.store(0, Relaxed);
            let source = if op == Op::Read { sources[m.rank()] } else { m.rank() };
            let limit = if op == Op::Read { written } else { ctx.map.per_task() };
            m.barrier();
            let (mut timing, progression, verify, failure) = run_phase(ctx, m, &clock, op, source, limit, &mut bufs);
            // The first task to finish defines the stonewall view; every task says how far it
            // had come by then.
            let first_end = m.min(timing.close_end);
            timing.bytes_at_first_finish = done_at(&progression, first_end) * w.transfer;
            if op == Op::Write && w.stonewall_secs.is_some() {
                written = m.min(timing.ops);
            }
            let failed = m.max(failure.is_some() as u64) > 0;
            if let Some(reports) = m.gather(TaskReport { timing, verify, failure }) {
                let mut tally = VerifyTally::default();
                let mut tasks = Vec::with_capacity(reports.len());
                for r in reports {
                    tasks.push(r.timing);
                    tally.add(r.verify);
                    out.failure = out.failure.or(r.failure);
                }
                let verify = (w.verify && op == Op::Read).then_some(tally);
                out.phases.push(PhaseOutcome { op, iteration, tasks, verify, caches_dropped });
            }
            if failed {
                break 'run;
            }
        }
    }
    (m.rank() == 0).then_some(out)
}

/// Drops the page cache once per node, by the node's first task, between two barriers.
fn drop_on_each_node<M: Member>(m: &M, leads_node: bool) -> bool {
    m.barrier();
    let ok = !leads_node || cache::drop_caches().is_ok();
    m.min(ok as u64) == 1
}

fn run_phase<M: Member>(
    ctx: &Context,
    m: &M,
    clock: &TaskClock,
    op: Op,
    source: usize,
    limit: u64,
    bufs: &mut Buffers,
) -> (TaskTiming, Progression, VerifyTally, Option<TaskFailure>) {
    let w = ctx.w;
    let path = &ctx.files[ctx.map.file_of(source)];
    let visitor = ctx.map.visitor(source);
    let deadline = w.stonewall_secs.map(|s| Instant::now() + Duration::from_secs_f64(s));
    let mut t = TaskTiming { task: m.rank() as u32, node: m.node(), ..TaskTiming::default() };
    let mut tally = VerifyTally::default();
    let mut progression = Vec::with_capacity(CHECKPOINTS as usize + 3);
    let mut error = None;
    let mut done = 0;
    t.open_start = clock.now();
    let file = open(path, op, w.direct).map_err(|e| error = Some(EngineError::io("open", path, None, e))).ok();
    t.xfer_start = clock.now();
    progression.push((t.xfer_start, 0));
    let io = IoSite {
        ctx,
        clock,
        abort: m.abort_flag(),
        path,
        op,
        source: source as u64,
        visitor: &visitor,
        counter: &ctx.progress.done[m.local_index()].0,
        step: (limit / CHECKPOINTS).max(1),
    };
    if let Some(f) = &file {
        done = io.transfers(f, 0, limit, deadline, bufs, &mut tally, &mut progression, &mut error);
    }
    if w.wear_out {
        // Every task takes part in this reduction, failed or not, so nobody waits for ever.
        let goal = m.max(done);
        if let (Some(f), None) = (&file, &error) {
            done = io.transfers(f, done, goal, None, bufs, &mut tally, &mut progression, &mut error);
        }
    }
    t.xfer_end = clock.now();
    progression.push((t.xfer_end, done));
    if let (Some(f), None, true) = (&file, &error, op == Op::Write && w.fsync) {
        if let Err(e) = f.sync_all() {
            error = Some(EngineError::io("fsync", path, None, e));
        }
    }
    t.sync_end = clock.now();
    if let Some(f) = file {
        // std's File ignores close errors; network file systems report write-back errors here.
        // SAFETY: into_raw_fd gives up ownership, so the descriptor is closed exactly once.
        if unsafe { libc::close(f.into_raw_fd()) } != 0 && error.is_none() {
            error = Some(EngineError::io("close", path, None, std::io::Error::last_os_error()));
        }
    }
    t.close_end = clock.now();
    t.ops = done;
    t.bytes = done * w.transfer;
    let failure = error.map(|e| {
        m.raise_abort();
        TaskFailure {
            task: m.rank(),
            node: m.node(),
            message: e.to_string(),
            hint: e.hint(),
            interrupted: matches!(e, EngineError::Interrupted),
        }
    });
    (t, progression, tally, failure)
}

fn open(path: &Path, op: Op, direct: bool) -> std::io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    match op {
        Op::Write => o.write(true).create(true),
        Op::Read => o.read(true),
    };
    o.mode(0o644).custom_flags(if direct { libc::O_DIRECT } else { 0 }).open(path)
}

/// One task's view of a phase's transfers.
struct IoSite<'a> {
    ctx: &'a Context<'a>,
    clock: &'a TaskClock,
    abort: &'a AtomicBool,
    path: &'a Path,
    op: Op,
    source: u64,
    visitor: &'a Visitor<'a>,
    counter: &'a AtomicU64,
    step: u64,
}

impl IoSite<'_> {
    /// Makes transfers `from..to` in pattern order until done, a failure, the abort flag or
    /// the deadline; returns how many transfers are complete.
    #[allow(clippy::too_many_arguments)]
    fn transfers(
        &self,
        f: &File,
        from: u64,
        to: u64,
        deadline: Option<Instant>,
        bufs: &mut Buffers,
        tally: &mut VerifyTally,
        progression: &mut Progression,
        error: &mut Option<EngineError>,
    ) -> u64 {
        let w = self.ctx.w;
        let mut i = from;
        while i < to {
            let offset = self.visitor.offset(i);
            let result = match self.op {
                Op::Write => self.write_one(f, offset, bufs),
                Op::Read => self.read_one(f, offset, bufs, tally),
            };
            if let Err(e) = result {
                *error = Some(e);
                break;
            }
            i += 1;
            self.counter.store(i * w.transfer, Relaxed);
            if i % self.step == 0 {
                progression.push((self.clock.now(), i));
            }
            if self.abort.load(Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            if INTERRUPTED.load(Relaxed) {
                *error = Some(EngineError::Interrupted);
                break;
            }
        }
        i
    }

    fn write_one(&self, f: &File, offset: u64, bufs: &mut Buffers) -> Result<(), EngineError> {
        let buf = bufs.write.as_mut_slice();
        if self.ctx.w.verify {
            fill_verified(buf, Stamp { token: self.ctx.token, task: self.source, offset });
        } else {
            stamp_plain(buf, offset);
        }
        f.write_all_at(buf, offset).map_err(|e| EngineError::io("write", self.path, Some(offset), e))?;
        if self.ctx.w.fsync_each {
            f.sync_all().map_err(|e| EngineError::io("fsync", self.path, Some(offset), e))?;
        }
        Ok(())
    }

    fn read_one(&self, f: &File, offset: u64, bufs: &mut Buffers, tally: &mut VerifyTally) -> Result<(), EngineError> {
        let buf = bufs.read.as_mut_slice();
        let mut got = 0;
        while got < buf.len() {
            match f.read_at(&mut buf[got..], offset + got as u64) {
                Ok(0) => {
                    return Err(EngineError::ShortRead { path: self.path.to_path_buf(), offset, got, want: buf.len() });
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(EngineError::io("read", self.path, Some(offset), e)),
            }
        }
        if self.ctx.w.verify {
            tally.checked += 1;
            let stamp = Stamp { token: self.ctx.token, task: self.source, offset };
            if let Some(mismatch) = check(buf, stamp, &mut bufs.scratch) {
                tally.bad += 1;
                tally.stale += (mismatch.fault == Fault::Stale) as u64;
                if tally.first.is_none() {
                    tally.first = Some(BadTransfer { path: self.path.to_path_buf(), mismatch });
                }
            }
        }
        Ok(())
    }
}
