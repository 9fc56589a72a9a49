//! TCP streams, in iperf's role. A sender opens P connections to a receiver and writes its
//! share of the bytes on each; the receiver reads and discards them, and answers the end of
//! each stream with the count it read. The sender's clock stops at that answer, when the
//! bytes have arrived, not when they left its socket buffer; and a short count is an error.

pub use super::zerocopy;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

const MAGIC: [u8; 8] = *b"iosnet01";
const HELLO: usize = 20;
/// Bytes a receiver reads at a time (its buffer per stream).
pub const READ_BUF: usize = 1 << 20;

/// Why a stream failed.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// No connection.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// Where to.
        addr: SocketAddr,
        /// Why not.
        source: io::Error,
    },
    /// The connection broke.
    #[error("the connection to {addr} broke after {sent} bytes: {source}")]
    Lost {
        /// The other end.
        addr: SocketAddr,
        /// Bytes moved before.
        sent: u64,
        /// Why.
        source: io::Error,
    },
    /// The receiver got less than was sent.
    #[error("{addr} received {got} of the {sent} bytes sent")]
    Short {
        /// The receiver.
        addr: SocketAddr,
        /// Bytes sent.
        sent: u64,
        /// Bytes it counted.
        got: u64,
    },
    /// A connection that is not an iosurvey stream.
    #[error("a connection from {0} is not an iosurvey stream")]
    Stranger(SocketAddr),
    /// The listener failed.
    #[error("cannot take connections: {0}")]
    Listen(io::Error),
    /// The server had as many clients as it takes.
    #[error("turned {0} away: as many clients as --max-clients allows are being served")]
    Full(SocketAddr),
}

/// What the first bytes of a stream say: the session it belongs to and its place in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The sender's session (one per client run).
    pub session: u64,
    /// Streams in the session.
    pub streams: u16,
    /// This stream's index.
    pub index: u16,
}

impl Hello {
    pub(crate) fn encode(&self) -> [u8; HELLO] {
        let mut b = [0u8; HELLO];
        b[..8].copy_from_slice(&MAGIC);
        b[8..16].copy_from_slice(&self.session.to_le_bytes());
        b[16..18].copy_from_slice(&self.streams.to_le_bytes());
        b[18..20].copy_from_slice(&self.index.to_le_bytes());
        b
    }

    fn decode(b: &[u8; HELLO]) -> Option<Hello> {
        (b[..8] == MAGIC).then(|| Hello {
            session: u64::from_le_bytes(b[8..16].try_into().unwrap_or_default()),
            streams: u16::from_le_bytes([b[16], b[17]]),
            index: u16::from_le_bytes([b[18], b[19]]),
        })
    }
}

/// Each of `streams` streams' share of `bytes`: equal, the first ones one byte more.
pub fn shares(bytes: u64, streams: usize) -> Vec<u64> {
    let n = streams.max(1) as u64;
    (0..n).map(|i| bytes / n + u64::from(i < bytes % n)).collect()
}

/// How a sender writes.
#[derive(Debug, Clone, Copy)]
pub struct Sending {
    /// Connections per link.
    pub streams: usize,
    /// Bytes per write.
    pub write: usize,
    /// Send with MSG_ZEROCOPY and count what the kernel copied anyway.
    pub zerocopy: bool,
}

/// What a sender moved.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent {
    /// Bytes the receiver counted.
    pub bytes: u64,
    /// The kernel's word on zero-copy sends (all zero without them).
    pub zerocopy: zerocopy::Report,
}

