//! `iosurvey merge`: the stores of several jobs combined by their rows' uids, names taken
//! renumbered, merging again a no-op, a uid with other content refused whole, older stores
//! migrated in a copy, the destination guarded, a campaign split over jobs made whole again.

mod common;

use common::*;
use rusqlite::Connection;
use serde_json::Value;
use std::fs;
use std::path::Path;

/// A store in the bed's scratch directory.
fn store(bed: &Bed, name: &str) -> String {
    bed.tmp.path().join(name).display().to_string()
}

/// `iosurvey ARGS --db DB -q` on the bed's directory, which must succeed.
fn on(bed: &Bed, db: &str, command: &str, args: &str) {
    let dir = bed.dir.display().to_string();
    let mut all = vec![command, "--dir", &dir, "--db", db, "-q"];
    all.extend(args.split_whitespace());
    let out = iosurvey(&all);
    assert_eq!(out.code, 0, "{command} {args}: {}", out.stderr);
}

const NULL_RUN: &str = "--engine null --op write,read --transfer 64k --block 1m";

fn merge(args: &[&str]) -> Out {
    let mut all = vec!["merge"];
    all.extend(args);
    iosurvey(&all)
}

/// Every row of every table, as text, in a fixed order: what a store holds.
fn dump(db: &str) -> Vec<String> {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut rows = Vec::new();
    for t in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {t} ORDER BY rowid")).unwrap();
        let n = stmt.column_count();
        let mut q = stmt.query([]).unwrap();
        while let Some(r) = q.next().unwrap() {
            let values: Vec<String> =
                (0..n).map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap())).collect();
            rows.push(format!("{t}: {}", values.join(" | ")));
        }
    }
    rows
}

