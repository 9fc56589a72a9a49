//! The abort channel: a failing task tells every process to stop with one small message to
//! each, which a monitor thread in every process receives.
//! A message carries the epoch of its run ([`Epochs`]), so it never stops another run.

use super::Comm;
use crate::team::epochs::Epochs;
use mpi::raw::AsRaw;
use mpi::traits::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::Duration;

const TAG_ABORT: i32 = 0x105;

/// Tells every process to stop: one small message to each, received by a monitor thread.
pub(super) struct AbortChannel {
    pub(super) epochs: Epochs,
    /// The latest epoch this process has sent its stop for.
    sent: AtomicU64,
    stop_listening: AtomicBool,
    comm: Comm,
}

impl AbortChannel {
    pub(super) fn new(comm: Comm) -> AbortChannel {
        AbortChannel {
            epochs: Epochs::default(),
            sent: AtomicU64::new(0),
            stop_listening: AtomicBool::new(false),
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

    /// Receives stop messages until told to stop listening.
    pub(super) fn listen(&self) {
        loop {
            let mut buf: u64 = 0;
            // SAFETY: buf lives until the request completes, or is cancelled and waited for.
            unsafe {
                let mut req = std::mem::zeroed();
                mpi::ffi::MPI_Irecv(
                    &mut buf as *mut u64 as *mut libc::c_void,
                    1,
                    mpi::ffi::RSMPI_UINT64_T,
                    mpi::ffi::RSMPI_ANY_SOURCE,
                    TAG_ABORT,
                    self.comm.0.as_raw(),
                    &mut req,
                );
                loop {
                    let mut done = 0;
                    let mut status = std::mem::zeroed();
                    mpi::ffi::MPI_Test(&mut req, &mut done, &mut status);
                    if done != 0 {
                        break;
                    }
                    if self.stop_listening.load(SeqCst) {
                        mpi::ffi::MPI_Cancel(&mut req);
                        mpi::ffi::MPI_Wait(&mut req, &mut status);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            self.epochs.stop(buf);
        }
    }

    /// Ends `listen`.
    pub(super) fn close(&self) {
        self.stop_listening.store(true, SeqCst);
    }
}
