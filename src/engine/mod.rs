//! The data path: tasks move bytes through a backend while the engine times them.
//!
//! Every task runs on its own thread, started behind a gate so that no task touches the team
//! before all exist. Each runs the workload's phases in turn through the phase driver
//! ([`phase`]), which owns what every phase has; what a phase does to the storage is its kind
//! ([`transfer`] for data transfers). Errors never leave a phase early; the task records the
//! error, raises the abort flag so the others stop after their current transfer, and meets
//! them at the end of the phase, so nobody waits forever.

pub mod backends;
pub mod data;
pub mod error;
mod meta;
pub mod offsets;
pub mod overhead;
mod phase;
pub mod placement;
mod requests;
mod transfer;
pub mod tree;

/// The stop token lives below every room that runs anything; the engine's callers have long
/// named it here.
pub use crate::cancel::Cancel;
use crate::measure::MIN_INTERVAL_NS;
pub use crate::record::execution::{BadTransfer, Execution, PageCache, PhaseOutcome, TaskFailure, VerifyTally};
use crate::spec::{Data, Meta, Op, Shape, Workload};
use crate::target::dir::Dir;
use crate::target::site::Site;
use crate::team::{all_agree, Member, Team};
use data::{fill_random, Mismatch};
pub use error::EngineError;
pub use meta::{path_start, PathStart};
use meta::{MetaIo, MetaItems};
use offsets::{mix, OffsetMap};
use phase::{drop_on_each_node, Step, TaskClock};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use transfer::{TaskIo, Transfers};

/// A counter on its own cache line, so tasks updating theirs never contend.
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// Live progress of this process's tasks, read by whoever draws a progress bar.
pub struct Progress {
    done: Vec<Padded>,
    phase: Mutex<String>,
    phase_bytes: AtomicU64,
    /// CLOCK_MONOTONIC ns when this process's first phase began (0 before).
    first_phase: AtomicU64,
    /// CLOCK_MONOTONIC ns of the team clock's zero on this process.
    epoch: AtomicU64,
}

impl Progress {
    /// Counters for `threads` tasks of this process.
    pub fn new(threads: usize) -> Arc<Self> {
        Arc::new(Progress {
            done: (0..threads).map(|_| Padded::default()).collect(),
            phase: Mutex::new(String::new()),
            phase_bytes: AtomicU64::new(0),
            first_phase: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
        })
    }

    /// Marks the start of a phase's transfers (past its origin): the first one's is kept.
    fn phase_began(&self) {
        let _first = self.first_phase.compare_exchange(0, crate::team::clock::monotonic_ns().max(1), Relaxed, Relaxed);
    }

    /// When the first phase began (CLOCK_MONOTONIC ns), once it has.
    pub fn first_phase(&self) -> Option<u64> {
        Some(self.first_phase.load(Relaxed)).filter(|&t| t > 0)
    }

    /// A CLOCK_MONOTONIC time of this process as a time on the team's clock, the clock of
    /// the time series (0 before the run's clock is set).
    pub fn on_team_clock(&self, monotonic: u64) -> u64 {
        monotonic.saturating_sub(self.epoch.load(Relaxed))
    }

    /// (phase label, bytes this process's tasks moved so far in it, bytes the phase moves).
    pub fn read(&self) -> (String, u64, u64) {
        let done = self.done.iter().map(|c| c.0.load(Relaxed)).sum();
        (self.phase.lock().map(|s| s.clone()).unwrap_or_default(), done, self.phase_bytes.load(Relaxed))
    }
}

impl VerifyTally {
    /// Counts a bad transfer, keeping the first one seen.
    fn bad(&mut self, path: &std::path::Path, mismatch: Mismatch) {
        self.bad += 1;
        self.stale += (mismatch.fault == data::Fault::Stale) as u64;
        if self.first.is_none() {
            self.first = Some(BadTransfer { path: path.to_path_buf(), mismatch });
        }
    }

    fn add(&mut self, other: VerifyTally) {
        self.checked += other.checked;
        self.bad += other.bad;
        self.stale += other.stale;
        if self.first.is_none() {
            self.first = other.first;
        }
    }
}

/// The data files of a run: names in the target directory, opened through its descriptor.
pub struct DataFiles {
    /// The targets, held open (directories) or checked (devices).
    pub site: Site,
    /// File names, by file index.
    pub names: Vec<String>,
    /// Bytes of each file once written: on a device, where the next file's region starts.
    pub region: u64,
}

impl DataFiles {
    /// The base directory of task `task`'s metadata tree: the site's directories in turn.
    fn base(&self, task: usize) -> &Dir {
        self.site.dir(task).expect("a metadata run's site is made of directories (the runner refuses other kinds)")
    }

    /// How many bases a metadata run's tasks are spread over.
    fn bases(&self) -> usize {
        self.site.len().max(1)
    }

    /// The path of file `i`, for messages.
    fn show(&self, i: usize) -> PathBuf {
        self.site.show(&self.names, i)
    }
}

