//! Linux kernel AIO through its system calls (io_setup, io_submit, io_getevents,
//! io_destroy): no libaio library needed. The context owns the task's transfer buffers: a
//! queued transfer lends its buffer to the kernel, its event gives it back.

use super::cvt;
use super::mem::IoBufs;
use std::io;
use std::os::fd::RawFd;

/// struct iocb of linux/aio_abi.h (little-endian field order).
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// struct io_event of linux/aio_abi.h.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// An AIO context with its buffers, one control block per buffer slot.
pub(crate) struct Aio {
    ctx: libc::c_ulong,
    bufs: IoBufs,
    iocbs: Vec<Iocb>,
    /// Control blocks queued for the next io_submit.
    queued: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
}

impl Aio {
    /// A context for `depth` transfers in flight over `bufs`.
    pub(crate) fn new(depth: usize, bufs: IoBufs) -> io::Result<Aio> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context id into ctx, a valid out-parameter.
        cvt(unsafe {
            libc::syscall(libc::SYS_io_setup, depth.max(1) as libc::c_long, &mut ctx as *mut libc::c_ulong)
        })?;
        let n = bufs.slots();
        Ok(Aio {
            ctx,
            bufs,
            iocbs: vec![Iocb::default(); n],
            queued: Vec::with_capacity(n),
            events: vec![IoEvent::default(); n.max(1)],
        })
    }

    /// The buffers (a slot in flight is not given out).
    pub(crate) fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }

    /// Queues a write (or read) of buffer `slot` at `offset` of `fd`, for the next
    /// [`Aio::submit`].
    pub(crate) fn queue(&mut self, slot: usize, fd: RawFd, offset: u64, write: bool) -> io::Result<()> {
        let (ptr, len) = self.bufs.lend(slot)?;
        self.iocbs[slot] = Iocb {
            data: slot as u64,
            opcode: if write { IOCB_CMD_PWRITE } else { IOCB_CMD_PREAD },
            fildes: fd as u32,
            buf: ptr as u64,
            nbytes: len as u64,
            offset: offset as i64,
            ..Iocb::default()
        };
        self.queued.push(&mut self.iocbs[slot]);
        Ok(())
    }

    /// Submits every queued transfer, retrying when a signal interrupts. On an error, those
    /// not submitted are dropped from the queue and their buffers are the task's again.
    pub(crate) fn submit(&mut self) -> io::Result<()> {
        let mut at = 0;
        while at < self.queued.len() {
            let left = &self.queued[at..];
            // SAFETY: the control blocks live in self.iocbs, which never grows, and each
            // points at a buffer lent to the kernel until its event is read.
            let n = unsafe { libc::syscall(libc::SYS_io_submit, self.ctx, left.len() as libc::c_long, left.as_ptr()) };
            match cvt(n) {
                Ok(n) => at += n as usize,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    for iocb in self.queued.drain(at..) {
                        // SAFETY: a pointer into self.iocbs, which the kernel never saw.
                        self.bufs.take_back(unsafe { (*iocb).data } as usize);
                    }
                    self.queued.clear();
                    return Err(e);
                }
            }
        }
        self.queued.clear();
        Ok(())
    }

    /// Waits for at least `min` events and reads at most `max` (no more than one per slot),
    /// giving their buffers back: (slot, bytes moved or the error).
    pub(crate) fn events(
        &mut self,
        min: usize,
        max: usize,
        done: &mut Vec<(usize, io::Result<usize>)>,
    ) -> io::Result<()> {
        let got = loop {
            // SAFETY: events has room for `max` (capped at its length) events; no timeout.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    self.events.len().min(max) as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            match cvt(n) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r? as usize,
            }
        };
        for ev in &self.events[..got] {
            let slot = ev.data as usize;
            self.bufs.take_back(slot);
            let outcome =
                if ev.res < 0 { Err(io::Error::from_raw_os_error(-ev.res as i32)) } else { Ok(ev.res as usize) };
            done.push((slot, outcome));
        }
        Ok(())
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // SAFETY: destroys the context made in new, once. io_destroy cancels what is in
        // flight and waits for what it cannot cancel, so after it the kernel holds no buffer.
        if unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) } == 0 {
            self.bufs.take_back_all();
        }
    }
}
