//! `iosurvey train`: the training emulation of `iosurvey::train`, its data set generated or
//! reused in a target directory, each run stored; `--find-max` probes accelerator counts.

use super::opening::command_line;
use super::{Failure, TargetArgs};
use iosurvey::store::Store;
use iosurvey::train::emulate::{self, Throttle};
use iosurvey::train::record::{flags, run_record, summarize, Summary};
use iosurvey::train::{Accelerator, Model, Overrides, Settings, TrainError};
use iosurvey::units::size_arg;
use std::path::PathBuf;

/// The options of `iosurvey train`.
#[derive(clap::Args)]
pub(super) struct TrainArgs {
    /// Directory of the data set: empty, or holding only iosurvey's files (a missing leaf is
    /// made).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// The MLPerf Storage workload whose preset to start from.
    #[arg(long, value_enum)]
    workload: Model,
    /// The emulated accelerator (sets the compute time per step).
    #[arg(long, value_enum, default_value = "h100")]
    accelerator: Accelerator,
    /// Emulated accelerators in this process (each a rank with its own readers).
    #[arg(long, default_value_t = 1)]
    accelerators: usize,
    /// Write the data set first (else it must be there, kept by an earlier --generate --keep).
    #[arg(long)]
    generate: bool,
    /// A rehearsal at 1/N of the sizing rule's data set (said to be one wherever shown).
    #[arg(long, value_name = "1/N", value_parser = scale_arg)]
    scale: Option<u64>,
    /// Files in the data set, instead of the sizing rule (max(500 steps, 5x RAM)).
    #[arg(long, value_name = "N")]
    files: Option<u64>,
    /// Mean bytes per sample.
    #[arg(long, value_parser = size_arg, value_name = "BYTES")]
    sample_bytes: Option<u64>,
    /// Standard deviation of the bytes per sample.
    #[arg(long, value_parser = size_arg, value_name = "BYTES")]
    sample_stdev: Option<u64>,
    /// Samples in each file.
    #[arg(long, value_name = "N")]
    samples_per_file: Option<u64>,
    /// Samples per step per accelerator.
    #[arg(long, value_name = "N")]
    batch: Option<u64>,
    /// Reader threads per accelerator.
    #[arg(long, value_name = "N")]
    reader_threads: Option<usize>,
    /// Batches each reader thread loads ahead (default 2).
    #[arg(long, value_name = "N")]
    prefetch: Option<usize>,
    /// Compute per step, seconds (default: the preset's for the accelerator).
    #[arg(long, value_name = "SECONDS")]
    compute: Option<f64>,
    /// Standard deviation of the compute per step, seconds.
    #[arg(long, value_name = "SECONDS")]
    compute_stdev: Option<f64>,
    /// The AU a run must reach to pass (default: the workload's).
    #[arg(long, value_name = "FRACTION")]
    au: Option<f64>,
    /// Bytes per read call of a tfrecord file (DLIO's transfer_size; default 256k).
    #[arg(long, value_parser = size_arg, value_name = "BYTES")]
    transfer: Option<u64>,
    /// Steps per epoch (default: as many as each rank's block of samples holds).
    #[arg(long, value_name = "N")]
    steps: Option<u64>,
    /// Epochs.
    #[arg(long, default_value_t = 1)]
    epochs: u32,
    /// Seed of the data and the shuffles.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// O_DIRECT reads (DLIO's odirect).
    #[arg(long)]
    direct: bool,
    /// sync and drop the page cache before the first epoch (root).
    #[arg(long)]
    drop_caches: bool,
    /// Find the most accelerators that pass: doubling, then bisecting; each probe repeated
    /// until its AU interval is clear of the threshold or --probe-runs are spent.
    #[arg(long)]
    find_max: bool,
    /// The most accelerators --find-max tries (the data set is sized for these).
    #[arg(long, default_value_t = 64, value_name = "N")]
    max_accelerators: usize,
    /// Runs per probe at most.
    #[arg(long, default_value_t = 5, value_name = "N")]
    probe_runs: u32,
    /// Caps the reads' aggregate rate (bytes per second): a planted limit for tests.
    #[arg(long, value_parser = size_arg, hide = true)]
    throttle: Option<u64>,
    #[command(flatten)]
    target: TargetArgs,
}

