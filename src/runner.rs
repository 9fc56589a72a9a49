//! Drives one run from a workload to a stored record: the lead process checks the target,
//! every process executes its tasks, and the lead aggregates and writes the record (ok or
//! failed) in one transaction. Decisions only the lead can take reach the other processes
//! through [`Team::share`], so every process takes the same path and nobody waits for ever.

use crate::cancel::Cancel;
use crate::engine::{self, offsets::mix, offsets::OffsetMap, DataFiles, EngineError, Execution, PathStart, Progress};
use crate::env;
use crate::janitor::{self, Duty};
use crate::kinds::{self, DataRun};
use crate::record::{GroupId, GroupKind, RunFacts, RunRecord, Status};
use crate::spec::meta::check_order;
use crate::spec::{Access, Before, Hint, Meta, Op, Setting, Shape, SpecError, Workload};
use crate::store::{will, Store, StoreError};
use crate::target::site::{on_target, Site};
use crate::target::{cache, data_files, Target, TargetError};
use crate::team::{share_value, Team};
use crate::units::now_unix;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// Why a run did not succeed.
#[derive(Debug, Error)]
pub enum RunError {
    /// The workload is invalid; nothing ran, nothing was stored.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// The engine was refused before the run started; nothing was stored.
    #[error("{0}")]
    Refused(EngineError),
    /// The target was refused before the run started; nothing was stored.
    #[error("{0}")]
    Target(#[from] TargetError),
    /// The store could not be opened or written.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The run started and failed; it is stored, marked failed.
    #[error("run {id} failed: {}", .record.error.as_deref().unwrap_or("unknown error"))]
    Failed {
        /// Store id.
        id: i64,
        /// The stored record.
        record: Box<RunRecord>,
        /// What the user can do.
        hint: Hint,
        /// Exit code: 1 for an error, 3 for bad data, 130 for an interrupt.
        code: i32,
    },
    /// A signal stopped a sequence of runs between two of them; those before it are stored.
    #[error("interrupted by a signal between runs; the runs before it are stored")]
    Interrupted,
    /// A directory a session needs could not be opened; nothing was stored.
    #[error("{what}")]
    Open {
        /// What could not be opened, and why.
        what: String,
        /// What to do.
        hint: Hint,
    },
    /// A plan's hook failed between runs; the runs before it are stored.
    #[error("{name} failed: {why}")]
    Hook {
        /// The hook.
        name: String,
        /// Why.
        why: String,
    },
    /// On a process other than the lead: the run failed, and the lead reports why.
    #[error("the run failed; the lead process reports why")]
    Peer {
        /// The lead's exit code.
        code: i32,
    },
}

impl RunError {
    /// What the user can do about it.
    pub fn hint(&self) -> Hint {
        match self {
            RunError::Spec(e) => e.hint(),
            RunError::Refused(e) => e.hint(),
            RunError::Target(e) => e.hint(),
            RunError::Store(e) => e.hint(),
            RunError::Failed { hint, .. } => hint.clone(),
            RunError::Peer { .. } => Hint::say("see the lead process's message"),
            RunError::Interrupted => Hint::say("run it again"),
            RunError::Open { hint, .. } => hint.clone(),
            RunError::Hook { .. } => Hint::say("check the target"),
        }
    }

    /// The documented exit code (README.md, "Exit codes").
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Failed { code, .. } | RunError::Peer { code } => *code,
            RunError::Interrupted => 130,
            RunError::Spec(_) | RunError::Refused(_) | RunError::Target(_) | RunError::Open { .. } => 2,
            RunError::Hook { .. } => 1,
            RunError::Store(e) => e.exit_code(),
        }
    }
}

/// Watches a run's live progress; returns the function that stops watching.
pub type Watch = dyn Fn(Arc<Progress>) -> Box<dyn FnOnce()>;

/// What only the lead process holds.
pub struct Lead<'a> {
    /// Where records go.
    pub store: &'a mut Store,
    /// The targets the run goes to, as the lead took them (of one kind): what the checks
    /// before a run look at.
    pub held: &'a mut [Box<dyn kinds::Lead>],
}

