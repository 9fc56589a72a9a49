//! A new user's first hour (issue 39): the help grouped by what one does and fitting the
//! terminal, completions without the internal commands, tables that fit the terminal unless
//! `--wide`, a survey that says where it is, and a campaign rehearsed under `--root`.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs the binary with `args` and COLUMNS set to `columns`.
fn at_width(columns: usize, args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_iosurvey")).args(args).env("COLUMNS", columns.to_string()).output();
    outcome(out.expect("start iosurvey"))
}

/// The lines of `text` longer than `columns` characters.
fn over(text: &str, columns: usize) -> Vec<String> {
    text.lines().filter(|l| l.chars().count() > columns).map(str::to_string).collect()
}

const INTERNAL: [&str; 3] = ["janitor", "team-timing", "overhead"];
const FRONT_ENDS: [&str; 3] = ["ior", "mdtest", "iozone"];

#[test]
fn the_help_is_grouped_by_what_a_user_does_lists_the_front_ends_and_no_internal_command() {
    let help = at_width(100, &["--help"]).stdout;
    let mut at = 0;
    for heading in ["Measure:", "Keep and compare:", "Report:", "Campaigns", "Other tools' command lines", "Set up:"] {
        let found = help[at..].find(heading).unwrap_or_else(|| panic!("no {heading} after the one before in {help}"));
        at += found;
    }
    let listed: Vec<&str> = help
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for name in FRONT_ENDS.iter().chain(&["survey", "run", "meta", "compare", "campaign", "report", "ls"]) {
        assert!(listed.contains(name), "{name} not listed: {help}");
    }
    for name in INTERNAL {
        assert!(!listed.contains(&name), "{name} listed: {help}");
    }
}

#[test]
fn every_help_fits_the_terminal_width_examples_included() {
    let mut pages: Vec<Vec<&str>> = vec![vec!["--help"]];
    let help = iosurvey(&["--help"]).stdout;
    let names: Vec<String> = help
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !n.starts_with('-') && !FRONT_ENDS.contains(n) && !["iosurvey", "help"].contains(n))
        .map(str::to_string)
        .collect();
    assert!(names.len() > 15, "{help}");
    for n in &names {
        pages.push(vec![n.as_str(), "--help"]);
    }
    pages.push(vec!["campaign", "run", "--help"]);
    for columns in [80, 60] {
        for page in &pages {
            let out = at_width(columns, page);
            assert_eq!(out.code, 0, "{page:?}: {}", out.stderr);
            assert!(out.stdout.lines().count() > 3, "{page:?}: {}", out.stdout);
            let long = over(&out.stdout, columns);
            assert!(long.is_empty(), "{page:?} at {columns} columns has lines over: {long:#?}");
        }
    }
}

