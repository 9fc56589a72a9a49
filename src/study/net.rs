//! `net`: the network ceiling between nodes (MPI point to point, TCP streams).

use super::Error;

/// The settings of `iosurvey net`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct NetArgs {
    /// Modes to measure: mpi (messages with a window in flight), tcp (streams, iperf's role);
    /// default both (TCP with 1 and with 4 streams).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub mode: Vec<crate::net::Mode>,
    /// Patterns to measure (default: every one that means something with these nodes).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub pattern: Vec<crate::net::Pattern>,
    /// Also measure each pattern with every link carrying both ways at once.
    #[arg(long)]
    pub both_ways: bool,
    /// TCP streams per link (default: 1, then 4).
    #[arg(long, short = 'P', value_delimiter = ',')]
    pub streams: Vec<usize>,
    /// MPI message sizes: MIN..MAX, doubling.
    #[arg(long, default_value = "64k..16m", value_name = "MIN..MAX")]
    pub messages: String,
    /// MPI messages in flight per stream.
    #[arg(long, default_value_t = 64)]
    pub window: usize,
    /// Bytes per TCP write.
    #[arg(long, short = 't', value_parser = crate::units::size_arg, default_value = "1m")]
    pub transfer: u64,
    /// Bytes each link carries per repetition.
    #[arg(long, value_parser = crate::units::size_arg, default_value = "256m")]
    pub size: u64,
    /// Timed repetitions of each figure (warm-up excluded).
    #[arg(long, default_value_t = 3)]
    pub repetitions: usize,
    /// The network interface TCP listens on, e.g. ib0 or eth0 (default: the host name's).
    #[arg(long, value_name = "NAME")]
    pub interface: Option<String>,
    /// TCP sends with MSG_ZEROCOPY; says how many the kernel copied anyway.
    #[arg(long)]
    pub zerocopy: bool,
    /// Serve TCP clients (no MPI needed): read and discard what they send, log each.
    #[arg(long, conflicts_with = "to")]
    pub serve: bool,
    /// Where --serve listens (only there).
    #[arg(long, default_value = "127.0.0.1", requires = "serve", value_name = "ADDR")]
    pub bind: std::net::IpAddr,
    /// The port of --serve.
    #[arg(long, default_value_t = crate::net::serve::DEFAULT_PORT, requires = "serve")]
    pub port: u16,
    /// With --serve: end after the first client's session (a whole 'net --to' run).
    #[arg(long, requires = "serve")]
    pub once: bool,
    /// With --serve: clients served at once (1 to 256); more are turned away.
    #[arg(long, default_value_t = 8, requires = "serve")]
    pub max_clients: usize,
    /// Send TCP streams to a server started with --serve (from every rank of an MPI launch).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub to: Option<String>,
    /// With --to: how long a connect, a write or the server's answer may take before the
    /// client gives up on a server that stopped answering.
    #[arg(long, value_parser = crate::units::parse_duration, default_value = "30s", requires = "to", value_name = "DURATION")]
    pub timeout: u64,
}

impl NetArgs {
    /// Refuses, before anything is sent or stored, numbers that cannot give a measurement.
    pub fn validate(&self) -> Result<(), Error> {
        check_net(self)
    }
}

/// Most timed repetitions `net` takes: each is a full pass over every link.
pub const NET_REPETITIONS: usize = 1000;

/// Refuses `net`'s numbers that cannot give a measurement, before anything is sent or stored.
fn check_net(a: &NetArgs) -> Result<(), Error> {
    refuse_net_zeros(a)?;
    let refuse = |what: String, hint: &str| Err(Error::refused(what, hint));
    if a.repetitions > NET_REPETITIONS {
        return refuse(
            format!("--repetitions {} is more than the {NET_REPETITIONS} net takes", a.repetitions),
            "give --repetitions 1 to 1000",
        );
    }
    crate::net::sizes(&a.messages)
        .map_err(|e| Error::refused(format!("--messages {}: {e}", a.messages), "give MIN..MAX, e.g. 64k..16m"))?;
    if !(1..=4096).contains(&a.window) {
        return refuse(format!("--window {} is out of range", a.window), "give 1 to 4096 messages");
    }
    Ok(())
}

