//! The delay engine (`delay:D`): completes every transfer no sooner than D after it was
//! issued, keeping up to --iodepth in flight, and touches no storage. With it a test knows
//! bounds that must hold on any machine: no latency below D, no bandwidth above what D allows.

use super::trace::Trace;
use super::{Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use crate::units::parse_duration;
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::time::{Duration, Instant};

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "delay",
    about: "completes every transfer after at least D (delay:D, e.g. delay:100us), touching no storage (for tests)",
    caps: Capabilities { queues: true, storage: false, hidden: true, ..Capabilities::STORAGE },
    probe: |_| Ok(()),
    open,
    param: Some(|p| parse_duration(p).map(drop)),
    refuses: None,
};

struct Delay {
    /// Never lent nor touched: the core fills and checks them.
    bufs: IoBufs,
    wait: Duration,
    len: usize,
    /// In flight, in the order they become due (all wait the same D).
    pending: VecDeque<(usize, Instant)>,
    trace: Trace,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let nanos =
        parse_duration(setup.param.unwrap_or("0")).map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
    let len = setup.bufs.slot_len();
    Ok(Box::new(Delay {
        bufs: setup.bufs,
        wait: Duration::from_nanos(nanos),
        len,
        pending: VecDeque::with_capacity(setup.depth),
        trace: Trace::from_env(len),
    }))
}

impl Backend for Delay {
    fn attach(&mut self, _file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        self.trace.begin();
        Ok(())
    }
    fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        self.trace.record(op, offset);
        self.pending.push_back((slot, Instant::now() + self.wait));
        Ok(())
    }
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0;
        while let Some(&(slot, due)) = self.pending.front() {
            let now = Instant::now();
            if due > now {
                if got >= min {
                    break;
                }
                std::thread::sleep(due - now);
            }
            self.pending.pop_front();
            done.push((slot, Ok(self.len)));
            got += 1;
        }
        Ok(())
    }
    fn detach(&mut self) {
        self.trace.flush();
    }
    fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }
}