impl Execution {
    /// A run that failed before any phase.
    fn failed(message: String) -> Self {
        let failure = TaskFailure {
            task: 0,
            node: 0,
            message,
            hint: crate::spec::Hint::Because(
                "the system refused a thread: raise the process or thread limit (ulimit -u, the cgroup's pids.max)"
                    .into(),
                Box::new(crate::spec::Hint::Lower(vec![crate::spec::Setting::Tasks])),
            ),
            interrupted: false,
        };
        Execution { failure: Some(failure), ..Execution::default() }
    }
}

/// What a run gives the engine, the same on every process: the workload, its files, the
/// token that marks this run's data for verification, and whether to drop caches (asked for
/// and allowed); `progress` is this process's live counters.
pub struct RunInputs<'a> {
    /// The workload.
    pub w: &'a Workload,
    /// Its data files in the target.
    pub files: &'a DataFiles,
    /// Marks this run's data.
    pub token: u64,
    /// Drop the page cache before every phase.
    pub drop_caches: bool,
    /// Live counters for a progress bar.
    pub progress: Arc<Progress>,
    /// Stops the run after the current transfers.
    pub cancel: Cancel,
    /// Where a metadata run's item paths start, as the lead found its bases ([`path_start`]).
    pub path_start: PathStart,
}

/// What every task of this process shares.
struct Context<'a> {
    w: &'a Workload,
    work: Work<'a>,
    files: &'a DataFiles,
    token: u64,
    drop_caches: bool,
    progress: Arc<Progress>,
    cancel: Cancel,
    path_start: PathStart,
}

/// What the tasks work on: data files through their map of offsets, or metadata items.
enum Work<'a> {
    Data(&'a Data, OffsetMap),
    Meta(&'a Meta),
}

impl Work<'_> {
    fn meta(&self) -> Option<&Meta> {
        match self {
            Work::Meta(meta) => Some(meta),
            Work::Data(..) => None,
        }
    }
}

