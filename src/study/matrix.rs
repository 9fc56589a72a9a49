//! `matrix`: IOzone's file x record matrix.

use super::common::{stand_in_arg, tasks_arg, TargetArgs};
use super::Error;
use crate::plan::matrix::{Grid, Kind};
use std::path::PathBuf;

/// The options of `iosurvey matrix`, with IOzone's letter where it has one.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct MatrixArgs {
    /// Where to make the matrix's fresh directory (removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Test kinds (IOzone -i): names (write, rewrite, read, reread, random-read, random-write,
    /// backward-read, record-rewrite, stride-read, stream-write, stream-read, vectored-write,
    /// vectored-read, mix), IOzone's numbers (0-8, 11, 12) or all.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub kinds: Vec<String>,
    /// Smallest file size (IOzone -n).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "64k")]
    pub min_file: u64,
    /// Largest file size (IOzone -g).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "512m")]
    pub max_file: u64,
    /// Smallest record size (IOzone -y).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "4k")]
    pub min_record: u64,
    /// Largest record size (IOzone -q).
    #[arg(long, value_parser = crate::units::size_arg, default_value = "16m")]
    pub max_record: u64,
    /// Also records under 64 KiB on files over 16 MiB, which IOzone's -a skips unless -z.
    #[arg(long)]
    pub all_records: bool,
    /// O_DIRECT (IOzone -I); the stream kinds are then left out.
    #[arg(long)]
    pub direct: bool,
    /// Time to the end of close (IOzone -c); without --include-fsync a write phase then makes no
    /// fsync, even with --fsync-after, as IOzone's -c alone.
    #[arg(long)]
    pub include_close: bool,
    /// Time each write phase's fsync (IOzone -e).
    #[arg(long)]
    pub include_fsync: bool,
    /// fsync each write phase after its timing, untimed, as IOzone's children and its
    /// automatic mode do unless -c alone (`iosurvey iozone` sets it): the next phase then
    /// starts from clean pages.
    #[arg(long)]
    pub fsync_after: bool,
    /// Every cell (by default the adaptive mode measures the cells the findings need).
    #[arg(long)]
    pub full: bool,
    /// Stop choosing cells after this long (e.g. 10m, 90s); the matrix keeps what it has.
    #[arg(long, value_parser = crate::units::parse_long_duration, value_name = "DURATION")]
    pub budget: Option<u64>,
    /// With --full, visits of every cell (the median is shown).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repetitions: u32,
    /// A fall of more than this percentage between neighbouring sizes is a cliff.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub cliff: u32,
    /// For tests: an engine that touches no storage (null, delay:D, delay:D/SIZE:D2) in place
    /// of every kind's own, so that a test can plant cliffs where it knows them.
    #[arg(long, hide = true, value_name = "ENGINE", value_parser = stand_in_arg)]
    pub stand_in: Option<crate::spec::EngineName>,
    /// Also write every cell as CSV to FILE (IOzone -R's role).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Tasks (threads) in each process, each on its own file (IOzone -t); under MPI the team
    /// is ranks x tasks.
    #[arg(long, short = 't', default_value_t = 1, value_parser = tasks_arg)]
    pub tasks: usize,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
}

impl MatrixArgs {
    /// The kinds asked for, each once, in the matrix's order; stream kinds are left out with
    /// `--direct` (stdio's buffer cannot be aligned), with a note.
    pub fn kinds(&self) -> Result<(Vec<Kind>, Vec<String>), Error> {
        let mut asked = Vec::new();
        for word in &self.kinds {
            asked.extend(Kind::parse(word).map_err(|e| Error::refused(e, "see 'iosurvey matrix --help'"))?);
        }
        let mut notes = Vec::new();
        if self.direct && asked.iter().any(|k| matches!(k, Kind::StreamWrite | Kind::StreamRead)) {
            notes.push(
                "stream-write and stream-read are not measured with --direct: stdio's buffer is not aligned".into(),
            );
            asked.retain(|k| !matches!(k, Kind::StreamWrite | Kind::StreamRead));
        }
        let kinds: Vec<Kind> = Kind::ALL.into_iter().filter(|k| asked.contains(k)).collect();
        if kinds.is_empty() {
            return Err(Error::refused(
                "--kinds leaves no kind to measure",
                "name at least one kind, e.g. --kinds write,read",
            ));
        }
        Ok((kinds, notes))
    }

    /// The file x record grid the sizes give.
    pub fn grid(&self) -> Grid {
        Grid::new((self.min_file, self.max_file), (self.min_record, self.max_record), self.all_records)
    }

    /// Refuses, before anything is made, settings that measure nothing: no kind, no cell, no
    /// time.
    pub fn validate(&self) -> Result<(), Error> {
        self.kinds()?;
        if self.grid().cells().is_empty() {
            return Err(Error::refused(
                "the sizes give no cell: every record is larger than every file, or a minimum exceeds its maximum",
                "give --min-record no larger than --max-file, and each minimum no larger than its maximum",
            ));
        }
        if self.budget == Some(0) {
            return Err(Error::refused(
                "--budget 0 leaves no time to measure a cell",
                "give --budget a duration above 0, e.g. 10m",
            ));
        }
        Ok(())
    }
}
