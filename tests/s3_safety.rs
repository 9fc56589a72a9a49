//! Faults of an S3 run against a real server (versitygw, tests/s3bed): a 503 SlowDown, a
//! dropped connection, a server that stops answering, a kill mid-upload. Each fault is made
//! by a small proxy on loopback between iosurvey and the server, which passes every request
//! through except those its rule picks, and answers those 503, drops their connection or
//! never answers. Each run must end in one line, be stored as failed, and leave nothing.

mod common;
#[path = "common/s3.rs"]
mod s3bed;

use common::*;
use iosurvey::s3::Options;
use s3bed::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the proxy does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Passes it to the server and its answer back.
    Pass,
    /// Answers 503 SlowDown itself.
    SlowDown,
    /// Closes the client's connection without an answer.
    Drop,
    /// Never answers (the connection stays open until the client closes it).
    Stall,
}

/// Which fault a request gets: from its method, its target (path and query) and how many
/// requests of that same method and target came before it.
type Rule = dyn Fn(&str, &str, usize) -> Fault + Send + Sync;

/// A proxy in front of a server: its port, and every request it saw ("METHOD TARGET", and
/// " range=bytes=A-B" for a ranged GET).
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start(upstream: u16, rule: impl Fn(&str, &str, usize) -> Fault + Send + Sync + 'static) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let rule: Arc<Rule> = Arc::new(rule);
        let s = seen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (rule, seen) = (rule.clone(), s.clone());
                std::thread::spawn(move || {
                    let _ = serve(client, upstream, &*rule, &seen);
                });
            }
        });
        Proxy { port, seen }
    }

    fn url(&self, prefix: &str) -> String {
        format!("http://127.0.0.1:{}/{BUCKET}/{prefix}", self.port)
    }

    /// How many requests it saw of `method` whose target ends with `end`.
    fn count(&self, method: &str, end: &str) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|r| r.starts_with(&format!("{method} ")) && r.ends_with(end)).count()
    }
}

/// A message's head (through its blank line), or `None` at the end of the connection.
fn read_head(from: &mut impl BufRead) -> std::io::Result<Option<Vec<String>>> {
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if from.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if line == "\r\n" {
            return Ok(Some(lines));
        }
        lines.push(line.trim_end().to_string());
    }
}

fn header<'a>(head: &'a [String], name: &str) -> Option<&'a str> {
    head.iter().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn write_head(to: &mut impl Write, head: &[String]) -> std::io::Result<()> {
    for line in head {
        write!(to, "{line}\r\n")?;
    }
    write!(to, "\r\n")
}

/// Copies a body of a message whose head is `head` (chunked or of a length).
fn copy_body(head: &[String], from: &mut impl BufRead, to: &mut impl Write) -> std::io::Result<()> {
    if header(head, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            from.read_line(&mut size)?;
            to.write_all(size.as_bytes())?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
            if n == 0 {
                // Trailers, to the blank line.
                loop {
                    let mut line = String::new();
                    from.read_line(&mut line)?;
                    to.write_all(line.as_bytes())?;
                    if line == "\r\n" || line.is_empty() {
                        return Ok(());
                    }
                }
            }
            std::io::copy(&mut from.take(n as u64 + 2), to)?;
        }
    }
    let len = header(head, "content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    std::io::copy(&mut from.take(len), to)?;
    Ok(())
}

fn serve(client: TcpStream, upstream: u16, rule: &Rule, seen: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    let mut server: Option<(TcpStream, BufReader<TcpStream>)> = None;
    while let Some(head) = read_head(&mut from_client)? {
        let mut words = head[0].split(' ');
        let (method, target) = (words.next().unwrap_or("").to_string(), words.next().unwrap_or("").to_string());
        let mut body = Vec::new();
        copy_body(&head, &mut from_client, &mut body)?;
        let before = {
            let mut seen = seen.lock().unwrap();
            let range = header(&head, "range").map(|r| format!(" range={r}")).unwrap_or_default();
            let line = format!("{method} {target}{range}");
            let n = seen.iter().filter(|l| **l == line).count();
            seen.push(line);
            n
        };
        match rule(&method, &target, before) {
            Fault::Pass => {
                if server.is_none() {
                    let s = TcpStream::connect(("127.0.0.1", upstream))?;
                    server = Some((s.try_clone()?, BufReader::new(s)));
                }
                let (to_server, from_server) = server.as_mut().unwrap();
                write_head(to_server, &head)?;
                to_server.write_all(&body)?;
                let answer = read_head(from_server)?.ok_or(std::io::ErrorKind::UnexpectedEof)?;
                write_head(&mut to_client, &answer)?;
                let status = answer[0].split(' ').nth(1).unwrap_or("");
                if method != "HEAD" && status != "204" && status != "304" {
                    copy_body(&answer, from_server, &mut to_client)?;
                }
            }
            Fault::SlowDown => {
                let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
                write!(
                    to_client,
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{xml}",
                    xml.len()
                )?;
            }
            Fault::Drop => {
                let _ = to_client.shutdown(Shutdown::Both);
                return Ok(());
            }
            Fault::Stall => {
                // Until the client gives up and closes.
                let _ = std::io::copy(&mut from_client, &mut std::io::sink());
                return Ok(());
            }
        }
        to_client.flush()?;
    }
    Ok(())
}

