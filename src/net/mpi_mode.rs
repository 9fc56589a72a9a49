//! The MPI mode: every link a stream of messages with a window in flight ([`Team::flow`]),
//! over a sweep of message sizes; warm-up messages are sent and not timed; each size is
//! repeated, and the best size's mean is the figure.

use super::{endpoints, mean, Mode, NetResult, Pattern};
use crate::team::clock::monotonic_ns;
use crate::team::{Flow, Member, Team};
use crate::units::rate;

/// What the MPI mode sends.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Message sizes, bytes.
    pub sizes: Vec<u64>,
    /// Bytes each link carries per repetition (at least one window of messages).
    pub per_link: u64,
    /// Messages in flight per stream.
    pub window: usize,
    /// Timed repetitions per size.
    pub repetitions: usize,
}

impl Plan {
    /// Messages per stream for one message size.
    pub fn count(&self, size: u64) -> usize {
        ((self.per_link / size.max(1)) as usize).max(self.window)
    }
}

/// Who this process sends to and receives from under `links` (over `ends`, processes).
pub fn peers(me: usize, ends: &[usize], links: &[(usize, usize)]) -> Flow {
    Flow {
        to: links.iter().filter(|&&(s, _)| ends[s] == me).map(|&(_, r)| ends[r]).collect(),
        from: links.iter().filter(|&&(_, r)| ends[r] == me).map(|&(s, _)| ends[s]).collect(),
        ..Flow::default()
    }
}

/// Measures one pattern. Collective: every process calls it; the lead gets the result.
pub fn measure<T: Team>(team: &T, pattern: Pattern, both_ways: bool, plan: &Plan) -> Option<NetResult> {
    let (ends, one_node) = endpoints(&team.process_nodes());
    let links = pattern.links(ends.len(), both_ways);
    let member = team.members(1).pop()?;
    let me = team.process();
    let mut curve = Vec::new();
    let mut best: Option<(f64, u64, Vec<f64>, u64)> = None;
    let mut peak = 0;
    for &size in &plan.sizes {
        let count = plan.count(size);
        // Warm-up: one window per stream, not timed (connections, registration, caches).
        let flow = Flow { message: size as usize, count: plan.window, window: plan.window, ..peers(me, &ends, &links) };
        team.flow(&flow);
        let flow = Flow { count, ..flow };
        let bytes = (links.len() * count) as u64 * size;
        let mut samples = Vec::new();
        let mut fastest = u64::MAX;
        for _ in 0..plan.repetitions.max(1) {
            member.barrier();
            let start = monotonic_ns();
            let counted = team.flow(&flow);
            let elapsed = monotonic_ns() - start;
            member.rest();
            let window_ns = member.max(elapsed);
            let arrived = member.sum(counted.received);
            peak = peak.max(member.max(counted.peak_in_flight as u64) as usize);
            // Every message sent arrived, or the figure would be a lie.
            if arrived * size != bytes {
                crate::team::broken(&format!("{arrived} messages of {size} bytes arrived, not {}", bytes / size));
            }
            fastest = fastest.min(window_ns);
            samples.extend(rate(bytes, window_ns));
        }
        let Some(m) = mean(&samples) else { continue };
        curve.push((size, m));
        if best.as_ref().is_none_or(|b| m > b.0) {
            best = Some((m, size, samples, fastest));
        }
    }
    let (bandwidth, message, samples, window_ns) = best?;
    let names = super::endpoint_names(team, &ends, one_node);
    let name = |e: usize| names[e].clone();
    (me == 0).then(|| NetResult {
        mode: Mode::Mpi,
        pattern,
        both_ways,
        streams: 1,
        senders: links.iter().map(|&(s, _)| name(s)).collect(),
        receivers: links.iter().map(|&(_, r)| name(r)).collect(),
        message,
        bytes: (links.len() * plan.count(message)) as u64 * message,
        window_ns,
        bandwidth: Some(bandwidth),
        samples,
        curve,
        peak_in_flight: peak,
        one_node,
        zerocopy: None,
        provenance: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_process_streams_exactly_its_links() {
        // Endpoints are processes 0, 2, 4 (one per node); N-to-1 both ways.
        let ends = [0, 2, 4];
        let links = Pattern::ManyToOne.links(3, true);
        let lead = peers(0, &ends, &links);
        assert_eq!((lead.to.clone(), lead.from.clone()), (vec![2, 4], vec![2, 4]));
        let other = peers(2, &ends, &links);
        assert_eq!((other.to, other.from), (vec![0], vec![0]));
        let idle = peers(1, &ends, &links);
        assert!(idle.to.is_empty() && idle.from.is_empty(), "a process that is no endpoint moves nothing");
        let plan = Plan { sizes: vec![1 << 20], per_link: 64 << 20, window: 64, repetitions: 3 };
        assert_eq!(plan.count(1 << 20), 64);
        assert_eq!(plan.count(16 << 20), 64, "at least one window");
        assert_eq!(plan.count(64 << 10), 1024);
    }
}
