//! Studies built as values and played by the library, as a campaign or a front end plays
//! them: no binary spawned, no command line parsed but the study's own flags.

use clap::Parser;
use iosurvey::record::Status;
use iosurvey::spec::Op;
use iosurvey::store::Store;
use iosurvey::study::play::Unheard;
use iosurvey::study::{self, Kind, RunArgs, Study};
use iosurvey::team::local::LocalTeam;

/// A process files one run at a time (its last will and its janitor's duty are the
/// process's): the tests of this file take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A run study's settings, read as `run` reads its flags.
#[derive(Parser)]
struct Line {
    #[command(flatten)]
    run: RunArgs,
}

fn run_study(words: &[&str]) -> Study {
    let line = Line::try_parse_from(std::iter::once("run").chain(words.iter().copied())).expect("the study's flags");
    Study::Run(Box::new(line.run))
}

#[test]
fn a_run_study_played_in_process_is_stored_as_asked_and_leaves_no_file() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = tempfile::tempdir().unwrap();
    let (target, db) = (scratch.path().join("target"), scratch.path().join("study.db"));
    let target_arg = target.to_str().unwrap();
    let words = ["--dir", target_arg, "--op", "write,read", "--transfer", "4k", "--block", "64k", "--tasks", "2"];
    let study = run_study(&[&words[..], &["--label", "in-process", "--verify"]].concat());
    let ctx = study::Context::new(db.clone(), "an in-process study");
    let outcome = study::play(&ctx, &study, &LocalTeam, &mut Unheard).expect("the study plays");
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert_eq!(outcome.records.len(), 1, "one run, no sweep");
    assert!(outcome.group.is_none());
    let id = outcome.records[0].id.expect("the run is stored");
    let stored = Store::open_existing(&db).unwrap().load(id).unwrap();
    assert_eq!(stored.status, Status::Ok);
    assert_eq!(stored.label.as_deref(), Some("in-process"));
    assert_eq!(stored.command_line, "an in-process study");
    assert_eq!(stored.workload.tasks, 2);
    assert!(stored.workload.verify);
    assert_eq!(stored.workload.data().map(|d| (d.transfer, d.block)), Some((4096, 65536)));
    let ops: Vec<Op> = stored.phases.iter().map(|p| p.op).collect();
    assert_eq!(ops, [Op::Write, Op::Read]);
    // Its data files are removed, as the command's are: the directory holds none of them.
    let left: Vec<_> =
        std::fs::read_dir(&target).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.iter().all(|n| !n.to_string_lossy().starts_with("iosurvey.")), "left behind: {left:?}");
    assert!(ctx.leftovers.take().is_empty());
}

#[test]
fn a_study_the_team_cannot_play_is_refused_before_anything_is_stored() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = tempfile::tempdir().unwrap();
    let (target, db) = (scratch.path().join("target"), scratch.path().join("study.db"));
    let study = run_study(&["--dir", target.to_str().unwrap(), "--tasks", "2", "--clients", "1,8"]);
    let e = study::play(&study::Context::new(db.clone(), "refused"), &study, &LocalTeam, &mut Unheard).unwrap_err();
    assert_eq!((e.kind, e.exit_code()), (Kind::Refused, 2));
    let spelled = e.line(&study::hint::Flags(study.command())).unwrap();
    assert!(spelled.starts_with("--clients asks for 8 tasks but the team has 2 (hint: "), "{spelled}");
    assert!(!db.exists() && !target.exists(), "nothing is made for a refused study");
}
