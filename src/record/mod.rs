//! The result record: one run with its context and every measurement, the contract between
//! aggregation, the store and the reports. Team-wide figures are always recomputed from the
//! per-task timings by [`crate::measure::aggregate`], so the two can never disagree.

pub mod execution;
pub mod imported;
pub mod net;
pub mod point;
pub mod train;

use crate::env::{is_memory_fs, Environment};
use crate::measure::histogram::Latency;
use crate::measure::{aggregate, spread, PhaseFigures, Series, Spread, TaskTiming};
use crate::spec::{Op, Workload};
use execution::{Execution, Fault, PageCache, PhaseOutcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether a run completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every phase ran and every check passed.
    Ok,
    /// An error stopped it, or verification found bad data.
    Failed,
}

impl Status {
    /// Name in the store.
    pub fn name(self) -> String {
        crate::spec::variant_name(&self)
    }
}

/// Verification outcome of a read phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifySummary {
    /// Transfers checked.
    pub checked: u64,
    /// Transfers with a wrong byte.
    pub bad: u64,
    /// Of those, written by another run.
    pub stale: u64,
    /// The first bad byte: path, offset, expected and found.
    pub first: Option<String>,
}

/// One phase of one iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    /// Write or read.
    pub op: Op,
    /// 0-based iteration.
    pub iteration: u32,
    /// Team-wide figures, from `tasks`.
    pub figures: PhaseFigures,
    /// Why this read may have been served from memory, if it may.
    pub possibly_cached: Option<String>,
    /// Whether the page cache was dropped just before.
    pub caches_dropped: bool,
    /// Verification, for verified reads.
    pub verify: Option<VerifySummary>,
    /// Latency of every transfer, merged over the team.
    pub latency: Latency,
    /// Bytes and transfers per interval, the whole team.
    pub series: Series,
    /// Per-task timings.
    pub tasks: Vec<TaskTiming>,
    /// Each kind of object-store request the phase made, its own figures: one for a phase of
    /// one op, several for a mixed one; none on files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestFigures>,
}

/// One kind of request's figures in one phase: its count, bytes, rates over the phase's
/// window (every kind of a mixed phase shares the one window, as warp's mixed figures do),
/// latency percentiles and, for GET, time to first byte.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestFigures {
    /// PUT, GET, HEAD, LIST or DELETE.
    pub request: execution::Request,
    /// Requests completed.
    pub count: u64,
    /// Bytes of object data they moved.
    pub bytes: u64,
    /// bytes / the phase's window; `None` for requests that move no object data.
    pub bandwidth: Option<f64>,
    /// count / the phase's window.
    pub ops_per_s: Option<f64>,
    /// Per-request latency.
    pub latency: Latency,
    /// Per-request time to first byte (GET).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte: Option<Latency>,
}

impl RequestFigures {
    /// One kind's figures over a phase of `window_ns`.
    pub fn over(request: execution::Request, t: execution::RequestTally, window_ns: u64) -> RequestFigures {
        RequestFigures {
            request,
            count: t.count,
            bytes: t.bytes,
            bandwidth: crate::units::rate(t.bytes, window_ns).filter(|_| t.bytes > 0),
            ops_per_s: crate::units::rate(t.count, window_ns),
            latency: t.latency,
            first_byte: t.first_byte,
        }
    }
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Store id, once saved.
    pub id: Option<i64>,
    /// The survey it belongs to, if any.
    pub survey_id: Option<i64>,
    /// Name within a survey ("seq-file-per-task").
    pub name: Option<String>,
    /// Start, seconds since the Unix epoch.
    pub started: i64,
    /// Ok or failed.
    pub status: Status,
    /// The error that failed it.
    pub error: Option<String>,
    /// The command line that asked for it.
    pub command_line: String,
    /// The full workload.
    pub workload: Workload,
    /// Host and target facts.
    pub env: Environment,
    /// Every phase that ran, in order.
    pub phases: Vec<PhaseRecord>,
    /// A training or checkpoint run's own figures (none for other runs, and for those filed
    /// before the record held them: read them with [`RunRecord::training`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<train::Training>,
    /// Things the reader should know (caches not dropped, ...).
    pub warnings: Vec<String>,
    /// The sweep it is a point of, if any.
    pub sweep_id: Option<i64>,
    /// Host name of each node, by node index.
    pub hosts: Vec<String>,
    /// Worst-case error of the clock alignment across nodes, nanoseconds (0 on one node).
    pub clock_uncertainty_ns: u64,
    /// Whether `--reorder` made every read cross to another node.
    pub reorder_crosses_nodes: bool,
    /// What the user can do about the failure (not stored: advice, not a result).
    #[serde(skip)]
    pub failure_hint: Option<crate::spec::Hint>,
    /// Whether a signal stopped the run (not stored; the error text says it).
    #[serde(skip)]
    pub interrupted: bool,
    /// Where the figures come from: `measured` by iosurvey, or `imported:TOOL` from another
    /// tool's output (which may carry summary figures only).
    #[serde(default = "measured")]
    pub provenance: String,
    /// The name the user gave the target or system measured (`--label`), for listing and
    /// comparing.
    #[serde(default)]
    pub label: Option<String>,
    /// The matrix it measured a cell of, if any.
    #[serde(default)]
    pub matrix_id: Option<i64>,
    /// The campaign (the version of its file) it is a point of, if any; its study is its name.
    #[serde(default)]
    pub campaign_id: Option<i64>,
    /// The target survey (`targets`) it is a run of, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_id: Option<i64>,
    /// The run's events (`--event`): when each ran on the team's clock, and how it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventRun>,
    /// An imported run's settings that iosurvey's workload has no place for, by the tool's
    /// own names (`ior.ordering inter file`), and where it came from (`import.file`): kept so
    /// that nothing the file said is dropped silently. Empty for a measured run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_params: BTreeMap<String, String>,
}

