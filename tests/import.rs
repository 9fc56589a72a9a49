//! `iosurvey import` end to end: every fixture in tests/fixtures/tools (outputs the tools made
//! on this machine, elbencho's and IO500's made by hand from their documented formats)
//! imported through the binary, and each stored figure checked against the number the test
//! reads from the fixture's own text.

mod common;

use common::{assert_one_line_error, iosurvey, phases, Out};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tools").join(name)
}

fn text_of(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// A fresh store in a scratch directory.
struct Store {
    _tmp: tempfile::TempDir,
    db: String,
}

impl Store {
    fn new() -> Store {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("store.db").display().to_string();
        Store { _tmp: tmp, db }
    }

    fn run(&self, args: &[&str]) -> Out {
        let mut all = vec!["--db", &self.db];
        all.extend_from_slice(args);
        iosurvey(&all)
    }

    /// Imports `files`, which must succeed; returns stdout.
    fn import(&self, files: &[&Path]) -> String {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let mut args = vec!["import"];
        args.extend(names.iter().map(String::as_str));
        let out = self.run(&args);
        assert_eq!(out.code, 0, "import {names:?}: {}", out.stderr);
        out.stdout
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    }

    /// Every stored run, whole, in id order.
    fn runs(&self) -> Vec<Value> {
        let rows = self.json(&["ls", "--json"]);
        rows.as_array().unwrap().iter().map(|r| self.json(&["show", &r["id"].to_string(), "--json"])).collect()
    }
}

const MIB: f64 = 1_048_576.0;

/// `a` and `b` equal but for the last bits lost through JSON text.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= b.abs() * 1e-9
}

/// IOR text's result rows, read the plain way: (op, bandwidth MiB/s, IOPS, iteration).
fn ior_rows(text: &str) -> Vec<(String, f64, f64, u64)> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 11 && (w[0] == "write" || w[0] == "read"))
        .map(|w| (w[0].to_string(), w[1].parse().unwrap(), w[2].parse().unwrap(), w[10].parse().unwrap()))
        .collect()
}

#[test]
fn ior_text_figures_are_the_files() {
    for name in ["ior-fpp-2tasks.txt", "ior-shared-2tasks.txt"] {
        let s = Store::new();
        let said = s.import(&[&fixture(name)]);
        assert!(said.starts_with("imported ior 4.1.0+dev file ") && said.contains(" as run 1"), "{said}");
        let run = &s.runs()[0];
        let want = ior_rows(&text_of(name));
        assert_eq!(want.len(), 4, "{name}: two iterations of write and read");
        let got = phases(run);
        for ((op, mib, iops, iter), g) in want.iter().zip(&got) {
            assert_eq!((op, iter), (&g.op, &g.iteration), "{name}");
            assert!(close(g.bandwidth.unwrap(), mib * MIB), "{name} {op} {iter}: {:?} vs {mib} MiB/s", g.bandwidth);
            assert_eq!(g.iops.unwrap(), *iops, "{name}");
        }
        let text = text_of(name);
        let access = if text.contains("file-per-process") { "file-per-task" } else { "shared" };
        assert_eq!(run["workload"]["access"], access, "{name}");
        assert_eq!((run["workload"]["transfer"].as_u64(), run["workload"]["tasks"].as_u64()), (Some(65536), Some(2)));
        assert_eq!(run["provenance"], "imported:ior 4.1.0+dev");
        assert_eq!(run["env"]["host"], "vm", "Machine : Linux vm");
    }
}

