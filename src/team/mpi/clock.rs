//! Clock alignment: the lead measures the monotonic clock offset of each other node by
//! ping-pong with one process there (Cristian's method; the round with the shortest round trip
//! wins), and every process takes its node's offset.
//!
//! The processes of one node read one CLOCK_MONOTONIC, so one exchange per node measures them
//! all, and a node's own processes need none: the lead's rounds grow with the nodes, not with
//! the ranks. At 256 ranks on one node, a ping-pong with each of them took 255 x 8 round
//! trips, each waiting for the scheduler to run the other rank among 255 oversubscribed
//! others (bench/scale, docs/methodology.md "Scale").

use crate::team::clock::monotonic_ns;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

const CLOCK_ROUNDS: usize = 8;

/// This process's clock offset to the lead's, and the worst uncertainty over all nodes (0 on
/// one node). `node_of_process` numbers nodes by their lowest rank, so each node's first
/// process is the one the lead measures.
pub(super) fn align(world: &SimpleCommunicator, node_of_process: &[u32]) -> (i64, u64) {
    let me = world.rank() as usize;
    let nodes = node_of_process.iter().max().map_or(1, |&n| n as usize + 1);
    let first = |node: usize| node_of_process.iter().position(|&n| n as usize == node);
    let mut offsets = vec![0i64; nodes];
    let mut worst = 0u64;
    // Node 0 holds the lead: its offset is 0.
    for (node, offset) in offsets.iter_mut().enumerate().skip(1) {
        let Some(peer) = first(node) else { continue };
        if me == 0 {
            let p = world.process_at_rank(peer as i32);
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
            *offset = best_offset;
            worst = worst.max(best_rtt / 2);
        } else if me == peer {
            let lead = world.process_at_rank(0);
            for _ in 0..CLOCK_ROUNDS {
                let _ = lead.receive::<u64>();
                lead.send(&monotonic_ns());
            }
        }
    }
    let root = world.process_at_rank(0);
    root.broadcast_into(&mut offsets[..]);
    root.broadcast_into(&mut worst);
    (offsets[node_of_process[me] as usize], worst)
}
