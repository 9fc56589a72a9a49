//! The team as MPI ranks x threads (cargo feature `mpi`).
//!
//! Collectives are hierarchical: the threads of a process meet through the local team, then
//! one thread per process (its local leader) takes part in the MPI collective, then shares
//! the result with its threads. MPI is initialised with MPI_THREAD_MULTIPLE because different
//! threads of a process lead different sub-teams, and a monitor thread listens for aborts.
//!
//! Clocks: every process reads CLOCK_MONOTONIC; at start-up the lead measures each rank's
//! offset by ping-pong (Cristian's method, the round with the shortest round trip wins) and
//! the worst half round trip is kept as the alignment uncertainty.

use super::clock::monotonic_ns;
use super::local::{LocalMember, LocalTeam};
use super::{Member, Team};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::raw::AsRaw;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use mpi::Threading;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A communicator usable from any thread.
struct Comm(SimpleCommunicator);

// SAFETY: MPI is initialised with MPI_THREAD_MULTIPLE (checked in `MpiTeam::init`), under
// which the standard allows any thread to call MPI on any communicator.
unsafe impl Send for Comm {}
// SAFETY: as above.
unsafe impl Sync for Comm {}

const TAG_ABORT: i32 = 0x105;
const CLOCK_ROUNDS: usize = 8;

/// Tells every process to stop: one small message to each, received by a monitor thread.
struct AbortChannel {
    flag: AtomicBool,
    sent: AtomicBool,
    stop: AtomicBool,
    comm: Comm,
}

impl AbortChannel {
    fn raise(&self) {
        self.flag.store(true, Ordering::Relaxed);
        if self.sent.swap(true, Ordering::Relaxed) {
            return;
        }
        static ONE: i32 = 1;
        let me = self.comm.0.rank();
        for peer in (0..self.comm.0.size()).filter(|&p| p != me) {
            // SAFETY: ONE is a static buffer that outlives the send; the request is freed
            // without waiting, which MPI allows for sends (they complete on their own).
            unsafe {
                let mut req = std::mem::zeroed();
                mpi::ffi::MPI_Isend(
                    &ONE as *const i32 as *mut libc::c_void,
                    1,
                    mpi::ffi::RSMPI_INT32_T,
                    peer,
                    TAG_ABORT,
                    self.comm.0.as_raw(),
                    &mut req,
                );
                mpi::ffi::MPI_Request_free(&mut req);
            }
        }
    }

