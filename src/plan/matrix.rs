//! The file x record matrix (IOzone's automatic mode): which test kinds run as which phases,
//! the grid of file and record sizes, and the order in which the adaptive mode visits cells.
//!
//! A cell is one file size and one record size; every selected kind is measured in it by a few
//! runs ("passes"), each a workload whose phases are kinds: the sequential pass writes the
//! file that the random, backward, record-rewrite and stride passes then use.

use super::{HookError, HookSite, Last, Plan, Step};
use crate::measure::{median, timed};
use crate::record::{MatrixCell, MatrixRecord, RunRecord, Status};
use crate::spec::{Access, Data, Op, Pattern, Workload};
use crate::stats::{support, Support};
use crate::units::{format_size, KIB, MIB};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// One test kind of the matrix, stored and shown under its own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Sequential write of a new file (its blocks allocated).
    Write,
    /// Sequential write again into the same file.
    Rewrite,
    /// Sequential read.
    Read,
    /// Sequential read again.
    Reread,
    /// Every record read once, in a seeded random order.
    RandomRead,
    /// Every record written once, in a seeded random order.
    RandomWrite,
    /// Records read from the last to the first.
    BackwardRead,
    /// One record written again and again.
    RecordRewrite,
    /// Records 0, k, 2k, ... then 1, k+1, ...: every record once, [`STRIDE`] records apart.
    StrideRead,
    /// Sequential write through a stdio stream whose buffer is one record.
    StreamWrite,
    /// Sequential read through a stdio stream.
    StreamRead,
    /// Sequential write, each record in 16 pieces (pwritev).
    VectoredWrite,
    /// Sequential read, each record in 16 pieces (preadv).
    VectoredRead,
    /// Random records, each a read or a write (half and half), in the written file.
    Mix,
}

/// Records between two reads of the stride kind (IOzone's default -j 17).
pub const STRIDE: u64 = 17;

/// Files larger than this skip records smaller than [`SMALL_RECORD_FLOOR`] unless asked
/// (`--all-records`), as IOzone's automatic mode does (files over 16384 kB): those cells are
/// long and tell little.
pub const SMALL_RECORD_FILES: u64 = 16 * MIB;
/// The smallest record measured on files above [`SMALL_RECORD_FILES`].
pub const SMALL_RECORD_FLOOR: u64 = 64 * KIB;

/// The fewest transfers a cell needs to decide a peak or a cliff. A cell's first transfer is
/// often slower than the rest (on ext4 here, 1.3 to 1.4 times in backward and random cells of
/// 512 KiB to 1 MiB records), and a cell of n transfers whose first takes k times as long as
/// each other loses (k - 1) / (n + k - 1) of its rate: a cell of one transfer shows that first
/// touch alone. With 4, a first transfer up to 2.7 times as slow stays under the default 30%
/// cliff.
pub const MIN_TRANSFERS: u64 = 4;

/// Whether a cell holds enough transfers ([`MIN_TRANSFERS`]) to decide a peak or a cliff; the
/// others are measured by a full matrix and shown, never set against the rest.
pub fn decides((file, record): At) -> bool {
    file / record.max(1) >= MIN_TRANSFERS
}

impl Kind {
    /// Every kind, in the order the matrix shows them.
    pub const ALL: [Kind; 14] = [
        Kind::Write,
        Kind::Rewrite,
        Kind::Read,
        Kind::Reread,
        Kind::RandomRead,
        Kind::RandomWrite,
        Kind::BackwardRead,
        Kind::RecordRewrite,
        Kind::StrideRead,
        Kind::StreamWrite,
        Kind::StreamRead,
        Kind::VectoredWrite,
        Kind::VectoredRead,
        Kind::Mix,
    ];

    /// The name used on the command line, in the store and in output.
    pub fn name(self) -> String {
        crate::spec::variant_name(&self)
    }

    /// The kinds a `--kinds` word names: a kind's name, `all`, or an IOzone -i number (0
    /// write and rewrite, 1 read and reread, 2 random read and write, 3 backward read, 4 record
    /// rewrite, 5 stride read, 6 stream write, 7 stream read, 8 mix, 11 vectored write, 12
    /// vectored read).
    pub fn parse(word: &str) -> Result<Vec<Kind>, String> {
        use Kind::*;
        Ok(match word {
            "all" => Kind::ALL.to_vec(),
            "0" => vec![Write, Rewrite],
            "1" => vec![Read, Reread],
            "2" => vec![RandomRead, RandomWrite],
            "3" => vec![BackwardRead],
            "4" => vec![RecordRewrite],
            "5" => vec![StrideRead],
            "6" => vec![StreamWrite],
            "7" => vec![StreamRead],
            "8" => vec![Mix],
            "11" => vec![VectoredWrite],
            "12" => vec![VectoredRead],
            _ => match Kind::ALL.into_iter().find(|k| k.name() == word) {
                Some(k) => vec![k],
                None => {
                    let names: Vec<String> = Kind::ALL.iter().map(|k| k.name()).collect();
                    return Err(format!(
                        "unknown kind '{word}' (expected {}, all, or an IOzone -i number 0-8, 11, 12)",
                        names.join(", ")
                    ));
                }
            },
        })
    }

    /// Whether the kind writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Kind::Write
                | Kind::Rewrite
                | Kind::RandomWrite
                | Kind::RecordRewrite
                | Kind::StreamWrite
                | Kind::VectoredWrite
        )
    }
}

/// One run of a cell: a pattern and an engine, and its phases, each measuring a kind (or
/// `None`: the write that makes the file other passes need, not asked for itself).
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    /// Order of the transfers.
    pub pattern: Pattern,
    /// The engine.
    pub engine: &'static str,
    /// The phases in order, with the kind each measures.
    pub phases: Vec<(Op, Option<Kind>)>,
}

impl Pass {
    /// Its name in the store: its engine and pattern.
    pub fn name(&self) -> String {
        format!("matrix {} {}", self.engine, self.pattern)
    }

