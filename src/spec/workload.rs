//! A whole workload: the settings every run has, its shape (data or metadata), its events,
//! how records and the command line read it, and the rules it keeps.

use super::meta;
use super::{Access, Data, Hint, Layout, Meta, Op, Pattern, Setting, SpecError};
use crate::units::format_size;
use serde::{Deserialize, Serialize};

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

pub(super) fn declared<T: clap::Args + clap::FromArgMatches>() -> T {
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
    use crate::spec::fixtures::{ok, set};
    use crate::spec::EngineName;

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
    fn the_changed_settings_come_from_the_declaration() {
        let w = set(Workload { verify: true, stonewall_secs: Some(2.0), tasks: 8, ..Workload::default() }, |d| {
            d.engine = EngineName::new("io_uring", None);
        });
        assert_eq!(w.changed(), ["engine=io_uring", "stonewall-secs=2.0", "verify"], "in name order");
        assert!(Workload { tasks: 3, ..Workload::default() }.changed().is_empty());
    }
}
