//! Issue 39, round trips: every layout iosurvey's `ior`, `mdtest` and `iozone` front ends
//! print imports back (`iosurvey import`) to the figures of the run or matrix that printed it,
//! to the precision the layout prints; what the layout says of when and where (IOR's Began and
//! Machine, mdtest's "started at") is kept, and what it does not say is left out.

mod common;

use common::*;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

/// A store and a directory for a front end's files, and a second store to import into.
struct Trip {
    bed: Bed,
    into: String,
}

impl Trip {
    fn new() -> Trip {
        let bed = Bed::new();
        let into = bed.tmp.path().join("imported.db").display().to_string();
        Trip { bed, into }
    }

    /// Runs front end `tool` with `args` (split at blanks, `DIR` the scratch directory), its
    /// output kept in a file; returns the file.
    fn front_end(&self, tool: &str, args: &str) -> PathBuf {
        let dir = self.bed.dir.display().to_string();
        let args = args.replace("DIR", &dir);
        let mut all = vec!["--db", self.bed.db.as_str(), tool];
        all.extend(args.split_whitespace());
        let out = iosurvey(&all);
        assert_eq!(out.code, 0, "{tool} {args}: {}", out.stderr);
        let file =
            self.bed.tmp.path().join(format!("{tool}-{}.txt", fs::read_dir(self.bed.tmp.path()).unwrap().count()));
        fs::write(&file, &out.stdout).unwrap();
        file
    }

    /// Imports `file` into the second store; returns what import said.
    fn import(&self, file: &Path) -> String {
        let out = iosurvey(&["--db", &self.into, "import", file.to_str().unwrap()]);
        assert_eq!(out.code, 0, "import {}: {}", file.display(), out.stderr);
        out.stdout
    }

    fn json(db: &str, args: &[&str]) -> Value {
        let out = iosurvey(&[&["--db", db][..], args].concat());
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    }

    /// The last run stored in `db`, whole.
    fn last(db: &str) -> Value {
        let rows = Trip::json(db, &["ls", "--json"]);
        let id = rows.as_array().unwrap().last().expect("a run")["id"].to_string();
        Trip::json(db, &["show", &id, "--json"])
    }
}

/// `a` within `rel` of `b` (relative), or within `abs`.
fn near(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    (a - b).abs() <= (b.abs() * rel).max(abs)
}

/// The workload's shape as both sides must give it.
fn shape(run: &Value) -> Value {
    let w = &run["workload"];
    serde_json::json!([w["tasks"], w["iterations"], w["transfer"], w["block"], w["segments"], w["access"], w["ops"]])
}

#[test]
fn ior_text_json_and_csv_import_back_to_the_runs_figures() {
    let t = Trip::new();
    // (layout, bandwidth's precision as printed, window's in ns, whether it says when and
    // where). The CSV gives no segment count: its run has one segment.
    let layouts = [
        ("-s 2", 1e-3, 1_000, true),
        ("-s 2 -O summaryFormat=JSON", 1e-6, 1_000, true),
        ("-O summaryFormat=CSV", 1e-6, 50_000, false),
    ];
    for (layout, rel, ns, placed) in layouts {
        let file = t.front_end("ior", &format!("-w -r -t 64k -b 256k -i 2 -o DIR/f {layout}"));
        let said = t.import(&file);
        assert!(said.starts_with("imported ior "), "{layout}: {said}");
        let (ran, back) = (Trip::last(&t.bed.db), Trip::last(&t.into));
        assert_eq!(shape(&back), shape(&ran), "{layout}: the workload");
        let (a, b) = (phases(&ran), phases(&back));
        assert_eq!(a.len(), 4, "two iterations of write and read");
        assert_eq!(a.len(), b.len(), "{layout}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.op, x.bytes, x.ops), (&y.op, y.bytes, y.ops), "{layout}: op, bytes and transfers");
            assert!(x.bytes.is_some() && x.ops.is_some(), "{layout}: {x:?}");
            let (bx, by) = (x.bandwidth.unwrap_or(0.0), y.bandwidth.unwrap_or(0.0));
            assert!(near(by, bx, rel, 0.0), "{layout} {}: bandwidth {bx} back as {by}", x.op);
            let (wx, wy) = (x.window_ns.unwrap(), y.window_ns.unwrap());
            assert!(wx.abs_diff(wy) <= ns, "{layout} {}: window {wx} back as {wy}", x.op);
        }
        if placed {
            assert_eq!((&back["started"], &back["env"]["host"]), (&ran["started"], &ran["env"]["host"]), "{layout}");
        } else {
            // The CSV says neither: left unknown, not made up.
            assert_eq!((back["started"].as_i64(), back["env"]["host"].as_str()), (Some(0), Some("")), "{layout}");
        }
    }
}

