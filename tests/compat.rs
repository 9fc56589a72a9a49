//! The front ends: IOR's, mdtest's and IOzone's command lines as they are, the seeds' lines
//! among them, run as the native workload they mean (trace for trace) and printed in the
//! tool's own layout, which parses as the real tool's does.

mod common;

use common::{assert_one_line_error, iosurvey, outcome, Bed, Out};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Runs `iosurvey TOOL ARGS` with the trace of the null and delay engines in `trace`, if given.
fn tool(bed: &Bed, line: &str, trace: Option<&Path>) -> Out {
    let mut words: Vec<String> = line.split_whitespace().map(String::from).collect();
    words.extend(["--db".into(), bed.db.clone()]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iosurvey"));
    cmd.args(&words);
    if let Some(t) = trace {
        cmd.env("IOSURVEY_TRACE", t);
    }
    outcome(cmd.output().unwrap())
}

/// The trace lines `TASK OP OFFSET LENGTH` of a command, sorted (tasks run at once).
fn traced(bed: &Bed, line: &str) -> Vec<String> {
    let path = bed.tmp.path().join("trace");
    let _ = fs::remove_file(&path);
    let out = tool(bed, line, Some(&path));
    assert_eq!(out.code, 0, "{line}: {}", out.stderr);
    let mut lines: Vec<String> = fs::read_to_string(&path).unwrap_or_default().lines().map(String::from).collect();
    lines.sort();
    lines
}

/// The seeds' lines: the Isilon appendix's IOR lines (000_..., N-to-N and N-to-1, sequential
/// and 4 KiB random, each with the client counts' sizes), scaled to this machine by their
/// block size and path only, and the native command each means. The PixStor IOzone lines and
/// the admin's `iozone -a -g 12G` follow in `the_seeds_iozone_lines_...`.
const ISILON: [(&str, &str); 6] = [
    (
        "ior -a POSIX -v -i 1 -d 3 -e -F -k -o DIR/test -w -s 1 -t 1m -b SIZE",
        "--op write --access file-per-task --transfer 1048576",
    ),
    (
        "ior -a POSIX -v -i 1 -d 3 -e -F -k -o DIR/test -r -s 1 -t 1m -b SIZE",
        "--op read --access file-per-task --transfer 1048576",
    ),
    (
        "ior -a POSIX -v -i 1 -d 3 -e -k -o DIR/test -w -s 1 -t 1m -b SIZE",
        "--op write --access shared --transfer 1048576",
    ),
    (
        "ior -a POSIX -v -i 1 -d 3 -e -k -o DIR/test -r -s 1 -t 1m -b SIZE",
        "--op read --access shared --transfer 1048576",
    ),
    (
        "ior -a POSIX -v -i 1 -d 3 -e -F -k -o DIR/test -w -r -s 1 -z -t 4k -b SIZE",
        "--op write,read --access file-per-task --transfer 4096",
    ),
    (
        "ior -a POSIX -v -i 1 -d 3 -e -k -o DIR/test -w -r -s 1 -z -t 4k -b SIZE",
        "--op write,read --access shared --transfer 4096",
    ),
];

#[test]
fn the_seeds_ior_lines_parse_map_to_their_workload_and_print_iors_layout() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    for (line, mapped) in ISILON {
        let line = line.replace("DIR", &dir).replace("SIZE", "8m");
        // The native command the front end says it runs (-v), with the flags that make the
        // workload.
        let out = tool(&bed, &format!("{line} --tasks 2 --engine null"), None);
        assert_eq!(out.code, 0, "{line}: {}", out.stderr);
        let runs_as = out.stderr.lines().find(|l| l.starts_with("iosurvey: runs as:")).unwrap_or_default().to_string();
        assert!(runs_as.contains(mapped), "{line}\n{runs_as}");
        for part in ["--keep", "--iterations 1", "--block 8388608", "--no-fadvise"] {
            assert!(runs_as.contains(part), "{part}: {runs_as}");
        }
        // IOR's -e syncs in a write phase's close: a read-only test has nothing to sync.
        assert_eq!(line.contains(" -w "), runs_as.contains("--fsync"), "{runs_as}");
        assert_eq!(line.contains(" -z "), runs_as.contains("--pattern random"), "{runs_as}");
        // -d 3 is noted once: iosurvey does not pause.
        assert_eq!(out.stderr.matches("-d 3").count(), 1, "{}", out.stderr);
        // IOR's layout: the results table, a row per phase, and the summary.
        assert!(out.stdout.contains("access    bw(MiB/s)  IOPS       Latency(s)"), "{}", out.stdout);
        assert!(out.stdout.contains("Summary of all tests:"));
        let phases = out.stdout.lines().filter(|l| l.starts_with("write ") || l.starts_with("read ")).count();
        // A row per phase in the results table and one per op in the summary.
        assert_eq!(phases, 2 * mapped.split(' ').nth(1).unwrap().split(',').count(), "{}", out.stdout);
        // The run is stored with the command line as typed.
        let stored = bed.last_run();
        assert!(stored["command_line"].as_str().unwrap().contains(&line[4..]), "{}", stored["command_line"]);
    }
    // Real storage: the N-to-1 random line at 1 MiB per task writes and reads 4 KiB
    // transfers, and -k leaves iosurvey's files in -o's directory.
    let line = ISILON[5].0.replace("DIR", &dir).replace("SIZE", "1m");
    let out = tool(&bed, &format!("{line} --tasks 2"), None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fs::read_dir(&bed.dir).unwrap().any(|e| e.unwrap().file_name() == "iosurvey.shared"));
}

