//! Client to server, with no MPI on the server: `net --serve` takes TCP streams from clients
//! (a storage server, a gateway, any host), reads and discards them, and logs each client in
//! one line; `net --to HOST` sends from one client, or from every rank of an MPI launch at
//! once (N clients to one server).

use super::tcp::{self, Hello, NetError};
use crate::units::{gb_per_s, mib_per_s, rate};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// The port `--serve` and `--to` use unless told.
pub const DEFAULT_PORT: u16 = 5301;

/// Streams the server reads at once (each with its read buffer: 256 MiB in all).
const MAX_STREAMS: usize = 256;

/// How long a new connection may take to say hello.
const HELLO_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Server {
    /// Where to listen (only where told: loopback unless `--bind`).
    pub bind: IpAddr,
    /// The port.
    pub port: u16,
    /// End after the first client's session.
    pub once: bool,
    /// Clients served at once; more are turned away.
    pub max_clients: usize,
}

/// One client's session: its streams as they end.
struct Session {
    peer: IpAddr,
    streams: u16,
    ended: u16,
    /// Streams admitted and not ended yet.
    open: u16,
    bytes: u64,
    start: Instant,
    /// When a stream of it last began or ended.
    last: Instant,
}

impl Session {
    /// A session none of whose streams is open, quiet for longer than a hello may take: its
    /// client is gone without sending the rest.
    fn abandoned(&self) -> bool {
        self.open == 0 && self.last.elapsed() > HELLO_WAIT
    }
}

/// What a stream's thread reports.
enum Event {
    Ended { hello: Hello, peer: SocketAddr, bytes: u64 },
    Failed(Option<Hello>, NetError),
}

