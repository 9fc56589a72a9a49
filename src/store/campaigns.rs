//! What the store keeps of campaigns: each version of a campaign file is a group `cN` whose
//! spec holds the file; a point is a run filed in it (its study the run's name, its target the
//! run's label, its key the workload key) or a group whose parent it is (a survey, a matrix)
//! carrying the same three; the hooks run around points are kept beside them.

use super::{PointName, Store, StoreError};
pub use crate::record::point::{PointKey, StudyKey, WorkloadKey};
use crate::record::HookRun;
use crate::record::{GroupId, GroupKind};
use rusqlite::params;
use std::collections::HashMap;

/// A version of a campaign as `ls` lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CampaignRow {
    /// Its name in the store (c3).
    pub id: String,
    /// The campaign's name, shared by its versions.
    pub name: String,
    /// The version (a hash of the file's text).
    pub version: String,
    /// Start, Unix seconds.
    pub started: i64,
    /// running, ok or failed.
    pub state: String,
    /// Points stored whole in this version.
    pub ok: usize,
    /// Points that failed in this version.
    pub failed: usize,
}

/// A hook as kept, with the point it ran for.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptHook {
    /// The point, for a hook around a run; none around a study.
    pub point: Option<PointName>,
    /// The study, for a hook around a study.
    pub study: Option<String>,
    /// Its repetition.
    pub repetition: Option<u32>,
    /// How it ran.
    pub run: HookRun,
}

/// What a campaign's points came to: each point name with how many ended ok and failed.
pub type Tally = HashMap<PointName, (usize, usize)>;

/// The scale a campaign version's spec says it ran at. A scale that is not a whole number of
/// 1 or more (a store written before the scale was capped, or made by hand) reads as its
/// nearest such number, the same wherever it is read, so the store stays readable.
pub fn stored_scale(spec: &serde_json::Value) -> Option<u64> {
    let n = &spec["scale"];
    n.as_u64().or_else(|| n.as_f64().filter(|x| x.is_finite()).map(|x| x.max(1.0) as u64)).filter(|&n| n >= 1)
}

/// Schema v17: the point keys kept before as text (`KEY tasks=N scale=1/M`, a whole study's
/// `kind --flag=value ...` as typed) rewritten as [`PointKey`]'s columns: a group's key and a
/// hook's key the study's key in its normal form, a hook's tasks in its own column, the scale
/// left to the version's spec (where it always was). The one place old keys are read.
pub(super) fn migrate_point_keys(tx: &rusqlite::Transaction) -> rusqlite::Result<()> {
    let legacy = |text: &str| -> (StudyKey, Option<usize>) {
        let text = text.rsplit_once(" scale=1/").map_or(text, |(k, _)| k);
        if text.starts_with('{') {
            return match text.rsplit_once(" tasks=") {
                Some((k, n)) => (StudyKey::Workload(WorkloadKey(k.into())), n.parse().ok()),
                None => (StudyKey::Workload(WorkloadKey(text.into())), None),
            };
        }
        let (kind, rest) = text.split_once(' ').unwrap_or((text, ""));
        // Each setting was written `--name=value` (or `--name` alone), joined by spaces.
        let settings = rest.split(" --").filter(|s| !s.is_empty()).map(|s| {
            let s = s.trim_start_matches('-');
            match s.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (s, None),
            }
        });
        (StudyKey::whole(kind, settings), None)
    };
    for (table, has_tasks) in [("groups", false), ("hooks", true)] {
        let rows: Vec<(i64, String)> = tx
            .prepare(&format!("SELECT id, key FROM {table} WHERE key IS NOT NULL"))?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (id, text) in rows {
            let (key, tasks) = legacy(&text);
            match has_tasks {
                true => tx.execute(
                    "UPDATE hooks SET key = ?1, tasks = ?2 WHERE id = ?3",
                    params![key.as_str(), tasks.map(|n| n as i64), id],
                )?,
                false => tx.execute("UPDATE groups SET key = ?1 WHERE id = ?2", params![key.as_str(), id])?,
            };
        }
    }
    Ok(())
}

