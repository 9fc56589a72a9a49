//! Checkpoint I/O as MLPerf Storage's checkpointing workload: a model's state, 14 bytes per
//! parameter (2 of weights, 12 of optimizer state), sharded evenly over ranks, each rank
//! writing a weights file and an optimizer file per checkpoint with fsync, compute time
//! between checkpoints; then, on each client, the page cache dropped when that client's share
//! of the data is under 3x its own RAM, and the checkpoints read back, each rank optionally
//! reading another rank's shard.
//! Per checkpoint the figures are the slowest rank's duration and throughput. As in
//! mlpstorage, a study may write only (`--reads 0`, the files kept) and a later one read
//! only (`--checkpoints 0`), on other ranks or another number of them: it finds the shards
//! the first one wrote and shares them over its own ranks.

use super::TrainError;
use crate::cancel::Cancel;
use crate::measure::TaskTiming;
use crate::target::dir::Dir;
use crate::target::Target;
use crate::team::Member;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// A model whose checkpoints are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
pub enum Llama {
    /// Llama 3, 8 billion parameters.
    #[value(name = "llama3-8b")]
    #[serde(rename = "llama3-8b")]
    Llama3_8b,
    /// Llama 3, 70 billion parameters.
    #[value(name = "llama3-70b")]
    #[serde(rename = "llama3-70b")]
    Llama3_70b,
    /// Llama 3, 405 billion parameters.
    #[value(name = "llama3-405b")]
    #[serde(rename = "llama3-405b")]
    Llama3_405b,
    /// A model of a trillion parameters.
    #[value(name = "llama3-1t")]
    #[serde(rename = "llama3-1t")]
    Llama3_1t,
}

impl Llama {
    /// Parameters.
    pub fn parameters(self) -> u64 {
        match self {
            Llama::Llama3_8b => 8_000_000_000,
            Llama::Llama3_70b => 70_000_000_000,
            Llama::Llama3_405b => 405_000_000_000,
            Llama::Llama3_1t => 1_000_000_000_000,
        }
    }

    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Llama::Llama3_8b => "llama3-8b",
            Llama::Llama3_70b => "llama3-70b",
            Llama::Llama3_405b => "llama3-405b",
            Llama::Llama3_1t => "llama3-1t",
        }
    }
}

/// Bytes of checkpoint per parameter: bf16 weights (2) and fp32 optimizer state (master
/// weights and two moments, 12).
pub const BYTES_PER_PARAMETER: u64 = 14;
const WEIGHTS_PER_PARAMETER: u64 = 2;

/// A checkpoint study's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoints {
    /// The model.
    pub model: Llama,
    /// Ranks of this study.
    pub ranks: usize,
    /// Shards the state is in: the ranks of the study that wrote it (this one's, unless it
    /// only reads what another wrote).
    pub shards: usize,
    /// Checkpoints written (0: only read those an earlier study kept).
    pub writes: u32,
    /// Checkpoints read back (the first ones written).
    pub reads: u32,
    /// Compute between checkpoints, seconds.
    pub compute: f64,
    /// Bytes per write or read call.
    pub transfer: u64,
    /// Shard j is read by rank (j - shift) mod ranks: with as many ranks as shards, rank r
    /// reads the shard of rank (r + shift) mod ranks.
    pub shift: usize,
    /// 1/N of the model's size: a rehearsal.
    pub scale: Option<u64>,
    /// This process's client's RAM, bytes (each process reads its own node's).
    pub ram_bytes: u64,
}

