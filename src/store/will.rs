//! The last will of a run in progress: the record the signal path stores, as failed, when the
//! process must end at once (a second signal, or the stop deadline) and the run cannot file
//! its own.
//!
//! Exactly one of the two files the run. The run takes the will back before it stores its own
//! record and says which id it got; the signal path takes the will if it still stands, or else
//! waits, for a bounded time, for the run's own id.

use super::{Store, StoreError};
use crate::record::{RunRecord, Status};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

enum State {
    None,
    Standing {
        store: PathBuf,
        record: Box<RunRecord>,
    },
    /// The run is storing its own record.
    Filing,
    /// The run stored its own record under this id (`None`: it could not).
    Filed(Option<i64>),
}

static WILL: Mutex<State> = Mutex::new(State::None);

fn state() -> std::sync::MutexGuard<'static, State> {
    WILL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A run's will, while it stands; withdrawn on drop.
#[derive(Debug)]
pub struct Armed(());

/// The run storing its own record; says which id it got.
#[derive(Debug)]
pub struct Storing(());

/// Leaves `record` (the run's workload and facts, no phases yet) to be stored in the store at
/// `store` if the process must end before the run files its own record.
pub fn arm(store: &Path, record: RunRecord) -> Armed {
    *state() = State::Standing { store: store.to_path_buf(), record: Box::new(record) };
    Armed(())
}

impl Armed {
    /// Takes the will back so the run can store its own record; `None` when the signal path
    /// has taken it already (the process is ending and that path stores the run).
    pub fn revoke(self) -> Option<Storing> {
        let mut s = state();
        matches!(*s, State::Standing { .. }).then(|| {
            *s = State::Filing;
            Storing(())
        })
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let mut s = state();
        if matches!(*s, State::Standing { .. }) {
            *s = State::None;
        }
    }
}

impl Storing {
    /// The run's record is stored under `id` (`None`: it could not be stored).
    pub fn done(self, id: Option<i64>) {
        *state() = State::Filed(id);
    }
}

impl Drop for Storing {
    fn drop(&mut self) {
        let mut s = state();
        if matches!(*s, State::Filing) {
            *s = State::Filed(None);
        }
    }
}

/// Files the run in progress as failed, with `why` as its error, and returns its id: stores
/// the standing will, or waits up to `patience` for the run's own record. `None` without a
/// run, or when the run's own record is not stored within `patience`.
pub fn execute(why: &str, patience: Duration) -> Option<Result<i64, StoreError>> {
    let deadline = Instant::now() + patience;
    loop {
        let mut s = state();
        match std::mem::replace(&mut *s, State::None) {
            State::Standing { store, mut record } => {
                drop(s);
                record.status = Status::Failed;
                record.error = Some(why.to_string());
                return Some(Store::open(&store).and_then(|mut st| st.save(&record)));
            }
            State::Filing if Instant::now() < deadline => *s = State::Filing,
            State::Filed(Some(id)) => return Some(Ok(id)),
            _ => return None,
        }
        drop(s);
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the will is process-wide, and tests run in parallel threads.
    #[test]
    fn exactly_one_of_the_run_and_the_signal_path_files_the_record() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.db");
        let facts = crate::record::RunFacts { started: 7, ..Default::default() };
        let record = RunRecord::assemble(Default::default(), Default::default(), facts);
        let quick = Duration::from_millis(50);

        let filing = arm(&path, record.clone()).revoke().expect("an untouched will is the run's to revoke");
        assert!(execute("late", quick).is_none(), "the run has not stored its record in time");
        filing.done(Some(41));
        assert_eq!(execute("late", quick).unwrap().unwrap(), 41, "the run's own record, not a second one");

        let armed = arm(&path, record.clone());
        let id = execute("stopped by SIGTERM", quick).expect("a standing will").unwrap();
        assert!(armed.revoke().is_none(), "the run must not store a second record");
        let stored = Store::open(&path).unwrap().load(id).unwrap();
        assert_eq!((stored.status, stored.error.as_deref()), (Status::Failed, Some("stopped by SIGTERM")));
        assert_eq!(stored.started, 7);

        drop(arm(&path, record));
        assert!(execute("after drop", quick).is_none(), "a run that ended drops its will");
        assert_eq!(Store::open(&path).unwrap().list().unwrap().len(), 1);
    }
}
