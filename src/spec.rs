//! Typed workloads: what to do, checked before anything touches the storage.
//!
//! A [`Workload`] is the whole description of a run's I/O. [`Workload::validate`] refuses
//! combinations that cannot be run with one line saying what, why and what to do.

use crate::units::format_size;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

pub mod meta;
mod mix;
mod object_sizes;
pub use meta::{Before, Meta, Tree};
pub use mix::Mix;
pub use object_sizes::ObjectSizes;

/// Who shares files: one file per task (N-to-N) or one file for the whole team (N-to-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// N-to-N: every task its own file.
    FilePerTask,
    /// N-to-1: all tasks in one file.
    Shared,
}

/// How a shared file is divided among tasks (ignored for file per task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Each task owns one contiguous block per segment (IOR's default).
    Segmented,
    /// Transfers of all tasks interleave: task t owns every n-th transfer.
    Strided,
}

/// The order in which a task visits its own transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// In increasing offset order.
    Sequential,
    /// Every transfer exactly once, in a seeded random order.
    Random,
    /// As many transfers as `Random`, at random slots drawn with replacement (may repeat).
    RandomOverlap,
    /// In decreasing offset order.
    Backward,
    /// The first transfer's place, again and again (IOzone's record rewrite).
    Same,
    /// Transfer 0, k, 2k, ... then 1, k+1, ...: every transfer once, k apart.
    Stride(u64),
}

impl FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let hint = "expected sequential, random, random-overlap, backward, same or stride:K";
        match s {
            "sequential" | "seq" => Ok(Pattern::Sequential),
            "random" => Ok(Pattern::Random),
            "random-overlap" => Ok(Pattern::RandomOverlap),
            "backward" => Ok(Pattern::Backward),
            "same" | "record-rewrite" => Ok(Pattern::Same),
            _ => {
                let k = s
                    .strip_prefix("stride:")
                    .or_else(|| s.strip_prefix("strided:"))
                    .ok_or_else(|| format!("unknown pattern '{s}' ({hint})"))?;
                let k: u64 = k.parse().map_err(|_| format!("bad stride in '{s}' ({hint})"))?;
                Ok(Pattern::Stride(k))
            }
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Sequential => f.write_str("sequential"),
            Pattern::Random => f.write_str("random"),
            Pattern::RandomOverlap => f.write_str("random-overlap"),
            Pattern::Backward => f.write_str("backward"),
            Pattern::Same => f.write_str("same"),
            Pattern::Stride(k) => write!(f, "stride:{k}"),
        }
    }
}

/// The I/O interface under test: a name in the engine registry (engine/backends), with the
/// parameter of an engine that takes one ("delay:100us"). The registry checks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EngineName(String);

impl EngineName {
    /// `base`, or `base:param`.
    pub fn new(base: &str, param: Option<&str>) -> Self {
        EngineName(match param {
            Some(p) => format!("{base}:{p}"),
            None => base.to_string(),
        })
    }

    /// The engine's name without its parameter.
    pub fn base(&self) -> &str {
        self.0.split_once(':').map_or(&self.0, |(b, _)| b)
    }

    /// The parameter, if any.
    pub fn param(&self) -> Option<&str> {
        self.0.split_once(':').map(|(_, p)| p)
    }
}

impl Default for EngineName {
    fn default() -> Self {
        EngineName("sync".into())
    }
}

impl fmt::Display for EngineName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One phase kind; a workload lists them in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Write every transfer (on a bucket: PUT).
    #[value(alias = "put")]
    Write,
    /// Read every transfer (on a bucket: GET).
    #[value(alias = "get")]
    Read,
    /// Write every transfer again, into the file a write made (IOzone's rewrite): recorded
    /// apart from the first write, whose cost includes allocating the blocks.
    Rewrite,
    /// Read every transfer again (IOzone's reread): the page cache's figure when nothing was
    /// dropped in between, recorded apart from the first read.
    Reread,
    /// Each transfer a read or a write, drawn (seeded) with `--read-percent` chances of a read
    /// (IOzone's random mix, with --pattern random), in files a write made.
    Mix,
    /// Ask a bucket for every object's size and ETag (S3 HEAD, warp's STAT), a request per
    /// transfer, in objects a write made.
    #[value(alias = "stat")]
    Head,
    /// List each task's own objects (S3 LIST, a page of up to 1000 keys a request), a listing
    /// per transfer.
    List,
    /// Remove every object a write of this run made (S3 DELETE), a request per transfer.
    Delete,
    /// Make the directories of the metadata tree (one per task, or the shared one).
    #[value(skip)]
    TreeCreate,
    /// Make every directory item (mkdir).
    #[value(skip)]
    DirCreate,
    /// stat every directory item.
    #[value(skip)]
    DirStat,
    /// Remove every directory item (rmdir).
    #[value(skip)]
    DirRemove,
    /// Create every file item (open with O_CREAT|O_EXCL, optionally write, close).
    #[value(skip)]
    FileCreate,
    /// stat every file item.
    #[value(skip)]
    FileStat,
    /// Open, read and close every file item.
    #[value(skip)]
    FileRead,
    /// Remove every file item (unlink).
    #[value(skip)]
    FileRemove,
    /// Remove the directories of the metadata tree, deepest first.
    #[value(skip)]
    TreeRemove,
}

impl Op {
    /// The name used in output and in the store: serde's, the one spelling.
    pub fn name(self) -> String {
        variant_name(&self)
    }

    /// Whether the phase moves data through a data file (else it works on metadata items).
    pub fn moves_data(self) -> bool {
        matches!(self, Op::Write | Op::Read | Op::Rewrite | Op::Reread | Op::Mix | Op::Head | Op::List | Op::Delete)
    }

    /// Whether the phase asks an object store for what only it has (HEAD, LIST, DELETE): it
    /// moves no data, and no engine of files makes it.
    pub fn on_objects_only(self) -> bool {
        matches!(self, Op::Head | Op::List | Op::Delete)
    }

    /// What a data phase does to its file: `Write` for write and rewrite, `Read` for read and
    /// reread (the data path knows only the two).
    pub fn direction(self) -> Op {
        match self {
            Op::Rewrite => Op::Write,
            // They write nothing, and work on objects a write made, as a read does.
            Op::Reread | Op::Head | Op::List | Op::Delete => Op::Read,
            other => other,
        }
    }
}

