//! A campaign: a whole evaluation from one file, a plan of plans. Its points (target x study
//! x client count x repetition) are put in run order, each a study value played as the study
//! would play alone, filed under the campaign ([`runner::Runner`]), with hooks around runs and
//! studies. Every point is known by what it
//! measures (study, target, workload key), so running the file again skips the points the
//! store holds whole, in this version of the file or an earlier one.

pub mod ask;
pub mod batch;
pub mod file;
mod form;
pub mod hooks;
pub mod jobs;
pub mod points;
pub mod read;
pub mod root;
pub mod runner;
pub mod text;

use crate::record::point::PointKey;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

pub use batch::Batch;
pub use file::{parse, parse_stored, parse_unmounted, FileError, Stored, Value};

/// The most points a campaign may plan (studies x targets x client counts x repetitions),
/// checked before any is built: a 2 KB file could otherwise ask for millions and take the
/// machine's memory. A point takes seconds at the least, so this is already more than the
/// week a `budget` may give.
pub const MAX_POINTS: u64 = 100_000;

/// The largest N of `--scale 1/N`: 2^40 already takes a petabyte down to a kilobyte. Past
/// i64 the store's JSON functions read N back as a REAL, so the version's points never
/// matched their runs again.
pub const MAX_SCALE: u64 = 1 << 40;

/// The kinds of study, named as the commands that run them alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `iosurvey run`: a workload, swept over `clients`.
    Run,
    /// `iosurvey survey`: the standard battery.
    Survey,
    /// `iosurvey meta`: a metadata workload, swept over `clients`.
    Meta,
    /// `iosurvey matrix`: IOzone's matrix.
    Matrix,
    /// `iosurvey io500`: the IO500 list.
    Io500,
    /// `iosurvey targets`: a target survey over the study's targets, one point for all of
    /// them (each alone, then k at once).
    Targets,
    /// `iosurvey net`: the network's ceiling, one point; its targets are those reached over
    /// that network, beside whose figures the report sets it.
    Net,
    /// `iosurvey train`: training I/O, swept over `accelerators`.
    Train,
    /// `iosurvey checkpoint`: checkpoint I/O, swept over `ranks`.
    Checkpoint,
}

impl Kind {
    /// Every kind, in the order of [`Kind::NAMES`].
    pub const ALL: [Kind; 9] = [
        Kind::Run,
        Kind::Survey,
        Kind::Meta,
        Kind::Matrix,
        Kind::Io500,
        Kind::Targets,
        Kind::Net,
        Kind::Train,
        Kind::Checkpoint,
    ];

    /// The names a file may give, as the commands are named.
    pub const NAMES: &'static [&'static str] =
        &["run", "survey", "meta", "matrix", "io500", "targets", "net", "train", "checkpoint"];

    /// The command's name.
    pub fn name(self) -> &'static str {
        Kind::NAMES[self as usize]
    }

    fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the campaign sweeps its `clients`, a point per count (the others run whole
    /// at each point).
    pub fn swept(self) -> bool {
        matches!(self, Kind::Run | Kind::Meta)
    }

    /// The setting the campaign sweeps, a point per value: `clients` (tasks of the launch),
    /// or the emulated accelerators of a training study and the ranks of a checkpoint
    /// study (threads, as many as asked: they wait on compute more than they use a core).
    pub fn sweeps(self) -> Option<&'static str> {
        match self {
            Kind::Run | Kind::Meta => Some("clients"),
            Kind::Train => Some("accelerators"),
            Kind::Checkpoint => Some("ranks"),
            _ => None,
        }
    }

    /// Whether one point plays the study on all its targets at once (a target survey), or
    /// on none of them (the network), rather than a point per target.
    pub fn one_point(self) -> bool {
        matches!(self, Kind::Targets | Kind::Net)
    }
}

/// How a point's repetitions become its figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    /// The best repetition, as the NetApp paper reports.
    Best,
    /// The mean, with its interval.
    Mean,
    /// The median.
    Median,
}

/// The order points run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Targets alternate point by point, so drift hits every system alike.
    Interleaved,
    /// Shuffled with this seed.
    Random(u64),
    /// Each study on each target to its end before the next.
    Sequential,
}

/// A system measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetDef {
    /// Its label, filed with every run (`--label`).
    pub label: String,
    /// The directory the runs go in (a study of fresh directories makes them inside), or the
    /// block device (`device = "/dev/sdb"`: run studies only).
    pub dir: PathBuf,
    /// Whether `dir` names a block device.
    pub device: bool,
    /// Whether `dir` is an S3 bucket's `URL/BUCKET[/PREFIX]` (`s3 = "..."`: run studies
    /// only), reached with the credentials of the AWS environment.
    pub s3: bool,
    /// Free text kept with every run.
    pub description: String,
    /// Where the file names it.
    pub line: Option<usize>,
}

/// A study's setting as the file wrote it: a flag of the study's command.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The flag's name (`transfer`, `max-file`).
    pub key: String,
    /// Its value.
    pub value: Value,
    /// Its line in the file.
    pub line: usize,
}