/// Whether `target` is the PUT of data object `k` of a run (not its holder, not a part).
fn data_object(target: &str, k: u64) -> bool {
    target.contains("/iosurvey-") && target.ends_with(&format!("/{k:06}"))
}

/// A proxy giving every PUT of data object 2 `fault`, and passing the rest.
fn every_put_of_object_2(server: &Server, fault: Fault) -> Proxy {
    Proxy::start(server.port, move |m, t, _| if m == "PUT" && data_object(t, 2) { fault } else { Fault::Pass })
}

/// A run through `proxy` writing 4 objects of 1 MiB, the third of which meets the fault.
fn faulted_run(server: &Server, proxy: &Proxy, db: &str, env: &[(&str, &str)]) -> (Out, Duration) {
    let url = proxy.url("faults");
    let mut cmd = server.command();
    cmd.envs(env.iter().copied());
    let args = ["run", "--s3", &url, "--op", "write", "--block", "1m", "--segments", "4", "--db", db, "-q"];
    let start = Instant::now();
    let out = outcome(cmd.args(args).output().unwrap());
    (out, start.elapsed())
}

/// The run stored in `db`, failed, and nothing of it left in the bucket.
fn assert_failed_and_gone(server: &Server, db: &str, out: &Out, needles: &[&str]) {
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    for n in needles {
        assert!(out.stderr.contains(n), "`{n}` in: {}", out.stderr);
    }
    let ls = server.iosurvey(&["ls", "--json", "--db", db]);
    assert!(ls.stdout.contains("\"failed\""), "{}", ls.stdout);
    let left = server.client("faults").list("faults/").unwrap();
    assert!(left.is_empty(), "the run's objects are removed: {left:?}");
}

#[test]
fn a_slowdown_is_sent_again_after_a_backoff_and_a_request_that_gets_through_counts_as_one() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    // The first two tries of object 2 are throttled, the third passes.
    let proxy = Proxy::start(server.port, |m, t, before| match m == "PUT" && data_object(t, 2) && before < 2 {
        true => Fault::SlowDown,
        false => Fault::Pass,
    });
    let (out, _) = faulted_run(server, &proxy, db, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(proxy.count("PUT", "/000002"), 3, "sent three times");
    assert_eq!(proxy.count("PUT", "/000001"), 1);
    assert!(server.client("faults").list("faults/").unwrap().is_empty());
}

#[test]
fn a_slowdown_past_the_retries_fails_the_run_in_one_line_and_removes_its_objects() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let proxy = every_put_of_object_2(server, Fault::SlowDown);
    let (out, took) = faulted_run(server, &proxy, db, &[]);
    let retries = Options::default().retries as usize;
    assert_failed_and_gone(server, db, &out, &["503 SlowDown", &format!("each of {} tries", retries + 1), "/000002"]);
    assert_eq!(proxy.count("PUT", "/000002"), retries + 1, "bounded: the first try and {retries} more");
    assert_eq!(proxy.count("PUT", "/000003"), 0, "the task stopped at its failure");
    // 100 ms doubling four times, each at least half its wait: 0.75 s at least.
    assert!(took >= Duration::from_millis(750), "{took:?}");
}

#[test]
fn a_dropped_connection_fails_the_run_in_one_line_and_removes_its_objects() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let proxy = every_put_of_object_2(server, Fault::Drop);
    let (out, _) = faulted_run(server, &proxy, db, &[]);
    assert_failed_and_gone(server, db, &out, &["/000002", "connection"]);
}

#[test]
fn a_server_that_stops_answering_fails_the_run_at_the_timeout_in_one_line_and_removes_its_objects() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let proxy = every_put_of_object_2(server, Fault::Stall);
    let (out, took) = faulted_run(server, &proxy, db, &[("IOSURVEY_S3_TIMEOUT", "1s")]);
    assert_failed_and_gone(server, db, &out, &["/000002", "timed out"]);
    assert!(took < Duration::from_secs(30), "bounded by the timeout given, not the default: {took:?}");
}

