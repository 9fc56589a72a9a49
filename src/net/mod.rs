//! The network ceiling: how fast the nodes can move bytes to each other, measured next to
//! the storage figures of the same nodes (the iperf numbers of the papers), in two modes:
//!
//! - `mpi`: point-to-point messages with a window in flight per stream (as OSU's osu_bw and
//!   osu_mbw_mr), over a sweep of message sizes; the best size is the figure, the rest the
//!   curve ([`mpi_mode`]);
//! - `tcp`: P TCP streams per link, in iperf's role: what NFS, SMB and many parallel file
//!   system clients ride on ([`tcp`]), between the ranks of an MPI launch or from clients to
//!   a server that needs no MPI ([`serve`]).
//!
//! An endpoint is one process per node (the lowest-ranked), or every process when all run on
//! one node (then the figures are the node's own loopback and memory, and say so).

pub mod mpi_mode;
pub mod pattern;
pub mod serve;
pub mod study;
pub mod tcp;
pub mod tcp_mode;
pub mod zerocopy;

pub use crate::record::net::{Mode, NetResult, Pattern};

use crate::units::{gb_per_s, mib_per_s};

impl NetResult {
    /// The figure's line, in a fixed shape for scripts:
    /// `MODE PATTERN streams=P SENDERS -> RECEIVERS: X MiB/s (Y GB/s)`.
    pub fn line(&self) -> String {
        let hosts = |v: &[String]| {
            let mut h = v.to_vec();
            h.sort();
            h.dedup();
            h.join(",")
        };
        let pattern = if self.both_ways && self.pattern != Pattern::Bisection {
            format!("{}-both-ways", self.pattern.name())
        } else {
            self.pattern.name()
        };
        let bw = self.bandwidth.unwrap_or(0.0);
        format!(
            "{} {pattern} streams={} {} -> {}: {:.1} MiB/s ({:.2} GB/s)",
            crate::spec::variant_name(&self.mode),
            self.streams,
            hosts(&self.senders),
            hosts(&self.receivers),
            mib_per_s(bw),
            gb_per_s(bw)
        )
    }

    /// What became of zero-copy sends, when asked for: how many the kernel copied anyway.
    pub fn zerocopy_note(&self) -> Option<String> {
        let z = self.zerocopy?;
        let share = if z.completed > 0 { 100.0 * z.copied as f64 / z.completed as f64 } else { 0.0 };
        Some(format!(
            "{}: zero-copy asked; the kernel copied {share:.0}% of {} completed sends (of {}){}",
            self.line().split(':').next().unwrap_or_default(),
            z.completed,
            z.sends,
            if share >= 99.5 { ", so the figure includes the copy (loopback and veth always copy)" } else { "" }
        ))
    }

    /// The MPI mode's curve over message sizes, and its best size, when it has more than one.
    pub fn curve_note(&self) -> Option<String> {
        (self.curve.len() > 1).then(|| {
            let points: Vec<String> = self
                .curve
                .iter()
                .map(|&(size, bw)| format!("{} {:.0}", crate::units::format_size(size), mib_per_s(bw)))
                .collect();
            format!(
                "{}: MiB/s by message size: {}; best at {}",
                self.line().split(':').next().unwrap_or_default(),
                points.join(", "),
                crate::units::format_size(self.message)
            )
        })
    }

    /// The spread of the repetitions: (min, max) bytes per second.
    pub fn spread(&self) -> Option<(f64, f64)> {
        let min = self.samples.iter().copied().reduce(f64::min)?;
        let max = self.samples.iter().copied().reduce(f64::max)?;
        Some((min, max))
    }
}

/// The endpoints of a team: the lowest-ranked process of each node, or every process when
/// all are on one node. Returns the processes and whether they share one node.
pub fn endpoints(process_nodes: &[u32]) -> (Vec<usize>, bool) {
    let nodes = process_nodes.iter().max().map_or(0, |&m| m as usize + 1);
    if nodes <= 1 {
        return ((0..process_nodes.len()).collect(), true);
    }
    let first = (0..nodes).filter_map(|n| process_nodes.iter().position(|&p| p as usize == n)).collect();
    (first, false)
}

/// The most memory `net` holds in buffers in one process (the MPI mode holds two messages).
pub const MAX_BUFFERS: u64 = 256 << 20;