#[test]
fn the_seeds_lines_as_printed_with_a_lost_dash_are_refused_naming_the_stray_word() {
    let bed = Bed::new();
    // The appendix as its PDF text has it: "-w s 1" and "-s 1 t 1m" lost their dashes.
    for (line, word) in [
        ("ior -a POSIX -i 1 -e -F -k -o /x/test -w s 1 -t 1m -b 32g", "'s'"),
        ("ior -a POSIX -i 1 -e -k -o /x/test -w -s 1 t 1m -b 2048g", "'t'"),
    ] {
        let out = tool(&bed, line, None);
        assert_one_line_error(&out, 2, &["ior", word, "lost '-'"]);
    }
    assert!(!Path::new(&bed.db).exists(), "nothing stored, no store made");
}

#[test]
fn a_front_end_run_is_the_native_run_it_maps_to_transfer_for_transfer() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let pairs = [
        (
            format!("ior -a POSIX -F -z -i 2 -w -r -t 4k -b 64k -o {dir}/t --tasks 3 --engine null"),
            format!("run --dir {dir} --force --no-fadvise --access file-per-task --pattern random --iterations 2 --op write,read --transfer 4k --block 64k --tasks 3 --engine null"),
        ),
        (
            format!("ior -w -r -t 47008 -b 47008 -s 20 -o {dir}/t --tasks 2 --engine null"),
            format!("run --dir {dir} --force --no-fadvise --access shared --op write,read --transfer 47008 --block 47008 --segments 20 --tasks 2 --engine null"),
        ),
        (
            format!("iozone -i 0 -i 1 -i 2 -r 4k -s 64k -t 2 -f {dir}/f --engine null"),
            format!("matrix --dir {dir} --full --kinds write,rewrite,read,reread,random-read,random-write --min-file 64k --max-file 64k --min-record 4k --max-record 4k --tasks 2 --stand-in null"),
        ),
    ];
    for (front, native) in pairs {
        let (a, b) = (traced(&bed, &front), traced(&bed, &native));
        assert!(!a.is_empty(), "{front}: no trace");
        assert_eq!(a, b, "{front}\nvs {native}");
    }
}

