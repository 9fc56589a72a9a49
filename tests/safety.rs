//! The fault suite: each test holds one promise of docs/safety.md. Each asserts the exit code,
//! one line on stderr, what the store holds (and that it passes `PRAGMA integrity_check`), and
//! the target's listing before and after, outside the target too where links point there.
//!
//! Tests that need root (mounts, FUSE, cgroups, other users) skip through `common::skip`: said
//! on stderr and logged, and a failure under `CI=true` unless tests/allowed-skips.txt allows it.

mod common;

use common::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

fn finish(child: Child) -> Out {
    outcome(child.wait_with_output().unwrap())
}

/// Starts `iosurvey run` on the bed and returns once it has made `file` in the target.
fn spawn_until_made(bed: &Bed, args: &str, file: &str) -> Child {
    let child = bed.spawn(args);
    wait_until(file, 20, || bed.entries().iter().any(|e| e == file));
    child
}

/// As `spawn_until_made`, looking behind the FUSE layer: a slow server answers one request at
/// a time, so a listing through it would wait for the slow write.
fn spawn_until_made_behind(ffs: &FaultFs, args: &str, file: &str) -> Child {
    let child = ffs.bed.spawn(args);
    wait_until(file, 20, || ffs.backing_entries().iter().any(|e| e == file));
    child
}

/// Starts a long metadata run of two tasks and returns once both trees hold items.
fn spawn_meta_until_items(bed: &Bed) -> Child {
    spawn_meta_until("--items 2000000 --tasks 2 --files-only", bed, 1)
}

/// `iosurvey meta ARGS` on the bed, once task `task`'s tree holds items.
fn spawn_meta_until(args: &str, bed: &Bed, task: usize) -> Child {
    let child = bed.spawn_command("meta", args);
    let tree = bed.dir.join(format!("iosurvey.meta/u.{task}"));
    wait_until("items in the tree", 20, || fs::read_dir(&tree).is_ok_and(|mut d| d.next().is_some()));
    child
}

