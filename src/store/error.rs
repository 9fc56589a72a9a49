//! What the store can fail with, and the hint each failure gets.

use crate::spec::{Hint, Setting};
use std::path::PathBuf;
use thiserror::Error;

/// A store failure.
#[derive(Debug, Error)]
pub enum StoreError {
    /// SQLite refused.
    #[error("result store {path}: {}", one_line(.source))]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason.
        source: rusqlite::Error,
    },
    /// Made by a newer iosurvey.
    #[error("result store {path} has schema version {found}, newer than this iosurvey knows ({known})")]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Its version.
        found: i64,
        /// Ours.
        known: i64,
    },
    /// A schema version no iosurvey writes (below 0).
    #[error("result store {path} has schema version {found}, which no iosurvey writes")]
    BadVersion {
        /// The database file.
        path: PathBuf,
        /// Its version.
        found: i64,
    },
    /// A migration that would leave the store inconsistent; nothing was changed.
    #[error("result store {path} (schema version {found}) cannot be migrated: {why}; it was left as it was")]
    Migration {
        /// The database file.
        path: PathBuf,
        /// Its version.
        found: i64,
        /// What is wrong.
        why: &'static str,
    },
    /// No such run.
    #[error("no run with id {0} in the store")]
    NoRun(i64),
    /// No matrix has that id.
    #[error("no matrix m{0} in the store")]
    NoMatrix(i64),
    /// No group has that name.
    #[error("no group {0} in the store")]
    NoGroup(String),
    /// A stored value that cannot be read back.
    #[error("run {0} in the store is damaged: {1}")]
    Damaged(i64, String),
    /// The path cannot hold a store.
    #[error("result store {path}: {why}")]
    BadPath {
        /// The path given.
        path: PathBuf,
        /// Why not.
        why: &'static str,
    },
    /// `ls` or `show` of a store that does not exist.
    #[error("result store {0} does not exist")]
    Missing(PathBuf),
    /// A file that is not an iosurvey store, where one was named.
    #[error("{} is not an iosurvey store: {why}", .path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        why: &'static str,
    },
    /// A merge's input with a write its command did not finish (it was killed while writing).
    #[error("{} holds a write its command did not finish ({}-journal is beside it: the command was killed while writing)", .0.display(), .0.display())]
    Unfinished(PathBuf),
    /// A store named as an input of a merge and as its destination.
    #[error("{} is both an input of the merge and its destination (--into), by name or as the same file", .0.display())]
    SameStore(PathBuf),
    /// A row of an input store that cannot be merged; nothing of the merge was stored.
    #[error("cannot merge {}: {what} (uid {uid}) {why}; nothing was merged", .store.display())]
    Unmergeable {
        /// The input store.
        store: PathBuf,
        /// The row, as the input names it ("its run 12").
        what: String,
        /// Its uid.
        uid: String,
        /// Why not.
        why: String,
    },
    /// An input store that could not be copied to be read.
    #[error("cannot copy {} to read it (into {}): {why}", .path.display(), .to.display())]
    Copy {
        /// The input store.
        path: PathBuf,
        /// Where the copy was to go.
        to: PathBuf,
        /// The system's reason.
        why: String,
    },
    /// A finished run the store could not take; its record went to a file instead.
    #[error("{source}; the run's record was written to {} instead", .to.display())]
    Spilled {
        /// Why the store refused it.
        source: Box<StoreError>,
        /// The JSON file holding the record.
        to: PathBuf,
    },
}

/// What to do about an error SQLite gave: a lock is another process at work, a value of the
/// wrong type is a row altered outside iosurvey; neither is the file's permissions.
pub(super) fn sqlite_hint(e: &rusqlite::Error) -> Hint {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
    match e {
        rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, DatabaseBusy | DatabaseLocked) => Hint::say(
            "another process (a run, a campaign, a merge) holds the store; wait for it to end and run the command again",
        )
        .or(Hint::Use(Setting::Db, "another store".into())),
        rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::IntegralValueOutOfRange(..) => Hint::say(
            "a row of the store holds a value of the wrong type, written outside iosurvey or merged from a store that was; \
             keep a copy of the store, then remove or mend that row with sqlite3",
        ),
        _ => Hint::say("check that the store's file is writable and is an iosurvey store"),
    }
}

/// SQLite's messages may quote SQL over several lines; errors are one line.
pub(super) fn one_line(e: &rusqlite::Error) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

impl StoreError {
    /// What the user can do about it.
    pub fn hint(&self) -> Hint {
        match self {
            StoreError::Sqlite { source, .. } => sqlite_hint(source),
            StoreError::TooNew { .. } => {
                Hint::say("use a newer iosurvey").or(Hint::Use(Setting::Db, "another store".into()))
            }
            StoreError::Migration { .. } => {
                Hint::say("keep a copy of the store and report this").or(Hint::Use(Setting::Db, "another store".into()))
            }
            StoreError::BadVersion { .. } => Hint::Because(
                "(the store was altered outside iosurvey)".into(),
                Box::new(Hint::Use(Setting::Db, "another store".into())),
            ),
            StoreError::NoRun(_) | StoreError::NoMatrix(_) | StoreError::NoGroup(_) => {
                Hint::say("list what is stored with 'iosurvey ls'")
            }
            StoreError::Damaged(..) => Hint::say("the row was altered outside iosurvey; re-run the workload"),
            StoreError::BadPath { .. } => {
                Hint::Use(Setting::Db, "a regular file, or a new name in a directory you may write to".into())
            }
            StoreError::Missing(_) => Hint::Because(
                "(a store is made by the first run that uses it)".into(),
                Box::new(Hint::Use(Setting::Db, "the path of an existing store".into())),
            ),
            StoreError::Spilled { .. } => Hint::say("keep that file; free space or unlock the store and run again"),
            StoreError::NotAStore { .. } => {
                Hint::say("name a store iosurvey made (the --db of its commands), or a new file for one")
            }
            StoreError::SameStore(_) => Hint::say("give --into a new file, or a store that is not one of the inputs"),
            StoreError::Unfinished(p) => Hint::say(format!(
                "open it once, e.g. iosurvey ls --db {}, which rolls that write back, then merge it",
                p.display()
            )),
            StoreError::Unmergeable { .. } => Hint::say(
                "a store changed after it was merged, or was altered; merge into a new store, or leave that store out",
            ),
            StoreError::Copy { .. } => Hint::say("set TMPDIR to a directory with room that you may write to"),
        }
    }

    /// The documented exit code: 2 for what the user named wrongly, 4 for the store itself.
    pub fn exit_code(&self) -> i32 {
        match self {
            StoreError::NoRun(_)
            | StoreError::NoMatrix(_)
            | StoreError::NoGroup(_)
            | StoreError::BadPath { .. }
            | StoreError::Missing(_)
            | StoreError::NotAStore { .. }
            | StoreError::SameStore(_)
            | StoreError::Unfinished(_)
            | StoreError::Unmergeable { .. } => 2,
            _ => 4,
        }
    }
}
