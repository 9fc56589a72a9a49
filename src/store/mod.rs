//! The embedded result store: SQLite through rusqlite, one transaction per run.
//!
//! The schema version is SQLite's `user_version`; [`MIGRATIONS`] lists the steps from an empty
//! file to the current schema, applied in order when a store is opened. A run is written in
//! one transaction, so the store holds whole runs (ok or failed) and never half of one.

use crate::record::net::NetResult;
use crate::record::{BestFigure, GroupId, GroupKind, MatrixRecord, RunRecord, Status};
use crate::spec::{Hint, Setting};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use thiserror::Error;

pub mod campaigns;
pub mod imports;
mod legacy;
pub mod merge;
pub mod select;
pub mod uid;
pub mod will;

/// Schema steps; entry i takes a store from version i to version i + 1. A new store is made
/// at once with the tables they end in, STRICT ([`strict_schema`]): a step that rebuilds a
/// table must say STRICT itself for stores made since.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE surveys (
    id INTEGER PRIMARY KEY,
    started INTEGER NOT NULL,
    target TEXT NOT NULL,
    command_line TEXT NOT NULL
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    survey_id INTEGER REFERENCES surveys(id),
    name TEXT,
    started INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error TEXT,
    command_line TEXT NOT NULL,
    label TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    warnings_json TEXT NOT NULL,
    host TEXT, kernel TEXT, cpu_model TEXT, cpu_count INTEGER, ram_bytes INTEGER,
    target TEXT, fs_type TEXT, mount_source TEXT, mount_point TEXT, mount_options TEXT,
    block_device TEXT, tool_version TEXT
);
CREATE TABLE phases (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    op TEXT NOT NULL,
    iteration INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    ops INTEGER NOT NULL,
    window_ns INTEGER NOT NULL,
    bandwidth REAL, transfer_rate REAL, iops REAL, task_min REAL, task_max REAL,
    first_finish_rate REAL,
    possibly_cached TEXT,
    caches_dropped INTEGER NOT NULL,
    verify_checked INTEGER, verify_bad INTEGER, verify_stale INTEGER, verify_first TEXT
);
CREATE TABLE tasks (
    phase_id INTEGER NOT NULL REFERENCES phases(id),
    task INTEGER NOT NULL,
    node INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    ops INTEGER NOT NULL,
    open_start INTEGER NOT NULL,
    xfer_start INTEGER NOT NULL,
    xfer_end INTEGER NOT NULL,
    sync_end INTEGER NOT NULL,
    close_end INTEGER NOT NULL,
    bytes_at_first_finish INTEGER NOT NULL,
    PRIMARY KEY (phase_id, task)
);
CREATE INDEX runs_by_survey ON runs(survey_id);
"#,
    r#"
CREATE TABLE sweeps (
    id INTEGER PRIMARY KEY,
    started INTEGER NOT NULL,
    parameter TEXT NOT NULL,
    command_line TEXT NOT NULL
);
ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps(id);
ALTER TABLE runs ADD COLUMN clock_uncertainty_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN reorder_crosses_nodes INTEGER NOT NULL DEFAULT 0;
CREATE TABLE nodes (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    node INTEGER NOT NULL,
    host TEXT NOT NULL,
    PRIMARY KEY (run_id, node)
);
CREATE INDEX runs_by_sweep ON runs(sweep_id);
"#,
    r#"
CREATE TABLE net_runs (
    id INTEGER PRIMARY KEY,
    started INTEGER NOT NULL,
    command_line TEXT NOT NULL,
    pattern TEXT NOT NULL,
    senders_json TEXT NOT NULL,
    receivers_json TEXT NOT NULL,
    message INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    window_ns INTEGER NOT NULL,
    bandwidth REAL
);
"#,
    r#"
ALTER TABLE phases ADD COLUMN latency_json TEXT;
ALTER TABLE phases ADD COLUMN lat_p50_ns INTEGER;
ALTER TABLE phases ADD COLUMN lat_p99_ns INTEGER;
ALTER TABLE phases ADD COLUMN lat_max_ns INTEGER;
ALTER TABLE phases ADD COLUMN series_origin_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE phases ADD COLUMN series_interval_ns INTEGER NOT NULL DEFAULT 0;
CREATE TABLE series (
    phase_id INTEGER NOT NULL REFERENCES phases(id),
    idx INTEGER NOT NULL,
    start_ns INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    ops INTEGER NOT NULL,
    PRIMARY KEY (phase_id, idx)
);
"#,
    // v5: each run's record whole, with the columns queries need; [`backfill`] fills them
    // for the runs of older stores from their rows.
    r#"
ALTER TABLE runs ADD COLUMN record_json TEXT;
ALTER TABLE runs ADD COLUMN provenance TEXT NOT NULL DEFAULT 'measured';
ALTER TABLE runs ADD COLUMN workload_key TEXT;
ALTER TABLE runs ADD COLUMN headline_json TEXT;
ALTER TABLE runs ADD COLUMN random INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_by_workload ON runs(workload_key);
CREATE INDEX runs_by_started ON runs(started);
"#,
    // v6: the rows the records replaced.
    r#"
DROP TABLE series;
DROP TABLE tasks;
DROP TABLE phases;
"#,
    // v7: each network figure whole (mode, streams, repetitions, the message-size curve);
    // rows from before hold MPI figures, read from their columns.
    r#"
ALTER TABLE net_runs ADD COLUMN record_json TEXT;
"#,
    // v8: the name the user gave the system measured (`--label`), listed and filtered on.
    r#"
ALTER TABLE runs ADD COLUMN system_label TEXT;
CREATE INDEX runs_by_system_label ON runs(system_label);
"#,
    // v9: file x record matrices (`mN`), each whole; the runs of their cells point to them.
    // A matrix is inserted as failed ("did not finish") and turned ok only when whole.
    r#"
CREATE TABLE matrices (
    id INTEGER PRIMARY KEY,
    started INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    record_json TEXT NOT NULL
);
ALTER TABLE runs ADD COLUMN matrix_id INTEGER REFERENCES matrices(id);
CREATE INDEX runs_by_matrix ON runs(matrix_id);
"#,
    // v10: one table of groups (surveys, io500 lists, sweeps, matrices, campaigns), each
    // named by its letter and number as users type it (s3, w2, m1), which the migration
    // keeps; a run points to its group. The runs table is rebuilt without the per-kind ids
    // and the v4 columns the whole records replaced. Run with foreign keys off (see
    // `connect`): the rebuild drops the table `nodes` points to.
    r#"
CREATE TABLE groups (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('survey', 'io500', 'sweep', 'matrix', 'campaign')),
    letter TEXT NOT NULL,
    number INTEGER NOT NULL,
    parent INTEGER REFERENCES groups(id),
    command_line TEXT NOT NULL,
    started INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'ok', 'failed')),
    spec_json TEXT NOT NULL,
    UNIQUE (letter, number)
);
INSERT INTO groups (kind, letter, number, command_line, started, state, spec_json)
    -- io500 made its directory iosurvey-io500-PID: the last component tells it from a survey.
    SELECT CASE WHEN s.target LIKE '%/iosurvey-io500-%' AND s.target NOT LIKE '%/iosurvey-io500-%/%'
        THEN 'io500' ELSE 'survey' END, 's', s.id,
        s.command_line, s.started,
        CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.survey_id = s.id AND r.status = 'failed')
            THEN 'failed' ELSE 'ok' END,
        json_object('target', s.target)
    FROM surveys s;
INSERT INTO groups (kind, letter, number, command_line, started, state, spec_json)
    SELECT 'sweep', 'w', w.id, w.command_line, w.started,
        CASE WHEN EXISTS (SELECT 1 FROM runs r WHERE r.sweep_id = w.id AND r.status = 'failed')
            THEN 'failed' ELSE 'ok' END,
        json_object('parameter', w.parameter)
    FROM sweeps w;