/// The text serde gives a unit variant, so that an enum's names are spelled in one place.
pub fn variant_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Everything that decides what a run does: the settings every workload has, and its shape
/// (data transfers or metadata items), so that code which needs one shape says so in its
/// type. Each field is declared once, here or in [`Data`] and [`Meta`]: its type, default,
/// help, command-line flag (the CLI flattens this struct into `run`) and its name in stored
/// records. Validation is [`Workload::validate`].
///
/// Records keep one flat object, the shape's fields beside the common ones (`meta` holds a
/// metadata shape, absent or null for data): the form every stored run has had, so the
/// store, its keys and older records read as they did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct Workload {
    /// Data transfers or metadata items, with the settings only that shape has.
    #[command(flatten)]
    #[serde(flatten, with = "flat_shape")]
    pub shape: Shape,
    /// Phases in order, e.g. write,read or write,rewrite,read,reread.
    #[arg(long = "op", value_enum, value_delimiter = ',', default_value = "write,read")]
    pub ops: Vec<Op>,
    /// Tasks in the team that work (the command line's --tasks is threads per process).
    #[arg(skip = 1usize)]
    pub tasks: usize,
    /// Repetitions of the op list.
    #[arg(long, short = 'i', default_value_t = 1)]
    pub iterations: u32,
    /// Stamp every transfer and check every byte read.
    #[arg(long)]
    pub verify: bool,
    /// Seed for random orders and data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stamp verified data with this signature instead of a fresh one per run, so that a later
    /// run given the same signature can check it (IOR -G).
    #[arg(long)]
    pub signature: Option<u64>,
    /// Stop every task this many seconds into a phase.
    #[arg(long = "stonewall", value_name = "SECONDS")]
    pub stonewall_secs: Option<f64>,
    /// After the stonewall, every task finishes the amount the fastest reached.
    #[arg(long)]
    pub wear_out: bool,
    /// sync and drop the page cache before each phase (root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Width of the time series' intervals, in seconds (at least 0.001).
    #[arg(long = "interval", default_value_t = 1.0, value_name = "SECONDS")]
    pub interval_secs: f64,
    /// Run COMMAND (sh -c, on the lead) this long into the run's first phase: a fault, a
    /// failed drive, a throttle; repeatable. Its output and status are stored with the run,
    /// marked on its time line, and the run's findings give the rate before, during and
    /// after, and the time to recover.
    #[arg(long = "event", value_name = "TIME:COMMAND", value_parser = event_arg)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
}

/// A command run at a time into a run's first phase (`--event 30s:"COMMAND"`). It changes
/// what is measured, so it is part of the workload's key: a run with a fault never pools with
/// one without.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds into the first phase.
    pub at_secs: f64,
    /// The shell command.
    pub command: String,
}

/// The latest an event may be asked for: a week, far past any run, and far from the clock's
/// overflow.
pub const MAX_EVENT_SECS: f64 = 7.0 * 86400.0;

/// Reads `TIME:COMMAND`, TIME a number of seconds with an optional unit (ms, s, m, h).
pub fn event_arg(s: &str) -> Result<Event, String> {
    let (time, command) = s
        .split_once(':')
        .ok_or_else(|| format!("'{s}' is not TIME:COMMAND (e.g. 30s:\"echo 1 > /sys/block/sdb/device/delete\")"))?;
    let t = time.trim();
    let (digits, scale) = [("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .iter()
        .find_map(|(unit, scale)| t.strip_suffix(unit).map(|d| (d, *scale)))
        .unwrap_or((t, 1.0));
    let at_secs = digits
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v * scale)
        .ok_or_else(|| format!("'{time}' is not a time (e.g. 30s, 1.5s, 2m)"))?;
    if at_secs > MAX_EVENT_SECS {
        return Err(format!("'{time}' is past a week into the run; give a time within it"));
    }
    if command.trim().is_empty() {
        return Err(format!("the event at {time} has no command"));
    }
    Ok(Event { at_secs, command: command.to_string() })
}

/// What a workload works on.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Bytes moved through data files (`iosurvey run`).
    Data(Data),
    /// Items made, looked up and removed in trees of directories (`iosurvey meta`).
    Meta(Meta),
}

/// The shape of a data-transfer workload: the files, the transfers and how they are made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct Data {
    /// File per task (N-to-N) or one shared file (N-to-1).
    #[arg(long, value_enum, default_value = "file-per-task")]
    pub access: Access,
    /// How a shared file is divided among tasks.
    #[arg(long, value_enum, default_value = "segmented")]
    pub layout: Layout,
    /// Order of a task's transfers: sequential, random, random-overlap, backward, same (the first
    /// place again and again: IOzone's record rewrite), or stride:K.
    #[arg(long, default_value = "sequential")]
    pub pattern: Pattern,
    /// Bytes per I/O call (k, m, g, t are powers of two; 47008 is bytes).
    #[arg(long, short = 't', value_parser = crate::units::size_arg, default_value = "1m")]
    pub transfer: u64,
    /// Bytes per task per segment.
    #[arg(long, short = 'b', value_parser = crate::units::size_arg, default_value = "1g")]
    pub block: u64,
    /// Segments (IOR -s).
    #[arg(long, short = 's', default_value_t = 1)]
    pub segments: u64,
    /// O_DIRECT with aligned buffers.
    #[arg(long)]
    pub direct: bool,
    /// fsync at the end of each write phase, inside the timed window.
    #[arg(long)]
    pub fsync: bool,
    /// fsync after every write, inside that write's latency.
    #[arg(long)]
    pub fsync_each: bool,
    /// Each task reads what another task wrote.
    #[arg(long)]
    pub reorder: bool,
    /// I/O interface, a name in the engine registry (the command line reads and lists it
    /// through the registry: spec sits below the engine room).
    #[arg(long, default_value = "sync")]
    pub engine: EngineName,
    /// Transfers each task keeps in flight (the engines that keep a queue: the command line's
    /// help names them from the engine registry).
    #[arg(long, default_value_t = 1)]
    pub iodepth: u32,
    /// In a mix phase, the chances in 100 that a transfer is a read.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub read_percent: u32,
    /// On a bucket, a mix phase's requests and their weights, drawn per transfer
    /// (get:45,stat:30,put:15,delete:10 is warp's default); a DELETE only removes the task's
    /// own objects, which a later draw PUTs again.
    #[arg(long, value_name = "OP:WEIGHT,...", default_value = "")]
    #[serde(skip_serializing_if = "Mix::is_empty")]
    pub mix: Mix,
    /// On a bucket, each object's size, drawn per object from the seed: one size, a list
    /// drawn from evenly (4k,64k,1m), random:MIN-MAX (log2-random, as warp's) or weighted
    /// buckets (64k:70,1m:30); each at most --block, put and got whole. Default: --block.
    #[arg(long, value_name = "SIZES", default_value = "")]
    #[serde(skip_serializing_if = "ObjectSizes::is_block")]
    pub object_size: ObjectSizes,
    /// Do not tell the page cache the access pattern (posix_fadvise), as IOR does not; by
    /// default iosurvey advises it, as fio does.
    #[arg(long)]
    pub no_fadvise: bool,
    /// The stonewall view's moment (each task's `bytes_at_first_finish`) is the first task's
    /// end of transfers rather than its close: IOzone's children stop counting when the first
    /// one's transfers end, before the fsync and close it makes untimed (the matrix sets it).
    #[arg(skip)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub first_done_at_transfers: bool,
}

/// The command line builds a data shape: `meta` makes its metadata shape itself, from its
/// own flags.
impl clap::FromArgMatches for Shape {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Data::from_arg_matches(matches).map(Shape::Data)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        match self {
            Shape::Data(data) => data.update_from_arg_matches(matches),
            Shape::Meta(_) => Ok(()),
        }
    }
}

impl clap::Args for Shape {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        Data::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Data::augment_args_for_update(cmd)
    }
}

