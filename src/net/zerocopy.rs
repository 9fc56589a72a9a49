//! MSG_ZEROCOPY sends (Linux 4.14+): the kernel sends from the user's pages instead of copying
//! them, and reports each send's completion on the socket's error queue, saying whether it
//! had to copy after all (loopback and veth always do; a real NIC may not).

use crate::sys::errno::{EINTR, ENOBUFS};
use crate::sys::net;
use std::io;
use std::os::fd::RawFd;

pub use crate::record::net::ZeroCopy as Report;

impl std::ops::Add for Report {
    type Output = Report;
    fn add(self, o: Report) -> Report {
        Report { sends: self.sends + o.sends, completed: self.completed + o.completed, copied: self.copied + o.copied }
    }
}

impl Report {
    /// The counts of every member of the team added (collective).
    pub fn over_team<M: crate::team::Member>(self, member: &M) -> Report {
        Report { sends: member.sum(self.sends), completed: member.sum(self.completed), copied: member.sum(self.copied) }
    }
}

/// Asks the kernel for zero-copy sends on `fd`.
pub fn enable(fd: RawFd) -> io::Result<()> {
    net::enable_zerocopy(fd)
}

/// Sends `buf` once with MSG_ZEROCOPY; returns the bytes the kernel took. The buffer must not
/// change until the send completes (the caller's never does).
pub fn send(fd: RawFd, buf: &[u8], report: &mut Report) -> io::Result<usize> {
    loop {
        let e = match net::send_zerocopy(fd, buf) {
            Ok(n) => {
                report.sends += 1;
                return Ok(n);
            }
            Err(e) => e,
        };
        match e.raw_os_error() {
            Some(EINTR) => {}
            // The socket's option memory is full of pending notifications: read some.
            Some(ENOBUFS) => drain(fd, report, true)?,
            _ => return Err(e),
        }
    }
}

/// Reads completions from the error queue: those there (`wait` false), or at least one.
pub fn drain(fd: RawFd, report: &mut Report, wait: bool) -> io::Result<()> {
    let mut first = wait;
    loop {
        if first {
            net::poll_error(fd, 1000);
        }
        let read = net::recv_error_queue(fd, |err| {
            if err.origin == net::SO_EE_ORIGIN_ZEROCOPY && err.errno == 0 {
                // ee_info..=ee_data: the range of sends this notification completes.
                let n = u64::from(err.data.wrapping_sub(err.info)) + 1;
                report.completed += n;
                if err.code & net::SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                    report.copied += n;
                }
            }
        });
        match read {
            Ok(true) => first = false,
            Ok(false) if !first => return Ok(()),
            Ok(false) => {}
            Err(e) if e.raw_os_error() == Some(EINTR) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Waits for every send's completion (at most `limit` polls of a second each).
pub fn finish(fd: RawFd, report: &mut Report, limit: u32) -> io::Result<()> {
    let mut polls = 0;
    while report.completed < report.sends && polls < limit {
        drain(fd, report, true)?;
        polls += 1;
    }
    Ok(())
}