/// The error a campaign's point is stored with until the hooks after it judged it: what it
/// keeps saying should the campaign end before they did (killed, or its machine gone).
pub const UNJUDGED: &str = "stored before the hooks after it judged it, and the campaign ended before they did";

/// The campaign groups of `name`, through their rows: `c.id`.
const VERSIONS: &str = "SELECT id FROM groups WHERE kind = 'campaign' AND json_extract(spec_json, '$.name') = ?1";

impl Store {
    /// Every point of campaign `name`, in any version, with how many ended ok and failed.
    pub fn campaign_tally(&self, name: &str) -> Result<Tally, StoreError> {
        // Each point gets its version's scale (stored_scale), as the plan's points get it.
        let scales = self.campaign_scales(name)?;
        let runs = format!(
            "SELECT r.name, r.system_label, r.workload_key, json_extract(r.spec_json, '$.tasks'), r.status, c.number
             FROM runs r JOIN groups c ON c.id = r.group_id WHERE r.group_id IN ({VERSIONS})"
        );
        let groups = format!(
            "SELECT g.name, g.label, g.key, NULL, g.state, c.number
             FROM groups g JOIN groups c ON c.id = g.parent WHERE g.parent IN ({VERSIONS})"
        );
        let mut tally = Tally::new();
        for (sql, whole) in [(runs, false), (groups, true)] {
            let mut stmt = self.conn.prepare(&sql).map_err(|e| self.wrap(e))?;
            let rows = stmt
                .query_map(params![name], |r| {
                    let key = r.get::<_, Option<String>>(2)?.unwrap_or_default();
                    let point = PointName {
                        study: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                        target: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                        key: PointKey {
                            study: if whole { StudyKey::Whole(key) } else { StudyKey::Workload(WorkloadKey(key)) },
                            tasks: r.get::<_, Option<i64>>(3)?.and_then(|n| usize::try_from(n).ok()),
                            scale: scales.get(&r.get::<_, i64>(5)?).copied().flatten(),
                        },
                    };
                    Ok((point, r.get::<_, String>(4)?))
                })
                .map_err(|e| self.wrap(e))?;
            for row in rows {
                let (point, state) = row.map_err(|e| self.wrap(e))?;
                let entry = tally.entry(point).or_default();
                match state.as_str() {
                    "ok" => entry.0 += 1,
                    _ => entry.1 += 1,
                }
            }
        }
        Ok(tally)
    }

    /// What a point of a study that files no group through a session made, as the point's
    /// group keeps it (`study::point_group`): the ids of its runs and the network's figures;
    /// nothing for any other group.
    pub fn point_made(&self, g: GroupId) -> Result<(Vec<i64>, Vec<crate::record::net::NetResult>), StoreError> {
        let spec: serde_json::Value = serde_json::from_str(&self.group(g)?.spec).unwrap_or_default();
        let runs = spec["runs"].as_array().map_or(Vec::new(), |v| v.iter().filter_map(|x| x.as_i64()).collect());
        let net = serde_json::from_value(spec["net"].clone()).unwrap_or_default();
        Ok((runs, net))
    }

