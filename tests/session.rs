//! The library's sessions and plans, driven as a campaign will drive them: no command line,
//! only `iosurvey::session` and `iosurvey::plan`.

mod common;

use common::Tmpfs;
use iosurvey::engine::Cancel;
use iosurvey::plan::matrix::{Grid, Kind, MatrixPlan, Shape};
use iosurvey::plan::{List, Plan, Step};
use iosurvey::record::{GroupKind, MatrixRecord, Status};
use iosurvey::runner::RunError;
use iosurvey::session::{Leftovers, Opening, Place, Session};
use iosurvey::spec::{Data, Workload};
use iosurvey::store::Store;
use iosurvey::team::local::LocalTeam;
use iosurvey::units::KIB;
use std::path::{Path, PathBuf};

fn opening<'a>(db: &Path, place: Place, cancel: Cancel) -> Opening<'a> {
    Opening {
        store: db.to_path_buf(),
        place,
        options: Default::default(),
        threads: 2,
        command_line: "a campaign".into(),
        space_check: true,
        label: Some("tmpfs".into()),
        cancel,
        watch: None,
        leftovers: Leftovers::default(),
        check: Vec::new(),
        within: None,
    }
}

fn small() -> Workload {
    Workload::from(Data { transfer: 64 * KIB, block: 256 * KIB, ..Data::default() })
}

fn matrix_record(db_dir: &Path) -> MatrixRecord {
    let grid = Grid::new((64 * KIB, 128 * KIB), (16 * KIB, 64 * KIB), false);
    let shape = Shape { tasks: 2, per_node: 2, direct: false, fsync: false, seed: 1, stand_in: None };
    MatrixRecord {
        started: 1,
        command_line: "a campaign".into(),
        label: Some("tmpfs".into()),
        env: iosurvey::env::collect(db_dir),
        timing: iosurvey::measure::WindowEnd::Transfers,
        adaptive: false,
        ..MatrixRecord::new(grid, vec![Kind::Write, Kind::Read], shape, 0.3)
    }
}

#[test]
fn a_caller_outside_the_cli_runs_a_sweep_plan_and_a_matrix_plan_and_reads_both_groups_back() {
    let Some(fs) = Tmpfs::mount("size=64m") else { return };
    let db = fs.bed.tmp.path().join("campaign.db");
    let team = LocalTeam;
    let leftovers = Leftovers::default();
    let mut o = opening(&db, Place::Dir { dir: fs.bed.dir.clone(), more: Vec::new() }, Cancel::new());
    o.leftovers = leftovers.clone();
    let mut session = Session::open(&team, o).unwrap();
    // A sweep over 1 and 2 clients.
    let sweep = session.begin(GroupKind::Sweep, &serde_json::json!({ "parameter": "clients" })).unwrap();
    let mut points = List::sweep(&small(), &[1, 2], None).unwrap();
    let mut seen = Vec::new();
    let played = session.play(&mut points, Some(sweep), |step| seen.push(step.clone()));
    assert!(played.failure.is_none(), "{:?}", played.failure);
    assert_eq!(seen.len(), 2, "a step per point, seen before it ran");
    session.finish(sweep, true, None).unwrap();
    let tasks: Vec<usize> = played.records.iter().map(|r| r.workload.tasks).collect();
    assert_eq!(tasks, [1, 2]);
    drop(session);
    assert!(leftovers.take().is_empty());
    assert!(
        common::listing(&fs.bed.dir).is_empty(),
        "closing removed the sweep's files: {:?}",
        common::listing(&fs.bed.dir)
    );

    // A full matrix in a fresh directory on the same tmpfs.
    let o = opening(&db, Place::Fresh { parent: Some(fs.bed.dir.clone()), kind: "matrix" }, Cancel::new());
    let mut session = Session::open(&team, o).unwrap();
    let fresh: PathBuf = session.site().paths()[0].clone();
    assert!(fresh.starts_with(&fs.bed.dir) && fresh.exists());
    let record = matrix_record(&fs.bed.dir);
    let group = session.begin(GroupKind::Matrix, &record).unwrap();
    let mut plan = MatrixPlan::new(MatrixRecord { id: Some(group.number), ..record }, 1, None);
    let played = session.play(&mut plan, Some(group), |_| {});
    assert!(played.failure.is_none(), "{:?}", played.failure);
    let m = plan.finish(None);
    session.finish(group, true, serde_json::to_string(&m).ok()).unwrap();
    drop(session);
    assert!(!fresh.exists(), "the fresh directory is removed when the session closes");

    let store = Store::open_existing(&db).unwrap();
    let sweep_runs = store.group_runs(sweep).unwrap();
    assert_eq!(sweep_runs.len(), 2);
    for id in &sweep_runs {
        let r = store.load(*id).unwrap();
        assert_eq!(
            (r.sweep_id, r.label.as_deref(), r.command_line.as_str()),
            (Some(sweep.number), Some("tmpfs"), "a campaign")
        );
    }
    assert_eq!(store.group(sweep).unwrap().state, "ok");
    let back = store.load_matrix(group.number).unwrap();
    // 2 x 2 cells less those whose record is larger than the file: every (file, record) pair
    // of the grid, with write and read each.
    let cells = back.grid.cells().len();
    assert!(cells > 0);
    assert_eq!(
        back.cells.len(),
        2 * cells,
        "{:?}",
        back.cells.iter().map(|c| (c.kind, c.file, c.record)).collect::<Vec<_>>()
    );
    assert_eq!(store.group_runs(group).unwrap().len(), played.records.len());
    assert!(back.cells.iter().all(|c| c.runs.iter().all(|id| store.group_runs(group).unwrap().contains(id))));
}