#[test]
fn mdtest_output_imports_back_with_its_date_and_each_phases_mean() {
    let t = Trip::new();
    let file = t.front_end("mdtest", "-n 20 -i 2 -d DIR");
    assert!(t.import(&file).starts_with("imported mdtest "));
    let (ran, back) = (Trip::last(&t.bed.db), Trip::last(&t.into));
    // The "-- started at" line: the run's date, not 1970.
    assert_eq!(back["started"], ran["started"]);
    assert_eq!(back["workload"]["meta"]["items"], ran["workload"]["meta"]["items"]);
    assert_eq!(back["workload"]["iterations"], 2);
    let iops = |run: &Value, op: &str| -> Vec<f64> {
        run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["op"] == op)
            .map(|p| p["figures"]["iops"].as_f64().unwrap())
            .collect()
    };
    for op in ["dir-create", "file-create", "file-stat", "file-remove"] {
        let measured = iops(&ran, op);
        let mean = measured.iter().sum::<f64>() / measured.len() as f64;
        let imported = iops(&back, op);
        assert_eq!(imported.len(), 1, "{op}: the file gives the mean");
        assert!(near(imported[0], mean, 0.0, 1e-3), "{op}: mean {mean} back as {}", imported[0]);
    }
    // ls says which statistic each shows: mdtest's max for the run, the mean for the import.
    let own = iosurvey(&["--db", &t.bed.db, "ls", "--wide"]).stdout;
    let imported = iosurvey(&["--db", &t.into, "ls", "--wide"]).stdout;
    let best = |run: &Value, op: &str| iops(run, op).into_iter().fold(0.0, f64::max);
    assert!(own.contains(&format!("file-create={:.0} ops/s", best(&ran, "file-create"))), "{own}");
    assert!(imported.contains(" ops/s~") && imported.contains("~ the mean over the run's iterations"), "{imported}");
}

#[test]
fn iozone_report_excel_and_throughput_outputs_import_back_to_the_matrix_figures() {
    let t = Trip::new();
    let cells = |m: &Value| -> Vec<(String, u64, u64, f64)> {
        let mut out: Vec<(String, u64, u64, f64)> = m["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let rates: Vec<f64> =
                    c["samples"].as_array().unwrap().iter().filter_map(|s| s["team"].as_f64()).collect();
                let mut sorted = rates.clone();
                sorted.sort_by(f64::total_cmp);
                let median = sorted[sorted.len() / 2];
                (
                    c["kind"].as_str().unwrap().to_string(),
                    c["file"].as_u64().unwrap(),
                    c["record"].as_u64().unwrap(),
                    median,
                )
            })
            .collect();
        out.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
        out
    };
    let matrix = |db: &str, id: u32| Trip::json(db, &["show", &format!("m{id}"), "--json"]);
    let file = t.front_end("iozone", "-a -n 64k -g 256k -y 64k -q 128k -i 0 -i 1 -i 2 -R -f DIR/f");
    let text = fs::read_to_string(&file).unwrap();
    assert!(t.import(&file).starts_with("imported iozone "), "the report as iosurvey prints it");
    let (a, b) = (cells(&matrix(&t.bed.db, 1)), cells(&matrix(&t.into, 1)));
    assert!(!a.is_empty() && a.len() == b.len(), "{a:?}\n{b:?}");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.0, x.1, x.2), (&y.0, y.1, y.2));
        // Printed in whole kB/s.
        assert!(near(y.3, x.3, 0.0, 1024.0), "{x:?} back as {y:?}");
    }
    // The -R tables alone (the report's table taken out) give the same cells.
    let header = text.lines().position(|l| l.split_whitespace().take(2).eq(["kB", "reclen"])).unwrap();
    let head: Vec<&str> = text.lines().take(header).collect();
    let excel = &text[text.find("Excel output is below:").unwrap()..];
    let cut = t.bed.tmp.path().join("excel-only.txt");
    fs::write(&cut, format!("{}\n\niozone test complete.\n{excel}", head.join("\n"))).unwrap();
    t.import(&cut);
    let c = cells(&matrix(&t.into, 2));
    assert_eq!(c.len(), a.len());
    for (x, y) in a.iter().zip(&c) {
        assert!((&x.0, x.1, x.2) == (&y.0, y.1, y.2) && near(y.3, x.3, 0.0, 1024.0), "{x:?} back as {y:?}");
    }
    // Throughput mode: one run whose figures are the lines printed.
    let file = t.front_end("iozone", "-i 0 -i 1 -t 2 -s 256k -r 64k -F DIR/a DIR/b");
    let text = fs::read_to_string(&file).unwrap();
    assert!(t.import(&file).starts_with("imported iozone "), "{text}");
    let back = Trip::last(&t.into);
    assert_eq!((back["workload"]["tasks"].as_u64(), back["workload"]["transfer"].as_u64()), (Some(2), Some(65536)));
    for (name, op) in [("initial writers", "write"), ("readers", "read")] {
        let line = text.lines().find(|l| l.contains("Children see") && l.contains(name)).unwrap();
        let kb: f64 = line.split('=').nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        let phase = back["phases"].as_array().unwrap().iter().find(|p| p["op"] == op).unwrap();
        assert!(near(phase["figures"]["bandwidth"].as_f64().unwrap(), kb * 1024.0, 1e-9, 0.0), "{name}");
    }
}
