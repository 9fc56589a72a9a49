//! Client to server, with no MPI on the server: `net --serve` takes TCP streams from clients
//! (a storage server, a gateway, any host), reads and discards them, and logs each client in
//! one line; `net --to HOST` sends from one client, or from every rank of an MPI launch at
//! once (N clients to one server).

use super::tcp::{self, Hello, NetError};
use crate::units::{gb_per_s, mib_per_s, rate};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// The port `--serve` and `--to` use unless told.
pub const DEFAULT_PORT: u16 = 5301;

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
    bytes: u64,
    start: Instant,
}

/// What a stream's thread reports.
enum Event {
    Ended { hello: Hello, peer: SocketAddr, bytes: u64 },
    Failed(NetError),
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
            for conn in listener.incoming() {
                let conn = conn.map_err(NetError::Listen)?;
                let (sessions, tx) = (sessions.clone(), tx.clone());
                std::thread::spawn(move || take(conn, &sessions, max, &tx));
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
            Event::Failed(e) => log(&format!("client dropped: {e}")),
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
    let admitted = |hello: &Hello| {
        let mut all = sessions.lock().unwrap_or_else(|p| p.into_inner());
        if all.contains_key(&hello.session) {
            return true;
        }
        if all.len() >= max {
            return false;
        }
        all.insert(
            hello.session,
            Session { peer: peer.ip(), streams: hello.streams.max(1), ended: 0, bytes: 0, start: Instant::now() },
        );
        true
    };
    let event = match tcp::receive_admitted(conn, admitted) {
        Ok((hello, bytes)) => Event::Ended { hello, peer, bytes },
        Err(e) => Event::Failed(e),
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

    #[test]
    fn a_server_counts_each_clients_streams_and_turns_away_the_client_too_many() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let server = Server { bind: IpAddr::from([127, 0, 0, 1]), port, once: true, max_clients: 1 };
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = {
            let lines = lines.clone();
            move |l: &str| lines.lock().unwrap().push(l.to_string())
        };
        let serving = std::thread::spawn(move || serve(&server, log));
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let mut sent = None;
        for _ in 0..100 {
            match tcp::send(addr, 1, tcp::Sending { streams: 3, write: 1 << 16, zerocopy: false }, 5 << 20) {
                Ok(n) => {
                    sent = Some(n.bytes);
                    break;
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
        assert_eq!(sent, Some(5 << 20));
        serving.join().unwrap().unwrap();
        let lines = lines.lock().unwrap();
        assert!(lines[0].starts_with("listening on 127.0.0.1:"), "{lines:?}");
        assert!(lines.last().unwrap().contains("3 streams, 5242880 bytes"), "{lines:?}");
        assert_eq!(parse_to("127.0.0.1").unwrap().port(), DEFAULT_PORT);
        assert_eq!(parse_to("127.0.0.1:9").unwrap().port(), 9);
        assert!(parse_to("no.such.host.invalid").is_err());
    }
}