    /// The kinds it measures.
    pub fn kinds(&self) -> impl Iterator<Item = Kind> + '_ {
        self.phases.iter().filter_map(|(_, k)| *k)
    }
}

/// The passes that measure `kinds` in one cell, in the order they run: the sequential pass
/// first, since the others (but stream and vectored, which write their own) use its file.
pub fn passes(kinds: &[Kind]) -> Vec<Pass> {
    use Kind::*;
    let asked = |k: Kind| kinds.contains(&k).then_some(k);
    // The phases of those (op, kind) pairs whose kind was asked for.
    let only = |pairs: &[(Op, Kind)]| -> Vec<(Op, Option<Kind>)> {
        pairs.iter().filter(|(_, k)| kinds.contains(k)).map(|&(op, k)| (op, Some(k))).collect()
    };
    let pass = |pattern, engine, phases: Vec<(Op, Option<Kind>)>| Pass { pattern, engine, phases };
    let mut seq = vec![(Op::Write, asked(Write))];
    seq.extend(only(&[(Op::Rewrite, Rewrite), (Op::Read, Read), (Op::Reread, Reread)]));
    let on_file = [
        pass(Pattern::Random, "sync", only(&[(Op::Read, RandomRead), (Op::Rewrite, RandomWrite)])),
        pass(Pattern::Backward, "sync", only(&[(Op::Read, BackwardRead)])),
        pass(Pattern::Same, "sync", only(&[(Op::Rewrite, RecordRewrite)])),
        pass(Pattern::Stride(STRIDE), "sync", only(&[(Op::Read, StrideRead)])),
        pass(Pattern::Random, "sync", only(&[(Op::Mix, Mix)])),
    ];
    let own_file = |engine, w: Kind, r: Kind| {
        let phases: Vec<(Op, Option<Kind>)> = match (asked(w), asked(r)) {
            (None, None) => Vec::new(),
            (w, None) => vec![(Op::Write, w)],
            (w, Some(r)) => vec![(Op::Write, w), (Op::Read, Some(r))],
        };
        pass(Pattern::Sequential, engine, phases)
    };
    let own = [own_file("stream", StreamWrite, StreamRead), own_file("vectored", VectoredWrite, VectoredRead)];
    let mut out = Vec::new();
    let on_file: Vec<Pass> = on_file.into_iter().filter(|p| !p.phases.is_empty()).collect();
    if seq.iter().any(|(_, k)| k.is_some()) || !on_file.is_empty() {
        out.push(pass(Pattern::Sequential, "sync", seq));
    }
    out.extend(on_file);
    // A stream or vectored read needs its file written by its own engine first; that write is
    // measured only when asked.
    out.extend(own.into_iter().filter(|p| p.kinds().next().is_some()).map(|mut p| {
        if p.phases.len() == 1 && p.phases[0].1.is_some_and(|k| !k.writes()) {
            p.phases.insert(0, (Op::Write, None));
        }
        p
    }));
    out
}

/// What every run of a matrix shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// Tasks in the team, each on its own file (IOzone's throughput mode when more than one).
    pub tasks: usize,
    /// The most tasks on one node: they share its caches.
    pub per_node: usize,
    /// O_DIRECT.
    pub direct: bool,
    /// fsync at the end of each write phase, as IOzone's children and its automatic mode do
    /// unless -c without -e; inside the timing only with -e (the matrix's `timing`).
    pub fsync: bool,
    /// Seed of the random orders.
    pub seed: u64,
    /// An engine that touches no storage in place of every pass's own (a test's `delay:D`),
    /// or none.
    #[serde(default)]
    pub stand_in: Option<crate::spec::EngineName>,
}

/// The workload of one pass in one cell.
pub fn workload(pass: &Pass, file: u64, record: u64, shape: &Shape) -> Workload {
    Workload {
        ops: pass.phases.iter().map(|(op, _)| *op).collect(),
        tasks: shape.tasks,
        seed: shape.seed,
        ..Workload::from(Data {
            access: Access::FilePerTask,
            pattern: pass.pattern,
            transfer: record,
            block: file,
            segments: 1,
            direct: shape.direct,
            // A pass that only reads has nothing to sync (and a workload refuses --fsync then).
            fsync: shape.fsync && pass.phases.iter().any(|(op, _)| op.direction() != Op::Read),
            engine: shape.stand_in.clone().unwrap_or_else(|| pass.engine.parse().unwrap_or_default()),
            read_percent: 50,
            // IOzone gives the kernel no hint of the pattern.
            no_fadvise: true,
            // IOzone's stonewall: the first child's end of transfers stops the others' count.
            first_done_at_transfers: true,
            ..Data::default()
        })
    }
}

/// File sizes x record sizes, each doubling from its minimum to its maximum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    /// File sizes, increasing.
    pub files: Vec<u64>,
    /// Record sizes, increasing.
    pub records: Vec<u64>,
    /// Measure small records on large files too (IOzone's -z).
    pub all_records: bool,
}

/// A cell: (file size, record size).
pub type At = (u64, u64);

impl Grid {
    /// The grid between the bounds, doubling.
    pub fn new(files: (u64, u64), records: (u64, u64), all_records: bool) -> Grid {
        let doubling = |(lo, hi): (u64, u64)| {
            std::iter::successors(Some(lo.max(1)), |&s| s.checked_mul(2)).take_while(|&s| s <= hi).collect()
        };
        Grid { files: doubling(files), records: doubling(records), all_records }
    }

    /// Whether the grid measures this cell: a record no larger than the file, and no small
    /// record on a large file unless every record was asked for.
    pub fn holds(&self, (file, record): At) -> bool {
        record <= file && (self.all_records || file <= SMALL_RECORD_FILES || record >= SMALL_RECORD_FLOOR)
    }

    /// Every cell, by file size then record size.
    pub fn cells(&self) -> Vec<At> {
        self.files.iter().flat_map(|&f| self.records.iter().map(move |&r| (f, r))).filter(|&c| self.holds(c)).collect()
    }

