//! The command line: parsing, dispatch, printing, exit codes. Thin: the work is in the library.
// Standard output goes through `stdout::print` (the `out!` macros): std's print! panics when
// the reader has closed the pipe.
#![deny(clippy::print_stdout)]

/// Writes one line to stderr in a single system call, so that under a launcher (mpirun
/// forwards each write) no other process's output lands inside it. The line is made visible
/// whole: a path, label or host name in it can neither drive the terminal nor break the line.
macro_rules! say {
    ($($arg:tt)*) => {{
        let line = format!("{}\n", iosurvey::escape::visible(&format!($($arg)*)));
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }};
}

/// Prints to standard output through [`stdout::print`]: a reader that closed the pipe ends
/// the output, not the command.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout::print(format!($($arg)*))
    };
}

/// As [`out!`], with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::stdout::print(format!("{}\n", format_args!($($arg)*)))
    };
}

/// Says the command's one closing error line, unless a path that ended it first said one.
macro_rules! say_error {
    ($($arg:tt)*) => {{
        if !$crate::cli::process::CLOSED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            say!("iosurvey: error: {}", format!($($arg)*));
        }
    }};
}

mod campaign;
mod commands;
mod compat;
mod import;
mod merge;
mod opening;
mod output;
mod package;
mod process;
mod progress;
mod stdout;
mod studies;
mod train;
mod width;

use clap::{Parser, Subcommand};
use iosurvey::report::chosen::ReportArgs;
use iosurvey::report::help;
use iosurvey::report::stored::{CompareArgs, ExportArgs, LsArgs, ShowArgs};
use iosurvey::study::error::Plain;
use iosurvey::study::line::clap_text;
use iosurvey::study::{Error, Spelling};
use iosurvey::study::{Io500Args, MatrixArgs, MetaArgs, NetArgs, RunArgs, SurveyArgs, TargetsArgs};
use iosurvey::sys::signal;
use process::{CANCEL, ENDING, LEAD, LEFTOVERS, ONE_OF_MANY, RUNNING};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Start here:
  iosurvey survey /scratch               the standard battery, three runs of each workload
  iosurvey ls                            what the store holds
  iosurvey compare lustre-a f800         two labelled systems, like with like
  iosurvey help run                      a command's options and examples
The README and docs/ say the rest.";

/// Storage benchmark and characterization: IOR-style runs, surveys, and a result store.
#[derive(Parser)]
#[command(name = "iosurvey", version, after_help = EXAMPLES, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The result store (SQLite file).
    #[arg(long, global = true, default_value = "iosurvey.db", value_name = "PATH")]
    db: PathBuf,
    /// No progress bar and no result table; errors still go to stderr.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// The campaign point this command runs, when a campaign runs it.
    #[arg(skip)]
    within: Option<iosurvey::session::Within>,
    /// Draw the live progress bar though quiet (a campaign's point: the campaign says the
    /// rest).
    #[arg(skip)]
    live: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run one workload (IOR-style) and store the result.
    #[command(after_help = "Examples:
  iosurvey run --dir /scratch/x --op write,read --transfer 1m --block 2g --tasks 4 --fsync
  iosurvey run --dir /scratch/x --access shared --layout strided --transfer 47008 --block 47008 --segments 1000 --tasks 2 --verify
  iosurvey run --dir /scratch/x --pattern random --transfer 4k --block 1g --direct --tasks 2
  iosurvey run --dir /scratch/x --total 8g --tasks 8 --iterations 3 --drop-caches --reorder
  iosurvey run --dir /scratch/x --op write --transfer 1m --block 4g --stonewall 30 --wear-out")]
    // -n is run's alone: meta takes it with mdtest's meaning (items per task).
    #[command(mut_arg("tasks", |a| a.short('n')))]
    Run(Box<RunArgs>),
    /// Run the standard battery on a target and print a characterization.
    #[command(after_help = "Examples:
  iosurvey survey                    in a scratch directory under the current one
  iosurvey survey /scratch           in a fresh directory inside /scratch, removed afterwards
  iosurvey survey /scratch --size 8g --tasks 8")]
    Survey(SurveyArgs),
    /// Survey targets (obdfilter-survey, LUN statistics): the same workload on each target
    /// alone, then on 1, 2, 4, ..., all at once; the slow target, the spread, the scaling.
    #[command(after_help = "Examples:
  iosurvey targets --device /dev/sdb,/dev/sdc,/dev/sdd,/dev/sde           read each LUN, then 1, 2, 4 at once
  iosurvey targets --device /dev/sdb --device /dev/sdc --op write,read --destroy-data /dev/sdb,/dev/sdc
  iosurvey targets --dir /lustre/ost0@/lustre/ost1@/lustre/ost2 --size 4g   a directory per OST
  iosurvey show t1                                                          the tables again

