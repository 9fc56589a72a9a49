//! Every command README.md and docs/*.md show, taken from the files as they are (so a new
//! example is tested the day it is written). A fenced block is run for real, line by line, by
//! bash in one scratch directory (`iosurvey` on PATH, the store `./iosurvey.db` there, the
//! repository's examples/ copied in), in the order the files give: each line must exit 0.
//! A block that cannot run here (a cluster, a block device, a site's paths, sizes beyond a
//! test machine) is marked on the line before its fence with
//! `<!-- not run by tests/docs_commands.rs: WHY -->`; its iosurvey commands are still parsed
//! (each given with `--help` appended: an unknown flag or a bad value fails), and the test
//! lists them with the reason.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const MARKER: &str = "<!-- not run by tests/docs_commands.rs:";

/// A fenced block's command lines, and why it is not run, if marked.
struct Block {
    file: String,
    line: usize,
    commands: Vec<String>,
    not_run: Option<String>,
}

/// The first words a shown command line may start with; any other line of a block is output.
const PROGRAMS: &[&str] = &[
    "iosurvey",
    "target/release/iosurvey",
    "cargo",
    "mpirun",
    "srun",
    "bash",
    "testbed/testbed",
    "apt-get",
    "fuzz/run",
    "man",
];

/// Whether `program` is one of the benchmarks (bench/NAME), which a doc block shows but no
/// test runs: each must exist, so that a renamed bench never leaves its docs behind.
fn is_bench(program: &str) -> bool {
    program.starts_with("bench/")
}

/// The command names `iosurvey --help` lists, and the front ends.
fn command_names() -> Vec<String> {
    let help = common::iosurvey(&["--help"]).stdout;
    help.lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| !w.starts_with('-'))
        .map(String::from)
        .collect()
}

/// Whether `line` is a command (not output): its program is one of [`PROGRAMS`], and an
/// iosurvey in it is followed by a command name or an option.
fn is_command(line: &str, names: &[String]) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(first) = words.first() else { return false };
    if !PROGRAMS.contains(first) && !is_bench(first) {
        return false;
    }
    match words.iter().position(|w| *w == "iosurvey" || w.ends_with("/iosurvey")) {
        Some(k) => words.get(k + 1).is_some_and(|w| w.starts_with('-') || names.iter().any(|n| n == w)),
        None => true,
    }
}

fn blocks(root: &Path, names: &[String]) -> Vec<Block> {
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut all = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut k = 0;
        while k < lines.len() {
            let fence = lines[k].trim_start();
            if !fence.starts_with("```") {
                k += 1;
                continue;
            }
            let info = fence.trim_start_matches('`').trim();
            let not_run = k
                .checked_sub(1)
                .and_then(|p| lines[p].trim().strip_prefix(MARKER))
                .map(|why| why.trim_end_matches("-->").trim().to_string());
            let start = k + 1;
            k += 1;
            let mut commands = Vec::new();
            while k < lines.len() && !lines[k].trim_start().starts_with("```") {
                // An indented line is a command's output (a plan's point), not one to type.
                if (info.is_empty() || info == "sh") && !lines[k].starts_with(char::is_whitespace) {
                    let line = lines[k].trim();
                    if is_command(line, names) {
                        commands.push(line.to_string());
                    }
                }
                k += 1;
            }
            k += 1;
            if !commands.is_empty() {
                let shown = file.strip_prefix(root).unwrap().display().to_string();
                all.push(Block { file: shown, line: start, commands, not_run });
            }
        }
    }
    all
}

/// `line` with its trailing comment cut (a `#` after blanks, outside quotes).
fn uncommented(line: &str) -> &str {
    let mut quote = None;
    let bytes = line.as_bytes();
    for (k, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (None, b'\'' | b'"') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            (None, b'#') if k > 0 && bytes[k - 1] == b' ' => return line[..k].trim_end(),
            _ => {}
        }
    }
    line
}

