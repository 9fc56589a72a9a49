//! The rows of a v4 store, read back into records: only for the migration that stores each
//! run's record whole (schema v5). v4 kept a run in four tables and recomputed its figures
//! from the per-task timings on load; this reads them the same way, once.

use crate::env::Environment;
use crate::measure::histogram::Latency;
use crate::measure::{aggregate, Series, TaskTiming};
use crate::record::{PhaseRecord, RunRecord, Status, VerifySummary};
use crate::spec::Op;
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row};

/// Reads a run of a v4 store back from its rows (figures recomputed from the tasks, as v4
/// did); `None` when there is no such run.
pub(super) fn load(conn: &Connection, id: i64) -> rusqlite::Result<Option<RunRecord>> {
    let head = conn
        .query_row(
            "SELECT survey_id, name, started, status, error, command_line, spec_json, warnings_json,
                    host, kernel, cpu_model, cpu_count, ram_bytes, target, fs_type, mount_source,
                    mount_point, mount_options, block_device, tool_version, sweep_id, clock_uncertainty_ns,
                    reorder_crosses_nodes FROM runs WHERE id = ?1",
            [id],
            |r| {
                let env = environment(r)?;
                let team = (r.get::<_, Option<i64>>(20)?, r.get::<_, i64>(21)? as u64, r.get::<_, bool>(22)?);
                Ok((
                    team,
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get::<_, String>(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                    env,
                ))
            },
        )
        .optional()?;
    let Some(head) = head else { return Ok(None) };
    let (
        (sweep_id, clock_uncertainty_ns, reorder_crosses_nodes),
        survey_id,
        name,
        started,
        status,
        error,
        command_line,
        spec_json,
        warnings_json,
        env,
    ) = head;
    let damaged = |_: &str, e: serde_json::Error| rusqlite::Error::FromSqlConversionFailure(0, Type::Text, Box::new(e));
    let workload = serde_json::from_str(&spec_json).map_err(|e| damaged("spec", e))?;
    let warnings = serde_json::from_str(&warnings_json).map_err(|e| damaged("warnings", e))?;
    let status = match status.as_str() {
        "ok" => Status::Ok,
        _ => Status::Failed,
    };
    Ok(Some(RunRecord {
        id: Some(id),
        survey_id,
        name,
        started,
        status,
        error,
        command_line,
        workload,
        env,
        phases: load_phases(conn, id)?,
        training: None,
        warnings,
        sweep_id,
        hosts: load_hosts(conn, id)?,
        clock_uncertainty_ns,
        reorder_crosses_nodes,
        failure_hint: None,
        interrupted: false,
        provenance: crate::record::MEASURED.into(),
        label: None,
        matrix_id: None,
        campaign_id: None,
        targets_id: None,
        events: Vec::new(),
        tool_params: Default::default(),
    }))
}

/// A v4 run's environment, from columns 8 to 19 of its row.
fn environment(r: &Row) -> rusqlite::Result<Environment> {
    let text = |i| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
    Ok(Environment {
        host: text(8)?,
        kernel: text(9)?,
        cpu_model: text(10)?,
        cpu_count: r.get::<_, Option<i64>>(11)?.unwrap_or(0) as usize,
        ram_bytes: r.get::<_, Option<i64>>(12)?.unwrap_or(0) as u64,
        target: text(13)?,
        fs_type: text(14)?,
        mount_source: text(15)?,
        mount_point: text(16)?,
        mount_options: text(17)?,
        block_device: r.get(18)?,
        tool_version: text(19)?,
        devices: Vec::new(),
        targets: Vec::new(),
    })
}

/// A task's timing, from its row of v4's tasks table.
fn task(r: &Row) -> rusqlite::Result<TaskTiming> {
    let n = |i| r.get::<_, i64>(i).map(|v| v as u64);
    Ok(TaskTiming {
        task: r.get(0)?,
        node: r.get(1)?,
        bytes: n(2)?,
        ops: n(3)?,
        open_start: n(4)?,
        xfer_start: n(5)?,
        xfer_end: n(6)?,
        sync_end: n(7)?,
        close_end: n(8)?,
        bytes_at_first_finish: n(9)?,
    })
}

fn load_hosts(conn: &Connection, run_id: i64) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT host FROM nodes WHERE run_id = ?1 ORDER BY node")?;
    let hosts = stmt.query_map([run_id], |r| r.get(0)).and_then(|h| h.collect())?;
    Ok(hosts)
}

fn load_phases(conn: &Connection, run_id: i64) -> rusqlite::Result<Vec<PhaseRecord>> {
    let mut stmt = conn.prepare(
        "SELECT id, op, iteration, possibly_cached, caches_dropped, verify_checked, verify_bad,
                    verify_stale, verify_first, latency_json, series_origin_ns, series_interval_ns
             FROM phases WHERE run_id = ?1 ORDER BY seq",
    )?;
    let heads = stmt
        .query_map([run_id], |r| {
            let verify = r.get::<_, Option<i64>>(5)?.map(|checked| -> rusqlite::Result<VerifySummary> {
                Ok(VerifySummary {
                    checked: checked as u64,
                    bad: r.get::<_, i64>(6)? as u64,
                    stale: r.get::<_, i64>(7)? as u64,
                    first: r.get(8)?,
                })
            });
            let series = Series {
                origin_ns: r.get::<_, i64>(10)? as u64,
                interval_ns: r.get::<_, i64>(11)? as u64,
                ..Series::default()
            };
            Ok((
                (r.get::<_, i64>(0)?, r.get::<_, Option<String>>(9)?, series),
                r.get::<_, String>(1)?,
                r.get::<_, u32>(2)?,
                r.get(3)?,
                r.get(4)?,
                verify.transpose()?,
            ))
        })
        .and_then(|h| h.collect::<Result<Vec<_>, _>>())?;
    let mut series_stmt = conn.prepare("SELECT bytes, ops FROM series WHERE phase_id = ?1 ORDER BY idx")?;
    let mut tasks_stmt = conn.prepare(
        "SELECT task, node, bytes, ops, open_start, xfer_start, xfer_end, sync_end, close_end,
                    bytes_at_first_finish FROM tasks WHERE phase_id = ?1 ORDER BY task",
    )?;
    heads
        .into_iter()
        .map(|((phase_id, latency_json, mut series), op, iteration, possibly_cached, caches_dropped, verify)| {
            let latency: Latency = match latency_json {
                Some(text) => serde_json::from_str(&text)
                    .map_err(|e| rusqlite::Error::FromSqlConversionFailure(9, Type::Text, Box::new(e)))?,
                None => Latency::default(),
            };
            let rows: Vec<(i64, i64)> =
                series_stmt.query_map([phase_id], |r| Ok((r.get(0)?, r.get(1)?))).and_then(|t| t.collect())?;
            (series.bytes, series.ops) = rows.into_iter().map(|(b, o)| (b as u64, o as u64)).unzip();
            let tasks: Vec<TaskTiming> = tasks_stmt.query_map([phase_id], task).and_then(|t| t.collect())?;
            let op = match op.as_str() {
                "write" => Op::Write,
                "read" => Op::Read,
                other => return Err(rusqlite::Error::InvalidColumnName(format!("op {other}"))),
            };
            Ok(PhaseRecord {
                op,
                iteration,
                figures: aggregate(&tasks),
                possibly_cached,
                caches_dropped,
                verify,
                latency,
                series,
                tasks,
                requests: Vec::new(),
            })
        })
        .collect()
}
