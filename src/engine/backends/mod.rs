//! The I/O interfaces under test. Each backend is one file implementing [`Backend`] and one
//! line in [`ENGINES`]; the core (engine/mod.rs) decides what to transfer and times it,
//! backends only move bytes and report how many moved.

mod aio;
mod mmap;
mod sync;
mod uring;

use crate::spec::{EngineKind, Op};
use std::fs::File;
use std::io;

/// A buffer the core owns and lends to the backend by address for the life of the task.
#[derive(Debug, Clone, Copy)]
pub struct BufRef {
    /// Start (aligned for O_DIRECT).
    pub ptr: *mut u8,
    /// Length in bytes (one transfer).
    pub len: usize,
}

/// A finished transfer: the buffer slot and the bytes moved, or the error.
pub type Completion = (usize, io::Result<usize>);

/// One task's I/O interface.
pub trait Backend {
    /// Starts a phase on `file` (io_uring registers it, mmap maps `size` bytes of it).
    fn attach(&mut self, file: &File, op: Op, size: u64) -> io::Result<()>;
    /// Starts a transfer of buffer `slot` at `offset` (or makes it, for synchronous backends).
    ///
    /// # Safety
    /// Buffer `slot` must stay allocated and untouched by the caller until its completion has
    /// been returned by [`Backend::reap`].
    unsafe fn submit(&mut self, slot: usize, offset: u64) -> io::Result<()>;
    /// Waits until at least `min` started transfers have finished and appends them to `done`.
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()>;
    /// Pushes written data to the file before the core's fsync (mmap: msync).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Ends the phase: nothing may be in flight.
    fn detach(&mut self);
}

/// A backend in the registry.
pub struct Registered {
    /// Its kind (and so its name).
    pub kind: EngineKind,
    /// One line for `iosurvey engines`.
    pub about: &'static str,
    /// Makes one for a task: `depth` transfers in flight over the task's buffers.
    pub open: fn(depth: usize, bufs: Vec<BufRef>) -> io::Result<Box<dyn Backend>>,
}

/// Every backend, in the order `iosurvey engines` lists them.
pub const ENGINES: &[Registered] = &[
    Registered { kind: EngineKind::Sync, about: "pwrite/pread, one transfer at a time", open: sync::open },
    Registered {
        kind: EngineKind::IoUring,
        about: "io_uring with registered buffers and files, --iodepth in flight",
        open: uring::open,
    },
    Registered {
        kind: EngineKind::Libaio,
        about: "Linux kernel AIO (io_submit/io_getevents system calls, no library needed), --iodepth in flight",
        open: aio::open,
    },
    Registered { kind: EngineKind::Mmap, about: "memcpy to and from a shared mapping of the file", open: mmap::open },
];

/// Makes the backend of `kind`.
pub fn open(kind: EngineKind, depth: usize, bufs: Vec<BufRef>) -> io::Result<Box<dyn Backend>> {
    let entry = ENGINES.iter().find(|e| e.kind == kind).expect("every kind is registered");
    (entry.open)(depth, bufs)
}

/// Whether this kernel lets the engine run, and why not: checked before a run starts.
pub fn probe(kind: EngineKind, depth: usize) -> Result<(), String> {
    let mut page = crate::engine::data::AlignedBuf::try_new(4096).ok_or("no memory for a 4 KiB buffer")?;
    let buf = BufRef { ptr: page.as_mut_slice().as_mut_ptr(), len: 4096 };
    open(kind, depth, vec![buf; depth]).map(drop).map_err(|e| {
        let mut why = e.to_string();
        if kind == EngineKind::IoUring {
            if let Ok(v) = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
                why.push_str(&format!("; kernel.io_uring_disabled = {}", v.trim()));
            }
        }
        why
    })
}

/// Reads or writes all of `buf` at `offset` with pread/pwrite, retrying partial transfers;
/// a read stops early only at the end of the file.
fn transfer_all(fd: i32, op: Op, buf: BufRef, offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len {
        // SAFETY: buf points to buf.len bytes owned by the core for the task's life, and the
        // range [done, len) lies within it.
        let n = unsafe {
            let p = buf.ptr.add(done);
            let left = buf.len - done;
            let at = (offset + done as u64) as libc::off_t;
            match op {
                Op::Write => libc::pwrite(fd, p as *const libc::c_void, left, at),
                Op::Read => libc::pread(fd, p as *mut libc::c_void, left, at),
            }
        };
        match n {
            0 => break,
            n if n > 0 => done += n as usize,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_registered_once_with_a_description() {
        for kind in [EngineKind::Sync, EngineKind::IoUring, EngineKind::Libaio, EngineKind::Mmap] {
            let entries: Vec<_> = ENGINES.iter().filter(|e| e.kind == kind).collect();
            assert_eq!(entries.len(), 1, "{kind:?}");
            assert!(!entries[0].about.is_empty());
        }
    }
}
