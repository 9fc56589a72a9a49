//! The metadata phase kind (the mdtest class): a task makes, stats, reads or removes its items
//! (or another task's, with a shift), or the directories of its tree, each step stamped on the
//! team's clock. Everything lives below the run's root directory, which the lead made and
//! named in the manifest. Names and paths are written into reused buffers, so the hot path
//! allocates nothing.
//!
//! How a call finds its item is the workload's [`Resolve`]. By default each step resolves the
//! item's path from the base directory (the target's descriptor), as applications and mdtest
//! do, through `openat2` with `RESOLVE_BENEATH`, `RESOLVE_NO_SYMLINKS` and `RESOLVE_NO_XDEV`:
//! a file is opened or created by its whole path in one call; a stat, mkdir, rmdir or unlink
//! walks to the parent (`O_PATH`), makes the `*at` call on the leaf's name and closes the
//! parent. The relative mode holds the directory open and makes the `*at` call alone. Either
//! way no link is followed and no mount crossed on the way down, so a step never leaves the
//! target.

use super::backends::transfer_all;
use super::data::{fill_random, Fault, Mismatch};
use super::offsets::mix;
use super::phase::{PhaseKind, PhaseTrace, TaskClock, TaskPart};
use super::tree::{write_component, write_decimal, write_item_name, write_tree_dir, write_tree_name, ItemKind};
use super::{Context, EngineError, TaskFailure, VerifyTally};
use crate::measure::{TaskTiming, CHECKPOINTS};
use crate::spec::meta::Resolve;
use crate::spec::{Meta, Op};
use crate::sys::fs::{
    self as sys, close, O_CLOEXEC, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_PATH, O_RDONLY, O_WRONLY,
};
use crate::target::dir::{open_dir_beneath, openat_beneath};
use crate::team::Member;
use std::ffi::CStr;
use std::io;
use std::os::unix::io::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

/// One task's buffers for metadata phases, made once and reused by every phase.
pub(super) struct MetaIo {
    name: Vec<u8>,
    path: Vec<u8>,
    data: Vec<u8>,
    scratch: Vec<u8>,
}

impl MetaIo {
    pub(super) fn new(meta: &Meta, verify: bool) -> Self {
        let bytes = meta.write_bytes.max(meta.read_bytes) as usize;
        MetaIo {
            name: Vec::with_capacity(64),
            // The root's name, a tree's, a name per level and the item's, with room.
            path: Vec::with_capacity(meta.root.len() + 16 * (meta.tree.depth as usize + 2) + 64),
            data: vec![0; bytes],
            scratch: vec![0; if verify { bytes } else { 0 }],
        }
    }
}

/// One task's part of one metadata phase: `count` items (or tree directories) of task
/// `source`.
pub(super) struct MetaItems<'a> {
    pub ctx: &'a Context<'a>,
    /// The workload's metadata shape: held here, so no step asks the workload for it again.
    pub meta: &'a Meta,
    pub io: &'a mut MetaIo,
    pub op: Op,
    /// Whose items (or tree): this task's, or another's under a shift.
    pub source: usize,
    /// Items to visit; a stonewalled create may stop short, then wears out to the team's most.
    pub count: u64,
}

/// The directory the last item was in, so that a task walks down its tree (relative mode) or
/// writes the directory's path (path mode) only when the directory changes (items are placed
/// in blocks, one directory after the other).
struct Cursor {
    at: Option<u64>,
    /// The directory, held open (relative mode).
    fd: Option<OwnedFd>,
    /// Bytes of the directory's path from the base at the start of `MetaIo::path` (path mode).
    len: usize,
}

/// The directory a call on one entry starts from: held open by the cursor (relative mode), or
/// walked to for this call alone and closed after it (path mode).
enum Parent {
    Held(RawFd),
    Walked(OwnedFd),
}

impl Parent {
    fn raw(&self) -> RawFd {
        match self {
            Parent::Held(fd) => *fd,
            Parent::Walked(fd) => fd.as_raw_fd(),
        }
    }
}

