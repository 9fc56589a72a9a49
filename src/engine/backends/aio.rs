//! Linux kernel AIO through its system calls (io_setup, io_submit, io_getevents), the
//! interface fio's libaio engine drives, for sites where io_uring is disabled. Calling the
//! kernel directly needs no libaio library. Like libaio, it is only asynchronous with
//! O_DIRECT; buffered transfers complete inside io_submit.

use super::{no_file, probe_by_opening, Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use crate::sys::aio as sys;
use std::fs::File;
use std::io;
use std::os::unix::io::{AsRawFd, RawFd};

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "libaio",
    about: "Linux kernel AIO (io_submit/io_getevents system calls, no library needed), --iodepth in flight",
    caps: Capabilities { queues: true, ..Capabilities::STORAGE },
    probe: |depth| probe_by_opening(open, depth),
    open,
    param: None,
    refuses: None,
    takes: super::Handles::Files,
};

/// Events read per wait at most: the core refills their slots at once, so the device sees a
/// steady trickle of new requests rather than bursts.
const REAP_BATCH: usize = 4;

struct Aio {
    ctx: sys::Aio,
    fd: RawFd,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(Box::new(Aio { ctx: sys::Aio::new(setup.depth, setup.bufs)?, fd: 0 }))
}

impl Backend for Aio {
    fn attach(&mut self, file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        self.fd = file.as_raw_fd();
        Ok(())
    }
    fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        // Submitted with the next reap, in one io_submit with the others queued by then.
        self.ctx.queue(slot, self.fd, offset, op == Op::Write)
    }
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        self.ctx.submit()?;
        self.ctx.events(min, min.max(REAP_BATCH), done)
    }
    fn detach(&mut self) {}
    fn bufs(&mut self) -> &mut IoBufs {
        self.ctx.bufs()
    }
}
