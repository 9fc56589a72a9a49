//! `iosurvey matrix`: IOzone's file x record matrix, every kind of each cell measured by a few
//! runs in one fresh directory, each run stored and pointed to the matrix; the matrix itself
//! stored whole as `mN` (failed until it is). The lead chooses each next cell (every cell, or
//! the adaptive mode's) and every process follows.

use super::commands::{clean_up, command_line, fresh_dir, on_lead, target_everywhere};
use super::{Cli, Failure, MatrixArgs};
use iosurvey::engine::offsets::OffsetMap;
use iosurvey::engine::INTERRUPTED;
use iosurvey::measure::{timed, WindowEnd};
use iosurvey::plan::matrix::{
    decides, full_estimate, passes, workload, Adaptive, At, Grid, Kind, Measured, Pass, Shape, MIN_TRANSFERS,
};
use iosurvey::record::{MatrixCell, MatrixRecord, Status};
use iosurvey::runner::{Filing, Lead, RunError, Runner};
use iosurvey::store::Store;
use iosurvey::target::{data_files, Target};
use iosurvey::team::{share_value, Team};
use iosurvey::units::now_unix;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The kinds asked for, each once, in the matrix's order; stream kinds are left out with
/// `--direct` (stdio's buffer cannot be aligned), with a note.
fn kinds(a: &MatrixArgs) -> Result<(Vec<Kind>, Vec<String>), Failure> {
    let mut asked = Vec::new();
    for word in &a.kinds {
        asked.extend(Kind::parse(word).map_err(|e| Failure::new(e, "see 'iosurvey matrix --help'", 2))?);
    }
    let mut notes = Vec::new();
    if a.direct && asked.iter().any(|k| matches!(k, Kind::StreamWrite | Kind::StreamRead)) {
        notes.push("stream-write and stream-read are not measured with --direct: stdio's buffer is not aligned".into());
        asked.retain(|k| !matches!(k, Kind::StreamWrite | Kind::StreamRead));
    }
    let kinds: Vec<Kind> = Kind::ALL.into_iter().filter(|k| asked.contains(k)).collect();
    if kinds.is_empty() {
        return Err(Failure::new(
            "--kinds leaves no kind to measure",
            "name at least one kind, e.g. --kinds write,read",
            2,
        ));
    }
    Ok((kinds, notes))
}

/// The cells the lead has chosen and not yet measured, and how it chooses more.
enum Chooser {
    Full(std::vec::IntoIter<At>),
    Adaptive(Adaptive, Vec<At>),
}

impl Chooser {
    fn next(&mut self, measured: &Measured) -> Option<At> {
        match self {
            Chooser::Full(cells) => cells.next(),
            Chooser::Adaptive(adaptive, queue) => {
                if queue.is_empty() {
                    *queue = adaptive.next(measured);
                    queue.reverse();
                }
                queue.pop()
            }
        }
    }
}

/// What the lead keeps while the matrix runs.
struct Book {
    store: Store,
    target: Target,
    record: MatrixRecord,
    chooser: Chooser,
    measured: Measured,
    /// Per cell, the wall time of each visit (all its passes).
    visits: BTreeMap<At, Vec<f64>>,
    start: Instant,
}

impl Book {
    /// Files the phases of one run as samples of the kinds they measure.
    fn file_samples(&mut self, pass: &Pass, at: At, run: &iosurvey::record::RunRecord, timing: WindowEnd) {
        let (m, measured) = (&mut self.record, &mut self.measured);
        for (phase, (_, kind)) in run.phases.iter().zip(&pass.phases) {
            let Some(kind) = *kind else { continue };
            let figures = timed(&phase.tasks, timing);
            let cell = match m.cells.iter_mut().position(|c| c.kind == kind && (c.file, c.record) == at) {
                Some(i) => &mut m.cells[i],
                None => {
                    m.cells.push(MatrixCell {
                        kind,
                        file: at.0,
                        record: at.1,
                        samples: Vec::new(),
                        runs: Vec::new(),
                        possibly_cached: None,
                    });
                    m.cells.last_mut().expect("just pushed")
                }
            };
            cell.samples.push(figures);
            cell.runs.extend(run.id.filter(|id| !cell.runs.contains(id)));
            cell.possibly_cached = cell.possibly_cached.take().or_else(|| phase.possibly_cached.clone());
            if let Some(rate) = figures.team {
                measured.entry(at).or_default().entry(kind).or_default().push(rate);
            }
        }
    }
}

