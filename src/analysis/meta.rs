//! A metadata run's tables: each phase's rate over the whole team with its slowest and
//! fastest task, and mdtest's summary over iterations.

use super::{Cell, Table};
use crate::record::RunRecord;
use crate::units::secs;

/// The phases table and the summary over iterations.
pub(super) fn phases(r: &RunRecord) -> Vec<Table> {
    let mut phases = Table::new(
        "phases (items/s = all tasks' items over the earliest start to the latest end)",
        &["phase", "iter", "items", "items/s", "task min", "task max", "time s", "notes"],
    );
    for p in &r.phases {
        let f = &p.figures;
        let rates: Vec<f64> = p.tasks.iter().filter_map(|t| super::charts::task_rate(t, true)).collect();
        let notes = super::phase_notes(p, "files");
        phases.rows.push(vec![
            Cell::text(p.op.name()),
            Cell::Int(p.iteration as u64 + 1),
            Cell::Int(f.ops),
            Cell::num(f.iops, 0),
            Cell::num(rates.iter().copied().reduce(f64::min), 0),
            Cell::num(rates.iter().copied().reduce(f64::max), 0),
            Cell::num(Some(secs(f.window_ns)), 3),
            Cell::text(notes.join("; ")),
        ]);
    }
    let mut summary = Table::new(
        format!("summary over {} iteration(s), items/s", r.workload.iterations),
        &["phase", "max", "min", "mean", "stddev"],
    );
    for s in r.summaries() {
        let Some(sp) = s.iops else { continue };
        summary.rows.push(vec![
            Cell::text(s.op.name()),
            Cell::num(Some(sp.max), 0),
            Cell::num(Some(sp.min), 0),
            Cell::num(Some(sp.mean), 0),
            Cell::num(sp.stddev.or(Some(0.0)), 0),
        ]);
    }
    vec![phases, summary]
}