    /// The record size of the grid nearest `record` among those a file of `file` bytes is
    /// measured at that can decide a finding ([`decides`]).
    pub fn nearest_record(&self, file: u64, record: u64) -> Option<u64> {
        let distance = |r: u64| (r as f64 / record as f64).log2().abs();
        self.row(file)
            .into_iter()
            .filter(|&c| decides(c))
            .map(|(_, r)| r)
            .min_by(|a, b| distance(*a).total_cmp(&distance(*b)))
    }

    /// Whether the adaptive mode may measure a cell: one of the grid that can decide a finding.
    fn wanted(&self, cell: At) -> bool {
        self.holds(cell) && decides(cell)
    }

    /// The cells of one file size.
    fn row(&self, file: u64) -> Vec<At> {
        self.records.iter().map(|&r| (file, r)).filter(|&c| self.holds(c)).collect()
    }

    /// Bytes a full matrix moves per kind: the measure of its cost.
    fn bytes(&self, cells: &[At]) -> u64 {
        cells.iter().map(|&(f, _)| f).sum()
    }
}

/// Rates measured so far: per cell, per kind, one per repetition (bytes/s).
pub type Measured = BTreeMap<At, BTreeMap<Kind, Vec<f64>>>;

/// The share of a full matrix's bytes that the adaptive mode measures in whole rows: the small
/// files, where CPU caches make the sharpest cliffs and every cell is cheap.
const CHEAP_SHARE: f64 = 0.015;
/// Two measurements of a cell within this fraction of each other make it stable.
pub const STABLE: f64 = 0.10;
/// The most samples the adaptive mode takes of one cell.
pub const MOST_SAMPLES: usize = 3;

/// What the adaptive mode does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Coarse,
    Spine,
    Refine(u32),
    Settle(u32),
    Done,
}

/// The adaptive mode's choice of cells, each one that [`decides`] (a cell that cannot decide
/// a finding is not worth its time): a coarse pass (every other file size and record size of
/// the cheap rows, then every other larger file size at the best record size: the spine, and
/// each record too large for the cheap rows to decide on the smallest file that holds it
/// [`MIN_TRANSFERS`] times), refinement between measured neighbours that disagree by more than
/// `fraction` (in the cheap rows, and along the spine where two steps apart would not place a
/// cliff within one) and around each kind's peak, and more samples of each kind's peak cell and of
/// both sides of each drop not yet decided ([`crate::stats::support`]),
/// until it is stable; the peak's on files whose one cell costs at most [`CHEAP_SHARE`] of the
/// full matrix ([`near_file`]).
#[derive(Debug, Clone)]
pub struct Adaptive {
    grid: Grid,
    fraction: f64,
    stage: Stage,
    /// The file sizes measured whole ([`cheap_files`]).
    cheap: Vec<u64>,
    /// The largest file size a peak is climbed to and settled on ([`near_file`]).
    near: u64,
    /// The record size measured at every coarse file size beyond the cheap rows.
    pub spine: Option<u64>,
}

/// The file sizes an adaptive matrix measures whole: the smallest ones, while their rows stay
/// within [`CHEAP_SHARE`] of the full matrix's bytes (at least the smallest).
fn cheap_files(grid: &Grid) -> Vec<u64> {
    let total = grid.bytes(&grid.cells()) as f64;
    let mut spent = 0.0;
    let mut out = Vec::new();
    for &f in &grid.files {
        spent += grid.bytes(&grid.row(f)) as f64;
        if !out.is_empty() && spent > CHEAP_SHARE * total {
            break;
        }
        out.push(f);
    }
    out
}

/// The largest file size whose one cell costs at most [`CHEAP_SHARE`] of the full matrix's
/// bytes: a peak on such a file is climbed to and settled like one in the cheap rows, since a
/// record decides only on a file of [`MIN_TRANSFERS`] records, and the best cells of many kinds
/// (a file in a CPU cache, in large records) lie past the cheap rows of a small grid.
fn near_file(grid: &Grid) -> u64 {
    let total = grid.bytes(&grid.cells()) as f64;
    grid.files.iter().copied().filter(|&f| f as f64 <= CHEAP_SHARE * total).max().unwrap_or(0)
}

/// Every other element, counted from the last (so that the largest is always in).
fn every_other<T: Copy>(v: &[T]) -> Vec<T> {
    v.iter().rev().step_by(2).rev().copied().collect()
}

impl Adaptive {
    /// The adaptive mode over `grid`, refining where neighbours differ by more than `fraction`.
    pub fn new(grid: Grid, fraction: f64) -> Adaptive {
        let cheap = cheap_files(&grid);
        let near = near_file(&grid).max(cheap.last().copied().unwrap_or(0));
        Adaptive { cheap, near, grid, fraction, stage: Stage::Coarse, spine: None }
    }