/// faultfs holding each write to the run's files for `ms` milliseconds (a slow or hung
/// server), and the path it makes once it holds one (in the scratch directory returned too).
fn slow_server(ms: &str) -> Option<(FaultFs, std::path::PathBuf, tempfile::TempDir)> {
    let scratch = tempfile::tempdir().unwrap();
    let held = scratch.path().join("held");
    let env =
        [("FAULTFS_DELAY_MS", ms), ("FAULTFS_MATCH", "iosurvey."), ("FAULTFS_DELAY_MARK", held.to_str().unwrap())];
    let ffs = FaultFs::mount(&env)?;
    Some((ffs, held, scratch))
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// A refusal: exit 2, one line, nothing stored, the store intact.
fn assert_refused(bed: &Bed, out: &Out, needles: &[&str]) {
    assert_one_line_error(out, 2, needles);
    assert!(bed.runs().is_empty(), "nothing stored");
    assert_store_intact(&bed.db);
}

#[test]
fn a_symlinked_manifest_is_refused_and_nothing_is_written_through_it() {
    let bed = Bed::new();
    let victim = bed.tmp.path().join("victim");
    symlink(&victim, bed.dir.join(".iosurvey-manifest")).unwrap();
    let outside = listing(bed.tmp.path());
    let out = bed.run("--transfer 1m --block 4m");
    assert_refused(&bed, &out, &["refusing", ".iosurvey-manifest", "symbolic link"]);
    assert!(!victim.exists(), "nothing created through the link");
    assert_eq!(bed.entries(), [".iosurvey-manifest"], "the link is left as it was");
    assert_eq!(fs::read_link(bed.dir.join(".iosurvey-manifest")).unwrap(), victim);
    assert_eq!(listing(bed.tmp.path()), outside);
    assert!(!Path::new(&bed.db).exists(), "a refused target does not even make a store");
}

#[test]
fn a_manifest_entry_that_is_a_symlink_is_refused_and_its_target_untouched() {
    let bed = Bed::new();
    let secret = bed.tmp.path().join("secret");
    fs::write(&secret, b"secret\n").unwrap();
    symlink(&secret, bed.dir.join("iosurvey.000000")).unwrap();
    fs::write(bed.dir.join(".iosurvey-manifest"), "iosurvey.000000\n").unwrap();
    let out = bed.run("--transfer 1m --block 4m");
    assert_refused(&bed, &out, &["refusing", "iosurvey.000000", "symbolic link"]);
    assert_eq!(fs::read(&secret).unwrap(), b"secret\n");
    assert_eq!(bed.entries(), [".iosurvey-manifest", "iosurvey.000000"]);
}

#[test]
fn a_dangling_link_with_a_data_files_name_creates_nothing_outside() {
    let bed = Bed::new();
    let outside = bed.tmp.path().join("outside");
    symlink(&outside, bed.dir.join("iosurvey.000000")).unwrap();
    fs::write(bed.dir.join(".iosurvey-manifest"), "iosurvey.000000\n").unwrap();
    let out = bed.run("--transfer 1m --block 4m");
    assert_refused(&bed, &out, &["iosurvey.000000", "symbolic link"]);
    assert!(fs::symlink_metadata(&outside).is_err(), "./outside not created");
    // Without a manifest the link is a foreign entry; with --force it is still never written.
    fs::remove_file(bed.dir.join(".iosurvey-manifest")).unwrap();
    let out = bed.run("--transfer 1m --block 4m --force");
    assert_refused(&bed, &out, &["iosurvey.000000", "did not create"]);
    assert!(fs::symlink_metadata(&outside).is_err());
}

#[test]
fn hard_links_other_owners_and_names_that_leave_the_target_are_refused() {
    let bed = Bed::new();
    let elsewhere = bed.tmp.path().join("elsewhere");
    fs::write(&elsewhere, b"x").unwrap();
    fs::hard_link(&elsewhere, bed.dir.join("iosurvey.000000")).unwrap();
    fs::write(bed.dir.join(".iosurvey-manifest"), "iosurvey.000000\n").unwrap();
    assert_refused(&bed, &bed.run("--block 1m"), &["iosurvey.000000", "hard link"]);
    assert_eq!(fs::read(&elsewhere).unwrap(), b"x");
    fs::remove_file(bed.dir.join("iosurvey.000000")).unwrap();
    fs::write(bed.dir.join(".iosurvey-manifest"), "../elsewhere\n").unwrap();
    assert_refused(&bed, &bed.run("--block 1m"), &["manifest", "not a plain file name"]);
    assert_eq!(fs::read(&elsewhere).unwrap(), b"x");
    if is_root() {
        fs::write(bed.dir.join(".iosurvey-manifest"), "iosurvey.000000\n").unwrap();
        fs::write(bed.dir.join("iosurvey.000000"), b"theirs").unwrap();
        std::os::unix::fs::chown(bed.dir.join("iosurvey.000000"), Some(65534), Some(65534)).unwrap();
        assert_refused(&bed, &bed.run("--block 1m"), &["iosurvey.000000", "owned by another user"]);
        assert_eq!(fs::read(bed.dir.join("iosurvey.000000")).unwrap(), b"theirs");
    }
}

#[test]
fn a_symlinked_target_path_is_resolved_once_and_used() {
    let bed = Bed::new();
    let alias = bed.tmp.path().join("alias");
    symlink(&bed.dir, &alias).unwrap();
    let out = iosurvey(&["run", "--dir", alias.to_str().unwrap(), "--db", &bed.db, "-q", "--block", "1m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(bed.last_run()["env"]["target"], bed.dir.canonicalize().unwrap().display().to_string());
    assert!(bed.entries().is_empty());
    assert!(alias.is_symlink());
}

#[test]
fn force_never_writes_a_file_iosurvey_did_not_create() {
    let bed = Bed::new();
    fs::write(bed.dir.join("iosurvey.000000"), b"PRECIOUS\n").unwrap();
    let out = bed.run("--force --transfer 1m --block 4m");
    assert_refused(&bed, &out, &["iosurvey.000000", "did not create"]);
    assert_eq!(fs::read(bed.dir.join("iosurvey.000000")).unwrap(), b"PRECIOUS\n");
    assert_eq!(bed.entries(), ["iosurvey.000000"]);
}

#[test]
fn a_second_run_in_the_same_directory_is_refused_naming_the_holder() {
    let bed = Bed::new();
    let first =
        spawn_until_made(&bed, "--op write --transfer 4k --block 1g --stonewall 2 --no-space-check", "iosurvey.000000");
    let out = bed.run("--block 1m");
    assert_one_line_error(&out, 2, &["in use by another iosurvey run", &format!("pid {}", first.id())]);
    let first = finish(first);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(bed.runs().len(), 1, "only the first run is stored");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_store_intact(&bed.db);
}

#[test]
fn memory_is_bounded_before_the_run() {
    let bed = Bed::new();
    assert_refused(&bed, &bed.run("--interval 1e-12"), &["below the 1 ms minimum"]);
    assert_refused(&bed, &bed.run("--interval 1e-9"), &["below the 1 ms minimum"]);
    assert_refused(
        &bed,
        &bed.run("--engine io_uring --iodepth 32768"),
        &["queue depth of 32768 is too large", "--iodepth at most 4096"],
    );
    let out = bed.run("--engine io_uring --iodepth 4096 --transfer 64m --block 1t --no-space-check");
    assert_refused(&bed, &out, &["of memory on one node", "a quarter of"]);
    assert!(bed.entries().is_empty());
    // Buffers are bounded by the transfers there are: 8 here, not 4096.
    let out = bed.run("--engine io_uring --iodepth 4096 --transfer 1m --block 8m");
    if out.stderr.contains("not available") {
        skip(&format!("the io_uring part: {}", out.stderr));
        return;
    }
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A long phase at a fine interval keeps a bounded series, said so in the record.
    let out = bed.run("--op write --transfer 4k --block 1g --interval 0.001 --stonewall 1 --no-space-check");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let series = &run["phases"][0]["series"];
    assert!(series["bytes"].as_array().unwrap().len() <= 65536);
    // One second at 1 ms needs 1000 points: no widening, and no warning about it.
    assert_eq!(series["interval_ns"], 1_000_000);
    assert!(!run["warnings"].to_string().contains("widened"), "{}", run["warnings"]);
}

#[test]
fn size_products_that_overflow_are_refused_with_the_number_they_need() {
    let bed = Bed::new();
    let out = bed.run("--block 8t --segments 1048576 --tasks 2");
    assert_refused(
        &bed,
        &out,
        &["18446744073709551616 bytes", "16.0 EiB", "1048576 segments", "lower --block, --segments or --tasks"],
    );
    assert!(bed.entries().is_empty());
}

#[test]
fn mmap_on_a_full_disk_is_an_ordinary_failure() {
    let Some(fs) = Tmpfs::mount("size=32m") else { return };
    let bed = &fs.bed;
    let out = bed.run("--engine mmap --block 64m --no-space-check");
    assert_one_line_error(&out, 1, &["No space left on device", "iosurvey.000000"]);
    let runs = bed.runs();
    assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("failed")));
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_store_intact(&bed.db);
}

#[test]
fn a_thread_the_system_refuses_ends_the_run_with_one_line() {
    let cg = Path::new("/sys/fs/cgroup/pids");
    if !is_root() || !cg.join("cgroup.procs").exists() {
        skip("needs root and the cgroup v1 pids controller");
        return;
    }
    let group = cg.join(format!("iosurvey-test-{}", std::process::id()));
    if fs::create_dir(&group).is_err() {
        skip("cannot make a pids cgroup");
        return;
    }
    let bed = Bed::new();
    // The shell joins the group, then becomes iosurvey: main + signal thread + a few tasks fit
    // under 24 (with an MPI build, so do MPI's own threads), 64 tasks do not.
    fs::write(group.join("pids.max"), "24").unwrap();
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} run --dir {} --db {} -q --block 64k --transfer 64k --tasks 64",
        group.display(),
        env!("CARGO_BIN_EXE_iosurvey"),
        bed.dir.display(),
        bed.db
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let _ = fs::remove_dir(&group);
    let mut out = outcome(out);
    // 64 tasks on this machine's cores draw the crowding warning before the run: not a line
    // of the fault's.
    out.stderr = out
        .stderr
        .lines()
        .filter(|l| !l.contains("warning: --tasks 64 runs 64 threads"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_one_line_error(&out, 1, &["could not start a task thread", "pids.max"]);
    assert_eq!(bed.runs()[0]["status"], "failed");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

#[test]
fn a_target_path_that_is_not_utf8_runs_and_is_flagged() {
    use std::os::unix::ffi::OsStrExt;
    let bed = Bed::new();
    let odd = bed.dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    let out = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["run", "--db", &bed.db, "-q", "--block", "1m", "--dir"])
        .arg(&odd)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = bed.last_run();
    assert!(run["env"]["target"].as_str().unwrap().ends_with("caf\u{fffd}"), "{}", run["env"]["target"]);
    assert!(run["warnings"].to_string().contains("not valid UTF-8"), "{}", run["warnings"]);
    assert!(bed.entries().is_empty());
}

#[test]
fn an_interrupt_delivered_twice_by_a_wrapper_still_stores_the_run_and_cleans_up() {
    if Command::new("timeout").arg("--version").output().is_err() {
        skip("no timeout(1)");
        return;
    }
    for attempt in 0..3 {
        let bed = Bed::new();
        let out = Command::new("timeout")
            .args(["--preserve-status", "-s", "INT", "0.8", env!("CARGO_BIN_EXE_iosurvey"), "run", "--dir"])
            .arg(&bed.dir)
            .args(["--db", &bed.db, "-q", "--transfer", "1m", "--block", "25m", "--tasks", "2", "--fsync-each"])
            .args(["--iterations", "1000", "--op", "write"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "attempt {attempt}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert_eq!(bed.runs().len(), 1, "attempt {attempt}: stored, as failed");
        assert_eq!(bed.runs()[0]["status"], "failed");
        assert!(bed.entries().is_empty(), "attempt {attempt}: {:?}", bed.entries());
        assert_store_intact(&bed.db);
    }
}

#[test]
fn sighup_is_handled_as_sigterm_and_the_keep_hint_says_kept() {
    let bed = Bed::new();
    let child = spawn_until_made(
        &bed,
        "--op write --transfer 1m --block 64m --iterations 1000 --fsync-each --keep",
        "iosurvey.000000",
    );
    wait_until("the first write", 20, || fs::metadata(bed.dir.join("iosurvey.000000")).is_ok_and(|m| m.len() > 0));
    signal(&child, libc::SIGHUP);
    let out = finish(child);
    assert_one_line_error(&out, 130, &["interrupted", "its files were kept"]);
    assert_eq!(bed.runs()[0]["status"], "failed");
    assert_eq!(bed.entries(), [".iosurvey-manifest", "iosurvey.000000"], "kept as asked");
}

#[test]
fn a_second_signal_stops_at_once_and_still_removes_the_files() {
    // Each write takes 3 s on this slow server, so the first signal cannot end the run soon.
    let Some((ffs, held, _scratch)) = slow_server("3000") else { return };
    let bed = &ffs.bed;
    let child =
        spawn_until_made_behind(&ffs, "--op write --transfer 1m --block 64m --no-space-check", "iosurvey.000000");
    wait_until("a write held by the server", 20, || held.exists());
    signal(&child, libc::SIGTERM);
    // Not synchronization: the second signal must come after the 1 s within which signals
    // count as the first one, which is what this test is about.
    std::thread::sleep(Duration::from_millis(1300));
    let t = Instant::now();
    signal(&child, libc::SIGTERM);
    let out = finish(child);
    assert!(t.elapsed() < Duration::from_secs(12), "bounded: {:?}", t.elapsed());
    // Whichever ends the run, the signal path or the run itself (when it was already filing
    // its record), one line says so, and the run is stored once, as failed.
    assert_one_line_error(&out, 130, &["run 1", "files"]);
    assert!(out.stderr.contains("stopped at once") || out.stderr.contains("interrupted by a signal"), "{}", out.stderr);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert!(ffs.backing_entries().is_empty(), "{:?}", ffs.backing_entries());
    let runs = bed.runs();
    assert_eq!(runs.len(), 1, "stored once: not again by the janitor or by the other path");
    assert_eq!(runs[0]["status"], "failed");
}

#[test]
fn after_sigkill_the_janitor_removes_the_files_and_stores_the_run_but_not_kept_files() {
    let bed = Bed::new();
    assert_eq!(bed.run("--access shared --block 1m --keep").code, 0);
    let child = spawn_until_made(
        &bed,
        "--op write --transfer 4k --block 1g --tasks 2 --fsync-each --no-space-check",
        "iosurvey.000001",
    );
    signal(&child, libc::SIGKILL);
    // Standard error closes when the janitor, which shares it, is done.
    let out = finish(child);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("ended during the run without cleaning up") && lines[0].contains("stored as failed run 2")
    );
    assert!(lines[0].contains("its files were removed"), "{}", lines[0]);
    assert_eq!(bed.entries(), [".iosurvey-manifest", "iosurvey.shared"], "the kept file stays");
    let runs = bed.runs();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["status"], "failed");
    assert_eq!(bed.show(2)["workload"]["tasks"], 2, "the record names the run that was killed");
    assert_store_intact(&bed.db);
}

#[test]
fn after_sigkill_of_run_and_janitor_the_next_run_reclaims_the_leftovers() {
    let bed = Bed::new();
    let child = spawn_until_made(
        &bed,
        "--op write --transfer 4k --block 1g --tasks 2 --fsync-each --no-space-check",
        "iosurvey.000001",
    );
    let janitor = children(child.id()).into_iter().find(|&p| cmdline(p).ends_with("janitor")).expect("a janitor");
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(janitor as i32, libc::SIGKILL) };
    signal(&child, libc::SIGKILL);
    let _ = finish(child);
    assert_eq!(bed.entries(), [".iosurvey-manifest", "iosurvey.000000", "iosurvey.000001"]);
    let out = bed.run("--block 1m");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("removed 2 files left by run pid"), "{}", out.stderr);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let stat = |p: &str| fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            // After the command's closing parenthesis: state, then the parent's pid.
            let s = stat(&p.to_string());
            s.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(1)?.parse::<u32>().ok()) == Some(pid)
        })
        .collect()
}

