//! `iosurvey matrix`: each kind's transfers (exact, on the null engine) and bytes (verified on
//! tmpfs), a matrix stored, listed, shown and written as CSV with its arithmetic, refusals,
//! an interrupted matrix stored as failed with nothing left, and a real page-cache cliff made
//! by a memory-limited cgroup on ext4.

mod common;

use common::*;
use iosurvey::plan::matrix::{passes, workload, Kind, Pass, Shape, STRIDE};
use serde_json::Value;
use std::fs;
use std::path::Path;

const RECORD: u64 = 4096;

/// `iosurvey run` arguments for the workload of a pass in a cell (one task).
fn run_args(pass: &Pass, file: u64, engine: Option<&str>) -> String {
    let w = workload(
        pass,
        file,
        RECORD,
        &Shape { tasks: 1, per_node: 1, direct: false, fsync: false, seed: 1, stand_in: None },
    );
    let ops: Vec<String> = w.ops.iter().map(|o| o.name()).collect();
    let d = w.data().expect("a matrix pass moves data");
    format!(
        "--pattern {} --op {} --transfer {} --block {} --read-percent {} --no-fadvise --engine {}",
        d.pattern,
        ops.join(","),
        d.transfer,
        d.block,
        d.read_percent,
        engine.map_or(d.engine.to_string(), str::to_string)
    )
}