/// An event as it ran: asked for at a time into the run's first phase, started at a time on
/// the team's clock (the time series' clock), or not reached because the run ended first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRun {
    /// Seconds into the first phase it was asked for.
    pub at_secs: f64,
    /// When it started, ns on the team clock; none when the run ended before its time.
    pub started_ns: Option<u64>,
    /// The command, its status and output; none when it did not run.
    pub ran: Option<HookRun>,
    /// The command asked for.
    pub command: String,
}

/// A shell command as it ran on one node (a campaign's hook, a run's event): plain data the
/// store keeps and the report shows; `shell` runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    /// before-run, after-run, before-study or after-study.
    pub hook: String,
    /// The command.
    pub command: String,
    /// The node it ran on.
    pub node: String,
    /// Its exit status; none when a signal ended it or it could not start.
    pub status: Option<i32>,
    /// The end of what it printed (standard output and error together).
    pub output: String,
    /// How long it took.
    pub secs: f64,
    /// Whether iosurvey ended it (a stop signal, or the end of the run it was an event of).
    #[serde(default)]
    pub stopped: bool,
}

impl HookRun {
    /// Whether it ended with status 0.
    pub fn ok(&self) -> bool {
        self.status == Some(0)
    }

    /// How it ended, in words.
    pub fn ending(&self) -> String {
        match self.status {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal, or could not start".into(),
        }
    }
}

/// Whether `text` may name a system measured, a campaign or a study: 1 to 64 printable
/// characters (shown in tables and file names, never a control character).
pub fn is_label(text: &str) -> bool {
    !text.is_empty() && text.chars().count() <= 64 && !text.chars().any(char::is_control)
}

/// What a group of runs is; the letter of its name says it to users (s3, w2, m1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupKind {
    /// The standard battery (`survey`), named sN.
    Survey,
    /// The IO500 list, named sN as surveys are: its runs show as one.
    Io500,
    /// A sweep over client counts, named wN.
    Sweep,
    /// A file x record matrix, named mN.
    Matrix,
    /// A campaign of studies, named cN.
    Campaign,
    /// A target survey (`targets`): each target alone, then k at once, named tN.
    Targets,
}

impl GroupKind {
    const ALL: [GroupKind; 6] = [
        GroupKind::Survey,
        GroupKind::Io500,
        GroupKind::Sweep,
        GroupKind::Matrix,
        GroupKind::Campaign,
        GroupKind::Targets,
    ];

    /// The letter of its names.
    pub fn letter(self) -> char {
        match self {
            GroupKind::Survey | GroupKind::Io500 => 's',
            GroupKind::Sweep => 'w',
            GroupKind::Matrix => 'm',
            GroupKind::Campaign => 'c',
            GroupKind::Targets => 't',
        }
    }

    /// The name in the store.
    pub fn name(self) -> String {
        crate::spec::variant_name(&self)
    }

