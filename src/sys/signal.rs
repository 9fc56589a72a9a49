//! Signals: a set of them blocked in the calling thread (threads made later inherit the mask)
//! and waited for by one thread with `sigwait` or `sigtimedwait`, so their handling is
//! ordinary code; unblocking everything (the janitor, which inherits the lead's mask across
//! exec); and `kill` with signal 0, which asks whether a process exists.

use std::time::Duration;

pub use libc::{SIGHUP, SIGINT, SIGTERM};

/// A set of signals (`sigset_t`).
#[derive(Clone, Copy)]
pub struct SignalSet(libc::sigset_t);

impl SignalSet {
    /// The set of `signals`.
    pub fn of(signals: &[i32]) -> SignalSet {
        // SAFETY: sigset_t is plain data, initialised by sigemptyset before use.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: set is a valid sigset_t; a number that is no signal is refused with EINVAL.
        unsafe {
            libc::sigemptyset(&mut set);
            for &s in signals {
                libc::sigaddset(&mut set, s);
            }
        }
        SignalSet(set)
    }

    /// Blocks the set in the calling thread.
    pub fn block(&self) {
        // SAFETY: the set is initialised; only this thread's mask changes.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &self.0, std::ptr::null_mut()) };
    }

    /// Unblocks the set in the calling thread.
    pub fn unblock(&self) {
        // SAFETY: the set is initialised; only this thread's mask changes.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &self.0, std::ptr::null_mut()) };
    }

    /// Waits for one of the set's signals (blocked in every thread), at most `limit` (for
    /// ever without one): the signal, `None` on timeout. An interrupted wait is made again.
    pub fn wait(&self, limit: Option<Duration>) -> Option<i32> {
        loop {
            let rc = match limit {
                None => {
                    let mut sig = 0;
                    // SAFETY: the set is initialised; sig is a valid out-parameter.
                    let rc = unsafe { libc::sigwait(&self.0, &mut sig) };
                    if rc == 0 {
                        return Some(sig);
                    }
                    -1
                }
                Some(d) => {
                    let ts = libc::timespec {
                        tv_sec: d.as_secs() as libc::time_t,
                        tv_nsec: d.subsec_nanos() as libc::c_long,
                    };
                    // SAFETY: the set is initialised, ts a valid timeout; no siginfo asked for.
                    unsafe { libc::sigtimedwait(&self.0, std::ptr::null_mut(), &ts) }
                }
            };
            if rc > 0 {
                return Some(rc);
            }
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN) {
                return None;
            }
        }
    }
}

/// Unblocks every signal in the calling thread.
pub(crate) fn unblock_all() {
    // SAFETY: a full set, initialised by sigfillset; only this thread's mask changes.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
    }
}

/// Whether process `pid` exists: `kill` with signal 0, which sends nothing (ESRCH when there
/// is no such process, EPERM when it is another user's).
pub(crate) fn probe_process(pid: u32) -> std::io::Result<()> {
    // SAFETY: no memory is involved, and signal 0 is delivered to nobody.
    match unsafe { libc::kill(pid as libc::pid_t, 0) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}
