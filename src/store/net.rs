//! Network measurements, and the ceilings that apply to a run's nodes.

use super::{uid, Store, StoreError};
use crate::record::net::NetResult;
use rusqlite::params;

impl Store {
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
}
