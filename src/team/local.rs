//! The team as threads of one process: std barriers and slots behind a mutex. Collectives run
//! between phases, never per operation, so a mutex is cheap enough.

use super::Member;
use std::any::Any;
use std::collections::BTreeMap;
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
pub struct LocalTeam;

impl LocalTeam {
    /// Handles for `size` tasks; hand one to each thread.
    pub fn members(size: usize) -> Vec<LocalMember> {
        let shared = Shared::new(size);
        (0..size).map(|rank| LocalMember { rank, size, shared: shared.clone() }).collect()
    }
}

/// One thread's place in a [`LocalTeam`].
pub struct LocalMember {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
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
}

impl Member for LocalMember {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn node(&self) -> usize {
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
    fn gather<T: Send + 'static>(&self, value: T) -> Option<Vec<T>> {
        let lead = self.rank == 0;
        self.exchange(value, |slots| {
            lead.then(|| {
                slots.iter_mut().map(|s| *s.take().expect("slot filled").downcast::<T>().expect("same type")).collect()
            })
        })
    }
    fn split(&self, colour: u64) -> Self {
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
        LocalMember { rank, size: peers.len(), shared }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    fn on_team<R: Send + 'static>(size: usize, f: impl Fn(LocalMember) -> R + Send + Sync + 'static) -> Vec<R> {
        let f = Arc::new(f);
        let handles: Vec<_> = LocalTeam::members(size)
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
            (m.max(r * 10), m.sum(r + 1), m.gather(format!("t{r}")), m.min(100 - r))
        });
        for (i, (max, sum, gathered, min)) in out.into_iter().enumerate() {
            assert_eq!((max, sum, min), (40, 15, 96));
            if i == 0 {
                assert_eq!(gathered.unwrap(), vec!["t0", "t1", "t2", "t3", "t4"]);
            } else {
                assert!(gathered.is_none());
            }
        }
    }

    #[test]
    fn split_forms_teams_by_colour() {
        let out = on_team(5, |m| {
            let sub = m.split((m.rank() % 2) as u64);
            let total = sub.sum(m.rank() as u64);
            (sub.rank(), sub.size(), total)
        });
        assert_eq!(out, vec![(0, 3, 6), (0, 2, 4), (1, 3, 6), (1, 2, 4), (2, 3, 6)]);
    }
}
