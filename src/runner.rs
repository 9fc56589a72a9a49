//! Drives one run from a workload to a stored record: checks the target, executes the phases,
//! aggregates, and writes the record (ok or failed) in one transaction.

use crate::engine::target::Target;
use crate::engine::{self, cache, offsets::mix, EngineError, Progress};
use crate::env::{self, Environment};
use crate::record::{RunRecord, Status};
use crate::spec::{Access, Op, SpecError, Workload};
use crate::store::{Store, StoreError};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// Why a run did not succeed.
#[derive(Debug, Error)]
pub enum RunError {
    /// The workload is invalid; nothing ran, nothing was stored.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// The target was refused before the run started; nothing was stored.
    #[error("{0}")]
    Refused(EngineError),
    /// The store could not be opened or written.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The run started and failed; it is stored, marked failed.
    #[error("run {id} failed: {}", .record.error.as_deref().unwrap_or("unknown error"))]
    Failed {
        /// Store id.
        id: i64,
        /// The stored record.
        record: Box<RunRecord>,
        /// What the user can do.
        hint: String,
        /// Exit code: 1 for an error, 3 for bad data, 130 for an interrupt.
        code: i32,
    },
}

impl RunError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            RunError::Spec(_) => "see 'iosurvey run --help'".into(),
            RunError::Refused(e) => e.hint(),
            RunError::Store(e) => e.hint().into(),
            RunError::Failed { hint, .. } => hint.clone(),
        }
    }

    /// The documented exit code (README.md, "Exit codes").
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Failed { code, .. } => *code,
            RunError::Spec(_) | RunError::Refused(_) => 2,
            RunError::Store(_) => 4,
        }
    }
}

/// Watches a run's live progress; returns the function that stops watching.
pub type Watch = dyn Fn(Arc<Progress>) -> Box<dyn FnOnce()>;

/// Settings shared by every run of one command.
pub struct Runner<'a> {
    /// Where records go.
    pub store: &'a mut Store,
    /// The command line, stored with each run.
    pub command_line: String,
    /// Refuse runs that need more space than is free.
    pub space_check: bool,
    /// Called with the live progress of each run; returns a function that stops watching.
    pub watch: Option<&'a Watch>,
}

fn now_unix() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// A token unique to this run, stamped into verified data so that stale data is recognised.
fn run_token() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    mix(nanos, std::process::id() as u64)
}

impl Runner<'_> {
    /// Runs `w` in `target`. The files it creates stay registered in the target for clean-up
    /// by its owner, so that a survey can reuse them across runs.
    pub fn run(
        &mut self,
        target: &mut Target,
        w: &Workload,
        name: Option<&str>,
        survey_id: Option<i64>,
    ) -> Result<RunRecord, RunError> {
        w.validate()?;
        let env: Environment = env::collect(target.dir());
        let files = target.data_files(w.access == Access::Shared, engine::offsets::OffsetMap::new(w).files());
        let mut warnings = Vec::new();
        if w.direct {
            let align = target.direct_alignment().map_err(RunError::Refused)?;
            if w.transfer % align != 0 {
                return Err(RunError::Refused(EngineError::DirectMisaligned {
                    dir: target.dir().to_path_buf(),
                    align,
                    transfer: w.transfer,
                }));
            }
        }
        if w.ops.contains(&Op::Write) {
            if self.space_check {
                target
                    .check_space(&files, engine::offsets::OffsetMap::new(w).file_size())
                    .map_err(RunError::Refused)?;
            }
            target.claim(&files).map_err(RunError::Refused)?;
        }
        let drop_caches = w.drop_caches && cache::can_drop();
        if w.drop_caches && !drop_caches {
            warnings.push(
                "--drop-caches needs root: the page cache was not dropped, reads may come from memory".to_string(),
            );
        }
        let started = now_unix();
        let progress = Progress::new(w.tasks);
        let stop = self.watch.map(|watch| watch(progress.clone()));
        let exec = engine::execute(w, &files, w.signature.unwrap_or_else(run_token), drop_caches, progress);
        if let Some(stop) = stop {
            stop();
        }
        let hint = exec.error.as_ref().map(EngineError::hint);
        let interrupted = matches!(exec.error, Some(EngineError::Interrupted));
        let error = exec.error.as_ref().map(|e| e.to_string());
        let mut record = RunRecord::assemble(w.clone(), env, exec, self.command_line.clone(), started, error);
        record.name = name.map(str::to_string);
        record.survey_id = survey_id;
        record.warnings = warnings;
        let id = self.store.save(&record)?;
        record.id = Some(id);
        match record.status {
            Status::Ok => Ok(record),
            Status::Failed => {
                let stale = record.phases.iter().filter_map(|p| p.verify.as_ref()).any(|v| v.stale > 0);
                let hint = hint.unwrap_or_else(|| {
                    if stale {
                        "the files hold another run's data: write them in the same run (--op write,read)".into()
                    } else {
                        "the storage returned other bytes than were written; check the file system and its devices"
                            .into()
                    }
                });
                let code = if interrupted {
                    130
                } else if record.bad_transfers() > 0 {
                    3
                } else {
                    1
                };
                Err(RunError::Failed { id, record: Box::new(record), hint, code })
            }
        }
    }
}
