//! MSG_ZEROCOPY sends (Linux 4.14+): the kernel sends from the user's pages instead of copying
//! them, and reports each send's completion on the socket's error queue, saying whether it
//! had to copy after all (loopback and veth always do; a real NIC may not).

use std::io;
use std::os::fd::RawFd;

const SO_ZEROCOPY: libc::c_int = 60;
const MSG_ZEROCOPY: libc::c_int = 0x4000000;
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// What the kernel said of a stream's zero-copy sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// Sends made with MSG_ZEROCOPY.
    pub sends: u64,
    /// Completions received.
    pub completed: u64,
    /// Completions for which the kernel copied the data after all.
    pub copied: u64,
}

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
    let one: libc::c_int = 1;
    // SAFETY: setsockopt reads one int from a valid pointer.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sends `buf` once with MSG_ZEROCOPY; returns the bytes the kernel took. The buffer must not
/// change until the send completes (the caller's never does).
pub fn send(fd: RawFd, buf: &[u8], report: &mut Report) -> io::Result<usize> {
    loop {
        // SAFETY: buf is valid for its length.
        let n = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, buf.len(), MSG_ZEROCOPY) };
        if n >= 0 {
            report.sends += 1;
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => {}
            // The socket's option memory is full of pending notifications: read some.
            Some(libc::ENOBUFS) => drain(fd, report, true)?,
            _ => return Err(e),
        }
    }
}

/// Reads completions from the error queue: those there (`wait` false), or at least one.
pub fn drain(fd: RawFd, report: &mut Report, wait: bool) -> io::Result<()> {
    let mut first = wait;
    loop {
        let mut control = [0u64; 16];
        // SAFETY: msghdr is plain data; its control buffer is valid and sized below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&control);
        let flags = libc::MSG_ERRQUEUE | if first { 0 } else { libc::MSG_DONTWAIT };
        if first {
            let mut p = libc::pollfd { fd, events: 0, revents: 0 };
            // SAFETY: one valid pollfd; POLLERR is always reported.
            unsafe { libc::poll(&mut p, 1, 1000) };
        }
        // SAFETY: msg points at valid buffers.
        let rc = unsafe { libc::recvmsg(fd, &mut msg, flags | libc::MSG_DONTWAIT) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EAGAIN) if !first => Ok(()),
                Some(libc::EAGAIN) | Some(libc::EINTR) => continue,
                _ => Err(e),
            };
        }
        first = false;
        // SAFETY: CMSG_* walk the control buffer the kernel filled.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                let err = &*(libc::CMSG_DATA(c) as *const libc::sock_extended_err);
                if err.ee_origin == SO_EE_ORIGIN_ZEROCOPY && err.ee_errno == 0 {
                    // ee_info..=ee_data: the range of sends this notification completes.
                    let n = u64::from(err.ee_data.wrapping_sub(err.ee_info)) + 1;
                    report.completed += n;
                    if err.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                        report.copied += n;
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
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
