//! End-to-end tests of the `iosurvey` binary on real temporary file systems.
//!
//! Tests that need root (mounting a small tmpfs, running as another user, dropping caches)
//! check first and skip through `common::skip` (a failure under `CI=true` unless allowed).

mod common;

use common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

use std::process::Command;

#[test]
fn shared_file_layouts_put_each_task_exactly_where_ior_would() {
    for layout in ["segmented", "strided"] {
        let bed = Bed::new();
        let out = bed.run(&format!("--access shared --layout {layout} --transfer 4k --block 12k --segments 2 --tasks 3 --op write --verify --signature 9 --keep"));
        assert_eq!(out.code, 0, "{}", out.stderr);
        let slots = headers(&bed.dir.join("iosurvey.shared"), 4096, 9);
        assert_eq!(slots.len(), 18, "2 segments x 3 tasks x 3 transfers");
        for (k, &(task, offset)) in slots.iter().enumerate() {
            let at = k as u64 * 4096;
            let owner = match layout {
                "segmented" => (at % (36 * 1024)) / (12 * 1024),
                _ => k as u64 % 3,
            };
            assert_eq!((task, offset), (owner, at), "{layout} slot {k}");
        }
    }
}

#[test]
fn file_per_task_gives_each_task_its_own_contiguous_file() {
    let bed = Bed::new();
    let out = bed.run("--transfer 4k --block 8k --segments 2 --tasks 3 --op write --verify --signature 3 --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    for task in 0..3u64 {
        let slots = headers(&bed.dir.join(format!("iosurvey.{task:06}")), 4096, 3);
        assert_eq!(slots, (0..4).map(|k| (task, k * 4096)).collect::<Vec<_>>());
    }
}

#[test]
fn every_pattern_writes_every_transfer_exactly_once_and_reads_back_verified() {
    for pattern in ["random", "backward", "stride:3", "sequential"] {
        let bed = Bed::new();
        let out = bed.run(&format!("--access shared --pattern {pattern} --transfer 4k --block 40k --segments 3 --tasks 3 --verify --signature 4 --keep"));
        assert_eq!(out.code, 0, "{pattern}: {}", out.stderr);
        let slots = headers(&bed.dir.join("iosurvey.shared"), 4096, 4);
        // 90 slots all written with the right header, by 90 write calls: each exactly once.
        assert_eq!(slots.len(), 90);
        let run = bed.last_run();
        assert_eq!(run["phases"][0]["figures"]["ops"], 90, "{pattern}");
        assert_eq!(run["phases"][1]["verify"]["checked"], 90);
        assert_eq!(run["phases"][1]["verify"]["bad"], 0);
    }
}

