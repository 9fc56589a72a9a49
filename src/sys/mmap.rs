//! A shared mapping of a file, copied to and from by offset, and the SIGBUS guard that turns a
//! device error under the mapping into an ordinary EIO for the copy that touched the page.

use super::errno::{EBADF, EINVAL, EIO};
use std::io;
use std::os::fd::RawFd;

/// `len` bytes of a file mapped shared, readable (and writable when asked); unmapped when
/// dropped. The calling thread's SIGBUS guard watches it while it lives: one mapping per
/// thread at a time.
pub(crate) struct Mapping {
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

impl Mapping {
    /// Maps the first `len` bytes of `fd`, shared. The file must hold them: a page past its
    /// end raises SIGBUS when touched (which the guard turns into EIO).
    pub(crate) fn shared(fd: RawFd, len: usize, writable: bool) -> io::Result<Mapping> {
        let prot = if writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
        // SAFETY: a fresh mapping at an address the kernel picks, so nothing of ours is
        // replaced; checked for MAP_FAILED.
        let map = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        guard::watch(map as usize, len);
        Ok(Mapping { ptr: map.cast(), len, writable })
    }

    /// The mapping's length.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The range `[at, at + n)` when it lies inside the mapping.
    fn range(&self, at: u64, n: usize) -> io::Result<usize> {
        match usize::try_from(at).ok().filter(|&a| a.checked_add(n).is_some_and(|end| end <= self.len)) {
            Some(a) => Ok(a),
            None => Err(io::Error::from_raw_os_error(EINVAL)),
        }
    }

    /// Copies `src` into the mapping at `at`: the bytes copied, or EIO when a page of the
    /// mapping failed under the copy, EINVAL out of range, EBADF on a read-only mapping.
    pub(crate) fn write_at(&mut self, at: u64, src: &[u8]) -> io::Result<usize> {
        if !self.writable {
            return Err(io::Error::from_raw_os_error(EBADF));
        }
        let at = self.range(at, src.len())?;
        // SAFETY: the range lies inside the mapping, which is writable and not memory Rust
        // holds a reference to (it is only reached through this raw pointer); src is a
        // separate allocation.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(at), src.len()) };
        Self::copied(src.len())
    }

    /// Copies from the mapping at `at` into `dst`: as [`Mapping::write_at`].
    pub(crate) fn read_at(&self, at: u64, dst: &mut [u8]) -> io::Result<usize> {
        let at = self.range(at, dst.len())?;
        // SAFETY: the range lies inside the mapping; dst is a separate allocation borrowed
        // mutably.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(at), dst.as_mut_ptr(), dst.len()) };
        Self::copied(dst.len())
    }

    fn copied(n: usize) -> io::Result<usize> {
        if guard::faulted() {
            Err(io::Error::from_raw_os_error(EIO))
        } else {
            Ok(n)
        }
    }

    /// Writes the mapping's dirty pages to the file and waits (msync MS_SYNC).
    pub(crate) fn sync(&self) -> io::Result<()> {
        // SAFETY: the mapping is live; msync reads no memory of ours.
        if unsafe { libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        guard::watch(0, 0);
        // SAFETY: unmaps exactly what `shared` mapped, once; nothing refers into it.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Turns SIGBUS inside this thread's mapping into an I/O error. The kernel raises SIGBUS when
/// it cannot read a mapped page from the device; the handler maps a zero page over the
/// faulting one, so the copy completes, and notes the fault, which the copy then reports as
/// EIO (its bytes are not used). A SIGBUS anywhere else keeps its default action.
mod guard {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Once;

    thread_local! {
        static RANGE: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
        static FAULTED: Cell<bool> = const { Cell::new(false) };
    }

    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    static INSTALL: Once = Once::new();

    /// Watches `len` bytes from `start` in this thread (nothing when `len` is 0).
    pub(super) fn watch(start: usize, len: usize) {
        INSTALL.call_once(install);
        RANGE.with(|r| r.set((start, len)));
        FAULTED.with(|f| f.set(false));
    }

    /// Whether a page of the watched range failed since the last call.
    pub(super) fn faulted() -> bool {
        FAULTED.with(|f| f.replace(false))
    }

    fn install() {
        if let Some(page) = crate::sys::proc::page_size() {
            PAGE.store(page, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction with a valid handler and SA_SIGINFO is well formed; the
        // handler only reads thread-locals made with const initialisers (no allocation) and
        // makes async-signal-safe calls.
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