#[test]
fn ior_json_figures_are_the_files() {
    for name in ["ior-random-summary.json", "ior-stdout.json"] {
        let s = Store::new();
        s.import(&[&fixture(name)]);
        let file: Value = serde_json::from_str(&text_of(name)).unwrap();
        let rows = file["tests"][0]["Results"].as_array().unwrap();
        let run = &s.runs()[0];
        let got = phases(run);
        assert_eq!(got.len(), rows.len(), "{name}");
        for (row, g) in rows.iter().zip(&got) {
            assert_eq!(row["access"].as_str().unwrap(), g.op);
            assert!(close(g.bandwidth.unwrap(), row["bwMiB"].as_f64().unwrap() * MIB), "{name}");
            assert_eq!(g.iops.unwrap(), row["iops"].as_f64().unwrap());
        }
        let random = file["tests"][0]["Parameters"]["randomOffset"] == 1;
        assert_eq!(run["workload"]["pattern"], if random { "random" } else { "sequential" }, "{name}");
    }
}

#[test]
fn mdtest_means_are_the_files_and_its_other_phases_are_kept() {
    let s = Store::new();
    s.import(&[&fixture("mdtest-2tasks.txt")]);
    let run = &s.runs()[0];
    let text = text_of("mdtest-2tasks.txt");
    let ops = [
        ("Directory creation", "dir-create"),
        ("Directory stat", "dir-stat"),
        ("Directory removal", "dir-remove"),
        ("File creation", "file-create"),
        ("File stat", "file-stat"),
        ("File read", "file-read"),
        ("File removal", "file-remove"),
        ("Tree creation", "tree-create"),
        ("Tree removal", "tree-remove"),
    ];
    let got = phases(run);
    for (name, op) in ops {
        let line = text.lines().find(|l| l.trim_start().starts_with(name)).unwrap();
        let mean: f64 = line.split_whitespace().rev().nth(1).unwrap().parse().unwrap();
        let phase = got.iter().find(|p| p.op == op).unwrap_or_else(|| panic!("{op} in {got:?}"));
        assert_eq!(phase.iops, Some(mean), "{name}");
    }
    let rename = run["tool_params"]["mdtest.Directory rename"].as_str().unwrap();
    assert!(rename.contains("mean 64445.255"), "not dropped silently: {rename}");
    assert_eq!((run["workload"]["meta"]["items"].as_u64(), run["workload"]["tasks"].as_u64()), (Some(200), Some(2)));
}

/// IOzone's automatic table: (file kB, record kB, the figures of its row).
fn iozone_rows(text: &str) -> Vec<(u64, u64, Vec<f64>)> {
    let at = text.lines().position(|l| l.split_whitespace().take(2).eq(["kB", "reclen"])).unwrap();
    text.lines()
        .skip(at + 1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let w: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            (w[0] as u64, w[1] as u64, w[2..].to_vec())
        })
        .collect()
}

/// A matrix's figure for a kind and cell, bytes/s.
fn cell(m: &Value, kind: &str, file_kb: u64, record_kb: u64) -> f64 {
    m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == kind && c["file"] == file_kb * 1024 && c["record"] == record_kb * 1024)
        .unwrap_or_else(|| panic!("{kind} {file_kb} {record_kb}"))["samples"][0]["team"]
        .as_f64()
        .unwrap()
}

#[test]
fn an_iozone_table_is_a_matrix_of_the_files_figures() {
    // Columns as IOzone prints them, by kind; frewrite and freread have no kind.
    let kinds = [
        (0, "write"),
        (1, "rewrite"),
        (2, "read"),
        (3, "reread"),
        (4, "random-read"),
        (5, "random-write"),
        (6, "backward-read"),
        (7, "record-rewrite"),
        (8, "stride-read"),
        (9, "stream-write"),
        (11, "stream-read"),
    ];
    for name in ["iozone-auto.txt", "iozone-auto-excel.txt"] {
        let s = Store::new();
        let said = s.import(&[&fixture(name)]);
        assert!(said.contains("as matrix m1"), "{said}");
        let m = s.json(&["show", "m1", "--json"]);
        let rows = iozone_rows(&text_of(name));
        assert_eq!(rows.len(), 18);
        for (file, record, figures) in &rows {
            for (col, kind) in kinds {
                assert!(close(cell(&m, kind, *file, *record), figures[col] * 1024.0), "{name} {kind} {file} {record}");
            }
            let kept = &m["tool_params"][format!("iozone.frewrite {file} kB file {record} kB records")];
            assert_eq!(kept.as_str().unwrap(), format!("{} kB/s", figures[10]), "{name}");
        }
        assert_eq!(m["provenance"], "imported:iozone 3.508");
        let ls = s.run(&["ls"]);
        assert!(ls.stdout.contains("imported:iozone 3.508"), "{}", ls.stdout);
    }
    // The Excel reports say what the table says.
    let excel = text_of("iozone-auto-excel.txt");
    let reader = excel.lines().skip_while(|l| l.trim() != "\"Reader report\"").nth(2).unwrap();
    let first: f64 = reader.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(first, iozone_rows(&excel)[0].2[2], "the reader report's first figure is the table's 64 kB / 4 kB read");
}

