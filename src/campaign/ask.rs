//! What `campaign plan|run|status|emit` is asked on the command line: the subcommands and
//! their flags (clap derives, as the studies' own), `--scale 1/N` and `--only`, and the points
//! `--only` keeps of a campaign.

use super::points::Launch;
use super::{Campaign, Point};
use crate::study::hint::Refusal;
use crate::study::Error;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// What `campaign` does.
#[derive(Subcommand)]
pub enum CampaignCommand {
    /// Print every point in run order, the hooks, refusals and estimates; runs nothing unless
    /// --calibrate.
    #[command(
        after_help = "Examples:\n  iosurvey campaign plan eval.toml\n  iosurvey campaign plan eval.toml --calibrate\n  iosurvey campaign plan examples/campaigns/isilon.toml --scale 1/4096"
    )]
    Plan {
        /// The file and which of its points.
        #[command(flatten)]
        file: CampaignFileArgs,
        /// Estimate the points no stored run estimates by running, once per study and target,
        /// its first point at 1/64 of its data (on the target, into a scratch store removed
        /// afterwards): this writes to the targets.
        #[arg(long)]
        calibrate: bool,
    },
    /// Run the campaign's points not stored yet (a second run resumes the first).
    #[command(
        after_help = "Examples:\n  iosurvey campaign run eval.toml\n  iosurvey campaign run eval.toml --only study=seq-write,target=f800\n  mpirun -np 16 iosurvey campaign run eval.toml"
    )]
    Run(CampaignFileArgs),
    /// Write batch jobs that run the campaign on a cluster: one per node count its points
    /// take (each into a store of its own, beside --db), and a last one that waits for them
    /// and merges their stores into --db; `bash DIR/submit` submits them all.
    #[command(
        after_help = "Examples:\n  iosurvey campaign emit eval.toml --slurm jobs --db /lustre/eval/eval.db\n  bash jobs/submit\n  iosurvey campaign emit eval.toml --lsf jobs\n\nThe file's [batch] table gives partition, account, launcher and modules (docs/campaigns.md)."
    )]
    #[command(group = clap::ArgGroup::new("system").required(true))]
    Emit {
        /// The campaign file (TOML), with a [batch] table.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Slurm jobs (sbatch), written into DIR.
        #[arg(long, value_name = "DIR", group = "system")]
        slurm: Option<PathBuf>,
        /// LSF jobs (bsub), written into DIR.
        #[arg(long, value_name = "DIR", group = "system")]
        lsf: Option<PathBuf>,
        /// PBS jobs (qsub), written into DIR.
        #[arg(long, value_name = "DIR", group = "system")]
        pbs: Option<PathBuf>,
    },
    /// Per study and target: points stored whole, failed, still to run; failed hooks.
    #[command(after_help = "Examples:\n  iosurvey campaign status eval.toml\n  iosurvey campaign status c2")]
    Status {
        /// The campaign file, or a campaign version as `ls` lists it (c2).
        #[arg(value_name = "FILE|cN")]
        which: String,
        /// The scale the campaign was run at.
        #[arg(long, value_parser = scale_arg, value_name = "1/N")]
        scale: Option<Scale>,
    },
}