impl Lead<'_> {
    /// Whether the targets keep what runs wrote (`--keep`).
    fn keeps(&self) -> bool {
        self.held.first().is_some_and(|t| t.keeps())
    }

    /// The facts of where the run ran.
    fn environment(&self) -> env::Environment {
        self.held.first().map(|t| t.environment(self.held)).unwrap_or_default()
    }
}

impl From<kinds::Refused> for RunError {
    fn from(e: kinds::Refused) -> Self {
        match e {
            kinds::Refused::Target(e) => RunError::Target(e),
            kinds::Refused::Spec(e) => RunError::Spec(e),
            kinds::Refused::Engine(e) => RunError::Refused(e),
            kinds::Refused::Open { what, hint } => RunError::Open { what, hint },
        }
    }
}

/// How a run is filed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filing<'a> {
    /// Name within its group ("seq-file-per-task").
    pub name: Option<&'a str>,
    /// The group it belongs to, as the store minted it.
    pub group: Option<GroupId>,
    /// The name of the system measured (`--label`).
    pub label: Option<&'a str>,
    /// Stored as failed though it succeeded, until hooks judge it (a campaign's point).
    pub unjudged: bool,
}

impl Filing<'_> {
    /// Files `record` under this name, group and label.
    fn apply(&self, record: &mut RunRecord) {
        record.name = self.name.map(str::to_string);
        let number = |kinds: &[GroupKind]| self.group.filter(|g| kinds.contains(&g.kind)).map(|g| g.number);
        record.survey_id = number(&[GroupKind::Survey, GroupKind::Io500]);
        record.sweep_id = number(&[GroupKind::Sweep]);
        record.matrix_id = number(&[GroupKind::Matrix]);
        record.campaign_id = number(&[GroupKind::Campaign]);
        record.targets_id = number(&[GroupKind::Targets]);
        record.label = self.label.map(str::to_string);
    }
}

/// Settings shared by every run of one command.
pub struct Runner<'a, T: Team> {
    /// Who runs.
    pub team: &'a T,
    /// Tasks (threads) in each process.
    pub threads: usize,
    /// The targets, opened by every process at the same paths.
    pub site: Site,
    /// The lead process's store and target; `None` on the other processes.
    pub lead: Option<Lead<'a>>,
    /// The command line, stored with each run.
    pub command_line: String,
    /// Refuse runs that need more space than is free.
    pub space_check: bool,
    /// Called with the live progress of each run; returns a function that stops watching.
    pub watch: Option<&'a Watch>,
    /// Stops a run after its current transfers.
    pub cancel: Cancel,
}

/// A token unique to this run, stamped into verified data so that stale data is recognised.
fn run_token() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    mix(nanos, std::process::id() as u64)
}

/// The lead's decision before a run.
#[derive(Serialize, Deserialize)]
enum Verdict {
    Go { token: u64, drop_caches: bool, path_start: PathStart },
    Refused,
}

/// What the team agreed to run with ([`Verdict::Go`]).
struct Agreed {
    token: u64,
    drop_caches: bool,
    path_start: PathStart,
}

/// The lead's result after a run: the exit code every process returns (0 for success).
#[derive(Serialize, Deserialize)]
struct Outcome {
    code: i32,
}

