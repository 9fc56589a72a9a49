//! The data-transfer phase kind: a task opens its file (or another task's, with --reorder),
//! moves its transfers through the engine's backend in pattern order with up to the queue
//! depth in flight, optionally fsyncs, and closes, each step stamped on the team's clock.
//! Errors never leave a phase early: the task records the error, raises the abort flag so the
//! others stop after their current transfer, and meets them at the end of the phase.

use super::backends::{self, Backend, Completion};
use super::data::{check, fill_verified, stamp_plain, Fault, Mismatch, Stamp};
use super::offsets::OffsetMap;
use super::offsets::Visitor;
use super::phase::{PhaseKind, PhaseTrace, TaskClock, TaskPart};
use super::{Context, DataFiles, EngineError, TaskFailure, VerifyTally};
use crate::measure::{TaskTiming, CHECKPOINTS};
use crate::spec::{Data, Op, Pattern};
use crate::sys::errno::ENOENT;
use crate::sys::fs::{close, Advice, O_DIRECT, O_RDONLY, O_RDWR, O_WRONLY};
use crate::sys::mem::IoBufs;
use crate::target::site::{Handle, Opening};
use crate::team::Member;
use std::collections::HashSet;
use std::fs::File;
use std::ops::Range;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One task's I/O state, made once and reused by every phase.
pub(super) struct TaskIo {
    /// The backend, which holds the task's buffers (one per slot).
    backend: Result<Box<dyn Backend>, Setup>,
    scratch: Vec<u8>,
    done: Vec<Completion>,
    started: Vec<u64>,
    offsets: Vec<u64>,
    /// Each slot's transfer: a write or a read (a mixed phase draws one per transfer).
    dirs: Vec<Op>,
    free: Vec<usize>,
    /// The task's objects a DELETE removed, by block ([`IoSite::pooled`]).
    gone: HashSet<u64>,
}

impl TaskIo {
    /// The buffers and backend of a task of a data workload, one more buffer to check reads
    /// into when it `verify`s.
    pub(super) fn new(data: &Data, verify: bool) -> Self {
        // More buffers than transfers would never be used.
        let depth = (data.iodepth.max(1) as u64).min(data.transfers_per_task().max(1)) as usize;
        let size = data.transfer as usize;
        let mut io = TaskIo {
            backend: Err(Setup::NoMemory(data.task_buffer_bytes(verify))),
            scratch: Vec::new(),
            done: Vec::with_capacity(depth),
            started: vec![0; depth],
            offsets: vec![0; depth],
            dirs: vec![Op::Read; depth],
            free: (0..depth).rev().collect(),
            gone: HashSet::new(),
        };
        // Buffers are reserved fallibly: a size the system cannot give fails the run, never
        // the process.
        let bufs = IoBufs::try_new(depth, size);
        let scratch_ok = !verify || io.scratch.try_reserve_exact(size).is_ok();
        let Some(bufs) = bufs.filter(|_| scratch_ok) else { return io };
        io.scratch.resize(if verify { size } else { 0 }, 0);
        io.backend = backends::open(&data.engine, depth, bufs).map_err(|e| Setup::Unavailable(e.to_string()));
        io
    }

    /// The clock the backend keeps its time on, when it keeps its own (the delay engine's).
    pub(super) fn clock(&self) -> Option<backends::TestClock> {
        self.backend.as_ref().ok().and_then(|b| b.clock())
    }

    /// The buffers not in flight, with their slots (none when the backend could not be made).
    pub(super) fn free_slots(&mut self) -> impl Iterator<Item = (usize, &mut [u8])> {
        self.backend.iter_mut().flat_map(|b| b.bufs().free_mut())
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
    fn error(&self, data: &Data) -> EngineError {
        match self {
            Setup::Unavailable(why) => {
                EngineError::EngineUnavailable { engine: backends::entry(&data.engine).name, why: why.clone() }
            }
            Setup::NoMemory(bytes) => EngineError::NoMemory { bytes: *bytes },
        }
    }
}

/// One task's data transfers in one phase: its own transfers when writing, those of `source`
/// when reading (another task's with --reorder), at most `limit` of them. `op` is the phase
/// as the record names it; the data path does its direction (a rewrite writes, a reread
/// reads).
pub(super) struct Transfers<'a> {
    pub ctx: &'a Context<'a>,
    pub data: &'a Data,
    pub map: &'a OffsetMap,
    pub io: &'a mut TaskIo,
    pub op: Op,
    pub source: usize,
    pub limit: u64,
    /// Why the task cannot start the phase, found before it (see [`remove_made`]).
    pub before: Option<EngineError>,
}

