//! `campaign emit`'s jobs: the points still to run grouped by the nodes they take, each
//! group's time from its points' estimates, and the scripts (`batch::scripts`) with every
//! path they name made absolute. The command writes them, as it writes any output.

use super::ask::nodes_of;
use super::batch::{Emit, Job, System};
use super::runner::{past_secs, tally_done};
use super::text::counted;
use super::{is_done, Batch, Campaign, Done, Point};
use crate::store::Store;
use crate::study::Error;
use crate::units::format_duration;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The jobs by the nodes each takes.
pub type Jobs = BTreeMap<usize, Job>;

/// The option that names the directory of `system`'s jobs.
pub fn flag(system: System) -> &'static str {
    match system {
        System::Slurm => "--slurm",
        System::Lsf => "--lsf",
        System::Pbs => "--pbs",
    }
}

/// The campaign's `[batch]` table, which the jobs need; `file` names the campaign.
pub fn batch_of<'c>(c: &'c Campaign, file: &Path) -> Result<&'c Batch, Error> {
    c.batch.as_ref().ok_or_else(|| {
        Error::refused(
            format!(
                "{} has no [batch] table: the jobs need the site's partition, account, launcher and modules",
                crate::escape::visible(&file.display().to_string())
            ),
            "add [batch] to the file (docs/campaigns.md, \"Batch jobs\")",
        )
    })
}

/// The jobs of the points of `all` that `store` (at `db`) does not hold whole, a job per node
/// count, each limited to its points' estimate (from the store, else `[batch] point-time`).
/// Refused when a point has no estimate: a job without a true limit is either killed early
/// or holds nodes idle.
pub fn jobs(c: &Campaign, batch: &Batch, all: &[Point], store: Option<&Store>, db: &Path) -> Result<Jobs, Error> {
    let done = match store {
        Some(s) => tally_done(s, &c.name)?,
        None => Done::new(),
    };
    let nodes = nodes_of(c, all, None)?;
    let mut jobs = Jobs::new();
    let mut unknown = 0;
    // A point refused here may run in its job (a launch of other nodes): the job decides.
    for (p, n) in all.iter().zip(nodes).filter(|(p, _)| !is_done(c, p, &done)) {
        let job = jobs.entry(n).or_insert(Job { nodes: n, points: 0, secs: 0.0 });
        job.points += 1;
        match store.and_then(|s| past_secs(s, c, p)).or(batch.point_secs) {
            Some(secs) => job.secs += secs,
            None => unknown += 1,
        }
    }
    if unknown > 0 {
        let db = crate::escape::visible(&db.display().to_string()).to_string();
        return Err(Error::refused(
            format!("{unknown} points to run have no estimate (no stored run of them in {db}), so no job's time limit can be set"),
            "give [batch] point-time = \"30m\" (a point's time when no stored run says it), or run a point once with campaign run --only",
        ));
    }
    Ok(jobs)
}

/// Where the jobs go and what they name: the batch system, the campaign file, the store and
/// the directory for the scripts, as given.
pub struct Place<'a> {
    /// The batch system.
    pub system: System,
    /// The campaign file.
    pub file: &'a Path,
    /// The campaign's store (`--db`).
    pub db: &'a Path,
    /// The directory the scripts go in (made already).
    pub dir: &'a Path,
}

/// The scripts to write, each at its path, and the lines that say what they are.
pub struct Scripts {
    /// Each script's path and text.
    pub files: Vec<(PathBuf, String)>,
    /// What the jobs are, for the user.
    pub said: String,
}

/// The scripts of `jobs`, every path in them absolute.
pub fn scripts(c: &Campaign, batch: &Batch, jobs: &Jobs, place: &Place) -> Result<Scripts, Error> {
    let what = flag(place.system);
    let absolute = |p: &Path| {
        crate::study::common::absolute(p).ok_or_else(|| {
            Error::refused(format!("cannot find where {} is", p.display()), "give a path in an existing directory")
        })
    };
    let (file, store_path) = (absolute(place.file)?, absolute(place.db)?);
    let dir = place.dir.canonicalize().map_err(|e| {
        Error::refused(format!("cannot read {}: {e}", place.dir.display()), format!("give {what} a directory"))
    })?;
    let workdir = std::env::current_dir().map_err(|e| {
        Error::refused(format!("cannot read the current directory: {e}"), "run from a directory that exists")
    })?;
    let binary = match &batch.iosurvey {
        Some(b) => b.clone(),
        None => std::env::current_exe()
            .map_err(|e| {
                Error::refused(
                    format!("cannot find this iosurvey: {e}"),
                    "give [batch] iosurvey = \"/path/to/iosurvey\"",
                )
            })?
            .display()
            .to_string(),
    };
    let jobs: Vec<Job> = jobs.values().cloned().collect();
    let emit = Emit {
        system: place.system,
        batch,
        name: &c.name,
        file: &file,
        store: &store_path,
        binary: &binary,
        workdir: &workdir,
        dir: &dir,
        flag: what,
    };
    // What is checked is what the scripts would hold: a link on the way to DIR or the store
    // puts where it leads into them.
    let scripts = super::batch::scripts(&emit, &jobs).map_err(|why| {
        Error::refused(
            why,
            "give paths without blanks, % or control characters, quotes or backslashes, links on the way included",
        )
    })?;
    let said = said(c, batch, &jobs, &scripts, &emit);
    Ok(Scripts { files: scripts.into_iter().map(|s| (dir.join(&s.name), s.text)).collect(), said })
}

/// What the jobs are, a line each, and how to submit them.
fn said(c: &Campaign, batch: &Batch, jobs: &[Job], scripts: &[super::batch::Script], emit: &Emit) -> String {
    let mut out =
        format!("campaign {} (version {}): {} jobs in {}\n", c.name, c.version(), jobs.len(), emit.dir.display());
    for (j, s) in jobs.iter().zip(scripts) {
        let limit = super::batch::limit_secs(j.secs, batch.margin);
        out += &format!(
            "  {}: {} on {} x {} tasks, estimated {}, limit {}\n",
            s.name,
            counted(j.points, "point"),
            counted(j.nodes, "node"),
            batch.tasks_per_node,
            format_duration(j.secs),
            format_duration(limit as f64)
        );
    }
    out += &format!(
        "  {}: merges the jobs' stores into {} once all have ended\nthe jobs run {}{}\nsubmit: bash {}/submit\n",
        scripts[jobs.len()].name,
        emit.store.display(),
        emit.binary,
        if batch.iosurvey.is_none() { " (this one; [batch] iosurvey names another)" } else { "" },
        emit.dir.display()
    );
    out
}

/// Refuses a script's path where a file `emit` did not write is: that file is the user's,
/// and is left alone.
pub fn not_theirs(path: &Path, what: &str) -> Result<(), Error> {
    let theirs = std::fs::symlink_metadata(path).is_ok()
        && !crate::input::read_text(path, 1 << 20, crate::input::Links::Refuse)
            .is_ok_and(|(t, _)| super::batch::is_emitted(&t));
    match theirs {
        false => Ok(()),
        true => Err(Error::refused(
            format!(
                "refusing to write the batch job {}: a file campaign emit did not write has that name",
                path.display()
            ),
            format!("give {what} a directory of its own"),
        )),
    }
}
