//! The library's hints, spelled with this command line's flag names (a front end that takes
//! IOR's or IOzone's options spells the same hints with theirs): the spelling of this process,
//! for lines said outside a study (see `iosurvey::study::hint`).

use iosurvey::spec::Hint;
pub use iosurvey::study::hint::Command as Cmd;
use iosurvey::study::hint::{respell, spell_for};
use std::sync::OnceLock;

/// The command of this process, set once before it runs.
static COMMAND: OnceLock<Cmd> = OnceLock::new();

/// Says which command's flags spell the hints of this process.
pub fn set_command(cmd: Cmd) {
    let _ = COMMAND.set(cmd);
}

/// How the user spelled the flags this process's hints name, where the user did not type
/// iosurvey's own command line: a front end's letters (IOzone's `-b` for `--csv`), a campaign
/// file's keys (`force = true` for `--force`). Pairs of the flag as iosurvey spells it and as
/// the user does; set once, by the command that read such a line.
static SPOKEN: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// Says how the user spells iosurvey's flags in this process: `(flag, spelling)` pairs.
pub fn speak(pairs: Vec<(String, String)>) {
    let _ = SPOKEN.set(pairs);
}

/// `line` (an error or warning line, its hint last) with the flags its hint names spelled as
/// the user spells them in this process. Only the hint: what went wrong may quote the native
/// command line on purpose.
pub fn respelled(line: &str) -> std::borrow::Cow<'_, str> {
    match (SPOKEN.get(), line.rfind(" (hint: ")) {
        (Some(pairs), Some(at)) if !pairs.is_empty() => {
            std::borrow::Cow::Owned(format!("{}{}", &line[..at], respell(&line[at..], pairs)))
        }
        _ => std::borrow::Cow::Borrowed(line),
    }
}

/// The command whose flags spell the hints of this process.
pub fn current() -> Cmd {
    COMMAND.get().copied().unwrap_or(Cmd::Run)
}

/// A hint in words, with the flags of the command of this process.
pub fn spell(h: &Hint) -> String {
    spell_for(h, current())
}
