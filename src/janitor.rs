//! The janitor: a small process the lead starts beside itself, so that a run whose process is
//! killed outright (SIGKILL, the OOM killer, an MPI launcher ending every rank when one dies)
//! still has its files removed and is still stored, as failed.
//!
//! The lead tells it, over a pipe, when it takes a target (`hold`) and when that target's
//! clean-up is done (`release`): the whole of a command, between its runs (an io500's find, a
//! matrix's next cell) and during the clean-up itself. Within that, it tells it when a run
//! starts (`arm`, with its number and the record to store) and when the run has filed itself
//! (`disarm` and its number), so that runs of several sessions at once are each watched.
//! When the pipe closes with targets held, the lead is gone: the janitor removes their files
//! as the next run there would (the manifest's `running` entries, once the dead run's lock is
//! gone), stores every armed run as failed, and says so in one line. It holds each target by
//! the lead's own descriptor (opened through /proc when told), so a target renamed meanwhile
//! is cleaned where it went, and a path that is not UTF-8 is never in the way. It runs in its
//! own process group, out of reach of the signals and the launcher that end the lead.

use crate::record::{RunRecord, Status};
use crate::store::Store;
use crate::target::dir::Dir;
use crate::target::Target;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::io::RawFd;
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The subcommand that runs the janitor (hidden from the help).
pub const SUBCOMMAND: &str = "janitor";

/// How long the janitor waits for the dead run's lock to go.
const PATIENCE: Duration = Duration::from_secs(30);

/// The run to store as failed should the lead die before it has filed itself.
#[derive(Debug, Serialize, Deserialize)]
pub struct Duty {
    /// The store's file, as bytes: a path need not be UTF-8.
    pub store: Vec<u8>,
    /// The run's workload and facts, stored as failed.
    pub record: RunRecord,
    /// The lead's process id, for the line.
    pub pid: u32,
}

impl Duty {
    /// The duty of storing `record` in the store at `store`.
    pub fn new(store: &std::path::Path, record: RunRecord) -> Duty {
        Duty { store: store.as_os_str().as_bytes().to_vec(), record, pid: std::process::id() }
    }
}

/// A directory the janitor holds until the lead has cleaned it: the lead's descriptor
/// number (the janitor opens it through /proc, so it holds the very directory, whatever it
/// is named or renamed to), its device and inode to check it is still that one, and where
/// the lead made it, if it did.
#[derive(Debug, Serialize, Deserialize)]
pub struct Held {
    fd: RawFd,
    id: (u64, u64),
    made: Option<(RawFd, (u64, u64), Vec<u8>)>,
    /// The directory's path when taken, as bytes: where to look should the lead be gone
    /// before the janitor has read this (its descriptors go with it).
    path: Vec<u8>,
}

/// A bucket's run prefix the janitor holds until the lead has cleaned it: the location as
/// `--s3` names it (no credential: the janitor reads those from the environment it shares
/// with the lead) and the run's prefix under it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HeldBucket {
    /// `URL/BUCKET[/PREFIX]`.
    pub location: String,
    /// `PREFIX/iosurvey-TOKEN/`.
    pub prefix: String,
}

// Statics because the signal thread must reach the janitor when the process ends at once
// (to disarm every run and release every target), and nothing can be handed to it then. The
// janitor is the process's, one pipe for all its sessions; each run under its watch has a
// number of its own, so sessions of one process need not take turns.
static PIPE: Mutex<Option<ChildStdin>> = Mutex::new(None);
static WATCHED: Mutex<BTreeSet<u64>> = Mutex::new(BTreeSet::new());
static NEXT: AtomicU64 = AtomicU64::new(1);
/// The buckets held now: the signal path's release of every target leaves them held, as it
/// removes files only.
static BUCKETS: Mutex<BTreeSet<HeldBucket>> = Mutex::new(BTreeSet::new());

fn watched() -> std::sync::MutexGuard<'static, BTreeSet<u64>> {
    WATCHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A run under the janitor's watch, by its number; disarmed on drop.
