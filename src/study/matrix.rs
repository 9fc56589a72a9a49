//! `matrix`: IOzone's file x record matrix.

use super::common::{stand_in_arg, tasks_arg, TargetArgs};
use super::Error;
use crate::plan::matrix::{Grid, Kind};
use std::path::PathBuf;

/// The options of `iosurvey matrix`, with IOzone's letter where it has one.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct MatrixArgs {
    /// Where to make the matrix's fresh directory (removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Test kinds (IOzone -i): names (write, rewrite, read, reread, random-read, random-write,
    /// backward-read, record-rewrite, stride-read, stream-write, stream-read, vectored-write,
    /// vectored-read, mix), IOzone's numbers (0-8, 11, 12) or all.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub kinds: Vec<String>,
    /// Smallest file size (IOzone -n).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "64k")]
    pub min_file: u64,
    /// Largest file size (IOzone -g).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "512m")]
    pub max_file: u64,
    /// Smallest record size (IOzone -y).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "4k")]
    pub min_record: u64,
    /// Largest record size (IOzone -q).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "16m")]
    pub max_record: u64,
    /// Also records under 64 KiB on files over 16 MiB, which IOzone's -a skips unless -z.
    #[arg(long)]
    pub all_records: bool,
    /// O_DIRECT (IOzone -I); the stream kinds are then left out.
    #[arg(long)]
    pub direct: bool,
    /// Time to the end of close (IOzone -c); without --include-fsync a write phase then makes no
    /// fsync, even with --fsync-after, as IOzone's -c alone.
    #[arg(long)]
    pub include_close: bool,
    /// Time each write phase's fsync (IOzone -e).
    #[arg(long)]
    pub include_fsync: bool,
    /// fsync each write phase after its timing, untimed, as IOzone's children and its
    /// automatic mode do unless -c alone (`iosurvey iozone` sets it): the next phase then
    /// starts from clean pages.
    #[arg(long)]
    pub fsync_after: bool,
    /// Every cell (by default the adaptive mode measures the cells the findings need).
    #[arg(long)]
    pub full: bool,
    /// Stop choosing cells after this long (e.g. 10m, 90s); the matrix keeps what it has.
    #[arg(long, value_parser = crate::units::parse_long_duration, value_name = "DURATION")]
    pub budget: Option<u64>,
    /// With --full, visits of every cell (the median is shown).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repetitions: u32,
    /// A fall of more than this percentage between neighbouring sizes is a cliff.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub cliff: u32,
    /// For tests: an engine that touches no storage (null, delay:D, delay:D/SIZE:D2) in place
    /// of every kind's own, so that a test can plant cliffs where it knows them.
    #[arg(long, hide = true, value_name = "ENGINE", value_parser = stand_in_arg)]
    pub stand_in: Option<crate::spec::EngineName>,
    /// Also write every cell as CSV to FILE (IOzone -R's role).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Tasks (threads) in each process, each on its own file (IOzone -t); under MPI the team
    /// is ranks x tasks.
    #[arg(long, short = 't', default_value_t = 1, value_parser = tasks_arg)]
    pub tasks: usize,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

impl MatrixArgs {
    /// The kinds asked for, each once, in the matrix's order; stream kinds are left out with
    /// `--direct` (stdio's buffer cannot be aligned), with a note.
    pub fn kinds(&self) -> Result<(Vec<Kind>, Vec<String>), Error> {
        let mut asked = Vec::new();
        for word in &self.kinds {
            asked.extend(Kind::parse(word).map_err(|e| Error::refused(e, "see 'iosurvey matrix --help'"))?);
        }
        let mut notes = Vec::new();
        if self.direct && asked.iter().any(|k| matches!(k, Kind::StreamWrite | Kind::StreamRead)) {
            notes.push(
                "stream-write and stream-read are not measured with --direct: stdio's buffer is not aligned".into(),
            );
            asked.retain(|k| !matches!(k, Kind::StreamWrite | Kind::StreamRead));
        }
        let kinds: Vec<Kind> = Kind::ALL.into_iter().filter(|k| asked.contains(k)).collect();
        if kinds.is_empty() {
            return Err(Error::refused(
                "--kinds leaves no kind to measure",
                "name at least one kind, e.g. --kinds write,read",
            ));
        }
        Ok((kinds, notes))
    }

    /// The file x record grid the sizes give.
    pub fn grid(&self) -> Grid {
        Grid::new((self.min_file, self.max_file), (self.min_record, self.max_record), self.all_records)
    }

    /// Refuses, before anything is made, settings that measure nothing: no kind, no cell, no
    /// time.
    pub fn validate(&self) -> Result<(), Error> {
        self.kinds()?;
        if self.grid().cells().is_empty() {
            return Err(Error::refused(
                "the sizes give no cell: every record is larger than every file, or a minimum exceeds its maximum",
                "give --min-record no larger than --max-file, and each minimum no larger than its maximum",
            ));
        }
        if self.budget == Some(0) {
            return Err(Error::refused(
                "--budget 0 leaves no time to measure a cell",
                "give --budget a duration above 0, e.g. 10m",
            ));
        }
        Ok(())
    }
}

use super::play::{on_lead, open, Context, Made, Observer, Outcome};
use crate::engine::offsets::OffsetMap;
use crate::measure::WindowEnd;
use crate::plan::matrix::{decides, passes, workload, MatrixPlan, Pass, Shape, MIN_TRANSFERS};
use crate::record::{GroupKind, MatrixRecord, Status};
use crate::runner::RunError;
use crate::session::Place;
use crate::team::Team;

