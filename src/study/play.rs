//! Playing a study: one entry, [`play`], for every kind the library plays, with what the
//! caller decides handed in as values (the [`Context`]: the store, the stop token, where
//! clean-up's leftovers go) and what the study says going out through an [`Observer`]: the
//! command line renders it, a campaign or a test keeps it.

use super::{Error, Kind, RunArgs, Study, SurveyArgs};
use crate::engine::Cancel;
use crate::plan::{self, Step, SurveyShape};
use crate::record::{GroupId, GroupKind, RunRecord};
use crate::runner::Watch;
use crate::session::{Leftovers, Opening, Place, Session, Within};
use crate::spec::Workload;
use crate::target::cache;
use crate::team::{share_value, Team};
use crate::units::format_size;
use std::path::PathBuf;

/// What the caller decides for a study: passed in, never read from a global.
pub struct Context<'a> {
    /// The result store's file.
    pub store: PathBuf,
    /// The command line (or the campaign's words) stored with every run.
    pub command_line: String,
    /// Stops the study after the current transfers (a signal's handler holds a clone).
    pub cancel: Cancel,
    /// Where what clean-up could not remove is kept, for whoever ends the process to say.
    pub leftovers: Leftovers,
    /// Watches each run's live progress on the lead (a progress bar), if anyone does.
    pub watch: Option<&'a Watch>,
    /// The campaign point the study is, when a campaign plays it.
    pub within: Option<Within>,
}

impl Context<'_> {
    /// A context for `store` with no one watching, no campaign, and a stop token of its own.
    pub fn new(store: PathBuf, command_line: impl Into<String>) -> Self {
        Context {
            store,
            command_line: command_line.into(),
            cancel: Cancel::new(),
            leftovers: Leftovers::default(),
            watch: None,
            within: None,
        }
    }
}

/// What a study says while it plays. Every method is optional: a test may hear nothing.
pub trait Observer {
    /// A warning about what is measured (the target's notes, crowded cores); the study goes
    /// on.
    fn warning(&mut self, _line: &str) {}
    /// The study is about to make things (its directory, its rows in the store): from here a
    /// stop must be a clean one.
    fn opening(&mut self) {}
    /// The step a battery begins next (a run by its name, a hook).
    fn step(&mut self, _step: &Step) {}
    /// A battery's shape, before its first step: the steps of one repetition and how many
    /// repetitions, so progress can say where it is and what is left.
    fn rounds(&mut self, _per_round: usize, _rounds: usize) {}
    /// A progress line of a study that names its own steps (an IO500 phase, a target
    /// survey's role, a server's client): said on the lead, for whoever shows progress.
    fn progress(&mut self, _line: &str) {}
}

/// An observer that hears nothing.
pub struct Unheard;

impl Observer for Unheard {}

/// What a study played: the runs it stored (on the lead, in order, a failed one included),
/// the group that holds them, notes to say after its results, and what ended it early.
#[derive(Debug)]
pub struct Outcome {
    /// The records of its runs (lead only).
    pub records: Vec<RunRecord>,
    /// The sweep or survey that holds them, if it made one.
    pub group: Option<GroupId>,
    /// What the reader should know about the figures, said after them.
    pub notes: Vec<String>,
    /// The first failure, or the store's word on the group's end; `None` when all went well.
    pub failure: Option<Error>,
    /// What the study made besides its runs, for the caller to show.
    pub made: Made,
}

/// What a study made besides its run records: a matrix, an IO500 list, network figures.
#[derive(Debug, Default)]
pub enum Made {
    /// Runs only (run, meta, survey, targets).
    #[default]
    Runs,
    /// The matrix, as stored (the lead's: the other processes' copy holds no cells).
    Matrix(Box<crate::record::MatrixRecord>),
    /// A whole IO500 list's phases, checked for submission (on the lead; empty when the list
    /// did not end).
    Io500(Vec<crate::io500::PhaseScore>),
    /// The network figures, each stored (on the lead) as it was measured.
    Net(Vec<crate::net::NetResult>),
}

