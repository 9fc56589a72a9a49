//! Node discovery: which processes share a node, and each node's host name.

use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;

/// Node index of every process (nodes numbered by their lowest rank) and each node's host.
pub(super) fn discover(world: &SimpleCommunicator) -> (Vec<u32>, Vec<String>) {
    let node = world.split_shared(world.rank());
    let leaders = world.split_by_color(if node.rank() == 0 { Color::with_value(0) } else { Color::undefined() });
    let mut node_id: u32 = leaders.map_or(0, |c| c.rank() as u32);
    node.process_at_rank(0).broadcast_into(&mut node_id);
    let size = world.size() as usize;
    let mut nodes = vec![0u32; size];
    world.all_gather_into(&node_id, &mut nodes[..]);
    const NAME: usize = 64;
    let mut name = [0u8; NAME];
    let host = crate::env::hostname();
    let len = host.len().min(NAME);
    name[..len].copy_from_slice(&host.as_bytes()[..len]);
    let mut names = vec![0u8; NAME * size];
    world.all_gather_into(&name[..], &mut names[..]);
    let count = nodes.iter().max().map_or(0, |&m| m as usize + 1);
    let hosts = (0..count)
        .map(|n| {
            let p = nodes.iter().position(|&x| x as usize == n).unwrap_or(0);
            let raw = &names[p * NAME..(p + 1) * NAME];
            String::from_utf8_lossy(&raw[..raw.iter().position(|&b| b == 0).unwrap_or(NAME)]).into_owned()
        })
        .collect();
    (nodes, hosts)
}
