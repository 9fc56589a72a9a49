//! The team as threads of one process, on one node: std barriers and slots behind a mutex.
//! Collectives run between phases, never per operation, so a mutex is cheap enough.

use super::{Member, Team};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};

struct Shared {
    barrier: Barrier,
    slots: Mutex<Vec<Option<Box<dyn Any + Send>>>>,
    groups: Mutex<BTreeMap<u64, Arc<Shared>>>,
}

impl Shared {
    fn new(size: usize) -> Arc<Self> {
        Arc::new(Shared {
            barrier: Barrier::new(size),
            slots: Mutex::new((0..size).map(|_| None).collect()),
            groups: Mutex::new(BTreeMap::new()),
        })
    }
}

/// A team of threads in this process, all on node 0.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalTeam;

impl Team for LocalTeam {
    type Member = LocalMember;
    fn process(&self) -> usize {
        0
    }
    fn processes(&self) -> usize {
        1
    }
    fn members(&self, threads: usize) -> Vec<LocalMember> {
        Self::threads(threads)
    }
    fn hosts(&self) -> Vec<String> {
        vec![crate::env::hostname()]
    }
    fn clock_uncertainty(&self) -> u64 {
        0
    }
    fn share(&self, bytes: Vec<u8>) -> Vec<u8> {
        bytes
    }
    fn process_nodes(&self) -> Vec<u32> {
        vec![0]
    }
    fn send(&self, to: usize, _bytes: &[u8]) {
        unreachable!("a local team has one process; nothing to send to {to}")
    }
    fn receive(&self, from: usize, _buf: &mut [u8]) {
        unreachable!("a local team has one process; nothing to receive from {from}")
    }
    fn flow(&self, flow: &crate::team::Flow) -> crate::team::FlowCount {
        assert!(flow.to.is_empty() && flow.from.is_empty(), "a local team has one process; nothing to stream");
        crate::team::FlowCount::default()
    }
}

impl LocalTeam {
    /// Handles for `size` threads; hand one to each.
    pub fn threads(size: usize) -> Vec<LocalMember> {
        let shared = Shared::new(size);
        let nodes: Arc<[u32]> = vec![0; size].into();
        let abort = Arc::new(AtomicBool::new(false));
        (0..size)
            .map(|rank| LocalMember { rank, size, shared: shared.clone(), nodes: nodes.clone(), abort: abort.clone() })
            .collect()
    }
}

/// One thread's place in a [`LocalTeam`].
pub struct LocalMember {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
    nodes: Arc<[u32]>,
    abort: Arc<AtomicBool>,
}

impl LocalMember {
    /// Puts a value in this member's slot, waits for all, and lets `read` look at every slot.
    fn exchange<T: Send + 'static, R>(
        &self,
        value: T,
        read: impl FnOnce(&mut [Option<Box<dyn Any + Send>>]) -> R,
    ) -> R {
        self.shared.slots.lock().expect("team slots")[self.rank] = Some(Box::new(value));
        self.shared.barrier.wait();
        let out = read(&mut self.shared.slots.lock().expect("team slots"));
        // Nobody may refill a slot before everyone has read it.
        self.shared.barrier.wait();
        out
    }

    fn all_u64(&self, value: u64) -> Vec<u64> {
        self.exchange(value, |slots| {
            slots.iter().map(|s| *s.as_ref().and_then(|b| b.downcast_ref::<u64>()).expect("u64 slot")).collect()
        })
    }

    /// Every member gets the leader's value (the others pass `None`).
    pub fn broadcast_any<T: Clone + Send + 'static>(&self, value: Option<T>) -> T {
        self.exchange(value, |slots| {
            slots[0]
                .as_ref()
                .and_then(|b| b.downcast_ref::<Option<T>>())
                .and_then(Clone::clone)
                .expect("the leader gives a value")
        })
    }

    /// The leader gets every member's value; no serialization, for any sendable type.
    pub fn gather_any<T: Send + 'static>(&self, value: T) -> Option<Vec<T>> {
        let lead = self.rank == 0;
        self.exchange(value, |slots| {
            lead.then(|| {
                slots.iter_mut().map(|s| *s.take().expect("slot filled").downcast::<T>().expect("same type")).collect()
            })
        })
    }
}