impl Checkpoints {
    /// Checks the settings; every refusal is one line, before anything is written.
    pub fn check(&self) -> Result<(), TrainError> {
        let bad = |what: String, hint: &str| Err(TrainError::refused(what, hint));
        if self.ranks == 0 || self.ranks > 4096 {
            return bad(format!("--ranks {} is not 1 to 4096", self.ranks), "give --ranks N");
        }
        let read_only = self.writes == 0 && (1..=1000).contains(&self.reads);
        if !read_only && (self.writes == 0 || self.writes > 1000 || self.reads > self.writes) {
            return bad(
                format!(
                    "--checkpoints {} / --reads {}: 1 to 1000 written, at most as many read",
                    self.writes, self.reads
                ),
                "give e.g. --checkpoints 10 --reads 10",
            );
        }
        if !(self.compute.is_finite() && (0.0..=3600.0).contains(&self.compute)) {
            return bad(format!("--compute {} is not 0 to 3600 s", self.compute), "give seconds, e.g. --compute 5");
        }
        if self.transfer == 0 || self.transfer > 1 << 30 {
            return bad(format!("--transfer {} is not 1 byte to 1 GiB", self.transfer), "give e.g. --transfer 16m");
        }
        if self.shift >= self.ranks {
            return bad(
                format!("--shift {} is not below --ranks {}", self.shift, self.ranks),
                "give a smaller --shift",
            );
        }
        if self.ranks > self.shards {
            return bad(
                format!(
                    "--ranks {} is more than the {} shards the checkpoints were written in: a rank would read nothing",
                    self.ranks, self.shards
                ),
                &format!("give --ranks {} or fewer (all processes' ranks together)", self.shards),
            );
        }
        if self.rank_bytes() == 0 {
            return bad("the scaled checkpoint leaves a rank no bytes".into(), "give a smaller --scale divisor");
        }
        Ok(())
    }

    /// Bytes of a shard of a checkpoint (what each rank writes).
    pub fn rank_bytes(&self) -> u64 {
        (self.model.parameters() * BYTES_PER_PARAMETER / self.scale.unwrap_or(1)) / self.shards.max(1) as u64
    }

    /// A rank's two files of a checkpoint: weights, then optimizer state, with their bytes.
    pub fn files(&self, checkpoint: u32, rank: usize) -> [(String, u64); 2] {
        let all = self.rank_bytes();
        let weights = all * WEIGHTS_PER_PARAMETER / BYTES_PER_PARAMETER;
        let stem = format!("ckpt-{checkpoint:04}-rank-{rank:05}");
        [(format!("{stem}-model.pt"), weights), (format!("{stem}-optim.pt"), all - weights)]
    }

    /// Every file name the study writes, or only reads, in order.
    pub fn names(&self) -> Vec<String> {
        let n = self.writes.max(self.reads);
        (0..n).flat_map(|c| (0..self.shards).flat_map(move |r| self.files(c, r).map(|f| f.0))).collect()
    }

    /// Bytes of the checkpoints the study writes, or only reads.
    pub fn total_bytes(&self) -> u64 {
        self.rank_bytes() * self.shards as u64 * self.writes.max(self.reads) as u64
    }

    /// The shards rank `r` reads back.
    pub fn read_by(&self, r: usize) -> Vec<usize> {
        (0..self.shards).filter(|j| (j + self.ranks - self.shift % self.ranks) % self.ranks == r).collect()
    }

    /// The checkpoint bytes client `node` holds, `nodes` being each rank's node: what its
    /// ranks write, or, in a study that only reads, what they read back. Its page cache can
    /// hold no more of the checkpoints than this, whatever the other clients hold.
    pub fn client_bytes(&self, nodes: &[u32], node: u32) -> u64 {
        let ranks = (0..self.ranks).filter(|&r| nodes.get(r) == Some(&node));
        let (shards, times) = match self.writes {
            0 => (ranks.map(|r| self.read_by(r).len() as u64).sum::<u64>(), self.reads),
            w => (ranks.count() as u64, w),
        };
        shards.saturating_mul(self.rank_bytes()).saturating_mul(times as u64)
    }

    /// The 3x rule on client `node` of `ram_bytes`: whether its page cache is dropped before
    /// the reads.
    pub fn client_needs_drop(&self, nodes: &[u32], node: u32, ram_bytes: u64) -> bool {
        needs_drop(self.client_bytes(nodes, node), ram_bytes)
    }
}

