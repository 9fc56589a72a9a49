//! `train` and `checkpoint`: MLPerf Storage's training and checkpoint I/O ([`crate::train`])
//! as studies, played through a session as every other kind is, so that what ends one early
//! (a signal, a full disk, an I/O error, a lost process) files its run as failed and removes
//! its files by the same code: the session's clean-up, the run's will and the janitor.

use super::play::{open, Context, Observer, Outcome};
use super::{Error, Kind, TargetArgs};
use crate::janitor::{self, Duty};
use crate::record::{RunRecord, Status};
use crate::runner::RunError;
use crate::session::{LeadSide, Place, Session};
use crate::spec::Hint;
use crate::store::{will, Store};
use crate::target::dir::Dir;
use crate::team::Team;
use crate::train::checkpoint::{self as ckpt, Checkpoints, Llama};
use crate::train::emulate::{self, Throttle};
use crate::train::record::{self as rec, summarize};
use crate::train::{Accelerator, Model, Overrides, Settings, TrainError};
use crate::units::{now_unix, size_arg};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The settings of `iosurvey train`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct TrainArgs {
    /// Directory of the data set: empty, or holding only iosurvey's files (a missing leaf is
    /// made).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The MLPerf Storage workload whose preset to start from.
    #[arg(long, value_enum)]
    pub workload: Model,
    /// The emulated accelerator (sets the compute time per step).
    #[arg(long, value_enum, default_value = "h100")]
    pub accelerator: Accelerator,
    /// Emulated accelerators in each process (each a rank with its own readers); under MPI,
    /// ranks x this.
    #[arg(long, default_value_t = 1)]
    pub accelerators: usize,
    /// Write the data set first (else it must be there, kept by an earlier --generate --keep).
    #[arg(long)]
    pub generate: bool,
    /// A rehearsal at 1/N of the sizing rule's data set (said to be one wherever shown).
    #[arg(long, value_name = "1/N", value_parser = scale_arg)]
    pub scale: Option<u64>,
    /// The preset's fields the user set.
    #[command(flatten)]
    #[serde(flatten)]
    pub overrides: Overrides,
    /// Epochs.
    #[arg(long, default_value_t = 1)]
    pub epochs: u32,
    /// Seed of the data and the shuffles.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// O_DIRECT reads (DLIO's odirect).
    #[arg(long)]
    pub direct: bool,
    /// sync and drop the page cache before the first epoch (root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Find the most accelerators that pass: doubling, then bisecting; each probe repeated
    /// until its AU interval is clear of the threshold or --probe-runs are spent.
    #[arg(long)]
    pub find_max: bool,
    /// The most accelerators --find-max tries in each process (the data set is sized for
    /// these); under MPI, processes x this.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_accelerators: usize,
    /// Runs per probe at most.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub probe_runs: u32,
    /// Caps the reads' aggregate rate (bytes per second): a planted limit for tests.
    #[arg(long, value_parser = size_arg, hide = true)]
    pub throttle: Option<u64>,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// The settings of `iosurvey checkpoint`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct CheckpointArgs {
    /// Directory of the checkpoints: empty, or holding only iosurvey's files (a missing leaf
    /// is made).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The model: 14 bytes per parameter, sharded evenly over the ranks.
    #[arg(long, value_enum)]
    pub model: Llama,
    /// Ranks (threads) in each process the model's state is sharded over, each writing its
    /// own files; under MPI, processes x this.
    #[arg(long, default_value_t = 8)]
    pub ranks: usize,
    /// Checkpoints written, with --compute between them (0: read those an earlier run kept
    /// here, on this run's ranks, as mlpstorage's num_checkpoints_write=0).
    #[arg(long, default_value_t = 10, alias = "num-checkpoints-write")]
    pub checkpoints: u32,
    /// Checkpoints read back (0: none; keep them with --keep for a later run to read).
    #[arg(long, default_value_t = 10, alias = "num-checkpoints-read")]
    pub reads: u32,
    /// Compute between checkpoints, seconds.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub compute: f64,
    /// Bytes per write or read call.
    #[arg(long, value_parser = size_arg, default_value = "16m")]
    pub transfer: u64,
    /// Rank r reads the shard rank (r + N) mod ranks wrote (of a kept checkpoint on other
    /// ranks: shard j is read by rank (j - N) mod ranks).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub shift: usize,
    /// A rehearsal at 1/N of the model's size (said to be one wherever shown).
    #[arg(long, value_name = "1/N", value_parser = scale_arg)]
    pub scale: Option<u64>,
    /// Never drop the page cache before the reads (else dropped, as root, when the data is
    /// under 3x RAM).
    #[arg(long)]
    pub no_drop_caches: bool,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `1/N`.
fn scale_arg(text: &str) -> Result<u64, super::hint::Refusal> {
    text.strip_prefix("1/")
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| (1..=1 << 40).contains(&n))
        .ok_or_else(|| super::hint::Refusal::say(format!("'{text}' is not a scale"), "give 1/N, e.g. --scale 1/1000"))
}

