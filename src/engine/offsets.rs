//! Where each transfer goes: file and byte offset for (task, i), for every access, layout and
//! pattern. Pure arithmetic, computed per operation so that no offset list is ever stored
//! (a 2 TB run at 4 KiB would need gigabytes of it).

use crate::spec::{Access, Data, Layout, Pattern};

/// The mapping of one workload's transfers to files and offsets.
#[derive(Debug, Clone)]
pub struct OffsetMap {
    access: Access,
    layout: Layout,
    pattern: Pattern,
    transfer: u64,
    block: u64,
    tasks: u64,
    per_block: u64,
    per_task: u64,
    seed: u64,
}

impl OffsetMap {
    /// Builds the map of a validated data workload of `tasks` tasks, its random orders drawn
    /// from `seed`.
    pub fn new(data: &Data, tasks: usize, seed: u64) -> Self {
        OffsetMap {
            access: data.access,
            layout: data.layout,
            pattern: data.pattern,
            transfer: data.transfer,
            block: data.block,
            tasks: tasks as u64,
            per_block: data.block / data.transfer,
            per_task: data.transfers_per_task(),
            seed,
        }
    }

    /// Transfers each task makes in a phase.
    pub fn per_task(&self) -> u64 {
        self.per_task
    }

    /// Number of files the workload uses.
    pub fn files(&self) -> usize {
        match self.access {
            Access::FilePerTask => self.tasks as usize,
            Access::Shared => 1,
        }
    }

    /// The file index a task's transfers go to.
    pub fn file_of(&self, task: usize) -> usize {
        match self.access {
            Access::FilePerTask => task,
            Access::Shared => 0,
        }
    }

    /// Whether `task` is the first writer of its file: the one that removes it before a
    /// write phase that must start from a new file.
    pub fn first_writer(&self, task: usize) -> bool {
        match self.access {
            Access::FilePerTask => true,
            Access::Shared => task == 0,
        }
    }

    /// Size of each file once fully written.
    pub fn file_size(&self) -> u64 {
        match self.access {
            Access::FilePerTask => self.per_task * self.transfer,
            Access::Shared => self.per_task * self.transfer * self.tasks,
        }
    }

    /// A visitor for one task's transfers in pattern order. `task` is whose data is visited.
    pub fn visitor(&self, task: usize) -> Visitor<'_> {
        let order = match self.pattern {
            Pattern::Random => Order::Shuffle(Feistel::new(self.per_task, mix(self.seed, task as u64))),
            Pattern::RandomOverlap => Order::Draw(mix(self.seed, task as u64)),
            _ => Order::Plain,
        };
        Visitor { map: self, task: task as u64, order }
    }

    /// Byte offset of the k-th transfer (in sequential order) of `task` within its file.
    pub fn sequential_offset(&self, task: u64, k: u64) -> u64 {
        let (segment, j) = (k / self.per_block, k % self.per_block);
        match (self.access, self.layout) {
            (Access::FilePerTask, _) => k * self.transfer,
            (Access::Shared, Layout::Segmented) => {
                segment * self.block * self.tasks + task * self.block + j * self.transfer
            }
            (Access::Shared, Layout::Strided) => {
                segment * self.block * self.tasks + (j * self.tasks + task) * self.transfer
            }
        }
    }

    /// Which sequential index the i-th visit of a plain (non-random) pattern touches.
    fn plain_index(&self, i: u64) -> u64 {
        let n = self.per_task;
        match self.pattern {
            Pattern::Backward => n - 1 - i,
            Pattern::Same => 0,
            Pattern::Stride(k) if k > 1 && k < n => stride_index(i, n, k),
            _ => i,
        }
    }
}

enum Order {
    Plain,
    Shuffle(Feistel),
    Draw(u64),
}

/// One task's walk through its transfers.
pub struct Visitor<'a> {
    map: &'a OffsetMap,
    task: u64,
    order: Order,
}

impl Visitor<'_> {
    /// Offset of the i-th transfer this task makes, 0 <= i < per_task.
    #[inline]
    pub fn offset(&self, i: u64) -> u64 {
        let k = match &self.order {
            Order::Plain => self.map.plain_index(i),
            Order::Shuffle(p) => p.apply(i),
            Order::Draw(key) => mix(*key, i) % self.map.per_task,
        };
        self.map.sequential_offset(self.task, k)
    }
}

/// Visit order 0, k, 2k, ..., 1, 1+k, ...: residue class r holds ceil((n-r)/k) indices.
fn stride_index(i: u64, n: u64, k: u64) -> u64 {
    let (q, long) = (n / k, n % k);
    let (r, m) = if i < long * (q + 1) {
        (i / (q + 1), i % (q + 1))
    } else {
        let rest = i - long * (q + 1);
        (long + rest / q, rest % q)
    };
    r + m * k
}

/// splitmix64 finalizer over two words: a cheap, well-mixed hash.
pub fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seeded bijection on [0, n): a balanced Feistel network on the smallest even bit width
/// that covers n, walking the cycle until the value falls below n. It needs no memory, so a
/// random order over billions of transfers costs a few multiplications per operation.
#[derive(Debug, Clone)]
struct Feistel {
    n: u64,
    half: u32,
    key: u64,
}

