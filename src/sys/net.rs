//! Sockets where std has no call: MSG_ZEROCOPY sends (Linux 4.14+) and the completions the
//! kernel reports on the socket's error queue, a reset on close (SO_LINGER 0, for tests), and
//! the machine's IPv4 interfaces.

use super::errno::EAGAIN;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::RawFd;

const SO_ZEROCOPY: libc::c_int = 60;
const MSG_ZEROCOPY: libc::c_int = 0x4000000;

/// An error queue message's origin for zero-copy completions.
pub(crate) const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// The code of a zero-copy completion for which the kernel copied after all.
pub(crate) const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// Asks the kernel for zero-copy sends on socket `fd` (SO_ZEROCOPY).
pub(crate) fn enable_zerocopy(fd: RawFd) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: setsockopt reads one int from a valid pointer, sized right.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    super::cvt(rc).map(drop)
}

/// One send of `buf` with MSG_ZEROCOPY: the bytes the kernel took. The kernel reads the pages
/// until the send's completion arrives on the error queue; a change meanwhile changes what
/// is sent, never this process's memory.
pub(crate) fn send_zerocopy(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for reads of its length.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), MSG_ZEROCOPY) };
    super::cvt(n).map(|n| n as usize)
}

/// Waits until `fd` has something on its error queue (POLLERR, always reported), at most
/// `ms` milliseconds.
pub(crate) fn poll_error(fd: RawFd, ms: i32) {
    let mut p = libc::pollfd { fd, events: 0, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) };
}

/// An extended error from the error queue (struct sock_extended_err).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExtendedErr {
    /// ee_errno.
    pub errno: u32,
    /// ee_origin.
    pub origin: u8,
    /// ee_code.
    pub code: u8,
    /// ee_info.
    pub info: u32,
    /// ee_data.
    pub data: u32,
}

/// Reads one message from `fd`'s error queue without waiting and hands each extended error in
/// it to `each`: `Ok(false)` when the queue is empty (EAGAIN), `Ok(true)` when a message was
/// read. EINTR is returned as an error for the caller to retry.
pub(crate) fn recv_error_queue(fd: RawFd, mut each: impl FnMut(ExtendedErr)) -> io::Result<bool> {
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; zero is an empty message.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control);
    // SAFETY: msg points at a valid control buffer of the length it gives.
    let rc = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(EAGAIN) => Ok(false),
            _ => Err(e),
        };
    }
    // SAFETY: CMSG_* walk the control buffer the kernel filled, within msg_controllen; each
    // message's data is a sock_extended_err for this socket's error queue.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let err = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::sock_extended_err);
            each(ExtendedErr {
                errno: err.ee_errno,
                origin: err.ee_origin,
                code: err.ee_code,
                info: err.ee_info,
                data: err.ee_data,
            });
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(true)
}

/// Makes closing socket `fd` reset the connection (SO_LINGER with a zero time).
#[cfg(test)]
pub(crate) fn reset_on_close(fd: RawFd) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt reads one linger from a valid pointer, sized right.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// Every interface's IPv4 address, with the interface's name.
pub(crate) fn ipv4_interfaces() -> io::Result<Vec<(String, Ipv4Addr)>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills head with a list freed below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut at = head;
    while !at.is_null() {
        // SAFETY: at walks the list getifaddrs made; each entry's fields are valid or null,
        // an AF_INET address is a sockaddr_in, and the name is NUL-terminated.
        unsafe {
            let ifa = &*at;
            if !ifa.ifa_addr.is_null() && i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                let name = std::ffi::CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned();
                out.push((name, ip));
            }
            at = ifa.ifa_next;
        }
    }
    // SAFETY: head came from getifaddrs and is freed once; nothing refers into it now.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}
