//! Runs: written whole in one transaction, listed, read back.

use super::{json, one_line, uid, Store, StoreError, StoredRecord, RECORD_VERSION};
use crate::record::{BestFigure, RunRecord};
use rusqlite::{params, OptionalExtension, Transaction};

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

impl Store {
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

    pub(super) fn file_name(&self) -> String {
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
    pub(super) fn readable<T>(&self, rows: Vec<Result<T, (String, String)>>) -> Vec<T> {
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

/// A line of `ls` from the row of [`Store::newest`]'s query.
pub(super) fn run_row(r: &rusqlite::Row) -> rusqlite::Result<RunRow> {
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

/// Writes one run: its record whole, and the columns queries need (next to the type:
/// [`RunRecord::index`]).
pub(super) fn write_run(tx: &Transaction, r: &RunRecord) -> rusqlite::Result<i64> {
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
pub(super) fn meta_label(spec_json: Option<String>) -> Option<String> {
    serde_json::from_str::<crate::spec::Workload>(&spec_json?).ok().map(|w| w.label())
}