#[test]
fn iozone_throughput_mode_is_one_run_of_its_processes() {
    let s = Store::new();
    s.import(&[&fixture("iozone-throughput.txt")]);
    let run = &s.runs()[0];
    let text = text_of("iozone-throughput.txt");
    let children = |what: &str| -> f64 {
        let line = text.lines().find(|l| l.contains("Children see") && l.contains(what)).unwrap();
        line.split('=').nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap()
    };
    let got = phases(run);
    for (what, op) in
        [("initial writers", "write"), ("rewriters", "rewrite"), (" readers", "read"), ("re-readers", "reread")]
    {
        let phase = got.iter().find(|p| p.op == op).unwrap();
        assert!(close(phase.bandwidth.unwrap(), children(what) * 1024.0), "{op}");
    }
    assert_eq!((run["workload"]["tasks"].as_u64(), run["workload"]["transfer"].as_u64()), (Some(2), Some(65536)));
}

#[test]
fn fio_jobs_are_runs_and_json_plus_bins_the_latency() {
    let s = Store::new();
    s.import(&[&fixture("fio.json"), &fixture("fio-plus.json")]);
    let runs = s.runs();
    let mut jobs = Vec::new();
    for name in ["fio.json", "fio-plus.json"] {
        let text = text_of(name);
        let file: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
        jobs.extend(file["jobs"].as_array().unwrap().clone());
    }
    assert_eq!(runs.len(), jobs.len(), "a run per job");
    for (run, job) in runs.iter().zip(&jobs) {
        assert_eq!(run["tool_params"]["fio.jobname"], job["jobname"]);
        for p in run["phases"].as_array().unwrap() {
            let side = &job[p["op"].as_str().unwrap()];
            assert_eq!(p["figures"]["bandwidth"].as_f64(), side["bw_bytes"].as_f64());
            assert_eq!(p["figures"]["iops"].as_f64(), side["iops"].as_f64());
            let clat = &side["clat_ns"];
            let lat = &p["latency"];
            assert_eq!(
                (lat["count"].as_u64(), lat["min"].as_u64(), lat["max"].as_u64()),
                (clat["N"].as_u64(), clat["min"].as_u64(), clat["max"].as_u64())
            );
            if let Some(bins) = clat["bins"].as_object() {
                let counted: u64 = lat["buckets"].as_array().unwrap().iter().map(|b| b[1].as_u64().unwrap()).sum();
                assert_eq!(counted, bins.values().map(|c| c.as_u64().unwrap()).sum::<u64>(), "every bin kept");
            }
        }
    }
    assert!(runs.iter().all(|r| r["provenance"] == "imported:fio 3.33"));
}