/// Plays `study` with `team`: checks it, opens a session in its place, runs its plan and
/// stores every run. An error is what stopped it before anything ran; what stopped it after
/// is [`Outcome::failure`], with the runs stored before.
pub fn play<T: Team>(ctx: &Context, study: &Study, team: &T, observer: &mut dyn Observer) -> Result<Outcome, Error> {
    study.validate()?;
    match study {
        Study::Run(a) => play_run(ctx, a, team, observer),
        Study::Meta(a) => play_run(ctx, &a.to_run()?, team, observer),
        Study::Survey(a) => play_survey(ctx, a, team, observer),
        Study::Matrix(a) => super::matrix::play(ctx, a, team, observer),
        Study::Io500(a) => super::io500::play(ctx, a, team, observer),
        Study::Targets(a) => super::targets::play(ctx, a, team, observer),
        Study::Net(a) => super::net::play(ctx, a, team, observer),
        Study::Train(a) => super::train::play_train(ctx, a, team, observer),
        Study::Checkpoint(a) => super::train::play_checkpoint(ctx, a, team, observer),
    }
}

/// Runs `f` on the lead process only; its success or exit code reaches every process, so
/// that all of them stop together when the lead refuses.
pub fn on_lead<T: Team, X>(team: &T, f: impl FnOnce() -> Result<X, Error>) -> Result<Option<X>, Error> {
    let result = (team.process() == 0).then(f);
    let mine = result.as_ref().map(|r| r.as_ref().err().map_or(0, Error::exit_code));
    let code: i32 = share_value(team, mine.as_ref());
    match result {
        Some(r) => r.map(Some),
        None if code == 0 => Ok(None),
        None => Err(Error::silent(Kind::of_exit_code(code))),
    }
}

/// Checks every workload a study will run before it makes anything (no store row, no
/// directory): each one's rules, its engine's, and the memory bound for `threads` tasks per
/// process. The lead decides (memory differs between nodes) and every process follows; when
/// all pass, warns when the tasks crowd the cores.
pub fn precheck_all<'w, T: Team>(
    team: &T,
    threads: usize,
    workloads: impl IntoIterator<Item = &'w Workload>,
    observer: &mut dyn Observer,
) -> Result<(), Error> {
    let per_node = crate::runner::per_node(team, threads);
    on_lead(team, || {
        let available = crate::env::memory_available();
        for w in workloads {
            crate::runner::precheck(w, per_node, available)?;
        }
        Ok(())
    })?;
    if let Some(line) = crowded(team, threads) {
        observer.warning(&line);
    }
    Ok(())
}

/// Tasks per core above which a run measures the scheduler as much as the storage.
const CROWDED: usize = 4;

/// The warning, on the lead, when `threads` tasks in this process far exceed the cores it
/// may use.
pub fn crowded<T: Team>(team: &T, threads: usize) -> Option<String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (team.process() == 0 && threads > CROWDED * cores).then(|| {
        format!(
            "--tasks {threads} runs {threads} threads on the {cores} core{} this process may use (more than {CROWDED} per core): the figures will show the scheduler as much as the storage",
            if cores == 1 { "" } else { "s" }
        )
    })
}

/// Opens a study's session in `place`, its target's notes said as warnings. `check` holds
/// the workloads whose metadata phase order must suit what the target holds.
pub fn open<'t, T: Team>(
    ctx: &Context<'t>,
    team: &'t T,
    (place, target): (Place, &super::TargetArgs),
    (threads, check): (usize, Vec<Workload>),
    observer: &mut dyn Observer,
) -> Result<Session<'t, T>, Error> {
    let opening = Opening {
        store: ctx.store.clone(),
        place,
        // A campaign's target existed when its file was read: a point never makes it.
        options: crate::target::Options { must_exist: ctx.within.is_some(), ..target.options() },
        threads,
        command_line: ctx.command_line.clone(),
        space_check: !target.no_space_check,
        label: target.label.clone(),
        cancel: ctx.cancel.clone(),
        watch: ctx.watch,
        leftovers: ctx.leftovers.clone(),
        check,
        within: ctx.within.clone(),
    };
    observer.opening();
    let mut session = Session::open(team, opening)?;
    for note in session.notes() {
        observer.warning(&note);
    }
    Ok(session)
}

