//! The metadata phase kind (the mdtest class): a task makes, stats, reads or removes its items
//! (or another task's, with a shift), or the directories of its tree, each step stamped on the
//! team's clock. Everything lives below the run's root directory, which the lead made and
//! named in the manifest. Names and paths are written into reused buffers, so the hot path
//! allocates nothing.
//!
//! How a call finds its item is the workload's [`Resolve`]. By default each step is the one
//! call mdtest makes, on the item's whole path from `/`, as mdtest names it: `mkdirat`,
//! `fstatat`, `unlinkat` on `/scratch/x/iosurvey.meta/u.0/t.1/f.0.17`, and an open by
//! `openat2` with `RESOLVE_NO_SYMLINKS`, also one call, so an open or create never goes
//! through a link. What keeps the walk's other calls inside the run: every directory above the
//! run's root is held (no user but root and the run's can rename or replace what it leads
//! to, [`Dir::held_path`], checked when the run starts and before and after each phase), and
//! the root's mode, 0700, means no other user can put a link or a mount point below it; a
//! check before and after each phase, by descriptor, finds the root still the run's own
//! directory of mode 0700 in its place and every directory of the tree still the one it was,
//! reached through no link and no mount. Another root process that swaps one mid-phase fails
//! the run at the phase's end (docs/safety.md). When a directory above the root is not held,
//! the lead says so and each path starts at the run's root, held open (`u.0/t.1/f.0.17`, the
//! opens with `RESOLVE_BENEATH` and `RESOLVE_NO_XDEV` too): the same calls on a shorter path.
//! The relative mode holds each directory open and makes the `*at` call on the bare name.

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
use crate::target::dir::{euid, Dir, Kind, PRIVATE};
use crate::target::dir::{open_dir_beneath, open_path_no_links, openat_beneath};
use crate::team::Member;
use std::ffi::CStr;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::io::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

/// Where the path of each item of a path-walk run starts; the lead decides once per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum PathStart {
    /// At `/`: the item's whole path, as mdtest names it (every directory above the run's root
    /// held, [`Dir::held_path`]).
    #[default]
    Slash,
    /// At the run's root, held open: a directory above it could be changed by another user.
    RunRoot,
}

/// Where a run of `meta` over `bases` (each holding the run's root, made already) names its
/// items from, and, when not from `/`, the warning that says why: every output says it. A
/// `--relative` run names items from neither and checks nothing here (each phase's [`Naming`]
/// never reads the answer).
pub fn path_start<'a>(meta: &Meta, bases: impl IntoIterator<Item = &'a Dir>) -> (PathStart, Option<String>) {
    if meta.resolve != Resolve::Path {
        return (PathStart::Slash, None);
    }
    let root = OsStr::new(&meta.root);
    match bases.into_iter().find_map(|base| base.held_path(root).err()) {
        None => (PathStart::Slash, None),
        Some(why) => {
            let warning = format!(
                "items were named from the run's root, held open, not by their whole path from / as mdtest names them: \
                 {why}; stat and open rates leave out the walk above the root"
            );
            (PathStart::RunRoot, Some(warning))
        }
    }
}

/// One task's buffers for metadata phases, made once and reused by every phase, and what its
/// checks saw of the run's directories in the phase before.
pub(super) struct MetaIo {
    name: Vec<u8>,
    path: Vec<u8>,
    data: Vec<u8>,
    scratch: Vec<u8>,
    /// The run's root in each base this task visited, by (base, (device, inode)): a later
    /// phase refuses another directory put under its name.
    roots: Vec<(usize, (u64, u64))>,
    /// The print of a task's tree (its directories' devices and inodes, in order) as the last
    /// check after a phase saw it, with the task whose tree it is.
    tree: Option<(usize, u64)>,
}

