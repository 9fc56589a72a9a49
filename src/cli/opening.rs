//! What every measuring command does before its study: its workloads checked before anything
//! is made, and a library session opened with the command line's settings, its notes said.

use super::{progress, Cli, Failure, TargetArgs};
use iosurvey::runner::Watch;
use iosurvey::session::{Opening, Place, Session};
use iosurvey::spec::Workload;
use iosurvey::team::{share_value, Team};
use std::io::IsTerminal;

/// The command line as typed; an argument that is not UTF-8 is kept with replacement
/// characters (the record says so).
pub(super) fn command_line() -> String {
    std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

/// Runs `f` on the lead process only; its success or exit code reaches every process, so
/// that all of them stop together when the lead refuses.
pub(super) fn on_lead<T: Team, X>(team: &T, f: impl FnOnce() -> Result<X, Failure>) -> Result<Option<X>, Failure> {
    let result = (team.process() == 0).then(f);
    let code = share_value(team, result.as_ref().map(|r| r.as_ref().err().map_or(&0, |f| &f.code)));
    match result {
        Some(r) => r.map(Some),
        None if code == 0 => Ok(None),
        None => Err(Failure::silent(code)),
    }
}

fn watcher(cli: &Cli) -> Option<&'static Watch> {
    ((!cli.quiet || cli.live) && std::io::stderr().is_terminal()).then_some(&progress::watch as &Watch)
}

/// Opens the command's session in `place` and says the target's notes. `check` holds the
/// workloads whose metadata phase order must suit what the target holds.
pub(super) fn open<'t, T: Team>(
    cli: &'t Cli,
    team: &'t T,
    (place, target): (Place, &TargetArgs),
    threads: usize,
    check: Vec<Workload>,
) -> Result<Session<'t, T>, Failure> {
    super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    let opening = Opening {
        store: cli.db.clone(),
        place,
        // A campaign's target existed when its file was read: a point never makes it.
        options: iosurvey::target::Options { must_exist: cli.within.is_some(), ..target.options() },
        threads,
        command_line: command_line(),
        space_check: !target.no_space_check,
        label: target.label.clone(),
        cancel: super::CANCEL.clone(),
        watch: watcher(cli),
        leftovers: super::LEFTOVERS.clone(),
        check,
        within: cli.within.clone(),
    };
    let mut session = Session::open(team, opening)?;
    for note in session.notes() {
        say!("iosurvey: warning: {note}");
    }
    Ok(session)
}

/// Checks every workload a command will run before it makes anything (no store row, no
/// directory): each one's rules, its engine's, and the memory bound for `threads` tasks per
/// process. The lead decides (memory differs between nodes) and every process follows; when
/// all pass, says whether the tasks crowd the cores.
pub(super) fn precheck_all<'w, T: Team>(
    team: &T,
    threads: usize,
    workloads: impl IntoIterator<Item = &'w Workload>,
) -> Result<(), Failure> {
    let per_node = iosurvey::runner::per_node(team, threads);
    on_lead(team, || {
        let available = iosurvey::env::memory_available();
        for w in workloads {
            iosurvey::runner::precheck(w, per_node, available)?;
        }
        Ok(())
    })?;
    warn_crowded(team, threads);
    Ok(())
}

/// Tasks per core above which a run measures the scheduler as much as the storage.
const CROWDED: usize = 4;

/// One warning line when `threads` tasks in this process far exceed the cores it may use.
pub(super) fn warn_crowded<T: Team>(team: &T, threads: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if team.process() == 0 && threads > CROWDED * cores {
        say!(
            "iosurvey: warning: --tasks {threads} runs {threads} threads on the {cores} core{} this process may use (more than {CROWDED} per core): the figures will show the scheduler as much as the storage",
            if cores == 1 { "" } else { "s" }
        );
    }
}
