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
    /// Each kind of object-store request the phase made, its own figures (none for files).
    pub requests: Vec<(Request, RequestTally)>,
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

/// A kind of request to an object store, as its figures are kept apart within a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Request {
    /// An object, or a part of a multipart upload, stored.
    Put,
    /// An object, or a range of one, read.
    Get,
    /// An object's size and ETag asked for (warp's STAT).
    Head,
    /// A page of keys listed.
    List,
    /// An object removed.
    Delete,
}

impl Request {
    /// Every kind, in the order tables show them.
    pub const ALL: [Request; 5] = [Request::Put, Request::Get, Request::Head, Request::List, Request::Delete];

    /// Its name in output and in the store: the HTTP-ish name users know from S3 tools.
    pub fn name(self) -> &'static str {
        match self {
            Request::Put => "PUT",
            Request::Get => "GET",
            Request::Head => "HEAD",
            Request::List => "LIST",
            Request::Delete => "DELETE",
        }
    }

    /// Its index in [`Request::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One kind of request's figures in one phase, the whole team's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestTally {
    /// Requests completed.
    pub count: u64,
    /// Bytes of object data they moved (bodies: none for HEAD, LIST, DELETE).
    pub bytes: u64,
    /// Each request's latency, from its submission by the task to its completion.
    pub latency: Latency,
    /// Each request's time to first byte, for the requests that read a body (GET).
    pub first_byte: Option<Latency>,
}
