//! The store's schema: the steps from an empty file to the current tables, and the data
//! a step recomputes when it changes what a row holds.

use super::{campaigns, json, legacy, uid, Store, StoreError, StoredRecord, RECORD_VERSION};
use crate::record::RunRecord;
use rusqlite::{params, Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::Path;

/// Schema steps; entry i takes a store from version i to version i + 1. A new store is made
/// at once with the tables they end in, STRICT ([`strict_schema`]): a step that rebuilds a
/// table must say STRICT itself for stores made since.
pub(super) const MIGRATIONS: &[&str] = &[
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
pub(super) const UIDS: usize = 16;

/// The schema version after which runs are stored as whole records (the v4 rows are read
/// back into records by [`legacy`] before they are dropped).
pub(super) const WHOLE_RECORDS: usize = 5;

/// The schema versions after which every run's `workload_key` is recomputed from its record
/// ([`rekey`]): those whose step changed what the key holds.
pub(super) const NEW_KEYS: &[usize] = &[11, 12];

/// The schema version after which a campaign point's key is its columns
/// ([`campaigns::migrate_point_keys`]).
pub(super) const POINT_KEYS: usize = 17;

impl Store {
    pub(super) fn connect(path: &Path, flags: OpenFlags) -> Result<Store, StoreError> {
        let wrap = |source| StoreError::Sqlite { path: path.to_path_buf(), source };
        let mut conn = Connection::open_with_flags(path, flags).map_err(wrap)?;
        let known = MIGRATIONS.len() as i64;
        let found = schema_of(&conn, path)?;
        if found < known {
            // A step may rebuild a table another points to (v10): foreign keys are off while
            // the steps run (SQLite ignores the switch inside a transaction), and checked
            // whole before the migration commits.
            conn.pragma_update(None, "foreign_keys", false).map_err(wrap)?;
            // Create and migrate under one write lock, reading the version again inside it:
            // two first runs at once must not both create the schema.
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(wrap)?;
            let (found, tables) = version_and_tables(&tx).map_err(wrap)?;
            let fresh = found == 0 && !tables;
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
}

/// Stores whole the record of every run an older store kept as rows.
pub(super) fn backfill(tx: &Transaction) -> rusqlite::Result<()> {
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
pub(super) fn rekey(tx: &Transaction) -> rusqlite::Result<()> {
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
pub(super) fn strict_schema() -> rusqlite::Result<String> {
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

/// The schema version of a database and whether it holds any table, in one statement, so from
/// one snapshot: read apart, another process's first run could commit a new store's schema
/// between the two reads, and its tables would be seen beside the empty file's version 0.
fn version_and_tables(conn: &Connection) -> rusqlite::Result<(i64, bool)> {
    conn.query_row(
        "SELECT (SELECT user_version FROM pragma_user_version), \
         EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table')",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// The schema version of an open database, refused unless iosurvey can read it as a store:
/// version 0 with no table is a new store, version 0 with tables another program's database
/// (migrating it would write iosurvey's tables among them).
pub(super) fn schema_of(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let known = MIGRATIONS.len() as i64;
    let (found, tables) = match version_and_tables(conn) {
        Err(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::NotADatabase => {
            return Err(StoreError::NotAStore { path: path.to_path_buf(), why: "not an SQLite database" })
        }
        Err(source) => return Err(StoreError::Sqlite { path: path.to_path_buf(), source }),
        Ok(seen) => seen,
    };
    if found < 0 {
        // No iosurvey writes one: migrating from it would meet the tables already there.
        return Err(StoreError::BadVersion { path: path.to_path_buf(), found });
    }
    if found > known {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, known });
    }
    if found == 0 && tables {
        return Err(StoreError::NotAStore {
            path: path.to_path_buf(),
            why: "an SQLite database of another program (tables, but no iosurvey schema version)",
        });
    }
    Ok(found)
}