INSERT INTO groups (kind, letter, number, command_line, started, state, spec_json)
    SELECT 'matrix', 'm', m.id, COALESCE(json_extract(m.record_json, '$.command_line'), ''), m.started, m.status,
        m.record_json
    FROM matrices m;
CREATE TABLE runs_v10 (
    id INTEGER PRIMARY KEY,
    group_id INTEGER REFERENCES groups(id),
    name TEXT,
    started INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error TEXT,
    command_line TEXT NOT NULL,
    label TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    warnings_json TEXT NOT NULL,
    host TEXT,
    target TEXT,
    fs_type TEXT,
    tool_version TEXT,
    record_json TEXT,
    provenance TEXT NOT NULL DEFAULT 'measured',
    workload_key TEXT,
    headline_json TEXT,
    random INTEGER NOT NULL DEFAULT 0,
    system_label TEXT
);
INSERT INTO runs_v10 (id, group_id, name, started, status, error, command_line, label, spec_json, warnings_json,
        host, target, fs_type, tool_version, record_json, provenance, workload_key, headline_json, random,
        system_label)
    SELECT r.id,
        -- Three lookups through the (letter, number) index rather than one scan per run.
        COALESCE((SELECT g.id FROM groups g WHERE g.letter = 's' AND g.number = r.survey_id),
            (SELECT g.id FROM groups g WHERE g.letter = 'w' AND g.number = r.sweep_id),
            (SELECT g.id FROM groups g WHERE g.letter = 'm' AND g.number = r.matrix_id)),
        r.name, r.started, r.status, r.error, r.command_line, r.label, r.spec_json, r.warnings_json,
        r.host, r.target, r.fs_type, r.tool_version, r.record_json, r.provenance, r.workload_key,
        r.headline_json, r.random, r.system_label
    FROM runs r;
DROP TABLE runs;
ALTER TABLE runs_v10 RENAME TO runs;
CREATE INDEX runs_by_group ON runs(group_id);
CREATE INDEX runs_by_workload ON runs(workload_key);
CREATE INDEX runs_by_started ON runs(started);
CREATE INDEX runs_by_system_label ON runs(system_label);
DROP TABLE surveys;
DROP TABLE sweeps;
DROP TABLE matrices;
"#,
    // v11: the workload key holds every setting that changes what is measured (direct, fsync,
    // engine, stonewall, ...); [`rekey`] recomputes it for every stored run.
    "",
    // v12: a metadata workload's key leaves out every field of the data shape (reorder was
    // kept); [`rekey`] again.
    "",
    // v13: campaigns. A group run as a campaign's point (a survey, a matrix) carries the
    // point's study, target label and key, as a run carries them in its name, label and
    // workload key; the hooks run around points are kept with the point they ran for.
    r#"
ALTER TABLE groups ADD COLUMN name TEXT;
ALTER TABLE groups ADD COLUMN label TEXT;
ALTER TABLE groups ADD COLUMN key TEXT;
CREATE INDEX groups_by_parent ON groups(parent);
CREATE TABLE hooks (
    id INTEGER PRIMARY KEY,
    campaign INTEGER NOT NULL REFERENCES groups(id),
    hook TEXT NOT NULL,
    command TEXT NOT NULL,
    study TEXT,
    target TEXT,
    key TEXT,
    repetition INTEGER,
    node TEXT NOT NULL,
    status INTEGER,
    output TEXT NOT NULL,
    secs REAL NOT NULL,
    started INTEGER NOT NULL
);
CREATE INDEX hooks_by_campaign ON hooks(campaign);
"#,
    // v14: target surveys (`targets`, named tN). SQLite cannot change a CHECK, so the groups
    // table is rebuilt with the new kind, rows and ids as they were (foreign keys are off
    // while the steps run, and checked before they commit).
    r#"
CREATE TABLE groups_v14 (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('survey', 'io500', 'sweep', 'matrix', 'campaign', 'targets')),
    letter TEXT NOT NULL,
    number INTEGER NOT NULL,
    parent INTEGER REFERENCES groups(id),
    command_line TEXT NOT NULL,
    started INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'ok', 'failed')),
    spec_json TEXT NOT NULL,
    name TEXT,
    label TEXT,
    key TEXT,
    UNIQUE (letter, number)
);
INSERT INTO groups_v14 (id, kind, letter, number, parent, command_line, started, state, spec_json, name, label, key)
    SELECT id, kind, letter, number, parent, command_line, started, state, spec_json, name, label, key FROM groups;
DROP INDEX groups_by_parent;
DROP TABLE groups;
ALTER TABLE groups_v14 RENAME TO groups;
CREATE INDEX groups_by_parent ON groups(parent);
"#,
    // v15: other tools' files imported (`import`), each once: known by a digest of its bytes,
    // with what it became (runs, a matrix, an IO500 list, network figures).
    r#"
CREATE TABLE imports (
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL UNIQUE,
    file TEXT NOT NULL,
    tool TEXT NOT NULL,
    imported INTEGER NOT NULL,
    stored TEXT NOT NULL
);
"#,
    // v16: a unique id (`uid`) for every row that merges on its own (`merge`): runs, groups,
    // network figures and hooks; what hangs off them (a run's nodes) goes with them, and an
    // import is known by its digest already. Rows of older stores get the uids their content
    // derives ([`uid::fill`]): a store merged before it is migrated is migrated in a copy,
    // every time, and must name its rows alike each time.
    r#"
ALTER TABLE runs ADD COLUMN uid TEXT;
ALTER TABLE groups ADD COLUMN uid TEXT;
ALTER TABLE net_runs ADD COLUMN uid TEXT;
ALTER TABLE hooks ADD COLUMN uid TEXT;
CREATE UNIQUE INDEX runs_by_uid ON runs(uid);
CREATE UNIQUE INDEX groups_by_uid ON groups(uid);
CREATE UNIQUE INDEX net_runs_by_uid ON net_runs(uid);
CREATE UNIQUE INDEX hooks_by_uid ON hooks(uid);
"#,
    // v17: a campaign point's identity in columns ([`campaigns::PointKey`]): a hook keeps its
    // point's tasks beside its key; the keys of groups and hooks kept as text before become
    // their study's key in its normal form ([`campaigns::migrate_point_keys`]).
    r#"
ALTER TABLE hooks ADD COLUMN tasks INTEGER;
"#,
];

/// The schema version after which rows carry their unique id (`uid`), derived for the rows
/// of older stores ([`uid::fill`]).
const UIDS: usize = 16;

/// The schema version after which runs are stored as whole records (the v4 rows are read
/// back into records by [`legacy`] before they are dropped).
const WHOLE_RECORDS: usize = 5;

/// The schema versions after which every run's `workload_key` is recomputed from its record
/// ([`rekey`]): those whose step changed what the key holds.
const NEW_KEYS: &[usize] = &[11, 12];

/// The schema version after which a campaign point's key is its columns
/// ([`campaigns::migrate_point_keys`]).
const POINT_KEYS: usize = 17;

/// The version of the stored record's JSON shape.
const RECORD_VERSION: u32 = 1;

/// A record as the store keeps it: whole, with the version of its shape.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredRecord {
    version: u32,
    record: RunRecord,
}

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
fn sqlite_hint(e: &rusqlite::Error) -> Hint {
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
fn one_line(e: &rusqlite::Error) -> String {
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

/// What a group is when it begins.
#[derive(Debug, Clone)]
pub struct GroupStart {
    /// Survey, sweep, matrix, ...
    pub kind: GroupKind,
    /// The group it is part of (a campaign's studies).
    pub parent: Option<GroupId>,
    /// Start, Unix seconds.
    pub started: i64,
    /// The command line that asked for it.
    pub command_line: String,
    /// What it was asked to do, as JSON.
    pub spec: String,
    /// The campaign point it is, when its parent is a campaign.
    pub point: Option<PointName>,
}

/// A campaign point's name: its study, its target's label and what it measures.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PointName {
    /// The study's name.
    pub study: String,
    /// The target's label.
    pub target: String,
    /// What it measures, at how many tasks and which scale.
    pub key: campaigns::PointKey,
}

/// A group as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    /// Its name.
    pub id: GroupId,
    /// The name of the group it is part of.
    pub parent: Option<String>,
    /// The command line that asked for it.
    pub command_line: String,
    /// Start, Unix seconds.
    pub started: i64,
    /// running, ok or failed ("running" long after its start: its process ended first).
    pub state: String,
    /// What it was asked to do, as JSON.
    pub spec: String,
}

