//! Campaigns end to end: the file's faults said in one line with file, line and key; the
//! planned points stored exactly once each, resumed after an interrupt; hooks in order with
//! their facts; the report with a section per study; the file's owner checked as root.

mod common;

use common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// A campaign file in a bed's scratch directory, mode 0644 (as root, a file others may
/// change is refused).
fn file(bed: &Bed, text: &str) -> String {
    let path = bed.tmp.path().join("c.toml");
    fs::write(&path, text).unwrap();
    set_mode(&path, 0o644);
    path.display().to_string()
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// `iosurvey campaign ARGS` on the bed's store, with a temporary directory of the bed's own
/// (TMPDIR): what a campaign leaves there is this test's to find, not the machine's.
fn campaign(bed: &Bed, args: &[&str]) -> Out {
    let tmp = bed_tmp(bed);
    fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iosurvey"));
    cmd.arg("campaign").args(args).args(["--db", bed.db.as_str()]).env("TMPDIR", &tmp);
    outcome(cmd.output().expect("start iosurvey"))
}

/// iosurvey, to be started in the background with the bed's own temporary directory.
fn spawned(bed: &Bed) -> Command {
    let tmp = bed_tmp(bed);
    fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iosurvey"));
    cmd.env("TMPDIR", &tmp);
    cmd
}

/// The bed's own temporary directory, which [`campaign`] gives as TMPDIR.
fn bed_tmp(bed: &Bed) -> std::path::PathBuf {
    bed.tmp.path().join("tmp")
}

/// The store's runs filed in campaigns: (study, label, workload key, status); none while the
/// store is still being made (a test polling a campaign in progress may look that early).
fn campaign_runs(db: &str) -> Vec<(String, String, String, String)> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let Ok(mut stmt) = conn.prepare(
        "SELECT r.name, r.system_label, r.workload_key || ' tasks=' || json_extract(r.spec_json, '$.tasks'), r.status
         FROM runs r JOIN groups g ON g.id = r.group_id
         WHERE g.kind = 'campaign' ORDER BY r.id",
    ) else {
        return Vec::new();
    };
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect()
}

/// A campaign of one study (its keys after `[[study]]`) on the bed's directory, labelled a.
fn one_study(bed: &Bed, study: &str) -> String {
    file(bed, &format!("{HEAD}{}[[study]]\n{study}", target("a", &bed.dir)))
}

const HEAD: &str = "[campaign]\nname = \"t\"\nrepetitions = 2\n";

fn target(label: &str, dir: &Path) -> String {
    format!("[[target]]\nlabel = \"{label}\"\ndir = \"{}\"\ndescription = \"{label} under test\"\n", dir.display())
}

#[test]
fn a_malformed_campaign_file_is_said_with_its_line_and_key_and_nothing_is_stored() {
    let bed = Bed::new();
    let t = target("a", &bed.dir);
    let study = "[[study]]\nname = \"s\"\nkind = \"run\"\n";
    let cases: Vec<(String, Vec<&str>)> = vec![
        (format!("{HEAD}[[target]\nlabel = \"a\"\n"), vec!["c.toml:4:", "not TOML"]),
        (
            format!("[campaign]\nname = \"t\"\nrepetitons = 2\n{t}{study}"),
            vec!["c.toml:3:", "unknown key 'repetitons'", "did you mean 'repetitions'?"],
        ),
        (
            format!("{HEAD}{t}{study}tranfer = \"1m\"\n"),
            vec!["c.toml:11:", "study 's' (run): unknown key 'tranfer'", "did you mean 'transfer'?"],
        ),
        (
            format!("[campaign]\nname = \"t\"\nrepetitions = \"two\"\n{t}{study}"),
            vec!["c.toml:3:", "repetitions is a whole number"],
        ),
        (format!("{HEAD}{t}{study}transfer = \"1q\"\n"), vec!["c.toml:11:", "study 's' (run)", "1q"]),
        (
            format!("{HEAD}[[target]]\nlabel = \"a\"\ndir = \"/nonexistent-iosurvey/iosurvey\"\n{study}"),
            vec!["c.toml:6:", "dir /nonexistent-iosurvey/iosurvey is not a directory"],
        ),
        (format!("{HEAD}{t}{study}{study}"), vec!["c.toml:11:", "[[study]] name 's' is given twice"]),
        (
            format!("{HEAD}{t}{study}targets = [\"b\"]\n"),
            vec!["c.toml:11:", "names target 'b', which no [[target]] has"],
        ),
        (format!("{HEAD}{t}{study}dir = \"/tmp\"\n"), vec!["c.toml:11:", "'dir' is set by the campaign"]),
        (format!("{HEAD}{t}[[study]]\nname = \"s\"\nkind = \"fio\"\n"), vec!["c.toml:10:", "kind 'fio' is not one of"]),
        // A key that carries a value, or a value that is a flag: never a second flag.
        (
            format!("{HEAD}{t}{study}\"csv=/tmp/x\" = true\n"),
            vec!["c.toml:11:", "key 'csv=/tmp/x' is not the name of a setting"],
        ),
        (format!("{HEAD}{t}{study}fsync = \"--db=/tmp/x.db\"\n"), vec!["c.toml:11:", "'fsync' is true or false"]),
        (format!("{HEAD}{t}{study}segments = -1\n"), vec!["c.toml:11:", "'segments' cannot begin with '-' (-1)"]),
        (
            format!("{HEAD}{t}{study}fsync = true\nfsync_each = true\nfsync-each = false\n"),
            vec!["c.toml:1", "'fsync-each' is given twice"],
        ),
        (
            format!("[campaign]\nname = \"t\"\nrepetitions = {{ n = 5 }}\n{t}{study}"),
            vec!["c.toml:3:", "repetitions is a table"],
        ),
        (format!("{HEAD}{t}{study}targets = []\n"), vec!["c.toml:11:", "names no target"]),
        (format!("{HEAD}{t}{study}targets = [\"a\", \"a\"]\n"), vec!["c.toml:11:", "names target 'a' twice"]),
        (format!("{HEAD}{t}{study}clients = \"2,2,1\"\n"), vec!["c.toml:11:", "clients names 2 twice"]),
    ];
    for (text, needles) in cases {
        let path = file(&bed, &text);
        for command in ["plan", "run"] {
            let out = campaign(&bed, &[command, &path]);
            assert_one_line_error(&out, 2, &needles);
            assert!(!Path::new(&bed.db).exists(), "{command} made a store for:\n{text}");
        }
    }
}

