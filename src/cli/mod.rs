//! The command line: parsing, dispatch, printing, exit codes. Thin: the work is in the library.

mod progress;

use clap::{Args, Parser, Subcommand};
use iosurvey::engine::target::Target;
use iosurvey::engine::{cache, EngineError, INTERRUPTED};
use iosurvey::plan::{self, SurveyShape};
use iosurvey::record::RunRecord;
use iosurvey::report;
use iosurvey::runner::{RunError, Runner, Watch};
use iosurvey::spec::{Access, Layout, Op, Pattern, SpecError, Workload};
use iosurvey::store::Store;
use iosurvey::units::parse_size;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

const EXAMPLES: &str = "\
Examples:
  iosurvey survey /scratch                      standard battery, about a minute
  iosurvey run --dir /scratch/x --access file-per-task --op write,read --transfer 1m --block 2g --tasks 4 --fsync
  iosurvey run --dir /scratch/x --access shared --layout strided --transfer 47008 --block 47008 --segments 1000 --tasks 2 --verify
  iosurvey run --dir /scratch/x --pattern random --transfer 4k --block 1g --direct --tasks 2
  iosurvey ls
  iosurvey show 7 --json";

/// Storage benchmark and characterization: IOR-style runs, surveys, and a result store.
#[derive(Parser)]
#[command(name = "iosurvey", version, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The result store (SQLite file).
    #[arg(long, global = true, default_value = "iosurvey.db", value_name = "PATH")]
    db: PathBuf,
    /// No progress bar and no result table; errors still go to stderr.
    #[arg(long, short, global = true)]
    quiet: bool,
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
    Run(RunArgs),
    /// Run the standard battery on a target and print a characterization.
    #[command(after_help = "Examples:
  iosurvey survey                    in a scratch directory under the current one
  iosurvey survey /scratch           in a fresh directory inside /scratch, removed afterwards
  iosurvey survey /scratch --size 8g --tasks 8")]
    Survey(SurveyArgs),
    /// List the stored runs.
    #[command(after_help = "Examples:\n  iosurvey ls\n  iosurvey ls --db results.db --json")]
    Ls {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one stored run in full.
    #[command(after_help = "Examples:\n  iosurvey show 7\n  iosurvey show 7 --json")]
    Show {
        /// Run id, as `iosurvey ls` prints it.
        id: i64,
        /// Print the whole record as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

#[derive(Args)]
struct RunArgs {
    /// Directory under test: empty, or holding only iosurvey's files.
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// File per task (N-to-N) or one shared file (N-to-1).
    #[arg(long, value_enum, default_value = "file-per-task")]
    access: Access,
    /// How a shared file is divided among tasks.
    #[arg(long, value_enum, default_value = "segmented")]
    layout: Layout,
    /// sequential, random, random-overlap, backward, or stride:K.
    #[arg(long, default_value = "sequential")]
    pattern: Pattern,
    /// Phases in order, e.g. write,read.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "write,read")]
    op: Vec<Op>,
    /// Bytes per I/O call (k, m, g, t are powers of two; 47008 is bytes).
    #[arg(long, short = 't', value_parser = size, default_value = "1m")]
    transfer: u64,
    /// Bytes per task per segment.
    #[arg(long, short = 'b', value_parser = size, default_value = "1g")]
    block: u64,
    /// Segments (IOR -s).
    #[arg(long, short = 's', default_value_t = 1)]
    segments: u64,
    /// Aggregate bytes, split evenly over tasks (replaces --block).
    #[arg(long, value_parser = size, conflicts_with = "block")]
    total: Option<u64>,
    /// Tasks (threads).
    #[arg(long, short = 'n', default_value_t = 1)]
    tasks: usize,
    /// Repetitions of the op list.
    #[arg(long, short = 'i', default_value_t = 1)]
    iterations: u32,
    /// O_DIRECT with aligned buffers.
    #[arg(long)]
    direct: bool,
    /// fsync at the end of each write phase, inside the timed window.
    #[arg(long)]
    fsync: bool,
    /// fsync after every write.
    #[arg(long)]
    fsync_each: bool,
    /// Stamp every transfer and check every byte read.
    #[arg(long)]
    verify: bool,
    /// Seed for random orders.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stamp verified data with this signature instead of a fresh one per run, so that a later
    /// run given the same signature can check it (IOR -G).
    #[arg(long)]
    signature: Option<u64>,
    /// Stop every task this many seconds into a phase.
    #[arg(long, value_name = "SECONDS")]
    stonewall: Option<f64>,
    /// After the stonewall, every task finishes the amount the fastest reached.
    #[arg(long)]
    wear_out: bool,
    /// sync and drop the page cache before each phase (root).
    #[arg(long)]
    drop_caches: bool,
    /// Each task reads what another task wrote.
    #[arg(long)]
    reorder: bool,
    #[command(flatten)]
    target: TargetArgs,
    /// Also write the run record as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct TargetArgs {
    /// Leave the data files in place (they stay recorded as iosurvey's).
    #[arg(long)]
    keep: bool,
    /// Use a directory that holds other files, or /; iosurvey still removes only its own.
    #[arg(long)]
    force: bool,
    /// Skip the free-space check (for file systems that compress or deduplicate).
    #[arg(long)]
    no_space_check: bool,
}

#[derive(Args)]
struct SurveyArgs {
    /// Directory in which to make the survey's scratch directory (default: the current one).
    dir: Option<PathBuf>,
    /// Bytes each sequential workload moves per phase.
    #[arg(long, value_parser = size, default_value = "4g")]
    size: u64,
    /// Tasks (default: the number of CPUs).
    #[arg(long)]
    tasks: Option<usize>,
    /// Seconds each random 4 KiB phase runs.
    #[arg(long, default_value_t = 8.0)]
    random_secs: f64,
    #[command(flatten)]
    target: TargetArgs,
}

/// An error for the user: one line, and an exit code.
struct Failure {
    line: String,
    code: i32,
}

impl Failure {
    fn new(what: impl std::fmt::Display, hint: impl std::fmt::Display, code: i32) -> Self {
        Failure { line: format!("{what} (hint: {hint})"), code }
    }
}

impl From<RunError> for Failure {
    fn from(e: RunError) -> Self {
        Failure::new(&e, e.hint(), e.exit_code())
    }
}

fn refused(e: EngineError) -> Failure {
    Failure::new(&e, e.hint(), 2)
}

/// Parses the command line, runs it, and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ");
            let line = if first.contains("(hint:") {
                first.to_string()
            } else {
                format!("{first} (hint: see 'iosurvey --help')")
            };
            eprintln!("iosurvey: error: {line}");
            return 2;
        }
    };
    catch_interrupts();
    match dispatch(&cli) {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("iosurvey: error: {}", f.line);
            f.code
        }
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
    // A second signal ends the process at once.
    // SAFETY: signal() is async-signal-safe.
    unsafe { libc::signal(signal, libc::SIG_DFL) };
}

