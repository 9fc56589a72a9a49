//! TCP streams, in iperf's role. A sender opens P connections to a receiver and writes its
//! share of the bytes on each; the receiver reads and discards them, and answers the end of
//! each stream with the count it read. The sender's clock stops at that answer, when the
//! bytes have arrived, not when they left its socket buffer; and a short count is an error.

pub use super::zerocopy;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The protocol's mark and version: 02 has sessions that end with a bye.
const MAGIC: [u8; 8] = *b"iosnet02";
/// Bytes of a hello.
pub const HELLO: usize = 20;
/// Bytes a receiver reads at a time (its buffer per stream).
pub const READ_BUF: usize = 1 << 20;
/// How long a sender waits for a receiver that takes nothing and answers nothing, unless told.
pub const WAIT: Duration = Duration::from_secs(30);
/// How long a receiver between ranks waits for a new stream's hello (sent right after connect).
const HELLO_WAIT: Duration = Duration::from_secs(10);

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
    /// The server turned a stream away.
    #[error("turned {addr} away: {why}")]
    Refused {
        /// The stream's sender.
        addr: SocketAddr,
        /// Why.
        why: String,
    },
    /// A sender's receiver stopped taking bytes or answering.
    #[error("{addr} stopped answering: nothing moved for {:.1} s after {sent} bytes", .wait.as_secs_f64())]
    Stalled {
        /// The receiver.
        addr: SocketAddr,
        /// Bytes moved before.
        sent: u64,
        /// How long nothing moved.
        wait: Duration,
    },
    /// A receiver's sender went quiet.
    #[error("{addr} sent nothing for {:.1} s after {got} bytes", .wait.as_secs_f64())]
    Idle {
        /// The sender.
        addr: SocketAddr,
        /// Bytes it sent before.
        got: u64,
        /// How long it sent nothing.
        wait: Duration,
    },
    /// A connection said no hello in time.
    #[error("{addr} sent no hello within {:.1} s", .wait.as_secs_f64())]
    NoHello {
        /// The sender.
        addr: SocketAddr,
        /// The deadline, from the connection.
        wait: Duration,
    },
    /// A session lasted longer than a receiver allows.
    #[error("{addr}'s session ran past the {:.1} s a session may last", .limit.as_secs_f64())]
    Overtime {
        /// The sender.
        addr: SocketAddr,
        /// The longest a session may last.
        limit: Duration,
    },
}

