//! The S3 client (src/s3) against a real S3 server: versitygw over a POSIX directory, built by
//! testbed/s3 (`.ci/run` installs it) and started on loopback, one server per test. Never a
//! mock: signing, ranges, multipart and listing are checked by a server that enforces them.

mod common;
#[path = "common/s3.rs"]
mod s3bed;

use common::*;
use iosurvey::engine::data::{check, fill_verified, Stamp};
use iosurvey::s3::{Client, Credentials, Location, Manifest, Options, Payload, S3Error};
use s3bed::*;
use std::path::Path;
use std::time::Duration;

/// `len` bytes of the stamped pattern (engine::data) of `token`, in 4 KiB transfers.
fn stamped(token: u64, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    for (i, block) in data.chunks_mut(4096).enumerate() {
        fill_verified(block, Stamp { token, task: 0, offset: (i * 4096) as u64 });
    }
    data
}

/// The first transfer of `data` that does not read back as stamped, and what is wrong with it.
fn first_bad(token: u64, data: &[u8]) -> Option<String> {
    let mut scratch = vec![0u8; 4096];
    data.chunks(4096).enumerate().find_map(|(i, block)| {
        let stamp = Stamp { token, task: 0, offset: (i * 4096) as u64 };
        check(block, stamp, &mut scratch[..block.len()]).map(|m| format!("{:?} at {}", m.fault, m.offset))
    })
}

#[test]
fn put_get_head_list_delete_round_trip_and_each_get_times_its_first_byte() {
    let Some(server) = Server::start() else { return };
    for payload in [Payload::Unsigned, Payload::Signed] {
        let client = server.client_with("ops", &Options { payload, ..Options::default() });
        let mut run = Manifest::new(client.location(), 0x41);
        let key = run.name(&format!("obj-{payload:?}")).unwrap();
        let data = stamped(7, 300_000);
        let put = client.put(&key, &data).unwrap();
        assert!(put.first_byte <= put.total);
        let head = client.head(&key).unwrap();
        assert_eq!(head.size, 300_000);
        assert!(!head.etag.is_empty());
        let mut buf = Vec::new();
        let got = client.get(&key, &mut buf).unwrap();
        assert_eq!(buf, data);
        assert!(got.first_byte > Duration::ZERO && got.first_byte <= got.total, "{got:?}");
        let listed = client.list(run.prefix()).unwrap();
        assert_eq!(listed.iter().map(|o| (o.key.as_str(), o.size)).collect::<Vec<_>>(), vec![(key.as_str(), 300_000)]);
        client.delete(&key).unwrap();
        client.delete(&key).expect("a delete of what is not there is not an error, as in S3");
        match client.get(&key, &mut buf) {
            Err(S3Error::NotFound { code, .. }) => assert_eq!(code, "NoSuchKey"),
            other => panic!("GET of a deleted object: {other:?}"),
        }
        assert!(client.list(run.prefix()).unwrap().is_empty());
    }
}

#[test]
fn a_ranged_get_gives_exactly_the_bytes_asked_for() {
    let Some(server) = Server::start() else { return };
    let client = server.client("ranges");
    let mut run = Manifest::new(client.location(), 1);
    let key = run.name("shared").unwrap();
    let data = stamped(9, 1 << 20);
    client.put(&key, &data).unwrap();
    let mut buf = Vec::new();
    for (offset, len) in [(0u64, 4096u64), (4096 * 37, 4096 * 3), (1000, 1), ((1 << 20) - 10, 10)] {
        let t = client.get_range(&key, offset, len, &mut buf).unwrap();
        assert_eq!(buf, &data[offset as usize..(offset + len) as usize], "range {offset}+{len}");
        assert!(t.first_byte <= t.total);
    }
    // A range running past the end is short: an error, as a short read of a file is.
    let err = client.get_range(&key, (1 << 20) - 10, 20, &mut buf).unwrap_err();
    assert!(matches!(err, S3Error::Protocol { .. }) && err.to_string().contains("asked for 20 bytes, got 10"), "{err}");
    run.clean_up(&client);
}

