//! The last will of each run in progress: the record the signal path stores, as failed, when
//! the process must end at once (a second signal, or the stop deadline) and the run cannot
//! file its own.
//!
//! Exactly one of the two files a run. The run takes its will back before it stores its own
//! record and says which id it got; the signal path takes every will that still stands, and
//! waits, for a bounded time, for the own ids of runs that are storing. Each run has a will
//! of its own, so sessions of one process may run at the same time.

use super::{Store, StoreError};
use crate::record::{RunRecord, Status};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

enum State {
    Standing {
        store: PathBuf,
        record: Box<RunRecord>,
    },
    /// The run is storing its own record.
    Filing,
    /// The run stored its own record under this id (`None`: it could not).
    Filed(Option<i64>),
}

/// Every run's will, by a number of its own.
struct Wills {
    next: u64,
    runs: BTreeMap<u64, State>,
}

// A static because the signal thread must reach every run's will when the process has to end
// at once, and no run can hand it anything then; it is keyed by run, so it holds no run's
// turn.
static WILLS: Mutex<Wills> = Mutex::new(Wills { next: 0, runs: BTreeMap::new() });

fn wills() -> std::sync::MutexGuard<'static, Wills> {
    WILLS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A run's will, while it stands; withdrawn on drop.
#[derive(Debug)]
pub struct Armed(u64);

/// The run storing its own record; says which id it got.
#[derive(Debug)]
pub struct Storing(u64);

/// Leaves `record` (the run's workload and facts, no phases yet) to be stored in the store at
/// `store` if the process must end before the run files its own record.
pub fn arm(store: &Path, record: RunRecord) -> Armed {
    let mut w = wills();
    // What runs that ended said of themselves was for a signal path that came meanwhile.
    w.runs.retain(|_, s| !matches!(s, State::Filed(_)));
    w.next += 1;
    let id = w.next;
    w.runs.insert(id, State::Standing { store: store.to_path_buf(), record: Box::new(record) });
    Armed(id)
}

impl Armed {
    /// Takes the will back so the run can store its own record; `None` when the signal path
    /// has taken it already (the process is ending and that path stores the run).
    pub fn revoke(self) -> Option<Storing> {
        let mut w = wills();
        let s = w.runs.get_mut(&self.0)?;
        matches!(*s, State::Standing { .. }).then(|| {
            *s = State::Filing;
            Storing(self.0)
        })
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let mut w = wills();
        if matches!(w.runs.get(&self.0), Some(State::Standing { .. })) {
            w.runs.remove(&self.0);
        }
    }
}

impl Storing {
    /// The run's record is stored under `id` (`None`: it could not be stored).
    pub fn done(self, id: Option<i64>) {
        wills().runs.insert(self.0, State::Filed(id));
    }
}

impl Drop for Storing {
    fn drop(&mut self) {
        let mut w = wills();
        if let Some(s @ State::Filing) = w.runs.get_mut(&self.0) {
            *s = State::Filed(None);
        }
    }
}

/// Files every run in progress as failed, with `why` as its error, and returns their ids:
/// stores each standing will, and waits up to `patience` for the records of runs storing
/// their own. Empty without a run; a run whose own record is not stored within `patience`
/// is not among them.
pub fn execute_all(why: &str, patience: Duration) -> Vec<Result<i64, StoreError>> {
    let deadline = Instant::now() + patience;
    let mut filed = Vec::new();
    loop {
        let mut w = wills();
        let mut taken = Vec::new();
        let mut stored = Vec::new();
        let mut storing = false;
        for (id, s) in std::mem::take(&mut w.runs) {
            match s {
                State::Standing { store, record } => taken.push((store, record)),
                State::Filed(Some(run)) => stored.push(run),
                State::Filed(None) => {}
                // A run still storing keeps its place: it files itself, however late.
                State::Filing => {
                    storing = true;
                    w.runs.insert(id, State::Filing);
                }
            }
        }
        drop(w);
        filed.extend(taken.into_iter().map(|(store, record)| store_failed(&store, *record, why)));
        filed.extend(stored.into_iter().map(Ok));
        if !storing || Instant::now() >= deadline {
            return filed;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Files the run in progress as failed and returns its id, as [`execute_all`] does; with
/// several runs in progress, the first one's. `None` without a run.
pub fn execute(why: &str, patience: Duration) -> Option<Result<i64, StoreError>> {
    execute_all(why, patience).into_iter().next()
}

fn store_failed(store: &Path, mut record: RunRecord, why: &str) -> Result<i64, StoreError> {
    record.status = Status::Failed;
    record.error = Some(why.to_string());
    Store::open(store).and_then(|mut st| st.save(&record))
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the wills are the process's, and tests run in parallel threads.
    #[test]
    fn exactly_one_of_the_run_and_the_signal_path_files_the_record() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.db");
        let other = tmp.path().join("other.db");
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

        drop(arm(&path, record.clone()));
        assert!(execute("after drop", quick).is_none(), "a run that ended drops its will");
        assert_eq!(Store::open(&path).unwrap().list().unwrap().len(), 1);

        // Two sessions' runs at once: each will is its own run's.
        let first = arm(&path, record.clone());
        let second = arm(&other, record.clone());
        let filing = first.revoke().expect("the first run's will is its own to revoke");
        let storing = second.revoke().expect("the second run's will is its own, not the first's");
        storing.done(Some(5));
        let ids: Vec<i64> = execute_all("late", quick).into_iter().map(Result::unwrap).collect();
        assert_eq!(ids, [5], "the run that stored its record; the other is still storing");
        filing.done(Some(4));
        let ids: Vec<i64> = execute_all("late", quick).into_iter().map(Result::unwrap).collect();
        assert_eq!(ids, [4]);
        // And the signal path files every will that stands, each in its own store.
        let (first, second) = (arm(&path, record.clone()), arm(&other, record));
        assert_eq!(execute_all("stopped by SIGINT", quick).len(), 2);
        assert!(first.revoke().is_none() && second.revoke().is_none());
        assert_eq!(Store::open(&path).unwrap().list().unwrap().len(), 2);
        assert_eq!(Store::open(&other).unwrap().list().unwrap().len(), 1);
    }
}
