//! Runs exported a row per phase (`iosurvey export --format csv`): the run's identity, every
//! figure of the phase and every field of its workload, for spreadsheets and dashboards. The
//! columns are listed, one by one, in docs/methodology.md, "Exported columns".

use crate::escape::csv_field;
use crate::record::{PhaseRecord, RunRecord};
use serde_json::Value;
use std::collections::BTreeSet;

/// The columns before the workload's: the run, then the phase.
const FIXED: [&str; 30] = [
    "run",
    "group",
    "label",
    "provenance",
    "started_utc",
    "status",
    "host",
    "target",
    "fs_type",
    "command_line",
    "op",
    "iteration",
    "bytes",
    "ops",
    "window_s",
    "bandwidth_bytes_per_s",
    "bandwidth_mib_per_s",
    "transfer_rate_bytes_per_s",
    "iops",
    "task_min_bytes_per_s",
    "task_max_bytes_per_s",
    "first_finish_rate_bytes_per_s",
    "latency_mean_us",
    "latency_p50_us",
    "latency_p99_us",
    "latency_max_us",
    "possibly_cached",
    "caches_dropped",
    "verify_checked",
    "verify_bad",
];

/// A workload's fields as `workload.NAME` columns, nested objects as `workload.meta.NAME`.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Null => out.push((prefix.to_string(), String::new())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

fn workload_fields(r: &RunRecord) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(v) = serde_json::to_value(&r.workload) {
        flatten("workload", &v, &mut out);
    }
    out
}

fn number(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x}"))
}

fn phase_cells(r: &RunRecord, p: &PhaseRecord) -> Vec<String> {
    let f = &p.figures;
    let us = |ns: f64| if p.latency.count > 0 { format!("{:.3}", ns / 1e3) } else { String::new() };
    vec![
        r.id.map_or(String::new(), |i| i.to_string()),
        r.group().map_or(String::new(), |g| g.to_string()),
        r.label.clone().unwrap_or_default(),
        r.provenance.clone(),
        crate::units::format_time(r.started),
        r.status.name(),
        r.env.host.clone(),
        r.env.target.clone(),
        r.env.fs_type.clone(),
        r.command_line.clone(),
        p.op.name(),
        p.iteration.to_string(),
        f.bytes.to_string(),
        f.ops.to_string(),
        format!("{}", f.window_ns as f64 / 1e9),
        number(f.bandwidth),
        number(f.bandwidth.map(|b| b / 1_048_576.0)),
        number(f.transfer_rate),
        number(f.iops),
        number(f.task_min),
        number(f.task_max),
        number(f.first_finish_rate),
        us(p.latency.mean),
        us(p.latency.p50 as f64),
        us(p.latency.p99 as f64),
        us(p.latency.max as f64),
        p.possibly_cached.clone().unwrap_or_default(),
        p.caches_dropped.to_string(),
        p.verify.as_ref().map_or(String::new(), |v| v.checked.to_string()),
        p.verify.as_ref().map_or(String::new(), |v| v.bad.to_string()),
    ]
}

/// The runs as CSV, a row per phase: the fixed columns, then every workload field any of the
/// runs has (sorted by name; empty where a run's workload has no such field).
pub fn phases_csv(runs: &[RunRecord]) -> String {
    let fields: Vec<Vec<(String, String)>> = runs.iter().map(workload_fields).collect();
    let names: BTreeSet<&str> = fields.iter().flatten().map(|(k, _)| k.as_str()).collect();
    let mut out = FIXED
        .iter()
        .copied()
        .chain(names.iter().copied())
        .map(|c| csv_field(c).into_owned())
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for (r, fields) in runs.iter().zip(&fields) {
        let workload: Vec<String> = names
            .iter()
            .map(|n| fields.iter().find(|(k, _)| k == n).map_or(String::new(), |(_, v)| v.clone()))
            .collect();
        for p in &r.phases {
            let cells = phase_cells(r, p).into_iter().chain(workload.iter().cloned());
            out.push_str(&cells.map(|c| csv_field(&c).into_owned()).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workloads_fields_become_columns_by_name() {
        let w = crate::spec::Workload { iterations: 2, ..Default::default() };
        let fields = {
            let mut out = Vec::new();
            flatten("workload", &serde_json::to_value(&w).unwrap(), &mut out);
            out
        };
        assert!(fields.iter().any(|(k, v)| k == "workload.iterations" && v == "2"), "{fields:?}");
        assert!(fields.iter().any(|(k, _)| k == "workload.transfer"));
    }
}
