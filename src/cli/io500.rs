//! `iosurvey io500`: the IO500 standard list, parsed into the library's plan
//! (`iosurvey::io500::plan::Io500Plan`), played in a fresh directory with every run filed
//! under its phase's name in one group; its `[RESULT]` lines and score printed.

use super::opening::{open, precheck_all};
use super::{Cli, Failure, Io500Args};
use iosurvey::io500::plan::{Io500Plan, Shape};
use iosurvey::io500::{self, Phase};
use iosurvey::plan::Step;
use iosurvey::record::GroupKind;
use iosurvey::runner::RunError;
use iosurvey::session::Place;
use iosurvey::team::Team;

pub(super) fn io500<T: Team>(cli: &Cli, a: &Io500Args, team: &T) -> Result<(), Failure> {
    a.validate()?;
    let stonewall = a.stonewall();
    // Each task's node (a process's tasks are consecutive ranks), for the shift.
    let task_nodes: Vec<u32> = team.process_nodes().into_iter().flat_map(|n| std::iter::repeat_n(n, a.tasks)).collect();
    let mut plan = Io500Plan::new(Shape::new(&task_nodes, stonewall, a.quick));
    // Every phase's run, checked before the list has a directory or a row in the store.
    precheck_all(team, a.tasks, &plan.workloads())?;
    let place = Place::Fresh { parent: Some(a.dir.clone()), kind: "io500" };
    // The write phases fill until the stonewall: their size is a bound, not a need.
    let target = iosurvey::study::TargetArgs { no_space_check: true, ..a.target.clone() };
    let mut session = open(cli, team, (place, &target), a.tasks, Vec::new())?;
    let target = session.site().paths()[0].to_string_lossy().into_owned();
    let spec = serde_json::json!({ "target": target, "stonewall": stonewall, "quick": a.quick });
    let group = session.begin(GroupKind::Io500, &spec)?;
    let played = session.play(&mut plan, Some(group), |step| {
        let name = match step {
            Step::Run { name, .. } => name.as_deref(),
            Step::Hook(name) => Some(name.as_str()),
            Step::Done => None,
        };
        if let (Some(name), false) = (name, cli.quiet) {
            say!("iosurvey: io500 {name}");
        }
    });
    // A store that cannot take the group's end is said after what ran.
    let finished = session.finish(group, played.failure.is_none(), None);
    drop(session);
    match played.failure {
        // An interrupted list has no score, and says so: exit 130, never 0.
        Some(RunError::Interrupted) => {
            let before = plan.stopped_before().map_or("its end".to_string(), |p| p.name().to_string());
            return Err(Failure::new(
                format!(
                    "io500 interrupted by a signal before {before}: the phases before it are stored in survey {group}, and no score was made"
                ),
                "run it again",
                130,
            ));
        }
        Some(e) => return Err(e.into()),
        None => {}
    }
    let mut scores = plan.scores().to_vec();
    if team.process() == 0 && scores.len() == Phase::ALL.len() && cli.within.is_none() {
        io500::validate(&mut scores, stonewall, plan.found());
        if a.quick {
            for p in scores.iter_mut().filter(|p| p.phase.stonewalled()) {
                p.invalid.push("--quick".into());
            }
        }
        for p in &scores {
            outln!("{}", io500::result_line(p));
        }
        let valid = scores.iter().all(|p| p.invalid.is_empty());
        outln!("{}", io500::score_line(&io500::score(&scores), valid));
        if !valid && !cli.quiet {
            for p in scores.iter().filter(|p| !p.invalid.is_empty()) {
                say!("iosurvey: note: {} is not valid for submission: {}", p.phase.name(), p.invalid.join("; "));
            }
        }
    }
    Ok(finished?)
}
