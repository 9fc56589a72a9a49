//! `survey`: the standard battery on one target.

use super::common::{tasks_arg, TargetArgs};
use super::Error;
use std::path::PathBuf;

/// The settings of `iosurvey survey`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct SurveyArgs {
    /// Directory in which to make the survey's scratch directory (default: the current one).
    pub dir: Option<PathBuf>,
    /// Bytes each sequential workload moves per phase.
    #[arg(long, value_parser = crate::units::size_arg, default_value = "1365m")]
    pub size: u64,
    /// Tasks (default: the number of CPUs).
    #[arg(long, value_parser = tasks_arg)]
    pub tasks: Option<usize>,
    /// Seconds each random 4 KiB phase runs.
    #[arg(long, default_value_t = 3.0)]
    pub random_secs: f64,
    /// Runs of each workload (separate runs, in turn), so that every figure and finding has
    /// an interval; 1 gives single samples, said so.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repetitions: u32,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

impl SurveyArgs {
    /// Refuses, before anything is made, settings that cannot run. (The size is checked
    /// against the team's tasks when it plays.)
    pub fn validate(&self) -> Result<(), Error> {
        if !(self.random_secs > 0.0 && self.random_secs.is_finite()) {
            return Err(Error::refused(
                format!("--random-secs {} is not a positive number of seconds", self.random_secs),
                "give --random-secs above 0, e.g. 3",
            ));
        }
        Ok(())
    }
}