/// The trace of the null engine for `args`: (op, offset) per transfer, in order.
fn traced(bed: &Bed, args: &str) -> Vec<(String, u64)> {
    let path = bed.tmp.path().join("trace");
    let _ = fs::remove_file(&path);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["run", "--dir", bed.dir.to_str().unwrap(), "--db", &bed.db, "-q"])
        .args(args.split(' '))
        .env("IOSURVEY_TRACE", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args}: {}", String::from_utf8_lossy(&out.stderr));
    fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f[3].parse::<u64>().unwrap(), RECORD, "{l}");
            (f[1].to_string(), f[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn every_kind_visits_exactly_its_records_in_its_order() {
    let bed = Bed::new();
    let n = 64; // records per file
    let file = n * RECORD;
    let seq: Vec<u64> = (0..n).map(|i| i * RECORD).collect();
    let mut seen = Vec::new();
    for pass in passes(&Kind::ALL) {
        let trace = traced(&bed, &run_args(&pass, file, Some("null")));
        assert_eq!(trace.len() as u64, n * pass.phases.len() as u64, "{pass:?}");
        for (k, (op, kind)) in pass.phases.iter().enumerate() {
            let phase = &trace[k * n as usize..(k + 1) * n as usize];
            let offsets: Vec<u64> = phase.iter().map(|t| t.1).collect();
            let mut sorted = offsets.clone();
            sorted.sort_unstable();
            let Some(kind) = kind else { continue };
            seen.push(*kind);
            let direction = op.direction().name();
            match kind {
                Kind::Write | Kind::Rewrite | Kind::Read | Kind::Reread => assert_eq!(offsets, seq, "{kind:?}"),
                Kind::StreamWrite | Kind::StreamRead | Kind::VectoredWrite | Kind::VectoredRead => {
                    assert_eq!(offsets, seq, "{kind:?}")
                }
                Kind::RandomRead | Kind::RandomWrite => {
                    assert_eq!(sorted, seq, "{kind:?}: every record once");
                    assert_ne!(offsets, seq, "{kind:?}: not in order");
                }
                Kind::BackwardRead => assert_eq!(offsets, seq.iter().rev().copied().collect::<Vec<_>>()),
                Kind::RecordRewrite => assert_eq!(offsets, vec![0; n as usize], "one record again and again"),
                Kind::StrideRead => {
                    let stride: Vec<u64> =
                        (0..STRIDE).flat_map(|s| (s..n).step_by(STRIDE as usize)).map(|i| i * RECORD).collect();
                    assert_eq!(offsets, stride);
                }
                Kind::Mix => {
                    assert_eq!(sorted, seq, "every record once, in random order");
                    let reads = phase.iter().filter(|t| t.0 == "read").count();
                    assert!(reads > 16 && reads < 48, "about half of 64 are reads: {reads}");
                    assert_eq!(reads + phase.iter().filter(|t| t.0 == "write").count(), n as usize);
                }
            }
            if *kind != Kind::Mix {
                assert!(phase.iter().all(|t| t.0 == direction), "{kind:?} moves one way");
            }
        }
    }
    seen.sort();
    assert_eq!(seen, Kind::ALL.to_vec(), "each kind measured once");
}

#[test]
fn every_kind_that_can_be_checked_moves_the_right_bytes_on_tmpfs() {
    let Some(fs) = Tmpfs::mount("size=64m") else { return };
    // Each pass on the files of the one before, stamped with one signature, every byte read
    // checked; record rewrite (one place only) and mix (reads among writes) cannot be.
    for pass in passes(&Kind::ALL) {
        if pass.kinds().any(|k| matches!(k, Kind::RecordRewrite | Kind::Mix)) {
            continue;
        }
        let args = format!("{} --verify --signature 7 --keep", run_args(&pass, 256 * RECORD, None));
        let out = fs.bed.run(&args);
        assert_eq!(out.code, 0, "{args}: {}", out.stderr);
        let run = fs.bed.last_run();
        for p in run["phases"].as_array().unwrap() {
            if p["op"].as_str().unwrap().contains("read") {
                assert_eq!(p["verify"]["checked"], 256, "{args}: {p}");
                assert_eq!(p["verify"]["bad"], 0, "{args}");
            }
        }
    }
}

/// The matrix of a bed, by id, as JSON.
/// Runs `matrix ARGS` on the bed, which must succeed, and returns the stored matrix m1.
fn measure(bed: &Bed, args: &str) -> Value {
    let out = bed.command("matrix", args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    matrix(bed, "m1")
}

fn matrix(bed: &Bed, id: &str) -> Value {
    let out = iosurvey(&["show", id, "--json", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn a_matrix_is_stored_shown_listed_and_written_as_csv_and_its_rates_recomputed() {
    let bed = Bed::new();
    let csv = bed.tmp.path().join("cells.csv");
    let args =
        format!("--full --min-file 64k --max-file 256k --min-record 16k --max-record 64k --csv {}", csv.display());
    let out = bed.command("matrix", &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(bed.entries().is_empty(), "the matrix's directory is removed: {:?}", bed.entries());
    let m = matrix(&bed, "m1");
    assert_eq!(m["status"], "ok");
    let cells = m["cells"].as_array().unwrap();
    // 3 file sizes x 3 record sizes x 14 kinds, one sample each.
    assert_eq!(cells.len(), 9 * 14);
    assert!(cells.iter().all(|c| c["samples"].as_array().unwrap().len() == 1));
    let lines: Vec<String> = fs::read_to_string(&csv).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines[0], "kind,file_bytes,record_bytes,mib_s,samples");
    assert_eq!(lines.len(), 1 + 9 * 14);
    // A cell's rate is its phase's bytes over the earliest transfer start to the latest end.
    let cell =
        cells.iter().find(|c| c["kind"] == "backward-read" && c["file"] == 131072 && c["record"] == 32768).unwrap();
    let run = bed.show(cell["runs"][0].as_i64().unwrap());
    assert_eq!(run["matrix_id"], 1);
    let phase = run["phases"].as_array().unwrap().iter().find(|p| p["op"] == "read").unwrap();
    let tasks = phase["tasks"].as_array().unwrap();
    let n = |t: &Value, k: &str| t[k].as_u64().unwrap();
    let window =
        tasks.iter().map(|t| n(t, "xfer_end")).max().unwrap() - tasks.iter().map(|t| n(t, "xfer_start")).min().unwrap();
    let expected = 131072.0 * 1e9 / window as f64 / 1048576.0;
    let line = lines.iter().find(|l| l.starts_with("backward-read,131072,32768,")).unwrap();
    let shown: f64 = line.split(',').nth(3).unwrap().parse().unwrap();
    assert!((shown - expected).abs() < 1e-3 * expected, "{shown} against {expected}");
    // The cells' runs are the matrix's: `ls` lists one matrix, not 72 runs.
    assert!(bed.runs().is_empty());
    let ls = iosurvey(&["ls", "--db", &bed.db]);
    assert!(ls.stdout.contains("matrices:") && ls.stdout.contains("\n m1 "), "{}", ls.stdout);
    let shown = iosurvey(&["show", "m1", "--db", &bed.db]).stdout;
    for kind in Kind::ALL {
        assert!(shown.contains(&format!("{} (MiB/s):", kind.name())), "{kind:?}");
    }
    assert!(shown.contains("9 of 9 cells measured"), "{shown}");
    // Its heat maps reach the report, one per kind.
    let page = bed.tmp.path().join("m.html");
    let out = iosurvey(&["report", "-o", page.to_str().unwrap(), "--db", &bed.db, "m1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg ").count(), 14);
    // Two matrices' findings side by side: a matrix agrees with itself.
    let same = iosurvey(&["compare", "m1", "m1", "--db", &bed.db]).stdout;
    let count = same.lines().find_map(|l| l.strip_prefix("agreement: ")).unwrap();
    let (agree, total) = count.split_once(" of ").unwrap();
    assert_eq!(agree, total.trim_end_matches(" findings"), "{same}");
}

#[test]
fn the_adaptive_mode_says_what_it_skipped_and_what_the_full_matrix_would_take() {
    let bed = Bed::new();
    let m = measure(&bed, "--kinds write,read --min-file 64k --max-file 8m --min-record 4k --max-record 1m");
    assert_eq!(m["adaptive"], true);
    let skipped = m["skipped"].as_u64().unwrap();
    assert!(skipped > 0, "{m}");
    let shown = iosurvey(&["show", "m1", "--db", &bed.db]).stdout;
    let measured = m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["file"].as_u64(), c["record"].as_u64()))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert!(
        shown.contains(&format!("{measured} of {} cells measured", measured as u64 + skipped))
            && shown.contains("the full matrix would take about"),
        "{shown}"
    );
}

#[test]
fn a_planted_cliff_is_found_alike_by_the_adaptive_and_the_full_matrix_and_stands_only_where_sampled() {
    // Transfers wait 1 ms in files under 2 MiB and 10 ms from 2 MiB on, touching no storage:
    // a cliff from 1 MiB to 2 MiB, with the timing noise of this (busy) machine around it.
    let bed = Bed::new();
    let args = "--kinds write,read --min-file 256k --max-file 4m --min-record 64k --max-record 256k \
                --stand-in delay:1ms/2m:10ms";
    for extra in ["", " --full"] {
        let out = bed.command("matrix", &format!("{args}{extra}"));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let out = iosurvey(&["compare", "m1", "m2", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    for kind in ["write", "read"] {
        let cliffs: Vec<&&str> = lines.iter().filter(|l| l.contains(&format!("{kind} cliff of the"))).collect();
        // Each mode finds the planted cliff between sizes that hold the boundary (the adaptive
        // spine may step over 1 MiB or 2 MiB), and each sees the other's.
        let holds = |l: &str| {
            ["from 1 MiB to 2 MiB", "from 512 KiB to 2 MiB", "from 1 MiB to 4 MiB"].iter().any(|s| l.contains(s))
        };
        let planted = |whose: &str| {
            cliffs.iter().any(|l| {
                l.starts_with("agree:")
                    && l.contains(&format!("cliff of the {whose}: {kind} over growing files (data per node) drops"))
                    && holds(l)
            })
        };
        assert!(planted("first") && planted("second"), "{kind}: {cliffs:#?}");
        // The adaptive mode sampled both sides until the drop stood; the full matrix of one
        // visit a cell says its drop rests on a single sample. Neither names a cache: the
        // stand-in engine moves no bytes through one.
        assert!(cliffs.iter().any(|l| l.contains("cliff of the first") && l.contains("apart beyond their spread")));
        assert!(cliffs.iter().any(|l| l.contains("cliff of the second") && l.contains("on a single sample")));
        assert!(cliffs.iter().all(|l| !l.contains("crosses")), "{cliffs:#?}");
        // The peak is not planted (cells of a few transfers, timed on a busy machine): its line
        // is made, whatever it finds.
        assert!(lines.iter().any(|l| l.contains(&format!("{kind} best record "))), "{lines:#?}");
    }
    assert!(lines.iter().any(|l| l.starts_with("agreement tolerances: peaks within 10%")), "{}", out.stdout);
}

#[test]
fn a_grid_with_no_cell_of_several_records_is_measured_whole_and_decides_nothing() {
    let bed = Bed::new();
    let m = measure(&bed, "--kinds read --min-file 64k --max-file 128k --min-record 64k --max-record 64k");
    assert_eq!(m["adaptive"], false);
    assert_eq!(m["cells"].as_array().unwrap().len(), 2, "{m}");
    assert!(m["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().starts_with("no cell of the grid holds 4")));
    let shown = iosurvey(&["show", "m1", "--db", &bed.db]).stdout;
    assert!(!shown.contains("peaks at"), "{shown}");
    assert!(shown.contains("2 cells of fewer than 4 records"), "{shown}");
}

#[test]
fn bad_sizes_and_kinds_are_refused_in_one_line() {
    let bed = Bed::new();
    assert_one_line_error(&bed.command("matrix", "--kinds write,9"), 2, &["unknown kind '9'"]);
    assert_one_line_error(&bed.command("matrix", "--min-file 1m --max-file 64k"), 2, &["the sizes give no cell"]);
    // A stand-in touches no storage, and its errors name its own flag.
    assert_one_line_error(&bed.command("matrix", "--stand-in sync"), 2, &["sync touches storage", "null, or delay:D"]);
    assert_one_line_error(&bed.command("matrix", "--stand-in delay:soon"), 2, &["give --stand-in delay:100us"]);
    assert!(!Path::new(&bed.db).exists() || bed.runs().is_empty());
    assert!(bed.entries().is_empty());
}

#[test]
fn an_interrupted_matrix_is_stored_failed_and_leaves_nothing() {
    let bed = Bed::new();
    let child = bed.spawn_command(
        "matrix",
        "--full --repetitions 100 --kinds write,read --min-file 64m --max-file 256m --min-record 64k --max-record 64k",
    );
    // Interrupted once cells have been stored, whatever the machine's speed.
    let stored = || {
        rusqlite::Connection::open_with_flags(&bed.db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0)
    };
    wait_until("two stored cells", 30, || stored() >= 2);
    // SAFETY: the child's pid, still ours to signal.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = outcome(child.wait_with_output().unwrap());
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    let m = matrix(&bed, "m1");
    assert_eq!(m["status"], "failed");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    assert_store_intact(&bed.db);
}

/// A memory cgroup of `limit` bytes below this process's own, where the machine mounts the
/// controller (version 1's memory hierarchy, or version 2's); `None` when it cannot be made.
fn memory_cgroup(limit: u64) -> Option<(std::path::PathBuf, &'static str)> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mount = |v1: bool| {
        mountinfo.lines().find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mut r = right.split(' ');
            let (kind, _, options) = (r.next()?, r.next()?, r.next()?);
            let fits =
                if v1 { kind == "cgroup" && options.split(',').any(|o| o == "memory") } else { kind == "cgroup2" };
            fits.then(|| left.split(' ').nth(4).map(str::to_string)).flatten()
        })
    };
    let own = |v1: bool| {
        cgroups.lines().find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
            let fits = if v1 { controllers.split(',').any(|c| c == "memory") } else { controllers.is_empty() };
            fits.then(|| path.to_string())
        })
    };
    for (v1, file) in [(true, "memory.limit_in_bytes"), (false, "memory.max")] {
        let (Some(root), Some(path)) = (mount(v1), own(v1)) else { continue };
        let dir =
            Path::new(&root).join(path.trim_start_matches('/')).join(format!("iosurvey-test-{}", std::process::id()));
        if fs::create_dir(&dir).is_ok() {
            if fs::write(dir.join(file), limit.to_string()).is_ok() {
                return Some((dir, if v1 { "v1" } else { "v2" }));
            }
            let _ = fs::remove_dir(&dir);
        }
    }
    None
}

#[test]
fn a_memory_limited_cgroup_makes_a_page_cache_cliff_on_ext4_named_with_its_cause() {
    if !is_root() {
        skip("making a memory cgroup needs root");
        return;
    }
    // ext4, not tmpfs: tmpfs pages cannot be reclaimed, so no limit would push them out.
    let Some(ext4) = Ext4::make(1024) else {
        skip("no ext4 file system could be made on a loop device");
        return;
    };
    let Some((cgroup, version)) = memory_cgroup(100 << 20) else {
        skip("no memory cgroup could be made (no controller mounted, or not delegated)");
        return;
    };
    // The process joins the cgroup before it starts, so the files it writes are charged to
    // it (page cache is charged to whoever touches it first).
    let script = format!("echo $$ > {}/cgroup.procs && exec \"$@\"", cgroup.display());
    let db = ext4.scratch.path().join("store.db");
    let out = outcome(
        std::process::Command::new("sh")
            .args(["-c", &script, "sh", env!("CARGO_BIN_EXE_iosurvey"), "matrix", "--dir"])
            .arg(&ext4.mount)
            .args(["--db", db.to_str().unwrap(), "--full", "--repetitions", "2", "--kinds", "read"])
            .args(["--min-file", "8m", "--max-file", "256m"])
            .args(["--min-record", "1m", "--max-record", "1m"])
            .output()
            .unwrap(),
    );
    let _ = fs::remove_dir(&cgroup);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The page cache's cliff, whatever else a busy machine shows (a CPU cache's, say): two
    // visits of each cell, so that the cause is named only for a drop beyond their spread.
    let cliffs: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("read over growing files")).collect();
    assert!(
        cliffs.iter().any(|c| c.contains(
            "from 64 MiB to 128 MiB (2 and 2 samples, apart beyond their spread): it crosses the page cache \
             (bounded by the memory cgroup's limit) (100 MiB)"
        )),
        "cgroup {version}: {cliffs:?} in\n{}",
        out.stdout
    );
}

#[test]
fn throughput_mode_gives_the_team_and_the_all_busy_rate_and_each_task_apart() {
    let bed = Bed::new();
    let out = bed.command(
        "matrix",
        "--full --kinds write,read --min-file 1m --max-file 1m --min-record 64k --max-record 64k --tasks 3",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let m = matrix(&bed, "m1");
    for c in m["cells"].as_array().unwrap() {
        let s = &c["samples"][0];
        let f = |k: &str| s[k].as_f64().unwrap();
        assert!(f("task_min") <= f("task_max"), "{s}");
        // No task runs faster than the team moves its bytes in all, nor the team faster than
        // three of its fastest task.
        assert!(f("team") <= 3.0 * f("task_max") * 1.000001, "{s}");
        // The run's own tasks: three files of 1 MiB each.
        let run = bed.show(c["runs"][0].as_i64().unwrap());
        let phase = &run["phases"][if c["kind"] == "write" { 0 } else { 1 }];
        assert_eq!(phase["figures"]["bytes"], 3 << 20);
    }
    let shown = iosurvey(&["show", "m1", "--db", &bed.db]).stdout;
    assert!(shown.contains("throughput of 3 tasks"), "{shown}");
    for column in ["team", "until first done", "slowest task", "fastest task"] {
        assert!(shown.contains(column), "{column}: {shown}");
    }
}

#[test]
fn a_budget_stops_the_matrix_and_says_so() {
    let bed = Bed::new();
    let m = measure(&bed, "--kinds write --max-file 1m --budget 1ns");
    assert_eq!(m["status"], "ok");
    assert!(m["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("--budget reached")), "{m}");
    assert!(m["cells"].as_array().unwrap().is_empty());
    assert_one_line_error(&bed.command("matrix", "--budget soon"), 2, &["--budget"]);
}

#[test]
fn an_unwritable_csv_is_refused_before_anything_runs() {
    let bed = Bed::new();
    let out = bed.command("matrix", "--max-file 128k --csv /nonexistent-dir/cells.csv");
    assert_one_line_error(&out, 2, &["cannot write the CSV to /nonexistent-dir/cells.csv"]);
    assert!(!Path::new(&bed.db).exists(), "nothing stored, nothing run");
    assert!(bed.entries().is_empty());
}

#[test]
fn a_full_file_system_fails_the_matrix_in_one_line_stores_it_failed_and_removes_its_files() {
    let Some(fs) = Tmpfs::mount("size=8m") else { return };
    // 16 MiB files on an 8 MiB file system, the free-space check off so the writes meet ENOSPC.
    let out = fs.bed.command(
        "matrix",
        "--full --kinds write,read --min-file 16m --max-file 16m --min-record 1m --max-record 1m --no-space-check",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("No space left on device"), "{}", out.stderr);
    let m = matrix(&fs.bed, "m1");
    assert_eq!(m["status"], "failed");
    assert!(m["error"].as_str().unwrap().contains("No space left"), "{m}");
    assert!(fs.bed.entries().is_empty(), "{:?}", fs.bed.entries());
    assert_store_intact(&fs.bed.db);
}
