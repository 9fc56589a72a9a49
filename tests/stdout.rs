//! Standard output whose reader goes away (`iosurvey export | head -1`): every command that
//! prints ends quietly, its work done, never with a panic; any other write error is the
//! command's one closing line. The commands come from iosurvey's own help, so a command added
//! later and left out here fails the test.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};

/// Longer than any command here takes on a loaded machine.
const HUNG_SECS: u64 = 180;

/// A pipe whose reading end is closed already: the command's first write to it fails (EPIPE).
fn reader_gone() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just made and are owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Stdio::from(write)
}

/// How a command ended with its standard output read by a reader that left: gone before the
/// first byte, or after one byte (as `head -c 1`). Fails the test if it runs past HUNG_SECS.
fn with_short_reader(args: &[String], gone_before: bool) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(if gone_before { reader_gone() } else { Stdio::piped() })
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(mut out) = child.stdout.take() {
        // One byte, then the reader goes, as head does; a command that prints nothing gives
        // none, and the read ends when it exits.
        std::thread::spawn(move || {
            let _ = out.read(&mut [0u8; 1]);
        });
    }
    let mut err = child.stderr.take().unwrap();
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let mut status = None;
    wait_until(&format!("iosurvey {} to end", args.join(" ")), HUNG_SECS, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    Out { code: status.and_then(|s| s.code()).unwrap_or(-1), stdout: String::new(), stderr: said.join().unwrap() }
}

/// The commands a help text lists (under "Commands:", or the top level's headings of what
/// each is for), before its options.
fn listed(help_of: &[&str]) -> Vec<String> {
    let mut args = help_of.to_vec();
    args.push("--help");
    let help = iosurvey(&args).stdout;
    help.lines()
        .take_while(|l| !l.starts_with("Options:"))
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| !name.starts_with('-'))
        .map(|name| help_of.iter().copied().chain([name]).collect::<Vec<_>>().join(" "))
        .collect()
}

/// `iosurvey net --serve --once` on a port the system picks: its address, once it listens.
fn net_server() -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["net", "--serve", "--port", "0", "--once"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("the server's first line").unwrap();
    let to = first.split("listening on ").nth(1).and_then(|r| r.split(';').next()).expect(&first).to_string();
    std::thread::spawn(move || lines.for_each(drop));
    (child, to)
}