/// Whether the page cache is dropped before the reads: the data this client holds is under
/// 3x its RAM, so the page cache could serve the reads.
pub fn needs_drop(bytes: u64, ram_bytes: u64) -> bool {
    bytes < 3u64.saturating_mul(ram_bytes)
}

/// What the 3x rule did on one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Dropping {
    /// Its share is 3x its RAM or more: the cache cannot serve the reads, nothing dropped.
    NotNeeded,
    /// Dropped.
    Dropped,
    /// Needed, but `--no-drop-caches` kept it.
    Kept,
    /// Needed, but the process is not root.
    NotRoot,
    /// Needed, and the drop failed.
    Failed,
}

/// One client's share of the checkpoints, its RAM, and what the 3x rule did there.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientCache {
    /// Its host name.
    pub host: String,
    /// The checkpoint bytes it holds ([`Checkpoints::client_bytes`]).
    pub bytes: u64,
    /// Its RAM.
    pub ram_bytes: u64,
    /// What was done.
    pub dropping: Dropping,
}

impl ClientCache {
    /// Whether its reads may be served by a page cache the rule should have dropped.
    pub fn uncovered(&self) -> bool {
        !matches!(self.dropping, Dropping::NotNeeded | Dropping::Dropped)
    }

    /// How the record says it: "host: 1.0 GiB of 64.0 GiB RAM (under 3x): dropped".
    pub fn said(&self) -> String {
        let rule = if needs_drop(self.bytes, self.ram_bytes) { "under 3x" } else { "3x or more" };
        let done = match self.dropping {
            Dropping::NotNeeded => "not dropped",
            Dropping::Dropped => "dropped",
            Dropping::Kept => "kept (--no-drop-caches)",
            Dropping::NotRoot => "kept (not root)",
            Dropping::Failed => "kept (the drop failed)",
        };
        format!(
            "{}: {} of {} RAM ({rule}): {done}",
            self.host,
            crate::units::format_size(self.bytes),
            crate::units::format_size(self.ram_bytes)
        )
    }
}

/// One phase (a checkpoint written, or read) of every rank.
#[derive(Debug, Clone)]
pub struct Phase {
    /// Each rank's timing (ns from the study's start).
    pub tasks: Vec<TaskTiming>,
}

impl Phase {
    /// The slowest rank's duration, seconds.
    pub fn max_secs(&self) -> f64 {
        self.tasks.iter().map(|t| t.close_end.saturating_sub(t.open_start)).max().unwrap_or(0) as f64 / 1e9
    }

    /// The slowest rank's throughput, bytes per second.
    pub fn min_rate(&self) -> f64 {
        self.tasks
            .iter()
            .map(|t| t.bytes as f64 / (t.close_end.saturating_sub(t.open_start).max(1) as f64 / 1e9))
            .fold(f64::INFINITY, f64::min)
    }
}

/// What the study measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Each checkpoint's write.
    pub writes: Vec<Phase>,
    /// Each checkpoint's read.
    pub reads: Vec<Phase>,
    /// Whether the page cache was dropped on every client before the reads.
    pub dropped: bool,
    /// The 3x rule on each client, in node order (none when nothing is read back).
    pub clients: Vec<ClientCache>,
}

/// On the lead, before anything is written: refuses checkpoints larger than the free space,
/// then names every file in the target's manifest. A study that only reads names nothing: it
/// checks what [`kept_shards`] found instead. Gives the shards the checkpoints are in.
pub fn prepare(c: &Checkpoints, target: &mut Target) -> Result<usize, TrainError> {
    if c.writes == 0 {
        let found = kept_shards(c, target)?;
        return Ok(found.shards);
    }
    let need = c.total_bytes();
    let free = target.dir().free_bytes().unwrap_or(u64::MAX);
    if need > free {
        return Err(TrainError::refused(
            format!(
                "{} checkpoints of {} need {} but {} has {} free",
                c.writes,
                c.model.name(),
                crate::units::format_size(need),
                target.dir().path().display(),
                crate::units::format_size(free)
            ),
            "give --scale 1/N for a rehearsal, fewer --checkpoints, or free space",
        ));
    }
    target.claim(&c.names())?;
    Ok(c.shards)
}