pub(super) fn matrix<T: Team>(cli: &Cli, a: &MatrixArgs, team: &T) -> Result<(), Failure> {
    super::RUNNING.store(true, Ordering::Relaxed);
    let (kinds, mut notes) = kinds(a)?;
    if let Some(path) = &a.csv {
        // Refused before anything runs, not after the matrix.
        super::output::check(path, &cli.db, "--csv")?;
    }
    let grid = Grid::new((a.min_file, a.max_file), (a.min_record, a.max_record), a.all_records);
    if grid.cells().is_empty() {
        return Err(Failure::new(
            "the sizes give no cell: every record is larger than every file, or a minimum exceeds its maximum",
            "give --min-record no larger than --max-file, and each minimum no larger than its maximum",
            2,
        ));
    }
    let per_node = a.tasks * iosurvey::engine::placement::largest_node(&team.process_nodes()).max(1);
    let shape =
        Shape { tasks: team.processes() * a.tasks, per_node, direct: a.direct, fsync: a.include_fsync, seed: 1 };
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
    if a.budget == Some(0) {
        return Err(Failure::new(
            "--budget 0 leaves no time to measure a cell",
            "give --budget a duration above 0, e.g. 10m",
            2,
        ));
    }
    precheck(team, a.tasks, &grid, &passes, &shape)?;
    let mut book = on_lead(team, || {
        let (store, target) = fresh_dir(cli, Some(&a.dir), "matrix", a.target.options())?;
        // The largest file of every task, checked before the matrix has a row in the store.
        let largest = grid.cells().into_iter().max().map(|(file, record)| workload(&passes[0], file, record, &shape));
        if let (Some(w), false) = (largest, a.target.no_space_check) {
            let map = OffsetMap::new(&w);
            if let Err(e) = target.check_space(&data_files(false, map.files()), map.file_size()) {
                clean_up(target);
                return Err(RunError::Target(e).into());
            }
        }
        let record = MatrixRecord {
            id: None,
            started: now_unix(),
            status: Status::Ok,
            error: None,
            command_line: command_line(),
            label: a.target.label.clone(),
            env: iosurvey::env::collect(target.dir().path()),
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
        };
        let id = match store.begin_matrix(&record) {
            Ok(id) => id,
            Err(e) => {
                // The directory is made: removed before the refusal is said.
                clean_up(target);
                return Err(e.into());
            }
        };
        let record = MatrixRecord { id: Some(id), ..record };
        let chooser = match full {
            true => Chooser::Full((0..a.repetitions).flat_map(|_| grid.cells()).collect::<Vec<_>>().into_iter()),
            false => Chooser::Adaptive(Adaptive::new(grid.clone(), a.cliff as f64 / 100.0), Vec::new()),
        };
        Ok(Book {
            store,
            target,
            record,
            chooser,
            measured: Measured::new(),
            visits: BTreeMap::new(),
            start: Instant::now(),
        })
    })?;
    let dir = target_everywhere(team, book.as_ref().map(|b| &b.target))?;
    let matrix_id = book.as_ref().and_then(|b| b.record.id);
    let label = a.target.label.clone();
    let budget = a.budget.map(|ns| ns as f64 / 1e9);
    let mut failure: Option<RunError> = None;
    let line = command_line();
    loop {
        // The lead chooses; everyone follows (None: done).
        let next = book.as_mut().map(|b| {
            let spent = b.start.elapsed().as_secs_f64();
            if budget.is_some_and(|limit| spent >= limit) {
                if !b.record.notes.iter().any(|n| n.starts_with("--budget")) {
                    b.record.notes.push(format!("--budget reached after {spent:.1} s: the matrix stopped there"));
                }
                return None;
            }
            if INTERRUPTED.load(Ordering::Relaxed) {
                return None;
            }
            b.chooser.next(&b.measured)
        });
        let Some(cell) = share_value(team, next.as_ref()) else { break };
        let started = Instant::now();
        if let Some(b) = book.as_mut() {
            // A new file for the write of each visit, as IOzone's.
            let names = data_files(false, OffsetMap::new(&workload(&passes[0], cell.0, cell.1, &shape)).files());
            if let Err(e) = b.target.discard(&names) {
                failure = Some(RunError::Target(e));
            }
        }
        if !iosurvey::team::all_agree(team, failure.is_none()) {
            break;
        }
        for pass in &passes {
            let w = workload(pass, cell.0, cell.1, &shape);
            let name = format!(
                "{} {}/{}",
                pass_name(pass),
                iosurvey::units::format_size(cell.0),
                iosurvey::units::format_size(cell.1)
            );
            let filing = Filing { name: Some(&name), label: label.as_deref(), matrix_id, ..Filing::default() };
            let mut runner = Runner {
                team,
                threads: a.tasks,
                dir: dir.clone(),
                bases: Vec::new(),
                lead: book.as_mut().map(|b| Lead { store: &mut b.store, target: &mut b.target, more: &mut [] }),
                command_line: line.clone(),
                space_check: !a.target.no_space_check,
                watch: None,
            };
            let result = runner.run(&w, filing);
            match result {
                Ok(Some(run)) => {
                    if let Some(b) = book.as_mut() {
                        b.file_samples(pass, cell, &run, timing);
                    }
                }
                Ok(None) => {}
                // A pass this cell cannot hold (e.g. vectored pieces misaligned for
                // O_DIRECT): said once, the rest of the cell measured.
                Err(RunError::Spec(e)) => {
                    if let Some(b) = book.as_mut() {
                        let note = format!(
                            "{} is not measured with {} records: {e}",
                            pass_name(pass),
                            iosurvey::units::format_size(cell.1)
                        );
                        if !b.record.notes.contains(&note) {
                            b.record.notes.push(note);
                        }
                    }
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        if let Some(b) = book.as_mut() {
            b.visits.entry(cell).or_default().push(started.elapsed().as_secs_f64());
        }
        if failure.is_some() {
            break;
        }
    }
    let Some(mut b) = book else {
        return failure.map_or(Ok(()), |e| Err(e.into()));
    };
    b.record.wall_secs = b.start.elapsed().as_secs_f64();
    b.record.skipped = grid.cells().iter().filter(|c| !b.measured.contains_key(c)).count();
    b.record.full_secs = Some(full_estimate(&grid, &b.visits));
    if let Chooser::Adaptive(adaptive, _) = &b.chooser {
        b.record.spine = adaptive.spine;
    }
    b.record.cells.sort_by_key(|c| (c.kind, c.file, c.record));
    let interrupted = INTERRUPTED.load(Ordering::Relaxed);
    if failure.is_some() || interrupted {
        b.record.status = Status::Failed;
        b.record.error = Some(match &failure {
            Some(e) => e.to_string(),
            None => "interrupted".into(),
        });
    }
    let id = b.record.id.unwrap_or(0);
    // The directory goes first: a store that cannot take the matrix must not leave it behind.
    clean_up(b.target);
    b.store.finish_matrix(id, &b.record)?;
    if !cli.quiet {
        print!(
            "{}",
            iosurvey::report::exporter(iosurvey::report::Format::Text)
                .render(&iosurvey::analysis::matrix::matrix(&b.record))
        );
    }
    if let Some(path) = &a.csv {
        super::output::write(path, iosurvey::analysis::matrix::csv(&b.record).as_bytes(), &cli.db, "--csv")?;
    }
    match failure {
        Some(e) => Err(e.into()),
        None if interrupted => {
            Err(Failure::new(format!("matrix m{id} interrupted; stored as failed"), "run it again", 130))
        }
        None => Ok(()),
    }
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
    super::commands::warn_crowded(team, threads);
    Ok(())
}

/// A pass's name in the store: its engine and pattern.
fn pass_name(pass: &Pass) -> String {
    format!("matrix {} {}", pass.engine, pass.pattern)
}