/// Removes the file `task` writes, when it is that file's first writer and the engine uses
/// storage, so that a write phase after an earlier one (the next iteration's) writes a new
/// file as IOR's repetitions do, instead of overwriting pages already allocated: that is
/// `--op rewrite`, a phase of its own. Untimed, as IOR removes before its timer starts. Only
/// this run's own file goes: an earlier write phase of the run made it.
pub(super) fn remove_made(ctx: &Context, data: &Data, map: &OffsetMap, task: usize) -> Option<EngineError> {
    if !backends::entry(&data.engine).caps.storage || !map.first_writer(task) {
        return None;
    }
    let index = map.file_of(task);
    match ctx.files.site.remove(&ctx.files.names, index) {
        Err(e) if e.raw_os_error() != Some(ENOENT) => Some(EngineError::io("unlink", &ctx.files.show(index), None, e)),
        _ => None,
    }
}

impl Transfers<'_> {
    /// What the data path does: a write or a read (a rewrite writes, a reread reads), or the
    /// object store's own request, which the engine makes as it is.
    fn data_path(&self) -> Op {
        match self.op.on_objects_only() {
            true => self.op,
            false => self.op.direction(),
        }
    }

    /// Opens file `file_index` (an object, on a bucket) and attaches the backend to it: the
    /// file, where its data starts, and whether the backend is attached. Engines that touch
    /// no storage (null, delay) get no file. A failure of either step is the task's `error`.
    fn open_attached(
        &mut self,
        file_index: usize,
        path: &Path,
        error: &mut Option<EngineError>,
    ) -> (Option<File>, u64, bool) {
        let (data, op) = (self.data, self.data_path());
        let handle = match backends::entry(&data.engine).caps.storage && error.is_none() {
            true => match open(self.ctx.files, file_index, op, data) {
                Ok(h) => Some(h),
                Err(e) => {
                    *error = Some(EngineError::io("open", path, None, e));
                    None
                }
            },
            false => None,
        };
        let (file, base, object) = match handle {
            Some(Handle::File(f, base)) => (Some(f), base, None),
            Some(Handle::Object(o)) => (None, 0, Some(o)),
            None => (None, 0, None),
        };
        let mut attached = false;
        if error.is_none() {
            let size = self.map.file_size();
            match &mut self.io.backend {
                // An object engine's size is each object's, a block.
                Ok(b) => match match &object {
                    Some(o) => {
                        let name = self.ctx.files.names.get(file_index).map_or("", String::as_str);
                        let sizes = &data.object_size;
                        let layout =
                            backends::ObjectLayout { block: data.block, sizes, seed: self.ctx.w.seed, file: name };
                        b.attach_object(o, op, &layout)
                    }
                    None => b.attach(file.as_ref(), op, size),
                } {
                    Ok(()) => attached = true,
                    Err(e) => *error = Some(EngineError::io("prepare", path, None, e)),
                },
                Err(setup) => *error = Some(setup.error(data)),
            }
        }
        (file, base, attached)
    }

    /// Flushes what the backend holds and fsyncs the file (`--fsync`, inside the timed window).
    fn fsync(&mut self, file: Option<&File>, path: &Path, error: &mut Option<EngineError>) {
        let flushed = match &mut self.io.backend {
            Ok(b) => b.flush(),
            Err(_) => Ok(()),
        };
        if let Err(e) = flushed.and_then(|()| file.map_or(Ok(()), File::sync_all)) {
            *error = Some(EngineError::io("fsync", path, None, e));
        }
    }

    /// Takes what an object engine tallied of its requests, detaches the backend from the
    /// file, when attached, and closes the file; a close that fails is the task's error
    /// unless it has one already.
    fn close_file(&mut self, file: Option<File>, attached: bool, path: &Path, acc: &mut Acc) {
        let error = &mut acc.error;
        if attached {
            if let Ok(b) = &mut self.io.backend {
                if let Some(requests) = b.requests() {
                    acc.trace.requests = requests;
                }
                b.detach();
            }
        }
        if let Some(f) = file {
            if let (Err(e), None) = (close(f), &*error) {
                *error = Some(EngineError::io("close", path, None, e));
            }
        }
    }
}

/// What a task gathers while it transfers: its trace, its verification tally, its error.
struct Acc<'t> {
    trace: &'t mut PhaseTrace,
    tally: VerifyTally,
    error: Option<EngineError>,
    /// Bytes the completed transfers moved (an object store's HEAD, LIST, DELETE move none).
    moved: u64,
}

