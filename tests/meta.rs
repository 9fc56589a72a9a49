//! `iosurvey meta`: the items each phase makes and visits, where they go, whose a task
//! visits, and what is left afterwards.

mod common;

use common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Entries of `dir` whose names start with `prefix`.
fn count(dir: &Path, prefix: &str) -> usize {
    listing(dir).iter().filter(|n| n.starts_with(prefix)).count()
}

/// (phase name, items) of every phase of a record.
fn items(run: &Value) -> Vec<(String, u64)> {
    run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["op"].as_str().unwrap().to_string(), p["figures"]["ops"].as_u64().unwrap()))
        .collect()
}

#[test]
fn every_phase_visits_exactly_its_items_and_nothing_is_left() {
    let bed = Bed::new();
    let out = bed.meta("--items 120 --tasks 2 --depth 1 --branch 3 --write-bytes 100 --read-bytes 100 --verify");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let expected = [
        ("tree-create", 8), // 4 directories (the top and 3 below) per task
        ("dir-create", 240),
        ("dir-stat", 240),
        ("dir-remove", 240),
        ("file-create", 240),
        ("file-stat", 240),
        ("file-read", 240),
        ("file-remove", 240),
        ("tree-remove", 8),
    ];
    let expected: Vec<(String, u64)> = expected.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(items(&run), expected);
    assert_eq!(run["phases"][6]["verify"]["checked"], 240, "every file read was checked");
    assert_eq!(run["phases"][6]["verify"]["bad"], 0);
    // The rate is all items over the team's window.
    let create = &run["phases"][4];
    let tasks = create["tasks"].as_array().unwrap();
    let n = |t: &Value, k: &str| t[k].as_u64().unwrap();
    let window = tasks.iter().map(|t| n(t, "close_end")).max().unwrap()
        - tasks.iter().map(|t| n(t, "open_start")).min().unwrap();
    let rate = create["figures"]["iops"].as_f64().unwrap();
    assert!((rate - 240.0 * 1e9 / window as f64).abs() < 1e-6 * rate, "{rate} over {window} ns");
    assert_eq!(create["figures"]["bytes"], 24000, "100 bytes written into each file");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

#[test]
fn items_go_evenly_into_the_directories_that_hold_them() {
    let bed = Bed::new();
    let out = bed.meta("--items 120 --tasks 2 --depth 1 --branch 3 --phases tree-create,dir-create,file-create --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let root = bed.dir.join("iosurvey.meta");
    for task in 0..2 {
        let top = root.join(format!("u.{task}"));
        for dir in [top.clone(), top.join("t.0"), top.join("t.1"), top.join("t.2")] {
            assert_eq!(count(&dir, &format!("f.{task}.")), 30, "{}", dir.display());
            assert_eq!(count(&dir, &format!("d.{task}.")), 30, "{}", dir.display());
        }
    }
    // Leaves only: 2 levels of 2, so 4 leaves hold 2 items each and the rest none; 9 items
    // round down to 8.
    let bed = Bed::new();
    let out = bed.meta("--items 9 --depth 2 --branch 2 --leaves-only --phases tree-create,file-create --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let top = bed.dir.join("iosurvey.meta/u.0");
    assert_eq!(count(&top, "f."), 0);
    assert_eq!(count(&top.join("t.1"), "f."), 0);
    for leaf in ["t.0/t.0", "t.0/t.1", "t.1/t.0", "t.1/t.1"] {
        assert_eq!(count(&top.join(leaf), "f.0."), 2, "{leaf}");
    }
    assert_eq!(items(&bed.last_run()), [("tree-create".to_string(), 7), ("file-create".to_string(), 8)]);
}

#[test]
fn a_shared_directory_holds_every_tasks_items() {
    let bed = Bed::new();
    let out = bed.meta("--items 50 --tasks 2 --shared-dir --phases tree-create,file-create --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let root = bed.dir.join("iosurvey.meta");
    assert_eq!(listing(&root), ["shared"]);
    assert_eq!(count(&root.join("shared"), "f.0."), 50);
    assert_eq!(count(&root.join("shared"), "f.1."), 50);
    assert_eq!(items(&bed.last_run())[0], ("tree-create".to_string(), 1), "the first task makes the shared tree");
}

#[test]
fn with_a_shift_a_task_stats_the_items_another_task_made() {
    let bed = Bed::new();
    let out = bed.meta("--items 20 --tasks 2 --phases tree-create,file-create --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Take away one of task 1's files: whoever stats it reports the error.
    fs::remove_file(bed.dir.join("iosurvey.meta/u.1/f.1.7")).unwrap();
    for (shift, who) in [("0", "task 1 "), ("1", "task 0 ")] {
        let out = bed.meta(&format!("--items 20 --tasks 2 --phases file-stat --shift {shift} --keep"));
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(out.stderr.contains(who) && out.stderr.contains("u.1/f.1.7"), "shift {shift}: {}", out.stderr);
    }
}

#[test]
fn a_stonewalled_create_wears_out_to_the_same_count_for_every_task() {
    let bed = Bed::new();
    let out = bed.meta("--items 200000 --tasks 2 --files-only --stonewall 0.05");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let per_task = |phase: &Value| -> Vec<u64> {
        phase["tasks"].as_array().unwrap().iter().map(|t| t["ops"].as_u64().unwrap()).collect()
    };
    let made = per_task(&run["phases"][1]);
    assert_eq!(made[0], made[1], "worn out to the most any task made");
    assert!(made[0] < 200000, "the stonewall stopped the create phase early: {made:?}");
    for phase in &run["phases"].as_array().unwrap()[2..4] {
        assert_eq!(per_task(phase), made, "{} visits what was made", phase["op"]);
    }
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

#[test]
fn bad_shapes_are_refused_in_one_line_with_the_flag_to_change() {
    let bed = Bed::new();
    let out = bed.meta("--items 5 --depth 1 --branch 10");
    assert_one_line_error(&out, 2, &["5 items per task cannot fill the 11 directories", "--items at least 11"]);
    let out = bed.meta("--write-bytes 10 --read-bytes 20");
    assert_one_line_error(&out, 2, &["reading 20 bytes", "--write-bytes and --read-bytes"]);
    let out = bed.meta("--phases file-create,write");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not a metadata phase"), "{}", out.stderr);
    assert!(bed.runs().is_empty());
    assert!(bed.entries().is_empty());
}

#[test]
fn several_base_directories_share_the_tasks_round_robin() {
    let bed = Bed::new();
    let other = bed.tmp.path().join("second");
    let dirs = format!("{}@{}", bed.dir.display(), other.display());
    let meta = |args: &str| {
        let mut all = vec!["meta", "--dir", dirs.as_str(), "--db", bed.db.as_str(), "-q"];
        all.extend(args.split_whitespace());
        iosurvey(&all)
    };
    let out = meta("--items 10 --tasks 3 --phases tree-create,file-create --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(listing(&bed.dir.join("iosurvey.meta")), ["u.0", "u.2"]);
    assert_eq!(listing(&other.join("iosurvey.meta")), ["u.1"]);
    assert_eq!(count(&other.join("iosurvey.meta/u.1"), "f.1."), 10);
    let run = bed.last_run();
    assert_eq!(run["workload"]["meta"]["bases"][0], other.display().to_string(), "recorded");

    let (fresh, other) = (bed.tmp.path().join("a"), bed.tmp.path().join("b"));
    let dirs = format!("{}@{}", fresh.display(), other.display());
    let all = ["meta", "--dir", dirs.as_str(), "--db", bed.db.as_str(), "-q", "--items", "10", "--tasks", "3"];
    let out = iosurvey(&all);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!fresh.exists() && !other.exists(), "both made for the run and removed after it");
    let out = iosurvey(&["meta", "--dir", "a@@b", "--db", bed.db.as_str()]);
    assert_one_line_error(&out, 2, &["empty directory between its '@'s"]);
}

/// One traced system call: its name and its first quoted argument (a path or a name).
struct Call {
    name: String,
    path: String,
    line: String,
}

/// The calls `strace -ff` wrote for each thread into `dir`, a list per thread.
fn traced(dir: &Path) -> Vec<Vec<Call>> {
    let parse = |line: &str| {
        let (name, rest) = line.split_once('(')?;
        let path = rest.split('"').nth(1).unwrap_or_default();
        Some(Call { name: name.to_string(), path: path.to_string(), line: line.to_string() })
    };
    let files = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path());
    files.map(|f| fs::read_to_string(f).unwrap().lines().filter_map(parse).collect()).collect()
}

/// Runs `meta` under strace (each thread to its own file, so no call is split) with `args`,
/// and returns the calls of the thread that visited the items; `None` when strace cannot run
/// here (the test has skipped).
fn strace_meta(bed: &Bed, args: &str) -> Option<Vec<Call>> {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("t").display().to_string();
    let calls = "trace=openat,openat2,newfstatat,mkdirat,unlinkat,close";
    let mut traced_bed = bed.clone_paths();
    traced_bed.launcher = ["strace", "-ff", "-qq", "-e", calls, "-o", &prefix].map(String::from).to_vec();
    let out = traced_bed.meta(args);
    if out.code != 0 && out.stderr.contains("ptrace") {
        skip(&format!("strace cannot trace here: {}", out.stderr.lines().next().unwrap_or_default()));
        return None;
    }
    assert_eq!(out.code, 0, "{}", out.stderr);
    let threads = traced(dir.path());
    Some(threads.into_iter().find(|calls| calls.iter().any(|c| c.path.ends_with("f.0.0"))).expect("an item call"))
}

/// The items of `--items N --depth 1 --branch 2`, a third in each directory: (name, its
/// directory's path from the run's root).
fn items_of(n: usize) -> Vec<(String, String)> {
    let dirs = ["u.0", "u.0/t.0", "u.0/t.1"];
    let names = move |kind: &'static str| (0..n).map(move |i| (format!("{kind}.0.{i}"), dirs[i * 3 / n].to_string()));
    names("f").chain(names("d")).collect()
}

/// Asserts that `calls` visit every item of `items_of(6)` with mdtest's one call per item and
/// op, each on the item's whole path: from `/` when `from` is the run's root's path from `/`
/// (the opens `openat2` refusing links only), else from the run's root, where every call
/// starts (the opens refusing links and mounts beneath it).
fn assert_one_call_per_item(calls: &[Call], from: Option<&str>) {
    let beneath = ["RESOLVE_BENEATH", "RESOLVE_NO_SYMLINKS", "RESOLVE_NO_XDEV"];
    // The run's root, as each phase's check opened it.
    let root_fd = |k: usize| {
        let open = calls[..k].iter().rfind(|c| c.path == "iosurvey.meta" && c.name == "openat2").expect("the root");
        open.line.rsplit("= ").next().unwrap().trim().to_string()
    };
    for (name, dir) in items_of(6) {
        let path = format!("{}{dir}/{name}", from.map_or(String::new(), |root| format!("{root}/")));
        let on: Vec<usize> = (0..calls.len()).filter(|&k| calls[k].path.ends_with(&name)).collect();
        let expected = match name.starts_with('f') {
            // Create and read are each one openat2 (then close), stat and remove one call.
            true => ["openat2", "newfstatat", "openat2", "unlinkat"].as_slice(),
            false => &["mkdirat", "newfstatat", "unlinkat"],
        };
        assert_eq!(on.iter().map(|&k| calls[k].name.as_str()).collect::<Vec<_>>(), expected, "{name}");
        for k in on {
            let c = &calls[k];
            assert_eq!(c.path, path, "the item's whole path: {}", c.line);
            match (from, c.name == "openat2") {
                (Some(_), true) => {
                    assert!(c.line.starts_with("openat2(AT_FDCWD, "), "{}", c.line);
                    assert!(c.line.contains("resolve=RESOLVE_NO_SYMLINKS}"), "links refused, nothing else: {}", c.line);
                }
                (Some(_), false) => {}
                (None, opens) => {
                    assert!(c.line.starts_with(&format!("{}({}, ", c.name, root_fd(k))), "from the root: {}", c.line);
                    assert!(!opens || beneath.iter().all(|f| c.line.contains(f)), "{}", c.line);
                }
            }
            // No walk to the item's directory around the call.
            for near in [&calls[k - 1], &calls[k + 1]] {
                assert!(!(near.path.ends_with(&dir) && near.line.contains("O_PATH")), "{}: {}", c.line, near.line);
            }
        }
    }
}

#[test]
fn the_default_makes_mdtests_one_call_per_item_and_op_on_its_whole_path_and_relative_calls_leave_the_walk_out() {
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed");
    }
    let bed = Bed::new();
    let args = "--items 6 --depth 1 --branch 2";
    let Some(calls) = strace_meta(&bed, args) else { return };
    let root = fs::canonicalize(&bed.dir).unwrap().join("iosurvey.meta");
    assert_one_call_per_item(&calls, Some(root.to_str().unwrap()));
    assert_eq!(bed.last_run()["warnings"], serde_json::json!([]), "every directory above the run's root is held");
    // The count: ten times the items cost ten times the calls on items, and nothing else more
    // (the checks before and after each phase cost per directory of the tree, not per item).
    let Some(more) = strace_meta(&bed, "--items 60 --depth 1 --branch 2") else { return };
    let per_file = ["openat2", "close", "newfstatat", "openat2", "close", "unlinkat"].len();
    let per_dir = ["mkdirat", "newfstatat", "unlinkat"].len();
    assert_eq!(more.len() - calls.len(), 54 * (per_file + per_dir), "one call per item and op, as mdtest");

    let Some(calls) = strace_meta(&bed, &format!("{args} --relative")) else { return };
    for (name, _) in items_of(6) {
        let on: Vec<&Call> = calls.iter().filter(|c| c.path.contains(&name)).collect();
        let expected = match name.starts_with('f') {
            true => ["openat", "newfstatat", "openat", "unlinkat"].as_slice(),
            false => &["mkdirat", "newfstatat", "unlinkat"],
        };
        assert_eq!(on.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), expected, "{name}");
        assert!(
            on.iter().all(|c| c.path == name),
            "bare names only: {:?}",
            on.iter().map(|c| &c.line).collect::<Vec<_>>()
        );
    }
}

#[test]
fn under_a_directory_other_users_may_write_each_path_starts_at_the_runs_root_and_the_run_says_so() {
    use std::os::unix::fs::PermissionsExt;
    if Command::new("strace").arg("-V").output().is_err() {
        return skip("strace is not installed");
    }
    let bed = Bed::new();
    // Anyone could rename the target away and put a link in its place: a path from / through
    // it could be led anywhere mid-run.
    fs::set_permissions(bed.tmp.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let Some(calls) = strace_meta(&bed, "--items 6 --depth 1 --branch 2") else { return };
    assert_one_call_per_item(&calls, None);
    let run = bed.last_run();
    let warning = run["warnings"][0].as_str().unwrap_or_default();
    let parent = fs::canonicalize(bed.tmp.path()).unwrap();
    for words in ["named from the run's root, held open", &format!("{} (mode 0777)", parent.display())] {
        assert!(warning.contains(words), "{words}: {run}");
    }
    let show = iosurvey(&["show", &run["id"].to_string(), "--db", &bed.db]);
    assert!(show.stdout.contains("warning: items were named from the run's root"), "show: {}", show.stdout);
}

#[test]
fn the_record_and_every_output_say_whether_calls_walked_paths() {
    let bed = Bed::new();
    let json = bed.tmp.path().join("run.json");
    let dir = bed.dir.display().to_string();
    for (extra, field, words) in [("", "path", "path walk"), ("--relative", "relative", "relative, no path walk")] {
        let mut args = vec!["meta", "--dir", &dir, "--db", &bed.db, "--items", "10", "--files-only"];
        args.extend(["--json", json.to_str().unwrap()]);
        args.extend(extra.split_whitespace());
        let out = iosurvey(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let heading = out.stdout.lines().next().unwrap_or_default();
        assert!(heading.starts_with("run ") && heading.contains(&format!(", {words}, 1 task")), "{}", out.stdout);
        let record: Value = serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(record["workload"]["meta"]["resolve"], field, "--json");
        let run = bed.last_run();
        assert_eq!(run["workload"]["meta"]["resolve"], field, "show --json");
        let id = run["id"].as_i64().unwrap().to_string();
        let show = iosurvey(&["show", &id, "--db", &bed.db]);
        assert!(show.stdout.contains(words), "show: {}", show.stdout);
        let listed = bed.runs().last().unwrap()["label"].clone();
        assert!(listed.as_str().unwrap().contains(words), "ls --json: {listed}");
        let csv = iosurvey(&["ls", "--format", "csv", "--db", &bed.db]);
        assert!(csv.stdout.lines().rfind(|l| !l.is_empty()).unwrap().contains(words), "ls as CSV: {}", csv.stdout);
    }
    // The two are different workloads: never pooled in a comparison.
    let runs = bed.runs();
    assert_ne!(runs[0]["label"], runs[1]["label"]);
}