#[test]
fn an_mdtest_line_stores_the_workload_meta_would_and_prints_mdtests_summary() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let out = tool(&bed, &format!("mdtest -n 40 -i 2 -z 1 -b 2 -d {dir} -F --tasks 2"), None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let front = bed.last_run();
    let native = bed.meta("-n 40 -i 2 -z 1 -b 2 --shared-dir -F --force --tasks 2");
    assert_eq!(native.code, 0, "{}", native.stderr);
    let native = bed.last_run();
    assert_eq!(front["workload"], native["workload"]);
    let ops = |r: &Value| {
        r["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["op"].clone(), p["figures"]["ops"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ops(&front), ops(&native));
    // mdtest's summary: a line per phase, the figures the record holds.
    assert!(out.stdout.contains("SUMMARY rate (in ops/sec): (of 2 iterations)"), "{}", out.stdout);
    let creation: Vec<f64> = out
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("File creation"))
        .unwrap()
        .split_whitespace()
        .skip(2)
        .map(|v| v.parse().unwrap())
        .collect();
    let rates: Vec<f64> = front["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["op"] == "file-create")
        .map(|p| p["figures"]["iops"].as_f64().unwrap())
        .collect();
    let max = rates.iter().copied().fold(0.0, f64::max);
    assert!((creation[0] - max).abs() < 0.001, "{creation:?} vs {rates:?}");
    // mdtest's own output and ours, read by the same pipeline: the operation names line up.
    let real = fs::read_to_string("tests/fixtures/compat/mdtest-4.1.txt").unwrap();
    let names = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with("SUMMARY rate"))
            .skip(3)
            .take_while(|l| l.starts_with("   ") && !l.trim().is_empty())
            .map(|l| l[..24].trim().to_string())
            .collect()
    };
    let ours = names(&out.stdout);
    assert!(!ours.is_empty() && ours.iter().all(|n| names(&real).contains(n)), "{ours:?} vs {:?}", names(&real));
}