impl MetaIo {
    pub(super) fn new(meta: &Meta, verify: bool) -> Self {
        let bytes = meta.write_bytes.max(meta.read_bytes) as usize;
        MetaIo {
            name: Vec::with_capacity(64),
            // The root's whole path (PATH_MAX at most), a tree's name, a name per level and the
            // item's, with room: the buffer never grows in a phase.
            path: Vec::with_capacity(4096 + meta.root.len() + 16 * (meta.tree.depth as usize + 2) + 64),
            data: vec![0; bytes],
            scratch: vec![0; if verify { bytes } else { 0 }],
            roots: Vec::new(),
            tree: None,
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
    /// What the check before the phase found: the run's root, held open, and the print of
    /// the tree; or why the phase must not run. Set by `prepare`.
    pub guard: Option<Result<Guard, EngineError>>,
}

/// The run's root as the check before a phase found it, the tree's print then (`None`
/// before the tree is made), and how every call of the phase names its item.
pub(super) struct Guard {
    root: Dir,
    print: Option<u64>,
    naming: Naming,
}

/// How each call of a phase names its item: decided before the phase from `--relative` and
/// from where the lead found that paths may start ([`PathStart`]).
enum Naming {
    /// The bare name, from the item's directory held open (`--relative`): no path walk.
    Relative,
    /// The item's path from the run's root, held open: a directory above the root is not
    /// held, so a path from `/` could be led elsewhere.
    FromRoot,
    /// The item's whole path from `/`, as mdtest names it: these bytes (the root's path and a
    /// slash) first.
    FromSlash(Vec<u8>),
}

impl Naming {
    /// What every item's path starts with.
    fn prefix(&self) -> &[u8] {
        match self {
            Naming::FromSlash(prefix) => prefix,
            Naming::Relative | Naming::FromRoot => &[],
        }
    }
}

/// The directory the last item was in, so that a task walks down its tree (relative mode) or
/// writes the directory's path (path mode) only when the directory changes (items are placed
/// in blocks, one directory after the other).
struct Cursor {
    at: Option<u64>,
    /// The directory, held open (relative mode).
    fd: Option<OwnedFd>,
    /// Bytes of the directory's path from the root at the start of `MetaIo::path` (path mode).
    len: usize,
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

    fn prepare(&mut self) {
        self.guard = Some(self.check_before());
    }

    fn run<M: Member>(&mut self, m: &M, clock: &TaskClock, trace: &mut PhaseTrace) -> TaskPart {
        if m.local_index() == 0 {
            self.ctx.progress.phase_began();
        }
        let w = self.ctx.w;
        let mut t = TaskTiming { task: m.rank() as u32, node: m.node(), ..TaskTiming::default() };
        let mut tally = VerifyTally::default();
        t.open_start = clock.now();
        let guard = self.guard.take().unwrap_or_else(|| self.check_before());
        t.xfer_start = clock.now();
        trace.progression.push((t.xfer_start, 0));
        let (mut done, mut error) = (0, None);
        // The stonewall counts from the phase's start for this task, as for data transfers.
        let deadline = w.stonewall_secs.filter(|_| self.creates()).map(|s| t.open_start + (s * 1e9) as u64);
        let guard = match guard {
            Ok(guard) => Some(guard),
            Err(e) => {
                error = Some(e);
                None
            }
        };
        if let Some(guard) = &guard {
            let count = self.count;
            let mut walk =
                Walk { kind: self, root: guard.root.raw(), naming: &guard.naming, clock, trace, tally: &mut tally, m };
            if let Err((n, e)) = walk.items(0..count, deadline).map(|n| done = n) {
                (done, error) = (n, Some(e));
            }
        }
        if deadline.is_some() {
            // Every task takes part, failed or not (its root unopened too), so nobody waits for
            // ever and the team's collectives stay paired.
            let goal = m.max(done);
            if let (Some(guard), None) = (&guard, &error) {
                let mut walk = Walk {
                    kind: self,
                    root: guard.root.raw(),
                    naming: &guard.naming,
                    clock,
                    trace,
                    tally: &mut tally,
                    m,
                };
                if let Err((n, e)) = walk.items(done..goal, None).map(|n| done = n) {
                    (done, error) = (n, Some(e));
                }
            }
        }
        t.xfer_end = clock.now();
        trace.progression.push((t.xfer_end, done));
        if let (Some(guard), None, true) = (&guard, &error, self.meta().sync) {
            if let Err(e) = sys::syncfs(guard.root.raw()) {
                error = Some(EngineError::io("syncfs", guard.root.path(), None, e));
            }
        }
        t.sync_end = clock.now();
        t.close_end = clock.now();
        if self.op == Op::TreeCreate && self.meta().shared {
            // Every task checks the shared tree, which the first makes: only once it has.
            m.barrier();
        }
        if let (Some(guard), None) = (guard, &error) {
            error = self.check_after(guard).err();
        }
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

    /// Whether the source's tree exists when the phase starts (and, `after`, when it ends).
    fn tree_there(&self, after: bool) -> bool {
        match self.op {
            Op::TreeCreate => after,
            Op::TreeRemove => !after,
            _ => true,
        }
    }

    /// Before the phase, outside its time: opens the run's root (never through a link or a
    /// mount), checks it by its descriptor, and walks the tree to print it.
    fn check_before(&mut self) -> Result<Guard, EngineError> {
        let base = self.ctx.files.base(self.source);
        let name = OsStr::new(&self.meta.root);
        let root = base.open_subdir(name).map_err(|e| EngineError::io("open", &base.show(name), None, e))?;
        self.check_root(&root)?;
        let naming = match (self.meta.resolve, self.ctx.path_start) {
            (Resolve::Relative, _) => Naming::Relative,
            (Resolve::Path, PathStart::RunRoot) => Naming::FromRoot,
            (Resolve::Path, PathStart::Slash) => {
                let path = base.held_path(name).map_err(|why| self.unheld(&root, why))?;
                let mut prefix = path.into_os_string().into_vec();
                prefix.push(b'/');
                Naming::FromSlash(prefix)
            }
        };
        let print = match self.tree_there(false) {
            true => Some(self.tree_print(&root)?),
            false => None,
        };
        // Between two phases nothing of the run changes the tree's directories.
        if let (Some(now), Some((task, then))) = (print, self.io.tree) {
            if task == self.source && now != then {
                return Err(self.changed(&root, "was moved or replaced since the phase before (not by this run)"));
            }
        }
        Ok(Guard { root, print, naming })
    }

    /// After the phase, outside its time: the root is still the run's own, in its place, and
    /// every directory of the tree the one the check before found.
    fn check_after(&mut self, guard: Guard) -> Result<(), EngineError> {
        let root = guard.root;
        self.check_root(&root)?;
        let base = self.ctx.files.base(self.source);
        if matches!(guard.naming, Naming::FromSlash(_)) {
            base.held_path(OsStr::new(&self.meta.root)).map_err(|why| self.unheld(&root, why))?;
        }
        if !root.is_at(base, OsStr::new(&self.meta.root)) {
            let e = io::Error::other("it was moved away or replaced during the phase (not by this run)");
            return Err(EngineError::io("check", root.path(), None, e));
        }
        self.io.tree = None;
        if self.tree_there(true) {
            let now = self.tree_print(&root)?;
            if guard.print.is_some_and(|then| then != now) {
                return Err(self.changed(&root, "was moved or replaced during the phase (not by this run)"));
            }
            self.io.tree = Some((self.source, now));
        }
        Ok(())
    }

    /// The root, by its descriptor: a directory of this user, mode 0700, and the one this task
    /// saw in the phases before.
    fn check_root(&mut self, root: &Dir) -> Result<(), EngineError> {
        let failed = |why: String| EngineError::io("check", root.path(), None, io::Error::other(why));
        let st = sys::fstat(root.raw()).map_err(|e| EngineError::io("stat", root.path(), None, e))?;
        if st.kind != Kind::Dir || st.uid != euid() {
            return Err(failed(format!("it is owned by uid {}, not by the user running iosurvey", st.uid)));
        }
        if st.mode != PRIVATE {
            let why = format!("its mode is {:04o}, not 0700: another process changed it during the run", st.mode);
            return Err(failed(why));
        }
        let base = self.source % self.ctx.files.bases();
        match self.io.roots.iter().find(|(b, _)| *b == base) {
            Some((_, id)) if *id != (st.dev, st.ino) => {
                Err(failed("it is not the directory the run made: it was replaced during the run".into()))
            }
            Some(_) => Ok(()),
            None => {
                self.io.roots.push((base, (st.dev, st.ino)));
                Ok(())
            }
        }
    }

    /// The print of the source's tree: every directory opened from the root as a path (never
    /// through a link or a mount), checked to be this user's, its device and inode folded in
    /// order. One open, fstat and close per directory, outside the phase's time.
    fn tree_print(&mut self, root: &Dir) -> Result<u64, EngineError> {
        let (meta, source) = (self.meta, self.source as u64);
        let dirs = meta.tree.dirs().unwrap_or(1);
        let path = &mut self.io.path;
        let mut print = 0u64;
        for d in 0..dirs {
            path.clear();
            write_tree_dir(meta.shared, source, &meta.tree, d, path);
            path.push(0);
            let dir = CStr::from_bytes_with_nul(path).expect("one NUL, at the end");
            let shown = || root.show(OsStr::from_bytes(&path[..path.len() - 1]));
            let st = openat_beneath(root.raw(), dir, O_PATH | O_DIRECTORY, 0)
                .and_then(|fd| sys::fstat(fd.as_raw_fd()))
                .map_err(|e| EngineError::io("open", &shown(), None, e))?;
            if st.uid != euid() {
                let e = io::Error::other(format!("it is owned by uid {}, not by the user running iosurvey", st.uid));
                return Err(EngineError::io("check", &shown(), None, e));
            }
            print = mix(print ^ st.dev, st.ino);
        }
        Ok(print)
    }

    /// A directory above the run's root is not held, as it was when the run began (another
    /// process changed it since, or this node sees another path than the lead's).
    fn unheld(&self, root: &Dir, why: String) -> EngineError {
        let why = format!("{why}, where it was held when the run began (checked on the lead's node)");
        EngineError::io("check", root.path(), None, io::Error::other(why))
    }

    /// A directory of the tree is not what the check before found.
    fn changed(&self, root: &Dir, what: &str) -> EngineError {
        let mut top = Vec::new();
        write_tree_name(self.meta.shared, self.source as u64, &mut top);
        let path = root.show(OsStr::from_bytes(&top));
        EngineError::io("check", &path, None, io::Error::other(format!("a directory of this tree {what}")))
    }
}

/// A task's way through its items in one phase.
struct Walk<'a, 'k, 'c, M: Member> {
    kind: &'a mut MetaItems<'k>,
    /// The run's root directory, held open.
    root: RawFd,
    /// How every call names its item ([`Guard`]).
    naming: &'a Naming,
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
        let dir = self.target(cursor, at)?;
        let done = match op {
            Op::TreeCreate => sys::mkdirat(dir, self.given(), 0o755),
            _ => sys::rmdirat(dir, self.given()),
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
                let dir = self.target(cursor, Some(d))?;
                if let Err((call, e)) = entry_call(op, dir, self.given()) {
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
            Op::Write
            | Op::Read
            | Op::Rewrite
            | Op::Reread
            | Op::Mix
            | Op::Head
            | Op::List
            | Op::Delete
            | Op::TreeCreate
            | Op::TreeRemove => {
                unreachable!("not an item phase")
            }
        }
        Ok(())
    }

    /// Where the call on the current name in tree directory `at` (`None`: the run's root)
    /// starts, with [`Self::given`] the path it gives: in path mode the name's whole path from
    /// `/` (or from the run's root, held open, which is then where the call starts), walked by
    /// the call itself (mdtest's one call per item); in relative mode the directory, held
    /// open, and the bare name.
    fn target(&mut self, cursor: &mut Cursor, at: Option<u64>) -> Result<RawFd, EngineError> {
        match (self.naming, at) {
            (Naming::Relative, None) => Ok(self.root),
            (Naming::Relative, Some(d)) => self.enter(cursor, d),
            (Naming::FromRoot | Naming::FromSlash(_), _) => {
                let len = self.locate(cursor, at);
                let io = &mut *self.kind.io;
                io.path.truncate(len);
                io.path.extend_from_slice(&io.name);
                Ok(self.root)
            }
        }
    }

    /// The name or path the call [`Self::target`] prepared gives.
    fn given(&self) -> &CStr {
        let io = &self.kind.io;
        let given = if matches!(self.naming, Naming::Relative) { &io.name } else { &io.path };
        CStr::from_bytes_with_nul(given).expect("one NUL, at the end")
    }

    /// Opens (or with `O_CREAT` makes) the current name in tree directory `d`: by its whole
    /// path from `/` in one `openat2` that never goes through a link (from the run's root: nor
    /// a mount), or with the bare name through the directory the cursor holds (relative mode).
    fn open_item(
        &mut self,
        cursor: &mut Cursor,
        d: u64,
        flags: i32,
        call: &'static str,
    ) -> Result<OwnedFd, EngineError> {
        let dir = self.target(cursor, Some(d))?;
        let opened = match self.naming {
            Naming::Relative => sys::openat(dir, self.given(), flags | O_NOFOLLOW | O_CLOEXEC, 0o644),
            Naming::FromRoot => openat_beneath(dir, self.given(), flags, 0o644),
            Naming::FromSlash(_) => open_path_no_links(self.given(), flags, 0o644),
        };
        opened.map_err(|e| self.failed(call, Some(d), e))
    }

    /// Path mode: the length of the path of tree directory `at` (`None`: the run's root)
    /// with a closing slash, after the prefix, written at the start of `MetaIo::path` unless
    /// the cursor has it there.
    fn locate(&mut self, cursor: &mut Cursor, at: Option<u64>) -> usize {
        if at.is_some() && cursor.at == at {
            return cursor.len;
        }
        let meta = self.kind.meta;
        let path = &mut self.kind.io.path;
        path.clear();
        path.extend_from_slice(self.naming.prefix());
        if let Some(d) = at {
            write_tree_dir(meta.shared, self.kind.source as u64, &meta.tree, d, path);
            path.push(b'/');
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
