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

/// An observer that keeps the progress lines it hears.
#[derive(Default)]
struct Heard {
    progress: Vec<String>,
}

impl study::Observer for Heard {
    fn progress(&mut self, line: &str) {
        self.progress.push(line.to_string());
    }
}

/// A study from its command's words, as a front end reads them.
fn from_words(line: &str) -> Study {
    let words: Vec<String> = line.split_whitespace().map(String::from).collect();
    study::line::parse(&words).expect("the study's words").0
}

#[test]
fn a_matrix_a_target_survey_and_a_network_study_play_in_process_as_values() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = tempfile::tempdir().unwrap();
    let db = scratch.path().join("study.db");
    let dir = |name: &str| {
        let d = scratch.path().join(name);
        std::fs::create_dir(&d).unwrap();
        d.display().to_string()
    };
    let ctx = study::Context::new(db.clone(), "in process");
    // A matrix: its cells come back as the matrix stored, with no process exit and nothing
    // printed.
    let matrix = from_words(&format!(
        "matrix --dir {} --kinds write,read --min-file 64k --max-file 64k --min-record 4k --max-record 4k --full --stand-in null",
        dir("m")
    ));
    let outcome = study::play(&ctx, &matrix, &LocalTeam, &mut Heard::default()).expect("the matrix plays");
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    let study::Made::Matrix(m) = &outcome.made else { panic!("no matrix made: {:?}", outcome.made) };
    assert_eq!((m.status, m.id), (Status::Ok, outcome.group.map(|g| g.number)));
    assert!(!m.cells.is_empty());
    assert_eq!(Store::open_existing(&db).unwrap().load_matrix(m.id.unwrap()).unwrap().cells.len(), m.cells.len());
    // A target survey: each target alone, then 1 and 2 at once, its roles heard as progress.
    let targets = from_words(&format!(
        "targets --dir {}@{} --op write --transfer 4k --size 64k --streams 1 --repetitions 1 --engine null",
        dir("a"),
        dir("b")
    ));
    let mut heard = Heard::default();
    let outcome = study::play(&ctx, &targets, &LocalTeam, &mut heard).expect("the target survey plays");
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
    assert_eq!(outcome.records.len(), 4, "two alone, then 1 and 2 at once");
    assert_eq!(heard.progress.len(), 4, "{:?}", heard.progress);
    assert!(heard.progress[3].starts_with("together 2 (4/4)"), "{:?}", heard.progress);
    // The run on both at once keeps them as a list (what the report's title block counts);
    // a run on one keeps none.
    let together = &outcome.records[3].env;
    assert_eq!(together.targets.len(), 2, "{together:?}");
    assert!(together.targets.iter().all(|t| !t.contains('@')) && outcome.records[0].env.targets.is_empty());
    // A network study needs two processes: refused as a value, nothing stored of it.
    let net = from_words("net --mode tcp --size 1m --repetitions 1");
    let e = study::play(&ctx, &net, &LocalTeam, &mut Heard::default()).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("at least 2 processes"), "{e}");
}
