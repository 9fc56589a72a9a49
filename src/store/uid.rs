//! The unique ids rows are merged by (`iosurvey merge`): 128 bits as 32 lowercase hex
//! digits, random for a new row, derived from its content for a row of an older store and
//! from its name and version for a campaign's version.

use rusqlite::types::Value;
use rusqlite::{params, Connection};
use std::io::Read;

/// A fresh random uid, read from /dev/urandom: two stores made on two nodes at the same
/// moment must never mint the same one, which a clock or a counter cannot promise.
pub fn fresh() -> rusqlite::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).map_err(|e| {
        let e = std::io::Error::new(e.kind(), format!("cannot read /dev/urandom for a row's uid: {e}"));
        rusqlite::Error::ToSqlConversionFailure(Box::new(e))
    })?;
    Ok(hex(u128::from_be_bytes(bytes)))
}

/// The uid of a campaign's version: the same in every store that ran the same file (its
/// version is a hash of the file's text), so that the stores of several jobs, each running
/// some of its points, merge into one version holding all of them.
pub fn campaign(name: &str, version: &str) -> String {
    derived(&[name.as_bytes(), version.as_bytes()])
}

/// The uid of a campaign version from its spec (its name and version), when it has both: a
/// calibration's scratch campaign has no version and is never merged as one.
pub(super) fn of_campaign(spec: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(spec).ok()?;
    Some(campaign(v.get("name")?.as_str()?, v.get("version")?.as_str()?))
}

/// FNV-1a 128 of `parts`, each with its length first so that no two lists spell the same
/// bytes: stable across builds and machines, unlike the standard hasher.
fn derived(parts: &[&[u8]]) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut h = OFFSET;
    for part in parts {
        for &b in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            h = (h ^ u128::from(b)).wrapping_mul(PRIME);
        }
    }
    hex(h)
}

/// Gives every row without a uid the one its content derives: its table, id and every
/// column; a group's also its runs' uids (two sweeps begun by one command line in the same
/// second differ in their runs), a campaign version's its name and version ([`campaign`]).
/// The rows of an older store when it is migrated, whether in place or in a merge's copy
/// (made again at each merge), so both name them alike.
pub(super) fn fill(conn: &Connection) -> rusqlite::Result<()> {
    for table in ["runs", "net_runs", "hooks", "groups"] {
        let rows: Vec<(i64, Vec<Value>)> = conn
            .prepare(&format!("SELECT * FROM {table} WHERE uid IS NULL ORDER BY id"))?
            .query_map([], |r| {
                let values = (0..r.as_ref().column_count()).map(|i| r.get(i)).collect::<Result<Vec<Value>, _>>()?;
                Ok((r.get("id")?, values))
            })?
            .collect::<Result<_, _>>()?;
        for (id, values) in rows {
            let mut parts: Vec<Vec<u8>> = vec![table.as_bytes().to_vec()];
            parts.extend(values.iter().map(encode));
            let mut uid = None;
            if table == "groups" {
                let (kind, spec): (String, String) =
                    conn.query_row("SELECT kind, spec_json FROM groups WHERE id = ?1", [id], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?;
                uid = of_campaign(&spec).filter(|_| kind == "campaign");
                let runs: Vec<String> = conn
                    .prepare("SELECT uid FROM runs WHERE group_id = ?1 ORDER BY id")?
                    .query_map([id], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                parts.extend(runs.into_iter().map(String::into_bytes));
            }
            let own = derived(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>());
            // A second version of one campaign (two commands began it at once) keeps a uid of
            // its own.
            let taken = |u: &str| -> rusqlite::Result<bool> {
                conn.query_row(&format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE uid = ?1)"), [u], |r| r.get(0))
            };
            let uid = match uid {
                Some(u) if !taken(&u)? => u,
                _ => own,
            };
            conn.execute(&format!("UPDATE {table} SET uid = ?1 WHERE id = ?2"), params![uid, id])?;
        }
    }
    Ok(())
}

/// A column's value as bytes, its type first.
fn encode(v: &Value) -> Vec<u8> {
    let (tag, bytes) = match v {
        Value::Null => (0u8, Vec::new()),
        Value::Integer(i) => (1, i.to_le_bytes().to_vec()),
        Value::Real(f) => (2, f.to_bits().to_le_bytes().to_vec()),
        Value::Text(t) => (3, t.as_bytes().to_vec()),
        Value::Blob(b) => (4, b.clone()),
    };
    std::iter::once(tag).chain(bytes).collect()
}

fn hex(v: u128) -> String {
    format!("{v:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_uids_differ_and_have_the_migrations_shape() {
        let (a, b) = (fresh().unwrap(), fresh().unwrap());
        assert_ne!(a, b);
        for u in [&a, &b, &campaign("t", "0123456789abcdef")] {
            assert_eq!(u.len(), 32, "{u}");
            assert!(u.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{u}");
        }
    }

    #[test]
    fn a_campaign_uid_is_its_name_and_version_and_nothing_else() {
        assert_eq!(campaign("eval", "00ff"), campaign("eval", "00ff"));
        assert_ne!(campaign("eval", "00ff"), campaign("eval", "00fe"));
        assert_ne!(campaign("eval", "00ff"), campaign("eva", "l00ff"), "the parts are not run together");
        // Pinned (computed apart from this code): stores made by older builds must keep
        // merging with newer ones.
        assert_eq!(campaign("t", "0123456789abcdef"), "4b5e3a6b233d0777343e479e68178374");
    }
}
