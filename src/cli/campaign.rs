//! `iosurvey campaign plan|run|status|emit` and `report --campaign`: the front of the
//! library's campaign room. It hands the runner a player (the library's, with this command's
//! progress), prints what the runner and `campaign::text` say, and writes what
//! `campaign::jobs` and `report::campaign` make, as every output is written.

use super::Cli;
use iosurvey::campaign::ask::{keep, launch_fits, CampaignCommand, CampaignFileArgs, Only, Scale};
use iosurvey::campaign::batch::System;
use iosurvey::campaign::points::{asked_points, points, Launch};
use iosurvey::campaign::read::{read, read_placed, resolve};
use iosurvey::campaign::runner::Runner;
use iosurvey::campaign::{self, jobs, Campaign, Point};
use iosurvey::store::Store;
use iosurvey::study::play::{Context, Outcome};
use iosurvey::study::{Error, Study};
use iosurvey::team::Team;
use std::collections::HashMap;
use std::path::Path;

/// `campaign plan|run|status|emit`.
pub(super) fn command<T: Team>(cli: &Cli, c: &CampaignCommand, team: &T) -> Result<(), Error> {
    match c {
        CampaignCommand::Plan { file: a, calibrate } => plan(cli, a, *calibrate, team),
        CampaignCommand::Run(a) => run(cli, a, team),
        CampaignCommand::Status { which, scale } => status(cli, which, *scale, team),
        CampaignCommand::Emit { file, slurm, lsf, pbs } => {
            let (system, dir) = match (slurm, lsf, pbs) {
                (Some(d), _, _) => (System::Slurm, d),
                (_, Some(d), _) => (System::Lsf, d),
                (_, _, Some(d)) => (System::Pbs, d),
                // clap requires one of them.
                _ => unreachable!("campaign emit without a batch system"),
            };
            emit(cli, file, system, dir, team)
        }
    }
}

/// `campaign plan FILE`: every point in order, its hooks, refusals and estimates.
fn plan<T: Team>(cli: &Cli, a: &CampaignFileArgs, calibrate: bool, team: &T) -> Result<(), Error> {
    let (c, _placed) = read_placed(&a.file, a.root.as_deref())?;
    let only = Only::merged(&a.only);
    let all = keep(&c, asked_points(&c, team, a.scale.map(|Scale(n)| n))?, only.as_ref(), Some(Launch::of(team)))?;
    let store = match (team.process(), cli.db.exists()) {
        (0, true) => Some(Store::open_existing(&cli.db)?),
        _ => None,
    };
    let calibrated = match calibrate {
        true => runner(cli, &c, all.clone(), a.scale).calibrate(team, &mut Plays { cli, team })?,
        false => HashMap::new(),
    };
    if team.process() == 0 {
        out!("{}", campaign::text::plan(&c, &all, store.as_ref(), &calibrated, a.scale)?);
    }
    Ok(())
}

/// `campaign run FILE`.
fn run<T: Team>(cli: &Cli, a: &CampaignFileArgs, team: &T) -> Result<(), Error> {
    let (c, _placed) = read_placed(&a.file, a.root.as_deref())?;
    let (launch, only) = (Launch::of(team), Only::merged(&a.only));
    launch_fits(&c, only.as_ref(), launch)?;
    let all = keep(&c, asked_points(&c, team, a.scale.map(|Scale(n)| n))?, only.as_ref(), Some(launch))?;
    super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut heard = Lines { quiet: cli.quiet };
    runner(cli, &c, all, a.scale).run(team, &mut Plays { cli, team }, &mut heard)?;
    Ok(())
}

/// The library's runner of `c`'s points `all`, in this command's store, stopped by its
/// signal.
fn runner<'c>(cli: &Cli, c: &'c Campaign, all: Vec<Point>, scale: Option<Scale>) -> Runner<'c> {
    Runner {
        campaign: c,
        points: all,
        store: cli.db.clone(),
        scale: scale.map(|Scale(n)| n),
        cancel: super::CANCEL.clone(),
        leftovers: super::LEFTOVERS.clone(),
        command_line: super::opening::command_line(),
    }
}

/// The campaign's lines on stderr, unless quiet.
struct Lines {
    quiet: bool,
}

impl campaign::runner::Heard for Lines {
    fn say(&mut self, line: &str) {
        if !self.quiet {
            say!("iosurvey: {line}");
        }
    }
}

/// The command line's player of a campaign's points: the library plays every kind, with this
/// command's progress bar.
struct Plays<'a, T: Team> {
    cli: &'a Cli,
    team: &'a T,
}

impl<T: Team> campaign::runner::Player for Plays<'_, T> {
    fn play(&mut self, study: &Study, ctx: &Context) -> Result<Outcome, Error> {
        use std::io::IsTerminal;
        // The point's live rate under the campaign's line, on a terminal; a calibration's
        // run, in its scratch store, draws none (the plan is printed after it).
        let watch = (!self.cli.quiet && ctx.store == self.cli.db && std::io::stderr().is_terminal())
            .then_some(&super::progress::watch as &iosurvey::runner::Watch);
        let context = Context {
            store: ctx.store.clone(),
            command_line: ctx.command_line.clone(),
            cancel: ctx.cancel.clone(),
            leftovers: ctx.leftovers.clone(),
            watch,
            within: ctx.within.clone(),
        };
        iosurvey::study::play(&context, study, self.team, &mut Warnings)
    }
}