    /// The next cells to measure (a cell measured before gets one more sample); empty when
    /// done.
    pub fn next(&mut self, measured: &Measured) -> Vec<At> {
        loop {
            let (cells, next) = match self.stage {
                Stage::Coarse => {
                    let files = every_other(&self.cheap);
                    let records = every_other(&self.grid.records);
                    let cells = files.iter().flat_map(|&f| records.iter().map(move |&r| (f, r)));
                    // A row whose every other record misses its largest that can decide a
                    // finding still gets that one.
                    let ends = files.iter().filter_map(|&f| self.grid.row(f).into_iter().rev().find(|&c| decides(c)));
                    let mut cells: Vec<At> = cells.chain(ends).filter(|&c| self.grid.wanted(c)).collect();
                    cells.sort_unstable();
                    cells.dedup();
                    (cells, Stage::Spine)
                }
                Stage::Spine => {
                    let cheap = &self.cheap;
                    // With no cheap row of two records that decide, the best cell measured
                    // names the spine, so that the larger files are measured at all.
                    self.spine = best_record(measured, &self.grid).or_else(|| {
                        Self::kinds(measured).into_iter().find_map(|k| self.peak(measured, k)).map(|c| c.1)
                    });
                    let spine = self.spine;
                    let beyond: Vec<u64> = self.grid.files.iter().copied().filter(|f| !cheap.contains(f)).collect();
                    let mut cells: Vec<At> = every_other(&beyond)
                        .into_iter()
                        .filter_map(|f| Some((f, self.grid.nearest_record(f, spine?)?)))
                        .collect();
                    // Records too large for the cheap rows to decide, so the record
                    // profile reaches them.
                    cells.extend(self.grid.records.iter().filter_map(|&r| self.beyond(r)));
                    cells.retain(|c| !measured.contains_key(c));
                    cells.sort_unstable();
                    cells.dedup();
                    (cells, Stage::Refine(0))
                }
                Stage::Refine(round) => {
                    let cells: Vec<At> =
                        self.refinements(measured).into_iter().filter(|&c| self.affordable(c)).collect();
                    match cells.is_empty() || round >= 5 {
                        true => (Vec::new(), Stage::Settle(0)),
                        false => (cells, Stage::Refine(round + 1)),
                    }
                }
                Stage::Settle(round) => {
                    // A large cell's one sample is long and steady; the noise is in the small.
                    // Both sides of a drop not yet decided get their samples wherever affordable.
                    let mut cells: Vec<At> =
                        self.unsettled(measured).into_iter().filter(|c| c.0 <= self.near).collect();
                    cells.extend(self.undecided_cliffs(measured));
                    cells.sort_unstable();
                    cells.dedup();
                    match cells.is_empty() || round >= MOST_SAMPLES as u32 {
                        true => (Vec::new(), Stage::Done),
                        false => (cells, Stage::Settle(round + 1)),
                    }
                }
                Stage::Done => return Vec::new(),
            };
            self.stage = next;
            if !cells.is_empty() {
                return cells;
            }
        }
    }

    /// Whether refinement may measure a cell: any on a file of near cost ([`near_file`]), only
    /// the spine's beyond (each larger file costs as much as every smaller one together), and
    /// the cell that stands for a record no cheap row decides.
    fn affordable(&self, (file, record): At) -> bool {
        file <= self.near
            || self.spine.and_then(|s| self.grid.nearest_record(file, s)) == Some(record)
            || self.beyond(record) == Some((file, record))
    }

    /// For a record that no cheap row holds [`MIN_TRANSFERS`] times, the smallest file that
    /// does: a record measured on a file of one transfer would show its first touch alone.
    fn beyond(&self, record: u64) -> Option<At> {
        if self.cheap.iter().any(|&f| self.grid.wanted((f, record))) {
            return None;
        }
        self.grid.files.iter().map(|&f| (f, record)).find(|&c| self.grid.wanted(c))
    }

    /// The kinds measured so far.
    fn kinds(measured: &Measured) -> Vec<Kind> {
        let kinds: std::collections::BTreeSet<Kind> = measured.values().flat_map(|m| m.keys().copied()).collect();
        kinds.into_iter().collect()
    }

    /// Where the profile of some kind falls by more than the fraction from one measured size to
    /// the next with an unmeasured one between them, the cell halfway: a file size at the spine's
    /// record, a record size at the file where the better neighbour peaked. Also the unmeasured
    /// neighbours of each kind's peak, so that over the rounds the peak climbs to the best cell.
    fn refinements(&self, measured: &Measured) -> Vec<At> {
        let mut out = Vec::new();
        for kind in Self::kinds(measured) {
            for by_file in [true, false] {
                let line = profile(measured, &self.grid, kind, by_file);
                let sizes = if by_file { &self.grid.files } else { &self.grid.records };
                let index = |s: u64| sizes.iter().position(|&x| x == s).unwrap_or(0);
                for w in line.windows(2) {
                    let ((s0, r0, c0), (s1, r1, c1)) = (w[0], w[1]);
                    let (i, j) = (index(s0), index(s1));
                    // A fall may be a cliff, to be placed; a rise (small records, bound by
                    // system calls) leads to the peak, which its neighbours refine.
                    if j - i < 2 || r1 >= r0 * (1.0 - self.fraction) {
                        continue;
                    }
                    // Two steps apart already place a cliff within one step; beyond the cheap
                    // rows, where a cell costs as much as all smaller ones, that is enough.
                    if by_file && j - i == 2 && !self.cheap.contains(&sizes[(i + j) / 2]) {
                        continue;
                    }
                    let middle = sizes[(i + j) / 2];
                    let better = if r0 >= r1 { c0 } else { c1 };
                    // A record that the better neighbour's file cannot decide goes to the next
                    // file that can.
                    let cell = match by_file {
                        true => self.spine.and_then(|s| self.grid.nearest_record(middle, s)).map(|r| (middle, r)),
                        false => self
                            .grid
                            .files
                            .iter()
                            .map(|&f| (f, middle))
                            .find(|&c| c.0 >= better.0 && self.grid.wanted(c) && self.affordable(c)),
                    };
                    out.extend(cell);
                }
            }
            // Climb to the peak, a step a round, on files of near cost only: a kind that peaks
            // on a large file (record rewrite, whose one record stays in the cache) would pull
            // in cells that cost as much as the rest of the matrix.
            if let Some(peak) = self.peak(measured, kind) {
                out.extend(self.neighbours(peak).into_iter().filter(|c| c.0 <= self.near));
            }
        }
        out.retain(|c| !measured.contains_key(c));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// A kind's best cell so far.
    fn peak(&self, measured: &Measured, kind: Kind) -> Option<At> {
        profile(measured, &self.grid, kind, true).into_iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|p| p.2)
    }

    /// The cells one step away along the file or the record axis.
    fn neighbours(&self, (f, r): At) -> Vec<At> {
        let step = |v: &[u64], x: u64| -> Vec<u64> {
            let Some(i) = v.iter().position(|&y| y == x) else { return Vec::new() };
            [i.checked_sub(1), Some(i + 1)].into_iter().flatten().filter_map(|j| v.get(j).copied()).collect()
        };
        let mut out: Vec<At> = step(&self.grid.files, f).into_iter().map(|f| (f, r)).collect();
        out.extend(step(&self.grid.records, r).into_iter().map(|r| (f, r)));
        out.retain(|&c| self.grid.wanted(c));
        out
    }