impl PhaseKind for MetaItems<'_> {
    fn op(&self) -> Op {
        self.op
    }

    fn item_bytes(&self) -> u64 {
        match self.op {
            Op::FileCreate => self.meta().write_bytes,
            Op::FileRead => self.meta().read_bytes,
            _ => 0,
        }
    }

    fn run<M: Member>(&mut self, m: &M, clock: &TaskClock, trace: &mut PhaseTrace) -> TaskPart {
        if m.local_index() == 0 {
            self.ctx.progress.phase_began();
        }
        let w = self.ctx.w;
        let mut t = TaskTiming { task: m.rank() as u32, node: m.node(), ..TaskTiming::default() };
        let mut tally = VerifyTally::default();
        t.open_start = clock.now();
        let root = self.ctx.files.base(self.source).open_subdir(&self.meta().root);
        t.xfer_start = clock.now();
        trace.progression.push((t.xfer_start, 0));
        let (mut done, mut error) = (0, None);
        // The stonewall counts from the phase's start for this task, as for data transfers.
        let deadline = w.stonewall_secs.filter(|_| self.creates()).map(|s| t.open_start + (s * 1e9) as u64);
        match &root {
            Ok(root) => {
                let count = self.count;
                let mut walk = Walk { kind: self, root: root.raw(), clock, trace, tally: &mut tally, m };
                if let Err((n, e)) = walk.items(0..count, deadline).map(|n| done = n) {
                    (done, error) = (n, Some(e));
                }
            }
            Err(e) => {
                let path = self.ctx.files.base(self.source).show(&self.meta().root);
                error = Some(EngineError::io("open", &path, None, clone_error(e)));
            }
        }
        if deadline.is_some() {
            // Every task takes part, failed or not (its root unopened too), so nobody waits for
            // ever and the team's collectives stay paired.
            let goal = m.max(done);
            if let (Ok(root), None) = (&root, &error) {
                let mut walk = Walk { kind: self, root: root.raw(), clock, trace, tally: &mut tally, m };
                if let Err((n, e)) = walk.items(done..goal, None).map(|n| done = n) {
                    (done, error) = (n, Some(e));
                }
            }
        }
        t.xfer_end = clock.now();
        trace.progression.push((t.xfer_end, done));
        if let (Ok(root), None, true) = (&root, &error, self.meta().sync) {
            if let Err(e) = sys::syncfs(root.raw()) {
                error = Some(EngineError::io("syncfs", root.path(), None, e));
            }
        }
        t.sync_end = clock.now();
        drop(root);
        t.close_end = clock.now();
        t.ops = done;
        t.bytes = done * self.item_bytes();
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
        TaskPart { timing: t, verify: tally, failure }
    }
}

impl MetaItems<'_> {
    fn meta(&self) -> &Meta {
        self.meta
    }

    /// Whether the phase makes items (what a stonewall stops).
    fn creates(&self) -> bool {
        matches!(self.op, Op::FileCreate | Op::DirCreate)
    }
}

/// A task's way through its items in one phase.
struct Walk<'a, 'k, 'c, M: Member> {
    kind: &'a mut MetaItems<'k>,
    /// The run's root directory, held open.
    root: RawFd,
    clock: &'a TaskClock,
    trace: &'a mut PhaseTrace,
    tally: &'a mut VerifyTally,
    m: &'c M,
}

/// What an item phase computes once: where items go and the part of their names all share.
struct ItemWay {
    placement: crate::spec::meta::Placement,
    /// Bytes of `f.<task>.` (or `d.`) at the start of the name buffer.
    prefix: usize,
}

/// Items done, and the error that stopped the walk.
type Stopped = (u64, EngineError);