/// A line of `iosurvey ls`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    /// Run id.
    pub id: i64,
    /// Survey id.
    pub survey_id: Option<i64>,
    /// Sweep id.
    pub sweep_id: Option<i64>,
    /// The campaign version it is a point of.
    pub campaign_id: Option<i64>,
    /// The target survey it is a run of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_id: Option<i64>,
    /// Start, Unix seconds.
    pub started: i64,
    /// ok or failed.
    pub status: String,
    /// Workload label.
    pub label: String,
    /// Host of the lead process.
    pub host: String,
    /// Target directory.
    pub target: String,
    /// File system type.
    pub fs_type: String,
    /// Whether the workload visits its transfers in other than sequential order (its figure
    /// of merit is IOPS).
    pub random: bool,
    /// The best figures of each op, in the order the ops first ran.
    pub best: Vec<BestFigure>,
    /// measured, or imported:TOOL.
    pub provenance: String,
    /// The name the user gave the system measured (`--label`).
    pub system: Option<String>,
}

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// What the readers of many rows left out, undecodable: ("run 12", why).
    unreadable: std::cell::RefCell<Vec<(String, String)>>,
}

impl Store {
    /// Opens (creating if needed) and migrates the store at `path`, which must be a regular
    /// file or a new name in a writable directory.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        refuse_link(path)?;
        crate::env::writable_file(path).map_err(|why| StoreError::BadPath { path: path.to_path_buf(), why })?;
        Store::connect(path, OpenFlags::default())
    }

    /// Opens a store that must exist already (for reading); creates nothing.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        refuse_link(path)?;
        if !path.exists() {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        if !path.is_file() {
            return Err(StoreError::BadPath { path: path.to_path_buf(), why: "not a regular file" });
        }
        // Reading never writes a store: an empty file (one being made, say) reads as a store
        // with no runs, made in memory, and stays empty.
        if path.metadata().is_ok_and(|m| m.len() == 0) {
            let mut empty = Store::connect(Path::new(":memory:"), OpenFlags::default())?;
            empty.path = path.to_path_buf();
            return Ok(empty);
        }
        Store::connect(path, OpenFlags::default() - OpenFlags::SQLITE_OPEN_CREATE)
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Store, StoreError> {
        let wrap = |source| StoreError::Sqlite { path: path.to_path_buf(), source };
        let mut conn = Connection::open_with_flags(path, flags).map_err(wrap)?;
        let known = MIGRATIONS.len() as i64;
        let version = |c: &Connection| c.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0));
        let found = schema_of(&conn, path)?;
        if found < known {
            // A step may rebuild a table another points to (v10): foreign keys are off while
            // the steps run (SQLite ignores the switch inside a transaction), and checked
            // whole before the migration commits.
            conn.pragma_update(None, "foreign_keys", false).map_err(wrap)?;
            // Create and migrate under one write lock, reading the version again inside it:
            // two first runs at once must not both create the schema.
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(wrap)?;
            let found = version(&tx).map_err(wrap)?;
            let fresh = found == 0
                && !tx
                    .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table')", [], |r| r.get(0))
                    .map_err(wrap)?;
            if fresh {
                tx.execute_batch(&strict_schema().map_err(wrap)?).map_err(wrap)?;
            }
            let from = if fresh { known } else { found.clamp(0, known) };
            for (v, step) in MIGRATIONS.iter().enumerate().skip(from as usize) {
                tx.execute_batch(step).map_err(wrap)?;
                if v + 1 == WHOLE_RECORDS {
                    backfill(&tx).map_err(wrap)?;
                }
                if NEW_KEYS.contains(&(v + 1)) {
                    rekey(&tx).map_err(wrap)?;
                }
                if v + 1 == UIDS {
                    uid::fill(&tx).map_err(wrap)?;
                }
                if v + 1 == POINT_KEYS {
                    campaigns::migrate_point_keys(&tx).map_err(wrap)?;
                }
            }
            let broken: bool = tx.prepare("PRAGMA foreign_key_check").and_then(|mut s| s.exists([])).map_err(wrap)?;
            if broken {
                return Err(StoreError::Migration {
                    path: path.to_path_buf(),
                    found,
                    why: "a row points to a row that is not there (PRAGMA foreign_key_check)",
                });
            }
            if found < known {
                tx.pragma_update(None, "user_version", known).map_err(wrap)?;
            }
            tx.commit().map_err(wrap)?;
        }
        conn.pragma_update(None, "foreign_keys", true).map_err(wrap)?;
        Ok(Store { conn, path: path.to_path_buf(), unreadable: Default::default() })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn wrap(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.path.clone(), source }
    }

    /// The schema version of the open store.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| self.wrap(e))
    }

    /// Inserts one row and returns its id.
    fn insert(&self, sql: &str, values: impl rusqlite::Params) -> Result<i64, StoreError> {
        self.conn.execute(sql, values).map_err(|e| self.wrap(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Starts a group of runs, running until [`Store::finish_group`], and mints its name: the
    /// next number of its letter. `spec` is what the group was asked to do (JSON).
    pub fn begin_group(&self, start: &GroupStart) -> Result<GroupId, StoreError> {
        let letter = start.kind.letter().to_string();
        let parent = match start.parent {
            Some(p) => Some(self.group_row(p)?),
            None => None,
        };
        // One statement: the number is taken under SQLite's write lock, so two commands that
        // begin at once get two numbers.
        let uid = match start.kind {
            GroupKind::Campaign => uid::of_campaign(&start.spec),
            _ => None,
        };
        let uid = match uid {
            Some(uid) => uid,
            None => uid::fresh().map_err(|e| self.wrap(e))?,
        };
        self.insert(
            "INSERT INTO groups (kind, letter, number, parent, command_line, started, state, spec_json, name, label, key,
                uid)
             SELECT ?1, ?2, COALESCE(MAX(number), 0) + 1, ?3, ?4, ?5, 'running', ?6, ?7, ?8, ?9, ?10
             FROM groups WHERE letter = ?2",
            params![
                start.kind.name(),
                letter,
                parent,
                start.command_line,
                start.started,
                start.spec,
                start.point.as_ref().map(|p| &p.study),
                start.point.as_ref().map(|p| &p.target),
                start.point.as_ref().map(|p| p.key.study.as_str()),
                uid
            ],
        )?;
        let number: i64 = self
            .conn
            .query_row("SELECT number FROM groups WHERE id = ?1", [self.conn.last_insert_rowid()], |r| r.get(0))
            .map_err(|e| self.wrap(e))?;
        Ok(GroupId { kind: start.kind, number })
    }

    /// Ends a group, ok or failed; `spec`, when given, replaces what was stored at its start
    /// (a matrix stores itself whole there).
    pub fn finish_group(&self, g: GroupId, ok: bool, spec: Option<&str>) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE groups SET state = ?1, spec_json = COALESCE(?2, spec_json) WHERE letter = ?3 AND number = ?4",
                params![if ok { "ok" } else { "failed" }, spec, g.kind.letter().to_string(), g.number],
            )
            .map_err(|e| self.wrap(e))?;
        match changed {
            0 => Err(StoreError::NoGroup(g.to_string())),
            _ => Ok(()),
        }
    }

    /// The row of a group.
    fn group_row(&self, g: GroupId) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                "SELECT id FROM groups WHERE letter = ?1 AND number = ?2",
                params![g.kind.letter().to_string(), g.number],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.wrap(e))?
            .ok_or_else(|| StoreError::NoGroup(g.to_string()))
    }

    /// A group as stored.
    pub fn group(&self, g: GroupId) -> Result<GroupRow, StoreError> {
        self.conn
            .query_row(
                "SELECT g.kind, g.number, p.letter || p.number, g.command_line, g.started, g.state, g.spec_json
                 FROM groups g LEFT JOIN groups p ON p.id = g.parent WHERE g.letter = ?1 AND g.number = ?2",
                params![g.kind.letter().to_string(), g.number],
                |r| {
                    let kind: String = r.get(0)?;
                    Ok(GroupRow {
                        id: GroupId { kind: GroupKind::from_name(&kind).unwrap_or(g.kind), number: r.get(1)? },
                        parent: r.get(2)?,
                        command_line: r.get(3)?,
                        started: r.get(4)?,
                        state: r.get(5)?,
                        spec: r.get(6)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.wrap(e))?
            .ok_or_else(|| StoreError::NoGroup(g.to_string()))
    }

    /// Stores one network measurement and returns its id.
    pub fn save_net(&self, started: i64, command_line: &str, n: &NetResult) -> Result<i64, StoreError> {
        let json = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_default();
        self.insert(
            "INSERT INTO net_runs (started, command_line, pattern, senders_json, receivers_json, message, bytes,
                window_ns, bandwidth, record_json, uid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                started,
                command_line,
                n.pattern.name(),
                json(&n.senders),
                json(&n.receivers),
                n.message as i64,
                n.bytes as i64,
                n.window_ns as i64,
                n.bandwidth,
                serde_json::to_string(n).unwrap_or_default(),
                uid::fresh().map_err(|e| self.wrap(e))?,
            ],
        )
    }

    /// The newest network measurement of each mode, pattern and stream count sent from nodes
    /// that are all in `hosts`.
    pub fn net_within(&self, hosts: &[String]) -> Result<Vec<NetResult>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT record_json, pattern, senders_json, receivers_json, message, bytes, window_ns, bandwidth
                 FROM net_runs ORDER BY id DESC",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| {
                if let Some(whole) = r.get::<_, Option<String>>(0)? {
                    return Ok(serde_json::from_str::<NetResult>(&whole).ok());
                }
                let list = |i| r.get::<_, String>(i).map(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
                // A row from before v7: an MPI figure, its fields in columns.
                let old = serde_json::json!({
                    "pattern": r.get::<_, String>(1)?,
                    "senders": list(2)?,
                    "receivers": list(3)?,
                    "message": r.get::<_, i64>(4)?,
                    "bytes": r.get::<_, i64>(5)?,
                    "window_ns": r.get::<_, i64>(6)?,
                    "bandwidth": r.get::<_, Option<f64>>(7)?,
                });
                Ok(serde_json::from_value::<NetResult>(old).ok())
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.wrap(e))?;
        let rows: Vec<NetResult> = rows.into_iter().flatten().collect();
        let mut seen = Vec::new();
        Ok(rows
            .into_iter()
            // From these nodes, to them or to a server (`net --to`).
            .filter(|n| n.senders.iter().all(|h| hosts.contains(h)))
            .filter(|n| {
                let key = (n.mode, n.pattern, n.both_ways, n.streams);
                let fresh = !seen.contains(&key);
                seen.push(key);
                fresh
            })
            .collect())
    }

    /// Writes a whole run in one transaction and returns its id.
    pub fn save(&mut self, r: &RunRecord) -> Result<i64, StoreError> {
        let tx = self.conn.transaction().map_err(|e| StoreError::Sqlite { path: self.path.clone(), source: e })?;
        let id = write_run(&tx, r).and_then(|id| tx.commit().map(|_| id));
        id.map_err(|e| self.wrap(e))
    }

    /// Writes a run; when the store cannot take it, writes the record as JSON beside the store
    /// (or, failing that, in the temporary directory), so a long run is never lost.
    pub fn save_or_spill(&mut self, r: &RunRecord) -> Result<i64, StoreError> {
        self.save(r).map_err(|e| {
            let name = format!("{}.run-{}-{}.json", self.file_name(), r.started, std::process::id());
            let beside = self.path.with_file_name(&name);
            // A record that cannot be written whole is not written at all: the error then
            // says the run was not stored, never that an empty file holds it.
            let Ok(text) = serde_json::to_string_pretty(r) else { return e };
            let written = [beside, std::env::temp_dir().join(&name)].into_iter().find(|p| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(p)
                    .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
                    .is_ok()
            });
            match written {
                Some(to) => StoreError::Spilled { source: Box::new(e), to },
                None => e,
            }
        })
    }

    fn file_name(&self) -> String {
        self.path.file_name().map_or("iosurvey.db".into(), |n| n.to_string_lossy().into_owned())
    }

    /// Every run, newest last, with its best figure per op: one query.
    pub fn list(&self) -> Result<Vec<RunRow>, StoreError> {
        self.newest(None, None)
    }

    /// The newest `limit` runs (every one with none), newest last, of the system labelled
    /// `label` when one is given: what `ls` lists. Read from the newest back, so a page of a
    /// large store reads only its own rows.
    pub fn newest(&self, label: Option<&str>, limit: Option<usize>) -> Result<Vec<RunRow>, StoreError> {
        // Two texts rather than `?1 IS NULL OR ...`: with the label spelt out, SQLite walks
        // runs_by_system_label, whose entries are in id order already.
        let labelled = if label.is_some() { "AND r.system_label = ?1" } else { "AND ?1 IS NULL" };
        let sql = format!(
            "SELECT r.id, CASE WHEN g.letter = 's' THEN g.number END, CASE WHEN g.letter = 'w' THEN g.number END,
                    r.started, r.status, r.label, r.host, r.target, r.fs_type,
                    r.random, r.headline_json, r.provenance, r.system_label,
                    CASE WHEN json_valid(r.spec_json) THEN
                        CASE WHEN json_type(r.spec_json, '$.meta') = 'object' THEN r.spec_json END
                    END,
                    CASE WHEN g.letter = 'c' THEN g.number END,
                    CASE WHEN g.letter = 't' THEN g.number END
             FROM runs r LEFT JOIN groups g ON g.id = r.group_id
             WHERE g.letter IS NOT 'm' {labelled} ORDER BY r.id DESC LIMIT ?2"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.wrap(e))?;
        // SQLite reads a negative LIMIT as none.
        let limit = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let rows = stmt
            .query_map(params![label, limit], |r| {
                let id: i64 = r.get(0)?;
                Ok(run_row(r).map_err(|e| (format!("run {id}"), one_line(&e))))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.wrap(e))?;
        let mut rows = self.readable(rows);
        rows.reverse();
        Ok(rows)
    }

    /// The rows read whole; the others left out, each kept for [`Store::unreadable`]: one
    /// row written wrongly (by hand, or merged before merges checked) must not hide the rest.
    fn readable<T>(&self, rows: Vec<Result<T, (String, String)>>) -> Vec<T> {
        let mut left = self.unreadable.borrow_mut();
        rows.into_iter().filter_map(|r| r.map_err(|bad| left.push(bad)).ok()).collect()
    }

    /// What readers of many rows left out since the last call, undecodable: ("run 12", why).
    pub fn unreadable(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.unreadable.borrow_mut())
    }

    /// [`Store::load_all`], leaving out (for [`Store::unreadable`]) each run whose record
    /// cannot be read: for what reads every run (report, export).
    pub fn load_readable(&self, ids: &[i64]) -> Result<Vec<RunRecord>, StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.wrap(e))?;
        let mut records = Vec::new();
        for &id in ids {
            match self.load(id) {
                Ok(r) => records.push(Ok(r)),
                Err(StoreError::Damaged(id, why)) => records.push(Err((format!("run {id}"), why))),
                Err(e) => return Err(e),
            }
        }
        tx.commit().map_err(|e| self.wrap(e))?;
        Ok(self.readable(records))
    }
}

