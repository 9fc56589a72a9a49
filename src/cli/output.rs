//! Files the user names for iosurvey to write, written as `iosurvey::report::output` writes
//! them (never through a link, never over a database, never half), the file in the middle
//! of being written known to the signal thread (`process::PENDING`).

pub(super) use iosurvey::report::output::{check, folder, is_stdout};
use iosurvey::study::Error;
use std::path::Path;

/// Writes `text` to `path` whole or not at all (see `iosurvey::report::output::write`).
pub(super) fn write(path: &Path, text: &[u8], store: &Path, what: &str) -> Result<(), Error> {
    iosurvey::report::output::write(path, text, store, what, &super::process::PENDING)
}

/// Removes an output's new file that a signal ends the process in the middle of.
pub(super) fn abandon() {
    iosurvey::report::output::abandon(&super::process::PENDING)
}
