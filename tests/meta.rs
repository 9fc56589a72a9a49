//! `iosurvey meta`: the items each phase makes and visits, where they go, whose a task
//! visits, and what is left afterwards.

mod common;

use common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

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
