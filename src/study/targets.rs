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
