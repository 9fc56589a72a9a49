//! Why a workload cannot run and what would fix it: the settings as the library names them,
//! the hint each refusal carries, and the refusals themselves. Each front end spells the
//! settings its own way.

use super::MAX_IODEPTH;
use crate::units::format_size;
use serde::{Deserialize, Serialize};
use thiserror::Error;

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

/// A byte count that may exceed u64, in binary units, for messages.
fn approx_size(bytes: u128) -> String {
    match u64::try_from(bytes) {
        Ok(b) => format_size(b),
        Err(_) => format!("{:.1} EiB", bytes as f64 / (1u128 << 60) as f64),
    }
}