#[test]
fn elbencho_rows_are_the_files() {
    for name in ["elbencho.csv", "elbencho.json"] {
        let s = Store::new();
        s.import(&[&fixture(name)]);
        let run = &s.runs()[0];
        let text = text_of(name);
        let rows: Vec<serde_json::Map<String, Value>> = if name.ends_with(".json") {
            serde_json::from_str(&text).unwrap()
        } else {
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().unwrap().split(',').collect();
            lines
                .map(|l| header.iter().zip(l.split(',')).map(|(k, v)| (k.to_string(), Value::from(v))).collect())
                .collect()
        };
        for p in run["phases"].as_array().unwrap() {
            let row = rows
                .iter()
                .find(|r| r["operation"].as_str().unwrap().to_lowercase() == p["op"].as_str().unwrap())
                .unwrap();
            let mib: f64 = row["MiB/s [last]"].as_str().unwrap().parse().unwrap();
            assert_eq!(p["figures"]["bandwidth"].as_f64(), Some(mib * MIB), "{name}");
        }
        assert_eq!(run["label"], rows[0]["label"], "elbencho's label is the system's");
    }
}

#[test]
fn iperf3_is_a_network_figure_shown_beside_runs_of_its_host() {
    let s = Store::new();
    s.import(&[&fixture("iperf3.json"), &fixture("ior-fpp-2tasks.txt")]);
    let file: Value = serde_json::from_str(&text_of("iperf3.json")).unwrap();
    let mib = file["end"]["sum_received"]["bits_per_second"].as_f64().unwrap() / 8.0 / MIB;
    let shown = s.run(&["show", "1"]);
    let line = shown
        .stdout
        .lines()
        .find(|l| l.contains("tcp (imported:iperf3 3.12)"))
        .unwrap_or_else(|| panic!("{}", shown.stdout));
    assert!(line.contains(&format!("{mib:.1}")), "{line} has {mib:.1} MiB/s");
}

#[test]
fn an_io500_directory_is_one_list_of_its_results() {
    let s = Store::new();
    let said = s.import(&[&fixture("io500-result")]);
    assert!(said.contains("IO500 list s1"), "{said}");
    let runs = s.json(&["show", "s1", "--json"]);
    let text = text_of("io500-result/result_summary.txt");
    let mut seen = 0;
    for line in text.lines().filter(|l| l.starts_with("[RESULT]")) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (name, value, unit) = (w[1], w[2].parse::<f64>().unwrap(), w[3]);
        let Some(run) = runs.as_array().unwrap().iter().find(|r| r["name"] == name) else {
            assert_eq!(name, "find", "find alone is no run");
            continue;
        };
        seen += 1;
        let f = &run["phases"][0]["figures"];
        match unit {
            "GiB/s" => assert!(close(f["bandwidth"].as_f64().unwrap(), value * 1_073_741_824.0), "{name}"),
            _ => assert!(close(f["iops"].as_f64().unwrap(), value * 1000.0), "{name}"),
        }
        assert!(run["tool_params"]["io500.score"].as_str().unwrap().starts_with("[SCORE ]"));
        assert_eq!(run["workload"]["tasks"], 64, "procs from result.txt");
    }
    assert_eq!(seen, 11);
}

#[test]
fn importing_a_file_again_stores_nothing_new() {
    let s = Store::new();
    let f = fixture("ior-fpp-2tasks.txt");
    s.import(&[&f]);
    let again = s.import(&[&f, &f]);
    assert_eq!(again.lines().count(), 2, "{again}");
    assert!(again.lines().all(|l| l.contains("was imported before") && l.contains("run 1")), "{again}");
    assert_eq!(s.runs().len(), 1);
}

/// A copy of a fixture changed by `f`, in `dir`.
fn spoilt(dir: &Path, name: &str, f: impl Fn(&str) -> String) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, f(&text_of(name))).unwrap();
    path
}

