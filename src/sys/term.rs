//! The terminal standard output is drawn on: its width, for the binary's help and tables.

/// The width in columns of the terminal on standard output; none when it is no terminal or
/// will not say.
pub fn stdout_columns() -> Option<usize> {
    let mut size = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes the winsize it is given, a live local, and nothing else.
    let asked = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    (asked == 0 && size.ws_col > 0).then_some(usize::from(size.ws_col))
}