#[derive(Debug)]
pub struct Watch(Option<u64>);

fn started() -> bool {
    let mut pipe = PIPE.lock().unwrap_or_else(|p| p.into_inner());
    if pipe.is_none() {
        *pipe = start().ok();
    }
    pipe.is_some()
}

/// Puts a run under the janitor's watch, starting the janitor on first use. Without a
/// janitor (it could not start) the run goes on: only a hard kill would then leave files.
pub fn arm(duty: &Duty) -> Watch {
    if started() {
        if let Ok(json) = serde_json::to_string(duty) {
            let run = NEXT.fetch_add(1, Ordering::Relaxed);
            tell(format!("arm {run} {json}\n").as_bytes());
            if PIPE.lock().is_ok_and(|p| p.is_some()) {
                watched().insert(run);
                return Watch(Some(run));
            }
        }
    }
    Watch(None)
}

/// Puts a target in the janitor's care from the moment the lead takes it until [`release`]
/// after its clean-up: a lead killed between runs, or while cleaning up, still has its
/// files removed. The target must stay open until then.
pub fn hold(target: &Target) {
    let Ok(id) = target.dir().id() else { return };
    let made = target
        .made_in()
        .and_then(|(parent, name)| parent.id().ok().map(|pid| (parent.raw(), pid, name.as_bytes().to_vec())));
    let path = target.dir().path().as_os_str().as_bytes().to_vec();
    let held = Held { fd: target.dir().raw(), id, made, path };
    if started() {
        if let Ok(json) = serde_json::to_string(&held) {
            tell(format!("hold {json}\n").as_bytes());
        }
    }
}

/// Puts a run's prefix on a bucket in the janitor's care, as [`hold`] a directory: should the
/// lead be killed, the janitor deletes the objects and aborts the uploads under it.
pub fn hold_bucket(bucket: HeldBucket) {
    if started() {
        if let Ok(json) = serde_json::to_string(&bucket) {
            tell(format!("hold-bucket {json}\n").as_bytes());
            BUCKETS.lock().unwrap_or_else(|p| p.into_inner()).insert(bucket);
        }
    }
}

/// Takes a run's prefix on a bucket out of the janitor's care: its clean-up is done.
pub fn release_bucket(bucket: &HeldBucket) {
    if BUCKETS.lock().unwrap_or_else(|p| p.into_inner()).remove(bucket) {
        if let Ok(json) = serde_json::to_string(bucket) {
            tell(format!("release-bucket {json}\n").as_bytes());
        }
    }
}

/// The target's key for [`release`], taken before its clean-up consumes it.
pub fn key(target: &Target) -> Option<(u64, u64)> {
    target.dir().id().ok()
}

/// Takes a target out of the janitor's care: its clean-up is done.
pub fn release(key: Option<(u64, u64)>) {
    if let Some((dev, ino)) = key {
        tell(format!("release {dev} {ino}\n").as_bytes());
    }
}

/// Takes every directory out of the janitor's care (the signal path removed their files).
/// Buckets stay in its care, the signal path does not reach them: the janitor empties them
/// once the lead is gone, without a line of its own (the lead said what became of the run).
pub fn release_all() {
    tell(b"release all\n");
    if !BUCKETS.lock().unwrap_or_else(|p| p.into_inner()).is_empty() {
        tell(b"quiet\n");
    }
}

/// Whether a janitor is watching a run of this process now.
pub fn on_watch() -> bool {
    !watched().is_empty()
}

/// Tells the janitor every run of this process is being filed by the signal path.
pub fn disarm() {
    watched().clear();
    tell(b"disarm\n");
}

/// Tells the janitor that the lead has said in its own line what becomes of the run.
pub fn quiet() {
    tell(b"quiet\n");
}

fn tell(message: &[u8]) {
    let mut pipe = PIPE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pipe.as_mut() {
        if p.write_all(message).is_err() {
            *pipe = None;
        }
    }
}

