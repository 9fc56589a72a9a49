//! The IO500 list as a plan: its phases in order, each write phase's run under the stonewall,
//! the phases after it sized by what it made, the timestamp and find as hooks on the lead,
//! and each phase's score as it comes.

use super::{Phase, PhaseScore};
use crate::plan::{HookError, HookSite, Last, Plan, Step};
use crate::record::RunRecord;
use crate::spec::{meta::Meta, Access, Data, Layout, Op, Workload};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::SystemTime;

/// How much each write phase may make per task before its stonewall stops it.
pub struct Shape {
    /// Every task of the team works in every phase.
    tasks: usize,
    stonewall: f64,
    easy_block: u64,
    hard_segments: u64,
    items: u64,
    /// The neighbour whose items a task stats and reads: on another node when there are several.
    shift: usize,
    /// Whether reads take another task's data (IOR -C).
    reorder: bool,
}

/// What the write phases made, per task, for the phases that read, stat and remove it.
#[derive(Default, Serialize, Deserialize)]
struct Made {
    easy_transfers: u64,
    hard_segments: u64,
    easy_items: u64,
    hard_items: u64,
}

const EASY_ROOT: &str = "iosurvey.meta.easy";
const HARD_ROOT: &str = "iosurvey.meta.hard";

impl Shape {
    /// The list's shape for tasks on the nodes `task_nodes` says (each task's, in rank order)
    /// under a stonewall of `stonewall` seconds; `quick` bounds what each write phase makes.
    pub fn new(task_nodes: &[u32], stonewall: f64, quick: bool) -> Shape {
        // Per task: ior-easy bytes, ior-hard segments, mdtest items; the stonewall stops them.
        let (easy_block, hard_segments, items) = match quick {
            true => (1 << 30, 100_000, 1_000_000),
            false => (64 << 40, 1 << 30, 1 << 30),
        };
        let tasks = task_nodes.len();
        Shape {
            tasks,
            stonewall,
            easy_block,
            hard_segments,
            items,
            shift: cross_node_shift(task_nodes),
            reorder: tasks > 1,
        }
    }

    fn workload(&self, phase: Phase, made: &Made) -> Workload {
        let w = self.phase_workload(phase, made);
        Workload { tasks: self.tasks, ..w }
    }

    fn phase_workload(&self, phase: Phase, made: &Made) -> Workload {
        // A stonewalled write phase is synced inside its time, as IO500 does.
        let stonewalled = |w: Workload| {
            use crate::spec::Shape as Kind;
            let shape = match w.shape {
                Kind::Data(data) => Kind::Data(Data { fsync: w.ops == [Op::Write], ..data }),
                meta => meta,
            };
            Workload { stonewall_secs: Some(self.stonewall), wear_out: true, shape, ..w }
        };
        let easy = |ops: Vec<Op>, block: u64| Workload {
            ops,
            ..Workload::from(Data {
                access: Access::FilePerTask,
                transfer: super::EASY_TRANSFER,
                block,
                reorder: self.reorder,
                ..Data::default()
            })
        };
        let hard = |ops: Vec<Op>, segments: u64| Workload {
            ops,
            ..Workload::from(Data {
                access: Access::Shared,
                layout: Layout::Segmented,
                transfer: super::HARD_BYTES,
                block: super::HARD_BYTES,
                segments,
                reorder: self.reorder,
                ..Data::default()
            })
        };
        let meta = |ops: Vec<Op>, hard: bool, items: u64| {
            let bytes = if hard { super::MDTEST_HARD_FILE } else { 0 };
            let meta = Meta {
                items,
                shared: hard,
                write_bytes: bytes,
                read_bytes: bytes,
                shift: self.shift,
                root: (if hard { HARD_ROOT } else { EASY_ROOT }).into(),
                ..Meta::default()
            };
            Workload { ops, ..Workload::from(meta) }
        };
        match phase {
            Phase::IorEasyWrite => stonewalled(easy(vec![Op::Write], self.easy_block)),
            Phase::IorEasyRead => easy(vec![Op::Read], made.easy_transfers * super::EASY_TRANSFER),
            Phase::IorHardWrite => stonewalled(hard(vec![Op::Write], self.hard_segments)),
            Phase::IorHardRead => hard(vec![Op::Read], made.hard_segments),
            Phase::MdtestEasyWrite => stonewalled(meta(vec![Op::TreeCreate, Op::FileCreate], false, self.items)),
            Phase::MdtestEasyStat => meta(vec![Op::FileStat], false, made.easy_items),
            Phase::MdtestEasyDelete => meta(vec![Op::FileRemove, Op::TreeRemove], false, made.easy_items),
            Phase::MdtestHardWrite => stonewalled(meta(vec![Op::TreeCreate, Op::FileCreate], true, self.items)),
            Phase::MdtestHardStat => meta(vec![Op::FileStat], true, made.hard_items),
            Phase::MdtestHardRead => meta(vec![Op::FileRead], true, made.hard_items),
            Phase::MdtestHardDelete => meta(vec![Op::FileRemove, Op::TreeRemove], true, made.hard_items),
            Phase::Timestamp | Phase::Find => unreachable!("not a run"),
        }
    }
}