/// Plays a matrix in a fresh directory and stores it as `mN`, failed until it is whole: the
/// matrix goes out as [`Made::Matrix`] (the lead's; the other processes' copy holds no
/// cells).
pub(super) fn play<T: Team>(
    ctx: &Context,
    a: &MatrixArgs,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    let (kinds, mut notes) = a.kinds()?;
    let grid = a.grid();
    let shape = shape(a, team);
    let passes = passes(&kinds);
    // The adaptive mode measures only cells that can decide a finding; a grid with none is
    // measured whole rather than not at all.
    let full = a.full || !grid.cells().into_iter().any(decides);
    if !a.full && full {
        notes.push(format!(
            "no cell of the grid holds {MIN_TRANSFERS} records, so none decides a peak or cliff: the grid measured whole, as with --full"
        ));
    }
    precheck(team, a.tasks, (&grid, &passes, &shape), observer)?;
    let place = Place::Fresh { parent: Some(a.dir.clone()), kind: "matrix" };
    // Many short runs: no progress bar for each.
    let mut session = open(ctx, team, (place, &a.target), (a.tasks, Vec::new()), observer)?.unwatched();
    // The largest file of every task, checked before the matrix has a row in the store.
    let largest = grid.cells().into_iter().max().map(|(file, record)| workload(&passes[0], file, record, &shape));
    let space_check = !a.target.no_space_check;
    session.on_lead(|lead| match (largest.as_ref().and_then(|w| Some((w, w.data()?))), space_check) {
        (Some((w, data)), true) => {
            let map = OffsetMap::new(data, w.tasks, w.seed);
            Ok(lead.target().check_space(&crate::target::data_files(false, map.files()), map.file_size())?)
        }
        _ => Ok(()),
    })?;
    let env = session.decide(|lead| crate::env::collect(lead.target().dir().path()));
    let record = MatrixRecord {
        command_line: ctx.command_line.clone(),
        env,
        adaptive: !full,
        notes,
        ..record(a, grid, kinds, shape)
    };
    // Stored at once as failed, so that one killed midway is never taken for whole.
    let unfinished = MatrixRecord { status: Status::Failed, error: Some("did not finish".into()), ..record.clone() };
    let group = session.begin(GroupKind::Matrix, &unfinished)?;
    let record = MatrixRecord { id: Some(group.number), ..record };
    let mut plan = MatrixPlan::new(record, a.repetitions as usize, a.budget.map(|ns| ns as f64 / 1e9));
    let played = session.play(&mut plan, Some(group), |_| {});
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
    let failure = match played.failure {
        Some(RunError::Interrupted) => Some(Error::new(
            super::Kind::Interrupted,
            format!("matrix {group} interrupted; stored as failed"),
            crate::spec::Hint::Say("run it again".into()),
        )),
        Some(e) => Some(e.into()),
        None => finished.err().map(Error::from),
    };
    Ok(Outcome { records: Vec::new(), group: Some(group), notes: Vec::new(), failure, made: Made::Matrix(Box::new(m)) })
}

/// The matrix's record before it is measured: its settings, no cells, whole.
fn record(a: &MatrixArgs, grid: Grid, kinds: Vec<Kind>, shape: Shape) -> MatrixRecord {
    MatrixRecord {
        started: crate::units::now_unix(),
        label: a.target.label.clone(),
        timing: timing(a),
        limits: crate::env::limits(),
        ..MatrixRecord::new(grid, kinds, shape, a.cliff as f64 / 100.0)
    }
}

/// The shape every cell's workload takes from the settings and the team.
fn shape<T: Team>(a: &MatrixArgs, team: &T) -> Shape {
    Shape {
        tasks: team.processes() * a.tasks,
        per_node: a.tasks * crate::engine::placement::largest_node(&team.process_nodes()).max(1),
        direct: a.direct,
        // IOzone fsyncs each written file after its timing (untimed but for -e), except that
        // with -c and without -e it only closes: the next phase starts from clean pages.
        fsync: a.include_fsync || (a.fsync_after && !a.include_close),
        seed: 1,
        stand_in: a.stand_in.clone(),
    }
}

/// Where each timed window ends: IOzone's -c and -e.
fn timing(a: &MatrixArgs) -> WindowEnd {
    match (a.include_close, a.include_fsync) {
        (true, _) => WindowEnd::Close,
        (false, true) => WindowEnd::Fsync,
        (false, false) => WindowEnd::Transfers,
    }
}

/// Checks every pass of every cell before the matrix makes anything: a pass a cell cannot
/// hold is left out later with a note, but settings under which no cell can be measured, or
/// whose buffers would take too much memory, refuse the matrix (exit 2, nothing stored).
fn precheck<T: Team>(
    team: &T,
    threads: usize,
    (grid, passes, shape): (&Grid, &[Pass], &Shape),
    observer: &mut dyn Observer,
) -> Result<(), Error> {
    let per_node = crate::runner::per_node(team, threads);
    on_lead(team, || {
        let available = crate::env::memory_available();
        let (mut some, mut first) = (false, None);
        for (file, record) in grid.cells() {
            for pass in passes {
                match crate::runner::precheck(&workload(pass, file, record, shape), per_node, available) {
                    Ok(()) => some = true,
                    Err(e @ RunError::Spec(crate::spec::SpecError::TooMuchMemory { .. })) => return Err(e.into()),
                    Err(e) => first = first.or(Some(e)),
                }
            }
        }
        match (some, first) {
            (false, Some(e)) => Err(Error::from(e)),
            _ => Ok(()),
        }
    })?;
    if let Some(line) = super::play::crowded(team, threads) {
        observer.warning(&line);
    }
    Ok(())
}