impl Drop for Watch {
    /// The run has filed itself.
    fn drop(&mut self) {
        if let Some(run) = self.0.filter(|run| watched().remove(run)) {
            tell(format!("disarm {run}\n").as_bytes());
        }
    }
}

fn start() -> std::io::Result<ChildStdin> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(std::env::current_exe()?)
        .arg(SUBCOMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()?;
    child.stdin.take().ok_or_else(|| std::io::Error::other("no pipe to the janitor"))
}

/// One line the lead tells the janitor.
#[derive(Debug)]
pub enum Message {
    /// A run started, by its number: store it as failed should the lead die before it is
    /// filed.
    Arm(u64, Box<Duty>),
    /// A run has filed itself (`None`: every run is being filed by the lead's signal path).
    Disarm(Option<u64>),
    /// A target taken (not to be opened from the line: the lead's descriptor is opened).
    Hold(Held),
    /// A target's clean-up is done (`None`: every directory's).
    Release(Option<(u64, u64)>),
    /// A run's prefix on a bucket taken.
    HoldBucket(HeldBucket),
    /// A run's prefix on a bucket cleaned.
    ReleaseBucket(HeldBucket),
    /// The lead has said in its own line what becomes of the run.
    Quiet,
}

impl Message {
    /// The message a line holds; `None` for anything else, which the janitor ignores.
    pub fn parse(line: &str) -> Option<Message> {
        match line.split_once(' ') {
            Some(("arm", rest)) => {
                let (run, json) = rest.split_once(' ')?;
                Some(Message::Arm(run.parse().ok()?, Box::new(serde_json::from_str(json).ok()?)))
            }
            Some(("disarm", run)) => Some(Message::Disarm(Some(run.parse().ok()?))),
            Some(("hold", json)) => serde_json::from_str(json).ok().map(Message::Hold),
            Some(("hold-bucket", json)) => serde_json::from_str(json).ok().map(Message::HoldBucket),
            Some(("release-bucket", json)) => serde_json::from_str(json).ok().map(Message::ReleaseBucket),
            Some(("release", "all")) => Some(Message::Release(None)),
            Some(("release", key)) => {
                let (dev, ino) = key.split_once(' ')?;
                Some(Message::Release(Some((dev.parse().ok()?, ino.parse().ok()?))))
            }
            None if line == "disarm" => Some(Message::Disarm(None)),
            None if line == "quiet" => Some(Message::Quiet),
            _ => None,
        }
    }
}

/// A held target, opened by the janitor: the directory and where it was made.
type Opened = (Dir, Option<(Dir, OsString)>);

/// Opens a directory the lead holds: through the lead's own descriptor, or, when the lead is
/// gone before this was read, by the path it had, and either way only if it is still that
/// directory (device and inode). The error says which directory could not be reached.
fn open_held(lead: u32, held: Held) -> Result<Opened, String> {
    let path = PathBuf::from(OsString::from_vec(held.path));
    let open = |fd: RawFd, id: (u64, u64), path: Option<&std::path::Path>| {
        let by_fd = Dir::open(std::path::Path::new(&format!("/proc/{lead}/fd/{fd}")));
        by_fd.or_else(|e| path.map_or(Err(e), Dir::open)).ok().filter(|d| d.id().is_ok_and(|i| i == id))
    };
    let Some(dir) = open(held.fd, held.id, Some(&path)) else {
        return Err(format!(
            "{} could not be reached (the iosurvey process ended before the janitor held it)",
            path.display()
        ));
    };
    let made = held.made.and_then(|(fd, id, name)| open(fd, id, path.parent()).map(|p| (p, OsString::from_vec(name))));
    Ok((dir, made))
}

