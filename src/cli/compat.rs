//! `iosurvey ior|mdtest|iozone ARGS`, or the binary started through a link of one of those
//! names: the tool's command line read by the library's front end (`iosurvey::compat`) into
//! the studies it means (each the native command line a user could type), played as `run`,
//! `meta` or `matrix` play them, and the records printed in the tool's own layout. Every run
//! is stored as any other, with the command line as typed.

use super::{Cli, Command};
use iosurvey::compat::line::{clients_placed, per_rank, small_file, spelling, Invoked};
use iosurvey::compat::{self, ior, iozone, layout, mdtest, CompatError, Native, Tool};
use iosurvey::record::RunRecord;
use iosurvey::store::Store;
use iosurvey::study::hint::{Command as Cmd, Flags, Respelled};
use iosurvey::study::play::on_lead;
use iosurvey::study::{Error, Made, Study};
use iosurvey::team::Team;

/// The front end's studies, with the command line's globals (the store, -q) to play them by.
struct Front<S> {
    native: Native<S>,
    cli: Cli,
}

fn refused(e: CompatError) -> Error {
    Error::refused(e.to_string(), e.hint)
}

/// The command line's globals for a front end's studies: the store its line names, and -q
/// before the tool's name.
fn ready<S>(native: Native<S>, quiet: bool) -> Front<S> {
    let db = native.store.clone().unwrap_or_else(|| "iosurvey.db".into());
    // Each study is played by its own value; the command only carries the globals (a front
    // end gives runs, a metadata run or a matrix).
    let command = match native.studies.first() {
        Some(Study::Meta(a)) => Command::Meta(a.clone()),
        Some(Study::Matrix(a)) => Command::Matrix(a.clone()),
        Some(Study::Run(a)) => Command::Run(a.clone()),
        _ => Command::Overhead,
    };
    Front { native, cli: Cli { command, db, quiet, within: None, live: false } }
}

/// The command for the front end: its help, a refusal, or what it runs and prints. Its hints
/// name the tool's flags: the user typed those, not the native ones.
pub(super) fn main(invoked: Invoked) -> i32 {
    let Invoked { tool, args, quiet } = invoked;
    if args.iter().any(|a| a == "--help") {
        out!("{}", tool.help());
        return super::finish(Ok(()));
    }
    let verbose = args.iter().any(|a| a.starts_with("-v") && a[1..].chars().all(|c| c == 'v'));
    let pairs = spelling(tool, &args);
    let base = Flags(match tool {
        Tool::Ior => Cmd::Run,
        Tool::Mdtest => Cmd::Meta,
        Tool::Iozone => Cmd::Matrix,
    });
    let spelled = Respelled { base: &base, pairs: &pairs };
    let said = |e: Error| super::closing(e, &spelled);
    let played = match tool {
        Tool::Ior => ior::parse(&args, &mut |p| small_file(p))
            .map_err(refused)
            .map(|n| ready(n, quiet))
            .map(|f| super::execute(|team| play_ior(&f, verbose, team).map_err(said))),
        Tool::Mdtest => mdtest::parse(&args)
            .map_err(refused)
            .map(|n| ready(n, quiet))
            .map(|f| super::execute(|team| play_mdtest(&f, verbose, team).map_err(said))),
        Tool::Iozone => iozone::parse(&args, &mut |p| small_file(p))
            .map_err(refused)
            .and_then(per_rank)
            .map(|n| ready(n, quiet))
            .map(|f| super::execute(|team| play_iozone(&f, verbose, team).map_err(said))),
    };
    // A line refused before the team starts ends here, said once: its hint names the native
    // option nearest to the tool's on purpose.
    played.unwrap_or_else(|e| super::finish(Err(e)))
}