    /// The kind of a stored name.
    pub fn from_name(name: &str) -> Option<GroupKind> {
        GroupKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// A group's name: its letter's kind and the number the store minted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupId {
    /// Its kind.
    pub kind: GroupKind,
    /// Its number among the groups of its letter.
    pub number: i64,
}

impl std::fmt::Display for GroupId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.kind.letter(), self.number)
    }
}

impl RunRecord {
    /// The group the run was filed in: its survey, sweep or matrix (a record keeps the
    /// number of each, as users read them).
    pub fn group(&self) -> Option<GroupId> {
        let of = |kind, n: Option<i64>| n.map(|number| GroupId { kind, number });
        of(GroupKind::Survey, self.survey_id)
            .or(of(GroupKind::Sweep, self.sweep_id))
            .or(of(GroupKind::Matrix, self.matrix_id))
            .or(of(GroupKind::Campaign, self.campaign_id))
            .or(of(GroupKind::Targets, self.targets_id))
    }
}

/// The provenance of what iosurvey measured itself.
pub const MEASURED: &str = "measured";

/// The prefix of an imported run's provenance (`imported:ior 4.1.0`).
pub const IMPORTED: &str = "imported:";

/// The tool and version an imported provenance names (`ior 4.1.0`); none for a measured one.
pub fn imported_from(provenance: &str) -> Option<&str> {
    provenance.strip_prefix(IMPORTED)
}

fn measured() -> String {
    MEASURED.to_string()
}

/// The best figures of one op over a run's iterations: what `ls` shows of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestFigure {
    /// Op name.
    pub op: String,
    /// Bandwidth, bytes/s.
    pub bandwidth: Option<f64>,
    /// Operations per second.
    pub iops: Option<f64>,
    /// Whether any iteration may have been served by (or absorbed into) the page cache.
    pub possibly_cached: bool,
}

/// What the store indexes of a record, for the queries that do not read it whole.
#[derive(Debug, Clone, PartialEq)]
pub struct RunIndex {
    /// What was measured, whatever the team size or repetition ([`Workload::key`]): runs with
    /// the same key are comparable. The store's column holds it as computed when the run was
    /// written (and again by each re-keying step of its migrations); analysis computes the
    /// key from the record's workload, never from the column.
    pub workload_key: String,
    /// The best figures per op, in the order the ops first ran.
    pub headline: Vec<BestFigure>,
    /// Whether IOPS, not bandwidth, is its figure of merit.
    pub random: bool,
}

/// Where and how a run ran: what the record keeps beside the workload and the measurements.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// Host and target facts.
    pub env: Environment,
    /// The command line that asked for it.
    pub command_line: String,
    /// Start, Unix seconds.
    pub started: i64,
    /// Host name of each node.
    pub hosts: Vec<String>,
    /// Clock alignment error, nanoseconds.
    pub clock_uncertainty_ns: u64,
}

/// Figures of one op over all iterations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpSummary {
    /// Write or read.
    pub op: Op,
    /// Bandwidth over iterations, bytes/s.
    pub bandwidth: Option<Spread>,
    /// IOPS over iterations.
    pub iops: Option<Spread>,
    /// Cache reason if any iteration may have been served from memory.
    pub possibly_cached: Option<String>,
}

/// What a phase saw of the page cache: whether it was dropped just before, whether every
/// task read data written on another node (whose page cache it cannot hit), and how many
/// bytes the phase moved.
#[derive(Debug, Clone, Copy)]
pub struct CacheView {
    /// Caches dropped on every node just before the phase.
    pub dropped: bool,
    /// Every read crossed to another node.
    pub elsewhere: bool,
    /// Bytes the phase moved.
    pub bytes: u64,
    /// How the run's I/O met the page cache.
    pub page_cache: PageCache,
}