/// A line of `ls` from the row of [`Store::newest`]'s query.
fn run_row(r: &rusqlite::Row) -> rusqlite::Result<RunRow> {
    let text = |i| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
    let best: String = text(10)?;
    Ok(RunRow {
        id: r.get(0)?,
        survey_id: r.get(1)?,
        sweep_id: r.get(2)?,
        campaign_id: r.get(14)?,
        targets_id: r.get(15)?,
        started: r.get(3)?,
        status: r.get(4)?,
        label: meta_label(r.get(13)?).unwrap_or(r.get(5)?),
        host: text(6)?,
        target: text(7)?,
        fs_type: text(8)?,
        random: r.get(9)?,
        best: serde_json::from_str(&best)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(10, rusqlite::types::Type::Text, Box::new(e)))?,
        provenance: r.get(11)?,
        system: r.get(12)?,
    })
}

impl Store {
    /// How many runs [`Store::newest`] lists with no limit, without reading them.
    pub fn count(&self, label: Option<&str>) -> Result<usize, StoreError> {
        let labelled = if label.is_some() { "AND r.system_label = ?1" } else { "AND ?1 IS NULL" };
        let sql = format!(
            "SELECT COUNT(*) FROM runs r LEFT JOIN groups g ON g.id = r.group_id WHERE g.letter IS NOT 'm' {labelled}"
        );
        let n: i64 = self.conn.query_row(&sql, params![label], |r| r.get(0)).map_err(|e| self.wrap(e))?;
        Ok(n as usize)
    }

