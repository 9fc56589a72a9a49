//! Objects of their own sizes and verified mixes against a real S3 server (versitygw,
//! testbed/s3): sizes drawn from a list or a distribution (`--object-size`) are what is put,
//! got and counted, the same run after run; a mix's GETs are checked against the stamps of the
//! objects' last PUTs, and an object changed on the server is found.

mod common;
#[path = "common/s3.rs"]
mod s3bed;

use common::*;
use s3bed::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The objects a kept run left under `prefix`: (file name/object, size), the run's own prefix
/// (`iosurvey-TOKEN/`, new each run) left out, in key order.
fn kept(bed: &S3Bed, prefix: &str) -> Vec<(String, u64)> {
    let listed = bed.server.client(prefix).list(&format!("{prefix}/")).unwrap();
    let mut out: Vec<(String, u64)> = listed
        .into_iter()
        .filter_map(|o| {
            let mut parts = o.key.splitn(3, '/');
            let (_, _, rest) = (parts.next()?, parts.next()?, parts.next()?);
            Some((rest.to_string(), o.size))
        })
        .collect();
    out.sort();
    out
}

/// The request of kind `name` of a phase's record.
fn request<'a>(phase: &'a Value, name: &str) -> &'a Value {
    let requests = phase["requests"].as_array().unwrap_or_else(|| panic!("no requests in {phase}"));
    requests.iter().find(|q| q["request"] == name).unwrap_or_else(|| panic!("no {name} in {phase}"))
}

#[test]
fn objects_of_drawn_sizes_are_put_got_and_counted_at_their_own_sizes_and_repeat_run_after_run() {
    let Some(bed) = S3Bed::start() else { return };
    let shape = ["--tasks", "2", "--block", "256k", "--transfer", "256k", "--segments", "12", "--label", "sizes"];
    let drawn = [&shape[..], &["--object-size", "random:1k-256k", "--verify", "--keep", "-q"]].concat();
    let (_, first) = bed.run("a", &drawn);
    let (_, _) = bed.run("b", &drawn);
    let sizes = kept(&bed, "a");
    assert_eq!(sizes.len(), 24, "{sizes:?}");
    assert_eq!(sizes, kept(&bed, "b"), "the same seed draws the same sizes");
    let mut distinct: Vec<u64> = sizes.iter().map(|s| s.1).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() > 10 && distinct[0] >= 1024 && distinct[distinct.len() - 1] <= 256 << 10, "{sizes:?}");
    let total: u64 = sizes.iter().map(|s| s.1).sum();
    for (phase, name) in first["phases"].as_array().unwrap().iter().zip(["PUT", "GET"]) {
        let q = request(phase, name);
        assert_eq!((q["count"].as_u64(), q["bytes"].as_u64()), (Some(24), Some(total)), "{q}");
        assert_eq!(phase["figures"]["bytes"], total, "the phase moved the objects' bytes: {phase}");
        let window = phase["figures"]["window_ns"].as_f64().unwrap();
        let bw = q["bandwidth"].as_f64().unwrap();
        assert!((bw - total as f64 * 1e9 / window).abs() < 1e-6 * bw, "bytes over the phase's window: {q}");
    }
    assert_eq!(
        (first["phases"][1]["verify"]["checked"].as_u64(), first["phases"][1]["verify"]["bad"].as_u64()),
        (Some(24), Some(0))
    );
    let (_, other) =
        bed.run("c", &[&shape[..], &["--object-size", "random:1k-256k", "--seed", "7", "--keep", "-q"]].concat());
    assert_ne!(kept(&bed, "c"), sizes, "another seed, other sizes");
    assert_eq!(other["phases"][0]["figures"]["bytes"], kept(&bed, "c").iter().map(|s| s.1).sum::<u64>());

    // A run that starts with a read has the lead put each object at its own size first.
    let (_, read) = bed.run(
        "d",
        &[
            "--op",
            "get",
            "--object-size",
            "4k,64k",
            "--block",
            "64k",
            "--transfer",
            "64k",
            "--segments",
            "12",
            "--keep",
            "-q",
        ],
    );
    let listed = kept(&bed, "d");
    assert!(
        listed.iter().any(|s| s.1 == 4096)
            && listed.iter().any(|s| s.1 == 65536)
            && listed.iter().all(|s| [4096, 65536].contains(&s.1)),
        "{listed:?}"
    );
    let get = request(&read["phases"][0], "GET");
    assert_eq!(
        get["bytes"].as_u64(),
        Some(listed.iter().map(|s| s.1).sum::<u64>()),
        "each GET reads its object's stored size"
    );

    // Shown and compared with what the sizes are; a run of one size is not taken for it.
    let id = first["id"].to_string();
    let out = bed.iosurvey(&["show", &id]);
    assert!(out.stdout.contains("random:1k-256k"), "{}", out.stdout);
    let (_, fixed) = bed.run("e", &[&shape[..], &["-q"]].concat());
    let out = bed.iosurvey(&["compare", &id, &fixed["id"].to_string(), "--wide"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("object-size") && out.stdout.contains("random:1k-256k"), "{}", out.stdout);
}

