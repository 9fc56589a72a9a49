//! What a run's execution produced, as plain data: the engine fills it in, the record
//! aggregates it. Nothing here runs anything, so the record needs no engine.

use crate::measure::histogram::Latency;
use crate::measure::{Series, TaskTiming};
use crate::spec::Op;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How a run's I/O met the page cache, as the engine that ran it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageCache {
    /// No file was opened: the figures are not the storage's (the null and delay engines).
    Untouched,
    /// The data went around the page cache (O_DIRECT, through an engine that honours it).
    Bypassed,
    /// The data went through the page cache.
    #[default]
    Through,
}

/// Why a transfer failed verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Fault {
    /// Written by another run (its token differs): data left from before.
    Stale,
    /// A valid header for another task or offset: data landed in the wrong place.
    Misplaced,
    /// Header or payload bytes differ from what was written.
    Corrupt,
    /// The file ends before the transfer does: the bytes are not there at all.
    Missing,
}

/// The first differing byte of a bad transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    /// What kind of fault.
    pub fault: Fault,
    /// Byte offset in the file of the first differing byte.
    pub offset: u64,
    /// The byte expected there.
    pub expected: u8,
    /// The byte found.
    pub found: u8,
}

/// Verification results of one phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct VerifyTally {
    /// Transfers checked.
    pub checked: u64,
    /// Transfers with at least one wrong byte.
    pub bad: u64,
    /// Of those, transfers written by another run.
    pub stale: u64,
    /// The first bad transfer seen.
    pub first: Option<BadTransfer>,
}

/// Where the first bad transfer was.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BadTransfer {
    /// The file.
    pub path: PathBuf,
    /// The first wrong byte.
    pub mismatch: Mismatch,
}

/// A task's failure, as it reaches the lead task (possibly from another node).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskFailure {
    /// Team rank of the failing task.
    pub task: usize,
    /// Its node.
    pub node: u32,
    /// What failed and why.
    pub message: String,
    /// What the user can do.
    pub hint: crate::spec::Hint,
    /// Whether a signal stopped it.
    pub interrupted: bool,
}

/// One phase as the whole team ran it.
#[derive(Debug, Clone)]
pub struct PhaseOutcome {
    /// Write or read.
    pub op: Op,
    /// 0-based iteration.
    pub iteration: u32,
    /// Every task's timings, in rank order.
    pub tasks: Vec<TaskTiming>,
    /// Verification, when asked for on a read.
    pub verify: Option<VerifyTally>,
    /// Whether the page cache was dropped (on every node) just before this phase.
    pub caches_dropped: bool,
    /// Latency of every transfer of every task, merged.
    pub latency: Latency,
    /// Bytes and transfers per interval, the whole team.
    pub series: Series,
}

/// What a run's execution produced, on the lead task: the phases that ran, and the error
/// that stopped it.
#[derive(Debug, Default)]
pub struct Execution {
    /// Completed (or, for the last one on error, partial) phases.
    pub phases: Vec<PhaseOutcome>,
    /// The first failure of any task.
    pub failure: Option<TaskFailure>,
    /// Whether every task read what another node wrote (`--reorder`; for metadata, `--shift`).
    pub reorder_crosses_nodes: bool,
    /// How the run's I/O met the page cache, as its engine knows it.
    pub page_cache: PageCache,
}
