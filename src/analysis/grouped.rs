//! The runs of a report laid out once each: each survey and each sweep as its table, each run
//! of neither in full, in the order of their first runs.

use super::{run, survey, sweep, Report};
use crate::record::RunRecord;
use std::collections::HashMap;

/// The survey and the sweep a run belongs to (neither, for a run of its own).
type Group = (Option<i64>, Option<i64>);

/// Each survey's table, each sweep's table and each other run in full, once each whatever the
/// order of the runs. Runs come ordered by id, and their groups interleave (two surveys at
/// once, runs between a sweep's points, imported stores), so the groups are keyed, not
/// merged as neighbours: merging neighbours laid every run of its own out again at each
/// interleaving, a page growing with the square of the runs.
pub fn grouped(runs: &[RunRecord]) -> Report {
    let mut order: Vec<Group> = Vec::new();
    let mut members: HashMap<Group, Vec<&RunRecord>> = HashMap::new();
    for r in runs {
        let key = (r.survey_id, r.sweep_id);
        members
            .entry(key)
            .or_insert_with(|| {
                order.push(key);
                Vec::new()
            })
            .push(r);
    }
    let mut report = Report::default();
    for key in order {
        let group = members.remove(&key).unwrap_or_default();
        // A survey's or a sweep's table reads its runs side by side: one group's copy at a
        // time, so memory stays within the runs plus the largest group.
        let owned = || group.iter().map(|r| (*r).clone()).collect::<Vec<_>>();
        report = match key {
            (Some(s), _) => report.and(survey(s, &owned())),
            (None, Some(_)) => report.and(sweep(key.1, &owned())),
            (None, None) => group.into_iter().fold(report, |rep, r| rep.and(run(r))),
        };
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures;

    /// Runs 1..=n in id order: plain runs between the points of two sweeps and two surveys.
    fn interleaved() -> Vec<RunRecord> {
        let groups = [(None, None), (None, Some(1)), (Some(1), None), (None, None), (None, Some(2)), (Some(2), None)];
        (1..=18)
            .map(|id| {
                let mut r = fixtures::run(None);
                r.id = Some(id);
                (r.survey_id, r.sweep_id) = groups[(id as usize - 1) % groups.len()];
                r
            })
            .collect()
    }

    #[test]
    fn each_run_is_laid_out_once_however_its_group_interleaves() {
        let runs = interleaved();
        let report = grouped(&runs);
        // A run of its own: its heading line, once.
        for r in runs.iter().filter(|r| (r.survey_id, r.sweep_id) == (None, None)) {
            let heading = format!("run {}: ", r.id.unwrap());
            assert_eq!(report.heading.iter().filter(|l| l.starts_with(&heading)).count(), 1, "{heading}");
        }
        assert_eq!(report.heading.iter().filter(|l| l.starts_with("run ")).count(), 6, "the 6 runs of their own");
        // A sweep: one table, a row per point.
        for w in [1, 2] {
            let tables: Vec<_> =
                report.tables.iter().filter(|t| t.title.starts_with(&format!("sweep {w} over"))).collect();
            assert_eq!(tables.len(), 1, "sweep {w}");
            assert_eq!(tables[0].rows.len(), 3, "sweep {w}'s three runs, each once");
        }
        // A survey: one table of its runs.
        for s in [1, 2] {
            let title = format!("survey {s} of");
            assert_eq!(report.tables.iter().filter(|t| t.title.starts_with(&title)).count(), 1, "survey {s}");
        }
    }

    #[test]
    fn groups_keep_the_order_of_their_first_runs() {
        let report = grouped(&interleaved());
        let kinds: Vec<&str> = report
            .tables
            .iter()
            .filter_map(|t| t.title.split_whitespace().next().filter(|w| matches!(*w, "sweep" | "survey")))
            .collect();
        assert_eq!(kinds, ["sweep", "survey", "sweep", "survey"]);
    }
}
