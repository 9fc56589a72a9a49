//! Copies to and from a shared mapping of the file. Writes allocate the file's blocks to its
//! full size first (posix_fallocate, never shrinking): a store into a mapped page the file
//! system cannot back kills the process (SIGBUS), so a full disk must show up here, as an
//! ordinary ENOSPC, before the first copy. Reads refuse a file shorter than the workload for
//! the same reason. A device error under the mapping also arrives as SIGBUS: a handler turns
//! it into an ordinary EIO for the copy that touched the page (`sys::mmap`'s guard).

use super::{in_flight, no_file, probe_by_opening, Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use crate::sys::errno::EINVAL;
use crate::sys::fs::fallocate;
use crate::sys::mmap::Mapping;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "mmap",
    about: "memcpy to and from a shared mapping of the file",
    caps: Capabilities { writes_need_read: true, page_cache_always: true, ..Capabilities::STORAGE },
    probe: |depth| probe_by_opening(open, depth),
    open,
    param: None,
    // The mapping is set up for one direction per phase.
    refuses: Some(|ops, _| {
        ops.contains(&Op::Mix).then(|| "the mmap engine cannot mix reads and writes in one phase".into())
    }),
    takes: super::Handles::Files,
};

struct Mmap {
    bufs: IoBufs,
    /// The phase's mapping; none between phases.
    map: Option<Mapping>,
    op: Op,
    done: Option<Completion>,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(Box::new(Mmap { bufs: setup.bufs, map: None, op: Op::Read, done: None }))
}

impl Backend for Mmap {
    fn attach(&mut self, file: Option<&File>, op: Op, size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        let len = file.metadata()?.len();
        match op {
            Op::Write => fallocate(file.as_raw_fd(), size)?,
            Op::Read if len < size => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the file holds {len} bytes, the workload reads {size}"),
                ))
            }
            _ => {}
        }
        // The old mapping (if any) goes first: its thread's SIGBUS guard watches one at a time.
        self.map = None;
        self.map = Some(Mapping::shared(file.as_raw_fd(), size as usize, op == Op::Write)?);
        self.op = op;
        Ok(())
    }
    fn submit(&mut self, slot: usize, offset: u64, _op: Op) -> io::Result<()> {
        let map = self.map.as_mut().ok_or_else(no_file)?;
        let buf = self.bufs.get_mut(slot).ok_or_else(in_flight)?;
        if offset as usize + buf.len() > map.len() {
            return Err(io::Error::from_raw_os_error(EINVAL));
        }
        // A page that fails under the copy is an EIO for this transfer.
        let result = match self.op {
            Op::Write => map.write_at(offset, buf),
            _ => map.read_at(offset, buf),
        };
        self.done = Some((slot, result));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.map.as_ref().map_or(Ok(()), Mapping::sync)
    }
    fn detach(&mut self) {
        self.map = None;
    }
    fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }
}
