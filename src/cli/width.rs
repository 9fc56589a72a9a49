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
    let mut size = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ fills the winsize it is given and nothing else.
    let asked = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (asked == 0 && size.ws_col > 0).then_some(size.ws_col as usize)
}

pub(super) use iosurvey::report::wrap;