    /// Waits for one abort message until told to stop.
    fn listen(self: Arc<Self>) {
        let mut buf: i32 = 0;
        // SAFETY: buf lives until the request completes or is cancelled and waited for below.
        unsafe {
            let mut req = std::mem::zeroed();
            mpi::ffi::MPI_Irecv(
                &mut buf as *mut i32 as *mut libc::c_void,
                1,
                mpi::ffi::RSMPI_INT32_T,
                mpi::ffi::RSMPI_ANY_SOURCE,
                TAG_ABORT,
                self.comm.0.as_raw(),
                &mut req,
            );
            loop {
                let mut done = 0;
                let mut status = std::mem::zeroed();
                mpi::ffi::MPI_Test(&mut req, &mut done, &mut status);
                if done != 0 {
                    self.flag.store(true, Ordering::Relaxed);
                    return;
                }
                if self.stop.load(Ordering::Relaxed) {
                    mpi::ffi::MPI_Cancel(&mut req);
                    mpi::ffi::MPI_Wait(&mut req, &mut status);
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

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
    monitor: Mutex<Option<JoinHandle<()>>>,
    // Dropped last: finalises MPI.
    _universe: Universe,
}

// SAFETY: the universe is only touched at drop; the communicators are thread-safe under
// MPI_THREAD_MULTIPLE; the rest is plain data.
unsafe impl Sync for MpiTeam {}

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
        let (universe, threading) = mpi::initialize_with_threading(Threading::Multiple).ok_or(MpiError::Init)?;
        if threading != Threading::Multiple {
            return Err(MpiError::Threading(threading));
        }
        let world = universe.world();
        let (process, processes) = (world.rank() as usize, world.size() as usize);
        let (node_of_process, hosts) = discover_nodes(&world);
        let (offset, uncertainty) = align_clocks(&world);
        let abort = Arc::new(AbortChannel {
            flag: AtomicBool::new(false),
            sent: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            comm: Comm(world.duplicate()),
        });
        let monitor = {
            let abort = abort.clone();
            std::thread::spawn(move || abort.listen())
        };
        Ok(MpiTeam {
            world: Arc::new(Comm(world)),
            process,
            processes,
            node_of_process,
            hosts,
            offset,
            uncertainty,
            abort,
            monitor: Mutex::new(Some(monitor)),
            _universe: universe,
        })
    }
}

impl Drop for MpiTeam {
    fn drop(&mut self) {
        self.abort.stop.store(true, Ordering::Relaxed);
        if let Some(m) = self.monitor.lock().ok().and_then(|mut m| m.take()) {
            let _ = m.join();
        }
        // Nobody leaves while others may still send: the last collective of the run.
        self.world.0.barrier();
    }
}

/// Node index of every process (nodes numbered by their lowest rank) and each node's host.
fn discover_nodes(world: &SimpleCommunicator) -> (Vec<u32>, Vec<String>) {
    let node = world.split_shared(world.rank());
    let leaders = world.split_by_color(if node.rank() == 0 { Color::with_value(0) } else { Color::undefined() });
    let mut node_id: u32 = leaders.map_or(0, |c| c.rank() as u32);
    node.process_at_rank(0).broadcast_into(&mut node_id);
    let size = world.size() as usize;
    let mut nodes = vec![0u32; size];
    world.all_gather_into(&node_id, &mut nodes[..]);
    const NAME: usize = 64;
    let mut name = [0u8; NAME];
    let host = crate::env::hostname();
    let len = host.len().min(NAME);
    name[..len].copy_from_slice(&host.as_bytes()[..len]);
    let mut names = vec![0u8; NAME * size];
    world.all_gather_into(&name[..], &mut names[..]);
    let count = nodes.iter().max().map_or(0, |&m| m as usize + 1);
    let hosts = (0..count)
        .map(|n| {
            let p = nodes.iter().position(|&x| x as usize == n).unwrap_or(0);
            let raw = &names[p * NAME..(p + 1) * NAME];
            String::from_utf8_lossy(&raw[..raw.iter().position(|&b| b == 0).unwrap_or(NAME)]).into_owned()
        })
        .collect();
    (nodes, hosts)
}

/// This process's clock offset to the lead's, and the worst uncertainty over all processes.
fn align_clocks(world: &SimpleCommunicator) -> (i64, u64) {
    let me = world.rank();
    let mut offset = 0i64;
    let mut worst = 0u64;
    for peer in 1..world.size() {
        if me == 0 {
            let p = world.process_at_rank(peer);
            let (mut best_rtt, mut best_offset) = (u64::MAX, 0i64);
            for _ in 0..CLOCK_ROUNDS {
                let t0 = monotonic_ns();
                p.send(&t0);
                let (theirs, _) = p.receive::<u64>();
                let t1 = monotonic_ns();
                if t1 - t0 < best_rtt {
                    best_rtt = t1 - t0;
                    best_offset = theirs as i64 - ((t0 + t1) / 2) as i64;
                }
            }
            p.send(&best_offset);
            worst = worst.max(best_rtt / 2);
        } else if me == peer {
            let lead = world.process_at_rank(0);
            for _ in 0..CLOCK_ROUNDS {
                let _ = lead.receive::<u64>();
                lead.send(&monotonic_ns());
            }
            offset = lead.receive::<i64>().0;
        }
    }
    world.process_at_rank(0).broadcast_into(&mut worst);
    (offset, worst)
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
    fn share(&self, bytes: Vec<u8>) -> Vec<u8> {
        let root = self.world.0.process_at_rank(0);
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
        self.world.0.process_at_rank(to as i32).send(bytes);
    }
    fn receive(&self, from: usize, buf: &mut [u8]) {
        self.world.0.process_at_rank(from as i32).receive_into(buf);
    }
}

/// One thread's place in an MPI team.
pub struct MpiMember {
    rank: usize,
    size: usize,
    nodes: Arc<[u32]>,
    local: LocalMember,
    comm: Arc<Comm>,
    offset: i64,
    abort: Arc<AbortChannel>,
}

impl MpiMember {
    fn leads_process(&self) -> bool {
        self.local.rank() == 0
    }

    /// Reduces over this process's threads, then over processes, and shares the result.
    fn reduce(&self, value: u64, local: fn(&LocalMember, u64) -> u64, op: SystemOperation) -> u64 {
        let value = local(&self.local, value);
        let total = self.leads_process().then(|| {
            let mut out = 0u64;
            self.comm.0.all_reduce_into(&value, &mut out, op);
            out
        });
        self.local.broadcast_any(total)
    }
}

impl Member for MpiMember {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn nodes(&self) -> &[u32] {
        &self.nodes
    }
    fn local_index(&self) -> usize {
        self.local.local_index()
    }
    fn clock_offset(&self) -> i64 {
        self.offset
    }
    fn barrier(&self) {
        self.local.barrier();
        if self.leads_process() {
            self.comm.0.barrier();
        }
        self.local.barrier();
    }
    fn max(&self, value: u64) -> u64 {
        self.reduce(value, |l, v| l.max(v), SystemOperation::max())
    }
    fn min(&self, value: u64) -> u64 {
        self.reduce(value, |l, v| l.min(v), SystemOperation::min())
    }
    fn sum(&self, value: u64) -> u64 {
        self.reduce(value, |l, v| l.sum(v), SystemOperation::sum())
    }
    fn sum_vec(&self, values: Vec<u64>) -> Vec<u64> {
        let local = self.local.sum_vec(values);
        let total = self.leads_process().then(|| {
            let mut len = 0u64;
            self.comm.0.all_reduce_into(&(local.len() as u64), &mut len, SystemOperation::max());
            let mut mine = local.clone();
            mine.resize(len as usize, 0);
            let mut out = vec![0u64; len as usize];
            self.comm.0.all_reduce_into(&mine[..], &mut out[..], SystemOperation::sum());
            out
        });
        self.local.broadcast_any(total)
    }
    fn gather<T: Serialize + DeserializeOwned + Send + 'static>(&self, value: T) -> Option<Vec<T>> {
        let mine = self.local.gather_any(value)?;
        let bytes = serde_json::to_vec(&mine).expect("plain data serializes");
        let root = self.comm.0.process_at_rank(0);
        let len = bytes.len() as i32;
        if self.comm.0.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(&bytes[..]);
            return None;
        }
        let mut lens = vec![0i32; self.comm.0.size() as usize];
        root.gather_into_root(&len, &mut lens[..]);
        let displs: Vec<i32> = lens.iter().scan(0, |at, &l| Some(std::mem::replace(at, *at + l))).collect();
        let mut buf = vec![0u8; lens.iter().sum::<i32>() as usize];
        root.gather_varcount_into_root(&bytes[..], &mut PartitionMut::new(&mut buf[..], &lens[..], &displs[..]));
        let mut all = Vec::with_capacity(self.size);
        for (&at, &l) in displs.iter().zip(&lens) {
            let part: Vec<T> =
                serde_json::from_slice(&buf[at as usize..(at + l) as usize]).expect("peers send what we send");
            all.extend(part);
        }
        Some(all)
    }
    fn split(&self, flag: bool) -> Self {
        let sub_local = self.local.split(flag);
        let present = [self.local.max(!flag as u64) == 1, self.local.max(flag as u64) == 1];
        // Both splits are collective over the parent's processes, so every process makes both.
        let comms = self.leads_process().then(|| {
            present.map(|here| {
                let colour = if here { Color::with_value(0) } else { Color::undefined() };
                self.comm.0.split_by_color(colour).map(|c| Arc::new(Comm(c)))
            })
        });
        let comms = self.local.broadcast_any(comms);
        let comm = comms[flag as usize].clone().expect("this process has a task of this flag");
        let node = self.node();
        let layout = (sub_local.rank() == 0).then(|| {
            let mine = [sub_local.size() as u32, node];
            let mut all = vec![0u32; 2 * comm.0.size() as usize];
            comm.0.all_gather_into(&mine[..], &mut all[..]);
            let before: u32 = all.chunks(2).take(comm.0.rank() as usize).map(|c| c[0]).sum();
            let nodes: Vec<u32> = all.chunks(2).flat_map(|c| std::iter::repeat_n(c[1], c[0] as usize)).collect();
            (before as usize, nodes)
        });
        let (base, nodes) = sub_local.broadcast_any(layout);
        MpiMember {
            rank: base + sub_local.rank(),
            size: nodes.len(),
            nodes: nodes.into(),
            local: sub_local,
            comm,
            offset: self.offset,
            abort: self.abort.clone(),
        }
    }
    fn abort_flag(&self) -> &AtomicBool {
        &self.abort.flag
    }
    fn raise_abort(&self) {
        self.abort.raise();
    }
}
