//! Clock alignment: the lead measures each rank's monotonic clock offset by ping-pong
//! (Cristian's method; the round with the shortest round trip wins).

use crate::team::clock::monotonic_ns;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

const CLOCK_ROUNDS: usize = 8;

/// This process's clock offset to the lead's, and the worst uncertainty over all processes.
pub(super) fn align(world: &SimpleCommunicator) -> (i64, u64) {
    let me = world.rank();
    let mut offset = 0i64;
    let mut worst = 0u64;
    for peer in 1..world.size() {
        if me == 0 {
            let p = world.process_at_rank(peer);
            let (mut best_rtt, mut best_offset) = (u64::MAX, 0i64);
            for _ in 0..CLOCK_ROUNDS {
                let t0 = monotonic_ns();
                p.send(&t0);
                let (theirs, _) = p.receive::<u64>();
                let t1 = monotonic_ns();
                if t1 - t0 < best_rtt {
                    best_rtt = t1 - t0;
                    best_offset = theirs as i64 - ((t0 + t1) / 2) as i64;
                }
            }
            p.send(&best_offset);
            worst = worst.max(best_rtt / 2);
        } else if me == peer {
            let lead = world.process_at_rank(0);
            for _ in 0..CLOCK_ROUNDS {
                let _ = lead.receive::<u64>();
                lead.send(&monotonic_ns());
            }
            offset = lead.receive::<i64>().0;
        }
    }
    world.process_at_rank(0).broadcast_into(&mut worst);
    (offset, worst)
}
