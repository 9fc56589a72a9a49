//! Block devices as targets (docs/safety.md, "Block devices"): what is refused and why, that
//! reading never writes, and that verification finds a planted corruption where it is. Every
//! device is a loop device over a file in /var/tmp: no real disk is touched.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn loop_dev(mib: u64) -> Option<Loop> {
    if !is_root() {
        skip("loop devices need root");
        return None;
    }
    let made = Loop::new(mib);
    if made.is_none() {
        skip("losetup could not make a loop device");
    }
    made
}

fn run_on(db: &str, args: &[&str]) -> Out {
    let mut all = vec!["run", "--db", db, "-q"];
    all.extend(args);
    iosurvey(&all)
}

/// Fills the device with a pattern no signature check takes for a file system.
fn scribble(l: &Loop) {
    let mib = l.bytes().len();
    let data: Vec<u8> = (0..mib).map(|i| (i as u64).wrapping_mul(2654435761).rotate_right(13) as u8).collect();
    l.write_at(0, &data);
}

fn hash(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Writes an MBR with two partitions of `mib` MiB each, from 1 MiB on.
fn partition(l: &Loop, mib: u32) {
    let mut mbr = vec![0u8; 512];
    for (k, start) in [(0usize, 2048u32), (1, 2048 + mib * 2048)] {
        let e = 446 + 16 * k;
        mbr[e + 4] = 0x83;
        mbr[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
        mbr[e + 12..e + 16].copy_from_slice(&(mib * 2048).to_le_bytes());
    }
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    l.write_at(0, &mbr);
    let ok = Command::new("partx").args(["-a", &l.dev]).status().is_ok_and(|s| s.success())
        || Command::new("blockdev").args(["--rereadpt", &l.dev]).status().is_ok_and(|s| s.success());
    assert!(ok, "the kernel did not read the partition table of {}", l.dev);
    wait_until("the partitions appear", 10, || std::path::Path::new(&format!("{}p2", l.dev)).exists());
}

fn sh(command: &str) {
    let st = Command::new("sh").arg("-c").arg(command).status().unwrap();
    assert!(st.success(), "{command}");
}

/// A loop device the test set up over `backing` (a device or a file) from `offset` on,
/// detached on drop, so a failing assertion leaves nothing set up.
struct Over(String);

impl Over {
    fn new(backing: &str, offset: &str) -> Over {
        let out = Command::new("losetup").args(["-f", "--show", "-o", offset, backing]).output().unwrap();
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(out.status.success() && dev.starts_with("/dev/loop"), "losetup over {backing}: {out:?}");
        Over(dev)
    }

    fn name(&self) -> &str {
        self.0.trim_start_matches("/dev/")
    }
}

impl Drop for Over {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).output();
    }
}

/// A device mounted on a directory made for it, unmounted on drop (before the loop device
/// under it is detached, when declared after it).
struct Mounted(std::path::PathBuf);

impl Mounted {
    fn new(dev: &str, at: &std::path::Path) -> Mounted {
        std::fs::create_dir_all(at).unwrap();
        sh(&format!("mount {dev} {}", at.display()));
        Mounted(at.into())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
    }
}

/// An ext4 file system on `dev`, with every table written now: nothing is written in the
/// background once it is mounted, so its bytes change only when something writes it.
fn ext4(dev: &str) {
    sh(&format!("mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 {dev}"));
}

