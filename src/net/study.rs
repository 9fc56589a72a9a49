//! The network studies: the ceilings between the team's nodes over every mode, pattern,
//! direction and stream count asked for, and N clients to one `net --serve` server.

use super::{NetResult, Pattern};
use crate::team::Team;
use crate::units::format_size;

/// What a network study is asked to measure.
#[derive(Debug, Clone)]
pub struct Asked {
    /// TCP, MPI or both (none: both).
    pub mode: Vec<super::Mode>,
    /// The patterns (none: every one worth it for the team).
    pub pattern: Vec<Pattern>,
    /// Both directions at once as well as one.
    pub both_ways: bool,
    /// TCP streams per link (none: 1 and 4).
    pub streams: Vec<usize>,
    /// MPI's message sizes.
    pub sizes: Vec<u64>,
    /// MPI messages in flight.
    pub window: usize,
    /// Bytes per write.
    pub transfer: u64,
    /// Bytes per link per round.
    pub size: u64,
    /// Timed rounds.
    pub repetitions: usize,
    /// The interface TCP binds to.
    pub interface: Option<String>,
    /// MSG_ZEROCOPY sends.
    pub zerocopy: bool,
    /// How long a client waits for its server, nanoseconds.
    pub timeout: u64,
}

/// Why a network study could not run: what, what to do, and the exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct NetError {
    /// What went wrong.
    pub what: String,
    /// What to do.
    pub hint: String,
    /// The exit code.
    pub code: i32,
}

impl NetError {
    fn new(what: impl std::fmt::Display, hint: impl std::fmt::Display, code: i32) -> Self {
        NetError { what: what.to_string(), hint: hint.to_string(), code }
    }
}

/// The ceilings between the team's nodes: every mode, stream count and pattern asked for.
pub fn between<T: Team>(a: &Asked, team: &T) -> Result<Vec<NetResult>, NetError> {
    let (ends, _) = super::endpoints(&team.process_nodes());
    if ends.len() < 2 {
        return Err(NetError::new(
            format!("iosurvey net needs at least 2 processes, and this team has {}", ends.len()),
            "launch it with mpirun across nodes, from a build with --features mpi, or use --to HOST with 'iosurvey net --serve' there",
            2,
        ));
    }
    let modes = if a.mode.is_empty() { vec![super::Mode::Tcp, super::Mode::Mpi] } else { a.mode.clone() };
    let patterns: Vec<super::Pattern> = if a.pattern.is_empty() {
        super::Pattern::ALL.into_iter().filter(|p| p.worth_it(ends.len())).collect()
    } else {
        a.pattern.clone()
    };
    let streams = if a.streams.is_empty() { vec![1, 4] } else { a.streams.clone() };
    let ways: &[bool] = if a.both_ways { &[false, true] } else { &[false] };
    if modes.contains(&super::Mode::Tcp) {
        for (&p, &both, &n) in combinations(&patterns, ways, &streams) {
            let need = super::tcp_buffers(&p.links(ends.len(), both), ends.len(), n.max(1), a.transfer);
            if need > super::MAX_BUFFERS {
                return Err(NetError::new(
                    format!(
                        "{} with {n} streams of {} writes would hold {} of buffers in one process, over the {} allowed",
                        p.name(),
                        format_size(a.transfer),
                        format_size(need),
                        format_size(super::MAX_BUFFERS)
                    ),
                    "use fewer --streams or a smaller --transfer",
                    2,
                ));
            }
        }
    }
    let mpi = super::mpi_mode::Plan {
        sizes: a.sizes.clone(),
        per_link: a.size,
        window: a.window,
        repetitions: a.repetitions,
    };
    let mut results = Vec::new();
    for mode in modes {
        let counts: &[usize] = if mode == super::Mode::Tcp { &streams } else { &[1] };
        for &p in counts {
            let tcp = super::tcp_mode::Plan {
                streams: p,
                per_link: a.size,
                write: a.transfer as usize,
                repetitions: a.repetitions,
                interface: a.interface.clone(),
                zerocopy: a.zerocopy,
            };
            for &pattern in &patterns {
                // Bisection is both ways by definition: measured once.
                let ways = if pattern == super::Pattern::Bisection { &ways[..1] } else { ways };
                for &both in ways {
                    let r = match mode {
                        super::Mode::Mpi => super::mpi_mode::measure(team, pattern, both, &mpi),
                        super::Mode::Tcp => super::tcp_mode::measure(team, pattern, both, &tcp),
                    };
                    results.extend(r);
                }
            }
        }
    }
    Ok(results)
}