    /// The ids of the runs [`Store::newest`] lists of the system labelled `label`, in order,
    /// through the label's index (not reading the runs).
    pub fn labelled(&self, label: &str) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id FROM runs r LEFT JOIN groups g ON g.id = r.group_id
                 WHERE r.system_label = ?1 AND g.letter IS NOT 'm' ORDER BY r.id",
            )
            .map_err(|e| self.wrap(e))?;
        let ids = stmt.query_map([label], |r| r.get(0)).and_then(|ids| ids.collect()).map_err(|e| self.wrap(e))?;
        Ok(ids)
    }

    /// Ids of the runs of a group, in order.
    pub fn group_runs(&self, g: GroupId) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id FROM runs r JOIN groups g ON g.id = r.group_id
                 WHERE g.letter = ?1 AND g.number = ?2 ORDER BY r.id",
            )
            .map_err(|e| self.wrap(e))?;
        let ids = stmt
            .query_map(params![g.kind.letter().to_string(), g.number], |r| r.get(0))
            .and_then(|ids| ids.collect())
            .map_err(|e| self.wrap(e))?;
        Ok(ids)
    }

    /// Starts a matrix: its record stored at once as failed, so that one killed midway is
    /// never taken for whole; returns its id.
    pub fn begin_matrix(&self, m: &MatrixRecord) -> Result<GroupId, StoreError> {
        let failed = MatrixRecord { status: Status::Failed, error: Some("did not finish".into()), ..m.clone() };
        let spec = json(&failed).map_err(|e| self.wrap(e))?;
        let start = GroupStart {
            kind: GroupKind::Matrix,
            parent: None,
            started: m.started,
            command_line: m.command_line.clone(),
            spec,
            point: None,
        };
        self.begin_group(&start)
    }

    /// Stores a matrix whole, ok or failed, in place of its start.
    pub fn finish_matrix(&self, number: i64, m: &MatrixRecord) -> Result<(), StoreError> {
        let text = json(&MatrixRecord { id: None, ..m.clone() }).map_err(|e| self.wrap(e))?;
        let g = GroupId { kind: GroupKind::Matrix, number };
        self.finish_group(g, m.status == Status::Ok, Some(&text))
    }

    /// Reads a matrix back.
    pub fn load_matrix(&self, number: i64) -> Result<MatrixRecord, StoreError> {
        let text = match self.group(GroupId { kind: GroupKind::Matrix, number }) {
            Ok(row) => row.spec,
            Err(StoreError::NoGroup(_)) => return Err(StoreError::NoMatrix(number)),
            Err(e) => return Err(e),
        };
        let mut m: MatrixRecord =
            serde_json::from_str(&text).map_err(|e| StoreError::Damaged(number, format!("matrix record: {e}")))?;
        m.id = Some(number);
        Ok(m)
    }

    /// Every matrix, oldest first.
    pub fn matrices(&self) -> Result<Vec<MatrixRecord>, StoreError> {
        let numbers = {
            let mut stmt = self
                .conn
                .prepare("SELECT number FROM groups WHERE kind = 'matrix' ORDER BY number")
                .map_err(|e| self.wrap(e))?;
            let numbers: Vec<i64> =
                stmt.query_map([], |r| r.get(0)).and_then(|ids| ids.collect()).map_err(|e| self.wrap(e))?;
            numbers
        };
        let mut all = Vec::new();
        for n in numbers {
            match self.load_matrix(n) {
                Ok(m) => all.push(Ok(m)),
                Err(StoreError::Damaged(_, why)) => all.push(Err((format!("matrix m{n}"), why))),
                Err(e) => return Err(e),
            }
        }
        Ok(self.readable(all))
    }

    /// Reads whole runs back, in the order given: [`Store::load`] of each, inside one read
    /// transaction. Each statement outside one takes SQLite's shared lock and checks the file
    /// and its journal afresh; for the 50,000 runs of a label in a store of 100,000 that was
    /// a sixth of `compare`'s time.
    pub fn load_all(&self, ids: &[i64]) -> Result<Vec<RunRecord>, StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.wrap(e))?;
        let records = ids.iter().map(|&id| self.load(id)).collect::<Result<Vec<_>, _>>()?;
        tx.commit().map_err(|e| self.wrap(e))?;
        Ok(records)
    }

    /// Reads a whole run back: the record as it was stored.
    pub fn load(&self, id: i64) -> Result<RunRecord, StoreError> {
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT record_json FROM runs WHERE id = ?1")
            .and_then(|mut stmt| stmt.query_row([id], |r| r.get(0)))
            .optional()
            .map_err(|e| match e {
                rusqlite::Error::InvalidColumnType(..) => StoreError::Damaged(id, format!("record: {}", one_line(&e))),
                e => self.wrap(e),
            })?
            .ok_or(StoreError::NoRun(id))?;
        let text = text.ok_or_else(|| StoreError::Damaged(id, "no record".into()))?;
        let stored: StoredRecord =
            serde_json::from_str(&text).map_err(|e| StoreError::Damaged(id, format!("record: {e}")))?;
        let mut record = stored.record;
        record.id = Some(id);
        Ok(record)
    }
}

/// The JSON of a value, as an SQL conversion error when it fails.
fn json<T: serde::Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// Writes one run: its record whole, and the columns queries need (next to the type:
/// [`RunRecord::index`]).
fn write_run(tx: &Transaction, r: &RunRecord) -> rusqlite::Result<i64> {
    let index = r.index();
    let stored = StoredRecord { version: RECORD_VERSION, record: RunRecord { id: None, ..r.clone() } };
    let e = &r.env;
    let group = match r.group() {
        Some(g) => Some(
            tx.query_row(
                "SELECT id FROM groups WHERE letter = ?1 AND number = ?2",
                params![g.kind.letter().to_string(), g.number],
                |row| row.get::<_, i64>(0),
            )
            .optional()?
            // A run filed in a group the store does not hold is refused whole (the caller
            // spills its record beside the store): never stored as of another group or none.
            .ok_or(rusqlite::Error::QueryReturnedNoRows)?,
        ),
        None => None,
    };
    tx.execute(
        "INSERT INTO runs (group_id, name, started, status, error, command_line, label, spec_json,
            warnings_json, host, target, fs_type, tool_version, provenance, workload_key, headline_json,
            random, record_json, system_label, uid)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        params![
            group,
            r.name,
            r.started,
            r.status.name(),
            r.error,
            r.command_line,
            r.workload.label(),
            json(&r.workload)?,
            json(&r.warnings)?,
            e.host,
            e.target,
            e.fs_type,
            e.tool_version,
            r.provenance,
            index.workload_key,
            json(&index.headline)?,
            index.random,
            json(&stored)?,
            r.label,
            uid::fresh()?,
        ],
    )?;
    let run_id = tx.last_insert_rowid();
    for (node, host) in r.hosts.iter().enumerate() {
        tx.execute("INSERT INTO nodes (run_id, node, host) VALUES (?1, ?2, ?3)", params![run_id, node as i64, host])?;
    }
    Ok(run_id)
}

