//! The interconnect ceiling: how fast the nodes can move bytes to each other through MPI
//! point-to-point messages, measured next to the storage figures of the same nodes (the
//! iperf numbers of the papers).
//!
//! One process per node takes part (the lowest-ranked process of each node). Patterns:
//! `1-to-1` (node 1 to node 0), `N-to-1` (every other node to node 0), `N-to-M` (the first
//! half of the nodes to the second half, sender i to receiver i mod M).

use crate::team::clock::monotonic_ns;
use crate::team::{Member, Team};
use crate::units::rate;
use serde::{Deserialize, Serialize};

/// One measured pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetResult {
    /// "1-to-1", "N-to-1" or "N-to-M".
    pub pattern: String,
    /// Sending nodes' hosts.
    pub senders: Vec<String>,
    /// Receiving nodes' hosts.
    pub receivers: Vec<String>,
    /// Bytes per message.
    pub message: u64,
    /// Bytes moved in all.
    pub bytes: u64,
    /// From the common start (a barrier) to the last receive, nanoseconds.
    pub window_ns: u64,
    /// bytes / window.
    pub bandwidth: Option<f64>,
}

/// Which nodes send to which, by node index: (sender, receiver) pairs.
pub fn pairs(pattern: &str, nodes: usize) -> Vec<(usize, usize)> {
    match pattern {
        "1-to-1" if nodes >= 2 => vec![(1, 0)],
        "N-to-1" if nodes >= 2 => (1..nodes).map(|n| (n, 0)).collect(),
        "N-to-M" if nodes >= 2 => {
            let half = nodes / 2;
            let receivers = nodes - half;
            (0..half).map(|s| (s, half + s % receivers)).collect()
        }
        _ => Vec::new(),
    }
}

/// The patterns worth measuring with this many nodes.
pub fn patterns(nodes: usize) -> Vec<&'static str> {
    match nodes {
        0 | 1 => vec![],
        2 => vec!["1-to-1"],
        _ => vec!["1-to-1", "N-to-1", "N-to-M"],
    }
}

/// Measures one pattern: every sender sends `count` messages of `message` bytes. Collective:
/// every process calls it. The lead process gets the result.
pub fn measure<T: Team>(team: &T, pattern: &str, message: usize, count: usize) -> Option<NetResult> {
    let process_nodes = team.process_nodes();
    let node_count = process_nodes.iter().max().map_or(0, |&m| m as usize + 1);
    // The first process of each node speaks for it.
    let speaker: Vec<usize> =
        (0..node_count).map(|n| process_nodes.iter().position(|&p| p as usize == n).unwrap_or(0)).collect();
    let me = team.process();
    let links = pairs(pattern, node_count);
    let member = team.members(1).pop().expect("one member");
    let mut buf = vec![0x5au8; message];
    member.barrier();
    let start = monotonic_ns();
    for &(s, r) in &links {
        if speaker[s] == me {
            for _ in 0..count {
                team.send(speaker[r], &buf);
            }
        }
    }
    // Receivers take their senders' messages in turn; each sender's stream is in order.
    let mine: Vec<usize> = links.iter().filter(|&&(_, r)| speaker[r] == me).map(|&(s, _)| speaker[s]).collect();
    for _ in 0..count {
        for &from in &mine {
            team.receive(from, &mut buf);
        }
    }
    let elapsed = monotonic_ns() - start;
    let window_ns = member.max(elapsed);
    let hosts = team.hosts();
    let name = |n: usize| hosts.get(n).cloned().unwrap_or_default();
    let bytes = (links.len() * count * message) as u64;
    (me == 0).then(|| NetResult {
        pattern: pattern.to_string(),
        senders: links.iter().map(|&(s, _)| name(s)).collect(),
        receivers: links.iter().map(|&(_, r)| name(r)).collect(),
        message: message as u64,
        bytes,
        window_ns,
        bandwidth: rate(bytes, window_ns),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_follow_the_patterns() {
        assert_eq!(pairs("1-to-1", 3), vec![(1, 0)]);
        assert_eq!(pairs("N-to-1", 4), vec![(1, 0), (2, 0), (3, 0)]);
        assert_eq!(pairs("N-to-M", 4), vec![(0, 2), (1, 3)]);
        assert_eq!(pairs("N-to-M", 5), vec![(0, 2), (1, 3)]);
        assert_eq!(pairs("N-to-M", 3), vec![(0, 1)]);
        assert!(pairs("1-to-1", 1).is_empty());
        assert_eq!(patterns(2), vec!["1-to-1"]);
        assert!(patterns(1).is_empty());
    }
}