/// `1/N`.
fn scale_arg(text: &str) -> Result<u64, String> {
    text.strip_prefix("1/")
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| (1..=1 << 40).contains(&n))
        .ok_or_else(|| format!("'{text}' is not a scale (hint: give 1/N, e.g. --scale 1/1000)"))
}

impl From<TrainError> for Failure {
    fn from(e: TrainError) -> Self {
        Failure::new(&e, e.hint(), e.exit_code())
    }
}

fn overrides(a: &TrainArgs) -> Overrides {
    Overrides {
        sample_bytes: a.sample_bytes,
        sample_stdev: a.sample_stdev,
        samples_per_file: a.samples_per_file,
        batch: a.batch,
        reader_threads: a.reader_threads,
        prefetch: a.prefetch,
        compute: a.compute,
        compute_stdev: a.compute_stdev,
        au: a.au,
        transfer: a.transfer,
        files: a.files,
        steps: a.steps,
    }
}

fn resolve(a: &TrainArgs, accelerators: usize, over: &Overrides) -> Result<Settings, Failure> {
    let s = Settings::resolve(
        (a.workload, a.accelerator, accelerators),
        over,
        (iosurvey::env::ram_bytes(), a.scale),
        (a.epochs, a.seed, a.direct),
    )?;
    if s.direct && s.format == iosurvey::train::format::Format::Tfrecord && s.transfer % 4096 != 0 {
        return Err(Failure::new(
            format!("--direct needs --transfer in whole 4 KiB blocks, not {}", s.transfer),
            "give e.g. --transfer 256k",
            2,
        ));
    }
    Ok(s)
}

pub(super) fn train(cli: &super::Cli, a: &TrainArgs) -> Result<(), Failure> {
    if a.find_max && (a.max_accelerators == 0 || a.probe_runs == 0) {
        return Err(Failure::new(
            "--max-accelerators and --probe-runs must be at least 1",
            "give each a positive number",
            2,
        ));
    }
    // The data set is sized for the most accelerators a run takes; every setting is checked
    // before anything is written.
    let sizing = if a.find_max { a.max_accelerators } else { a.accelerators };
    let sized = resolve(a, sizing, &overrides(a))?;
    let over = Overrides { files: Some(sized.files), steps: Some(a.steps.unwrap_or(sized.steps)), ..overrides(a) };
    if !a.find_max {
        resolve(a, a.accelerators, &over)?;
    }
    let mut store = Store::open(&cli.db)?;
    let options = iosurvey::target::Options { force: a.target.force, keep: a.target.keep, must_exist: false };
    let mut target = iosurvey::target::Target::open(&a.dir, options)?;
    for note in target.take_notes() {
        say!("iosurvey: warning: {note}");
    }
    let result = study(cli, a, (&sized, &over), &mut target, &mut store);
    let left = target.cleanup();
    if !left.problems.is_empty() {
        say!("iosurvey: warning: clean-up could not remove {}", left.problems.join("; "));
    }
    result
}

fn study(
    cli: &super::Cli,
    a: &TrainArgs,
    (sized, over): (&Settings, &Overrides),
    target: &mut iosurvey::target::Target,
    store: &mut Store,
) -> Result<(), Failure> {
    let cancel = std::sync::atomic::AtomicBool::new(false);
    watched(&cancel, || {
        if a.generate {
            let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
            let g = emulate::generate(sized, target, threads, &cancel)?;
            if !cli.quiet {
                say!(
                    "iosurvey: generated {} files, {} in {:.1} s",
                    sized.files,
                    iosurvey::units::format_size(g.bytes),
                    g.secs
                );
            }
        } else {
            emulate::check_existing(sized, target)?;
        }
        let dropped = a.drop_caches && drop_caches()?;
        let throttle = a.throttle.map(Throttle::new);
        let ctx = Ctx { cli, a, target, throttle: throttle.as_ref(), cancel: &cancel, dropped };
        if a.find_max {
            find_max(&ctx, over, store)
        } else {
            let s = resolve(a, a.accelerators, over)?;
            let (sum, id) = ctx.once(&s, store)?;
            print(cli, &s, &sum, id);
            Ok(())
        }
    })
}