#[test]
fn object_sizes_that_cannot_be_put_whole_or_checked_are_refused_in_one_line_and_put_nothing() {
    let Some(bed) = S3Bed::start() else { return };
    let url = bed.server.url("refused");
    let (url, dir) = (url.as_str(), bed.dir.path().join("files"));
    let cases: [(Vec<&str>, Vec<&str>); 5] = [
        (
            vec!["--s3", url, "--object-size", "random:1k-1m", "--block", "256k", "--transfer", "256k"],
            vec!["more than --block", "--block 1m"],
        ),
        (
            vec!["--s3", url, "--object-size", "4k,64k", "--block", "1m", "--transfer", "512k"],
            vec!["put and got whole", "--transfer"],
        ),
        (
            vec!["--s3", url, "--object-size", "random:8-1k", "--block", "1k", "--transfer", "1k", "--verify"],
            vec!["header", "--verify"],
        ),
        (vec!["--s3", url, "--object-size", "64k:x"], vec!["not a whole number"]),
        (vec!["--dir", dir.to_str().unwrap(), "--object-size", "4k,64k"], vec!["objects on a bucket", "--s3"]),
    ];
    for (args, needles) in cases {
        let out = bed.iosurvey(&[&["run"][..], &args].concat());
        assert_one_line_error(&out, 2, &needles);
    }
    assert!(bed.server.client("refused").list("refused/").unwrap().is_empty(), "a refused run puts nothing");
}

/// The file named `name` somewhere under `dir`, if there is one.
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == name) && path.is_file() {
            return Some(path);
        }
        if let Some(found) = path.is_dir().then(|| find(&path, name)).flatten() {
            return Some(found);
        }
    }
    None
}

#[test]
fn a_mix_checks_each_get_against_its_objects_last_put_and_finds_an_object_changed_on_the_server() {
    let Some(bed) = S3Bed::start() else { return };
    let shape = ["--tasks", "2", "--block", "16k", "--transfer", "16k", "--segments", "50", "--op", "put,mix"];
    let mix = ["--mix", "get:45,stat:30,put:15,delete:10", "--verify", "-q"];
    let (_, record) = bed.run("clean", &[&shape[..], &mix].concat());
    let mixed = &record["phases"][1];
    let gets = request(mixed, "GET")["count"].as_u64().unwrap();
    assert!(gets > 20, "{mixed}");
    // Every GET checked, those after a DELETE and a PUT again among them.
    assert_eq!(
        (mixed["verify"]["checked"].as_u64(), mixed["verify"]["bad"].as_u64()),
        (Some(gets), Some(0)),
        "{mixed}"
    );

    // A mix of GETs only after the put phase: a byte of object 0 changed on the server's disk
    // between the two is found by the GET of it, and nothing else is.
    let url = bed.server.url("planted");
    let args = ["run", "--s3", &url, "--block", "4k", "--transfer", "4k", "--segments", "300", "--op", "put,mix"];
    let mut cmd = bed.server.command();
    cmd.args(args).args(["--mix", "get:1", "--verify", "--db", &bed.db, "-q"]);
    let child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let stored = bed.server.dir.path().join("root").join(BUCKET).join("planted");
    // One task puts its objects in turn: once object 1 is stored, object 0 is whole.
    wait_until("the run's second object stored", 30, || find(&stored, "000001").is_some());
    bed.server.freeze();
    assert!(find(&stored, "000299").is_none(), "the put phase ended before the server was stopped: give more objects");
    let victim = find(&stored, "000000").unwrap();
    let mut disk = std::fs::read(&victim).unwrap();
    disk[100] ^= 0x40;
    std::fs::write(&victim, &disk).unwrap();
    bed.server.signal(libc::SIGCONT);
    let out = outcome(child.wait_with_output().unwrap());
    assert_eq!(out.code, 3, "a data mismatch: {}{}", out.stdout, out.stderr);
    let run = bed.shown(&bed.last_id());
    let verify = &run["phases"][1]["verify"];
    assert_eq!((verify["checked"].as_u64(), verify["bad"].as_u64()), (Some(300), Some(1)), "{verify}");
    assert!(run.to_string().contains("Corrupt") || out.stderr.contains("corrupt"), "{}\n{run}", out.stderr);
}