impl From<TrainError> for Error {
    fn from(e: TrainError) -> Self {
        match e {
            TrainError::Target(t) => RunError::Target(t).into(),
            TrainError::Refused { what, hint } => Error::refused(what, hint),
            TrainError::Interrupted => Error::new(Kind::Interrupted, "interrupted", Hint::say("run it again")),
            e @ TrainError::Io { .. } => Error::new(Kind::Failed, &e, Hint::Say(e.hint())),
        }
    }
}

impl TrainArgs {
    /// Refuses, before anything is made, settings that cannot run.
    pub fn validate(&self) -> Result<(), Error> {
        self.sizing((1, crate::env::ram_bytes())).map(drop)
    }

    /// The settings of a run of `accelerators` with `over`, on clients of `ram` bytes in all.
    fn resolve(&self, accelerators: usize, over: &Overrides, ram: u64) -> Result<Settings, Error> {
        let s = Settings::resolve(
            (self.workload, self.accelerator, accelerators),
            over,
            (ram, self.scale),
            (self.epochs, self.seed, self.direct),
        )?;
        if s.direct && s.format == crate::train::format::Format::Tfrecord && s.transfer % 4096 != 0 {
            return Err(Error::refused(
                format!("--direct needs --transfer in whole 4 KiB blocks, not {}", s.transfer),
                "give e.g. --transfer 256k",
            ));
        }
        Ok(s)
    }

    /// The data set's settings (sized for the most accelerators a run takes) and the
    /// overrides every run then takes, so that all of them read the same data set; every
    /// setting checked; `processes` run `--accelerators` each, on clients of `ram` bytes in all.
    fn sizing(&self, (processes, ram): (usize, u64)) -> Result<(Settings, Overrides), Error> {
        if self.find_max && (self.max_accelerators == 0 || self.probe_runs == 0) {
            return Err(Error::refused(
                "--max-accelerators and --probe-runs must be at least 1",
                "give each a positive number",
            ));
        }
        let most = if self.find_max { self.max_accelerators } else { self.accelerators } * processes;
        let sized = self.resolve(most, &self.overrides, ram)?;
        let over = Overrides {
            files: Some(sized.files),
            steps: Some(self.overrides.steps.unwrap_or(sized.steps)),
            ..self.overrides.clone()
        };
        if !self.find_max {
            self.resolve(self.accelerators * processes, &over, ram)?;
        }
        Ok((sized, over))
    }
}

impl CheckpointArgs {
    /// The study these settings ask for, on clients of `ram_bytes`, `processes` of them
    /// running `--ranks` each.
    pub fn checkpoints(&self, ram_bytes: u64, processes: usize) -> Checkpoints {
        Checkpoints {
            model: self.model,
            ranks: self.ranks * processes,
            shards: self.ranks * processes,
            writes: self.checkpoints,
            reads: self.reads,
            compute: self.compute,
            transfer: self.transfer,
            shift: self.shift,
            scale: self.scale,
            ram_bytes,
        }
    }

    /// Refuses, before anything is made, settings that cannot run.
    pub fn validate(&self) -> Result<(), Error> {
        // The shift is checked against every process's ranks when the study plays.
        Ok(Checkpoints { shift: 0, ..self.checkpoints(0, 1) }.check()?)
    }
}

/// A run in progress on the lead: its will and the janitor's watch armed from before its
/// first byte, so that a process ended at once (a second signal, a killed peer, SIGKILL)
/// still has the run stored as failed.
struct Pending {
    skeleton: RunRecord,
    will: will::Armed,
    watch: janitor::Watch,
}

impl Pending {
    fn arm(store: &Path, skeleton: RunRecord) -> Pending {
        let will = will::arm(store, skeleton.clone());
        let watch = janitor::arm(&Duty::new(store, skeleton.clone()));
        Pending { skeleton, will, watch }
    }

