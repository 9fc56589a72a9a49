//! End-to-end tests of what iosurvey's exports carry: text from users or the machine (labels,
//! target paths, host names) planted hostile, and each format shown to neutralize it
//! (docs/safety.md); and the report laying each run out once however its groups interleave.

mod common;

use common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Labels a spreadsheet would run as formulas (OWASP's examples, without blanks).
const FORMULA_LABELS: [&str; 3] = ["=2+5+cmd|'/C_calc'!A0", "@SUM(A1:A9)", "-1+HYPERLINK(\"x\")"];

/// Labels a Markdown renderer would turn into HTML, an image and a link.
const MARKUP_LABELS: [&str; 3] =
    ["<img/src=x/onerror=alert(1)>", "![t](http://evil/t.png)", "[c](javascript:alert(1))"];

/// A directory name that drives a terminal: set the title (OSC ... BEL), clear the screen
/// by C1 CSI (U+009B), DEL, a line break, and HTML.
const HOSTILE_NAME: &str = "t\x1b]0;owned\x07\u{9b}2J\x7f\nx<script>alert(1)";

/// How that name must show on a terminal.
const HOSTILE_SHOWN: &str = "t\\x1b]0;owned\\x07\\u{9b}2J\\x7f\\nx<script>alert(1)";

/// A quick stored run (the null engine moves no data) on `dir`, with these extra arguments.
fn quick_run(bed: &Bed, dir: &Path, more: &[&str]) {
    let mut args: Vec<&OsStr> = ["run", "--engine", "null", "--block", "1m", "--db", &bed.db, "-q", "--dir"]
        .into_iter()
        .map(OsStr::new)
        .collect();
    args.push(dir.as_os_str());
    args.extend(more.iter().map(OsStr::new));
    let out = outcome(Command::new(env!("CARGO_BIN_EXE_iosurvey")).args(&args).output().unwrap());
    assert_eq!(out.code, 0, "{:?}: {}", args, out.stderr);
}

/// The standard output of a command that must succeed without a word on stderr.
fn ok(args: &[&str]) -> String {
    let out = iosurvey(args);
    assert!(out.code == 0 && out.stderr.is_empty(), "{args:?}: {}", out.stderr);
    out.stdout
}

/// The fields of a CSV text, every record's in turn.
fn csv_fields(csv: &str) -> Vec<String> {
    common::csv_records(csv).into_iter().flatten().collect()
}

/// Whether a spreadsheet would evaluate the field: it starts like a formula and is not a
/// number (nor iosurvey's "-" for none).
fn evaluated(field: &str) -> bool {
    field.starts_with(['=', '+', '-', '@', '\t', '\r']) && field != "-" && field.parse::<f64>().is_err()
}

/// Whether `pattern` occurs in the Markdown `md` unescaped: not after an odd run of
/// backslashes.
fn bare(md: &str, pattern: &str) -> bool {
    md.match_indices(pattern).any(|(at, _)| md[..at].chars().rev().take_while(|c| *c == '\\').count() % 2 == 0)
}

/// A target directory named `name` inside the bed's scratch directory.
fn dir_named(bed: &Bed, name: &[u8]) -> PathBuf {
    let dir = bed.tmp.path().join(OsStr::from_bytes(name));
    std::fs::create_dir(&dir).unwrap();
    dir
}

#[test]
fn csv_exports_open_formula_labels_as_text_and_keep_numbers() {
    let bed = Bed::new();
    for label in FORMULA_LABELS {
        // Joined with '=': a label starting with '-' would be read as an option.
        quick_run(&bed, &bed.dir, &[&format!("--label={label}")]);
    }
    let db = bed.db.as_str();
    let ls = ok(&["ls", "--format", "csv", "--db", db]);
    let compare = ok(&["compare", FORMULA_LABELS[0], FORMULA_LABELS[1], "--format", "csv", "--db", db]);
    for (what, csv) in [("ls", &ls), ("compare", &compare)] {
        let fields = csv_fields(csv);
        // ls lists every label; compare of two sides names them in its heading comment only
        // (its verdicts are said once, in the table): wherever a label is a field, it is
        // neutralized.
        for label in FORMULA_LABELS.iter().take(if what == "ls" { 3 } else { 2 }) {
            assert!(!fields.contains(&label.to_string()), "{what}: {label} as it was:\n{csv}");
            if what == "ls" {
                assert!(fields.contains(&format!("'{label}")), "{what}: {label} not neutralized:\n{csv}");
            }
        }
        assert!(!fields.iter().any(|f| evaluated(f)), "{what}: a field a spreadsheet would evaluate:\n{csv}");
    }
    // A run's own tables hold numbers and iosurvey's words: numbers stay numbers.
    let show = ok(&["show", "1", "--format", "csv", "--db", db]);
    let fields = csv_fields(&show);
    assert!(fields.iter().any(|f| f.parse::<f64>().is_ok()), "{show}");
    assert!(!fields.iter().any(|f| f.starts_with('\'') || evaluated(f)), "{show}");
    assert_store_intact(&bed.db);
}

#[test]
fn markdown_exports_show_html_and_links_as_text() {
    let bed = Bed::new();
    let dir = dir_named(&bed, HOSTILE_NAME.as_bytes());
    for label in MARKUP_LABELS {
        quick_run(&bed, &dir, &[&format!("--label={label}")]);
    }
    let db = bed.db.as_str();
    let report = bed.tmp.path().join("report.md");
    let report_arg = report.to_str().unwrap();
    ok(&["report", "-o", report_arg, "--format", "md", "--db", db]);
    let outputs = [
        ("ls", ok(&["ls", "--format", "md", "--db", db])),
        ("show", ok(&["show", "1", "--format", "md", "--db", db])),
        ("compare", ok(&["compare", MARKUP_LABELS[0], MARKUP_LABELS[1], "--format", "md", "--db", db])),
        ("report", std::fs::read_to_string(&report).unwrap()),
    ];
    for (what, md) in &outputs {
        for markup in ["<img", "<script>", "![t]", "[c]", "](http://evil", "](javascript:"] {
            assert!(!bare(md, markup), "{what} carries {markup:?} unescaped:\n{md}");
        }
        assert!(!md.contains(['\x1b', '\u{9b}', '\x07']), "{what}: control characters:\n{md}");
    }
    let (ls, show, compare, report) = (&outputs[0].1, &outputs[1].1, &outputs[2].1, &outputs[3].1);
    assert!(ls.contains("\\<img/src=x/onerror=alert(1)\\>") && ls.contains("!\\[t\\](http://evil/t.png)"), "{ls}");
    assert!(ls.contains("x\\<script\\>alert(1)"), "the target path, escaped: {ls}");
    assert!(show.contains("t\\\\x1b\\]0;owned"), "the target in the heading, escaped: {show}");
    assert!(compare.contains("\\[c\\](javascript:alert(1))") || compare.contains("\\<img"), "{compare}");
    // The report names the best and the next system per pattern: two of the three labels.
    let escaped = ["\\<img/src=x/onerror=alert(1)\\>", "!\\[t\\](http://evil/t.png)", "\\[c\\](javascript:alert(1))"];
    assert!(escaped.iter().filter(|e| report.contains(*e)).count() >= 2, "{report}");
    assert!(report.contains("x\\<script\\>alert(1)"), "the target path, escaped: {report}");
    // The HTML report escapes the same text its own way.
    let html = bed.tmp.path().join("report.html");
    ok(&["report", "-o", html.to_str().unwrap(), "--db", db]);
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(!html.contains("<img") && !html.contains("<script>"), "{html}");
    assert!(html.contains("x&lt;script&gt;alert(1)"), "the target path, escaped: {html}");
    assert_store_intact(&bed.db);
}

/// Whether `text` holds a control character other than the line breaks between its lines.
fn has_controls(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn terminal_output_shows_a_hostile_target_path_escaped() {
    let bed = Bed::new();
    let dir = dir_named(&bed, HOSTILE_NAME.as_bytes());
    quick_run(&bed, &dir, &[]);
    let db = bed.db.as_str();
    for args in [&["ls", "--db", db][..], &["show", "1", "--db", db]] {
        let text = ok(args);
        assert!(!has_controls(&text), "{args:?} prints control characters raw:\n{text:?}");
        assert!(text.contains(HOSTILE_SHOWN), "{args:?}: the path, shown:\n{text}");
    }
    // The other formats print no raw control either: CSV, Markdown and HTML show them as
    // text, JSON escapes them the JSON way and keeps the path exact.
    for format in ["csv", "md", "html", "json"] {
        let out = ok(&["ls", "--format", format, "--db", db]);
        assert!(!has_controls(&out), "ls --format {format}:\n{out:?}");
    }
    let json = ok(&["show", "1", "--json", "--db", db]);
    assert!(!has_controls(&json), "{json:?}");
    let record: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(record["env"]["target"].as_str(), dir.to_str(), "the path kept exact in the JSON");
    // An error naming the path (a missing directory would be made; one whose parent is
    // missing is refused): one line, the path shown.
    let missing = dir.join("gone").join("missing");
    let out = outcome(
        Command::new(env!("CARGO_BIN_EXE_iosurvey"))
            .args(["run", "--engine", "null", "--db", db, "--dir"])
            .arg(&missing)
            .output()
            .unwrap(),
    );
    assert_one_line_error(&out, 2, &[HOSTILE_SHOWN]);
    assert!(!has_controls(&out.stderr), "{:?}", out.stderr);
    assert_store_intact(&bed.db);
}

/// A host name that starts a formula, carries HTML and drives a terminal.
// Run by the default build only: Open MPI's own start-up (MPI_Init, even for one process)
// refuses such a host name, before iosurvey has a word in it.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_hostile_host_name_is_neutralized_in_every_format() {
    use std::os::unix::process::CommandExt;
    const HOSTILE_HOST: &str = "=1+1<b>h\x1b[2J\u{9b}0m";
    if !is_root() {
        skip("setting a host name (in a UTS namespace of its own) needs root");
        return;
    }
    let bed = Bed::new();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iosurvey"));
    cmd.args(["run", "--engine", "null", "--block", "1m", "-q", "--db", &bed.db, "--dir"]).arg(&bed.dir);
    let host = HOSTILE_HOST.as_bytes().to_vec();
    // SAFETY: between fork and exec the child only makes two system calls, both
    // async-signal-safe, on memory allocated before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(libc::CLONE_NEWUTS) != 0 || libc::sethostname(host.as_ptr().cast(), host.len()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = match cmd.output() {
        Ok(out) => outcome(out),
        Err(e) => {
            skip(&format!("no UTS namespace here: {e}"));
            return;
        }
    };
    assert_eq!(out.code, 0, "{}", out.stderr);
    let db = bed.db.as_str();
    let text = ok(&["ls", "--db", db]);
    assert!(!has_controls(&text) && text.contains("=1+1<b>h\\x1b[2J\\u{9b}0m"), "{text}");
    let show = ok(&["show", "1", "--db", db]);
    assert!(!has_controls(&show) && show.contains("host =1+1<b>h\\x1b[2J\\u{9b}0m"), "{show}");
    let csv = ok(&["ls", "--format", "csv", "--db", db]);
    assert!(csv.contains(",\"'=1+1<b>h\\x1b[2J\\u{9b}0m\","), "{csv:?}");
    let md = ok(&["ls", "--format", "md", "--db", db]);
    assert!(md.contains("=1+1\\<b\\>h\\\\x1b\\[2J\\\\u{9b}0m") && !md.contains("<b>"), "{md}");
    assert_store_intact(&bed.db);
}