/// Every combination of a pattern, a direction and a stream count.
fn combinations<'a>(
    patterns: &'a [super::Pattern],
    ways: &'a [bool],
    streams: &'a [usize],
) -> impl Iterator<Item = (&'a super::Pattern, &'a bool, &'a usize)> {
    patterns.iter().flat_map(move |p| ways.iter().flat_map(move |w| streams.iter().map(move |s| (p, w, s))))
}

/// N clients (the team's processes) to one server started with `net --serve`.
pub fn client<T: Team>(a: &Asked, to: &str, team: &T) -> Result<NetResult, NetError> {
    use crate::team::Member;
    let addr = super::serve::parse_to(to)
        .map_err(|e| NetError::new(format!("--to {to}: {e}"), "give HOST or HOST:PORT", 2))?;
    let member =
        team.members(1).pop().ok_or_else(|| NetError::new("this process has no member", "report this as a bug", 1))?;
    let streams = a.streams.first().copied().unwrap_or(1).max(1);
    if streams as u64 * a.transfer > super::MAX_BUFFERS {
        return Err(NetError::new(
            format!(
                "{streams} streams of {} writes would hold more than {} of buffers",
                format_size(a.transfer),
                format_size(super::MAX_BUFFERS)
            ),
            "use fewer --streams or a smaller --transfer",
            2,
        ));
    }
    let total = a.size * team.processes() as u64;
    let wait = std::time::Duration::from_nanos(a.timeout);
    // One session for the whole run, every process and round, which the server serves as one
    // client until the lead's bye. Its id is random: whoever knows it can end it.
    let mine = (team.process() == 0).then(|| {
        super::tcp::new_session().unwrap_or_else(|e| crate::team::broken(&format!("no random session id: {e}")))
    });
    let session: u64 = crate::team::share_value(team, mine.as_ref());
    let count = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    let hello = super::tcp::Hello {
        session,
        streams: count(streams * team.processes()),
        index: count(streams * team.process()),
    };
    let mut samples = Vec::new();
    let mut fastest = u64::MAX;
    let mut zc = super::zerocopy::Report::default();
    // An untimed first round: TCP's slow start.
    for round in 0..=a.repetitions {
        member.barrier();
        let start = crate::team::clock::monotonic_ns();
        let how = super::tcp::Sending { streams, write: a.transfer as usize, zerocopy: a.zerocopy, wait };
        let sent = match super::tcp::send(addr, hello, how, a.size) {
            Ok(sent) => {
                zc = zc + sent.zerocopy;
                sent.bytes
            }
            Err(e) if team.processes() == 1 => return Err(NetError::new(e, NO_SERVER, 1)),
            Err(e) => crate::team::broken(&e.to_string()),
        };
        let elapsed = crate::team::clock::monotonic_ns() - start;
        member.rest();
        let window_ns = member.max(elapsed);
        let arrived = member.sum(sent);
        if round > 0 && arrived == total {
            fastest = fastest.min(window_ns);
            samples.extend(crate::units::rate(total, window_ns));
        }
    }
    let zerocopy = a.zerocopy.then(|| zc.over_team(&member));
    // Every process's streams have been counted (the sums above): the session is over.
    if team.process() == 0 {
        super::tcp::bye(addr, session, wait).map_err(|e| NetError::new(e, NO_SERVER, 1))?;
    }
    let hosts = team.hosts();
    let senders: Vec<String> =
        team.process_nodes().iter().map(|&n| hosts.get(n as usize).cloned().unwrap_or_default()).collect();
    Ok(super::NetResult {
        mode: super::Mode::Tcp,
        pattern: if team.processes() > 1 { super::Pattern::ManyToOne } else { super::Pattern::OneToOne },
        both_ways: false,
        streams,
        receivers: vec![to.to_string(); senders.len()],
        senders,
        message: a.transfer,
        bytes: total,
        window_ns: fastest,
        bandwidth: super::mean(&samples),
        samples,
        curve: Vec::new(),
        peak_in_flight: 0,
        one_node: false,
        zerocopy,
        provenance: None,
    })
}

/// The hint when the server of `net --to` fails the client.
const NO_SERVER: &str =
    "check that 'iosurvey net --serve' runs there and is reachable; its log says why it dropped a client";
