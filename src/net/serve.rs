//! Client to server, with no MPI on the server: `net --serve` takes TCP streams from clients
//! (a storage server, a gateway, any host), reads and discards them, and logs each client in
//! one line; `net --to HOST` sends from one client, or from every rank of an MPI launch at
//! once (N clients to one server).
//!
//! A client is one session: one `net --to` run, all its processes and rounds, under one
//! random id, ended by its lead's bye. The server runs as root on shared machines, so no
//! client may hold it: at most `max_clients` sessions at once, each with at most the streams
//! its hello declared open at once and no more than its share of the server's streams; a
//! connection says its hello within [`Limits::hello`], a stream that moves nothing for
//! [`Limits::idle`] is dropped (so is a session with no stream open for as long), and no
//! session lasts past [`Limits::session`].

use super::tcp::{self, Hello, NetError, Patience};
use crate::units::{gb_per_s, mib_per_s, rate};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The port `--serve` and `--to` use unless told.
pub const DEFAULT_PORT: u16 = 5301;

/// Streams the server reads at once (each with its read buffer: 256 MiB in all).
pub const MAX_STREAMS: usize = 256;

/// How long the server waits on its clients.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From a connection to the end of its hello.
    pub hello: Duration,
    /// With no byte on a stream, or no stream open in a session.
    pub idle: Duration,
    /// A session's whole life, from its first hello.
    pub session: Duration,
}

impl Default for Limits {
    /// A hello follows its connection at once; 30 s without a byte is a stopped client, not a
    /// slow one; an hour holds the default four rounds of 256 MiB per process many times over.
    fn default() -> Self {
        Limits { hello: Duration::from_secs(5), idle: Duration::from_secs(30), session: Duration::from_secs(3600) }
    }
}

/// How the server runs.
#[derive(Debug, Clone)]
pub struct Server {
    /// Where to listen (only where told: loopback unless `--bind`).
    pub bind: IpAddr,
    /// The port (0: any free one, said in the first line).
    pub port: u16,
    /// End after the first client's session.
    pub once: bool,
    /// Clients (sessions) served at once; more are turned away.
    pub max_clients: usize,
    /// How long it waits on clients.
    pub limits: Limits,
}

impl Server {
    /// The streams one session may have open at once: an equal share of the server's, so
    /// that no client takes the places of the others.
    pub fn share(&self) -> usize {
        (MAX_STREAMS / self.max_clients.max(1)).max(1)
    }
}

/// One client's session.
struct Session {
    /// The stream that began it; its other streams and its bye come from the same host.
    first: SocketAddr,
    /// Streams it may have open at once (what its hellos declare).
    streams: u16,
    /// Streams admitted and not ended yet.
    open: u16,
    /// Streams ended.
    ended: u64,
    bytes: u64,
    start: Instant,
    /// When a stream of it last began or ended.
    last: Instant,
}

impl Session {
    /// Why the session must give up its place, if it must, when none of its streams is open
    /// (an open stream ends itself, and its session with it, when quiet or past the time):
    /// past its time, or quiet (its client is gone without its bye).
    fn expired(&self, limits: &Limits) -> Option<NetError> {
        if self.open > 0 {
            None
        } else if self.start.elapsed() > limits.session {
            Some(NetError::Overtime { addr: self.first, limit: limits.session })
        } else {
            (self.last.elapsed() > limits.idle).then_some(NetError::Idle {
                addr: self.first,
                got: self.bytes,
                wait: limits.idle,
            })
        }
    }

    /// The line the server logs at the session's bye.
    fn line(&self) -> String {
        let nanos = (self.last - self.start).as_nanos() as u64;
        let bw = rate(self.bytes, nanos).unwrap_or(0.0);
        format!(
            "client {}: {} streams ({} at once), {} bytes in {:.3} s: {:.1} MiB/s ({:.2} GB/s)",
            self.first,
            self.ended,
            self.streams,
            self.bytes,
            nanos as f64 / 1e9,
            mib_per_s(bw),
            gb_per_s(bw)
        )
    }
}