fn cmdline(pid: u32) -> String {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " ").trim().to_string())
        .unwrap_or_default()
}

#[test]
fn two_first_runs_on_a_new_store_both_succeed() {
    // The race is narrow (a first run committing the schema while the other reads what the
    // file holds): many rounds, each a few tens of milliseconds.
    for _ in 0..12 {
        let a = Bed::new();
        let b = Bed::new();
        let db = a.tmp.path().join("fresh.db").display().to_string();
        let start = |bed: &Bed| {
            Command::new(env!("CARGO_BIN_EXE_iosurvey"))
                .args(["run", "--dir"])
                .arg(&bed.dir)
                .args(["--db", &db, "-q", "--block", "1m"])
                .output()
                .unwrap()
        };
        let (x, y) = std::thread::scope(|s| {
            let x = s.spawn(|| start(&a));
            let y = s.spawn(|| start(&b));
            (x.join().unwrap(), y.join().unwrap())
        });
        for o in [x, y] {
            assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        }
        assert_store_intact(&db);
    }
}

#[test]
fn a_store_path_that_is_not_a_file_is_refused_and_ls_creates_nothing() {
    let bed = Bed::new();
    let had_journal = Path::new("/dev/full-journal").exists();
    let out = iosurvey(&["run", "--dir", bed.dir.to_str().unwrap(), "--db", "/dev/full", "--block", "1m"]);
    assert_one_line_error(&out, 2, &["/dev/full", "not a regular file"]);
    assert_eq!(Path::new("/dev/full-journal").exists(), had_journal);
    assert!(bed.entries().is_empty());
    let missing = bed.tmp.path().join("none.db");
    for cmd in [vec!["ls"], vec!["show", "1"]] {
        let mut args = cmd.clone();
        args.extend(["--db", missing.to_str().unwrap()]);
        assert_one_line_error(&iosurvey(&args), 2, &["does not exist"]);
    }
    assert!(!missing.exists());
    assert_one_line_error(
        &iosurvey(&["run", "--dir", bed.dir.to_str().unwrap(), "--db", "/nonexistent-iosurvey/dir/s.db"]),
        2,
        &["its directory does not exist"],
    );
}

#[test]
fn a_full_disk_under_the_store_keeps_the_record_in_a_file() {
    let Some(fs_db) = Tmpfs::mount("size=1m") else { return };
    let bed = Bed::new();
    let db = fs_db.bed.dir.join("s.db").display().to_string();
    let run = |extra: &str| {
        let mut args = vec!["run", "--dir", bed.dir.to_str().unwrap(), "--db", &db, "-q", "--block", "1m"];
        args.extend(extra.split_whitespace());
        iosurvey(&args)
    };
    assert_eq!(run("").code, 0);
    // Fill the file system holding the store.
    let _ = Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", fs_db.bed.dir.join("fill").display()))
        .arg("bs=64k")
        .status();
    let out = run("--iterations 20");
    assert_one_line_error(&out, 4, &["result store", "record was written to"]);
    let line = out.stderr.lines().next().unwrap();
    let spilled = line.split("written to ").nth(1).unwrap().split(" instead").next().unwrap();
    let record: serde_json::Value = serde_json::from_str(&fs::read_to_string(spilled).unwrap()).unwrap();
    assert_eq!(record["phases"].as_array().unwrap().len(), 40, "the whole record");
    let _ = fs::remove_file(spilled);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_store_intact(&db);
}

/// A connection holding the store's write lock until it rolls back.
fn hold_store_lock(db: &str) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.busy_timeout(Duration::from_secs(20)).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE; INSERT INTO groups (kind, letter, number, command_line, started, state, spec_json) VALUES ('survey', 's', 999999, 'lock', 0, 'running', '{}');")
        .unwrap();
    conn
}

#[test]
fn a_store_locked_beyond_the_busy_timeout_keeps_the_record_beside_it() {
    let bed = Bed::new();
    assert_eq!(bed.run("--block 1m").code, 0);
    let conn = hold_store_lock(&bed.db);
    let out = bed.run("--block 1m");
    conn.execute_batch("ROLLBACK").unwrap();
    assert_one_line_error(&out, 4, &["database is locked", "record was written to"]);
    let beside: Vec<String> = listing(bed.tmp.path()).into_iter().filter(|n| n.starts_with("store.db.run-")).collect();
    assert_eq!(beside.len(), 1, "{:?}", listing(bed.tmp.path()));
    assert_eq!(bed.runs().len(), 1, "the store holds whole runs only");
    assert!(bed.entries().is_empty());
    assert_store_intact(&bed.db);
}

#[test]
fn fsync_each_is_inside_each_writes_latency() {
    let bed = Bed::new();
    let out = bed.run("--op write --transfer 64k --block 4m --fsync-each");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let phase = &bed.last_run()["phases"][0];
    let lat = &phase["latency"];
    let task = &phase["tasks"][0];
    let window = (task["xfer_end"].as_u64().unwrap() - task["xfer_start"].as_u64().unwrap()) as f64;
    let sum = lat["mean"].as_f64().unwrap() * lat["count"].as_f64().unwrap();
    // One task at depth 1: its latencies tile its transfer time, less the loop's own work.
    assert!(sum <= window && sum >= 0.8 * window, "latencies {sum} ns over a {window} ns window");
}

