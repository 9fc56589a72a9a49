//! Files imported from other tools (`iosurvey import`): every file of one command stored in
//! one transaction, each known by the digest of its bytes so that importing it again stores
//! nothing.

use super::{write_run, GroupStart, Store, StoreError};
use crate::record::imported::Imported;
use crate::record::{GroupId, GroupKind};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

/// One file to store, read whole.
pub struct ImportFile<'a> {
    /// The file as the user named it.
    pub file: &'a str,
    /// FNV-1a 64 of its bytes (the `import` room's `digest`).
    pub digest: u64,
    /// The tool.
    pub tool: &'a str,
    /// What it gave.
    pub parsed: &'a Imported,
    /// The command line that imported it.
    pub command_line: &'a str,
}

/// What a file became in the store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Became {
    /// Run ids.
    #[serde(default)]
    pub runs: Vec<i64>,
    /// The IO500 list (sN) the runs are, if they are one.
    #[serde(default)]
    pub list: Option<i64>,
    /// The matrix (mN).
    #[serde(default)]
    pub matrix: Option<i64>,
    /// Network figures' ids.
    #[serde(default)]
    pub net: Vec<i64>,
}

/// What storing a file did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Stored now.
    Stored(Became),
    /// The same bytes were imported before (from this file name then): nothing stored.
    Before {
        /// The name it was imported under.
        file: String,
        /// What it became then.
        became: Became,
    },
}

impl Store {
    /// Stores every file in one transaction, each file not imported before; `now` is when.
    /// An error stores nothing of any of them.
    pub fn import(&mut self, files: &[ImportFile], now: i64) -> Result<Vec<Outcome>, StoreError> {
        // Unchecked: the group and matrix methods write through the connection itself, inside
        // this transaction, which is rolled back when dropped uncommitted.
        let tx = self.conn.unchecked_transaction().map_err(|e| self.wrap(e))?;
        let mut outcomes = Vec::new();
        for f in files {
            let digest = format!("fnv1a64:{:016x}", f.digest);
            let before: Option<(String, String)> = tx
                .query_row("SELECT file, stored FROM imports WHERE digest = ?1", [&digest], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .optional()
                .map_err(|e| self.wrap(e))?;
            if let Some((file, stored)) = before {
                let became = serde_json::from_str(&stored).unwrap_or_default();
                outcomes.push(Outcome::Before { file, became });
                continue;
            }
            let became = self.store_one(&tx, f)?;
            let text = serde_json::to_string(&became).unwrap_or_default();
            tx.execute(
                "INSERT INTO imports (digest, file, tool, imported, stored) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![digest, f.file, f.tool, now, text],
            )
            .map_err(|e| self.wrap(e))?;
            outcomes.push(Outcome::Stored(became));
        }
        tx.commit().map_err(|e| self.wrap(e))?;
        Ok(outcomes)
    }

    fn store_one(&self, tx: &rusqlite::Transaction, f: &ImportFile) -> Result<Became, StoreError> {
        let p = f.parsed;
        let mut became = Became::default();
        let list = match &p.io500 {
            Some(score) => {
                let spec = serde_json::json!({ "imported": p.source, "file": f.file, "score": score }).to_string();
                let start = GroupStart {
                    kind: GroupKind::Io500,
                    parent: None,
                    started: p.runs.first().map_or(0, |r| r.started),
                    command_line: f.command_line.to_string(),
                    spec,
                    point: None,
                };
                Some(self.begin_group(&start)?)
            }
            None => None,
        };
        for run in &p.runs {
            let mut run = run.clone();
            run.survey_id = list.map(|g| g.number);
            became.runs.push(write_run(tx, &run).map_err(|e| self.wrap(e))?);
        }
        if let Some(g) = list {
            self.finish_group(g, true, None)?;
            became.list = Some(g.number);
        }
        if let Some(m) = &p.matrix {
            let GroupId { number, .. } = self.begin_matrix(m)?;
            self.finish_matrix(number, m)?;
            became.matrix = Some(number);
        }
        for (started, n) in &p.net {
            became.net.push(self.save_net(*started, f.command_line, n)?);
        }
        Ok(became)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_stored_once_and_a_failure_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let mut run = crate::record::fixtures::run(None);
        run.provenance = "imported:ior 4".into();
        let parsed = Imported { source: "ior 4".into(), runs: vec![run.clone(), run], ..Imported::default() };
        let file = |digest| ImportFile { file: "a.txt", digest, tool: "ior", parsed: &parsed, command_line: "x" };
        let first = store.import(&[file(1)], 10).unwrap();
        assert_eq!(first, [Outcome::Stored(Became { runs: vec![1, 2], ..Became::default() })]);
        let again = store.import(&[file(1), file(1)], 11).unwrap();
        assert!(again.iter().all(|o| matches!(o, Outcome::Before { file, .. } if file == "a.txt")), "{again:?}");
        assert_eq!(store.list().unwrap().len(), 2);
        // The second file's run fails to store: the first file's runs go too.
        let mut bad_run = crate::record::fixtures::run(None);
        bad_run.sweep_id = Some(99);
        let bad = Imported { source: "ior 4".into(), runs: vec![bad_run], ..Imported::default() };
        let files = [file(2), ImportFile { file: "b.txt", digest: 3, tool: "ior", parsed: &bad, command_line: "x" }];
        assert!(store.import(&files, 12).is_err());
        assert_eq!(store.list().unwrap().len(), 2, "nothing of the failed command is stored");
        let n: i64 = store.conn.query_row("SELECT COUNT(*) FROM imports", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
    }
}
