//! Expands what the user asked for into an ordered list of runs. Today: the survey battery.

use crate::spec::{Access, Layout, Op, Pattern, Workload};
use crate::units::{KIB, MIB};

/// One run of a survey.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyItem {
    /// Stable name, stored with the run.
    pub name: &'static str,
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

/// The standard battery: sequential file per task, 4 KiB random on the same files (so reads
/// hit written data, never holes), then sequential shared file.
pub fn survey(shape: SurveyShape) -> Vec<SurveyItem> {
    let tasks = shape.tasks.max(1);
    let per_task = (shape.size / tasks as u64 / MIB).max(1) * MIB;
    let base = Workload {
        tasks,
        block: per_task,
        transfer: MIB,
        ops: vec![Op::Write, Op::Read],
        fsync: true,
        drop_caches: shape.drop_caches,
        ..Workload::default()
    };
    vec![
        SurveyItem { name: "seq-file-per-task", workload: base.clone() },
        SurveyItem {
            name: "random-4k",
            workload: Workload {
                pattern: Pattern::Random,
                transfer: 4 * KIB,
                direct: shape.direct,
                stonewall_secs: Some(shape.random_secs),
                ..base.clone()
            },
        },
        SurveyItem {
            name: "seq-shared",
            workload: Workload { access: Access::Shared, layout: Layout::Segmented, ..base },
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn battery_reuses_the_sequential_files_for_random_io() {
        let items =
            survey(SurveyShape { size: 3 * MIB * 1024, tasks: 3, direct: true, drop_caches: false, random_secs: 5.0 });
        let names: Vec<_> = items.iter().map(|i| i.name).collect();
        assert_eq!(names, ["seq-file-per-task", "random-4k", "seq-shared"]);
        let (seq, rnd) = (&items[0].workload, &items[1].workload);
        assert_eq!((seq.block, seq.tasks, seq.access), (1024 * MIB, 3, Access::FilePerTask));
        assert_eq!((rnd.block, rnd.tasks, rnd.access), (seq.block, seq.tasks, seq.access));
        assert!(rnd.direct && rnd.stonewall_secs == Some(5.0));
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