/// The words of each iosurvey invocation in `line`, after the program, redirections left out.
fn invocations(line: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for part in uncommented(line).split("&&").flat_map(|p| p.split(';')).flat_map(|p| p.split(" | ")) {
        let mut words: Vec<String> = Vec::new();
        let mut skip = false;
        for w in shell_words(part) {
            let w = w.as_str();
            if skip {
                skip = false;
                continue;
            }
            match w {
                ">" | ">>" | "2>" | "<" => skip = true,
                _ if w.starts_with('>') => {}
                _ => words.push(w.to_string()),
            }
        }
        if let Some(k) = words.iter().position(|w| w == "iosurvey" || w.ends_with("/iosurvey")) {
            found.push(words[k + 1..].to_vec());
        } else if words.starts_with(&["cargo".into(), "run".into()]) {
            if let Some(k) = words.iter().position(|w| w == "--") {
                found.push(words[k + 1..].to_vec());
            }
        }
    }
    found
}

#[test]
fn every_command_the_readme_and_the_docs_show_runs_or_is_marked_and_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let names = command_names();
    assert!(names.iter().any(|n| n == "survey"), "{names:?}");
    let bin = Path::new(env!("CARGO_BIN_EXE_iosurvey"));
    let sandbox = tempfile::tempdir().unwrap();
    let copied = Command::new("cp").arg("-a").arg(root.join("examples")).arg(sandbox.path()).status().unwrap();
    assert!(copied.success());
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let all = blocks(root, &names);
    assert!(all.iter().any(|b| b.file == "README.md" && b.not_run.is_none()), "the README runs something");
    let (mut ran, mut parsed) = (0, Vec::new());
    for block in &all {
        for line in &block.commands {
            let at = format!("{}:{} `{line}`", block.file, block.line);
            let program = line.split_whitespace().next().unwrap_or_default();
            match &block.not_run {
                None => {
                    assert!(
                        !is_bench(program),
                        "{at}: a benchmark is not run by tests: mark its block with {MARKER} WHY -->"
                    );
                    // `cargo run --release --` is the binary built for this test.
                    let script = line.replace("cargo run --release --", "iosurvey");
                    let out = Command::new("bash")
                        .args(["-euo", "pipefail", "-c", &script])
                        .current_dir(sandbox.path())
                        .env("PATH", &path)
                        .output()
                        .unwrap();
                    let out = common::outcome(out);
                    assert_eq!(out.code, 0, "{at} failed:\n{}\n{}", out.stdout, out.stderr);
                    ran += 1;
                }
                Some(why) => {
                    assert!(!is_bench(program) || root.join(program).is_file(), "{at}: no {program} in the repository");
                    for words in invocations(line) {
                        let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
                        args.push("--help");
                        let out = common::iosurvey(&args);
                        assert_eq!(out.code, 0, "{at} does not parse: {}", out.stderr);
                    }
                    parsed.push(format!("{at}: {why}"));
                }
            }
        }
    }
    eprintln!("ran {ran} commands; not run here, parsed only ({}):", parsed.len());
    for p in &parsed {
        eprintln!("  {p}");
    }
}

/// `text` split into words as a shell splits them: at blanks outside quotes, the quotes
/// removed.
fn shell_words(text: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in text.chars() {
        match (quote, c) {
            (None, '\'' | '"') => (quote, any) = (Some(c), true),
            (Some(q), _) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            _ => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

#[test]
fn comments_redirections_and_launchers_are_left_out_of_an_invocation() {
    assert_eq!(
        invocations("mpirun -np 8 --map-by node target/release/iosurvey net   # the ceiling"),
        [vec!["net".to_string()]]
    );
    assert_eq!(
        invocations("iosurvey completions zsh > \"${fpath[1]}/_iosurvey\""),
        [vec!["completions".to_string(), "zsh".to_string()]]
    );
    assert_eq!(invocations("cargo run --release -- survey  # or"), [vec!["survey".to_string()]]);
    assert_eq!(invocations("iosurvey merge jobs/*.db --into e.db && bash jobs/submit").len(), 1);
    assert_eq!(
        invocations("iosurvey run --event '20s:mdadm /dev/md0 --fail /dev/sdc'"),
        [vec!["run".to_string(), "--event".into(), "20s:mdadm /dev/md0 --fail /dev/sdc".into()]]
    );
}