#[test]
fn refusals_found_before_any_byte_is_written_are_exit_2() {
    let bed = Bed::new();
    assert_refused(&bed, &bed.run("--op read --block 1m"), &["nothing to read", "iosurvey.000000"]);
    let json_dir = bed.tmp.path().join("jsondir");
    fs::create_dir(&json_dir).unwrap();
    let out = bed.run(&format!("--block 1m --json {}", json_dir.display()));
    assert_refused(&bed, &out, &["--json", "not a regular file"]);
    assert_refused(&bed, &bed.run("--block 1m --json /nonexistent-iosurvey/x.json"), &["its directory does not exist"]);
    assert!(bed.entries().is_empty());
    assert_eq!(bed.run("--block 1m").code, 0);
    assert_one_line_error(&iosurvey(&["show", "99", "--db", &bed.db]), 2, &["no run with id 99"]);
}

#[test]
fn a_read_only_mount_with_kept_files_refuses_writes_and_allows_reads() {
    let Some(fs) = Tmpfs::mount("size=8m") else { return };
    let bed = &fs.bed;
    assert_eq!(bed.run("--block 1m --keep --verify --signature 7").code, 0);
    let remount = Command::new("mount").args(["-o", "remount,ro"]).arg(&bed.dir).status().unwrap();
    assert!(remount.success());
    let before = bed.runs().len();
    let out = bed.run("--block 1m");
    assert_one_line_error(&out, 2, &["mounted read-only", "the run writes"]);
    assert_eq!(bed.runs().len(), before, "nothing stored");
    let out = bed.run("--op read --block 1m --verify --signature 7");
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Nothing can be made to probe O_DIRECT, so a kept file is opened for it.
    let out = bed.run("--op read --block 1m --direct");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(bed.entries(), [".iosurvey-manifest", "iosurvey.000000"]);
}

#[test]
fn a_truncated_file_under_verify_is_bad_data() {
    let bed = Bed::new();
    assert_eq!(bed.run("--transfer 4k --block 64k --keep --verify --signature 3").code, 0);
    let f = fs::OpenOptions::new().write(true).open(bed.dir.join("iosurvey.000000")).unwrap();
    f.set_len(40_000).unwrap();
    let out = bed.run("--op read --transfer 4k --block 64k --verify --signature 3");
    assert_one_line_error(&out, 3, &["transfers bad", "offset 40000"]);
    assert_eq!(bed.last_run()["status"], "failed");
}

/// A fault from the storage in the middle of a phase, through every engine: exit 1, stored
/// failed, files removed, one line.
fn fault_mid_phase(errno: &str, op: &str, engine_args: &str, needles: &[&str]) {
    let env = [
        ("FAULTFS_ERRNO", errno),
        ("FAULTFS_OP", op),
        ("FAULTFS_AFTER_BYTES", "2097152"),
        ("FAULTFS_MATCH", "iosurvey."),
    ];
    let Some(ffs) = FaultFs::mount(&env) else { return };
    let bed = &ffs.bed;
    let out = bed.run(&format!("--transfer 64k --block 8m --no-space-check {engine_args}"));
    if out.stderr.contains("not available") {
        skip(&format!("{engine_args}: {}", out.stderr));
        return;
    }
    assert_failed_and_clean(&ffs, &out, needles, engine_args);
}

/// One line, exit 1, the run stored as failed, nothing left in the target or behind it.
fn assert_failed_and_clean(ffs: &FaultFs, out: &Out, needles: &[&str], what: &str) {
    let bed = &ffs.bed;
    assert_one_line_error(out, 1, needles);
    let runs = bed.runs();
    assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("failed")), "{what}");
    assert!(bed.entries().is_empty(), "{what}: {:?}", bed.entries());
    assert!(ffs.backing_entries().is_empty(), "{what}: {:?}", ffs.backing_entries());
    assert_store_intact(&bed.db);
}

#[test]
fn eio_and_enospc_in_a_metadata_run_fail_it_and_remove_its_tree() {
    for (errno, words) in [("5", "Input/output error"), ("28", "No space left on device")] {
        let env = [
            ("FAULTFS_ERRNO", errno),
            ("FAULTFS_OP", "write"),
            ("FAULTFS_AFTER_BYTES", "2097152"),
            // Items are files named f.<task>.<index>.
            ("FAULTFS_MATCH", "f."),
        ];
        let Some(ffs) = FaultFs::mount(&env) else { return };
        let out = ffs.bed.meta("--items 200 --tasks 2 --files-only --write-bytes 64k");
        assert_failed_and_clean(&ffs, &out, &[words, "iosurvey.meta/u."], errno);
    }
}

#[test]
fn eio_mid_write_fails_the_run_on_every_engine() {
    for engine in ["--engine sync", "--engine io_uring --iodepth 8", "--engine libaio --iodepth 8 --direct"] {
        fault_mid_phase("5", "write", engine, &["Input/output error", "iosurvey.000000", "dmesg"]);
    }
    fault_mid_phase("5", "fsync", "--engine mmap --fsync", &["Input/output error", "iosurvey.000000"]);
}

#[test]
fn eio_mid_read_fails_the_run() {
    for engine in ["--engine sync --direct", "--engine io_uring --iodepth 8 --direct"] {
        fault_mid_phase("5", "read", engine, &["Input/output error", "read"]);
    }
    // The kernel reports a page of a mapping it cannot read as SIGBUS, which the mmap engine
    // turns into EIO. (Through FUSE, storing into a mapped page reads it first, so the fault
    // may already come in the write phase.)
    fault_mid_phase("5", "read", "--engine mmap", &["Input/output error", "iosurvey.000000"]);
}

#[test]
fn eio_under_an_mmap_read_is_an_ordinary_failure_not_sigbus() {
    let control = tempfile::tempdir().unwrap();
    let arm = control.path().join("arm");
    let arm_text = arm.display().to_string();
    let env = [
        ("FAULTFS_ERRNO", "5"),
        ("FAULTFS_OP", "read"),
        ("FAULTFS_AFTER_BYTES", "1048576"),
        ("FAULTFS_MATCH", "iosurvey."),
        ("FAULTFS_CONTROL", arm_text.as_str()),
    ];
    let Some(ffs) = FaultFs::mount(&env) else { return };
    let bed = &ffs.bed;
    assert_eq!(bed.run("--op write --block 8m --keep --no-space-check").code, 0);
    fs::write(&arm, b"").unwrap();
    let out = bed.run("--op read --engine mmap --block 8m");
    let _ = fs::remove_file(&arm);
    assert_one_line_error(&out, 1, &["read failed", "iosurvey.000000", "Input/output error"]);
    assert_eq!(bed.last_run()["status"], "failed");
    assert_eq!(bed.entries(), [".iosurvey-manifest", "iosurvey.000000"], "the kept file stays");
}

#[test]
fn a_run_that_cannot_stop_is_ended_within_slurms_kill_wait() {
    // Each write takes 25 s on this hung server: the first signal alone cannot end the run,
    // so the deadline removes the files and exits.
    let Some((ffs, held, _scratch)) = slow_server("25000") else { return };
    let child =
        spawn_until_made_behind(&ffs, "--op write --transfer 1m --block 64m --no-space-check", "iosurvey.000000");
    wait_until("a write held by the server", 20, || held.exists());
    let t = Instant::now();
    signal(&child, libc::SIGTERM);
    let out = finish(child);
    assert!(t.elapsed() < Duration::from_secs(30), "within KillWait: {:?}", t.elapsed());
    assert_one_line_error(&out, 130, &["stopped at once", "did not stop within 18 s", "files were removed"]);
    assert!(ffs.backing_entries().is_empty(), "{:?}", ffs.backing_entries());
}

#[test]
fn edquot_is_handled_as_a_full_disk() {
    fault_mid_phase("122", "write", "--engine sync", &["quota", "free space"]);
}

#[test]
fn a_target_renamed_away_mid_run_is_cleaned_where_it_went() {
    let bed = Bed::new();
    let child = spawn_until_made(
        &bed,
        "--op write,read --transfer 64k --block 256m --tasks 2 --stonewall 1.5 --no-space-check",
        "iosurvey.000001",
    );
    let moved = bed.tmp.path().join("moved");
    fs::rename(&bed.dir, &moved).unwrap();
    let out = finish(child);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(listing(&moved).is_empty(), "{:?}", listing(&moved));
    assert!(!bed.dir.exists(), "nothing made at the old path");
    assert_store_intact(&bed.db);
}