#[test]
fn a_timeout_that_is_not_a_duration_is_refused_in_one_line() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    for bad in ["30", "0s", "soon"] {
        let mut cmd = server.command();
        cmd.env("IOSURVEY_S3_TIMEOUT", bad);
        let out = outcome(cmd.args(["run", "--s3", &server.url("t"), "--block", "1m", "--db", db]).output().unwrap());
        assert_one_line_error(&out, 2, &["IOSURVEY_S3_TIMEOUT", bad]);
    }
}

/// A run through a proxy that never answers the second part of any upload, started and
/// returned once that part is sent: each task's first object is an open multipart upload of
/// one part, with the run's holder beside it.
fn stalled_multipart_run(server: &Server, db: &str) -> (Proxy, std::process::Child) {
    let proxy = Proxy::start(server.port, |m, t, _| match m == "PUT" && t.contains("partNumber=2") {
        true => Fault::Stall,
        false => Fault::Pass,
    });
    let url = proxy.url("mp");
    let args = ["run", "--s3", &url, "--op", "write", "--block", "10m", "--transfer", "5m", "--tasks", "2"];
    let child = server.command().args(args).args(["--db", db]).stderr(std::process::Stdio::piped()).spawn().unwrap();
    wait_until("both tasks' second parts to be sent", 30, || stalled(&proxy) == 2);
    let open = server.client("mp").list_uploads("mp/").unwrap();
    assert_eq!(open.len(), 2, "an open upload per task: {open:?}");
    (proxy, child)
}

/// How many requests for a second part the proxy holds.
fn stalled(proxy: &Proxy) -> usize {
    proxy.seen.lock().unwrap().iter().filter(|r| r.starts_with("PUT ") && r.contains("partNumber=2")).count()
}

fn assert_bucket_empty(server: &Server) {
    let client = server.client("mp");
    assert!(client.list("mp/").unwrap().is_empty(), "no object left: {:?}", client.list("mp/"));
    assert!(client.list_uploads("mp/").unwrap().is_empty(), "no upload left open");
}

#[test]
fn a_run_killed_mid_multipart_upload_has_its_objects_removed_and_uploads_aborted_by_its_janitor() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let (_proxy, mut child) = stalled_multipart_run(server, db);
    child.kill().unwrap();
    // Standard error closes when the janitor, which shares it, is done.
    let out = outcome(child.wait_with_output().unwrap());
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("stored as failed run") && out.stderr.contains("its objects were removed"),
        "{}",
        out.stderr
    );
    assert_bucket_empty(server);
    let ls = server.iosurvey(&["ls", "--json", "--db", db]);
    assert!(ls.stdout.contains("\"failed\""), "{}", ls.stdout);
}

#[test]
fn a_run_killed_with_its_janitor_mid_multipart_upload_is_emptied_by_the_next_run_uploads_aborted() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let (_proxy, mut child) = stalled_multipart_run(server, db);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(janitor_of(child.id()) as i32, libc::SIGKILL) };
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(server.client("mp").list_uploads("mp/").unwrap().len(), 2, "the kill left the uploads open");
    let out = server.iosurvey(&["run", "--s3", &server.url("mp"), "--block", "1m", "--db", db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("aborted 2 open multipart uploads") && said.contains("killed before its clean-up"), "{said}");
    assert_bucket_empty(server);
}

/// A CA and a certificate it signed for 127.0.0.1, made by openssl in `dir`: the CA's PEM,
/// and the server's chain and key.
fn certificates(dir: &Path, name: &str) -> Tls {
    let at = |f: &str| dir.join(format!("{name}-{f}"));
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl is installed");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let (ca, ca_key, csr, leaf, key, chain, ext) =
        (at("ca.pem"), at("ca.key"), at("server.csr"), at("server.pem"), at("server.key"), at("chain.pem"), at("ext"));
    std::fs::write(&ext, "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n").unwrap();
    let s = |p: &PathBuf| p.display().to_string();
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-keyout",
        &s(&ca_key),
        "-out",
        &s(&ca),
        "-subj",
        &format!("/CN={name} test CA"),
    ]);
    openssl(&["req", "-newkey", "rsa:2048", "-nodes", "-keyout", &s(&key), "-out", &s(&csr), "-subj", "/CN=127.0.0.1"]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        &s(&csr),
        "-CA",
        &s(&ca),
        "-CAkey",
        &s(&ca_key),
        "-CAcreateserial",
        "-days",
        "1",
        "-out",
        &s(&leaf),
        "-extfile",
        &s(&ext),
    ]);
    let mut pem = std::fs::read(&leaf).unwrap();
    pem.extend(std::fs::read(&ca).unwrap());
    std::fs::write(&chain, pem).unwrap();
    Tls { ca, chain, key }
}

