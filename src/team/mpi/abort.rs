//! The abort channel: a failing task tells every process to stop with one small message to
//! each, which a monitor thread in every process receives.

use super::Comm;
use mpi::raw::AsRaw;
use mpi::traits::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const TAG_ABORT: i32 = 0x105;

/// Tells every process to stop: one small message to each, received by a monitor thread.
pub(super) struct AbortChannel {
    pub(super) flag: AtomicBool,
    pub(super) sent: AtomicBool,
    pub(super) stop: AtomicBool,
    pub(super) comm: Comm,
}

impl AbortChannel {
    pub(super) fn raise(&self) {
        self.flag.store(true, Ordering::Relaxed);
        if self.sent.swap(true, Ordering::Relaxed) {
            return;
        }
        static ONE: i32 = 1;
        let me = self.comm.0.rank();
        for peer in (0..self.comm.0.size()).filter(|&p| p != me) {
            // SAFETY: ONE is a static buffer that outlives the send; the request is freed
            // without waiting, which MPI allows for sends (they complete on their own).
            unsafe {
                let mut req = std::mem::zeroed();
                mpi::ffi::MPI_Isend(
                    &ONE as *const i32 as *mut libc::c_void,
                    1,
                    mpi::ffi::RSMPI_INT32_T,
                    peer,
                    TAG_ABORT,
                    self.comm.0.as_raw(),
                    &mut req,
                );
                mpi::ffi::MPI_Request_free(&mut req);
            }
        }
    }

    /// Waits for one abort message until told to stop.
    pub(super) fn listen(self: Arc<Self>) {
        let mut buf: i32 = 0;
        // SAFETY: buf lives until the request completes or is cancelled and waited for below.
        unsafe {
            let mut req = std::mem::zeroed();
            mpi::ffi::MPI_Irecv(
                &mut buf as *mut i32 as *mut libc::c_void,
                1,
                mpi::ffi::RSMPI_INT32_T,
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
                    self.flag.store(true, Ordering::Relaxed);
                    return;
                }
                if self.stop.load(Ordering::Relaxed) {
                    mpi::ffi::MPI_Cancel(&mut req);
                    mpi::ffi::MPI_Wait(&mut req, &mut status);
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}