fn drop_caches() -> Result<bool, Failure> {
    if !iosurvey::target::cache::can_drop() {
        return Err(Failure::new("--drop-caches needs root", "run as root, or leave --drop-caches out", 2));
    }
    iosurvey::target::cache::drop_caches()
        .map_err(|e| Failure::new(format!("cannot drop the page cache: {e}"), "run as root", 1))?;
    Ok(true)
}

struct Ctx<'a> {
    cli: &'a super::Cli,
    a: &'a TrainArgs,
    target: &'a iosurvey::target::Target,
    throttle: Option<&'a Throttle>,
    cancel: &'a std::sync::atomic::AtomicBool,
    dropped: bool,
}

impl Ctx<'_> {
    /// One run, stored.
    fn once(&self, s: &Settings, store: &mut Store) -> Result<(Summary, i64), Failure> {
        let started = iosurvey::units::now_unix();
        let o = emulate::train(s, self.target, self.throttle, self.cancel)?;
        let sum = summarize(s, &o);
        let env = iosurvey::env::collect(self.target.dir().path());
        let mut warnings = flags(s, &o, &sum, env.cpu_count);
        if self.throttle.is_some() {
            warnings.push("reads throttled (--throttle): a planted limit, not the storage's".into());
        }
        let mut r = run_record(s, &o, (env, command_line(), started), (self.dropped, warnings));
        r.label = self.a.target.label.clone();
        let id = store.save(&r)?;
        Ok((sum, id))
    }
}

fn print(cli: &super::Cli, s: &Settings, sum: &Summary, id: i64) {
    if cli.quiet {
        return;
    }
    let ms = |x: Option<f64>| x.map_or("-".into(), |v| format!("{:.2} ms", v * 1e3));
    outln!(
        "run {id}: {} on {} x{}: AU {:.1}% ({} at {:.0}%), {:.1} samples/s, {:.1} MiB/s read, data wait p50 {} p99 {}, CPU {} per sample",
        s.model.name(),
        s.accelerator.name(),
        s.accelerators,
        sum.au * 100.0,
        if sum.pass { "pass" } else { "fail" },
        s.au * 100.0,
        sum.samples_per_sec,
        sum.read_bytes_per_sec / (1 << 20) as f64,
        ms(sum.wait_p50),
        ms(sum.wait_p99),
        sum.cpu_per_sample.map_or("-".into(), |c| format!("{:.1} us", c * 1e6)),
    );
}

/// Whether `k` accelerators pass: runs repeated until the AU's 95% interval is clear of the
/// threshold, or the runs are spent (then the mean decides).
fn probe(ctx: &Ctx, over: &Overrides, k: usize, store: &mut Store) -> Result<bool, Failure> {
    let s = resolve(ctx.a, k, over)?;
    let mut aus = Vec::new();
    for _ in 0..ctx.a.probe_runs {
        let (sum, id) = ctx.once(&s, store)?;
        print(ctx.cli, &s, &sum, id);
        aus.push(sum.au);
        if let Some(i) = iosurvey::stats::mean_interval(&aus) {
            if i.lo >= s.au {
                return Ok(true);
            }
            if i.hi < s.au {
                return Ok(false);
            }
        }
    }
    Ok(aus.iter().sum::<f64>() / aus.len() as f64 >= s.au)
}

fn find_max(ctx: &Ctx, over: &Overrides, store: &mut Store) -> Result<(), Failure> {
    let most = ctx.a.max_accelerators;
    let (mut pass, mut fail) = (0usize, None::<usize>);
    let mut k = 1;
    // Doubling until a probe fails, then bisecting between the last pass and the first fail.
    while k <= most {
        if probe(ctx, over, k, store)? {
            pass = k;
            k *= 2;
        } else {
            fail = Some(k);
            break;
        }
    }
    let mut hi = fail.unwrap_or(most + 1);
    if fail.is_none() && pass < most {
        if probe(ctx, over, most, store)? {
            pass = most;
        } else {
            hi = most;
        }
    }
    while hi - pass > 1 {
        let mid = pass + (hi - pass) / 2;
        if probe(ctx, over, mid, store)? {
            pass = mid;
        } else {
            hi = mid;
        }
    }
    outln!(
        "most accelerators that pass: {pass}{}",
        if pass == most { format!(" (the most tried: --max-accelerators {most})") } else { String::new() }
    );
    Ok(())
}