/// A metadata run's label as the workload gives it now: a run stored before its label said how
/// its calls resolved says so (relative, as every run then was), and reads as `show` says it.
fn meta_label(spec_json: Option<String>) -> Option<String> {
    serde_json::from_str::<crate::spec::Workload>(&spec_json?).ok().map(|w| w.label())
}

/// Stores whole the record of every run an older store kept as rows.
fn backfill(tx: &Transaction) -> rusqlite::Result<()> {
    let ids: Vec<i64> = tx
        .prepare("SELECT id FROM runs WHERE record_json IS NULL")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in ids {
        let Some(record) = legacy::load(tx, id)? else { continue };
        let index = record.index();
        let stored = StoredRecord { version: RECORD_VERSION, record: RunRecord { id: None, ..record } };
        tx.execute(
            "UPDATE runs SET record_json = ?1, workload_key = ?2, headline_json = ?3, random = ?4 WHERE id = ?5",
            params![json(&stored)?, index.workload_key, json(&index.headline)?, index.random, id],
        )?;
    }
    Ok(())
}

/// Recomputes the workload key of every stored run from its record, as the key is now
/// ([`crate::spec::Workload::key`]); a record that no longer reads keeps the column it had.
fn rekey(tx: &Transaction) -> rusqlite::Result<()> {
    // One record at a time: a store's records together may not fit in memory.
    let ids: Vec<i64> = tx
        .prepare("SELECT id FROM runs WHERE record_json IS NOT NULL")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for id in ids {
        let text: String = tx.query_row("SELECT record_json FROM runs WHERE id = ?1", [id], |r| r.get(0))?;
        let Ok(stored) = serde_json::from_str::<StoredRecord>(&text) else { continue };
        tx.execute("UPDATE runs SET workload_key = ?1 WHERE id = ?2", params![stored.record.workload.key(), id])?;
    }
    Ok(())
}

/// The tables and indexes [`MIGRATIONS`] end in, each table STRICT (a value of another type
/// than its column's is refused as it is written, not found by a reader later): what a new
/// store is made with. Read from the steps run on an empty database in memory, so that there
/// is one schema to keep.
fn strict_schema() -> rusqlite::Result<String> {
    let scratch = Connection::open_in_memory()?;
    scratch.execute_batch(&MIGRATIONS.concat())?;
    let mut stmt =
        scratch.prepare("SELECT type, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type = 'index', rowid")?;
    let made = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let mut schema = String::new();
    for entry in made {
        let (kind, sql) = entry?;
        schema.push_str(&sql);
        if kind == "table" {
            schema.push_str(" STRICT");
        }
        schema.push_str(";\n");
    }
    Ok(schema)
}

/// The schema version of an open database, refused unless iosurvey can read it as a store:
/// version 0 with no table is a new store, version 0 with tables another program's database
/// (migrating it would write iosurvey's tables among them).
fn schema_of(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let known = MIGRATIONS.len() as i64;
    let found = match conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)) {
        Err(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::NotADatabase => {
            return Err(StoreError::NotAStore { path: path.to_path_buf(), why: "not an SQLite database" })
        }
        Err(source) => return Err(StoreError::Sqlite { path: path.to_path_buf(), source }),
        Ok(v) => v,
    };
    if found < 0 {
        // No iosurvey writes one: migrating from it would meet the tables already there.
        return Err(StoreError::BadVersion { path: path.to_path_buf(), found });
    }
    if found > known {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, known });
    }
    let tables: bool = conn
        .query_row("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table')", [], |r| r.get(0))
        .map_err(|source| StoreError::Sqlite { path: path.to_path_buf(), source })?;
    if found == 0 && tables {
        return Err(StoreError::NotAStore {
            path: path.to_path_buf(),
            why: "an SQLite database of another program (tables, but no iosurvey schema version)",
        });
    }
    Ok(found)
}