#[test]
fn a_multipart_upload_reads_back_whole_and_a_refused_one_leaves_nothing() {
    let Some(server) = Server::start() else { return };
    let client = server.client("mp");
    let mut run = Manifest::new(client.location(), 2);
    let key = run.name("big").unwrap();
    let data = stamped(11, 11 << 20);
    client.put_multipart(&key, &data, 5 << 20).unwrap();
    assert_eq!(client.head(&key).unwrap().size, 11 << 20);
    let mut buf = Vec::new();
    client.get(&key, &mut buf).unwrap();
    assert_eq!(first_bad(11, &buf), None);
    assert_eq!(buf.len(), data.len());
    // Parts under S3's 5 MiB minimum: the server refuses the completion, the upload is aborted.
    let small = run.name("small-parts").unwrap();
    let err = client.put_multipart(&small, &stamped(12, 3 << 20), 1 << 20).unwrap_err();
    assert!(matches!(err, S3Error::Status { status: 400, ref code, .. } if code == "EntityTooSmall"), "{err}");
    assert_eq!(client.list(run.prefix()).unwrap().len(), 1, "only the whole upload is there");
    let c = run.clean_up(&client);
    assert_eq!((c.removed, c.failed.len()), (2, 0));
    assert!(client.list(run.prefix()).unwrap().is_empty());
}

#[test]
fn a_listing_under_a_prefix_sees_nothing_of_its_neighbours_and_pages_through() {
    let Some(server) = Server::start() else { return };
    let small_pages = Options { list_page_size: 2, ..Options::default() };
    let a = server.client_with("team/a", &small_pages);
    let ab = server.client("team/ab");
    let top = server.client("team");
    let (mut ra, mut rab, mut rtop) =
        (Manifest::new(a.location(), 3), Manifest::new(ab.location(), 3), Manifest::new(top.location(), 3));
    let mut mine = Vec::new();
    for i in 0..5 {
        let key = ra.name(&format!("o{i}")).unwrap();
        a.put(&key, b"a").unwrap();
        mine.push(key);
    }
    ab.put(&rab.name("o0").unwrap(), b"ab").unwrap();
    top.put(&rtop.name("o0").unwrap(), b"top").unwrap();
    let listed: Vec<String> = a.list("team/a/").unwrap().into_iter().map(|o| o.key).collect();
    assert_eq!(listed, mine, "five objects over three pages of two, none of team/ab or team");
    let err = a.list("team/").unwrap_err();
    assert!(matches!(err, S3Error::Outside { .. }), "a listing above the prefix is refused: {err}");
    assert_eq!(top.list("team/").unwrap().len(), 7);
}

#[test]
fn clean_up_removes_only_what_its_manifest_named() {
    let Some(server) = Server::start() else { return };
    let client = server.client("shared");
    let mut run = Manifest::new(client.location(), 0xfeed);
    let mut other = Manifest::new(client.location(), 0xbeef);
    for i in 0..3 {
        client.put(&run.name(&format!("o{i}")).unwrap(), b"mine").unwrap();
    }
    run.name("never-written").unwrap();
    let theirs = other.name("o0").unwrap();
    client.put(&theirs, b"another run's").unwrap();
    // Someone else's data under the same prefix, and a stranger inside the run's own prefix,
    // put there behind the client's back (on the server's disk).
    for planted in ["shared/notes.txt", &format!("{}stranger", run.prefix())] {
        let path = server.backing_file(planted);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"not iosurvey's").unwrap();
    }
    let foreign: Vec<String> = client.foreign_objects().unwrap().into_iter().map(|o| o.key).collect();
    assert_eq!(foreign, vec!["shared/notes.txt"], "another run's object is of iosurvey's naming; the notes are not");
    let c = run.clean_up(&client);
    assert_eq!((c.removed, c.failed.len()), (4, 0), "{:?}", c.failed);
    assert_eq!(
        c.strangers.iter().map(|o| o.key.clone()).collect::<Vec<_>>(),
        vec![format!("{}stranger", run.prefix())]
    );
    let left: Vec<String> = client.list("shared/").unwrap().into_iter().map(|o| o.key).collect();
    assert_eq!(left, vec![theirs, format!("{}stranger", run.prefix()), "shared/notes.txt".to_string()]);
    assert_eq!(run.keys().count(), 0);
    // The client will not delete what is not of its naming, whatever the caller asks.
    assert!(matches!(client.delete("shared/notes.txt"), Err(S3Error::Outside { .. })));
    assert!(matches!(client.put("elsewhere/iosurvey-000000000000feed/x", b""), Err(S3Error::Outside { .. })));
}