#[test]
fn a_link_planted_in_a_metadata_tree_is_never_followed() {
    let bed = Bed::new();
    let out = bed.meta("--items 40 --depth 1 --branch 2 --phases tree-create --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Someone swaps a directory of the tree for a link to a directory outside the target.
    let outside = bed.tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("precious"), b"keep me").unwrap();
    let leaf = bed.dir.join("iosurvey.meta/u.0/t.1");
    fs::remove_dir(&leaf).unwrap();
    symlink(&outside, &leaf).unwrap();
    let out = bed.meta("--items 40 --depth 1 --branch 2 --phases file-create");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("u.0/t.1"), "{}", out.stderr);
    assert_eq!(listing(&outside), ["precious"], "nothing was made through the link");
    let out = bed.meta("--items 40 --depth 1 --branch 2 --phases tree-remove");
    assert_eq!(out.code, 1, "rmdir refuses the link: {}", out.stderr);
    assert_eq!(fs::read(outside.join("precious")).unwrap(), b"keep me");
}

#[test]
fn a_tree_directory_swapped_for_a_link_fails_every_phase_in_either_mode_and_nothing_outside_is_touched() {
    for mode in ["", "--relative"] {
        let bed = Bed::new();
        let meta = |phases: &str| {
            bed.meta(&format!("--items 39 --depth 1 --branch 2 --write-bytes 8 --keep {mode} --phases {phases}"))
        };
        let out = meta("tree-create,dir-create,file-create");
        assert_eq!(out.code, 0, "{}", out.stderr);
        // The directory moves out of the target whole, a link to it in its place: a call that
        // followed the link would find every name it looks for, and succeed.
        let outside = bed.tmp.path().join("outside");
        let leaf = bed.dir.join("iosurvey.meta/u.0/t.1");
        fs::rename(&leaf, &outside).unwrap();
        symlink(&outside, &leaf).unwrap();
        let before = listing(&outside);
        assert_eq!(before.len(), 26, "13 files and 13 directories: {before:?}");
        // Removals last: the items in the other directories go before the link is reached.
        for phases in ["file-stat", "file-read", "dir-stat", "file-remove", "dir-remove"] {
            let out = meta(phases);
            assert_eq!(out.code, 1, "{mode} {phases}: {}", out.stderr);
            assert_eq!(out.stderr.lines().count(), 1, "{mode} {phases}: {}", out.stderr);
            assert!(out.stderr.contains("u.0/t.1"), "{mode} {phases} names the link: {}", out.stderr);
            assert_eq!(listing(&outside), before, "{mode} {phases}: nothing outside was touched");
        }
        let files = listing(&outside).into_iter().filter(|n| n.starts_with("f."));
        assert!(files.map(|f| fs::read(outside.join(f)).unwrap()).all(|data| data.len() == 8), "{mode}");
        assert_store_intact(&bed.db);
    }
}

#[test]
fn a_tree_directory_moved_out_and_swapped_for_a_link_mid_run_stops_the_path_walk() {
    let bed = Bed::new();
    let child = spawn_meta_until("--items 2000000 --files-only", &bed, 0);
    let tree = bed.dir.join("iosurvey.meta/u.0");
    signal(&child, libc::SIGSTOP);
    wait_stopped(child.id());
    // The task's own directory leaves the target mid-phase, a link to it left in its place.
    let outside = bed.tmp.path().join("outside");
    fs::rename(&tree, &outside).unwrap();
    symlink(&outside, &tree).unwrap();
    let made = listing(&outside).len();
    signal(&child, libc::SIGCONT);
    let out = finish(child);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("iosurvey.meta/u.0/f.0.") && out.stderr.contains("symbolic links"), "{}", out.stderr);
    assert_eq!(listing(&outside).len(), made, "no item made, nor removed, where the directory went");
    assert!(bed.entries().is_empty(), "the link is removed, never followed: {:?}", bed.entries());
    let runs = bed.runs();
    assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("failed")));
    assert_store_intact(&bed.db);
}

#[test]
fn a_tree_directory_swapped_mid_phase_by_another_root_process_fails_the_run_at_the_phases_end() {
    // A directory create is one mkdir on the item's path from the run's root, as mdtest's:
    // what another root process puts in the tree mid-phase is not refused item by item, but
    // the check at the phase's end finds it, and clean-up never goes through it.
    for swap in ["link", "directory", "mount"] {
        let bed = Bed::new();
        let victim = victim(&bed);
        let child = spawn_meta_until("--items 2000000 --dirs-only --stonewall 3", &bed, 0);
        let tree = bed.dir.join("iosurvey.meta/u.0");
        signal(&child, libc::SIGSTOP);
        wait_stopped(child.id());
        let outside = bed.tmp.path().join("outside");
        fs::rename(&tree, &outside).unwrap();
        let mount = match swap {
            "link" => {
                symlink(&outside, &tree).unwrap();
                None
            }
            _ => {
                fs::create_dir(&tree).unwrap();
                (swap == "mount").then(|| BindMount::new(&victim, &tree))
            }
        };
        let made = listing(&outside);
        signal(&child, libc::SIGCONT);
        let out = finish(child);
        assert_eq!(out.code, 1, "{swap}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{swap}: {}", out.stderr);
        let why = match swap {
            // openat2 of a directory (O_DIRECTORY) that is a link: ENOTDIR.
            "link" => "Not a directory",
            "directory" => "a directory of this tree was moved or replaced during the phase",
            _ => "cross-device link",
        };
        assert!(out.stderr.contains("iosurvey.meta/u.0") && out.stderr.contains(why), "{swap}: {}", out.stderr);
        let runs = bed.runs();
        assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("failed")), "{swap}");
        // Clean-up never followed the link nor entered the mount: what the tree held when it
        // was moved out is still where it went.
        let after = listing(&outside);
        assert!(made.iter().all(|n| after.contains(n)), "{swap}: clean-up went through the link");
        match mount {
            Some(mount) => {
                assert!(out.stderr.contains("mount point"), "the line names the mount: {}", out.stderr);
                drop(mount);
                assert_eq!(fs::read(victim.join("f.0.1")).unwrap(), b"precious\n", "the mounted files are whole");
                assert_eq!(fs::read(victim.join("t.0/f.0.2")).unwrap(), b"precious\n");
            }
            None => assert!(bed.entries().is_empty(), "{swap}: {:?}", bed.entries()),
        }
        assert_store_intact(&bed.db);
    }
}

#[test]
fn a_directory_above_the_run_others_are_let_write_mid_run_fails_the_run_at_the_phases_end() {
    use std::os::unix::fs::PermissionsExt;
    // Each item is named by its whole path from /, which holds only while nobody but root and
    // the run's user can rename a directory on it: another process that lets others in
    // mid-phase fails the run at the check after the phase, and clean-up still finds the run.
    let bed = Bed::new();
    let child = spawn_meta_until("--items 2000000 --dirs-only --stonewall 3", &bed, 0);
    fs::set_permissions(bed.tmp.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let out = finish(child);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    let parent = fs::canonicalize(bed.tmp.path()).unwrap();
    for words in [&format!("{} (mode 0777) lets other users", parent.display()), "held when the run began"] {
        assert!(out.stderr.contains(words), "{words}: {}", out.stderr);
    }
    let runs = bed.runs();
    assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("failed")));
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_store_intact(&bed.db);
}

