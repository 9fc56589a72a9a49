//! fwrite/fread through a stdio stream whose buffer is one transfer (IOzone's fwrite and fread
//! tests): what a buffered library adds over the plain system calls. One transfer at a time;
//! one away from where the last ended seeks first.

use super::{in_flight, no_file, probe_by_opening, Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use crate::sys::stdio as sys;
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
    refuses: Some(|ops, data| {
        // The stream is set up for one direction per phase, and stdio's buffer has no
        // alignment O_DIRECT could count on.
        if ops.contains(&Op::Mix) {
            Some("the stream engine cannot mix reads and writes in one phase".into())
        } else {
            data.direct.then(|| "the stream engine goes through stdio's buffer, which O_DIRECT refuses".into())
        }
    }),
    takes: super::Handles::Files,
};

struct Stream {
    bufs: IoBufs,
    /// The stream over a copy of the phase's descriptor; none between phases.
    file: Option<sys::Stream>,
    op: Op,
    /// Where the stream stands in the file.
    at: u64,
    done: Option<Completion>,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(Box::new(Stream { bufs: setup.bufs, file: None, op: Op::Read, at: 0, done: None }))
}

impl Stream {
    /// Moves buffer `slot` at `offset` through the stream: the bytes moved (fewer only at the
    /// end of a file).
    fn transfer(&mut self, slot: usize, offset: u64) -> io::Result<usize> {
        let buf = self.bufs.get_mut(slot).ok_or_else(in_flight)?;
        let file = self.file.as_mut().ok_or_else(no_file)?;
        if offset != self.at {
            file.seek(offset)?;
        }
        // A write is pushed at once (its buffer holds one transfer, so stdio would write it
        // now anyway): no byte waits in the stream for a close that cannot report failure.
        let n = match self.op {
            Op::Write => file.write(buf)?,
            _ => file.read(buf)?,
        };
        self.at = offset + n as u64;
        Ok(n)
    }
}

impl Backend for Stream {
    fn attach(&mut self, file: Option<&File>, op: Op, _size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        let stream = sys::Stream::over_copy(file.as_raw_fd(), op == Op::Write, self.bufs.slot_len())?;
        // The copy shares the original's position, which pread and pwrite never move: 0.
        (self.file, self.op, self.at) = (Some(stream), op, 0);
        Ok(())
    }
    fn submit(&mut self, slot: usize, offset: u64, _op: Op) -> io::Result<()> {
        self.done = Some((slot, self.transfer(slot, offset)));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), sys::Stream::flush)
    }
    fn detach(&mut self) {
        // Closes the stream and its copy of the descriptor; nothing is left in its buffer
        // (every write was pushed).
        self.file = None;
    }
    fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }
}
