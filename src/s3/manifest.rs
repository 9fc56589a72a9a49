//! Which objects are iosurvey's: a run names every object `PREFIX/iosurvey-TOKEN/NAME` (TOKEN
//! the run's 16 hex digits) and writes the key in its manifest before the request that makes
//! it, so a PUT whose answer was lost is still removed. Clean-up deletes exactly the keys of
//! the manifest: an object someone else put, even under the run's own prefix, is reported and
//! left alone.

use super::error::{Op, S3Error};
use super::location::Location;
use super::xml::Listed;
use super::Client;
use std::collections::BTreeSet;

/// Whether `key` has iosurvey's naming under `location`'s prefix: `iosurvey-`, 16 lower-case
/// hex digits, `/`, then a name.
pub fn is_iosurvey_key(location: &Location, key: &str) -> bool {
    let Some(rest) = key.strip_prefix(&location.prefix).and_then(|r| r.strip_prefix("iosurvey-")) else {
        return false;
    };
    let Some((token, name)) = rest.split_once('/') else {
        return false;
    };
    token.len() == 16 && token.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) && !name.is_empty()
}

/// The objects one run named under its location's prefix.
#[derive(Debug, Clone)]
pub struct Manifest {
    location: Location,
    run_prefix: String,
    keys: BTreeSet<String>,
}

/// What a clean-up did.
#[derive(Debug, Default)]
pub struct Cleanup {
    /// Keys deleted (S3 does not say whether a key named but never written was there).
    pub removed: usize,
    /// Deletes that failed; their keys stay in the manifest for another try.
    pub failed: Vec<S3Error>,
    /// Objects under the run's prefix that the manifest does not name: not removed.
    pub strangers: Vec<Listed>,
    /// Multipart uploads under the run's prefix left open (an abort that failed), aborted.
    pub aborted: usize,
}

/// The object that says which process holds a run's prefix (`HOST PID`), so that a run or a
/// janitor can tell a run that was killed from one still going.
pub const HOLDER: &str = ".holder";

/// What emptying a dead run's prefix did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Objects deleted, the holder included.
    pub removed: usize,
    /// Multipart uploads aborted.
    pub aborted: usize,
    /// Objects and uploads still there.
    pub left: usize,
}

impl Swept {
    /// What it did, as a note says it ("removed 3 objects and aborted 1 open multipart
    /// upload").
    pub fn said(&self) -> String {
        let aborted = match self.aborted {
            0 => String::new(),
            n => format!(" and aborted {n} open multipart upload{}", if n == 1 { "" } else { "s" }),
        };
        let left = match self.left {
            0 => String::new(),
            n => format!(" ({n} could not be removed; the next run tries again)"),
        };
        format!("removed {} objects{aborted}{left}", self.removed)
    }
}

/// Aborts every open multipart upload of iosurvey's naming under `run_prefix`: how many were.
fn abort_open_uploads(client: &Client, run_prefix: &str) -> Result<usize, S3Error> {
    let open = client.list_uploads(run_prefix)?;
    Ok(open.iter().filter(|u| client.abort_upload(&u.key, &u.id).is_ok()).count())
}

/// Deletes every object and aborts every open upload under a dead run's prefix (of
/// iosurvey's naming, so a run's own), its holder last so that an emptying cut short is found
/// again. The prefix is listed afresh, and again after each round, because a request the dead
/// run had in flight may land after the first listing.
pub fn empty_run(client: &Client, run_prefix: &str) -> Swept {
    const ROUNDS: usize = 3;
    let holder = format!("{run_prefix}{HOLDER}");
    let mut swept = Swept::default();
    let left = |client: &Client| {
        client.list(run_prefix).map_or(1, |l| l.len()) + client.list_uploads(run_prefix).map_or(1, |u| u.len())
    };
    for _ in 0..ROUNDS {
        let (Ok(listed), Ok(open)) = (client.list(run_prefix), client.list_uploads(run_prefix)) else { break };
        let data: Vec<&str> = listed.iter().map(|o| o.key.as_str()).filter(|k| *k != holder).collect();
        if data.is_empty() && open.is_empty() {
            return match client.delete(&holder) {
                Ok(()) => Swept { removed: swept.removed + 1, left: 0, ..swept },
                Err(_) => Swept { left: 1, ..swept },
            };
        }
        swept.aborted += open.iter().filter(|u| client.abort_upload(&u.key, &u.id).is_ok()).count();
        swept.removed += data.iter().filter(|k| client.delete(k).is_ok()).count();
    }
    Swept { left: left(client), ..swept }
}

