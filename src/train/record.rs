//! A training run as a stored run: a read phase per epoch (its ranks as tasks, so the read
//! rate is the store's usual figure, with its page-cache flag), the study's figures typed
//! (`training`) and by name in `tool_params` (`train.au`, ...), and its honesty flags as
//! warnings.

use super::emulate::Outcome;
use super::figures;
use super::Settings;
use crate::env::Environment;
use crate::measure::histogram::Latency;
use crate::measure::Series;
use crate::record::execution::{PageCache, PhaseOutcome};
use crate::record::train::{CheckpointRecord, EpochFigures, TrainRecord, Training};
use crate::record::{PhaseRecord, RunRecord, Status};
use crate::spec::{Data, Op, Workload};

/// The figures of a run, as printed and stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Mean AU over ranks and epochs (a fraction).
    pub au: f64,
    /// Each rank's AU, mean over epochs.
    pub rank_au: Vec<f64>,
    /// Samples per second summed over ranks, mean over epochs.
    pub samples_per_sec: f64,
    /// Bytes read per second over the epochs' wall time.
    pub read_bytes_per_sec: f64,
    /// The median and 99th percentile of the steps' data waits, seconds.
    pub wait_p50: Option<f64>,
    /// See `wait_p50`.
    pub wait_p99: Option<f64>,
    /// Whether the AU reached the workload's.
    pub pass: bool,
    /// Client CPU time per sample read, seconds.
    pub cpu_per_sample: Option<f64>,
}

/// The figures of an outcome by DLIO's definitions.
pub fn summarize(s: &Settings, o: &Outcome) -> Summary {
    let f = figures::run(&o.epochs, s.batch);
    let rank_au = (0..s.accelerators)
        .map(|r| {
            let each: Vec<f64> = o.epochs.iter().filter_map(|e| e.get(r)).map(|x| x.au()).collect();
            each.iter().sum::<f64>() / each.len().max(1) as f64
        })
        .collect();
    let wall: u64 = o.epochs.iter().map(|e| e.iter().map(|r| r.wall_ns).max().unwrap_or(0)).sum();
    Summary {
        au: f.au,
        rank_au,
        samples_per_sec: f.samples_per_sec,
        read_bytes_per_sec: if wall == 0 { 0.0 } else { o.bytes as f64 / (wall as f64 / 1e9) },
        wait_p50: figures::wait_quantile(&o.epochs, 0.5),
        wait_p99: figures::wait_quantile(&o.epochs, 0.99),
        pass: f.au >= s.au,
        cpu_per_sample: (o.samples > 0).then(|| o.cpu_ns as f64 / 1e9 / o.samples as f64),
    }
}

/// The flags beyond DLIO's: a data set the page cache could hold, a rehearsal, a client
/// whose CPU was the limit.
pub fn flags(s: &Settings, o: &Outcome, sum: &Summary, cpus: usize) -> Vec<String> {
    let mut out = Vec::new();
    let data = s.dataset_bytes();
    if s.ram_bytes > 0 && data < 5u64.saturating_mul(s.ram_bytes) {
        out.push(format!(
            "data set of {} is under 5x the clients' RAM ({}): the page cache can hold much of it, so reads may not reach the storage",
            crate::units::format_size(data),
            crate::units::format_size(s.ram_bytes)
        ));
    }
    if let Some(n) = s.scale {
        out.push(format!("rehearsal at --scale 1/{n}: the data set is 1/{n} of the rule's; not a result"));
    }
    // Readers that kept every core busy were the limit, not the storage.
    let busy = o.cpu_ns as f64 / (o.wall_ns.max(1) as f64 * cpus.max(1) as f64);
    if !sum.pass && busy > 0.8 {
        out.push(format!(
            "the client's CPUs were {:.0}% busy: the AU shortfall may be the client's, not the storage's",
            busy * 100.0
        ));
    }
    out
}