/// `grep Max Write` and the summary's columns, as scripts take them from IOR.
fn max_write(text: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with("Max Write:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
}

fn summary_columns(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Summary of all tests:"))
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[test]
fn a_script_that_parses_iors_output_parses_iosurvey_iors_alike() {
    let real = fs::read_to_string("tests/fixtures/compat/ior-4.1-fpp.txt").unwrap();
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let out = tool(&bed, &format!("ior -a POSIX -v -i 2 -e -F -o {dir}/test -w -r -s 1 -t 1m -b 4m --tasks 2"), None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(max_write(&real).is_some());
    let ours = max_write(&out.stdout).expect("a Max Write line");
    // The figure is the record's best write, in MiB/s.
    let stored = bed.last_run();
    let best = stored["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["op"] == "write")
        .map(|p| p["figures"]["bandwidth"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!((ours - best / 1048576.0).abs() < 0.01, "{ours} vs {best}");
    assert_eq!(summary_columns(&out.stdout), summary_columns(&real));
    // The results table's header and the rows' field count match IOR's.
    let rows = |text: &str| -> Vec<usize> {
        text.lines()
            .filter(|l| l.starts_with("write ") || l.starts_with("read "))
            .map(|l| l.split_whitespace().count())
            .collect()
    };
    assert_eq!(rows(&out.stdout), rows(&real));
    // awk '/^write/ {print $2}' on the summary gives the max; on ours it is the same as Max Write.
    let summary_write =
        out.stdout.lines().skip_while(|l| !l.starts_with("Summary")).find(|l| l.starts_with("write")).unwrap();
    let max: f64 = summary_write.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!((max - ours).abs() < 0.01);
}

#[test]
fn iors_json_and_csv_summaries_carry_the_fields_ior_writes_and_a_summary_file_is_guarded() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let out = tool(&bed, &format!("ior -i 2 -w -r -t 1m -b 2m -o {dir}/t -O summaryFormat=JSON --tasks 2"), None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ours: Value = serde_json::from_str(&out.stdout).expect("one JSON document on stdout");
    let real: Value =
        serde_json::from_str(&fs::read_to_string("tests/fixtures/compat/ior-4.1-shared.json").unwrap()).unwrap();
    for key in [
        "operation",
        "bwMaxMIB",
        "bwMinMIB",
        "bwMeanMIB",
        "bwStdMIB",
        "OPsMax",
        "MeanTime",
        "numTasks",
        "blockSize",
        "transferSize",
    ] {
        assert!(real["summary"][0].get(key).is_some() && ours["summary"][0].get(key).is_some(), "{key}");
    }
    for key in ["access", "bwMiB", "iops", "latency", "openTime", "wrRdTime", "closeTime", "totalTime"] {
        assert!(ours["tests"][0]["Results"][0].get(key).is_some(), "{key}");
    }
    let stored = bed.last_run();
    let writes: Vec<f64> = stored["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["op"] == "write")
        .map(|p| p["figures"]["bandwidth"].as_f64().unwrap() / 1048576.0)
        .collect();
    let mean = writes.iter().sum::<f64>() / writes.len() as f64;
    assert!((ours["summary"][0]["bwMeanMIB"].as_f64().unwrap() - mean).abs() < 1e-3);
    // CSV: IOR's header, a row per phase.
    let out = tool(&bed, &format!("ior -i 2 -w -t 1m -b 2m -o {dir}/t -O summaryFormat=CSV"), None);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter"
    );
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    // summaryFile: written there, and never over the store or through a link.
    let file = bed.tmp.path().join("summary.json");
    let out = tool(
        &bed,
        &format!("ior -w -t 1m -b 1m -o {dir}/t -O summaryFormat=JSON,summaryFile={}", file.display()),
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.is_empty());
    let _: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let runs = bed.runs().len();
    let out = tool(&bed, &format!("ior -w -t 1m -b 1m -o {dir}/t -O summaryFile={}", bed.db), None);
    assert_one_line_error(&out, 2, &["summaryFile"]);
    let link = bed.tmp.path().join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let out = tool(&bed, &format!("ior -w -t 1m -b 1m -o {dir}/t -O summaryFile={}", link.display()), None);
    assert_one_line_error(&out, 2, &["summaryFile"]);
    assert_eq!(bed.runs().len(), runs, "refused before anything ran");
}

#[test]
fn a_flag_not_taken_is_one_line_with_the_nearest_native_option_and_nothing_runs() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    for (line, needles) in [
        (format!("ior -a MPIIO -w -o {dir}/t"), vec!["MPI-IO", "-a POSIX"]),
        (format!("ior -m -w -o {dir}/t"), vec!["-m", "--iterations"]),
        (format!("ior -q -w -o {dir}/t"), vec!["-q", "iosurvey ior --help"]),
        (format!("mdtest -n 10 -S -d {dir}"), vec!["-S", "--access shared"]),
        (format!("mdtest -d {dir}"), vec!["-n"]),
        ("iozone -i 13".to_string(), vec!["-i 13", "0 to 12"]),
        ("iozone -Q".to_string(), vec!["-Q"]),
    ] {
        let out = tool(&bed, &line, None);
        assert_one_line_error(&out, 2, &needles);
    }
    assert!(!Path::new(&bed.db).exists(), "no store made");
    assert!(fs::read_dir(&bed.dir).unwrap().next().is_none(), "nothing written");
}

/// `tool`, ended with SIGKILL if it still runs after `secs` (exit 137): a command that waits
/// for ever fails its test instead of hanging it.
fn tool_within(bed: &Bed, line: &str, secs: u32) -> Out {
    let mut words: Vec<String> = vec!["-s".into(), "KILL".into(), secs.to_string()];
    words.push(env!("CARGO_BIN_EXE_iosurvey").into());
    words.extend(line.split_whitespace().map(String::from));
    words.extend(["--db".into(), bed.db.clone()]);
    outcome(Command::new("timeout").args(&words).output().unwrap())
}

#[test]
fn a_fifo_named_as_an_ior_script_or_an_iozone_client_list_is_refused_at_once() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let fifo = bed.tmp.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let fifo = fifo.display().to_string();
    for line in [format!("ior -f {fifo} -w -o {dir}/t"), format!("iozone -i 0 -s 64k -r 4k -t 1 -+m {fifo} -f {dir}/f")]
    {
        let out = tool_within(&bed, &line, 30);
        assert_one_line_error(&out, 2, &[&fifo, "a FIFO, not a regular file"]);
    }
    // Nor a directory, nor a device read without end.
    let out = tool_within(&bed, &format!("ior -f /dev/zero -w -o {dir}/t"), 30);
    assert_one_line_error(&out, 2, &["/dev/zero", "a character device, not a regular file"]);
    let out = tool_within(&bed, &format!("iozone -i 0 -t 1 -+m {dir} -f {dir}/f"), 30);
    assert_one_line_error(&out, 2, &["a directory, not a regular file"]);
    assert!(!Path::new(&bed.db).exists(), "no store made");
    assert!(fs::read_dir(&bed.dir).unwrap().next().is_none(), "nothing written");
}

#[test]
fn iosurveys_own_options_before_the_tools_name_are_taken_as_after_it() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let out = iosurvey(&["--db", &bed.db, "ior", "-w", "-t", "64k", "-b", "256k", "-o", &format!("{dir}/t")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("Summary of all tests:"), "{}", out.stdout);
    assert_eq!(bed.runs().len(), 1, "stored in --db");
    let out = iosurvey(&["-q", &format!("--db={}", bed.db), "mdtest", "-n", "20", "-d", &dir]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("SUMMARY rate"), "{}", out.stdout);
    assert_eq!(bed.runs().len(), 2);
    let out = iosurvey(&["--db", &bed.db, "iozone", "--help"]);
    assert!(out.code == 0 && out.stdout.contains("IOzone options taken"), "{}", out.stderr);
    // Not a tool after all: iosurvey's own parser says so.
    let out = iosurvey(&["--db", &bed.db, "iorr"]);
    assert_one_line_error(&out, 2, &["iorr"]);
}

/// Issue 39 (6): `--db` before a tool's name is the store the tool's studies go to, as for
/// every other command: the store of the directory it runs in is neither written nor made,
/// for a run (ior) as for a matrix (iozone).
#[test]
fn the_store_named_before_a_tools_name_is_the_only_store_written() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let cwd = tempfile::tempdir().unwrap();
    let (ior_file, iozone_file) = (format!("{dir}/t"), format!("{dir}/f"));
    let lines: [Vec<&str>; 2] = [
        vec!["--db", &bed.db, "ior", "-w", "-t", "64k", "-b", "256k", "-o", &ior_file],
        vec!["-q", "--db", &bed.db, "iozone", "-i", "0", "-s", "64k", "-r", "4k", "-f", &iozone_file],
    ];
    for line in &lines {
        let out =
            outcome(Command::new(env!("CARGO_BIN_EXE_iosurvey")).args(line).current_dir(cwd.path()).output().unwrap());
        assert_eq!(out.code, 0, "{line:?}: {}", out.stderr);
    }
    assert!(!cwd.path().join("iosurvey.db").exists(), "the default store was made");
    assert!(!bed.runs().is_empty(), "the ior run is in --db");
    let out = iosurvey(&["show", "m1", "--json", "--db", &bed.db]);
    assert_eq!(out.code, 0, "the iozone matrix is in --db: {}", out.stderr);
}

#[test]
fn a_front_ends_hints_name_the_tools_flags_not_the_native_ones() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let out = tool(&bed, &format!("iozone -i 0 -s 64k -r 4k -b {} -f {dir}/f", bed.db), None);
    assert_one_line_error(&out_without_notes(out), 2, &["it is the result store", "(hint: give -b a new file name)"]);
    // Space for 2^64-1 items: the hint names -n (and the own --no-space-check, which is taken).
    let out = tool(&bed, &format!("mdtest -n 18446744073709551615 -d {dir}"), None);
    let out = out_without_notes(out);
    assert_one_line_error(&out, 2, &["free", "lower -n or -w and -e", "add --no-space-check"]);
    assert!(!out.stderr.contains("--items") && !out.stderr.contains("--write-bytes"), "{}", out.stderr);
    let out = tool(&bed, &format!("ior -w -t 64k -b 100000g -o {dir}/t"), None);
    let out = out_without_notes(out);
    assert_one_line_error(&out, 2, &["free", "lower -b"]);
    assert!(!out.stderr.contains("--block"), "{}", out.stderr);
    assert!(!Path::new(&bed.db).exists() || bed.runs().is_empty(), "nothing stored");
}

/// A front end's outcome with its notes (`iosurvey: note: ...`) left out of stderr.
fn out_without_notes(out: Out) -> Out {
    let stderr = out.stderr.lines().filter(|l| !l.starts_with("iosurvey: note: ")).map(|l| format!("{l}\n")).collect();
    Out { stderr, ..out }
}

/// IOzone's children fsync and close their file after the timed writes (untimed but for -e),
/// and with -c alone only close it; the parent's figure waits for all that. Each line's runs
/// are checked for the fsync made and for where the cell's figure ends.
#[test]
fn iozone_lines_fsync_each_written_file_after_the_timing_as_iozones_children_do() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let lines =
        [("", true, "xfer_end"), ("-e", true, "sync_end"), ("-c", false, "close_end"), ("-c -e", true, "close_end")];
    for (i, (flags, synced, timed_to)) in lines.into_iter().enumerate() {
        let line = format!("iozone -i 0 -t 2 -s 1m -r 64k {flags} -F {dir}/a {dir}/b");
        let out = tool(&bed, &line, None);
        assert_eq!(out.code, 0, "{line}: {}", out.stderr);
        assert!(out.stdout.contains("Parent sees throughput for  2 initial writers"), "{}", out.stdout);
        let m = iosurvey(&["show", &format!("m{}", i + 1), "--json", "--db", &bed.db]);
        let m: Value = serde_json::from_str(&m.stdout).unwrap();
        let cell = m["cells"].as_array().unwrap().iter().find(|c| c["kind"] == "write").unwrap().clone();
        let run = bed.show(cell["runs"][0].as_i64().unwrap());
        assert_eq!(run["workload"]["fsync"], synced, "{line}: {}", run["workload"]);
        // The stonewall's count is taken when the first child's writes end, before its fsync.
        assert_eq!(run["workload"]["first_done_at_transfers"], true, "{line}");
        let tasks = run["phases"][0]["tasks"].as_array().unwrap();
        let at = |t: &Value, k: &str| t[k].as_u64().unwrap();
        let start = tasks.iter().map(|t| at(t, "xfer_start")).min().unwrap();
        let end = tasks.iter().map(|t| at(t, timed_to)).max().unwrap();
        let want = (2u64 << 20) as f64 * 1e9 / (end - start) as f64;
        let got = cell["samples"][0]["team"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-6 * want, "{line}: the cell's rate ends at {timed_to}: {got} against {want}");
    }
}

/// iosurvey's tasks in one process are threads, so its throughput-mode figures are those of
/// IOzone's -T (threads), not of its default forked processes, which measured slower on ext4
/// (docs/methodology.md, "Agreement"): the output says threads as `iozone -T` does, and names
/// the difference from IOzone's default, with or without -T on the line.
#[test]
fn iozone_throughput_mode_says_its_children_are_threads_as_iozone_t_prints() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    for t in ["", "-T "] {
        let line = format!("iozone {t}-i 0 -t 2 -s 1m -r 64k -F {dir}/a {dir}/b");
        let out = tool(&bed, &line, None);
        assert_eq!(out.code, 0, "{line}: {}", out.stderr);
        assert!(out.stdout.contains("\tThroughput test with 2 threads\n"), "{line}: {}", out.stdout);
        assert!(out.stdout.contains("as iozone -T measures; IOzone's default forks processes"), "{}", out.stdout);
        for what in ["Min", "Max", "Avg"] {
            assert!(out.stdout.contains(&format!("\t{what} throughput per thread \t")), "{what}: {}", out.stdout);
        }
        assert!(!out.stdout.contains("process \t"), "{}", out.stdout);
    }
}

