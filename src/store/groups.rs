//! Groups of runs (surveys, sweeps, campaigns, matrices): begun, finished, read back.

use super::{campaigns, json, uid, Store, StoreError};
use crate::record::{GroupId, GroupKind, MatrixRecord, Status};
use rusqlite::{params, OptionalExtension};

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

impl Store {
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
    pub(super) fn group_row(&self, g: GroupId) -> Result<i64, StoreError> {
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
}