/// The sessions being served, by id.
type Book = Mutex<HashMap<u64, Session>>;

fn lock(book: &Book) -> MutexGuard<'_, HashMap<u64, Session>> {
    book.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a connection's thread tells the serving thread, which alone logs.
enum Event {
    Began { first: SocketAddr, streams: u16 },
    Ended(Session),
    Dropped(NetError),
}

/// Serves until killed, or until the first session ends with `once`. `log` gets a line per
/// client (and one when listening).
pub fn serve(server: &Server, log: impl Fn(&str)) -> Result<(), NetError> {
    let listener = TcpListener::bind((server.bind, server.port)).map_err(NetError::Listen)?;
    let at = listener.local_addr().map_err(NetError::Listen)?;
    log(&format!("listening on {at}; at most {} clients at once, {} streams each", server.max_clients, server.share()));
    let book: Arc<Book> = Arc::default();
    let (tx, rx) = mpsc::channel::<Event>();
    let accepting = {
        let (book, server) = (book.clone(), server.clone());
        std::thread::spawn(move || accept(&listener, &book, &server, &tx))
    };
    // Often enough that a quiet session's place is free soon after its time is up.
    let tick = (server.limits.idle / 4).clamp(Duration::from_millis(5), Duration::from_secs(1));
    loop {
        match rx.recv_timeout(tick) {
            Ok(Event::Began { first, streams }) => {
                log(&format!("client {first}: a session of {streams} streams at once"))
            }
            Ok(Event::Ended(s)) => {
                log(&s.line());
                if server.once {
                    return Ok(());
                }
            }
            Ok(Event::Dropped(e)) => log(&format!("client dropped: {e}")),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let mut all = lock(&book);
        all.retain(|_, s| s.expired(&server.limits).map(|e| log(&format!("client dropped: {e}"))).is_none());
        drop(all);
        if accepting.is_finished() {
            break;
        }
    }
    accepting.join().unwrap_or(Ok(()))
}

/// Takes connections, each on a thread of its own, while fewer than [`MAX_STREAMS`] are open.
fn accept(listener: &TcpListener, book: &Arc<Book>, server: &Server, tx: &mpsc::Sender<Event>) -> Result<(), NetError> {
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let (conn, peer) = match listener.accept() {
            Ok(taken) => taken,
            // A client that resets before it is taken is its own loss, not the server's.
            Err(e) if matches!(e.kind(), std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::Interrupted) => {
                continue
            }
            Err(e) => return Err(NetError::Listen(e)),
        };
        // Each stream holds a read buffer: past the bound, a connection is closed unread (its
        // client sees the connection break, and says so).
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_STREAMS {
            open.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (book, server, tx, open) = (book.clone(), server.clone(), tx.clone(), open.clone());
        std::thread::spawn(move || {
            if let Err(e) = take(conn, peer, &book, &server, &tx) {
                let _ = tx.send(Event::Dropped(e));
            }
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// Takes one connection: its hello, then the stream it begins or the session it ends.
fn take(
    mut conn: TcpStream,
    peer: SocketAddr,
    book: &Book,
    server: &Server,
    tx: &mpsc::Sender<Event>,
) -> Result<(), NetError> {
    let hello = tcp::read_hello(&mut conn, peer, server.limits.hello)?;
    if hello.is_bye() {
        let mut all = lock(book);
        if all.get(&hello.session).is_none_or(|s| s.first.ip() != peer.ip()) {
            return Err(NetError::Refused { addr: peer, why: "it ends a session this server does not hold".into() });
        }
        let s = all.remove(&hello.session).expect("held above");
        drop(all);
        // Answered before the line: with `once` the server ends at that line.
        tcp::answer(&mut conn, peer, s.bytes)?;
        let _ = tx.send(Event::Ended(s));
        return Ok(());
    }
    let patience = admit(book, server, peer, &hello, tx)?;
    let read = tcp::drain(&mut conn, peer, Some(patience));
    let mut all = lock(book);
    let got = match read {
        Ok(got) => got,
        Err(e) => {
            // The rest of a broken session's streams will fail: its place is free.
            all.remove(&hello.session);
            return Err(e);
        }
    };
    if let Some(s) = all.get_mut(&hello.session) {
        s.open -= 1;
        s.ended += 1;
        s.bytes += got;
        s.last = Instant::now();
    }
    drop(all);
    // Counted before the answer, so that the session's bye (sent after every answer) finds
    // each of its streams counted.
    tcp::answer(&mut conn, peer, got)
}

/// Counts a stream into its session (beginning it when new), or says why not. Returns how
/// long the stream may be read.
fn admit(
    book: &Book,
    server: &Server,
    peer: SocketAddr,
    hello: &Hello,
    tx: &mpsc::Sender<Event>,
) -> Result<Patience, NetError> {
    let refuse = |why: String| Err(NetError::Refused { addr: peer, why });
    let mut all = lock(book);
    if !all.contains_key(&hello.session) {
        if usize::from(hello.streams) > server.share() {
            return refuse(format!(
                "it asks for {} streams at once, over the {} each client may have ({MAX_STREAMS} / --max-clients {})",
                hello.streams,
                server.share(),
                server.max_clients
            ));
        }
        if all.len() >= server.max_clients {
            return refuse("as many clients as --max-clients allows are being served".into());
        }
        let now = Instant::now();
        let s = Session { first: peer, streams: hello.streams, open: 0, ended: 0, bytes: 0, start: now, last: now };
        all.insert(hello.session, s);
        let _ = tx.send(Event::Began { first: peer, streams: hello.streams });
    }
    let s = all.get_mut(&hello.session).expect("inserted above");
    if s.first.ip() != peer.ip() {
        return refuse(format!("its session began from {}", s.first.ip()));
    }
    if hello.streams != s.streams {
        return refuse(format!("it declares {} streams at once, its session {}", hello.streams, s.streams));
    }
    if s.open >= s.streams {
        return refuse(format!("its session already has the {} streams it declared open", s.streams));
    }
    s.open += 1;
    s.last = Instant::now();
    let limits = server.limits;
    Ok(Patience { idle: limits.idle, until: s.start + limits.session, limit: limits.session })
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
    use std::io::{Read, Write};

    type Log = Arc<Mutex<Vec<String>>>;

    /// Long enough for any line to come on a loaded machine; a test that waits this long
    /// has failed.
    const PATIENCE: Duration = Duration::from_secs(10);

    fn server(once: bool, max_clients: usize, limits: Limits) -> Server {
        Server { bind: IpAddr::from([127, 0, 0, 1]), port: 0, once, max_clients, limits }
    }

    /// Starts `server` in a thread: its address, its log and its end, once it listens.
    fn start(server: Server) -> (SocketAddr, Log, std::thread::JoinHandle<Result<(), NetError>>) {
        let lines: Log = Arc::default();
        let log = {
            let lines = lines.clone();
            move |l: &str| lines.lock().unwrap().push(l.to_string())
        };
        let serving = std::thread::spawn(move || serve(&server, log));
        let first = wait_for(&lines, "listening on 127.0.0.1:");
        let addr = first["listening on ".len()..].split(';').next().unwrap().parse().unwrap();
        (addr, lines, serving)
    }

    /// The first line of the log holding `needle`, once there (a test failure after
    /// [`PATIENCE`]).
    fn wait_for(lines: &Log, needle: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(l) = lines.lock().unwrap().iter().find(|l| l.contains(needle)) {
                return l.clone();
            }
            assert!(Instant::now() < deadline, "no line with '{needle}' in {:?}", lines.lock().unwrap());
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// What `net --to` does: one session of `rounds` rounds of `streams` streams, then its bye.
    fn client(addr: SocketAddr, rounds: usize, streams: usize, bytes: u64) -> Result<u64, NetError> {
        let session = tcp::new_session().unwrap();
        let how = tcp::Sending { streams, write: 1 << 16, zerocopy: false, wait: PATIENCE };
        let hello = Hello { session, streams: streams as u16, index: 0 };
        let mut sent = 0;
        for _ in 0..rounds {
            sent += tcp::send(addr, hello, how, bytes)?.bytes;
        }
        tcp::bye(addr, session, PATIENCE).map(|_| sent)
    }

    /// A connection that has said `hello` (when given) and sent `bytes`, then waits.
    fn connection(addr: SocketAddr, hello: Option<Hello>, bytes: usize) -> TcpStream {
        let mut conn = TcpStream::connect(addr).unwrap();
        if let Some(h) = hello {
            conn.write_all(&h.encode()).unwrap();
        }
        conn.write_all(&vec![1u8; bytes]).unwrap();
        conn
    }

    /// Whether the server has closed `conn` (waiting up to [`PATIENCE`] for it to).
    fn closed_by_server(conn: &mut TcpStream) -> bool {
        conn.set_read_timeout(Some(PATIENCE)).unwrap();
        match conn.read(&mut [0u8; 64]) {
            Ok(n) => n == 0,
            Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
        }
    }

    /// Whether `conn` is still open, asked now without waiting.
    fn open_now(conn: &TcpStream) -> bool {
        conn.set_nonblocking(true).unwrap();
        let open = matches!((&*conn).read(&mut [0u8; 64]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
        conn.set_nonblocking(false).unwrap();
        open
    }

    #[test]
    fn a_server_counts_a_whole_session_and_logs_it_at_the_clients_bye() {
        let (addr, lines, serving) = start(server(true, 1, Limits::default()));
        // Two rounds (a warm-up and one repetition) are one session: --once serves both.
        assert_eq!(client(addr, 2, 3, 5 << 20).unwrap(), 10 << 20);
        serving.join().unwrap().unwrap();
        let lines = lines.lock().unwrap();
        assert!(lines[1].contains(": a session of 3 streams at once"), "{lines:?}");
        assert!(lines.last().unwrap().contains("6 streams (3 at once), 10485760 bytes"), "{lines:?}");
    }

    #[test]
    fn a_client_whose_stream_breaks_frees_its_place_and_is_named_by_its_address() {
        use std::os::fd::AsRawFd;
        let (addr, lines, serving) = start(server(true, 1, Limits::default()));
        // One stream of two, some bytes, then a reset (SO_LINGER 0): the session breaks.
        let broken = connection(addr, Some(Hello { session: 77, streams: 2, index: 0 }), 4096);
        let named = broken.local_addr().unwrap().to_string();
        wait_for(&lines, &format!("client {named}: a session of 2 streams"));
        assert!(client(addr, 1, 1, 1 << 20).is_err(), "the broken client holds the one place until it breaks");
        crate::sys::net::reset_on_close(broken.as_raw_fd());
        drop(broken);
        // Logged by its real address (a reset peer has none left to ask for), once its place
        // is free.
        wait_for(&lines, &format!("client dropped: the connection to {named} broke after"));
        assert_eq!(client(addr, 1, 1, 1 << 20).unwrap(), 1 << 20, "the one place was freed for the next client");
        serving.join().unwrap().unwrap();
        let lines = lines.lock().unwrap();
        assert!(lines.last().unwrap().contains("1 streams (1 at once), 1048576 bytes"), "{lines:?}");
    }

    #[test]
    fn a_client_past_max_clients_is_turned_away() {
        // Serves until the test process ends.
        let (addr, lines, _) = start(server(false, 1, Limits::default()));
        // The first client holds the one place: one of its two streams is open.
        let first = connection(addr, Some(Hello { session: 1, streams: 2, index: 0 }), 0);
        wait_for(&lines, &format!("client {}: a session", first.local_addr().unwrap()));
        let second = client(addr, 1, 1, 1 << 20);
        assert!(matches!(second, Err(NetError::Lost { .. })), "{second:?}");
        wait_for(&lines, "as many clients as --max-clients allows are being served");
    }

    #[test]
    fn idle_connections_hold_nothing_beyond_the_timeouts() {
        let limits =
            Limits { hello: Duration::from_millis(100), idle: Duration::from_millis(200), session: PATIENCE * 6 };
        let (addr, lines, _) = start(server(false, 2, limits));
        // Every way of holding a place without moving bytes: no hello; a stream gone quiet;
        // a session whose streams have ended and that never says its bye.
        let mut silent = connection(addr, None, 0);
        let mut quiet = connection(addr, Some(Hello { session: 1, streams: 1, index: 0 }), 4096);
        let mut ended = connection(addr, Some(Hello { session: 2, streams: 1, index: 0 }), 4096);
        ended.shutdown(std::net::Shutdown::Write).unwrap();
        let mut count = [0u8; 8];
        ended.read_exact(&mut count).unwrap();
        assert_eq!(u64::from_le_bytes(count), 4096);
        let name = |c: &TcpStream| c.local_addr().unwrap().to_string();
        wait_for(&lines, &format!("client dropped: {} sent no hello within 0.1 s", name(&silent)));
        wait_for(&lines, &format!("client dropped: {} sent nothing for 0.2 s after 4096 bytes", name(&quiet)));
        wait_for(&lines, &format!("client dropped: {} sent nothing for 0.2 s after 4096 bytes", name(&ended)));
        assert!(closed_by_server(&mut silent) && closed_by_server(&mut quiet));
        // Both places are free: two new sessions begin at once.
        let again: Vec<TcpStream> =
            (3..5).map(|s| connection(addr, Some(Hello { session: s, streams: 1, index: 0 }), 0)).collect();
        for c in &again {
            wait_for(&lines, &format!("client {}: a session", name(c)));
        }
    }

    #[test]
    fn a_session_that_drips_bytes_is_cut_at_its_time_limit() {
        let limits = Limits { hello: PATIENCE, idle: PATIENCE, session: Duration::from_millis(300) };
        let (addr, lines, _) = start(server(false, 1, limits));
        let mut drip = connection(addr, Some(Hello { session: 1, streams: 1, index: 0 }), 1);
        let named = drip.local_addr().unwrap().to_string();
        let deadline = Instant::now() + PATIENCE;
        // A byte every 20 ms is never idle; the writes fail once the server has cut it.
        while drip.write_all(&[1]).is_ok() {
            assert!(Instant::now() < deadline, "still taken after {PATIENCE:?}: {:?}", lines.lock().unwrap());
            std::thread::sleep(Duration::from_millis(20));
        }
        wait_for(&lines, &format!("client dropped: {named}'s session ran past the 0.3 s a session may last"));
    }

    #[test]
    fn one_session_cannot_exceed_its_share() {
        let (addr, lines, _) = start(server(false, 4, Limits::default()));
        // 4 clients at once: 64 streams each, and no more even for the only client.
        let mut greedy = connection(addr, Some(Hello { session: 1, streams: 65, index: 0 }), 0);
        assert!(closed_by_server(&mut greedy));
        wait_for(&lines, "it asks for 65 streams at once, over the 64 each client may have (256 / --max-clients 4)");
        // A session that declared 2 streams opens 3: the last the server takes is turned away.
        let mut three: Vec<TcpStream> =
            (0..3).map(|i| connection(addr, Some(Hello { session: 2, streams: 2, index: i }), 0)).collect();
        wait_for(&lines, "its session already has the 2 streams it declared open");
        let deadline = Instant::now() + PATIENCE;
        while three.iter().all(open_now) {
            assert!(Instant::now() < deadline, "none of the three closed");
            std::thread::sleep(Duration::from_millis(5));
        }
        three.retain(open_now);
        assert_eq!(three.len(), 2, "the two it declared stay open");
        let refusals = lines.lock().unwrap().iter().filter(|l| l.contains("already has the 2 streams")).count();
        assert_eq!(refusals, 1, "{:?}", lines.lock().unwrap());
    }

    #[test]
    fn to_addresses_take_the_default_port() {
        assert_eq!(parse_to("127.0.0.1").unwrap().port(), DEFAULT_PORT);
        assert_eq!(parse_to("127.0.0.1:9").unwrap().port(), 9);
        assert!(parse_to("no.such.host.invalid").is_err());
    }
}