/// The stored run.
pub fn run_record(
    s: &Settings,
    o: &Outcome,
    (env, command_line, started): (Environment, String, i64),
    (caches_dropped, warnings): (bool, Vec<String>),
) -> RunRecord {
    let sum = summarize(s, o);
    let w = train_workload(s);
    let page_cache = if s.direct { PageCache::Bypassed } else { PageCache::Through };
    let phases: Vec<PhaseRecord> = o
        .timings
        .iter()
        .enumerate()
        .map(|(e, tasks)| phase((Op::Read, e as u32), tasks.clone(), &w, &env, (caches_dropped && e == 0, page_cache)))
        .collect();
    // What DLIO's formulas take, per rank (over its epochs), so that they can be applied again
    // to the same step times from the record alone (bench/vs-dlio): compute of every step but
    // the first, and the first step's wait and compute; the wall time is each read phase's.
    let per_rank = |f: &dyn Fn(&super::figures::RankEpoch) -> u64| -> Vec<f64> {
        (0..s.accelerators).map(|r| o.epochs.iter().filter_map(|e| e.get(r)).map(f).sum::<u64>() as f64 / 1e9).collect()
    };
    let figures = TrainRecord {
        au: Some(sum.au),
        pass: Some(sum.pass),
        rank_au: sum.rank_au,
        samples_per_s: Some(sum.samples_per_sec),
        read_mib_s: Some(sum.read_bytes_per_sec / (1 << 20) as f64),
        wait_p50_s: sum.wait_p50,
        wait_p99_s: sum.wait_p99,
        cpu_per_sample_s: sum.cpu_per_sample,
        // The samples `compare` makes an interval of when one run is all a side has.
        epoch: epoch_figures(s, o),
        rank_compute_s: per_rank(&|e| e.steps.iter().skip(1).map(|x| x.compute_ns).sum()),
        rank_first_step_s: per_rank(&|e| e.steps.first().map_or(0, |x| x.wait_ns + x.compute_ns)),
        ..train_settings(s)
    };
    stored(train_name(s), w, (env, command_line, started), phases, (warnings, Training::Train(Box::new(figures))))
}

/// Each epoch's AU, samples/s, read MiB/s and step waits (p50, p99).
fn epoch_figures(s: &Settings, o: &Outcome) -> EpochFigures {
    let mut each = EpochFigures::default();
    for (e, ranks) in o.epochs.iter().enumerate() {
        let f = figures::epoch(ranks, s.batch);
        each.au.push(f.au);
        each.samples_per_s.push(f.samples_per_sec);
        let wall = ranks.iter().map(|r| r.wall_ns).max().unwrap_or(0);
        let bytes: u64 = o.timings.get(e).map_or(0, |t| t.iter().map(|t| t.bytes).sum());
        each.read_mib_s.push(if wall == 0 { 0.0 } else { bytes as f64 / (wall as f64 / 1e9) / (1 << 20) as f64 });
        let one = std::slice::from_ref(ranks);
        each.wait_p50_s.extend(figures::wait_quantile(one, 0.5));
        each.wait_p99_s.extend(figures::wait_quantile(one, 0.99));
    }
    each
}

/// A training run before it has measured anything: its settings and facts, no figures. The
/// signal path and the janitor store it, as failed, should the process end before the run
/// files its own record; a run that fails files it with why.
pub fn train_skeleton(s: &Settings, facts: (Environment, String, i64)) -> RunRecord {
    stored(
        train_name(s),
        train_workload(s),
        facts,
        Vec::new(),
        (Vec::new(), Training::Train(Box::new(train_settings(s)))),
    )
}

fn train_name(s: &Settings) -> String {
    format!("train {} {} x{}", s.model.name(), s.accelerator.name(), s.accelerators)
}

/// The reads of a training run as a workload: each rank a task reading its block.
fn train_workload(s: &Settings) -> Workload {
    let data = Data {
        transfer: match s.format {
            super::format::Format::Tfrecord => s.transfer,
            _ => super::WHOLE_CALL,
        },
        block: s.dataset_bytes() / s.accelerators as u64,
        direct: s.direct,
        ..Data::default()
    };
    Workload { ops: vec![Op::Read], tasks: s.accelerators, seed: s.seed, ..Workload::from(data) }
}

