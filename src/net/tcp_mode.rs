//! The TCP mode between the processes of a team: receivers listen, the addresses go round,
//! every link opens its streams at once after a common start, and the clock stops at the
//! last receiver's count.

use super::tcp::{self, NetError};
use super::{endpoints, mean, Mode, NetResult, Pattern};
use crate::team::clock::monotonic_ns;
use crate::team::{share_value, Member, Team};
use crate::units::rate;
use std::net::{SocketAddr, TcpListener};

/// What the TCP mode sends.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Streams per link.
    pub streams: usize,
    /// Bytes each link carries per repetition.
    pub per_link: u64,
    /// Bytes per write.
    pub write: usize,
    /// Timed repetitions (after one untimed, for TCP's slow start).
    pub repetitions: usize,
    /// The network interface to listen on (default: the host name's).
    pub interface: Option<String>,
    /// Send with MSG_ZEROCOPY.
    pub zerocopy: bool,
}

/// Measures one pattern. Collective: every process calls it; the lead gets the result.
pub fn measure<T: Team>(team: &T, pattern: Pattern, both_ways: bool, plan: &Plan) -> Option<NetResult> {
    let (ends, one_node) = endpoints(&team.process_nodes());
    let links = pattern.links(ends.len(), both_ways);
    let member = team.members(1).pop()?;
    let me = team.process();
    let receives = links.iter().filter(|&&(_, r)| ends[r] == me).count() * plan.streams.max(1);
    let listener = (receives > 0).then(|| listen(plan.interface.as_deref()));
    let mine = listener.as_ref().and_then(|l| l.local_addr().ok()).map(|a| a.to_string());
    let gathered = member.gather(mine);
    let addrs: Vec<Option<String>> = share_value(team, gathered.as_ref());
    let addr_of = |p: usize| -> SocketAddr {
        addrs
            .get(p)
            .cloned()
            .flatten()
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| crate::team::broken(&format!("process {p} gave no address to send to")))
    };
    let targets: Vec<SocketAddr> =
        links.iter().filter(|&&(s, _)| ends[s] == me).map(|&(_, r)| addr_of(ends[r])).collect();
    let total = links.len() as u64 * plan.per_link;
    let mut samples = Vec::new();
    let mut fastest = u64::MAX;
    let mut zc = tcp::zerocopy::Report::default();
    for rep in 0..=plan.repetitions.max(1) {
        member.barrier();
        let start = monotonic_ns();
        let (arrived, sent) = exchange(listener.as_ref(), receives, &targets, plan)
            .unwrap_or_else(|e| crate::team::broken(&format!("the TCP streams failed: {e}")));
        zc = zc + sent;
        let elapsed = monotonic_ns() - start;
        member.rest();
        let window_ns = member.max(elapsed);
        let arrived = member.sum(arrived);
        if arrived != total {
            crate::team::broken(&format!("{arrived} bytes arrived over TCP, not {total}"));
        }
        // The first round is TCP's slow start and the connections' set-up: not timed.
        if rep > 0 {
            fastest = fastest.min(window_ns);
            samples.extend(rate(total, window_ns));
        }
    }
    let zerocopy = plan.zerocopy.then(|| zc.over_team(&member));
    let names = super::endpoint_names(team, &ends, one_node);
    let name = |e: usize| names[e].clone();
    (me == 0).then(|| NetResult {
        mode: Mode::Tcp,
        pattern,
        both_ways,
        streams: plan.streams.max(1),
        senders: links.iter().map(|&(s, _)| name(s)).collect(),
        receivers: links.iter().map(|&(_, r)| name(r)).collect(),
        message: plan.write as u64,
        bytes: total,
        window_ns: fastest,
        bandwidth: mean(&samples),
        samples,
        curve: Vec::new(),
        peak_in_flight: 0,
        one_node,
        zerocopy,
        provenance: None,
    })
}

fn listen(interface: Option<&str>) -> TcpListener {
    let bound = tcp::local_ip(interface).and_then(|ip| TcpListener::bind((ip, 0)));
    bound.unwrap_or_else(|e| crate::team::broken(&format!("cannot listen for TCP streams: {e}")))
}

/// This process's part of one round: serve its receives and send to its targets, at once.
/// Returns the bytes it received and the kernel's word on its zero-copy sends.
fn exchange(
    listener: Option<&TcpListener>,
    receives: usize,
    targets: &[SocketAddr],
    plan: &Plan,
) -> Result<(u64, tcp::zerocopy::Report), NetError> {
    // Receivers between ranks take any `receives` streams and never read the session.
    let hello = tcp::Hello { session: 0, streams: plan.streams as u16, index: 0 };
    let how = tcp::Sending { streams: plan.streams, write: plan.write, zerocopy: plan.zerocopy, wait: tcp::WAIT };
    std::thread::scope(|s| {
        let receiving = listener.map(|l| s.spawn(move || tcp::receive(l, receives)));
        let sending: Vec<_> =
            targets.iter().map(|&addr| s.spawn(move || tcp::send(addr, hello, how, plan.per_link))).collect();
        let mut zc = tcp::zerocopy::Report::default();
        for h in sending {
            let sent =
                h.join().unwrap_or_else(|_| Err(NetError::Listen(std::io::Error::other("a sender panicked"))))?;
            zc = zc + sent.zerocopy;
        }
        let got = match receiving {
            Some(h) => {
                h.join().unwrap_or_else(|_| Err(NetError::Listen(std::io::Error::other("a receiver panicked"))))?
            }
            None => 0,
        };
        Ok((got, zc))
    })
}
