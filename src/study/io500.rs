//! `io500`: the IO500 standard list.

use super::common::{tasks_arg, TargetArgs};
use super::Error;
use std::path::PathBuf;

/// The settings of `iosurvey io500`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct Io500Args {
    /// Where to make the run's fresh directory (removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Small sizes and a 2 s stonewall: done within a minute, not valid for submission.
    #[arg(long)]
    pub quick: bool,
    /// Seconds each write phase runs before the stonewall (default 300; 2 with --quick).
    #[arg(long = "stonewall", value_name = "SECONDS")]
    pub stonewall_secs: Option<f64>,
    /// Tasks (threads) in each process; under MPI the team is ranks x tasks.
    #[arg(long, short = 'n', default_value_t = 1, value_parser = tasks_arg)]
    pub tasks: usize,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

impl Io500Args {
    /// Seconds each write phase runs before the stonewall.
    pub fn stonewall(&self) -> f64 {
        self.stonewall_secs.unwrap_or(if self.quick { 2.0 } else { crate::io500::STONEWALL_SECS })
    }

    /// Refuses, before anything is made, settings that cannot run.
    pub fn validate(&self) -> Result<(), Error> {
        let stonewall = self.stonewall();
        if !(stonewall > 0.0 && stonewall.is_finite()) {
            return Err(Error::refused(
                format!("a stonewall of {stonewall} s is not positive"),
                "give --stonewall SECONDS above 0",
            ));
        }
        Ok(())
    }
}
