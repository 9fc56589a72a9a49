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

/// A training run on `label` as `train` files it: its figures typed, and as text by name. Its
/// figures are short decimals, which the text holds exactly: AU `au` over its ranks' `ranks`,
/// one epoch per AU of `epochs`, 10.25 samples/s, 640.5 MiB/s, steps waiting 1.25 and 2.5 ms.
pub(super) fn trained(
    id: i64,
    label: &str,
    accelerators: usize,
    (au, epochs, ranks): (f64, &[f64], &[f64]),
) -> RunRecord {
    use crate::record::train::{EpochFigures, TrainRecord, Training};
    let each = |x: f64| vec![x; epochs.len()];
    let t = Training::Train(Box::new(TrainRecord {
        workload: "unet3d".into(),
        accelerator: Some("h100".into()),
        accelerators: Some(accelerators),
        batch: Some(7),
        compute_s: Some(0.323),
        au_target: Some(0.9),
        au: Some(au),
        pass: Some(au >= 0.9),
        rank_au: ranks.to_vec(),
        samples_per_s: Some(10.25),
        read_mib_s: Some(640.5),
        wait_p50_s: Some(0.00125),
        wait_p99_s: Some(0.0025),
        epoch: EpochFigures {
            au: epochs.to_vec(),
            samples_per_s: each(10.25),
            read_mib_s: each(640.5),
            wait_p50_s: each(0.00125),
            wait_p99_s: each(0.0025),
        },
        ..TrainRecord::default()
    }));
    let mut r = RunRecord::assemble(Default::default(), Default::default(), Default::default());
    (r.id, r.label, r.tool_params, r.training) = (Some(id), Some(label.into()), t.params(), Some(t));
    r
}