/// Plays a run study's points: one run, or a sweep of client counts.
fn play_run<T: Team>(ctx: &Context, a: &RunArgs, team: &T, observer: &mut dyn Observer) -> Result<Outcome, Error> {
    let team_size = team.processes() * a.team.tasks;
    let counts = match &a.team.clients {
        Some(list) => plan::counts(list).map_err(|what| Error::refused(what, plan::COUNTS_HINT))?,
        None => vec![team_size],
    };
    if let Some(&most) = counts.iter().max().filter(|&&m| m > team_size) {
        return Err(Error::refused(
            format!("--clients asks for {most} tasks but the team has {team_size}"),
            "launch more ranks or raise --tasks",
        ));
    }
    let (mut points, place) = a.points(&counts, |paths| super::run::smallest_device(team, paths))?;
    let workloads: Vec<Workload> = points.workloads().cloned().collect();
    precheck_all(team, a.team.tasks, &workloads, observer)?;
    let sweep = counts.len() > 1;
    let mut session = open(ctx, team, (place, &a.team.target), (a.team.tasks, workloads), observer)?;
    let group = match sweep {
        true => Some(session.begin(GroupKind::Sweep, &serde_json::json!({ "parameter": "clients" }))?),
        false => None,
    };
    let played = session.play(&mut points, group, |_| {});
    // A store that cannot take the sweep's end is said after what ran.
    let finished = group.map_or(Ok(()), |g| session.finish(g, played.failure.is_none(), None));
    drop(session);
    let failure = match played.failure {
        Some(e) => Some(e.into()),
        None => finished.err().map(Error::from),
    };
    Ok(Outcome { records: played.records, group, notes: Vec::new(), failure, made: Made::Runs })
}

/// What the lead decides before a survey and every process needs.
#[derive(serde::Serialize, serde::Deserialize)]
struct SurveyChoice {
    direct: bool,
    drop_caches: bool,
}

/// Plays the standard battery in a fresh directory, every run filed in one survey group.
fn play_survey<T: Team>(
    ctx: &Context,
    a: &SurveyArgs,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    let threads = a.tasks.unwrap_or_else(|| {
        if team.processes() > 1 {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    });
    let tasks = team.processes() * threads;
    // Every workload of the battery, either way the lead may find O_DIRECT, checked before
    // the survey makes its directory or its row in the store.
    let shape =
        |direct, drop_caches| SurveyShape { size: a.size, tasks, direct, drop_caches, random_secs: a.random_secs };
    let battery = |direct| plan::survey(shape(direct, false)).into_iter().map(|i| i.workload);
    let all: Vec<Workload> = battery(false).chain(battery(true)).collect();
    precheck_all(team, threads, &all, observer)?;
    check_survey_size(a.size, tasks)?;
    let place = Place::Fresh { parent: a.dir.clone(), kind: "survey" };
    let mut session = open(ctx, team, (place, &a.target), (threads, Vec::new()), observer)?;
    let choice = session.decide(|lead| SurveyChoice {
        direct: lead.target().direct_alignment(&[]).is_ok_and(|align| 4096 % align == 0),
        drop_caches: cache::can_drop(),
    });
    let target = session.site().paths()[0].to_string_lossy().into_owned();
    let group = session.begin(GroupKind::Survey, &serde_json::json!({ "target": target }))?;
    let mut battery = plan::survey_plan(shape(choice.direct, choice.drop_caches), a.repetitions as usize);
    observer.rounds(plan::survey(shape(choice.direct, choice.drop_caches)).len(), a.repetitions as usize);
    let played = session.play(&mut battery, Some(group), |step| observer.step(step));
    let finished = session.finish(group, played.failure.is_none(), None);
    drop(session);
    let mut notes = Vec::new();
    if team.process() == 0 && !choice.drop_caches {
        notes.push(
            "not root, so the page cache was not dropped; reads flagged as possibly cached may come from memory".into(),
        );
    }
    let failure = match played.failure {
        Some(e) => Some(e.into()),
        None => finished.err().map(Error::from),
    };
    Ok(Outcome { records: played.records, group: Some(group), notes, failure, made: Made::Runs })
}

/// Refuses a survey `--size` that gives a task less than one transfer, before anything runs.
fn check_survey_size(size: u64, tasks: usize) -> Result<(), Error> {
    // Each task moves whole 1 MiB transfers: less than one each would be rounded up.
    let least = (tasks as u64).saturating_mul(1 << 20);
    if size < least {
        return Err(Error::refused(
            format!("--size {} gives each of the {tasks} tasks less than one 1 MiB transfer", format_size(size)),
            format!("give --size at least {}", format_size(least)),
        ));
    }
    Ok(())
}
