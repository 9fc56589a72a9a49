//! Who runs: the team of tasks, the collectives they use, their nodes and their clocks.
//!
//! The engine is written against [`Member`], one task's view of its team, and [`Team`], the
//! process's view that makes a member per thread. The local team ([`local::LocalTeam`]) is
//! threads in this process; the MPI team (`mpi`, behind the cargo feature of that name) is
//! ranks x threads, with the same traits, so the engine does not change between them.

pub mod clock;
pub mod epochs;
pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod timing;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// One task's handle on its team. Every collective must be called by every member of the team,
/// in the same order, or the team hangs; the engine therefore never leaves a phase early on an
/// error, it records the error and meets the others at the next collective.
pub trait Member: Send {
    /// This task's index in the team, 0-based; 0 leads (prints, gathers, writes the store).
    fn rank(&self) -> usize;
    /// Number of tasks in the team.
    fn size(&self) -> usize;
    /// The node (client machine) of every task of the team, indexed by team rank.
    fn nodes(&self) -> &[u32];
    /// This task's index among the threads of its process (for per-process counters).
    fn local_index(&self) -> usize;
    /// Nanoseconds to subtract from this process's monotonic clock to get the lead's clock.
    fn clock_offset(&self) -> i64;
    /// Waits until every member has arrived.
    fn barrier(&self);
    /// Waits until every member has arrived, sleeping rather than polling: for waits that
    /// may be long while others still measure (an MPI barrier busy-polls a core, which a
    /// small node's senders and receivers need).
    fn rest(&self) {
        self.barrier();
    }
    /// Every member gets the largest of the values the members gave.
    fn max(&self, value: u64) -> u64;
    /// Every member gets the smallest of the values the members gave.
    fn min(&self, value: u64) -> u64;
    /// Every member gets the sum of the values the members gave.
    fn sum(&self, value: u64) -> u64;
    /// Every member gets the element-wise sum of the vectors the members gave (shorter ones
    /// count as padded with zeros).
    fn sum_vec(&self, values: Vec<u64>) -> Vec<u64>;
    /// The leader gets every member's value, in rank order; the others get `None`.
    fn gather<T: Serialize + DeserializeOwned + Send + 'static>(&self, value: T) -> Option<Vec<T>>;
    /// Divides the team in two: members giving the same flag form a new team, ranked as in
    /// this one.
    fn split(&self, flag: bool) -> Self
    where
        Self: Sized;
    /// Whether the team is to stop: some task of it, in any process, failed. Every task asks
    /// after each transfer or item, so it must cost next to nothing; under MPI it also takes
    /// in, at most every few milliseconds, the stops other processes sent.
    fn stopped(&self) -> bool;
    /// Tells every task of the team, in every process, to stop after its current transfer.
    fn raise_abort(&self);

    /// This task's node.
    fn node(&self) -> u32 {
        self.nodes()[self.rank()]
    }
}

/// A process's view of the team: where its members come from.
pub trait Team: Sync {
    /// The member type handed to each thread.
    type Member: Member;
    /// Index of this process among the team's processes; 0 leads.
    fn process(&self) -> usize;
    /// Number of processes (MPI ranks; 1 for a local team).
    fn processes(&self) -> usize;
    /// Members for `threads` threads of this process; together with the other processes'
    /// members they form one team, for one run: its abort flag starts clear. Every process
    /// calls it at the same point.
    fn members(&self, threads: usize) -> Vec<Self::Member>;
    /// Host name of each node, by node index.
    fn hosts(&self) -> Vec<String>;
    /// Worst-case error of the clock alignment across processes, in nanoseconds.
    fn clock_uncertainty(&self) -> u64;
    /// What forming the team took in this process, step by step (none for a local team).
    fn startup(&self) -> Startup {
        Startup::default()
    }
    /// The lead process's bytes reach every process (for decisions only the lead may take).
    fn share(&self, bytes: Vec<u8>) -> Vec<u8>;
    /// The node of every process, by process index.
    fn process_nodes(&self) -> Vec<u32>;
    /// Sends bytes to another process (point to point, blocking).
    fn send(&self, to: usize, bytes: &[u8]);
    /// Receives exactly `buf.len()` bytes from another process (blocking).
    fn receive(&self, from: usize, buf: &mut [u8]);
    /// Moves the messages `flow` describes to and from other processes, with its window in
    /// flight; returns when every one has arrived or left.
    fn flow(&self, flow: &Flow) -> FlowCount;
}

/// What forming a team took, in nanoseconds of this process's clock: `team-timing` prints it,
/// so that bench/scale can tell the launcher's and MPI's share of a start from iosurvey's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Startup {
    /// MPI_Init_thread: the launcher's wire-up, waiting for every rank to start.
    pub init_ns: u64,
    /// Finding which processes share a node, and the nodes' host names.
    pub nodes_ns: u64,
    /// Aligning the nodes' clocks with the lead's.
    pub clock_ns: u64,
}