    /// Files what the run came to: its record, or its skeleton marked failed with why. A
    /// refusal (found before anything of the run was written) is not stored. Gives the
    /// stored record, if any, and the failure.
    fn file(self, store: &mut Store, result: Result<RunRecord, TrainError>, keeps: bool) -> Filed {
        let Some(storing) = self.will.revoke() else {
            // The signal path took the will: it stores the run while the process ends.
            return (None, Some(Error::silent(Kind::Interrupted)));
        };
        let record = match result {
            Ok(r) => r,
            Err(e @ TrainError::Refused { .. }) => {
                storing.done(None);
                return (None, Some(e.into()));
            }
            Err(e) => {
                let interrupted = matches!(e, TrainError::Interrupted);
                let hint = match (interrupted, keeps) {
                    (true, true) => Hint::say("the run is stored as failed and its files were kept; run it again"),
                    (true, false) => Hint::say("run it again"),
                    (false, _) => Hint::Say(e.hint()),
                };
                let why = if interrupted { "interrupted by a signal".to_string() } else { e.to_string() };
                RunRecord {
                    status: Status::Failed,
                    error: Some(why),
                    interrupted,
                    failure_hint: Some(hint),
                    ..self.skeleton
                }
            }
        };
        let id = store.save_or_spill(&record);
        storing.done(id.as_ref().ok().copied());
        // Filed: the janitor's watch ends.
        drop(self.watch);
        let id = match id {
            Ok(id) => id,
            Err(e) => return (None, Some(e.into())),
        };
        let record = RunRecord { id: Some(id), ..record };
        if record.status == Status::Ok {
            return (Some(record), None);
        }
        let failed = RunError::Failed {
            id,
            hint: record.failure_hint.clone().unwrap_or(Hint::say("run it again")),
            code: if record.interrupted { 130 } else { 1 },
            record: Box::new(record.clone()),
        };
        (Some(record), Some(failed.into()))
    }
}

/// A run's stored record, if it was stored, and what failed.
type Filed = (Option<RunRecord>, Option<Error>);

/// What the lead's part of a study came to.
#[derive(Default)]
struct Lead {
    records: Vec<RunRecord>,
    notes: Vec<String>,
    failure: Option<Error>,
}

impl Lead {
    /// Keeps a filed run; whether the study goes on.
    fn keep(&mut self, (record, failure): Filed) -> bool {
        self.records.extend(record);
        let ok = failure.is_none();
        if self.failure.is_none() {
            self.failure = failure;
        }
        ok
    }
}

/// The facts every run is filed with: the target's environment, the command line, the start.
fn facts(ctx: &Context, side: &mut LeadSide) -> (crate::env::Environment, String, i64) {
    (crate::env::collect(side.target().dir().path()), ctx.command_line.clone(), now_unix())
}

/// A training run's record before it measured anything, on the lead.
fn train_skeleton<T: Team>(ctx: &Context, (a, team): (&TrainArgs, &T), s: &Settings, side: &mut LeadSide) -> RunRecord {
    let skeleton = rec::train_skeleton(s, facts(ctx, side));
    placed(skeleton, &a.target, team)
}

/// A study's record with the run's label, the host of every node the team ran on (not only
/// the lead's) and how far apart their clocks may be.
fn placed<T: Team>(r: RunRecord, target: &TargetArgs, team: &T) -> RunRecord {
    RunRecord { label: target.label.clone(), hosts: team.hosts(), clock_uncertainty_ns: team.clock_uncertainty(), ..r }
}

/// Opens a study's session in `dir`, and its directory on every process.
fn open_in<'t, T: Team>(
    ctx: &Context<'t>,
    team: &'t T,
    (dir, target): (&Path, &TargetArgs),
    threads: usize,
    observer: &mut dyn Observer,
) -> Result<(Session<'t, T>, Arc<Dir>), Error> {
    let place = Place::Dir { dir: dir.to_path_buf(), more: Vec::new() };
    let session = open(ctx, team, (place, target), (threads, Vec::new()), observer)?;
    // The same open directory (a duplicated descriptor), never the path opened again.
    match session.site().dir(0).map(Dir::try_clone) {
        Some(Ok(dir)) => Ok((session, Arc::new(dir))),
        Some(Err(e)) => Err(Error::failed(e, "see the error above; check the target directory")),
        None => Err(Error::new(Kind::Internal, "a study in a directory has none", Hint::say("report this as a bug"))),
    }
}