#[test]
fn plan_prints_every_point_and_hook_in_order_and_runs_nothing() {
    let bed = Bed::new();
    let other = bed.tmp.path().join("b");
    fs::create_dir(&other).unwrap();
    let text = format!(
        "{HEAD}{}{}[[study]]\nname = \"seq\"\nkind = \"run\"\ntransfer = \"64k\"\ntotal = \"1m\"\nclients = \"1,2\"\n\
         [hooks]\nbefore-run = \"touch {}/hooked\"\n",
        target("a", &bed.dir),
        target("b", &other),
        bed.tmp.path().display()
    );
    let path = file(&bed, &text);
    let out = campaign(&bed, &["plan", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.contains(". seq (run) on ")).collect();
    // Interleaved: the targets alternate at each client count and repetition.
    let order: Vec<&str> = lines.iter().map(|l| if l.contains(" on a,") { "a" } else { "b" }).collect();
    assert_eq!(order, ["a", "b", "a", "b", "a", "b", "a", "b"], "{}", out.stdout);
    assert!(
        out.stdout
            .contains("hook before-run (on the lead; a failure fails the point, which then does not run): touch "),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("--dir") && out.stdout.contains("--label a --tasks 2"), "{}", out.stdout);
    assert!(out.stdout.contains("total: 8 points, 8 to run, 0 stored already, 0 refused"), "{}", out.stdout);
    assert!(!bed.tmp.path().join("hooked").exists(), "plan ran a hook");
    assert!(!Path::new(&bed.db).exists());
    // --only keeps its subset; a name the file lacks is refused.
    let only = campaign(&bed, &["plan", &path, "--only", "target=b"]);
    assert!(only.stdout.contains("total: 4 points"), "{}", only.stdout);
    assert_one_line_error(&campaign(&bed, &["plan", &path, "--only", "study=nope"]), 2, &["no such study"]);
    let both = campaign(&bed, &["plan", &path, "--only", "target=b", "--only", "target=a,study=seq"]);
    assert!(both.stdout.contains("total: 8 points"), "--only repeated names more: {}", both.stdout);
}

/// Issue 23's campaign: two targets (a tmpfs and an ext4 loop mount), a sweep, a metadata
/// study and a small matrix, 2 repetitions: exactly the planned runs are stored and linked,
/// and the report has a section per study with both targets on its charts.
#[test]
fn a_campaign_over_tmpfs_and_ext4_stores_its_points_once_and_reports_each_study() {
    let Some(tmpfs) = Tmpfs::mount("size=256m") else { return };
    let Some(ext4) = Ext4::make(256) else {
        skip("no ext4 file system could be made on a loop device");
        return;
    };
    let bed = &tmpfs.bed;
    // A directory of its own: the file system's root holds lost+found.
    let on_ext4 = ext4.mount.join("eval");
    fs::create_dir(&on_ext4).unwrap();
    let text = format!(
        "{HEAD}{}{}\
         [[study]]\nname = \"seq\"\nkind = \"run\"\nop = \"write,read\"\ntransfer = \"64k\"\ntotal = \"4m\"\nclients = \"1,2\"\n\
         [[study]]\nname = \"md\"\nkind = \"meta\"\nitems = 20\nclients = \"1,2\"\n\
         [[study]]\nname = \"mx\"\nkind = \"matrix\"\nkinds = [\"write\", \"read\"]\nfull = true\n\
         min-file = \"256k\"\nmax-file = \"512k\"\nmin-record = \"64k\"\nmax-record = \"128k\"\n",
        target("tmpfs", &bed.dir),
        target("ext4", &on_ext4)
    );
    let path = file(bed, &text);
    let out = campaign(bed, &["run", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("20 points to run") && out.stderr.contains("20 points ok, 0 failed"), "{}", out.stderr);
    let runs = campaign_runs(&bed.db);
    // seq and md: 2 targets x 2 client counts x 2 repetitions each, every one ok.
    assert_eq!(runs.len(), 16, "{runs:?}");
    for study in ["seq", "md"] {
        for label in ["tmpfs", "ext4"] {
            let of: Vec<_> = runs.iter().filter(|r| r.0 == study && r.1 == label).collect();
            let mut keys: Vec<&String> = of.iter().map(|r| &r.2).collect();
            keys.sort();
            keys.dedup();
            assert_eq!((of.len(), keys.len()), (4, 2), "{study} on {label}: two keys (1 and 2 clients) twice each");
            assert!(of.iter().all(|r| r.3 == "ok"));
        }
    }
    let ls = iosurvey(&["ls", "--db", &bed.db]).stdout;
    assert!(ls.contains("campaigns:") && ls.contains(" c1  t "), "{ls}");
    let conn = rusqlite::Connection::open(&bed.db).unwrap();
    let matrices: i64 = conn
        .query_row("SELECT count(*) FROM groups WHERE kind = 'matrix' AND name = 'mx' AND state = 'ok'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(matrices, 4, "the matrix once per target and repetition");
    // Running it again stores nothing more.
    let again = campaign(bed, &["run", &path]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stderr.contains("nothing to run (20 points stored already, 0 refused)"), "{}", again.stderr);
    assert_eq!(campaign_runs(&bed.db).len(), 16);
    let status = campaign(bed, &["status", "c1"]);
    assert!(status.stdout.contains("20 of 20 points stored whole; 0 to run"), "{}", status.stdout);
    // The report: a section per study, both targets on the sweep's charts, the file appended.
    let page = bed.tmp.path().join("eval.html");
    let out = iosurvey(&["report", "--campaign", "c1", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&page).unwrap();
    for heading in [
        "seq: run over clients, one line per target",
        "md: meta over clients",
        "mx: matrix of each target",
        "Appendix: campaign t",
    ] {
        assert!(html.contains(heading), "{heading} missing");
    }
    let write = html.find("write MiB/s against clients").expect("the sweep's write chart");
    let figure = &html[html[..write].rfind("<figure ").unwrap()..];
    let figure = &figure[..figure.find("</figure>").unwrap()];
    for label in ["tmpfs", "ext4"] {
        assert!(figure.contains(&format!(">\n{label}")), "{label} in the legend");
    }
    // The metadata study draws its phases on one chart, in ops/s as mdtest says them.
    let phases = html.find("ops/s of every phase against clients").expect("the metadata study charts its phases");
    let figure = &html[html[..phases].rfind("<figure ").unwrap()..];
    let figure = &figure[..figure.find("</figure>").unwrap()];
    for phase in ["file-create", "file-stat", "file-remove"] {
        assert!(figure.contains(phase), "{phase} on the metadata chart");
    }
    assert!(
        html.contains("name = &quot;mx&quot;") || html.contains("name = \"mx\""),
        "the campaign file in the appendix"
    );
    let Some(browser) = chromium() else { return };
    let (dom, log) = open_in_chromium(browser, &page, &["--dump-dom"]);
    assert!(dom.matches("<figure ").count() >= 4, "{log}");
}

#[test]
fn an_interrupted_campaign_resumes_and_stores_every_point_once() {
    let bed = Bed::new();
    // Each run writes and reads 16 transfers of 20 ms per task: about 0.7 s a point.
    let path = one_study(
        &bed,
        "name = \"slow\"\nkind = \"run\"\nengine = \"delay:20ms,wall\"\ntransfer = \"64k\"\nblock = \"1m\"\nclients = \"1,2\"\n",
    );
    let child = spawned(&bed)
        .args(["campaign", "run", &path, "--db", &bed.db])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the first point to be stored", 60, || {
        Path::new(&bed.db).exists() && campaign_runs(&bed.db).iter().any(|r| r.3 == "ok")
    });
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = outcome(child.wait_with_output().unwrap());
    assert_one_line_error(&out_without_progress(&out), 130, &["campaign c1 interrupted", "run the same command again"]);
    let before = campaign_runs(&bed.db);
    // The signal came during a point (its run, if it had begun, stored as failed) or between
    // two points (nothing failed).
    if before.iter().any(|r| r.3 == "failed") {
        assert!(out.stderr.contains("interrupted during"), "{}: {before:?}", out.stderr);
    }
    assert!(before.iter().filter(|r| r.3 == "ok").count() < 4, "{before:?}");
    let out = campaign(&bed, &["run", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = campaign_runs(&bed.db);
    let ok: Vec<_> = after.iter().filter(|r| r.3 == "ok").collect();
    assert_eq!(ok.len(), 4, "2 client counts x 2 repetitions: {after:?}");
    let mut keys: Vec<&String> = ok.iter().map(|r| &r.2).collect();
    keys.sort();
    assert!(keys[0] == keys[1] && keys[2] == keys[3] && keys[1] != keys[2], "each key exactly twice: {keys:?}");
    // Nothing ran twice: the runs stored before the interrupt are all still there, and only
    // the missing ones were added.
    assert_eq!(after.len(), before.len() + (4 - before.iter().filter(|r| r.3 == "ok").count()));
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

/// The campaign's own lines ("iosurvey: [1/4] ...") left out, to see its closing line alone.
fn out_without_progress(out: &Out) -> Out {
    let stderr: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("iosurvey: error: ")).collect();
    Out { code: out.code, stdout: out.stdout.clone(), stderr: stderr.join("\n") + "\n" }
}

#[test]
fn hooks_run_in_order_with_the_points_facts_and_a_failing_one_fails_only_its_point() {
    let bed = Bed::new();
    let log = bed.tmp.path().join("hooks.log");
    let text = format!(
        "[campaign]\nname = \"h\"\n{}[[study]]\nname = \"seq\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2,3\"\n\
         [hooks]\n\
         before-study = \"echo study $IOSURVEY_STUDY >> {log}\"\n\
         before-run = \"echo before $IOSURVEY_TARGET $IOSURVEY_CLIENTS $IOSURVEY_REPETITION >> {log}; echo said-on-stdout; test $IOSURVEY_CLIENTS != 2\"\n\
         after-run = {{ command = \"echo after $IOSURVEY_CLIENTS $IOSURVEY_STATUS >> {log}\", on = \"every-node\" }}\n",
        target("a", &bed.dir),
        log = log.display()
    );
    let path = file(&bed, &text);
    let out = campaign(&bed, &["run", &path]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("point failed: seq (run) on a, 2 clients, repetition 1 of 1: hook before-run on"),
        "{}",
        out.stderr
    );
    let lines = fs::read_to_string(&log).unwrap();
    assert_eq!(
        lines, "study seq\nbefore a 1 1\nafter 1 ok\nbefore a 2 1\nafter 2 failed\nbefore a 3 1\nafter 3 ok\n",
        "hooks in the order of the points, with their facts"
    );
    let runs = campaign_runs(&bed.db);
    assert_eq!(runs.len(), 2, "the point whose hook failed did not run: {runs:?}");
    let status = campaign(&bed, &["status", &path]);
    assert!(status.stdout.contains("2 of 3 points stored whole; 1 to run"), "{}", status.stdout);
    assert!(
        status.stdout.contains("hook before-run of seq on") && status.stdout.contains("exit status 1: said-on-stdout"),
        "{}",
        status.stdout
    );
    let conn = rusqlite::Connection::open(&bed.db).unwrap();
    let kept: i64 =
        conn.query_row("SELECT count(*) FROM hooks WHERE output LIKE '%said-on-stdout%'", [], |r| r.get(0)).unwrap();
    assert_eq!(kept, 3, "each before-run's output is kept");
    // ignore: the same failure no longer fails its point.
    let ignoring = text.replace("before-run = \"", "before-run = { on-failure = \"ignore\", command = \"");
    let ignoring = ignoring.replace("test $IOSURVEY_CLIENTS != 2\"\n", "test $IOSURVEY_CLIENTS != 2\" }\n");
    let path = file(&bed, &ignoring);
    let out = campaign(&bed, &["run", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("1 points to run, 2 stored already"),
        "a changed file keeps the points whose key did not change: {}",
        out.stderr
    );
}

#[test]
fn a_failing_after_run_hook_stores_its_run_as_failed_and_a_second_run_measures_it_again() {
    let bed = Bed::new();
    let flag = bed.tmp.path().join("fail");
    fs::write(&flag, "").unwrap();
    let text = format!(
        "[campaign]\nname = \"f\"\n{}[[study]]\nname = \"seq\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2\"\n\
         [hooks]\nafter-run = \"test $IOSURVEY_CLIENTS != 1 || ! test -e {}\"\n",
        target("a", &bed.dir),
        flag.display()
    );
    let path = file(&bed, &text);
    let out = campaign(&bed, &["run", &path]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let runs = campaign_runs(&bed.db);
    let states: Vec<&str> = runs.iter().map(|r| r.3.as_str()).collect();
    assert_eq!(states, ["failed", "ok"], "the 1-client run is not whole: {runs:?}");
    let one = bed.show(1);
    assert_eq!(one["status"], "failed");
    assert!(one["error"].as_str().unwrap().contains("hook after-run on"), "{}", one["error"]);
    fs::remove_file(&flag).unwrap();
    let out = campaign(&bed, &["run", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("1 points to run, 1 stored already"), "{}", out.stderr);
    assert_eq!(campaign_runs(&bed.db).iter().filter(|r| r.3 == "ok").count(), 2);
    // Nothing left: running it again begins no new version of the campaign.
    let out = campaign(&bed, &["run", &path]);
    assert!(out.stderr.contains("nothing to run (2 points stored already, 0 refused)"), "{}", out.stderr);
    let versions = iosurvey(&["ls", "--db", &bed.db]).stdout;
    assert_eq!(versions.matches(" f  ").count(), 1, "{versions}");
}

#[test]
fn as_root_a_campaign_file_others_may_change_is_refused() {
    if !is_root() {
        skip("the owner check applies to root");
        return;
    }
    let bed = Bed::new();
    let path = one_study(&bed, "name = \"s\"\nkind = \"run\"\n");
    set_mode(Path::new(&path), 0o666);
    assert_one_line_error(
        &campaign(&bed, &["run", &path]),
        2,
        &["can be changed by a user other than root", "chmod go-w"],
    );
    set_mode(Path::new(&path), 0o644);
    set_mode(bed.tmp.path(), 0o777);
    assert_one_line_error(
        &campaign(&bed, &["plan", &path]),
        2,
        &["its directory", "can be changed by a user other than root"],
    );
    set_mode(bed.tmp.path(), 0o700);
    assert!(!Path::new(&bed.db).exists());
    let link = bed.tmp.path().join("link.toml");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert_one_line_error(&campaign(&bed, &["plan", link.to_str().unwrap()]), 2, &["is not a regular file"]);
}

#[test]
fn a_scaled_campaign_divides_its_sizes_and_caps_clients_at_the_launch() {
    let bed = Bed::new();
    let path = one_study(
        &bed,
        "name = \"big\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"1m\"\ntotal = \"64g\"\nclients = \"1..64:x2\"\n",
    );
    let out = campaign(&bed, &["run", &path, "--scale", "1/4096"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shown: Vec<Value> = serde_json::from_str(&iosurvey(&["ls", "--json", "--db", &bed.db]).stdout).unwrap();
    let most = shown.iter().map(|r| r["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert!(!shown.is_empty());
    for id in shown.iter().map(|r| r["id"].as_i64().unwrap()) {
        let run = bed.show(id);
        let tasks = run["workload"]["tasks"].as_u64().unwrap() as usize;
        assert!(tasks <= cores, "{most:?}");
        // 64 GiB / 4096 = 16 MiB in all, over the tasks.
        assert_eq!(run["phases"][0]["figures"]["bytes"].as_u64().unwrap(), 16 << 20, "{}", run["workload"]);
    }
    assert_one_line_error(&campaign(&bed, &["plan", &path, "--scale", "4096"]), 2, &["'4096' is not a scale"]);
}

/// Issue 23's seed campaigns (examples/campaigns): each runs scaled down on this machine, its
/// target directories moved into scratch space, and its report has a section per study.
#[test]
fn every_seed_campaign_runs_scaled_and_its_report_has_the_papers_studies() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/campaigns");
    let mut files: Vec<_> = fs::read_dir(&examples).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    for example in files {
        let bed = Bed::new();
        let text = fs::read_to_string(&example).unwrap();
        // Every target's directory, moved under the bed.
        let mut moved = String::new();
        for line in text.lines() {
            match line.strip_prefix("dir = \"") {
                Some(dir) => {
                    let here = bed.tmp.path().join("targets").join(dir.trim_end_matches('"').trim_start_matches('/'));
                    fs::create_dir_all(&here).unwrap();
                    moved += &format!("dir = \"{}\"\n", here.display());
                }
                None => moved += &format!("{line}\n"),
            }
        }
        let path = file(&bed, &moved);
        let name = example.file_name().unwrap().to_string_lossy().into_owned();
        let out = campaign(&bed, &["run", &path, "--scale", "1/4096", "-q"]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let page = bed.tmp.path().join("eval.html");
        let out = iosurvey(&["report", "--campaign", "c1", "-o", page.to_str().unwrap(), "--db", &bed.db]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let html = fs::read_to_string(&page).unwrap();
        let studies: Vec<&str> = moved
            .split("[[study]]")
            .skip(1)
            .filter_map(|s| s.lines().find_map(|l| l.strip_prefix("name = \"")).map(|n| n.trim_end_matches('"')))
            .collect();
        assert!(!studies.is_empty(), "{name}");
        for study in studies {
            assert!(html.contains(&format!(". {study}: ")), "{name}: no section for study {study}");
        }
        // A network study measures between processes: a rehearsal of one refuses its point.
        let net = moved.contains("kind = \"net\"");
        let unmeasured = html.matches("No point of this study is stored whole yet").count();
        assert_eq!(unmeasured, usize::from(net), "{name}: a study measured nothing");
    }
}

#[test]
fn plan_calibrate_times_a_small_run_of_each_study_and_leaves_nothing_behind() {
    let bed = Bed::new();
    let path = one_study(
        &bed,
        "name = \"slow\"\nkind = \"run\"\nengine = \"delay:10ms\"\ntransfer = \"64k\"\ntotal = \"32m\"\nclients = \"1,2\"\n",
    );
    let plain = campaign(&bed, &["plan", &path]);
    assert!(
        plain.stdout.contains("no estimate (no stored run of this workload on this target; --calibrate measures one)"),
        "{}",
        plain.stdout
    );
    let out = campaign(&bed, &["plan", &path, "--calibrate"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // 1/64 of 32 MiB at one task: 8 transfers of 10 ms, so the point is about 2 x 64 x 8 x
    // 10 ms (write and read), 10 s; each point of the study is estimated from it.
    let estimates: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("(from a calibration run at 1/64 of the data, scaled up linearly)"))
        .collect();
    assert_eq!(estimates.len(), 4, "{}", out.stdout);
    let secs = |l: &str| -> f64 {
        let at = l.find("about ").unwrap() + 6;
        let text = &l[at..l[at..].find(" (").unwrap() + at];
        match text.strip_suffix(" s") {
            Some(s) => s.parse().unwrap(),
            None => text.split('m').next().unwrap().parse::<f64>().unwrap() * 60.0,
        }
    };
    assert!((9.0..=30.0).contains(&secs(estimates[0])), "{}", estimates[0]);
    assert!(!Path::new(&bed.db).exists(), "a plan stores nothing");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    // The calibration's scratch store was made in the test's own TMPDIR, and removed.
    let left: Vec<_> = fs::read_dir(bed_tmp(&bed)).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "the calibration store is removed: {left:?}");
}

#[test]
fn a_target_the_run_refuses_stops_the_campaign_in_one_line_and_stores_nothing() {
    let bed = Bed::new();
    fs::write(bed.dir.join("theirs.txt"), "not iosurvey's").unwrap();
    let path =
        one_study(&bed, "name = \"s\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nblock = \"64k\"\n");
    let out = campaign(&bed, &["run", &path, "-q"]);
    assert_one_line_error(&out, 2, &["campaign c1 stopped at s (run) on a", "did not create (first: theirs.txt)"]);
    let ls = iosurvey(&["ls", "--db", &bed.db]).stdout;
    assert!(!ls.contains("campaigns:"), "no version is kept for nothing: {ls}");
    assert!(campaign_runs(&bed.db).is_empty());
    assert_eq!(bed.entries(), ["theirs.txt"]);
}

#[test]
fn a_rehearsal_at_a_scale_never_stands_for_the_full_size_point_and_a_report_needs_no_target() {
    let bed = Bed::new();
    let path =
        one_study(&bed, "name = \"s\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nblock = \"64k\"\n");
    // At 1/1 every size is what the file says, yet the rehearsal is a version of its own.
    let out = campaign(&bed, &["run", &path, "--scale", "1/1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plan = campaign(&bed, &["plan", &path]);
    assert!(plan.stdout.contains("2 to run, 0 stored already"), "{}", plan.stdout);
    let out = campaign(&bed, &["run", &path]);
    assert!(out.stderr.contains("(c2): 2 points to run"), "{}", out.stderr);
    // The store's own copy of the file is what status and report read: the target may be gone.
    fs::remove_dir(&bed.dir).unwrap();
    let status = iosurvey(&["show", "c2", "--db", &bed.db]);
    assert!(status.stdout.contains("2 of 2 points stored whole"), "{}", status.stdout);
    let page = bed.tmp.path().join("r.html");
    let out = iosurvey(&["report", "--campaign", "c2", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&page).unwrap();
    assert!(html.contains("(runs 3-4)"), "only c2's own points are drawn");
}

/// The store's copy of campaign version c1's file replaced by `text`, as a crafted store
/// brought in with merge could hold it.
fn store_text(db: &str, text: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute(
        "UPDATE groups SET spec_json = json_set(spec_json, '$.text', ?1) WHERE kind = 'campaign' AND number = 1",
        [text],
    )
    .unwrap();
}

const SMALL: &str = "name = \"s\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nblock = \"64k\"\n";

#[test]
fn a_campaign_of_more_points_than_the_cap_is_refused_before_they_are_built_from_a_file_or_a_store() {
    let bed = Bed::new();
    // A few lines asking for 4,096 client counts x 30 repetitions: 122,880 points.
    let big = format!(
        "[campaign]\nname = \"t\"\nrepetitions = 30\n{}[[study]]\n{SMALL}tasks = 4096\nclients = \"1..4096\"\n",
        target("a", &bed.dir)
    );
    let path = file(&bed, &big);
    let needles = ["the campaign has 122880 points, more than the 100000 a campaign may have", "split it"];
    assert_one_line_error(&campaign(&bed, &["plan", &path]), 2, &needles);
    assert_one_line_error(&campaign(&bed, &["run", &path, "-q"]), 2, &needles);
    assert!(!Path::new(&bed.db).exists(), "nothing stored");
    // The same text as the file a stored version ran: show and report read it back.
    let path = one_study(&bed, SMALL);
    assert_eq!(campaign(&bed, &["run", &path, "-q"]).code, 0);
    store_text(&bed.db, &big);
    assert_one_line_error(&iosurvey(&["show", "c1", "--db", &bed.db]), 2, &needles);
    let page = bed.tmp.path().join("r.html");
    let out = iosurvey(&["report", "--campaign", "c1", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_one_line_error(&out, 2, &needles);
}

#[test]
fn a_stored_campaign_with_keys_this_version_does_not_read_is_read_back_saying_which_it_skipped() {
    let bed = Bed::new();
    let path = one_study(&bed, SMALL);
    assert_eq!(campaign(&bed, &["run", &path, "-q"]).code, 0);
    // As an older iosurvey could have stored it: a key at the top and one in the study that
    // this version does not read (dropped or renamed since).
    let old = format!("colour = \"blue\"\n{}", fs::read_to_string(&path).unwrap()) + "old-key = \"x\"\n";
    store_text(&bed.db, &old);
    let warned = |out: &Out| {
        let said: Vec<&str> = out.stderr.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(said.len(), 1, "{}", out.stderr);
        for needle in ["iosurvey: warning: campaign c1 ('t')", "'colour', study 's' 'old-key'", "(hint: "] {
            assert!(said[0].contains(needle), "'{needle}' missing from: {}", said[0]);
        }
    };
    let status = campaign(&bed, &["status", "c1"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(status.stdout.contains("2 of 2 points stored whole"), "{}", status.stdout);
    warned(&status);
    let shown = iosurvey(&["show", "c1", "--db", &bed.db]);
    assert!(shown.stdout.contains("2 of 2 points stored whole"), "{}{}", shown.stdout, shown.stderr);
    warned(&shown);
    let page = bed.tmp.path().join("r.html");
    let out = iosurvey(&["report", "--campaign", "c1", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    warned(&out);
    assert!(fs::read_to_string(&page).unwrap().contains("(runs 1-2)"));
    // The same text as a file the user gives is refused in one line, and nothing runs.
    let runs = campaign_runs(&bed.db).len();
    let path = file(&bed, &old);
    let needles = ["c.toml:1: the file: unknown key 'colour'"];
    assert_one_line_error(&campaign(&bed, &["plan", &path]), 2, &needles);
    assert_one_line_error(&campaign(&bed, &["run", &path, "-q"]), 2, &needles);
    assert_eq!(campaign_runs(&bed.db).len(), runs);
}

#[test]
fn a_scale_past_2_to_the_40_is_refused_and_a_stored_scale_past_i64_leaves_the_store_readable() {
    let bed = Bed::new();
    let path = one_study(&bed, SMALL);
    assert_one_line_error(
        &campaign(&bed, &["plan", &path, "--scale", "1/1099511627777"]),
        2,
        &["--scale 1/1099511627777", "2^40", "at most 1099511627776"],
    );
    let out = campaign(&bed, &["run", &path, "--scale", "1/1099511627776", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A store written before the cap (or by hand) holds a scale past i64, which SQLite's JSON
    // functions read as a REAL; at 1/2^40 and at that scale the points are the same sizes.
    let conn = rusqlite::Connection::open(&bed.db).unwrap();
    let changed = conn
        .execute(
            "UPDATE groups SET spec_json = replace(spec_json, '\"scale\":1099511627776', '\"scale\":18446744073709551615')
             WHERE kind = 'campaign'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let status = iosurvey(&["show", "c1", "--db", &bed.db]);
    assert!(status.stdout.contains("2 of 2 points stored whole; 0 to run"), "{}{}", status.stdout, status.stderr);
    let page = bed.tmp.path().join("r.html");
    let out = iosurvey(&["report", "--campaign", "c1", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(fs::read_to_string(&page).unwrap().contains("run at --scale 1/18446744073709551615"));
}

#[test]
fn only_selects_a_target_whose_label_holds_a_comma_written_with_a_backslash() {
    let bed = Bed::new();
    let path =
        file(&bed, &format!("{HEAD}{}{}[[study]]\n{SMALL}", target("x,target=b", &bed.dir), target("b", &bed.dir)));
    let out = campaign(&bed, &["plan", &path, "--only", "target=x\\,target=b"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.matches(" on x,target=b, ").count(), 2, "{}", out.stdout);
    assert!(!out.stdout.contains(" on b, "), "{}", out.stdout);
    // Unescaped, the comma still separates two selections.
    let out = campaign(&bed, &["plan", &path, "--only", "target=b,study=s"]);
    assert_eq!(out.stdout.matches(" on b, ").count(), 2, "{}", out.stdout);
    assert_one_line_error(
        &campaign(&bed, &["plan", &path, "--only", "target=x,target=b"]),
        2,
        &["--only target=x: the campaign has no such target", "a comma in it written \\,"],
    );
}

#[test]
fn a_rehearsal_refuses_a_file_the_full_size_campaign_would_refuse() {
    let bed = Bed::new();
    // 1 GiB does not split into 3 segments of whole 64 KiB transfers; at 1/4096 the total
    // rounds down to one that does.
    let path = one_study(
        &bed,
        "name = \"s\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nsegments = 3\ntotal = \"1g\"\n",
    );
    for verb in ["plan", "run"] {
        let out = campaign(&bed, &[verb, &path, "--scale", "1/4096", "-q"]);
        assert_one_line_error(&out, 2, &["cannot be split into 3", "at full size", "checks the file at full size too"]);
    }
    assert!(!Path::new(&bed.db).exists(), "nothing stored");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

/// `n` targets and one study, for the reader's timing.
fn many_targets(n: usize) -> String {
    let mut text = String::from(HEAD);
    for k in 0..n {
        text += &format!("[[target]]\nlabel = \"t{k}\"\ndir = \"/nonexistent-iosurvey/{k}\"\n");
    }
    text + "[[study]]\n" + SMALL
}

#[test]
fn a_large_campaign_file_is_read_whole_with_every_line_and_duplicate_found() {
    // The reader finds lines by binary search over line starts and duplicates by a set (it
    // was quadratic: 20,000 targets took over a minute); bench/input-scale times it at 1x and
    // 10x. Here: at that size, every line it names is still the right one.
    let text = many_targets(20_000);
    let c = iosurvey::campaign::parse_unmounted(Path::new("c.toml"), &text).unwrap();
    assert_eq!(c.targets.len(), 20_000);
    assert_eq!(c.studies[0].targets.len(), 20_000);
    // Lines are still right at the end of the file.
    let first = c.targets[0].line.unwrap();
    assert!((4..=5).contains(&first), "{first}");
    assert_eq!(c.targets[19_999].line, Some(first + 3 * 19_999));
    assert_eq!(c.studies[0].line, Some(first + 3 * 20_000));
    let mut keys = String::from("[[study]]\nname = \"k\"\nkind = \"run\"\n");
    for k in 0..40_000 {
        keys += &format!("key-{k} = 1\n");
    }
    // The same setting spelled with '_': TOML takes it as another key, the reader does not.
    keys += "key_7 = 2\n";
    let twice = iosurvey::campaign::parse_unmounted(Path::new("c.toml"), &(many_targets(1) + &keys)).unwrap_err();
    assert_eq!(twice.line, Some(12 + 3 + 40_000 + 1), "{twice}");
    assert!(twice.what.contains("setting 'key-7' is given twice"), "{twice}");
}

#[test]
fn a_points_refusal_names_the_campaign_files_keys_not_the_commands_flags() {
    let bed = Bed::new();
    fs::write(bed.dir.join("theirs"), "not iosurvey's").unwrap();
    let path = one_study(&bed, "name = \"s\"\nkind = \"meta\"\nitems = 20\n");
    let out = campaign(&bed, &["run", &path, "-q"]);
    assert_one_line_error(&out, 2, &["stopped at", "the target's dir", "add force = true"]);
    assert!(!out.stderr.contains("--force") && !out.stderr.contains("--dir"), "{}", out.stderr);
    assert!(!Path::new(&bed.db).exists() || campaign_runs(&bed.db).is_empty(), "nothing ran");
}

const BATCH: &str = "[batch]\npartition = \"storage\"\naccount = \"\"\nlauncher = \"srun\"\nmodules = [\"openmpi\"]\n";

#[test]
fn emit_writes_a_job_per_node_count_still_to_run_and_a_job_runs_only_its_share() {
    let bed = Bed::new();
    let study =
        "name = \"seq\"\nkind = \"run\"\nop = \"write\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2,3\"\n";
    let jobs = bed.tmp.path().join("jobs");
    let jobs_s = jobs.display().to_string();

    // Without [batch]: one line, nothing written.
    let path = one_study(&bed, study);
    let out = campaign(&bed, &["emit", &path, "--slurm", &jobs_s]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("has no [batch] table") && out.stderr.lines().count() == 1, "{}", out.stderr);
    // A [batch] without what only the site can say is refused where it is read.
    let path = file(&bed, &format!("{HEAD}{}[[study]]\n{study}[batch]\nlauncher = \"srun\"\n", target("a", &bed.dir)));
    let out = campaign(&bed, &["emit", &path, "--slurm", &jobs_s]);
    assert!(out.stderr.contains("[batch] has no partition, which only the site can choose"), "{}", out.stderr);
    // No stored run estimates a point, and no point-time: no job can get a true limit.
    let path = file(&bed, &format!("{HEAD}{}[[study]]\n{study}{BATCH}", target("a", &bed.dir)));
    let out = campaign(&bed, &["emit", &path, "--slurm", &jobs_s]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("6 points to run have no estimate"), "{}", out.stderr);
    assert!(!jobs.exists(), "nothing is written when a job cannot be limited");

    // A job's share: the points that take its nodes, on a launch of that many nodes only.
    let out = campaign(&bed, &["run", &path, "--only", "nodes=1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let runs = campaign_runs(&bed.db);
    assert_eq!(runs.len(), 2, "the 1-client point, twice: {runs:?}");
    assert!(runs.iter().all(|r| r.2.ends_with("tasks=1") && r.3 == "ok"), "{runs:?}");
    let out = campaign(&bed, &["run", &path, "--only", "nodes=2"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("but this launch has 1 processes on 1 nodes"), "{}", out.stderr);
    assert_eq!(campaign_runs(&bed.db).len(), 2, "a refused launch runs nothing");

    // Jobs for what is still to run: 2 and 3 nodes; the stored 1-node point needs none.
    let path = file(&bed, &format!("{HEAD}{}[[study]]\n{study}{BATCH}point-time = \"2m\"\n", target("a", &bed.dir)));
    let out = campaign(&bed, &["emit", &path, "--slurm", &jobs_s]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut names: Vec<String> =
        fs::read_dir(&jobs).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["merge.sbatch", "nodes-2.sbatch", "nodes-3.sbatch", "submit"]);
    assert!(
        out.stdout.contains("nodes-2.sbatch: 2 points on 2 nodes x 1 tasks, estimated 4m00s, limit 11m00s"),
        "{}",
        out.stdout
    );
    let three = fs::read_to_string(jobs.join("nodes-3.sbatch")).unwrap();
    let db = fs::canonicalize(&bed.db).unwrap();
    for line in [
        "#SBATCH -N 3".to_string(),
        "#SBATCH --exclusive".into(),
        "#SBATCH --ntasks-per-node=1".into(),
        "#SBATCH -t 00:11:00".into(),
        "#SBATCH -p storage".into(),
        "module load openmpi".into(),
        format!("store={}/store.job\"${{SLURM_JOB_ID}}\".db", db.parent().unwrap().display()),
        format!(
            "srun {} campaign run {} --only nodes=3 --db \"$store\"",
            env!("CARGO_BIN_EXE_iosurvey"),
            fs::canonicalize(&path).unwrap().display()
        ),
    ] {
        assert!(three.lines().any(|l| l == line), "no line {line:?} in:\n{three}");
    }
    assert!(!three.contains("#SBATCH -A"), "an empty account is left out:\n{three}");
    let merge = fs::read_to_string(jobs.join("merge.sbatch")).unwrap();
    assert!(merge.contains(&format!("--into {}", db.display())), "{merge}");
    let submit = fs::read_to_string(jobs.join("submit")).unwrap();
    assert!(submit.contains("--dependency=afterany:"), "{submit}");
    let syntax = Command::new("bash").arg("-n").arg(jobs.join("submit")).status().unwrap();
    assert!(syntax.success(), "submit is a shell script bash reads");

    // Again: the scripts are emit's own and are written anew; a file of the user's is not.
    assert_eq!(campaign(&bed, &["emit", &path, "--slurm", &jobs_s]).code, 0);
    fs::write(jobs.join("submit"), "my own\n").unwrap();
    let out = campaign(&bed, &["emit", &path, "--slurm", &jobs_s]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("a file campaign emit did not write has that name"), "{}", out.stderr);
    assert_eq!(fs::read_to_string(jobs.join("submit")).unwrap(), "my own\n");

    // LSF and PBS in their own words.
    let lsf = bed.tmp.path().join("lsf");
    assert_eq!(campaign(&bed, &["emit", &path, "--lsf", &lsf.display().to_string()]).code, 0);
    let two = fs::read_to_string(lsf.join("nodes-2.lsf")).unwrap();
    for line in ["#BSUB -n 2", "#BSUB -x", "#BSUB -W 0:11", "#BSUB -q storage"] {
        assert!(two.lines().any(|l| l == line), "no line {line:?} in:\n{two}");
    }
    let pbs = bed.tmp.path().join("pbs");
    assert_eq!(campaign(&bed, &["emit", &path, "--pbs", &pbs.display().to_string()]).code, 0);
    assert!(fs::read_to_string(pbs.join("nodes-3.pbs")).unwrap().contains("#PBS -l select=3:mpiprocs=1"));
}

#[test]
fn emit_checks_what_the_scripts_hold_so_a_link_to_a_newline_injects_nothing() {
    let bed = Bed::new();
    let study = "name = \"seq\"\nkind = \"run\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2\"\n";
    let path = file(&bed, &format!("{HEAD}{}[[study]]\n{study}{BATCH}point-time = \"1m\"\n", target("a", &bed.dir)));
    let tmp = bed.tmp.path();
    let pwned = tmp.join("PWNED");
    // Typed, the paths are plain; resolved, the link's target ends a comment and a directive.
    let evil = tmp.join(format!("x\ntouch {}\n#", pwned.display()));
    fs::create_dir_all(&evil).unwrap();
    std::os::unix::fs::symlink(&evil, tmp.join("lnk")).unwrap();
    for flag in ["--slurm", "--lsf", "--pbs"] {
        let jobs = tmp.join("lnk").join(format!("jobs{flag}"));
        let out = campaign(&bed, &["emit", &path, flag, &jobs.display().to_string()]);
        assert_one_line_error(&out, 2, &[flag, "holds '\\n', which a batch", "cannot carry"]);
        assert!(!jobs.exists(), "{flag}: a refused emit leaves no directory and no script");
    }
    let db = tmp.join("lnk/e.db").display().to_string();
    let jobs = tmp.join("jobs-db").display().to_string();
    let out = iosurvey(&["campaign", "emit", &path, "--slurm", &jobs, "--db", &db]);
    assert_one_line_error(&out, 2, &["--db", "holds '\\n', which a batch script cannot carry"]);
    assert!(!Path::new(&jobs).exists());
    assert_eq!(fs::read_dir(&evil).unwrap().count(), 0, "nothing written through the link");
    assert!(!pwned.exists());
}

#[test]
fn emit_refuses_what_a_batch_script_cannot_carry_and_never_writes_through_a_link() {
    let bed = Bed::new();
    let study = "name = \"seq\"\nkind = \"run\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2\"\n";
    let with = |batch: &str| file(&bed, &format!("{HEAD}{}[[study]]\n{study}{batch}", target("a", &bed.dir)));
    let path = with(&format!("{BATCH}point-time = \"1m\"\n"));
    let tmp = bed.tmp.path();
    // A line's end in a path would put a command of its own into the scripts.
    let odd = tmp.join("jobs\ntouch PWNED\n").display().to_string();
    assert_one_line_error(&campaign(&bed, &["emit", &path, "--slurm", &odd]), 2, &["cannot carry"]);
    let spaced = tmp.join("my jobs").display().to_string();
    assert_one_line_error(&campaign(&bed, &["emit", &path, "--slurm", &spaced]), 2, &["without blanks, %"]);
    let db = tmp.join("x\n.db").display().to_string();
    let out = iosurvey(&["campaign", "emit", &path, "--slurm", &tmp.join("j").display().to_string(), "--db", &db]);
    assert_one_line_error(&out, 2, &["--db"]);
    assert!(!tmp.join("j").exists(), "a refused emit leaves no directory");
    // "link/" names what the link points to; it is still a link.
    fs::create_dir(tmp.join("real")).unwrap();
    std::os::unix::fs::symlink(tmp.join("real"), tmp.join("dlink")).unwrap();
    let slashed = format!("{}/", tmp.join("dlink").display());
    assert_one_line_error(&campaign(&bed, &["emit", &path, "--slurm", &slashed]), 2, &["symbolic link"]);
    assert_eq!(fs::read_dir(tmp.join("real")).unwrap().count(), 0, "nothing written through the link");
    // A file of the user's, even one that is not text or that quotes the mark, is left alone.
    let mine = tmp.join("mine");
    fs::create_dir(&mine).unwrap();
    for text in [&b"\xff\xfe data"[..], b"notes: Written by iosurvey campaign emit\n"] {
        fs::write(mine.join("submit"), text).unwrap();
        let out = campaign(&bed, &["emit", &path, "--slurm", &mine.display().to_string()]);
        assert_one_line_error(&out, 2, &["a file campaign emit did not write"]);
        assert_eq!(fs::read(mine.join("submit")).unwrap(), text);
    }
    // Site values that a directive would misread, refused where the file says them.
    for (batch, needle) in [
        ("[batch]\npartition = \"st orage\"\naccount = \"\"\nlauncher = \"srun\"\nmodules = []\n", "partition 'st orage' holds ' '"),
        ("[batch]\npartition = \"p\"\naccount = \"\"\nlauncher = \"srun\"\nmodules = []\nsetup = [\"a\\nrm -rf /\"]\n", "setup holds a control character"),
        ("[batch]\npartition = \"p\"\naccount = \"\"\nlauncher = \"srun\"\nmodules = []\niosurvey = \"\"\n", "iosurvey is empty"),
        ("[batch]\npartition = \"p\"\naccount = \"\"\nlauncher = \"srun\"\nmodules = []\npoint-time = \"10\"\n", "point-time '10':"),
    ] {
        let out = campaign(&bed, &["emit", &with(batch), "--slurm", &tmp.join("k").display().to_string()]);
        assert_one_line_error(&out, 2, &[needle]);
    }
    // A campaign's name a scheduler would misread becomes a plain job name.
    let named = file(
        &bed,
        &format!(
            "[campaign]\nname = \"my eval/x %u\"\n{}[[study]]\n{study}{BATCH}point-time = \"1m\"\n",
            target("a", &bed.dir)
        ),
    );
    let out = campaign(&bed, &["emit", &named, "--slurm", &tmp.join("n").display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let one = fs::read_to_string(tmp.join("n/nodes-1.sbatch")).unwrap();
    assert!(one.lines().any(|l| l == "#SBATCH -J my_eval_x__u-n1"), "{one}");
}

/// The runs of campaign versions and each version's state.
fn versions(db: &str) -> Vec<(i64, String)> {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn.prepare("SELECT number, state FROM groups WHERE kind = 'campaign' ORDER BY number").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_target_unmounted_mid_campaign_fails_its_points_and_the_disk_beneath_is_never_measured() {
    let Some(tmpfs) = Tmpfs::mount("size=64m") else { return };
    let bed = &tmpfs.bed;
    let dir = bed.dir.join("iosurvey");
    fs::create_dir(&dir).unwrap();
    // The second point's before-run hook unmounts the target's file system.
    let text = format!(
        "[campaign]\nname = \"um\"\n{}[[study]]\nname = \"seq\"\nkind = \"run\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2,3\"\n\
         [hooks]\nbefore-run = 'if [ \"$IOSURVEY_CLIENTS\" = 2 ]; then umount {}; fi'\n",
        target("fast-tmpfs", &dir),
        bed.dir.display()
    );
    let path = file(bed, &text);
    let out = campaign(bed, &["run", &path]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("target fast-tmpfs: ")
            && out.stderr.contains("is gone since the campaign file was read (unmounted, or removed?)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("campaign c1: 1 points ok, 2 failed"), "each later point fails alike: {}", out.stderr);
    let runs = campaign_runs(&bed.db);
    assert_eq!(runs.len(), 1, "only the point measured on the tmpfs is stored: {runs:?}");
    assert_eq!(runs[0].3, "ok");
    assert!(!dir.exists(), "no point made the target's directory on the disk beneath");
    assert_eq!(versions(&bed.db), [(1, "failed".to_string())]);
}

#[test]
fn a_point_killed_before_its_after_hook_judged_it_is_not_counted_and_its_version_is_settled() {
    let bed = Bed::new();
    let (ready, pass) = (bed.tmp.path().join("ready"), bed.tmp.path().join("pass"));
    // The hook fails the point unless told to pass; it says its shell's pid, then waits.
    let text = format!(
        "[campaign]\nname = \"k9\"\n{}[[study]]\nname = \"seq\"\nkind = \"run\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2\"\n\
         [hooks]\nafter-run = 'if [ -e {pass} ]; then exit 0; fi; echo $$ > {ready}.tmp && mv {ready}.tmp {ready}; sleep 600; exit 1'\n",
        target("a", &bed.dir),
        pass = pass.display(),
        ready = ready.display()
    );
    let path = file(&bed, &text);
    let mut child = spawned(&bed)
        .args(["campaign", "run", &path, "--db", &bed.db])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the first point's after-run hook", 60, || ready.exists());
    let hook: i32 = fs::read_to_string(&ready).unwrap().trim().parse().unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
        libc::kill(-hook, libc::SIGKILL);
    }
    child.wait().unwrap();
    let runs = campaign_runs(&bed.db);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].3, "failed", "a point is not whole before its after hooks passed: {runs:?}");
    assert_eq!(versions(&bed.db), [(1, "running".to_string())], "killed, the command could not file its version");
    let out = campaign(&bed, &["status", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("0 of 2 points stored whole; 2 to run"), "{}", out.stdout);
    assert_eq!(versions(&bed.db), [(1, "failed".to_string())], "its process gone, the next command files it");
    // Resumed, the point is measured again and judged; both count once their hook passed.
    fs::write(&pass, "").unwrap();
    let out = campaign(&bed, &["run", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let runs = campaign_runs(&bed.db);
    assert_eq!(runs.iter().filter(|r| r.3 == "ok").count(), 2, "{runs:?}");
    assert_eq!(versions(&bed.db), [(1, "ok".to_string())]);
    let out = campaign(&bed, &["status", &path]);
    assert!(out.stdout.contains("2 of 2 points stored whole; 0 to run"), "{}", out.stdout);
}

#[test]
fn a_hook_that_removes_the_store_stops_the_campaign_saying_so() {
    let bed = Bed::new();
    let text = format!(
        "[campaign]\nname = \"gone\"\n{}[[study]]\nname = \"seq\"\nkind = \"run\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2\"\n\
         [hooks]\nafter-run = 'rm -f {db}'\n",
        target("a", &bed.dir),
        db = bed.db
    );
    let out = campaign(&bed, &["run", &file(&bed, &text)]);
    assert_one_line_error(
        &out_without_progress(&out),
        4,
        &[
            "campaign c1 is no longer in",
            "the store was removed while the campaign ran (by a hook?)",
            "keep hooks away from the store",
        ],
    );
    assert!(!Path::new(&bed.db).exists(), "no store is made anew");
}

#[test]
fn a_store_locked_to_the_end_of_a_campaign_leaves_no_version_running_for_good() {
    let bed = Bed::new();
    let (ready, locked) = (bed.tmp.path().join("ready"), bed.tmp.path().join("locked"));
    // The second point's before-run hook lets the test take the store, and waits until it has.
    let text = format!(
        "[campaign]\nname = \"lk\"\n{}[[study]]\nname = \"seq\"\nkind = \"run\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2\"\n\
         [hooks]\nbefore-run = 'if [ \"$IOSURVEY_CLIENTS\" = 2 ]; then touch {ready}; for i in $(seq 1200); do [ -e {locked} ] && break; sleep 0.05; done; fi'\n",
        target("a", &bed.dir),
        ready = ready.display(),
        locked = locked.display()
    );
    let path = file(&bed, &text);
    let child = spawned(&bed)
        .args(["campaign", "run", &path, "--db", &bed.db])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the second point's before-run hook", 60, || ready.exists());
    let mut conn = rusqlite::Connection::open(&bed.db).unwrap();
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive).unwrap();
    fs::write(&locked, "").unwrap();
    let out = outcome(child.wait_with_output().unwrap());
    tx.rollback().unwrap();
    let last = out.stderr.lines().last().unwrap_or_default();
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(last.starts_with("iosurvey: error: ") && last.contains("locked"), "{}", out.stderr);
    let out = campaign(&bed, &["status", &path]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(versions(&bed.db), [(1, "failed".to_string())], "its command gone, the version is filed");
    assert!(out.stdout.contains("1 of 2 points stored whole; 1 to run"), "{}", out.stdout);
    for f in fs::read_dir(bed.tmp.path()).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "json") {
            fs::remove_file(f).unwrap();
        }
    }
}

/// A store a campaign left at schema v16, made by main (ea9e279) from
/// tests/fixtures/store-v16-campaign.toml, run at full size and at --scale 1/4: its point
/// keys were text (`KEY tasks=N scale=1/M`, a matrix's flags as typed).
const V16_STORE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v16-campaign.db");
const V16_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v16-campaign.toml");

#[test]
fn a_store_of_schema_16_migrates_and_its_campaign_resumes_with_every_point_still_done() {
    let bed = Bed::new();
    fs::copy(V16_STORE, &bed.db).unwrap();
    // The target's directory was the fixture maker's; the points are known by its label.
    let text = fs::read_to_string(V16_FILE).unwrap().replace("/tmp/h37camp/fx/target", &bed.dir.display().to_string());
    // The matrix's largest file written otherwise: the same size, so the same point.
    let respelled = text.replace("max-file = \"1m\"", "max-file = \"1024k\"");
    assert_ne!(text, respelled);
    for text in [&text, &respelled] {
        let path = file(&bed, text);
        for scale in [&[][..], &["--scale", "1/4"][..]] {
            let out = campaign(&bed, &[&["plan", path.as_str()][..], scale].concat());
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert!(out.stdout.contains("total: 6 points, 0 to run, 6 stored already"), "{scale:?}: {}", out.stdout);
        }
    }
    let conn = || rusqlite::Connection::open(&bed.db).unwrap();
    let count = |sql: &str| -> i64 { conn().query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("PRAGMA user_version"), 17);
    // Nothing lost: every run, group and hook is there, its key the study's alone.
    assert_eq!(count("SELECT count(*) FROM runs"), 12);
    assert_eq!(count("SELECT count(*) FROM groups WHERE kind = 'matrix' AND key LIKE 'matrix %'"), 4);
    assert_eq!(count("SELECT count(*) FROM hooks"), 12);
    assert_eq!(count("SELECT count(*) FROM hooks WHERE tasks IS NOT NULL AND key LIKE '{%'"), 8);
    assert_eq!(count("SELECT count(*) FROM groups WHERE key LIKE '%scale=%' OR key LIKE '%--%'"), 0);
    assert_eq!(count("SELECT count(*) FROM hooks WHERE key LIKE '% tasks=%' OR key LIKE '%scale=%'"), 0);
    // Resumed: nothing runs again, and the status counts every point stored.
    let path = file(&bed, &respelled);
    let runs = campaign_runs(&bed.db).len();
    let out = campaign(&bed, &["run", &path, "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(campaign_runs(&bed.db).len(), runs, "a point stored before the migration ran again");
    let status = campaign(&bed, &["status", &path]);
    assert!(status.stdout.contains("6 of 6 points stored whole; 0 to run"), "{}", status.stdout);
}

#[test]
fn a_whole_study_whose_sizes_are_written_otherwise_is_the_same_point() {
    let bed = Bed::new();
    let study = |max: &str| {
        format!(
            "name = \"m\"\nkind = \"matrix\"\nstand-in = \"null\"\nmin-file = \"64k\"\nmax-file = \"{max}\"\nmin-record = \"64k\"\nmax-record = \"64k\"\nkinds = \"write,read\"\n"
        )
    };
    let out = campaign(&bed, &["run", &one_study(&bed, &study("1m")), "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plan = campaign(&bed, &["plan", &one_study(&bed, &study("1024k"))]);
    assert!(plan.stdout.contains("0 to run, 2 stored already"), "{}", plan.stdout);
    let plan = campaign(&bed, &["plan", &one_study(&bed, &study("2m"))]);
    assert!(plan.stdout.contains("2 to run, 0 stored already"), "{}", plan.stdout);
}

/// `iosurvey net --serve --once` on a port the system picks: the child and where it listens.
fn net_server() -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["net", "--serve", "--port", "0", "--once"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its first line says where it listens, once it does.
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap()).read_line(&mut first).unwrap();
    let to = first.split("listening on ").nth(1).expect("a listening line").split(';').next().unwrap().to_string();
    (child, to)
}

#[test]
fn a_campaigns_targets_train_and_net_studies_are_drawn_as_their_kinds_and_the_ceiling_only_beside_its_targets() {
    let bed = Bed::new();
    let (mut server, to) = net_server();
    let mut text = "[campaign]\nname = \"kinds\"\norder = \"sequential\"\n".to_string();
    for label in ["lun1", "lun2", "lun3"] {
        let dir = bed.tmp.path().join(label);
        fs::create_dir(&dir).unwrap();
        text += &target(label, &dir);
    }
    text += "[[study]]\nname = \"luns\"\nkind = \"targets\"\nop = \"write\"\ntransfer = \"64k\"\nsize = \"512k\"\nstreams = 1\nrepetitions = 2\n";
    text +=
        "[[study]]\nname = \"over-net\"\nkind = \"run\"\ntargets = [\"lun1\"]\ntransfer = \"64k\"\nblock = \"256k\"\n";
    text += "[[study]]\nname = \"local\"\nkind = \"run\"\ntargets = [\"lun3\"]\ntransfer = \"64k\"\nblock = \"256k\"\n";
    text += "[[study]]\nname = \"feed\"\nkind = \"train\"\ntargets = [\"lun2\"]\nworkload = \"unet3d\"\ngenerate = true\nfiles = 12\nsample-bytes = \"20000\"\nsample-stdev = \"3000\"\nbatch = 2\ncompute = 0.001\naccelerators = [1, 2]\n";
    text += &format!("[[study]]\nname = \"wire\"\nkind = \"net\"\ntargets = [\"lun1\"]\nto = \"{to}\"\nsize = \"4m\"\nstreams = 1\nrepetitions = 1\n");
    let path = file(&bed, &text);
    let out = campaign(&bed, &["run", &path, "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(server.wait().unwrap().code(), Some(0), "the server served the net point once");
    let page = bed.tmp.path().join("r.html");
    let out = iosurvey(&["report", "--campaign", "c1", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&page).unwrap();
    // The section of the k-th study, to the next heading of its rank.
    let section = |name: &str| {
        let k = ["luns", "over-net", "local", "feed", "wire"].iter().position(|n| *n == name).unwrap() + 1;
        let at =
            html.find(&format!("<h2 id=\"study-{k}\">{k}. {name}: ")).unwrap_or_else(|| panic!("no section {name}"));
        let rest = &html[at..];
        rest[..rest[4..].find("<h2 ").map_or(rest.len(), |n| n + 4)].to_string()
    };
    // The targets by their labels, as sorted bars, with the spread across them.
    let luns = section("luns");
    assert!(luns.contains("across 3 targets") && luns.contains("spread"), "{luns}");
    assert!(luns.contains("data-kind=\"bars\""), "{luns}");
    for label in ["lun1", "lun2", "lun3"] {
        assert!(luns.contains(&format!(">{label}<")), "{label} by its label: {luns}");
    }
    assert!(!luns.contains(&format!("alone {}", bed.tmp.path().display())), "no target named by its dir: {luns}");
    // Training against accelerators.
    let feed = section("feed");
    assert!(feed.contains("Training: accelerator utilization against accelerators"), "{feed}");
    // The network's ceiling beside the study of the target reached over it, and no other.
    assert!(section("wire").contains("network ceiling"), "{}", section("wire"));
    assert!(section("over-net").contains("The network that reaches lun1 tops out at"), "{}", section("over-net"));
    assert!(!section("local").contains("tops out at"), "{}", section("local"));
    assert!(luns.contains("The network that reaches lun1 tops out at"), "{luns}");
    assert!(!feed.contains("tops out at"), "{feed}");
}