/// A study: a command, its settings, the targets it applies to.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    /// Its name in the campaign.
    pub name: String,
    /// The command that runs it.
    pub kind: Kind,
    /// The targets it applies to (indices into the campaign's).
    pub targets: Vec<usize>,
    /// Its settings, in the file's order.
    pub settings: Vec<Setting>,
    /// Where the file begins it.
    pub line: Option<usize>,
}

/// What keeps reads and writes from being the caches'.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CacheRules {
    /// Drop the page cache on every node before each run (`--drop-caches`).
    pub drop_caches: bool,
    /// O_DIRECT (`--direct`) where the study's command takes it.
    pub direct: bool,
    /// Read back another node's data (`--reorder`) where the command takes it.
    pub reorder: bool,
    /// Data per node at least this many times the node's memory.
    pub data_times_ram: Option<f64>,
    /// A point that breaks the data rule is run and flagged rather than refused.
    pub flag_only: bool,
}

/// Where a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookPlace {
    /// On the lead process only.
    Lead,
    /// Once on every node of the launch.
    EveryNode,
}

/// A shell command around runs or studies.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    /// Given to `sh -c`.
    pub command: String,
    /// Where.
    pub place: HookPlace,
    /// A failure is kept but does not fail the point.
    pub ignore_failure: bool,
    /// Where the file gives it.
    pub line: Option<usize>,
}

/// The hooks of a campaign.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hooks {
    /// Before each run.
    pub before_run: Option<Hook>,
    /// After each run.
    pub after_run: Option<Hook>,
    /// Before a study's first point.
    pub before_study: Option<Hook>,
    /// After a study's last point.
    pub after_study: Option<Hook>,
}

impl Hooks {
    /// Each hook with its name, in the order a point meets them.
    pub fn all(&self) -> Vec<(&'static str, &Hook)> {
        [
            ("before-study", &self.before_study),
            ("before-run", &self.before_run),
            ("after-run", &self.after_run),
            ("after-study", &self.after_study),
        ]
        .into_iter()
        .filter_map(|(n, h)| h.as_ref().map(|h| (n, h)))
        .collect()
    }
}

/// A campaign file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Campaign {
    /// The file.
    pub path: PathBuf,
    /// Its text, kept with the campaign so that it can be run again.
    pub text: String,
    /// The campaign's name: its versions share it.
    pub name: String,
    /// Repetitions of each point.
    pub repetitions: u32,
    /// How repetitions are summarized.
    pub summary: Summary,
    /// The order of the points.
    pub order: Order,
    /// Time the campaign may take; no point starts after it.
    pub budget_secs: Option<f64>,
    /// The systems measured.
    pub targets: Vec<TargetDef>,
    /// The studies.
    pub studies: Vec<Study>,
    /// Cache rules for every run.
    pub cache: CacheRules,
    /// Hooks.
    pub hooks: Hooks,
    /// Events (`[[event]]`): commands run at a time into the matching points' runs.
    pub events: Vec<EventDef>,
    /// How a batch system runs it (`[batch]`), for `campaign emit`.
    pub batch: Option<Batch>,
}

/// A command run at a time into the runs of one study's points (`[[event]]`), as `run
/// --event` runs it: those of one target and one client count only, when it names them.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDef {
    /// The study, by index.
    pub study: usize,
    /// The target, by index, or every one of the study.
    pub target: Option<usize>,
    /// The client count, or every one.
    pub clients: Option<usize>,
    /// `TIME:COMMAND`, as `--event` takes it.
    pub event: String,
    /// Where the file names it.
    pub line: Option<usize>,
}

