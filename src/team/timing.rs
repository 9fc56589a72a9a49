//! The team's own costs (`iosurvey team-timing`, for bench/scale): barriers and the gather of
//! what each task reports after a phase, timed over rounds.

use super::{Member, Team};
use std::time::Instant;

/// What `team-timing` prints (one JSON line, from the lead).
#[derive(serde::Serialize)]
/// The team's costs, as `team-timing` prints them.
#[allow(missing_docs)]
pub struct TeamTiming {
    processes: usize,
    nodes: usize,
    start_ms: f64,
    init_ms: f64,
    nodes_ms: f64,
    clock_ms: f64,
    clock_uncertainty_us: f64,
    barrier_us: f64,
    gather_us: f64,
    gather_bytes_per_task: usize,
}

/// Times `rounds` barriers and gathers of one member per process; `start_ns` is how long
/// the team took to form.
pub fn measure<T: Team>(team: &T, rounds: u32, start_ns: u64) -> TeamTiming {
    use crate::measure::TaskTiming;
    let member = team.members(1).pop().expect("one member");
    let rounds = rounds.max(1);
    member.barrier();
    let t = Instant::now();
    for _ in 0..rounds {
        member.barrier();
    }
    let barrier_us = t.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    // A gather of what each task reports after a phase: its timing record.
    let record = TaskTiming { task: member.rank() as u32, bytes: 1 << 30, ..TaskTiming::default() };
    let bytes = serde_json::to_vec(&record).map_or(0, |b| b.len());
    member.barrier();
    let t = Instant::now();
    for _ in 0..rounds {
        let _ = member.gather(record);
    }
    let gather_us = t.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    TeamTiming {
        processes: team.processes(),
        nodes: team.hosts().len(),
        start_ms: start_ns as f64 / 1e6,
        init_ms: team.startup().init_ns as f64 / 1e6,
        nodes_ms: team.startup().nodes_ns as f64 / 1e6,
        clock_ms: team.startup().clock_ns as f64 / 1e6,
        clock_uncertainty_us: team.clock_uncertainty() as f64 / 1e3,
        barrier_us,
        gather_us,
        gather_bytes_per_task: bytes,
    }
}