/// The options of `iosurvey checkpoint`.
#[derive(clap::Args)]
pub(super) struct CheckpointArgs {
    /// Directory of the checkpoints: empty, or holding only iosurvey's files (a missing leaf
    /// is made).
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// The model: 14 bytes per parameter, sharded evenly over the ranks.
    #[arg(long, value_enum)]
    model: iosurvey::train::checkpoint::Llama,
    /// Ranks (threads) the model's state is sharded over, each writing its own files.
    #[arg(long, default_value_t = 8)]
    ranks: usize,
    /// Checkpoints written, with --compute between them.
    #[arg(long, default_value_t = 10)]
    checkpoints: u32,
    /// Checkpoints read back (0: none).
    #[arg(long, default_value_t = 10)]
    reads: u32,
    /// Compute between checkpoints, seconds.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    compute: f64,
    /// Bytes per write or read call.
    #[arg(long, value_parser = size_arg, default_value = "16m")]
    transfer: u64,
    /// Rank r reads the shard rank (r + N) mod ranks wrote.
    #[arg(long, default_value_t = 0, value_name = "N")]
    shift: usize,
    /// A rehearsal at 1/N of the model's size (said to be one wherever shown).
    #[arg(long, value_name = "1/N", value_parser = scale_arg)]
    scale: Option<u64>,
    /// Never drop the page cache before the reads (else dropped, as root, when the data is
    /// under 3x RAM).
    #[arg(long)]
    no_drop_caches: bool,
    #[command(flatten)]
    target: TargetArgs,
}

pub(super) fn checkpoint(cli: &super::Cli, a: &CheckpointArgs) -> Result<(), Failure> {
    use iosurvey::train::checkpoint::{self as ckpt, Checkpoints};
    let c = Checkpoints {
        model: a.model,
        ranks: a.ranks,
        writes: a.checkpoints,
        reads: a.reads,
        compute: a.compute,
        transfer: a.transfer,
        shift: a.shift,
        scale: a.scale,
        ram_bytes: iosurvey::env::ram_bytes(),
    };
    c.check()?;
    let mut store = Store::open(&cli.db)?;
    let options = iosurvey::target::Options { force: a.target.force, keep: a.target.keep, must_exist: false };
    let mut target = iosurvey::target::Target::open(&a.dir, options)?;
    for note in target.take_notes() {
        say!("iosurvey: warning: {note}");
    }
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let started = iosurvey::units::now_unix();
    let result = watched(&cancel, || ckpt::run(&c, &mut target, !a.no_drop_caches, &cancel));
    let env = iosurvey::env::collect(target.dir().path());
    let left = target.cleanup();
    if !left.problems.is_empty() {
        say!("iosurvey: warning: clean-up could not remove {}", left.problems.join("; "));
    }
    let o = result?;
    let mut r = iosurvey::train::record::checkpoint_record(&c, &o, (env, command_line(), started), Vec::new());
    r.label = a.target.label.clone();
    let id = store.save(&r)?;
    if !cli.quiet {
        let p = &r.tool_params;
        let get = |k: &str| p.get(k).map_or("-", String::as_str);
        outln!(
            "run {id}: {} checkpoints of {} on {} ranks ({} a rank): write {} s max, {} GiB/s min over ranks; read {} s max, {} GiB/s min; recovery {} s",
            c.writes,
            c.model.name(),
            c.ranks,
            iosurvey::units::format_size(c.rank_bytes()),
            get("ckpt.write_max_duration_s"),
            get("ckpt.write_min_gib_s"),
            get("ckpt.read_max_duration_s"),
            get("ckpt.read_min_gib_s"),
            get("ckpt.recovery_s"),
        );
        for w in &r.warnings {
            say!("iosurvey: warning: {w}");
        }
    }
    Ok(())
}

/// Runs `work` with `cancel` set once the command's stop signal arrives.
fn watched<T>(cancel: &std::sync::atomic::AtomicBool, work: impl FnOnce() -> T) -> T {
    let stop = super::CANCEL.clone();
    let watching = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            while watching.load(std::sync::atomic::Ordering::Relaxed) {
                if stop.is_cancelled() {
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
        let r = work();
        watching.store(false, std::sync::atomic::Ordering::Relaxed);
        r
    })
}