/// The op a phase is scored by, and the figure: GiB/s of the data phases, kIOPS of the others.
fn scored(phase: Phase, r: &RunRecord) -> Option<(f64, f64, u64, u64)> {
    let op = match phase {
        Phase::IorEasyWrite | Phase::IorHardWrite => Op::Write,
        Phase::IorEasyRead | Phase::IorHardRead => Op::Read,
        Phase::MdtestEasyWrite | Phase::MdtestHardWrite => Op::FileCreate,
        Phase::MdtestEasyStat | Phase::MdtestHardStat => Op::FileStat,
        Phase::MdtestHardRead => Op::FileRead,
        _ => Op::FileRemove,
    };
    let p = r.phases.iter().find(|p| p.op == op)?;
    let score = match phase.group() {
        super::Group::Bandwidth => p.figures.bandwidth? / (1u64 << 30) as f64,
        _ => p.figures.iops? / 1000.0,
    };
    let least = p.tasks.iter().map(|t| t.ops).min().unwrap_or(0);
    let most = p.tasks.iter().map(|t| t.ops).max().unwrap_or(0);
    Some((score, p.figures.window_ns as f64 / 1e9, least, most))
}

/// The IO500 list as a plan.
pub struct Io500Plan {
    shape: Shape,
    made: Made,
    /// The phases still to run.
    ahead: std::collections::VecDeque<Phase>,
    /// The phase running, or the hook just done.
    current: Option<Phase>,
    scores: Vec<PhaseScore>,
    stamp: SystemTime,
    found: u64,
}

impl Io500Plan {
    /// The list for `shape`.
    pub fn new(shape: Shape) -> Self {
        Io500Plan {
            shape,
            made: Made::default(),
            ahead: Phase::ALL.into_iter().collect(),
            current: None,
            scores: Vec::new(),
            stamp: SystemTime::now(),
            found: 0,
        }
    }

    /// Every phase's run as it would be after writes that made one transfer, segment or item
    /// each: what a command checks before it makes anything.
    pub fn workloads(&self) -> Vec<Workload> {
        let some = Made { easy_transfers: 1, hard_segments: 1, easy_items: 1, hard_items: 1 };
        Phase::ALL
            .into_iter()
            .filter(|p| !matches!(p, Phase::Timestamp | Phase::Find))
            .map(|p| self.shape.workload(p, &some))
            .collect()
    }

    /// The scores of the phases done, in order.
    pub fn scores(&self) -> &[PhaseScore] {
        &self.scores
    }

    /// The files find found.
    pub fn found(&self) -> u64 {
        self.found
    }

    /// The phase last asked for: after a stop, the one that did not run.
    pub fn stopped_before(&self) -> Option<Phase> {
        self.current
    }

    fn score(&mut self, phase: Phase, score: f64, seconds: f64) {
        self.scores.push(PhaseScore { phase, score, seconds, invalid: Vec::new() });
    }
}

impl Plan for Io500Plan {
    fn next(&mut self, last: Last) -> Step {
        if let (Some(phase), Last::Ran(r)) = (self.current, last) {
            let figures = scored(phase, r);
            if let Some((_, _, least, most)) = figures {
                match phase {
                    // Reads cover what every task wrote; items were worn out to the most.
                    Phase::IorEasyWrite => self.made.easy_transfers = least,
                    Phase::IorHardWrite => self.made.hard_segments = least,
                    Phase::MdtestEasyWrite => self.made.easy_items = most,
                    Phase::MdtestHardWrite => self.made.hard_items = most,
                    _ => {}
                }
            }
            let (score, seconds) = figures.map_or((0.0, 0.0), |(s, t, ..)| (s, t));
            self.score(phase, score, seconds);
        }
        self.current = self.ahead.pop_front();
        match self.current {
            None => Step::Done,
            Some(p @ (Phase::Timestamp | Phase::Find)) => Step::Hook(p.name().into()),
            Some(p) => {
                Step::Run { workload: Box::new(self.shape.workload(p, &self.made)), name: Some(p.name().into()) }
            }
        }
    }

    fn hook(&mut self, name: &str, site: &mut HookSite) -> Result<(), HookError> {
        match self.current.filter(|p| p.name() == name) {
            Some(Phase::Timestamp) => {
                // The file server's clock, as the files' times will be: a file made now.
                self.stamp = timestamp(site.target)?;
                self.score(Phase::Timestamp, 0.0, 0.0);
                Ok(())
            }
            Some(Phase::Find) => {
                let (scanned, found, secs) = find(site.target.dir().path(), self.stamp, site.threads.max(1));
                self.found = found;
                self.score(Phase::Find, scanned as f64 / secs.max(1e-9) / 1000.0, secs);
                Ok(())
            }
            _ => Err(HookError::Other(format!("io500 has no hook '{name}' here"))),
        }
    }
}