impl PhaseKind for Transfers<'_> {
    fn op(&self) -> Op {
        self.op
    }

    fn item_bytes(&self) -> u64 {
        self.data.transfer
    }

    fn finished_at(&self, t: &TaskTiming) -> u64 {
        if self.data.first_done_at_transfers {
            t.xfer_end
        } else {
            t.close_end
        }
    }

    fn run<M: Member>(&mut self, m: &M, clock: &TaskClock, trace: &mut PhaseTrace) -> TaskPart {
        if m.local_index() == 0 {
            self.ctx.progress.phase_began();
        }
        let op = self.data_path();
        let (ctx, data, map, source, limit) = (self.ctx, self.data, self.map, self.source, self.limit);
        let w = ctx.w;
        let file_index = map.file_of(source);
        let path = &ctx.files.show(file_index);
        let visitor = map.visitor(source);
        let mut t = TaskTiming { task: m.rank() as u32, node: m.node(), ..TaskTiming::default() };
        let mut acc = Acc { trace, tally: VerifyTally::default(), error: self.before.take(), moved: 0 };
        let mut done = 0;
        t.open_start = clock.now();
        let deadline = w.stonewall_secs.map(|s| t.open_start + (s * 1e9) as u64);
        let (file, base, attached) = self.open_attached(file_index, path, &mut acc.error);
        let io = &mut *self.io;
        t.xfer_start = clock.now();
        acc.trace.progression.push((t.xfer_start, 0));
        let site = IoSite {
            ctx,
            data,
            clock,
            stopped: &|| m.stopped(),
            path,
            file: file.as_ref(),
            base,
            op,
            source: source as u64,
            visitor: &visitor,
            counter: &ctx.progress.done[m.local_index()].0,
            step: (limit / CHECKPOINTS).max(1),
            pool: backends::entry(&data.engine).takes == backends::Handles::Objects,
        };
        if attached {
            done = site.transfers(io, 0..limit, deadline, &mut acc);
        }
        if w.wear_out {
            // Every task takes part in this reduction, failed or not, so nobody waits for ever.
            let goal = m.max(done);
            if let (None, true) = (&acc.error, attached) {
                done = site.transfers(io, done..goal, None, &mut acc);
            }
        }
        if let (None, true, Ok(b)) = (&acc.error, attached && op != Op::Read, &mut io.backend) {
            if let Err(e) = b.finish() {
                acc.error = Some(EngineError::io("write", path, None, e));
            }
        }
        t.xfer_end = clock.now();
        acc.trace.progression.push((t.xfer_end, done));
        if let (None, true) = (&acc.error, op != Op::Read && data.fsync) {
            self.fsync(file.as_ref(), path, &mut acc.error);
        }
        t.sync_end = clock.now();
        self.close_file(file, attached, path, &mut acc);
        t.close_end = clock.now();
        t.ops = done;
        t.bytes = acc.moved;
        let failure = acc.error.map(|e| {
            m.raise_abort();
            TaskFailure {
                task: m.rank(),
                node: m.node(),
                message: e.to_string(),
                hint: e.hint(),
                interrupted: matches!(e, EngineError::Interrupted),
            }
        });
        TaskPart { timing: t, verify: acc.tally, failure }
    }
}

fn open(files: &DataFiles, index: usize, op: Op, data: &Data) -> std::io::Result<Handle> {
    let access = match op {
        // A writable shared mapping needs a descriptor open for reading too.
        Op::Write if backends::entry(&data.engine).caps.writes_need_read => O_RDWR,
        Op::Mix => O_RDWR,
        Op::Write => O_WRONLY,
        _ => O_RDONLY,
    };
    // The lead named every file in the manifest before the run; a writing task creates its
    // file (or opens it, when another task or phase made it), through the target's
    // descriptor, never through a link. Made on the writer's own node, no other node holds
    // stale attributes of an empty file (FUSE clients cache them).
    let flags = access | if data.direct { O_DIRECT } else { 0 };
    let how = match op {
        Op::Write => Opening::Create,
        _ => Opening::Existing,
    };
    let (file, base) = match files.site.open(&files.names, (index, files.region), flags, how)? {
        Handle::File(file, base) if !data.no_fadvise => (file, base),
        other => return Ok(other),
    };
    // Tell the page cache the access pattern, as fio does by default: deep readahead for
    // sequential reads, none for random ones. Only advice, so its failure is ignored.
    let advice = match data.pattern {
        Pattern::Sequential => Advice::Sequential,
        Pattern::Random | Pattern::RandomOverlap => Advice::Random,
        Pattern::Backward | Pattern::Stride(_) | Pattern::Same => Advice::Normal,
    };
    let _advised = crate::sys::fs::fadvise(file.as_raw_fd(), advice);
    Ok(Handle::File(file, base))
}

