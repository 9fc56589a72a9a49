//! The monotonic clock every timestamp comes from.

/// Nanoseconds on CLOCK_MONOTONIC: the same clock for every process of one machine, and cheap
/// (vDSO, no system call).
#[inline]
pub fn monotonic_ns() -> u64 {
    crate::sys::proc::monotonic_ns()
}

/// Nanoseconds on CLOCK_MONOTONIC_COARSE: as cheap as reading memory, a tick (1-4 ms) coarse;
/// for deciding when something periodic is due, never for a measurement.
#[inline]
pub fn coarse_ns() -> u64 {
    crate::sys::proc::coarse_ns()
}