#[test]
fn a_target_another_user_may_rename_is_walked_from_the_runs_root_so_a_link_in_its_place_leads_nowhere() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if !is_root() {
        return skip("becoming another user needs root");
    }
    let bed = Bed::new();
    // The target's directory lets anyone rename what is in it (no sticky bit), and another
    // user has a tree of the run's names ready, where a path from / through a link would go.
    fs::set_permissions(bed.tmp.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let decoy = bed.tmp.path().join("decoy");
    fs::create_dir_all(decoy.join("iosurvey.meta/u.0")).unwrap();
    let own = |p: &Path| std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    for p in [&decoy, &decoy.join("iosurvey.meta"), &decoy.join("iosurvey.meta/u.0")] {
        own(p);
        fs::set_permissions(p, fs::Permissions::from_mode(0o777)).unwrap();
    }
    let child = spawn_meta_until("--items 2000000 --files-only --write-bytes 8 --stonewall 3", &bed, 0);
    let moved = bed.tmp.path().join("moved");
    let script = format!("mv {0} {1} && ln -s {2} {0}", bed.dir.display(), moved.display(), decoy.display());
    let swap = Command::new("sh").args(["-c", &script]).uid(65534).gid(65534).output().unwrap();
    assert!(swap.status.success(), "nobody swapped the target: {}", String::from_utf8_lossy(&swap.stderr));
    let out = finish(child);
    assert_eq!(out.code, 0, "the run went on in its own directory: {}", out.stderr);
    assert!(listing(&decoy.join("iosurvey.meta/u.0")).is_empty(), "nothing made through the link");
    assert!(listing(&moved).is_empty(), "the run cleaned up where its target went: {:?}", listing(&moved));
    let run = bed.last_run();
    assert_eq!(run["status"], "ok", "{run}");
    let warning = run["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("named from the run's root, held open") && warning.contains("(mode 0777)"), "{run}");
    assert_store_intact(&bed.db);
}

#[test]
fn another_user_can_put_no_link_directory_or_mount_in_a_metadata_runs_tree() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if !is_root() {
        return skip("becoming another user needs root");
    }
    let bed = Bed::new();
    // A scratch directory as on a shared file system: anyone may make entries in it.
    fs::set_permissions(bed.tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&bed.dir, fs::Permissions::from_mode(0o1777)).unwrap();
    let outside = bed.tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("precious"), b"keep me").unwrap();
    let child = spawn_meta_until_items(&bed);
    let root = bed.dir.join("iosurvey.meta");
    let st = fs::metadata(&root).unwrap();
    assert_eq!((st.permissions().mode() & 0o7777, std::os::unix::fs::MetadataExt::uid(&st)), (0o700, 0));
    // The intruder: a process of user nobody.
    let intruder = |argv: &[&str]| {
        let out = Command::new(argv[0]).args(&argv[1..]).uid(65534).gid(65534).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (at, to) = (|p: &str| root.join(p).display().to_string(), outside.display().to_string());
    let planted = bed.dir.join("planted-by-nobody");
    let (ok, err) = intruder(&["touch", planted.to_str().unwrap()]);
    assert!(ok, "nobody may write in the target itself, as on a shared file system: {err}");
    fs::remove_file(&planted).unwrap();
    let moved = bed.dir.join("moved").display().to_string();
    let attempts: Vec<Vec<String>> = [
        vec!["ln", "-s", &to, &at("u.0/t.9")],
        vec!["ln", "-s", &to, &at("u.9")],
        vec!["mkdir", &at("u.0/t.8")],
        vec!["mv", &at(""), &moved],
        vec!["chmod", "0777", &at("")],
        // In a user and mount namespace of its own, where it may mount.
        vec!["unshare", "-Urm", "mount", "--bind", &to, &at("u.0")],
    ]
    .into_iter()
    .map(|a| a.into_iter().map(String::from).collect())
    .collect();
    for argv in &attempts {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let (ok, err) = intruder(&argv);
        assert!(!ok, "{argv:?} succeeded as nobody");
        // mount(8) words its refusal its own way ("bind ... failed"); the others name the errno.
        let refused = ["ermission denied", "Operation not permitted", "failed"];
        assert!(refused.iter().any(|r| err.contains(r)), "{argv:?}: {err}");
    }
    signal(&child, libc::SIGINT);
    let out = finish(child);
    assert_eq!(out.code, 130, "stopped by the signal, nothing else: {}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_eq!(listing(&outside), ["precious"]);
    assert_eq!(fs::read(outside.join("precious")).unwrap(), b"keep me");
    assert_store_intact(&bed.db);
}

#[test]
fn a_metadata_run_killed_outright_is_reclaimed_whole_by_the_janitor() {
    let bed = Bed::new();
    let child = spawn_meta_until_items(&bed);
    signal(&child, libc::SIGKILL);
    let out = finish(child);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("its files were removed"), "{}", out.stderr);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    let runs = bed.runs();
    assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("failed")));
    assert_store_intact(&bed.db);
}

/// A bind mount of `from` on `on`; unmounted on drop (lazily, so a test that fails still lets
/// the temporary directory go).
struct BindMount(std::path::PathBuf);

impl BindMount {
    fn new(from: &Path, on: &Path) -> BindMount {
        assert!(is_root(), "bind mounts need root");
        let ok = Command::new("mount").arg("--bind").arg(from).arg(on).status().is_ok_and(|s| s.success());
        assert!(ok, "mount --bind {} {}", from.display(), on.display());
        BindMount(on.to_path_buf())
    }
}

impl Drop for BindMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// A directory of someone else's files beside the target: what a mount would expose.
fn victim(bed: &Bed) -> std::path::PathBuf {
    let victim = bed.tmp.path().join("victim");
    fs::create_dir_all(victim.join("t.0")).unwrap();
    fs::write(victim.join("f.0.1"), b"precious\n").unwrap();
    fs::write(victim.join("t.0/f.0.2"), b"precious\n").unwrap();
    victim
}

fn assert_victim_whole(victim: &Path) {
    assert_eq!(listing(victim), ["f.0.1", "t.0"]);
    assert_eq!(fs::read(victim.join("f.0.1")).unwrap(), b"precious\n");
    assert_eq!(fs::read(victim.join("t.0/f.0.2")).unwrap(), b"precious\n");
}

#[test]
fn a_mount_over_a_dead_runs_tree_is_never_emptied_by_the_next_run() {
    if !is_root() {
        return skip("bind mounts need root");
    }
    let bed = Bed::new();
    let victim = victim(&bed);
    fs::write(bed.dir.join(".iosurvey-manifest"), "iosurvey-manifest 2\nrunning iosurvey.meta\n").unwrap();
    fs::create_dir(bed.dir.join("iosurvey.meta")).unwrap();
    let mount = BindMount::new(&victim, &bed.dir.join("iosurvey.meta"));
    let out = bed.meta("--items 20");
    assert_refused(&bed, &out, &["iosurvey.meta is a mount point", "never removes anything inside another mount"]);
    assert_victim_whole(&victim);
    drop(mount);
    assert_eq!(bed.entries(), [".iosurvey-manifest", "iosurvey.meta"], "the entry stays for the admin");
}

#[test]
fn a_mount_put_in_a_tree_mid_run_is_left_whole_by_the_run_and_the_janitor() {
    if !is_root() {
        return skip("bind mounts need root");
    }
    for kill in [false, true] {
        let bed = Bed::new();
        let victim = victim(&bed);
        // Stopped while its first phase runs, the run gets a mount over its tree root and
        // another inside a task's tree.
        let child = spawn_meta_until_items(&bed);
        signal(&child, libc::SIGSTOP);
        fs::create_dir(bed.dir.join("iosurvey.meta/u.0/t.9")).unwrap();
        let inner = BindMount::new(&victim, &bed.dir.join("iosurvey.meta/u.0/t.9"));
        signal(&child, if kill { libc::SIGKILL } else { libc::SIGINT });
        signal(&child, libc::SIGCONT);
        let out = finish(child);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains("mount point"), "the line names the mount: {}", out.stderr);
        assert_victim_whole(&victim);
        let runs = bed.runs();
        assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("failed")), "kill {kill}");
        drop(inner);
        assert_store_intact(&bed.db);
    }
}