/// Message streams between this process and others: `count` messages of `message` bytes to
/// each process in `to` and from each in `from`, at most `window` in flight per stream.
#[derive(Debug, Clone, Default)]
pub struct Flow {
    /// Processes this one sends to.
    pub to: Vec<usize>,
    /// Processes this one receives from.
    pub from: Vec<usize>,
    /// Bytes per message.
    pub message: usize,
    /// Messages per stream.
    pub count: usize,
    /// Messages in flight per stream.
    pub window: usize,
}

/// What a flow did, counted as it happened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowCount {
    /// Messages sent.
    pub sent: u64,
    /// Messages received.
    pub received: u64,
    /// The most messages one stream had in flight at once.
    pub peak_in_flight: usize,
}

/// Sends a value from the lead process to every process (`None` on the others).
pub fn share_value<T: Team, V: Serialize + DeserializeOwned>(team: &T, value: Option<&V>) -> V {
    let bytes = value.map(|v| encode(v)).unwrap_or_default();
    decode(&team.share(bytes), "the lead")
}

/// A value as the bytes a collective carries.
pub(crate) fn encode<V: Serialize + ?Sized>(value: &V) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|e| broken(&format!("a value could not be encoded for the team: {e}")))
}

/// A value from the bytes a collective carried from `from`.
pub(crate) fn decode<V: DeserializeOwned>(bytes: &[u8], from: &str) -> V {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        broken(&format!("what {from} sent could not be read ({e}); every node must run the same iosurvey build"))
    })
}

/// What ends the process when the team cannot go on (installed by the command line, which
/// removes the run's files and stores it as failed). Under MPI, a process that ends makes
/// the launcher end the others, whose own clean-up then runs.
static ON_BROKEN: std::sync::OnceLock<fn(&str) -> !> = std::sync::OnceLock::new();

/// Sets what ends the process when the team cannot go on.
pub fn on_broken(end: fn(&str) -> !) {
    let _ = ON_BROKEN.set(end);
}

/// Ends the process: the team cannot go on, because of `why`.
pub fn broken(why: &str) -> ! {
    match ON_BROKEN.get() {
        Some(end) => end(why),
        None => {
            eprintln!("iosurvey: error: {}", crate::escape::visible(why));
            std::process::exit(1)
        }
    }
}

/// Whether every process says yes: the lead collects the answers and shares the verdict.
/// Used where a process may be unable to take part in its members' collectives.
pub fn all_agree<T: Team>(team: &T, yes: bool) -> bool {
    let mut all = yes;
    if team.process() == 0 {
        for p in 1..team.processes() {
            let mut b = [0u8];
            team.receive(p, &mut b);
            all &= b[0] == 1;
        }
    } else {
        team.send(0, &[yes as u8]);
    }
    share_value(team, (team.process() == 0).then_some(&all))
}

/// The variables launchers set for each process they start (Open MPI, PMI/MPICH, Slurm: the
/// number of processes; PMIx: the rank), with the value from which the process is one of
/// several.
const LAUNCHER_VARS: [(&str, u64); 4] =
    [("OMPI_COMM_WORLD_SIZE", 2), ("PMI_SIZE", 2), ("SLURM_STEP_NUM_TASKS", 2), ("PMIX_RANK", 1)];

/// Whether a launcher started this process as one of several: the variable and its value.
/// `get` reads the environment (a parameter, for tests).
pub fn launched_as_many(get: impl Fn(&str) -> Option<String>) -> Option<(&'static str, u64)> {
    LAUNCHER_VARS.into_iter().find_map(|(var, least)| {
        let n = get(var)?.trim().parse::<u64>().ok()?;
        (n >= least).then_some((var, n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_of_several_processes_is_recognised() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |v: &str| pairs.iter().find(|(k, _)| *k == v).map(|(_, x)| x.to_string())
        };
        assert_eq!(launched_as_many(env(&[("OMPI_COMM_WORLD_SIZE", "4")])), Some(("OMPI_COMM_WORLD_SIZE", 4)));
        assert_eq!(launched_as_many(env(&[("SLURM_STEP_NUM_TASKS", "16")])), Some(("SLURM_STEP_NUM_TASKS", 16)));
        assert_eq!(launched_as_many(env(&[("PMI_SIZE", "1")])), None, "a single process is fine");
        assert_eq!(launched_as_many(env(&[("PMIX_RANK", "3")])), Some(("PMIX_RANK", 3)));
        assert_eq!(launched_as_many(env(&[("PMIX_RANK", "0")])), None, "rank 0 alone may be a singleton");
        assert_eq!(launched_as_many(env(&[("PMI_SIZE", "x")])), None);
        assert_eq!(launched_as_many(env(&[])), None);
    }
}