    /// Each kind's peak cell, when its samples are not yet stable: fewer than two, or the last
    /// two further apart than [`STABLE`], and fewer than [`MOST_SAMPLES`]. (A cliff needs two
    /// points on each side, so one noisy cell does not make or hide one; a peak is one cell.)
    fn unsettled(&self, measured: &Measured) -> Vec<At> {
        let mut deciding: Vec<At> = Self::kinds(measured).into_iter().filter_map(|k| self.peak(measured, k)).collect();
        deciding.sort_unstable();
        deciding.dedup();
        deciding
            .into_iter()
            .filter(|c| {
                measured.get(c).is_some_and(|m| {
                    m.values()
                        .any(|s| s.len() < MOST_SAMPLES && (s.len() < 2 || !close(s[s.len() - 2], s[s.len() - 1])))
                })
            })
            .collect()
    }

    /// The two cells of each drop by more than the fraction between neighbours of a profile
    /// that is not yet decided: its samples do not stand apart ([`support`]) and one side has
    /// fewer than [`MOST_SAMPLES`]. Another sample of each side decides whether the drop is a
    /// cliff or the noise of one cell; cells beyond the affordable are left to one sample,
    /// which the finding then says.
    fn undecided_cliffs(&self, measured: &Measured) -> Vec<At> {
        // Along files a finding follows the spine, as the matrix's reading does
        // (`analysis::matrix`): the cells it rests on are the spine's.
        let spine: Measured = match self.spine {
            Some(s) => measured
                .iter()
                .filter(|(c, _)| self.grid.nearest_record(c.0, s) == Some(c.1))
                .map(|(c, m)| (*c, m.clone()))
                .collect(),
            None => measured.clone(),
        };
        let mut out = Vec::new();
        for kind in Self::kinds(measured) {
            for by_file in [true, false] {
                let line = profile(if by_file { &spine } else { measured }, &self.grid, kind, by_file);
                for w in line.windows(2) {
                    let ((_, r0, c0), (_, r1, c1)) = (w[0], w[1]);
                    if r1 >= r0 * (1.0 - self.fraction) {
                        continue;
                    }
                    let samples = |c: &At| measured.get(c).and_then(|m| m.get(&kind)).map_or(&[][..], Vec::as_slice);
                    let (before, after) = (samples(&c0), samples(&c1));
                    let stands = matches!(support(before, after), Some(Support::Stands { .. }));
                    if stands || (before.len() >= MOST_SAMPLES && after.len() >= MOST_SAMPLES) {
                        continue;
                    }
                    out.extend(
                        [(c0, before.len()), (c1, after.len())]
                            .into_iter()
                            .filter_map(|(c, n)| (n < MOST_SAMPLES && self.affordable(c)).then_some(c)),
                    );
                }
            }
        }
        out
    }
}

/// Whether two samples are within [`STABLE`] of each other.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= STABLE * a.max(b)
}

