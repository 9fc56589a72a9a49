//! The MPI calls the mpi crate gives no safe form of for what iosurvey does: MPI started with
//! MPI_THREAD_MULTIPLE and communicators any thread may use; one posted receive tested now and
//! then (the abort channel); sends freed without waiting, from buffers that live for ever; a
//! non-blocking barrier tested to completion with pauses; and a window of non-blocking sends
//! and receives over two buffers (the network ceiling's message streams).

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use mpi::Threading;
use std::ops::Deref;
use std::time::Duration;

/// MPI, started with MPI_THREAD_MULTIPLE; finalised when dropped.
pub(crate) struct Universe {
    _held: mpi::environment::Universe,
}

/// Starts MPI with MPI_THREAD_MULTIPLE and gives the world communicator; `Err(None)` when MPI
/// could not start (or was started already), `Err(Some(level))` when the library gives a
/// lower thread level.
pub(crate) fn init_thread_multiple() -> Result<(Universe, Comm), Option<Threading>> {
    let (universe, threading) = mpi::initialize_with_threading(Threading::Multiple).ok_or(None)?;
    if threading != Threading::Multiple {
        return Err(Some(threading));
    }
    let world = universe.world();
    Ok((Universe { _held: universe }, Comm(world)))
}

/// A communicator any thread may use: made only from a world started with
/// MPI_THREAD_MULTIPLE ([`init_thread_multiple`]) or from another `Comm`.
pub(crate) struct Comm(SimpleCommunicator);

// SAFETY: a Comm exists only once MPI runs with MPI_THREAD_MULTIPLE (checked in
// init_thread_multiple, the only way to the first one), under which the standard allows any
// thread to call MPI on any communicator, concurrently.
unsafe impl Send for Comm {}
// SAFETY: as above.
unsafe impl Sync for Comm {}

impl Deref for Comm {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

impl Comm {
    /// A copy of the communicator (its own context: its messages never match this one's).
    pub(crate) fn dup(&self) -> Comm {
        Comm(self.0.duplicate())
    }

    /// The communicator of the processes that give the same `colour` (collective); `None` for
    /// those that give [`Color::undefined`].
    pub(crate) fn split(&self, colour: Color) -> Option<Comm> {
        self.0.split_by_color(colour).map(Comm)
    }

    /// A barrier made without blocking in MPI: MPI_Ibarrier, tested with a pause between
    /// tests until every process has entered it (Open MPI's blocking calls spin, taking the
    /// core from the threads that work).
    pub(crate) fn rest(&self, pause: Duration) {
        // SAFETY: MPI_Request is a plain handle, set by MPI_Ibarrier before use; the request
        // touches no buffer and is tested until it completes, which frees it.
        unsafe {
            let mut req = std::mem::zeroed();
            ffi::MPI_Ibarrier(self.0.as_raw(), &mut req);
            loop {
                let mut done = 0;
                ffi::MPI_Test(&mut req, &mut done, ffi::RSMPI_STATUS_IGNORE);
                if done != 0 {
                    break;
                }
                std::thread::sleep(pause);
            }
        }
    }

    /// Sends `value` to `peer` with `tag` without waiting: the request is freed at once and
    /// the send completes on its own, which is why the value must live for ever.
    pub(crate) fn send_detached(&self, peer: i32, tag: i32, value: &'static u64) {
        // SAFETY: the buffer is one u64 that is never freed nor written (MPI only reads a
        // send's buffer); MPI allows freeing a send request before it completes.
        unsafe {
            let mut req = std::mem::zeroed();
            ffi::MPI_Isend(
                value as *const u64 as *mut std::ffi::c_void,
                1,
                ffi::RSMPI_UINT64_T,
                peer,
                tag,
                self.0.as_raw(),
                &mut req,
            );
            ffi::MPI_Request_free(&mut req);
        }
    }
}

/// A posted receive of one u64 with `tag` from any process, into a buffer of its own that
/// stays put (boxed) until the receive completes or is cancelled and waited for. Dropped while
/// still posted, the buffer is leaked rather than freed under MPI.
pub(crate) struct PostedU64 {
    req: ffi::MPI_Request,
    buf: Option<Box<u64>>,
    done: bool,
}

// SAFETY: the request is a handle MPI lets any thread use under MPI_THREAD_MULTIPLE (a
// PostedU64 is made only on a Comm); its buffer is owned heap memory.
unsafe impl Send for PostedU64 {}

impl PostedU64 {
    /// Posts the receive.
    pub(crate) fn post(comm: &Comm, tag: i32) -> PostedU64 {
        let mut buf = Box::new(0u64);
        // SAFETY: buf is heap memory kept with the request until it completes, or is
        // cancelled and waited for, or is leaked (Drop); MPI writes at most one u64 into it.
        let req = unsafe {
            let mut req = std::mem::zeroed();
            ffi::MPI_Irecv(
                &mut *buf as *mut u64 as *mut std::ffi::c_void,
                1,
                ffi::RSMPI_UINT64_T,
                ffi::RSMPI_ANY_SOURCE,
                tag,
                comm.0.as_raw(),
                &mut req,
            );
            req
        };
        PostedU64 { req, buf: Some(buf), done: false }
    }

