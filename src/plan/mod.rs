//! Expands what the user asked for into an ordered list of runs: the survey battery, and the
//! cells of a file x record matrix ([`matrix`]).

use crate::record::RunRecord;
use crate::spec::{Access, Data, Layout, Op, Pattern, Shape, SpecError, Workload};
use crate::target::Target;
use crate::units::{KIB, MIB};
use serde::{Deserialize, Serialize};

pub mod matrix;

/// What a plan asks for next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Step {
    /// Run this workload, filed under `name` in the plan's group.
    Run {
        /// What to run.
        workload: Box<Workload>,
        /// Its name within the group ("seq-file-per-task").
        name: Option<String>,
    },
    /// Let the plan act on the lead's target between runs ([`Plan::hook`]).
    Hook(String),
    /// Nothing more.
    Done,
}

/// What became of the plan's last step.
#[derive(Debug, Clone, Copy)]
pub enum Last<'a> {
    /// Nothing yet, or a hook.
    Start,
    /// The run was stored with this record.
    Ran(&'a RunRecord),
    /// The workload's rules refused the run; nothing ran ([`Plan::passes_over_refusals`]).
    Refused(&'a SpecError),
}

/// Why a hook failed: the target refused (said as any target refusal is), or something else.
#[derive(Debug)]
pub enum HookError {
    /// The target refused, e.g. a file to discard that is not iosurvey's.
    Target(crate::target::TargetError),
    /// Anything else, said in words.
    Other(String),
}

impl From<crate::target::TargetError> for HookError {
    fn from(e: crate::target::TargetError) -> Self {
        HookError::Target(e)
    }
}

/// What a hook may touch: the lead's target.
pub struct HookSite<'a> {
    /// The target, its manifest and its files.
    pub target: &'a mut Target,
    /// Tasks in each process.
    pub threads: usize,
}

impl HookSite<'_> {
    /// Removes the data files `w` writes, where an earlier run of this session made them, so
    /// that its write makes new ones (a metadata workload writes none).
    pub fn discard_files_of(&mut self, w: &Workload) -> Result<(), crate::target::TargetError> {
        let Some(data) = w.data() else { return Ok(()) };
        let map = crate::engine::offsets::OffsetMap::new(data, w.tasks, w.seed);
        self.target.discard(&crate::target::data_files(data.access == Access::Shared, map.files()))
    }
}

/// A study: given what has run so far, what to run next. The session asks on the lead and
/// every process takes the step.
pub trait Plan {
    /// The next step.
    fn next(&mut self, last: Last) -> Step;

    /// Does the hook `name` on the lead; an error ends the plan.
    fn hook(&mut self, name: &str, _site: &mut HookSite) -> Result<(), HookError> {
        Err(HookError::Other(format!("this plan has no hook '{name}'")))
    }

    /// Whether a run its workload's rules refuse is passed over ([`Last::Refused`]) rather
    /// than ending the plan.
    fn passes_over_refusals(&self) -> bool {
        false
    }
}

/// Workloads run in turn, each with its name: a single run, a sweep's points, a survey's
/// batteries.
#[derive(Debug, Clone, Default)]
pub struct List {
    steps: std::collections::VecDeque<(Option<String>, Workload)>,
}

impl List {
    /// The runs, in order.
    pub fn new(runs: impl IntoIterator<Item = (Option<String>, Workload)>) -> Self {
        List { steps: runs.into_iter().collect() }
    }

    /// A sweep: the workload at each count of tasks (one count: a single run), with `total`
    /// bytes spread over each point's tasks when given.
    pub fn sweep(w: &Workload, counts: &[usize], total: Option<u64>) -> Result<Self, SpecError> {
        let points = counts.iter().map(|&tasks| {
            let mut point = Workload { tasks, ..w.clone() };
            if let Some(total) = total {
                point.set_total(total)?;
            }
            point.validate().map(|()| (None, point))
        });
        Ok(List { steps: points.collect::<Result<_, _>>()? })
    }

    /// A sweep whose every point moves as many of the bytes `capacity` gives it (devices used
    /// whole) as whole transfers over its tasks and segments fill.
    pub fn filling(w: &Workload, counts: &[usize], capacity: impl Fn(&Workload) -> u64) -> Result<Self, SpecError> {
        let points = counts.iter().map(|&tasks| {
            let mut point = Workload { tasks, ..w.clone() };
            point.fill(capacity(&point))?;
            point.validate().map(|()| (None, point))
        });
        Ok(List { steps: points.collect::<Result<_, _>>()? })
    }