/// The campaign file of `plan` and `run`, and which of its points.
#[derive(Args)]
pub struct CampaignFileArgs {
    /// The campaign file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Divide every amount of data by N and cap client counts at this launch's cores, to run
    /// a paper's campaign on one machine (N at most 2^40). The file must also pass its
    /// checks at full size.
    #[arg(long, value_parser = scale_arg, value_name = "1/N")]
    pub scale: Option<Scale>,
    /// Only these points: study=NAME, target=LABEL and nodes=N (the points a batch job of N
    /// nodes runs), comma-separated (a comma within a label or a name is written \, and
    /// a backslash \\); repeatable.
    #[arg(long, value_parser = only_arg, value_name = "study=NAME,target=LABEL,nodes=N")]
    pub only: Vec<Only>,
    /// Place every target at DIR/LABEL (DIR and each made 0700 where missing, and removed
    /// afterwards if iosurvey made them and they are empty), to rehearse a campaign whose
    /// targets are not mounted here; the file keeps its real paths.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// `--scale 1/N`: every amount of data divided by N, client counts capped at the launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale(pub u64);

/// Reads `--scale 1/N`.
pub fn scale_arg(text: &str) -> Result<Scale, Refusal> {
    let n = text.strip_prefix("1/").and_then(|n| n.parse::<u64>().ok()).filter(|&n| n >= 1);
    match n {
        Some(n) if n > super::MAX_SCALE => Err(Refusal::say(
            format!("--scale 1/{n} divides by more than 1/{} (2^40), the smallest scale", super::MAX_SCALE),
            format!("give 1/N with N at most {}", super::MAX_SCALE),
        )),
        Some(n) => Ok(Scale(n)),
        None => Err(Refusal::say(format!("'{text}' is not a scale"), "give 1/N, e.g. --scale 1/4096")),
    }
}

/// `--only study=NAME,target=LABEL,nodes=N`: a subset of the points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Only {
    study: Vec<String>,
    target: Vec<String>,
    nodes: Vec<usize>,
}

impl Only {
    /// Every `--only` given, as one: a point is kept when its study is among the studies named
    /// (or none is) and its target among the targets named (or none is).
    pub fn merged(all: &[Only]) -> Option<Only> {
        (!all.is_empty()).then(|| Only {
            study: all.iter().flat_map(|o| o.study.clone()).collect(),
            target: all.iter().flat_map(|o| o.target.clone()).collect(),
            nodes: all.iter().flat_map(|o| o.nodes.clone()).collect(),
        })
    }
}

/// The parts of an `--only` between its commas. A label or a study name may hold a comma
/// itself: written `\,` it stays in the part (and `\\` is one backslash).
fn only_parts(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, chars.peek()) {
            ('\\', Some(&next @ (',' | '\\'))) => {
                chars.next();
                parts.last_mut().expect("never empty").push(next);
            }
            (',', _) => parts.push(String::new()),
            _ => parts.last_mut().expect("never empty").push(ch),
        }
    }
    parts
}

/// Reads one `--only`.
pub fn only_arg(text: &str) -> Result<Only, Refusal> {
    let mut only = Only::default();
    for part in only_parts(text) {
        let part = part.as_str();
        match part.split_once('=') {
            Some(("study", v)) if !v.is_empty() => only.study.push(v.to_string()),
            Some(("target", v)) if !v.is_empty() => only.target.push(v.to_string()),
            Some(("nodes", v)) if v.parse::<usize>().is_ok_and(|n| n >= 1) => only.nodes.push(v.parse().unwrap_or(1)),
            _ => {
                return Err(Refusal::say(
                    format!("'{part}' is not study=NAME, target=LABEL or nodes=N"),
                    "give --only study=seq-write,target=f800",
                ))
            }
        }
    }
    Ok(only)
}

/// Refuses an `--only` that names a study or a target the campaign does not have.
fn named(c: &Campaign, only: &Only) -> Result<(), Error> {
    for name in &only.study {
        if !c.studies.iter().any(|s| &s.name == name) {
            return Err(Error::refused(
                format!("--only study={name}: the campaign has no such study"),
                "give a [[study]] name of the file (a comma in it written \\,)",
            ));
        }
    }
    for label in &only.target {
        if !c.targets.iter().any(|t| &t.label == label) {
            return Err(Error::refused(
                format!("--only target={label}: the campaign has no such target"),
                "give a [[target]] label of the file (a comma in it written \\,)",
            ));
        }
    }
    Ok(())
}