impl<T: Team> Runner<'_, T> {
    /// Tasks in the whole team.
    pub fn team_size(&self) -> usize {
        self.team.processes() * self.threads
    }

    /// Tasks on the busiest node.
    pub fn per_node(&self) -> usize {
        per_node(self.team, self.threads)
    }

    /// The lead's preflight of `w` on its files `names`, as the whole team hears it: the token
    /// to stamp data with, whether the page cache is dropped and where a metadata run's item
    /// paths start, or the lead's refusal (to the others, a peer's).
    fn agree(&mut self, w: &Workload, names: &[String], warnings: &mut Vec<String>) -> Result<Agreed, RunError> {
        let mut refusal = None;
        let per_node = self.per_node();
        let verdict = self.lead.as_mut().map(|lead| match preflight(lead, w, names, self.space_check, per_node) {
            Ok(()) => {
                let drop_caches = w.drop_caches && cache::can_drop();
                if w.drop_caches && !drop_caches {
                    warnings.push(
                        "--drop-caches needs root: the page cache was not dropped, reads may come from memory".into(),
                    );
                }
                let (path_start, warning) = match &w.shape {
                    Shape::Meta(meta) => {
                        engine::path_start(meta, (0..self.site.len()).filter_map(|k| self.site.dir(k)))
                    }
                    Shape::Data(_) => (PathStart::default(), None),
                };
                warnings.extend(warning);
                Verdict::Go { token: w.signature.unwrap_or_else(run_token), drop_caches, path_start }
            }
            Err(e) => {
                refusal = Some(e);
                Verdict::Refused
            }
        });
        match share_value(self.team, verdict.as_ref()) {
            Verdict::Go { token, drop_caches, path_start } => Ok(Agreed { token, drop_caches, path_start }),
            Verdict::Refused => Err(refusal.unwrap_or(RunError::Peer { code: 2 })),
        }
    }

    /// Runs `w` (with `w.tasks` up to the team size). The files it creates stay registered in
    /// the target for clean-up by its owner, so that a survey can reuse them across runs.
    /// The lead gets the record; the other processes get `None`.
    pub fn run(&mut self, w: &Workload, filing: Filing) -> Result<Option<RunRecord>, RunError> {
        w.validate()?;
        check_engine(w)?;
        // A metadata run names its items as it goes, below one directory it claims.
        let names = w.data().map_or_else(Vec::new, |data| {
            data_files(data.access == Access::Shared, OffsetMap::new(data, w.tasks, w.seed).files())
        });
        let region = w.data().map_or(0, |data| OffsetMap::new(data, w.tasks, w.seed).file_size());
        let mut warnings = Vec::new();
        let Agreed { token, drop_caches, path_start } = self.agree(w, &names, &mut warnings)?;
        if self.site.paths().iter().any(|p| p.to_str().is_none()) {
            warnings.push("a target path is not valid UTF-8: it is stored with replacement characters".into());
        }
        let files = DataFiles { site: self.site.clone(), names, region };
        let facts = RunFacts {
            env: self.lead.as_ref().map(|lead| lead.environment()).unwrap_or_default(),
            command_line: self.command_line.clone(),
            started: now_unix(),
            hosts: self.team.hosts(),
            clock_uncertainty_ns: self.team.clock_uncertainty(),
        };
        // Should the process have to end at once, or be killed outright, the run is still
        // stored, as failed: by the signal path (the will) or by the janitor.
        let will = self.lead.as_ref().map(|lead| {
            let mut skeleton = RunRecord::assemble(w.clone(), Execution::default(), facts.clone());
            filing.apply(&mut skeleton);
            let duty = Duty::new(lead.store.path(), skeleton.clone());
            (will::arm(lead.store.path(), skeleton), janitor::arm(&duty))
        });
        let progress = Progress::new(self.threads);
        let stop = self.lead.as_ref().and(self.watch).map(|watch| watch(progress.clone()));
        let events = (self.lead.is_some() && !w.events.is_empty())
            .then(|| crate::events::start(&w.events, progress.clone(), self.cancel.clone()));
        let cancel = self.cancel.clone();
        let inputs = engine::RunInputs { w, files: &files, token, drop_caches, progress, cancel, path_start };
        let exec = engine::execute(self.team, self.threads, inputs);
        if let Some(stop) = stop {
            stop();
        }
        let events = events.map(crate::events::Scheduled::finish).unwrap_or_default();
        warnings.extend(crate::events::warnings(&events));
        // A will the signal path took: it stores the run while the process ends.
        let (will, watch) = will.unzip();
        let storing = will.map(will::Armed::revoke);
        let result = match (self.lead.as_mut(), exec) {
            (Some(_), Some(_)) if matches!(storing, Some(None)) => Some(Err(RunError::Peer { code: 130 })),
            (Some(lead), Some(exec)) => {
                let mut record = RunRecord::assemble(w.clone(), exec, facts);
                record.events = events;
                warnings.extend(widened_series(&record, w));
                let filed = file(lead, record, warnings, filing);
                if let Some(Some(storing)) = storing {
                    storing.done(match &filed {
                        Ok(r) => r.id,
                        Err(RunError::Failed { id, .. }) => Some(*id),
                        Err(_) => None,
                    });
                }
                Some(filed)
            }
            _ => None,
        };
        // Filed (or being filed by the signal path): the janitor's watch ends.
        drop(watch);
        let outcome = result.as_ref().map(|r| Outcome { code: r.as_ref().err().map_or(0, RunError::exit_code) });
        let code = share_value(self.team, outcome.as_ref()).code;
        match result {
            Some(r) => r.map(Some),
            None if code == 0 => Ok(None),
            None => Err(RunError::Peer { code }),
        }
    }
}

