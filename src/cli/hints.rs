//! The campaign driver's spelling of hints, until it says its errors through a spelling value
//! of its own (`iosurvey::study::hint::Respelled`): a campaign file's keys for the flags its
//! points' hints name. Every other command says a hint with a spelling handed to it.

use iosurvey::study::hint::respell;
use std::sync::OnceLock;

/// How the campaign file spells the flags its points' hints name (`force = true` for
/// `--force`): pairs of the flag as iosurvey spells it and as the file does; set once, by the
/// campaign that read the file.
static SPOKEN: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// Says how the campaign file spells iosurvey's flags: `(flag, spelling)` pairs.
pub fn speak(pairs: Vec<(String, String)>) {
    let _ = SPOKEN.set(pairs);
}

/// `line` (an error or warning line, its hint last) with the flags its hint names spelled as
/// the campaign file spells them. Only the hint: what went wrong may quote a command line on
/// purpose.
pub fn respelled(line: &str) -> std::borrow::Cow<'_, str> {
    match (SPOKEN.get(), line.rfind(" (hint: ")) {
        (Some(pairs), Some(at)) if !pairs.is_empty() => {
            std::borrow::Cow::Owned(format!("{}{}", &line[..at], respell(&line[at..], pairs)))
        }
        _ => std::borrow::Cow::Borrowed(line),
    }
}
