//! A study as a value: what the command line, a campaign file and a front end (IOR's, mdtest's,
//! IOzone's options) all build, and the library checks and plays. Each kind is one typed
//! struct, at once clap `Args` (its command's flags) and serde (campaign files, stored specs),
//! with its own `validate()` holding every check that needs no team.

pub mod common;
pub mod error;
pub mod hint;
pub mod io500;
pub mod line;
pub mod matrix;
pub mod meta;
pub mod net;
pub mod play;
pub mod point_group;
pub mod run;
pub mod survey;
pub mod targets;
pub mod train;

pub use common::{DeviceArgs, TargetArgs, TeamArgs};
pub use error::{Error, Kind, Spelling};
pub use io500::Io500Args;
pub use matrix::MatrixArgs;
pub use meta::MetaArgs;
pub use net::NetArgs;
pub use play::{play, Context, Made, Observer, Outcome};
pub use run::RunArgs;
pub use survey::SurveyArgs;
pub use targets::TargetsArgs;
pub use train::{CheckpointArgs, TrainArgs};

/// One study of any kind.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Study {
    /// One workload, or a sweep of client counts (`run`).
    Run(Box<RunArgs>),
    /// The standard battery on one target (`survey`).
    Survey(SurveyArgs),
    /// A metadata workload (`meta`).
    Meta(Box<MetaArgs>),
    /// IOzone's file x record matrix (`matrix`).
    Matrix(Box<MatrixArgs>),
    /// The IO500 standard list (`io500`).
    Io500(Io500Args),
    /// A target survey (`targets`).
    Targets(Box<TargetsArgs>),
    /// The network ceiling between nodes (`net`).
    Net(NetArgs),
    /// Training I/O, MLPerf Storage's (`train`).
    Train(Box<TrainArgs>),
    /// Checkpoint I/O, MLPerf Storage's (`checkpoint`).
    Checkpoint(Box<CheckpointArgs>),
}

impl Study {
    /// Refuses, before anything is made, settings that cannot run (each kind's own checks).
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            Study::Run(a) => a.validate(),
            Study::Survey(a) => a.validate(),
            Study::Meta(a) => a.validate(),
            Study::Matrix(a) => a.validate(),
            Study::Io500(a) => a.validate(),
            Study::Targets(a) => a.validate(),
            Study::Net(a) => a.validate(),
            Study::Train(a) => a.validate(),
            Study::Checkpoint(a) => a.validate(),
        }
    }

    /// The command whose flags name this study's settings.
    pub fn command(&self) -> hint::Command {
        use hint::Command;
        match self {
            Study::Run(_) => Command::Run,
            Study::Survey(_) => Command::Survey,
            Study::Meta(_) => Command::Meta,
            Study::Matrix(_) => Command::Matrix,
            Study::Io500(_) => Command::Io500,
            Study::Targets(_) => Command::Targets,
            Study::Net(_) | Study::Train(_) | Study::Checkpoint(_) => Command::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_is_kept_as_data_and_read_back_whole() {
        use clap::Parser;
        #[derive(Parser)]
        struct Line {
            #[command(flatten)]
            run: RunArgs,
        }
        let line =
            Line::parse_from(["run", "--dir", "/scratch/x", "--transfer", "4k", "--block", "8k", "--tasks", "2"]);
        let study = Study::Run(Box::new(line.run));
        let text = serde_json::to_string(&study).unwrap();
        assert!(text.starts_with(r#"{"kind":"run""#), "{text}");
        let back: Study = serde_json::from_str(&text).unwrap();
        let Study::Run(back) = back else { panic!("read back as another kind: {text}") };
        assert_eq!(back.team.tasks, 2);
        assert_eq!(back.workload.data().map(|d| (d.transfer, d.block)), Some((4096, 8192)));
        assert!(back.validate().is_ok());
    }
}
