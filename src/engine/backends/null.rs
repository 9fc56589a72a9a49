//! The null engine: completes every transfer at once, touching no storage and making no
//! files, so tests know the exact answer (bytes, transfers, layouts) without a file system.

use super::trace::Trace;
use super::{Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use std::fs::File;
use std::io;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "null",
    about: "completes every transfer at once, touching no storage and making no files (for tests)",
    caps: Capabilities { queues: true, storage: false, hidden: true, ..Capabilities::STORAGE },
    probe: |_| Ok(()),
    open,
    param: None,
    refuses: None,
    takes: super::Handles::Files,
};

struct Null {
    /// Never lent nor touched: the core fills and checks them.
    bufs: IoBufs,
    len: usize,
    done: Vec<Completion>,
    trace: Trace,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let len = setup.bufs.slot_len();
    Ok(Box::new(Null { bufs: setup.bufs, len, done: Vec::with_capacity(setup.depth), trace: Trace::from_env(len) }))
}

impl Backend for Null {
    fn attach(&mut self, _file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        self.trace.begin();
        Ok(())
    }
    fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        self.trace.record(op, offset);
        self.done.push((slot, Ok(self.len)));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.append(&mut self.done);
        Ok(())
    }
    fn detach(&mut self) {
        self.trace.flush();
    }
    fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }
}
