//! Each kind of object-store request a task makes in a phase, kept apart (a mixed phase's GETs
//! from its PUTs), reduced over the team as the phase's own latency is.

use super::phase::team_histogram;
use crate::measure::histogram::Histogram;
use crate::record::execution::{Request, RequestTally};
use crate::team::Member;

/// One kind's tally in one task.
#[derive(Default)]
struct Kind {
    count: u64,
    bytes: u64,
    latency: Histogram,
    first_byte: Histogram,
}

/// One task's requests in one phase, by kind (made at the first request of a kind: a file
/// phase holds none).
#[derive(Default)]
pub struct RequestTrace {
    kinds: [Option<Box<Kind>>; Request::ALL.len()],
}

impl RequestTrace {
    /// Counts one request of `bytes` that took `latency_ns`, its first byte after
    /// `first_byte_ns` when it read a body.
    pub(super) fn record(&mut self, request: Request, latency_ns: u64, bytes: u64, first_byte_ns: Option<u64>) {
        let kind = self.kinds[request.index()].get_or_insert_with(Box::default);
        kind.count += 1;
        kind.bytes += bytes;
        kind.latency.record(latency_ns);
        if let Some(ns) = first_byte_ns {
            kind.first_byte.record(ns);
        }
    }

    /// The team's tally of each kind any task made. A collective: every task of the team
    /// calls it, and the histograms are reduced only for the kinds some task made.
    pub(super) fn reduce<M: Member>(&self, m: &M) -> Vec<(Request, RequestTally)> {
        let n = Request::ALL.len();
        let mut counts = vec![0; 3 * n];
        for (i, kind) in self.kinds.iter().enumerate() {
            if let Some(k) = kind {
                (counts[i], counts[n + i], counts[2 * n + i]) = (k.count, k.bytes, k.first_byte.count());
            }
        }
        let counts = m.sum_vec(counts);
        let empty = Kind::default;
        let mut out = Vec::new();
        for (i, request) in Request::ALL.into_iter().enumerate().filter(|(i, _)| counts[*i] > 0) {
            let none = self.kinds[i].is_none().then(empty);
            let kind = self.kinds[i].as_deref().or(none.as_ref()).expect("one or the other");
            let latency = team_histogram(m, &kind.latency).summary();
            let first_byte = (counts[2 * n + i] > 0).then(|| team_histogram(m, &kind.first_byte).summary());
            out.push((request, RequestTally { count: counts[i], bytes: counts[n + i], latency, first_byte }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::team::local::LocalTeam;
    use crate::team::Team;

    #[test]
    fn each_kind_is_tallied_apart_and_only_gets_carry_a_first_byte() {
        let mut t = RequestTrace::default();
        for (i, ns) in [1_000u64, 2_000, 3_000, 4_000].into_iter().enumerate() {
            t.record(Request::Get, ns, 4096, Some(ns / 4 + i as u64));
        }
        t.record(Request::Head, 500, 0, None);
        let member = LocalTeam.members(1).pop().expect("one member");
        let reduced = t.reduce(&member);
        assert_eq!(reduced.iter().map(|(r, _)| *r).collect::<Vec<_>>(), [Request::Get, Request::Head]);
        let (_, get) = &reduced[0];
        assert_eq!((get.count, get.bytes, get.latency.count, get.latency.max), (4, 4 * 4096, 4, 4_000));
        let ttfb = get.first_byte.as_ref().expect("a GET's first byte is timed");
        assert_eq!((ttfb.count, ttfb.min, ttfb.max), (4, 250, 1_003));
        assert_eq!(reduced[1].1.first_byte, None, "a HEAD reads no body");
        assert_eq!((reduced[1].1.count, reduced[1].1.bytes), (1, 0));
    }
}