#[test]
fn a_malformed_file_names_its_line_and_stores_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let ior_word = |t: &str| {
        // The first write row's bandwidth replaced by a word.
        let row = t.lines().find(|l| l.starts_with("write ")).unwrap();
        t.replacen(row, &row.replacen(row.split_whitespace().nth(1).unwrap(), "fast", 1), 1)
    };
    let half = |t: &str| t.lines().take(t.lines().count() / 2).collect::<Vec<_>>().join("\n");
    let json_word = |t: &str| t.replacen("\"bwMiB\": 4202.7094", "\"bwMiB\": \"fast\"", 1);
    let cases: Vec<(PathBuf, usize)> = vec![
        (
            spoilt(tmp.path(), "ior-fpp-2tasks.txt", ior_word),
            text_of("ior-fpp-2tasks.txt").lines().position(|l| l.starts_with("write ")).unwrap() + 1,
        ),
        (spoilt(tmp.path(), "mdtest-2tasks.txt", half), 0),
        (spoilt(tmp.path(), "iozone-auto.txt", half), 0),
        (spoilt(tmp.path(), "fio-plus.json", half), 0),
        (spoilt(tmp.path(), "elbencho.csv", |t| t.replacen(",168,168,29", ",lots,168,29", 1)), 3),
        (spoilt(tmp.path(), "iperf3.json", half), 0),
        (
            spoilt(tmp.path(), "ior-random-summary.json", json_word),
            text_of("ior-random-summary.json").lines().position(|l| l.contains("\"bwMiB\": 4202.7094")).unwrap() + 1,
        ),
    ];
    for (path, line) in cases {
        let s = Store::new();
        let good = fixture("ior-shared-2tasks.txt");
        let out = s.run(&["import", &good.display().to_string(), &path.display().to_string()]);
        assert_eq!(out.code, 2, "{}: {}", path.display(), out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line: {}", out.stderr);
        let named = format!("{}:", path.display());
        assert!(lines[0].contains(&named) && lines[0].contains(": expected "), "{}", lines[0]);
        if line > 0 {
            assert!(lines[0].contains(&format!("{named}{line}: expected")), "line {line}: {}", lines[0]);
        }
        assert!(out.stdout.is_empty(), "{}", out.stdout);
        // Nothing of the command is stored, not even the good file.
        let listed = s.run(&["ls", "--json"]);
        assert!(listed.code != 0 || listed.stdout.trim() == "[]", "{}", listed.stdout);
    }
}