/// Why a phase's figure may be the page cache's rather than the storage's: a read that may
/// have come from memory, or a write that memory may have absorbed.
pub fn cache_flag(op: Op, w: &Workload, env: &Environment, seen: CacheView) -> Option<String> {
    if seen.page_cache == PageCache::Untouched {
        return None;
    }
    if is_memory_fs(&env.fs_type) {
        return Some(format!("target is {}, a memory file system", env.fs_type));
    }
    // As the engine says: a mapping goes through the page cache even when the file was
    // opened with O_DIRECT.
    let direct = seen.page_cache == PageCache::Bypassed;
    // Data larger than RAM cannot all sit in the page cache; anything smaller might.
    let fits = env.ram_bytes == 0 || seen.bytes < env.ram_bytes;
    match op.direction() {
        Op::Read | Op::Mix if !(direct || seen.dropped || seen.elsewhere) && fits => {
            Some("read without --direct or --drop-caches, data smaller than RAM".into())
        }
        Op::Write if !(direct || w.data().is_some_and(|d| d.fsync || d.fsync_each)) && fits => Some(
            "write without --fsync, --fsync-each or --direct, data smaller than RAM: possibly absorbed by the page cache"
                .into(),
        ),
        // The inodes a task made itself stay in its node's caches: a stat or read of them
        // may never reach the metadata server.
        Op::DirStat | Op::FileStat | Op::FileRead if !(seen.dropped || seen.elsewhere) => Some(
            "items made on this node, without --drop-caches or a --shift to another node: possibly from its caches".into(),
        ),
        _ => None,
    }
}

impl PhaseRecord {
    /// Aggregates one executed phase.
    pub fn from_outcome(
        p: PhaseOutcome,
        w: &Workload,
        env: &Environment,
        (elsewhere, page_cache): (bool, PageCache),
    ) -> Self {
        let figures = aggregate(&p.tasks);
        let window_ns = figures.window_ns;
        PhaseRecord {
            possibly_cached: cache_flag(
                p.op,
                w,
                env,
                CacheView { dropped: p.caches_dropped, elsewhere, bytes: figures.bytes, page_cache },
            ),
            op: p.op,
            iteration: p.iteration,
            figures,
            caches_dropped: p.caches_dropped,
            verify: p.verify.map(|v| VerifySummary {
                checked: v.checked,
                bad: v.bad,
                stale: v.stale,
                first: v.first.map(|b| {
                    let (path, m) = (b.path.display(), b.mismatch);
                    match m.fault {
                        Fault::Missing => format!("{path} offset {}: the file ends there (missing)", m.offset),
                        f => format!(
                            "{path} offset {}: expected 0x{:02x}, found 0x{:02x} ({})",
                            m.offset,
                            m.expected,
                            m.found,
                            format!("{f:?}").to_lowercase()
                        ),
                    }
                }),
            }),
            latency: p.latency,
            series: p.series,
            tasks: p.tasks,
            requests: p.requests.into_iter().map(|(r, t)| RequestFigures::over(r, t, window_ns)).collect(),
        }
    }
}

impl RunRecord {
    /// Builds the record of an execution; the status follows its failure and verification.
    pub fn assemble(w: Workload, exec: Execution, facts: RunFacts) -> Self {
        let RunFacts { env, command_line, started, hosts, clock_uncertainty_ns } = facts;
        let elsewhere = exec.reorder_crosses_nodes;
        let failure_hint = exec.failure.as_ref().map(|f| f.hint.clone());
        let interrupted = exec.failure.as_ref().is_some_and(|f| f.interrupted);
        let phases: Vec<PhaseRecord> = exec
            .phases
            .into_iter()
            .map(|p| PhaseRecord::from_outcome(p, &w, &env, (elsewhere, exec.page_cache)))
            .collect();
        let failure = exec.failure.map(|f| {
            let host = hosts.get(f.node as usize).map_or("?", String::as_str);
            format!("task {} on {host}: {}", f.task, f.message)
        });
        let error = failure.or_else(|| verify_error(&phases));
        RunRecord {
            id: None,
            survey_id: None,
            name: None,
            started,
            status: if error.is_some() { Status::Failed } else { Status::Ok },
            error,
            command_line,
            workload: w,
            env,
            phases,
            training: None,
            warnings: Vec::new(),
            sweep_id: None,
            hosts,
            clock_uncertainty_ns,
            reorder_crosses_nodes: elsewhere,
            failure_hint,
            interrupted,
            provenance: measured(),
            matrix_id: None,
            campaign_id: None,
            targets_id: None,
            events: Vec::new(),
            label: None,
            tool_params: BTreeMap::new(),
        }
    }

