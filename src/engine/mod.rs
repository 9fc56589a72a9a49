//! The data path: tasks move bytes through the POSIX backend while the engine times them.
//!
//! Every task runs the same loop on its own thread: meet the team at a barrier, open, transfer,
//! optionally fsync, close, each step stamped on the run's monotonic clock. Errors never leave
//! a phase early; the task records the error, raises the abort flag so the others stop after
//! their current transfer, and meets them at the end of the phase, so nobody waits forever.

pub mod backends;
pub mod data;
pub mod error;
pub mod offsets;
pub mod placement;

use crate::measure::histogram::{Histogram, Latency};
use crate::measure::{done_at, Progression, Series, TaskTiming, CHECKPOINTS, MIN_INTERVAL_NS};
use crate::spec::{Op, Pattern, Workload};
use crate::target::cache;
use crate::target::dir::Dir;
use crate::team::clock::monotonic_ns;
use crate::team::{all_agree, Member, Team};
use backends::{Backend, BufRef, Completion};
use data::{check, fill_random, fill_verified, stamp_plain, AlignedBuf, Fault, Mismatch, Stamp};
pub use error::EngineError;
use offsets::{mix, OffsetMap, Visitor};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::io::IntoRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

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
    /// Latency of every transfer of every task, merged.
    pub latency: Latency,
    /// Bytes and transfers per interval, the whole team.
    pub series: Series,
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

/// The data files of a run: names in the target directory, opened through its descriptor.
pub struct DataFiles {
    /// The target, held open.
    pub dir: std::sync::Arc<Dir>,
    /// File names, by file index.
    pub names: Vec<String>,
}

impl DataFiles {
    /// The path of file `i`, for messages.
    fn show(&self, i: usize) -> PathBuf {
        self.dir.show(&self.names[i])
    }
}

impl Execution {
    /// A run that failed before any phase.
    fn failed(message: String) -> Self {
        let failure = TaskFailure {
            task: 0,
            node: 0,
            message,
            hint: "the system refused a thread: raise the process or thread limit (ulimit -u, the cgroup's pids.max) or lower --tasks".into(),
            interrupted: false,
        };
        Execution { phases: Vec::new(), failure: Some(failure), reorder_crosses_nodes: false }
    }
}

/// What every task of this process shares.
struct Context<'a> {
    w: &'a Workload,
    map: OffsetMap,
    files: &'a DataFiles,
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
    files: &DataFiles,
    token: u64,
    drop_caches: bool,
    progress: Arc<Progress>,
) -> Option<Execution> {
    let ctx = Context { w, map: OffsetMap::new(w), files, token, drop_caches, progress };
    let gate = Gate::default();
    let (results, go, spawn_error) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        let mut spawn_error = None;
        for m in team.members(threads) {
            let (ctx, gate) = (&ctx, &gate);
            let spawned = std::thread::Builder::new()
                .name(format!("task-{}", m.rank()))
                .spawn_scoped(s, move || gate.wait().then(|| run_thread(ctx, m)).flatten());
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        // No task touches the team until every process has started all of its threads: a
        // team with a missing member would wait for it for ever.
        let go = all_agree(team, spawn_error.is_none());
        gate.open(go);
        let results: Vec<Option<Execution>> =
            handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect();
        (results, go, spawn_error)
    });
    if !go {
        let why = spawn_error.map_or("another process could not start its task threads".into(), |e| {
            format!("could not start a task thread: {e}")
        });
        return (team.process() == 0).then(|| Execution::failed(why));
    }
    results.into_iter().flatten().next()
}

/// Holds task threads until all of them exist; then lets them run, or sends them home.
#[derive(Default)]
struct Gate {
    state: Mutex<Option<bool>>,
    opened: std::sync::Condvar,
}

impl Gate {
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.opened.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(go);
        self.opened.notify_all();
    }
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

/// One task's I/O state, made once and reused by every phase.
struct TaskIo {
    backend: Result<Box<dyn Backend>, Setup>,
    slots: Vec<AlignedBuf>,
    scratch: Vec<u8>,
    done: Vec<Completion>,
    started: Vec<u64>,
    offsets: Vec<u64>,
    free: Vec<usize>,
}

