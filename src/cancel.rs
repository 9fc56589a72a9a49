//! Stopping: one token handed down to everything that runs (the engine's tasks, a sequence of
//! runs, a shell command), so a stop reaches each without a process global. It sits below
//! every room that runs anything, and imports none.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// A request to stop, handed to whatever runs (a signal thread, a campaign's time budget, a
/// test holds a clone and cancels): every task stops after its current transfer and the run
/// ends as failed, stored and cleaned up, instead of dying half way; a sequence of runs stops
/// before its next one.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A token nobody has cancelled yet.
    pub fn new() -> Self {
        Cancel::default()
    }

    /// Asks everything holding a clone to stop.
    pub fn cancel(&self) {
        self.0.store(true, Relaxed);
    }

    /// Whether a stop was asked for.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Relaxed)
    }
}