/// One task's view of a phase's transfers.
struct IoSite<'a> {
    ctx: &'a Context<'a>,
    data: &'a Data,
    clock: &'a TaskClock,
    /// Whether the team is to stop (`Member::stopped`).
    stopped: &'a dyn Fn() -> bool,
    path: &'a Path,
    file: Option<&'a File>,
    /// Where the file's data starts: 0, or a device region's offset.
    base: u64,
    op: Op,
    source: u64,
    visitor: &'a Visitor<'a>,
    counter: &'a AtomicU64,
    step: u64,
    /// Whether the engine keeps a pool of objects ([`IoSite::pooled`]).
    pool: bool,
}

impl IoSite<'_> {
    /// Whether transfer `i` writes or reads: the phase's direction, or in a mixed phase a
    /// seeded draw per task and transfer with `--read-percent` chances of a read.
    fn direction_of(&self, i: u64) -> Op {
        match self.op {
            // A mix of object requests, each drawn with its weight's share.
            Op::Mix if !self.data.mix.is_empty() => {
                self.data.mix.draw(super::offsets::mix(self.ctx.w.seed ^ MIX_SALT, self.source << 40 ^ i))
            }
            Op::Mix => {
                let draw = super::offsets::mix(self.ctx.w.seed ^ MIX_SALT, self.source << 40 ^ i) % 100;
                if draw < u64::from(self.data.read_percent) {
                    Op::Read
                } else {
                    Op::Write
                }
            }
            op => op,
        }
    }

    /// The request made of a drawn one, with the pool of the task's objects kept: a DELETE
    /// removes its object from the pool, a write puts it back, and in a mix a GET, HEAD or
    /// DELETE drawn on an object no longer there PUTs it again instead, so every request
    /// finds its object and a GET reads the bytes stamped for it (as warp prepares objects
    /// and keeps those it deletes out of its GETs).
    fn pooled(&self, dir: Op, offset: u64, gone: &mut HashSet<u64>) -> Op {
        if !self.pool {
            return dir;
        }
        let k = offset / self.data.block.max(1);
        match dir {
            Op::Read | Op::Head | Op::Delete if self.op == Op::Mix && gone.remove(&k) => Op::Write,
            Op::Write => {
                gone.remove(&k);
                dir
            }
            Op::Delete => {
                gone.insert(k);
                dir
            }
            _ => dir,
        }
    }

    /// Makes transfers `range` in pattern order, keeping up to the queue depth in flight,
    /// until done, a failure, the abort flag or the deadline; in-flight transfers are always
    /// drained. Returns how many transfers completed (from `from` on, counted from 0).
    fn transfers(&self, io: &mut TaskIo, range: Range<u64>, deadline: Option<u64>, acc: &mut Acc) -> u64 {
        let (from, to) = (range.start, range.end);
        let Acc { trace, tally, error, moved } = acc;
        let (w, data) = (self.ctx.w, self.data);
        if io.backend.is_err() {
            return from;
        }
        let (mut next, mut completed, mut inflight, mut stop) = (from, from, 0usize, false);
        loop {
            if !stop {
                if let Some(e) = self.submit(io, &mut next, to, &mut inflight) {
                    *error = Some(e);
                    stop = true;
                }
            }
            if inflight == 0 {
                break;
            }
            let Ok(backend) = io.backend.as_mut() else { break };
            if let Err(e) = backend.reap(1, &mut io.done) {
                *error = Some(EngineError::io(syscall(self.op), self.path, None, e));
                break;
            }
            for (slot, result) in io.done.drain(..) {
                let t = self.clock.now();
                inflight -= 1;
                io.free.push(slot);
                let (offset, dir) = (io.offsets[slot], io.dirs[slot]);
                let n = match self.whole(result, dir, offset, tally) {
                    Ok(n) => n,
                    Err(failed) => {
                        if let Some(e) = failed {
                            *error = Some(e);
                        }
                        stop = true;
                        continue;
                    }
                };
                // An fsync after each write is part of that write's latency: the operation
                // is not done until the data is on stable storage.
                let t = if dir == Op::Write && data.fsync_each {
                    if let Err(e) = self.file.map_or(Ok(()), File::sync_all) {
                        *error = Some(EngineError::io("fsync", self.path, Some(offset), e));
                        stop = true;
                        continue;
                    }
                    self.clock.now()
                } else {
                    t
                };
                let latency = t.saturating_sub(io.started[slot]);
                trace.histogram.record(latency);
                let bytes = n as u64;
                trace.series.add(t, bytes);
                *moved += bytes;
                completed += 1;
                self.counter.store(completed * data.transfer, Relaxed);
                if completed % self.step == 0 {
                    trace.progression.push((t, completed));
                }
                if dir == Op::Read && w.verify {
                    let buf = backend.bufs().get(slot).expect("a reaped slot is not in flight");
                    self.check_read(&buf[..n], offset, &mut io.scratch, tally);
                }
                if deadline.is_some_and(|d| t >= d) {
                    stop = true;
                }
            }
            if (self.stopped)() {
                stop = true;
            }
            if self.ctx.cancel.is_cancelled() {
                *error = Some(EngineError::Interrupted);
                stop = true;
            }
        }
        completed
    }

    /// Submits transfers from `*next` on, short of `to`, while a slot is free: each stamped
    /// (a write) at its offset on the target and timed from here, `*inflight` counting them.
    /// Returns the error of a submission the backend refused, its slot free again.
    fn submit(&self, io: &mut TaskIo, next: &mut u64, to: u64, inflight: &mut usize) -> Option<EngineError> {
        let Ok(backend) = io.backend.as_mut() else { return None };
        while *next < to {
            let Some(slot) = io.free.pop() else { break };
            // Stamped, submitted and reported at the offset on the target, so a device's
            // corruption is found where it is.
            let offset = self.base + self.visitor.offset(*next);
            let dir = self.pooled(self.direction_of(*next), offset, &mut io.gone);
            let buf = backend.bufs().get_mut(slot).expect("a free slot is not in flight");
            if dir == Op::Write {
                if self.ctx.w.verify {
                    fill_verified(buf, Stamp { token: self.ctx.token, task: self.source, offset });
                } else {
                    stamp_plain(buf, offset);
                }
            }
            io.offsets[slot] = offset;
            io.dirs[slot] = dir;
            io.started[slot] = self.clock.now();
            // The slot came off the free list, so nothing is in flight on it; it goes back
            // only after its completion is reaped.
            if let Err(e) = backend.submit(slot, offset, dir) {
                io.free.push(slot);
                return Some(EngineError::io(syscall(dir), self.path, Some(offset), e));
            }
            *inflight += 1;
            *next += 1;
        }
        None
    }

    /// The bytes a reaped transfer of `dir` at `offset` moved, when it moved its whole
    /// length (an object's request moves what it moves: the object's own size, or nothing
    /// for HEAD, LIST and DELETE; the engine fails a short one itself). If not: under
    /// verification, a read of a file that ends early is wrong data, not an I/O error (the
    /// bytes that should be there are not), tallied as such (`Err(None)`); anything else is
    /// the error that stops the task.
    fn whole(
        &self,
        result: std::io::Result<usize>,
        dir: Op,
        offset: u64,
        tally: &mut VerifyTally,
    ) -> Result<usize, Option<EngineError>> {
        let len = self.data.transfer as usize;
        let failed = match result {
            Ok(n) if n == len || self.pool => return Ok(n),
            Ok(n) if dir == Op::Read && self.ctx.w.verify => {
                tally.checked += 1;
                let end = offset + n as u64;
                tally.bad(self.path, Mismatch { fault: Fault::Missing, offset: end, expected: 0, found: 0 });
                return Err(None);
            }
            Ok(n) if dir == Op::Read => {
                EngineError::ShortRead { path: self.path.to_path_buf(), offset, got: n, want: len }
            }
            Ok(n) => {
                let e = std::io::Error::new(std::io::ErrorKind::WriteZero, format!("wrote {n} of {len} bytes"));
                EngineError::io("write", self.path, Some(offset), e)
            }
            Err(e) => EngineError::io(syscall(dir), self.path, Some(offset), e),
        };
        Err(Some(failed))
    }

    /// Checks the bytes a read at `offset` brought against the stamp they should carry.
    fn check_read(&self, buf: &[u8], offset: u64, scratch: &mut [u8], tally: &mut VerifyTally) {
        tally.checked += 1;
        let stamp = Stamp { token: self.ctx.token, task: self.source, offset };
        if let Some(mismatch) = check(buf, stamp, scratch) {
            tally.bad(self.path, mismatch);
        }
    }
}

/// Keeps a mixed phase's draws apart from the random order's, which use the same seed.
const MIX_SALT: u64 = 0x6d69_7865_645f_7277;

/// The system call an op makes, as error messages name it (not the op's own name, which is
/// serde's: a phase kind may one day make several calls).
fn syscall(op: Op) -> &'static str {
    match op {
        Op::Write => "write",
        Op::Head => "head",
        Op::List => "list",
        Op::Delete => "delete",
        _ => "read",
    }
}
