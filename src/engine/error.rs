//! The engine's errors: what failed, on which file and offset, and what the user can do.

use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// A failure on the data path or while preparing the target.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A system call failed.
    #[error("{op} failed on {path}{at}: {source}", at = .offset.map(|o| format!(" at offset {o}")).unwrap_or_default())]
    Io {
        /// The call: open, write, read, fsync, close, ...
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// Byte offset, for data transfers.
        offset: Option<u64>,
        /// The system's reason.
        source: io::Error,
    },
    /// A read hit the end of a file before the workload's size.
    #[error("read of {path} at offset {offset} got {got} of {want} bytes: the file is shorter than the workload")]
    ShortRead {
        /// The file.
        path: PathBuf,
        /// Where the read started.
        offset: u64,
        /// Bytes returned before end of file.
        got: usize,
        /// Bytes asked for.
        want: usize,
    },
    /// The I/O engine cannot run here.
    #[error("the {engine} engine is not available here: {why}")]
    EngineUnavailable {
        /// Engine name.
        engine: &'static str,
        /// The system's reason.
        why: String,
    },
    /// A signal asked the run to stop.
    #[error("interrupted by a signal")]
    Interrupted,
    /// The target directory is not there.
    #[error("target directory {0} does not exist")]
    MissingDir(PathBuf),
    /// The target is a file, not a directory.
    #[error("target {0} is not a directory")]
    NotADir(PathBuf),
    /// The target is the root directory.
    #[error("target is the root directory /, where iosurvey would scatter files")]
    RootDir,
    /// The target holds files iosurvey did not create.
    #[error("target {dir} holds {count} entries iosurvey did not create (first: {first})")]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
        /// How many foreign entries.
        count: usize,
        /// One of them.
        first: String,
    },
    /// Not enough free space for the files to write.
    #[error("the run needs {need} of free space in {dir} but only {free} is free")]
    NoSpace {
        /// The directory.
        dir: PathBuf,
        /// Bytes to be written, formatted.
        need: String,
        /// Free bytes, formatted.
        free: String,
    },
    /// The file system refuses O_DIRECT.
    #[error("the file system at {0} refuses direct I/O (O_DIRECT)")]
    DirectRefused(PathBuf),
    /// Transfers not aligned for O_DIRECT.
    #[error("direct I/O needs transfers that are multiples of {align} bytes on {dir}, got {transfer}")]
    DirectMisaligned {
        /// The directory.
        dir: PathBuf,
        /// Required alignment.
        align: u64,
        /// The transfer given.
        transfer: u64,
    },
}

impl EngineError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            EngineError::Io { source, op, .. } => match source.raw_os_error() {
                Some(libc::ENOSPC) | Some(libc::EDQUOT) => "free space on the target or make the run smaller (--block, --total)".into(),
                Some(libc::EACCES) | Some(libc::EPERM) => "check the permissions of the target, or pick a directory you may write to".into(),
                Some(libc::EROFS) => "the file system is mounted read-only; pick a writable target".into(),
                Some(libc::ENOENT) if *op == "open" => "the file is missing: run a write phase first (--op write,read) or keep the files of an earlier run (--keep)".into(),
                Some(libc::EINVAL) if *op == "open" => "the file system may refuse O_DIRECT; drop --direct".into(),
                Some(libc::EIO) => "the device reported an I/O error; look at dmesg".into(),
                _ => "check the target file system and retry".into(),
            },
            EngineError::EngineUnavailable { .. } => {
                "pick another --engine ('iosurvey engines' lists what this machine allows)".into()
            }
            EngineError::Interrupted => "the run is stored as failed and its files removed; run it again".into(),
            EngineError::ShortRead { .. } => "read what was written: match --block, --segments and --tasks to the write run, or add write to --op".into(),
            EngineError::MissingDir(_) => "create the directory first, or give an existing one with --dir".into(),
            EngineError::NotADir(_) => "give a directory with --dir".into(),
            EngineError::RootDir | EngineError::NotEmpty { .. } => "give an empty directory, or pass --force to use it anyway (iosurvey still removes only its own files)".into(),
            EngineError::NoSpace { .. } => "free space, make the run smaller (--block, --total), or pass --no-space-check if the file system compresses or deduplicates".into(),
            EngineError::DirectRefused(_) => "drop --direct, or use a file system that supports O_DIRECT".into(),
            EngineError::DirectMisaligned { align, .. } => format!("use a --transfer that is a multiple of {align}"),
        }
    }

    /// A system-call error with its context.
    pub fn io(op: &'static str, path: &std::path::Path, offset: Option<u64>, source: io::Error) -> Self {
        EngineError::Io { op, path: path.to_path_buf(), offset, source }
    }
}
