//! `io500`: the IO500 standard list.

use super::common::{tasks_arg, TargetArgs};
use super::Error;
use std::path::PathBuf;

/// The settings of `iosurvey io500`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct Io500Args {
    /// Where to make the run's fresh directory (removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Small sizes and a 2 s stonewall: done within a minute, not valid for submission.
    #[arg(long)]
    pub quick: bool,
    /// Seconds each write phase runs before the stonewall (default 300; 2 with --quick).
    #[arg(long = "stonewall", value_name = "SECONDS")]
    pub stonewall_secs: Option<f64>,
    /// Tasks (threads) in each process; under MPI the team is ranks x tasks.
    #[arg(long, short = 'n', default_value_t = 1, value_parser = tasks_arg)]
    pub tasks: usize,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

impl Io500Args {
    /// Seconds each write phase runs before the stonewall.
    pub fn stonewall(&self) -> f64 {
        self.stonewall_secs.unwrap_or(if self.quick { 2.0 } else { crate::io500::STONEWALL_SECS })
    }

    /// Refuses, before anything is made, settings that cannot run.
    pub fn validate(&self) -> Result<(), Error> {
        let stonewall = self.stonewall();
        if !(stonewall > 0.0 && stonewall.is_finite()) {
            return Err(Error::refused(
                format!("a stonewall of {stonewall} s is not positive"),
                "give --stonewall SECONDS above 0",
            ));
        }
        Ok(())
    }
}

use super::play::{open, precheck_all, Context, Made, Observer, Outcome};
use crate::io500::plan::{Io500Plan, Shape};
use crate::io500::Phase;
use crate::plan::Step;
use crate::record::GroupKind;
use crate::runner::RunError;
use crate::session::Place;
use crate::team::Team;

/// Plays the IO500 list in a fresh directory, every run filed under its phase's name in one
/// group; a whole list's phases go out checked for submission as [`Made::Io500`].
pub(super) fn play<T: Team>(
    ctx: &Context,
    a: &Io500Args,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    let stonewall = a.stonewall();
    // Each task's node (a process's tasks are consecutive ranks), for the shift.
    let task_nodes: Vec<u32> = team.process_nodes().into_iter().flat_map(|n| std::iter::repeat_n(n, a.tasks)).collect();
    let mut plan = Io500Plan::new(Shape::new(&task_nodes, stonewall, a.quick));
    // Every phase's run, checked before the list has a directory or a row in the store.
    precheck_all(team, a.tasks, &plan.workloads(), observer)?;
    let place = Place::Fresh { parent: Some(a.dir.clone()), kind: "io500" };
    // The write phases fill until the stonewall: their size is a bound, not a need.
    let target = TargetArgs { no_space_check: true, ..a.target.clone() };
    let mut session = open(ctx, team, (place, &target), (a.tasks, Vec::new()), observer)?;
    let target = session.site().paths()[0].to_string_lossy().into_owned();
    let spec = serde_json::json!({ "target": target, "stonewall": stonewall, "quick": a.quick });
    let group = session.begin(GroupKind::Io500, &spec)?;
    let lead = team.process() == 0;
    let played = session.play(&mut plan, Some(group), |step| {
        let name = match step {
            Step::Run { name, .. } => name.as_deref(),
            Step::Hook(name) => Some(name.as_str()),
            Step::Done => None,
        };
        if let (Some(name), true) = (name, lead) {
            observer.progress(&format!("io500 {name}"));
        }
    });
    // A store that cannot take the group's end is said after what ran.
    let finished = session.finish(group, played.failure.is_none(), None);
    drop(session);
    let ran = played.failure.is_none();
    let failure = match played.failure {
        // An interrupted list has no score, and says so: exit 130, never 0.
        Some(RunError::Interrupted) => {
            let before = plan.stopped_before().map_or("its end".to_string(), |p| p.name().to_string());
            Some(Error::new(
                super::Kind::Interrupted,
                format!(
                    "io500 interrupted by a signal before {before}: the phases before it are stored in survey {group}, and no score was made"
                ),
                crate::spec::Hint::Say("run it again".into()),
            ))
        }
        Some(e) => Some(e.into()),
        None => finished.err().map(Error::from),
    };
    let mut scores = plan.scores().to_vec();
    let whole = lead && ran && scores.len() == Phase::ALL.len();
    if whole {
        crate::io500::validate(&mut scores, stonewall, plan.found());
        if a.quick {
            for p in scores.iter_mut().filter(|p| p.phase.stonewalled()) {
                p.invalid.push("--quick".into());
            }
        }
    }
    let made = Made::Io500(if whole { scores } else { Vec::new() });
    Ok(Outcome { records: played.records, group: Some(group), notes: Vec::new(), failure, made })
}
