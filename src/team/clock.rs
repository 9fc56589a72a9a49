//! The monotonic clock every timestamp comes from.

/// Nanoseconds on CLOCK_MONOTONIC: the same clock for every process of one machine, and cheap
/// (vDSO, no system call).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-parameter; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds on CLOCK_MONOTONIC_COARSE: as cheap as reading memory, a tick (1-4 ms) coarse;
/// for deciding when something periodic is due, never for a measurement.
pub fn coarse_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-parameter; CLOCK_MONOTONIC_COARSE exists on Linux since 2.6.32.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