impl Member for LocalMember {
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
        self.rank
    }
    fn clock_offset(&self) -> i64 {
        0
    }
    fn barrier(&self) {
        self.shared.barrier.wait();
    }
    fn max(&self, value: u64) -> u64 {
        self.all_u64(value).into_iter().max().unwrap_or(value)
    }
    fn min(&self, value: u64) -> u64 {
        self.all_u64(value).into_iter().min().unwrap_or(value)
    }
    fn sum(&self, value: u64) -> u64 {
        self.all_u64(value).into_iter().sum()
    }
    fn sum_vec(&self, values: Vec<u64>) -> Vec<u64> {
        self.exchange(values, |slots| {
            let parts: Vec<&Vec<u64>> =
                slots.iter().map(|s| s.as_ref().and_then(|b| b.downcast_ref()).expect("vector slot")).collect();
            add_vectors(parts)
        })
    }
    fn gather<T: Serialize + DeserializeOwned + Send + 'static>(&self, value: T) -> Option<Vec<T>> {
        self.gather_any(value)
    }
    fn split(&self, flag: bool) -> Self {
        let colour = flag as u64;
        let colours = self.all_u64(colour);
        let peers: Vec<usize> = (0..self.size).filter(|&r| colours[r] == colour).collect();
        let rank = peers.iter().position(|&r| r == self.rank).expect("self in own colour");
        if rank == 0 {
            self.shared.groups.lock().expect("groups").insert(colour, Shared::new(peers.len()));
        }
        self.barrier();
        let shared = self.shared.groups.lock().expect("groups")[&colour].clone();
        self.barrier();
        if self.rank == 0 {
            self.shared.groups.lock().expect("groups").clear();
        }
        let nodes: Arc<[u32]> = peers.iter().map(|&p| self.nodes[p]).collect::<Vec<_>>().into();
        LocalMember { rank, size: peers.len(), shared, nodes, abort: self.abort.clone() }
    }
    fn stopped(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }
    fn raise_abort(&self) {
        self.abort.store(true, Ordering::Relaxed);
    }
}

/// Element-wise sum of vectors of any lengths.
pub fn add_vectors<'a>(parts: impl IntoIterator<Item = &'a Vec<u64>>) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for part in parts {
        if part.len() > out.len() {
            out.resize(part.len(), 0);
        }
        for (o, v) in out.iter_mut().zip(part) {
            *o += v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    fn on_team<R: Send + 'static>(size: usize, f: impl Fn(LocalMember) -> R + Send + Sync + 'static) -> Vec<R> {
        let f = Arc::new(f);
        let handles: Vec<_> = LocalTeam
            .members(size)
            .into_iter()
            .map(|m| {
                let f = f.clone();
                thread::spawn(move || f(m))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn reductions_and_gather_see_every_member() {
        let out = on_team(5, |m| {
            let r = m.rank() as u64;
            let v = m.sum_vec(vec![1; r as usize + 1]);
            (m.max(r * 10), m.sum(r + 1), m.gather(format!("t{r}")), m.min(100 - r), v)
        });
        for (i, (max, sum, gathered, min, v)) in out.into_iter().enumerate() {
            assert_eq!((max, sum, min), (40, 15, 96));
            assert_eq!(v, vec![5, 4, 3, 2, 1], "sums of vectors of lengths 1..5");
            if i == 0 {
                assert_eq!(gathered.unwrap(), vec!["t0", "t1", "t2", "t3", "t4"]);
            } else {
                assert!(gathered.is_none());
            }
        }
    }

    #[test]
    fn split_forms_teams_by_flag_and_shares_the_abort_flag() {
        let out = on_team(5, |m| {
            let sub = m.split(m.rank() % 2 == 1);
            let total = sub.sum(m.rank() as u64);
            if m.rank() == 4 {
                sub.raise_abort();
            }
            m.barrier();
            (sub.rank(), sub.size(), total, m.stopped())
        });
        assert_eq!(out, vec![(0, 3, 6, true), (0, 2, 4, true), (1, 3, 6, true), (1, 2, 4, true), (2, 3, 6, true)]);
    }
}
