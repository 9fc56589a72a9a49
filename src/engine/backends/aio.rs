//! Linux kernel AIO through its system calls (io_setup, io_submit, io_getevents), the
//! interface fio's libaio engine drives, for sites where io_uring is disabled. Calling the
//! kernel directly needs no libaio library. Like libaio, it is only asynchronous with
//! O_DIRECT; buffered transfers complete inside io_submit.

use super::{no_file, probe_by_opening, Backend, BufRef, Capabilities, Completion, Registered, Setup};
use crate::spec::Op;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "libaio",
    about: "Linux kernel AIO (io_submit/io_getevents system calls, no library needed), --iodepth in flight",
    caps: Capabilities { queues: true, ..Capabilities::STORAGE },
    probe: |depth| probe_by_opening(open, depth),
    open,
    param: None,
    refuses: None,
};

/// struct iocb of linux/aio_abi.h (little-endian field order).
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// struct io_event of linux/aio_abi.h.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const REAP_BATCH: usize = 4;
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

struct Aio {
    ctx: libc::c_ulong,
    bufs: Vec<BufRef>,
    iocbs: Vec<Iocb>,
    queued: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    fd: u32,
}

fn check(rc: libc::c_long) -> io::Result<usize> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let (depth, bufs) = (setup.depth, setup.bufs);
    let mut ctx: libc::c_ulong = 0;
    // SAFETY: io_setup writes the context id into ctx.
    check(unsafe { libc::syscall(libc::SYS_io_setup, depth.max(1) as libc::c_long, &mut ctx as *mut libc::c_ulong) })?;
    let n = bufs.len();
    Ok(Box::new(Aio {
        ctx,
        bufs,
        iocbs: vec![Iocb::default(); n],
        queued: Vec::with_capacity(n),
        events: vec![IoEvent::default(); n.max(1)],
        fd: 0,
    }))
}

impl Backend for Aio {
    fn attach(&mut self, file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        self.fd = file.as_raw_fd() as u32;
        Ok(())
    }
    unsafe fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        let b = self.bufs[slot];
        self.iocbs[slot] = Iocb {
            data: slot as u64,
            opcode: if op == Op::Write { IOCB_CMD_PWRITE } else { IOCB_CMD_PREAD },
            fildes: self.fd,
            buf: b.ptr as u64,
            nbytes: b.len as u64,
            offset: offset as i64,
            ..Iocb::default()
        };
        self.queued.push(&mut self.iocbs[slot]);
        Ok(())
    }
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        let mut at = 0;
        while at < self.queued.len() {
            let left = &self.queued[at..];
            // SAFETY: the iocbs live in self and stay put until their events are read.
            let n = unsafe { libc::syscall(libc::SYS_io_submit, self.ctx, left.len() as libc::c_long, left.as_ptr()) };
            match check(n) {
                Ok(n) => at += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.queued.clear();
        let got = loop {
            // SAFETY: events has room for its length; no timeout.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    // A few at a time: the core refills their slots at once, so the device
                    // sees a steady trickle of new requests rather than bursts.
                    self.events.len().min(min.max(REAP_BATCH)) as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            match check(n) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r?,
            }
        };
        for ev in &self.events[..got] {
            let outcome =
                if ev.res < 0 { Err(io::Error::from_raw_os_error(-ev.res as i32)) } else { Ok(ev.res as usize) };
            done.push((ev.data as usize, outcome));
        }
        Ok(())
    }
    fn detach(&mut self) {}
}

impl Drop for Aio {
    fn drop(&mut self) {
        // SAFETY: destroys the context made in open; nothing is in flight at drop.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}
