//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use serde_json::Value;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What a command did.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// What a finished command did.
pub fn outcome(out: std::process::Output) -> Out {
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the binary with `args`.
pub fn iosurvey(args: &[&str]) -> Out {
    launch(&[], args)
}

/// Runs the binary behind a launcher (`mpirun -np 4`, say) with `args`.
pub fn launch(launcher: &[&str], args: &[&str]) -> Out {
    let bin = env!("CARGO_BIN_EXE_iosurvey");
    let mut cmd = match launcher.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    outcome(cmd.args(args).output().expect("start iosurvey"))
}

/// A scratch directory for data and a store beside it (not inside: the target must be empty).
pub struct Bed {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub db: String,
    /// Prefix for `run`: empty, or an MPI launcher.
    pub launcher: Vec<String>,
}

impl Bed {
    pub fn new() -> Bed {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("target");
        fs::create_dir(&dir).unwrap();
        let db = tmp.path().join("store.db").display().to_string();
        Bed { tmp, dir, db, launcher: Vec::new() }
    }

    /// A second bed on the same directory and store, with a scratch directory of its own.
    pub fn clone_paths(&self) -> Bed {
        Bed {
            tmp: tempfile::tempdir().unwrap(),
            dir: self.dir.clone(),
            db: self.db.clone(),
            launcher: self.launcher.clone(),
        }
    }

    /// Runs `iosurvey run --dir <dir> --db <db> -q` with more arguments, split at blanks.
    pub fn run(&self, args: &str) -> Out {
        self.command("run", args)
    }

    /// Runs `iosurvey meta --dir <dir> --db <db> -q` with more arguments, split at blanks.
    pub fn meta(&self, args: &str) -> Out {
        self.command("meta", args)
    }

    /// Runs `iosurvey COMMAND --dir <dir> --db <db> -q` with more arguments, split at blanks.
    pub fn command(&self, command: &str, args: &str) -> Out {
        let dir = self.dir.display().to_string();
        let mut all = vec![command, "--dir", dir.as_str(), "--db", self.db.as_str(), "-q"];
        all.extend(args.split_whitespace());
        let launcher: Vec<&str> = self.launcher.iter().map(String::as_str).collect();
        launch(&launcher, &all)
    }

    pub fn runs(&self) -> Vec<Value> {
        if !Path::new(&self.db).exists() {
            return Vec::new();
        }
        let out = iosurvey(&["ls", "--json", "--db", &self.db]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str::<Value>(&out.stdout).unwrap().as_array().unwrap().clone()
    }

    /// How many surveys, sweeps and matrices the store holds (rows of their own, which a
    /// refused command must not leave empty); zeros when there is no store.
    pub fn groups(&self) -> (i64, i64, i64) {
        if !Path::new(&self.db).exists() {
            return (0, 0, 0);
        }
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        let count = |letter: &str| {
            conn.query_row("SELECT count(*) FROM groups WHERE letter = ?1", [letter], |r| r.get(0)).unwrap()
        };
        (count("s"), count("w"), count("m"))
    }

    pub fn show(&self, id: i64) -> Value {
        let out = iosurvey(&["show", &id.to_string(), "--json", "--db", &self.db]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    }

    pub fn last_run(&self) -> Value {
        let id = self.runs().last().expect("a stored run")["id"].as_i64().unwrap();
        self.show(id)
    }

    pub fn entries(&self) -> Vec<String> {
        listing(&self.dir)
    }

    /// Starts `iosurvey run` on the bed (through its launcher, if any) without waiting,
    /// stderr captured.
    pub fn spawn(&self, args: &str) -> Child {
        self.spawn_command("run", args)
    }

    /// As `spawn`, for any command that takes `--dir`.
    pub fn spawn_command(&self, command: &str, args: &str) -> Child {
        let bin = env!("CARGO_BIN_EXE_iosurvey");
        let mut cmd = match self.launcher.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.args([command, "--dir"])
            .arg(&self.dir)
            .args(["--db", &self.db, "-q"])
            .args(args.split_whitespace())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// The tests that may skip under `CI=true`, one a line with the reason (tests/allowed-skips.txt).
pub const ALLOWED_SKIPS: &str = include_str!("../allowed-skips.txt");

/// The entries of an allow-list: `file::test` and the reason after it, per line that is not
/// blank or a `#` comment.
pub fn allowed_skips(list: &str) -> Vec<(&str, &str)> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once(char::is_whitespace).map_or((l, ""), |(name, why)| (name, why.trim())))
        .collect()
}

/// Whether `test` may skip: anywhere but in CI, and there only if the allow-list `list` names it.
pub fn may_skip(test: &str, ci: bool, list: &str) -> bool {
    !ci || allowed_skips(list).iter().any(|&(name, _)| name == test)
}

/// Where `skip` logs: `$IOSURVEY_SKIP_LOG`, or skips.log in the target's tmp directory
/// (`tests/skips` prints it, `.ci/run` at its end).
pub fn skip_log() -> PathBuf {
    std::env::var_os("IOSURVEY_SKIP_LOG")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("skips.log"))
}

/// The calling test skips (the rest of itself, or one part) for `reason`: the one way a test
/// may not run what it should. Under `CI=true` this fails the test unless tests/allowed-skips.txt
/// names it; otherwise it prints `skipped: <file>::<test>: <reason>` and appends that line to
/// `skip_log()`. The test is the thread's name, which libtest sets to the test's.
pub fn skip(reason: &str) {
    let test = format!("{}::{}", env!("CARGO_CRATE_NAME"), std::thread::current().name().unwrap_or("?"));
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    if !may_skip(&test, std::env::var("CI").is_ok_and(|v| v == "true"), ALLOWED_SKIPS) {
        panic!("{test} may not skip in CI (CI=true): {reason}; make it run there, or name it in tests/allowed-skips.txt with why");
    }
    let line = format!("skipped: {test}: {reason}");
    eprintln!("{line}");
    let log = skip_log();
    if let Some(dir) = log.parent() {
        let _ = fs::create_dir_all(dir);
    }
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
        .unwrap_or_else(|e| panic!("cannot log the skip in {}: {e}", log.display()));
}

/// Waits until `cond` holds, polling every 20 ms; fails the test after `secs` seconds, naming
/// `what` it waited for.
pub fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until every thread of `pid` has stopped: SIGSTOP is delivered thread by thread, a
/// thread inside a call finishes it first, and on a loaded machine a thread already running
/// can still answer a request after kill(2) has returned.
pub fn wait_stopped(pid: u32) {
    wait_until("every thread stopped", 20, || {
        let threads = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
        threads.map(|t| std::fs::read_to_string(t.unwrap().path().join("stat")).unwrap_or_default()).all(|stat| {
            // The state follows the command name's closing parenthesis.
            stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('T') || rest.starts_with('t'))
        })
    });
}

/// Whether the tests run as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn word(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap())
}