#[test]
fn completions_offer_the_front_ends_and_no_internal_command() {
    for shell in ["bash", "zsh", "fish"] {
        let out = iosurvey(&["completions", shell]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        for name in FRONT_ENDS {
            assert!(out.stdout.contains(name), "{shell}: no {name}");
        }
        for name in INTERNAL {
            assert!(!out.stdout.contains(name), "{shell} offers {name}");
        }
    }
}

/// A store with runs under two labels, three of each, on the test engines (no storage).
fn two_labels(bed: &Bed) {
    for _ in 0..3 {
        for (label, engine) in [("fast", "delay:200us"), ("slow", "delay:2ms")] {
            let out = bed.run(&format!("--engine {engine} --transfer 4k --block 128k --label {label}"));
            assert_eq!(out.code, 0, "{label}: {}", out.stderr);
        }
    }
}

#[test]
fn ls_and_compare_fit_the_width_wide_keeps_lines_whole_and_machine_formats_never_change() {
    let bed = Bed::new();
    two_labels(&bed);
    for args in [vec!["ls"], vec!["compare", "fast", "slow"]] {
        let with_db = |extra: &[&str]| -> Vec<String> {
            args.iter()
                .copied()
                .chain(["--db", bed.db.as_str()])
                .chain(extra.iter().copied())
                .map(String::from)
                .collect()
        };
        let words = |v: &Vec<String>| v.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
        let wide = with_db(&["--wide"]);
        let full = at_width(80, &wide.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(full.code, 0, "{}", full.stderr);
        assert!(!over(&full.stdout, 80).is_empty(), "{}: --wide keeps lines whole: {}", words(&wide), full.stdout);
        let plain = with_db(&[]);
        for columns in [80, 100] {
            let out = at_width(columns, &plain.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(out.code, 0, "{}", out.stderr);
            let long = over(&out.stdout, columns);
            assert!(long.is_empty(), "{} at {columns}: {long:#?}\n{}", words(&plain), out.stdout);
        }
        for format in ["csv", "json", "md"] {
            let asked = with_db(&["--format", format]);
            let asked: Vec<&str> = asked.iter().map(String::as_str).collect();
            assert_eq!(at_width(40, &asked).stdout, iosurvey(&asked).stdout, "{format} laid out by the width");
        }
    }
}

#[test]
fn compare_of_two_sides_says_each_verdict_once() {
    let bed = Bed::new();
    two_labels(&bed);
    let out = iosurvey(&["compare", "fast", "slow", "--db", &bed.db, "--wide"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Each verdict, faster or no difference, ends with the interval it rests on.
    let verdicts: Vec<&str> = out.stdout.lines().filter(|l| l.contains("95% t-interval")).collect();
    assert_eq!(verdicts.len(), 2, "write and read, once each: {}", out.stdout);
    assert!(!out.stdout.contains("which system for which I/O pattern"), "{}", out.stdout);
}

#[test]
fn the_survey_says_which_repetition_of_which_workload_it_is_on_and_the_time_left() {
    let bed = Bed::new();
    let dir = bed.dir.display().to_string();
    let out = iosurvey(&[
        "survey",
        &dir,
        "--db",
        &bed.db,
        "--size",
        "4m",
        "--tasks",
        "2",
        "--random-secs",
        "0.2",
        "--repetitions",
        "2",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let steps: Vec<&str> = out.stderr.lines().filter(|l| l.contains(", repetition ")).collect();
    assert_eq!(steps.len(), 6, "{}", out.stderr);
    assert!(steps[0].contains("[1/6, repetition 1 of 2, ETA after the first]"), "{}", out.stderr);
    assert!(steps[3].contains("[4/6, repetition 2 of 2, ETA "), "{}", out.stderr);
    assert!(steps[5].contains("seq-shared"), "{}", out.stderr);
}

/// A campaign of two directory targets that exist nowhere, one small run study.
fn rehearsal(bed: &Bed) -> std::path::PathBuf {
    let file = bed.tmp.path().join("paper.toml");
    std::fs::write(
        &file,
        "[campaign]\nname = \"paper\"\n\n[[target]]\nlabel = \"f800\"\ndir = \"/nonexistent/iosurvey/f800\"\n\n\
         [[target]]\nlabel = \"h600\"\ndir = \"/nonexistent/iosurvey/h600\"\n\n\
         [[study]]\nname = \"seq\"\nkind = \"run\"\nop = \"write,read\"\ntransfer = \"64k\"\nblock = \"1m\"\ntasks = 1\n",
    )
    .unwrap();
    file
}

#[test]
fn a_campaign_under_root_places_every_target_there_and_removes_only_what_it_made() {
    let bed = Bed::new();
    let file = rehearsal(&bed);
    let f = file.display().to_string();
    // As the file is: its targets are not mounted here.
    let out = iosurvey(&["campaign", "run", &f, "--db", &bed.db]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let root = bed.tmp.path().join("rehearsal");
    let r = root.display().to_string();
    let out = iosurvey(&["campaign", "run", &f, "--root", &r, "--db", &bed.db, "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!root.exists(), "the root iosurvey made is removed");
    let runs: Vec<Value> =
        serde_json::from_str(&iosurvey(&["ls", "--json", "--db", &bed.db]).stdout).expect("ls --json");
    assert!(runs.len() >= 2, "a run per target at least: {runs:?}");
    for run in &runs {
        let target = run.to_string();
        assert!(target.contains(&format!("{r}/f800")) || target.contains(&format!("{r}/h600")), "{target}");
    }
    // A root that is there, holding a file of someone else's: both stay; the label dirs go.
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("notes.txt"), b"mine").unwrap();
    let again = bed.tmp.path().join("other.db").display().to_string();
    let out = iosurvey(&["campaign", "run", &f, "--root", &r, "--db", &again, "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(listing(&root), ["notes.txt"]);
    // A root that is a link is refused, nothing made.
    let link = bed.tmp.path().join("link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    let out = iosurvey(&["campaign", "run", &f, "--root", &link.display().to_string(), "--db", &again]);
    assert_one_line_error(&out, 2, &["--root", "symbolic link"]);
    assert_eq!(listing(&root), ["notes.txt"]);
    assert!(Path::new(&f).exists());
}
