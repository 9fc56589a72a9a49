//! The embedded result store: SQLite through rusqlite, one transaction per run.
//!
//! The schema version is SQLite's `user_version`; [`schema::MIGRATIONS`] lists the steps from an
//! empty file to the current schema, applied in order when a store is opened. A run is written in
//! one transaction, so the store holds whole runs (ok or failed) and never half of one.

use crate::record::RunRecord;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

pub mod campaigns;
mod error;
mod groups;
pub mod imports;
mod legacy;
pub mod merge;
mod net;
mod runs;
mod schema;
pub mod select;
pub mod uid;
pub mod will;

use error::one_line;
pub use error::StoreError;
pub use groups::{GroupRow, GroupStart, PointName};
use runs::write_run;
pub use runs::RunRow;
use schema::schema_of;

/// The version of the stored record's JSON shape.
const RECORD_VERSION: u32 = 1;

/// A record as the store keeps it: whole, with the version of its shape.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredRecord {
    version: u32,
    record: RunRecord,
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
}

impl Store {}

/// The JSON of a value, as an SQL conversion error when it fails.
fn json<T: serde::Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
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
    use super::schema::MIGRATIONS;
    use super::*;
    use crate::record::execution::TaskFailure;
    use crate::record::net::NetResult;
    use crate::record::Status;
    use crate::record::{GroupId, GroupKind, MatrixRecord};
    use crate::spec::Hint;
    use crate::spec::Workload;
    use rusqlite::params;

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