/// On the lead, the first run's will armed with its `skeleton`, then `prepare` (the files
/// named, a data set written): a failure there files the run. Whether every process goes on,
/// and on the lead the armed run with what `prepare` gave.
fn begin<T: Team, X>(
    session: &mut Session<T>,
    (ctx, lead): (&Context, &mut Lead),
    skeleton: impl FnOnce(&mut LeadSide) -> RunRecord,
    prepare: impl FnOnce(&mut LeadSide) -> Result<X, TrainError>,
) -> (bool, Option<(Pending, X)>) {
    let mut started = None;
    let ready = session.decide(|side| {
        let armed = Pending::arm(&ctx.store, skeleton(side));
        match prepare(side) {
            Ok(x) => {
                started = Some((armed, x));
                true
            }
            Err(e) => {
                let keeps = side.target().keeps();
                lead.keep(armed.file(side.store(), Err(e), keeps));
                false
            }
        }
    });
    (ready, started)
}

/// Plays a training study: the data set generated (or checked) by the lead, then one run, or
/// the `--find-max` probes, each stored; as a campaign's point, in the point's own group.
/// Under MPI every process runs `--accelerators` ranks, each reading the block of samples its
/// team rank owns.
pub fn play_train<T: Team>(
    ctx: &Context,
    a: &TrainArgs,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    let group = super::point_group::begin(ctx, team, "train")?;
    group.finish(ctx, team, train_runs(ctx, a, team, observer))
}

fn train_runs<T: Team>(ctx: &Context, a: &TrainArgs, team: &T, observer: &mut dyn Observer) -> Result<Outcome, Error> {
    let ram = clients_ram(team);
    let (sized, over) = a.sizing((team.processes(), ram))?;
    if a.drop_caches && !crate::target::cache::can_drop() {
        return Err(Error::refused("--drop-caches needs root", "run as root, or leave --drop-caches out"));
    }
    let first = a.resolve(if a.find_max { 1 } else { a.accelerators } * team.processes(), &over, ram)?;
    let (mut session, dir) = open_in(ctx, team, (&a.dir, &a.target), a.accelerators, observer)?;
    let mut lead = Lead::default();
    // The data set is written (or checked) under the first run's will, so a stop while
    // writing is filed too.
    let (ready, started) = begin(
        &mut session,
        (ctx, &mut lead),
        |side| train_skeleton(ctx, (a, team), &first, side),
        |side| prepare(ctx, a, &sized, side),
    );
    let (pending, dropped) = started.map_or((None, false), |(p, d)| (Some(p), d));
    if ready {
        let throttle = a.throttle.map(Throttle::new);
        let mut runs = Runs {
            ctx,
            a,
            team,
            session: &mut session,
            dir: &dir,
            throttle: throttle.as_ref(),
            dropped,
            lead: &mut lead,
            pending,
            first: true,
            ram,
        };
        if a.find_max {
            find_max(&mut runs, &over);
        } else {
            runs.once(&first);
        }
    }
    drop(session);
    let failure = match (lead.failure, ready, team.process()) {
        (Some(e), _, _) => Some(e),
        // The lead filed and said why; the others end with its word.
        (None, false, p) if p > 0 => Some(Error::silent(Kind::Failed)),
        (f, _, _) => f,
    };
    Ok(Outcome { records: lead.records, group: None, notes: lead.notes, failure, made: super::play::Made::Runs })
}

/// The RAM of the clients, every node's once (read by the first process on it), summed over
/// the team: what the data set must be 5 times, so that no client's page cache holds its part.
/// Every process gets the same sum, so that each sizes the same data set.
fn clients_ram<T: Team>(team: &T) -> u64 {
    let nodes = team.process_nodes();
    let me = team.process();
    let first_on_node = nodes.iter().position(|n| Some(n) == nodes.get(me)) == Some(me);
    let mine = if first_on_node { crate::env::ram_bytes() } else { 0 };
    match team.processes() {
        1 => mine,
        _ => team.members(1).pop().map_or(mine, |m| crate::team::Member::sum(&m, mine)),
    }
}

