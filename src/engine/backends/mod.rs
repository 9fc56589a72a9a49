//! The I/O interfaces under test. Each backend is one file that implements [`Backend`] and
//! declares its [`Registered`] entry; [`ENGINES`] lists the entries, and is the one list: the
//! command line's parser, `iosurvey engines` and the tests all walk it. Adding an engine is
//! one file and one line here. The core (engine/mod.rs) decides what to transfer and times
//! it; backends only move bytes and report how many moved.

mod aio;
pub(super) mod delay;
mod mmap;
mod null;
mod s3;
mod stream;
mod sync;
mod trace;
mod uring;
mod vectored;

use crate::spec::{Data, EngineName, ObjectSizes, Op, SpecError};
use crate::sys::fs::{pread, pwrite};
pub use crate::sys::mem::IoBufs;
pub use crate::target::site::{Handles, Object};
pub use delay::TestClock;
use serde::Serialize;
use std::fs::File;
use std::io;
use std::os::fd::RawFd;

/// A finished transfer: the buffer slot and the bytes moved, or the error.
pub type Completion = (usize, io::Result<usize>);

/// One task's I/O interface. It holds the task's buffers ([`Backend::bufs`]): an engine that
/// hands a buffer to the kernel past a call (io_uring, libaio) lends it through its `sys`
/// wrapper, and the buffer is not given out again until its completion is reaped.
pub trait Backend {
    /// Starts a phase on `file` (io_uring registers it, mmap maps `size` bytes of it); engines
    /// that touch no storage get no file.
    fn attach(&mut self, file: Option<&File>, op: Op, size: u64) -> io::Result<()>;
    /// Starts a phase on `object`, each of whose blocks is an object as `layout` sizes it, for
    /// an engine that takes objects
    /// ([`Registered::takes`]); the runner refuses the others before anything runs.
    fn attach_object(&mut self, _object: &Object, _op: Op, _layout: &ObjectLayout) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "this engine takes file descriptors, not objects"))
    }
    /// Ends a write phase's transfers (an object upload is completed); an error fails it.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Starts a transfer of buffer `slot` at `offset` (or makes it, for synchronous backends),
    /// a write or a read as `op` says (the phase's, or the draw of a mixed phase). The slot
    /// must not be in flight already (its completion reaped, or never submitted).
    fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()>;
    /// Waits until at least `min` started transfers have finished and appends them to `done`.
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()>;
    /// Pushes written data to the file before the core's fsync (mmap: msync).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Ends the phase: nothing may be in flight.
    fn detach(&mut self);
    /// Each kind of object-store request made since the phase's attach, handed over once at
    /// its end: an engine of objects keeps the tally itself, so that no engine of files pays
    /// for it per transfer.
    fn requests(&mut self) -> Option<super::requests::RequestTrace> {
        None
    }
    /// The task's buffers, one per slot: the core fills a write's before submitting it and
    /// checks a read's after reaping it. A slot in flight is not given out.
    fn bufs(&mut self) -> &mut IoBufs;
    /// The clock this engine keeps its time on, when it is not the machine's (the delay
    /// engine's test clock): the task's phases are then timed on it. Asked once, when the
    /// engine is made, so that no other engine's transfer pays for the question.
    fn clock(&self) -> Option<TestClock> {
        None
    }
}

/// The objects of one file on a bucket: block k is object k, of the block's size or of the
/// size drawn for it from `--object-size`.
pub struct ObjectLayout<'a> {
    /// Bytes of a block: the room of one object.
    pub block: u64,
    /// How each object's size is drawn.
    pub sizes: &'a ObjectSizes,
    /// The workload's seed.
    pub seed: u64,
    /// The file's name (the same on every process and run of the workload, unlike its key).
    pub file: &'a str,
}

/// Keeps the object sizes' draws apart from the other draws of the same seed.
const SIZE_SALT: u64 = 0x6f62_6a5f_7369_7a65;

impl ObjectLayout<'_> {
    /// The size of object `k`: one function of the seed, the file and k, so that every process
    /// (and the lead that puts the objects a read finds) gives an object the same size, run
    /// after run.
    pub fn size_of(&self, k: u64) -> u64 {
        use crate::engine::offsets::mix;
        let file = self.file.bytes().fold(self.seed ^ SIZE_SALT, |h, b| mix(h, u64::from(b)));
        let x = mix(file, k);
        self.sizes.draw(x).unwrap_or(self.block)
    }
}