/// Message sizes from `MIN..MAX` (or one size), doubling from MIN; two of the largest fit in
/// [`MAX_BUFFERS`].
pub fn sizes(text: &str) -> Result<Vec<u64>, String> {
    let (lo, hi) = text.split_once("..").unwrap_or((text, text));
    let parse = |t: &str| crate::units::parse_size(t.trim()).map_err(|e| e.to_string());
    let (lo, hi) = (parse(lo)?, parse(hi)?);
    if lo == 0 || hi < lo || hi > MAX_BUFFERS / 2 {
        return Err(format!("sizes from 1 byte to 128 MiB, smallest first; got {lo} to {hi}"));
    }
    Ok(std::iter::successors(Some(lo), |&s| s.checked_mul(2).filter(|&n| n <= hi)).collect())
}

/// The buffers the TCP mode holds in the busiest process: a write buffer per outgoing stream
/// and a read buffer per incoming one.
pub fn tcp_buffers(links: &[(usize, usize)], endpoints: usize, streams: usize, write: u64) -> u64 {
    (0..endpoints)
        .map(|e| {
            let out = links.iter().filter(|l| l.0 == e).count() as u64;
            let inn = links.iter().filter(|l| l.1 == e).count() as u64;
            streams as u64 * (out * write + inn * tcp::READ_BUF as u64)
        })
        .max()
        .unwrap_or(0)
}

/// The mean of some samples (`None` without any).
pub fn mean(samples: &[f64]) -> Option<f64> {
    crate::measure::spread(samples).map(|s| s.mean)
}

/// The name of each endpoint in a figure's labels: its node's host, with its process when
/// all endpoints share one node.
pub fn endpoint_names<T: crate::team::Team>(team: &T, ends: &[usize], one_node: bool) -> Vec<String> {
    let (hosts, nodes) = (team.hosts(), team.process_nodes());
    ends.iter()
        .map(|&p| {
            let host = hosts.get(nodes[p] as usize).cloned().unwrap_or_default();
            if one_node {
                format!("{host}#{p}")
            } else {
                host
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_one_process_per_node_or_every_process_of_one_node() {
        assert_eq!(endpoints(&[0, 0, 1, 1, 2]), (vec![0, 2, 4], false));
        assert_eq!(endpoints(&[0, 1, 0, 1]), (vec![0, 1], false));
        assert_eq!(endpoints(&[0, 0, 0]), (vec![0, 1, 2], true));
        assert_eq!(sizes("64k..16m").unwrap().len(), 9);
        assert_eq!(sizes("64k..100k").unwrap(), vec![65536]);
        assert_eq!(sizes("1m").unwrap(), vec![1 << 20]);
        assert!(sizes("16m..64k").is_err() && sizes("0..1k").is_err() && sizes("1k..256m").is_err());
        assert_eq!(sizes("128m").unwrap(), vec![128 << 20]);
        // N-to-1 over 5 endpoints, 4 streams of 1 MiB writes: endpoint 0 reads 16 streams.
        let links = Pattern::ManyToOne.links(5, false);
        assert_eq!(tcp_buffers(&links, 5, 4, 1 << 20), 16 << 20);
        assert_eq!(tcp_buffers(&Pattern::OneToMany.links(5, false), 5, 2, 8 << 20), 64 << 20);
    }

    #[test]
    fn the_line_has_its_fixed_shape() {
        let r = NetResult {
            mode: Mode::Tcp,
            pattern: Pattern::ManyToOne,
            both_ways: false,
            streams: 4,
            senders: vec!["node2".into(), "node3".into()],
            receivers: vec!["node1".into(), "node1".into()],
            message: 1 << 20,
            bytes: 1 << 30,
            window_ns: 1,
            bandwidth: Some(2.0 * 1048576.0 * 1000.0),
            samples: vec![1.0, 3.0, 2.0],
            curve: Vec::new(),
            peak_in_flight: 0,
            one_node: false,
            zerocopy: None,
            provenance: None,
        };
        assert_eq!(r.line(), "tcp N-to-1 streams=4 node2,node3 -> node1: 2000.0 MiB/s (2.10 GB/s)");
        assert_eq!(r.spread(), Some((1.0, 3.0)));
        assert_eq!(mean(&r.samples), Some(2.0));
    }
}