impl<M: Member> Walk<'_, '_, '_, M> {
    /// The base directory the run's root is in: the path walk starts there.
    fn base(&self) -> RawFd {
        self.kind.ctx.files.base(self.kind.source).raw()
    }

    fn resolve(&self) -> Resolve {
        self.kind.meta().resolve
    }

    /// Visits items (or tree directories) `range` in order until done, an error, the abort
    /// flag or the deadline; returns how many are done, counted from 0.
    fn items(&mut self, range: std::ops::Range<u64>, deadline: Option<u64>) -> Result<u64, Stopped> {
        let kind = &mut *self.kind;
        let (ctx, meta) = (kind.ctx, kind.meta);
        let tree = meta.tree;
        let (op, source) = (kind.op, kind.source as u64);
        let counter = &ctx.progress.done[self.m.local_index()].0;
        let step = (kind.count / CHECKPOINTS).max(1);
        let item_bytes = kind.item_bytes();
        let dirs = tree.dirs().unwrap_or(1);
        let mut cursor = Cursor { at: None, fd: None, len: 0 };
        let kind_of =
            if matches!(op, Op::DirCreate | Op::DirStat | Op::DirRemove) { ItemKind::Dir } else { ItemKind::File };
        kind.io.name.clear();
        write_item_name(kind_of, source, 0, &mut kind.io.name);
        let way = ItemWay { placement: tree.placement(meta.items), prefix: kind.io.name.len() - 1 };
        let fill = op == Op::FileCreate && !ctx.w.verify && meta.write_bytes > 0;
        if fill {
            // Made before the clock starts: files that are not checked share one content.
            fill_random(&mut kind.io.data, mix(ctx.w.seed ^ ctx.token, source));
        }
        let mut done = range.start;
        for i in range {
            if self.m.stopped() {
                break;
            }
            if ctx.cancel.is_cancelled() {
                return Err((done, EngineError::Interrupted));
            }
            let t0 = self.clock.now();
            let result = match op {
                Op::TreeCreate | Op::TreeRemove => {
                    // Parents before children when making, children before parents when removing.
                    let d = if op == Op::TreeCreate { i } else { dirs - 1 - i };
                    self.tree_dir(&mut cursor, op, d)
                }
                _ => self.item(&mut cursor, &way, i),
            };
            if let Err(e) = result {
                return Err((done, e));
            }
            let t1 = self.clock.now();
            self.trace.histogram.record(t1.saturating_sub(t0));
            self.trace.series.add(t1, item_bytes);
            done += 1;
            counter.store(done, Relaxed);
            if done % step == 0 {
                self.trace.progression.push((t1, done));
            }
            if deadline.is_some_and(|d| t1 >= d) {
                break;
            }
        }
        Ok(done)
    }

    /// Makes or removes tree directory `d` of this task's tree (or the shared one).
    fn tree_dir(&mut self, cursor: &mut Cursor, op: Op, d: u64) -> Result<(), EngineError> {
        let meta = self.kind.meta;
        let tree = meta.tree;
        let io = &mut *self.kind.io;
        // The name first, so that an error on the way to its directory names it.
        io.name.clear();
        match d {
            0 => write_tree_name(meta.shared, self.kind.source as u64, &mut io.name),
            _ => write_component((d - 1) % u64::from(tree.branch.max(1)), &mut io.name),
        }
        io.name.push(0);
        let at = tree.parent(d);
        let parent = self.parent(cursor, at)?;
        let name = CStr::from_bytes_with_nul(&self.kind.io.name).expect("one NUL, at the end");
        let done = match op {
            Op::TreeCreate => sys::mkdirat(parent.raw(), name, 0o755),
            _ => sys::rmdirat(parent.raw(), name),
        };
        if let Err(e) = done {
            let call = if op == Op::TreeCreate { "mkdir" } else { "rmdir" };
            return Err(self.failed(call, at, e));
        }
        Ok(())
    }

    /// Does the phase's step on item `i` of the source task.
    fn item(&mut self, cursor: &mut Cursor, way: &ItemWay, i: u64) -> Result<(), EngineError> {
        let (ctx, meta) = (self.kind.ctx, self.kind.meta);
        let (op, source) = (self.kind.op, self.kind.source as u64);
        let d = way.placement.dir_of(i);
        // The name's `f.<task>.` stays from the phase's start: only the index is written, and
        // before the directory is entered, so an error there names this item.
        self.kind.io.name.truncate(way.prefix);
        write_decimal(i, &mut self.kind.io.name);
        self.kind.io.name.push(0);
        let failed = |call: &'static str, e: io::Error, this: &Self| this.failed(call, Some(d), e);
        match op {
            Op::DirCreate | Op::DirStat | Op::DirRemove | Op::FileStat | Op::FileRemove => {
                let parent = self.parent(cursor, Some(d))?;
                let name = CStr::from_bytes_with_nul(&self.kind.io.name).expect("one NUL, at the end");
                if let Err((call, e)) = entry_call(op, parent.raw(), name) {
                    return Err(failed(call, e, self));
                }
            }
            Op::FileCreate => {
                let file = self.open_item(cursor, d, O_CREAT | O_EXCL | O_WRONLY, "create")?;
                let io = &mut *self.kind.io;
                let len = meta.write_bytes as usize;
                if ctx.w.verify {
                    fill_random(&mut io.data[..len], mix(ctx.token ^ source, i));
                }
                let written =
                    transfer_all(file.as_raw_fd(), Op::Write, &mut io.data[..len], 0).and_then(|n| match n == len {
                        true => Ok(()),
                        false => Err(io::Error::new(io::ErrorKind::WriteZero, "the file took no more bytes")),
                    });
                let closed = close(file);
                if let Err(e) = written.and(closed) {
                    return Err(failed("write", e, self));
                }
            }
            Op::FileRead => {
                // O_NONBLOCK keeps a FIFO put in the file's place from hanging the open.
                let file = self.open_item(cursor, d, O_RDONLY | O_NONBLOCK, "open")?;
                let io = &mut *self.kind.io;
                let len = meta.read_bytes as usize;
                let got = transfer_all(file.as_raw_fd(), Op::Read, &mut io.data[..len], 0);
                let closed = close(file);
                let got = match got.and_then(|n| closed.map(|()| n)) {
                    Ok(n) => n,
                    Err(e) => return Err(failed("read", e, self)),
                };
                if ctx.w.verify {
                    self.tally.checked += 1;
                    // The expected bytes are made at the written length: the tail of a stream
                    // depends on it.
                    fill_random(&mut io.scratch[..meta.write_bytes as usize], mix(ctx.token ^ source, i));
                    let expected = &io.scratch[..len];
                    let bad = (0..len).find(|&k| k >= got || io.data[k] != expected[k]);
                    if let Some(k) = bad {
                        let fault = if k >= got { Fault::Missing } else { Fault::Corrupt };
                        let found = if k >= got { 0 } else { io.data[k] };
                        let mismatch = Mismatch { fault, offset: k as u64, expected: expected[k], found };
                        let path = self.show(Some(d));
                        self.tally.bad(&path, mismatch);
                    }
                } else if got < len {
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, format!("got {got} of {len} bytes"));
                    return Err(failed("read", e, self));
                }
            }
            Op::Write | Op::Read | Op::Rewrite | Op::Reread | Op::Mix | Op::TreeCreate | Op::TreeRemove => {
                unreachable!("not an item phase")
            }
        }
        Ok(())
    }

    /// The directory a call on an entry of tree directory `at` (`None`: the run's root) starts
    /// from: the cursor's (relative mode), or walked to from the base for this call alone.
    fn parent(&mut self, cursor: &mut Cursor, at: Option<u64>) -> Result<Parent, EngineError> {
        if self.resolve() == Resolve::Relative {
            return match at {
                None => Ok(Parent::Held(self.root)),
                Some(d) => self.enter(cursor, d).map(Parent::Held),
            };
        }
        let (base, len) = (self.base(), self.locate(cursor, at));
        let path = &mut self.kind.io.path;
        path.truncate(len);
        path.push(0);
        let dir = CStr::from_bytes_with_nul(path).expect("one NUL, at the end");
        // O_PATH: the walk alone, with no open of the directory itself to pay for.
        let walked = openat_beneath(base, dir, O_PATH | O_DIRECTORY, 0);
        walked.map(Parent::Walked).map_err(|e| self.failed("open", at, e))
    }

    /// Opens (or with `O_CREAT` makes) the current name in tree directory `d`: through the
    /// directory the cursor holds (relative mode), or by its whole path from the base.
    fn open_item(
        &mut self,
        cursor: &mut Cursor,
        d: u64,
        flags: i32,
        call: &'static str,
    ) -> Result<OwnedFd, EngineError> {
        let base = self.base();
        let opened = match self.resolve() {
            Resolve::Relative => {
                let dir = self.enter(cursor, d)?;
                let name = CStr::from_bytes_with_nul(&self.kind.io.name).expect("one NUL, at the end");
                sys::openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, 0o644)
            }
            Resolve::Path => {
                let len = self.locate(cursor, Some(d));
                let io = &mut *self.kind.io;
                io.path.truncate(len);
                io.path.push(b'/');
                io.path.extend_from_slice(&io.name);
                let path = CStr::from_bytes_with_nul(&io.path).expect("one NUL, at the end");
                openat_beneath(base, path, flags, 0o644)
            }
        };
        opened.map_err(|e| self.failed(call, Some(d), e))
    }

    /// Path mode: the length of the path from the base of tree directory `at` (`None`: the
    /// run's root), written at the start of `MetaIo::path` unless the cursor has it there.
    fn locate(&mut self, cursor: &mut Cursor, at: Option<u64>) -> usize {
        if at.is_some() && cursor.at == at {
            return cursor.len;
        }
        let meta = self.kind.meta;
        let path = &mut self.kind.io.path;
        path.clear();
        path.extend_from_slice(meta.root.as_bytes());
        if let Some(d) = at {
            path.push(b'/');
            write_tree_dir(meta.shared, self.kind.source as u64, &meta.tree, d, path);
        }
        // The run's root is not kept: only the tree phases start there, once per tree.
        *cursor = Cursor { at, fd: None, len: path.len() };
        path.len()
    }

    /// The open descriptor of tree directory `d`, walking down from the root, one component
    /// at a time without following links, when it is not the directory the cursor holds.
    fn enter(&mut self, cursor: &mut Cursor, d: u64) -> Result<RawFd, EngineError> {
        if let (Some(at), Some(fd)) = (cursor.at, &cursor.fd) {
            if at == d {
                return Ok(fd.as_raw_fd());
            }
        }
        cursor.fd = None;
        let meta = self.kind.meta;
        let path = &mut self.kind.io.path;
        path.clear();
        write_tree_dir(meta.shared, self.kind.source as u64, &meta.tree, d, path);
        path.push(0);
        let mut fd: Option<OwnedFd> = None;
        for component in path[..path.len() - 1].split(|&c| c == b'/') {
            let mut buf = [0u8; 32];
            buf[..component.len()].copy_from_slice(component);
            let name = CStr::from_bytes_until_nul(&buf).expect("a NUL after the component");
            let from = fd.as_ref().map_or(self.root, AsRawFd::as_raw_fd);
            // A mount put in the tree mid-run fails the run rather than be written into.
            match open_dir_beneath(from, name) {
                Ok(next) => fd = Some(next),
                Err(e) => return Err(self.failed("open", Some(d), e)),
            }
        }
        let raw = fd.as_ref().map(AsRawFd::as_raw_fd).expect("a tree has at least its own directory");
        *cursor = Cursor { at: Some(d), fd, len: 0 };
        Ok(raw)
    }

    /// The path of the current name in tree directory `d` (`None`: the run's root), for
    /// messages only.
    fn show(&self, d: Option<u64>) -> PathBuf {
        let meta = self.kind.meta;
        let mut path = self.kind.ctx.files.base(self.kind.source).show(&meta.root);
        if let Some(d) = d {
            let mut p = Vec::new();
            write_tree_dir(meta.shared, self.kind.source as u64, &meta.tree, d, &mut p);
            path.push(String::from_utf8_lossy(&p).as_ref());
        }
        let name = self.kind.io.name.strip_suffix(&[0]).unwrap_or(&self.kind.io.name);
        if !name.is_empty() {
            path.push(String::from_utf8_lossy(name).as_ref());
        }
        path
    }

    fn failed(&self, call: &'static str, d: Option<u64>, e: io::Error) -> EngineError {
        EngineError::io(call, &self.show(d), None, e)
    }
}

/// The one `*at` call of a phase that works on a directory entry (not a file's contents), on
/// entry `name` of `dir`; what failed is the call's name and the error.
fn entry_call(op: Op, dir: RawFd, name: &CStr) -> Result<(), (&'static str, io::Error)> {
    let (call, done) = match op {
        Op::DirCreate => ("mkdir", sys::mkdirat(dir, name, 0o755)),
        Op::DirRemove => ("rmdir", sys::rmdirat(dir, name)),
        Op::FileRemove => ("unlink", sys::unlinkat(dir, name)),
        Op::DirStat | Op::FileStat => ("stat", sys::fstatat(dir, name).map(drop)),
        _ => unreachable!("{} is not a call on a directory entry", op.name()),
    };
    done.map_err(|e| (call, e))
}

/// A copy of an error (the root's open error is reported by every task that needs it).
fn clone_error(e: &io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.to_string()),
    }
}
