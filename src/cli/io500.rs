//! `iosurvey io500`: the IO500 standard list run as a sequence of iosurvey runs in one fresh
//! directory, each filed in the store under its phase's name in one survey; find scans on the
//! lead process; the scores and the `[RESULT]` layout are `iosurvey::io500`'s.

use super::commands::{clean_up, command_line, fresh_target, on_lead, target_everywhere, watcher};
use super::{Cli, Failure, Io500Args};
use iosurvey::engine::INTERRUPTED;
use iosurvey::io500::{self, Phase, PhaseScore};
use iosurvey::record::RunRecord;
use iosurvey::runner::{Filing, Lead, Runner};
use iosurvey::spec::{meta::Meta, Access, Layout, Op, Workload};
use iosurvey::team::{share_value, Team};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

/// How much each write phase may make per task before its stonewall stops it.
struct Shape {
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
    fn workload(&self, phase: Phase, made: &Made) -> Workload {
        let w = self.phase_workload(phase, made);
        Workload { tasks: self.tasks, ..w }
    }

    fn phase_workload(&self, phase: Phase, made: &Made) -> Workload {
        let stonewalled = |w: Workload| Workload {
            stonewall_secs: Some(self.stonewall),
            wear_out: true,
            fsync: w.ops == [Op::Write],
            ..w
        };
        let easy = |ops: Vec<Op>, block: u64| Workload {
            access: Access::FilePerTask,
            transfer: io500::EASY_TRANSFER,
            block,
            ops,
            reorder: self.reorder,
            ..Workload::default()
        };
        let hard = |ops: Vec<Op>, segments: u64| Workload {
            access: Access::Shared,
            layout: Layout::Segmented,
            transfer: io500::HARD_BYTES,
            block: io500::HARD_BYTES,
            segments,
            ops,
            reorder: self.reorder,
            ..Workload::default()
        };
        let meta = |ops: Vec<Op>, hard: bool, items: u64| {
            let bytes = if hard { io500::MDTEST_HARD_FILE } else { 0 };
            let meta = Meta {
                items,
                shared: hard,
                write_bytes: bytes,
                read_bytes: bytes,
                shift: self.shift,
                root: (if hard { HARD_ROOT } else { EASY_ROOT }).into(),
                ..Meta::default()
            };
            Workload { ops, meta: Some(meta), ..Workload::default() }
        };
        match phase {
            Phase::IorEasyWrite => stonewalled(easy(vec![Op::Write], self.easy_block)),
            Phase::IorEasyRead => easy(vec![Op::Read], made.easy_transfers * io500::EASY_TRANSFER),
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
        io500::Group::Bandwidth => p.figures.bandwidth? / (1u64 << 30) as f64,
        _ => p.figures.iops? / 1000.0,
    };
    let least = p.tasks.iter().map(|t| t.ops).min().unwrap_or(0);
    let most = p.tasks.iter().map(|t| t.ops).max().unwrap_or(0);
    Some((score, p.figures.window_ns as f64 / 1e9, least, most))
}

pub(super) fn io500<T: Team>(cli: &Cli, a: &Io500Args, team: &T) -> Result<(), Failure> {
    super::RUNNING.store(true, Ordering::Relaxed);
    let stonewall = a.stonewall_secs.unwrap_or(if a.quick { 2.0 } else { io500::STONEWALL_SECS });
    if !(stonewall > 0.0 && stonewall.is_finite()) {
        return Err(Failure::new(
            format!("a stonewall of {stonewall} s is not positive"),
            "give --stonewall SECONDS above 0",
            2,
        ));
    }
    // Each task's node (a process's tasks are consecutive ranks), for the shift below.
    let task_nodes: Vec<u32> = team.process_nodes().into_iter().flat_map(|n| std::iter::repeat_n(n, a.tasks)).collect();
    // Per task: ior-easy bytes, ior-hard segments, mdtest items; the stonewall stops them.
    let (easy_block, hard_segments, items) = match a.quick {
        true => (1 << 30, 100_000, 1_000_000),
        false => (64 << 40, 1 << 30, 1 << 30),
    };
    let tasks = team.processes() * a.tasks;
    let shape = Shape {
        tasks,
        stonewall,
        easy_block,
        hard_segments,
        items,
        shift: cross_node_shift(&task_nodes),
        reorder: tasks > 1,
    };
    // Every phase's run, checked before the list has a directory or a row in the store; the
    // phases after a write take what it made (one transfer, segment or item each here).
    let some = Made { easy_transfers: 1, hard_segments: 1, easy_items: 1, hard_items: 1 };
    let runs: Vec<Workload> = Phase::ALL
        .into_iter()
        .filter(|p| !matches!(p, Phase::Timestamp | Phase::Find))
        .map(|p| shape.workload(p, &some))
        .collect();
    super::commands::precheck_all(team, a.tasks, &runs)?;
    let mut state = on_lead(team, || fresh_target(cli, Some(&a.dir), "io500", a.target.options()))?;
    let dir = target_everywhere(team, state.as_ref().map(|s| &s.1))?;
    let survey_id = state.as_ref().map_or(0, |s| s.2);
    let lead = team.process() == 0;
    let mut runner = Runner {
        team,
        threads: a.tasks,
        dir: dir.clone(),
        bases: Vec::new(),
        lead: state.as_mut().map(|(store, target, _)| Lead { store, target, more: &mut [] }),
        command_line: command_line(),
        // The write phases fill until the stonewall: their size is a bound, not a need.
        space_check: false,
        watch: watcher(cli),
    };
    let mut made = Made::default();
    let mut scores: Vec<PhaseScore> = Vec::new();
    let (mut stamp, mut found) = (SystemTime::now(), 0);
    let mut failure = None;
    let mut stopped_before = None;
    for phase in Phase::ALL {
        // The lead's word: every process stops before the same phase.
        if share_value(team, lead.then_some(&INTERRUPTED.load(Ordering::Relaxed))) {
            stopped_before = Some(phase);
            break;
        }
        if lead && !cli.quiet {
            say!("iosurvey: io500 {}", phase.name());
        }
        let (score, seconds) = match phase {
            Phase::Timestamp => {
                // The file server's clock, as the files' times will be: a file made now.
                if let Some(lead) = runner.lead.as_mut() {
                    stamp = timestamp(lead.target).map_err(|e| Failure::new(e.to_string(), "check the target", 1))?;
                }
                (0.0, 0.0)
            }
            Phase::Find => {
                let scan = lead.then(|| find(dir.path(), stamp, a.tasks.max(1)));
                let scan: (u64, u64, f64) = share_value(team, scan.as_ref());
                found = scan.1;
                (scan.0 as f64 / scan.2.max(1e-9) / 1000.0, scan.2)
            }
            _ => {
                let w = shape.workload(phase, &made);
                let filing = Filing {
                    name: Some(phase.name()),
                    survey_id: Some(survey_id),
                    sweep_id: None,
                    label: a.target.label.as_deref(),
                    ..Filing::default()
                };
                let record = match runner.run(&w, filing) {
                    Ok(r) => r,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                };
                let figures = record.as_ref().and_then(|r| scored(phase, r));
                if let Some((_, _, least, most)) = figures {
                    match phase {
                        // Reads cover what every task wrote; items were worn out to the most.
                        Phase::IorEasyWrite => made.easy_transfers = least,
                        Phase::IorHardWrite => made.hard_segments = least,
                        Phase::MdtestEasyWrite => made.easy_items = most,
                        Phase::MdtestHardWrite => made.hard_items = most,
                        _ => {}
                    }
                }
                made = share_value(team, lead.then_some(&made));
                figures.map_or((0.0, 0.0), |(s, t, ..)| (s, t))
            }
        };
        scores.push(PhaseScore { phase, score, seconds, invalid: Vec::new() });
    }
    drop(runner);
    if let Some((_, target, _)) = state {
        clean_up(target);
    }
    if let Some(e) = failure {
        return Err(e.into());
    }
    if let Some(phase) = stopped_before {
        // An interrupted list has no score, and says so: exit 130, never 0.
        return Err(Failure::new(
            format!(
                "io500 interrupted by a signal before {}: the phases before it are stored in survey s{survey_id}, and no score was made",
                phase.name()
            ),
            "run it again",
            130,
        ));
    }
    if lead && scores.len() == Phase::ALL.len() {
        io500::validate(&mut scores, stonewall, found);
        if a.quick {
            for p in scores.iter_mut().filter(|p| p.phase.stonewalled()) {
                p.invalid.push("--quick".into());
            }
        }
        for p in &scores {
            println!("{}", io500::result_line(p));
        }
        let valid = scores.iter().all(|p| p.invalid.is_empty());
        println!("{}", io500::score_line(&io500::score(&scores), valid));
        if !valid && !cli.quiet {
            for p in scores.iter().filter(|p| !p.invalid.is_empty()) {
                say!("iosurvey: note: {} is not valid for submission: {}", p.phase.name(), p.invalid.join("; "));
            }
        }
    }
    Ok(())
}

/// The smallest shift that takes every task to a task on another node (mdtest -N), or 1 when
/// there is one node (or none works, as with an uneven spread).
fn cross_node_shift(nodes: &[u32]) -> usize {
    let n = nodes.len();
    (1..n).find(|&s| (0..n).all(|r| nodes[r] != nodes[(r + s) % n])).unwrap_or(1)
}

/// Makes the timestamp file (named in the manifest first) and returns its modification time.
fn timestamp(target: &mut iosurvey::target::Target) -> Result<SystemTime, Box<dyn std::error::Error>> {
    const NAME: &str = "iosurvey.timestamp";
    target.claim(&[NAME.to_string()])?;
    let file = target.dir().create(NAME, 0)?;
    Ok(file.metadata()?.modified()?)
}

/// IO500's find over the run's directory: files newer than `stamp`, of mdtest-hard's size,
/// with its name part; `threads` threads share the directories. Returns (entries scanned,
/// files found, seconds).
fn find(root: &Path, stamp: SystemTime, threads: usize) -> (u64, u64, f64) {
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
        if !e.file_name().to_string_lossy().contains(io500::FIND_NAME_PART) {
            continue;
        }
        // The entry's own status: a link is never followed.
        let Ok(m) = e.metadata() else { continue };
        let newer = m.modified().is_ok_and(|t| t > stamp);
        found += (m.is_file() && m.len() == io500::MDTEST_HARD_FILE && newer) as u64;
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