On a device the default is --op read (O_DIRECT); writing needs --destroy-data naming it.")]
    Targets(Box<TargetsArgs>),
    /// Run a metadata workload (mdtest-style): make, stat, read and remove items in a tree.
    #[command(after_help = "Examples:
  iosurvey meta --dir /scratch/m --items 10000 --tasks 4
  iosurvey meta --dir /scratch/m --items 1000 --shared-dir --files-only --write-bytes 3901 --read-bytes 3901 --verify
  iosurvey meta --dir /scratch/m --depth 2 --branch 5 --leaves-only --items-per-dir 100 --iterations 3
  iosurvey meta -d /scratch/m -n 1000 -z 2 -b 5 -L -F -w 3901 -e 3901 -i 3 --tasks 4   mdtest's letters
  mpirun -np 8 iosurvey meta --dir /lustre/m --items 20000 --shift 4 --drop-caches --stonewall 60
  iosurvey meta --dir /scratch/m --items 10000 --relative   the *at calls alone, no path walk

Each call resolves the item's path from the target (openat2 beneath it, no link followed, no
mount crossed), as applications and mdtest do; --relative leaves the walk out. Every output
says which (path walk or relative, in the label).

mdtest's short options mean here what they mean to mdtest (-n items per task, -I items per
directory, -z, -b, -d, -L, -u, -F, -D, -w, -e, -X, -N, -Y, -W, -i, -C, -T, -E, -r); --tasks
has no short form (mdtest's tasks are MPI ranks).")]
    Meta(Box<MetaArgs>),
    /// Run the IO500 standard list (ior-easy, mdtest-easy, ior-hard, mdtest-hard, find) in a
    /// fresh directory and print its [RESULT] lines and score.
    #[command(after_help = "Examples:
  iosurvey io500 --dir /scratch --quick          about 30 s; not valid for submission
  mpirun -np 16 iosurvey io500 --dir /lustre/io500")]
    Io500(Io500Args),
    /// Measure IOzone's file x record matrix (test kinds x file sizes x record sizes) in a fresh
    /// directory, name its peaks and cliffs, and store it as mN.
    #[command(after_help = "Examples:
  iosurvey matrix --dir /scratch                          adaptive: the same findings in a fraction of the time
  iosurvey matrix --dir /scratch --full --max-file 12g    every cell, as iozone -a -g 12G
  iosurvey matrix --dir /scratch --kinds 0,1,2 --min-file 1g --max-file 1g --min-record 1m --max-record 1m --tasks 8
  iosurvey matrix --dir /scratch --direct --kinds write,read,random-read --csv cells.csv
  iosurvey show m1")]
    Matrix(Box<MatrixArgs>),
    /// Import other tools' results into the store: IOR (text, JSON), mdtest, IOzone (-a, -R,
    /// -t), fio JSON (json+ latency bins kept), elbencho CSV/JSON, iperf3 JSON, an IO500 result
    /// directory. Each is marked as imported wherever it is shown; a file imported before is
    /// not stored again.
    #[command(after_help = "Examples:
  iosurvey import ior.out mdtest.out --label lustre-a     the tool of each file read from it
  iosurvey import fio.json --tool fio
  iosurvey import io500/results/2026.11.20-09.14.03       an IO500 result directory
  iosurvey import iozone-a.out && iosurvey show m1         IOzone's -a table as a matrix

Every file is read before any is stored, and stored in one transaction: a file that cannot be
read (its line and what was expected are said) stores nothing of the command.")]
    Import(iosurvey::import::files::ImportArgs),
    /// Merge result stores (each batch job's own --db) into one: runs, groups and all that
    /// hangs off them, known by their unique ids; names taken there are renumbered.
    #[command(after_help = "Examples:
  iosurvey merge job1.db job2.db --into eval.db
  iosurvey merge jobs/*.db --into eval.db && iosurvey campaign status eval.toml --db eval.db

The inputs are read from copies and never written; an older store is migrated in its copy.
Every input is merged in one transaction: a row whose unique id is there already with other
content refuses the whole merge, said in one line. Merging a store again adds only what is new.
A campaign run in parts by several jobs (campaign run FILE --only ...) becomes one version
holding all their points.")]
    Merge(merge::MergeArgs),
    /// Emulate training I/O (MLPerf Storage, DLIO): a workload's data set, reader threads
    /// per emulated accelerator, compute per step; AU, samples/s, pass or fail; --find-max.
    #[command(
        override_usage = "iosurvey train --dir DIR --workload NAME [OPTIONS]",
        after_help = "Examples:
  iosurvey train --dir /scratch/t --workload unet3d --accelerator h100 --accelerators 4 --generate
  iosurvey train --dir /scratch/t --workload resnet50 --generate --scale 1/1000 --find-max --max-accelerators 16"
    )]
    Train(Box<iosurvey::study::TrainArgs>),
    /// Emulate checkpoint I/O (MLPerf Storage): a model's state (14 bytes a parameter) sharded
    /// over ranks, written with fsync, compute between, read back; slowest rank's figures.
    #[command(
        override_usage = "iosurvey checkpoint --dir DIR --model NAME [OPTIONS]",
        after_help = "Examples:
  iosurvey checkpoint --dir /scratch/c --model llama3-8b --ranks 8
  iosurvey checkpoint --dir /scratch/c --model llama3-70b --ranks 8 --scale 1/1000 --compute 0 --shift 1"
    )]
    Checkpoint(Box<iosurvey::study::CheckpointArgs>),
    /// Measure the network ceiling between nodes (MPI point to point) and store it.
    #[command(after_help = "Examples:
  mpirun -np 6 --map-by node iosurvey net
  mpirun -np 4 iosurvey net --transfer 4m --size 4g")]
    Net(NetArgs),
    /// Run a whole evaluation from a campaign file (TOML): targets x studies x client counts
    /// x repetitions, with hooks, resumable; see docs/campaigns.md.
    #[command(subcommand)]
    Campaign(iosurvey::campaign::ask::CampaignCommand),
    /// Time the team's own costs: start-up, barrier, gathering results (for bench/scale).
    #[command(hide = true)]
    TeamTiming {
        /// Repetitions of each collective.
        #[arg(long, default_value_t = 100)]
        rounds: u32,
    },
    /// Time the data path's own additions per transfer (for bench/overhead).
    #[command(hide = true)]
    Overhead,
    /// Cleans up after a run whose process was killed (started by iosurvey itself).
    #[command(hide = true)]
    Janitor,
    /// Shell completions for bash, zsh or fish, on standard output.
    #[command(after_help = "Examples:
  iosurvey completions bash > /etc/bash_completion.d/iosurvey
  iosurvey completions zsh > \"${fpath[1]}/_iosurvey\"
  iosurvey completions fish > ~/.config/fish/completions/iosurvey.fish")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: package::Shell,
    },
    /// Write a man page per command (iosurvey.1, iosurvey-run.1, ...) into DIR.
    #[command(after_help = "Examples:\n  iosurvey manpages /usr/local/share/man/man1 && man iosurvey-run")]
    Manpages {
        /// The directory (made when missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// List the I/O engines and whether this machine allows each.
    #[command(after_help = "Examples:\n  iosurvey engines\n  iosurvey engines --json --all")]
    Engines {
        /// A JSON array of {name, available, reason, capabilities}.
        #[arg(long)]
        json: bool,
        /// Also the engines for tests (their names come from the engine registry: see
        /// `parser`).
        #[arg(long)]
        all: bool,
    },
    /// List the stored runs.
    #[command(
        after_help = "Examples:\n  iosurvey ls\n  iosurvey ls --all --format csv\n  iosurvey ls --limit 500\n  iosurvey ls --db results.db --json"
    )]
    Ls(LsArgs),
    /// Compare sets of runs like with like: runs, surveys or sweeps by id, or labels; with
    /// two, side by side with the ratio and its interval; with any number, which is best for
    /// each I/O pattern.
    #[command(
        after_help = "Examples:\n  iosurvey compare s1 s2\n  iosurvey compare lustre-a f800 --format md\n  iosurvey compare lustre-a f800 gpfs-b"
    )]
    Compare(CompareArgs),
    /// Write a report as an evaluation reads: what was measured and how, a summary of the
    /// findings, a section per study (its figures, tables and findings), an appendix of every run.
    #[command(
        after_help = "Examples:\n  iosurvey report -o report.html\n  iosurvey report -o lustre.html --label lustre-a --label f800\n  iosurvey report -o s3.html s3 w2\n  iosurvey report -o nov.html --target /lustre --since 2026-11-01 --until 2026-11-30\n  iosurvey report -o paper.md --format md s3\n  iosurvey report --reference list\n  iosurvey report -o f800.html --label lustre-a --reference isilon-f800\n  iosurvey report -o c1.html --campaign c1 --reference isilon-f800"
    )]
    Report(ReportArgs),
    /// Export runs for other programs: a row per phase as CSV (every figure and every field
    /// of the workload; docs/methodology.md lists the columns), or IOR's JSON (a test per run)
    /// for dashboards that read IOR.
    #[command(
        after_help = "Examples:\n  iosurvey export --format csv > runs.csv\n  iosurvey export s3 lustre-a --format csv -o runs.csv\n  iosurvey export 12 --format ior-json"
    )]
    Export(ExportArgs),
    /// Show one stored run in full.
    #[command(after_help = "Examples:\n  iosurvey show 7\n  iosurvey show 7 --json\n  iosurvey show s3 --format md")]
    Show(ShowArgs),
}

/// A typed error as the command's closing line, said now with `spelling` and what clean-up
/// left said before its hint; the error that remains is silent.
fn closing(mut e: Error, spelling: &dyn Spelling) -> Error {
    if let Some(said) = e.said.as_mut() {
        if let Some(left) = leftovers_said() {
            said.what = format!("{}; {left}", said.what);
        }
    }
    if let Some(line) = e.line(spelling) {
        say_error!("{line}");
    }
    Error::silent(e.kind)
}

/// clap's refusal as one line with a hint: a value's own parser's, typed (the error's
/// source); else clap's message folded and the help to read.
fn parse_error_line(e: &clap::Error) -> String {
    use iosurvey::study::line::{folded, refused_line};
    refused_line(e).unwrap_or_else(|| format!("{} (hint: see 'iosurvey --help')", folded(&clap_text(e))))
}

/// The command line's parser, with what the engine registry decides: every `--engine` is read
/// and checked by the registry as it is parsed (so a name it does not know ends the command
/// before anything is made), and its help lists the registry's engines. The workload that
/// declares the flag sits below the engine room, so the registry is brought in here.
fn parser() -> clap::Command {
    use clap::CommandFactory;
    let tests = format!("Also the engines for tests ({})", iosurvey::engine::backends::for_tests().join(", "));
    let cli = iosurvey::study::line::with_engines(help::front_ends(Cli::command()));
    help::fitted(cli.mut_subcommand("engines", |c| c.mut_arg("all", |a| a.help(tests))), width::columns())
}

/// The tree the completions are made from: the commands of the help, the internal ones (the
/// janitor, the timing tools of the benches) removed, so no shell offers them.
fn visible_tree() -> clap::Command {
    let full = parser();
    let shown: Vec<clap::Command> = full.get_subcommands().filter(|c| !c.is_hide_set()).cloned().collect();
    let mut tree = clap::Command::new(full.get_name().to_string()).subcommands(shown);
    for a in full.get_arguments().filter(|a| !a.is_hide_set()) {
        tree = tree.arg(a.clone());
    }
    tree
}

/// The parsed command line, with what depends on whether a flag was typed: on a device the
/// phases default to a read, the only thing a device allows without a further word.
fn from_matches(m: &clap::ArgMatches) -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    use iosurvey::study::line::device_reads;
    let mut cli = Cli::from_arg_matches(m)?;
    match &mut cli.command {
        Command::Run(a) => {
            device_reads(m.subcommand_matches("run"), a.dir.is_some() || a.s3.is_some(), &mut a.workload.ops)
        }
        Command::Targets(a) => device_reads(m.subcommand_matches("targets"), a.dir.is_some(), &mut a.workload.ops),
        _ => {}
    }
    Ok(cli)
}

/// Parses the command line, runs it, and returns the process exit code.
pub fn main() -> i32 {
    if let Some(invoked) = iosurvey::compat::line::invoked(&std::env::args_os().collect::<Vec<_>>()) {
        return compat::main(invoked);
    }
    if package::asks_version(&std::env::args_os().collect::<Vec<_>>()) {
        out!("{}", package::version());
        return finish(Ok(()));
    }
    let cli = match parser().try_get_matches().and_then(|m| from_matches(&m)) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        // A bare `iosurvey` asks what there is: the help, on stdout.
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            out!("{}", e.render());
            return finish(Ok(()));
        }
        Err(e) => {
            say!("iosurvey: error: {}", parse_error_line(&e));
            return 2;
        }
    };
    // Served without a team: nothing here is measured, and an MPI launch is not needed.
    match &cli.command {
        Command::Janitor => return iosurvey::janitor::serve(std::io::stdin().lock()),
        Command::Completions { shell } => return finish(package::completions(*shell)),
        Command::Manpages { dir } => return finish(package::manpages(dir, &cli.db)),
        // One process's work on files: no team (an MPI build's singleton start would bring the
        // launcher's own daemon), and not one of several launched processes at once.
        Command::Merge(args) => {
            if let Some((var, n)) = iosurvey::team::launched_as_many(|v| std::env::var(v).ok()) {
                say_error!("merge runs as one process, but this is one of {n} ({var}) (hint: run iosurvey merge without a launcher)");
                return 2;
            }
            prepare();
            return finish(merge::merge(args).map(|out| out!("{out}")));
        }
        _ => {}
    }
    execute(|team| commands::dispatch(&cli, team))
}

/// The team of this build: MPI ranks x threads, or threads of this process.
#[cfg(feature = "mpi")]
type BuildTeam = iosurvey::team::mpi::MpiTeam;
/// The team of this build: MPI ranks x threads, or threads of this process.
#[cfg(not(feature = "mpi"))]
type BuildTeam = iosurvey::team::local::LocalTeam;

/// Runs a command's work with the team, its signals caught, and gives the exit code: the
/// work's failure said in one line with what clean-up left.
fn execute(work: impl FnOnce(&BuildTeam) -> Result<(), Error>) -> i32 {
    prepare();
    finish(with_team(work))
}

/// Signals taken by their thread, and a broken team ends the process with one line.
fn prepare() {
    catch_interrupts();
    iosurvey::team::on_broken(|why| {
        if !LEAD.load(std::sync::atomic::Ordering::Relaxed) {
            say_error!("{why} (hint: the lead process says what became of the run)");
        }
        stop_now(why)
    });
}

/// The exit code of a command's result, its line said (an error not said yet names no
/// command's flags).
fn finish(result: Result<(), Error>) -> i32 {
    // From here on, the signal thread's stop-at-once path cannot start: one ending, one line.
    let _ending = ENDING.lock();
    let result = result.and_then(|()| match stdout::failure() {
        Some(why) => Err(Error::failed(
            format!("cannot write standard output: {why}"),
            "check the file or device standard output goes to; what the command stored stays",
        )),
        None => Ok(()),
    });
    match result {
        Ok(()) => {
            if let Some(left) = leftovers_said() {
                say!("iosurvey: warning: {left} (hint: remove them by hand once you have checked them)");
            }
            0
        }
        Err(e) => closing(e, &Plain).exit_code(),
    }
}

/// What clean-up left, as one clause, once.
fn leftovers_said() -> Option<String> {
    let left = LEFTOVERS.take();
    (!left.is_empty()).then(|| format!("clean-up could not remove {}", left.join("; ")))
}

/// Runs `f` with the team of this build: MPI ranks x threads, or threads of this process.
#[cfg(feature = "mpi")]
fn with_team(f: impl FnOnce(&BuildTeam) -> Result<(), Error>) -> Result<(), Error> {
    let started = std::time::Instant::now();
    let team = iosurvey::team::mpi::MpiTeam::init()
        .map_err(|e| Error::failed(e, "check the MPI installation and launcher"))?;
    let _ = commands::TEAM_START_NS.set(started.elapsed().as_nanos() as u64);
    use iosurvey::team::Team;
    ONE_OF_MANY.store(team.processes() > 1, std::sync::atomic::Ordering::Relaxed);
    LEAD.store(team.process() == 0, std::sync::atomic::Ordering::Relaxed);
    f(&team)
}

/// Runs `f` with the team of this build: MPI ranks x threads, or threads of this process.
#[cfg(not(feature = "mpi"))]
fn with_team(f: impl FnOnce(&BuildTeam) -> Result<(), Error>) -> Result<(), Error> {
    // Started by a launcher as one of several processes, a build without MPI would run that
    // many separate teams on one directory and store.
    if let Some((var, n)) = iosurvey::team::launched_as_many(|v| std::env::var(v).ok()) {
        return Err(Error::refused(
            format!("started by a launcher as one of several processes ({var}={n}), but this iosurvey was built without MPI"),
            "build with 'cargo build --release --features mpi', or start a single process",
        ));
    }
    f(&iosurvey::team::local::LocalTeam)
}

/// Signals that stop a run: Ctrl-C, kill, and a lost terminal or batch wrapper.
const STOPPERS: [i32; 3] = [signal::SIGINT, signal::SIGTERM, signal::SIGHUP];

/// Signals within this long of the first count as one: a wrapper such as `timeout` may deliver
/// one signal twice, to the process and to its group.
const SAME_SIGNAL: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the stop after a signal may take before iosurvey removes its files and exits
/// anyway, so the whole clean-up fits in Slurm's default KillWait of 30 s.
const STOP_DEADLINE: std::time::Duration = std::time::Duration::from_secs(18);

/// How long removing the files may take when stopping at once (a hung server must not hold
/// the exit).
const REMOVE_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long stopping at once waits for a run that is storing its own record.
const STORE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Takes SIGINT, SIGTERM and SIGHUP away from every thread (threads made later inherit the
/// mask) and hands them to one thread that waits for them, so their handling is ordinary
/// code. The first signal stops the run after the current transfers: stored as failed, files
/// removed. A second one, a second or more later, or no exit within the deadline, removes the
/// run's files for at most 10 s and exits 130 naming what is left.
fn catch_interrupts() {
    let set = signal::SignalSet::of(&STOPPERS);
    set.block();
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
        let mut first: Option<std::time::Instant> = None;
        loop {
            let deadline = first.map(|t| (t + STOP_DEADLINE).saturating_duration_since(std::time::Instant::now()));
            match set.wait(deadline) {
                Some(sig) if !RUNNING.load(std::sync::atomic::Ordering::Relaxed) => {
                    output::abandon();
                    if merge::abandon() {
                        say_error!("stopped by {}: nothing was merged (hint: run the merge again)", signal_name(sig));
                    }
                    std::process::exit(130)
                }
                // A launcher that ends one process of an MPI job ends the others within a
                // second or less, and a dead peer would hang the collectives of a clean stop.
                Some(sig) if ONE_OF_MANY.load(std::sync::atomic::Ordering::Relaxed) => {
                    if !LEAD.load(std::sync::atomic::Ordering::Relaxed) {
                        make_way_for_the_lead()
                    }
                    stop_now(&format!("{} to one process of an MPI job", signal_name(sig)))
                }
                Some(_) => match first {
                    None => {
                        first = Some(std::time::Instant::now());
                        CANCEL.cancel();
                    }
                    Some(t) if t.elapsed() < SAME_SIGNAL => {}
                    Some(_) => stop_now("a second signal"),
                },
                None => stop_now("the run did not stop within 18 s of the signal"),
            }
        }
    });
    if spawned.is_err() {
        // Without the thread, the signals keep their default action: the process ends at once.
        set.unblock();
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        signal::SIGINT => "SIGINT",
        signal::SIGHUP => "SIGHUP",
        _ => "SIGTERM",
    }
}

/// How long a process that does not lead stays after a stop signal, its work stopped, before
/// it ends anyway.
const MAKE_WAY: std::time::Duration = std::time::Duration::from_secs(3);

/// Stops this process's work and waits to be ended, without ending first. Open MPI's mpirun
/// signals every process at once and sends SIGKILL one second later, or as soon as any process
/// exits: a helper that ended at once would cut the lead's second to milliseconds, and the
/// lead, killed before it speaks, would leave the job without its one line.
fn make_way_for_the_lead() -> ! {
    // Held to the end: the command cannot return and exit under us.
    let _ending = ENDING.lock();
    CANCEL.cancel();
    std::thread::sleep(MAKE_WAY);
    std::process::exit(130)
}

/// Ends the process now: removes the files of the run in progress, for a bounded time,
/// stores the run as failed, and says in one line what became of both. A process that does
/// not lead has neither and ends silently: its lead speaks for the team.
fn stop_now(why: &str) -> ! {
    // Blocks for good if the command is already ending on its own; it then exits for us.
    let _ending = ENDING.lock();
    if !LEAD.load(std::sync::atomic::Ordering::Relaxed) {
        std::process::exit(130)
    }
    // A launcher that ends one process of an MPI job sends SIGKILL within milliseconds of
    // SIGTERM: the janitor, out of its reach, files the run and removes its files.
    if ONE_OF_MANY.load(std::sync::atomic::Ordering::Relaxed) && iosurvey::janitor::on_watch() {
        iosurvey::janitor::quiet();
        say_error!("stopped at once after {why}: iosurvey's janitor removes the run's files and stores it as failed (hint: see 'iosurvey ls', then run it again)");
        std::process::exit(130)
    }
    // Stored first: the store is not on the target, whose server may hang the removal.
    let stored = match iosurvey::store::will::execute(&format!("stopped at once after {why}"), STORE_WAIT) {
        Some(Ok(id)) => format!("stored as failed run {id}"),
        Some(Err(e)) => format!("the run could not be stored ({e})"),
        None => "the run was not stored".into(),
    };
    // Filed: the janitor must not file it twice.
    iosurvey::janitor::disarm();
    output::abandon();
    let left = iosurvey::target::live::remove_all(REMOVE_LIMIT);
    // What is left stays in the janitor's care, to be removed without a second line.
    if left.is_empty() {
        iosurvey::janitor::release_all();
        say_error!("stopped at once after {why}: {stored}; its files were removed (hint: run it again)");
    } else {
        iosurvey::janitor::quiet();
        let names: Vec<String> = left.iter().map(|p| p.display().to_string()).collect();
        say_error!(
            "stopped at once after {why}: {stored}; {} file(s) could not be removed in 10 s: {} (hint: remove them by hand once the file system answers)",
            left.len(),
            names.join(", ")
        );
    }
    std::process::exit(130)
}