/// A kind's profile along file sizes (`by_file`) or record sizes: at each size of the grid
/// measured, the best median over the other axis, with the cell that holds it; only cells that
/// [`decides`] count.
pub fn profile(measured: &Measured, grid: &Grid, kind: Kind, by_file: bool) -> Vec<(u64, f64, At)> {
    let sizes = if by_file { &grid.files } else { &grid.records };
    sizes
        .iter()
        .filter_map(|&s| {
            measured
                .iter()
                .filter(|(c, _)| decides(**c) && if by_file { c.0 == s } else { c.1 == s })
                .filter_map(|(c, m)| Some((median(m.get(&kind)?)?, *c)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(rate, c)| (s, rate, c))
        })
        .collect()
}

/// The record size best over every kind in the largest file size measured at more than one
/// record (cells that [`decides`]): the one with the highest sum of each kind's rate relative
/// to that kind's best.
pub fn best_record(measured: &Measured, grid: &Grid) -> Option<u64> {
    let file = grid.files.iter().rev().find(|&&f| measured.keys().filter(|&&c| c.0 == f && decides(c)).count() > 1)?;
    let row: Vec<(&At, &BTreeMap<Kind, Vec<f64>>)> =
        measured.iter().filter(|(c, _)| c.0 == *file && decides(**c)).collect();
    let best_of = |k: &Kind| row.iter().filter_map(|(_, m)| median(m.get(k)?)).fold(0.0, f64::max);
    let score = |m: &BTreeMap<Kind, Vec<f64>>| {
        m.iter().filter_map(|(k, s)| Some(median(s)? / best_of(k))).filter(|x| x.is_finite()).sum::<f64>()
    };
    row.iter().max_by(|a, b| score(a.1).total_cmp(&score(b.1))).map(|(c, _)| c.1)
}

/// The wall time of every cell of the grid once: a measured cell's mean visit; for each other,
/// the nearest measured cell's (fewest doublings away in file and record size together), its part
/// beyond the quickest visit of all (the fixed cost of a cell's runs) scaled by the ratio of
/// their file sizes.
pub fn full_estimate(grid: &Grid, visits: &BTreeMap<At, Vec<f64>>) -> f64 {
    let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let fixed = visits.values().map(mean).fold(f64::INFINITY, f64::min);
    let distance = |(f, r): At, (g, s): At| ((f as f64 / g as f64).log2().abs(), (r as f64 / s as f64).log2().abs());
    grid.cells()
        .into_iter()
        .map(|c| match visits.get(&c) {
            Some(v) => mean(v),
            None => visits
                .iter()
                .min_by(|a, b| {
                    let (da, db) = (distance(c, *a.0), distance(c, *b.0));
                    (da.0 + da.1, da.0).partial_cmp(&(db.0 + db.1, db.0)).unwrap_or(std::cmp::Ordering::Equal)
                })
                .map_or(0.0, |(near, v)| fixed + (mean(v) - fixed) * c.0 as f64 / near.0 as f64),
        })
        .sum()
}

/// The cells chosen and not yet measured, and how more are chosen.
#[derive(Debug)]
enum Chooser {
    Full(std::vec::IntoIter<At>),
    Adaptive(Adaptive, Vec<At>),
}

impl Chooser {
    fn next(&mut self, measured: &Measured) -> Option<At> {
        match self {
            Chooser::Full(cells) => cells.next(),
            Chooser::Adaptive(adaptive, queue) => {
                if queue.is_empty() {
                    *queue = adaptive.next(measured);
                    queue.reverse();
                }
                queue.pop()
            }
        }
    }
}

/// The name of the hook that makes a visit's write find no file: a new file for the write of
/// each visit, as IOzone's.
pub const DISCARD: &str = "discard";

/// The matrix as a plan: it chooses each next cell (every cell `repetitions` times, or the
/// adaptive mode's), and visits it: [`DISCARD`], then each pass in turn, filing each run's
/// phases as samples of the kinds they measure.
#[derive(Debug)]
pub struct MatrixPlan {
    record: MatrixRecord,
    passes: Vec<Pass>,
    chooser: Chooser,
    measured: Measured,
    /// Per cell, the wall time of each visit (all its passes).
    visits: BTreeMap<At, Vec<f64>>,
    start: Instant,
    budget: Option<f64>,
    /// The cell being visited, the pass to run next, and when the visit began.
    visit: Option<(At, usize, Instant)>,
}

impl MatrixPlan {
    /// A plan for `record`'s grid, kinds and shape; `budget` in seconds.
    pub fn new(record: MatrixRecord, repetitions: usize, budget: Option<f64>) -> Self {
        let grid = &record.grid;
        let chooser = match record.adaptive {
            false => Chooser::Full((0..repetitions).flat_map(|_| grid.cells()).collect::<Vec<_>>().into_iter()),
            true => Chooser::Adaptive(Adaptive::new(grid.clone(), record.fraction), Vec::new()),
        };
        MatrixPlan {
            passes: passes(&record.kinds),
            record,
            chooser,
            measured: Measured::new(),
            visits: BTreeMap::new(),
            start: Instant::now(),
            budget,
            visit: None,
        }
    }

    /// The matrix as it stands.
    pub fn record(&self) -> &MatrixRecord {
        &self.record
    }

    /// The matrix whole: wall time, cells skipped, the estimate of the full matrix, and, when
    /// `failure` says why it stopped, failed.
    pub fn finish(mut self, failure: Option<String>) -> MatrixRecord {
        // A visit cut short by a failure or a stop still took its time.
        if let Some((at, _, started)) = self.visit.filter(|&(_, passes, _)| passes > 0) {
            self.visits.entry(at).or_default().push(started.elapsed().as_secs_f64());
        }
        let m = &mut self.record;
        m.wall_secs = self.start.elapsed().as_secs_f64();
        m.skipped = m.grid.cells().iter().filter(|c| !self.measured.contains_key(c)).count();
        m.full_secs = Some(full_estimate(&m.grid, &self.visits));
        if let Chooser::Adaptive(adaptive, _) = &self.chooser {
            m.spine = adaptive.spine;
        }
        m.cells.sort_by_key(|c| (c.kind, c.file, c.record));
        if let Some(why) = failure {
            m.status = Status::Failed;
            m.error = Some(why);
        }
        self.record
    }

    /// Files the phases of one run of `pass` in cell `at` as samples of the kinds they measure.
    fn file_samples(&mut self, pass: usize, at: At, run: &RunRecord) {
        let (m, measured) = (&mut self.record, &mut self.measured);
        for (phase, (_, kind)) in run.phases.iter().zip(&self.passes[pass].phases) {
            let Some(kind) = *kind else { continue };
            let figures = timed(&phase.tasks, m.timing);
            let cell = match m.cells.iter_mut().position(|c| c.kind == kind && (c.file, c.record) == at) {
                Some(i) => &mut m.cells[i],
                None => {
                    m.cells.push(MatrixCell {
                        kind,
                        file: at.0,
                        record: at.1,
                        samples: Vec::new(),
                        runs: Vec::new(),
                        possibly_cached: None,
                    });
                    m.cells.last_mut().expect("just pushed")
                }
            };
            cell.samples.push(figures);
            cell.runs.extend(run.id.filter(|id| !cell.runs.contains(id)));
            cell.possibly_cached = cell.possibly_cached.take().or_else(|| phase.possibly_cached.clone());
            if let Some(rate) = figures.team {
                measured.entry(at).or_default().entry(kind).or_default().push(rate);
            }
        }
    }

    fn workload(&self, pass: usize, (file, record): At) -> Workload {
        workload(&self.passes[pass], file, record, &self.record.shape)
    }

    /// The next cell, unless the budget is spent.
    fn choose(&mut self) -> Option<At> {
        let spent = self.start.elapsed().as_secs_f64();
        if self.budget.is_some_and(|limit| spent >= limit) {
            if !self.record.notes.iter().any(|n| n.starts_with("--budget")) {
                self.record.notes.push(format!("--budget reached after {spent:.1} s: the matrix stopped there"));
            }
            return None;
        }
        self.chooser.next(&self.measured)
    }
}

impl Plan for MatrixPlan {
    fn next(&mut self, last: Last) -> Step {
        if let Some((at, k, started)) = self.visit {
            match last {
                Last::Ran(run) if k > 0 => self.file_samples(k - 1, at, run),
                // A pass this cell cannot hold (e.g. vectored pieces misaligned for O_DIRECT):
                // said once, the rest of the cell measured.
                Last::Refused(e) if k > 0 => {
                    let note = format!(
                        "{} is not measured with {} records: {e}",
                        self.passes[k - 1].name(),
                        format_size(at.1)
                    );
                    if !self.record.notes.contains(&note) {
                        self.record.notes.push(note);
                    }
                }
                _ => {}
            }
            if k < self.passes.len() {
                self.visit = Some((at, k + 1, started));
                let name = format!("{} {}/{}", self.passes[k].name(), format_size(at.0), format_size(at.1));
                return Step::Run { workload: Box::new(self.workload(k, at)), name: Some(name) };
            }
            self.visits.entry(at).or_default().push(started.elapsed().as_secs_f64());
            self.visit = None;
        }
        match self.choose() {
            Some(at) => {
                self.visit = Some((at, 0, Instant::now()));
                Step::Hook(DISCARD.into())
            }
            None => Step::Done,
        }
    }

    fn hook(&mut self, name: &str, site: &mut HookSite) -> Result<(), HookError> {
        match (name, self.visit) {
            (DISCARD, Some((at, _, _))) => Ok(site.discard_files_of(&self.workload(0, at))?),
            _ => Err(HookError::Other(format!("the matrix has no hook '{name}' here"))),
        }
    }

    fn passes_over_refusals(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_named_and_parsed_from_names_and_iozone_numbers() {
        assert_eq!(Kind::RandomRead.name(), "random-read");
        assert_eq!(Kind::parse("0").unwrap(), [Kind::Write, Kind::Rewrite]);
        assert_eq!(Kind::parse("stride-read").unwrap(), [Kind::StrideRead]);
        assert_eq!(Kind::parse("all").unwrap().len(), 14);
        let e = Kind::parse("9").unwrap_err();
        assert!(e.starts_with("unknown kind '9' (expected write, rewrite,"), "{e}");
    }

    #[test]
    fn passes_measure_each_asked_kind_once_and_write_the_files_they_need() {
        let all = passes(&Kind::ALL);
        let measured: Vec<Kind> = all.iter().flat_map(|p| p.kinds()).collect();
        let mut sorted = measured.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), measured.len(), "each kind once");
        assert_eq!(sorted.len(), 14);
        assert_eq!(
            all[0].phases,
            [
                (Op::Write, Some(Kind::Write)),
                (Op::Rewrite, Some(Kind::Rewrite)),
                (Op::Read, Some(Kind::Read)),
                (Op::Reread, Some(Kind::Reread))
            ]
        );
        // A backward read alone still needs a written file: an unmeasured write first.
        let p = passes(&[Kind::BackwardRead]);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].phases, [(Op::Write, None)]);
        assert_eq!(
            (p[1].pattern, p[1].phases.clone()),
            (Pattern::Backward, vec![(Op::Read, Some(Kind::BackwardRead))])
        );
        // A stream read writes its own file through the stream engine, unmeasured.
        let p = passes(&[Kind::StreamRead]);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].engine, p[0].phases.clone()),
            ("stream", vec![(Op::Write, None), (Op::Read, Some(Kind::StreamRead))])
        );
        let w = workload(
            &p[0],
            4 * MIB,
            64 * KIB,
            &Shape { tasks: 2, per_node: 2, direct: false, fsync: false, seed: 1, stand_in: None },
        );
        let d = w.data().unwrap();
        assert_eq!((d.block, d.transfer, w.tasks, d.engine.base()), (4 * MIB, 64 * KIB, 2, "stream"));
        w.validate().unwrap();
    }

    #[test]
    fn the_full_matrix_time_is_each_cell_once_the_missing_from_their_nearest() {
        let grid = Grid::new((MIB, 4 * MIB), (MIB, MIB), false);
        // Visits of 1 MiB: 0.1 s and 0.3 s (mean 0.2 s, also the quickest: the fixed cost).
        // 2 MiB: 0.5 s. 4 MiB was not measured: its nearest is 2 MiB (one doubling), whose
        // 0.3 s beyond the fixed cost doubles with the file: 0.2 + 0.6.
        let visits = BTreeMap::from([((MIB, MIB), vec![0.1, 0.3]), ((2 * MIB, MIB), vec![0.5])]);
        let total = full_estimate(&grid, &visits);
        assert!((total - (0.2 + 0.5 + 0.8)).abs() < 1e-12, "{total}");
        assert_eq!(full_estimate(&grid, &BTreeMap::new()), 0.0);
    }

    #[test]
    fn the_grid_doubles_and_skips_small_records_on_large_files_unless_asked() {
        let g = Grid::new((64 * KIB, 512 * MIB), (4 * KIB, 16 * MIB), false);
        assert_eq!(g.files.len(), 14);
        assert_eq!(g.records.len(), 13);
        assert!(g.holds((16 * MIB, 4 * KIB)));
        assert!(!g.holds((32 * MIB, 32 * KIB)), "as iozone -a: no record under 64 KiB beyond 16 MiB");
        assert!(g.holds((32 * MIB, 64 * KIB)));
        assert!(!g.holds((64 * KIB, 128 * KIB)), "no record beyond its file");
        // 64K: 5 records, 128K: 6, ... 16M: 13, 32M..512M: 9 each.
        assert_eq!(g.cells().len(), (5..=13).sum::<usize>() + 5 * 9);
        let z = Grid::new((64 * KIB, 512 * MIB), (4 * KIB, 16 * MIB), true);
        assert!(z.holds((64 * MIB, 4 * KIB)));
    }

    /// A synthetic machine: rates fall 4x past 1 MiB files (a cache) and are best at 256 KiB
    /// records.
    fn rate(f: u64, r: u64) -> f64 {
        let cache = if f <= MIB { 4.0 } else { 1.0 };
        let record = 1.0 / (1.0 + ((r as f64 / (256 * KIB) as f64).log2()).abs() / 4.0);
        1e9 * cache * record
    }

    /// The adaptive mode over the default grid, to its end, on the machine of `rate`.
    fn adaptive(rate: fn(u64, u64) -> f64) -> (Grid, Adaptive, Measured) {
        adaptive_over(Grid::new((64 * KIB, 512 * MIB), (4 * KIB, 16 * MIB), false), rate)
    }

    /// The adaptive mode run to its end over `grid`, `rate` giving every sample.
    fn adaptive_over(grid: Grid, rate: fn(u64, u64) -> f64) -> (Grid, Adaptive, Measured) {
        let mut a = Adaptive::new(grid.clone(), 0.3);
        let mut measured = Measured::new();
        while let Some(cells) = Some(a.next(&measured)).filter(|c| !c.is_empty()) {
            for c in cells {
                measured.entry(c).or_default().entry(Kind::Read).or_default().push(rate(c.0, c.1));
            }
        }
        (grid, a, measured)
    }

    #[test]
    fn with_no_cheap_row_of_two_records_the_spine_follows_the_best_cell_to_the_largest_files() {
        // Records 64 to 256 KiB on files from 256 KiB: the smallest row holds only 64 KiB
        // records four times. A cliff from 1 MiB to 2 MiB files.
        let grid = Grid::new((256 * KIB, 8 * MIB), (64 * KIB, 256 * KIB), false);
        let (_, a, measured) =
            adaptive_over(grid, |f, r| if f < 2 * MIB { 1e9 } else { 1e8 } * (r as f64 / MIB as f64));
        assert!(a.spine.is_some(), "a spine from the best cell");
        assert!(measured.keys().any(|c| c.0 >= 2 * MIB), "files past the cliff measured: {:?}", measured.keys());
    }

    #[test]
    fn the_adaptive_mode_finds_the_cliff_and_the_best_record_in_a_fraction_of_the_bytes() {
        let (grid, a, measured) = adaptive(rate);
        assert_eq!(a.spine, Some(256 * KIB));
        // The cliff between 1 MiB and 2 MiB is measured on both sides at the spine.
        assert!(measured.contains_key(&(MIB, 256 * KIB)) && measured.contains_key(&(2 * MIB, 256 * KIB)));
        let bytes: u64 = measured.iter().map(|(c, s)| c.0 * s[&Kind::Read].len() as u64).sum();
        let full = grid.bytes(&grid.cells());
        assert!((bytes as f64) < 0.15 * full as f64, "{bytes} of {full}");
        // Exact samples agree at once: each deciding cell measured twice, no more.
        assert!(measured.values().all(|m| m[&Kind::Read].len() <= 2));
    }

    /// [`rate`], but a cell of fewer than [`MIN_TRANSFERS`] records is 100 times as fast on the
    /// smallest files (a time below the timer's tick) and 100 times as slow on the others (a
    /// first transfer's cost, alone).
    fn planted(f: u64, r: u64) -> f64 {
        match (decides((f, r)), f <= 128 * KIB) {
            (true, _) => rate(f, r),
            (false, true) => 100.0 * rate(f, r),
            (false, false) => rate(f, r) / 100.0,
        }
    }

    #[test]
    fn the_adaptive_mode_measures_no_cell_too_short_to_decide_and_reaches_large_records_on_files_of_several() {
        let (grid, a, measured) = adaptive(planted);
        let short: Vec<&At> = measured.keys().filter(|&&c| !decides(c)).collect();
        assert!(short.is_empty(), "{short:?}");
        // The largest record on the smallest file that holds it four times, not on one of
        // its own size (a slow first transfer, a record cliff that is not there).
        let by_record = profile(&measured, &grid, Kind::Read, false);
        assert_eq!(by_record.last().map(|p| p.2), Some((64 * MIB, 16 * MIB)));
        assert_eq!(by_record.last().map(|p| p.1), Some(rate(64 * MIB, 16 * MIB)));
        // The peak is a cell of many records, not a planted one of the smallest files.
        let peak = a.peak(&measured, Kind::Read).unwrap();
        assert!(decides(peak), "{peak:?}");
        assert_eq!(a.spine, Some(256 * KIB));
    }

    #[test]
    fn a_peak_past_the_cheap_rows_is_climbed_to_and_settled_while_its_cell_is_cheap() {
        // Best at 4 MiB files and 1 MiB records: past the cheap rows of a grid to 32 MiB (to
        // 512 KiB), where a 1 MiB record first holds four times.
        let grid = Grid::new((64 * KIB, 32 * MIB), (4 * KIB, 16 * MIB), false);
        let around = |x: u64, best: u64| 1.0 / (1.0 + (x as f64 / best as f64).log2().abs() / 4.0);
        let mut a = Adaptive::new(grid.clone(), 0.3);
        let mut measured = Measured::new();
        while let Some(cells) = Some(a.next(&measured)).filter(|c| !c.is_empty()) {
            for (f, r) in cells {
                let rate = 1e9 * around(f, 4 * MIB) * around(r, MIB);
                measured.entry((f, r)).or_default().entry(Kind::Read).or_default().push(rate);
            }
        }
        assert!(!a.cheap.contains(&(4 * MIB)), "{:?}", a.cheap);
        assert_eq!(measured[&(4 * MIB, MIB)][&Kind::Read].len(), 2, "settled");
        assert!(measured.contains_key(&(8 * MIB, MIB)) && measured.contains_key(&(4 * MIB, 512 * KIB)), "climbed");
        // A cell of 32 MiB costs more than the near share: never measured twice.
        assert!(measured.iter().filter(|(c, _)| c.0 == 32 * MIB).all(|(_, m)| m[&Kind::Read].len() == 1));
    }

    #[test]
    fn profiles_and_the_best_record_count_only_cells_of_several_records() {
        let grid = Grid::new((64 * KIB, 128 * KIB), (16 * KIB, 128 * KIB), false);
        let measured: Measured =
            grid.cells().into_iter().map(|c| (c, BTreeMap::from([(Kind::Read, vec![planted(c.0, c.1)])]))).collect();
        // 64 KiB files hold 16 KiB records four times, 128 KiB ones 32 KiB records: the
        // planted cells (one or two records, 100 times as fast) are in no profile.
        let by_file: Vec<At> = profile(&measured, &grid, Kind::Read, true).into_iter().map(|p| p.2).collect();
        assert_eq!(by_file, [(64 * KIB, 16 * KIB), (128 * KIB, 32 * KIB)]);
        let by_record: Vec<u64> = profile(&measured, &grid, Kind::Read, false).into_iter().map(|p| p.0).collect();
        assert_eq!(by_record, [16 * KIB, 32 * KIB]);
        assert_eq!(best_record(&measured, &grid), Some(32 * KIB));
        assert_eq!(grid.nearest_record(128 * KIB, MIB), Some(32 * KIB));
    }
}