#[test]
fn a_bind_mount_over_a_data_file_is_never_written_or_removed() {
    if !is_root() {
        return skip("bind mounts need root");
    }
    let bed = Bed::new();
    let precious = bed.tmp.path().join("precious");
    fs::write(&precious, b"precious\n").unwrap();
    let child = spawn_until_made(
        &bed,
        "--op write --transfer 4k --block 1g --tasks 2 --fsync-each --no-space-check",
        "iosurvey.000001",
    );
    signal(&child, libc::SIGSTOP);
    let mount = BindMount::new(&precious, &bed.dir.join("iosurvey.000001"));
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGCONT);
    let out = finish(child);
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert_eq!(fs::read(&precious).unwrap(), b"precious\n", "the mounted file is never written or truncated");
    drop(mount);
}

#[test]
fn clean_up_removes_only_names_iosurvey_makes_and_names_the_rest() {
    let bed = Bed::new();
    let child = spawn_meta_until_items(&bed);
    let tree = bed.dir.join("iosurvey.meta/u.0");
    fs::write(tree.join("README-admin.txt"), b"do not delete\n").unwrap();
    fs::create_dir(tree.join("keepme")).unwrap();
    fs::write(tree.join("keepme/important"), b"important\n").unwrap();
    signal(&child, libc::SIGINT);
    let out = finish(child);
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert!(
        out.stderr.contains("README-admin.txt") && out.stderr.contains("not a name iosurvey makes"),
        "{}",
        out.stderr
    );
    assert_eq!(listing(&tree), ["README-admin.txt", "keepme"], "only iosurvey's names went");
    assert_eq!(fs::read(tree.join("keepme/important")).unwrap(), b"important\n");
    assert_eq!(listing(&bed.dir.join("iosurvey.meta")), ["u.0"]);
    // The janitor's and the next run's reclaim leave them too, and say so.
    let out = bed.meta("--items 20");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("README-admin.txt"), "{}", out.stderr);
    assert_eq!(fs::read(tree.join("README-admin.txt")).unwrap(), b"do not delete\n");
}

#[test]
fn a_metadata_run_over_a_base_that_is_not_utf8_is_stored_whole() {
    use std::os::unix::ffi::OsStrExt;
    let bed = Bed::new();
    let odd = bed.tmp.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    fs::create_dir(&odd).unwrap();
    let mut dirs = bed.dir.as_os_str().to_owned();
    dirs.push("@");
    dirs.push(&odd);
    let out = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["meta", "--db", &bed.db, "-q", "--items", "20", "--tasks", "2", "--dir"])
        .arg(&dirs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = bed.last_run();
    assert_eq!(run["status"], "ok");
    let bases = run["workload"]["meta"]["bases"].to_string();
    assert!(bases.contains("caf\u{fffd}"), "{bases}");
    assert!(run["warnings"].to_string().contains("not valid UTF-8"), "{}", run["warnings"]);
    assert!(listing(bed.tmp.path()).iter().all(|n| !n.ends_with(".json")), "nothing spilled");
    assert!(bed.entries().is_empty() && listing(&odd).is_empty());
}

/// A symbolic link at `at` to `to`, owned by another user where the tests run as root (a link
/// planted in a shared directory).
fn planted_link(to: &Path, at: &Path) {
    symlink(to, at).unwrap();
    if is_root() {
        let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: c is a valid path; lchown changes the link, not what it points to.
        assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
    }
}

#[test]
fn no_output_overwrites_the_store_or_another_database() {
    let bed = Bed::new();
    assert_eq!(bed.run("--block 1m").code, 0);
    let before = fs::read(&bed.db).unwrap();
    let other = bed.tmp.path().join("other.db");
    fs::copy(&bed.db, &other).unwrap();
    let d = bed.dir.display().to_string();
    let attempts: Vec<Vec<&str>> = vec![
        vec!["report", "-o", &bed.db],
        vec!["report", "--format", "md", "-o", &bed.db],
        vec!["run", "--dir", &d, "--block", "1m", "--json", &bed.db],
        vec!["matrix", "--dir", &d, "--max-file", "64k", "--csv", &bed.db],
        vec!["report", "-o", other.to_str().unwrap()],
    ];
    for args in attempts {
        let mut all = args.clone();
        all.extend(["--db", &bed.db]);
        let out = iosurvey(&all);
        assert_one_line_error(&out, 2, &["refusing to write"]);
        assert_eq!(fs::read(&bed.db).unwrap(), before, "{args:?}: the store is unchanged");
    }
    assert_eq!(bed.runs().len(), 1, "nothing ran");
    assert!(bed.entries().is_empty());
    assert_store_intact(&bed.db);
}

#[test]
fn outputs_and_the_store_never_follow_a_link() {
    let bed = Bed::new();
    assert_eq!(bed.run("--block 1m").code, 0);
    let victim = bed.tmp.path().join("victim");
    fs::write(&victim, b"victim\n").unwrap();
    let d = bed.dir.display().to_string();
    let at = |name: &str| bed.tmp.path().join(name).display().to_string();
    for name in ["r.html", "r.json", "r.csv", "r_figures", "new.db"] {
        planted_link(&victim, Path::new(&at(name)));
    }
    // A Markdown report's figures folder that is real, with a link planted for a figure in it.
    fs::create_dir(at("s_figures")).unwrap();
    planted_link(&victim, &Path::new(&at("s_figures")).join("figure-1.svg"));
    let attempts: Vec<Vec<String>> = vec![
        vec!["report".into(), "-o".into(), at("r.html"), "--db".into(), bed.db.clone()],
        vec!["report".into(), "--format".into(), "md".into(), "-o".into(), at("r.md"), "--db".into(), bed.db.clone()],
        vec!["report".into(), "--format".into(), "md".into(), "-o".into(), at("s.md"), "--db".into(), bed.db.clone()],
        vec![
            "run".into(),
            "--dir".into(),
            d.clone(),
            "--block".into(),
            "1m".into(),
            "--json".into(),
            at("r.json"),
            "--db".into(),
            bed.db.clone(),
        ],
        vec![
            "matrix".into(),
            "--dir".into(),
            d.clone(),
            "--max-file".into(),
            "64k".into(),
            "--csv".into(),
            at("r.csv"),
            "--db".into(),
            bed.db.clone(),
        ],
        vec!["run".into(), "--dir".into(), d.clone(), "--block".into(), "1m".into(), "--db".into(), at("new.db")],
        vec!["ls".into(), "--db".into(), at("new.db")],
    ];
    for args in &attempts {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = iosurvey(&args);
        assert_one_line_error(&out, 2, &["symbolic link"]);
        assert_eq!(fs::read(&victim).unwrap(), b"victim\n", "{args:?}: nothing written through the link");
    }
    assert!(!Path::new(&at("r.md")).exists(), "no part of a refused report is written");
    assert!(!Path::new(&at("s.md")).exists(), "no part of a refused report is written");
    assert_eq!(fs::read_dir(at("s_figures")).unwrap().count(), 1, "no figure written beside the planted link");
    // A dangling link does not make a store where it points.
    let nowhere = bed.tmp.path().join("nowhere.db");
    planted_link(&nowhere, &bed.tmp.path().join("dangling.db"));
    let out = iosurvey(&["run", "--dir", &d, "--block", "1m", "--db", &at("dangling.db")]);
    assert_one_line_error(&out, 2, &["symbolic link"]);
    assert!(!nowhere.exists());
    assert_eq!(bed.runs().len(), 1);
    assert!(bed.entries().is_empty());
}

