//! Copies to and from a shared mapping of the file. Writes allocate the file's blocks to its
//! full size first (posix_fallocate, never shrinking): a store into a mapped page the file
//! system cannot back kills the process (SIGBUS), so a full disk must show up here, as an
//! ordinary ENOSPC, before the first copy. Reads refuse a file shorter than the workload for
//! the same reason. A device error under the mapping also arrives as SIGBUS: a handler turns
//! it into an ordinary EIO for the copy that touched the page (see [`guard`]).

use super::{no_file, probe_by_opening, Backend, BufRef, Capabilities, Completion, Registered, Setup};
use crate::spec::Op;
use std::cell::Cell;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "mmap",
    about: "memcpy to and from a shared mapping of the file",
    caps: Capabilities { writes_need_read: true, page_cache_always: true, ..Capabilities::STORAGE },
    probe: |depth| probe_by_opening(open, depth),
    open,
    param: None,
    // The mapping is set up for one direction per phase.
    refuses: Some(|w| {
        w.ops.contains(&Op::Mix).then(|| "the mmap engine cannot mix reads and writes in one phase".into())
    }),
};

struct Mmap {
    bufs: Vec<BufRef>,
    map: *mut u8,
    size: usize,
    op: Op,
    done: Option<Completion>,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let bufs = setup.bufs;
    Ok(Box::new(Mmap { bufs, map: std::ptr::null_mut(), size: 0, op: Op::Read, done: None }))
}

impl Backend for Mmap {
    fn attach(&mut self, file: Option<&File>, op: Op, size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        let len = file.metadata()?.len();
        match op {
            Op::Write => {
                // SAFETY: allocates blocks of an open descriptor; returns an errno, not -1.
                let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, size as libc::off_t) };
                if rc != 0 {
                    return Err(io::Error::from_raw_os_error(rc));
                }
            }
            Op::Read if len < size => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the file holds {len} bytes, the workload reads {size}"),
                ))
            }
            _ => {}
        }
        let prot = match op {
            Op::Write => libc::PROT_READ | libc::PROT_WRITE,
            _ => libc::PROT_READ,
        };
        // SAFETY: a fresh shared mapping of an open file; checked for MAP_FAILED.
        let map =
            unsafe { libc::mmap(std::ptr::null_mut(), size as usize, prot, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        (self.map, self.size, self.op) = (map as *mut u8, size as usize, op);
        guard::watch(map as usize, size as usize);
        Ok(())
    }
    unsafe fn submit(&mut self, slot: usize, offset: u64, _op: Op) -> io::Result<()> {
        let buf = self.bufs[slot];
        let at = offset as usize;
        if at + buf.len > self.size {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: the range lies inside the mapping (checked above) and inside the buffer.
        unsafe {
            match self.op {
                Op::Write => std::ptr::copy_nonoverlapping(buf.ptr, self.map.add(at), buf.len),
                _ => std::ptr::copy_nonoverlapping(self.map.add(at), buf.ptr, buf.len),
            }
        }
        let result = if guard::faulted() { Err(io::Error::from_raw_os_error(libc::EIO)) } else { Ok(buf.len) };
        self.done = Some((slot, result));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        // SAFETY: the mapping is live between attach and detach.
        if unsafe { libc::msync(self.map as *mut libc::c_void, self.size, libc::MS_SYNC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    fn detach(&mut self) {
        if !self.map.is_null() {
            guard::watch(0, 0);
            // SAFETY: unmaps exactly what attach mapped.
            unsafe { libc::munmap(self.map as *mut libc::c_void, self.size) };
            self.map = std::ptr::null_mut();
        }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        self.detach();
    }
}

/// Turns SIGBUS inside this thread's mapping into an I/O error. The kernel raises SIGBUS when
/// it cannot read a mapped page from the device; the handler maps a zero page over the
/// faulting one, so the copy completes, and notes the fault, which the copy then reports as
/// EIO (its bytes are not used). A SIGBUS anywhere else keeps its default action.
mod guard {
    use super::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Once;

    thread_local! {
        static RANGE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
        static FAULTED: Cell<bool> = const { Cell::new(false) };
    }

    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    static INSTALL: Once = Once::new();

    /// Watches `len` bytes from `start` in this thread (nothing when `len` is 0).
    pub fn watch(start: usize, len: usize) {
        INSTALL.call_once(install);
        RANGE.with(|r| r.set((start, len)));
        FAULTED.with(|f| f.set(false));
    }

    /// Whether a page of the watched range failed since the last call.
    pub fn faulted() -> bool {
        FAULTED.with(|f| f.replace(false))
    }

    fn install() {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction with a valid handler and SA_SIGINFO is well formed.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    }

    extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        let (start, len) = RANGE.with(|r| r.get());
        if len == 0 || addr < start || addr >= start + len {
            // Not ours: back to the default action, which the faulting access raises again.
            // SAFETY: signal() is async-signal-safe.
            unsafe { libc::signal(libc::SIGBUS, libc::SIG_DFL) };
            return;
        }
        let page = addr & !(PAGE.load(Ordering::Relaxed) - 1);
        // SAFETY: replaces one page inside our own mapping with a private zero page; mmap is a
        // plain system call here.
        unsafe {
            libc::mmap(
                page as *mut libc::c_void,
                PAGE.load(Ordering::Relaxed),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        FAULTED.with(|f| f.set(true));
    }
}
