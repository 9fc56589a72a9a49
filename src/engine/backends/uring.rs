//! io_uring: buffers registered once per task, the file registered once per phase, up to the
//! queue depth in flight; submissions are batched into the wait for completions.

use super::{no_file, probe_by_opening, Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use crate::sys::uring as sys;
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
    takes: super::Handles::Files,
};

/// Completions taken per wait at most: the core refills their slots at once, so the device
/// sees a steady trickle of new requests rather than bursts.
const REAP_BATCH: usize = 4;

struct Uring {
    ring: sys::Ring,
    attached: bool,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let ring = sys::Ring::new(setup.depth.max(1) as u32, setup.bufs)?;
    Ok(Box::new(Uring { ring, attached: false }))
}

impl Backend for Uring {
    fn attach(&mut self, file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        let file = file.ok_or_else(no_file)?;
        self.ring.register_file(file.as_raw_fd())?;
        self.attached = true;
        Ok(())
    }
    fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        self.ring.push(slot, offset, op == Op::Write)
    }
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        // Submissions are batched into the wait for completions.
        self.ring.submit_and_wait(min)?;
        self.ring.complete(min.max(REAP_BATCH), done);
        Ok(())
    }
    fn detach(&mut self) {
        if self.attached {
            let _ = self.ring.unregister_files();
            self.attached = false;
        }
    }
    fn bufs(&mut self) -> &mut IoBufs {
        self.ring.bufs()
    }
}