    /// What the store indexes of this record.
    pub fn index(&self) -> RunIndex {
        let mut headline: Vec<BestFigure> = Vec::new();
        for p in &self.phases {
            let best = match headline.iter_mut().find(|b| b.op == p.op.name()) {
                Some(b) => b,
                None => {
                    let fresh = BestFigure { op: p.op.name(), bandwidth: None, iops: None, possibly_cached: false };
                    headline.push(fresh);
                    headline.last_mut().expect("just pushed")
                }
            };
            let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (x, y) => x.or(y),
            };
            best.bandwidth = max(best.bandwidth, p.figures.bandwidth);
            best.iops = max(best.iops, p.figures.iops);
            best.possibly_cached |= p.possibly_cached.is_some();
        }
        RunIndex { workload_key: self.workload.key(), headline, random: self.workload.random() }
    }

    /// Per-op figures over iterations, in the order ops first ran.
    pub fn summaries(&self) -> Vec<OpSummary> {
        let mut ops: Vec<Op> = Vec::new();
        for p in &self.phases {
            if !ops.contains(&p.op) {
                ops.push(p.op);
            }
        }
        ops.into_iter()
            .map(|op| {
                let of_op: Vec<&PhaseRecord> = self.phases.iter().filter(|p| p.op == op).collect();
                let bw: Vec<f64> = of_op.iter().filter_map(|p| p.figures.bandwidth).collect();
                let iops: Vec<f64> = of_op.iter().filter_map(|p| p.figures.iops).collect();
                OpSummary {
                    op,
                    bandwidth: spread(&bw),
                    iops: spread(&iops),
                    possibly_cached: of_op.iter().find_map(|p| p.possibly_cached.clone()),
                }
            })
            .collect()
    }

    /// Team-wide figures of each node's tasks in one phase, by node index.
    pub fn per_node(phase: &PhaseRecord) -> Vec<(u32, PhaseFigures)> {
        let mut nodes: Vec<u32> = phase.tasks.iter().map(|t| t.node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
            .into_iter()
            .map(|n| {
                let tasks: Vec<TaskTiming> = phase.tasks.iter().filter(|t| t.node == n).copied().collect();
                (n, aggregate(&tasks))
            })
            .collect()
    }

    /// Bad transfers found by verification, over all phases.
    pub fn bad_transfers(&self) -> u64 {
        self.phases.iter().filter_map(|p| p.verify.as_ref()).map(|v| v.bad).sum()
    }
}

fn verify_error(phases: &[PhaseRecord]) -> Option<String> {
    let bad: u64 = phases.iter().filter_map(|p| p.verify.as_ref()).map(|v| v.bad).sum();
    let checked: u64 = phases.iter().filter_map(|p| p.verify.as_ref()).map(|v| v.checked).sum();
    let stale: u64 = phases.iter().filter_map(|p| p.verify.as_ref()).map(|v| v.stale).sum();
    let first = phases.iter().filter_map(|p| p.verify.as_ref()?.first.clone()).next()?;
    let stale_note = if stale > 0 { format!(", {stale} written by another run (stale)") } else { String::new() };
    (bad > 0).then(|| format!("verification failed: {bad} of {checked} transfers bad{stale_note}; first at {first}"))
}

