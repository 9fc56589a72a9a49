//! Runs the analysis tests share.

use crate::record::{fixtures, RunRecord};
use crate::spec::Op;

/// A run of the fixture's workload whose write and read ran at `write` and `read` MiB/s.
pub(super) fn run_at(id: i64, write: f64, read: f64) -> RunRecord {
    let mut r = fixtures::run(None);
    r.id = Some(id);
    for p in &mut r.phases {
        p.figures.bandwidth = Some(if p.op == Op::Write { write } else { read } * 1048576.0);
    }
    r
}