/// Says which phases' time series had to widen their intervals to stay bounded.
fn widened_series(record: &RunRecord, w: &Workload) -> Vec<String> {
    let asked = ((w.interval_secs * 1e9) as u64).max(crate::measure::MIN_INTERVAL_NS);
    record
        .phases
        .iter()
        .filter(|p| p.series.interval_ns > asked)
        .map(|p| {
            format!(
                "{} {}: time series intervals widened to {} s to stay within {} points",
                p.op.name(),
                p.iteration + 1,
                p.series.interval_ns as f64 / 1e9,
                crate::measure::MAX_SERIES_POINTS
            )
        })
        .collect()
}

/// On the lead: stores the record and decides success.
fn file(lead: &mut Lead, mut record: RunRecord, warnings: Vec<String>, filing: Filing) -> Result<RunRecord, RunError> {
    filing.apply(&mut record);
    record.warnings = warnings;
    let unjudged = filing.unjudged && record.status == Status::Ok;
    if unjudged {
        record.status = Status::Failed;
        record.error = Some(crate::store::campaigns::UNJUDGED.into());
    }
    let id = lead.store.save_or_spill(&record);
    if unjudged {
        (record.status, record.error) = (Status::Ok, None);
    }
    let id = id?;
    record.id = Some(id);
    if record.status == Status::Ok {
        return Ok(record);
    }
    let stale = record.phases.iter().filter_map(|p| p.verify.as_ref()).any(|v| v.stale > 0);
    let hint = match &record.failure_hint {
        Some(_) if record.interrupted && lead.keeps() => {
            Hint::say("the run is stored as failed and its files were kept; run it again")
        }
        Some(h) => h.clone(),
        None if stale => Hint::Because(
            "the files hold another run's data".into(),
            Box::new(Hint::Use(Setting::Ops, "write,read".into())),
        ),
        None => Hint::say("the storage returned other bytes than were written; check the file system and its devices"),
    };
    let code = if record.interrupted {
        130
    } else if record.bad_transfers() > 0 {
        3
    } else {
        1
    };
    Err(RunError::Failed { id, record: Box::new(record), hint, code })
}

/// Tasks on the busiest node of `team` with `threads` tasks in each process.
pub fn per_node<T: Team>(team: &T, threads: usize) -> usize {
    threads.saturating_mul(engine::placement::largest_node(&team.process_nodes()).max(1))
}

/// The checks of a workload that need no target: its rules, its engine's, and the memory it
/// plans to hold with `per_node` tasks on the busiest node against `available` bytes (a
/// quarter may be taken). A command makes them for every workload it will run before it
/// makes anything, so that a refusal stores nothing.
pub fn precheck(w: &Workload, per_node: usize, available: u64) -> Result<(), RunError> {
    w.validate()?;
    check_engine(w)?;
    let need = w.planned_memory(per_node);
    if need > available / 4 {
        return Err(SpecError::TooMuchMemory { need, available }.into());
    }
    Ok(())
}

/// The rules a data workload's engine puts on it (a metadata workload has none).
fn check_engine(w: &Workload) -> Result<(), SpecError> {
    w.data().map_or(Ok(()), |data| engine::backends::check(&w.ops, data))
}

/// Whether a metadata workload's tree is already in the target (kept by an earlier `--keep`
/// run, or made by an earlier run of the same command): its first task's tree is looked for.
pub fn meta_before(target: &Target, meta: &Meta) -> Before {
    let mut top = Vec::new();
    engine::tree::write_tree_name(meta.shared, 0, &mut top);
    match target.has_dir(&meta.root, &String::from_utf8_lossy(&top)) {
        true => Before::Tree,
        false => Before::Nothing,
    }
}

