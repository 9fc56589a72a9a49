//! `iosurvey io500 --quick` end to end on a tmpfs.

mod common;

use common::*;

#[test]
fn a_quick_io500_prints_every_phase_and_a_score_its_numbers_make() {
    let bed = Bed::new();
    // On a tmpfs, as the quick list promises to fit in a minute there.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dir = shm.path().display().to_string();
    let out =
        iosurvey(&["io500", "--dir", &dir, "--db", &bed.db, "--quick", "--stonewall", "0.5", "--tasks", "2", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 14, "{}", out.stdout);
    // After the 8-character tag: the name, the figure, the unit.
    let field = |l: &str, k: usize| l[8..].split_whitespace().nth(k).unwrap().to_string();
    let names: Vec<String> = lines[..13].iter().map(|l| field(l, 0)).collect();
    assert_eq!(names[..3], ["ior-easy-write", "mdtest-easy-write", "timestamp"]);
    assert_eq!(names[5], "find");
    assert_eq!(names[12], "mdtest-hard-delete");
    // The score line is the geometric means of the printed phases and their root.
    let value = |l: &str| field(l, 1).parse::<f64>().unwrap();
    let mean = |unit: &str| {
        let v: Vec<f64> =
            lines[..13].iter().filter(|l| l.contains(unit) && l.starts_with("[RESULT]")).map(|l| value(l)).collect();
        (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
    };
    let (bw, md) = (mean("GiB/s"), mean("kIOPS"));
    let score: Vec<f64> = lines[13].split_whitespace().filter_map(|w| w.parse().ok()).collect();
    assert!((score[0] - bw).abs() <= 1e-5 * bw.max(1.0), "{} vs {bw}", lines[13]);
    assert!((score[1] - md).abs() <= 1e-5 * md.max(1.0), "{} vs {md}", lines[13]);
    assert!((score[2] - (score[0] * score[1]).sqrt()).abs() <= 1e-5 * score[2]);
    assert!(lines[13].ends_with("[INVALID]"), "quick is never valid for submission");
    assert!(!lines[5].contains("[INVALID]"), "find matched files: {}", lines[5]);
    // Eleven runs stored, one per run phase, in one survey; nothing left on the target.
    let runs = bed.runs();
    assert_eq!(runs.len(), 11);
    assert!(runs.iter().all(|r| r["status"] == "ok"), "{runs:?}");
    for r in &runs {
        let run = bed.show(r["id"].as_i64().unwrap());
        // The first task alone makes and removes the shared tree: the scored phases have all.
        for p in run["phases"].as_array().unwrap().iter().filter(|p| !p["op"].as_str().unwrap().starts_with("tree-")) {
            let busy = p["tasks"].as_array().unwrap().iter().filter(|t| t["ops"].as_u64() > Some(0)).count();
            assert_eq!(busy, 2, "both tasks work in {} {}", run["name"], p["op"]);
        }
    }
    assert!(listing(shm.path()).is_empty(), "{:?}", listing(shm.path()));
}
