//! `meta`: a metadata workload (mdtest-style), which plays as the run it is.

use super::common::{base_dirs, DeviceArgs, TeamArgs};
use super::run::RunArgs;
use super::Error;
use crate::spec::meta::ALL_PHASES;
use crate::spec::{Meta, Op, Workload};
use std::path::PathBuf;

/// The options of `iosurvey meta`, with mdtest's letter in each help line: a short option
/// means what it means to mdtest, or is not given.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct MetaArgs {
    /// Directory under test: empty, or holding only iosurvey's files (a missing leaf is made);
    /// several joined by '@' (mdtest -d a@b, for several metadata servers): task t works in
    /// the (t mod their number)-th.
    #[arg(long, short = 'd', value_name = "DIR[@DIR...]")]
    pub dir: PathBuf,
    /// Items in each directory that holds items (mdtest -I): items per task = this x those
    /// directories.
    #[arg(long, short = 'I', value_name = "N")]
    pub items_per_dir: Option<u64>,
    /// Each task its own tree (mdtest -u): the default, accepted for mdtest's command lines.
    #[arg(long, short = 'u', conflicts_with = "shared")]
    pub unique_dir: bool,
    /// The shape: items, tree, bytes, shift, sync and how calls resolve.
    #[command(flatten)]
    pub meta: crate::spec::Meta,
    /// Files only: no directory items (mdtest -F).
    #[arg(long, short = 'F', conflicts_with_all = ["dirs_only", "phases"])]
    pub files_only: bool,
    /// Directories only: no file items (mdtest -D).
    #[arg(long, short = 'D', conflicts_with = "phases")]
    pub dirs_only: bool,
    /// The phases, in order, e.g. tree-create,file-create,file-stat (default: all of them:
    /// tree-create, dir-create, dir-stat, dir-remove, file-create, file-stat, file-read,
    /// file-remove, tree-remove). Items are made before they are stat'ed, read or removed
    /// (here, or by an earlier run with --keep); the tree before the items, removed after them.
    #[arg(long, value_delimiter = ',', value_parser = meta_phase)]
    pub phases: Vec<crate::spec::Op>,
    /// Only the create phases: tree, directories, files (mdtest -C); with -T, -E, -r, the
    /// phases of each, in mdtest's order.
    #[arg(short = 'C', conflicts_with = "phases")]
    pub create_only: bool,
    /// Only the stat phases (mdtest -T).
    #[arg(short = 'T', conflicts_with = "phases")]
    pub stat_only: bool,
    /// Only the file-read phase (mdtest -E).
    #[arg(short = 'E', conflicts_with = "phases")]
    pub read_only: bool,
    /// Only the remove phases: directories, files, tree (mdtest -r).
    #[arg(short = 'r', conflicts_with = "phases")]
    pub remove_only: bool,
    /// Check every byte read (mdtest -X).
    #[arg(long, short = 'X')]
    pub verify: bool,
    /// Repetitions of the whole set of phases (mdtest -i).
    #[arg(long, short = 'i', default_value_t = 1)]
    pub iterations: u32,
    /// Stop the create phases this many seconds in; every task then finishes as many items
    /// as the most any task made (mdtest -W, with its wear-out).
    #[arg(long = "stonewall", short = 'W', value_name = "SECONDS")]
    pub stonewall_secs: Option<f64>,
    /// sync and drop the page cache before each phase (root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Width of the time series' intervals, in seconds (at least 0.001).
    #[arg(long = "interval", default_value_t = 1.0, value_name = "SECONDS")]
    pub interval_secs: f64,
    /// Who runs it, where it is filed, what else is written.
    #[command(flatten)]
    pub team: TeamArgs,
}

/// A metadata phase by its name.
pub fn meta_phase(text: &str) -> Result<crate::spec::Op, String> {
    crate::spec::meta::ALL_PHASES
        .into_iter()
        .find(|op| op.name() == text)
        .ok_or_else(|| format!("'{text}' is not a metadata phase (tree-create, dir-create, dir-stat, dir-remove, file-create, file-stat, file-read, file-remove, tree-remove)"))
}

impl MetaArgs {
    /// Refuses, before anything is made, settings that cannot run: the run it is must be
    /// made.
    pub fn validate(&self) -> Result<(), Error> {
        self.to_run().map(|_| ())
    }

    /// The metadata study as the run it is: its shape goes into the workload, the rest as
    /// given.
    pub fn to_run(&self) -> Result<RunArgs, Error> {
        let tree = self.meta.tree;
        let items = match self.items_per_dir {
            Some(per) => per.checked_mul(tree.holding()).ok_or_else(|| {
                Error::refused(
                    "--items-per-dir times the directories of the tree is too large",
                    "lower --items-per-dir or --depth",
                )
            })?,
            None => self.meta.items,
        };
        let mut dirs = base_dirs(&self.dir)?;
        let dir = dirs.remove(0);
        let meta = Meta { bases: dirs.clone(), items, ..self.meta.clone() };
        let workload = Workload {
            ops: self.ops(),
            iterations: self.iterations,
            verify: self.verify,
            stonewall_secs: self.stonewall_secs,
            wear_out: self.stonewall_secs.is_some(),
            drop_caches: self.drop_caches,
            interval_secs: self.interval_secs,
            ..Workload::from(meta)
        };
        Ok(RunArgs {
            dir: Some(dir),
            s3: None,
            device: DeviceArgs::default(),
            workload,
            total: None,
            team: self.team.clone(),
            more_dirs: dirs,
        })
    }

    /// The phases, in order: those given, or the classes mdtest's -C, -T, -E and -r pick
    /// (none picks them all), less the directories or files that -F or -D leave out.
    fn ops(&self) -> Vec<Op> {
        let picked = [
            (self.create_only, [Op::TreeCreate, Op::DirCreate, Op::FileCreate].as_slice()),
            (self.stat_only, &[Op::DirStat, Op::FileStat]),
            (self.read_only, &[Op::FileRead]),
            (self.remove_only, &[Op::DirRemove, Op::FileRemove, Op::TreeRemove]),
        ];
        let some = picked.iter().any(|(on, _)| *on);
        let wanted = |o: &Op| !some || picked.iter().any(|(on, ops)| *on && ops.contains(o));
        match (self.phases.is_empty(), self.files_only, self.dirs_only) {
            (false, ..) => self.phases.clone(),
            (_, true, _) => ALL_PHASES
                .into_iter()
                .filter(|o| !matches!(o, Op::DirCreate | Op::DirStat | Op::DirRemove))
                .filter(wanted)
                .collect(),
            (_, _, true) => ALL_PHASES.into_iter().filter(|o| !o.name().starts_with("file-")).filter(wanted).collect(),
            _ => ALL_PHASES.into_iter().filter(wanted).collect(),
        }
    }
}
