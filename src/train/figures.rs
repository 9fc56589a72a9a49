//! The figures of a training run, by DLIO's definitions (its `utils/statscounter.py`), from
//! the step times each rank recorded:
//!
//! - a rank's accelerator utilization (AU) in an epoch is its compute time over its wall time,
//!   both without the first step (whose wait fills the pipeline: compute of steps 2.. over the
//!   epoch's wall time less step 1's load and compute);
//! - its samples per second are (steps - 2) / that same time x batch;
//! - an epoch's AU is the mean over ranks, its samples per second the sum over ranks; the
//!   run's figures are the means over epochs.

use serde::{Deserialize, Serialize};

/// One step of one rank, nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// From the end of the previous step (or the epoch's start) until the batch was there.
    pub wait_ns: u64,
    /// The emulated compute.
    pub compute_ns: u64,
}

/// One rank's epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankEpoch {
    /// From the epoch's start to its last step's end (the barrier after it included).
    pub wall_ns: u64,
    /// Its steps, in order.
    pub steps: Vec<Step>,
}

impl RankEpoch {
    /// The time the figures count: the wall time less the first step (its wait and compute).
    pub fn counted_ns(&self) -> u64 {
        let first = self.steps.first().map_or(0, |s| s.wait_ns + s.compute_ns);
        self.wall_ns.saturating_sub(first)
    }

    /// AU as a fraction (DLIO prints percent): compute of steps 2.. over the counted time.
    pub fn au(&self) -> f64 {
        let compute: u64 = self.steps.iter().skip(1).map(|s| s.compute_ns).sum();
        match self.counted_ns() {
            0 => 0.0,
            t => compute as f64 / t as f64,
        }
    }

    /// Samples per second: (steps - 2) / counted time x batch.
    pub fn samples_per_sec(&self, batch: u64) -> f64 {
        let steps = self.steps.len() as f64 - 2.0;
        match self.counted_ns() {
            0 => 0.0,
            _ if steps <= 0.0 => 0.0,
            t => steps / (t as f64 / 1e9) * batch as f64,
        }
    }
}

/// An epoch's figures over ranks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EpochFigures {
    /// Mean AU over ranks (a fraction).
    pub au: f64,
    /// Samples per second summed over ranks.
    pub samples_per_sec: f64,
}

/// An epoch's AU (mean over ranks, weighted by steps as DLIO weighs its blocks) and samples
/// per second (summed over ranks).
pub fn epoch(ranks: &[RankEpoch], batch: u64) -> EpochFigures {
    let steps: usize = ranks.iter().map(|r| r.steps.len()).sum();
    let au = match steps {
        0 => 0.0,
        n => ranks.iter().map(|r| r.au() * r.steps.len() as f64).sum::<f64>() / n as f64,
    };
    EpochFigures { au, samples_per_sec: ranks.iter().map(|r| r.samples_per_sec(batch)).sum() }
}

/// The run's figures: the mean of each over epochs (`epochs[e][r]` is rank r's epoch e).
pub fn run(epochs: &[Vec<RankEpoch>], batch: u64) -> EpochFigures {
    let each: Vec<EpochFigures> = epochs.iter().map(|e| epoch(e, batch)).collect();
    let n = each.len().max(1) as f64;
    EpochFigures {
        au: each.iter().map(|f| f.au).sum::<f64>() / n,
        samples_per_sec: each.iter().map(|f| f.samples_per_sec).sum::<f64>() / n,
    }
}

/// The `q` quantile (0..=1) of the data waits of every step but each rank's first, in
/// seconds: the nearest rank of the sorted waits.
pub fn wait_quantile(epochs: &[Vec<RankEpoch>], q: f64) -> Option<f64> {
    let mut waits: Vec<u64> = epochs.iter().flatten().flat_map(|r| r.steps.iter().skip(1).map(|s| s.wait_ns)).collect();
    if waits.is_empty() {
        return None;
    }
    waits.sort_unstable();
    let at = ((q * waits.len() as f64).ceil() as usize).clamp(1, waits.len()) - 1;
    Some(waits[at] as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn rank(wall: f64, steps: &[(f64, f64)]) -> RankEpoch {
        RankEpoch {
            wall_ns: (wall * S as f64) as u64,
            steps: steps
                .iter()
                .map(|&(w, c)| Step { wait_ns: (w * S as f64) as u64, compute_ns: (c * S as f64) as u64 })
                .collect(),
        }
    }

    /// docs/methodology.md's worked example, step by step.
    #[test]
    fn au_and_samples_follow_dlio_on_a_synthetic_trace() {
        // Rank 0: first step waits 2 s (the pipeline fills), then 4 steps of 1 s compute with
        // 0.25 s waits: wall 3 + 4 x 1.25 = 8 s; counted 8 - 3 = 5 s; compute 4 s: AU 0.8.
        let r0 = rank(8.0, &[(2.0, 1.0), (0.25, 1.0), (0.25, 1.0), (0.25, 1.0), (0.25, 1.0)]);
        // Rank 1: never waits after the first: AU 1.0 over 4 s counted.
        let r1 = rank(7.0, &[(2.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0)]);
        assert!((r0.au() - 0.8).abs() < 1e-9, "{}", r0.au());
        assert!((r1.au() - 1.0).abs() < 1e-9);
        // (5 - 2) / 5 s x batch 4 = 2.4; (5 - 2) / 4 s x 4 = 3.0.
        assert!((r0.samples_per_sec(4) - 2.4).abs() < 1e-9);
        assert!((r1.samples_per_sec(4) - 3.0).abs() < 1e-9);
        let e = epoch(&[r0.clone(), r1.clone()], 4);
        assert!((e.au - 0.9).abs() < 1e-9, "mean over ranks: {}", e.au);
        assert!((e.samples_per_sec - 5.4).abs() < 1e-9, "sum over ranks: {}", e.samples_per_sec);
        // Two epochs: the run's figures are the means over epochs.
        let slow = rank(13.0, &[(2.0, 1.0), (1.5, 1.0), (1.5, 1.0), (1.5, 1.0), (1.5, 1.0)]);
        let f = run(&[vec![r0, r1], vec![slow.clone(), slow]], 4);
        assert!((f.au - (0.9 + 0.4) / 2.0).abs() < 1e-9, "{}", f.au);
        assert!((f.samples_per_sec - (5.4 + 2.0 * 1.2) / 2.0).abs() < 1e-9, "{}", f.samples_per_sec);
    }

    #[test]
    fn the_first_step_is_left_out_of_the_waits() {
        let r = rank(10.0, &[(5.0, 1.0), (0.1, 1.0), (0.3, 1.0), (0.2, 1.0)]);
        assert_eq!(wait_quantile(&[vec![r.clone()]], 0.5), Some(0.2));
        assert_eq!(wait_quantile(&[vec![r]], 0.99), Some(0.3));
    }

    #[test]
    fn too_few_steps_give_zero_not_a_negative_rate() {
        let r = rank(1.0, &[(0.5, 0.1)]);
        assert_eq!(r.samples_per_sec(8), 0.0);
        assert_eq!(r.au(), 0.0);
    }
}