    /// The workloads still to run.
    pub fn workloads(&self) -> impl Iterator<Item = &Workload> {
        self.steps.iter().map(|(_, w)| w)
    }
}

impl Plan for List {
    fn next(&mut self, _: Last) -> Step {
        match self.steps.pop_front() {
            Some((name, workload)) => Step::Run { workload: Box::new(workload), name },
            None => Step::Done,
        }
    }
}

/// What a run of the survey is for; its name is stored with the run, and the analysis reads
/// it back into the role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Sequential, a file per task (N-to-N).
    SeqFilePerTask,
    /// 4 KiB random on the same files.
    Random4k,
    /// Sequential, one shared file (N-to-1).
    SeqShared,
}

impl Role {
    const ALL: [Role; 3] = [Role::SeqFilePerTask, Role::Random4k, Role::SeqShared];

    /// The stable name stored with the run.
    pub fn name(self) -> &'static str {
        match self {
            Role::SeqFilePerTask => "seq-file-per-task",
            Role::Random4k => "random-4k",
            Role::SeqShared => "seq-shared",
        }
    }

    /// The role of a stored name.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// One run of a survey.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyItem {
    /// What it is for.
    pub role: Role,
    /// What to run.
    pub workload: Workload,
}

/// How to size and shape a survey.
#[derive(Debug, Clone, Copy)]
pub struct SurveyShape {
    /// Bytes each sequential workload moves per phase (the whole team).
    pub size: u64,
    /// Tasks in the team.
    pub tasks: usize,
    /// Whether the target takes O_DIRECT (random I/O uses it to bypass the cache).
    pub direct: bool,
    /// Whether the page cache may be dropped between phases.
    pub drop_caches: bool,
    /// Seconds each random phase runs (a stonewall; random I/O rates vary by 1000x).
    pub random_secs: f64,
}

/// The survey as a plan: whole batteries in turn, `repetitions` times, so that a drift over
/// the survey spreads over every workload alike and the random workload always finds the
/// sequential one's files just written.
pub fn survey_plan(shape: SurveyShape, repetitions: usize) -> List {
    let battery = survey(shape);
    List::new(
        (0..repetitions).flat_map(|_| battery.iter().map(|i| (Some(i.role.name().to_string()), i.workload.clone()))),
    )
}

/// The standard battery: sequential file per task, 4 KiB random on the same files (so reads
/// hit written data, never holes), then sequential shared file.
pub fn survey(shape: SurveyShape) -> Vec<SurveyItem> {
    let tasks = shape.tasks.max(1);
    let per_task = (shape.size / tasks as u64 / MIB).max(1) * MIB;
    let data = Data { block: per_task, transfer: MIB, fsync: true, ..Data::default() };
    let base = Workload {
        tasks,
        ops: vec![Op::Write, Op::Read],
        drop_caches: shape.drop_caches,
        ..Workload::from(data.clone())
    };
    let random = Data { pattern: Pattern::Random, transfer: 4 * KIB, direct: shape.direct, ..data.clone() };
    let shared = Data { access: Access::Shared, layout: Layout::Segmented, ..data };
    vec![
        SurveyItem { role: Role::SeqFilePerTask, workload: base.clone() },
        SurveyItem {
            role: Role::Random4k,
            workload: Workload { stonewall_secs: Some(shape.random_secs), shape: Shape::Data(random), ..base.clone() },
        },
        SurveyItem { role: Role::SeqShared, workload: Workload { shape: Shape::Data(shared), ..base } },
    ]
}

/// What to write for a list of counts that cannot be read.
pub const COUNTS_HINT: &str = "use 1,2,4,8 or 1..64:x2 or 2..8:+2";

/// Parses a list of counts: "1,2,4,8", a doubling range "1..64:x2", a stepped range
/// "2..8:+2", or a plain range "1..4" (step 1). Counts are positive and returned in order.
pub fn parse_counts(text: &str) -> Result<Vec<usize>, String> {
    counts(text).map_err(|what| format!("{what} (hint: {COUNTS_HINT})"))
}