pub const MAGIC: u64 = 0x696f_7375_7276_6579;

/// Reads every transfer header of a verified file: (writer task, offset) per slot.
pub fn headers(path: &Path, transfer: usize, signature: u64) -> Vec<(u64, u64)> {
    let data = fs::read(path).unwrap();
    assert_eq!(data.len() % transfer, 0, "{} has a partial transfer", path.display());
    (0..data.len() / transfer)
        .map(|k| {
            let at = k * transfer;
            assert_eq!(word(&data, at), MAGIC, "slot {k} of {} was never written", path.display());
            assert_eq!(word(&data, at + 8), signature);
            (word(&data, at + 16), word(&data, at + 24))
        })
        .collect()
}

/// Asserts exit code and a single `iosurvey: error: ... (hint: ...)` line holding `needles`.
pub fn assert_one_line_error(out: &Out, code: i32, needles: &[&str]) {
    assert_eq!(out.code, code, "stdout: {}\nstderr: {}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {}", out.stderr);
    assert!(lines[0].starts_with("iosurvey: error: ") && lines[0].contains("(hint: "), "{}", lines[0]);
    for n in needles {
        assert!(lines[0].contains(n), "'{n}' missing from: {}", lines[0]);
    }
}

/// Mounts a tmpfs with the given options on a fresh bed's target; unmounted on drop.
pub struct Tmpfs {
    pub bed: Bed,
}

