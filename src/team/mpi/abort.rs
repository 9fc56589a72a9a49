//! The abort channel: a failing task tells every process to stop with one small message to
//! each. No thread waits for those messages: the tasks themselves take them in as they check
//! whether to stop, at most every [`POLL_NS`]. A thread that woke every few milliseconds to
//! test its receive cost the writers on its cores a context switch each time: writing one
//! shared file in 47008-byte transfers on 2 cores, it made 4x IOR's context switches and ran
//! at 0.83 of IOR's rate (tmpfs, 2 ranks). Blocking in MPI_Recv instead would not help: Open
//! MPI waits by spinning.
//! A message carries the epoch of its run ([`Epochs`]), so it never stops another run.

use crate::sys::mpi::{Comm, PostedU64};
use crate::team::clock::coarse_ns;
use crate::team::epochs::Epochs;
use mpi::traits::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Mutex;

const TAG_ABORT: i32 = 0x105;

/// How often, at most, a process tests for stops: a stop reaches a writer within about this
/// long (plus a coarse clock tick).
pub(super) const POLL_NS: u64 = 5_000_000;

/// Tells every process to stop: one small message to each, taken in by its tasks.
pub(super) struct AbortChannel {
    pub(super) epochs: Epochs,
    /// The latest epoch this process has sent its stop for.
    sent: AtomicU64,
    /// When this process last tested for stops (coarse clock).
    polled: AtomicU64,
    /// The receive posted for the next stop; `None` once closed.
    pending: Mutex<Option<PostedU64>>,
    comm: Comm,
}

impl AbortChannel {
    pub(super) fn new(comm: Comm) -> AbortChannel {
        AbortChannel {
            epochs: Epochs::default(),
            sent: AtomicU64::new(0),
            polled: AtomicU64::new(0),
            pending: Mutex::new(Some(PostedU64::post(&comm, TAG_ABORT))),
            comm,
        }
    }

    /// Stops this run in every process.
    pub(super) fn raise(&self) {
        let e = self.epochs.current();
        self.epochs.stop(e);
        if self.sent.fetch_max(e, SeqCst) >= e {
            return;
        }
        // The buffer must outlive the send, whose request is freed without waiting.
        let epoch: &'static u64 = Box::leak(Box::new(e));
        let me = self.comm.rank();
        for peer in (0..self.comm.size()).filter(|&p| p != me) {
            self.comm.send_detached(peer, TAG_ABORT, epoch);
        }
    }

    /// Whether this run is to stop, having taken in the stops other processes sent when the
    /// last test is [`POLL_NS`] old. One thread of the process tests; the others go on.
    pub(super) fn heard(&self) -> bool {
        let now = coarse_ns();
        if now.saturating_sub(self.polled.load(Relaxed)) >= POLL_NS {
            self.polled.store(now, Relaxed);
            self.take_in();
        }
        self.epochs.flag.load(Relaxed)
    }

    /// Takes in every stop that has arrived.
    fn take_in(&self) {
        let Ok(mut pending) = self.pending.try_lock() else { return };
        while let Some(e) = pending.as_mut().and_then(PostedU64::arrived) {
            self.epochs.stop(e);
            *pending = Some(PostedU64::post(&self.comm, TAG_ABORT));
        }
    }

    /// Withdraws the receive: no stop is taken in after this.
    pub(super) fn close(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = pending.take() {
            p.cancel();
        }
    }
}
