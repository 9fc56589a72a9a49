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
    let (big, eval) = (store(&bed, "big.db"), store(&bed, "eval.db"));
    on(&bed, &big, "run", NULL_RUN);
    // Many runs (copies of one, each with a uid of its own), so that the copy and the merge
    // take long enough to be interrupted.
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
    let scratch = bed.tmp.path().join("tmp");
    fs::create_dir(&scratch).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["merge", &big, "--into", &eval])
        .env("TMPDIR", &scratch)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ready when its private copy exists: then it is merging.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while fs::read_dir(&scratch).unwrap().next().is_none() {
        assert!(std::time::Instant::now() < deadline, "the merge made no copy within 20 s");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("stopped by SIGINT: nothing was merged"), "{stderr}");
    assert!(fs::read_dir(&scratch).unwrap().next().is_none(), "no private copy left");
    assert!(!Path::new(&eval).exists() && !Path::new(&format!("{eval}-journal")).exists(), "no store left");
}