    /// The value received, if it came (then the receive is complete: post the next one).
    pub(crate) fn arrived(&mut self) -> Option<u64> {
        let mut done = 0;
        // SAFETY: a live request of ours (or, once complete, the null request MPI_Test set,
        // which it reports complete); the status is not asked for.
        unsafe { ffi::MPI_Test(&mut self.req, &mut done, ffi::RSMPI_STATUS_IGNORE) };
        if done == 0 {
            return None;
        }
        self.done = true;
        self.buf.as_deref().copied()
    }

    /// Withdraws the receive and waits until MPI has let go of the buffer.
    pub(crate) fn cancel(mut self) {
        // SAFETY: cancelling then waiting completes the request either way.
        unsafe {
            ffi::MPI_Cancel(&mut self.req);
            ffi::MPI_Wait(&mut self.req, ffi::RSMPI_STATUS_IGNORE);
        }
        self.done = true;
    }
}

impl Drop for PostedU64 {
    fn drop(&mut self) {
        if !self.done {
            // MPI may still write it (and may be finalised: no call is made here).
            if let Some(buf) = self.buf.take() {
                Box::leak(buf);
            }
        }
    }
}

/// Non-blocking sends from one buffer and receives into another, each request in a slot of
/// its own, reused once it completes. The bytes received are never looked at, so receives in
/// flight together share their buffer. Dropped with requests in flight, it waits for them:
/// the buffers are borrowed only for its life.
pub(crate) struct Window<'b> {
    comm: &'b Comm,
    tag: i32,
    outgoing: &'b [u8],
    incoming: &'b mut [u8],
    requests: Vec<ffi::MPI_Request>,
    in_flight: usize,
}

impl<'b> Window<'b> {
    /// A window of messages with `tag` on `comm`, sending `outgoing` and receiving into
    /// `incoming`.
    pub(crate) fn new(comm: &'b Comm, tag: i32, outgoing: &'b [u8], incoming: &'b mut [u8]) -> Window<'b> {
        Window { comm, tag, outgoing, incoming, requests: Vec::new(), in_flight: 0 }
    }

    /// Posts a send to (or a receive from) `peer`, in `slot` (one [`Window::wait_any`] gave)
    /// or a new slot: the slot.
    pub(crate) fn post(&mut self, peer: i32, send: bool, slot: Option<usize>) -> usize {
        // SAFETY: the buffers are borrowed for the window's life, and the window waits for
        // every request before it goes (Drop); MPI writes at most `incoming.len()` bytes into
        // `incoming` and only reads `outgoing`.
        let req = unsafe {
            let mut req = std::mem::zeroed();
            if send {
                ffi::MPI_Isend(
                    self.outgoing.as_ptr() as *mut std::ffi::c_void,
                    self.outgoing.len() as i32,
                    ffi::RSMPI_UINT8_T,
                    peer,
                    self.tag,
                    self.comm.0.as_raw(),
                    &mut req,
                );
            } else {
                ffi::MPI_Irecv(
                    self.incoming.as_mut_ptr() as *mut std::ffi::c_void,
                    self.incoming.len() as i32,
                    ffi::RSMPI_UINT8_T,
                    peer,
                    self.tag,
                    self.comm.0.as_raw(),
                    &mut req,
                );
            }
            req
        };
        self.in_flight += 1;
        match slot {
            Some(s) => {
                self.requests[s] = req;
                s
            }
            None => {
                self.requests.push(req);
                self.requests.len() - 1
            }
        }
    }

    /// Waits until one request completes: its slot, `None` when none is in flight.
    pub(crate) fn wait_any(&mut self) -> Option<usize> {
        let mut index = 0;
        // SAFETY: requests holds live or null handles; Waitany sets the finished one to null.
        let undefined = unsafe {
            ffi::MPI_Waitany(
                self.requests.len() as i32,
                self.requests.as_mut_ptr(),
                &mut index,
                ffi::RSMPI_STATUS_IGNORE,
            );
            ffi::RSMPI_UNDEFINED
        };
        if index == undefined || index < 0 {
            return None;
        }
        self.in_flight -= 1;
        Some(index as usize)
    }
}

impl Drop for Window<'_> {
    fn drop(&mut self) {
        if self.in_flight > 0 {
            // SAFETY: requests holds live or null handles; waiting completes every live one,
            // so MPI holds neither buffer after this.
            unsafe {
                ffi::MPI_Waitall(self.requests.len() as i32, self.requests.as_mut_ptr(), ffi::RSMPI_STATUSES_IGNORE)
            };
        }
    }
}