/// A shape as records hold it: a data shape's fields at the top, `meta` for a metadata shape
/// (the data fields at their defaults beside it, as they always were).
mod flat_shape {
    use super::{Data, Meta, Shape};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Out<'a> {
        #[serde(flatten)]
        data: &'a Data,
        meta: Option<&'a Meta>,
    }

    #[derive(Deserialize)]
    struct In {
        #[serde(flatten)]
        data: Data,
        #[serde(default)]
        meta: Option<Meta>,
    }

    pub fn serialize<S: Serializer>(shape: &Shape, s: S) -> Result<S::Ok, S::Error> {
        let default = Data::default();
        match shape {
            Shape::Data(data) => Out { data, meta: None }.serialize(s),
            Shape::Meta(meta) => Out { data: &default, meta: Some(meta) }.serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
        let In { data, meta } = In::deserialize(d)?;
        Ok(meta.map_or(Shape::Data(data), Shape::Meta))
    }
}

/// A type's defaults as the command line declares them: parsed from no arguments, so each is
/// declared once.
#[derive(clap::Parser)]
struct Declared<T: clap::Args> {
    #[command(flatten)]
    inner: T,
}

fn declared<T: clap::Args + clap::FromArgMatches>() -> T {
    use clap::Parser;
    Declared::<T>::try_parse_from(["iosurvey"]).expect("the declared defaults parse").inner
}

impl Default for Workload {
    fn default() -> Self {
        // Parsed once: records read back fill missing fields from it.
        static DEFAULT: std::sync::OnceLock<Workload> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(declared::<Workload>).clone()
    }
}

impl Default for Data {
    fn default() -> Self {
        static DEFAULT: std::sync::OnceLock<Data> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(declared::<Data>).clone()
    }
}

impl Default for Shape {
    fn default() -> Self {
        Shape::Data(Data::default())
    }
}

/// A data workload of this shape, every common setting at its default.
impl From<Data> for Workload {
    fn from(data: Data) -> Self {
        Workload { shape: Shape::Data(data), ..Workload::default() }
    }
}

/// A metadata workload of this shape, every common setting at its default.
impl From<Meta> for Workload {
    fn from(meta: Meta) -> Self {
        Workload { shape: Shape::Meta(meta), ..Workload::default() }
    }
}

impl FromStr for EngineName {
    type Err = String;
    /// A name, or `name:param`; the engine registry checks that it exists.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            _ if s.is_empty() => Err("an engine name is empty".into()),
            Some((base, param)) if base.is_empty() || param.is_empty() => Err(format!("bad engine '{s}'")),
            Some((base, param)) => Ok(EngineName::new(base, Some(param))),
            None => Ok(EngineName::new(s, None)),
        }
    }
}

/// A setting of a run, as the library names it. Errors say which setting would fix them;
/// each front end spells it its own way (`--block` for iosurvey, `-b` for IOR's options).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Setting {
    /// Bytes per I/O call.
    Transfer,
    /// Checking every byte read.
    Verify,
    /// Items per task of a metadata workload.
    Items,
    /// A metadata tree's depth and branching.
    Tree,
    /// Bytes a metadata workload writes to and reads from each file.
    ItemBytes,
    /// Bytes per task per segment.
    Block,
    /// Segments.
    Segments,
    /// Aggregate bytes over the team.
    Total,
    /// Tasks.
    Tasks,
    /// Repetitions.
    Iterations,
    /// The phases.
    Ops,
    /// The order of transfers.
    Pattern,
    /// The stonewall.
    Stonewall,
    /// Transfers in flight.
    Iodepth,
    /// The I/O interface.
    Engine,
    /// The time series' interval.
    Interval,
    /// fsync at the end of write phases, or after every write.
    Fsync,
    /// O_DIRECT.
    Direct,
    /// The target directory.
    Dir,
    /// Accepting a directory that holds other files.
    Force,
    /// Leaving the data files.
    Keep,
    /// Skipping the free-space check.
    NoSpaceCheck,
    /// The result store.
    Db,
}

/// What would make a refused or failed run work: settings and the values that would work,
/// or words where no setting would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Hint {
    /// Words that name no setting.
    Say(String),
    /// A reason, then what to do about it.
    Because(String, Box<Hint>),
    /// Give the setting this value.
    Use(Setting, String),
    /// Give it at least this.
    AtLeast(Setting, String),
    /// Give it at most this.
    AtMost(Setting, String),
    /// Give it a multiple of this.
    MultipleOf(Setting, String),
    /// Add the setting (with a value, where it takes one).
    Add(Setting, Option<String>),
    /// Leave the setting out.
    Drop(Setting),
    /// Make any of these smaller.
    Lower(Vec<Setting>),
    /// One or the other.
    Either(Box<Hint>, Box<Hint>),
}

/// A workload that cannot run as given. The message names no flag: [`SpecError::hint`] says
/// which setting would fix it.
#[derive(Debug, Error, PartialEq)]
pub enum SpecError {
    /// A count that must be positive is zero.
    #[error("the {what:?} setting is zero")]
    Zero {
        /// The setting.
        what: Setting,
    },
    /// Transfer larger than the block it is cut from.
    #[error("transfer size {transfer} is larger than block size {block}")]
    TransferLargerThanBlock {
        /// Transfer, formatted.
        transfer: String,
        /// Block, formatted.
        block: String,
    },
    /// Block is not a whole number of transfers.
    #[error("block size {block} bytes is not a multiple of transfer size {transfer} bytes")]
    BlockNotMultiple {
        /// Block in bytes.
        block: u64,
        /// Transfer in bytes.
        transfer: u64,
        /// Nearest valid block.
        suggest: u64,
    },
    /// The total cannot be split evenly.
    #[error("total {total} bytes cannot be split into {parts} equal blocks of whole {transfer}-byte transfers")]
    TotalNotDivisible {
        /// Total requested.
        total: u64,
        /// tasks x segments.
        parts: u64,
        /// Transfer in bytes.
        transfer: u64,
        /// tasks x segments x transfer.
        step: u64,
    },
    /// Verification needs room for the header.
    #[error("verification needs transfers of at least {min} bytes, got {transfer}")]
    VerifyTooSmall {
        /// Smallest transfer that holds the header.
        min: u64,
        /// The transfer given.
        transfer: u64,
    },
    /// Random-overlap and same writes leave some slots unwritten, so reads of them cannot be checked.
    #[error("verification cannot check the random-overlap or same pattern: some transfers are never written")]
    VerifyOverlap,
    /// Wear-out without a stonewall.
    #[error("wear-out only makes sense after a stonewall")]
    WearOutAlone,
    /// A stonewall that is not a positive number of seconds.
    #[error("stonewall of {0} seconds is not positive")]
    BadStonewall(f64),
    /// A queue depth the engine cannot keep.
    #[error("the {engine} engine makes one transfer at a time, so a queue depth of {depth} cannot be kept")]
    DepthWithoutQueue {
        /// Engine name.
        engine: &'static str,
        /// Depth asked for.
        depth: u32,
        /// The engines that keep a queue, in words (from the engine registry).
        queued: String,
    },
    /// A time-series interval that is not a positive number.
    #[error("interval of {0} seconds is not positive")]
    BadInterval(f64),
    /// A time-series interval finer than the clock can usefully resolve.
    #[error("interval of {0} seconds is below the 1 ms minimum")]
    IntervalTooFine(f64),
    /// A queue depth above what iosurvey keeps.
    #[error("a queue depth of {0} is too large: iosurvey keeps at most {MAX_IODEPTH} transfers in flight per task")]
    DepthTooLarge(u32),
    /// Sizes whose product does not fit a file offset.
    #[error("block {block} bytes x {segments} segments x {tasks} tasks would need {need} bytes ({}), more than a file offset can address (8 EiB)", approx_size(*.need))]
    TooLarge {
        /// Block in bytes.
        block: u64,
        /// Segments.
        segments: u64,
        /// Tasks.
        tasks: usize,
        /// The bytes it would need.
        need: u128,
    },
    /// More memory than the run may take.
    #[error("the run would take {} of memory on one node for I/O buffers and time series, above a quarter of the {} available", format_size(*.need), format_size(*.available))]
    TooMuchMemory {
        /// Bytes planned.
        need: u64,
        /// The smaller of MemAvailable and the cgroup's limit.
        available: u64,
    },
    /// An engine the registry does not know, or a parameter it refuses.
    #[error("{why}")]
    Engine {
        /// What is wrong.
        why: String,
        /// What would work.
        fix: String,
    },
    /// fsync on a run with no writes.
    #[error("fsync applies to write phases, and the run has none")]
    FsyncWithoutWrite,
    /// A combination that cannot run: a metadata shape, phases of the wrong class, a check
    /// that cannot be made.
    #[error("{what}")]
    Invalid {
        /// What is wrong, and why.
        what: String,
        /// What to change.
        hint: Hint,
    },
}