/// What an engine can do and needs, for the core, the target and the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// Keeps up to --iodepth transfers in flight.
    pub queues: bool,
    /// Moves bytes to and from files (the null and delay engines do not: no file is made).
    pub storage: bool,
    /// A write phase needs the file open for reading too (a writable shared mapping).
    pub writes_need_read: bool,
    /// Goes through the page cache even with --direct.
    pub page_cache_always: bool,
    /// Left out of the normal help and of `iosurvey engines` without --all (test engines).
    pub hidden: bool,
}

impl Capabilities {
    /// A plain storage engine: one transfer at a time through files.
    pub const STORAGE: Capabilities =
        Capabilities { queues: false, storage: true, writes_need_read: false, page_cache_always: false, hidden: false };
}

/// What a backend is made with: one task's buffers, its queue depth and the engine's
/// parameter (the D of `delay:D`).
pub struct Setup<'a> {
    /// Transfers in flight at most.
    pub depth: usize,
    /// The task's buffers, one per slot, which the backend keeps.
    pub bufs: IoBufs,
    /// The text after the colon of `name:param`.
    pub param: Option<&'a str>,
}

/// Says why an engine's parameter is wrong, if it is.
pub type ParamCheck = fn(&str) -> Result<(), String>;

/// Says why an engine cannot run a data workload of these phases and this shape, if it cannot.
pub type Refusal = fn(&[Op], &Data) -> Option<String>;

/// An engine in the registry.
pub struct Registered {
    /// Its name on the command line and in records.
    pub name: &'static str,
    /// One line for `iosurvey engines`.
    pub about: &'static str,
    /// What it can do and needs.
    pub caps: Capabilities,
    /// Whether this kernel lets it run at this depth, and why not.
    pub probe: fn(depth: usize) -> Result<(), String>,
    /// Makes one for a task.
    pub open: fn(Setup) -> io::Result<Box<dyn Backend>>,
    /// Checks the parameter of an engine that takes one (`delay:100us`); `None`: takes none.
    pub param: Option<ParamCheck>,
    /// Why the engine cannot run a workload it is otherwise given (a mixed phase, O_DIRECT
    /// with its buffers), if it cannot; `None`: it runs any.
    pub refuses: Option<Refusal>,
    /// The handles it moves data through (a storage engine's target must give them).
    pub takes: Handles,
}

/// Every engine, in the order `iosurvey engines` lists them.
pub const ENGINES: &[&Registered] = &[
    &sync::ENTRY,
    &vectored::ENTRY,
    &stream::ENTRY,
    &uring::ENTRY,
    &aio::ENTRY,
    &mmap::ENTRY,
    &null::ENTRY,
    &delay::ENTRY,
];

/// The engines of objects (they take object handles, [`Handles::Objects`]): apart from
/// [`ENGINES`], which `iosurvey engines` lists and every engine of files is tested over, so
/// that a list of the engines of files is never handed one that cannot open a file.
pub const OBJECT_ENGINES: &[&Registered] = &[&s3::ENTRY];

/// How a data workload's I/O meets the page cache through its engine: not at all when the
/// engine opens no file, around it with O_DIRECT unless the engine always goes through it (a
/// mapping).
pub fn page_cache(data: &Data) -> crate::record::execution::PageCache {
    use crate::record::execution::PageCache;
    let caps = entry(&data.engine).caps;
    match (caps.storage, data.direct && !caps.page_cache_always) {
        (false, _) => PageCache::Untouched,
        (true, true) => PageCache::Bypassed,
        (true, false) => PageCache::Through,
    }
}

/// The registry's entry for a workload's engine (checked by [`parse`], so always there).
pub fn entry(engine: &EngineName) -> &'static Registered {
    find(engine.base()).unwrap_or(&sync::ENTRY)
}

fn find(name: &str) -> Option<&'static Registered> {
    ENGINES
        .iter()
        .chain(OBJECT_ENGINES)
        .copied()
        .find(|e| e.name == name || (e.name == "io_uring" && matches!(name, "io-uring" | "uring")))
}