impl TaskIo {
    fn new(w: &Workload) -> Self {
        // More buffers than transfers would never be used.
        let depth = (w.iodepth.max(1) as u64).min(w.transfers_per_task().max(1)) as usize;
        let size = w.transfer as usize;
        let mut io = TaskIo {
            backend: Err(Setup::NoMemory(w.task_buffer_bytes())),
            slots: Vec::new(),
            scratch: Vec::new(),
            done: Vec::with_capacity(depth),
            started: vec![0; depth],
            offsets: vec![0; depth],
            free: (0..depth).rev().collect(),
        };
        // Buffers are reserved fallibly: a size the system cannot give fails the run, never
        // the process.
        let slots: Option<Vec<AlignedBuf>> = (0..depth).map(|_| AlignedBuf::try_new(size)).collect();
        let scratch_ok = !w.verify || io.scratch.try_reserve_exact(size).is_ok();
        let Some(mut slots) = slots.filter(|_| scratch_ok) else { return io };
        io.scratch.resize(if w.verify { size } else { 0 }, 0);
        let refs = slots.iter_mut().map(|b| BufRef { ptr: b.as_mut_slice().as_mut_ptr(), len: size }).collect();
        io.backend = backends::open(&w.engine, depth, refs).map_err(|e| Setup::Unavailable(e.to_string()));
        io.slots = slots;
        io
    }
}

/// Why a task could not set up its I/O.
#[derive(Debug, Clone)]
enum Setup {
    /// The engine refused to start.
    Unavailable(String),
    /// Its buffers could not be allocated (bytes asked for).
    NoMemory(u64),
}

impl Setup {
    fn error(&self, w: &Workload) -> EngineError {
        match self {
            Setup::Unavailable(why) => {
                EngineError::EngineUnavailable { engine: backends::entry(&w.engine).name, why: why.clone() }
            }
            Setup::NoMemory(bytes) => EngineError::NoMemory { bytes: *bytes },
        }
    }
}

/// What a task measured in one phase besides its timing record.
struct PhaseTrace {
    progression: Progression,
    histogram: Histogram,
    series: Series,
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
    let mut io = TaskIo::new(w);
    let clock = TaskClock { offset: m.clock_offset(), epoch: m.min(TaskClock::raw(m.clock_offset())) };
    let (sources, reorder_crosses_nodes) =
        if w.reorder { placement::reorder_sources(m.nodes()) } else { ((0..m.size()).collect(), false) };
    let leads_node = placement::leads_its_node(m.nodes(), m.rank());
    let interval = ((w.interval_secs * 1e9) as u64).max(MIN_INTERVAL_NS);
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
            if op == Op::Write && !w.verify {
                // Made before the clock starts: plain writes only stamp their offset into it.
                for (i, slot) in io.slots.iter_mut().enumerate() {
                    fill_random(slot.as_mut_slice(), mix(w.seed ^ ctx.token, (m.rank() * 1024 + i) as u64));
                }
            }
            let source = if op == Op::Read { sources[m.rank()] } else { m.rank() };
            let limit = if op == Op::Read { written } else { ctx.map.per_task() };
            // The phase's time origin: every task is past it when the reduction returns.
            let origin = m.max(clock.now());
            let mut trace = PhaseTrace {
                progression: Vec::with_capacity(CHECKPOINTS as usize + 3),
                histogram: Histogram::default(),
                series: Series { origin_ns: origin, interval_ns: interval, bytes: Vec::new(), ops: Vec::new() },
            };
            let (mut timing, verify, failure) = run_phase(ctx, m, &clock, op, source, limit, &mut io, &mut trace);
            // The first task to finish defines the stonewall view; every task says how far it
            // had come by then.
            let first_end = m.min(timing.close_end);
            timing.bytes_at_first_finish = done_at(&trace.progression, first_end) * w.transfer;
            if op == Op::Write && w.stonewall_secs.is_some() {
                written = m.min(timing.ops);
            }
            let latency = team_histogram(m, &trace.histogram).summary();
            // Every task's series widened to the widest any task needed, so they add up.
            let mut series = trace.series;
            series.coarsen_to(m.max(series.interval_ns));
            let series = Series { bytes: m.sum_vec(series.bytes), ops: m.sum_vec(series.ops), ..series };
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
                out.phases.push(PhaseOutcome { op, iteration, tasks, verify, caches_dropped, latency, series });
            }
            if failed {
                break 'run;
            }
        }
    }
    (m.rank() == 0).then_some(out)
}

/// Merges every task's latencies: bucket counts and sums add, extremes reduce.
fn team_histogram<M: Member>(m: &M, h: &Histogram) -> Histogram {
    let counts = m.sum_vec(h.counts().to_vec());
    Histogram::from_parts(counts, m.sum(h.sum), m.min(h.min), m.max(h.max))
}

/// Drops the page cache once per node, by the node's first task, between two barriers.
fn drop_on_each_node<M: Member>(m: &M, leads_node: bool) -> bool {
    m.barrier();
    let ok = !leads_node || cache::drop_caches().is_ok();
    m.min(ok as u64) == 1
}

