//! The team as MPI ranks x threads (cargo feature `mpi`).
//!
//! Collectives are hierarchical: the threads of a process meet through the local team, then
//! one thread per process (its local leader) takes part in the MPI collective, then shares
//! the result with its threads. MPI is initialised with MPI_THREAD_MULTIPLE because different
//! threads of a process lead different sub-teams, and whichever task checks for a stop takes
//! in the stops other processes sent.
//!
//! Clocks: every process reads CLOCK_MONOTONIC; at start-up the lead measures each other
//! node's offset by ping-pong with one of its processes (Cristian's method, the round with the
//! shortest round trip wins), every process takes its node's, and the worst half round trip
//! is kept as the alignment uncertainty.
//!
//! One file per job: [`abort`] (the abort channel), [`nodes`] (node
//! discovery), [`clock`] (clock alignment), [`collectives`] (a member's collectives).

mod abort;
mod clock;
mod collectives;
mod flow;
mod nodes;

use super::local::LocalTeam;
use super::{Member, Startup, Team};
use crate::sys::mpi::{Comm, Universe};
use abort::AbortChannel;
pub use collectives::MpiMember;
use mpi::traits::*;
use mpi::Threading;
use std::sync::Arc;
use std::time::Instant;

/// This process's place in an MPI team.
pub struct MpiTeam {
    world: Arc<Comm>,
    process: usize,
    processes: usize,
    node_of_process: Vec<u32>,
    hosts: Vec<String>,
    offset: i64,
    uncertainty: u64,
    abort: Arc<AbortChannel>,
    startup: Startup,
    // Dropped last: finalises MPI.
    _universe: Universe,
}

/// Why MPI could not start.
#[derive(Debug, thiserror::Error)]
pub enum MpiError {
    /// MPI_Init failed or was already done.
    #[error("MPI could not be initialised")]
    Init,
    /// The library lacks full thread support.
    #[error("the MPI library does not provide MPI_THREAD_MULTIPLE (it gives {0:?})")]
    Threading(Threading),
}

impl MpiTeam {
    /// Initialises MPI (under mpirun, srun, or as a singleton), finds nodes and aligns clocks.
    pub fn init() -> Result<MpiTeam, MpiError> {
        let began = Instant::now();
        let (universe, world) =
            crate::sys::mpi::init_thread_multiple().map_err(|t| t.map_or(MpiError::Init, MpiError::Threading))?;
        let init_ns = began.elapsed().as_nanos() as u64;
        let (process, processes) = (world.rank() as usize, world.size() as usize);
        let (node_of_process, hosts) = nodes::discover(&world);
        let nodes_ns = began.elapsed().as_nanos() as u64 - init_ns;
        let (offset, uncertainty) = clock::align(&world, &node_of_process);
        let clock_ns = began.elapsed().as_nanos() as u64 - init_ns - nodes_ns;
        let abort = Arc::new(AbortChannel::new(world.dup()));
        Ok(MpiTeam {
            world: Arc::new(world),
            process,
            processes,
            node_of_process,
            hosts,
            offset,
            uncertainty,
            abort,
            startup: Startup { init_ns, nodes_ns, clock_ns },
            _universe: universe,
        })
    }
}

impl Drop for MpiTeam {
    fn drop(&mut self) {
        self.abort.close();
        // Nobody leaves while others may still send: the last collective of the run.
        self.world.barrier();
    }
}

impl Team for MpiTeam {
    type Member = MpiMember;
    fn process(&self) -> usize {
        self.process
    }
    fn processes(&self) -> usize {
        self.processes
    }
    fn members(&self, threads: usize) -> Vec<MpiMember> {
        self.abort.epochs.next();
        let size = self.processes * threads;
        let nodes: Arc<[u32]> = (0..size).map(|r| self.node_of_process[r / threads]).collect::<Vec<_>>().into();
        LocalTeam::threads(threads)
            .into_iter()
            .map(|local| MpiMember {
                rank: self.process * threads + local.rank(),
                size,
                nodes: nodes.clone(),
                local,
                comm: self.world.clone(),
                offset: self.offset,
                abort: self.abort.clone(),
            })
            .collect()
    }
    fn hosts(&self) -> Vec<String> {
        self.hosts.clone()
    }
    fn clock_uncertainty(&self) -> u64 {
        self.uncertainty
    }
    fn startup(&self) -> Startup {
        self.startup
    }
    fn share(&self, bytes: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.process == 0 { bytes } else { vec![0u8; len as usize] };
        root.broadcast_into(&mut buf[..]);
        buf
    }
    fn process_nodes(&self) -> Vec<u32> {
        self.node_of_process.clone()
    }
    fn send(&self, to: usize, bytes: &[u8]) {
        self.world.process_at_rank(to as i32).send(bytes);
    }
    fn receive(&self, from: usize, buf: &mut [u8]) {
        self.world.process_at_rank(from as i32).receive_into(buf);
    }
    fn flow(&self, flow: &crate::team::Flow) -> crate::team::FlowCount {
        flow::run(&self.world, flow)
    }
}

/// The MPI library this process runs against, as it names itself (its first line): MPI
/// allows asking before the library starts.
pub fn library() -> String {
    match mpi::environment::library_version() {
        // The name may end in a NUL and blanks the library pads it with.
        Ok(v) => {
            v.lines().next().unwrap_or("unknown").trim_matches(|c: char| c.is_whitespace() || c == '\0').to_string()
        }
        Err(_) => "unknown (its name is not UTF-8)".into(),
    }
}
