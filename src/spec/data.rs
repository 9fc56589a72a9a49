//! The shape of a data-transfer workload: who shares files, in which order a task visits its
//! transfers, through which engine, and the rules such a shape must keep.

use super::workload::declared;
use super::{Hint, Mix, ObjectSizes, Op, Setting, SpecError, Workload};
use crate::units::format_size;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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

impl Default for Data {
    fn default() -> Self {
        static DEFAULT: std::sync::OnceLock<Data> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(declared::<Data>).clone()
    }
}

/// Smallest transfer that carries a whole verification header.
pub const VERIFY_HEADER: u64 = 32;

/// The deepest queue a task keeps.
pub const MAX_IODEPTH: u32 = 4096;

impl Data {
    /// The rules of a data-transfer workload, `w` the workload this shape is in.
    pub(super) fn check(&self, w: &Workload) -> Result<(), SpecError> {
        self.check_phases(w)?;
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

    /// The rules of the phases this shape can make: data phases only, a mix's requests
    /// only on a bucket and only with a mix phase, an object store's own requests only on one.
    fn check_phases(&self, w: &Workload) -> Result<(), SpecError> {
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
mod tests {
    use super::*;

    #[test]
    fn parses_patterns() {
        assert_eq!("random".parse(), Ok(Pattern::Random));
        assert_eq!("stride:4".parse(), Ok(Pattern::Stride(4)));
        assert!("zigzag".parse::<Pattern>().is_err());
        assert_eq!(Pattern::Stride(3).to_string(), "stride:3");
    }
}
