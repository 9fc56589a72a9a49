//! `iosurvey ior|mdtest|iozone ARGS`, or the binary started through a link of one of those
//! names: the tool's command line read by the library's front end (`iosurvey::compat`) into
//! the studies it means (each the native command line a user could type), played as `run`,
//! `meta` or `matrix` play them, and the records printed in the tool's own layout. Every run
//! is stored as any other, with the command line as typed.

use super::{Cli, Command};
use iosurvey::compat::{self, ior, iozone, layout, mdtest, CompatError, Native, Tool};
use iosurvey::record::RunRecord;
use iosurvey::store::Store;
use iosurvey::study::hint::{Command as Cmd, Flags, Respelled};
use iosurvey::study::play::on_lead;
use iosurvey::study::{Error, Made, Study};
use iosurvey::team::Team;
use std::ffi::OsString;

/// A front end's command line.
pub(super) struct Invoked {
    /// The tool it speaks.
    pub tool: Tool,
    /// Its words after the tool's name, iosurvey's global options given before that name
    /// first among them.
    pub args: Vec<String>,
    /// `-q` before the tool's name: no progress bar.
    pub quiet: bool,
}

/// The front end the command line speaks, if it speaks one: the program's own name (a link
/// named ior), or iosurvey's first word after its global options (`iosurvey --db X ior ...`,
/// as every other command takes them).
pub(super) fn invoked(args: &[OsString]) -> Option<Invoked> {
    let words: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    if let Some(tool) = words.first().and_then(|w| Tool::named(w)) {
        return Some(Invoked { tool, args: words[1..].to_vec(), quiet: false });
    }
    let (mut globals, mut quiet, mut at) = (Vec::new(), false, 1);
    while let Some(word) = words.get(at) {
        match word.as_str() {
            // Without its value, clap's parser says what is missing.
            "--db" => globals.extend(["--db".to_string(), words.get(at + 1)?.clone()]),
            w if w.starts_with("--db=") => globals.push(w.to_string()),
            "-q" | "--quiet" => quiet = true,
            _ => break,
        }
        at += if word == "--db" { 2 } else { 1 };
    }
    let tool =
        words.get(at).filter(|w| matches!(w.as_str(), "ior" | "mdtest" | "iozone")).and_then(|w| Tool::named(w))?;
    globals.extend(words[at + 1..].iter().cloned());
    Some(Invoked { tool, args: globals, quiet })
}

/// How hints about a front end's native commands name flags: as the tool does, and for
/// IOzone the one size typed (-s, -r) where it stands for both ends of a range.
fn spelling(tool: Tool, args: &[String]) -> Vec<(String, String)> {
    let typed = |letter: &str| args.iter().any(|a| a.starts_with(letter));
    tool.spelling()
        .iter()
        .map(|&(native, theirs)| {
            let theirs = match (tool, native) {
                (Tool::Iozone, "--min-file" | "--max-file") if typed("-s") => "-s",
                (Tool::Iozone, "--min-record" | "--max-record") if typed("-r") => "-r",
                _ => theirs,
            };
            (native.to_string(), theirs.to_string())
        })
        .collect()
}

/// The front end's studies, with the command line's globals (the store, -q) to play them by.
struct Front<S> {
    native: Native<S>,
    cli: Cli,
}

fn refused(e: CompatError) -> Error {
    Error::refused(e.to_string(), e.hint)
}

/// Reads a file the tool's line names (an IOR script, an IOzone client list): a regular file
/// of at most 1 MiB of text.
fn small_file(path: &str) -> Result<String, String> {
    use iosurvey::input::{read_text, Links};
    read_text(std::path::Path::new(path), 1 << 20, Links::Follow)
        .map(|(text, _)| text)
        .map_err(|e| format!("cannot read it: {e}"))
}

/// IOzone's threads over the ranks of a launch: each process runs its share as threads, so
/// the team holds the threads asked for, not that many per rank.
fn per_rank(mut native: Native<iozone::Settings>) -> Result<Native<iozone::Settings>, Error> {
    let Some((_, ranks)) = iosurvey::team::launched_as_many(|v| std::env::var(v).ok()) else { return Ok(native) };
    for (study, words) in native.studies.iter_mut().zip(&mut native.commands) {
        let Study::Matrix(a) = study else { continue };
        let threads = a.tasks as u64;
        if threads % ranks != 0 {
            return Err(Error::refused(
                format!("iozone -t {threads} does not share evenly over the launch's {ranks} ranks"),
                "give -t a multiple of the ranks, e.g. -t equal to mpirun's -np",
            ));
        }
        a.tasks = (threads / ranks) as usize;
        // The native line says so too, for -v.
        if let Some(at) = words.iter().position(|w| w == "--tasks") {
            words[at + 1] = a.tasks.to_string();
        }
    }
    Ok(native)
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

/// Checks that IOzone's `-+m` list (a host per thread) is how this launch places its tasks:
/// iosurvey places task i on node i mod nodes, so the list's hosts must take turns in the
/// launch's node order; on one node every line must name one host.
fn clients_placed<T: Team>(clients: &[String], team: &T) -> Result<(), Error> {
    if clients.is_empty() {
        return Ok(());
    }
    let mut distinct: Vec<&String> = Vec::new();
    for c in clients {
        if !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    let hosts = team.hosts();
    let round_robin = clients.iter().enumerate().all(|(i, c)| c == distinct[i % distinct.len()]);
    let matches = distinct.len() == 1 && hosts.len() <= 1
        || round_robin && distinct.len() == hosts.len() && distinct.iter().zip(&hosts).all(|(a, b)| *a == b);
    if matches {
        return Ok(());
    }
    let list = distinct.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(",");
    Err(Error::refused(format!(
            "iozone -+m places {} threads on {} host(s) ({list}) but this launch runs on {} node(s) ({})",
            clients.len(),
            distinct.len(),
            hosts.len(),
            hosts.join(",")
        ), format!(
            "launch one rank per thread over those hosts in that order, e.g. mpirun --host {list} -np {} --map-by node iosurvey iozone ... (built with --features mpi)",
            clients.len()
        )))
}