/// Sends `bytes` to `addr` over `how.streams` connections at once; returns when the
/// receiver has counted every byte.
pub fn send(addr: SocketAddr, session: u64, how: Sending, bytes: u64) -> Result<Sent, NetError> {
    let parts = shares(bytes, how.streams);
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .iter()
            .enumerate()
            .map(|(index, &share)| {
                let hello = Hello { session, streams: parts.len() as u16, index: index as u16 };
                s.spawn(move || send_one(addr, hello, share, how))
            })
            .collect();
        let mut total = Sent::default();
        let mut first_error = None;
        for h in handles {
            match h.join().unwrap_or_else(|_| Err(NetError::Listen(io::Error::other("a stream's thread panicked")))) {
                Ok(one) => total = Sent { bytes: total.bytes + one.bytes, zerocopy: total.zerocopy + one.zerocopy },
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        first_error.map_or(Ok(total), Err)
    })
}

fn send_one(addr: SocketAddr, hello: Hello, share: u64, how: Sending) -> Result<Sent, NetError> {
    let mut conn = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .map_err(|source| NetError::Connect { addr, source })?;
    let _ = conn.set_nodelay(true);
    let lost = |sent, source| NetError::Lost { addr, sent, source };
    conn.write_all(&hello.encode()).map_err(|e| lost(0, e))?;
    let fd = conn.as_raw_fd();
    let mut report = zerocopy::Report::default();
    if how.zerocopy {
        zerocopy::enable(fd).map_err(|e| lost(0, e))?;
    }
    let buf = vec![0x5au8; how.write.max(1)];
    let mut sent = 0u64;
    while sent < share {
        let n = (share - sent).min(buf.len() as u64) as usize;
        if how.zerocopy {
            sent += zerocopy::send(fd, &buf[..n], &mut report).map_err(|e| lost(sent, e))? as u64;
        } else {
            conn.write_all(&buf[..n]).map_err(|e| lost(sent, e))?;
            sent += n as u64;
        }
    }
    if how.zerocopy {
        zerocopy::finish(fd, &mut report, 30).map_err(|e| lost(sent, e))?;
    }
    conn.shutdown(Shutdown::Write).map_err(|e| lost(sent, e))?;
    let mut ack = [0u8; 8];
    conn.read_exact(&mut ack).map_err(|e| lost(sent, e))?;
    let got = u64::from_le_bytes(ack);
    if got != sent {
        return Err(NetError::Short { addr, sent, got });
    }
    Ok(Sent { bytes: sent, zerocopy: report })
}

/// Serves one stream: reads its hello, then everything to its end, discarding it, and
/// answers with the count. Returns the hello and the count.
pub fn receive_one(conn: TcpStream) -> Result<(Hello, u64), NetError> {
    receive_admitted(conn, |_| true)
}

/// As [`receive_one`], with a say on the hello: a stream `admit` refuses is dropped unread.
pub fn receive_admitted(mut conn: TcpStream, admit: impl FnOnce(&Hello) -> bool) -> Result<(Hello, u64), NetError> {
    let peer = conn.peer_addr().unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let lost = |sent, source| NetError::Lost { addr: peer, sent, source };
    let mut hello = [0u8; HELLO];
    conn.read_exact(&mut hello).map_err(|e| lost(0, e))?;
    let hello = Hello::decode(&hello).ok_or(NetError::Stranger(peer))?;
    if !admit(&hello) {
        return Err(NetError::Full(peer));
    }
    // Once the stream has begun, a slow sender is the measurement, not a fault.
    let _ = conn.set_read_timeout(None);
    let mut buf = vec![0u8; READ_BUF];
    let mut got = 0u64;
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got += n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(lost(got, e)),
        }
    }
    conn.write_all(&got.to_le_bytes()).map_err(|e| lost(got, e))?;
    Ok((hello, got))
}

/// Takes `expected` streams on `listener`, each served on its own thread; returns the bytes
/// they carried.
pub fn receive(listener: &TcpListener, expected: usize) -> Result<u64, NetError> {
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for _ in 0..expected {
            let (conn, _) = listener.accept().map_err(NetError::Listen)?;
            handles.push(s.spawn(move || receive_one(conn)));
        }
        let mut total = 0;
        for h in handles {
            let (_, n) = h.join().unwrap_or_else(|_| Err(NetError::Listen(io::Error::other("a thread panicked"))))?;
            total += n;
        }
        Ok(total)
    })
}