impl Manifest {
    /// An empty manifest for the run of `token` under `location`.
    pub fn new(location: &Location, token: u64) -> Manifest {
        Manifest {
            location: location.clone(),
            run_prefix: format!("{}iosurvey-{token:016x}/", location.prefix),
            keys: BTreeSet::new(),
        }
    }

    /// `PREFIX/iosurvey-TOKEN/`: where every object of this run goes.
    pub fn prefix(&self) -> &str {
        &self.run_prefix
    }

    /// The key of the run's object `name`, written in the manifest. A name is a relative
    /// path of `A-Z a-z 0-9 . _ -` parts.
    pub fn name(&mut self, name: &str) -> Result<String, S3Error> {
        let part_ok = |p: &str| {
            !p.is_empty()
                && p != "."
                && p != ".."
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        };
        let key = format!("{}{name}", self.run_prefix);
        if !name.split('/').all(part_ok) {
            let why =
                "an object name is `/`-separated parts of A-Z, a-z, 0-9, `.`, `_` and `-` (no empty, `.` or `..` part)"
                    .into();
            return Err(S3Error::Outside { op: Op::Put, target: format!("{}/{key}", self.location.bucket), why });
        }
        self.keys.insert(key.clone());
        Ok(key)
    }

    /// The keys named so far and not yet removed.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(String::as_str)
    }

    /// Deletes every object of the manifest and aborts any upload left open under the run's
    /// prefix, then lists the prefix for what is still there. A key whose delete failed stays, so a second call tries it again.
    pub fn clean_up(&mut self, client: &Client) -> Cleanup {
        let mut out = Cleanup::default();
        let mut kept = BTreeSet::new();
        for key in std::mem::take(&mut self.keys) {
            match client.delete(&key) {
                Ok(()) => out.removed += 1,
                Err(e) => {
                    out.failed.push(e);
                    kept.insert(key);
                }
            }
        }
        match client.list(&self.run_prefix) {
            Ok(listed) => out.strangers = listed.into_iter().filter(|o| !kept.contains(&o.key)).collect(),
            Err(e) => out.failed.push(e),
        }
        match abort_open_uploads(client, &self.run_prefix) {
            Ok(n) => out.aborted = n,
            Err(e) => out.failed.push(e),
        }
        self.keys = kept;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keys_of_the_naming_under_the_prefix_are_iosurveys() {
        let loc = Location::parse("http://h:1/bkt/team/a").unwrap();
        let mut m = Manifest::new(&loc, 0xabc);
        let key = m.name("obj/3").unwrap();
        assert_eq!(key, "team/a/iosurvey-0000000000000abc/obj/3");
        assert!(is_iosurvey_key(&loc, &key));
        for other in [
            "team/a/obj",
            "team/b/iosurvey-0000000000000abc/x",
            "team/a/iosurvey-0000000000000ABC/x",
            "team/a/iosurvey-abc/x",
            "team/a/iosurvey-0000000000000abc/",
        ] {
            assert!(!is_iosurvey_key(&loc, other), "{other}");
        }
        for bad in ["", "a//b", "../x", "a/./b", "sp ace", "/abs"] {
            assert!(m.name(bad).is_err(), "{bad}");
        }
        assert_eq!(m.keys().collect::<Vec<_>>(), vec![key.as_str()]);
    }
}
