//! The abort channel: a failing task tells every process to stop with one small message to
//! each. No thread waits for those messages: the tasks themselves take them in as they check
//! whether to stop, at most every [`POLL_NS`]. A thread that woke every few milliseconds to
//! test its receive cost the writers on its cores a context switch each time: writing one
//! shared file in 47008-byte transfers on 2 cores, it made 4x IOR's context switches and ran
//! at 0.83 of IOR's rate (tmpfs, 2 ranks). Blocking in MPI_Recv instead would not help: Open
//! MPI waits by spinning.
//! A message carries the epoch of its run ([`Epochs`]), so it never stops another run.

use super::Comm;
use crate::team::clock::coarse_ns;
use crate::team::epochs::Epochs;
use mpi::raw::AsRaw;
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
    pending: Mutex<Option<Pending>>,
    comm: Comm,
}

/// A posted receive and the buffer it fills; the buffer is boxed so that it stays put.
struct Pending {
    req: mpi::ffi::MPI_Request,
    buf: Box<u64>,
}

// SAFETY: the request is a handle MPI lets any thread use under MPI_THREAD_MULTIPLE; it is
// only touched under the channel's mutex.
unsafe impl Send for Pending {}

impl Pending {
    /// Posts the receive of the next stop from any process.
    fn post(comm: &Comm) -> Pending {
        let mut buf = Box::new(0u64);
        // SAFETY: buf is heap memory kept with the request until it completes or is cancelled
        // and waited for.
        let req = unsafe {
            let mut req = std::mem::zeroed();
            mpi::ffi::MPI_Irecv(
                &mut *buf as *mut u64 as *mut libc::c_void,
                1,
                mpi::ffi::RSMPI_UINT64_T,
                mpi::ffi::RSMPI_ANY_SOURCE,
                TAG_ABORT,
                comm.0.as_raw(),
                &mut req,
            );
            req
        };
        Pending { req, buf }
    }

    /// The epoch of the stop received, if one came.
    fn arrived(&mut self) -> Option<u64> {
        let mut done = 0;
        // SAFETY: a live request of ours; the status is not looked at.
        unsafe { mpi::ffi::MPI_Test(&mut self.req, &mut done, mpi::ffi::RSMPI_STATUS_IGNORE) };
        (done != 0).then_some(*self.buf)
    }

    /// Withdraws the receive and waits until MPI has let go of the buffer.
    fn cancel(mut self) {
        // SAFETY: cancelling then waiting completes the request either way.
        unsafe {
            mpi::ffi::MPI_Cancel(&mut self.req);
            mpi::ffi::MPI_Wait(&mut self.req, mpi::ffi::RSMPI_STATUS_IGNORE);
        }
    }
}

impl AbortChannel {
    pub(super) fn new(comm: Comm) -> AbortChannel {
        AbortChannel {
            epochs: Epochs::default(),
            sent: AtomicU64::new(0),
            polled: AtomicU64::new(0),
            pending: Mutex::new(Some(Pending::post(&comm))),
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
        let me = self.comm.0.rank();
        for peer in (0..self.comm.0.size()).filter(|&p| p != me) {
            // SAFETY: `epoch` is never freed; MPI allows freeing a send request before it
            // completes (the send completes on its own).
            unsafe {
                let mut req = std::mem::zeroed();
                mpi::ffi::MPI_Isend(
                    epoch as *const u64 as *mut libc::c_void,
                    1,
                    mpi::ffi::RSMPI_UINT64_T,
                    peer,
                    TAG_ABORT,
                    self.comm.0.as_raw(),
                    &mut req,
                );
                mpi::ffi::MPI_Request_free(&mut req);
            }
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
        while let Some(e) = pending.as_mut().and_then(Pending::arrived) {
            self.epochs.stop(e);
            *pending = Some(Pending::post(&self.comm));
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
