//! A campaign's S3 target (`[[target]] s3 = "URL/BUCKET/PREFIX"`) beside a directory target of
//! the same system, against a real S3 server (versitygw, testbed/s3): a run study plays on the
//! bucket as `run --s3` does, its points are stored and resumed as any, nothing is left under
//! its prefix, and the keys from the environment appear in no output.

mod common;
#[path = "common/s3.rs"]
mod s3_server;

use common::*;
use s3_server::Server as S3Server;
use std::process::Command;

fn campaign(server: &S3Server, args: &[&str]) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iosurvey"));
    outcome(server.keyed(&mut cmd).args(args).output().expect("start iosurvey"))
}

#[test]
fn a_run_study_on_an_s3_target_plays_on_the_bucket_beside_a_directory_and_leaves_nothing() {
    let Some(server) = S3Server::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("posix");
    std::fs::create_dir(&dir).unwrap();
    let file = tmp.path().join("c.toml");
    let db = tmp.path().join("store.db").display().to_string();
    let text = format!(
        "[campaign]\nname = \"objects-and-files\"\n\
         [[target]]\nlabel = \"gw-posix\"\ndir = \"{}\"\n\
         [[target]]\nlabel = \"gw-s3\"\ns3 = \"{}\"\ndescription = \"the same server over S3\"\n\
         [[study]]\nname = \"seq\"\nkind = \"run\"\nop = \"write,read\"\ntransfer = \"256k\"\nblock = \"256k\"\nclients = \"1,2\"\n",
        dir.display(),
        server.url("camp")
    );
    std::fs::write(&file, text).unwrap();
    let f = file.display().to_string();
    let plan = campaign(&server, &["campaign", "plan", &f, "--db", &db]);
    assert_eq!(plan.code, 0, "{}{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains(&format!("--s3 {}", server.url("camp"))),
        "the point runs as run --s3: {}",
        plan.stdout
    );
    let ran = campaign(&server, &["campaign", "run", &f, "--db", &db]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stderr.contains("4 points ok, 0 failed"), "{}", ran.stderr);
    // The bucket's runs are filed under the target's label, by the s3 engine.
    let shown = iosurvey(&["ls", "--db", &db, "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let runs: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    let runs = runs.as_array().expect("a list of runs");
    let on = |label: &str| runs.iter().filter(|r| r["system"] == label).count();
    assert_eq!((on("gw-posix"), on("gw-s3")), (2, 2), "{runs:?}");
    // Resumed: nothing to run again.
    let again = campaign(&server, &["campaign", "run", &f, "--db", &db]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stderr.contains("nothing to run (4 points stored already"), "{}", again.stderr);
    // Nothing of the runs is left: not in the bucket's prefix, not in the directory.
    let left: Vec<_> = walk(&server.backing_file("camp"));
    assert!(left.is_empty(), "objects left under the prefix: {left:?}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let report = tmp.path().join("r.md");
    let out = iosurvey(&["report", "--db", &db, "--campaign", "c1", "-o", &report.display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(md.contains("gw-s3") && md.contains("gw-posix"), "both targets are in the report");
    for text in [&plan.stdout, &plan.stderr, &ran.stdout, &ran.stderr, &again.stderr, &shown.stdout, &md] {
        assert!(!text.contains(&server.secret), "the secret key appears in an output");
    }
}

/// Every file under `dir` (none when it is missing).
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().flat_map(|e| if e.path().is_dir() { walk(&e.path()) } else { vec![e.path()] }).collect()
}