#[test]
fn every_command_that_prints_ends_quietly_when_its_reader_goes_and_its_work_is_done() {
    let bed = Bed::new();
    let tmp = bed.tmp.path();
    let dir = bed.dir.display().to_string();
    let at = |name: &str| {
        let p = tmp.join(name);
        fs::create_dir_all(&p).unwrap();
        p.display().to_string()
    };
    for label in ["a", "b"] {
        let out = bed.run(&format!("--transfer 4k --block 64k --op write,read --label {label}"));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let cases = cases(&dir, &at, stored_groups(&bed, &at));

    let mut every = listed(&[]);
    every.retain(|c| c != "campaign");
    every.extend(listed(&["campaign"]));
    assert!(every.len() > 20 && every.contains(&"campaign emit".to_string()), "{every:?}");
    let untested: Vec<&String> = every.iter().filter(|c| !cases.contains_key(c.as_str())).collect();
    assert!(untested.is_empty(), "commands this test does not pipe: {untested:?} (add them above)");

    let mut n = 0;
    for gone_before in [true, false] {
        each_quietly(&bed, &cases, gone_before, &mut n);
    }
    assert!(listing(&bed.dir).is_empty(), "every run cleaned up: {:?}", listing(&bed.dir));
    assert!(Path::new(&tmp.join("man/man1/iosurvey.1")).exists());
}

/// Stores the groups `show` shows (s1, t1, m1 and c1), directories made by `at`; the commands
/// that made them (survey, targets, matrix, campaign run), each a line of words ({db} the store),
/// and the campaign file's path.
fn stored_groups(bed: &Bed, at: &dyn Fn(&str) -> String) -> [String; 5] {
    let campaign_dir = at("campaign-target");
    let campaign = bed.tmp.path().join("c.toml");
    fs::write(
        &campaign,
        format!(
            "[campaign]\nname = \"p\"\nrepetitions = 1\n[[target]]\nlabel = \"a\"\ndir = \"{campaign_dir}\"\n\
             [[study]]\nname = \"s\"\nkind = \"run\"\nop = \"write\"\ntransfer = \"4k\"\nblock = \"64k\"\nclients = \"1\"\n\
             [batch]\npartition = \"p\"\naccount = \"\"\nlauncher = \"srun\"\nmodules = []\npoint-time = \"1m\"\n"
        ),
    )
    .unwrap();
    let camp = campaign.display().to_string();
    let (ta, tb) = (at("ta"), at("tb"));
    let matrix = format!(
        "matrix --dir {} --full --kinds write --min-file 64k --max-file 128k --min-record 4k --max-record 4k --db {{db}}",
        at("m")
    );
    let survey = format!("survey {} --size 1m --tasks 1 --random-secs 0.1 --repetitions 1 --db {{db}}", at("s"));
    let targets = format!("targets --dir {ta}@{tb} --size 1m --streams 1 --repetitions 1 --db {{db}}");
    let run_campaign = format!("campaign run {camp} --db {{db}}");
    // What show shows, before any command below runs: s1, t1, m1 and c1.
    for line in [&survey, &targets, &matrix, &run_campaign] {
        let words: Vec<String> = line.split_whitespace().map(|w| w.replace("{db}", &bed.db)).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let out = iosurvey(&words);
        assert_eq!(out.code, 0, "{line}: {}", out.stderr);
    }
    [survey, targets, matrix, run_campaign, camp]
}

/// Each command as a case: its name, and its lines, `groups` those `stored_groups` ran.
fn cases(dir: &str, at: &dyn Fn(&str) -> String, groups: [String; 5]) -> BTreeMap<&'static str, Vec<String>> {
    let [survey, targets, matrix, run_campaign, camp] = groups;
    let fixture = |name: &str| format!("{}/tests/fixtures/tools/{name}", env!("CARGO_MANIFEST_DIR"));

    // Each command as typed, a line of words ({db} is the store); a command whose work
    // prints nothing on standard output (report -o, campaign run) is run all the same.
    let mut cases: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut add = |name: &'static str, line: String| cases.entry(name).or_default().push(line);
    add("run", format!("run --dir {dir} --transfer 4k --block 64k --op write --db {{db}}"));
    add("run", format!("run --dir {dir} --transfer 4k --block 64k --op write --json - --db {{db}}"));
    add("run", format!("run --dir {dir} --transfer 4k --block 64k --op write -q --db {{db}}"));
    add("survey", survey);
    add("targets", targets);
    add("meta", format!("meta --dir {dir} -n 20 --db {{db}}"));
    add("io500", format!("io500 --dir {} --quick --db {{db}}", at("io")));
    add("matrix", matrix);
    add("import", format!("import {} --db {{db}}", fixture("ior-fpp-2tasks.txt")));
    add("merge", format!("merge {{db}} --into {}/merged-{{n}}.db", at("merged")));
    add("net", "net --to {net} --size 1m --repetitions 1 --streams 1 --db {db}".into());
    add("train", format!("train --dir {} --workload unet3d --generate --files 6 --sample-bytes 4k --sample-stdev 0 --batch 2 --compute 0.001 --db {{db}}", at("train")));
    add("checkpoint", format!("checkpoint --dir {} --model llama3-8b --ranks 2 --scale 1/10000000 --checkpoints 2 --reads 1 --compute 0 --transfer 4k --no-drop-caches --db {{db}}", at("ckpt")));
    add("campaign plan", format!("campaign plan {camp} --db {{db}}"));
    add("campaign run", run_campaign);
    add("campaign status", format!("campaign status {camp} --db {{db}}"));
    add("campaign emit", format!("campaign emit {camp} --slurm {}/jobs-{{n}} --db {{db}}", at("jobs")));
    add("campaign help", "campaign help plan".into());
    for shell in ["bash", "zsh", "fish"] {
        add("completions", format!("completions {shell}"));
    }
    add("manpages", format!("manpages {}/man1 --db {{db}}", at("man")));
    add("engines", "engines".into());
    add("engines", "engines --json --all".into());
    add("ls", "ls --db {db}".into());
    add("ls", "ls --json --db {db}".into());
    add("ls", "ls --all --format csv --db {db}".into());
    add("compare", "compare a b --db {db}".into());
    add("compare", "compare a b --format md --db {db}".into());
    add("report", format!("report -o {}/r.html --db {{db}}", at("report")));
    add("report", "report --reference list --db {db}".into());
    add("export", "export --format csv --db {db}".into());
    add("export", "export a b --format ior-json --db {db}".into());
    for id in ["1", "s1", "m1", "t1", "c1"] {
        add("show", format!("show {id} --db {{db}}"));
    }
    add("show", "show 1 --json --db {db}".into());
    add("help", "help".into());
    add("help", "help run".into());
    add("help", "--help".into());
    add("help", "run --help".into());
    add("help", "--version".into());
    add("help", "-V".into());
    add("help", String::new());
    // Hidden commands, which no help lists, and the front ends.
    add("team-timing", "team-timing --rounds 1".into());
    add("overhead", "overhead".into());
    add("ior", format!("ior -w -r -t 64k -b 256k -o {dir}/t --db {{db}}"));
    add("ior", format!("--db {{db}} ior -w -t 64k -b 256k -o {dir}/t -O summaryFormat=JSON"));
    add("mdtest", format!("mdtest -n 20 -d {dir} --db {{db}}"));
    add("iozone", format!("iozone -i 0 -s 64k -r 4k -f {dir}/f --db {{db}}"));
    for tool in ["ior", "mdtest", "iozone"] {
        add(tool, format!("{tool} --help"));
    }
    cases
}

