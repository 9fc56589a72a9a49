//! pwrite/pread: the POSIX baseline, one transfer at a time.

use super::{transfer_all, Backend, BufRef, Completion};
use crate::spec::Op;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

struct Sync {
    bufs: Vec<BufRef>,
    fd: i32,
    op: Op,
    done: Option<Completion>,
}

pub fn open(_depth: usize, bufs: Vec<BufRef>) -> io::Result<Box<dyn Backend>> {
    Ok(Box::new(Sync { bufs, fd: -1, op: Op::Read, done: None }))
}

impl Backend for Sync {
    fn attach(&mut self, file: &File, op: Op, _size: u64) -> io::Result<()> {
        (self.fd, self.op) = (file.as_raw_fd(), op);
        Ok(())
    }
    unsafe fn submit(&mut self, slot: usize, offset: u64) -> io::Result<()> {
        self.done = Some((slot, transfer_all(self.fd, self.op, self.bufs[slot], offset)));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }
    fn detach(&mut self) {
        self.fd = -1;
    }
}
