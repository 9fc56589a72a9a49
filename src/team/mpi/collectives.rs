//! A member's collectives: threads of a process meet through the local team, then one thread
//! per process takes part in the MPI collective and shares the result with its threads.

use super::abort::AbortChannel;
use super::Comm;
use crate::team::local::LocalMember;
use crate::team::Member;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::Color;
use mpi::traits::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Arc;

/// One thread's place in an MPI team.
pub struct MpiMember {
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) nodes: Arc<[u32]>,
    pub(super) local: LocalMember,
    pub(super) comm: Arc<Comm>,
    pub(super) offset: i64,
    pub(super) abort: Arc<AbortChannel>,
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
            self.comm.all_reduce_into(&value, &mut out, op);
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
            self.comm.barrier();
        }
        self.local.barrier();
    }
    fn rest(&self) {
        self.local.barrier();
        if self.leads_process() {
            self.comm.rest(std::time::Duration::from_micros(200));
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
            self.comm.all_reduce_into(&(local.len() as u64), &mut len, SystemOperation::max());
            let mut mine = local.clone();
            mine.resize(len as usize, 0);
            let mut out = vec![0u64; len as usize];
            self.comm.all_reduce_into(&mine[..], &mut out[..], SystemOperation::sum());
            out
        });
        self.local.broadcast_any(total)
    }
    fn gather<T: Serialize + DeserializeOwned + Send + 'static>(&self, value: T) -> Option<Vec<T>> {
        let mine = self.local.gather_any(value)?;
        let bytes = crate::team::encode(&mine);
        let root = self.comm.process_at_rank(0);
        let len = bytes.len() as i32;
        if self.comm.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(&bytes[..]);
            return None;
        }
        let mut lens = vec![0i32; self.comm.size() as usize];
        root.gather_into_root(&len, &mut lens[..]);
        let displs: Vec<i32> = lens.iter().scan(0, |at, &l| Some(std::mem::replace(at, *at + l))).collect();
        let mut buf = vec![0u8; lens.iter().sum::<i32>() as usize];
        root.gather_varcount_into_root(&bytes[..], &mut PartitionMut::new(&mut buf[..], &lens[..], &displs[..]));
        let mut all = Vec::with_capacity(self.size);
        for (p, (&at, &l)) in displs.iter().zip(&lens).enumerate() {
            let part: Vec<T> = crate::team::decode(&buf[at as usize..(at + l) as usize], &format!("process {p}"));
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
                self.comm.split(colour).map(Arc::new)
            })
        });
        let comms = self.local.broadcast_any(comms);
        let Some(comm) = comms[flag as usize].clone() else {
            crate::team::broken("a split of the team lost this process's own side")
        };
        let node = self.node();
        let layout = (sub_local.rank() == 0).then(|| {
            let mine = [sub_local.size() as u32, node];
            let mut all = vec![0u32; 2 * comm.size() as usize];
            comm.all_gather_into(&mine[..], &mut all[..]);
            let before: u32 = all.chunks(2).take(comm.rank() as usize).map(|c| c[0]).sum();
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
    fn stopped(&self) -> bool {
        self.abort.heard()
    }
    fn raise_abort(&self) {
        self.abort.raise();
    }
}