impl Hint {
    /// Words that name no setting.
    pub fn say(text: impl Into<String>) -> Hint {
        Hint::Say(text.into())
    }

    /// This, or that.
    pub fn or(self, other: Hint) -> Hint {
        Hint::Either(Box::new(self), Box::new(other))
    }
}

impl SpecError {
    /// Which setting would fix it, and with what value.
    pub fn hint(&self) -> Hint {
        use Hint::*;
        match self {
            SpecError::Zero { what } => AtLeast(*what, "1".into()),
            SpecError::TransferLargerThanBlock { transfer, .. } => AtLeast(Setting::Block, transfer.clone()),
            SpecError::BlockNotMultiple { suggest, .. } => Use(Setting::Block, suggest.to_string()),
            SpecError::TotalNotDivisible { step, .. } => MultipleOf(Setting::Total, step.to_string()),
            SpecError::VerifyTooSmall { min, .. } => AtLeast(Setting::Transfer, min.to_string()),
            SpecError::VerifyOverlap => Use(Setting::Pattern, "random".into()),
            SpecError::WearOutAlone => Add(Setting::Stonewall, Some("SECONDS".into())),
            SpecError::BadStonewall(_) => AtLeast(Setting::Stonewall, "a number of seconds above 0".into()),
            SpecError::DepthWithoutQueue { queued, .. } => Use(Setting::Engine, queued.clone()),
            SpecError::BadInterval(_) | SpecError::IntervalTooFine(_) => AtLeast(Setting::Interval, "0.001".into()),
            SpecError::DepthTooLarge(_) => AtMost(Setting::Iodepth, MAX_IODEPTH.to_string()),
            SpecError::TooLarge { .. } => Lower(vec![Setting::Block, Setting::Segments, Setting::Tasks]),
            // Every setting that sizes a task's buffers, of data and metadata runs alike: each
            // front end names those it has.
            SpecError::TooMuchMemory { .. } => {
                Lower(vec![Setting::Iodepth, Setting::Transfer, Setting::ItemBytes, Setting::Tasks])
            }
            SpecError::Engine { fix, .. } => Use(Setting::Engine, fix.clone()),
            SpecError::Invalid { hint, .. } => hint.clone(),
            SpecError::FsyncWithoutWrite => {
                Either(Box::new(Add(Setting::Ops, Some("write".into()))), Box::new(Drop(Setting::Fsync)))
            }
        }
    }
}

/// Smallest transfer that carries a whole verification header.
pub const VERIFY_HEADER: u64 = 32;

/// The deepest queue a task keeps.
pub const MAX_IODEPTH: u32 = 4096;

/// A byte count that may exceed u64, in binary units, for messages.
fn approx_size(bytes: u128) -> String {
    match u64::try_from(bytes) {
        Ok(b) => format_size(b),
        Err(_) => format!("{:.1} EiB", bytes as f64 / (1u128 << 60) as f64),
    }
}

/// The fields of a [`Workload`] that do not change what is measured, left out of its key
/// ([`Workload::key`]); every other field is in it. Names are the stored records' (serde's),
/// a metadata shape's under `meta.`. A field added to `Workload` or `Meta` is in the key
/// unless named here (`every_field_is_classed_as_measured_or_not` makes the choice explicit).
pub const NOT_MEASURED: &[&str] = &[
    // The team size: a sweep varies it along one key; compare and recommend set runs side by
    // side by key and team size (and the label says the team).
    "tasks",
    // Repetitions of the same measurement: a run's figure is its mean over them.
    "iterations",
    // Which random order and data, not how random: every seed draws from one distribution.
    "seed",
    // The value verified data is stamped with: as many bytes are stamped and checked.
    "signature",
    // The width of the time series' intervals: how the phase is shown, not what it did.
    "interval_secs",
    // The name of the directory that holds a metadata run's trees: a name, the same calls.
    "meta.root",
];

/// Removes the field at a dotted path (`meta.root`), if there is one.
fn remove_path(fields: &mut serde_json::Map<String, serde_json::Value>, path: &str) {
    match path.split_once('.') {
        None => {
            fields.remove(path);
        }
        Some((head, rest)) => {
            if let Some(inner) = fields.get_mut(head).and_then(|v| v.as_object_mut()) {
                remove_path(inner, rest);
            }
        }
    }
}