/// Records made by hand, the same in every test that needs one.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::execution::{Execution, PhaseOutcome, TaskFailure, VerifyTally};
    use super::*;
    use crate::measure::{Series, TaskTiming};

    fn sample_latency() -> Latency {
        let mut h = crate::measure::histogram::Histogram::default();
        for v in [100, 2000, 2000, 90_000] {
            h.record(v);
        }
        h.summary()
    }

    /// A run of two tasks on two nodes: a write with latency and a series, a verified read.
    pub fn run(failure: Option<TaskFailure>) -> RunRecord {
        let t = |task, bytes| TaskTiming {
            task,
            bytes,
            ops: 2,
            open_start: 5,
            xfer_start: 6,
            xfer_end: 90,
            sync_end: 95,
            close_end: 100,
            bytes_at_first_finish: bytes / 2,
            node: 0,
        };
        let phases = vec![
            PhaseOutcome {
                op: Op::Write,
                iteration: 0,
                tasks: vec![t(0, 4096), t(1, 8192)],
                verify: None,
                caches_dropped: false,
                latency: sample_latency(),
                series: Series { origin_ns: 7, interval_ns: 50, bytes: vec![4096, 0, 8192], ops: vec![1, 0, 2] },
                requests: Vec::new(),
            },
            PhaseOutcome {
                op: Op::Read,
                iteration: 0,
                tasks: vec![t(0, 4096), t(1, 4096)],
                verify: Some(VerifyTally { checked: 2, ..VerifyTally::default() }),
                caches_dropped: true,
                latency: Latency::default(),
                series: Series::default(),
                requests: Vec::new(),
            },
        ];
        let env = Environment {
            host: "h".into(),
            fs_type: "ext4".into(),
            block_device: Some("vda".into()),
            ram_bytes: 1 << 30,
            ..Environment::default()
        };
        let facts = crate::record::RunFacts {
            env,
            command_line: "iosurvey run".into(),
            started: 1234,
            hosts: vec!["n1".into(), "n2".into()],
            clock_uncertainty_ns: 42,
        };
        let mut r = RunRecord::assemble(
            Workload { verify: true, ..Workload::default() },
            Execution { phases, failure, reorder_crosses_nodes: true, ..Execution::default() },
            facts,
        );
        r.warnings.push("a warning".into());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_keeps_the_best_of_each_op_over_iterations() {
        let mut r = fixtures::run(None);
        let mut again = r.phases[0].clone();
        again.iteration = 1;
        again.figures.bandwidth = Some(5e11);
        again.figures.iops = Some(10.0);
        again.possibly_cached = None;
        r.phases.push(again);
        let index = r.index();
        let ops: Vec<&str> = index.headline.iter().map(|b| b.op.as_str()).collect();
        assert_eq!(ops, ["write", "read"], "in the order the ops first ran");
        let write = &index.headline[0];
        assert_eq!(write.bandwidth, Some(5e11), "the larger of the two iterations");
        assert_eq!(write.iops, r.phases[0].figures.iops, "each figure its own maximum");
        assert!(write.possibly_cached, "flagged when any iteration may be cached");
        assert!(!index.random);
    }

    #[test]
    fn reads_and_writes_are_flagged_unless_caches_were_defeated() {
        let w = Workload::default();
        let disk = Environment { fs_type: "ext4".into(), ram_bytes: 1000, ..Environment::default() };
        let shm = Environment { fs_type: "tmpfs".into(), ..disk.clone() };
        // The engine's word on the page cache: O_DIRECT through the sync engine bypasses it.
        let seen = |w: &Workload, dropped, elsewhere, bytes| {
            let page_cache = if w.data().is_some_and(|d| d.direct) { PageCache::Bypassed } else { PageCache::Through };
            CacheView { dropped, elsewhere, bytes, page_cache }
        };
        assert!(cache_flag(Op::Read, &w, &disk, seen(&w, false, false, 10)).is_some());
        assert!(cache_flag(Op::Read, &w, &disk, seen(&w, true, false, 10)).is_none());
        assert!(cache_flag(Op::Read, &w, &disk, seen(&w, false, true, 10)).is_none(), "read on another node");
        assert!(cache_flag(Op::Read, &w, &disk, seen(&w, false, false, 5000)).is_none(), "larger than RAM");
        let with = |f: fn(&mut crate::spec::Data)| {
            let mut w = w.clone();
            f(w.data_mut());
            w
        };
        let direct = with(|d| d.direct = true);
        assert!(cache_flag(Op::Read, &direct, &disk, seen(&direct, false, false, 10)).is_none());
        assert!(cache_flag(Op::Read, &direct, &shm, seen(&direct, true, true, 10)).unwrap().contains("tmpfs"));
        let absorbed = cache_flag(Op::Write, &w, &disk, seen(&w, false, false, 10)).unwrap();
        assert!(absorbed.contains("absorbed by the page cache"), "{absorbed}");
        assert!(cache_flag(Op::Write, &w, &disk, seen(&w, false, false, 5000)).is_none(), "larger than RAM");
        for synced in [with(|d| d.fsync = true), with(|d| d.fsync_each = true), direct] {
            assert!(cache_flag(Op::Write, &synced, &disk, seen(&synced, false, false, 10)).is_none());
        }
        assert!(cache_flag(Op::Write, &w, &shm, seen(&w, false, false, 5000)).unwrap().contains("tmpfs"));
    }

    #[test]
    fn summaries_spread_over_iterations() {
        let w = Workload::default();
        let env = Environment::default();
        let t = |bytes, end| TaskTiming { bytes, ops: 1, close_end: end, xfer_end: end, ..TaskTiming::default() };
        let phase = |op, iteration, bytes| PhaseOutcome {
            op,
            iteration,
            tasks: vec![t(bytes, 1_000_000_000)],
            verify: None,
            caches_dropped: false,
            latency: Latency::default(),
            series: Series::default(),
            requests: Vec::new(),
        };
        let exec = Execution {
            phases: vec![phase(Op::Write, 0, 100), phase(Op::Read, 0, 100), phase(Op::Write, 1, 300)],
            failure: None,
            reorder_crosses_nodes: false,
            page_cache: Default::default(),
        };
        let r = RunRecord::assemble(w, exec, RunFacts { env, ..RunFacts::default() });
        let s = r.summaries();
        assert_eq!(s.len(), 2);
        let write = s[0].bandwidth.unwrap();
        assert_eq!((s[0].op, write.min, write.mean, write.max, write.n), (Op::Write, 100.0, 200.0, 300.0, 2));
        assert_eq!(r.status, Status::Ok);
    }
}