/// The settings a training run is filed with, before its figures.
fn train_settings(s: &Settings) -> TrainRecord {
    TrainRecord {
        workload: s.model.name().into(),
        accelerator: Some(s.accelerator.name().into()),
        accelerators: Some(s.accelerators),
        format: Some(s.format.name().into()),
        batch: Some(s.batch),
        compute_s: Some(s.compute),
        steps: Some(s.steps),
        epochs: Some(s.epochs.into()),
        files: Some(s.files),
        sample_bytes: Some(s.sample_bytes),
        au_target: Some(s.au),
        scale: s.scale,
        ..TrainRecord::default()
    }
}

/// A study's run as the store keeps every run.
fn stored(
    name: String,
    workload: Workload,
    (env, command_line, started): (Environment, String, i64),
    phases: Vec<PhaseRecord>,
    (warnings, training): (Vec<String>, Training),
) -> RunRecord {
    RunRecord {
        id: None,
        survey_id: None,
        name: Some(name),
        started,
        status: Status::Ok,
        error: None,
        command_line,
        workload,
        env,
        phases,
        // The figures by name too, as `show`, `export` and scripts read them.
        tool_params: training.params(),
        training: Some(training),
        warnings,
        sweep_id: None,
        hosts: vec![crate::env::hostname()],
        clock_uncertainty_ns: 0,
        reorder_crosses_nodes: false,
        failure_hint: None,
        interrupted: false,
        provenance: "measured".into(),
        label: None,
        matrix_id: None,
        campaign_id: None,
        targets_id: None,
        events: Vec::new(),
    }
}

/// A phase of every rank as a stored phase.
fn phase(
    (op, iteration): (Op, u32),
    tasks: Vec<crate::measure::TaskTiming>,
    w: &Workload,
    env: &Environment,
    (dropped, page_cache): (bool, PageCache),
) -> PhaseRecord {
    let p = PhaseOutcome {
        op,
        iteration,
        tasks,
        verify: None,
        caches_dropped: dropped,
        latency: Latency::default(),
        series: Series::default(),
        requests: Vec::new(),
    };
    PhaseRecord::from_outcome(p, w, env, (false, page_cache))
}

/// A checkpoint study as a stored run: a write phase per checkpoint, a read phase per
/// checkpoint read back, and its figures typed and by name (`ckpt.*`).
pub fn checkpoint_record(
    c: &super::checkpoint::Checkpoints,
    o: &super::checkpoint::Outcome,
    (env, command_line, started): (Environment, String, i64),
    mut warnings: Vec<String>,
) -> RunRecord {
    let w = checkpoint_workload(c);
    let mut phases = Vec::new();
    for (k, p) in o.writes.iter().enumerate() {
        phases.push(phase((Op::Write, k as u32), p.tasks.clone(), &w, &env, (false, PageCache::Through)));
    }
    for (k, p) in o.reads.iter().enumerate() {
        phases.push(phase((Op::Read, k as u32), p.tasks.clone(), &w, &env, (o.dropped && k == 0, PageCache::Through)));
    }
    let uncovered: Vec<&str> = o.clients.iter().filter(|cl| cl.uncovered()).map(|cl| cl.host.as_str()).collect();
    if !uncovered.is_empty() {
        warnings.push(format!(
            "checkpoints under 3x the client's RAM read back without the page cache dropped on {}: the reads may be the cache's",
            uncovered.join(", ")
        ));
    }
    if let Some(n) = c.scale {
        warnings.push(format!("rehearsal at --scale 1/{n}: the checkpoint is 1/{n} of the model's; not a result"));
    }
    let mean = |xs: Vec<f64>| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let gib = (1u64 << 30) as f64;
    let wrote = !o.writes.is_empty();
    let figures = CheckpointRecord {
        write_max_duration_s: wrote.then(|| mean(o.writes.iter().map(|p| p.max_secs()).collect())),
        write_min_gib_s: wrote.then(|| mean(o.writes.iter().map(|p| p.min_rate() / gib).collect())),
        read_max_duration_s: o.reads.first().map(|_| mean(o.reads.iter().map(|p| p.max_secs()).collect())),
        read_min_gib_s: o.reads.first().map(|_| mean(o.reads.iter().map(|p| p.min_rate() / gib).collect())),
        recovery_s: o.reads.first().map(|first| first.max_secs()),
        cache_rule: (!o.clients.is_empty())
            .then(|| o.clients.iter().map(|cl| cl.said()).collect::<Vec<_>>().join("; ")),
        ..checkpoint_settings(c)
    };
    stored(
        checkpoint_name(c),
        w,
        (env, command_line, started),
        phases,
        (warnings, Training::Checkpoint(Box::new(figures))),
    )
}

