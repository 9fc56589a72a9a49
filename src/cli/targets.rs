//! `iosurvey targets`: a target survey, obdfilter-survey's and the paper's LUN statistics.
//! The same workload on each target alone (its repetitions interleaved over the targets, so
//! a slow minute of the machine falls on all of them), then on the first k targets at once
//! for k = 1, 2, 4, ..., all; every run filed in one group, tN, that `show tN` lays out
//! (`analysis::targets`).

use super::commands::smallest_device;
use super::opening::{on_lead, open, precheck_all};
use super::{Cli, Failure, TargetsArgs};
use iosurvey::analysis::targets::{counts, Role};
use iosurvey::record::{GroupKind, RunRecord};
use iosurvey::report::Format;
use iosurvey::runner::RunError;
use iosurvey::session::Place;
use iosurvey::spec::{Shape, Workload};
use iosurvey::study::common::base_dirs;
use iosurvey::team::Team;

/// The bytes each stream moves in a directory when no --size is given: run's default block.
const STREAM_BYTES: u64 = 1 << 30;

pub(super) fn targets<T: Team>(cli: &Cli, a: &TargetsArgs, team: &T) -> Result<(), Failure> {
    a.validate()?;
    let (place, labels) = match &a.dir {
        Some(dir) => {
            let mut dirs = base_dirs(dir)?;
            let labels = dirs.iter().map(|d| d.display().to_string()).collect();
            let first = dirs.remove(0);
            (Place::Dir { dir: first, more: dirs }, labels)
        }
        None => {
            let paths = &a.device.device;
            let short: Vec<String> = paths
                .iter()
                .map(|p| p.file_name().map_or(p.display().to_string(), |n| n.to_string_lossy().into_owned()))
                .collect();
            // A label names one target: the last components, unless two share one.
            let unique = short.iter().enumerate().all(|(i, l)| !short[..i].contains(l));
            let labels = if unique { short } else { paths.iter().map(|p| p.display().to_string()).collect() };
            let consent = iosurvey::target::device::Consent {
                destroy: a.device.destroy_data.clone(),
                ignore_signature: a.device.ignore_signature,
            };
            (Place::Devices { paths: paths.clone(), consent }, labels)
        }
    };
    let labels: Vec<String> = labels;
    let n = labels.len();
    let mut w = a.workload.clone();
    w.tasks = a.streams;
    if let Shape::Data(d) = &mut w.shape {
        if matches!(place, Place::Devices { .. }) {
            d.direct = !a.device.buffered;
        }
    }
    // Bytes per target: --size, or the smallest device whole, or a GiB per stream.
    let per_target = match (&place, a.size) {
        (_, Some(size)) => size,
        (Place::Devices { paths, .. }, None) => smallest_device(team, paths),
        _ => STREAM_BYTES * a.streams as u64,
    };
    // A size given is split exactly, as run's --total is; the devices whole are rounded down.
    let exact = a.size.is_some();
    let alone = sized(&w, a.streams, per_target, exact)?;
    let step = alone.data().map_or(per_target, |d| d.block * d.segments * a.streams as u64);
    let together: Vec<(usize, Workload)> = counts(n)
        .into_iter()
        .map(|k| Ok((k, sized(&w, k * a.streams, k as u64 * step, exact)?)))
        .collect::<Result<_, Failure>>()?;
    let threads = (n * a.streams).div_ceil(team.processes());
    let all: Vec<Workload> = std::iter::once(alone.clone()).chain(together.iter().map(|t| t.1.clone())).collect();
    precheck_all(team, threads, &all)?;
    let writes = w.ops.iter().any(|o| o.direction() != iosurvey::spec::Op::Read);
    let mut session = open(cli, team, (place, &a.target), threads, Vec::new())?;
    if writes {
        session.on_lead(|l| l.check_device_writes())?;
    }
    let group = session.begin(
        GroupKind::Targets,
        &serde_json::json!({ "targets": labels, "streams": a.streams, "repetitions": a.repetitions, "bytes_per_target": step }),
    )?;
    let mut plan: Vec<(Role, &Workload, std::ops::Range<usize>)> = Vec::new();
    for _ in 0..a.repetitions {
        plan.extend(labels.iter().enumerate().map(|(i, l)| (Role::Alone(l.clone()), &alone, i..i + 1)));
    }
    for _ in 0..a.repetitions {
        plan.extend(together.iter().map(|(k, w)| (Role::Together(*k), w, 0..*k)));
    }
    let lead = team.process() == 0;
    let mut records: Vec<RunRecord> = Vec::new();
    let mut failure = None;
    for (i, (role, w, range)) in plan.iter().enumerate() {
        if super::CANCEL.is_cancelled() {
            failure = Some(RunError::Interrupted);
            break;
        }
        if lead && !cli.quiet {
            say!("iosurvey: {} ({}/{})", role.name(), i + 1, plan.len());
        }
        let name = role.name();
        match session.run_on(w, (Some(&name), Some(group)), range.clone()) {
            Ok(r) => records.extend(r),
            Err(e) => {
                if let RunError::Failed { record, .. } = &e {
                    records.push((**record).clone());
                }
                failure = Some(e);
                break;
            }
        }
    }
    let finished = session.finish(group, failure.is_none(), None);
    drop(session);
    on_lead(team, || {
        if cli.quiet {
            records.iter().for_each(|r| outln!("run {}", r.id.unwrap_or_default()));
        } else if !records.is_empty() {
            let report = iosurvey::analysis::targets::report(group.number, &records);
            out!("{}", iosurvey::report::exporter(Format::Text).render(&report));
        }
        Ok(())
    })?;
    failure.map_or(Ok(finished?), |e| Err(e.into()))
}

/// `w` with `tasks` streams moving `bytes` in all (`exact`), or as much of it as whole
/// transfers fill.
fn sized(w: &Workload, tasks: usize, bytes: u64, exact: bool) -> Result<Workload, Failure> {
    let mut point = Workload { tasks, ..w.clone() };
    match exact {
        true => point.set_total(bytes)?,
        false => point.fill(bytes)?,
    }
    Ok(point)
}
