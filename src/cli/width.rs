//! The terminal's width, one answer for the help and the tables: `COLUMNS` when set (so a
//! script or a test can ask for a width), else the terminal standard output is, else none (a
//! pipe or a file takes lines whole).

/// The width to fit, in columns; none when output is not for a terminal of known width.
pub(super) fn columns() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0) {
        return Some(n);
    }
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    iosurvey::sys::term::stdout_columns()
}