/// Refuses, before anything runs or is stored, settings that measure nothing (a link that
/// carries nothing, a figure with no timed round), never end (writes of no bytes) or serve
/// no one.
fn refuse_net_zeros(a: &NetArgs) -> Result<(), Error> {
    let refusals: [(bool, String, &str, &str); 6] = [
        (
            a.transfer == 0,
            "--transfer 0".into(),
            "a write of no bytes moves nothing, for ever",
            "give 1 byte or more, e.g. --transfer 1m",
        ),
        (
            a.size == 0,
            "--size 0".into(),
            "a link that carries no bytes has no bandwidth",
            "give 1 byte or more, e.g. --size 256m",
        ),
        (
            a.repetitions == 0,
            "--repetitions 0".into(),
            "a figure needs a timed round (the warm-up is not timed)",
            "give --repetitions 1 or more",
        ),
        (
            a.streams.contains(&0),
            "--streams 0".into(),
            "a link carries its bytes on 1 stream or more",
            "give --streams 1 or more",
        ),
        (
            a.timeout == 0,
            "--timeout 0".into(),
            "a client that waits no time gives up at once",
            "give a time, e.g. --timeout 30s",
        ),
        (
            !(1..=crate::net::serve::MAX_STREAMS).contains(&a.max_clients),
            format!("--max-clients {}", a.max_clients),
            "a server serves 1 to 256 clients at once, each with a stream of the 256 it reads at once",
            "give --max-clients 1 to 256",
        ),
    ];
    match refusals.into_iter().find(|r| r.0) {
        Some((_, what, why, hint)) => Err(Error::refused(format!("{what}: {why}"), hint)),
        None => Ok(()),
    }
}

use super::play::{on_lead, Context, Made, Observer, Outcome};
use crate::spec::Hint;
use crate::store::Store;
use crate::team::Team;

/// Measures the network as asked, each figure stored on the lead as [`Made::Net`] (as a
/// campaign's point, kept in the point's own group too); with `--serve`, serves TCP clients
/// (one process, no store) until interrupted or, with `--once`, one client, each client's
/// line said as progress.
pub(super) fn play<T: Team>(
    ctx: &Context,
    a: &NetArgs,
    team: &T,
    observer: &mut dyn Observer,
) -> Result<Outcome, Error> {
    if a.serve {
        serve(a, team, observer)?;
        return Ok(done(Made::Runs));
    }
    let group = super::point_group::begin(ctx, team, "net")?;
    group.finish(ctx, team, measure(ctx, a, team))
}

fn done(made: Made) -> Outcome {
    Outcome { records: Vec::new(), group: None, notes: Vec::new(), failure: None, made }
}

/// Measures and stores the network's figures.
fn measure<T: Team>(ctx: &Context, a: &NetArgs, team: &T) -> Result<Outcome, Error> {
    let store = on_lead(team, || Ok(Store::open(&ctx.store)?))?;
    let asked = crate::net::study::Asked {
        mode: a.mode.clone(),
        pattern: a.pattern.clone(),
        both_ways: a.both_ways,
        streams: a.streams.clone(),
        // Checked before anything ran (check_net).
        sizes: crate::net::sizes(&a.messages).unwrap_or_default(),
        window: a.window,
        transfer: a.transfer,
        size: a.size,
        repetitions: a.repetitions,
        interface: a.interface.clone(),
        zerocopy: a.zerocopy,
        timeout: a.timeout,
    };
    let results = match &a.to {
        Some(to) => crate::net::study::client(&asked, to, team).map(|r| vec![r]),
        None => crate::net::study::between(&asked, team),
    }
    .map_err(|e| Error::new(super::Kind::of_exit_code(e.code), e.what, Hint::Say(e.hint)))?;
    let mut stored = Vec::new();
    for r in results {
        if let Some(store) = &store {
            if let Err(e) = store.save_net(crate::units::now_unix(), &ctx.command_line, &r) {
                // What was stored before is still shown.
                return Ok(Outcome { failure: Some(e.into()), ..done(Made::Net(stored)) });
            }
        }
        stored.push(r);
    }
    Ok(done(Made::Net(stored)))
}

/// `net --serve`: one process, no store, until interrupted or, with --once, one client.
fn serve<T: Team>(a: &NetArgs, team: &T, observer: &mut dyn Observer) -> Result<(), Error> {
    if team.processes() > 1 {
        return Err(Error::refused("net --serve runs as one process", "start it without mpirun"));
    }
    let server = crate::net::serve::Server {
        bind: a.bind,
        port: a.port,
        once: a.once,
        max_clients: a.max_clients,
        limits: crate::net::serve::Limits::default(),
    };
    // The server logs through a shared reference; the observer is this thread's alone.
    let observer = std::cell::RefCell::new(observer);
    crate::net::serve::serve(&server, |line| observer.borrow_mut().progress(line)).map_err(|e| {
        Error::new(super::Kind::Failed, e, Hint::Say("pick a free --port, and a --bind address this host has".into()))
    })
}