/// The points `--only` keeps. `launch`, when the points are to run here: its nodes and
/// processes, which `--only nodes=N` must match.
pub fn keep(
    c: &Campaign,
    points: Vec<Point>,
    only: Option<&Only>,
    launch: Option<Launch>,
) -> Result<Vec<Point>, Error> {
    let Some(only) = only else { return Ok(points) };
    named(c, only)?;
    let nodes = match only.nodes.is_empty() {
        true => vec![0; points.len()],
        false => nodes_of(c, &points, launch)?,
    };
    Ok(points
        .into_iter()
        .zip(nodes)
        .filter(|(p, _)| only.study.is_empty() || only.study.contains(&c.studies[p.study].name))
        .filter(|(p, _)| only.target.is_empty() || only.target.contains(&c.targets[p.target].label))
        .filter(|(_, n)| only.nodes.is_empty() || only.nodes.contains(n))
        .map(|(p, _)| p)
        .collect())
}

/// The nodes each point takes in a batch job, as `campaign emit` splits the campaign: its
/// clients over `[batch] tasks-per-node` (without `[batch]`, the launch's processes per node),
/// a whole-launch study `[batch] nodes` or the most any point takes.
pub fn nodes_of(c: &Campaign, points: &[Point], launch: Option<Launch>) -> Result<Vec<usize>, Error> {
    let (per_node, whole) = match (&c.batch, launch) {
        (Some(b), _) => (b.tasks_per_node, b.nodes),
        (None, Some(l)) => (l.processes / l.nodes, None),
        (None, None) => {
            return Err(Error::refused(
                "--only nodes=N needs the campaign's [batch] table: its tasks-per-node says how points take nodes",
                "add [batch] to the file (docs/campaigns.md, \"Batch jobs\")",
            ))
        }
    };
    let clients: Vec<Option<usize>> = points.iter().map(|p| p.clients).collect();
    Ok(super::batch::nodes_taken(&clients, per_node, whole))
}

/// Refuses a launch that is not the batch job `--only nodes=N` was written for: the points of
/// an N-node job must run on N nodes with `tasks-per-node` each, or their runs would not be
/// what the campaign counts them as.
pub fn launch_fits(c: &Campaign, only: Option<&Only>, launch: Launch) -> Result<(), Error> {
    let Some(only) = only.filter(|o| !o.nodes.is_empty()) else { return Ok(()) };
    let per_node = c.batch.as_ref().map_or(launch.processes / launch.nodes, |b| b.tasks_per_node);
    match only.nodes.iter().any(|&n| n == launch.nodes && launch.processes == n * per_node) {
        true => Ok(()),
        false => Err(Error::refused(
            format!(
                "--only nodes={} runs on that many nodes with {per_node} processes each, but this launch has {} processes on {} nodes",
                only.nodes.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(","),
                launch.processes,
                launch.nodes
            ),
            "launch it as the batch job campaign emit wrote (sbatch -N N --ntasks-per-node ...)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keeps_an_escaped_comma_in_a_name_and_refuses_what_is_no_part() {
        let only = only_arg(r"study=a\,b,target=x\\y,nodes=2").unwrap();
        assert_eq!(only.study, ["a,b"]);
        assert_eq!(only.target, [r"x\y"]);
        assert_eq!(only.nodes, [2]);
        assert!(only_arg("nodes=0").unwrap_err().to_string().contains("(hint: give --only"));
        let merged = Only::merged(&[only_arg("study=a").unwrap(), only_arg("study=b").unwrap()]).unwrap();
        assert_eq!(merged.study, ["a", "b"]);
        assert_eq!(Only::merged(&[]), None);
    }

    #[test]
    fn a_scale_is_one_over_n_at_most_two_to_the_forty() {
        assert_eq!(scale_arg("1/4096"), Ok(Scale(4096)));
        assert!(scale_arg("1/0").is_err() && scale_arg("4096").is_err());
        assert!(scale_arg(&format!("1/{}", super::super::MAX_SCALE + 1)).unwrap_err().to_string().contains("at most"));
    }
}
