//! pwrite/pread: the POSIX baseline, one transfer at a time.

use super::{
    in_flight, no_file, probe_by_opening, transfer_all, Backend, Capabilities, Completion, IoBufs, Registered, Setup,
};
use crate::spec::Op;
use std::fs::File;
use std::io;
use std::os::unix::io::{AsRawFd, RawFd};

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "sync",
    about: "pwrite/pread, one transfer at a time",
    caps: Capabilities::STORAGE,
    probe: |depth| probe_by_opening(open, depth),
    open,
    param: None,
    refuses: None,
    takes: super::Handles::Files,
};

/// Moves one whole transfer (fd, direction, buffer, offset), returning the bytes moved.
pub(super) type Transfer = fn(RawFd, Op, &mut [u8], u64) -> io::Result<usize>;

/// A backend that makes one transfer at a time, each with `transfer`.
struct Sync {
    bufs: IoBufs,
    fd: RawFd,
    done: Option<Completion>,
    transfer: Transfer,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(one_at_a_time(setup.bufs, transfer_all))
}

/// The one-at-a-time backend over `bufs` with its way of moving a transfer.
pub(super) fn one_at_a_time(bufs: IoBufs, transfer: Transfer) -> Box<dyn Backend> {
    Box::new(Sync { bufs, fd: -1, done: None, transfer })
}

impl Backend for Sync {
    fn attach(&mut self, file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        self.fd = file.ok_or_else(no_file)?.as_raw_fd();
        Ok(())
    }
    fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        let buf = self.bufs.get_mut(slot).ok_or_else(in_flight)?;
        self.done = Some((slot, (self.transfer)(self.fd, op, buf, offset)));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }
    fn detach(&mut self) {
        self.fd = -1;
    }
    fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }
}
