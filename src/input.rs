//! Files the user names for iosurvey to read: a campaign file, an IOR script (`ior -f`), an
//! IOzone client list (`iozone -+m`), a tool's output to import, a store to merge. Each is
//! opened once without blocking and checked, on that open descriptor, to be a regular file
//! before a byte of it is read. A FIFO named as an input would otherwise hang the open until
//! some writer came (for ever, as a rule), and a device such as /dev/zero would be read
//! without end; a check by path before the open would leave a moment in which the name can be
//! swapped for one of those, which a check of the descriptor read does not.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use thiserror::Error;

/// What a symbolic link in the input's place means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// The file it points to is read.
    Follow,
    /// It is refused: the caller wants the file itself (one whose owner and mode it checks).
    Refuse,
}

/// Why an input was not read.
#[derive(Debug, Error)]
pub enum InputError {
    /// The system's reason (missing, not permitted, ...).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Something else than a regular file: a FIFO, a device, a directory, a socket, a link.
    #[error("{0}, not a regular file")]
    NotRegular(&'static str),
    /// More bytes than such a file has.
    #[error("{size} bytes, more than the {max} iosurvey reads from such a file")]
    TooLarge {
        /// Its size (at least).
        size: u64,
        /// The most read.
        max: u64,
    },
}

/// What an entry is, in words, for a refusal.
fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    match () {
        _ if t.is_dir() => "a directory",
        _ if t.is_fifo() => "a FIFO",
        _ if t.is_socket() => "a socket",
        _ if t.is_block_device() => "a block device",
        _ if t.is_char_device() => "a character device",
        _ if t.is_symlink() => "a symbolic link",
        _ => "something else",
    }
}

/// Opens `path` for reading, once, and returns it with its status (of the descriptor opened)
/// only if it is a regular file.
pub fn open(path: &Path, links: Links) -> Result<(File, Metadata), InputError> {
    use crate::sys::fs::{O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK};
    // O_NONBLOCK: the open of a FIFO returns at once, to be refused below, instead of waiting
    // for a writer. On a regular file it changes nothing.
    let flags = O_NONBLOCK | O_CLOEXEC | if links == Links::Refuse { O_NOFOLLOW } else { 0 };
    let file = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path).map_err(|e| {
        match (links, e.raw_os_error()) {
            (Links::Refuse, Some(crate::sys::errno::ELOOP)) => InputError::NotRegular("a symbolic link"),
            _ => InputError::Io(e),
        }
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(InputError::NotRegular(kind(&meta)));
    }
    Ok((file, meta))
}

/// The bytes of `path`, a regular file of at most `max` bytes (checked as in [`open`]), with
/// its status.
pub fn read(path: &Path, max: u64, links: Links) -> Result<(Vec<u8>, Metadata), InputError> {
    let (file, meta) = open(path, links)?;
    if meta.len() > max {
        return Err(InputError::TooLarge { size: meta.len(), max });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read still stops one byte past the most.
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(InputError::TooLarge { size: bytes.len() as u64, max });
    }
    Ok((bytes, meta))
}

/// [`read`], as text: the bytes must be UTF-8.
pub fn read_text(path: &Path, max: u64, links: Links) -> Result<(String, Metadata), InputError> {
    let (bytes, meta) = read(path, max, links)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| InputError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, "not text (UTF-8)")))?;
    Ok((text, meta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn mkfifo(path: &Path) {
        assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    }

    #[test]
    fn a_fifo_a_directory_a_device_and_a_link_are_refused_without_waiting() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        mkfifo(&fifo);
        let file = tmp.path().join("file");
        std::fs::write(&file, "text").unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let began = Instant::now();
        let refused = |p: &Path, links| match read(p, 100, links) {
            Err(InputError::NotRegular(what)) => what,
            other => panic!("{} read: {other:?}", p.display()),
        };
        assert_eq!(refused(&fifo, Links::Follow), "a FIFO");
        assert_eq!(refused(tmp.path(), Links::Follow), "a directory");
        assert_eq!(refused(Path::new("/dev/zero"), Links::Follow), "a character device");
        assert_eq!(refused(&link, Links::Refuse), "a symbolic link");
        assert!(began.elapsed() < Duration::from_secs(5), "no open waited for a writer");
        assert_eq!(read_text(&link, 100, Links::Follow).unwrap().0, "text");
        assert_eq!(read_text(&file, 4, Links::Refuse).unwrap().0, "text");
        assert!(matches!(read(&file, 3, Links::Follow), Err(InputError::TooLarge { size: 4, max: 3 })));
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(read_text(&file, 10, Links::Follow).unwrap_err().to_string().contains("UTF-8"));
    }
}
