//! The delay engine keeps its time on a test clock (issue 37's tests): a run's figures are the
//! waits it asked for, exactly, however loaded the machine, and it does not sleep them; with
//! `,wall` the waits are slept and measured on the wall's clock, for tests that need real time.

mod common;

use common::*;
use std::time::{Duration, Instant};

#[test]
fn a_delay_run_is_timed_on_the_test_clock_exactly_and_without_sleeping() {
    let bed = Bed::new();
    // 16 transfers of 4 KiB, one in flight, 200 ms each: 3.2 s a phase on the test clock.
    let began = Instant::now();
    let out = bed.run("--engine delay:200ms --transfer 4k --block 64k --op write,read --tasks 2");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(began.elapsed() < Duration::from_secs(6), "6.4 s of waits were slept: {:?}", began.elapsed());
    let run = bed.last_run();
    for p in phases(&run) {
        // Two tasks, each 64 KiB in 3.2 s.
        assert_eq!(p.window_ns, Some(3_200_000_000), "{}: the phase is the sum of its waits", p.op);
        assert!((p.bandwidth.unwrap() - 2.0 * 65536.0 / 3.2).abs() < 1e-6, "{p:?}");
    }
    // Deeper queues overlap the waits: 16 transfers 4 at a time take 4 waits.
    assert_eq!(bed.run("--engine delay:200ms --transfer 4k --block 64k --op write --iodepth 4").code, 0);
    assert_eq!(phases(&bed.last_run())[0].window_ns, Some(800_000_000));
}

#[test]
fn a_delay_run_on_the_wall_clock_sleeps_its_waits() {
    let bed = Bed::new();
    let began = Instant::now();
    let out = bed.run("--engine delay:20ms,wall --transfer 4k --block 64k --op write");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(began.elapsed() >= Duration::from_millis(320), "16 waits of 20 ms slept: {:?}", began.elapsed());
    let p = &phases(&bed.last_run())[0];
    assert!(p.window_ns.unwrap() >= 320_000_000, "{p:?}");
    assert!(p.bandwidth.unwrap() <= 65536.0 / 0.32 * 1.0001, "no faster than the waits allow: {p:?}");
}