#[test]
fn a_report_replaces_the_old_one_whole_and_ls_never_writes_an_empty_file() {
    let bed = Bed::new();
    assert_eq!(bed.run("--block 1m").code, 0);
    let page = bed.tmp.path().join("r.html");
    let old = bed.tmp.path().join("old.html");
    fs::write(&page, b"previous report\n").unwrap();
    fs::hard_link(&page, &old).unwrap();
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fs::read_to_string(&page).unwrap().contains("<html"), "the new report");
    assert_eq!(fs::read(&old).unwrap(), b"previous report\n", "written beside and renamed, never in place");
    assert!(listing(bed.tmp.path()).iter().all(|n| !n.ends_with(".tmp")), "{:?}", listing(bed.tmp.path()));
    let empty = bed.tmp.path().join("empty.db");
    fs::write(&empty, b"").unwrap();
    let fresh = bed.tmp.path().join("fresh.html");
    let out = iosurvey(&["ls", "--json", "--db", empty.to_str().unwrap()]);
    assert_eq!((out.code, out.stdout.trim()), (0, "[]"), "{}", out.stderr);
    for (args, needle) in [(vec!["show", "1"], "1"), (vec!["report", "-o", fresh.to_str().unwrap()], "no runs")] {
        let mut all = args.clone();
        all.extend(["--db", empty.to_str().unwrap()]);
        let out = iosurvey(&all);
        assert_one_line_error(&out, 2, &[needle]);
    }
    assert_eq!(fs::metadata(&empty).unwrap().len(), 0, "reading wrote nothing into it");
    assert!(!fresh.exists());
}

#[test]
fn a_store_locked_mid_matrix_leaves_no_directory() {
    let bed = Bed::new();
    assert_eq!(bed.run("--block 1m").code, 0);
    let child = bed.spawn_command("matrix", "--full --max-file 4m --min-record 4k");
    wait_until("the matrix's directory", 20, || bed.entries().iter().any(|e| e.starts_with("iosurvey-matrix-")));
    let conn = hold_store_lock(&bed.db);
    let out = finish(child);
    conn.execute_batch("ROLLBACK").unwrap();
    assert_ne!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("locked"), "{}", out.stderr);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_store_intact(&bed.db);
}

/// Children of `pid` whose command line ends with `janitor`.
fn janitor_of(child: &Child) -> u32 {
    children(child.id()).into_iter().find(|&p| cmdline(p).ends_with("janitor")).expect("a janitor")
}

#[test]
fn the_janitor_cleans_a_target_that_is_not_utf8_or_was_renamed_where_it_is() {
    use std::os::unix::ffi::OsStrExt;
    for renamed in [false, true] {
        let bed = Bed::new();
        let odd = bed.dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        fs::create_dir(&odd).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
            .args(["meta", "--db", &bed.db, "-q", "--items", "2000000", "--tasks", "2", "--files-only", "--dir"])
            .arg(&odd)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("the metadata tree", 20, || {
            fs::read_dir(odd.join("iosurvey.meta/u.1")).is_ok_and(|mut d| d.next().is_some())
        });
        let place = if renamed {
            let moved = bed.tmp.path().join("moved");
            fs::rename(&odd, &moved).unwrap();
            moved
        } else {
            odd.clone()
        };
        signal(&child, libc::SIGKILL);
        let out = finish(child);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.contains("stored as failed run 1") && out.stderr.contains("its files were removed"),
            "{}",
            out.stderr
        );
        assert!(listing(&place).is_empty(), "renamed {renamed}: {:?}", listing(&place));
        assert_store_intact(&bed.db);
    }
}

#[test]
fn a_kill_during_clean_up_after_an_interrupt_still_removes_the_tree() {
    let bed = Bed::new();
    let child = spawn_meta_until_items(&bed);
    wait_until("a large tree", 60, || {
        fs::read_dir(bed.dir.join("iosurvey.meta/u.1")).is_ok_and(|d| d.count() > 20_000)
    });
    let janitor = janitor_of(&child);
    signal(&child, libc::SIGINT);
    // Killed once the run is filed, while its tree is being removed.
    wait_until("the failed run filed", 20, || bed.runs().len() == 1);
    signal(&child, libc::SIGKILL);
    // Standard error closes when the janitor, which shares it, is done.
    let _ = finish(child);
    assert!(cmdline(janitor).is_empty(), "the janitor has ended");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_eq!(bed.runs().len(), 1, "filed once");
    assert_store_intact(&bed.db);
}

/// Starts `command` (its words, then the bed's directory: a survey's or io500's parent).
fn spawn_in_parent(bed: &Bed, command: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(command.split_whitespace())
        .arg(&bed.dir)
        .args(["--db", &bed.db, "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_kill_between_runs_of_a_survey_or_io500_still_removes_its_directory() {
    for command in ["io500 --quick --dir", "survey --size 4m --repetitions 40"] {
        let bed = Bed::new();
        let child = spawn_in_parent(&bed, command);
        wait_until("a stored run", 60, || bed.runs().len() >= 2);
        signal(&child, libc::SIGKILL);
        let out = finish(child);
        assert_eq!(out.stderr.lines().count(), 1, "{command}: {}", out.stderr);
        assert!(out.stderr.contains("its files were removed"), "{command}: {}", out.stderr);
        assert!(bed.entries().is_empty(), "{command}: {:?}", bed.entries());
        assert_store_intact(&bed.db);
    }
}

#[test]
fn a_fresh_directory_left_by_a_command_killed_with_its_janitor_is_reclaimed_by_the_next() {
    let bed = Bed::new();
    let child = spawn_in_parent(&bed, "survey --size 4m --repetitions 40");
    wait_until("a stored run", 60, || !bed.runs().is_empty());
    let janitor = janitor_of(&child);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(janitor as i32, libc::SIGKILL) };
    signal(&child, libc::SIGKILL);
    let _ = finish(child);
    let left = bed.entries();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with("iosurvey-survey-"));
    fs::write(bed.dir.join("someone-elses"), b"x").unwrap();
    let out =
        iosurvey(&["survey", bed.dir.to_str().unwrap(), "--size", "4m", "--repetitions", "1", "--db", &bed.db, "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains(&left[0]) && out.stderr.contains("killed"), "{}", out.stderr);
    assert_eq!(bed.entries(), ["someone-elses"], "only the dead command's directory went");
}

#[test]
fn metadata_bases_that_repeat_or_hold_one_another_are_refused() {
    let bed = Bed::new();
    let d = bed.dir.display().to_string();
    for dirs in [format!("{d}@{d}"), format!("{d}@{d}/sub"), format!("{d}@{d}/iosurvey.meta"), format!("{d}/sub@{d}")] {
        let out = iosurvey(&["meta", "--dir", &dirs, "--items", "20", "--db", &bed.db, "-q"]);
        assert_refused(&bed, &out, &["base directory", "distinct"]);
        assert!(bed.entries().is_empty(), "{dirs}: {:?}", bed.entries());
    }
}

#[test]
fn an_interrupted_io500_or_survey_never_exits_0() {
    for command in ["io500 --quick --dir", "survey --size 4m --repetitions 40"] {
        let bed = Bed::new();
        let child = spawn_in_parent(&bed, command);
        wait_until("a stored run", 60, || !bed.runs().is_empty());
        signal(&child, libc::SIGINT);
        let out = finish(child);
        assert_eq!(out.code, 130, "{command}: {}", out.stderr);
        assert_eq!(out.stderr.lines().filter(|l| l.starts_with("iosurvey: error:")).count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
        assert!(!out.stdout.contains("[SCORE"), "no score from an interrupted list: {}", out.stdout);
        assert!(bed.entries().is_empty(), "{command}: {:?}", bed.entries());
    }
}

#[test]
fn a_store_locked_before_a_survey_or_matrix_begins_leaves_no_directory() {
    let bed = Bed::new();
    assert_eq!(bed.run("--block 1m").code, 0);
    let conn = hold_store_lock(&bed.db);
    let d = bed.dir.display().to_string();
    for args in [vec!["survey", d.as_str(), "--size", "4m"], vec!["matrix", "--dir", d.as_str(), "--max-file", "64k"]] {
        let mut all = args.clone();
        all.extend(["--db", &bed.db, "-q"]);
        let out = iosurvey(&all);
        assert_ne!(out.code, 0, "{args:?}");
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("locked"), "{}", out.stderr);
        // A lock is another process at work, not the file's permissions.
        assert!(out.stderr.contains("another process") && !out.stderr.contains("writable"), "{}", out.stderr);
        assert!(bed.entries().is_empty(), "{args:?}: {:?}", bed.entries());
    }
    conn.execute_batch("ROLLBACK").unwrap();
    assert_store_intact(&bed.db);
}
