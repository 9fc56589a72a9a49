//! `iosurvey ior|mdtest|iozone ARGS`, or the binary started through a link of one of those
//! names: the tool's command line read by the library's front end (`iosurvey::compat`) into
//! native command lines, each parsed as if typed and played as `run`, `meta` or `matrix` play
//! it, and the records printed in the tool's own layout. Every run is stored as any other,
//! with the command line as typed.

use super::commands::{meta_run, play_run};
use super::opening::on_lead;
use super::{Cli, Command, Failure};
use iosurvey::compat::{self, ior, iozone, layout, mdtest, CompatError, Native, Tool};
use iosurvey::record::RunRecord;
use iosurvey::store::Store;
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

/// What each front end takes, for `--help`.
fn help(tool: Tool) -> &'static str {
    match tool {
        Tool::Ior => IOR_HELP,
        Tool::Mdtest => MDTEST_HELP,
        Tool::Iozone => IOZONE_HELP,
    }
}

const IOR_HELP: &str = "\
iosurvey ior: IOR's command line, run as the iosurvey run it means, printed in IOR's layout
Usage: iosurvey ior [IOR OPTIONS] [--tasks N] [--engine E] [--label L] [--db PATH] [--no-space-check]
       (or the binary started through a link named ior; under MPI, a task per rank)

IOR options taken: -a POSIX -b -t -s -F -C -Q -Z -X -z -e -Y -D -k -K -E -i -d -w -r -W -R -G
  -o -v -N -c -g -O stoneWallingWearOut=1,summaryFormat=JSON|CSV,summaryFile=PATH
  --posix.odirect --random-offset-seed -f SCRIPT (IOR START ... RUN ... IOR STOP)
iosurvey's own: --tasks N (threads per process), --engine E, --label L, --db PATH,
  --no-space-check
Files are iosurvey's own names in -o's directory; -v prints the native command.
Options IOR has and iosurvey does not take are refused with the nearest native option;
those measured differently are noted once on stderr.
";

const MDTEST_HELP: &str = "\
iosurvey mdtest: mdtest's command line, run as the iosurvey meta it means, printed as mdtest does
Usage: iosurvey mdtest [MDTEST OPTIONS] [--tasks N] [--label L] [--db PATH] [--no-space-check]

mdtest options taken: -n -I -u -d (with @) -z -b -L -F -D -w -e -y -C -T -E -r -N -W -i -X -P
  -Y -B -Z -t -v -V -a POSIX
Without -u the tasks share one directory, as in mdtest.
";

const IOZONE_HELP: &str = "\
iosurvey iozone: IOzone's command line, run as the iosurvey matrix it means, printed as IOzone does
Usage: iosurvey iozone [IOZONE OPTIONS] [--label L] [--db PATH] [--no-space-check]

IOzone options taken: -a -A -z -g -n -y -q -i N (0 to 12) -r -s -t -T -F -c -e -x -w -I -O -+n -+k
  -j -f -R -b FILE (CSV, not a spreadsheet) -+m FILE (a host per thread: under MPI, the
  launch's nodes must be the list's hosts, which it takes round-robin as iosurvey places tasks)
Sizes without a unit are KiB, as in IOzone.
";

/// The front end's notes and its commands as iosurvey's parsed command lines.
struct Front<S> {
    native: Native<S>,
    clis: Vec<Cli>,
}

