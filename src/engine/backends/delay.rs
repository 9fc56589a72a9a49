//! The delay engine (`delay:D`): completes every transfer no sooner than D after it was
//! issued, keeping up to --iodepth in flight, and touches no storage. With it a test knows
//! bounds that must hold on any machine: no latency below D, no bandwidth above what D allows.
//! `delay:D/SIZE:D2` waits D2 instead for every transfer to a file of SIZE or more: a cliff
//! planted at a known file size, for tests of the findings.

use super::trace::Trace;
use super::{Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use crate::units::{parse_duration, size_arg};
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
    param: Some(|p| Waits::parse(p).map(drop)),
    refuses: None,
    takes: super::Handles::Files,
};

/// How long a transfer waits: D, or D2 in files from a size on.
#[derive(Debug)]
struct Waits {
    wait: Duration,
    past: Option<(u64, Duration)>,
}

impl Waits {
    /// `D` or `D/SIZE:D2`.
    fn parse(param: &str) -> Result<Waits, String> {
        let duration = |t: &str| parse_duration(t).map(Duration::from_nanos);
        let Some((first, rest)) = param.split_once('/') else {
            return Ok(Waits { wait: duration(param)?, past: None });
        };
        let (size, later) =
            rest.split_once(':').ok_or_else(|| format!("'{rest}' is not SIZE:DURATION (e.g. 1m:2ms)"))?;
        Ok(Waits { wait: duration(first)?, past: Some((size_arg(size)?, duration(later)?)) })
    }

    /// The wait of a transfer to a file of `size` bytes.
    fn of(&self, size: u64) -> Duration {
        match self.past {
            Some((from, later)) if size >= from => later,
            _ => self.wait,
        }
    }
}

struct Delay {
    /// Never lent nor touched: the core fills and checks them.
    bufs: IoBufs,
    waits: Waits,
    /// The wait of the phase's file.
    wait: Duration,
    len: usize,
    /// In flight, in the order they become due (all wait the same).
    pending: VecDeque<(usize, Instant)>,
    trace: Trace,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let waits =
        Waits::parse(setup.param.unwrap_or("0ns")).map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
    let len = setup.bufs.slot_len();
    Ok(Box::new(Delay {
        bufs: setup.bufs,
        wait: waits.wait,
        waits,
        len,
        pending: VecDeque::with_capacity(setup.depth),
        trace: Trace::from_env(len),
    }))
}

impl Backend for Delay {
    fn attach(&mut self, _file: Option<&File>, _op: Op, size: u64) -> io::Result<()> {
        self.wait = self.waits.of(size);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_wait_applies_to_files_of_its_size_and_more() {
        let w = Waits::parse("100us/2m:1ms").unwrap();
        assert_eq!(
            (w.of(1 << 20), w.of(2 << 20), w.of(8 << 20)),
            (Duration::from_micros(100), Duration::from_millis(1), Duration::from_millis(1))
        );
        assert_eq!(Waits::parse("5us").unwrap().of(u64::MAX), Duration::from_micros(5));
        assert!(Waits::parse("5us/2m").unwrap_err().contains("SIZE:DURATION"));
        assert!(Waits::parse("5us/two:1ms").is_err() && Waits::parse("5us/2m:soon").is_err());
    }
}