/// A checkpoint study before it has measured anything (see [`train_skeleton`]).
pub fn checkpoint_skeleton(c: &super::checkpoint::Checkpoints, facts: (Environment, String, i64)) -> RunRecord {
    stored(
        checkpoint_name(c),
        checkpoint_workload(c),
        facts,
        Vec::new(),
        (Vec::new(), Training::Checkpoint(Box::new(checkpoint_settings(c)))),
    )
}

fn checkpoint_name(c: &super::checkpoint::Checkpoints) -> String {
    format!("checkpoint {} x{}", c.model.name(), c.ranks)
}

fn checkpoint_workload(c: &super::checkpoint::Checkpoints) -> Workload {
    let data = Data { transfer: c.transfer, block: c.rank_bytes(), fsync: true, ..Data::default() };
    let ops = [(Op::Write, c.writes), (Op::Read, c.reads)].into_iter().filter(|(_, n)| *n > 0).map(|(op, _)| op);
    Workload { ops: ops.collect(), tasks: c.ranks, ..Workload::from(data) }
}

fn checkpoint_settings(c: &super::checkpoint::Checkpoints) -> CheckpointRecord {
    CheckpointRecord {
        model: c.model.name().into(),
        ranks: Some(c.ranks),
        shards: Some(c.shards),
        rank_bytes: Some(c.rank_bytes()),
        checkpoints: Some(c.writes.into()),
        reads: Some(c.reads.into()),
        shift: Some(c.shift),
        scale: c.scale,
        ..CheckpointRecord::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Accelerator, Model, Overrides};
    use super::*;

    /// A failed AU on a client whose CPUs were busy is said to be the client's; the same
    /// shortfall on an idle client, and a pass on a busy one, are not.
    #[test]
    fn a_failed_au_on_a_busy_client_is_said_to_be_the_clients() {
        // 1000 samples of 1 MiB on a client of 1 MiB: no data set flag to muddle the count.
        let over = Overrides { files: Some(1000), sample_bytes: Some(1 << 20), batch: Some(1), ..Default::default() };
        let s =
            Settings::resolve((Model::Unet3d, Accelerator::H100, 1), &over, (1 << 20, None), (1, 1, false)).unwrap();
        let run = |cpu_ns| Outcome {
            epochs: Vec::new(),
            timings: Vec::new(),
            samples: 100,
            bytes: 0,
            cpu_ns,
            wall_ns: 1_000_000_000,
        };
        let figures = |pass| Summary {
            au: 0.5,
            rank_au: vec![0.5],
            samples_per_sec: 0.0,
            read_bytes_per_sec: 0.0,
            wait_p50: None,
            wait_p99: None,
            pass,
            cpu_per_sample: None,
        };
        let said = |cpu_ns, pass| -> Vec<String> { flags(&s, &run(cpu_ns), &figures(pass), 4) };
        // 3.6 s of CPU in 1 s on 4 CPUs: 90% busy.
        let busy = said(3_600_000_000, false);
        assert_eq!(busy.len(), 1, "{busy:?}");
        assert!(busy[0].contains("CPUs were 90% busy: the AU shortfall may be the client's"), "{busy:?}");
        assert!(said(1_000_000_000, false).is_empty(), "25% busy: the storage's shortfall");
        assert!(said(3_600_000_000, true).is_empty(), "a pass is a pass");
    }
}
