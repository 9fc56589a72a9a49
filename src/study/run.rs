//! `run`: one workload (IOR-style), or a sweep of client counts, on a directory or block devices.

use super::common::{device_flags_need_a_device, DeviceArgs, TeamArgs};
use super::Error;
use crate::spec::{Access, Shape, Workload};
use std::path::PathBuf;

/// The settings of `iosurvey run`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct RunArgs {
    /// Directory under test: empty, or holding only iosurvey's files (a missing leaf is made).
    #[arg(long, value_name = "DIR", required_unless_present = "device", conflicts_with = "device")]
    pub dir: Option<PathBuf>,
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
