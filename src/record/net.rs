//! A network figure as plain data: what the store keeps and the analysis reads of a ceiling
//! measured between nodes (the `net` room measures it, above this one).

use serde::{Deserialize, Serialize};

/// How the bytes travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// MPI point-to-point messages.
    #[default]
    Mpi,
    /// TCP streams.
    Tcp,
}

/// A traffic pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Pattern {
    /// Endpoint 1 sends to endpoint 0.
    #[serde(rename = "1-to-1")]
    #[value(name = "1-to-1")]
    OneToOne,
    /// Every other endpoint sends to endpoint 0 (clients to one server).
    #[serde(rename = "N-to-1")]
    #[value(name = "N-to-1")]
    ManyToOne,
    /// Endpoint 0 sends to every other (one server to its clients).
    #[serde(rename = "1-to-N")]
    #[value(name = "1-to-N")]
    OneToMany,
    /// The first half sends to the second half, sender i to receiver i mod M.
    #[serde(rename = "N-to-M")]
    #[value(name = "N-to-M")]
    ManyToMany,
    /// Every endpoint of the first half exchanges with its partner in the second half, both
    /// ways at once: the bisection bandwidth.
    #[serde(rename = "bisection")]
    #[value(name = "bisection")]
    Bisection,
}

/// What the kernel said of a stream's zero-copy sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ZeroCopy {
    /// Sends made with MSG_ZEROCOPY.
    pub sends: u64,
    /// Completions received.
    pub completed: u64,
    /// Completions for which the kernel copied the data after all.
    pub copied: u64,
}

/// One measured figure: a mode, a pattern, its links and what they carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetResult {
    /// MPI messages or TCP streams (stores before the TCP mode hold MPI figures only).
    #[serde(default)]
    pub mode: Mode,
    /// Who sends to whom.
    pub pattern: Pattern,
    /// Whether every link also carried the other way at the same time.
    #[serde(default)]
    pub both_ways: bool,
    /// TCP streams per link (1 for MPI: one message stream per link).
    #[serde(default = "one")]
    pub streams: usize,
    /// The sending host of each link.
    pub senders: Vec<String>,
    /// The receiving host of each link.
    pub receivers: Vec<String>,
    /// Bytes per message (MPI: the best size of the sweep) or per write (TCP).
    pub message: u64,
    /// Bytes moved in all, per repetition.
    pub bytes: u64,
    /// The fastest repetition's window, from the common start to the last arrival, ns.
    pub window_ns: u64,
    /// The mean over the repetitions, bytes per second.
    pub bandwidth: Option<f64>,
    /// Each repetition's bandwidth, bytes per second (warm-up excluded).
    #[serde(default)]
    pub samples: Vec<f64>,
    /// MPI: the mean bandwidth at each message size of the sweep.
    #[serde(default)]
    pub curve: Vec<(u64, f64)>,
    /// MPI: the most messages one stream had in flight at once, counted.
    #[serde(default)]
    pub peak_in_flight: usize,
    /// Whether the endpoints were processes of one node rather than nodes.
    #[serde(default)]
    pub one_node: bool,
    /// TCP with `--zerocopy`: what the kernel said of the sends (over every repetition).
    #[serde(default)]
    pub zerocopy: Option<ZeroCopy>,
    /// Where the figure comes from when iosurvey did not measure it: `imported:iperf3 3.12`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
}

fn one() -> usize {
    1
}