impl Feistel {
    fn new(n: u64, key: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half = bits.div_ceil(2).max(1);
        Feistel { n, half, key }
    }

    fn round(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for round in 0..4u64 {
            let f = mix(self.key ^ round, r) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    fn apply(&self, i: u64) -> u64 {
        let mut x = self.round(i);
        while x >= self.n {
            x = self.round(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn map(access: Access, layout: Layout, pattern: Pattern, segments: u64) -> OffsetMap {
        let data = Data { access, layout, pattern, transfer: 10, block: 30, segments, ..Data::default() };
        OffsetMap::new(&data, 3, crate::spec::Workload::default().seed)
    }

    fn offsets(m: &OffsetMap, task: usize) -> Vec<u64> {
        let v = m.visitor(task);
        (0..m.per_task()).map(|i| v.offset(i)).collect()
    }

    #[test]
    fn shared_segmented_gives_each_task_a_block_per_segment() {
        let m = map(Access::Shared, Layout::Segmented, Pattern::Sequential, 2);
        assert_eq!(offsets(&m, 0), vec![0, 10, 20, 90, 100, 110]);
        assert_eq!(offsets(&m, 1), vec![30, 40, 50, 120, 130, 140]);
        assert_eq!(offsets(&m, 2), vec![60, 70, 80, 150, 160, 170]);
        assert_eq!(m.file_size(), 180);
        assert_eq!(m.files(), 1);
    }

    #[test]
    fn shared_strided_interleaves_transfers() {
        let m = map(Access::Shared, Layout::Strided, Pattern::Sequential, 2);
        assert_eq!(offsets(&m, 0), vec![0, 30, 60, 90, 120, 150]);
        assert_eq!(offsets(&m, 1), vec![10, 40, 70, 100, 130, 160]);
        assert_eq!(offsets(&m, 2), vec![20, 50, 80, 110, 140, 170]);
    }

    #[test]
    fn file_per_task_is_contiguous_in_its_own_file() {
        let m = map(Access::FilePerTask, Layout::Segmented, Pattern::Sequential, 2);
        assert_eq!(offsets(&m, 2), vec![0, 10, 20, 30, 40, 50]);
        assert_eq!((m.files(), m.file_of(2), m.file_size()), (3, 2, 60));
    }

    #[test]
    fn backward_and_stride_visit_every_transfer_once() {
        let m = map(Access::FilePerTask, Layout::Segmented, Pattern::Backward, 2);
        assert_eq!(offsets(&m, 0), vec![50, 40, 30, 20, 10, 0]);
        let m = map(Access::FilePerTask, Layout::Segmented, Pattern::Stride(4), 2);
        assert_eq!(offsets(&m, 0), vec![0, 40, 10, 50, 20, 30]);
        for n in 1..40 {
            for k in 1..8 {
                let got: BTreeSet<u64> = (0..n).map(|i| stride_index(i, n, k)).collect();
                assert_eq!(got, (0..n).collect(), "n={n} k={k}");
            }
        }
    }

    #[test]
    fn random_touches_every_transfer_exactly_once_in_a_seeded_order() {
        for segments in [1, 2, 7, 33] {
            let m = map(Access::Shared, Layout::Strided, Pattern::Random, segments);
            let seq = map(Access::Shared, Layout::Strided, Pattern::Sequential, segments);
            for task in 0..3 {
                let mut got = offsets(&m, task);
                let want = offsets(&seq, task);
                if want.len() > 3 {
                    assert_ne!(got, want, "random order equals sequential");
                }
                got.sort();
                assert_eq!(got, want);
            }
        }
        let a = map(Access::Shared, Layout::Strided, Pattern::Random, 33);
        assert_eq!(offsets(&a, 1), offsets(&a.clone(), 1), "same seed, same order");
        assert_ne!(offsets(&a, 0), offsets(&a, 1).iter().map(|o| o - 10).collect::<Vec<_>>());
    }

    #[test]
    fn random_overlap_stays_in_the_tasks_slots() {
        let m = map(Access::Shared, Layout::Segmented, Pattern::RandomOverlap, 50);
        let seq: BTreeSet<u64> =
            offsets(&map(Access::Shared, Layout::Segmented, Pattern::Sequential, 50), 1).into_iter().collect();
        let got = offsets(&m, 1);
        assert_eq!(got.len(), 150);
        assert!(got.iter().all(|o| seq.contains(o)));
        let distinct: BTreeSet<u64> = got.into_iter().collect();
        assert!(distinct.len() < 150, "drawing with replacement repeats some slot");
    }

    #[test]
    fn feistel_is_a_bijection_for_awkward_sizes() {
        for n in [1u64, 2, 3, 5, 64, 1000, 4097] {
            let f = Feistel::new(n, 42);
            let got: BTreeSet<u64> = (0..n).map(|i| f.apply(i)).collect();
            assert_eq!(got.len() as u64, n);
            assert!(got.iter().all(|&x| x < n));
        }
    }
}
