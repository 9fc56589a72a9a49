//! This process and machine: user and parent ids, the monotonic clocks, uname, the page size,
//! and random bytes from the kernel.

use std::io;

/// The effective user id.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// A pipe: its reading end as a file, its writing end to hand to a child process.
pub(crate) fn pipe() -> io::Result<(std::fs::File, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two; on success both descriptors are ours alone.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: each descriptor was just made and is owned once.
    Ok(unsafe { (std::fs::File::from_raw_fd(fds[0]), std::os::fd::OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends SIGTERM to the process group `pgid` (a hook's shell and what it started), or
/// SIGKILL when `hard`.
pub(crate) fn terminate_group(pgid: u32, hard: bool) {
    let signal = if hard { libc::SIGKILL } else { libc::SIGTERM };
    // SAFETY: kill has no memory-safety preconditions; a group that is gone is ESRCH.
    unsafe { libc::kill(-(pgid as i32), signal) };
}

/// The parent process's id.
pub(crate) fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions and cannot fail.
    unsafe { libc::getppid() as u32 }
}

/// Nanoseconds on `clock` (a clock Linux always has: the caller names it from this module).
#[inline]
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-parameter; the clocks named below exist on every Linux
    // iosurvey runs on (CLOCK_MONOTONIC_COARSE since 2.6.32).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds on CLOCK_MONOTONIC (vDSO, no system call).
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time this process (all its threads) has used, nanoseconds.
pub(crate) fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// Nanoseconds on CLOCK_MONOTONIC_COARSE: as cheap as reading memory, a tick coarse.
#[inline]
pub(crate) fn coarse_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC_COARSE)
}

/// What uname says of this machine.
pub(crate) struct Uname {
    /// The host name.
    pub nodename: String,
    /// The kernel's release.
    pub release: String,
}

/// uname(2); `None` when it fails.
pub(crate) fn uname() -> Option<Uname> {
    // SAFETY: utsname is plain data, filled by the call.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a properly sized out-parameter.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    let text = |field: &[libc::c_char]| {
        let bytes: Vec<u8> = field.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Some(Uname { nodename: text(&u.nodename), release: text(&u.release) })
}

/// The size of a memory page, if sysconf tells.
pub(crate) fn page_size() -> Option<usize> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().filter(|&p| p > 0)
}

/// One getrandom(2) into `buf`: the bytes written.
pub(crate) fn getrandom(buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: getrandom writes at most buf.len() bytes into buf, borrowed mutably.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    super::cvt(n).map(|n| n as usize)
}