/// As [`parse_counts`], what is wrong without its hint ([`COUNTS_HINT`]).
pub fn counts(text: &str) -> Result<Vec<usize>, String> {
    let bad = |why: &str| format!("invalid count list '{text}': {why}");
    let mut out = Vec::new();
    let mut push = |n: usize| {
        if out.len() == MAX_COUNTS {
            return Err(bad(&format!("more than {MAX_COUNTS} counts")));
        }
        out.push(n);
        Ok(())
    };
    for part in text.split(',') {
        let part = part.trim();
        let number = |s: &str| {
            s.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| bad(&format!("'{s}' is not a positive number")))
        };
        let Some((from, rest)) = part.split_once("..") else {
            push(number(part)?)?;
            continue;
        };
        let (to, step) = rest.split_once(':').unwrap_or((rest, "+1"));
        let (from, to) = (number(from)?, number(to)?);
        if from > to {
            return Err(bad("a range must go up"));
        }
        let next: Box<dyn Fn(usize) -> Option<usize>> = match (step.strip_prefix('x'), step.strip_prefix('+')) {
            (Some(f), _) => {
                let f = number(f)?;
                if f < 2 {
                    return Err(bad("a factor must be at least 2"));
                }
                Box::new(move |n| n.checked_mul(f))
            }
            (_, Some(s)) => {
                let s = number(s)?;
                Box::new(move |n| n.checked_add(s))
            }
            _ => return Err(bad(&format!("unknown step '{step}'"))),
        };
        // A step past the largest number ends the range, as a step past `to` does.
        let mut n = Some(from);
        while let Some(k) = n.filter(|&k| k <= to) {
            push(k)?;
            n = next(k);
        }
    }
    Ok(out)
}

/// The most counts a list may hold: a sweep of more points than this is a typo.
pub const MAX_COUNTS: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_lists_found_by_the_fuzzer_are_refused_or_bounded() {
        let max = usize::MAX;
        assert_eq!(parse_counts(&format!("{max}..{max}:+1")), Ok(vec![max]));
        assert_eq!(parse_counts(&format!("1..{max}:x2")).unwrap().len(), 64);
        let e = parse_counts("1,1..011115111115111,8").unwrap_err();
        assert!(e.contains("more than 4096 counts"), "{e}");
        assert_eq!(parse_counts("1..4096").unwrap().len(), 4096);
    }

    #[test]
    fn parses_count_lists_and_ranges() {
        assert_eq!(parse_counts("1,2,4,8"), Ok(vec![1, 2, 4, 8]));
        assert_eq!(parse_counts("1..64:x2"), Ok(vec![1, 2, 4, 8, 16, 32, 64]));
        assert_eq!(parse_counts("1..10:x3"), Ok(vec![1, 3, 9]));
        assert_eq!(parse_counts("2..8:+2"), Ok(vec![2, 4, 6, 8]));
        assert_eq!(parse_counts("1..3,6"), Ok(vec![1, 2, 3, 6]));
        for bad in ["0", "1..x", "4..2", "1..8:x1", "1..8:/2", ""] {
            assert!(parse_counts(bad).unwrap_err().contains("hint"), "{bad}");
        }
    }

    #[test]
    fn battery_reuses_the_sequential_files_for_random_io() {
        let items =
            survey(SurveyShape { size: 3 * MIB * 1024, tasks: 3, direct: true, drop_caches: false, random_secs: 5.0 });
        let names: Vec<_> = items.iter().map(|i| i.role.name()).collect();
        assert!(names.iter().all(|n| Role::from_name(n).is_some()));
        assert_eq!(names, ["seq-file-per-task", "random-4k", "seq-shared"]);
        let (seq, rnd) = (&items[0].workload, &items[1].workload);
        let (s, r) = (seq.data().unwrap(), rnd.data().unwrap());
        assert_eq!((s.block, seq.tasks, s.access), (1024 * MIB, 3, Access::FilePerTask));
        assert_eq!((r.block, rnd.tasks, r.access), (s.block, seq.tasks, s.access));
        assert!(r.direct && rnd.stonewall_secs == Some(5.0));
        assert_eq!(items[2].workload.bytes_per_phase(), 3 * 1024 * MIB);
        for i in &items {
            i.workload.validate().unwrap();
        }
    }

    #[test]
    fn tiny_sizes_still_make_valid_runs() {
        for i in survey(SurveyShape { size: 1, tasks: 2, direct: false, drop_caches: false, random_secs: 1.0 }) {
            i.workload.validate().unwrap();
        }
    }
}