/// Says the notes, and with -v the native commands, on the lead.
fn say_notes<T: Team, S>(f: &Front<S>, verbose: bool, team: &T) {
    if team.process() != 0 {
        return;
    }
    for n in &f.native.notes {
        say!("iosurvey: note: {n}");
    }
    for words in f.native.commands.iter().filter(|_| verbose) {
        say!("iosurvey: runs as: {}", compat::shell_line(words));
    }
}

/// Prints `text` on the lead: to standard output, or to the file a tool's option named.
fn print_lead<T: Team>(team: &T, cli: &Cli, text: String, file: Option<&str>) -> Result<(), Error> {
    on_lead(team, || match file {
        Some(path) => super::output::write(std::path::Path::new(path), text.as_bytes(), &cli.db, "-O summaryFile"),
        None => {
            out!("{text}");
            Ok(())
        }
    })
    .map(|_| ())
}

fn play_ior<T: Team>(f: &Front<ior::Settings>, verbose: bool, team: &T) -> Result<(), Error> {
    say_notes(f, verbose, team);
    let (settings, cli) = (&f.native.settings, &f.cli);
    if let Some(path) = &settings.summary_file {
        // Refused before anything runs, not after.
        on_lead(team, || super::output::check(std::path::Path::new(path), &cli.db, "-O summaryFile"))?;
    }
    let mut done: Vec<(&ior::Test, RunRecord)> = Vec::new();
    let mut outcome = Ok(());
    for (study, test) in f.native.studies.iter().zip(&settings.tests) {
        let played = super::studies::played(cli, study, team)?;
        done.extend(played.records.into_iter().map(|r| (test, r)));
        if let Some(e) = played.failure {
            outcome = Err(e);
            break;
        }
    }
    if !done.is_empty() {
        let runs: Vec<(&ior::Test, &RunRecord)> = done.iter().map(|(t, r)| (*t, r)).collect();
        let text = layout::ior::render(settings, &runs);
        print_lead(team, cli, text, settings.summary_file.as_deref())?;
    }
    outcome
}

fn play_mdtest<T: Team>(f: &Front<mdtest::Settings>, verbose: bool, team: &T) -> Result<(), Error> {
    say_notes(f, verbose, team);
    let Some(Study::Meta(a)) = f.native.studies.first() else { return Ok(()) };
    let played = super::studies::played(&f.cli, &Study::Run(Box::new(a.to_run()?)), team)?;
    if let Some(r) = played.records.last() {
        print_lead(team, &f.cli, layout::mdtest::text(&f.native.settings, r), None)?;
    }
    played.failure.map_or(Ok(()), Err)
}

fn play_iozone<T: Team>(f: &Front<iozone::Settings>, verbose: bool, team: &T) -> Result<(), Error> {
    say_notes(f, verbose, team);
    let (settings, cli) = (&f.native.settings, &f.cli);
    let Some(study @ Study::Matrix(a)) = f.native.studies.first() else { return Ok(()) };
    clients_placed(&settings.clients, team)?;
    let played = super::studies::played(cli, study, team)?;
    super::studies::write_csv(cli, a.csv.as_deref(), team, &played)?;
    let Made::Matrix(m) = &played.made else { return played.failure.map_or(Ok(()), Err) };
    let text = on_lead(team, || {
        Ok(match settings.throughput {
            Some(_) => {
                let store = Store::open_existing(&cli.db)?;
                let ids: Vec<i64> = m.cells.iter().flat_map(|c| c.runs.iter().copied()).collect();
                let runs = ids.into_iter().map(|id| store.load(id)).collect::<Result<Vec<_>, _>>()?;
                // A rank per child is IOzone's process per child; threads are -T's.
                let children = match team.processes() {
                    p if p > 1 && p == m.shape.tasks => layout::iozone::Children::Processes,
                    _ => layout::iozone::Children::Threads,
                };
                layout::iozone::throughput(settings, m, &runs, children)
            }
            None => layout::iozone::report(settings, m),
        })
    })?;
    if let Some(text) = text {
        out!("{text}");
    }
    played.failure.map_or(Ok(()), Err)
}
