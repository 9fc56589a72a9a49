//! `iosurvey matrix`: IOzone's file x record matrix, parsed into the library's matrix plan
//! (`iosurvey::plan::matrix::MatrixPlan`), played in a fresh directory and stored as `mN`
//! (failed until it is whole); the matrix printed, and written as CSV when asked.

use super::opening::{command_line, on_lead, open, warn_crowded};
use super::{Cli, Failure, MatrixArgs};
use iosurvey::engine::offsets::OffsetMap;
use iosurvey::measure::WindowEnd;
use iosurvey::plan::matrix::{decides, passes, workload, Grid, MatrixPlan, Pass, Shape, MIN_TRANSFERS};
use iosurvey::record::{GroupKind, MatrixRecord, Status};
use iosurvey::runner::RunError;
use iosurvey::session::Place;
use iosurvey::target::data_files;
use iosurvey::team::Team;
use iosurvey::units::now_unix;

pub(super) fn matrix<T: Team>(cli: &Cli, a: &MatrixArgs, team: &T) -> Result<(), Failure> {
    let (m, outcome) = play_matrix(cli, a, team)?;
    if team.process() == 0 && !cli.quiet {
        out!(
            "{}",
            iosurvey::report::exporter(iosurvey::report::Format::Text).render(&iosurvey::analysis::matrix::matrix(&m))
        );
    }
    outcome
}

/// Plays a matrix and stores it, writing its CSV when asked, and prints nothing: `matrix`
/// prints its tables, `iozone` its report. Gives the matrix (on the lead; the other processes'
/// copy holds no cells) and how it ended.
pub(super) fn play_matrix<T: Team>(
    cli: &Cli,
    a: &MatrixArgs,
    team: &T,
) -> Result<(MatrixRecord, Result<(), Failure>), Failure> {
    a.validate()?;
    let (kinds, mut notes) = a.kinds()?;
    if let Some(path) = &a.csv {
        // Refused before anything runs, not after the matrix.
        super::output::check(path, &cli.db, "--csv")?;
    }
    let grid = a.grid();
    let per_node = a.tasks * iosurvey::engine::placement::largest_node(&team.process_nodes()).max(1);
    let shape = Shape {
        tasks: team.processes() * a.tasks,
        per_node,
        direct: a.direct,
        // IOzone fsyncs each written file after its timing (untimed but for -e), except that
        // with -c and without -e it only closes: the next phase starts from clean pages.
        fsync: a.include_fsync || (a.fsync_after && !a.include_close),
        seed: 1,
        stand_in: a.stand_in.clone(),
    };
    let timing = match (a.include_close, a.include_fsync) {
        (true, _) => WindowEnd::Close,
        (false, true) => WindowEnd::Fsync,
        (false, false) => WindowEnd::Transfers,
    };
    let passes = passes(&kinds);
    // The adaptive mode measures only cells that can decide a finding; a grid with none is
    // measured whole rather than not at all.
    let full = a.full || !grid.cells().into_iter().any(decides);
    if !a.full && full {
        notes.push(format!(
            "no cell of the grid holds {MIN_TRANSFERS} records, so none decides a peak or cliff: the grid measured whole, as with --full"
        ));
    }
    precheck(team, a.tasks, &grid, &passes, &shape)?;
    let place = Place::Fresh { parent: Some(a.dir.clone()), kind: "matrix" };
    // Many short runs: no progress bar for each.
    let mut session = open(cli, team, (place, &a.target), a.tasks, Vec::new())?.unwatched();
    // The largest file of every task, checked before the matrix has a row in the store.
    let largest = grid.cells().into_iter().max().map(|(file, record)| workload(&passes[0], file, record, &shape));
    let space_check = !a.target.no_space_check;
    session.on_lead(|lead| match (largest.as_ref().and_then(|w| Some((w, w.data()?))), space_check) {
        (Some((w, data)), true) => {
            let map = OffsetMap::new(data, w.tasks, w.seed);
            Ok(lead.target().check_space(&data_files(false, map.files()), map.file_size())?)
        }
        _ => Ok(()),
    })?;
    let env = session.decide(|lead| iosurvey::env::collect(lead.target().dir().path()));
    let record = MatrixRecord {
        id: None,
        started: now_unix(),
        status: Status::Ok,
        error: None,
        command_line: command_line(),
        label: a.target.label.clone(),
        env,
        grid: grid.clone(),
        kinds: kinds.clone(),
        shape: shape.clone(),
        timing,
        adaptive: !full,
        fraction: a.cliff as f64 / 100.0,
        cells: Vec::new(),
        limits: iosurvey::env::limits(),
        wall_secs: 0.0,
        full_secs: None,
        skipped: 0,
        spine: None,
        notes: std::mem::take(&mut notes),
        provenance: None,
        tool_params: Default::default(),
    };
    // Stored at once as failed, so that one killed midway is never taken for whole.
    let unfinished = MatrixRecord { status: Status::Failed, error: Some("did not finish".into()), ..record.clone() };
    let group = session.begin(GroupKind::Matrix, &unfinished)?;
    let record = MatrixRecord { id: Some(group.number), ..record };
    let mut plan = MatrixPlan::new(record, a.repetitions as usize, a.budget.map(|ns| ns as f64 / 1e9));
    let played = session.play(&mut plan, Some(group), |_| {});
    let interrupted = matches!(played.failure, Some(RunError::Interrupted));
    let why = match &played.failure {
        Some(RunError::Interrupted) => Some("interrupted".to_string()),
        Some(e) => Some(e.to_string()),
        None => None,
    };
    let m = plan.finish(why);
    let spec = serde_json::to_string(&MatrixRecord { id: None, ..m.clone() }).ok();
    // A store that cannot take the matrix is said after the matrix is shown.
    let finished = session.finish(group, m.status == Status::Ok, spec);
    drop(session);
    if team.process() != 0 {
        return Ok((m, played.failure.map_or(finished.map_err(Failure::from), |e| Err(e.into()))));
    }
    if let Some(path) = &a.csv {
        super::output::write(path, iosurvey::analysis::matrix::csv(&m).as_bytes(), &cli.db, "--csv")?;
    }
    let outcome = match played.failure {
        _ if interrupted => {
            Err(Failure::new(format!("matrix {group} interrupted; stored as failed"), "run it again", 130))
        }
        Some(e) => Err(e.into()),
        None => finished.map_err(Failure::from),
    };
    Ok((m, outcome))
}

/// Checks every pass of every cell before the matrix makes anything: a pass a cell cannot
/// hold is left out later with a note, but settings under which no cell can be measured, or
/// whose buffers would take too much memory, refuse the matrix (exit 2, nothing stored).
fn precheck<T: Team>(team: &T, threads: usize, grid: &Grid, passes: &[Pass], shape: &Shape) -> Result<(), Failure> {
    let per_node = iosurvey::runner::per_node(team, threads);
    on_lead(team, || {
        let available = iosurvey::env::memory_available();
        let (mut some, mut first) = (false, None);
        for (file, record) in grid.cells() {
            for pass in passes {
                match iosurvey::runner::precheck(&workload(pass, file, record, shape), per_node, available) {
                    Ok(()) => some = true,
                    Err(e @ RunError::Spec(iosurvey::spec::SpecError::TooMuchMemory { .. })) => return Err(e.into()),
                    Err(e) => first = first.or(Some(e)),
                }
            }
        }
        match (some, first) {
            (false, Some(e)) => Err(e.into()),
            _ => Ok(()),
        }
    })?;
    warn_crowded(team, threads);
    Ok(())
}
