//! io_uring: buffers registered once per task, the file registered once per phase, up to the
//! queue depth in flight; submissions are batched into the wait for completions.

use super::{no_file, probe_by_opening, Backend, BufRef, Capabilities, Completion, Registered, Setup};
use crate::spec::Op;
use io_uring::{opcode, types, IoUring};
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "io_uring",
    about: "io_uring with registered buffers and files, --iodepth in flight",
    caps: Capabilities { queues: true, ..Capabilities::STORAGE },
    probe: |depth| {
        probe_by_opening(open, depth).map_err(|mut why| {
            if let Ok(v) = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
                why.push_str(&format!("; kernel.io_uring_disabled = {}", v.trim()));
            }
            why
        })
    },
    open,
    param: None,
    refuses: None,
};

const REAP_BATCH: usize = 4;

struct Uring {
    ring: IoUring,
    bufs: Vec<BufRef>,
    attached: bool,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let (depth, bufs) = (setup.depth, setup.bufs);
    let entries = depth.max(1) as u32;
    // One thread owns the ring and reaps its own completions: the kernel can then run
    // completion work when the task asks for it instead of interrupting it (kernel 6.1+).
    let ring = IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))?;
    let iovecs: Vec<libc::iovec> =
        bufs.iter().map(|b| libc::iovec { iov_base: b.ptr as *mut libc::c_void, iov_len: b.len }).collect();
    // SAFETY: the buffers are owned by the core and outlive the ring (both live as long as
    // the task); the kernel unregisters them when the ring is dropped.
    unsafe { ring.submitter().register_buffers(&iovecs)? };
    Ok(Box::new(Uring { ring, bufs, attached: false }))
}

impl Backend for Uring {
    fn attach(&mut self, file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        self.ring.submitter().register_files(&[file.as_raw_fd()])?;
        self.attached = true;
        Ok(())
    }
    unsafe fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        let b = self.bufs[slot];
        let entry = match op {
            Op::Write => {
                opcode::WriteFixed::new(types::Fixed(0), b.ptr, b.len as u32, slot as u16).offset(offset).build()
            }
            _ => opcode::ReadFixed::new(types::Fixed(0), b.ptr, b.len as u32, slot as u16).offset(offset).build(),
        };
        let entry = entry.user_data(slot as u64);
        // SAFETY: the entry points at a registered buffer the caller keeps untouched until
        // reaped (this function's contract).
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.ring.submit()?;
        }
        Ok(())
    }
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(min) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => {
                    r?;
                    break;
                }
            }
        }
        // Take a few completions at a time: the core refills their slots at once, so the
        // device sees a steady trickle of new requests rather than bursts.
        for cqe in self.ring.completion().take(min.max(REAP_BATCH)) {
            let res = cqe.result();
            let outcome = if res < 0 { Err(io::Error::from_raw_os_error(-res)) } else { Ok(res as usize) };
            done.push((cqe.user_data() as usize, outcome));
        }
        Ok(())
    }
    fn detach(&mut self) {
        if self.attached {
            let _ = self.ring.submitter().unregister_files();
            self.attached = false;
        }
    }
}