/// A campaign point's ear: its warnings said; its steps are the campaign's to say.
struct Warnings;

impl iosurvey::study::Observer for Warnings {
    fn warning(&mut self, line: &str) {
        say!("iosurvey: warning: {line}");
    }

    fn opening(&mut self) {
        // From here a signal stops the study cleanly instead of ending the process.
        super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `campaign status FILE|cN`: per study and target, points stored whole, failed, to run.
pub(super) fn status<T: Team>(cli: &Cli, which: &str, scale: Option<Scale>, team: &T) -> Result<(), Error> {
    let store = Store::open_existing(&cli.db)?;
    // A version whose command is gone is said as it ended; a store status may not write
    // is read as it is.
    let _ = store.settle_abandoned_campaigns();
    let (c, stored_scale) = resolved(&store, which, team)?;
    let all = points(&c, team, scale.or(stored_scale).map(|Scale(n)| n))?;
    if team.process() == 0 {
        out!("{}", campaign::text::status(&store, &c, &all)?);
    }
    Ok(())
}

/// The campaign `which` names and the scale a stored version ran at; the keys its stored text
/// holds that this version skipped are said once, by the lead.
fn resolved<T: Team>(store: &Store, which: &str, team: &T) -> Result<(Campaign, Option<Scale>), Error> {
    let r = resolve(store, which)?;
    if let (Some(line), 0) = (&r.warning, team.process()) {
        say!("iosurvey: warning: {line}");
    }
    Ok((r.campaign, r.scale))
}

/// `report --campaign cN`: the campaign's document, written to `output`; the line that says
/// so.
pub(super) fn report<T: Team>(
    cli: &Cli,
    which: &str,
    (output, format, units): (&Path, iosurvey::report::Format, iosurvey::report::units::Units),
    reference: Option<&str>,
    team: &T,
) -> Result<String, Error> {
    // A name that is no published system is refused before anything is read.
    if let Some(name) = reference {
        iosurvey::analysis::reference::beside(name, &[])
            .map_err(|why| Error::refused(why, "see iosurvey report --reference list"))?;
    }
    super::output::check(output, &cli.db, "-o")?;
    let store = Store::open_existing(&cli.db)?;
    let (c, scale) = resolved(&store, which, team)?;
    let all = points(&c, team, scale.map(|Scale(n)| n))?;
    let version = iosurvey::report::campaign::Version { campaign: &c, scale, points: &all };
    let (blocks, counted) = iosurvey::report::campaign::blocks(&store, &cli.db, &version, reference, units)?;
    super::commands::write_report(&cli.db, (output, format), &blocks, &counted)
}

/// `campaign emit FILE --slurm DIR` (or `--lsf`, `--pbs`): the campaign as batch jobs, a job
/// per node count its points still to run take (see `campaign::jobs`).
fn emit<T: Team>(cli: &Cli, file: &Path, system: System, dir: &Path, team: &T) -> Result<(), Error> {
    let c = read(file)?;
    let batch = jobs::batch_of(&c, file)?;
    let all = points(&c, team, None)?;
    if team.process() != 0 {
        return Ok(());
    }
    let store = match cli.db.exists() {
        true => Some(Store::open_existing(&cli.db)?),
        false => None,
    };
    let jobs = jobs::jobs(&c, batch, &all, store.as_ref(), &cli.db)?;
    if jobs.is_empty() {
        let db = iosurvey::escape::visible(&cli.db.display().to_string()).to_string();
        outln!("campaign {}: every point is stored in {db}; no job to write", c.name);
        return Ok(());
    }
    let what = jobs::flag(system);
    let existed = std::fs::symlink_metadata(dir).is_ok();
    super::output::folder(dir, "the batch jobs", &format!("give {what} a directory of its own"))?;
    let place = jobs::Place { system, file, db: &cli.db, dir };
    let written = jobs::scripts(&c, batch, &jobs, &place).and_then(|s| write_jobs(cli, &s, what));
    if written.is_err() && !existed {
        // Made here for nothing: an empty directory of ours goes again.
        let _ = std::fs::remove_dir(dir);
    }
    written
}

/// Writes the jobs' scripts, every name checked before any is written, and says what they
/// are.
fn write_jobs(cli: &Cli, scripts: &jobs::Scripts, what: &str) -> Result<(), Error> {
    for (path, _) in &scripts.files {
        super::output::check(path, &cli.db, what)?;
        jobs::not_theirs(path, what)?;
    }
    for (path, text) in &scripts.files {
        super::output::write(path, text.as_bytes(), &cli.db, what)?;
    }
    out!("{}", scripts.said);
    Ok(())
}