/// Runs every case with its reader gone before its output, or after a byte of it: each ends
/// with 0 and no panic, a run is stored all the same; `n` numbers the commands.
fn each_quietly(bed: &Bed, cases: &BTreeMap<&str, Vec<String>>, gone_before: bool, n: &mut usize) {
    for (name, lines) in cases {
        for line in lines {
            *n += 1;
            let server = line.contains("{net}").then(net_server);
            let to = server.as_ref().map_or(String::new(), |s| s.1.clone());
            let args: Vec<String> = line
                .split_whitespace()
                .map(|w| w.replace("{db}", &bed.db).replace("{n}", &n.to_string()).replace("{net}", &to))
                .collect();
            let runs = bed.runs().len();
            let out = with_short_reader(&args, gone_before);
            let how = if gone_before { "reader gone before" } else { "reader gone after a byte" };
            assert_eq!(out.code, 0, "{name}: iosurvey {} ({how}): {}", args.join(" "), out.stderr);
            assert!(
                !out.stderr.contains("panicked") && !out.stderr.contains("backtrace"),
                "{name}: iosurvey {} ({how}): {}",
                args.join(" "),
                out.stderr
            );
            if *name == "run" {
                assert_eq!(bed.runs().len(), runs + 1, "the run is stored though nobody read its table");
            }
            if let Some((mut child, _)) = server {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

#[test]
fn an_output_that_cannot_be_written_is_one_line_and_not_a_panic() {
    let bed = Bed::new();
    assert_eq!(bed.run("--transfer 4k --block 64k --op write").code, 0);
    for args in [vec!["export", "--format", "csv", "--db", &bed.db], vec!["completions", "bash"]] {
        let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = outcome(
            Command::new(env!("CARGO_BIN_EXE_iosurvey"))
                .args(&args)
                .stdout(full)
                .stderr(Stdio::piped())
                .output()
                .unwrap(),
        );
        assert_one_line_error(&out, 1, &["cannot write standard output", "No space left on device"]);
    }
}