/// On the lead: the data set written, or checked, and the page cache dropped if asked;
/// whether it was dropped.
fn prepare(ctx: &Context, a: &TrainArgs, sized: &Settings, side: &mut LeadSide) -> Result<bool, TrainError> {
    match a.generate {
        true => emulate::generate(sized, side.target(), generators(), &ctx.cancel).map(drop)?,
        false => emulate::check_existing(sized, side.target())?,
    }
    if !a.drop_caches {
        return Ok(false);
    }
    crate::target::cache::drop_caches()
        .map(|()| true)
        .map_err(|e| TrainError::Io { what: "drop the page cache".into(), source: e })
}

/// Threads that write the data set.
fn generators() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).min(8)
}

/// The runs of a training study, on every process.
struct Runs<'a, 'c, 't, T: Team> {
    ctx: &'a Context<'c>,
    a: &'a TrainArgs,
    team: &'t T,
    session: &'a mut Session<'t, T>,
    dir: &'a Dir,
    throttle: Option<&'a Throttle>,
    dropped: bool,
    lead: &'a mut Lead,
    /// The first run's, armed before the data set was written (on the lead).
    pending: Option<Pending>,
    /// The next run is the first.
    first: bool,
    /// The clients' RAM, summed.
    ram: u64,
}

impl<T: Team> Runs<'_, '_, '_, T> {
    /// One run of `s` (its accelerators over every process), filed; on every process its AU
    /// and pass, or `None` when it failed (the study then ends).
    fn once(&mut self, s: &Settings) -> Option<(f64, bool)> {
        let (ctx, a) = (self.ctx, self.a);
        // Whether this run was armed before the data set was written is the same on every
        // process (only the lead holds the will): arming is collective.
        let pending = match std::mem::take(&mut self.first) {
            true => self.pending.take(),
            false => self
                .session
                .on_lead(|side| Ok(Pending::arm(&ctx.store, train_skeleton(ctx, (a, self.team), s, side))))
                .ok()
                .flatten(),
        };
        let members = self.team.members(s.accelerators / self.team.processes());
        let measured = emulate::train(s, self.dir, members, self.throttle, &ctx.cancel);
        let dropped = self.dropped;
        let throttled = self.throttle.is_some();
        let team = self.team;
        let lead = &mut *self.lead;
        let figures: Option<(f64, bool)> = self.session.decide(|side| {
            let pending = pending?;
            let (env, command_line, _) = facts(ctx, side);
            let started = pending.skeleton.started;
            let mut figures = None;
            let record = measured.and_then(|o| {
                let o = o.ok_or(TrainError::Interrupted)?;
                let sum = summarize(s, &o);
                let mut warnings = rec::flags(s, &o, &sum, env.cpu_count);
                if throttled {
                    warnings.push("reads throttled (--throttle): a planted limit, not the storage's".into());
                }
                figures = Some((sum.au, sum.pass));
                let r = rec::run_record(s, &o, (env, command_line, started), (dropped, warnings));
                Ok(placed(r, &a.target, team))
            });
            let keeps = side.target().keeps();
            lead.keep(pending.file(side.store(), record, keeps)).then_some(figures).flatten()
        });
        if figures.is_none() && self.team.process() > 0 {
            // The lead filed the run and says why.
            self.lead.failure.get_or_insert(Error::silent(Kind::Failed));
        }
        figures
    }

    /// Whether `k` accelerators in each process pass: runs repeated until the AU's 95%
    /// interval is clear of the threshold, or the runs are spent (then the mean decides);
    /// `None` when a run failed. Every process takes the same turns: each run's AU is the
    /// lead's, shared.
    fn probe(&mut self, over: &Overrides, k: usize) -> Option<bool> {
        let s = match self.a.resolve(k * self.team.processes(), over, self.ram) {
            Ok(s) => s,
            Err(e) => return self.lead.keep((None, Some(e))).then_some(false),
        };
        let mut aus = Vec::new();
        for _ in 0..self.a.probe_runs {
            let (au, _) = self.once(&s)?;
            aus.push(au);
            if let Some(i) = crate::stats::mean_interval(&aus) {
                if i.lo >= s.au {
                    return Some(true);
                }
                if i.hi < s.au {
                    return Some(false);
                }
            }
        }
        Some(aus.iter().sum::<f64>() / aus.len() as f64 >= s.au)
    }
}

