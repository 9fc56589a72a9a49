//! A run's figures as the tables of several runs read them: each op's mean over the
//! iterations, in the unit of merit, and the notes that go with it.

use crate::record::RunRecord;
use crate::spec::Op;

/// Which ops' figures may be the page cache's, and why.
pub(super) fn cache_notes(r: &RunRecord) -> Vec<String> {
    r.summaries()
        .into_iter()
        .filter_map(|x| x.possibly_cached.map(|c| format!("{} possibly cached: {c}", x.op.name())))
        .collect()
}

/// The note a table of one figure per run carries when some run has several iterations:
/// the figure is their mean (`ls` alone shows the best).
pub(super) fn mean_over_iterations<'a>(mut runs: impl Iterator<Item = &'a RunRecord>) -> Option<String> {
    runs.any(|r| r.workload.iterations > 1).then(|| "each run's figure is the mean over its iterations".into())
}

/// Mean bandwidth (or IOPS) of an op over a run's iterations.
pub(super) fn mean_of(r: &RunRecord, op: Op, iops: bool) -> Option<f64> {
    let sum = r.summaries().into_iter().find(|s| s.op == op)?;
    (if iops { sum.iops } else { sum.bandwidth }).map(|s| s.mean)
}

pub(super) fn random(r: &RunRecord) -> bool {
    r.workload.random()
}

/// Sample standard deviation over mean, for 2 samples or more.
pub(super) fn coefficient_of_variation(xs: &[f64]) -> Option<f64> {
    let spread = crate::measure::spread(xs)?;
    Some(spread.stddev? / spread.mean).filter(|cv| cv.is_finite())
}

pub(super) fn mean_of_samples(xs: &[f64]) -> f64 {
    crate::measure::spread(xs).map_or(0.0, |s| s.mean)
}