#[test]
fn each_refusal_is_one_line_with_its_reason_and_nothing_is_written() {
    let Some(l) = loop_dev(64) else { return };
    let Some(other) = loop_dev(16) else { return };
    scribble(&l);
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    let dev = l.dev.as_str();
    let before = hash(&l.bytes());
    let refused = |args: &[&str], needles: &[&str]| {
        let out = run_on(&db, args);
        assert_one_line_error(&out, 2, needles);
        assert_eq!(hash(&l.bytes()), before, "nothing written after {args:?}");
        assert!(!std::path::Path::new(&db).exists() || Bed { db: db.clone(), ..Bed::new() }.runs().is_empty());
    };
    // A write without a word, and with a word naming another device.
    refused(&["--device", dev, "--op", "write"], &["destroys the data", "--destroy-data"]);
    refused(&["--device", dev, "--op", "write", "--destroy-data", &other.dev], &["--destroy-data names", &other.dev]);
    // Not a block device.
    let file = tmp.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    refused(&["--device", file.to_str().unwrap(), "--op", "read"], &["is a regular file, not a block device"]);
    refused(&["--device", "/dev/null", "--op", "read"], &["is a character device, not a block device"]);
    // Opened exclusively by another process, which says when it holds the device.
    let mut holder = Command::new("python3")
        .args(["-c", &format!("import os,sys,time; fd=os.open('{dev}', os.O_RDONLY|os.O_EXCL); print('held', flush=True); sys.stdin.read()")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "held");
    refused(&["--device", dev, "--op", "write", "--destroy-data", dev], &["open exclusively by another process"]);
    drop(holder.stdin.take());
    holder.wait().unwrap();
    // An ext4 signature: refused, then written over when the user says so.
    sh(&format!("mkfs.ext4 -q -F {dev}"));
    let before_fs = hash(&l.bytes());
    let out = run_on(&db, &["--device", dev, "--op", "write", "--destroy-data", dev, "--size", "8m"]);
    assert_one_line_error(&out, 2, &["holds an ext4 file system", "--ignore-signature"]);
    assert_eq!(hash(&l.bytes()), before_fs);
    // A loop device set up over it, at an offset past any signature iosurvey reads.
    let over = Over::new(dev, "1M");
    let out =
        run_on(&db, &["--device", dev, "--op", "write", "--destroy-data", dev, "--ignore-signature", "--size", "8m"]);
    let over_name = over.name().to_string();
    drop(over);
    assert_one_line_error(&out, 2, &[&format!("it is the backing device of {over_name}")]);
    // A format of libblkid's far longer list than iosurvey's own (minix).
    if Command::new("mkfs.minix").arg(dev).output().is_ok_and(|o| o.status.success()) {
        let minix = hash(&l.bytes());
        let out = run_on(&db, &["--device", dev, "--op", "write", "--destroy-data", dev, "--size", "8m"]);
        assert_one_line_error(&out, 2, &["holds a minix signature (blkid -p)"]);
        assert_eq!(hash(&l.bytes()), minix);
        sh(&format!("mkfs.ext4 -q -F {dev}"));
    }
    // Mounted: refused for being mounted (and the kernel holds it too).
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    sh(&format!("mount {dev} {}", mnt.display()));
    let out =
        run_on(&db, &["--device", dev, "--op", "write", "--destroy-data", dev, "--ignore-signature", "--size", "8m"]);
    sh(&format!("umount {}", mnt.display()));
    // (Mounting wrote the file system's own superblock, so no checksum here: the refusal
    // comes before the device is opened for writing.)
    assert_one_line_error(&out, 2, &["is mounted at", &mnt.display().to_string()]);
    let out =
        run_on(&db, &["--device", dev, "--op", "write", "--destroy-data", dev, "--ignore-signature", "--size", "8m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_ne!(hash(&l.bytes()), before_fs, "written once the signature may be lost");
}

#[test]
fn a_partition_of_a_disk_whose_other_partition_is_mounted_is_not_written() {
    let Some(l) = loop_dev(64) else { return };
    partition(&l, 24);
    let (p1, p2) = (format!("{}p1", l.dev), format!("{}p2", l.dev));
    sh(&format!("mkfs.ext4 -q -F {p2}"));
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    sh(&format!("mount {p2} {}", mnt.display()));
    let db = tmp.path().join("s.db").display().to_string();
    // The table and the first partition: the mounted file system writes its own.
    let head = || hash(&l.bytes()[..25 << 20]);
    let before = head();
    let p2_name = p2.trim_start_matches("/dev/");
    for dev in [p1.as_str(), l.dev.as_str()] {
        let out = run_on(
            &db,
            &["--device", dev, "--op", "write", "--destroy-data", dev, "--ignore-signature", "--size", "4m"],
        );
        assert_one_line_error(&out, 2, &[&format!("{p2_name}, of the same disk, is mounted")]);
    }
    sh(&format!("umount {}", mnt.display()));
    assert_eq!(head(), before, "nothing written");
    // Unmounted, the partition may be written; the signature of its neighbour is no concern.
    let out = run_on(&db, &["--device", &p1, "--op", "write", "--destroy-data", &p1, "--size", "4m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_read_only_run_never_changes_the_device_and_records_its_facts() {
    let Some(l) = loop_dev(64) else { return };
    scribble(&l);
    let before = hash(&l.bytes());
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    for pattern in ["sequential", "random"] {
        let out = run_on(
            &db,
            &[
                "--device",
                &l.dev,
                "--op",
                "read",
                "--tasks",
                "4",
                "--pattern",
                pattern,
                "-t",
                "64k",
                "--iterations",
                "2",
            ],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    assert_eq!(hash(&l.bytes()), before, "a read-only run wrote to the device");
    let bed = Bed { db: db.clone(), ..Bed::new() };
    let run = bed.last_run();
    let facts = &run["env"]["devices"][0];
    assert_eq!(facts["path"], l.dev.as_str());
    assert_eq!(facts["size_bytes"], 64u64 << 20);
    assert_eq!(facts["logical_block"], 512);
    assert_eq!(facts["dev"], l.dev_number().as_str());
    assert!(facts["sysfs_path"].as_str().unwrap().ends_with(l.dev.trim_start_matches("/dev/")));
    assert!(facts.get("scheduler").is_some() && facts.get("rotational").is_some() && facts.get("model").is_some());
    assert_eq!(run["env"]["fs_type"], "block device");
    assert_eq!(run["workload"]["direct"], true, "O_DIRECT is the default on a device");
    // The whole device, split over the tasks.
    assert_eq!(run["workload"]["block"], 16u64 << 20);
    // Two devices, three tasks: the device given two regions holds both, whole.
    let Some(second) = loop_dev(64) else { return };
    let out = run_on(&db, &["--device", &format!("{},{}", l.dev, second.dev), "--tasks", "3"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    assert_eq!(run["workload"]["block"], 32u64 << 20, "64 MiB for the two regions of the first device");
    assert_eq!(run["env"]["devices"].as_array().unwrap().len(), 2);
    assert_eq!(hash(&l.bytes()), before);
}

#[test]
fn verification_finds_a_planted_corruption_at_its_offset_on_the_device() {
    let Some(l) = loop_dev(32) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    let dev = l.dev.as_str();
    let common = ["--device", dev, "--destroy-data", dev, "--tasks", "2", "-t", "64k", "--verify", "--signature", "77"];
    let mut args = common.to_vec();
    args.extend(["--op", "write"]);
    let out = run_on(&db, &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Task 1's region starts at 16 MiB: corrupt one byte 3 transfers and 100 bytes into it.
    let at = (16u64 << 20) + 3 * 65536 + 100;
    l.write_at(at, &[0x5a ^ l.bytes()[at as usize]]);
    let mut args = common.to_vec();
    args.extend(["--op", "read"]);
    let out = run_on(&db, &args);
    assert_eq!(out.code, 3, "bad data exits 3: {}", out.stderr);
    let run = Bed { db: db.clone(), ..Bed::new() }.last_run();
    let text = run.to_string();
    let transfer_at = (16u64 << 20) + 3 * 65536;
    assert!(
        out.stderr.contains(&at.to_string())
            || out.stderr.contains(&transfer_at.to_string())
            || text.contains(&at.to_string()),
        "the offset {at} (in the transfer at {transfer_at}) is named: {}",
        out.stderr
    );
    let bad: u64 = run["phases"].as_array().unwrap().iter().filter_map(|p| p["verify"]["bad"].as_u64()).sum();
    assert_eq!(bad, 1, "exactly the corrupted transfer is bad");
}

/// A cgroup v1 blkio group of its own, removed on drop.
struct Blkio(std::path::PathBuf);

impl Blkio {
    fn new(name: &str) -> Option<Blkio> {
        let root = std::path::Path::new("/sys/fs/cgroup/blkio");
        if !root.join("blkio.throttle.read_bps_device").exists() {
            skip(
                "the test drives the cgroup v1 blkio controller (/sys/fs/cgroup/blkio), which this host does not mount",
            );
            return None;
        }
        let dir = root.join(format!("iosurvey-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot make the blkio group {}: {e}", dir.display()));
        Some(Blkio(dir))
    }

    /// The command that sets `dev`'s read limit to `bps` (0 lifts it).
    fn limit(&self, dev: &str, bps: u64) -> String {
        format!("echo {dev} {bps} > {}/blkio.throttle.read_bps_device", self.0.display())
    }

    /// `iosurvey` with `args`, started inside the group.
    fn iosurvey(&self, args: &[&str]) -> Out {
        let bin = env!("CARGO_BIN_EXE_iosurvey");
        let quoted: Vec<String> = args.iter().map(|a| format!("'{}'", a.replace('\'', r"'\''"))).collect();
        let script = format!("echo $$ > {}/cgroup.procs && exec {bin} {}", self.0.display(), quoted.join(" "));
        outcome(Command::new("sh").arg("-c").arg(script).output().unwrap())
    }
}

impl Drop for Blkio {
    fn drop(&mut self) {
        // Emptied once its processes have ended; retried while the kernel lets go.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

#[test]
fn events_throttle_and_lift_and_the_time_line_gives_before_during_after_and_recovery() {
    let Some(l) = loop_dev(1024) else { return };
    let Some(cg) = Blkio::new("events") else { return };
    let dev = l.dev_number();
    let mib = 1u64 << 20;
    sh(&cg.limit(&dev, 100 * mib));
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    let (throttle, lift) = (format!("2s:{}", cg.limit(&dev, 25 * mib)), format!("5s:{}", cg.limit(&dev, 100 * mib)));
    let failing = "6s:exit 7";
    let out = cg.iosurvey(&[
        "run",
        "--db",
        &db,
        "--device",
        &l.dev,
        "--op",
        "read",
        "--stonewall",
        "8",
        "--interval",
        "0.5",
        "--event",
        &throttle,
        "--event",
        &lift,
        "--event",
        failing,
        "--event",
        "60s:true",
    ]);
    assert_eq!(out.code, 0, "a failing event does not fail the run: {}", out.stderr);
    let run = Bed { db: db.clone(), ..Bed::new() }.last_run();
    let events = run["events"].as_array().unwrap();
    assert_eq!(events.len(), 4);
    assert_eq!(events[2]["ran"]["status"], 7, "the failed event is stored with its status");
    assert!(events[3]["started_ns"].is_null() && events[3]["ran"].is_null(), "an event after the run is not reached");
    let warnings = run["warnings"].to_string();
    assert!(warnings.contains("event at 6.0 s (exit 7) failed: exit status 7"), "{warnings}");
    assert!(warnings.contains("was not reached"), "{warnings}");
    // The stored time line shows the drop: the series' intervals during the throttle run at
    // about a quarter of those before it. The windows come from when the events' commands
    // ran (stored on the series' clock), not from the times asked for: on a loaded machine a
    // shell starts late, and an interval before the limit took hold is not a throttled one.
    let p = &run["phases"][0];
    let rates: Vec<f64> =
        p["series"]["bytes"].as_array().unwrap().iter().map(|b| b.as_f64().unwrap() / 0.5 / mib as f64).collect();
    let (origin, step) = (p["series"]["origin_ns"].as_f64().unwrap(), p["series"]["interval_ns"].as_f64().unwrap());
    let began = |e: &serde_json::Value| (e["started_ns"].as_f64().unwrap() - origin) / step;
    let ended = |e: &serde_json::Value| began(e) + e["ran"]["secs"].as_f64().unwrap() * 1e9 / step;
    // Whole intervals from..to (in intervals since the origin), the first one left out as a
    // phase's ramp.
    let mean = |from: f64, to: f64| {
        let within: Vec<f64> =
            (from.ceil().max(1.0) as usize..(to.floor() as usize).min(rates.len())).map(|i| rates[i]).collect();
        assert!(within.len() >= 2, "at least two intervals between {from:.1} and {to:.1}: {rates:?}");
        within.iter().sum::<f64>() / within.len() as f64
    };
    let (before, during, after) = (
        mean(0.0, began(&events[0])),
        mean(ended(&events[0]), began(&events[1])),
        mean(ended(&events[1]) + 1.0, ended(&events[1]) + 5.0),
    );
    assert!((80.0..=125.0).contains(&before) && (80.0..=125.0).contains(&after), "{rates:?}");
    assert!(during / before > 0.15 && during / before < 0.35, "{rates:?}");
    // show's findings say the same, with the recovery 0 to 2 intervals after the lift.
    let shown = iosurvey(&["show", &run["id"].to_string(), "--db", &db]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let line = shown.stdout.lines().find(|l| l.contains("during,")).unwrap_or_else(|| panic!("{}", shown.stdout));
    let share: f64 = line.split("during, ").nth(1).unwrap().split('%').next().unwrap().parse().unwrap();
    assert!((15.0..=35.0).contains(&share), "{line}");
    let recovery: f64 =
        line.split("for 3 intervals ").nth(1).unwrap().split(" s after").next().unwrap().parse().unwrap();
    assert!((0.0..=1.0).contains(&recovery), "within 2 intervals of 0.5 s: {line}");
}

#[test]
fn a_target_survey_of_six_devices_names_the_throttled_one_and_scales_over_1_2_4_6() {
    let mut loops = Vec::new();
    for _ in 0..6 {
        let Some(l) = loop_dev(32) else { return };
        loops.push(l);
    }
    let Some(cg) = Blkio::new("targets") else { return };
    // Five steady targets and a slow one: the page cache alone would spread them widely.
    for l in &loops {
        sh(&cg.limit(&l.dev_number(), 64 << 20));
    }
    let slow = &loops[3];
    sh(&cg.limit(&slow.dev_number(), 16 << 20));
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    let devices: Vec<&str> = loops.iter().map(|l| l.dev.as_str()).collect();
    let list = devices.join(",");
    let before: Vec<u64> = loops.iter().map(|l| hash(&l.bytes())).collect();
    let out =
        cg.iosurvey(&["targets", "--db", &db, "--device", &list, "--streams", "2", "--repetitions", "2", "-t", "1m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after: Vec<u64> = loops.iter().map(|l| hash(&l.bytes())).collect();
    assert_eq!(before, after, "a read survey (the default on devices) writes nothing");
    let name = slow.dev.trim_start_matches("/dev/");
    let line =
        out.stdout.lines().find(|l| l.contains(&format!("{name}: "))).unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(line.contains("below the median"), "{line}");
    let share: f64 = line.split(": ").nth(2).unwrap().split('%').next().unwrap().parse().unwrap();
    assert!((60.0..=90.0).contains(&share), "16 MiB/s against 64: 75% below: {line}");
    let apart = out
        .stdout
        .lines()
        .filter(|l| {
            l.starts_with("t1 read: ") && l.contains("% below the median") || l.contains("% above the median (")
        })
        .count();
    assert_eq!(apart, 1, "only the throttled one stands apart: {}", out.stdout);
    // The k-at-once table has rows 1, 2, 4, 6, each from 2 runs.
    let table: Vec<&str> =
        out.stdout.lines().skip_while(|l| !l.contains("k targets at once")).skip(2).take(4).collect();
    let ks: Vec<&str> = table.iter().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(ks, ["1", "2", "4", "6"], "{}", out.stdout);
    // Stored as one group that show lays out again.
    let shown = iosurvey(&["show", "t1", "--db", &db]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(shown.stdout.contains(line), "{}", shown.stdout);
    let runs = Bed { db: db.clone(), ..Bed::new() }.runs();
    assert_eq!(runs.len(), 6 * 2 + 4 * 2);
}

#[test]
fn a_campaign_runs_on_a_device_target_with_its_events_and_refuses_other_kinds_there() {
    let Some(l) = loop_dev(16) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    let log = tmp.path().join("events.log");
    let file = tmp.path().join("c.toml");
    let write = |studies: &str| {
        std::fs::write(
            &file,
            format!(
                "[campaign]\nname = \"lun\"\n[[target]]\nlabel = \"lun0\"\ndevice = \"{}\"\n{studies}\
                 [[event]]\nstudy = \"read\"\nat = \"0s\"\ncommand = \"echo $IOSURVEY_EVENT_AT >> {}\"\n",
                l.dev,
                log.display()
            ),
        )
        .unwrap()
    };
    write("[[study]]\nname = \"read\"\nkind = \"run\"\nop = \"read\"\ntransfer = \"64k\"\nclients = \"1,2\"\n");
    let plan = iosurvey(&["campaign", "plan", file.to_str().unwrap(), "--db", &db]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(
        plan.stdout.contains(&format!("--device {}", l.dev)) && plan.stdout.contains("--event '0s:echo"),
        "{}",
        plan.stdout
    );
    let before = hash(&l.bytes());
    let out = iosurvey(&["campaign", "run", file.to_str().unwrap(), "--db", &db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(hash(&l.bytes()), before, "a read study writes nothing");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "0\n0\n", "the event ran once in each point's run");
    let runs = Bed { db: db.clone(), ..Bed::new() }.runs();
    assert_eq!(runs.len(), 2);
    // Stored whole: a second run of the campaign has nothing left to run on the device.
    let again = iosurvey(&["campaign", "run", file.to_str().unwrap(), "--db", &db]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(Bed { db: db.clone(), ..Bed::new() }.runs().len(), 2, "{}", again.stdout);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "0\n0\n");
    // An event that matches no point is refused, not left to never fire.
    write("[[study]]\nname = \"read\"\nkind = \"run\"\nop = \"read\"\nclients = \"1,2\"\n[[event]]\nstudy = \"read\"\nclients = 3\nat = \"1s\"\ncommand = \"true\"\n");
    let out = iosurvey(&["campaign", "plan", file.to_str().unwrap(), "--db", &db]);
    assert_one_line_error(&out, 2, &["matches no point of study 'read'"]);
    // A study of another kind on the device is refused before anything runs.
    write(
        "[[study]]\nname = \"read\"\nkind = \"run\"\nop = \"read\"\n[[study]]\nname = \"battery\"\nkind = \"survey\"\n",
    );
    let out = iosurvey(&["campaign", "run", file.to_str().unwrap(), "--db", &db]);
    assert_one_line_error(&out, 2, &["study 'battery' (kind survey) would run on the block device of target 'lun0'"]);
}

/// The bytes of `l`'s image from `at`, `len` of them, once what a loop device over `l` wrote
/// into `l`'s cache has reached the image.
fn region(l: &Loop, at: usize, len: usize) -> u64 {
    sh(&format!("blockdev --flushbufs {}", l.dev));
    hash(&l.bytes()[at..at + len])
}

#[test]
fn a_loop_over_a_mounted_device_is_not_written_even_past_its_signature() {
    let Some(l) = loop_dev(64) else { return };
    ext4(&l.dev);
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    let mnt = Mounted::new(&l.dev, &tmp.path().join("mnt"));
    // A view of the mounted file system 16 MiB in: no signature there, nothing mounted on it.
    let over = Over::new(&l.dev, "16M");
    let before = region(&l, 16 << 20, 4 << 20);
    let out = run_on(&db, &["--device", &over.0, "--op", "write", "--destroy-data", &over.0, "--size", "4m"]);
    let name = l.dev.trim_start_matches("/dev/");
    assert_one_line_error(&out, 2, &[&format!("it stands on {name}, which is mounted at {}", mnt.0.display())]);
    assert_eq!(region(&l, 16 << 20, 4 << 20), before, "nothing written through the view");
    assert!(Bed { db: db.clone(), ..Bed::new() }.runs().is_empty());
    // Unmounted, the same view may be written: the chain holds nothing in use any more.
    drop(mnt);
    let out = run_on(&db, &["--device", &over.0, "--op", "write", "--destroy-data", &over.0, "--size", "4m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_ne!(region(&l, 16 << 20, 4 << 20), before);
}

#[test]
fn a_second_loop_over_the_image_of_a_mounted_loop_is_not_written_by_any_name_of_it() {
    let Some(l) = loop_dev(64) else { return };
    ext4(&l.dev);
    let image = l.scratch.path().join("disk.img");
    let link = l.scratch.path().join("link.img");
    std::fs::hard_link(&image, &link).unwrap();
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = tmp.path().join("s.db").display().to_string();
    let mnt = Mounted::new(&l.dev, &tmp.path().join("mnt"));
    let before = region(&l, 16 << 20, 4 << 20);
    let name = l.dev.trim_start_matches("/dev/");
    // By the image's own name, and by another name of the same file (its inode is compared).
    for backing in [&image, &link] {
        let over = Over::new(backing.to_str().unwrap(), "16M");
        let out = run_on(&db, &["--device", &over.0, "--op", "write", "--destroy-data", &over.0, "--size", "4m"]);
        assert_one_line_error(&out, 2, &[&format!("is also the backing file of {name}, which is mounted at")]);
        assert_eq!(region(&l, 16 << 20, 4 << 20), before, "nothing written through {}", backing.display());
    }
    // The name the mounted loop was set up with removed: its backing file reads "(deleted)",
    // and the other name still reaches the same inode.
    std::fs::remove_file(&image).unwrap();
    let over = Over::new(link.to_str().unwrap(), "16M");
    let out = run_on(&db, &["--device", &over.0, "--op", "write", "--destroy-data", &over.0, "--size", "4m"]);
    assert_one_line_error(&out, 2, &[&format!("is also the backing file of {name}, which is mounted at")]);
    assert!(Bed { db: db.clone(), ..Bed::new() }.runs().is_empty());
    // Unmounted, nothing else uses the file: written.
    drop(mnt);
    let out = run_on(&db, &["--device", &over.0, "--op", "write", "--destroy-data", &over.0, "--size", "4m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_loop_backed_by_the_store_or_another_database_is_not_written() {
    if !is_root() {
        return skip("loop devices need root");
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let db = tmp.path().join("s.db");
    let dbs = db.display().to_string();
    let dir = tmp.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let out = iosurvey(&["run", "--db", &dbs, "-q", "--dir", dir.to_str().unwrap(), "--size", "1m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::File::options().write(true).open(&db).unwrap().set_len(16 << 20).unwrap();
    let store = || hash(&std::fs::read(&db).unwrap());
    let before = store();
    let link = tmp.path().join("another-name");
    std::fs::hard_link(&db, &link).unwrap();
    // The store itself, and the store by another name: refused even past the signature.
    for backing in [&db, &link] {
        let over = Over::new(backing.to_str().unwrap(), "0");
        let out = run_on(
            &dbs,
            &["--device", &over.0, "--op", "write", "--destroy-data", &over.0, "--ignore-signature", "--size", "4m"],
        );
        assert_one_line_error(&out, 2, &["its backing file", "is the result store (--db)"]);
        assert_eq!(store(), before, "the store is untouched");
    }
    let ls = iosurvey(&["ls", "--db", &dbs]);
    assert_eq!(ls.code, 0, "the store still reads: {}", ls.stderr);
    // A copy of the store is another database: its header is a signature.
    let copy = tmp.path().join("copy.db");
    std::fs::copy(&db, &copy).unwrap();
    let over = Over::new(copy.to_str().unwrap(), "0");
    let other = tmp.path().join("other.db").display().to_string();
    let out = run_on(&other, &["--device", &over.0, "--op", "write", "--destroy-data", &over.0, "--size", "4m"]);
    assert_one_line_error(&out, 2, &["holds an SQLite database", "--ignore-signature"]);
}