/// The most accelerators in each process that pass: doubling until a probe fails, then
/// bisecting between the last pass and the first fail; said as a note (under MPI, per host
/// and in all too).
fn find_max<T: Team>(runs: &mut Runs<T>, over: &Overrides) {
    let most = runs.a.max_accelerators;
    let (mut pass, mut fail) = (0usize, None::<usize>);
    let mut k = 1;
    while k <= most {
        match runs.probe(over, k) {
            None => return,
            Some(true) => {
                pass = k;
                k *= 2;
            }
            Some(false) => {
                fail = Some(k);
                break;
            }
        }
    }
    let mut hi = fail.unwrap_or(most + 1);
    if fail.is_none() && pass < most {
        match runs.probe(over, most) {
            None => return,
            Some(true) => pass = most,
            Some(false) => hi = most,
        }
    }
    while hi - pass > 1 {
        let mid = pass + (hi - pass) / 2;
        match runs.probe(over, mid) {
            None => return,
            Some(true) => pass = mid,
            Some(false) => hi = mid,
        }
    }
    let tried = if pass == most { format!(" (the most tried: --max-accelerators {most})") } else { String::new() };
    let nodes = runs.team.process_nodes();
    let note = match nodes.len() {
        1 => format!("most accelerators that pass: {pass}{tried}"),
        n => format!("most accelerators that pass: {pass} per process{tried}, {}", per_host(pass, &nodes, n)),
    };
    // The lead says it, once for the launch.
    if runs.team.process() == 0 {
        runs.lead.notes.push(note);
    }
}

/// `k` accelerators in each of the processes on `nodes` (each process's node), per host and
/// in all.
fn per_host(k: usize, nodes: &[u32], processes: usize) -> String {
    let mut on: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    for n in nodes {
        *on.entry(*n).or_default() += k;
    }
    let (least, most) = (on.values().min().copied().unwrap_or(0), on.values().max().copied().unwrap_or(0));
    let hosts = on.len();
    let each = if least == most { format!("{most}") } else { format!("{least} to {most}") };
    format!(
        "{each} per host, {} in all ({processes} processes on {hosts} host{})",
        k * processes,
        if hosts == 1 { "" } else { "s" }
    )
}

/// Plays a checkpoint study: written, the page cache dropped by the 3x rule, read back, one
/// run stored; as a campaign's point, in the point's own group. Under MPI every process runs
/// `--ranks` ranks; a shift makes a rank read a shard another process wrote.
pub fn play_checkpoint<T: Team>(
    ctx: &Context,
    a: &CheckpointArgs,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    let group = super::point_group::begin(ctx, team, "checkpoint")?;
    group.finish(ctx, team, checkpoint_run(ctx, a, team, observer))
}

fn checkpoint_run<T: Team>(
    ctx: &Context,
    a: &CheckpointArgs,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    let c = a.checkpoints(crate::env::ram_bytes(), team.processes());
    c.check()?;
    let (mut session, dir) = open_in(ctx, team, (&a.dir, &a.target), a.ranks, observer)?;
    let mut lead = Lead::default();
    let skeleton = |side: &mut LeadSide| {
        let r = rec::checkpoint_skeleton(&c, facts(ctx, side));
        placed(r, &a.target, team)
    };
    let (ready, started) = begin(&mut session, (ctx, &mut lead), skeleton, |side| ckpt::prepare(&c, side.target()));
    // The shards a run that only reads found, on every process.
    let shards = session.decide(|_| started.as_ref().map_or(c.shards, |(_, n)| *n));
    let c = ckpt::Checkpoints { shards, ..c };
    let pending = started.map(|(p, _)| p);
    if ready {
        let measured = ckpt::run(&c, &dir, team.members(a.ranks), !a.no_drop_caches, &ctx.cancel);
        let filed = session.decide(|side| {
            let Some(pending) = pending else { return false };
            let (env, command_line, _) = facts(ctx, side);
            let started = pending.skeleton.started;
            let record = measured.and_then(|o| {
                let o = o.ok_or(TrainError::Interrupted)?;
                let r = rec::checkpoint_record(&c, &o, (env, command_line, started), Vec::new());
                Ok(placed(r, &a.target, team))
            });
            let keeps = side.target().keeps();
            lead.keep(pending.file(side.store(), record, keeps))
        });
        if !filed && team.process() > 0 {
            lead.failure.get_or_insert(Error::silent(Kind::Failed));
        }
    } else if team.process() > 0 {
        lead.failure.get_or_insert(Error::silent(Kind::Failed));
    }
    drop(session);
    Ok(Outcome {
        records: lead.records,
        group: None,
        notes: Vec::new(),
        failure: lead.failure,
        made: super::play::Made::Runs,
    })
}