fn refused(e: CompatError) -> Failure {
    Failure::new(e.to_string(), e.hint, 2)
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
fn per_rank(mut native: Native<iozone::Settings>) -> Result<Native<iozone::Settings>, Failure> {
    let Some((_, ranks)) = iosurvey::team::launched_as_many(|v| std::env::var(v).ok()) else { return Ok(native) };
    for words in &mut native.commands {
        if let Some(at) = words.iter().position(|w| w == "--tasks") {
            let threads: u64 = words[at + 1].parse().unwrap_or(1);
            if threads % ranks != 0 {
                return Err(Failure::new(
                    format!("iozone -t {threads} does not share evenly over the launch's {ranks} ranks"),
                    "give -t a multiple of the ranks, e.g. -t equal to mpirun's -np",
                    2,
                ));
            }
            words[at + 1] = (threads / ranks).to_string();
        }
    }
    Ok(native)
}

/// Each native command line parsed as if typed.
fn parsed<S>(native: Native<S>) -> Result<Front<S>, Failure> {
    let mut clis = Vec::new();
    for words in &native.commands {
        let argv = std::iter::once("iosurvey".to_string()).chain(words.iter().cloned());
        let cli =
            super::parser().try_get_matches_from(argv).and_then(|m| super::from_matches(&m)).map_err(|e| Failure {
                line: Some(format!(
                    "{} (as {})",
                    super::parse_error_line(&super::clap_text(&e)),
                    compat::shell_line(words)
                )),
                code: 2,
            })?;
        clis.push(cli);
    }
    Ok(Front { native, clis })
}

/// The command for the front end: its help, a refusal, or what it runs and prints.
pub(super) fn main(invoked: Invoked) -> i32 {
    let Invoked { tool, args, quiet } = invoked;
    if args.iter().any(|a| a == "--help") {
        out!("{}", help(tool));
        return super::finish(Ok(()));
    }
    let verbose = args.iter().any(|a| a.starts_with("-v") && a[1..].chars().all(|c| c == 'v'));
    // A line refused before the team starts ends here, said once.
    let refused_here = |f: Failure| super::finish(Err(f));
    match tool {
        Tool::Ior => match ior::parse(&args, &mut |p| small_file(p))
            .map_err(refused)
            .and_then(parsed)
            .map(|f| ready(f, tool, &args, quiet))
        {
            Ok(f) => super::execute(|team| play_ior(&f, verbose, team)),
            Err(e) => refused_here(e),
        },
        Tool::Mdtest => {
            match mdtest::parse(&args).map_err(refused).and_then(parsed).map(|f| ready(f, tool, &args, quiet)) {
                Ok(f) => super::execute(|team| play_mdtest(&f, verbose, team)),
                Err(e) => refused_here(e),
            }
        }
        Tool::Iozone => {
            match iozone::parse(&args, &mut |p| small_file(p))
                .map_err(refused)
                .and_then(per_rank)
                .and_then(parsed)
                .map(|f| ready(f, tool, &args, quiet))
            {
                Ok(f) => super::execute(|team| play_iozone(&f, verbose, team)),
                Err(e) => refused_here(e),
            }
        }
    }
}

/// A front end's commands, ready to play: from here on the hints name the tool's flags (the
/// user typed those, not the native ones), and `-q` before the tool's name is each command's.
fn ready<S>(mut f: Front<S>, tool: Tool, args: &[String], quiet: bool) -> Front<S> {
    super::hints::speak(spelling(tool, args));
    f.clis.iter_mut().for_each(|c| c.quiet |= quiet);
    f
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
fn print_lead<T: Team>(team: &T, cli: &Cli, text: String, file: Option<&str>) -> Result<(), Failure> {
    on_lead(team, || match file {
        Some(path) => super::output::write(std::path::Path::new(path), text.as_bytes(), &cli.db, "-O summaryFile"),
        None => {
            out!("{text}");
            Ok(())
        }
    })
    .map(|_| ())
}

fn play_ior<T: Team>(f: &Front<ior::Settings>, verbose: bool, team: &T) -> Result<(), Failure> {
    say_notes(f, verbose, team);
    let settings = &f.native.settings;
    if let (Some(path), Some(cli)) = (&settings.summary_file, f.clis.first()) {
        // Refused before anything runs, not after.
        on_lead(team, || super::output::check(std::path::Path::new(path), &cli.db, "-O summaryFile"))?;
    }
    super::hints::set_command(super::hints::Cmd::Run);
    let mut done: Vec<(&ior::Test, RunRecord)> = Vec::new();
    let mut outcome = Ok(());
    for (cli, test) in f.clis.iter().zip(&settings.tests) {
        let Command::Run(a) = &cli.command else { continue };
        let played = play_run(cli, a, team)?;
        done.extend(played.records.into_iter().map(|r| (test, r)));
        if played.outcome.is_err() {
            outcome = played.outcome;
            break;
        }
    }
    if !done.is_empty() {
        let runs: Vec<(&ior::Test, &RunRecord)> = done.iter().map(|(t, r)| (*t, r)).collect();
        let text = layout::ior::render(settings, &runs);
        print_lead(team, &f.clis[0], text, settings.summary_file.as_deref())?;
    }
    outcome
}

fn play_mdtest<T: Team>(f: &Front<mdtest::Settings>, verbose: bool, team: &T) -> Result<(), Failure> {
    say_notes(f, verbose, team);
    super::hints::set_command(super::hints::Cmd::Meta);
    let cli = &f.clis[0];
    let Command::Meta(a) = &cli.command else { return Ok(()) };
    let played = play_run(cli, &meta_run(a)?, team)?;
    if let Some(r) = played.records.last() {
        print_lead(team, cli, layout::mdtest::text(&f.native.settings, r), None)?;
    }
    played.outcome
}

fn play_iozone<T: Team>(f: &Front<iozone::Settings>, verbose: bool, team: &T) -> Result<(), Failure> {
    say_notes(f, verbose, team);
    super::hints::set_command(super::hints::Cmd::Matrix);
    let cli = &f.clis[0];
    let Command::Matrix(a) = &cli.command else { return Ok(()) };
    let settings = &f.native.settings;
    clients_placed(&settings.clients, team)?;
    let (m, outcome) = super::matrix::play_matrix(cli, a, team)?;
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
                layout::iozone::throughput(settings, &m, &runs, children)
            }
            None => layout::iozone::report(settings, &m),
        })
    })?;
    if let Some(text) = text {
        out!("{text}");
    }
    outcome
}

/// Checks that IOzone's `-+m` list (a host per thread) is how this launch places its tasks:
/// iosurvey places task i on node i mod nodes, so the list's hosts must take turns in the
/// launch's node order; on one node every line must name one host.
fn clients_placed<T: Team>(clients: &[String], team: &T) -> Result<(), Failure> {
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
    Err(Failure::new(
        format!(
            "iozone -+m places {} threads on {} host(s) ({list}) but this launch runs on {} node(s) ({})",
            clients.len(),
            distinct.len(),
            hosts.len(),
            hosts.join(",")
        ),
        format!(
            "launch one rank per thread over those hosts in that order, e.g. mpirun --host {list} -np {} --map-by node iosurvey iozone ... (built with --features mpi)",
            clients.len()
        ),
        2,
    ))
}