#[test]
fn a_run_over_https_trusts_the_ca_of_aws_ca_bundle_and_an_untrusted_certificate_is_refused_in_one_line() {
    let certs = tempfile::tempdir().unwrap();
    let tls = certificates(certs.path(), "ours");
    let stranger = certificates(certs.path(), "other");
    let Some(server) = Server::start_with(Some(tls.clone())) else { return };
    let bed = tempfile::tempdir().unwrap();
    let db = bed.path().join("s3.db").display().to_string();
    let url = server.url("tls");
    assert!(url.starts_with("https://"), "{url}");
    let run = |bundle: Option<&Path>| {
        let mut cmd = server.command();
        if let Some(b) = bundle {
            cmd.env("AWS_CA_BUNDLE", b);
        }
        let args = ["run", "--s3", &url, "--block", "1m", "--tasks", "2", "--verify", "--db", &db, "-q"];
        outcome(cmd.args(args).output().unwrap())
    };
    let out = run(Some(&tls.ca));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(server.client("tls").list("tls/").unwrap().is_empty(), "the run's objects are removed");
    // No CA given (the built-in roots), another CA, a bundle that is not there: refused before
    // anything is made.
    let missing = certs.path().join("missing.pem");
    for (bundle, needles) in [
        (None, &["certificate", "AWS_CA_BUNDLE"][..]),
        (Some(stranger.ca.as_path()), &["certificate", "AWS_CA_BUNDLE"][..]),
        (Some(missing.as_path()), &["missing.pem", "cannot be read", "AWS_CA_BUNDLE"][..]),
    ] {
        let out = run(bundle);
        assert_one_line_error(&out, 2, needles);
    }
    assert!(server.client("tls").list("tls/").unwrap().is_empty());
}

#[test]
fn a_shared_object_is_read_by_every_task_each_a_ranged_get_of_its_own_part() {
    let Some(server) = Server::start() else { return };
    let proxy = Proxy::start(server.port, |_, _, _| Fault::Pass);
    let bed = tempfile::tempdir().unwrap();
    let db = bed.path().join("s3.db").display().to_string();
    let json = bed.path().join("run.json");
    let url = proxy.url("n1");
    // 4 tasks, 2 segments of 4 objects of 1 MiB; strided: task t reads 256 KiB at t x 256 KiB
    // of every object.
    let shape = ["--access", "shared", "--layout", "strided", "--tasks", "4", "--block", "1m", "--transfer", "256k"];
    let args = [&["run", "--s3", &url, "--op", "read", "--segments", "2", "--db", &db][..], &shape[..]].concat();
    let out = server.iosurvey(&[&args[..], &["--json", json.to_str().unwrap()]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = record(&json);
    let phases = run["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "{phases:?}");
    assert_eq!((phases[0]["op"].as_str(), phases[0]["figures"]["bytes"].as_u64()), (Some("read"), Some(8 << 20)));
    let seen = proxy.seen.lock().unwrap().clone();
    for k in 0..8 {
        let object = format!("/iosurvey.shared/{k:06}");
        let puts = seen.iter().filter(|l| l.starts_with("PUT ") && l.ends_with(&object)).count();
        assert_eq!(puts, 1, "object {k} is put once, whole, by the lead: {seen:?}");
        for t in 0..4u64 {
            let range = format!("{object} range=bytes={}-{}", t << 18, ((t + 1) << 18) - 1);
            let gets = seen.iter().filter(|l| l.starts_with("GET ") && l.ends_with(&range)).count();
            assert_eq!(gets, 1, "object {k}: one ranged GET of part {t}: {seen:?}");
        }
    }
    assert!(server.client("n1").list("n1/").unwrap().is_empty(), "the objects are removed");
    // Written by several tasks, or verified without the run's own write: refused.
    for (extra, needles) in [
        (&["--op", "write,read"][..], &["one writer", "--op read"][..]),
        (&["--op", "read", "--verify"][..], &["--verify", "--op write,read"][..]),
    ] {
        let out = server.iosurvey(&[&["run", "--s3", &url, "--db", &db][..], &shape[..], extra].concat());
        assert_one_line_error(&out, 2, needles);
    }
}