#[test]
fn the_store_and_a_plain_directory_are_refused() {
    let s = Store::new();
    s.import(&[&fixture("ior-fpp-2tasks.txt")]);
    let out = s.run(&["import", &s.db.clone()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("it is the result store"), "{}", out.stderr);
    let out = s.run(&["import", &fixture("").display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not an IO500 result directory"), "{}", out.stderr);
    let out = s.run(&["import", "--tool", "fio", &fixture("ior-fpp-2tasks.txt").display().to_string()]);
    assert_eq!((out.code, out.stderr.lines().count()), (2, 1), "{}", out.stderr);
}

#[test]
fn imported_runs_are_marked_in_ls_show_compare_and_the_report() {
    let s = Store::new();
    s.import(&[&fixture("ior-fpp-2tasks.txt"), &fixture("ior-shared-2tasks.txt")]);
    let ls = s.run(&["ls"]);
    assert!(
        ls.stdout.contains("imported:ior 4.1.0+dev") && ls.stdout.contains("not measured by iosurvey"),
        "{}",
        ls.stdout
    );
    let show = s.run(&["show", "1"]);
    let said = show
        .stdout
        .lines()
        .find(|l| l.starts_with("imported from ior 4.1.0+dev file "))
        .unwrap_or_else(|| panic!("{}", show.stdout));
    assert!(said.contains("ior-fpp-2tasks.txt"), "{said}");
    assert!(show.stdout.contains("ior.ordering inter file"), "the tool's own parameters: {}", show.stdout);
    let compare = s.run(&["compare", "1", "2"]);
    assert!(compare.stdout.contains("1 (imported:ior 4.1.0+dev)"), "{}", compare.stdout);
    let report = s._tmp.path().join("r.md");
    let out = s.run(&["report", "-o", &report.display().to_string(), "--format", "md"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("imported from ior 4.1.0+dev"), "the report's settings say so");
}

/// fio's JSON of `jobs` jobs of one write each (with json+ bins when `bins`), under
/// `globals` global options; the last job's bins name `last_bin`.
fn fio_jobs(jobs: usize, globals: usize, bins: bool, last_bin: &str) -> String {
    let global: Vec<String> = (0..globals).map(|k| format!("\"opt{k}\": \"value{k}\"")).collect();
    let job = |j: usize| {
        let bin = if j + 1 == jobs { last_bin } else { "1000" };
        let bins = if bins { format!(",\n      \"bins\": {{\"{bin}\": 1}}") } else { String::new() };
        format!(
            "  {{\"jobname\": \"j{j}\", \"job options\": {{\"rw\": \"write\", \"bs\": \"4k\"}},\n   \"write\": {{\"io_bytes\": 4096, \"bw\": 4, \"iops\": 1, \"runtime\": 1, \"total_ios\": 1,\n    \"clat_ns\": {{\"N\": 1, \"min\": 1000, \"max\": 1000, \"mean\": 1000{bins}}}}}}}"
        )
    };
    let jobs: Vec<String> = (0..jobs).map(job).collect();
    format!(
        "{{\"fio version\": \"fio-3.33\", \"timestamp\": 5,\n \"global options\": {{{}}},\n \"jobs\": [\n{}\n]}}\n",
        global.join(", "),
        jobs.join(",\n")
    )
}

/// `iosurvey --db DB import FILE` under `timeout SECS` (exit 124 when it ran out).
fn import_within(db: &str, file: &Path, secs: u32) -> Out {
    let bin = env!("CARGO_BIN_EXE_iosurvey");
    let out = std::process::Command::new("timeout")
        .args([&secs.to_string(), bin, "--db", db, "import", &file.display().to_string()])
        .output()
        .unwrap();
    common::outcome(out)
}

#[test]
fn fio_global_options_are_bounded_before_any_run_is_built() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::new();
    // 12,000 global options under 120 jobs: 0.3 MB of file, and each run would repeat every
    // global option twice (parameters, command line): 100 MB. The probe's 6 MB of global
    // options under 2,000 jobs took more than 4 GB.
    let amplified = tmp.path().join("amp.json");
    std::fs::write(&amplified, fio_jobs(120, 12_000, false, "")).unwrap();
    let out = import_within(&s.db, &amplified, 60);
    assert_one_line_error(&out, 2, &["amp.json:2: expected options the runs can hold", "120 jobs", "64 MiB"]);
    assert!(!Path::new(&s.db).exists(), "nothing stored, no store made");
    // A file of ordinary size is imported with each run keeping the global options.
    let fine = tmp.path().join("fine.json");
    std::fs::write(&fine, fio_jobs(3, 2, false, "")).unwrap();
    s.import(&[&fine]);
    let runs = s.runs();
    assert_eq!(runs.len(), 3);
    for r in &runs {
        assert_eq!(
            (&r["tool_params"]["fio.opt1"], &r["tool_params"]["fio.bs"]),
            (&Value::from("value1"), &Value::from("4k"))
        );
        assert!(r["command_line"].as_str().unwrap().contains("--opt0=value0"), "{}", r["command_line"]);
    }
}

#[test]
fn fio_json_plus_is_read_in_time_linear_in_its_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::new();
    // 20,000 jobs with bins (7 MB), the last one's bin misnamed: the whole file is read, and
    // refused at its end, without storing 20,000 runs. Looking each job's line up from the
    // start of the text took minutes; one pass takes well under a second.
    let jobs = 20_000;
    let text = fio_jobs(jobs, 3, true, "soon");
    let line = text.lines().collect::<Vec<_>>().iter().rposition(|l| l.contains("\"bins\"")).unwrap() + 1;
    let file = tmp.path().join("plus.json");
    std::fs::write(&file, &text).unwrap();
    let out = import_within(&s.db, &file, 60);
    assert_ne!(out.code, 124, "not read within 60 s");
    assert_one_line_error(
        &out,
        2,
        &[&format!("plus.json:{line}: expected a latency in ns as a bin's name, found 'soon'")],
    );
}
