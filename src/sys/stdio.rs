//! A C stdio stream (`FILE *`) over a copy of a descriptor, with a buffer of its own size:
//! fwrite and fread as a buffered library makes them.

use super::fs::dup_cloexec;
use std::io;
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::ptr::NonNull;

/// An open stream; closed (with its descriptor) when dropped.
pub(crate) struct Stream {
    file: NonNull<libc::FILE>,
}

impl Stream {
    /// A stream for writing (or reading) over a copy of `fd`, fully buffered with a buffer of
    /// `buffer` bytes that stdio allocates. The copy shares the original's file position.
    pub(crate) fn over_copy(fd: RawFd, write: bool, buffer: usize) -> io::Result<Stream> {
        let copy = dup_cloexec(fd)?;
        let mode = if write { c"w" } else { c"r" };
        // SAFETY: the copy is open and ours; mode is NUL-terminated. On success the stream
        // owns the descriptor; on failure `copy` still does and closes it.
        let Some(file) = NonNull::new(unsafe { libc::fdopen(copy.as_raw_fd(), mode.as_ptr()) }) else {
            return Err(io::Error::last_os_error());
        };
        let _owned_by_the_stream = copy.into_raw_fd();
        let stream = Stream { file };
        // SAFETY: a fresh stream, before any I/O on it; stdio allocates the buffer.
        if unsafe { libc::setvbuf(stream.file.as_ptr(), std::ptr::null_mut(), libc::_IOFBF, buffer) } != 0 {
            return Err(io::Error::other("setvbuf refused a buffer of one transfer"));
        }
        Ok(stream)
    }

    /// Moves the stream to `offset` (fseeko).
    pub(crate) fn seek(&mut self, offset: u64) -> io::Result<()> {
        // SAFETY: the stream is open.
        match unsafe { libc::fseeko(self.file.as_ptr(), offset as libc::off_t, libc::SEEK_SET) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// fwrite of all of `buf`, pushed to the file at once (fflush): the bytes taken.
    pub(crate) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: the stream is open; buf is valid for reads of its length.
        let n = unsafe { libc::fwrite(buf.as_ptr().cast(), 1, buf.len(), self.file.as_ptr()) };
        // SAFETY: the stream is open.
        let failed = unsafe { libc::ferror(self.file.as_ptr()) != 0 || libc::fflush(self.file.as_ptr()) != 0 };
        if failed {
            return Err(io::Error::last_os_error());
        }
        Ok(n)
    }

    /// fread into all of `buf`: the bytes read (fewer only at the end of the file).
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: the stream is open; buf is valid for writes of its length.
        let n = unsafe { libc::fread(buf.as_mut_ptr().cast(), 1, buf.len(), self.file.as_ptr()) };
        // SAFETY: the stream is open.
        if unsafe { libc::ferror(self.file.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n)
    }

    /// Pushes what the stream's buffer holds to the file.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        // SAFETY: the stream is open.
        match unsafe { libc::fflush(self.file.as_ptr()) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: closes the stream and its copy of the descriptor, once.
        unsafe { libc::fclose(self.file.as_ptr()) };
    }
}