/// The janitor's life: reads duties until the pipe closes, then does what is left, if
/// anything. Returns the exit code.
pub fn serve(input: impl BufRead) -> i32 {
    // The lead blocks its stop signals in every thread, and the mask survives exec.
    crate::sys::signal::unblock_all();
    // The lead started this process.
    let lead = crate::sys::proc::parent_pid();
    let mut duties: BTreeMap<u64, Duty> = BTreeMap::new();
    // Each held target, opened, or why it could not be.
    let mut held: BTreeMap<(u64, u64), Result<Opened, String>> = BTreeMap::new();
    let mut buckets: BTreeSet<HeldBucket> = BTreeSet::new();
    let mut quiet = false;
    for line in input.lines() {
        let Ok(line) = line else { break };
        match Message::parse(&line) {
            Some(Message::Arm(run, d)) => drop(duties.insert(run, *d)),
            Some(Message::Hold(h)) => drop(held.insert(h.id, open_held(lead, h))),
            Some(Message::Release(Some(key))) => drop(held.remove(&key)),
            Some(Message::Release(None)) => held.clear(),
            Some(Message::HoldBucket(b)) => drop(buckets.insert(b)),
            Some(Message::ReleaseBucket(b)) => drop(buckets.remove(&b)),
            Some(Message::Disarm(Some(run))) => drop(duties.remove(&run)),
            Some(Message::Disarm(None)) => duties.clear(),
            Some(Message::Quiet) => quiet = true,
            None => {}
        }
    }
    if duties.is_empty() && held.is_empty() && buckets.is_empty() {
        return 0;
    }
    let (line, code) = finish(lead, duties.into_values().collect(), held.into_values().collect(), buckets);
    if !quiet {
        eprintln!("iosurvey: error: {}", crate::escape::visible(&line));
    }
    code
}

/// Cleans up after a dead lead and stores its runs: the line to say, and the exit code.
fn finish(
    lead: u32,
    duties: Vec<Duty>,
    held: Vec<Result<Opened, String>>,
    buckets: BTreeSet<HeldBucket>,
) -> (String, i32) {
    let pid = duties.first().map_or(lead, |d| d.pid);
    let why = match duties.len() {
        0 => format!("the iosurvey process {pid} ended without cleaning up (killed?)"),
        1 => format!("the iosurvey process {pid} ended during the run without cleaning up (killed?)"),
        _ => format!("the iosurvey process {pid} ended during its runs without cleaning up (killed?)"),
    };
    let mut left = Vec::new();
    for opened in &held {
        match opened
            .as_ref()
            .map(|(dir, made)| Target::reclaim(dir, made.as_ref().map(|(p, n)| (p, n.as_os_str())), PATIENCE))
        {
            Ok(Ok(problems)) => left.extend(problems),
            Ok(Err(e)) => left.push(e.to_string()),
            Err(unreached) => left.push(unreached.clone()),
        }
    }
    for bucket in &buckets {
        left.extend(empty_bucket(bucket).err());
    }
    let what = match (held.is_empty(), buckets.is_empty()) {
        (false, false) => "files and objects",
        (true, false) => "objects",
        _ => "files",
    };
    let (files, removed) = match (left.is_empty(), held.is_empty() && buckets.is_empty()) {
        // A run on block devices holds no directory: nothing of it is removed.
        (true, true) => ("it had no files to remove".to_string(), true),
        (true, false) => (format!("its {what} were removed"), true),
        (false, _) => (format!("some {what} were left: {}", left.join("; ")), false),
    };
    if duties.is_empty() {
        return (format!("{why}: {files} (hint: run it again)"), if removed { 0 } else { 1 });
    }
    let mut said = Vec::new();
    let mut saved = true;
    for duty in duties {
        let mut record = duty.record;
        record.status = Status::Failed;
        record.error = Some(why.clone());
        let store = PathBuf::from(OsString::from_vec(duty.store));
        match Store::open(&store).and_then(|mut s| s.save(&record)) {
            Ok(id) => said.push(format!("stored as failed run {id}")),
            Err(e) => {
                said.push(format!("the run could not be stored ({e})"));
                saved = false;
            }
        }
    }
    (format!("{why}: {}; {files} (hint: run it again)", said.join("; ")), if removed && saved { 0 } else { 1 })
}

