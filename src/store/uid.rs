//! The unique ids rows are merged by (`iosurvey merge`): 128 bits as 32 lowercase hex
//! digits, the shape SQLite's `lower(hex(randomblob(16)))` gives the rows v16 migrated.

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
/// some of its points, merge into one version holding all of them. FNV-1a 128 of the name
/// and the version, each with its length first so that no two pairs spell the same bytes.
pub fn campaign(name: &str, version: &str) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut bytes = Vec::new();
    for part in [name, version] {
        bytes.extend_from_slice(&(part.len() as u64).to_le_bytes());
        bytes.extend_from_slice(part.as_bytes());
    }
    hex(bytes.iter().fold(OFFSET, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME)))
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