/// Names in words: "a", "a or b", "a, b or c".
fn either(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The registry's engines in words, for the command line's help and hints: those for storage,
/// then those for tests (hidden from `iosurvey engines` without --all, and so said apart),
/// an engine that takes a parameter as `NAME:PARAM`.
pub fn choices() -> String {
    match for_tests() {
        tests if tests.is_empty() => either(&listed(false)),
        tests => format!("{}; for tests, {}", either(&listed(false)), either(&tests)),
    }
}

/// The engines for tests (hidden from `iosurvey engines` without --all).
pub fn for_tests() -> Vec<String> {
    listed(true)
}

/// The engines hidden or not, one that takes a parameter as `NAME:PARAM`.
fn listed(hidden: bool) -> Vec<String> {
    let spelled = |e: &&Registered| match e.param {
        Some(_) => format!("{}:PARAM", e.name),
        None => e.name.to_string(),
    };
    ENGINES.iter().filter(|e| e.caps.hidden == hidden).map(spelled).collect()
}

/// The engines (for storage) that keep a queue of --iodepth transfers, in words.
pub fn queueing() -> String {
    let names: Vec<String> =
        ENGINES.iter().filter(|e| e.caps.queues && !e.caps.hidden).map(|e| e.name.to_string()).collect();
    either(&names)
}

/// The registered name nearest `text` by edit distance, when it is within two edits (a typo).
fn nearest(text: &str) -> Option<&'static str> {
    crate::spelling::nearest(text, ENGINES.iter().map(|e| e.name))
}

/// Reads an engine's name: a registered one, with its parameter where it takes one.
pub fn parse(text: &str) -> Result<EngineName, SpecError> {
    let (base, param) = match text.split_once(':') {
        Some((b, p)) => (b, Some(p)),
        None => (text, None),
    };
    let refuse = |why: String, fix: String| Err(SpecError::Engine { why, fix });
    let Some(e) = find(base) else {
        let all = format!("one of {} ('iosurvey engines --all' says what each is)", choices());
        return refuse(
            format!("no engine is named '{base}' in the engine registry"),
            match nearest(base) {
                Some(near) => format!("{near} (the nearest name), or {all}"),
                None => all,
            },
        );
    };
    match (e.param, param) {
        (Some(check), Some(p)) => {
            if let Err(why) = check(p) {
                return refuse(format!("bad parameter in '{text}': {why}"), format!("{}:100us, say", e.name));
            }
        }
        (Some(_), None) => {
            return refuse(format!("the {} engine needs a parameter", e.name), format!("{}:100us, say", e.name))
        }
        (None, Some(_)) => {
            return refuse(format!("the {} engine takes no parameter ('{text}')", e.name), e.name.to_string())
        }
        (None, None) => {}
    }
    Ok(EngineName::new(e.name, param))
}

/// The rules a data workload's engine puts on it (of these phases), and that it names a
/// registered engine.
pub fn check(ops: &[Op], data: &Data) -> Result<(), SpecError> {
    parse(&data.engine.to_string())?;
    let e = entry(&data.engine);
    if data.iodepth > 1 && !e.caps.queues {
        return Err(SpecError::DepthWithoutQueue { engine: e.name, depth: data.iodepth, queued: queueing() });
    }
    if let Some(why) = e.refuses.and_then(|refuses| refuses(ops, data)) {
        return Err(SpecError::Engine { why, fix: "sync".into() });
    }
    Ok(())
}

/// Makes the backend of a workload's engine for one task.
pub fn open(engine: &EngineName, depth: usize, bufs: IoBufs) -> io::Result<Box<dyn Backend>> {
    (entry(engine).open)(Setup { depth, bufs, param: engine.param() })
}

/// Whether this kernel lets the engine run at `depth`, and why not: checked before a run.
pub fn probe(engine: &EngineName, depth: usize) -> Result<(), String> {
    (entry(engine).probe)(depth)
}

/// A probe that makes the backend once over a 4 KiB buffer per slot.
fn probe_by_opening(open: fn(Setup) -> io::Result<Box<dyn Backend>>, depth: usize) -> Result<(), String> {
    let bufs = IoBufs::try_new(depth, 4096).ok_or("no memory for 4 KiB buffers")?;
    open(Setup { depth, bufs, param: None }).map(drop).map_err(|e| e.to_string())
}

