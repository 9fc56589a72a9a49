//! `run`: one workload (IOR-style), or a sweep of client counts, on a directory or block devices.

use super::common::{device_flags_need_a_device, DeviceArgs, TeamArgs};
use super::Error;
use crate::session::Place;
use crate::spec::{Access, Shape, Workload};
use std::path::PathBuf;

/// The settings of `iosurvey run`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct RunArgs {
    /// Directory under test: empty, or holding only iosurvey's files (a missing leaf is made).
    #[arg(long, value_name = "DIR", required_unless_present_any = ["device", "s3"], conflicts_with_all = ["device", "s3"])]
    pub dir: Option<PathBuf>,
    /// An S3 bucket instead: URL/BUCKET[/PREFIX] (credentials from the AWS environment).
    #[arg(long, value_name = "URL/BUCKET", conflicts_with = "device")]
    pub s3: Option<String>,
    /// Block devices, instead of a directory.
    #[command(flatten)]
    pub device: DeviceArgs,
    /// The workload, as run takes it.
    #[command(flatten)]
    pub workload: Workload,
    /// Aggregate bytes, split evenly over tasks (replaces --block); on a device, the bytes
    /// used from its start (default: all of it).
    #[arg(long, visible_alias = "size", value_parser = crate::units::size_arg, conflicts_with = "block")]
    pub total: Option<u64>,
    /// Who runs it, where it is filed, what else is written.
    #[command(flatten)]
    pub team: TeamArgs,
    /// A metadata run's further base directories (`meta --dir a@b`), after `dir`.
    #[arg(skip)]
    pub more_dirs: Vec<PathBuf>,
}

impl RunArgs {
    /// Refuses, before anything is made, settings that cannot run together: device flags
    /// beside a directory, and one shared region over several devices. (The client counts
    /// are checked against the team when it plays.)
    pub fn validate(&self) -> Result<(), Error> {
        device_flags_need_a_device(&self.device, self.dir.is_some())?;
        let Some(first) = self.device.device.first() else { return Ok(()) };
        if let Shape::Data(d) = &self.workload.shape {
            if d.access == Access::Shared && self.device.device.len() > 1 {
                return Err(Error::refused(
                    format!(
                        "--access shared puts the run's one region on {} alone, of the devices given",
                        first.display()
                    ),
                    "give one device, or leave --access out",
                ));
            }
        }
        Ok(())
    }
}

impl RunArgs {
    /// The run's points, one per client count, and where they go. On block devices: O_DIRECT
    /// unless --buffered, the devices with the user's consent, and used whole (as much of the
    /// smallest, `smallest` of them, as the device given most files holds) unless --size.
    pub fn points(
        &self,
        counts: &[usize],
        smallest: impl FnOnce(&[PathBuf]) -> u64,
    ) -> Result<(crate::plan::List, Place), Error> {
        use crate::plan::List;
        self.validate()?;
        if let Some(spec) = &self.s3 {
            return Ok((
                List::sweep(&super::common::on_bucket(&self.workload), counts, self.total)?,
                super::common::bucket(spec),
            ));
        }
        if self.device.device.is_empty() {
            let place = Place::Dir { dir: self.dir.clone().unwrap_or_default(), more: self.more_dirs.clone() };
            return Ok((List::sweep(&self.workload, counts, self.total)?, place));
        }
        let mut w = self.workload.clone();
        if let Shape::Data(d) = &mut w.shape {
            d.direct = !self.device.buffered;
        }
        let paths = &self.device.device;
        let list = match self.total {
            Some(total) => List::sweep(&w, counts, Some(total))?,
            None => {
                let smallest = smallest(paths);
                List::filling(&w, counts, |p| crate::target::site::whole_devices(p, paths.len(), smallest))?
            }
        };
        let consent = crate::target::device::Consent {
            destroy: self.device.destroy_data.clone(),
            ignore_signature: self.device.ignore_signature,
        };
        Ok((list, Place::Devices { paths: paths.clone(), consent }))
    }
}

/// The size of the smallest of `devices` as this process finds it (0 when it cannot read
/// one: the device's own check then says why).
pub fn smallest_here(devices: &[PathBuf]) -> u64 {
    devices
        .iter()
        .map(|p| crate::target::device::Device::open(p).map_or(0, |d| d.facts().size_bytes))
        .min()
        .unwrap_or(0)
}

/// The size of the smallest of `devices`, as the lead finds it (0 when it cannot read one:
/// the device's own check then says why).
pub fn smallest_device<T: crate::team::Team>(team: &T, devices: &[PathBuf]) -> u64 {
    let mine = (team.process() == 0).then(|| smallest_here(devices));
    crate::team::share_value(team, mine.as_ref())
}
