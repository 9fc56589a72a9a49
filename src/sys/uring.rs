//! An io_uring ring (through the io-uring crate) that owns the task's transfer buffers,
//! registered with the kernel once: a submission lends its buffer to the kernel and the
//! completion gives it back, so the crate's unsafe submission is sound by construction.

use super::mem::IoBufs;
use io_uring::{opcode, types, IoUring};
use std::io;
use std::os::fd::RawFd;

/// A ring and the buffers its fixed reads and writes use.
pub(crate) struct Ring {
    // Dropped before the buffers: a buffer still in flight then is leaked by `IoBufs`.
    ring: IoUring,
    bufs: IoBufs,
}

impl Ring {
    /// A ring of `entries` submissions over `bufs`, registered as fixed buffers. One thread
    /// owns the ring and reaps its own completions: the kernel can then run completion work
    /// when the task asks for it instead of interrupting it (kernel 6.1+); older kernels get
    /// a plain ring.
    pub(crate) fn new(entries: u32, bufs: IoBufs) -> io::Result<Ring> {
        let ring = IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))?;
        let iovecs: Vec<libc::iovec> =
            bufs.regions().map(|(ptr, len)| libc::iovec { iov_base: ptr.cast(), iov_len: len }).collect();
        // SAFETY: the regions are the buffers' own allocations, which live as long as the
        // ring (both are fields of `Ring`) and never move; the kernel reads or writes them
        // only for a submission, which lends its buffer first.
        unsafe { ring.submitter().register_buffers(&iovecs)? };
        Ok(Ring { ring, bufs })
    }

    /// The buffers (a slot in flight is not given out).
    pub(crate) fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }

    /// Registers `fd` as fixed file 0 (a phase's file).
    pub(crate) fn register_file(&mut self, fd: RawFd) -> io::Result<()> {
        self.ring.submitter().register_files(&[fd])
    }

    /// Unregisters the fixed files.
    pub(crate) fn unregister_files(&mut self) -> io::Result<()> {
        self.ring.submitter().unregister_files()
    }

    /// Queues a fixed write (or read) of buffer `slot` at `offset` of fixed file 0, its
    /// completion tagged with the slot; submits what is queued when the queue is full.
    pub(crate) fn push(&mut self, slot: usize, offset: u64, write: bool) -> io::Result<()> {
        let (ptr, len) = self.bufs.lend(slot)?;
        let entry = match write {
            true => opcode::WriteFixed::new(types::Fixed(0), ptr, len as u32, slot as u16).offset(offset).build(),
            false => opcode::ReadFixed::new(types::Fixed(0), ptr, len as u32, slot as u16).offset(offset).build(),
        };
        let entry = entry.user_data(slot as u64);
        loop {
            // SAFETY: the entry points at registered buffer `slot`, which was just lent to
            // the kernel and is given back only when this entry's completion is reaped.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            if let Err(e) = self.ring.submit() {
                // Never queued: the buffer is the task's again.
                self.bufs.take_back(slot);
                return Err(e);
            }
        }
    }

    /// Submits what is queued and waits until at least `min` completions are there, retrying
    /// when a signal interrupts the wait.
    pub(crate) fn submit_and_wait(&mut self, min: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(min) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r.map(drop),
            }
        }
    }

    /// Takes at most `max` completions, giving each one's buffer back: (slot, bytes moved or
    /// the error).
    pub(crate) fn complete(&mut self, max: usize, done: &mut Vec<(usize, io::Result<usize>)>) {
        for cqe in self.ring.completion().take(max) {
            let slot = cqe.user_data() as usize;
            self.bufs.take_back(slot);
            let res = cqe.result();
            done.push((slot, if res < 0 { Err(io::Error::from_raw_os_error(-res)) } else { Ok(res as usize) }));
        }
    }
}
