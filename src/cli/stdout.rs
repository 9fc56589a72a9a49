//! Standard output, written in one place. A reader that stops reading (`iosurvey export | head
//! -1`) closes the pipe; that ends the output, not the command: the work goes on (a run is
//! still stored, a campaign still runs its points), nothing more is printed, and the exit code
//! is the command's own, 0 when it succeeded, as `head` asked for no more and nothing failed.
//! Any other write error (a full disk behind `>`) is kept for the command's closing line.
//! `std::print!` would panic on either; the command line's modules may not use it (clippy's
//! `print_stdout`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Whether standard output is gone: nothing more is written to it.
static GONE: AtomicBool = AtomicBool::new(false);

/// Why standard output could not be written, when not because its reader left.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Writes `text` to standard output, whole, now.
pub fn print(text: impl AsRef<[u8]>) {
    if GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_ref()).and_then(|()| out.flush()) {
        GONE.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            *FAILED.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
        }
    }
}

/// Why standard output could not be written, once: for the command's closing line.
pub fn failure() -> Option<String> {
    FAILED.lock().unwrap_or_else(|p| p.into_inner()).take()
}