/// Refuses a store path that is a symbolic link: root following a link another user planted
/// would make or change a database wherever it points.
fn refuse_link(path: &Path) -> Result<(), StoreError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(StoreError::BadPath { path: path.to_path_buf(), why: "a symbolic link, never followed" })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::execution::TaskFailure;
    use crate::record::Status;
    use crate::spec::Workload;

    fn sample(failure: Option<TaskFailure>) -> RunRecord {
        crate::record::fixtures::run(failure)
    }

    /// The store's tables, by name.
    fn tables(store: &Store) -> Vec<String> {
        let mut stmt = store.conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").unwrap();
        let names = stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap();
        names
    }

    #[test]
    fn a_lock_and_a_wrongly_typed_row_each_get_their_own_hint() {
        fn words(h: &Hint) -> String {
            match h {
                Hint::Say(text) => text.clone(),
                Hint::Either(a, b) => format!("{} {}", words(a), words(b)),
                _ => String::new(),
            }
        }
        let hint = |source| words(&StoreError::Sqlite { path: "s.db".into(), source }.hint());
        let failure = |code, extended| {
            rusqlite::Error::SqliteFailure(rusqlite::ffi::Error { code, extended_code: extended }, None)
        };
        let locked = hint(failure(rusqlite::ErrorCode::DatabaseBusy, 5));
        assert!(locked.contains("another process") && !locked.contains("writable"), "{locked}");
        let typed = hint(rusqlite::Error::InvalidColumnType(3, "started".into(), rusqlite::types::Type::Text));
        assert!(typed.contains("wrong type") && !typed.contains("writable"), "{typed}");
        let other = hint(failure(rusqlite::ErrorCode::ReadOnly, 8));
        assert!(other.contains("writable"), "{other}");
    }

    #[test]
    fn a_run_survives_the_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
        let run = sample(None);
        let id = store.save(&run).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        let back = store.load(id).unwrap();
        assert_eq!(back, RunRecord { id: Some(id), ..run });
        let rows = store.list().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].best[0].op, "write");
        // Through SQLite's JSON text the last binary digit may round.
        let (listed, stored) = (rows[0].best[0].bandwidth.unwrap(), back.phases[0].figures.bandwidth.unwrap());
        assert!((listed - stored).abs() <= stored * 1e-12, "{listed} vs {stored}");
        assert_eq!((rows[0].host.as_str(), rows[0].random), (back.env.host.as_str(), false));
        assert!(matches!(store.load(99), Err(StoreError::NoRun(99))));
    }

    #[test]
    fn a_metadata_run_stored_before_the_resolve_field_is_listed_and_read_as_relative() {
        use crate::spec::meta::{Meta, Resolve};
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut run = sample(None);
        run.workload.shape = crate::spec::Shape::Meta(Meta::default());
        let new = store.save(&run).unwrap();
        // As an older iosurvey stored it: no field, and a label that does not say.
        let old = store.save(&run).unwrap();
        store
            .conn
            .execute(
                "UPDATE runs SET spec_json = json_remove(spec_json, '$.meta.resolve'),
                    record_json = json_remove(record_json, '$.record.workload.meta.resolve'), label = ?1
                 WHERE id = ?2",
                params!["metadata 1000 items per task in a directory per task, 2 tasks", old],
            )
            .unwrap();
        let stored: String =
            store.conn.query_row("SELECT record_json FROM runs WHERE id = ?1", [old], |r| r.get(0)).unwrap();
        assert!(!stored.contains("resolve"), "the field is gone, as in an older store");
        let rows = store.list().unwrap();
        assert!(rows[0].label.contains(", path walk, "), "{}", rows[0].label);
        assert!(rows[1].label.contains(", relative, no path walk, "), "{}", rows[1].label);
        let resolve = |id| store.load(id).unwrap().workload.meta().unwrap().resolve;
        assert_eq!((resolve(new), resolve(old)), (Resolve::Path, Resolve::Relative));
        assert_ne!(store.load(new).unwrap().index().workload_key, store.load(old).unwrap().index().workload_key);
    }

    #[test]
    fn opening_an_older_store_recomputes_every_workload_key_from_its_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let (buffered, direct) = {
            let mut store = Store::open(&path).unwrap();
            let run = sample(None);
            let mut direct = run.clone();
            direct.workload.data_mut().direct = true;
            let ids = (store.save(&run).unwrap(), store.save(&direct).unwrap());
            // As a v10 store keyed them: one key for both, which left out O_DIRECT.
            store.conn.execute("UPDATE runs SET workload_key = 'filepertask/segmented/sequential'", []).unwrap();
            // As v10 had it: without what v13 added.
            store
                .conn
                .execute_batch(
                    "DROP TABLE imports; DROP TABLE hooks; DROP INDEX groups_by_parent;
                     DROP INDEX runs_by_uid; DROP INDEX groups_by_uid; DROP INDEX net_runs_by_uid;
                     ALTER TABLE runs DROP COLUMN uid; ALTER TABLE groups DROP COLUMN uid;
                     ALTER TABLE net_runs DROP COLUMN uid;
                     ALTER TABLE groups DROP COLUMN name; ALTER TABLE groups DROP COLUMN label;
                     ALTER TABLE groups DROP COLUMN key;",
                )
                .unwrap();
            store.conn.pragma_update(None, "user_version", 10).unwrap();
            ids
        };
        let store = Store::open(&path).unwrap();
        let column = |id: i64| -> String {
            store.conn.query_row("SELECT workload_key FROM runs WHERE id = ?1", [id], |r| r.get(0)).unwrap()
        };
        for id in [buffered, direct] {
            assert_eq!(column(id), store.load(id).unwrap().workload.key(), "run {id}");
        }
        assert_ne!(column(buffered), column(direct), "a stale column never pools unlike runs");
    }

    #[test]
    fn every_row_that_merges_gets_a_uid_and_a_campaign_the_one_its_name_and_version_derive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let start = |kind, spec: &str| GroupStart {
            kind,
            parent: None,
            started: 1,
            command_line: "x".into(),
            spec: spec.into(),
            point: None,
        };
        let uids = |store: &Store| -> Vec<(String, Option<String>)> {
            let sql = "SELECT 'run', uid FROM runs UNION ALL SELECT kind, uid FROM groups
                UNION ALL SELECT 'net', uid FROM net_runs UNION ALL SELECT 'hook', uid FROM hooks";
            let mut stmt = store.conn.prepare(sql).unwrap();
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
            rows.collect::<Result<_, _>>().unwrap()
        };
        let made = {
            let mut store = Store::open(&path).unwrap();
            store.save(&sample(None)).unwrap();
            let c = store.begin_group(&start(GroupKind::Campaign, r#"{"name":"eval","version":"00ff"}"#)).unwrap();
            store.begin_group(&start(GroupKind::Campaign, r#"{"name":"calibration"}"#)).unwrap();
            store.begin_group(&start(GroupKind::Sweep, "{}")).unwrap();
            let hook = crate::campaign::hooks::HookRun {
                hook: "before-run".into(),
                command: "true".into(),
                node: "n".into(),
                status: Some(0),
                output: String::new(),
                secs: 0.0,
                stopped: false,
            };
            store.save_hooks(c, None, "s", &[hook]).unwrap();
            let net = serde_json::from_value(serde_json::json!({
                "mode": "tcp", "pattern": "1-to-1", "senders": ["a"], "receivers": ["b"],
                "message": 1, "bytes": 1, "window_ns": 1, "bandwidth": 1.0,
            }))
            .unwrap();
            store.save_net(1, "x", &net).unwrap();
            let made = uids(&store);
            // As v15 had it: no uids.
            store
                .conn
                .execute_batch(
                    "DROP INDEX runs_by_uid; DROP INDEX groups_by_uid; DROP INDEX net_runs_by_uid; DROP INDEX hooks_by_uid;
                     ALTER TABLE runs DROP COLUMN uid; ALTER TABLE groups DROP COLUMN uid;
                     ALTER TABLE net_runs DROP COLUMN uid; ALTER TABLE hooks DROP COLUMN uid;
                     ALTER TABLE hooks DROP COLUMN tasks;",
                )
                .unwrap();
            store.conn.pragma_update(None, "user_version", 15).unwrap();
            made
        };
        let migrated = uids(&Store::open(&path).unwrap());
        for rows in [&made, &migrated] {
            assert_eq!(rows.len(), 6, "{rows:?}");
            let mut all: Vec<&str> = rows.iter().map(|(_, u)| u.as_deref().expect("a uid")).collect();
            assert!(all.iter().all(|u| u.len() == 32 && u.bytes().all(|b| b.is_ascii_hexdigit())), "{all:?}");
            all.sort();
            all.dedup();
            assert_eq!(all.len(), 6, "each its own");
            let campaigns: Vec<&str> =
                rows.iter().filter(|(k, _)| k == "campaign").map(|(_, u)| u.as_deref().unwrap()).collect();
            assert_eq!(campaigns[0], uid::campaign("eval", "00ff"), "derived, in a new store and a migrated one");
            assert_ne!(campaigns[1], uid::campaign("calibration", ""), "no version: random");
        }
        assert_eq!(made.len(), migrated.len());
        assert_ne!(made[0], migrated[0], "the migration derives its own from the row");
        // Derived from the rows: a copy of the older store, migrated apart, names them alike.
        let copy = dir.path().join("copy.db");
        Connection::open(&path).unwrap().execute_batch(&format!("VACUUM INTO '{}'", copy.display())).unwrap();
        assert_eq!(uids(&Store::open(&copy).unwrap()), migrated);
    }

    #[test]
    fn a_failed_run_is_stored_whole_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let id = store
            .save(&sample(Some(TaskFailure {
                task: 1,
                node: 1,
                message: "write failed: No space left on device".into(),
                hint: crate::spec::Hint::say("free space"),
                interrupted: false,
            })))
            .unwrap();
        let back = store.load(id).unwrap();
        assert_eq!(back.status, Status::Failed);
        assert_eq!(back.error.unwrap(), "task 1 on n2: write failed: No space left on device");
        assert_eq!(back.phases.len(), 2);
        assert_eq!(store.list().unwrap()[0].status, "failed");
    }

    #[test]
    fn an_interrupted_save_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        // A trigger makes the second node row fail, after the run's row was written.
        store.conn.execute_batch("CREATE TRIGGER boom BEFORE INSERT ON nodes WHEN NEW.node = 1 BEGIN SELECT RAISE(ABORT, 'disk gone'); END;").unwrap();
        assert!(store.save(&sample(None)).is_err());
        for table in ["runs", "nodes"] {
            let n: i64 = store.conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap();
            assert_eq!(n, 0, "{table} keeps half a run");
        }
    }

    #[test]
    fn a_v4_store_of_the_previous_main_migrates_without_loss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v4.db");
        std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v4.db"), &path).unwrap();
        // What v4 held, read as v4 read it.
        let before: Vec<RunRecord> = {
            let conn = Connection::open(&path).unwrap();
            assert_eq!(conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)).unwrap(), 4);
            (1..=8).map(|id| legacy::load(&conn, id).unwrap().expect("run in the fixture")).collect()
        };
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
        for (id, old) in (1..=8).zip(&before) {
            assert_eq!(store.load(id).unwrap(), RunRecord { id: Some(id), ..old.clone() }, "run {id}");
        }
        assert_eq!(store.load(8).unwrap().status, Status::Failed, "the failed verified read is still failed");
        assert_eq!(store.group_runs(GroupId { kind: GroupKind::Survey, number: 1 }).unwrap(), [4, 5, 6]);
        assert_eq!(store.group_runs(GroupId { kind: GroupKind::Sweep, number: 1 }).unwrap(), [2, 3]);
        let rows = store.list().unwrap();
        assert_eq!(rows.len(), 8);
        assert!(rows.iter().all(|r| r.provenance == "measured" && !r.best.is_empty()));
        assert!(rows[1].random && !rows[0].random);
        assert_eq!(
            tables(&store),
            ["groups", "hooks", "imports", "net_runs", "nodes", "runs"],
            "the rows the records replaced are gone"
        );
    }

    #[test]
    fn a_v9_store_of_the_previous_main_migrates_to_one_table_of_groups_without_loss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v9.db");
        std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v9.db"), &path).unwrap();
        // What v9 held, read as v9 read it: the records whole, and each kind's own table.
        let (before, surveys, sweeps, matrices) = {
            let conn = Connection::open(&path).unwrap();
            assert_eq!(conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)).unwrap(), 9);
            let rows = |sql: &str| -> Vec<(i64, String)> {
                conn.prepare(sql)
                    .unwrap()
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap()
            };
            let records = rows("SELECT id, record_json FROM runs ORDER BY id");
            let surveys = rows("SELECT id, target FROM surveys ORDER BY id");
            let sweeps = rows("SELECT id, parameter FROM sweeps ORDER BY id");
            let matrices = rows("SELECT id, record_json FROM matrices ORDER BY id");
            let of = |col: &str| -> Vec<(i64, i64)> {
                conn.prepare(&format!("SELECT id, {col} FROM runs WHERE {col} IS NOT NULL ORDER BY id"))
                    .unwrap()
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap()
            };
            (records, (surveys, of("survey_id")), (sweeps, of("sweep_id")), (matrices, of("matrix_id")))
        };
        assert_eq!(before.len(), 33, "the fixture: a run, a sweep, a survey, a metadata run, a matrix, an io500 list");
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
        for (id, text) in &before {
            let old: StoredRecord = serde_json::from_str(text).unwrap();
            assert_eq!(store.load(*id).unwrap(), RunRecord { id: Some(*id), ..old.record }, "run {id}");
        }
        // Every group keeps the name users typed, and its runs.
        for (kind, (groups, members)) in
            [(GroupKind::Survey, &surveys), (GroupKind::Sweep, &sweeps), (GroupKind::Matrix, &matrices)]
        {
            assert!(!groups.is_empty(), "the fixture has a {kind:?}");
            for (number, _) in groups {
                let want: Vec<i64> = members.iter().filter(|(_, g)| g == number).map(|(id, _)| *id).collect();
                assert_eq!(store.group_runs(GroupId { kind, number: *number }).unwrap(), want, "{kind:?} {number}");
            }
        }
        let io500 = store.group(GroupId { kind: GroupKind::Survey, number: 2 }).unwrap();
        assert_eq!(
            (io500.id.kind, io500.state.as_str()),
            (GroupKind::Io500, "ok"),
            "the io500 list is told apart by its directory"
        );
        assert!(io500.spec.contains("iosurvey-io500-"), "{}", io500.spec);
        let m = store.load_matrix(1).unwrap();
        let old: MatrixRecord = serde_json::from_str(&matrices.0[0].1).unwrap();
        assert_eq!(m, MatrixRecord { id: Some(1), ..old });
        assert_eq!(store.matrices().unwrap().len(), 1);
        // A new group takes the next number of its letter; a run filed in it points to it.
        let start = |kind| GroupStart {
            kind,
            parent: None,
            started: 1,
            command_line: "x".into(),
            spec: "{}".into(),
            point: None,
        };
        let next = store.begin_group(&start(GroupKind::Io500)).unwrap();
        assert_eq!(
            next,
            GroupId { kind: GroupKind::Io500, number: 3 },
            "s1 and s2 are taken, by a survey and an io500"
        );
        let mut run = sample(None);
        run.survey_id = Some(3);
        let id = store.save(&run).unwrap();
        assert_eq!(store.group_runs(next).unwrap(), [id]);
        store.finish_group(next, true, None).unwrap();
        assert_eq!(store.group(next).unwrap().state, "ok");
        // `ls` lists every run but those of the matrix, with their survey and sweep.
        let rows = store.list().unwrap();
        assert_eq!(rows.len(), before.len() + 1 - matrices.1.len());
        assert!(rows.iter().any(|r| r.sweep_id == Some(1)) && rows.iter().any(|r| r.survey_id == Some(2)));
        assert_eq!(tables(&store), ["groups", "hooks", "imports", "net_runs", "nodes", "runs"], "one table of groups");
    }

    #[test]
    fn a_run_filed_in_a_group_the_store_does_not_hold_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut run = sample(None);
        run.sweep_id = Some(7);
        assert!(store.save(&run).is_err());
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn network_ceilings_are_found_for_the_nodes_of_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let net = |mode: &str, hosts: [&str; 2], bw: f64| -> NetResult {
            serde_json::from_value(serde_json::json!({
                "mode": mode, "pattern": "1-to-1", "senders": [hosts[0]], "receivers": [hosts[1]],
                "message": 1 << 20, "bytes": 1 << 30, "window_ns": 1_000_000_000, "bandwidth": bw,
            }))
            .unwrap()
        };
        store.save_net(1, "x", &net("mpi", ["a", "b"], 1.0)).unwrap();
        store.save_net(2, "x", &net("mpi", ["a", "b"], 2.0)).unwrap();
        store.save_net(3, "x", &net("mpi", ["z", "b"], 3.0)).unwrap();
        store.save_net(4, "x", &net("tcp", ["a", "b"], 4.0)).unwrap();
        // A row from before v7, without its whole record: read from its columns, as MPI.
        store
            .conn
            .execute(
                "INSERT INTO net_runs (started, command_line, pattern, senders_json, receivers_json, message, bytes,
                    window_ns, bandwidth) VALUES (0, 'old', 'N-to-1', '[\"c\"]', '[\"a\"]', 1, 2, 3, 5.0)",
                [],
            )
            .unwrap();
        let found = store.net_within(&["a".into(), "b".into(), "c".into()]).unwrap();
        let got: Vec<(String, String, Option<f64>)> =
            found.iter().map(|n| (crate::spec::variant_name(&n.mode), n.pattern.name(), n.bandwidth)).collect();
        assert_eq!(
            got,
            [
                ("mpi".into(), "N-to-1".into(), Some(5.0)),
                ("tcp".into(), "1-to-1".into(), Some(4.0)),
                ("mpi".into(), "1-to-1".into(), Some(2.0))
            ],
            "newest per mode and pattern, only from the run's hosts"
        );
    }

    #[test]
    fn a_version_1_store_is_migrated_and_keeps_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            conn.execute(
                "INSERT INTO runs (started, status, command_line, label, spec_json, warnings_json) VALUES (5, 'ok', 'old', 'l', ?1, '[]')",
                [serde_json::to_string(&Workload::default()).unwrap()],
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
        let old = store.load(1).unwrap();
        assert_eq!((old.command_line.as_str(), old.sweep_id, old.clock_uncertainty_ns), ("old", None, 0));
    }

    #[test]
    fn a_newer_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
        assert!(matches!(Store::open(&path), Err(StoreError::TooNew { found: 99, .. })));
    }
}