/// Serves until killed, or until the first session ends with `once`. `log` gets a line per
/// client (and one when listening).
pub fn serve(server: &Server, log: impl Fn(&str)) -> Result<(), NetError> {
    let listener = TcpListener::bind((server.bind, server.port)).map_err(NetError::Listen)?;
    let at = listener.local_addr().map_err(NetError::Listen)?;
    log(&format!("listening on {at}; at most {} clients at once", server.max_clients));
    let sessions: Arc<Mutex<HashMap<u64, Session>>> = Arc::default();
    let (tx, rx) = mpsc::channel::<Event>();
    let accepting = {
        let sessions = sessions.clone();
        let max = server.max_clients.max(1);
        std::thread::spawn(move || -> Result<(), NetError> {
            let open = Arc::new(AtomicUsize::new(0));
            for conn in listener.incoming() {
                let conn = conn.map_err(NetError::Listen)?;
                // Each stream holds a read buffer: past the bound, a connection is closed
                // unread (its client sees the connection break, and says so).
                if open.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
                    open.fetch_sub(1, Ordering::SeqCst);
                    continue;
                }
                let (sessions, tx, open) = (sessions.clone(), tx.clone(), open.clone());
                std::thread::spawn(move || {
                    take(conn, &sessions, max, &tx);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
            Ok(())
        })
    };
    for event in rx {
        match event {
            Event::Ended { hello, peer, bytes } => {
                let mut all = sessions.lock().unwrap_or_else(|p| p.into_inner());
                let Some(s) = all.get_mut(&hello.session) else { continue };
                s.ended += 1;
                s.open = s.open.saturating_sub(1);
                s.last = Instant::now();
                s.bytes += bytes;
                if s.ended < s.streams {
                    continue;
                }
                let s = all.remove(&hello.session).expect("present above");
                let nanos = s.start.elapsed().as_nanos() as u64;
                let bw = rate(s.bytes, nanos).unwrap_or(0.0);
                log(&format!(
                    "client {} ({}): {} streams, {} bytes in {:.3} s: {:.1} MiB/s ({:.2} GB/s)",
                    s.peer,
                    peer,
                    s.streams,
                    s.bytes,
                    nanos as f64 / 1e9,
                    mib_per_s(bw),
                    gb_per_s(bw)
                ));
                if server.once {
                    return Ok(());
                }
            }
            Event::Failed(hello, e) => {
                // The rest of a broken session's streams will not come: its place is free.
                if let Some(h) = hello {
                    sessions.lock().unwrap_or_else(|p| p.into_inner()).remove(&h.session);
                }
                log(&format!("client dropped: {e}"))
            }
        }
        if accepting.is_finished() {
            break;
        }
    }
    accepting.join().unwrap_or(Ok(()))
}

/// Takes one connection: counts it into its session (turned away when the server is full),
/// then reads it to its end.
fn take(conn: TcpStream, sessions: &Mutex<HashMap<u64, Session>>, max: usize, tx: &mpsc::Sender<Event>) {
    let peer = conn.peer_addr().unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    // A connection that never says hello must not hold its thread for ever.
    let _ = conn.set_read_timeout(Some(HELLO_WAIT));
    let seen = std::cell::Cell::new(None);
    let admitted = |hello: &Hello| {
        seen.set(Some(*hello));
        let mut all = sessions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = all.get_mut(&hello.session) {
            s.open += 1;
            s.last = Instant::now();
            return true;
        }
        if all.len() >= max {
            all.retain(|_, s| !s.abandoned());
        }
        if all.len() >= max {
            return false;
        }
        let now = Instant::now();
        all.insert(
            hello.session,
            Session {
                peer: peer.ip(),
                streams: hello.streams.max(1),
                ended: 0,
                open: 1,
                bytes: 0,
                start: now,
                last: now,
            },
        );
        true
    };
    let event = match tcp::receive_admitted(conn, admitted) {
        Ok((hello, bytes)) => Event::Ended { hello, peer, bytes },
        Err(e) => Event::Failed(seen.get(), e),
    };
    let _ = tx.send(event);
}

/// `HOST[:PORT]` as an address, the port defaulting to [`DEFAULT_PORT`].
pub fn parse_to(to: &str) -> Result<SocketAddr, String> {
    let with_port = if to.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) && !to.ends_with(']') {
        to.to_string()
    } else {
        format!("{to}:{DEFAULT_PORT}")
    };
    std::net::ToSocketAddrs::to_socket_addrs(&with_port)
        .map_err(|e| format!("cannot resolve {to}: {e}"))?
        .next()
        .ok_or_else(|| format!("{to} resolves to no address"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    type Log = Arc<Mutex<Vec<String>>>;

    /// A server on a free loopback port, in a thread: its address, its log and its end.
    fn start(once: bool, max_clients: usize) -> (SocketAddr, Log, std::thread::JoinHandle<Result<(), NetError>>) {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = Server { bind: IpAddr::from([127, 0, 0, 1]), port, once, max_clients };
        let lines: Log = Arc::default();
        let log = {
            let lines = lines.clone();
            move |l: &str| lines.lock().unwrap().push(l.to_string())
        };
        let serving = std::thread::spawn(move || serve(&server, log));
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        // Listening once a connection goes through (the probe is not a client: no hello).
        while TcpStream::connect(addr).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        (addr, lines, serving)
    }

    fn client(addr: SocketAddr, session: u64, streams: usize, bytes: u64) -> Result<tcp::Sent, NetError> {
        tcp::send(addr, session, tcp::Sending { streams, write: 1 << 16, zerocopy: false }, bytes)
    }

    #[test]
    fn a_server_counts_each_clients_streams_and_logs_each_client() {
        let (addr, lines, serving) = start(true, 1);
        assert_eq!(client(addr, 1, 3, 5 << 20).unwrap().bytes, 5 << 20);
        serving.join().unwrap().unwrap();
        let lines = lines.lock().unwrap();
        assert!(lines[0].starts_with("listening on 127.0.0.1:"), "{lines:?}");
        assert!(lines.last().unwrap().contains("3 streams, 5242880 bytes"), "{lines:?}");
    }

    #[test]
    fn a_client_whose_stream_breaks_frees_its_place() {
        use std::os::fd::AsRawFd;
        let (addr, lines, serving) = start(true, 1);
        let mut broken = TcpStream::connect(addr).unwrap();
        // One stream of two, some bytes, then a reset (SO_LINGER 0): the session breaks.
        broken.write_all(&Hello { session: 77, streams: 2, index: 0 }.encode()).unwrap();
        broken.write_all(&[1u8; 4096]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(client(addr, 78, 1, 1 << 20).is_err(), "the broken client holds the one place until it breaks");
        let linger = libc::linger { l_onoff: 1, l_linger: 0 };
        // SAFETY: setsockopt reads one linger from a valid pointer.
        unsafe {
            libc::setsockopt(
                broken.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                &linger as *const _ as *const libc::c_void,
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            );
        }
        drop(broken);
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let sent = loop {
            match client(addr, 78, 1, 1 << 20) {
                Ok(sent) => break sent,
                Err(e) if Instant::now() > deadline => panic!("never admitted: {e}"),
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        };
        assert_eq!(sent.bytes, 1 << 20, "the one place was freed for the next client");
        serving.join().unwrap().unwrap();
        let lines = lines.lock().unwrap();
        assert!(lines.last().unwrap().contains("1 streams, 1048576 bytes"), "{lines:?}");
    }

    #[test]
    fn a_client_past_max_clients_is_turned_away() {
        // Serves until the test process ends.
        let (addr, _, _) = start(false, 1);
        let mut first = TcpStream::connect(addr).unwrap();
        // The first client holds the one place: one of its two streams is open.
        first.write_all(&Hello { session: 1, streams: 2, index: 0 }.encode()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let second = client(addr, 2, 1, 1 << 20);
        assert!(matches!(second, Err(NetError::Lost { .. })), "{second:?}");
    }

    #[test]
    fn to_addresses_take_the_default_port() {
        assert_eq!(parse_to("127.0.0.1").unwrap().port(), DEFAULT_PORT);
        assert_eq!(parse_to("127.0.0.1:9").unwrap().port(), 9);
        assert!(parse_to("no.such.host.invalid").is_err());
    }
}