/// The smallest shift that takes every task to a task on another node (mdtest -N), or 1 when
/// there is one node (or none works, as with an uneven spread).
pub fn cross_node_shift(nodes: &[u32]) -> usize {
    let n = nodes.len();
    (1..n).find(|&s| (0..n).all(|r| nodes[r] != nodes[(r + s) % n])).unwrap_or(1)
}

/// Makes the timestamp file (named in the manifest first) and returns its modification time.
fn timestamp(target: &mut crate::target::Target) -> Result<SystemTime, HookError> {
    const NAME: &str = "iosurvey.timestamp";
    target.claim(&[NAME.to_string()])?;
    let said = |e: std::io::Error| HookError::Other(format!("{}: {e}", target.dir().show(NAME).display()));
    let file = target.dir().create(NAME, 0).map_err(said)?;
    file.metadata().and_then(|m| m.modified()).map_err(said)
}

/// IO500's find over the run's directory: files newer than `stamp`, of mdtest-hard's size,
/// with its name part; `threads` threads share the directories. Returns (entries scanned,
/// files found, seconds).
pub fn find(root: &Path, stamp: SystemTime, threads: usize) -> (u64, u64, f64) {
    let started = std::time::Instant::now();
    let mut dirs = vec![root.to_path_buf()];
    for meta_root in [EASY_ROOT, HARD_ROOT] {
        if let Ok(entries) = std::fs::read_dir(root.join(meta_root)) {
            dirs.extend(entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
        }
    }
    let (scanned, found) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let mine: Vec<&std::path::PathBuf> = dirs.iter().skip(k).step_by(threads).collect();
                s.spawn(move || mine.into_iter().map(|d| scan(d, stamp)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)))
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    (scanned, found, started.elapsed().as_secs_f64())
}

/// (entries, matches) of one directory, not descending: IO500's trees are one level deep.
fn scan(dir: &Path, stamp: SystemTime) -> (u64, u64) {
    let Ok(entries) = std::fs::read_dir(dir) else { return (0, 0) };
    let (mut scanned, mut found) = (0, 0);
    for e in entries.flatten() {
        scanned += 1;
        if !e.file_name().to_string_lossy().contains(super::FIND_NAME_PART) {
            continue;
        }
        // The entry's own status: a link is never followed.
        let Ok(m) = e.metadata() else { continue };
        let newer = m.modified().is_ok_and(|t| t > stamp);
        found += (m.is_file() && m.len() == super::MDTEST_HARD_FILE && newer) as u64;
    }
    (scanned, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn the_shift_takes_every_task_to_another_node() {
        assert_eq!(cross_node_shift(&[0, 0, 1, 1, 2, 2]), 2, "blocks of 2 per node");
        assert_eq!(cross_node_shift(&[0, 1, 0, 1]), 1, "round-robin placement");
        assert_eq!(cross_node_shift(&[0, 0, 0, 0]), 1, "one node: the next task");
        assert_eq!(cross_node_shift(&[0, 0, 0, 1]), 1, "uneven: no shift works");
    }

    #[test]
    fn find_counts_new_files_of_the_hard_size_with_the_name_part_and_follows_no_link() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let hard = root.join(HARD_ROOT).join("shared");
        let easy = root.join(EASY_ROOT).join("u.0");
        fs::create_dir_all(&hard).unwrap();
        fs::create_dir_all(&easy).unwrap();
        let old = hard.join("f.0.101");
        fs::write(&old, vec![0u8; 3901]).unwrap();
        let stamp = SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        for i in 0..120 {
            fs::write(hard.join(format!("f.1.{i}")), vec![0u8; 3901]).unwrap();
            fs::write(easy.join(format!("f.0.{i}")), b"").unwrap();
        }
        fs::write(hard.join("f.2.1010"), vec![0u8; 3900]).unwrap();
        std::os::unix::fs::symlink(hard.join("f.1.101"), hard.join("f.3.1011")).unwrap();
        let (scanned, found, _) = find(root, stamp, 2);
        // The root's two entries, the 1 + 120 + 2 in the shared directory, 120 in u.0.
        assert_eq!(scanned, 2 + 123 + 120);
        // Of f.1.0 ..= f.1.119, the names holding "01": 1, 10, 101 ..= 109 (not 110).
        let expected =
            (0..120).filter(|i: &u32| i.to_string().contains("01") || format!("1.{i}").contains("01")).count();
        assert_eq!(
            found, expected as u64,
            "new, 3901 bytes, '01' in the name; the old file, the short one and the link are not"
        );
    }
}