/// A study that only reads, with the shards it found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Shards of each checkpoint.
    pub shards: usize,
    /// Checkpoints kept whole.
    pub checkpoints: u32,
}

/// The checkpoints an earlier study kept in `target` for one that only reads (`c.writes` is
/// 0): their shards counted by iosurvey's names (checkpoint 0's, which must be 0 to N-1),
/// then every file the reads take checked to be iosurvey's own, named in the manifest, and
/// of the size `c`'s model and scale give; else refused, nothing read.
pub fn kept_shards(c: &Checkpoints, target: &Target) -> Result<Found, TrainError> {
    let dir = target.dir();
    let listed =
        dir.list().map_err(|e| TrainError::Io { what: format!("list {}", dir.path().display()), source: e })?;
    // (checkpoint, rank) of every weights file named as this module names them.
    let kept: std::collections::BTreeSet<(u32, usize)> =
        listed.iter().filter_map(|n| n.to_str().and_then(parse_name)).collect();
    let shards = kept.iter().take_while(|(k, _)| *k == 0).count();
    let whole = shards > 0 && kept.iter().take(shards).enumerate().all(|(i, (_, r))| *r == i);
    if !whole {
        return Err(TrainError::refused(
            format!(
                "{} holds no checkpoint to read (iosurvey's ckpt-0000-rank-00000-model.pt and on)",
                dir.path().display()
            ),
            "write them first with --reads 0 --keep, then read them with --checkpoints 0 --reads N",
        ));
    }
    let checkpoints = (0..).take_while(|&k| (0..shards).all(|r| kept.contains(&(k, r)))).count() as u32;
    let c = Checkpoints { shards, ..c.clone() };
    c.check()?;
    if c.reads > checkpoints {
        return Err(TrainError::refused(
            format!(
                "--reads {} but {} holds {checkpoints} checkpoints of {shards} shards",
                c.reads,
                dir.path().display()
            ),
            format!("give --reads {checkpoints} or fewer"),
        ));
    }
    target.check_readable(&c.names())?;
    for k in 0..c.reads {
        for r in 0..shards {
            for (name, want) in c.files(k, r) {
                let have = dir.stat(&name).ok().flatten().map_or(0, |st| st.size);
                if have != want {
                    return Err(TrainError::refused(
                        format!(
                            "{} holds {have} bytes, not the {want} of {} in {shards} shards{}: it was written with other settings",
                            dir.show(&name).display(),
                            c.model.name(),
                            c.scale.map_or(String::new(), |n| format!(" at --scale 1/{n}")),
                        ),
                        "give the --model and --scale it was written with",
                    ));
                }
            }
        }
    }
    Ok(Found { shards, checkpoints })
}

/// The checkpoint and rank of a weights file's name, `ckpt-KKKK-rank-RRRRR-model.pt`.
fn parse_name(name: &str) -> Option<(u32, usize)> {
    let rest = name.strip_prefix("ckpt-")?.strip_suffix("-model.pt")?;
    let (k, r) = rest.split_once("-rank-")?;
    let digits = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_digit());
    (digits(k, 4) && digits(r, 5)).then(|| Some((k.parse().ok()?, r.parse().ok()?))).flatten()
}

/// What one rank did, gathered on the lead.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct RankPart {
    writes: Vec<TaskTiming>,
    reads: Vec<TaskTiming>,
    error: Option<String>,
    interrupted: bool,
    dropped: bool,
    /// The 3x rule on this rank's client, from one rank of each process.
    client: Option<ClientCache>,
}

