//! The janitor: a small process the lead starts beside itself, so that a run whose process is
//! killed outright (SIGKILL, the OOM killer, an MPI launcher ending every rank when one dies)
//! still has its files removed and is still stored, as failed.
//!
//! The lead tells it, over a pipe, when a run starts (`arm`, with the target and the record
//! to store) and when the run has filed itself (`disarm`). When the pipe closes while a run
//! is armed, the lead is gone: the janitor removes the run's files as the next run there
//! would (the manifest's `running` entries, once the dead run's lock is gone), stores the
//! record as failed, and says so in one line. It runs in its own process group, out of reach
//! of the signals and the launcher that end the lead.

use crate::record::{RunRecord, Status};
use crate::store::Store;
use crate::target::Target;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The subcommand that runs the janitor (hidden from the help).
pub const SUBCOMMAND: &str = "janitor";

/// How long the janitor waits for the dead run's lock to go.
const PATIENCE: Duration = Duration::from_secs(30);

/// What the janitor must do should the lead die during a run.
#[derive(Debug, Serialize, Deserialize)]
pub struct Duty {
    /// The target directory.
    pub dir: PathBuf,
    /// Whether iosurvey made it for the run (and so removes it).
    pub made: bool,
    /// A metadata run's further base directories, each with whether the run made it.
    #[serde(default)]
    pub more: Vec<(PathBuf, bool)>,
    /// The store's file.
    pub store: PathBuf,
    /// The run's workload and facts, stored as failed.
    pub record: RunRecord,
    /// The lead's process id, for the line.
    pub pid: u32,
}

static PIPE: Mutex<Option<ChildStdin>> = Mutex::new(None);
static ON_WATCH: AtomicBool = AtomicBool::new(false);

/// A run under the janitor's watch; disarmed on drop.
#[derive(Debug)]
pub struct Watch(());

/// Puts a run under the janitor's watch, starting the janitor on first use. Without a
/// janitor (it could not start) the run goes on: only a hard kill would then leave files.
pub fn arm(duty: &Duty) -> Watch {
    let mut pipe = PIPE.lock().unwrap_or_else(|p| p.into_inner());
    if pipe.is_none() {
        *pipe = start().ok();
    }
    drop(pipe);
    if let Ok(json) = serde_json::to_string(duty) {
        tell(format!("arm {json}\n").as_bytes());
        ON_WATCH.store(PIPE.lock().is_ok_and(|p| p.is_some()), Ordering::SeqCst);
    }
    Watch(())
}

/// Whether a janitor is watching a run of this process now.
pub fn on_watch() -> bool {
    ON_WATCH.load(Ordering::SeqCst)
}

/// Tells the janitor the run has filed itself (or is being filed by the signal path).
pub fn disarm() {
    ON_WATCH.store(false, Ordering::SeqCst);
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
    fn drop(&mut self) {
        disarm();
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

/// The janitor's life: reads duties until the pipe closes, then does the last one, if armed.
/// Returns the exit code.
pub fn serve(input: impl BufRead) -> i32 {
    // The lead blocks its stop signals in every thread, and the mask survives exec.
    // SAFETY: an empty set, then unblocking it, touches only this thread's mask.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
    }
    let mut duty: Option<Duty> = None;
    let mut quiet = false;
    for line in input.lines() {
        let Ok(line) = line else { break };
        match line.split_once(' ') {
            Some(("arm", json)) => duty = serde_json::from_str(json).ok(),
            _ if line == "disarm" => duty = None,
            _ if line == "quiet" => quiet = true,
            _ => {}
        }
    }
    let Some(duty) = duty else { return 0 };
    let (line, code) = finish(duty);
    if !quiet {
        eprintln!("iosurvey: error: {}", crate::escape::visible(&line));
    }
    code
}

/// Cleans up after a dead lead and stores its run: the line to say, and the exit code.
fn finish(duty: Duty) -> (String, i32) {
    let why = format!("the iosurvey process {} ended during the run without cleaning up (killed?)", duty.pid);
    let mut left = Vec::new();
    for (dir, made) in std::iter::once((&duty.dir, duty.made)).chain(duty.more.iter().map(|(d, m)| (d, *m))) {
        match Target::reclaim(dir, made, PATIENCE) {
            Ok(problems) => left.extend(problems),
            Err(e) => left.push(e.to_string()),
        }
    }
    let (files, removed) = match left.is_empty() {
        true => ("its files were removed".to_string(), true),
        false => (format!("some files were left: {}", left.join("; ")), false),
    };
    let mut record = duty.record;
    record.status = Status::Failed;
    record.error = Some(why.clone());
    let (stored, saved) = match Store::open(&duty.store).and_then(|mut s| s.save(&record)) {
        Ok(id) => (format!("stored as failed run {id}"), true),
        Err(e) => (format!("the run could not be stored ({e})"), false),
    };
    (format!("{why}: {stored}; {files} (hint: run it again)"), if removed && saved { 0 } else { 1 })
}