/// Whether an error is a socket's time-out (SO_RCVTIMEO and SO_SNDTIMEO give EAGAIN).
fn timed_out(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// A session id no other local user can guess, from getrandom(2): anyone who knows a
/// session's id can send its bye or break it.
pub fn new_session() -> io::Result<u64> {
    let mut b = [0u8; 8];
    loop {
        // Requests of up to 256 bytes are never short once the pool is ready; only EINTR.
        let e = match crate::sys::proc::getrandom(&mut b) {
            Ok(8) => return Ok(u64::from_le_bytes(b)),
            Ok(_) => io::Error::other("getrandom gave too few bytes"),
            Err(e) => e,
        };
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// What the first bytes of a stream say: the session it belongs to and its place in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The sender's session (one per client run, all its processes and rounds).
    pub session: u64,
    /// Streams the session has open at once (0: the session's end, a bye).
    pub streams: u16,
    /// This stream's index.
    pub index: u16,
}

impl Hello {
    /// The last word of a session: it opens no more streams.
    pub fn bye(session: u64) -> Hello {
        Hello { session, streams: 0, index: 0 }
    }

    /// Whether this is a session's last word.
    pub fn is_bye(&self) -> bool {
        self.streams == 0
    }

    /// The hello as a stream's first bytes.
    pub fn encode(&self) -> [u8; HELLO] {
        let mut b = [0u8; HELLO];
        b[..8].copy_from_slice(&MAGIC);
        b[8..16].copy_from_slice(&self.session.to_le_bytes());
        b[16..18].copy_from_slice(&self.streams.to_le_bytes());
        b[18..20].copy_from_slice(&self.index.to_le_bytes());
        b
    }

    /// The hello a stream's first bytes hold, if they are one (public for the fuzzer).
    pub fn decode(b: &[u8; HELLO]) -> Option<Hello> {
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
    /// The longest a connect, a write or the receiver's answer may take.
    pub wait: Duration,
}

/// What a sender moved.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent {
    /// Bytes the receiver counted.
    pub bytes: u64,
    /// The kernel's word on zero-copy sends (all zero without them).
    pub zerocopy: zerocopy::Report,
}

/// Sends `bytes` to `addr` over `how.streams` connections at once, saying `first`'s session
/// and stream count, with indices from `first.index`; returns when the receiver has counted
/// every byte.
pub fn send(addr: SocketAddr, first: Hello, how: Sending, bytes: u64) -> Result<Sent, NetError> {
    let parts = shares(bytes, how.streams);
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .iter()
            .enumerate()
            .map(|(i, &share)| {
                let hello = Hello { index: first.index.saturating_add(i as u16), ..first };
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

/// Ends a session: says its bye and waits for the server to take it.
pub fn bye(addr: SocketAddr, session: u64, wait: Duration) -> Result<(), NetError> {
    let mut conn = connect(addr, Hello::bye(session), wait)?;
    answer_of(&mut conn, addr, 0, wait).map(|_| ())
}

/// A connection to `addr` that has said `hello`, on which no write or read blocks for longer
/// than `wait`: a server that stops answering ends the sender instead of holding it.
fn connect(addr: SocketAddr, hello: Hello, wait: Duration) -> Result<TcpStream, NetError> {
    let mut conn = TcpStream::connect_timeout(&addr, wait).map_err(|source| NetError::Connect { addr, source })?;
    let _ = conn.set_nodelay(true);
    let timeouts = conn.set_write_timeout(Some(wait)).and_then(|_| conn.set_read_timeout(Some(wait)));
    timeouts.and_then(|_| conn.write_all(&hello.encode())).map_err(|e| sending_error(addr, 0, wait, e))?;
    Ok(conn)
}

/// A sender's error after `sent` bytes: a time-out says the receiver stopped answering.
fn sending_error(addr: SocketAddr, sent: u64, wait: Duration, source: io::Error) -> NetError {
    if timed_out(&source) {
        NetError::Stalled { addr, sent, wait }
    } else {
        NetError::Lost { addr, sent, source }
    }
}

/// Ends the sending side and reads the receiver's count.
fn answer_of(conn: &mut TcpStream, addr: SocketAddr, sent: u64, wait: Duration) -> Result<u64, NetError> {
    conn.shutdown(Shutdown::Write).map_err(|e| sending_error(addr, sent, wait, e))?;
    let mut ack = [0u8; 8];
    conn.read_exact(&mut ack).map_err(|e| sending_error(addr, sent, wait, e))?;
    Ok(u64::from_le_bytes(ack))
}

fn send_one(addr: SocketAddr, hello: Hello, share: u64, how: Sending) -> Result<Sent, NetError> {
    let mut conn = connect(addr, hello, how.wait)?;
    let lost = |sent, source| sending_error(addr, sent, how.wait, source);
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
    let got = answer_of(&mut conn, addr, sent, how.wait)?;
    if got != sent {
        return Err(NetError::Short { addr, sent, got });
    }
    Ok(Sent { bytes: sent, zerocopy: report })
}

/// Serves one stream between ranks: reads its hello, then everything to its end, discarding
/// it, and answers with the count. Returns the hello and the count.
pub fn receive_one(mut conn: TcpStream, peer: SocketAddr) -> Result<(Hello, u64), NetError> {
    let hello = read_hello(&mut conn, peer, HELLO_WAIT)?;
    // Between the ranks of one job a slow sender is the measurement, not a fault.
    let got = drain(&mut conn, peer, None)?;
    answer(&mut conn, peer, got)?;
    Ok((hello, got))
}

/// Reads a stream's hello, all of it within `wait` of now (a sender dripping bytes gets no
/// longer than one saying nothing).
pub fn read_hello(conn: &mut TcpStream, peer: SocketAddr, wait: Duration) -> Result<Hello, NetError> {
    let deadline = Instant::now() + wait;
    let mut b = [0u8; HELLO];
    let mut got = 0;
    while got < HELLO {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NetError::NoHello { addr: peer, wait });
        }
        conn.set_read_timeout(Some(left)).map_err(|e| NetError::Lost { addr: peer, sent: 0, source: e })?;
        match conn.read(&mut b[got..]) {
            Ok(0) => {
                return Err(NetError::Lost {
                    addr: peer,
                    sent: got as u64,
                    source: io::ErrorKind::UnexpectedEof.into(),
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if timed_out(&e) => return Err(NetError::NoHello { addr: peer, wait }),
            Err(source) => return Err(NetError::Lost { addr: peer, sent: got as u64, source }),
        }
    }
    Hello::decode(&b).ok_or(NetError::Stranger(peer))
}

/// When a receiver gives up on a stream.
#[derive(Debug, Clone, Copy)]
pub struct Patience {
    /// No bytes for this long.
    pub idle: Duration,
    /// The end of the stream's session's time...
    pub until: Instant,
    /// ...which lasts at most this long.
    pub limit: Duration,
}

/// Reads a stream to its end, discarding it; returns the count. With `patience`, a sender
/// that goes quiet or runs past its session's end is dropped.
pub fn drain(conn: &mut TcpStream, peer: SocketAddr, patience: Option<Patience>) -> Result<u64, NetError> {
    let lost = |got, source| NetError::Lost { addr: peer, sent: got, source };
    conn.set_read_timeout(patience.map(|p| p.idle)).map_err(|e| lost(0, e))?;
    let mut buf = vec![0u8; READ_BUF];
    let mut got = 0u64;
    loop {
        match conn.read(&mut buf) {
            Ok(0) => return Ok(got),
            Ok(n) => got += n as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(match patience {
                    Some(p) if timed_out(&e) => NetError::Idle { addr: peer, got, wait: p.idle },
                    _ => lost(got, e),
                })
            }
        }
        if let Some(p) = patience.filter(|p| Instant::now() > p.until) {
            return Err(NetError::Overtime { addr: peer, limit: p.limit });
        }
    }
}

/// Answers the end of a stream with the count read.
pub fn answer(conn: &mut TcpStream, peer: SocketAddr, got: u64) -> Result<(), NetError> {
    conn.write_all(&got.to_le_bytes()).map_err(|source| NetError::Lost { addr: peer, sent: got, source })
}

/// Takes `expected` streams on `listener`, each served on its own thread; returns the bytes
/// they carried.
pub fn receive(listener: &TcpListener, expected: usize) -> Result<u64, NetError> {
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for _ in 0..expected {
            let (conn, peer) = listener.accept().map_err(NetError::Listen)?;
            handles.push(s.spawn(move || receive_one(conn, peer)));
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
    Ok(crate::sys::net::ipv4_interfaces()?.into_iter().map(|(name, ip)| (name, IpAddr::V4(ip))).collect())
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
            let how = Sending { streams: 4, write: 64 << 10, zerocopy: false, wait: WAIT };
            let sent = send(addr, Hello { session: 7, streams: 4, index: 0 }, how, bytes).unwrap();
            (sent.bytes, r.join().unwrap().unwrap())
        });
        assert_eq!((sent, got), (bytes, bytes));
        // Zero-copy sends over loopback: every one completes, and the kernel says it copied
        // (loopback cannot hand user pages to a device).
        let (sent, got) = std::thread::scope(|s| {
            let r = s.spawn(|| receive(&listener, 2));
            let how = Sending { streams: 2, write: 256 << 10, zerocopy: true, wait: WAIT };
            let sent = send(addr, Hello { session: 8, streams: 2, index: 0 }, how, bytes).unwrap();
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

    #[test]
    fn session_ids_are_random_not_made_from_the_pid() {
        let pid = u64::from(std::process::id());
        let ids: Vec<u64> = (0..2).map(|_| new_session().unwrap()).collect();
        // Ids from a counter or a clock differ in a few low bits; random ones in about 32
        // (fewer than 8 happens by chance once in 2^30 runs).
        assert!((ids[0] ^ ids[1]).count_ones() >= 8, "{ids:x?}");
        for id in ids {
            // The old ids were pid << 32 | rank << 16 | round (by chance once in 2^32 runs).
            assert_ne!(id >> 32, pid, "{id:#x}");
        }
    }
}
