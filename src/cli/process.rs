//! The process's globals, in one place. Each is here because the signal thread (or a broken
//! team's callback, which ends the process from whatever thread finds the team broken) must
//! reach it, and neither is handed the command's values: everything else a study needs
//! travels in its context (`iosurvey::study::Context`), and a study's clone of a global below
//! is taken from here once, as a value.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{LazyLock, Mutex};

/// The stop the signal thread asks for: the thread holds no reference to the command, so the
/// token it cancels lives here, and every study's context holds a clone of it.
pub static CANCEL: LazyLock<iosurvey::engine::Cancel> = LazyLock::new(iosurvey::engine::Cancel::new);

/// What clean-up could not remove: the closing line says it, and that line may be the signal
/// thread's (a stop at once) as well as the command's own.
pub static LEFTOVERS: LazyLock<iosurvey::session::Leftovers> = LazyLock::new(Default::default);

/// Whether a study is under way: the signal thread then stops it cleanly rather than ending
/// the process at once.
pub static RUNNING: AtomicBool = AtomicBool::new(false);

/// Held by whichever path ends the process, the command's return or the signal thread's stop
/// at once: one ending, one line.
pub static ENDING: Mutex<()> = Mutex::new(());

/// Whether this process is one of several of an MPI job: the signal thread then ends it at
/// once (a dead peer would hang a clean stop's collectives).
pub static ONE_OF_MANY: AtomicBool = AtomicBool::new(false);

/// Whether this process leads its team: the signal thread and a broken team's callback speak
/// only on the lead, which holds the target and the store.
pub static LEAD: AtomicBool = AtomicBool::new(true);

/// Whether the command's closing error line has been said: by the command, by the signal
/// thread, or by a broken team's callback, whichever comes first; the others stay silent.
pub static CLOSED: AtomicBool = AtomicBool::new(false);

/// The new file an output is being written to, until it is renamed over its name: the signal
/// thread removes it when it ends the process in the middle.
pub static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The store a merge made, while the merge into it goes on: the signal thread removes it when
/// it ends the merge.
pub static MERGING: Mutex<Option<PathBuf>> = Mutex::new(None);