/// Runs the study in `dir` (named in the manifest by [`prepare`]): each of `members` (this
/// process's share of the team, the team's size `c.ranks`) writes its shard of every
/// checkpoint and reads back the shards [`Checkpoints::read_by`] gives it, which under MPI
/// another process wrote, or an earlier study; every rank meets the others before each
/// checkpoint. The page cache
/// is dropped on every node (as root, by the 3x rule, unless `drop` is false). The lead
/// process gets the outcome or the first failure; the others `None`.
pub fn run<M: Member>(
    c: &Checkpoints,
    dir: &Dir,
    members: Vec<M>,
    drop: bool,
    cancel: &Cancel,
) -> Result<Option<Outcome>, TrainError> {
    let clock = Clock { origin: Instant::now(), cancel };
    let gathered: Vec<Option<Vec<RankPart>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = members
            .into_iter()
            .map(|member| {
                let clock = &clock;
                sc.spawn(move || {
                    let part = rank_part(c, dir, &member, drop, clock);
                    member.gather(part)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let Some(parts) = gathered.into_iter().flatten().next() else { return Ok(None) };
    if let Some(e) = parts.iter().find_map(|p| p.error.clone()) {
        return Err(TrainError::Io { what: "checkpoint".into(), source: std::io::Error::other(e) });
    }
    if cancel.is_cancelled() || parts.iter().any(|p| p.interrupted) {
        return Err(TrainError::Interrupted);
    }
    let phases = |each: &dyn Fn(&RankPart) -> &Vec<TaskTiming>, n: u32| -> Vec<Phase> {
        (0..n as usize).map(|k| Phase { tasks: parts.iter().map(|p| each(p)[k]).collect() }).collect()
    };
    // Several processes on one node each say its rule: said once.
    let mut clients: Vec<ClientCache> = Vec::new();
    for client in parts.iter().filter_map(|p| p.client.clone()) {
        if !clients.iter().any(|c| c.host == client.host) {
            clients.push(client);
        }
    }
    Ok(Some(Outcome {
        writes: phases(&|p| &p.writes, c.writes),
        reads: phases(&|p| &p.reads, c.reads),
        dropped: parts.iter().all(|p| p.dropped),
        clients,
    }))
}

/// One rank's checkpoints: written, the cache dropped, read back; the team agrees after each
/// phase whether to go on, so that a rank's failure or a stop ends every rank there.
fn rank_part<M: Member>(c: &Checkpoints, dir: &Dir, member: &M, drop: bool, clock: &Clock) -> RankPart {
    let r = member.rank();
    let mut part = RankPart::default();
    let stamped = |mut t: TaskTiming| {
        t.task = r as u32;
        t.node = member.node();
        t
    };
    let step = |part: &mut RankPart, result: Result<TaskTiming, TrainError>, write: bool| -> bool {
        match result {
            Ok(t) => match write {
                true => part.writes.push(stamped(t)),
                false => part.reads.push(stamped(t)),
            },
            Err(TrainError::Interrupted) => part.interrupted = true,
            Err(e) => part.error = Some(e.to_string()),
        }
        let halt = part.error.is_some() || part.interrupted || clock.cancel.is_cancelled();
        member.max(halt as u64) == 0
    };
    for k in 0..c.writes {
        if k > 0 {
            super::nap(Duration::from_secs_f64(c.compute), clock.cancel);
        }
        member.barrier();
        if !step(&mut part, rank_io(c, dir, (k, &[r]), true, clock), true) {
            return part;
        }
    }
    // One rank of each process applies the rule on its node, to the node's share of the data
    // and its own RAM; the team learns whether every one dropped.
    if c.reads > 0 && member.local_index() == 0 {
        part.client = Some(client_cache(c, member, drop));
    }
    let mine = member.local_index() != 0 || part.client.as_ref().is_some_and(|cl| cl.dropping == Dropping::Dropped);
    part.dropped = member.min(mine as u64) == 1;
    let shards = c.read_by(r);
    for k in 0..c.reads {
        member.barrier();
        if !step(&mut part, rank_io(c, dir, (k, &shards), false, clock), false) {
            return part;
        }
    }
    part
}

/// The 3x rule on `member`'s client, applied.
fn client_cache<M: Member>(c: &Checkpoints, member: &M, drop: bool) -> ClientCache {
    let bytes = c.client_bytes(member.nodes(), member.node());
    let dropping = match (needs_drop(bytes, c.ram_bytes), drop) {
        (false, _) => Dropping::NotNeeded,
        (true, false) => Dropping::Kept,
        (true, true) if !crate::target::cache::can_drop() => Dropping::NotRoot,
        (true, true) => match crate::target::cache::drop_caches() {
            Ok(()) => Dropping::Dropped,
            Err(_) => Dropping::Failed,
        },
    };
    ClientCache { host: crate::env::hostname(), bytes, ram_bytes: c.ram_bytes, dropping }
}

/// The study's clock and its stop.
struct Clock<'a> {
    origin: Instant,
    cancel: &'a Cancel,
}

fn rank_io(
    c: &Checkpoints,
    dir: &Dir,
    (k, owners): (u32, &[usize]),
    write: bool,
    clock: &Clock,
) -> Result<TaskTiming, TrainError> {
    let ns = || clock.origin.elapsed().as_nanos() as u64;
    let mut buf = vec![0u8; c.transfer as usize];
    let seed = owners.first().map_or(0, |&o| o as u64);
    crate::engine::data::fill_random(&mut buf, crate::engine::offsets::mix(k as u64, seed));
    let open_start = ns();
    let (mut bytes, mut ops, mut xfer_start) = (0u64, 0u64, None);
    let mut sync_ns = 0u64;
    for (name, len) in owners.iter().flat_map(|&o| c.files(k, o)) {
        let io = |e: std::io::Error, what: &str| TrainError::Io {
            what: format!("{what} {}", dir.show(&name).display()),
            source: e,
        };
        let file = match write {
            true => dir.create_or_open_own(&name, crate::sys::fs::O_WRONLY).map_err(|e| io(e, "create"))?,
            false => dir.open_own(&name, crate::sys::fs::O_RDONLY).map_err(|e| io(e, "open"))?,
        };
        xfer_start.get_or_insert_with(ns);
        let mut at = 0u64;
        while at < len {
            if clock.cancel.is_cancelled() {
                return Err(TrainError::Interrupted);
            }
            let n = (len - at).min(c.transfer) as usize;
            let done = match write {
                true => file.write_at(&buf[..n], at),
                false => file.read_at(&mut buf[..n], at),
            }
            .map_err(|e| io(e, if write { "write" } else { "read" }))?;
            if done == 0 {
                return Err(io(std::io::Error::from(std::io::ErrorKind::UnexpectedEof), "read"));
            }
            at += done as u64;
            bytes += done as u64;
            ops += 1;
        }
        if write {
            let s0 = ns();
            file.sync_all().map_err(|e| io(e, "fsync"))?;
            sync_ns += ns() - s0;
        }
    }
    let end = ns();
    Ok(TaskTiming {
        task: 0,
        node: 0,
        bytes,
        ops,
        open_start,
        xfer_start: xfer_start.unwrap_or(open_start),
        xfer_end: end - sync_ns,
        sync_end: end,
        close_end: end,
        bytes_at_first_finish: bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eight_b(ranks: usize) -> Checkpoints {
        Checkpoints {
            model: Llama::Llama3_8b,
            ranks,
            shards: ranks,
            writes: 10,
            reads: 10,
            compute: 5.0,
            transfer: 16 << 20,
            shift: 0,
            scale: None,
            ram_bytes: 1 << 30,
        }
    }

    #[test]
    fn llama3_8b_on_8_ranks_is_about_13_gib_a_rank_in_two_files() {
        let c = eight_b(8);
        assert_eq!(c.rank_bytes(), 14_000_000_000);
        let [(w, wb), (o, ob)] = c.files(0, 7);
        assert_eq!((w.as_str(), o.as_str()), ("ckpt-0000-rank-00007-model.pt", "ckpt-0000-rank-00007-optim.pt"));
        assert_eq!(wb + ob, c.rank_bytes());
        assert_eq!(wb, 2_000_000_000);
        assert_eq!(c.names().len(), 10 * 8 * 2);
    }

    #[test]
    fn caches_are_dropped_under_three_times_ram() {
        assert!(needs_drop(3 * (1 << 30) - 1, 1 << 30));
        assert!(!needs_drop(3 * (1 << 30), 1 << 30));
    }

    /// llama3-8b on 8 ranks (14 GB a shard), 10 checkpoints, on three clients of different
    /// RAM holding 4, 2 and 2 ranks: each client weighs its own share against its own RAM.
    #[test]
    fn the_three_times_rule_weighs_each_clients_share_against_its_own_ram() {
        const GIB: u64 = 1 << 30;
        let c = eight_b(8);
        let nodes = [0, 0, 0, 0, 1, 1, 2, 2];
        let shares: Vec<u64> = (0..3).map(|n| c.client_bytes(&nodes, n)).collect();
        assert_eq!(shares, [560_000_000_000, 280_000_000_000, 280_000_000_000]);
        assert_eq!(shares.iter().sum::<u64>(), c.total_bytes());
        // 256 GiB (3x: 824.6 GB), 64 GiB (206.2 GB), 128 GiB (412.3 GB).
        let rams = [256 * GIB, 64 * GIB, 128 * GIB];
        let drops: Vec<bool> = (0..3).map(|n| c.client_needs_drop(&nodes, n, rams[n as usize])).collect();
        assert_eq!(drops, [true, false, true]);
        // The whole checkpoint (1.12 TB) against any one client's RAM would drop on none.
        assert!(rams.iter().all(|&ram| !needs_drop(c.total_bytes(), ram)));
        // A study that only reads weighs what each client's ranks read: 3 ranks on two
        // clients, rank 2 alone on client 1 reading shards 2 and 5 of 8.
        let read = Checkpoints { ranks: 3, writes: 0, reads: 2, ..eight_b(8) };
        assert_eq!(read.client_bytes(&[0, 0, 1], 1), 2 * 2 * 14_000_000_000);
        assert_eq!(read.client_bytes(&[0, 0, 1], 0), 6 * 2 * 14_000_000_000);
        // 32 GiB each (3x: 103.1 GB): client 1's 56 GB is under it, client 0's 168 GB is not.
        assert!(read.client_needs_drop(&[0, 0, 1], 1, 32 * GIB) && !read.client_needs_drop(&[0, 0, 1], 0, 32 * GIB));
    }

    #[test]
    fn settings_that_cannot_run_are_refused() {
        for c in [
            Checkpoints { ranks: 0, ..eight_b(8) },
            Checkpoints { reads: 11, ..eight_b(8) },
            Checkpoints { shift: 8, ..eight_b(8) },
            Checkpoints { compute: f64::NAN, ..eight_b(8) },
            Checkpoints { scale: Some(1 << 40), ..eight_b(8) },
        ] {
            assert_eq!(c.check().unwrap_err().exit_code(), 2, "{c:?}");
        }
        assert!(eight_b(8).check().is_ok());
    }

    #[test]
    fn the_shards_are_shared_over_the_reading_ranks_each_read_once() {
        // Written on 8, read on 3 shifted by 1: every shard once, rank r from shard r + 1 on.
        let c = Checkpoints { ranks: 3, shift: 1, writes: 0, ..eight_b(8) };
        assert!(c.check().is_ok());
        let by: Vec<Vec<usize>> = (0..3).map(|r| c.read_by(r)).collect();
        assert_eq!(by, [vec![1, 4, 7], vec![2, 5], vec![0, 3, 6]]);
        // As many ranks as shards: rank r reads the shard of rank (r + shift) mod ranks.
        let same = Checkpoints { shift: 3, ..eight_b(8) };
        assert!((0..8).all(|r| same.read_by(r) == [(r + 3) % 8]));
        assert_eq!(Checkpoints { ranks: 9, writes: 0, ..eight_b(8) }.check().unwrap_err().exit_code(), 2);
        assert_eq!(parse_name("ckpt-0003-rank-00012-model.pt"), Some((3, 12)));
        assert_eq!(parse_name("ckpt-3-rank-00012-model.pt"), None);
        assert_eq!(parse_name("ckpt-0003-rank-00012-optim.pt"), None);
    }
}