impl Tmpfs {
    pub fn mount(options: &str) -> Option<Tmpfs> {
        Tmpfs::mount_on(Bed::new(), options)
    }

    pub fn mount_on(bed: Bed, options: &str) -> Option<Tmpfs> {
        if !is_root() {
            skip("mounting a tmpfs needs root");
            return None;
        }
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&bed.dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip("mount -t tmpfs failed here");
            return None;
        }
        Some(Tmpfs { bed })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.bed.dir).status();
    }
}

/// The faultfs binary (tests/faultfs), built once per test binary; `None` where it cannot be.
fn faultfs_binary() -> Option<&'static PathBuf> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("faultfs");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faultfs/build");
        let ok = Command::new(script).arg(&out).status().is_ok_and(|s| s.success());
        ok.then_some(out)
    })
    .as_ref()
}

/// A FUSE layer over a backing directory that fails or slows writes on demand (see
/// tests/faultfs/README.md); the bed's target is a directory inside the mount.
pub struct FaultFs {
    pub bed: Bed,
    pub back: PathBuf,
    mnt: PathBuf,
    daemon: Child,
}

impl FaultFs {
    pub fn mount(env: &[(&str, &str)]) -> Option<FaultFs> {
        if !is_root() || !Path::new("/dev/fuse").exists() {
            skip("faultfs needs root and /dev/fuse");
            return None;
        }
        let Some(bin) = faultfs_binary() else {
            skip("faultfs could not be built (libfuse3-dev missing?)");
            return None;
        };
        let mut bed = Bed::new();
        let back = bed.tmp.path().join("back");
        let mnt = bed.tmp.path().join("mnt");
        fs::create_dir(&back).unwrap();
        fs::create_dir(&mnt).unwrap();
        let spawned = Command::new(bin)
            .arg(&back)
            .arg(&mnt)
            .arg("-f")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut daemon = match spawned {
            Ok(daemon) => daemon,
            Err(e) => {
                skip(&format!("faultfs could not be started: {e}"));
                return None;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !Command::new("mountpoint").arg("-q").arg(&mnt).status().is_ok_and(|s| s.success()) {
            if Instant::now() > deadline {
                let _ = daemon.kill();
                let _ = daemon.wait();
                skip("faultfs did not mount");
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        fs::remove_dir(&bed.dir).unwrap();
        bed.dir = mnt.join("target");
        fs::create_dir(&bed.dir).unwrap();
        Some(FaultFs { bed, back, mnt, daemon })
    }

    /// What is in the backing directory's copy of the target.
    pub fn backing_entries(&self) -> Vec<String> {
        listing(&self.back.join("target"))
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        // A process letting go of the mount at that moment leaves it busy for a while: try
        // again until a deadline, then detach it lazily; and never wait without end on a
        // daemon that still serves (a CI run hung here once).
        let unmount = |lazy: bool| {
            let mut cmd = Command::new("fusermount3");
            cmd.arg(if lazy { "-uz" } else { "-u" }).arg(&self.mnt).stderr(Stdio::null());
            cmd.status().is_ok_and(|s| s.success())
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !unmount(false) {
            if Instant::now() > deadline {
                eprintln!("faultfs: {} still busy after 10 s; detached lazily", self.mnt.display());
                unmount(true);
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.daemon.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// Sorted names in a directory.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// Asserts the store passes SQLite's own integrity check.
pub fn assert_store_intact(db: &str) {
    if !Path::new(db).exists() {
        return;
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok", "{db}");
}

/// An ext4 file system on a loop device, mounted in a scratch directory; unmounted on drop.
pub struct Ext4 {
    pub scratch: tempfile::TempDir,
    pub mount: std::path::PathBuf,
}

impl Ext4 {
    pub fn make(mib: u64) -> Option<Ext4> {
        let scratch = tempfile::tempdir_in("/var/tmp").ok()?;
        let image = scratch.path().join("fs.img");
        let mount = scratch.path().join("mnt");
        fs::create_dir(&mount).ok()?;
        fs::File::create(&image).ok()?.set_len(mib << 20).ok()?;
        let ok = |c: &mut std::process::Command| c.output().is_ok_and(|o| o.status.success());
        if !ok(std::process::Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image)) {
            return None;
        }
        if !ok(std::process::Command::new("mount").args(["-o", "loop"]).arg(&image).arg(&mount)) {
            return None;
        }
        Some(Ext4 { scratch, mount })
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.mount).output();
    }
}

/// Headless Chromium, if installed (.ci/run installs Debian's).
pub fn chromium() -> Option<&'static str> {
    let found =
        ["chromium", "chromium-browser"].into_iter().find(|c| Command::new(c).arg("--version").output().is_ok());
    if found.is_none() {
        skip("chromium is not installed");
    }
    found
}

/// Chromium's log of opening `page` headless, its DOM on stdout.
pub fn open_in_chromium(browser: &str, page: &Path, extra: &[&str]) -> (String, String) {
    let url = format!("file://{}", page.display());
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .args(extra)
        .arg(&url)
        .output()
        .unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A loop device over a file in /var/tmp, detached (and its file removed) on drop; its
/// partitions are scanned (`losetup -P`) so a partition table written to it shows.
pub struct Loop {
    pub scratch: tempfile::TempDir,
    pub dev: String,
}

impl Loop {
    /// A loop device of `mib` MiB, zero-filled, or none without root or losetup.
    pub fn new(mib: u64) -> Option<Loop> {
        let scratch = tempfile::tempdir_in("/var/tmp").ok()?;
        let image = scratch.path().join("disk.img");
        fs::File::create(&image).ok()?.set_len(mib << 20).ok()?;
        let out = Command::new("losetup").args(["-f", "--show", "-P"]).arg(&image).output().ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && dev.starts_with("/dev/")).then_some(Loop { scratch, dev })
    }

    /// The device's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        fs::read(self.scratch.path().join("disk.img")).unwrap()
    }

    /// Writes `data` at `offset` of the device, through the device, synced.
    pub fn write_at(&self, offset: u64, data: &[u8]) {
        use std::os::unix::fs::FileExt;
        let f = fs::OpenOptions::new().write(true).open(&self.dev).unwrap();
        f.write_all_at(data, offset).unwrap();
        f.sync_all().unwrap();
    }

    /// The device's major:minor.
    pub fn dev_number(&self) -> String {
        let name = self.dev.trim_start_matches("/dev/");
        fs::read_to_string(format!("/sys/class/block/{name}/dev")).unwrap().trim().to_string()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).output();
    }
}

/// The records of a CSV text (RFC 4180: quotes, doubled quotes, line breaks inside quotes),
/// the `# title` comment lines left out.
pub fn csv_records(csv: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field, mut quoted) = (Vec::new(), Vec::new(), String::new(), false);
    let mut chars = csv.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (_, '"') => quoted = !quoted,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (_, c) => field.push(c),
        }
    }
    records.into_iter().filter(|r: &Vec<String>| !r[0].starts_with('#')).collect()
}

/// One phase of a run's JSON record, as the tests compare them: a figure the record leaves
/// out (an imported run's unknown window, a rate of no meaning) is `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub op: String,
    pub iteration: u64,
    /// Bytes per second.
    pub bandwidth: Option<f64>,
    pub iops: Option<f64>,
    pub window_ns: Option<u64>,
    pub bytes: Option<u64>,
    pub ops: Option<u64>,
}

/// Each phase of `run` (a record as `show --json` gives it), in its order.
pub fn phases(run: &Value) -> Vec<Phase> {
    run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let f = &p["figures"];
            Phase {
                op: p["op"].as_str().unwrap().to_string(),
                iteration: p["iteration"].as_u64().unwrap(),
                bandwidth: f["bandwidth"].as_f64(),
                iops: f["iops"].as_f64(),
                window_ns: f["window_ns"].as_u64(),
                bytes: f["bytes"].as_u64(),
                ops: f["ops"].as_u64(),
            }
        })
        .collect()
}