/// The address to listen on: `interface`'s IPv4 address, else the first address the host
/// name resolves to that is not loopback, else loopback (one node).
pub fn local_ip(interface: Option<&str>) -> io::Result<IpAddr> {
    let addrs = interface_addrs()?;
    if let Some(name) = interface {
        return addrs.iter().find(|(n, _)| n == name).map(|(_, ip)| *ip).ok_or_else(|| {
            let known: Vec<&str> = addrs.iter().map(|(n, _)| n.as_str()).collect();
            io::Error::other(format!("no interface {name} with an IPv4 address (there are: {})", known.join(", ")))
        });
    }
    let resolved = std::net::ToSocketAddrs::to_socket_addrs(&(crate::env::hostname().as_str(), 0))
        .map(|it| it.map(|a| a.ip()).filter(|ip| ip.is_ipv4() && !ip.is_loopback()).collect::<Vec<_>>())
        .unwrap_or_default();
    let own: Vec<IpAddr> = addrs.iter().map(|(_, ip)| *ip).collect();
    Ok(resolved
        .into_iter()
        .find(|ip| own.contains(ip))
        .or_else(|| own.iter().copied().find(|ip| !ip.is_loopback()))
        .unwrap_or(IpAddr::from([127, 0, 0, 1])))
}

/// Every interface's IPv4 address, by name.
fn interface_addrs() -> io::Result<Vec<(String, IpAddr)>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills head with a list freed below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut at = head;
    while !at.is_null() {
        // SAFETY: at walks the list getifaddrs made; each entry's fields are valid or null.
        unsafe {
            let ifa = &*at;
            if !ifa.ifa_addr.is_null() && i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                let ip = IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes());
                let name = std::ffi::CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned();
                out.push((name, ip));
            }
            at = ifa.ifa_next;
        }
    }
    // SAFETY: head came from getifaddrs.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_and_differ_by_one_at_most() {
        assert_eq!(shares(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(shares(10, 0), vec![10]);
        for (bytes, n) in [(0, 3), (1, 4), (1 << 30, 7), (12345, 1)] {
            let s = shares(bytes, n);
            assert_eq!(s.iter().sum::<u64>(), bytes);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }

    #[test]
    fn every_byte_sent_is_counted_by_the_receiver() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let bytes = 3 * (1 << 20) + 17;
        let (sent, got) = std::thread::scope(|s| {
            let r = s.spawn(|| receive(&listener, 4));
            let sent = send(addr, 7, Sending { streams: 4, write: 64 << 10, zerocopy: false }, bytes).unwrap();
            (sent.bytes, r.join().unwrap().unwrap())
        });
        assert_eq!((sent, got), (bytes, bytes));
        // Zero-copy sends over loopback: every one completes, and the kernel says it copied
        // (loopback cannot hand user pages to a device).
        let (sent, got) = std::thread::scope(|s| {
            let r = s.spawn(|| receive(&listener, 2));
            let sent = send(addr, 8, Sending { streams: 2, write: 256 << 10, zerocopy: true }, bytes).unwrap();
            (sent, r.join().unwrap().unwrap())
        });
        assert_eq!((sent.bytes, got), (bytes, bytes));
        let z = sent.zerocopy;
        assert!(z.sends >= 12 && z.completed == z.sends, "{z:?}");
        assert_eq!(z.copied, z.completed, "loopback copies: {z:?}");
        let hello = Hello { session: 9, streams: 4, index: 3 };
        assert_eq!(Hello::decode(&hello.encode()), Some(hello));
        assert!(local_ip(Some("no-such-interface-x")).is_err());
        assert!(local_ip(Some("lo")).unwrap().is_loopback());
    }
}
