//! End-to-end tests of `iosurvey net --serve` and `net --to` on loopback: what a client
//! stores and prints, and that neither end waits for ever on the other.

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longer than anything here takes on a loaded machine: a command still running after it has
/// hung, and the test fails.
const HUNG: Duration = Duration::from_secs(60);

/// A running `iosurvey net --serve`, its standard error read line by line as it comes.
struct Server {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    /// Where it listens, from its first line.
    to: String,
}

impl Server {
    /// Starts `net --serve` on a port the system picks, with more arguments; returns once it
    /// listens.
    fn start(more: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
            .args(["net", "--serve", "--port", "0"])
            .args(more)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || stderr.lines().map_while(Result::ok).try_for_each(|l| tx.send(l)));
        let mut server = Server { child, lines, seen: Vec::new(), to: String::new() };
        let first = server.wait_line("listening on 127.0.0.1:");
        server.to = first.split("listening on ").nth(1).unwrap().split(';').next().unwrap().to_string();
        server
    }

    /// The first line holding `needle`, once the server has said it.
    fn wait_line(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + HUNG;
        loop {
            if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
                return l.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => self.seen.push(l),
                Err(_) => panic!("the server never said '{needle}': {:?}", self.seen),
            }
        }
    }

    /// Waits for the server to end by itself: its exit code and every line it said.
    fn finish(mut self) -> (i32, Vec<String>) {
        let code = exit_within(&mut self.child);
        self.seen.extend(self.lines.iter());
        (code, std::mem::take(&mut self.seen))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The exit code of `child`, which must end within [`HUNG`] (killed and failed if not).
fn exit_within(child: &mut Child) -> i32 {
    let deadline = Instant::now() + HUNG;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {HUNG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs the binary with `args`; it must end within [`HUNG`].
fn iosurvey_within(args: &[&str]) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read while it runs, so that a full pipe never holds it.
    let mut pipes = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reading = std::thread::spawn(move || {
        let (mut out, mut err) = (String::new(), String::new());
        let _ = pipes.0.read_to_string(&mut out);
        let _ = pipes.1.read_to_string(&mut err);
        (out, err)
    });
    let code = exit_within(&mut child);
    let (stdout, stderr) = reading.join().unwrap();
    Out { code, stdout, stderr }
}

/// The net figures a store holds.
fn stored_net(db: &str) -> Vec<Value> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut rows = conn.prepare("SELECT record_json FROM net_runs").unwrap();
    let json = rows.query_map([], |r| r.get::<_, String>(0)).unwrap();
    json.map(|j| serde_json::from_str(&j.unwrap()).unwrap()).collect()
}

#[test]
fn once_serves_a_whole_client_run_with_its_repetitions_and_ends() {
    let server = Server::start(&["--once"]);
    let bed = Bed::new();
    // The default repetitions: a warm-up and three timed rounds, each its own connections.
    let out = iosurvey_within(&["net", "--to", &server.to, "--streams", "3", "--size", "8m", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out.stdout.trim();
    assert!(line.starts_with("tcp 1-to-1 streams=3 ") && line.contains(&format!("-> {}: ", server.to)), "{line}");
    assert!(line.ends_with(" GB/s)") && !line.contains(','), "fixed shape, no thousands separators: {line}");
    let (code, lines) = server.finish();
    assert_eq!(code, 0, "--once ends after the client's run: {lines:?}");
    // One session: 4 rounds of 3 streams, 8 MiB a round.
    assert!(lines.last().unwrap().contains(": 12 streams (3 at once), 33554432 bytes in "), "{lines:?}");
    let stored = stored_net(&bed.db);
    assert_eq!(stored.len(), 1);
    assert_eq!((stored[0]["mode"].as_str(), stored[0]["streams"].as_u64()), (Some("tcp"), Some(3)));
    assert_eq!(stored[0]["samples"].as_array().unwrap().len(), 3, "the warm-up is not a sample");
}

#[test]
fn settings_that_measure_nothing_are_refused_before_anything_runs() {
    let bed = Bed::new();
    let to = ["net", "--to", "127.0.0.1:1", "--db", &bed.db];
    let cases: [(&[&str], &[&str]); 7] = [
        (&["--transfer", "0"], &["--transfer 0: a write of no bytes", "hint: give 1 byte or more"]),
        (&["--size", "0"], &["--size 0: ", "no bandwidth"]),
        (&["--repetitions", "0"], &["--repetitions 0: ", "--repetitions 1 or more"]),
        (&["--streams", "0"], &["--streams 0: "]),
        (&["--timeout", "0s"], &["--timeout 0: "]),
        (&["--serve", "--max-clients", "0"], &["--max-clients 0: ", "give --max-clients 1 to 256"]),
        (&["--serve", "--max-clients", "257"], &["--max-clients 257: "]),
    ];
    for (args, needles) in cases {
        let all: Vec<&str> = if args[0] == "--serve" {
            ["net", "--port", "0"].iter().chain(args).copied().collect()
        } else {
            to.iter().chain(args).copied().collect()
        };
        assert_one_line_error(&iosurvey_within(&all), 2, needles);
    }
    assert!(!std::path::Path::new(&bed.db).exists(), "nothing stored, no store made");
}

#[test]
fn a_server_that_stops_answering_ends_the_client_within_its_timeout() {
    // Accepted by the kernel and never read: the writes stop once the buffers are full.
    let deaf = TcpListener::bind("127.0.0.1:0").unwrap();
    let bed = Bed::new();
    let to = deaf.local_addr().unwrap().to_string();
    let out = iosurvey_within(&["net", "--to", &to, "--size", "1g", "--timeout", "1s", "--db", &bed.db]);
    assert_one_line_error(&out, 1, &[&format!("{to} stopped answering: nothing moved for 1.0 s after "), "--serve"]);
    // Read to the end, and never answered with the count.
    let mute = TcpListener::bind("127.0.0.1:0").unwrap();
    let to = mute.local_addr().unwrap().to_string();
    let (held, holding) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut conn, _) = mute.accept().unwrap();
        let _ = std::io::copy(&mut conn, &mut std::io::sink());
        let _ = held.send(conn);
    });
    let out = iosurvey_within(&["net", "--to", &to, "--size", "1m", "--timeout", "1s", "--db", &bed.db]);
    assert_one_line_error(&out, 1, &[&format!("{to} stopped answering: nothing moved for 1.0 s after 1048576 bytes")]);
    assert!(holding.recv_timeout(HUNG).is_ok(), "the stream reached its end");
    assert!(stored_net(&bed.db).is_empty(), "no figure stored");
}

#[test]
fn a_server_that_vanishes_mid_run_ends_the_client_with_one_line() {
    let mut server = Server::start(&[]);
    let bed = Bed::new();
    let mut client = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["net", "--to", &server.to, "--size", "1t", "--db", &bed.db])
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_line(": a session of 1 streams at once");
    drop(server);
    let code = exit_within(&mut client);
    let out = outcome(client.wait_with_output().unwrap());
    assert_one_line_error(&Out { code, ..out }, 1, &["connection to 127.0.0.1", "broke after", "--serve"]);
}

#[test]
fn the_server_listens_only_where_told() {
    let out = iosurvey_within(&["net", "--serve", "--bind", "192.0.2.1", "--port", "0"]);
    assert_one_line_error(&out, 1, &["cannot take connections", "--bind"]);
    let out = iosurvey_within(&["net", "--to", "127.0.0.1:1", "--size", "1m", "--db", &Bed::new().db]);
    assert_one_line_error(&out, 1, &["cannot connect to 127.0.0.1:1"]);
}