/// Ctrl-C and SIGTERM stop the run cleanly: stored as failed, files removed.
fn catch_interrupts() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: on_signal only stores to an atomic and resets the handler.
        unsafe { libc::signal(signal, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
}

fn dispatch(cli: &Cli) -> Result<(), Failure> {
    let open_store = || Store::open(&cli.db).map_err(|e| Failure::new(&e, e.hint(), 4));
    match &cli.command {
        Command::Run(args) => run(cli, args, &mut open_store()?),
        Command::Survey(args) => survey(cli, args, &mut open_store()?),
        Command::Ls { json } => {
            let rows = open_store()?.list().map_err(|e| Failure::new(&e, e.hint(), 4))?;
            print!("{}", if *json { to_json(&rows)? } else { report::list_text(&rows) });
            Ok(())
        }
        Command::Show { id, json } => {
            let record = open_store()?.load(*id).map_err(|e| Failure::new(&e, e.hint(), 4))?;
            print!("{}", if *json { to_json(&record)? } else { report::run_text(&record) });
            Ok(())
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(v).map(|s| s + "\n").map_err(|e| Failure::new(e, "report this as a bug", 1))
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn watcher(cli: &Cli) -> Option<&'static Watch> {
    (!cli.quiet && std::io::stderr().is_terminal()).then_some(&progress::watch as &Watch)
}

fn workload(a: &RunArgs) -> Result<Workload, Failure> {
    let mut w = Workload {
        access: a.access,
        layout: a.layout,
        pattern: a.pattern,
        ops: a.op.clone(),
        transfer: a.transfer,
        block: a.block,
        segments: a.segments,
        tasks: a.tasks,
        iterations: a.iterations,
        direct: a.direct,
        fsync: a.fsync,
        fsync_each: a.fsync_each,
        verify: a.verify,
        seed: a.seed,
        signature: a.signature,
        stonewall_secs: a.stonewall,
        wear_out: a.wear_out,
        drop_caches: a.drop_caches,
        reorder: a.reorder,
    };
    if let Some(total) = a.total {
        w.set_total(total).map_err(spec_failure)?;
    }
    w.validate().map_err(spec_failure)?;
    Ok(w)
}

/// Spec errors carry their own hint.
fn spec_failure(e: SpecError) -> Failure {
    Failure { line: e.to_string(), code: 2 }
}

fn write_json(path: &Path, record: &RunRecord) -> Result<(), Failure> {
    std::fs::write(path, to_json(record)?)
        .map_err(|e| Failure::new(format!("cannot write {}: {e}", path.display()), "pick a writable --json path", 1))
}

fn run(cli: &Cli, a: &RunArgs, store: &mut Store) -> Result<(), Failure> {
    let w = workload(a)?;
    let mut target = Target::open(&a.dir, a.target.force, a.target.keep).map_err(refused)?;
    let mut runner =
        Runner { store, command_line: command_line(), space_check: !a.target.no_space_check, watch: watcher(cli) };
    let result = runner.run(&mut target, &w, None, None);
    let leftovers = target.cleanup();
    for l in &leftovers {
        eprintln!("iosurvey: warning: could not remove {l}");
    }
    let record = match &result {
        Ok(r) => Some(r),
        Err(RunError::Failed { record, .. }) => Some(record.as_ref()),
        Err(_) => None,
    };
    if let Some(r) = record {
        if let Some(path) = &a.json {
            write_json(path, r)?;
        }
        if cli.quiet {
            println!("run {}", r.id.unwrap_or_default());
        } else {
            print!("{}", report::run_text(r));
        }
    }
    result.map(|_| ()).map_err(Failure::from)
}

fn survey(cli: &Cli, a: &SurveyArgs, store: &mut Store) -> Result<(), Failure> {
    let parent = match &a.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().map_err(|e| {
            Failure::new(format!("cannot read the current directory: {e}"), "cd to a directory that exists", 2)
        })?,
    };
    let name = format!("iosurvey-survey-{}", std::process::id());
    let mut target = Target::create(&parent, &name, a.target.keep).map_err(refused)?;
    let direct = target.direct_alignment().is_ok_and(|align| 4096 % align == 0);
    let shape = SurveyShape {
        size: a.size,
        tasks: a.tasks.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        direct,
        drop_caches: cache::can_drop(),
        random_secs: a.random_secs,
    };
    let items = plan::survey(shape);
    let mut runner =
        Runner { store, command_line: command_line(), space_check: !a.target.no_space_check, watch: watcher(cli) };
    let survey_id = runner
        .store
        .begin_survey(now(), &target.dir().display().to_string(), &runner.command_line)
        .map_err(|e| Failure::new(&e, e.hint(), 4))?;
    let mut records = Vec::new();
    let mut failure = None;
    for item in &items {
        if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        if !cli.quiet {
            eprintln!("iosurvey: {} ({})", item.name, item.workload.label());
        }
        match runner.run(&mut target, &item.workload, Some(item.name), Some(survey_id)) {
            Ok(r) => records.push(r),
            Err(RunError::Failed { id, record, hint, code }) => {
                records.push(*record.clone());
                failure = Some(RunError::Failed { id, record, hint, code });
                break;
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    for l in target.cleanup() {
        eprintln!("iosurvey: warning: could not remove {l}");
    }
    if !records.is_empty() {
        print!("{}", report::survey_text(survey_id, &records));
    }
    if !shape.drop_caches && !cli.quiet {
        eprintln!("iosurvey: note: not root, so the page cache was not dropped; reads flagged as possibly cached may come from memory");
    }
    failure.map_or(Ok(()), |e| Err(e.into()))
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}