fn query<T: rusqlite::types::FromSql>(db: &str, sql: &str) -> T {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn show(db: &str, id: &str) -> Value {
    let out = iosurvey(&["show", id, "--json", "--db", db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// A record as `show --json` gives it, without what a merge may renumber.
fn without_numbers(mut v: Value) -> Value {
    for key in ["id", "survey_id", "sweep_id", "matrix_id", "campaign_id", "targets_id"] {
        v.as_object_mut().unwrap().remove(key);
    }
    v
}

#[test]
fn two_jobs_stores_merge_by_uid_with_names_renumbered_and_merging_again_changes_nothing() {
    let bed = Bed::new();
    let (a, b, eval) = (store(&bed, "a.db"), store(&bed, "b.db"), store(&bed, "eval.db"));
    on(&bed, &a, "run", NULL_RUN);
    on(&bed, &a, "run", &format!("{NULL_RUN} --tasks 2 --clients 1,2"));
    on(&bed, &b, "run", &format!("{NULL_RUN} --tasks 2 --clients 1,2"));
    on(&bed, &b, "meta", "--items 10");
    let (a_bytes, b_bytes) = (fs::read(&a).unwrap(), fs::read(&b).unwrap());
    let out = merge(&[&a, &b, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "merged {a}: 3 runs, 1 group, 0 already there\nmerged {b}: 3 runs, 1 group (w1 -> w2), 0 already there\n"
        )
    );
    // b's runs 1-3 are 4-6 now, its sweep w2, and each record says so; the rest is as it was.
    let runs = iosurvey(&["ls", "--json", "--db", &eval]);
    let runs: Vec<Value> = serde_json::from_str(&runs.stdout).unwrap();
    let placed: Vec<(i64, Option<i64>)> =
        runs.iter().map(|r| (r["id"].as_i64().unwrap(), r["sweep_id"].as_i64())).collect();
    assert_eq!(placed, [(1, None), (2, Some(1)), (3, Some(1)), (4, Some(2)), (5, Some(2)), (6, None)]);
    for (from, id, to, sweep) in [(&a, 2, 2, Value::from(1)), (&b, 1, 4, Value::from(2)), (&b, 3, 6, Value::Null)] {
        let (before, after) = (show(from, &id.to_string()), show(&eval, &to.to_string()));
        assert_eq!(without_numbers(before), without_numbers(after.clone()), "{from} run {id}");
        assert_eq!(after["sweep_id"], sweep, "{from} run {id}");
    }
    let nodes = |db: &str| query::<i64>(db, "SELECT count(*) FROM nodes");
    assert_eq!(nodes(&eval), nodes(&a) + nodes(&b), "each run's nodes with it");
    // Again: nothing more, and the inputs were never written.
    let held = dump(&eval);
    let again = merge(&[&a, &b, "--into", &eval]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        again.stdout,
        format!(
            "merged {a}: 0 runs, 0 groups, 4 already there\nmerged {b}: 0 runs, 0 groups (w1 -> w2), 4 already there\n"
        )
    );
    assert_eq!(dump(&eval), held);
    assert!(fs::read(&a).unwrap() == a_bytes && fs::read(&b).unwrap() == b_bytes, "an input was written");
}

#[test]
fn a_uid_there_with_other_content_refuses_the_whole_merge_in_one_line() {
    let bed = Bed::new();
    let (a, c, eval) = (store(&bed, "a.db"), store(&bed, "c.db"), store(&bed, "eval.db"));
    on(&bed, &a, "run", &format!("{NULL_RUN} --tasks 2 --clients 1,2"));
    on(&bed, &c, "run", NULL_RUN);
    assert_eq!(merge(&[&a, "--into", &eval]).code, 0);
    let held = dump(&eval);
    let forge = |sql: &str| Connection::open(&a).unwrap().execute_batch(sql).unwrap();
    let uid = |sql: &str| query::<String>(&a, sql);
    // A run's status changed after it was merged (say, failed by a hook later): refused, and
    // c, merged first in the same command, is not stored either.
    forge("UPDATE runs SET status = 'failed' WHERE id = 1");
    let run = uid("SELECT uid FROM runs WHERE id = 1");
    assert_one_line_error(
        &merge(&[&c, &a, "--into", &eval]),
        2,
        &[
            &format!("cannot merge {a}: its run 1 (uid {run}) is in {eval} already"),
            "its status differs",
            "nothing was merged",
        ],
    );
    assert_eq!(dump(&eval), held, "all inputs or none");
    forge("UPDATE runs SET status = 'ok' WHERE id = 1");
    forge("UPDATE groups SET command_line = 'iosurvey run --other' WHERE letter = 'w'");
    let group = uid("SELECT uid FROM groups WHERE letter = 'w'");
    assert_one_line_error(
        &merge(&[&a, "--into", &eval]),
        2,
        &[&format!("its group w1 (uid {group})"), "its command line differs"],
    );
    assert_eq!(dump(&eval), held);
    // Set back, it is the same store again: nothing to add, no refusal.
    forge("UPDATE groups SET command_line = (SELECT command_line FROM runs WHERE id = 1) WHERE letter = 'w'");
    let out = merge(&[&a, &c, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains(&format!("merged {c}: 1 run, 0 groups, 0 already there")), "{}", out.stdout);
}

#[test]
fn older_stores_are_migrated_in_a_copy_keep_their_failed_runs_and_merge_once() {
    let bed = Bed::new();
    let eval = store(&bed, "eval.db");
    let mut inputs = Vec::new();
    for v in [4, 9] {
        let path = store(&bed, &format!("v{v}.db"));
        fs::copy(format!("{}/tests/fixtures/store-v{v}.db", env!("CARGO_MANIFEST_DIR")), &path).unwrap();
        inputs.push((path, fs::read(format!("{}/tests/fixtures/store-v{v}.db", env!("CARGO_MANIFEST_DIR"))).unwrap()));
    }
    let (v4, v9) = (&inputs[0].0, &inputs[1].0);
    let out = merge(&[v4, v9, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "merged {v4}: 8 runs, 2 groups, 0 already there\nmerged {v9}: 33 runs, 4 groups (s1 -> s3, w1 -> w2), 0 already there\n"
        )
    );
    for (path, bytes) in &inputs {
        assert!(&fs::read(path).unwrap() == bytes, "{path} was written");
    }
    assert_eq!(show(&eval, "8")["status"], "failed", "v4's failed verified read stays failed");
    // Each older store's copy is migrated afresh at each merge and names its rows alike.
    let held = dump(&eval);
    let again = merge(&[v4, v9, "--into", &eval]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout.matches(": 0 runs, 0 groups").count(), 2, "{}", again.stdout);
    assert_eq!(dump(&eval), held);
    // v9's survey s1 is s3 here, and its runs say so.
    let ls: Vec<Value> = serde_json::from_str(&iosurvey(&["ls", "--json", "--db", &eval]).stdout).unwrap();
    let of = |s: i64| ls.iter().filter(|r| r["survey_id"] == s).count() as i64;
    let survey = |db: &str| query::<i64>(db, "SELECT count(*) FROM runs WHERE survey_id = 1");
    assert_eq!((of(1), of(3)), (survey(v4), survey(v9)), "v4's survey and v9's, apart");
}

#[test]
fn a_matrix_merged_under_another_name_names_its_cells_runs_as_the_destination_does() {
    let bed = Bed::new();
    let (a, b, eval) = (store(&bed, "a.db"), store(&bed, "b.db"), store(&bed, "eval.db"));
    let small = "--full --kinds write,read --min-file 256k --max-file 256k --min-record 64k --max-record 128k";
    on(&bed, &a, "matrix", small);
    on(&bed, &b, "matrix", small);
    let out = merge(&[&a, &b, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("(m1 -> m2)"), "{}", out.stdout);
    let (was, now) = (show(&b, "m1"), show(&eval, "m2"));
    let cells = |m: &Value| -> Vec<i64> {
        m["cells"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["runs"].as_array().unwrap().clone())
            .map(|r| r.as_i64().unwrap())
            .collect()
    };
    assert_eq!(cells(&was).len(), cells(&now).len());
    assert_ne!(cells(&was), cells(&now), "b's runs were renumbered");
    for id in cells(&now) {
        assert_eq!(show(&eval, &id.to_string())["matrix_id"], 2, "run {id} is a cell of m2");
    }
    let held = dump(&eval);
    assert_eq!(merge(&[&a, &b, "--into", &eval]).code, 0);
    assert_eq!(dump(&eval), held);
}

#[test]
fn the_destination_is_never_an_input_a_link_or_another_file_and_is_made_when_missing() {
    let bed = Bed::new();
    let (a, b) = (store(&bed, "a.db"), store(&bed, "b.db"));
    on(&bed, &a, "run", NULL_RUN);
    on(&bed, &b, "run", NULL_RUN);
    let held = dump(&a);
    let path = |name: &str| store(&bed, name);
    assert_one_line_error(&merge(&[&a, &b, "--into", &a]), 2, &[&format!("cannot merge {a}: it is the destination")]);
    // The same file by another name: a hard link, and a path through another directory.
    fs::hard_link(&a, path("hard.db")).unwrap();
    assert_one_line_error(&merge(&[&path("hard.db"), "--into", &a]), 2, &["it is the destination"]);
    let dotted =
        format!("{}/../{}/a.db", bed.tmp.path().display(), bed.tmp.path().file_name().unwrap().to_str().unwrap());
    assert_one_line_error(&merge(&[&b, &dotted, "--into", &a]), 2, &["it is the destination"]);
    // A link as the destination or an input is never followed.
    std::os::unix::fs::symlink(&a, path("link.db")).unwrap();
    assert_one_line_error(&merge(&[&b, "--into", &path("link.db")]), 2, &["cannot merge into", "symbolic link"]);
    assert_one_line_error(&merge(&[&path("link.db"), "--into", &path("new.db")]), 2, &["symbolic link"]);
    assert_eq!(dump(&a), held, "nothing reached a through a name");
    // Not a store, as an input or as the destination; nothing is made for a refused merge.
    fs::write(path("notes.txt"), "not a store\n").unwrap();
    let other = path("other.sqlite");
    Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);").unwrap();
    for (input, why) in [(path("notes.txt"), "not an SQLite database"), (other.clone(), "another program")] {
        assert_one_line_error(
            &merge(&[&a, &input, "--into", &path("new.db")]),
            2,
            &[&format!("{input} is not an iosurvey store"), why, "hint: name a store iosurvey made"],
        );
        assert!(!Path::new(&path("new.db")).exists(), "a refused merge made its destination");
    }
    let other_held = dump(&other);
    assert_one_line_error(&merge(&[&a, "--into", &other]), 2, &["another program"]);
    assert_eq!(dump(&other), other_held, "another program's database untouched");
    assert_one_line_error(&merge(&[&a, "--into", &path("notes.txt")]), 2, &["not an SQLite database"]);
    assert_eq!(fs::read_to_string(path("notes.txt")).unwrap(), "not a store\n");
    assert_one_line_error(&merge(&[&path("missing.db"), "--into", &path("new.db")]), 2, &["it does not exist"]);
    assert!(!Path::new(&path("new.db")).exists());
    // Missing: made, as a store is by its first run.
    let out = merge(&[&a, &b, "--into", &path("new.db")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(iosurvey(&["ls", "--json", "--db", &path("new.db")]).stdout.matches("\"id\":").count(), 2);
}

#[test]
fn a_group_still_running_is_merged_as_it_is_and_takes_its_end_from_a_later_merge() {
    let bed = Bed::new();
    let (a, eval) = (store(&bed, "a.db"), store(&bed, "eval.db"));
    on(&bed, &a, "run", &format!("{NULL_RUN} --tasks 2 --clients 1,2"));
    let set = |state: &str| {
        Connection::open(&a).unwrap().execute("UPDATE groups SET state = ?1", [state]).unwrap();
    };
    // As a store read while its sweep was still going.
    set("running");
    let out = merge(&[&a, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("; still running in that store, merged as they are: w1"), "{}", out.stdout);
    let state = || query::<String>(&eval, "SELECT state FROM groups");
    assert_eq!(state(), "running");
    set("ok");
    let out = merge(&[&a, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(state(), "ok", "the end the input knows now");
    // An end that contradicts the one merged is another content.
    set("failed");
    assert_one_line_error(&merge(&[&a, "--into", &eval]), 2, &["its group w1", "its state differs"]);
    assert_eq!(state(), "ok");
}

#[test]
fn a_file_imported_into_two_stores_is_kept_once() {
    let bed = Bed::new();
    let (a, b, eval) = (store(&bed, "a.db"), store(&bed, "b.db"), store(&bed, "eval.db"));
    let tool = |name: &str| format!("{}/tests/fixtures/tools/{name}", env!("CARGO_MANIFEST_DIR"));
    let import = |db: &str, files: &[&str]| {
        let mut all = vec!["import", "--db", db];
        let paths: Vec<String> = files.iter().map(|f| tool(f)).collect();
        all.extend(paths.iter().map(String::as_str));
        assert_eq!(iosurvey(&all).code, 0);
    };
    import(&a, &["iperf3.json", "iozone-auto.txt"]);
    on(&bed, &b, "run", NULL_RUN);
    import(&b, &["iozone-auto.txt", "ior-fpp-2tasks.txt"]);
    let out = merge(&[&a, &b, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!("merged {a}: 0 runs, 1 group, 1 network figure, 2 imports, 0 already there")),
        "{}",
        out.stdout
    );
    // b's matrix from the same IOzone file is left out (the file, its group, its cell runs).
    assert!(out.stdout.contains(&format!("merged {b}: 2 runs, 0 groups, 1 import, ")), "{}", out.stdout);
    let count = |sql: &str| query::<i64>(&eval, sql);
    assert_eq!(count("SELECT count(*) FROM groups WHERE letter = 'm'"), 1);
    assert_eq!(count("SELECT count(*) FROM imports"), 3);
    assert_eq!(count("SELECT count(*) FROM net_runs"), 1);
    // What each import says it made names the destination's rows.
    let ior: String = query(&eval, "SELECT stored FROM imports WHERE file LIKE '%ior-fpp-2tasks.txt'");
    let made: Value = serde_json::from_str(&ior).unwrap();
    for id in made["runs"].as_array().unwrap() {
        assert_eq!(show(&eval, &id.to_string())["provenance"].as_str().unwrap().split(':').next(), Some("imported"));
    }
    let held = dump(&eval);
    assert_eq!(merge(&[&b, &a, "--into", &eval]).code, 0);
    assert_eq!(dump(&eval), held);
}

/// A campaign file in the bed's scratch directory, mode 0644 (as root, a file others may
/// change is refused): two studies on the bed's directory, with a hook after each run.
fn campaign_file(bed: &Bed) -> String {
    campaign_file_after(bed, "true")
}

/// The campaign of [`campaign_file`] with `hook` after each run.
fn campaign_file_after(bed: &Bed, hook: &str) -> String {
    let text = format!(
        "[campaign]\nname = \"t\"\nrepetitions = 2\n\
         [[target]]\nlabel = \"a\"\ndir = \"{}\"\ndescription = \"a under test\"\n\
         [[study]]\nname = \"seq\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nblock = \"1m\"\nclients = \"1,2\"\n\
         [[study]]\nname = \"md\"\nkind = \"meta\"\nitems = 10\n\
         [hooks]\nafter-run = \"{hook}\"\n",
        bed.dir.display()
    );
    let path = bed.tmp.path().join("c.toml");
    fs::write(&path, text).unwrap();
    fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    path.display().to_string()
}

#[test]
fn a_campaign_split_over_two_jobs_merges_into_one_version_that_status_counts_and_a_resume_leaves_alone() {
    let bed = Bed::new();
    let (j1, j2, eval) = (store(&bed, "job1.db"), store(&bed, "job2.db"), store(&bed, "eval.db"));
    let file = campaign_file(&bed);
    let campaign = |args: &[&str]| {
        let mut all = vec!["campaign"];
        all.extend(args);
        iosurvey(&all)
    };
    for (db, only) in [(&j1, "study=seq"), (&j2, "study=md")] {
        let out = campaign(&["run", &file, "--only", only, "--db", db]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let version = |db: &str| query::<String>(db, "SELECT uid || ' ' || started FROM groups WHERE kind = 'campaign'");
    let (one, two) = (version(&j1), version(&j2));
    assert_eq!(one.split(' ').next(), two.split(' ').next(), "each job's store names the version alike");
    let out = merge(&[&j1, &j2, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "merged {j1}: 4 runs, 1 group, 4 hooks, 0 already there\nmerged {j2}: 2 runs, 0 groups, 2 hooks, 1 already there\n"
        )
    );
    // One version, begun when the first job began it, ok as both were.
    let row = query::<String>(
        &eval,
        "SELECT letter || number || ' ' || state || ' ' || started FROM groups WHERE kind = 'campaign'",
    );
    let first = one.split(' ').nth(1).unwrap().min(two.split(' ').nth(1).unwrap());
    assert_eq!(row, format!("c1 ok {first}"));
    let status = campaign(&["status", &file, "--db", &eval]);
    assert!(status.stdout.contains("6 of 6 points stored whole; 0 to run"), "{}", status.stdout);
    let held = dump(&eval);
    let resume = campaign(&["run", &file, "--db", &eval]);
    assert_eq!(resume.code, 0, "{}", resume.stderr);
    assert!(resume.stderr.contains("nothing to run (6 points stored already, 0 refused)"), "{}", resume.stderr);
    assert_eq!(dump(&eval), held, "the resume ran nothing and stored nothing");
    // A store whose version holds another file under that name and version is refused, and a
    // destination the refused command made is not left behind.
    Connection::open(&j2)
        .unwrap()
        .execute_batch("UPDATE groups SET spec_json = json_set(spec_json, '$.text', 'x') WHERE kind = 'campaign'")
        .unwrap();
    let fresh = store(&bed, "fresh.db");
    assert_one_line_error(&merge(&[&j1, &j2, "--into", &fresh]), 2, &["its group c1", "its campaign file differs"]);
    assert!(!Path::new(&fresh).exists());
}

#[test]
fn a_campaign_version_is_failed_while_a_point_has_no_ok_attempt_whatever_the_merge_order() {
    let bed = Bed::new();
    let flag = bed.tmp.path().join("fail");
    let file = campaign_file_after(&bed, &format!("test ! -e {}", flag.display()));
    let (j1, j2) = (store(&bed, "job1.db"), store(&bed, "job2.db"));
    let run = |db: &str| iosurvey(&["campaign", "run", &file, "--only", "study=seq", "--db", db]);
    // Job 1's points fail (a failing after-run hook stores its run as failed); job 2 starts
    // from job 1's store, as an emitted job merges the campaign's store in first, and runs
    // them again, this time ok.
    fs::write(&flag, "").unwrap();
    run(&j1);
    fs::remove_file(&flag).unwrap();
    assert_eq!(merge(&[&j1, "--into", &j2]).code, 0);
    assert_eq!(run(&j2).code, 0);
    let state = |db: &str| query::<String>(db, "SELECT state FROM groups WHERE kind = 'campaign'");
    assert_eq!((state(&j1), state(&j2)), ("failed".to_string(), "ok".to_string()));
    // A job killed at its time limit never ends its version: it stays running in its store.
    let killed = store(&bed, "killed.db");
    fs::copy(&j1, &killed).unwrap();
    Connection::open(&killed).unwrap().execute_batch("UPDATE groups SET state = 'running'").unwrap();
    for (k, order) in [[&j1, &j2], [&j2, &j1], [&killed, &j2], [&j2, &killed]].iter().enumerate() {
        let eval = store(&bed, &format!("eval{k}.db"));
        for db in order {
            assert_eq!(merge(&[db, "--into", &eval]).code, 0);
        }
        assert_eq!(state(&eval), "ok", "every point has an ok attempt: {order:?}");
    }
    let alone = store(&bed, "alone.db");
    assert_eq!(merge(&[&j1, "--into", &alone]).code, 0);
    assert_eq!(state(&alone), "failed", "job 1 alone: its points have only failed attempts");
    let both_killed = store(&bed, "both.db");
    assert_eq!(merge(&[&killed, "--into", &both_killed]).code, 0);
    assert_eq!(merge(&[&killed, "--into", &both_killed]).code, 0);
    assert_eq!(state(&both_killed), "running", "still running while every part is");
}

#[test]
fn a_store_a_killed_writer_left_mid_write_is_refused_with_how_to_roll_it_back() {
    let bed = Bed::new();
    let (a, eval) = (store(&bed, "a.db"), store(&bed, "eval.db"));
    on(&bed, &a, "run", "--engine null --transfer 64k --block 1m");
    let journal = format!("{a}-journal");
    fs::write(&journal, b"a journal a killed writer left").unwrap();
    assert_one_line_error(
        &merge(&[&a, "--into", &eval]),
        2,
        &["a.db holds a write its command did not finish", "iosurvey ls --db"],
    );
    assert!(!Path::new(&eval).exists(), "nothing made");
    fs::remove_file(&journal).unwrap();
    assert_eq!(merge(&[&a, "--into", &eval]).code, 0);
}

#[test]
fn a_signal_mid_merge_says_one_line_and_leaves_no_copy_and_no_store_it_made() {
    let bed = Bed::new();
    let (big, eval) = (big_store(&bed), store(&bed, "eval.db"));
    let scratch = bed.tmp.path().join("tmp");
    fs::create_dir(&scratch).unwrap();
    let child = spawn_merge(&big, &eval, &scratch);
    std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("stopped by SIGINT: nothing was merged"), "{stderr}");
    assert!(fs::read_dir(&scratch).unwrap().next().is_none(), "no private copy left");
    assert!(!Path::new(&eval).exists() && !Path::new(&format!("{eval}-journal")).exists(), "no store left");
}

/// A store of 20,001 runs (copies of one, each with a uid of its own), so that copying and
/// merging it take long enough to be interrupted.
fn big_store(bed: &Bed) -> String {
    let big = store(bed, "big.db");
    on(bed, &big, "run", NULL_RUN);
    Connection::open(&big)
        .unwrap()
        .execute_batch(
            "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 20000)
             INSERT INTO runs (group_id, name, started, status, error, command_line, label, spec_json, warnings_json,
                 host, target, fs_type, tool_version, record_json, provenance, workload_key, headline_json, random,
                 system_label, uid)
             SELECT group_id, name, started + k, status, error, command_line, label, spec_json, warnings_json, host,
                 target, fs_type, tool_version, record_json, provenance, workload_key, headline_json, random,
                 system_label, lower(hex(randomblob(16)))
             FROM runs, n WHERE runs.id = 1",
        )
        .unwrap();
    big
}

/// `merge BIG --into EVAL` with TMPDIR=SCRATCH, returned once its private copy exists.
fn spawn_merge(big: &str, eval: &str, scratch: &Path) -> std::process::Child {
    let before = fs::read_dir(scratch).unwrap().count();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["merge", big, "--into", eval])
        .env("TMPDIR", scratch)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ready when its private copy exists: then it is merging.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while fs::read_dir(scratch).unwrap().count() == before {
        assert!(std::time::Instant::now() < deadline, "the merge made no copy within 20 s");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child
}

#[test]
fn a_killed_merges_copy_is_reclaimed_by_the_next_merge_and_its_destination_merged_into() {
    let bed = Bed::new();
    let (big, eval) = (big_store(&bed), store(&bed, "eval.db"));
    let scratch = bed.tmp.path().join("tmp");
    fs::create_dir(&scratch).unwrap();
    // Kept whatever the next merge does: another user's leftover, and a link to a directory.
    let gone = fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse::<u32>().unwrap();
    let foreign = scratch.join(format!("iosurvey-merge-{gone}-0"));
    fs::create_dir(&foreign).unwrap();
    std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    let elsewhere = bed.tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("kept"), b"").unwrap();
    std::os::unix::fs::symlink(&elsewhere, scratch.join(format!("iosurvey-merge-{gone}-1"))).unwrap();
    let mut child = spawn_merge(&big, &eval, &scratch);
    child.kill().unwrap();
    child.wait().unwrap();
    let left = listing(&scratch);
    assert_eq!(left.len(), 3, "SIGKILL leaves the copy: {left:?}");
    // The destination the killed merge made is a store with nothing merged (its transaction
    // never committed): the next merge into it merges as into a new one.
    let out = common::outcome(
        std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
            .args(["merge", &big, "--into", &eval])
            .env("TMPDIR", &scratch)
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("20001 runs"), "{}", out.stdout);
    let kept = [format!("iosurvey-merge-{gone}-0"), format!("iosurvey-merge-{gone}-1")];
    assert_eq!(listing(&scratch), kept, "the killed merge's copy reclaimed, the rest kept");
    assert!(elsewhere.join("kept").exists());
}

#[test]
fn a_calibration_takes_a_fresh_name_that_no_one_can_take_first_and_reclaims_a_killed_ones() {
    let bed = Bed::new();
    let scratch = bed.tmp.path().join("tmp");
    fs::create_dir(&scratch).unwrap();
    let gone = fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse::<u32>().unwrap();
    // A killed calibration's leftover, as it was named before.
    let killed = scratch.join(format!("iosurvey-calibrate-{gone}"));
    fs::create_dir(&killed).unwrap();
    fs::write(killed.join("calibration.db"), b"").unwrap();
    let path = campaign_file(&bed);
    // The name the command's own pid would give, made first: it blocked --calibrate.
    let script = format!(
        "mkdir \"$TMPDIR/iosurvey-calibrate-$$\" && exec {} campaign plan {path} --calibrate --db {}",
        env!("CARGO_BIN_EXE_iosurvey"),
        store(&bed, "plan.db")
    );
    let out = common::outcome(
        std::process::Command::new("sh").args(["-c", &script]).env("TMPDIR", &scratch).output().unwrap(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let left = listing(&scratch);
    assert!(!left.iter().any(|e| e.starts_with(&format!("iosurvey-calibrate-{gone}"))), "{left:?}");
    assert_eq!(left.len(), 1, "only the name made first is left: {left:?}");
}

#[test]
fn a_wrongly_typed_or_undecodable_row_refuses_the_merge_and_the_destination_stays_as_it_was() {
    let bed = Bed::new();
    let (some, good) = (store(&bed, "some.db"), store(&bed, "good.db"));
    on(&bed, &some, "run", NULL_RUN);
    on(&bed, &good, "run", NULL_RUN);
    let held = dump(&good);
    // The probe's row, in a store made before tables were STRICT (an older store, migrated).
    let old = store(&bed, "old.db");
    fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v9.db"), &old).unwrap();
    assert_eq!(iosurvey(&["ls", "--db", &old]).code, 0, "migrated");
    let cases = [
        (
            "UPDATE runs SET started = 'x', uid = 'deadbeef' WHERE id = 1",
            "its run 1 (uid deadbeef) holds text in its started column, which holds whole numbers",
        ),
        // (A number written to a TEXT column is stored as its text: only a blob is another type.)
        (
            "UPDATE runs SET label = x'07', uid = 'deadbeef' WHERE id = 1",
            "its run 1 (uid deadbeef) holds blob in its label column",
        ),
        (
            "UPDATE runs SET record_json = '{', uid = 'deadbeef' WHERE id = 1",
            "holds text that is not JSON in its record_json column",
        ),
        (
            "UPDATE runs SET record_json = '{}', uid = 'deadbeef' WHERE id = 1",
            "its run 1 (uid deadbeef) has a record that does not read back",
        ),
        (
            "UPDATE runs SET headline_json = '{}', uid = 'deadbeef' WHERE id = 1",
            "has best figures (headline_json) that do not read back",
        ),
        ("UPDATE nodes SET host = x'05' WHERE run_id = 4", "a node of its run 4 (uid "),
    ];
    for (k, (sql, said)) in cases.iter().enumerate() {
        let bad = store(&bed, &format!("bad{k}.db"));
        fs::copy(&old, &bad).unwrap();
        Connection::open(&bad).unwrap().execute_batch(sql).unwrap();
        let out = merge(&[&some, &bad, "--into", &good]);
        assert_one_line_error(&out, 2, &[&format!("cannot merge {bad}: "), said, "nothing was merged"]);
        assert_eq!(dump(&good), held, "{sql}: the destination untouched");
        let fresh = store(&bed, &format!("fresh{k}.db"));
        assert_eq!(merge(&[&bad, "--into", &fresh]).code, 2);
        assert!(!Path::new(&fresh).exists(), "no store left that the refused merge made");
    }
}

#[test]
fn a_new_store_is_strict_and_an_older_one_opens_as_it_was() {
    let bed = Bed::new();
    let new = store(&bed, "new.db");
    on(&bed, &new, "run", NULL_RUN);
    let strict = |db: &str| {
        query::<i64>(
            db,
            "SELECT count(*) FROM pragma_table_list WHERE schema = 'main' AND strict = 1 AND name NOT LIKE 'sqlite_%'",
        )
    };
    let tables = query::<i64>(&new, "SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    assert_eq!(strict(&new), tables, "every table of a new store is STRICT");
    let wrong = Connection::open(&new).unwrap().execute("UPDATE runs SET started = 'x'", []);
    assert!(wrong.is_err(), "a value of another type is refused as it is written");
    // The same schema version and columns as a store migrated from an older one.
    let old = store(&bed, "old.db");
    fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v9.db"), &old).unwrap();
    assert_eq!(iosurvey(&["ls", "--db", &old]).code, 0);
    assert_eq!(strict(&old), 0, "an older store's tables are kept as they were");
    assert_eq!(query::<i64>(&new, "PRAGMA user_version"), query::<i64>(&old, "PRAGMA user_version"));
    let columns = |db: &str| {
        query::<String>(
            db,
            "SELECT group_concat(m.name || '.' || p.name || ' ' || p.type || ' ' || p.\"notnull\", ',') FROM sqlite_master m,
             pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid",
        )
    };
    assert_eq!(columns(&new), columns(&old));
    // And it is merged into a new (STRICT) store.
    let eval = store(&bed, "eval.db");
    let out = merge(&[&old, &new, "--into", &eval]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn one_unreadable_row_is_named_once_and_ls_report_and_export_go_on_with_the_others() {
    let bed = Bed::new();
    let old = store(&bed, "old.db");
    fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v9.db"), &old).unwrap();
    let all: Vec<Value> = serde_json::from_str(&iosurvey(&["ls", "--json", "--db", &old]).stdout).unwrap();
    // What the probe's merge left (an older store takes any type), and a record that does
    // not read back (which a STRICT store takes too).
    let conn = Connection::open(&old).unwrap();
    conn.execute_batch("UPDATE runs SET started = 'x' WHERE id = 2; UPDATE runs SET record_json = '{}' WHERE id = 3")
        .unwrap();
    drop(conn);
    let report = bed.tmp.path().join("r.html").display().to_string();
    for (args, left) in [
        (vec!["ls", "--json"], vec!["run 2"]),
        (vec!["ls"], vec!["run 2"]),
        (vec!["report", "-o", &report], vec!["run 2", "run 3"]),
        (vec!["export", "--format", "csv"], vec!["run 2", "run 3"]),
    ] {
        let mut all_args = args.clone();
        all_args.extend(["--db", &old]);
        let out = iosurvey(&all_args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), left.len(), "{args:?}: one warning line each: {}", out.stderr);
        for (line, run) in lines.iter().zip(&left) {
            assert!(line.starts_with(&format!("iosurvey: warning: {run} in the store cannot be read")), "{line}");
        }
    }
    let listed: Vec<Value> = serde_json::from_str(&iosurvey(&["ls", "--json", "--db", &old]).stdout).unwrap();
    assert_eq!(listed.len(), all.len() - 1, "every other run listed");
    let csv = iosurvey(&["export", "--format", "csv", "--db", &old]).stdout;
    assert!(csv.lines().count() > 1, "{csv}");
}