#[test]
fn a_planted_corrupt_object_is_found_by_its_stamped_pattern() {
    let Some(server) = Server::start() else { return };
    let client = server.client("verify");
    let mut run = Manifest::new(client.location(), 4);
    let key = run.name("victim").unwrap();
    client.put(&key, &stamped(21, 64 << 10)).unwrap();
    let mut buf = Vec::new();
    client.get(&key, &mut buf).unwrap();
    assert_eq!(first_bad(21, &buf), None, "read back as written");
    // One byte flipped on the server's disk, as a failing device or a bad copy would.
    let path = server.backing_file(&key);
    let mut disk = std::fs::read(&path).unwrap();
    disk[5 * 4096 + 100] ^= 0x40;
    std::fs::write(&path, &disk).unwrap();
    client.get(&key, &mut buf).unwrap();
    assert_eq!(first_bad(21, &buf), Some(format!("Corrupt at {}", 5 * 4096 + 100)));
    client.get_range(&key, 0, 5 * 4096, &mut buf).unwrap();
    assert_eq!(first_bad(21, &buf), None, "the transfers before it are intact");
    run.clean_up(&client);
}

#[test]
fn a_server_frozen_then_killed_mid_request_gives_one_typed_line_and_a_restart_cleans_up() {
    let Some(mut server) = Server::start() else { return };
    let client = server.client_with("kill", &Options { io_timeout: Duration::from_millis(500), ..Options::default() });
    let mut run = Manifest::new(client.location(), 5);
    let key = run.name("obj").unwrap();
    client.put(&key, &stamped(3, 1 << 20)).unwrap();
    // Frozen: the request goes out and no answer comes, so the read's limit ends it.
    server.freeze();
    let timeout = client.get(&key, &mut Vec::new()).unwrap_err();
    assert!(matches!(timeout, S3Error::Timeout { .. }), "{timeout:?}");
    // Frozen, then killed while a request waits: the connection drops under it.
    let patient = server.client_with("kill", &Options { io_timeout: Duration::from_secs(60), ..Options::default() });
    let key2 = key.clone();
    let waiting = std::thread::spawn(move || patient.get(&key2, &mut Vec::new()));
    server.wait_for_request_in_flight();
    server.signal(libc::SIGKILL);
    let err = waiting.join().unwrap().unwrap_err();
    assert!(matches!(err, S3Error::Dropped { .. }), "{err:?}");
    for e in [&timeout, &err] {
        let line = e.to_string();
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.starts_with("S3 GET iosv/kill/iosurvey-0000000000000005/obj: "), "{line}");
    }
    // Down: the next request cannot connect.
    let err = client.head(&key).unwrap_err();
    assert!(matches!(err, S3Error::Connect { .. }), "{err:?}");
    // Up again on the same directory: the manifest's clean-up leaves nothing of the run.
    assert!(matches!(server.up(), Up::Ready), "the server came back on its port");
    let c = run.clean_up(&client);
    assert_eq!((c.removed, c.failed.len(), c.strangers.len()), (1, 0, 0), "{:?}", c.failed);
    assert!(client.list("kill/").unwrap().is_empty());
}

