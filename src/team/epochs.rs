//! Which run a stop belongs to, where stops arrive as messages (the MPI abort channel).
//!
//! Each run is an epoch; every process starts the next one at the same point (when it makes
//! the run's members). A stop carries its epoch, so a stop from one run never reaches the
//! next, and a stop of an epoch this process has not started yet (a fast peer's next run) is
//! kept and applies when that epoch starts.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

/// The current epoch, the latest stopped one, and the flag the tasks read.
#[derive(Debug, Default)]
pub struct Epochs {
    /// Set while the current epoch is to stop.
    pub flag: AtomicBool,
    epoch: AtomicU64,
    stopped: AtomicU64,
}

impl Epochs {
    /// Starts the next epoch: its flag is clear unless a stop for it came already.
    pub fn next(&self) {
        let e = self.epoch.fetch_add(1, SeqCst) + 1;
        self.flag.store(self.stopped.load(SeqCst) >= e, SeqCst);
    }

    /// The epoch running now.
    pub fn current(&self) -> u64 {
        self.epoch.load(SeqCst)
    }

    /// A stop for epoch `e`. With both sides SeqCst, a stop racing `next` is seen by at
    /// least one of them.
    pub fn stop(&self, e: u64) {
        self.stopped.fetch_max(e, SeqCst);
        if e >= self.epoch.load(SeqCst) {
            self.flag.store(true, SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_holds_for_its_own_epoch_only() {
        let e = Epochs::default();
        e.next();
        assert!(!e.flag.load(SeqCst), "a run starts clear");
        e.stop(1);
        assert!(e.flag.load(SeqCst));
        e.next();
        assert!(!e.flag.load(SeqCst), "the next run starts clear again");
        e.stop(1);
        assert!(!e.flag.load(SeqCst), "a late stop of the last run is ignored");
        e.stop(3);
        assert!(e.flag.load(SeqCst), "a stop of a run not started yet is raised at once or kept");
        e.next();
        assert!(e.flag.load(SeqCst), "kept for the run it belongs to");
        e.next();
        assert!(!e.flag.load(SeqCst));
        assert_eq!(e.current(), 4);
    }
}