#[test]
fn two_sessions_in_one_process_run_at_once_and_each_files_its_own_run() {
    // Each run, its last will and janitor duty armed, waits for the other's: both are in
    // flight at once, as the sessions of two threads of a library caller may be.
    // The watch is `'static`: it holds the barrier, not a borrow of it.
    let both_armed = std::sync::Arc::new(std::sync::Barrier::new(2));
    std::thread::scope(|scope| {
        let sessions: Vec<_> = (0..2)
            .map(|n| {
                let both_armed = both_armed.clone();
                scope.spawn(move || {
                    let wait = move |_: std::sync::Arc<iosurvey::engine::Progress>| -> Box<dyn FnOnce()> {
                        both_armed.wait();
                        Box::new(|| {})
                    };
                    let bed = common::Bed::new();
                    let db = bed.tmp.path().join("s.db");
                    let mut o: Opening =
                        opening(&db, Place::Dir { dir: bed.dir.clone(), more: Vec::new() }, Cancel::new());
                    o.watch = Some(&wait);
                    let mut session = Session::open(&LocalTeam, o).unwrap();
                    let mut one = List::new([(Some(format!("session {n}")), Workload { tasks: 1, ..small() })]);
                    let played = session.play(&mut one, None, |_| {});
                    drop(session);
                    assert!(played.failure.is_none(), "session {n}: {:?}", played.failure);
                    let store = Store::open_existing(&db).unwrap();
                    let rows = store.list().unwrap();
                    assert_eq!(rows.len(), 1, "session {n} filed its run, once");
                    assert_eq!(store.load(rows[0].id).unwrap().status, Status::Ok, "session {n}");
                    assert!(common::listing(&bed.dir).is_empty(), "session {n} removed its files");
                })
            })
            .collect();
        for s in sessions {
            s.join().unwrap();
        }
    });
}

/// Plays `plan` in a session on a fresh bed, its runs obeying `cancel`; the session closed.
fn play_on_a_bed(plan: &mut dyn Plan, cancel: Cancel) -> (common::Bed, PathBuf, iosurvey::session::Played) {
    let bed = common::Bed::new();
    let db = bed.tmp.path().join("s.db");
    let place = Place::Dir { dir: bed.dir.clone(), more: Vec::new() };
    let mut session = Session::open(&LocalTeam, opening(&db, place, cancel)).unwrap();
    let played = session.play(plan, None, |_| {});
    (bed, db, played)
}

/// A plan whose hook, after its first run, cancels the session's token, as a campaign's time
/// budget or a signal would between two runs.
struct CancelAfterOne {
    cancel: Cancel,
    steps: usize,
}

impl Plan for CancelAfterOne {
    fn next(&mut self, _: iosurvey::plan::Last) -> Step {
        self.steps += 1;
        match self.steps {
            2 => Step::Hook("budget".into()),
            n => Step::Run { workload: Box::new(Workload { tasks: 1, ..small() }), name: Some(format!("step {n}")) },
        }
    }

    fn hook(&mut self, name: &str, _: &mut iosurvey::plan::HookSite) -> Result<(), iosurvey::plan::HookError> {
        assert_eq!(name, "budget");
        self.cancel.cancel();
        Ok(())
    }
}

#[test]
fn a_cancelled_token_stops_a_plan_between_runs_and_the_runs_before_stay_stored() {
    let cancel = Cancel::new();
    let mut plan = CancelAfterOne { cancel: cancel.clone(), steps: 0 };
    let (bed, db, played) = play_on_a_bed(&mut plan, cancel);
    assert!(matches!(played.failure, Some(RunError::Interrupted)), "{:?}", played.failure);
    assert_eq!(played.records.len(), 1, "the run before the stop");
    assert_eq!(plan.steps, 3, "the plan hears the hook's end, and the step it gives then is not taken");
    assert_eq!(Store::open_existing(&db).unwrap().list().unwrap().len(), 1);
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

/// One run; a stop asked for while it ran (here: when the plan hears of it).
struct OneRunThenStop {
    cancel: Cancel,
    heard: Vec<i64>,
    asked: usize,
}

impl Plan for OneRunThenStop {
    fn next(&mut self, last: iosurvey::plan::Last) -> Step {
        self.asked += 1;
        if let iosurvey::plan::Last::Ran(r) = last {
            self.heard.extend(r.id);
            self.cancel.cancel();
        }
        match self.asked {
            1 => Step::Run { workload: Box::new(Workload { tasks: 1, ..small() }), name: None },
            _ => Step::Done,
        }
    }
}

#[test]
fn a_plan_hears_of_its_last_run_even_when_a_stop_came_and_a_finished_plan_is_no_stop() {
    let cancel = Cancel::new();
    let mut plan = OneRunThenStop { cancel: cancel.clone(), heard: Vec::new(), asked: 0 };
    let (_bed, _db, played) = play_on_a_bed(&mut plan, cancel);
    assert!(played.failure.is_none(), "the plan had nothing left to run: {:?}", played.failure);
    assert_eq!(
        plan.heard,
        played.records.iter().filter_map(|r| r.id).collect::<Vec<_>>(),
        "the run's record reached the plan"
    );
    assert_eq!(plan.heard.len(), 1);
}