#[test]
fn the_secret_appears_in_no_error_and_no_debug_output() {
    let Some(server) = Server::start() else { return };
    let secret = server.secret.clone();
    let token = format!("ToKeN{}", random_hex(8));
    let mut shown = Vec::new();
    // Credentials read the way a run reads them: from the environment.
    let vars = [
        ("AWS_ACCESS_KEY_ID", server.access.clone()),
        ("AWS_SECRET_ACCESS_KEY", secret.clone()),
        ("AWS_SESSION_TOKEN", token.clone()),
    ];
    let (creds, source) =
        Credentials::load_from(|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())).unwrap();
    shown.push(format!("{creds:?} {source:?}"));
    let client = Client::new(&server.location("sec"), creds, &Options::default()).unwrap();
    shown.push(format!("{client:?} {client:#?}"));
    let mut run = Manifest::new(client.location(), 6);
    let key = run.name("o").unwrap();
    // The server knows no such session token: every request is refused, each error shown.
    let mut errors = vec![client.put(&key, b"x").unwrap_err()];
    let wrong = Client::new(
        &server.location("sec"),
        Credentials::new(&server.access, &format!("{secret}x"), None),
        &Options::default(),
    )
    .unwrap();
    errors.push(wrong.put(&key, b"x").unwrap_err());
    let good = server.client("sec");
    errors.push(good.get(&key, &mut Vec::new()).unwrap_err());
    errors.push(good.delete("sec/other").unwrap_err());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("credentials");
    std::fs::write(&file, format!("[default]\n{secret}\n")).unwrap();
    errors.push(iosurvey::s3::from_profile_file(&file, "default").unwrap_err());
    errors.push(Location::parse(&format!("http://{}:{secret}@127.0.0.1/{BUCKET}", server.access)).unwrap_err());
    drop(server);
    errors.push(good.head(&key).unwrap_err());
    for e in &errors {
        shown.push(format!("{e} (hint: {}) {e:?}", e.hint()));
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
    }
    let all = shown.join("\n");
    assert!(
        all.contains("SignatureDoesNotMatch") || all.contains("AccessDenied") || all.contains("InvalidAccessKeyId"),
        "{all}"
    );
    assert!(!all.contains(&secret) && !all.contains(&token), "{all}");
}

#[test]
fn run_on_a_bucket_puts_gets_and_verifies_its_objects_then_removes_them_and_no_output_holds_the_secret() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, url) = (&bed.server, bed.server.url("runs"));
    let json = bed.dir.path().join("run.json");
    let mut shown = Vec::new();
    // One object of two 5 MiB parts per task, read back by ranged GETs; then three objects of
    // one PUT each per task, read by whole GETs.
    for (block, transfer, segments, part) in [("10m", "5m", 1u64, 5u64 << 20), ("1m", "1m", 3, 1 << 20)] {
        let size = iosurvey::units::parse_size(block).unwrap() * segments;
        let seg = segments.to_string();
        let args = ["--tasks", "2", "--block", block, "--transfer", transfer, "--segments", &seg, "--verify"];
        let (out, run) = bed.run("runs", &[&args[..], &["--json", json.to_str().unwrap()]].concat());
        shown.push(format!("{}{}", out.stdout, out.stderr));
        assert_eq!(run["env"]["fs_type"], "s3", "{}", run["env"]);
        assert_eq!(run["env"]["target"], url.as_str());
        let phases = run["phases"].as_array().unwrap();
        assert_eq!(phases.iter().map(|p| p["op"].as_str().unwrap()).collect::<Vec<_>>(), ["write", "read"]);
        for p in phases {
            assert_eq!(p["figures"]["bytes"], 2 * size, "{p}");
        }
        assert_eq!(phases[1]["verify"]["bad"], 0);
        assert_eq!(phases[1]["verify"]["checked"], 2 * size / part);
        assert!(server.client("runs").list("runs/").unwrap().is_empty(), "the run's objects are removed");
        let id = run["id"].to_string();
        for shown_by in [vec!["show", id.as_str()], vec!["show", &id, "--json"], vec!["ls"]] {
            let out = bed.iosurvey(&shown_by);
            assert_eq!(out.code, 0, "{shown_by:?}: {}", out.stderr);
            shown.push(format!("{}{}", out.stdout, out.stderr));
        }
        shown.push(std::fs::read_to_string(&json).unwrap());
    }
    shown.push(String::from_utf8_lossy(&std::fs::read(&bed.db).unwrap()).into_owned());
    let all = shown.join("\n");
    assert!(!all.contains(&server.secret), "the secret is in an output");
}

