//! The delay engine (`delay:D`): completes every transfer D after it was issued, keeping up
//! to --iodepth in flight, and touches no storage. With it a test knows bounds that must hold
//! on any machine: no latency below D, no bandwidth above what D allows.
//! `delay:D/SIZE:D2` waits D2 instead for every transfer to a file of SIZE or more: a cliff
//! planted at a known file size, for tests of the findings.
//!
//! It keeps time on a test clock: a task's clock stands still but for the waits, which move it
//! on instead of sleeping ([`TestClock`], which the engine gives the phase driver through
//! `Backend::clock`, so that the task's times are read on it). A run is then as
//! fast as the machine allows and its figures exact on any machine, however loaded: a
//! transfer takes D, a phase the sum of its waits, whatever else the machine does. A test
//! that needs the wall's time (a run to interrupt, a progress line to watch) asks for it with
//! `,wall` (`delay:D,wall`): the waits are then slept, on the monotonic clock.

use super::trace::Trace;
use super::{Backend, Capabilities, Completion, IoBufs, Registered, Setup};
use crate::spec::Op;
use crate::units::{parse_duration, size_arg};
use std::cell::Cell;
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A test clock (monotonic ns): it starts at the machine's time and then moves only when
/// told to, by a wait the engine makes or one the task makes for the phase's start. Shared
/// by one task's engine and its task clock, on the task's thread.
#[derive(Clone, Debug)]
pub struct TestClock(Rc<Cell<u64>>);

impl TestClock {
    fn starting_now() -> Self {
        TestClock(Rc::new(Cell::new(crate::team::clock::monotonic_ns())))
    }

    /// Its time, monotonic ns.
    pub fn now(&self) -> u64 {
        self.0.get()
    }

    /// Moves it on to `t` (monotonic ns), if it is earlier.
    pub fn advance_to(&self, t: u64) {
        self.0.set(self.0.get().max(t));
    }
}

/// The clock the waits are kept on.
enum Time {
    /// The test clock, moved on by the waits.
    Test(TestClock),
    /// The wall's clock from this origin: the waits are slept (`,wall`).
    Wall(Instant),
}

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "delay",
    about: "completes every transfer after D on a test clock (delay:D, e.g. delay:100us; delay:D,wall sleeps it), touching no storage (for tests)",
    caps: Capabilities { queues: true, storage: false, hidden: true, ..Capabilities::STORAGE },
    probe: |_| Ok(()),
    open,
    param: Some(|p| Waits::parse(p).map(drop)),
    refuses: None,
    takes: super::Handles::Files,
};

/// How long a transfer waits: D, or D2 in files from a size on; and on which clock.
#[derive(Debug)]
struct Waits {
    wait: Duration,
    past: Option<(u64, Duration)>,
    /// Slept on the wall's clock (`,wall`), not counted on the test clock.
    wall: bool,
}

impl Waits {
    /// `D` or `D/SIZE:D2`, either followed by `,wall`.
    fn parse(param: &str) -> Result<Waits, String> {
        let (param, wall) = match param.strip_suffix(",wall") {
            Some(p) => (p, true),
            None => (param, false),
        };
        let duration = |t: &str| parse_duration(t).map(Duration::from_nanos);
        let Some((first, rest)) = param.split_once('/') else {
            return Ok(Waits { wait: duration(param)?, past: None, wall });
        };
        let (size, later) =
            rest.split_once(':').ok_or_else(|| format!("'{rest}' is not SIZE:DURATION (e.g. 1m:2ms)"))?;
        Ok(Waits { wait: duration(first)?, past: Some((size_arg(size)?, duration(later)?)), wall })
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
    /// In flight, in the order they become due (all wait the same): monotonic ns, on the test
    /// clock or the wall's.
    pending: VecDeque<(usize, u64)>,
    trace: Trace,
    time: Time,
}

impl Delay {
    /// Now, on the clock the waits are kept on.
    fn now(&self) -> u64 {
        match &self.time {
            Time::Wall(origin) => origin.elapsed().as_nanos() as u64,
            Time::Test(clock) => clock.now(),
        }
    }

    /// Until `due`: slept on the wall's clock, the test clock moved on to it otherwise.
    fn wait_until(&self, due: u64) {
        match &self.time {
            Time::Wall(_) => std::thread::sleep(Duration::from_nanos(due.saturating_sub(self.now()))),
            Time::Test(clock) => clock.advance_to(due),
        }
    }
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    let waits =
        Waits::parse(setup.param.unwrap_or("0ns")).map_err(|why| io::Error::new(io::ErrorKind::InvalidInput, why))?;
    let len = setup.bufs.slot_len();
    let time = if waits.wall { Time::Wall(Instant::now()) } else { Time::Test(TestClock::starting_now()) };
    Ok(Box::new(Delay {
        bufs: setup.bufs,
        wait: waits.wait,
        waits,
        len,
        pending: VecDeque::with_capacity(setup.depth),
        trace: Trace::from_env(len),
        time,
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
        self.pending.push_back((slot, self.now() + self.wait.as_nanos() as u64));
        Ok(())
    }
    fn reap(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0;
        while let Some(&(slot, due)) = self.pending.front() {
            if due > self.now() {
                if got >= min {
                    break;
                }
                self.wait_until(due);
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
    fn clock(&self) -> Option<TestClock> {
        match &self.time {
            Time::Test(clock) => Some(clock.clone()),
            Time::Wall(_) => None,
        }
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
        let w = Waits::parse("100us/2m:1ms,wall").unwrap();
        assert!(w.wall && w.of(2 << 20) == Duration::from_millis(1) && !Waits::parse("5us").unwrap().wall);
    }

    #[test]
    fn on_the_test_clock_a_transfer_takes_its_wait_exactly_and_no_sleep() {
        let bufs = IoBufs::try_new(2, 4096).unwrap();
        let setup = Setup { param: Some("250ms"), depth: 2, bufs };
        let mut d = open(setup).unwrap();
        let clock = d.clock().expect("the test clock, given to the task's clock");
        let (start, wall) = (clock.now(), Instant::now());
        d.attach(None, Op::Write, 1 << 20).unwrap();
        let mut done = Vec::new();
        for round in 0..8 {
            d.submit(0, 0, Op::Write).unwrap();
            d.submit(1, 4096, Op::Write).unwrap();
            done.clear();
            d.reap(2, &mut done).unwrap();
            assert_eq!(done.len(), 2);
            // Two in flight together: each round takes one wait, not two.
            assert_eq!(clock.now() - start, (round + 1) * 250_000_000);
        }
        assert!(wall.elapsed() < Duration::from_secs(1), "2 s of waits were not slept");
        let bufs = IoBufs::try_new(1, 4096).unwrap();
        let slept = open(Setup { param: Some("250ms,wall"), depth: 1, bufs }).unwrap();
        assert!(slept.clock().is_none(), "slept waits are the machine's time");
    }
}
