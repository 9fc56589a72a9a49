//! Log-linear latency histograms: exact below 128 ns, then 128 linear buckets per power of two
//! (a bucket is at most 1/128 = 0.8% wide). Fixed size, so recording is an index computation
//! and an add; merging is an element-wise sum, which is also how teams reduce them.

use serde::{Deserialize, Serialize};

const SUB: u64 = 128;
const SUB_BITS: u32 = 7;
/// Number of buckets: 128 exact ones, then 128 for each power of two from 2^7 to 2^63.
pub const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

/// Bucket of a value.
#[inline]
pub fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    (SUB + (e - SUB_BITS) as u64 * SUB + ((v >> shift) - SUB)) as usize
}

/// The smallest value of a bucket and its width.
pub fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let e = (i - SUB) / SUB + SUB_BITS as u64;
    let sub = (i - SUB) % SUB;
    let shift = e - SUB_BITS as u64;
    ((SUB + sub) << shift, 1 << shift)
}

/// One task's (or a merged team's) latencies, in nanoseconds.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    /// Sum of all values (for the exact mean).
    pub sum: u64,
    /// Smallest value recorded.
    pub min: u64,
    /// Largest value recorded.
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS], sum: 0, min: u64::MAX, max: 0 }
    }
}

/// Percentiles and extremes of a phase's latencies, in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Operations timed.
    pub count: u64,
    /// Exact mean.
    pub mean: f64,
    /// Exact minimum.
    pub min: u64,
    /// Median (to within a bucket, 0.8%).
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// 99.99th percentile.
    pub p9999: u64,
    /// Exact maximum.
    pub max: u64,
    /// Non-empty buckets as (bucket index, count), to merge or recompute later.
    pub buckets: Vec<(u32, u64)>,
}

impl Histogram {
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Operations recorded.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Bucket counts, for reductions.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// A histogram from reduced parts.
    pub fn from_parts(counts: Vec<u64>, sum: u64, min: u64, max: u64) -> Self {
        assert_eq!(counts.len(), BUCKETS, "bucket vector of another layout");
        Histogram { counts, sum, min, max }
    }

    /// Adds another histogram into this one.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The value at percentile `p` (0 < p <= 100): the middle of the bucket holding the
    /// ceil(p/100 x count)-th smallest value, clamped to the exact min and max; the largest
    /// rank is the exact max.
    pub fn percentile(&self, p: f64) -> u64 {
        let count = self.count();
        if count == 0 {
            return 0;
        }
        let rank = ((p / 100.0 * count as f64).ceil() as u64).clamp(1, count);
        if rank == count {
            return self.max;
        }
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (low, width) = bucket_range(i);
                return (low + width / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The summary printed and stored.
    pub fn summary(&self) -> Latency {
        let count = self.count();
        Latency {
            count,
            mean: if count == 0 { 0.0 } else { self.sum as f64 / count as f64 },
            min: if count == 0 { 0 } else { self.min },
            p50: self.percentile(50.0),
            p90: self.percentile(90.0),
            p99: self.percentile(99.0),
            p999: self.percentile(99.9),
            p9999: self.percentile(99.99),
            max: self.max,
            buckets: self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (i as u32, c)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_within_one_percent() {
        let mut expected_low = 0;
        for i in 0..BUCKETS {
            let (low, width) = bucket_range(i);
            assert_eq!(low, expected_low, "bucket {i}");
            assert!(low < 128 || width as f64 / low as f64 <= 1.0 / 128.0 + 1e-12);
            assert_eq!(bucket(low), i);
            assert_eq!(bucket(low + width - 1), i);
            expected_low = low.wrapping_add(width);
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 1000); // 1 us .. 10 ms, uniform
        }
        let near = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 / 128.0;
        assert!(near(h.percentile(50.0), 5_000_000), "{}", h.percentile(50.0));
        assert!(near(h.percentile(90.0), 9_000_000));
        assert!(near(h.percentile(99.0), 9_900_000));
        assert!(near(h.percentile(99.9), 9_990_000));
        assert_eq!(h.percentile(100.0), 10_000_000, "clamped to the exact max");
        let s = h.summary();
        assert_eq!((s.count, s.min, s.max), (10_000, 1000, 10_000_000));
        assert_eq!(s.mean, 5_000_500.0);
    }

    #[test]
    fn merging_equals_recording_everything_in_one() {
        let (mut a, mut b, mut all) = (Histogram::default(), Histogram::default(), Histogram::default());
        for v in [5u64, 300, 7000, 7000, 1 << 40] {
            a.record(v);
            all.record(v);
        }
        for v in [1u64, 129, 9999] {
            b.record(v);
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
        let rebuilt = Histogram::from_parts(a.counts().to_vec(), a.sum, a.min, a.max);
        assert_eq!(rebuilt.summary(), all.summary());
        assert_eq!(Histogram::default().summary().count, 0);
    }
}