impl Campaign {
    /// The version of the file: a hash of its text, so a changed file is a new version.
    pub fn version(&self) -> String {
        // FNV-1a: stable across builds, unlike the standard hasher.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.text.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// One point of the plan: what runs, where, which repetition.
#[derive(Debug, Clone)]
pub struct Point {
    /// The study (index into the campaign's).
    pub study: usize,
    /// The target (index into the campaign's).
    pub target: usize,
    /// Active tasks, for a swept study.
    pub clients: Option<usize>,
    /// The emulated accelerators of a training point, the ranks of a checkpoint point.
    pub swept: Option<usize>,
    /// Which repetition (0 the first).
    pub repetition: u32,
    /// What it measures, as stored (the workload key of a run and its tasks, or the study's
    /// settings), at the campaign's scale; shared by the point's repetitions, as its command
    /// line is.
    pub key: Arc<PointKey>,
    /// The command line that would run it alone, as typed after `iosurvey`: shown in a plan,
    /// never parsed (the point plays `play`).
    pub argv: Arc<[String]>,
    /// The study it plays, at full size (a scale divides a copy).
    pub play: Arc<crate::study::Study>,
    /// What it measures, in words, after any scale (the workload's label, or the sizes).
    pub what: Arc<str>,
    /// The bytes its files hold at most at once, where it writes data.
    pub bytes: Option<u64>,
    /// Why it cannot run (a rule refuses it, or it needs a larger launch), said in the plan.
    pub refusal: Option<String>,
    /// What the plan flags about it (a data rule broken but allowed).
    pub flag: Option<String>,
}

impl PartialEq for Point {
    /// Points are one when they say the same: the study they play is what their words show.
    fn eq(&self, o: &Point) -> bool {
        (self.study, self.target, self.clients, self.swept, self.repetition, &self.key, &self.argv, &self.what)
            == (o.study, o.target, o.clients, o.swept, o.repetition, &o.key, &o.argv, &o.what)
            && (self.bytes, &self.refusal, &self.flag) == (o.bytes, &o.refusal, &o.flag)
    }
}

/// A point's name for matching stored ones: study, target label, key.
pub type Identity = (String, String, PointKey);

impl Point {
    /// Its identity in `c`.
    pub fn identity(&self, c: &Campaign) -> Identity {
        (c.studies[self.study].name.clone(), c.targets[self.target].label.clone(), PointKey::clone(&self.key))
    }
}

/// Puts points in `order`. They come in the file's order: study by study, each target, each
/// client count, each repetition.
pub fn ordered(mut points: Vec<Point>, order: Order) -> Vec<Point> {
    match order {
        Order::Sequential => points,
        Order::Interleaved => {
            // Within a study, the same (clients, repetition) on every target before the next.
            points.sort_by_key(|p| (p.study, p.clients, p.repetition, p.target));
            points
        }
        Order::Random(seed) => {
            let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
            let mut next = || {
                // splitmix64: a seeded shuffle that is the same on every build and node.
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            };
            for i in (1..points.len()).rev() {
                let j = (next() % (i as u64 + 1)) as usize;
                points.swap(i, j);
            }
            points
        }
    }
}

/// How many of each identity the store holds whole.
pub type Done = HashMap<Identity, usize>;

/// Whether `p` is among what the store holds: its repetition is below the count stored.
pub fn is_done(c: &Campaign, p: &Point, done: &Done) -> bool {
    done.get(&p.identity(c)).is_some_and(|&n| (p.repetition as usize) < n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::point::StudyKey;

    fn key(clients: usize) -> PointKey {
        PointKey { study: StudyKey::Whole("k".into()), tasks: Some(clients), scale: None }
    }

    fn point(study: usize, target: usize, clients: usize, repetition: u32) -> Point {
        Point {
            study,
            target,
            clients: Some(clients),
            swept: None,
            repetition,
            key: Arc::new(key(clients)),
            argv: Arc::new([]),
            play: Arc::new(crate::study::Study::Io500(crate::study::Io500Args {
                dir: "/".into(),
                quick: true,
                stonewall_secs: None,
                tasks: 1,
                target: crate::study::TargetArgs { keep: false, force: false, no_space_check: false, label: None },
            })),
            what: "".into(),
            bytes: None,
            refusal: None,
            flag: None,
        }
    }

    fn file_order() -> Vec<Point> {
        let mut v = Vec::new();
        for target in 0..2 {
            for clients in [1, 2] {
                for rep in 0..2 {
                    v.push(point(0, target, clients, rep));
                }
            }
        }
        v
    }

    #[test]
    fn interleaved_alternates_targets_point_by_point_and_sequential_keeps_the_files_order() {
        let inter = ordered(file_order(), Order::Interleaved);
        let targets: Vec<usize> = inter.iter().map(|p| p.target).collect();
        assert_eq!(targets, [0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(inter[0].clients, Some(1));
        assert_eq!(inter[7].clients, Some(2));
        assert_eq!(ordered(file_order(), Order::Sequential), file_order());
    }

    #[test]
    fn random_order_is_a_permutation_fixed_by_its_seed() {
        let a = ordered(file_order(), Order::Random(7));
        assert_eq!(a, ordered(file_order(), Order::Random(7)));
        assert_ne!(a, ordered(file_order(), Order::Random(8)));
        assert_ne!(a, file_order());
        let mut sorted = a.clone();
        sorted.sort_by_key(|p| (p.target, p.clients, p.repetition));
        assert_eq!(sorted, file_order());
    }

    #[test]
    fn a_point_is_done_when_the_store_holds_more_of_its_identity_than_its_repetition() {
        let c = Campaign {
            path: "c.toml".into(),
            text: String::new(),
            name: "c".into(),
            repetitions: 2,
            summary: Summary::Mean,
            order: Order::Interleaved,
            budget_secs: None,
            targets: vec![TargetDef {
                label: "a".into(),
                dir: "/".into(),
                device: false,
                s3: false,
                description: String::new(),
                line: None,
            }],
            studies: vec![Study { name: "s".into(), kind: Kind::Run, targets: vec![0], settings: vec![], line: None }],
            cache: CacheRules::default(),
            hooks: Hooks::default(),
            events: Vec::new(),
            batch: None,
        };
        let mut done = Done::new();
        done.insert(("s".into(), "a".into(), key(1)), 1);
        assert!(is_done(&c, &point(0, 0, 1, 0), &done));
        assert!(!is_done(&c, &point(0, 0, 1, 1), &done));
        assert!(!is_done(&c, &point(0, 0, 2, 0), &done));
    }
}