#[test]
fn a_report_lays_each_run_out_once_when_sweeps_interleave_with_runs() {
    let bed = Bed::new();
    // Runs 1, 4 and 7 of their own between the points of sweeps w1 (runs 2, 3) and w2 (5, 6):
    // neighbours-only grouping laid runs 1, 4 and 7 out three times each.
    for more in [&[][..], &["--clients", "1,2", "--tasks", "2"], &[], &["--clients", "1,2", "--tasks", "2"], &[]] {
        quick_run(&bed, &bed.dir, more);
    }
    let page = bed.tmp.path().join("report.html");
    let said = ok(&["report", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert!(said.contains("report of 7 runs"), "{said}");
    let html = std::fs::read_to_string(&page).unwrap();
    for id in [1, 4, 7] {
        assert_eq!(html.matches(&format!("<p>run {id}: ")).count(), 1, "run {id}'s section, once");
    }
    // The two sweeps of one workload are one study over clients: one table of their runs.
    assert_eq!(html.matches("against clients, mean over runs (runs 2-3, 5-6)</caption>").count(), 1, "{html}");
    // The sweeps' runs are rows of their tables, not sections of their own.
    for id in [2, 3, 5, 6] {
        assert_eq!(html.matches(&format!("<p>run {id}: ")).count(), 0, "run {id}");
    }
    assert_store_intact(&bed.db);
}