#[allow(clippy::too_many_arguments)]
fn run_phase<M: Member>(
    ctx: &Context,
    m: &M,
    clock: &TaskClock,
    op: Op,
    source: usize,
    limit: u64,
    io: &mut TaskIo,
    trace: &mut PhaseTrace,
) -> (TaskTiming, VerifyTally, Option<TaskFailure>) {
    let w = ctx.w;
    let file_index = ctx.map.file_of(source);
    let path = &ctx.files.show(file_index);
    let visitor = ctx.map.visitor(source);
    let mut t = TaskTiming { task: m.rank() as u32, node: m.node(), ..TaskTiming::default() };
    let mut tally = VerifyTally::default();
    let mut error = None;
    let mut done = 0;
    t.open_start = clock.now();
    let deadline = w.stonewall_secs.map(|s| t.open_start + (s * 1e9) as u64);
    // Engines that touch no storage (null, delay) get no file.
    let file = match backends::entry(&w.engine).caps.storage {
        true => match open(ctx.files, file_index, op, w) {
            Ok(f) => Some(f),
            Err(e) => {
                error = Some(EngineError::io("open", path, None, e));
                None
            }
        },
        false => None,
    };
    let mut attached = false;
    if error.is_none() {
        match &mut io.backend {
            Ok(b) => match b.attach(file.as_ref(), op, ctx.map.file_size()) {
                Ok(()) => attached = true,
                Err(e) => error = Some(EngineError::io("prepare", path, None, e)),
            },
            Err(setup) => error = Some(setup.error(w)),
        }
    }
    t.xfer_start = clock.now();
    trace.progression.push((t.xfer_start, 0));
    let site = IoSite {
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
    if attached {
        done = site.transfers(file.as_ref(), io, 0, limit, deadline, trace, &mut tally, &mut error);
    }
    if w.wear_out {
        // Every task takes part in this reduction, failed or not, so nobody waits for ever.
        let goal = m.max(done);
        if let (None, true) = (&error, attached) {
            done = site.transfers(file.as_ref(), io, done, goal, None, trace, &mut tally, &mut error);
        }
    }
    t.xfer_end = clock.now();
    trace.progression.push((t.xfer_end, done));
    if let (None, true) = (&error, op == Op::Write && w.fsync) {
        let flushed = match &mut io.backend {
            Ok(b) => b.flush(),
            Err(_) => Ok(()),
        };
        if let Err(e) = flushed.and_then(|()| file.as_ref().map_or(Ok(()), File::sync_all)) {
            error = Some(EngineError::io("fsync", path, None, e));
        }
    }
    t.sync_end = clock.now();
    if attached {
        if let Ok(b) = &mut io.backend {
            b.detach();
        }
    }
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
    (t, tally, failure)
}

fn open(files: &DataFiles, index: usize, op: Op, w: &Workload) -> std::io::Result<File> {
    let access = match op {
        // A writable shared mapping needs a descriptor open for reading too.
        Op::Write if backends::entry(&w.engine).caps.writes_need_read => libc::O_RDWR,
        Op::Write => libc::O_WRONLY,
        Op::Read => libc::O_RDONLY,
    };
    // The lead named every file in the manifest before the run; a writing task creates its
    // file (or opens it, when another task or phase made it), through the target's
    // descriptor, never through a link. Made on the writer's own node, no other node holds
    // stale attributes of an empty file (FUSE clients cache them).
    let flags = access | if w.direct { libc::O_DIRECT } else { 0 };
    let name = &files.names[index];
    let file = match op {
        Op::Write => files.dir.create_or_open_own(name, flags)?,
        Op::Read => files.dir.open_own(name, flags)?,
    };
    // Tell the page cache the access pattern, as fio does by default: deep readahead for
    // sequential reads, none for random ones. Only advice, so its failure is ignored.
    let advice = match w.pattern {
        Pattern::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Pattern::Random | Pattern::RandomOverlap => libc::POSIX_FADV_RANDOM,
        Pattern::Backward | Pattern::Stride(_) => libc::POSIX_FADV_NORMAL,
    };
    // SAFETY: advises on an open descriptor; no memory is involved.
    unsafe { libc::posix_fadvise(std::os::unix::io::AsRawFd::as_raw_fd(&file), 0, 0, advice) };
    Ok(file)
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
    /// Makes transfers `from..to` in pattern order, keeping up to the queue depth in flight,
    /// until done, a failure, the abort flag or the deadline; in-flight transfers are always
    /// drained. Returns how many transfers completed (from `from` on, counted from 0).
    #[allow(clippy::too_many_arguments)]
    fn transfers(
        &self,
        f: Option<&File>,
        io: &mut TaskIo,
        from: u64,
        to: u64,
        deadline: Option<u64>,
        trace: &mut PhaseTrace,
        tally: &mut VerifyTally,
        error: &mut Option<EngineError>,
    ) -> u64 {
        let w = self.ctx.w;
        let len = w.transfer as usize;
        let Ok(backend) = io.backend.as_mut() else { return from };
        let (mut next, mut completed, mut inflight, mut stop) = (from, from, 0usize, false);
        loop {
            while !stop && next < to {
                let Some(slot) = io.free.pop() else { break };
                let offset = self.visitor.offset(next);
                let buf = io.slots[slot].as_mut_slice();
                if self.op == Op::Write {
                    if w.verify {
                        fill_verified(buf, Stamp { token: self.ctx.token, task: self.source, offset });
                    } else {
                        stamp_plain(buf, offset);
                    }
                }
                io.offsets[slot] = offset;
                io.started[slot] = self.clock.now();
                // SAFETY: the slot came off the free list, so nothing is in flight on it; it
                // goes back only after its completion is reaped below.
                if let Err(e) = unsafe { backend.submit(slot, offset) } {
                    io.free.push(slot);
                    *error = Some(EngineError::io(self.op.name(), self.path, Some(offset), e));
                    stop = true;
                    break;
                }
                inflight += 1;
                next += 1;
            }
            if inflight == 0 {
                break;
            }
            if let Err(e) = backend.reap(1, &mut io.done) {
                *error = Some(EngineError::io(self.op.name(), self.path, None, e));
                break;
            }
            for (slot, result) in io.done.drain(..) {
                let t = self.clock.now();
                inflight -= 1;
                io.free.push(slot);
                let offset = io.offsets[slot];
                match result {
                    Ok(n) if n == len => {}
                    Ok(n) if self.op == Op::Read && w.verify => {
                        // Under verification a file that ends early is wrong data, not an I/O
                        // error: the bytes that should be there are not.
                        tally.checked += 1;
                        tally.bad += 1;
                        if tally.first.is_none() {
                            let mismatch =
                                Mismatch { fault: Fault::Missing, offset: offset + n as u64, expected: 0, found: 0 };
                            tally.first = Some(BadTransfer { path: self.path.to_path_buf(), mismatch });
                        }
                        stop = true;
                        continue;
                    }
                    Ok(n) if self.op == Op::Read => {
                        *error =
                            Some(EngineError::ShortRead { path: self.path.to_path_buf(), offset, got: n, want: len });
                        stop = true;
                        continue;
                    }
                    Ok(n) => {
                        let e = std::io::Error::new(std::io::ErrorKind::WriteZero, format!("wrote {n} of {len} bytes"));
                        *error = Some(EngineError::io("write", self.path, Some(offset), e));
                        stop = true;
                        continue;
                    }
                    Err(e) => {
                        *error = Some(EngineError::io(self.op.name(), self.path, Some(offset), e));
                        stop = true;
                        continue;
                    }
                }
                // An fsync after each write is part of that write's latency: the operation
                // is not done until the data is on stable storage.
                let t = if self.op == Op::Write && w.fsync_each {
                    if let Err(e) = f.map_or(Ok(()), File::sync_all) {
                        *error = Some(EngineError::io("fsync", self.path, Some(offset), e));
                        stop = true;
                        continue;
                    }
                    self.clock.now()
                } else {
                    t
                };
                trace.histogram.record(t.saturating_sub(io.started[slot]));
                trace.series.add(t, w.transfer);
                completed += 1;
                self.counter.store(completed * w.transfer, Relaxed);
                if completed % self.step == 0 {
                    trace.progression.push((t, completed));
                }
                if self.op == Op::Read && w.verify {
                    tally.checked += 1;
                    let stamp = Stamp { token: self.ctx.token, task: self.source, offset };
                    if let Some(mismatch) = check(io.slots[slot].as_slice(), stamp, &mut io.scratch) {
                        tally.bad += 1;
                        tally.stale += (mismatch.fault == Fault::Stale) as u64;
                        if tally.first.is_none() {
                            tally.first = Some(BadTransfer { path: self.path.to_path_buf(), mismatch });
                        }
                    }
                }
                if deadline.is_some_and(|d| t >= d) {
                    stop = true;
                }
            }
            if self.abort.load(Relaxed) {
                stop = true;
            }
            if INTERRUPTED.load(Relaxed) {
                *error = Some(EngineError::Interrupted);
                stop = true;
            }
        }
        completed
    }
}