/// The error of a storage engine given no file.
fn no_file() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "this engine needs a file")
}

/// The error of a submission on a buffer slot that is in flight (or does not exist).
fn in_flight() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "the buffer slot is in flight already")
}

/// A line of `iosurvey engines --json`.
#[derive(Debug, Serialize)]
pub struct EngineState {
    /// Its name.
    pub name: &'static str,
    /// What it is.
    pub about: &'static str,
    /// Whether this machine lets it run.
    pub available: bool,
    /// Why not, when it does not.
    pub reason: Option<String>,
    /// What it can do and needs.
    pub capabilities: Capabilities,
}

/// Every engine (hidden ones too with `all`) and whether this machine lets it run.
pub fn states(all: bool) -> Vec<EngineState> {
    ENGINES
        .iter()
        .filter(|e| all || !e.caps.hidden)
        .map(|e| {
            let probed = (e.probe)(4);
            EngineState {
                name: e.name,
                about: e.about,
                available: probed.is_ok(),
                reason: probed.err(),
                capabilities: e.caps,
            }
        })
        .collect()
}

/// Reads or writes all of `buf` at `offset` with pread/pwrite, retrying partial transfers;
/// a read stops early only at the end of the file.
pub(crate) fn transfer_all(fd: RawFd, op: Op, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        let n = match op {
            Op::Write => pwrite(fd, &buf[done..], at),
            _ => pread(fd, &mut buf[done..], at),
        };
        match n {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_is_registered_once_by_a_name_the_parser_gives_back() {
        for e in ENGINES {
            assert_eq!(ENGINES.iter().filter(|x| x.name == e.name).count(), 1, "{}", e.name);
            assert!(!e.about.is_empty());
            let text = if e.param.is_some() { format!("{}:1ms", e.name) } else { e.name.to_string() };
            let parsed = parse(&text).unwrap();
            assert_eq!(entry(&parsed).name, e.name);
            assert_eq!(parsed.to_string(), text);
        }
        assert_eq!(entry(&parse("uring").unwrap()).name, "io_uring");
        let why = |t: &str| parse(t).unwrap_err().to_string();
        assert!(why("fast").contains("no engine is named 'fast'"));
        assert!(why("delay").contains("needs a parameter"));
        assert!(why("delay:soon").contains("bad parameter"));
        assert!(why("sync:1").contains("takes no parameter"));
        assert_eq!(
            parse("sync:1").unwrap_err().hint(),
            crate::spec::Hint::Use(crate::spec::Setting::Engine, "sync".into())
        );
    }

    #[test]
    fn a_name_not_registered_is_refused_naming_every_engine_and_the_nearest() {
        let fix = |t: &str| match parse(t).unwrap_err().hint() {
            crate::spec::Hint::Use(crate::spec::Setting::Engine, fix) => fix,
            other => panic!("{other:?}"),
        };
        for e in ENGINES {
            assert!(fix("nope").contains(e.name), "{}: {}", e.name, fix("nope"));
            assert!(choices().contains(e.name));
        }
        assert!(!fix("nope").contains("nearest"), "nothing is near: {}", fix("nope"));
        assert!(fix("io_urin").starts_with("io_uring (the nearest name), or one of "), "{}", fix("io_urin"));
        assert!(fix("SYNC").starts_with("sync (the nearest name)"), "{}", fix("SYNC"));
        let tests = choices().split_once("; for tests, ").map(|(_, t)| t.to_string()).unwrap_or_default();
        for e in ENGINES {
            assert_eq!(tests.contains(e.name), e.caps.hidden, "test engines are said apart: {}", choices());
        }
    }

    #[test]
    fn a_queue_depth_without_a_queue_names_the_engines_that_keep_one() {
        let e = check(&[Op::Write], &Data { iodepth: 8, ..Data::default() }).unwrap_err();
        let crate::spec::Hint::Use(_, queued) = e.hint() else { panic!("{:?}", e.hint()) };
        for engine in ENGINES.iter().filter(|e| !e.caps.hidden) {
            assert_eq!(queued.contains(engine.name), engine.caps.queues, "{queued}");
        }
    }
}