#[test]
fn verification_finds_a_flipped_byte_and_names_where() {
    let bed = Bed::new();
    let out = bed.run("--transfer 4k --block 64k --op write --verify --signature 5 --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let file = bed.dir.join("iosurvey.000000");
    let mut data = fs::read(&file).unwrap();
    data[20000] ^= 0x40;
    fs::write(&file, &data).unwrap();
    let out = bed.run("--transfer 4k --block 64k --op read --verify --signature 5");
    assert_one_line_error(
        &out,
        3,
        &["1 of 16 transfers bad", "offset 20000", "expected 0x", "found 0x", "iosurvey.000000"],
    );
    let run = bed.last_run();
    assert_eq!(run["status"], "failed");
    assert_eq!(run["phases"][0]["verify"]["bad"], 1);
    assert!(file.exists(), "the read run did not create the file, so it must not remove it");
}

#[test]
fn verification_recognises_data_of_an_earlier_run_as_stale() {
    let bed = Bed::new();
    assert_eq!(bed.run("--transfer 4k --block 32k --op write --verify --keep").code, 0);
    let out = bed.run("--transfer 4k --block 32k --op read --verify");
    assert_one_line_error(&out, 3, &["8 of 8 transfers bad", "8 written by another run (stale)"]);
}

#[test]
fn direct_io_runs_random_and_verified() {
    let bed = Bed::new();
    let out = bed.run("--pattern random --transfer 4k --block 1m --tasks 2 --direct --verify");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    assert_eq!(run["workload"]["direct"], true);
    assert_eq!(run["phases"][1]["verify"]["checked"], 512);
    assert_eq!(run["phases"][1]["possibly_cached"], Value::Null, "direct reads bypass the page cache");
    assert!(bed.entries().is_empty(), "files removed: {:?}", bed.entries());
}

#[test]
fn reorder_reads_the_neighbours_data_and_verifies() {
    for access in ["file-per-task", "shared"] {
        let bed = Bed::new();
        let out = bed.run(&format!("--access {access} --transfer 4k --block 64k --tasks 3 --reorder --verify"));
        assert_eq!(out.code, 0, "{access}: {}", out.stderr);
        assert_eq!(bed.last_run()["phases"][1]["verify"]["checked"], 48);
    }
}

#[test]
fn bad_input_gets_one_line_exit_2_and_stores_nothing() {
    let bed = Bed::new();
    let cases: [(&str, &[&str]); 5] = [
        ("--transfer 1q", &["'1q'"]),
        ("--transfer 2m --block 1m", &["larger than block"]),
        ("--transfer 3k --block 10k", &["not a multiple", "--block 9216"]),
        ("--transfer 1000 --block 3000 --direct", &["multiple of"]),
        ("--block 100t", &["needs 100 TiB", "free"]),
    ];
    for (args, needles) in cases {
        assert_one_line_error(&bed.run(args), 2, needles);
    }
    assert!(bed.runs().is_empty());
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

/// Every engine's name, as the registry gives it (`iosurvey engines --all --json`).
fn registry_engines() -> Vec<String> {
    let out = iosurvey(&["engines", "--all", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let engines: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    engines.iter().map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn an_engine_the_registry_does_not_know_is_refused_before_anything_is_made() {
    let engines = registry_engines();
    assert!(engines.len() > 1, "{engines:?}");
    let bed = Bed::new();
    let missing = bed.dir.join("leaf");
    for (dir, typo) in [(&missing, "io_urin"), (&bed.dir, "nope")] {
        let out = iosurvey(&["run", "--dir", dir.to_str().unwrap(), "--db", &bed.db, "--engine", typo]);
        let mut needles = vec!["--engine", typo, "engine registry"];
        needles.extend(engines.iter().map(String::as_str));
        assert_one_line_error(&out, 2, &needles);
        assert!(!Path::new(&bed.db).exists(), "no store made for '{typo}'");
        assert!(!missing.exists() && bed.entries().is_empty(), "nothing made in the target for '{typo}'");
    }
    let out = iosurvey(&["run", "--dir", missing.to_str().unwrap(), "--db", &bed.db, "--engine", "io_urin"]);
    assert!(out.stderr.contains("give --engine io_uring (the nearest name)"), "{}", out.stderr);
    // The help names every engine of the registry too.
    let help = iosurvey(&["run", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    // Its lines up to the next option (the help is wrapped at the terminal's width).
    let mut lines = help.stdout.lines().skip_while(|l| !l.trim_start().starts_with("--engine"));
    let first = lines.next().into_iter();
    let text: Vec<&str> = first.chain(lines.take_while(|l| !l.trim_start().starts_with('-'))).collect();
    for name in &engines {
        assert!(text.iter().any(|l| l.contains(name.as_str())), "--engine's help lacks {name}: {text:?}");
    }
}

#[test]
fn targets_that_are_missing_root_or_foreign_are_refused() {
    let bed = Bed::new();
    let db = bed.db.clone();
    let missing = bed.dir.join("nope/deeper").display().to_string();
    assert_one_line_error(
        &iosurvey(&["run", "--dir", &missing, "--db", &db]),
        2,
        &["does not exist", "nor does its parent"],
    );
    // A missing leaf is made, and removed with the run's files.
    let leaf = bed.dir.join("leaf").display().to_string();
    let out = iosurvey(&["run", "--dir", &leaf, "--db", &db, "--block", "1m", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_one_line_error(&iosurvey(&["run", "--dir", "/", "--db", &db]), 2, &["root directory"]);
    fs::write(bed.dir.join("precious.dat"), b"keep me").unwrap();
    assert_one_line_error(&bed.run("--block 1m"), 2, &["did not create", "precious.dat", "--force"]);
    let out = bed.run("--block 1m --tasks 2 --force");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(bed.entries(), vec!["precious.dat"], "only iosurvey's own files are removed");
    assert_eq!(fs::read(bed.dir.join("precious.dat")).unwrap(), b"keep me");
}

#[test]
fn enospc_mid_write_fails_the_run_stores_it_failed_and_cleans_up() {
    let Some(fs) = Tmpfs::mount("size=4m") else { return };
    let bed = &fs.bed;
    let out = bed.run("--block 16m --tasks 2 --no-space-check");
    assert_one_line_error(&out, 1, &["No space left on device", "iosurvey.00000", "free space"]);
    let runs = bed.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "failed");
    let run = bed.last_run();
    assert!(run["error"].as_str().unwrap().contains("No space left"));
    assert_eq!(run["phases"].as_array().unwrap().len(), 1, "the write phase, partial; no read after it");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

#[test]
fn a_read_only_directory_is_refused_before_the_run() {
    let Some(fs) = Tmpfs::mount("ro,size=1m") else { return };
    let out = fs.bed.run("--block 1m");
    assert_one_line_error(&out, 2, &["mounted read-only", "the run writes"]);
    assert!(fs.bed.runs().is_empty());
}

#[test]
fn permission_denied_is_one_line_and_stores_nothing() {
    if !is_root() || Command::new("setpriv").arg("--version").output().is_err() {
        skip("running as another user needs root and setpriv");
        return;
    }
    let bed = Bed::new();
    // The store must be writable by the unprivileged user; the target must not be.
    let store_dir = bed.tmp.path().join("open");
    fs::create_dir(&store_dir).unwrap();
    Command::new("chmod").args(["0777"]).arg(&store_dir).status().unwrap();
    Command::new("chmod").args(["0755"]).arg(bed.tmp.path()).status().unwrap();
    let db = store_dir.join("s.db").display().to_string();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_iosurvey"), "run", "--dir"])
        .arg(&bed.dir)
        .args(["--block", "1m", "--db", &db])
        .output()
        .unwrap();
    let out = outcome(out);
    if out.stderr.contains("Permission denied") && out.stderr.contains("store") {
        skip("the unprivileged user cannot reach the test's store here");
        return;
    }
    assert_one_line_error(&out, 2, &["Permission denied", "permissions"]);
    assert!(bed.entries().is_empty());
}

#[test]
fn a_run_round_trips_through_the_store_and_its_json_file() {
    let bed = Bed::new();
    let json = bed.tmp.path().join("run.json");
    let out = bed
        .run(&format!("--transfer 64k --block 1m --tasks 2 --iterations 3 --fsync --json {}", json.to_str().unwrap()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("run "), "quiet prints the id only: {}", out.stdout);
    let from_file: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    let stored = bed.last_run();
    assert_eq!(from_file, stored);
    assert_eq!(stored["phases"].as_array().unwrap().len(), 6);
    assert_eq!(stored["env"]["fs_type"].as_str().map(str::is_empty), Some(false));
    assert!(stored["command_line"].as_str().unwrap().contains("--iterations 3"));
    for p in stored["phases"].as_array().unwrap() {
        assert_eq!(p["figures"]["bytes"], 2 * 1024 * 1024);
        assert_eq!(p["tasks"].as_array().unwrap().len(), 2);
    }
    let text = iosurvey(&["show", &stored["id"].to_string(), "--db", &bed.db]);
    assert!(text.stdout.contains("over 3 iterations") && text.stdout.contains("MiB/s"), "{}", text.stdout);
    assert!(out.stderr.is_empty(), "no progress bar when stderr is not a terminal: {}", out.stderr);
}

#[test]
fn stonewall_stops_early_and_wear_out_evens_the_tasks() {
    let bed = Bed::new();
    let out = bed.run("--op write --transfer 4k --block 2g --tasks 2 --stonewall 0.2 --wear-out --no-space-check");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let tasks = run["phases"][0]["tasks"].as_array().unwrap();
    let ops: Vec<u64> = tasks.iter().map(|t| t["ops"].as_u64().unwrap()).collect();
    assert!(ops[0] < 2 * 262144, "stopped before the end: {ops:?}");
    assert_eq!(ops[0], ops[1], "wear-out brings every task to the same count");
}

#[test]
fn reads_after_a_stonewalled_write_cover_only_what_was_written() {
    let bed = Bed::new();
    let out = bed.run("--pattern random --transfer 4k --block 2g --tasks 2 --stonewall 0.2 --verify --no-space-check");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let ops = |phase: usize| -> Vec<u64> {
        run["phases"][phase]["tasks"].as_array().unwrap().iter().map(|t| t["ops"].as_u64().unwrap()).collect()
    };
    let (written, read) = (ops(0), ops(1));
    let least = *written.iter().min().unwrap();
    assert!(read.iter().all(|&r| r <= least), "written {written:?}, read {read:?}");
    assert_eq!(run["phases"][1]["verify"]["bad"], 0);
}

#[test]
fn dropping_caches_clears_the_cache_flag_on_a_disk() {
    let bed = Bed::new();
    let out = bed.run("--transfer 1m --block 8m --drop-caches");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let read = &run["phases"][1];
    if !is_root() {
        assert_eq!(read["caches_dropped"], false);
        assert!(run["warnings"][0].as_str().unwrap().contains("root"));
        assert!(read["possibly_cached"].is_string());
        return;
    }
    assert_eq!(read["caches_dropped"], true);
    let memory_fs = ["tmpfs", "ramfs"].contains(&run["env"]["fs_type"].as_str().unwrap());
    assert_eq!(read["possibly_cached"].is_string(), memory_fs, "{read}");
}

#[test]
fn survey_runs_the_battery_stores_it_and_leaves_nothing_behind() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    // Not quiet: -q prints the run ids only (survey_quiet_prints_only_the_run_ids).
    let out = iosurvey(&["survey", &dir, "--size", "32m", "--random-secs", "0.2", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for needle in ["seq-file-per-task", "random-4k", "IOPS", "seq-shared", "± write", "N-to-1 write", "3 and 3 runs"] {
        assert!(out.stdout.contains(needle), "'{needle}' missing:\n{}", out.stdout);
    }
    // Three repetitions by default, each workload a row with its interval, and the finding
    // either a share with its interval or "cannot be told apart".
    let row = out.stdout.lines().find(|l| l.trim_start().starts_with("seq-shared")).unwrap();
    assert_eq!(row.split_whitespace().nth(1), Some("3"), "{row}");
    assert!(out.stdout.contains("% of N-to-N (95% t-interval") || out.stdout.contains("cannot be told apart"));
    let runs = bed.runs();
    assert_eq!(runs.len(), 9);
    assert!(runs.iter().all(|r| r["survey_id"] == runs[0]["survey_id"] && r["status"] == "ok"));
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    // One repetition: single samples, said so.
    let out =
        iosurvey(&["survey", &dir, "--size", "32m", "--random-secs", "0.2", "--repetitions", "1", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("no interval; --repetitions 3 gives one"), "{}", out.stdout);
}

#[test]
fn an_interrupt_stops_the_run_stores_it_failed_and_cleans_up() {
    let bed = Bed::new();
    let child = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["run", "--dir", bed.dir.to_str().unwrap(), "--db", &bed.db, "-q", "--transfer", "4k", "--block", "4g"])
        .args(["--tasks", "2", "--fsync-each", "--no-space-check"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run has started writing, then interrupt it.
    wait_until("the second task's first write", 20, || {
        fs::metadata(bed.dir.join("iosurvey.000001")).is_ok_and(|m| m.len() > 0)
    });
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let run = bed.last_run();
    assert_eq!(run["status"], "failed");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_started_by_a_launcher_refuses() {
    let bed = Bed::new();
    for (var, value) in [("OMPI_COMM_WORLD_SIZE", "4"), ("SLURM_STEP_NUM_TASKS", "2"), ("PMIX_RANK", "1")] {
        let out = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
            .args(["run", "--dir", bed.dir.to_str().unwrap(), "--db", &bed.db, "--block", "1m"])
            .env(var, value)
            .output()
            .unwrap();
        let out = outcome(out);
        assert_one_line_error(&out, 2, &["built without MPI", var, "--features mpi"]);
    }
    assert!(bed.runs().is_empty());
    assert!(bed.entries().is_empty());
}

#[test]
fn a_bare_command_prints_help_and_missing_arguments_are_named() {
    let out = iosurvey(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("Usage:") && out.stdout.contains("survey"), "{}", out.stdout);
    let out = iosurvey(&["run"]);
    assert_one_line_error(&out, 2, &["required arguments were not provided", "--dir"]);
}

#[test]
fn a_value_with_an_escape_sequence_is_shown_escaped_not_stripped() {
    // Stripped, the value would read '1', a valid id.
    let out = iosurvey(&["show", "\x1b[31m1", "--db", "/nonexistent/x.db"]);
    assert_one_line_error(&out, 2, &["'\\x1b[31m1' is not a run id"]);
    assert!(!out.stderr.contains("'1'"), "{}", out.stderr);
    let out = iosurvey(&["completions", "b\x1b]0;x\x07sh"]);
    assert_one_line_error(&out, 2, &["'b\\x1b]0;x\\x07sh'"]);
}

#[test]
fn manpages_into_a_relative_man1_name_the_directory_man_takes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = common::outcome(
        Command::new(env!("CARGO_BIN_EXE_iosurvey"))
            .current_dir(tmp.path())
            .args(["manpages", "man1"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("in man1 (man -M . iosurvey)"), "{}", out.stdout);
    assert!(tmp.path().join("man1/iosurvey-run.1").is_file());
}

#[test]
fn ls_names_groups_that_show_takes_with_time_host_and_target() {
    let bed = Bed::new();
    assert_eq!(bed.run("--block 1m --clients 1,2 --tasks 2").code, 0);
    assert_eq!(bed.run("--pattern random --transfer 4k --block 1m").code, 0);
    let ls = iosurvey(&["ls", "--db", &bed.db]);
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    let row = |id: &str| ls.stdout.lines().find(|l| l.trim_start().starts_with(&format!("{id} "))).unwrap();
    let dir = bed.dir.to_str().unwrap();
    assert!(row("1").contains(" w1 ") && row("1").contains("UTC") && row("1").contains(dir), "{}", ls.stdout);
    assert!(row("1").contains("MiB/s") && row("3").contains("IOPS"), "random runs show IOPS: {}", ls.stdout);
    assert!(row("3").contains("IOPS*") && ls.stdout.contains("possibly the page cache"), "{}", ls.stdout);
    for (format, needle) in [("csv", "id,group,label,started"), ("md", "| id | group |"), ("json", "\"tables\"")] {
        let out = iosurvey(&["ls", "--format", format, "--db", &bed.db]);
        assert!(out.code == 0 && out.stdout.contains(needle), "{format}: {}", out.stdout);
    }
    let sweep = iosurvey(&["show", "w1", "--db", &bed.db]);
    assert_eq!(sweep.code, 0, "{}", sweep.stderr);
    assert!(sweep.stdout.contains("sweep") || sweep.stdout.contains("clients"), "{}", sweep.stdout);
    let json = iosurvey(&["show", "w1", "--json", "--db", &bed.db]);
    let points: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(points.as_array().unwrap().len(), 2);
    assert_one_line_error(&iosurvey(&["show", "s9", "--db", &bed.db]), 2, &["no runs of s9"]);
    assert_one_line_error(&iosurvey(&["show", "x1", "--db", &bed.db]), 2, &["'x1' is not a run id"]);
}

#[test]
fn json_to_stdout_is_the_only_output_and_a_sweep_keeps_every_point() {
    let bed = Bed::new();
    for quiet in [true, false] {
        let dir = bed.dir.display().to_string();
        let mut args = vec!["run", "--dir", dir.as_str(), "--db", bed.db.as_str(), "--block", "1m", "--json", "-"];
        if quiet {
            args.push("-q");
        }
        let out = iosurvey(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let doc: Value = serde_json::from_str(&out.stdout).expect("stdout is exactly one JSON document");
        assert_eq!(doc["status"], "ok");
    }
    let out = bed.run("--block 1m --tasks 3 --clients 1..3 --json -");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let points: Value = serde_json::from_str(&out.stdout).expect("one JSON document");
    let tasks: Vec<u64> = points.as_array().unwrap().iter().map(|p| p["workload"]["tasks"].as_u64().unwrap()).collect();
    assert_eq!(tasks, [1, 2, 3]);
}

/// `rounds` rounds of one run per (label, arguments), in turn, each stored under its label.
fn runs_by_label(bed: &Bed, rounds: usize, labelled: &[(&str, &str)]) {
    for _ in 0..rounds {
        for (label, args) in labelled {
            let out = bed.run(&format!("{args} --label {label}"));
            assert_eq!(out.code, 0, "{label}: {}", out.stderr);
        }
    }
}

#[test]
fn runs_under_two_labels_are_compared_like_with_like() {
    let bed = Bed::new();
    runs_by_label(
        &bed,
        3,
        &[
            ("fast", "--engine delay:200us --transfer 4k --block 128k"),
            ("slow", "--engine delay:2ms --transfer 4k --block 128k"),
        ],
    );
    let only = iosurvey(&["ls", "--db", &bed.db, "--label", "fast", "--json"]);
    let rows: Vec<Value> = serde_json::from_str(&only.stdout).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r["system"] == "fast"));
    let out = iosurvey(&["compare", "fast", "slow", "--db", &bed.db, "--format", "csv"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.contains("times faster")).collect();
    assert_eq!(lines.len(), 2, "write and read: {}", out.stdout);
    assert!(lines.iter().all(|l| l.contains("fast is ") && l.contains(" times faster than slow")), "{}", out.stdout);
    let out = iosurvey(&["compare", "fast", "nothing", "--db", &bed.db]);
    assert_one_line_error(&out, 2, &["no runs for 'nothing'"]);
    let out = iosurvey(&["run", "--dir", "/tmp/x", "--label", ""]);
    assert_eq!(out.code, 2);
}

#[test]
fn runs_with_and_without_o_direct_are_not_compared_and_the_difference_is_named() {
    // On the disk the scratch directory is on (O_DIRECT, as direct_io_runs_random_and_verified).
    let bed = Bed::new();
    runs_by_label(
        &bed,
        2,
        &[("buffered", "--transfer 4k --block 128k"), ("odirect", "--transfer 4k --block 128k --direct")],
    );
    let out = iosurvey(&["compare", "buffered", "odirect", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for pooled in ["times faster", "no difference", "single run", "MiB/s"] {
        assert!(!out.stdout.contains(pooled), "no row sets them side by side ({pooled}): {}", out.stdout);
    }
    let said: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not compared")).collect();
    assert_eq!(said.len(), 1, "{}", out.stdout);
    assert!(
        said[0]
            .ends_with("buffered's runs and odirect's differ in direct (buffered: false, odirect: true): not compared"),
        "{}",
        said[0]
    );
    let doc: Value = serde_json::from_str(
        &iosurvey(&["compare", "buffered", "odirect", "--db", &bed.db, "--format", "json"]).stdout,
    )
    .unwrap();
    assert_eq!(doc["tables"][0]["rows"], Value::Array(vec![]), "nothing compared");
    let apart: Vec<&str> =
        doc["tables"][1]["rows"].as_array().unwrap().iter().map(|r| r[1].as_str().unwrap()).collect();
    assert!(apart.iter().any(|w| w.ends_with("[direct=true]")) && apart.iter().any(|w| w.ends_with("[direct=false]")));
}

#[test]
fn a_report_is_one_self_contained_html_page_with_findings_and_charts() {
    let bed = Bed::new();
    let out = bed.run("--engine delay:300us --transfer 64k --block 1m --tasks 4 --clients 1,2,4 --label x");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = bed.tmp.path().join("report.html");
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("report of 3 runs written to"), "{}", out.stdout);
    let html = fs::read_to_string(&page).unwrap();
    // A matrix the store does not hold is named, not taken for an empty store.
    let other = bed.tmp.path().join("none.html");
    let out = iosurvey(&["report", "-o", other.to_str().unwrap(), "--db", &bed.db, "m5"]);
    assert_eq!(
        (out.code, out.stderr.trim()),
        (2, "iosurvey: error: the store holds no matrix m5 (hint: see iosurvey ls for the matrices it holds)")
    );
    assert!(!other.exists());
    // No table without rows: three runs of one label set nothing across studies.
    assert!(!html.contains("Across the studies"), "an empty table is left out");
    // The title block and method, the summary, then the study: its figure, its table, its findings.
    let mut from = 0;
    for what in [
        "<h1 ",
        ">Method</h3>",
        ">Contents</h2>",
        ">Summary</h2>",
        // The summary's table of peaks, then each study; this store's phases are all under a
        // second, so the study says so in place of findings.
        "<b>Table 1.</b>",
        "<h2 id=\"study-1\">",
        "<figure ",
        "<b>Table 2.</b>",
        "Too short to measure",
        ">Appendix</h2>",
    ] {
        from += html[from..].find(what).unwrap_or_else(|| panic!("{what} after {from}: {html}"));
    }
    // Phases of 16 transfers of 300 us are too short for a peak: the report says so instead.
    assert!(
        !html.contains("peaks at")
            && html.contains("Too short to measure")
            && html.contains("write at 1, 2, 4 clients"),
        "{html}"
    );
    assert!(html.contains("<svg ") && html.contains("<polyline"), "{html}");
    assert!(html.contains("(runs 1-3)"), "the table names its runs: {html}");
    assert!(html.contains("data:text/csv"), "each table has its CSV");
    assert!(!html.contains("http:") && !html.contains("https:"), "nothing fetched");
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"), "the browser forbids loads");
    let out = iosurvey(&["report", "-o", "/nonexistent-dir/r.html", "--db", &bed.db]);
    assert_one_line_error(&out, 2, &["cannot write the report"]);
    // Filters: by target, by day.
    let page = page.to_str().unwrap();
    let out = iosurvey(&["report", "-o", page, "--db", &bed.db, "--target", "no-such-place"]);
    assert_one_line_error(&out, 2, &["none of the 3 runs chosen matches"]);
    let today = &iosurvey::units::format_time(iosurvey::units::now_unix())[..10];
    let target = bed.dir.display().to_string();
    let out =
        iosurvey(&["report", "-o", page, "--db", &bed.db, "--target", &target, "--since", today, "--until", today]);
    assert!(out.stdout.contains("report of 3 runs"), "{}{}", out.stdout, out.stderr);
    let out = iosurvey(&["report", "-o", page, "--db", &bed.db, "--until", "2000-01-01"]);
    assert_one_line_error(&out, 2, &["none of the 3 runs"]);
    let out = iosurvey(&["report", "-o", page, "--db", &bed.db, "--since", "2026-02-30"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is not a date"), "{}", out.stderr);
}

#[test]
fn a_runs_page_charts_each_tasks_rate_and_its_latency_percentiles() {
    let bed = Bed::new();
    assert_eq!(bed.meta("--items 200 --tasks 4 --files-only").code, 0);
    let page = bed.tmp.path().join("meta.html");
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&page).unwrap();
    for title in ["each task&#39;s own rate, by phase", "latency percentiles, by phase", "items/s per phase"] {
        assert!(html.contains(title), "{title}: {html}");
    }
    assert!(html.contains("<rect "), "bars");
    // Each percentile named once, p99.9 apart from p99.99.
    assert!(html.contains(">\nfile-stat 1\n</text>"), "named phases");
    for tick in ["p50", "p99.9", "p99.99"] {
        let label = format!(">\n{tick}\n</text>");
        assert_eq!(html.matches(&label).count(), 1, "{tick}: {html}");
    }
}

#[test]
fn a_report_sets_the_runs_beside_a_published_system_with_units_converted() {
    let bed = Bed::new();
    assert_eq!(bed.run("--engine delay:100us --transfer 1m --block 8m --tasks 2").code, 0);
    let out = iosurvey(&["report", "--reference", "list", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("isilon-f800") && out.stdout.contains("OneFS over NFSv3"), "{}", out.stdout);
    let page = bed.tmp.path().join("f800.html");
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--reference", "isilon-f800", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&page).unwrap();
    assert!(html.contains("beside Isilon F800"), "{html}");
    // 8 GB/s published, in MiB/s; our write set beside it with the setups of both.
    assert!(html.contains("<td class=\"n\">7629.4</td>"), "{html}");
    assert!(html.contains("64 clients") && html.contains("run 1: 2 tasks"), "{html}");
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--reference", "nothing-like-it", "--db", &bed.db]);
    assert_one_line_error(&out, 2, &["no published system is called 'nothing-like-it'"]);
}

#[test]
fn a_markdown_report_has_its_charts_as_svg_files_beside_it() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let out = iosurvey(&[
        "survey",
        &dir,
        "--size",
        "16m",
        "--random-secs",
        "0.1",
        "--repetitions",
        "2",
        "--db",
        &bed.db,
        "-q",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = bed.tmp.path().join("paper.md");
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--format", "md", "--db", &bed.db, "s1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = fs::read_to_string(&page).unwrap();
    let summary = text.find("## Summary").expect("a summary");
    assert!(summary < text.find("## 1. Survey s1").expect("the survey's section"), "summary first:\n{text}");
    // The figures in a folder named after the report, beside it; none in the working directory.
    assert!(text.contains("![Figure 1](paper_figures/figure-1.svg)"), "{text}");
    assert!(text.contains("([numbers](paper_figures/figure-1.csv))"), "{text}");
    let svg = fs::read_to_string(bed.tmp.path().join("paper_figures/figure-1.svg")).unwrap();
    assert!(
        svg.starts_with("<svg ") && svg.contains("xmlns=\"http://www.w3.org/2000/svg\"") && svg.contains("<rect "),
        "{svg}"
    );
    let csv = fs::read_to_string(bed.tmp.path().join("paper_figures/figure-1.csv")).unwrap();
    assert!(csv.starts_with("# N-to-N and N-to-1"), "{csv}");
    let beside: Vec<_> = fs::read_dir(bed.tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!beside.iter().any(|n| n.to_string_lossy().ends_with(".svg")), "no figure loose beside it: {beside:?}");
    // Written again over a folder that holds an earlier report's extra figure and a file of the
    // user's: the stale figure goes, the user's file stays.
    let folder = bed.tmp.path().join("paper_figures");
    fs::write(folder.join("figure-99.svg"), "stale").unwrap();
    fs::write(folder.join("notes.txt"), "mine").unwrap();
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--format", "md", "--db", &bed.db, "s1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!folder.join("figure-99.svg").exists() && folder.join("figure-1.svg").exists());
    assert_eq!(fs::read_to_string(folder.join("notes.txt")).unwrap(), "mine");
    // A folder of that name that is a link is refused, and nothing is written through it.
    let elsewhere = bed.tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let linked = bed.tmp.path().join("linked.md");
    std::os::unix::fs::symlink(&elsewhere, bed.tmp.path().join("linked_figures")).unwrap();
    let out = iosurvey(&["report", "-o", linked.to_str().unwrap(), "--format", "md", "--db", &bed.db, "s1"]);
    assert_one_line_error(&out, 2, &["refusing to write the report's figures", "symbolic link"]);
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing written through the link");
    assert!(!linked.exists());
    // The formats a report is written in are the only ones its help lists and its parser takes.
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--format", "csv", "--db", &bed.db]);
    assert_one_line_error(&out, 2, &["invalid value 'csv' for '--format <FORMAT>' [possible values: html, md]"]);
    let help = iosurvey(&["report", "--help"]).stdout;
    // The help is wrapped at the terminal's width: read it as words.
    let words = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("[possible values: html, md]"), "{help}");
}

/// Issue 22: two labels swept over clients three times each, set beside a published system,
/// as a reader opens it: one chart per op with both labels, error bars, the published level;
/// screenshots under target/report-shots for the eye.
#[test]
fn issue_22_two_labels_over_clients_read_as_an_evaluation_in_a_browser() {
    let bed = Bed::new();
    for label in ["lustre-a", "f800"] {
        for _ in 0..3 {
            let out = bed.run(&format!(
                "--engine delay:200us --transfer 1m --block 4m --tasks 4 --clients 1,2,4 --label {label}"
            ));
            assert_eq!(out.code, 0, "{}", out.stderr);
        }
    }
    let page = bed.tmp.path().join("eval.html");
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--reference", "isilon-f800", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&page).unwrap();
    let write = html.find("write MiB/s against clients").expect("the write chart");
    let figure = &html[html[..write].rfind("<figure ").unwrap()..];
    let figure = &figure[..figure.find("</figure>").unwrap()];
    for name in ["lustre-a", "f800", "Isilon F800 published (8 GB/s"] {
        assert!(figure.contains(&format!(">\n{name}")), "{name} in the legend: {figure}");
    }
    assert!(figure.contains("its 95% t-interval as error bars"), "{figure}");
    assert_eq!(html.matches("<figure ").count(), 2, "one chart per op, every label on it");
    assert!(html.contains("(runs 1-18)</caption>"), "the study's table names its runs");
    let Some(browser) = chromium() else { return };
    let (dom, log) = open_in_chromium(browser, &page, &["--dump-dom"]);
    assert_eq!(dom.matches("<figure ").count(), 2, "{log}");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().join("report-shots");
    fs::create_dir_all(&shots).unwrap();
    // The page's top, and its first study seen through a frame that opens at its anchor.
    let top = shots.join("issue22-top.png");
    let framed = bed.tmp.path().join("framed.html");
    fs::write(&framed, "<iframe src=\"eval.html#study-1\" style=\"border:0;width:1280px;height:2200px\"></iframe>")
        .unwrap();
    for (shot, shown) in [(&top, &page), (&shots.join("issue22-study.png"), &framed)] {
        let arg = format!("--screenshot={}", shot.display());
        let _ = open_in_chromium(browser, shown, &[&arg, "--window-size=1280,2200"]);
        assert!(fs::metadata(shot).is_ok_and(|m| m.len() > 10_000), "a screenshot in {}", shot.display());
    }
}

#[test]
fn the_html_report_renders_in_a_browser_with_every_chart_and_loads_nothing() {
    let Some(browser) = chromium() else { return };
    let bed = Bed::new();
    assert_eq!(bed.run("--engine delay:200us --transfer 64k --block 1m --tasks 4 --clients 1,2,4").code, 0);
    assert_eq!(bed.meta("--items 100 --tasks 2 --files-only").code, 0);
    let page = bed.tmp.path().join("report.html");
    assert_eq!(iosurvey(&["report", "-o", page.to_str().unwrap(), "--db", &bed.db]).code, 0);
    let html = fs::read_to_string(&page).unwrap();
    let charts = html.matches("<figure ").count();
    assert!(charts >= 4, "the sweep's chart and the metadata run's three: {charts}");
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let (dom, log) = open_in_chromium(browser, &page, &["--dump-dom"]);
    assert_eq!(dom.matches("<figure ").count(), charts, "every chart in the rendered page");
    assert_eq!(dom.matches("<svg ").count(), charts);
    assert!(!log.contains("CONSOLE"), "no console message: {log}");
    let shot_arg = format!("--screenshot={}", shot.display());
    let _ = open_in_chromium(browser, &page, &[&shot_arg, "--window-size=1200,4000"]);
    assert!(fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000), "a screenshot in {}", shot.display());
    // The page's policy forbids any load: an image from the network put into it is refused.
    let tampered = bed.tmp.path().join("tampered.html");
    fs::write(&tampered, html.replacen("<body>", "<body><img src=\"http://127.0.0.1:9/x.png\">", 1)).unwrap();
    let (_, log) = open_in_chromium(browser, &tampered, &["--dump-dom"]);
    assert!(log.contains("Content Security Policy"), "the browser refused the load: {log}");
}

/// Asserts a refusal: exit 2, one line with `needles`, and nothing new in the store or the target.
fn assert_refused_storing_nothing(bed: &Bed, args: &[&str], needles: &[&str], runs_before: usize) {
    let mut all = args.to_vec();
    all.extend(["--db", bed.db.as_str(), "-q"]);
    let out = iosurvey(&all);
    assert_one_line_error(&out, 2, needles);
    assert_eq!(bed.runs().len(), runs_before, "{args:?} stored a run");
    assert_eq!(bed.groups(), (0, 0, 0), "{args:?} left a survey, sweep or matrix row");
    assert!(bed.entries().is_empty(), "{args:?} left {:?}", bed.entries());
}

#[test]
fn zero_huge_and_nonsense_settings_of_every_command_are_refused_before_anything_runs() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let d = dir.as_str();
    let page = bed.tmp.path().join("r.html").display().to_string();
    let o = page.as_str();
    // One stored run, so that show, compare and report have a store to refuse from.
    assert_eq!(bed.run("--block 1m --op write").code, 0);
    let cases: &[(&[&str], &[&str])] = &[
        (&["survey", d, "--tasks", "0"], &["at least one task", "--tasks"]),
        (&["survey", d, "--tasks", "100000"], &["memory", "lower --tasks"]),
        (&["survey", d, "--tasks", "many"], &["'many' is not a count of tasks"]),
        (&["survey", d, "--size", "0"], &["--size 0 B", "give --size at least"]),
        (&["survey", d, "--random-secs", "0"], &["--random-secs 0", "give --random-secs above 0"]),
        (&["survey", d, "--random-secs", "nan"], &["--random-secs NaN"]),
        (&["matrix", "--dir", d, "--tasks", "0"], &["at least one task"]),
        (&["matrix", "--dir", d, "--tasks", "100000"], &["memory", "lower --max-record or --tasks"]),
        (&["matrix", "--dir", d, "--budget", "0s"], &["--budget 0", "give --budget"]),
        (&["matrix", "--dir", d, "--max-file", "100000t"], &["needs", "free", "--max-file", "--no-space-check"]),
        (&["matrix", "--dir", d, "--min-file", "0", "--max-file", "0"], &["no cell"]),
        (&["io500", "--dir", d, "--tasks", "0"], &["at least one task"]),
        (&["io500", "--dir", d, "--tasks", "100000"], &["memory", "lower --tasks"]),
        (&["io500", "--dir", d, "--stonewall", "0"], &["stonewall of 0 s", "--stonewall"]),
        (&["run", "--dir", d, "--tasks", "0"], &["at least one task"]),
        (&["run", "--dir", d, "--tasks", "100000"], &["memory", "--tasks"]),
        (&["run", "--dir", d, "--tasks", "50000", "--clients", "1,50000"], &["memory", "--tasks"]),
        (&["run", "--dir", d, "--iterations", "0"], &["--iterations at least 1"]),
        (&["meta", "--dir", d, "--tasks", "0"], &["at least one task"]),
        (&["meta", "--dir", d, "--tasks", "100000", "--write-bytes", "64m"], &["memory", "--tasks"]),
        (&["meta", "--dir", d, "--items", "0"], &["0 items per task", "--items"]),
        (&["meta", "--dir", d, "--iterations", "0"], &["--iterations at least 1"]),
        (&["net", "--transfer", "0"], &["--transfer 0"]),
        (&["net", "--size", "0"], &["--size 0"]),
        (&["net", "--streams", "0"], &["--streams 0"]),
        (&["net", "--window", "0"], &["--window 0"]),
        (&["net", "--repetitions", "99999"], &["--repetitions 99999"]),
        (&["net", "--messages", "16m..64k"], &["--messages 16m..64k"]),
        (&["net", "--serve", "--max-clients", "0"], &["--max-clients 0"]),
        (&["show", "0"], &["no run with id 0"]),
        (&["show", "99999999999999999999"], &["is not a run id"]),
        (&["show", "m0"], &["no matrix m0"]),
        (&["compare", "1", "99999"], &["no run with id 99999"]),
        (&["report", "-o", o, "0"], &["no run with id 0"]),
        (&["report", "-o", o, "--since", "2026-02-30"], &["not a date"]),
        (&["report", "-o", o, "--since", "2030-01-01", "--until", "2020-01-01"], &["--since is a later day"]),
    ];
    for (args, needles) in cases {
        assert_refused_storing_nothing(&bed, args, needles, 1);
    }
}

#[test]
fn impossible_metadata_phase_orders_are_refused_naming_one_that_works() {
    let bed = Bed::new();
    let cases: [(&str, &[&str]); 3] = [
        (
            "--phases file-stat",
            &["file-stat needs files that no phase before it made", "use --phases tree-create,file-create,file-stat"],
        ),
        ("--phases tree-remove,tree-create", &["tree-remove removes a tree", "use --phases tree-create,tree-remove"]),
        ("--phases tree-create,file-create --iterations 2", &["second iteration", "file-remove,tree-remove"]),
    ];
    for (args, needles) in cases {
        assert_one_line_error(&bed.meta(&format!("--items 10 {args}")), 2, needles);
    }
    assert!(bed.runs().is_empty() && bed.entries().is_empty(), "{:?}", bed.entries());
    // A tree kept by an earlier run: stat it, but do not create over it.
    assert_eq!(bed.meta("--items 10 -C --keep").code, 0);
    assert_eq!(bed.meta("--items 10 -T").code, 0, "the kept items are stat'ed");
    let out = bed.meta("--items 10");
    let works = "dir-stat,dir-remove,file-stat,file-read,file-remove,tree-remove";
    assert_one_line_error(&out, 2, &["tree-create would make the tree over the one already there", works]);
    assert_eq!(bed.runs().len(), 2, "the refusal stored nothing");
    let out = bed.meta(&format!("--items 10 --phases {works}"));
    assert_eq!(out.code, 0, "the order named works: {}", out.stderr);
}

#[test]
fn meta_checks_free_space_and_its_hints_name_its_own_flags() {
    let bed = Bed::new();
    let out = bed.meta("--items 100000000 --write-bytes 64m");
    assert_one_line_error(&out, 2, &["needs", "free", "lower --items or --write-bytes", "add --no-space-check"]);
    assert!(!out.stderr.contains("--block") && !out.stderr.contains("--total"), "{}", out.stderr);
    let out = bed.meta("--tasks 100000 --write-bytes 64m");
    assert_one_line_error(&out, 2, &["memory", "lower --write-bytes and --read-bytes or --tasks"]);
    assert!(!out.stderr.contains("--iodepth") && !out.stderr.contains("--transfer"), "{}", out.stderr);
    assert!(bed.runs().is_empty() && bed.entries().is_empty());
    // On a 1 MiB file system: 1000 files of 4 KiB are refused before the run; with
    // --no-space-check they run into ENOSPC, whose hint names meta's flags too.
    let Some(fs) = Tmpfs::mount("size=1m") else { return };
    let out = fs.bed.meta("--items 1000 --write-bytes 4k");
    assert_one_line_error(&out, 2, &["needs", "free", "--items"]);
    assert!(fs.bed.runs().is_empty());
    let out = fs.bed.meta("--items 1000 --write-bytes 4k --no-space-check");
    assert_one_line_error(&out, 1, &["No space left on device", "--items"]);
    assert!(!out.stderr.contains("--block"), "{}", out.stderr);
    assert_eq!(fs.bed.runs().len(), 1, "the run that started is stored, failed");
}

#[test]
fn meta_takes_mdtests_short_options_and_crowded_tasks_are_warned() {
    let bed = Bed::new();
    let out = bed.meta("-n 40 -z 1 -b 2 -L -F -u -w 100 -e 100 -X -i 2");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let meta = &run["workload"]["meta"];
    assert_eq!(meta["items"], 40, "-n is items per task");
    assert_eq!(meta["tree"]["depth"], 1);
    assert_eq!(meta["tree"]["branch"], 2);
    assert_eq!(meta["tree"]["leaves_only"], true);
    assert_eq!(meta["write_bytes"], 100);
    assert_eq!(run["workload"]["iterations"], 2);
    assert_eq!(run["workload"]["tasks"], 1, "no short option sets the tasks");
    // -I is items per directory, and mdtest's -n with it is refused, not 1000 threads.
    assert_one_line_error(&bed.meta("-n 1000 -I 10"), 2, &["--items", "--items-per-dir"]);
    assert_eq!(bed.meta("-I 5 -z 1 -b 2 -F").code, 0);
    assert_eq!(bed.last_run()["workload"]["meta"]["items"], 15, "5 in each of the 3 directories");
    // More tasks than 4 per core: one warning line, and the run goes on.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let crowded = (4 * cores + 1).to_string();
    for out in [
        bed.run(&format!("--tasks {crowded} --block 4k --transfer 4k")),
        bed.meta(&format!("--tasks {crowded} --items 2")),
    ] {
        assert_eq!(out.code, 0, "{}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", out.stderr);
        assert!(lines[0].starts_with(&format!("iosurvey: warning: --tasks {crowded} runs")), "{}", lines[0]);
    }
}

#[test]
fn survey_quiet_prints_only_the_run_ids() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let args = ["survey", &dir, "--size", "2m", "--tasks", "1", "--random-secs", "0.2", "--repetitions", "1"];
    let out = iosurvey(&[&args[..], &["--db", &bed.db, "-q"]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines.iter().all(|l| l.starts_with("run ") && l[4..].parse::<i64>().is_ok()), "{}", out.stdout);
}

/// A store of more runs than a page: the table lists the newest 50 and says how many it left
/// out and how to see them; --limit and --all list what they say; the machine formats list
/// every run.
#[test]
fn ls_lists_the_newest_page_says_what_it_left_out_and_all_lists_every_run() {
    let bed = Bed::new();
    assert_eq!(bed.run("--engine null --block 1m --label lab").code, 0);
    // Copies of the stored run through the store's own API: 61 runs, made in milliseconds.
    let mut store = iosurvey::store::Store::open(Path::new(&bed.db)).unwrap();
    let run = store.load(1).unwrap();
    for k in 0..60 {
        let label = if k % 2 == 0 { "other" } else { "lab" };
        store.save(&iosurvey::record::RunRecord { id: None, label: Some(label.into()), ..run.clone() }).unwrap();
    }
    drop(store);
    let ids = |out: &str| -> Vec<u64> {
        out.lines().filter(|l| l.contains(" UTC ")).filter_map(|l| l.split_whitespace().next()?.parse().ok()).collect()
    };
    let ls = iosurvey(&["ls", "--db", &bed.db]);
    assert_eq!(ls.code, 0, "{}", ls.stderr);
    assert_eq!(ids(&ls.stdout), (12..=61).collect::<Vec<_>>(), "the newest 50, oldest first: {}", ls.stdout);
    assert!(
        ls.stdout.contains("11 older runs not shown: --limit N lists the newest N, --all every one"),
        "{}",
        ls.stdout
    );
    let all = iosurvey(&["ls", "--all", "--db", &bed.db]);
    assert_eq!(ids(&all.stdout), (1..=61).collect::<Vec<_>>());
    assert!(!all.stdout.contains("not shown"), "{}", all.stdout);
    let few = iosurvey(&["ls", "--limit", "3", "--label", "lab", "--db", &bed.db]);
    assert_eq!(ids(&few.stdout), [57, 59, 61], "the label's newest 3: {}", few.stdout);
    assert!(few.stdout.contains("28 older runs not shown"), "31 runs labelled lab: {}", few.stdout);
    let json: Vec<Value> = serde_json::from_str(&iosurvey(&["ls", "--json", "--db", &bed.db]).stdout).unwrap();
    assert_eq!(json.len(), 61, "--json lists every run");
    let csv = iosurvey(&["ls", "--format", "csv", "--db", &bed.db]).stdout;
    assert_eq!(csv.lines().filter(|l| l.starts_with(char::is_numeric)).count(), 61, "{csv}");
    let limited: Vec<Value> =
        serde_json::from_str(&iosurvey(&["ls", "--json", "--limit", "2", "--db", &bed.db]).stdout).unwrap();
    assert_eq!(limited.iter().map(|r| r["id"].as_i64().unwrap()).collect::<Vec<_>>(), [60, 61]);
    let both = iosurvey(&["ls", "--all", "--limit", "2", "--db", &bed.db]);
    assert_eq!(both.code, 2, "--all and --limit say different things: {}", both.stderr);
}

#[test]
fn a_store_with_a_negative_version_is_one_short_line() {
    let bed = Bed::new();
    let conn = rusqlite::Connection::open(&bed.db).unwrap();
    conn.execute_batch("CREATE TABLE surveys (x); PRAGMA user_version = -3;").unwrap();
    drop(conn);
    let out = iosurvey(&["ls", "--db", &bed.db]);
    assert_one_line_error(&out, 4, &["schema version -3", "no iosurvey writes", "--db"]);
    assert!(out.stderr.len() < 200, "{} characters: {}", out.stderr.len(), out.stderr);
}

#[test]
fn paths_with_control_characters_are_named_for_what_is_wrong_and_escaped_on_one_line() {
    let bed = Bed::new();
    for (name, shown) in [("a\nb", "a\\nb"), ("a\x1b[2Jb", "a\\x1b[2Jb")] {
        let dir = bed.dir.join(name).display().to_string();
        let out = iosurvey(&["run", "--dir", &dir, "--db", &bed.db, "--block", "1m"]);
        assert_one_line_error(&out, 2, &[shown, "control character", "plain name"]);
        assert!(!out.stderr.contains("nor does its parent"), "{}", out.stderr);
        // A missing parent, with a newline in it: still one line.
        let deeper = bed.dir.join(name).join("c").display().to_string();
        let out = iosurvey(&["run", "--dir", &deeper, "--db", &bed.db, "--block", "1m"]);
        assert_one_line_error(&out, 2, &[shown, "nor does its parent"]);
    }
    assert!(bed.entries().is_empty() && bed.runs().is_empty());
}

#[test]
fn a_refused_target_leaves_no_store_for_fresh_directories_and_further_bases_alike() {
    let bed = Bed::new();
    let missing = bed.tmp.path().join("nope");
    let missing = missing.display().to_string();
    for command in ["matrix", "io500"] {
        let out = iosurvey(&[command, "--dir", &missing, "--db", &bed.db, "-q"]);
        assert_eq!(out.code, 2, "{command}: {}", out.stderr);
        assert!(!Path::new(&bed.db).exists(), "{command} made a store before its directory was refused");
    }
    let out = iosurvey(&["survey", &missing, "--db", &bed.db, "-q"]);
    assert_eq!(out.code, 2, "survey: {}", out.stderr);
    assert!(!Path::new(&bed.db).exists(), "survey made a store before its directory was refused");
    // meta --dir a@b: the second base is refused after the first was taken.
    let dirs = format!("{}@{}/missing/b", bed.dir.display(), bed.tmp.path().join("nope").display());
    let out = iosurvey(&["meta", "--dir", &dirs, "-n", "10", "--db", &bed.db, "-q"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(!Path::new(&bed.db).exists(), "meta made a store before its second base was refused");
    assert!(bed.entries().is_empty(), "the first base keeps nothing: {:?}", bed.entries());
}

#[test]
fn a_report_of_a_store_of_the_previous_main_leaves_out_empty_tables_and_keeps_the_cache_caveat() {
    let bed = Bed::new();
    let db = bed.tmp.path().join("old.db");
    fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v9.db"), &db).unwrap();
    let page = bed.tmp.path().join("old.md");
    let out = iosurvey(&["report", "--format", "md", "-o", page.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = fs::read_to_string(&page).unwrap();
    assert!(!text.contains("Across the studies"), "its only table across studies has no rows");
    // The old sweep's phases were far under a second: no peak is read from them.
    assert!(!text.contains("alpha write peaks at"), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("Too short to measure") && l.contains("alpha write at 1, 2 clients")),
        "{text}"
    );
    // And the study's table marks the rows it rests on.
    assert!(text.lines().any(|l| l.starts_with("| alpha") && l.contains("write and read possibly cached")), "{text}");
}

#[test]
fn version_says_the_commit_and_the_optional_parts() {
    let out = iosurvey(&["--version"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("iosurvey {} (commit ", env!("CARGO_PKG_VERSION"))), "{}", out.stdout);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(commit) => assert!(first.contains(&format!("(commit {commit})")), "{first} is not HEAD {commit}"),
        None => assert!(first.contains("(commit unknown)"), "{first}"),
    }
    let features = out.stdout.lines().find(|l| l.starts_with("features: ")).unwrap_or_default();
    for part in ["mpi", "io_uring", "libaio"] {
        assert!(features.contains(part), "{features}");
    }
    assert_eq!(cfg!(feature = "mpi"), !features.contains("mpi (not built"), "{features}");
    let library = out.stdout.lines().find(|l| l.starts_with("MPI library: ")).unwrap_or_default();
    assert_eq!(cfg!(feature = "mpi"), !library.starts_with("MPI library: none"), "{library}");
    assert_eq!(iosurvey(&["-V"]).stdout.trim(), format!("iosurvey {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn completions_complete_the_commands_and_man_pages_cover_each() {
    let bash = iosurvey(&["completions", "bash"]);
    assert_eq!(bash.code, 0, "{}", bash.stderr);
    let bed = Bed::new();
    let script = bed.tmp.path().join("iosurvey.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    // What bash offers after `iosurvey campaign e` and `iosurvey camp`: bash calls the
    // function with the command, the word under the cursor and the one before it.
    let offered = |words: &str, cword: usize| {
        let w: Vec<&str> = words.split(' ').collect();
        let probe = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; _iosurvey iosurvey {} {}; echo \"${{COMPREPLY[@]}}\"",
            script.display(),
            w[cword],
            w[cword - 1]
        );
        let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(offered("iosurvey camp", 1), "campaign");
    assert_eq!(offered("iosurvey campaign e", 2), "emit");
    assert!(iosurvey(&["completions", "zsh"]).stdout.starts_with("#compdef iosurvey"));
    assert!(iosurvey(&["completions", "fish"]).stdout.contains("complete -c iosurvey"));
    let out = iosurvey(&["completions", "tcsh"]);
    assert_eq!(out.code, 2, "{}", out.stderr);

    let man = bed.tmp.path().join("man1");
    let out = iosurvey(&["manpages", &man.display().to_string(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pages: Vec<String> =
        std::fs::read_dir(&man).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    // A page per command `iosurvey --help` lists, under the name man is asked for.
    let help = iosurvey(&["--help"]).stdout;
    // The commands are listed under headings of what they are for, before the options.
    let commands: Vec<&str> = help
        .lines()
        .take_while(|l| !l.starts_with("Options:"))
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help" && !c.starts_with('-'))
        .collect();
    assert!(commands.len() > 10, "{help}");
    for c in commands {
        assert!(pages.contains(&format!("iosurvey-{c}.1")), "no page of {c} in {pages:?}");
    }
    assert!(!std::path::Path::new(&bed.db).exists(), "writing man pages makes no store");
    // Never through a link.
    let link = bed.tmp.path().join("linked");
    std::os::unix::fs::symlink(&man, &link).unwrap();
    let out = iosurvey(&["manpages", &link.display().to_string()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("symbolic link"), "{}", out.stderr);
}

/// A mount point /etc/fstab names, its file system gone: `run --dir` makes no directory there,
/// which would be on the disk beneath. Run in a mount namespace of its own, whose /etc/fstab
/// is a file of the test's (the host's is never touched).
#[test]
fn run_makes_no_directory_under_a_mount_point_whose_file_system_is_not_mounted() {
    if !is_root() {
        skip("a mount namespace needs root");
        return;
    }
    let bed = Bed::new();
    let point = bed.dir.join("lustre");
    fs::create_dir(&point).unwrap();
    let fstab = bed.tmp.path().join("fstab");
    fs::write(&fstab, format!("# the test's own\nfs@tcp:/x {} lustre defaults 0 0\n", point.display())).unwrap();
    let in_namespace = |mount: &str| {
        let script = format!(
            "mount --bind {} /etc/fstab && {mount} exec \"$0\" run --dir {}/iosurvey --db {} --block 1m -q",
            fstab.display(),
            point.display(),
            bed.db
        );
        outcome(
            Command::new("unshare")
                .args(["-m", "--propagation", "private", "sh", "-c", &script, env!("CARGO_BIN_EXE_iosurvey")])
                .output()
                .unwrap(),
        )
    };
    let out = in_namespace("");
    assert_one_line_error(
        &out,
        2,
        &["is where /etc/fstab mounts a file system that is not mounted now", "mount it first"],
    );
    assert!(!point.join("iosurvey").exists(), "no directory made on the disk beneath");
    let out = in_namespace(&format!("mount -t tmpfs -o size=16m tmpfs {} &&", point.display()));
    assert_eq!(out.code, 0, "mounted, the leaf is made and removed: {}", out.stderr);
}

/// The binary is clap -> study -> play -> render -> exit code (issue 37): the work and the
/// text it prints are the library's, so src/cli stays under 2,000 lines; and an error stays
/// typed until it is said, never made into words and searched for its hint again.
#[test]
fn a_refused_value_gets_its_parsers_own_hint_once_and_any_other_the_help() {
    let bed = Bed::new();
    let dir = bed.dir.to_str().unwrap();
    let hint = |out: &Out| out.stderr.matches("(hint: ").count();
    // Each value's own parser says what to do, once: the hint is its typed refusal's.
    let typed: [(&[&str], &str); 6] = [
        (&["run", "--dir", dir, "--transfer", "1q"], "(hint: use a byte count such as 47008"),
        (&["run", "--dir", dir, "--tasks", "0"], "a run needs at least one task (hint: give --tasks 1 or more)"),
        (&["show", "x1"], "'x1' is not a run id (7)"),
        (&["campaign", "plan", "c.toml", "--scale", "4096"], "'4096' is not a scale (hint: give 1/N"),
        (&["matrix", "--dir", dir, "--stand-in", "sync"], "sync touches storage (hint: give a test engine"),
        (&["train", "--dir", dir, "--scale", "4096"], "'4096' is not a scale (hint: give 1/N, e.g. --scale 1/1000)"),
    ];
    for (args, needle) in typed {
        let out = iosurvey(&[args, &["--db", &bed.db][..]].concat());
        assert_one_line_error(&out, 2, &[needle]);
        assert_eq!(hint(&out), 1, "{}", out.stderr);
    }
    // A value that holds the words of a hint is no hint: a parser that says none is pointed
    // at the help, whatever the value.
    let long = format!("(hint: {})", "x".repeat(70));
    let out = iosurvey(&["run", "--dir", dir, "--label", &long, "--db", &bed.db]);
    assert_one_line_error(&out, 2, &["a label is 1 to 64 printable characters"]);
    assert!(out.stderr.trim_end().ends_with("(hint: see 'iosurvey --help')"), "{}", out.stderr);
}

/// Whether `line` searches a text for a hint's words (`what.contains("(hint:")`,
/// `rsplit_once(" (hint: ")`): a hint is carried typed, never found in what was said.
fn searches_for_a_hint(line: &str) -> bool {
    const SEARCHES: [&str; 12] = [
        "contains",
        "find",
        "rfind",
        "split",
        "rsplit",
        "split_once",
        "rsplit_once",
        "strip_prefix",
        "strip_suffix",
        "starts_with",
        "ends_with",
        "matches",
    ];
    ["\"(hint:", "\" (hint:"].iter().any(|words| {
        line.match_indices(words).any(|(at, _)| {
            let Some(call) = line[..at].strip_suffix('(') else { return false };
            let name = call.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default();
            SEARCHES.contains(&name)
        })
    })
}

#[test]
fn the_binary_stays_thin_and_never_reads_an_error_line_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut lines = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        lines += text.lines().count();
        for (n, line) in text.lines().enumerate() {
            assert!(
                !searches_for_a_hint(line),
                "{}:{}: an error line searched for its hint: {line}",
                path.display(),
                n + 1
            );
            assert!(
                !line.contains("struct Failure"),
                "{}:{}: the binary's own error type: {line}",
                path.display(),
                n + 1
            );
        }
    }
    assert!(lines < 2000, "src/cli holds {lines} lines: the work belongs in the library");
    // The rule itself: the searches it is to find, and not a hint that is only said.
    assert!(searches_for_a_hint(r#"    if what.contains("(hint:") {"#));
    assert!(searches_for_a_hint(r#"    let (w, h) = line.rsplit_once(" (hint: ")?;"#));
    assert!(!searches_for_a_hint(r#"    say_error!("{why} (hint: run it again)");"#));
}