/// Refuses, on the lead, a metadata workload whose phases cannot run in their order from what
/// the target holds ([`crate::spec::meta::check_order`]).
pub fn check_meta_order(target: &Target, w: &Workload) -> Result<(), RunError> {
    match &w.shape {
        Shape::Meta(meta) => Ok(check_order(&w.ops, w.iterations, meta_before(target, meta))?),
        Shape::Data(_) => Ok(()),
    }
}

/// The lead's checks before a run: engine, memory, then the targets; the data files are
/// made (named in the manifest first) only when everything else passed.
fn preflight(
    lead: &mut Lead,
    w: &Workload,
    names: &[String],
    space_check: bool,
    per_node: usize,
) -> Result<(), RunError> {
    let data = match &w.shape {
        Shape::Data(data) => data,
        Shape::Meta(meta) => {
            let noun = lead.held.first().map_or("", |t| t.kind().noun);
            let Some(mut dirs) = lead.held.iter_mut().map(|t| t.as_dir()).collect::<Option<Vec<_>>>() else {
                return Err(SpecError::Invalid {
                    what: format!("a metadata workload makes files and directories, and the target is {noun}"),
                    hint: Hint::Use(Setting::Dir, "a directory of the file system to measure".into()),
                }
                .into());
            };
            precheck(w, per_node, env::memory_available())?;
            return meta_preflight(&mut dirs, w, meta, space_check);
        }
    };
    let engine = engine::backends::entry(&data.engine);
    engine::backends::probe(&data.engine, data.iodepth as usize)
        .map_err(|why| RunError::Refused(EngineError::EngineUnavailable { engine: engine.name, why }))?;
    precheck(w, per_node, env::memory_available())?;
    if !engine.caps.storage {
        // No file is opened, made or read: nothing to check in the target.
        return Ok(());
    }
    // What the engine takes and what the target gives, before anything is made.
    if let Some(kind) = lead.held.first().map(|t| t.kind()) {
        if engine.takes != kind.handles {
            let all = engine::backends::ENGINES.iter().chain(engine::backends::OBJECT_ENGINES);
            let fix = all.filter(|e| e.caps.storage && e.takes == kind.handles);
            return Err(SpecError::Engine {
                why: format!(
                    "the {} engine moves data through {}, and the target is {}, which gives {}",
                    engine.name,
                    engine.takes.name(),
                    kind.noun,
                    kind.handles.name()
                ),
                fix: fix.map(|e| e.name).collect::<Vec<_>>().join(" or "),
            }
            .into());
        }
    }
    let writes = w.ops.iter().any(|o| o.direction() != Op::Read);
    let file_size = OffsetMap::new(data, w.tasks, w.seed).file_size();
    let n = lead.held.len();
    for (k, target) in lead.held.iter_mut().enumerate() {
        let mine = on_target(names, n, k);
        let run = DataRun { w, data, names: &mine, writes, space_check, file_size, engine };
        target.check_data(&run)?;
    }
    Ok(())
}

/// The lead's checks of the targets of a metadata run: its phases' order, the bases
/// writable, their space; then the directory everything goes below is claimed in each.
fn meta_preflight(targets: &mut [&mut Target], w: &Workload, meta: &Meta, space_check: bool) -> Result<(), RunError> {
    let Some(first) = targets.first() else { return Ok(()) };
    check_meta_order(first, w)?;
    for target in targets.iter() {
        if !target.writable() {
            return Err(TargetError::ReadOnly(target.dir().path().into()).into());
        }
    }
    if space_check {
        // Task t works in base t mod bases: the first bases take one task more.
        let bases = targets.len();
        let tasks_in = |k: usize| ((w.tasks + bases - 1 - k) / bases) as u64;
        for (k, target) in targets.iter().enumerate() {
            target.check_meta_space(meta, &w.ops, tasks_in(k))?;
        }
    }
    // Everything the run makes goes below one directory in each base, named in its
    // manifest first.
    for target in targets.iter_mut() {
        target.claim_dir(&meta.root)?;
    }
    Ok(())
}