#[test]
fn a_prefix_holding_objects_iosurvey_did_not_make_is_refused_unless_forced_and_then_left_alone() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let theirs = server.backing_file("shared/their-data.csv");
    std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
    std::fs::write(&theirs, b"a,b\n").unwrap();
    let url = server.url("shared");
    let run = ["run", "--s3", &url, "--block", "1m", "--db", db, "-q"];
    let out = server.iosurvey(&run);
    assert_one_line_error(&out, 2, &["iosurvey did not make", "their-data.csv", "--force"]);
    assert!(!Path::new(db).exists(), "a refused target makes no store");
    let out = server.iosurvey(&[&run[..], &["--force"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let left: Vec<String> = server.client("shared").list("shared/").unwrap().into_iter().map(|o| o.key).collect();
    assert_eq!(left, ["shared/their-data.csv"], "only what was there before is left");
}

#[test]
fn parts_under_s3s_minimum_and_an_engine_of_the_other_handles_are_refused_before_anything_runs() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let url = server.url("refused");
    let cases: [(&[&str], &[&str]); 3] = [
        (&["--block", "4m", "--transfer", "1m"], &["parts of one transfer", "5 MiB", "--transfer"]),
        (
            &["--block", "1m", "--engine", "vectored"],
            &["vectored engine moves data through file descriptors", "an S3 bucket", "s3"],
        ),
        (
            &["--access", "shared", "--layout", "strided", "--tasks", "2", "--block", "10m", "--transfer", "5m"],
            &["written whole by one writer", "--layout"],
        ),
    ];
    for (args, needles) in cases {
        let out = server.iosurvey(&[&["run", "--s3", &url, "--db", db][..], args].concat());
        assert_one_line_error(&out, 2, needles);
        assert!(server.client("refused").list("refused/").unwrap().is_empty());
    }
    // And the other way round: the s3 engine on a directory.
    let dir = bed.dir.path().join("d");
    let out = server.iosurvey(&["run", "--dir", dir.to_str().unwrap(), "--engine", "s3", "--block", "1m", "--db", db]);
    assert_one_line_error(&out, 2, &["s3 engine moves data through objects", "a directory", "sync"]);
}

#[test]
fn an_interrupt_mid_upload_stores_the_run_failed_in_one_line_and_removes_its_objects() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let child = server.spawn_long_run("stop", db, std::process::Stdio::piped());
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = outcome(child.wait_with_output().unwrap());
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
    let ls = server.iosurvey(&["ls", "--json", "--db", db]);
    assert!(ls.stdout.contains("\"failed\""), "{}", ls.stdout);
    assert!(server.client("stop").list("stop/").unwrap().is_empty(), "the run's objects are removed");
}

#[test]
fn a_run_killed_outright_has_its_objects_removed_by_the_next_run_on_its_host() {
    let Some(bed) = S3Bed::start() else { return };
    let (server, db) = (&bed.server, bed.db.as_str());
    let url = server.url("killed");
    let mut child = server.spawn_long_run("killed", db, std::process::Stdio::null());
    // The janitor too, as a node that goes down takes both: else it empties the prefix itself.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(janitor_of(child.id()) as i32, libc::SIGKILL) };
    child.kill().unwrap();
    child.wait().unwrap();
    server.wait_for_connections_closed();
    let client = server.client("killed");
    assert!(!client.list("killed/").unwrap().is_empty(), "the killed run left objects");
    let out = server.iosurvey(&["run", "--s3", &url, "--block", "1m", "--db", db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("killed before its clean-up"), "{said}");
    assert!(client.list("killed/").unwrap().is_empty(), "nothing is left of either run");
}