/// Empties a dead lead's run prefix on a bucket, with the credentials of the environment the
/// janitor shares with the lead; the error says what is left.
fn empty_bucket(bucket: &HeldBucket) -> Result<(), String> {
    use crate::s3::{Client, Credentials, Location, Options};
    let place = format!("{}/{}", bucket.location, crate::escape::visible(&bucket.prefix));
    let client = Location::parse(&bucket.location)
        .and_then(|l| Client::new(&l, Credentials::load()?.0, &Options::from_env()?))
        .map_err(|e| format!("{place} could not be emptied: {e}"))?;
    let swept = crate::s3::empty_run(&client, &bucket.prefix);
    match swept.left {
        0 => Ok(()),
        n => Err(format!("{n} objects or uploads under {place} ({})", swept.said())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_sessions_at_once_are_each_armed_and_disarmed_by_their_number() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("s.db");
        let arm = |run: u64, started: i64| {
            let facts = crate::record::RunFacts { started, ..Default::default() };
            let record = RunRecord::assemble(Default::default(), Default::default(), facts);
            format!("arm {run} {}\n", serde_json::to_string(&Duty::new(&db, record)).unwrap())
        };
        // Two sessions' runs at once; the first files itself, then the lead dies.
        let lines = format!("{}{}disarm 1\n", arm(1, 10), arm(2, 20));
        assert_eq!(serve(lines.as_bytes()), 0);
        let store = Store::open(&db).unwrap();
        let rows = store.list().unwrap();
        assert_eq!(rows.len(), 1, "the run still armed is stored, and only it");
        let r = store.load(rows[0].id).unwrap();
        assert_eq!((r.started, r.status), (20, Status::Failed));
        // The signal path's disarm covers every run.
        let lines = format!("{}{}disarm\n", arm(3, 30), arm(4, 40));
        assert_eq!(serve(lines.as_bytes()), 0);
        assert_eq!(Store::open(&db).unwrap().list().unwrap().len(), 1);
    }

    #[test]
    fn lines_the_lead_writes_parse_back_and_nothing_else_does() {
        let held = Held {
            fd: 7,
            id: (2049, 131),
            made: Some((5, (2049, 2), b"caf\xe9".to_vec())),
            path: b"/s/caf\xe9".to_vec(),
        };
        let line = format!("hold {}", serde_json::to_string(&held).unwrap());
        match Message::parse(&line) {
            Some(Message::Hold(h)) => assert_eq!((h.fd, h.id, h.made), (7, (2049, 131), held.made)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(Message::parse("release 2049 131"), Some(Message::Release(Some((2049, 131))))));
        assert!(matches!(Message::parse("release all"), Some(Message::Release(None))));
        assert!(matches!(Message::parse("disarm"), Some(Message::Disarm(None))));
        assert!(matches!(Message::parse("disarm 3"), Some(Message::Disarm(Some(3)))));
        assert!(matches!(Message::parse("quiet"), Some(Message::Quiet)));
        // The lead gone before the line was read: found by its path, if it is still that one.
        let tmp = tempfile::tempdir().unwrap();
        let id = Dir::open(tmp.path()).unwrap().id().unwrap();
        let path = tmp.path().as_os_str().as_bytes().to_vec();
        let gone = u32::MAX;
        assert!(open_held(gone, Held { fd: 3, id, made: None, path: path.clone() }).is_ok());
        let other = Held { fd: 3, id: (id.0, id.1 + 1), made: None, path };
        assert!(open_held(gone, other).unwrap_err().contains("could not be reached"));
        for junk in
            ["", "release", "release 1", "release 1 x", "release -1 2", "hold {}", "arm null", "disarm now", "quiet "]
        {
            assert!(Message::parse(junk).is_none(), "{junk:?}");
        }
    }
}