/// One kind measured in one cell of a matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixCell {
    /// The test kind.
    pub kind: crate::plan::matrix::Kind,
    /// File size per task, bytes.
    pub file: u64,
    /// Record (transfer) size, bytes.
    pub record: u64,
    /// One per repetition, under the matrix's timing.
    pub samples: Vec<crate::measure::TimedFigures>,
    /// The runs that measured it.
    pub runs: Vec<i64>,
    /// Why it may be the page cache's figure, if it may.
    pub possibly_cached: Option<String>,
}

impl MatrixCell {
    /// The median of its samples' whole-team rates, bytes/s.
    pub fn rate(&self) -> Option<f64> {
        let rates: Vec<f64> = self.samples.iter().filter_map(|s| s.team).collect();
        crate::measure::median(&rates)
    }
}

/// A file x record matrix (`iosurvey matrix`): its settings, every cell measured, and what it
/// cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRecord {
    /// Store id (`mN`), once saved.
    pub id: Option<i64>,
    /// Start, Unix seconds.
    pub started: i64,
    /// Ok, or failed (then `error` says why).
    pub status: Status,
    /// What stopped it.
    pub error: Option<String>,
    /// The command line.
    pub command_line: String,
    /// The name of the system measured (`--label`).
    pub label: Option<String>,
    /// Host and target facts.
    pub env: Environment,
    /// The sizes.
    pub grid: crate::plan::matrix::Grid,
    /// The kinds asked for, in order.
    pub kinds: Vec<crate::plan::matrix::Kind>,
    /// What every run shares.
    pub shape: crate::plan::matrix::Shape,
    /// Where the timed window ends.
    pub timing: crate::measure::WindowEnd,
    /// Adaptive (else every cell, `--full`).
    pub adaptive: bool,
    /// A drop of more than this fraction between neighbours is a cliff.
    pub fraction: f64,
    /// Every kind of every cell measured.
    pub cells: Vec<MatrixCell>,
    /// The machine's limits when it ran: CPU caches, the page cache's bound.
    pub limits: Vec<crate::env::Limit>,
    /// Wall time, seconds.
    pub wall_secs: f64,
    /// The estimated wall time of every cell (the full matrix), seconds.
    pub full_secs: Option<f64>,
    /// Cells of the grid not measured.
    pub skipped: usize,
    /// The adaptive mode's spine: the record size it measured at every coarse file size.
    #[serde(default)]
    pub spine: Option<u64>,
    /// Things the reader should know (passes refused, budget reached).
    pub notes: Vec<String>,
    /// Where the figures come from, when not measured by iosurvey: `imported:iozone 3.508`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
    /// An imported matrix's figures and settings iosurvey's matrix has no place for, by the
    /// tool's own names.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_params: BTreeMap<String, String>,
}

impl MatrixRecord {
    /// A matrix of these sizes, kinds and shape, a fall of more than `fraction` a cliff,
    /// before anything is measured: whole, adaptive, not stored, nothing noted, its context
    /// unknown. Whoever makes one says the rest (`..MatrixRecord::new(...)`).
    pub fn new(
        grid: crate::plan::matrix::Grid,
        kinds: Vec<crate::plan::matrix::Kind>,
        shape: crate::plan::matrix::Shape,
        fraction: f64,
    ) -> Self {
        MatrixRecord {
            id: None,
            started: 0,
            status: Status::Ok,
            error: None,
            command_line: String::new(),
            label: None,
            env: Environment::default(),
            grid,
            kinds,
            shape,
            timing: Default::default(),
            adaptive: true,
            fraction,
            cells: Vec::new(),
            limits: Vec::new(),
            wall_secs: 0.0,
            full_secs: None,
            skipped: 0,
            spine: None,
            notes: Vec::new(),
            provenance: None,
            tool_params: BTreeMap::new(),
        }
    }
}
