//! fwrite/fread through a stdio stream whose buffer is one transfer (IOzone's fwrite and fread
//! tests): what a buffered library adds over the plain system calls. One transfer at a time;
//! one away from where the last ended seeks first.

use super::{no_file, probe_by_opening, Backend, BufRef, Capabilities, Completion, Registered, Setup};
use crate::spec::Op;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "stream",
    about: "fwrite/fread through a stdio stream with a buffer of one transfer, one at a time",
    caps: Capabilities::STORAGE,
    probe: |depth| probe_by_opening(open, depth),
    open,
    param: None,
    refuses: Some(|w| {
        // The stream is set up for one direction per phase, and stdio's buffer has no
        // alignment O_DIRECT could count on.
        if w.ops.contains(&Op::Mix) {
            Some("the stream engine cannot mix reads and writes in one phase".into())
        } else {
            w.direct.then(|| "the stream engine goes through stdio's buffer, which O_DIRECT refuses".into())
        }
    }),
};

struct Stream {
    bufs: Vec<BufRef>,
    /// The stream over a copy of the phase's descriptor; null between phases.
    file: *mut libc::FILE,
    op: Op,
    /// Where the stream stands in the file.
    at: u64,
    done: Option<Completion>,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(Box::new(Stream { bufs: setup.bufs, file: std::ptr::null_mut(), op: Op::Read, at: 0, done: None }))
}

impl Stream {
    /// Moves buffer `slot` at `offset` through the stream: the bytes moved (fewer only at the
    /// end of a file).
    fn transfer(&mut self, slot: usize, offset: u64) -> io::Result<usize> {
        let buf = self.bufs[slot];
        // SAFETY: self.file is an open stream while attached (submit runs only then).
        unsafe {
            if offset != self.at && libc::fseeko(self.file, offset as libc::off_t, libc::SEEK_SET) != 0 {
                return Err(io::Error::last_os_error());
            }
            let n = match self.op {
                Op::Write => libc::fwrite(buf.ptr.cast(), 1, buf.len, self.file),
                _ => libc::fread(buf.ptr.cast(), 1, buf.len, self.file),
            };
            // A write is pushed at once (its buffer holds one transfer, so stdio would write it
            // now anyway): no byte waits in the stream for a close that cannot report failure.
            let failed = libc::ferror(self.file) != 0 || (self.op == Op::Write && libc::fflush(self.file) != 0);
            if failed {
                return Err(io::Error::last_os_error());
            }
            self.at = offset + n as u64;
            Ok(n)
        }
    }
}

impl Backend for Stream {
    fn attach(&mut self, file: Option<&File>, op: Op, _size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        // SAFETY: duplicates an open descriptor; the copy belongs to the stream from here on.
        let fd = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mode = if op == Op::Write { c"w" } else { c"r" };
        // SAFETY: fd is open and ours; on failure it is closed here.
        let stream = unsafe { libc::fdopen(fd, mode.as_ptr()) };
        if stream.is_null() {
            let e = io::Error::last_os_error();
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let len = self.bufs.first().map_or(4096, |b| b.len);
        // SAFETY: a fresh stream, before any I/O on it; stdio allocates the buffer.
        if unsafe { libc::setvbuf(stream, std::ptr::null_mut(), libc::_IOFBF, len) } != 0 {
            unsafe { libc::fclose(stream) };
            return Err(io::Error::other("setvbuf refused a buffer of one transfer"));
        }
        // The copy shares the original's position, which pread and pwrite never move: 0.
        (self.file, self.op, self.at) = (stream, op, 0);
        Ok(())
    }
    unsafe fn submit(&mut self, slot: usize, offset: u64, _op: Op) -> io::Result<()> {
        self.done = Some((slot, self.transfer(slot, offset)));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        // SAFETY: an open stream while attached.
        match self.file.is_null() || unsafe { libc::fflush(self.file) } == 0 {
            true => Ok(()),
            false => Err(io::Error::last_os_error()),
        }
    }
    fn detach(&mut self) {
        if !self.file.is_null() {
            // SAFETY: closes the stream and its copy of the descriptor once; nothing is left
            // in its buffer (every write was pushed).
            unsafe { libc::fclose(self.file) };
            self.file = std::ptr::null_mut();
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.detach();
    }
}