#[test]
fn the_seeds_iozone_lines_run_as_one_cell_per_thread_count_and_print_iozones_layouts() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let list = bed.tmp.path().join("threadlist");
    let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    fs::write(&list, format!("{host} {dir} /usr/bin/iozone\n{host} {dir} /usr/bin/iozone\n")).unwrap();
    // PixStor: sequential then random, 2 threads from the thread list, scaled from 32G.
    for (line, kinds, what) in [
        ("iozone -i0 -c -e -w -r 8M -s 16M -t 2 -+n -+m LIST -f DIR/f", "--kinds write ", "initial writers"),
        (
            "iozone -i2 -c -O -w -r 4K -s 1M -t 2 -+n -+m LIST -f DIR/f",
            "--kinds random-read,random-write ",
            "random readers",
        ),
    ] {
        let line = line.replace("LIST", &list.display().to_string()).replace("DIR", &dir);
        let out = tool(&bed, &format!("{line} -v"), None);
        assert_eq!(out.code, 0, "{line}: {}", out.stderr);
        assert!(out.stderr.contains(kinds) && out.stderr.contains("--tasks 2"), "{}", out.stderr);
        assert!(out.stdout.contains(&format!("Children see throughput for  2 {what}")), "{}", out.stdout);
        let unit = if line.contains("-O") { "ops/sec" } else { "kB/sec" };
        assert!(out.stdout.lines().filter(|l| l.contains("Children see")).all(|l| l.ends_with(unit)), "{}", out.stdout);
    }
    // A list that names another host than this launch's is refused with the launch to use.
    fs::write(&list, "node1 /w /iozone\nnode2 /w /iozone\n").unwrap();
    let out = tool(&bed, &format!("iozone -i0 -r 4k -s 64k -t 2 -+m {} -f {dir}/f", list.display()), None);
    assert_one_line_error(&out, 2, &["-+m", "node1,node2", "mpirun --host node1,node2"]);
    // The admin's automatic mode, scaled from -g 12G: every cell of the grid, with -R's tables.
    let out = tool(&bed, &format!("iozone -a -n 64k -g 128k -y 4k -q 8k -i 0 -i 1 -R -f {dir}/f"), None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: Vec<&str> =
        out.stdout.lines().filter(|l| l.split_whitespace().next().is_some_and(|w| w == "64" || w == "128")).collect();
    assert_eq!(rows.len(), 4, "{}", out.stdout);
    assert!(rows.iter().all(|r| r.split_whitespace().count() == 6), "{rows:?}");
    for title in ["\"Writer report\"", "\"Re-writer report\"", "\"Reader report\"", "\"Re-Reader report\""] {
        assert!(out.stdout.contains(title), "{title}");
    }
}