/// `value` as JSON text with every object's keys in sorted order, whatever order the map
/// keeps (serde_json's `preserve_order` would keep the declaration's): the one spelling of
/// a key.
fn canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut names: Vec<&String> = map.keys().collect();
            names.sort();
            out.push('{');
            for (i, name) in names.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                canonical(&map[name], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A key's value as a reader is shown it: text bare, lists joined with commas, none as "none".
fn value_text(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The settings where two key values differ, objects that both are compared field by field
/// under `path`.
fn differences(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<(String, String, String)>) {
    if let (Some(x), Some(y)) = (a.as_object(), b.as_object()) {
        let mut names: Vec<&String> = x.keys().chain(y.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let inner = match path {
                "" => name.replace('_', "-"),
                _ => format!("{path}.{}", name.replace('_', "-")),
            };
            match (x.get(name), y.get(name)) {
                (Some(p), Some(q)) => differences(&inner, p, q, out),
                // One of them holds it (the names are both maps' own).
                (p, q) => out.push((inner, p.map_or("-".into(), value_text), q.map_or("-".into(), value_text))),
            }
        }
    } else if a != b {
        out.push((path.to_string(), value_text(a), value_text(b)));
    }
}

impl Data {
    /// The rules of a data-transfer workload, `w` the workload this shape is in.
    fn check(&self, w: &Workload) -> Result<(), SpecError> {
        if let Some(op) = w.ops.iter().find(|o| !o.moves_data()) {
            return Err(SpecError::Invalid {
                what: format!("the {} phase works on metadata, not on a data file", op.name()),
                hint: Hint::say("run metadata phases with iosurvey meta"),
            });
        }
        if w.ops.contains(&Op::Mix) && self.mix.is_empty() && self.engine.base() == "s3" {
            return Err(SpecError::Invalid {
                what: "a mix phase on a bucket draws its requests from --mix, and none was given".into(),
                hint: Hint::say("give --mix, e.g. --mix get:45,stat:30,put:15,delete:10 (warp's default)"),
            });
        }
        if !self.mix.is_empty() {
            let hint = match (w.ops.contains(&Op::Mix), self.engine.base() == "s3", self.transfer >= self.block) {
                (false, ..) => Some((
                    "--mix names the requests of a mix phase, and --op has none",
                    "add mix to --op, e.g. --op put,mix",
                )),
                (_, false, _) => Some((
                    "--mix draws requests of an object store",
                    "give a bucket with --s3 URL/BUCKET (files take --read-percent)",
                )),
                (.., false) => Some((
                    "each request of a mix is a whole object, and --transfer is less than --block",
                    "give --transfer equal to --block",
                )),
                _ => None,
            };
            if let Some((what, hint)) = hint {
                return Err(SpecError::Invalid { what: what.into(), hint: Hint::say(hint) });
            }
        }
        if let (Some(op), false) = (w.ops.iter().find(|o| o.on_objects_only()), self.engine.base() == "s3") {
            return Err(SpecError::Invalid {
                what: format!(
                    "the {} phase asks an object store, and the {} engine moves file data",
                    op.name(),
                    self.engine
                ),
                hint: Hint::say("give a bucket with --s3 URL/BUCKET, or leave head, list and delete out of --op"),
            });
        }
        for (what, v) in
            [(Setting::Transfer, self.transfer), (Setting::Block, self.block), (Setting::Segments, self.segments)]
        {
            if v == 0 {
                return Err(SpecError::Zero { what });
            }
        }
        if let Pattern::Stride(0) = self.pattern {
            return Err(SpecError::Zero { what: Setting::Pattern });
        }
        let need = self.block as u128 * self.segments as u128 * w.tasks as u128;
        if need > i64::MAX as u128 {
            return Err(SpecError::TooLarge { block: self.block, segments: self.segments, tasks: w.tasks, need });
        }
        if self.transfer > self.block {
            return Err(SpecError::TransferLargerThanBlock {
                transfer: format_size(self.transfer),
                block: format_size(self.block),
            });
        }
        if self.block % self.transfer != 0 {
            return Err(SpecError::BlockNotMultiple {
                block: self.block,
                transfer: self.transfer,
                suggest: (self.block / self.transfer).max(1) * self.transfer,
            });
        }
        if w.verify && self.transfer < VERIFY_HEADER {
            return Err(SpecError::VerifyTooSmall { min: VERIFY_HEADER, transfer: self.transfer });
        }
        if w.verify && matches!(self.pattern, Pattern::RandomOverlap | Pattern::Same) {
            return Err(SpecError::VerifyOverlap);
        }
        if self.iodepth == 0 {
            return Err(SpecError::Zero { what: Setting::Iodepth });
        }
        if self.iodepth > MAX_IODEPTH {
            return Err(SpecError::DepthTooLarge(self.iodepth));
        }
        self.object_size.check(self, w.verify)?;
        // A mix of object requests checks each GET against its object's last PUT, whose stamp
        // is the same every time; a file mix's reads may come before any write of their place.
        if w.verify && w.ops.contains(&Op::Mix) && self.mix.is_empty() {
            return Err(SpecError::Invalid {
                what: "verification cannot follow a mix phase: its writes and reads interleave in an order only the draw knows".into(),
                hint: Hint::Drop(Setting::Verify),
            });
        }
        if (self.fsync || self.fsync_each) && !w.ops.iter().any(|o| o.direction() != Op::Read) {
            return Err(SpecError::FsyncWithoutWrite);
        }
        Ok(())
    }

    /// Transfers one task makes in one phase.
    pub fn transfers_per_task(&self) -> u64 {
        self.segments.saturating_mul(self.block / self.transfer.max(1))
    }

    /// Bytes of I/O buffers one task holds: one transfer per slot in flight (never more slots
    /// than transfers), plus one for checking reads when `verify`.
    pub fn task_buffer_bytes(&self, verify: bool) -> u64 {
        let slots = (self.iodepth.max(1) as u64).min(self.transfers_per_task().max(1));
        slots.saturating_add(verify as u64).saturating_mul(self.transfer)
    }
}

#[cfg(test)]
impl Workload {
    /// The data shape of a workload a test made as one.
    pub(crate) fn data_mut(&mut self) -> &mut Data {
        match &mut self.shape {
            Shape::Data(data) => data,
            Shape::Meta(_) => panic!("the test made a metadata workload"),
        }
    }
}

impl Workload {
    /// The data shape, for code that reads data settings of any run and passes over the rest.
    pub fn data(&self) -> Option<&Data> {
        match &self.shape {
            Shape::Data(data) => Some(data),
            Shape::Meta(_) => None,
        }
    }

    /// The metadata shape, for code that reads metadata settings of any run.
    pub fn meta(&self) -> Option<&Meta> {
        match &self.shape {
            Shape::Meta(meta) => Some(meta),
            Shape::Data(_) => None,
        }
    }

    /// Sets a data workload's `block` so that `total` bytes are spread evenly over tasks and
    /// segments.
    pub fn set_total(&mut self, total: u64) -> Result<(), SpecError> {
        let tasks = self.tasks;
        let Shape::Data(data) = &mut self.shape else {
            return Err(SpecError::Invalid {
                what: "a metadata workload has no total of bytes to split".into(),
                hint: Hint::Drop(Setting::Total),
            });
        };
        let parts = (tasks.max(1) as u64).saturating_mul(data.segments.max(1));
        let step = parts.saturating_mul(data.transfer.max(1));
        if total == 0 || total % step != 0 {
            return Err(SpecError::TotalNotDivisible { total, parts, transfer: data.transfer, step });
        }
        data.block = total / parts;
        Ok(())
    }

    /// Sets the block so the run moves the most whole transfers of every task and segment
    /// that `bytes` holds, and at least one each (a device used whole, a target's share).
    pub fn fill(&mut self, bytes: u64) -> Result<(), SpecError> {
        let Some(d) = self.data() else { return Ok(()) };
        let step = (self.tasks.max(1) as u64).saturating_mul(d.segments.max(1)).saturating_mul(d.transfer.max(1));
        self.set_total((bytes / step * step).max(step))
    }

    /// Checks every rule a run depends on; the engine may assume them.
    pub fn validate(&self) -> Result<(), SpecError> {
        for (what, v) in [
            (Setting::Tasks, self.tasks as u64),
            (Setting::Iterations, self.iterations as u64),
            (Setting::Ops, self.ops.len() as u64),
        ] {
            if v == 0 {
                return Err(SpecError::Zero { what });
            }
        }
        match self.stonewall_secs {
            Some(s) if !(s > 0.0 && s.is_finite()) => return Err(SpecError::BadStonewall(s)),
            None if self.wear_out => return Err(SpecError::WearOutAlone),
            _ => {}
        }
        if !(self.interval_secs > 0.0 && self.interval_secs.is_finite()) {
            return Err(SpecError::BadInterval(self.interval_secs));
        }
        if self.interval_secs < 1e-3 {
            return Err(SpecError::IntervalTooFine(self.interval_secs));
        }
        match &self.shape {
            Shape::Meta(meta) => meta.check(self),
            Shape::Data(data) => data.check(self),
        }
    }

    /// Memory `tasks` tasks on one node plan to hold: buffers and the bounded time series.
    pub fn planned_memory(&self, tasks: usize) -> u64 {
        let series = crate::measure::MAX_SERIES_POINTS as u64 * 16;
        let buffers = match &self.shape {
            Shape::Meta(meta) => meta.buffer_bytes(self.verify),
            Shape::Data(data) => data.task_buffer_bytes(self.verify),
        };
        buffers.saturating_add(series).saturating_mul(tasks as u64)
    }

    /// Bytes the whole team moves in one phase of a data workload (none for metadata).
    pub fn bytes_per_phase(&self) -> u64 {
        let per_task = self.data().map_or(0, |data| data.transfers_per_task().saturating_mul(data.transfer));
        per_task.saturating_mul(self.tasks as u64)
    }

    /// Whether operations per second are the figure of merit: transfers out of order, or
    /// metadata items.
    pub fn random(&self) -> bool {
        self.data().is_none_or(|data| data.pattern != Pattern::Sequential)
    }

    /// What the workload measures: one canonical text (JSON, keys sorted) of every field that
    /// changes what is measured, which is every field but those [`NOT_MEASURED`] names. Runs
    /// with the same key measured the same thing (at their team sizes: the key leaves the team
    /// out, so a sweep is one key); compare, recommend, sweeps, cliffs and the store's index
    /// all group by it. It is computed from the workload, so a record stored before a field
    /// was added gets the key it has now, the new field at its serde default.
    pub fn key(&self) -> String {
        let mut text = String::new();
        canonical(&self.key_value(), &mut text);
        text
    }

    /// The key's fields as a JSON value: the workload as stored, less [`NOT_MEASURED`], less
    /// what cannot change the measurement of this workload (a data shape's fields, at their
    /// defaults, for a metadata
    /// workload, the read share without a mix phase, the absent metadata shape of a data
    /// workload), its base directories counted (`meta.bases`: where they are is no more
    /// what is measured than the target directory is, how many the items spread over is),
    /// its engine named without a parameter.
    pub fn key_value(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        let Some(fields) = value.as_object_mut() else { return value };
        for path in NOT_MEASURED {
            remove_path(fields, path);
        }
        match fields.get_mut("meta").and_then(|m| m.as_object_mut()) {
            Some(meta) => {
                if let Some(bases) = meta.get_mut("bases") {
                    *bases = bases.as_array().map_or(0, Vec::len).into();
                }
                // A metadata run's phases never read them: they hold their defaults, and a
                // changed default must not split runs.
                if let serde_json::Value::Object(data) = serde_json::to_value(Data::default()).unwrap_or_default() {
                    fields.retain(|name, _| !data.contains_key(name));
                }
            }
            None => {
                fields.remove("meta");
            }
        }
        if !self.ops.contains(&Op::Mix) {
            fields.remove("read_percent");
        }
        // A mix of requests draws no read share.
        if fields.get("mix").is_some_and(|m| m.as_str().is_some_and(|m| !m.is_empty())) {
            fields.remove("read_percent");
        }
        // The engine by its name: the one parameter an engine takes (delay:D, a test engine
        // that touches no storage) is the latency of the storage it stands for, the system
        // measured (as a --label names one), not a setting of the workload.
        if let (Some(engine), Some(data)) = (fields.get_mut("engine"), self.data()) {
            *engine = data.engine.base().into();
        }
        value
    }

    /// The measured settings in which this workload and `other` differ, by their keys:
    /// (setting, this one's value, the other's), the setting named as [`Workload::changed`]
    /// names it (`fsync-each`; a metadata shape's `meta.sync`, `meta.tree.depth`), a value
    /// one of them does not hold as "-". Empty when their keys are the same.
    pub fn key_differences(&self, other: &Workload) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        differences("", &self.key_value(), &other.key_value(), &mut out);
        out
    }

    /// The value this workload's key holds for a setting named as [`Workload::key_differences`]
    /// names it, as text ("-" when it holds none).
    pub fn key_setting(&self, name: &str) -> String {
        let value = self.key_value();
        let mut at = Some(&value);
        for part in name.split('.') {
            at = at.and_then(|v| v.as_object()).and_then(|o| o.get(&part.replace('-', "_")));
        }
        at.map_or("-".into(), value_text)
    }

    /// The settings that differ from the defaults, as `name` (a flag that is on) or
    /// `name=value`, named as records name them: read from the one declaration of the fields.
    pub fn changed(&self) -> Vec<String> {
        let value = |w: &Workload| serde_json::to_value(w).unwrap_or_default();
        let (mine, default) = (value(self), value(&Workload { tasks: self.tasks, ..Workload::default() }));
        let (Some(mine), Some(default)) = (mine.as_object(), default.as_object()) else { return Vec::new() };
        mine.iter()
            // A metadata workload's shape and phases are its label.
            .filter(|(k, _)| self.meta().is_none() || !matches!(k.as_str(), "meta" | "ops"))
            .filter(|(k, v)| default.get(*k) != Some(v))
            .map(|(k, v)| match v {
                serde_json::Value::Bool(true) => k.replace('_', "-"),
                serde_json::Value::String(t) => format!("{}={t}", k.replace('_', "-")),
                other => format!("{}={other}", k.replace('_', "-")),
            })
            .collect()
    }

    /// A short human label: "file-per-task sequential 1 MiB x 2 GiB, 4 tasks".
    pub fn label(&self) -> String {
        format!("{}, {} task{}", self.shape_label(), self.tasks, if self.tasks == 1 { "" } else { "s" })
    }

    /// The label less the team: what a sweep over team sizes keeps ("file-per-task sequential
    /// 1 MiB transfers, 2 GiB per task").
    pub fn shape_label(&self) -> String {
        let data = match &self.shape {
            Shape::Data(data) => data,
            Shape::Meta(m) => return m.label(),
        };
        let access = match (data.access, data.layout) {
            (Access::FilePerTask, _) => "file-per-task",
            (Access::Shared, Layout::Segmented) => "shared segmented",
            (Access::Shared, Layout::Strided) => "shared strided",
        };
        format!(
            "{access} {} {} transfers, {} per task",
            data.pattern,
            format_size(data.transfer),
            format_size(data.block * data.segments),
        )
    }
}

impl Meta {
    /// The label of a metadata workload of this shape, less its team.
    fn label(&self) -> String {
        let t = &self.tree;
        let tree = match t.depth {
            0 => String::new(),
            d => format!(", tree depth {d} branch {}{}", t.branch, if t.leaves_only { " leaves only" } else { "" }),
        };
        let bytes = match (self.write_bytes, self.read_bytes) {
            (0, 0) => String::new(),
            (w, r) => format!(", files written with {w} B, read {r} B"),
        };
        let dirs = if self.shared { "one shared directory" } else { "a directory per task" };
        // Said in every label: the two ways cost differently and are never pooled.
        let calls = match self.resolve {
            meta::Resolve::Path => "path walk",
            meta::Resolve::Relative => "relative, no path walk",
        };
        format!("metadata {} items per task in {dirs}{tree}{bytes}, {calls}", t.placed(self.items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `w`, a data workload, with its data shape changed by `f`.
    fn set(mut w: Workload, f: impl FnOnce(&mut Data)) -> Workload {
        f(w.data_mut());
        w
    }

    fn ok() -> Workload {
        set(Workload { tasks: 2, ..Workload::default() }, |d| {
            d.transfer = 4096;
            d.block = 8192;
        })
    }

    #[test]
    fn accepts_a_plain_workload() {
        assert_eq!(ok().validate(), Ok(()));
        assert_eq!(ok().bytes_per_phase(), 16384);
    }

    #[test]
    fn refuses_transfer_larger_than_block() {
        let w = set(ok(), |d| {
            d.block = 1024;
        });
        assert!(matches!(w.validate(), Err(SpecError::TransferLargerThanBlock { .. })));
    }

    #[test]
    fn refuses_block_not_multiple_and_suggests_one() {
        let w = set(ok(), |d| {
            d.block = 10000;
        });
        assert_eq!(w.validate(), Err(SpecError::BlockNotMultiple { block: 10000, transfer: 4096, suggest: 8192 }));
    }

    #[test]
    fn total_is_split_evenly_or_refused() {
        let mut w = set(Workload { tasks: 4, ..ok() }, |d| {
            d.segments = 2;
        });
        w.set_total(4096 * 8 * 3).unwrap();
        assert_eq!(w.data().map(|d| d.block), Some(4096 * 3));
        assert_eq!(w.bytes_per_phase(), 4096 * 8 * 3);
        assert!(matches!(w.set_total(4096 * 7), Err(SpecError::TotalNotDivisible { .. })));
    }

    #[test]
    fn refuses_contradictions() {
        assert_eq!(Workload { tasks: 0, ..ok() }.validate(), Err(SpecError::Zero { what: Setting::Tasks }));
        let v = set(Workload { verify: true, ..ok() }, |d| {
            d.pattern = Pattern::RandomOverlap;
        });
        assert_eq!(v.validate(), Err(SpecError::VerifyOverlap));
        assert_eq!(Workload { wear_out: true, ..ok() }.validate(), Err(SpecError::WearOutAlone));
        let f = set(Workload { ops: vec![Op::Read], ..ok() }, |d| {
            d.fsync = true;
        });
        assert_eq!(f.validate(), Err(SpecError::FsyncWithoutWrite));
        set(ok(), |d| {
            d.iodepth = 32;
            d.engine = EngineName::new("io_uring", None);
        })
        .validate()
        .unwrap();
        let s = Workload { stonewall_secs: Some(-1.0), ..ok() };
        assert_eq!(s.validate(), Err(SpecError::BadStonewall(-1.0)));
        assert_eq!(Workload { interval_secs: 1e-12, ..ok() }.validate(), Err(SpecError::IntervalTooFine(1e-12)));
        Workload { interval_secs: 1e-3, ..ok() }.validate().unwrap();
        let deep = set(ok(), |d| {
            d.iodepth = 32768;
            d.engine = EngineName::new("io_uring", None);
        });
        assert_eq!(deep.validate(), Err(SpecError::DepthTooLarge(32768)));
    }

    #[test]
    fn sizes_that_overflow_are_refused_with_what_they_would_need() {
        let w = set(Workload { tasks: 2, ..Workload::default() }, |d| {
            d.transfer = 1 << 20;
            d.block = 8 << 40;
            d.segments = 1 << 20;
        });
        let e = w.validate().unwrap_err();
        assert_eq!(e, SpecError::TooLarge { block: 8 << 40, segments: 1 << 20, tasks: 2, need: 1 << 64 });
        assert_eq!(e.hint(), Hint::Lower(vec![Setting::Block, Setting::Segments, Setting::Tasks]));
        assert!(e.to_string().contains("18446744073709551616 bytes (16.0 EiB)"), "{e}");
        let mut t = set(Workload { tasks: usize::MAX, ..ok() }, |d| {
            d.segments = u64::MAX;
        });
        assert!(t.set_total(4096).is_err(), "a product that wraps is not a divisor");
    }

    #[test]
    fn buffers_are_bounded_by_the_transfers_there_are() {
        let w = set(Workload::default(), |d| {
            d.transfer = 1 << 20;
            d.block = 4 << 20;
            d.iodepth = 4096;
            d.engine = EngineName::new("io_uring", None);
        });
        let data = w.data().unwrap();
        assert_eq!(data.task_buffer_bytes(false), 4 << 20, "4 transfers, so 4 buffers, not 4096");
        assert_eq!(data.task_buffer_bytes(true), 5 << 20);
        assert_eq!(w.planned_memory(2), 2 * ((4 << 20) + crate::measure::MAX_SERIES_POINTS as u64 * 16));
    }

    #[test]
    fn the_key_ignores_team_size_and_repetitions_but_not_what_is_measured() {
        let a = ok();
        let not_measured =
            Workload { tasks: 8, iterations: 3, seed: 9, signature: Some(4), interval_secs: 0.5, ..ok() };
        assert_eq!(a.key(), not_measured.key());
        assert_ne!(
            a.key(),
            set(ok(), |d| {
                d.direct = true;
            })
            .key()
        );
        assert_ne!(
            a.key(),
            set(ok(), |d| {
                d.transfer = 8192;
            })
            .key()
        );
        assert_eq!(a.key(), OK_KEY);
        let mix = Workload { ops: vec![Op::Write, Op::Mix], ..ok() };
        let changes: [Workload; 14] = [
            set(ok(), |d| {
                d.fsync = true;
            }),
            set(ok(), |d| {
                d.fsync_each = true;
            }),
            Workload { verify: true, ..ok() },
            Workload { stonewall_secs: Some(2.0), ..ok() },
            Workload { stonewall_secs: Some(2.0), wear_out: true, ..ok() },
            Workload { drop_caches: true, ..ok() },
            set(ok(), |d| {
                d.reorder = true;
            }),
            set(ok(), |d| {
                d.no_fadvise = true;
            }),
            set(ok(), |d| {
                d.engine = EngineName::new("io_uring", None);
            }),
            set(ok(), |d| {
                d.engine = EngineName::new("io_uring", None);
                d.iodepth = 8;
            }),
            Workload { ops: vec![Op::Write], ..ok() },
            set(ok(), |d| {
                d.layout = Layout::Strided;
            }),
            set(mix.clone(), |d| {
                d.read_percent = 70;
            }),
            mix.clone(),
        ];
        let mut keys: Vec<String> = changes.iter().map(Workload::key).chain([a.key()]).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), changes.len() + 1, "each measured setting makes a key of its own");
        // The read share measures nothing without a mix phase; a metadata run's data settings
        // are never used.
        assert_eq!(
            a.key(),
            set(ok(), |d| {
                d.read_percent = 70;
            })
            .key()
        );
        let delay = |param: &str| set(ok(), |d| d.engine = EngineName::new("delay", Some(param))).key();
        assert_eq!(delay("200us"), delay("2ms"), "two simulated storages under one workload");
        assert_ne!(delay("2ms"), a.key());
        let meta = Workload { ops: meta::ALL_PHASES.to_vec(), ..Workload::from(Meta::default()) };
        // A metadata shape holds no data settings; a record that somehow kept some reads back
        // without them.
        let mut stored = serde_json::to_value(&meta).unwrap();
        stored["transfer"] = 4096.into();
        stored["direct"] = true.into();
        assert_eq!(meta.key(), serde_json::from_value::<Workload>(stored).unwrap().key());
        assert_ne!(meta.key(), Workload { drop_caches: true, ..meta.clone() }.key());
        let root = Meta { root: "iosurvey.other".into(), ..Meta::default() };
        assert_eq!(meta.key(), Workload { shape: Shape::Meta(root), ..meta.clone() }.key(), "the root is a name");
        let spread = Meta { bases: vec!["/a".into(), "/b".into()], ..Meta::default() };
        let elsewhere = Meta { bases: vec!["/c".into(), "/d".into()], ..Meta::default() };
        let with = |m: Meta| Workload { shape: Shape::Meta(m), ..meta.clone() }.key();
        assert_ne!(meta.key(), with(spread.clone()), "over 3 bases is not over 1");
        assert_eq!(with(spread), with(elsewhere), "where the bases are is not measured, how many is");
    }

    /// The key of `ok()`.
    const OK_KEY: &str = concat!(
        r#"{"access":"file-per-task","block":8192,"direct":false,"drop_caches":false,"engine":"sync","#,
        r#""fsync":false,"fsync_each":false,"iodepth":1,"layout":"segmented","no_fadvise":false,"#,
        r#""ops":["write","read"],"pattern":"sequential","reorder":false,"segments":1,"stonewall_secs":null,"#,
        r#""transfer":4096,"verify":false,"wear_out":false}"#
    );

    /// The fields the key holds, by the stored records' names (a metadata shape's under
    /// `meta.`): with [`NOT_MEASURED`], every field there is.
    const MEASURED: &[&str] = &[
        "access",
        "layout",
        "pattern",
        "ops",
        "transfer",
        "block",
        "segments",
        "direct",
        "fsync",
        "fsync_each",
        "verify",
        "stonewall_secs",
        "wear_out",
        "drop_caches",
        "reorder",
        // By its name: delay:D's D is the storage it stands for, not the workload.
        "engine",
        "iodepth",
        "read_percent",
        "no_fadvise",
        "meta",
        "meta.items",
        "meta.shared",
        "meta.tree",
        "meta.tree.depth",
        "meta.tree.branch",
        "meta.tree.leaves_only",
        "meta.write_bytes",
        "meta.read_bytes",
        "meta.shift",
        "meta.sync",
        // Counted: how many directories the items spread over, not where they are.
        "meta.bases",
        "meta.resolve",
    ];

    /// Every field's dotted name in `value`, objects' fields and the objects themselves.
    fn field_names(prefix: &str, value: &serde_json::Value, out: &mut Vec<String>) {
        for (name, inner) in value.as_object().into_iter().flatten() {
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
            field_names(&path, inner, out);
            out.push(path);
        }
    }

    #[test]
    fn every_field_is_classed_as_measured_or_not() {
        let w = Workload::from(Meta::default());
        let mut found = Vec::new();
        field_names("", &serde_json::to_value(&w).unwrap(), &mut found);
        let mut classed: Vec<String> = MEASURED.iter().chain(NOT_MEASURED).map(|s| s.to_string()).collect();
        found.sort();
        classed.sort();
        assert_eq!(
            found, classed,
            "each field of Workload, Meta and Tree is either measured (MEASURED, here) or left out of the key \
             (NOT_MEASURED, in spec.rs, with why); a measured field added changes every run's key, so the store \
             must re-key its runs (a migration step calling store::rekey)"
        );
    }

    #[test]
    fn records_keep_one_flat_object_and_each_shape_reads_back_as_itself() {
        let data = set(ok(), |d| d.direct = true);
        let text = serde_json::to_value(&data).unwrap();
        assert_eq!(
            (text["direct"].clone(), text["tasks"].clone(), text["meta"].clone()),
            (true.into(), 2.into(), serde_json::Value::Null)
        );
        assert_eq!(serde_json::from_value::<Workload>(text).unwrap(), data);
        let meta = Workload { ops: vec![Op::FileCreate], ..Workload::from(Meta { items: 7, ..Meta::default() }) };
        let text = serde_json::to_value(&meta).unwrap();
        assert_eq!(text["meta"]["items"], 7);
        let back: Workload = serde_json::from_value(text).unwrap();
        assert_eq!(back, meta);
        assert!(matches!(back.shape, Shape::Meta(_)) && back.data().is_none());
        // A record of the first stores: no `meta`, only some fields; the rest are the defaults.
        let old: Workload = serde_json::from_str(r#"{"transfer":4096,"tasks":3}"#).unwrap();
        assert_eq!((old.data().map(|d| d.transfer), old.tasks, old.iterations), (Some(4096), 3, 1));
    }

    #[test]
    fn two_keys_name_the_settings_they_differ_in() {
        let (a, b) = (
            ok(),
            set(Workload { tasks: 5, ..ok() }, |d| {
                d.direct = true;
                d.fsync = true;
            }),
        );
        assert_eq!(
            a.key_differences(&b),
            [("direct".into(), "false".into(), "true".into()), ("fsync".into(), "false".into(), "true".into())],
            "the team is not a difference of keys"
        );
        assert!(a.key_differences(&Workload { seed: 3, ..ok() }).is_empty());
        assert_eq!(b.key_setting("direct"), "true");
        let m = |sync| Workload::from(Meta { sync, ..Meta::default() });
        assert_eq!(m(false).key_differences(&m(true)), [("meta.sync".into(), "false".into(), "true".into())]);
        assert_eq!(m(true).key_setting("meta.tree.depth"), "0");
        assert_eq!(m(true).key_setting("direct"), "-", "a metadata key holds no data settings");
    }

    #[test]
    fn the_changed_settings_come_from_the_declaration() {
        let w = set(Workload { verify: true, stonewall_secs: Some(2.0), tasks: 8, ..Workload::default() }, |d| {
            d.engine = EngineName::new("io_uring", None);
        });
        assert_eq!(w.changed(), ["engine=io_uring", "stonewall-secs=2.0", "verify"], "in name order");
        assert!(Workload { tasks: 3, ..Workload::default() }.changed().is_empty());
    }

    #[test]
    fn parses_patterns() {
        assert_eq!("random".parse(), Ok(Pattern::Random));
        assert_eq!("stride:4".parse(), Ok(Pattern::Stride(4)));
        assert!("zigzag".parse::<Pattern>().is_err());
        assert_eq!(Pattern::Stride(3).to_string(), "stride:3");
    }
}
