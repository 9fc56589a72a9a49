//! The manifest: the list, kept in the target, of the files iosurvey created there, written
//! before each file exists so that even a crash leaves them recognisably iosurvey's.
//!
//! ```text
//! iosurvey-manifest 2
//! holder 4242 node17 1795430000
//! running iosurvey.000000
//! kept iosurvey.shared
//! ```
//!
//! `running` files belong to the run named by `holder`; when a later run finds them while it
//! holds the directory's lock, their run died and they are removed. `kept` files were left
//! with `--keep` and stay until a run that creates them again removes them. A manifest of
//! plain names, one per line, is the first format; its names count as kept.

use super::dir::plain_name;
use std::collections::BTreeMap;
use std::fmt;

const HEADER: &str = "iosurvey-manifest 2";

/// The largest manifest iosurvey reads: far above any real one, so memory stays bounded.
pub const MAX_BYTES: usize = 1 << 20;

/// What an entry is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Created by the holder's run, removed when it ends.
    Running,
    /// Left with `--keep`.
    Kept,
}

/// The run holding the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// Start, Unix seconds.
    pub started: i64,
}

impl Holder {
    /// Whether the holder is known to have ended: a process of this host that no longer
    /// exists. A holder on another host cannot be checked, so it is never known gone.
    pub fn is_gone(&self) -> bool {
        if self.host != crate::env::hostname() {
            return false;
        }
        let probed = crate::sys::signal::probe_process(self.pid);
        probed.is_err_and(|e| e.raw_os_error() == Some(crate::sys::errno::ESRCH))
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pid {} on {} since {}", self.pid, self.host, crate::units::format_time(self.started))
    }
}

/// A parsed manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The run that holds (or last held) the directory.
    pub holder: Option<Holder>,
    /// Entry name -> state.
    pub entries: BTreeMap<String, State>,
}

/// A manifest that cannot be trusted: its line number and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadManifest {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

impl fmt::Display for BadManifest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

fn entry_name(name: &str, line: usize) -> Result<String, BadManifest> {
    if plain_name(name.as_ref()) {
        Ok(name.to_string())
    } else {
        Err(BadManifest { line, why: format!("{name:?} is not a plain file name in the target") })
    }
}

impl Manifest {
    /// Reads a manifest's text; any line that is not a plain name of a file in the target (a
    /// slash, `..`) makes the whole manifest untrusted.
    pub fn parse(text: &str) -> Result<Manifest, BadManifest> {
        if text.len() > MAX_BYTES {
            return Err(BadManifest { line: 0, why: format!("larger than {MAX_BYTES} bytes") });
        }
        let mut m = Manifest::default();
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        if !text.starts_with(HEADER) {
            for (n, name) in lines.filter(|(_, l)| !l.is_empty()) {
                m.entries.insert(entry_name(name, n)?, State::Kept);
            }
            return Ok(m);
        }
        lines.next();
        for (n, line) in lines.filter(|(_, l)| !l.is_empty()) {
            let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
            match word {
                "holder" => {
                    m.holder =
                        Some(parse_holder(rest).ok_or_else(|| BadManifest { line: n, why: "bad holder line".into() })?)
                }
                "running" => drop(m.entries.insert(entry_name(rest, n)?, State::Running)),
                "kept" => drop(m.entries.insert(entry_name(rest, n)?, State::Kept)),
                _ => return Err(BadManifest { line: n, why: format!("unknown entry kind {word:?}") }),
            }
        }
        Ok(m)
    }

    /// The text to write.
    pub fn render(&self) -> String {
        let mut s = format!("{HEADER}\n");
        if let Some(h) = &self.holder {
            s += &format!("holder {} {} {}\n", h.pid, h.host, h.started);
        }
        for (name, state) in &self.entries {
            let word = match state {
                State::Running => "running",
                State::Kept => "kept",
            };
            s += &format!("{word} {name}\n");
        }
        s
    }
}

fn parse_holder(rest: &str) -> Option<Holder> {
    let mut f = rest.split(' ');
    let holder = Holder { pid: f.next()?.parse().ok()?, host: f.next()?.to_string(), started: f.next()?.parse().ok()? };
    (f.next().is_none() && !holder.host.is_empty()).then_some(holder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut m = Manifest {
            holder: Some(Holder { pid: 7, host: "n1".into(), started: 1_700_000_000 }),
            ..Manifest::default()
        };
        m.entries.insert("iosurvey.000000".into(), State::Running);
        m.entries.insert("iosurvey.shared".into(), State::Kept);
        assert_eq!(Manifest::parse(&m.render()), Ok(m));
    }

    #[test]
    fn the_first_format_is_read_as_kept_names() {
        let m = Manifest::parse("iosurvey.000000\n\niosurvey.000001\n").unwrap();
        assert_eq!(m.entries.len(), 2);
        assert!(m.entries.values().all(|s| *s == State::Kept));
    }

    #[test]
    fn names_that_leave_the_directory_are_refused() {
        for text in [
            "../etc/passwd\n",
            "a/b\n",
            "..\n",
            "iosurvey-manifest 2\nrunning /etc/shadow\n",
            "iosurvey-manifest 2\nrunning \n",
        ] {
            assert!(Manifest::parse(text).is_err(), "{text:?}");
        }
        let e = Manifest::parse("iosurvey-manifest 2\nholder x y z\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(Manifest::parse("iosurvey-manifest 2\nremove everything\n").is_err());
    }

    #[test]
    fn a_name_ending_in_a_carriage_return_is_refused_not_mangled() {
        // Found by fuzz/run: "kept a\r" at the end of the text parsed as "a\r", rendered as
        // "kept a\r\n", and read back as "a".
        assert!(Manifest::parse("iosurvey-manifest 2\nkept a\r").is_err());
        assert!(Manifest::parse("a\r").is_err());
    }
}