#[test]
fn a_link_named_after_the_tool_is_the_tool() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let link = bed.tmp.path().join("ior");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_iosurvey"), &link).unwrap();
    let out = outcome(
        Command::new(&link)
            .args(["-w", "-t", "1m", "-b", "1m", "-o", &format!("{dir}/t"), "--db", &bed.db])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("Summary of all tests:"));
    assert_eq!(bed.runs().len(), 1);
    let help = iosurvey(&["ior", "--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("-O stoneWallingWearOut=1"));
}

#[test]
fn export_writes_a_row_per_phase_with_every_figure_and_iors_json_of_runs() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    assert_eq!(tool(&bed, &format!("ior -i 2 -w -r -t 1m -b 2m -F -o {dir}/t --tasks 2"), None).code, 0);
    assert_eq!(bed.meta("-n 20 --force").code, 0);
    let out = iosurvey(&["export", "--format", "csv", "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = common::csv_records(&out.stdout);
    let header = &lines[0];
    let runs = [bed.show(1), bed.show(2)];
    let phases: usize = runs.iter().map(|r| r["phases"].as_array().unwrap().len()).sum();
    assert_eq!(lines.len(), 1 + phases, "{}", out.stdout);
    assert!(lines.iter().all(|l| l.len() == header.len()), "{}", out.stdout);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    for name in
        ["workload.transfer", "workload.iterations", "workload.meta.items", "latency_p99_us", "bandwidth_bytes_per_s"]
    {
        col(name);
    }
    let first = &lines[1];
    let bw: f64 = first[col("bandwidth_bytes_per_s")].parse().unwrap();
    assert_eq!(bw, runs[0]["phases"][0]["figures"]["bandwidth"].as_f64().unwrap());
    assert_eq!(first[col("workload.transfer")], "1048576");
    // IOR's JSON of the data run; a metadata run is refused.
    let out = iosurvey(&["export", "1", "--format", "ior-json", "--db", &bed.db]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["tests"][0]["Results"].as_array().unwrap().len(), 4);
    assert_eq!(doc["summary"][0]["bwMaxMIB"].as_f64().map(|v| v > 0.0), Some(true));
    assert_one_line_error(&iosurvey(&["export", "2", "--format", "ior-json", "--db", &bed.db]), 2, &["metadata"]);
    // -o is guarded as every output is: never the store.
    assert_one_line_error(&iosurvey(&["export", "--format", "csv", "-o", &bed.db, "--db", &bed.db]), 2, &["-o"]);
}
