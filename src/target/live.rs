//! The files of the runs in progress, where the signal thread can reach them: when a second
//! signal (or the deadline after the first) ends the process at once, they are still removed,
//! for a bounded time, so a hung server cannot hold the exit.

use super::dir::Dir;
use super::MANIFEST;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// What one run has created (nothing, when it keeps its files), with its own copies of the
/// descriptors.
pub struct Files {
    /// The target.
    pub dir: Dir,
    /// The files this run created.
    pub names: Vec<String>,
    /// Whether the manifest lists only these files, so it goes with them.
    pub manifest_too: bool,
    /// The parent and name of a directory iosurvey made, removed last.
    pub made: Option<(Dir, std::ffi::OsString)>,
}

static LIVE: Mutex<BTreeMap<u64, Files>> = Mutex::new(BTreeMap::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A run's entry in the registry; dropped or cleared when its clean-up is done.
#[derive(Debug, Default)]
pub struct Handle {
    id: Option<u64>,
}

impl Handle {
    /// Records the files the run has created so far.
    pub fn update(&mut self, files: Files) {
        let id = *self.id.get_or_insert_with(|| NEXT.fetch_add(1, Ordering::Relaxed));
        if let Ok(mut live) = LIVE.lock() {
            live.insert(id, files);
        }
    }

    /// The run cleaned up after itself.
    pub fn clear(&mut self) {
        if let (Some(id), Ok(mut live)) = (self.id.take(), LIVE.lock()) {
            live.remove(&id);
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Removes every live run's files, giving up after `limit`; returns what is left.
pub fn remove_all(limit: Duration) -> Vec<PathBuf> {
    let deadline = Instant::now() + limit;
    let taken = loop {
        match LIVE.try_lock() {
            Ok(mut live) => break std::mem::take(&mut *live),
            Err(std::sync::TryLockError::Poisoned(p)) => break std::mem::take(&mut *p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(std::sync::TryLockError::WouldBlock) => return Vec::new(),
        }
    };
    let mut pending: Vec<PathBuf> = taken.values().flat_map(|f| f.names.iter().map(|n| f.dir.show(n))).collect();
    let (tx, rx) = mpsc::channel();
    // Unlinking may hang on a dead server; this thread is left behind if it does. It reports
    // each file gone, then `None` when it is done with manifests and directories too.
    std::thread::spawn(move || {
        for files in taken.values() {
            let mut all = true;
            for name in &files.names {
                let gone = files.dir.remove_own(name).is_ok() || files.dir.stat(name).is_ok_and(|s| s.is_none());
                all &= gone;
                if gone {
                    let _ = tx.send(Some(files.dir.show(name)));
                }
            }
            if all && files.manifest_too {
                let _ = files.dir.unlink(MANIFEST);
                if let Some((parent, name)) = &files.made {
                    let _ = parent.rmdir(name);
                }
            }
        }
        let _ = tx.send(None);
    });
    while let Some(wait) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(wait) {
            Ok(Some(done)) => pending.retain(|p| *p != done),
            Ok(None) | Err(_) => break,
        }
    }
    pending
}