/// Runs the workload's phases with `threads` tasks in this process. The team may be larger
/// than `w.tasks` (a sweep point): then `w.tasks` tasks chosen round-robin over nodes work
/// and the others wait. The lead process gets the execution; the others get `None`.
pub fn execute<T: Team>(team: &T, threads: usize, run: RunInputs) -> Option<Execution> {
    let RunInputs { w, files, token, drop_caches, progress, cancel, path_start } = run;
    let work = match &w.shape {
        Shape::Data(data) => Work::Data(data, OffsetMap::new(data, w.tasks, w.seed)),
        Shape::Meta(meta) => Work::Meta(meta),
    };
    let ctx = Context { w, work, files, token, drop_caches, progress, cancel, path_start };
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

/// Whose data each task reads (by rank; none for metadata), whether every such read crosses
/// to another node, and how the engine meets the page cache.
fn placement_of<M: Member>(ctx: &Context, m: &M) -> (Vec<usize>, bool, PageCache) {
    let nodes = m.nodes();
    match ctx.work {
        Work::Data(data, _) => {
            let (sources, crosses) =
                if data.reorder { placement::reorder_sources(nodes) } else { ((0..m.size()).collect(), false) };
            (sources, crosses, backends::page_cache(data))
        }
        // A shifted stat or read reaches past this node's caches only if every neighbour is
        // on another node. Items are named, read and written through the page cache.
        Work::Meta(meta) => {
            let crosses = meta.shift > 0 && (0..nodes.len()).all(|r| nodes[r] != nodes[(r + meta.shift) % nodes.len()]);
            (Vec::new(), crosses, PageCache::Through)
        }
    }
}

fn run_task<M: Member>(ctx: &Context, m: &M) -> Option<Execution> {
    let w = ctx.w;
    // Made at the first phase that needs them.
    let (mut io, mut meta_io): (Option<TaskIo>, Option<MetaIo>) = (None, None);
    let mut clock = TaskClock::of(m);
    if m.local_index() == 0 {
        // Team time t is CLOCK_MONOTONIC - offset - epoch here.
        ctx.progress.epoch.store(clock.epoch_monotonic(), Relaxed);
    }
    let (sources, reorder_crosses_nodes, page_cache) = placement_of(ctx, m);
    let leads_node = placement::leads_its_node(m.nodes(), m.rank());
    let interval_ns = ((w.interval_secs * 1e9) as u64).max(MIN_INTERVAL_NS);
    let mut out = Execution { reorder_crosses_nodes, page_cache, ..Execution::default() };
    let mut lead_ns = phase::first_lead(m, &clock);
    // Whether a write phase of this run has made the data files: the next one starts afresh.
    let mut files_made = false;
    'run: for iteration in 0..w.iterations {
        // After a stonewalled write, reads cover only what every task managed to write; after
        // a stonewalled create, the later phases visit what every task made.
        let mut written = match &ctx.work {
            Work::Data(_, map) => map.per_task(),
            Work::Meta(_) => 0,
        };
        let mut made = Made::new(ctx.work.meta());
        for &op in &w.ops {
            let caches_dropped = ctx.drop_caches && drop_on_each_node(m, leads_node);
            ctx.progress.done[m.local_index()].0.store(0, Relaxed);
            let step = Step {
                iteration,
                caches_dropped,
                interval_ns,
                // A mix's GETs are checked too (only a mix of object requests may verify).
                verified: w.verify && (op.direction() == Op::Read && !op.on_objects_only() || op == Op::Mix),
                lead_ns,
            };
            let end = match &ctx.work {
                Work::Meta(meta) => {
                    let (source, count) = made.part(meta, op, m, ctx.files.bases());
                    show_phase(ctx, m, op, iteration, count * m.size() as u64);
                    let verified = w.verify && op == Op::FileRead;
                    let io = meta_io.get_or_insert_with(|| MetaIo::new(meta, w.verify));
                    let mut kind = MetaItems { ctx, meta, io, op, source, count, guard: None };
                    phase::drive(m, &clock, &mut kind, Step { verified, ..step }, &mut out)
                }
                Work::Data(data, map) => {
                    show_phase(ctx, m, op, iteration, w.bytes_per_phase());
                    let io = io.get_or_insert_with(|| {
                        let io = TaskIo::new(data, w.verify);
                        clock.follow(io.clock());
                        io
                    });
                    if op.direction() != Op::Read && !w.verify {
                        // Made before the clock starts: plain writes only stamp their offset into it.
                        for (i, slot) in io.free_slots() {
                            fill_random(slot, mix(w.seed ^ ctx.token, (m.rank() * 1024 + i) as u64));
                        }
                    }
                    let (source, limit) = match op.direction() {
                        Op::Read => (sources[m.rank()], written),
                        _ => (m.rank(), map.per_task()),
                    };
                    // Before the phase's origin, which every task passes only when all are
                    // there: no task opens the shared file before its first writer removed it.
                    let before = (op == Op::Write && files_made)
                        .then(|| transfer::remove_made(ctx, data, map, m.rank()))
                        .flatten();
                    let mut kind = Transfers { ctx, data, map, io, op, source, limit, before };
                    phase::drive(m, &clock, &mut kind, step, &mut out)
                }
            };
            lead_ns = phase::lead_after(end.exit_ns);
            files_made |= op == Op::Write;
            if w.stonewall_secs.is_some() {
                match op {
                    Op::Write | Op::Rewrite => written = m.min(end.ops),
                    // Worn out: every task made as many as the most any made.
                    Op::FileCreate => made.files = m.max(end.ops),
                    Op::DirCreate => made.dirs = m.max(end.ops),
                    _ => {}
                }
            }
            if end.failed {
                break 'run;
            }
        }
    }
    (m.rank() == 0).then_some(out)
}

/// Tells the progress bar which phase runs and how much it moves (bytes, or items).
fn show_phase<M: Member>(ctx: &Context, m: &M, op: Op, iteration: u32, total: u64) {
    if m.local_index() == 0 {
        *ctx.progress.phase.lock().unwrap_or_else(|p| p.into_inner()) =
            format!("{} {}/{}", op.name(), iteration + 1, ctx.w.iterations);
        ctx.progress.phase_bytes.store(total, Relaxed);
    }
}

/// How many items of each kind every task has made in this iteration.
struct Made {
    files: u64,
    dirs: u64,
}

impl Made {
    fn new(meta: Option<&Meta>) -> Self {
        let placed = meta.map_or(0, |meta| meta.tree.placed(meta.items));
        Made { files: placed, dirs: placed }
    }

    /// Whose items this task visits in phase `op`, and how many: its own when making them,
    /// the shifted neighbour's (mdtest -N) after; the tree of its own, or the shared tree
    /// of its base, which the first task in that base makes and removes.
    fn part<M: Member>(&self, meta: &crate::spec::Meta, op: Op, m: &M, bases: usize) -> (usize, u64) {
        let neighbour = (m.rank() + meta.shift) % m.size();
        let placed = meta.tree.placed(meta.items);
        match op {
            // The first task in each base makes (and removes) that base's shared tree.
            Op::TreeCreate | Op::TreeRemove if meta.shared => {
                (m.rank(), if m.rank() < bases { meta.tree.dirs().unwrap_or(1) } else { 0 })
            }
            Op::TreeCreate | Op::TreeRemove => (m.rank(), meta.tree.dirs().unwrap_or(1)),
            Op::FileCreate | Op::DirCreate => (m.rank(), placed),
            Op::DirStat | Op::DirRemove => (neighbour, self.dirs),
            _ => (neighbour, self.files),
        }
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
    // The waiting tasks wait here for the working ones, asleep: an MPI barrier would spin on
    // a core the working ones may need.
    m.rest();
    out
}
