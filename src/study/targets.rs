//! `targets`: a target survey, the same workload on each target alone and then on 1, 2, 4, ...
//! at once.

use super::common::{base_dirs, device_flags_need_a_device, tasks_arg, DeviceArgs, TargetArgs};
use super::Error;
use crate::spec::{Access, Shape, Workload};
use std::path::PathBuf;

/// The options of `iosurvey targets`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct TargetsArgs {
    /// Directories, one per target, joined by '@' (one per OST, per mount), instead of --device.
    #[arg(long, value_name = "DIR@DIR...", required_unless_present = "device", conflicts_with = "device")]
    pub dir: Option<PathBuf>,
    /// Block devices, instead of a directory.
    #[command(flatten)]
    pub device: DeviceArgs,
    /// The workload, as run takes it.
    #[command(flatten)]
    pub workload: Workload,
    /// Parallel streams (tasks) on each target, each its own region or file.
    #[arg(long, default_value_t = 4, value_parser = tasks_arg)]
    pub streams: usize,
    /// Bytes per target (default: all of the smallest device; 1 GiB per stream in a directory).
    #[arg(long, value_parser = crate::units::size_arg)]
    pub size: Option<u64>,
    /// Runs of each target alone, and of each k at once.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repetitions: u32,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

impl TargetsArgs {
    /// The targets' count: the directories joined by '@', or the devices.
    pub fn count(&self) -> Result<usize, Error> {
        Ok(match &self.dir {
            Some(dir) => base_dirs(dir)?.len(),
            None => self.device.device.len(),
        })
    }

    /// Refuses, before anything is made, settings that cannot compare targets.
    pub fn validate(&self) -> Result<(), Error> {
        device_flags_need_a_device(&self.device, self.dir.is_some())?;
        if self.count()? < 2 {
            return Err(Error::refused(
                "a target survey compares targets, and one is given",
                "give two or more (--device A,B or --dir a@b); for one target, use run",
            ));
        }
        if self.size == Some(0) {
            return Err(Error::refused("--size 0 leaves nothing to move", "give --size above 0, e.g. 4g"));
        }
        if let Shape::Data(d) = &self.workload.shape {
            if d.access == Access::Shared {
                return Err(Error::refused(
                    "a target survey gives each stream its own file or region; --access shared would put every stream on the first target",
                    "leave --access out",
                ));
            }
        }
        Ok(())
    }
}
/// What a run of a target survey is for, read back from its stored name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// One target alone, by its label.
    Alone(String),
    /// The first k targets at once.
    Together(usize),
}

impl Role {
    /// The run's name in the store.
    pub fn name(&self) -> String {
        match self {
            Role::Alone(label) => format!("alone {label}"),
            Role::Together(k) => format!("together {k}"),
        }
    }

    /// The role a stored name says.
    pub fn of(name: &str) -> Option<Role> {
        if let Some(label) = name.strip_prefix("alone ") {
            return Some(Role::Alone(label.to_string()));
        }
        name.strip_prefix("together ").and_then(|k| k.parse().ok()).map(Role::Together)
    }
}

/// The counts of targets the k-at-once runs use: 1, 2, 4, ... and all of them.
pub fn counts(targets: usize) -> Vec<usize> {
    let mut k: Vec<usize> =
        std::iter::successors(Some(1usize), |k| k.checked_mul(2)).take_while(|&k| k < targets).collect();
    k.push(targets.max(1));
    k
}

use super::play::{open, precheck_all, Context, Made, Observer, Outcome};
use crate::record::{GroupKind, RunRecord};
use crate::runner::RunError;
use crate::session::Place;
use crate::team::Team;

/// The bytes each stream moves in a directory when no --size is given: run's default block.
pub const STREAM_BYTES: u64 = 1 << 30;

/// Where the survey's targets are, and the label each is shown by.
fn place(a: &TargetsArgs) -> Result<(Place, Vec<String>), Error> {
    Ok(match &a.dir {
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
            let consent = crate::target::device::Consent {
                destroy: a.device.destroy_data.clone(),
                ignore_signature: a.device.ignore_signature,
            };
            (Place::Devices { paths: paths.clone(), consent }, labels)
        }
    })
}

/// A target survey's workloads: one target alone, k targets at once for each k, and the
/// bytes each target moves.
struct Sizes {
    alone: Workload,
    together: Vec<(usize, Workload)>,
    step: u64,
}

/// The workloads of a target survey of `n` targets (see [`Sizes`]).
fn workloads<T: Team>(a: &TargetsArgs, place: &Place, n: usize, team: &T) -> Result<Sizes, Error> {
    let mut w = a.workload.clone();
    w.tasks = a.streams;
    if let (Shape::Data(d), Place::Devices { .. }) = (&mut w.shape, place) {
        d.direct = !a.device.buffered;
    }
    // Bytes per target: --size, or the smallest device whole, or a GiB per stream.
    let per_target = match (place, a.size) {
        (_, Some(size)) => size,
        (Place::Devices { paths, .. }, None) => super::run::smallest_device(team, paths),
        _ => STREAM_BYTES * a.streams as u64,
    };
    // A size given is split exactly, as run's --total is; the devices whole are rounded down.
    let exact = a.size.is_some();
    let alone = sized(&w, a.streams, per_target, exact)?;
    let step = alone.data().map_or(per_target, |d| d.block * d.segments * a.streams as u64);
    let together: Vec<(usize, Workload)> = counts(n)
        .into_iter()
        .map(|k| Ok((k, sized(&w, k * a.streams, k as u64 * step, exact)?)))
        .collect::<Result<_, Error>>()?;
    Ok(Sizes { alone, together, step })
}

/// Plays a target survey: the same workload on each target alone (its repetitions
/// interleaved over the targets, so a slow minute of the machine falls on all of them), then
/// on the first k targets at once for k = 1, 2, 4, ..., all; every run filed in one group,
/// tN.
pub(super) fn play<T: Team>(
    ctx: &Context,
    a: &TargetsArgs,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    let (place, labels) = place(a)?;
    let n = labels.len();
    let Sizes { alone, together, step } = workloads(a, &place, n, team)?;
    let threads = (n * a.streams).div_ceil(team.processes());
    let all: Vec<Workload> = std::iter::once(alone.clone()).chain(together.iter().map(|t| t.1.clone())).collect();
    precheck_all(team, threads, &all, observer)?;
    let writes = a.workload.ops.iter().any(|o| o.direction() != crate::spec::Op::Read);
    let mut session = open(ctx, team, (place, &a.target), (threads, Vec::new()), observer)?;
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
    let mut records: Vec<RunRecord> = Vec::new();
    let mut failure = None;
    for (i, (role, w, range)) in plan.iter().enumerate() {
        if ctx.cancel.is_cancelled() {
            failure = Some(RunError::Interrupted);
            break;
        }
        if team.process() == 0 {
            observer.progress(&format!("{} ({}/{})", role.name(), i + 1, plan.len()));
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
    let failure = failure.map(Error::from).or(finished.err().map(Error::from));
    Ok(Outcome { records, group: Some(group), notes: Vec::new(), failure, made: Made::Runs })
}

/// `w` with `tasks` streams moving `bytes` in all (`exact`), or as much of it as whole
/// transfers fill.
fn sized(w: &Workload, tasks: usize, bytes: u64, exact: bool) -> Result<Workload, Error> {
    let mut point = Workload { tasks, ..w.clone() };
    match exact {
        true => point.set_total(bytes)?,
        false => point.fill(bytes)?,
    }
    Ok(point)
}
