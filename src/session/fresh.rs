//! The fresh directory a study makes for itself (`iosurvey-KIND-PID`), and the reclaiming of
//! those that commands killed with their janitor left behind.

use crate::target::dir::Dir;
use crate::target::Target;
use std::os::unix::ffi::OsStrExt;

/// The name of this process's fresh directory for a study of `kind`.
pub(super) fn name(kind: &str) -> String {
    format!("iosurvey-{kind}-{}", std::process::id())
}

/// Whether `name` is one [`name`] makes: `iosurvey-KIND-PID`.
fn fresh_dir_name(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(b"iosurvey-") else { return false };
    match rest.iter().rposition(|&c| c == b'-') {
        Some(at) => {
            let (kind, pid) = (&rest[..at], &rest[at + 1..]);
            !kind.is_empty()
                && kind.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && !pid.is_empty()
                && pid.iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

/// Removes the fresh directories in `parent` of commands that were killed with their janitor,
/// as the next run in each would (their `running` files, their manifest, then the directory if
/// nothing else is in it): only where its lock shows no run holds it, or its holder is a process
/// of this host that has ended. Returns what to say.
pub(super) fn reclaim_dead_siblings(parent: &Dir) -> Vec<String> {
    let mut notes = Vec::new();
    for name in parent.list().unwrap_or_default() {
        if !fresh_dir_name(name.as_bytes()) || name.as_bytes().ends_with(format!("-{}", std::process::id()).as_bytes())
        {
            continue;
        }
        let Ok(dir) = parent.open_subdir(&name) else { continue };
        // Only a directory with iosurvey's manifest: it says whose files are in it.
        if !dir.stat(crate::target::MANIFEST).is_ok_and(|m| m.is_some()) {
            continue;
        }
        let left = Target::reclaim(&dir, Some((parent, &name)), std::time::Duration::ZERO);
        if let Ok(problems) = left {
            let what = parent.show(&name).display().to_string();
            notes.push(match problems.is_empty() {
                true => format!("removed {what}, left by an iosurvey command that was killed"),
                false => format!(
                    "could not remove all of {what}, left by a killed iosurvey command: {}",
                    problems.join("; ")
                ),
            });
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_fresh_dir_makes_are_reclaimed() {
        for ours in ["iosurvey-survey-42", "iosurvey-io500-1", "iosurvey-matrix-99999"] {
            assert!(fresh_dir_name(ours.as_bytes()), "{ours}");
        }
        for other in [
            "iosurvey-survey-",
            "iosurvey--42",
            "iosurvey-Survey-4",
            "iosurvey-survey-4x",
            "data",
            "iosurvey.meta",
            "x-iosurvey-survey-4",
        ] {
            assert!(!fresh_dir_name(other.as_bytes()), "{other}");
        }
    }
}
