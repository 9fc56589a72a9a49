//! The engine's errors: what failed, on which file and offset, and what the user can do.

use crate::spec::{Hint, Setting};
use crate::sys::errno::{EACCES, EDQUOT, EINVAL, EIO, ELOOP, ENOENT, ENOSPC, EPERM, EROFS};
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
    /// A task's buffers could not be allocated.
    #[error("could not allocate {} of I/O buffers for a task", crate::units::format_size(*.bytes))]
    NoMemory {
        /// Bytes asked for.
        bytes: u64,
    },
}

impl EngineError {
    /// What the user can do about it.
    pub fn hint(&self) -> Hint {
        use Setting::*;
        match self {
            EngineError::Io { source, op, .. } => match source.raw_os_error() {
                // statvfs does not see quotas, so EDQUOT arrives like a full disk, mid-run.
                Some(ENOSPC) | Some(EDQUOT) => {
                    // What sizes the files of data and metadata runs: each front end names
                    // those it has.
                    Hint::say("free space on the target (or raise the quota)")
                        .or(Hint::Lower(vec![Block, Total, Items, ItemBytes]))
                }
                Some(EINVAL) if *op == "open" => {
                    Hint::Because("the file system may refuse O_DIRECT".into(), Box::new(Hint::Drop(Direct)))
                }
                errno => Hint::say(match errno {
                    Some(EACCES) | Some(EPERM) => {
                        "check the permissions of the target, or pick a directory you may write to"
                    }
                    Some(EROFS) => "the file system is mounted read-only; pick a writable target",
                    Some(ENOENT) if *op == "open" => {
                        "the file was removed during the run; run it again in a directory nobody else changes"
                    }
                    Some(ELOOP) => {
                        "a symbolic link replaced one of iosurvey's files during the run; it was not followed"
                    }
                    Some(EIO) => "the device reported an I/O error; look at dmesg",
                    _ => "check the target file system and retry",
                }),
            },
            EngineError::EngineUnavailable { .. } => {
                Hint::Use(Engine, "another one ('iosurvey engines' lists what this machine allows)".into())
            }
            EngineError::Interrupted => {
                Hint::say("the run is stored as failed, and any files it made are removed; run it again")
            }
            EngineError::ShortRead { .. } => Hint::Because(
                "read what was written, with the sizes and tasks of the run that wrote it".into(),
                Box::new(Hint::Add(Ops, Some("write".into()))),
            ),
            EngineError::NoMemory { .. } => Hint::Lower(vec![Iodepth, Transfer, ItemBytes, Tasks]),
        }
    }

    /// A system-call error with its context.
    pub fn io(op: &'static str, path: &std::path::Path, offset: Option<u64>, source: io::Error) -> Self {
        EngineError::Io { op, path: path.to_path_buf(), offset, source }
    }
}