    /// Keeps the hooks that ran for a point (or, with no point, around `study`) of campaign
    /// version `campaign`.
    pub fn save_hooks(
        &self,
        campaign: GroupId,
        point: Option<(&PointName, u32)>,
        study: &str,
        runs: &[HookRun],
    ) -> Result<(), StoreError> {
        let row = self.group_row(campaign)?;
        let now = crate::units::now_unix();
        for h in runs {
            self.conn
                .execute(
                    "INSERT INTO hooks (campaign, hook, command, study, target, key, repetition, node, status,
                        output, secs, started, uid, tasks)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                    params![
                        row,
                        h.hook,
                        h.command,
                        study,
                        point.map(|p| &p.0.target),
                        point.map(|p| p.0.key.study.as_str()),
                        point.map(|p| p.1),
                        h.node,
                        h.status,
                        h.output,
                        h.secs,
                        now,
                        super::uid::fresh().map_err(|e| self.wrap(e))?,
                        point.and_then(|p| p.0.key.tasks).map(|n| n as i64)
                    ],
                )
                .map_err(|e| self.wrap(e))?;
        }
        Ok(())
    }

    /// The hooks kept for campaign `name`, in the order they ran.
    pub fn hooks_of(&self, name: &str) -> Result<Vec<KeptHook>, StoreError> {
        let scales = self.campaign_scales(name)?;
        let sql = format!(
            "SELECT h.hook, h.command, h.study, h.target, h.key, h.repetition, h.node, h.status, h.output, h.secs,
                h.tasks, c.number
             FROM hooks h JOIN groups c ON c.id = h.campaign WHERE h.campaign IN ({VERSIONS}) ORDER BY h.id"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params![name], |r| {
                let study: Option<String> = r.get(2)?;
                let target: Option<String> = r.get(3)?;
                let key: Option<String> = r.get(4)?;
                let tasks = r.get::<_, Option<i64>>(10)?.and_then(|n| usize::try_from(n).ok());
                let scale = scales.get(&r.get::<_, i64>(11)?).copied().flatten();
                let point = match (&study, target, key) {
                    // A run point has its tasks; a study run whole has none.
                    (Some(s), Some(target), Some(key)) => Some(PointName {
                        study: s.clone(),
                        target,
                        key: PointKey {
                            study: match tasks {
                                Some(_) => StudyKey::Workload(WorkloadKey(key)),
                                None => StudyKey::Whole(key),
                            },
                            tasks,
                            scale,
                        },
                    }),
                    _ => None,
                };
                Ok(KeptHook {
                    point,
                    study,
                    repetition: r.get(5)?,
                    run: HookRun {
                        hook: r.get(0)?,
                        command: r.get(1)?,
                        node: r.get(6)?,
                        status: r.get(7)?,
                        output: r.get(8)?,
                        secs: r.get(9)?,
                        // Said in the output, which the store keeps.
                        stopped: false,
                    },
                })
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.wrap(e))
    }

    /// Every version of every campaign, oldest first.
    pub fn campaigns(&self) -> Result<Vec<CampaignRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT g.number, json_extract(g.spec_json, '$.name'), json_extract(g.spec_json, '$.version'),
                    g.started, g.state,
                    (SELECT COUNT(*) FROM runs r WHERE r.group_id = g.id AND r.status = 'ok')
                        + (SELECT COUNT(*) FROM groups c WHERE c.parent = g.id AND c.state = 'ok'),
                    (SELECT COUNT(*) FROM runs r WHERE r.group_id = g.id AND r.status = 'failed')
                        + (SELECT COUNT(*) FROM groups c WHERE c.parent = g.id AND c.state != 'ok')
                 FROM groups g WHERE g.kind = 'campaign' ORDER BY g.number",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(CampaignRow {
                    id: format!("c{}", r.get::<_, i64>(0)?),
                    name: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    version: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    started: r.get(3)?,
                    state: r.get(4)?,
                    ok: r.get::<_, i64>(5)? as usize,
                    failed: r.get::<_, i64>(6)? as usize,
                })
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.wrap(e))
    }

    /// The ids of the runs of campaign `name`: its points' runs and the runs of the groups
    /// that are its points, in the order they were stored.
    pub fn campaign_runs(&self, name: &str) -> Result<Vec<i64>, StoreError> {
        let sql = format!(
            "SELECT id FROM runs WHERE group_id IN ({VERSIONS})
                OR group_id IN (SELECT id FROM groups WHERE parent IN ({VERSIONS}))
             ORDER BY id"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.wrap(e))?;
        let rows = stmt.query_map(params![name], |r| r.get(0)).map_err(|e| self.wrap(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.wrap(e))
    }

    /// The groups that are points of campaign `name` (a survey, a matrix, an IO500 list),
    /// with their point names and states.
    pub fn campaign_groups(&self, name: &str) -> Result<Vec<(GroupId, PointName, String)>, StoreError> {
        let scales = self.campaign_scales(name)?;
        let sql = format!(
            "SELECT g.kind, g.number, g.name, g.label, g.key, g.state, c.number
             FROM groups g JOIN groups c ON c.id = g.parent WHERE g.parent IN ({VERSIONS}) ORDER BY g.id"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params![name], |r| {
                let kind: String = r.get(0)?;
                Ok((
                    GroupId { kind: GroupKind::from_name(&kind).unwrap_or(GroupKind::Survey), number: r.get(1)? },
                    PointName {
                        study: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                        target: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                        key: PointKey {
                            study: StudyKey::Whole(r.get::<_, Option<String>>(4)?.unwrap_or_default()),
                            tasks: None,
                            scale: scales.get(&r.get::<_, i64>(6)?).copied().flatten(),
                        },
                    },
                    r.get(5)?,
                ))
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.wrap(e))
    }
}

impl Store {
    /// Stores the last run (or group) of `point` in campaign version `campaign` as failed,
    /// for `why`: a hook after it failed, so the point is not whole.
    pub fn fail_point(&self, campaign: GroupId, point: &PointName, why: &str) -> Result<(), StoreError> {
        self.set_point(campaign, point, Some(why), None)
    }

    /// The hooks after the last run (or group) of `point` in campaign version `campaign`
    /// passed: stored as failed until now ([`UNJUDGED`]), it is ok.
    pub fn judge_point(&self, campaign: GroupId, point: &PointName) -> Result<(), StoreError> {
        self.set_point(campaign, point, None, Some(UNJUDGED))
    }

    /// Sets the last run (and group) of `point` failed for `why`, or ok (`why` None); with
    /// `only_if`, only a run stored with that error.
    fn set_point(
        &self,
        campaign: GroupId,
        point: &PointName,
        why: Option<&str>,
        only_if: Option<&str>,
    ) -> Result<(), StoreError> {
        let row = self.group_row(campaign)?;
        let state = if why.is_some() { "failed" } else { "ok" };
        let key = point.key.study.as_str();
        match point.key.study {
            StudyKey::Workload(_) => self.conn.execute(
                "UPDATE runs SET status = ?6, error = ?5,
                    record_json = json_set(record_json, '$.record.status', ?6, '$.record.error', ?5)
                 WHERE id = (SELECT MAX(id) FROM runs WHERE group_id = ?1 AND name = ?2 AND system_label = ?3
                    AND workload_key = ?4 AND json_extract(spec_json, '$.tasks') = ?8)
                    AND (?7 IS NULL OR error = ?7)",
                params![row, point.study, point.target, key, why, state, only_if, point.key.tasks.map(|n| n as i64)],
            ),
            StudyKey::Whole(_) => self.conn.execute(
                "UPDATE groups SET state = ?5 WHERE id = (SELECT MAX(id) FROM groups WHERE parent = ?1
                    AND name = ?2 AND label = ?3 AND key = ?4)",
                params![row, point.study, point.target, key, state],
            ),
        }
        .map_err(|e| self.wrap(e))?;
        Ok(())
    }

    /// Campaign version `campaign` runs from now, in this process, which its spec names, so
    /// that a later command can tell it from one whose process is gone.
    pub fn campaign_running(&self, campaign: GroupId) -> Result<(), StoreError> {
        let row = self.group_row(campaign)?;
        self.conn
            .execute(
                "UPDATE groups SET state = 'running',
                    spec_json = json_set(spec_json, '$.process', json_object('pid', ?2, 'host', ?3)) WHERE id = ?1",
                params![row, std::process::id(), crate::env::hostname()],
            )
            .map_err(|e| self.wrap(e))?;
        Ok(())
    }

    /// Files as failed each campaign version still running whose process, on this host, is
    /// gone: killed, or ended before it could file the version. Returns their names.
    pub fn settle_abandoned_campaigns(&self) -> Result<Vec<GroupId>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT number, json_extract(spec_json, '$.process.pid'), json_extract(spec_json, '$.process.host')
                 FROM groups WHERE kind = 'campaign' AND state = 'running'
                    AND json_type(spec_json, '$.process.pid') = 'integer'",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, Option<String>>(2)?)))
            .map_err(|e| self.wrap(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.wrap(e))?;
        let mut settled = Vec::new();
        for (number, pid, host) in rows {
            let holder =
                crate::target::manifest::Holder { pid: pid as u32, host: host.unwrap_or_default(), started: 0 };
            if u32::try_from(pid).is_ok() && holder.is_gone() {
                let g = GroupId { kind: GroupKind::Campaign, number };
                self.finish_group(g, false, None)?;
                settled.push(g);
            }
        }
        Ok(settled)
    }

    /// The scale (`--scale 1/N`) each version of campaign `name` was run at, by number.
    pub fn campaign_scales(&self, name: &str) -> Result<HashMap<i64, Option<u64>>, StoreError> {
        // Read from the JSON text, not json_extract: SQLite gives a number past i64 as a REAL.
        let mut stmt = self
            .conn
            .prepare(
                "SELECT number, spec_json FROM groups WHERE kind = 'campaign'
                    AND json_extract(spec_json, '$.name') = ?1",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params![name], |r| {
                let spec: serde_json::Value = serde_json::from_str(&r.get::<_, String>(1)?).unwrap_or_default();
                Ok((r.get(0)?, stored_scale(&spec)))
            })
            .map_err(|e| self.wrap(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.wrap(e))
    }

    /// Removes campaign version `campaign` when it holds no run and no group (its hooks go
    /// with it); says whether it did.
    pub fn drop_empty_campaign(&self, campaign: GroupId) -> Result<bool, StoreError> {
        let row = self.group_row(campaign)?;
        let empty: bool = self
            .conn
            .query_row(
                "SELECT NOT EXISTS (SELECT 1 FROM runs WHERE group_id = ?1)
                    AND NOT EXISTS (SELECT 1 FROM groups WHERE parent = ?1)",
                [row],
                |r| r.get(0),
            )
            .map_err(|e| self.wrap(e))?;
        if empty {
            self.conn.execute("DELETE FROM hooks WHERE campaign = ?1", [row]).map_err(|e| self.wrap(e))?;
            self.conn.execute("DELETE FROM groups WHERE id = ?1", [row]).map_err(|e| self.wrap(e))?;
        }
        Ok(empty)
    }

    /// The group of campaign `name` at `version`, when one was begun.
    pub fn campaign_version(&self, name: &str, version: &str) -> Result<Option<GroupId>, StoreError> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(
                "SELECT number FROM groups WHERE kind = 'campaign' AND json_extract(spec_json, '$.name') = ?1
                    AND json_extract(spec_json, '$.version') = ?2 ORDER BY number DESC LIMIT 1",
                params![name, version],
                |r| r.get(0),
            )
            .optional()
            .map(|n| n.map(|number| GroupId { kind: GroupKind::Campaign, number }))
            .map_err(|e| self.wrap(e))
    }

    /// The groups stored whole that were a campaign's whole-study point `key` (at its scale)
    /// on the system labelled `label`, newest first.
    pub fn groups_of_point(&self, label: &str, key: &PointKey) -> Result<Vec<GroupId>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT g.kind, g.number, c.spec_json FROM groups g JOIN groups c ON c.id = g.parent
                 WHERE g.label = ?1 AND g.key = ?2 AND g.state = 'ok' ORDER BY g.id DESC",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params![label, key.study.as_str()], |r| {
                let kind: String = r.get(0)?;
                let spec: serde_json::Value = serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or_default();
                let g = GroupId { kind: GroupKind::from_name(&kind).unwrap_or(GroupKind::Survey), number: r.get(1)? };
                Ok((g, stored_scale(&spec)))
            })
            .map_err(|e| self.wrap(e))?;
        let mut found = Vec::new();
        for row in rows {
            let (g, scale) = row.map_err(|e| self.wrap(e))?;
            if scale == key.scale {
                found.push(g);
            }
            if found.len() == 20 {
                break;
            }
        }
        Ok(found)
    }

    /// The runs stored whole of run point `key` on the system labelled `label`, newest first:
    /// any run of the workload at its tasks estimates it, whatever campaign (or scale) it ran in.
    pub fn runs_of_point(&self, label: &str, key: &PointKey) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id FROM runs WHERE system_label = ?1 AND workload_key = ?2
                    AND json_extract(spec_json, '$.tasks') = ?3 AND status = 'ok' ORDER BY id DESC LIMIT 20",
            )
            .map_err(|e| self.wrap(e))?;
        let rows = stmt
            .query_map(params![label, key.study.as_str(), key.tasks.map(|n| n as i64)], |r| r.get(0))
            .map_err(|e| self.wrap(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.wrap(e))
    }
}
