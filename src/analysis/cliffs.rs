//! Where performance falls off a cliff, and why: between neighbouring sizes of a curve (file
//! sizes of an IOzone-style matrix, or record sizes) a rate that drops by more than a set
//! fraction is a cliff; the machine's limits that the working set crosses there (a CPU cache
//! level, the page cache bounded by RAM or a cgroup's limit, a device's cache when known) are
//! its likely cause.

use crate::units::format_size;

/// A size beyond which the machine behaves differently.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// What it is, e.g. "the L2 cache" or "the page cache (RAM)".
    pub name: String,
    /// Bytes.
    pub bytes: u64,
}

/// A drop between two neighbouring sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Cliff {
    /// The last size before the drop.
    pub from: u64,
    /// The first size after it.
    pub to: u64,
    /// Rate at `from`.
    pub before: f64,
    /// Rate at `to`.
    pub after: f64,
    /// What it likely comes from, in words ("crosses the L2 cache (2 MiB)"), if anything known
    /// lies at or near it.
    pub cause: Option<String>,
}

impl Cliff {
    /// The fraction lost, 0 to 1.
    pub fn drop(&self) -> f64 {
        1.0 - self.after / self.before
    }

    /// The cliff in one sentence.
    pub fn sentence(&self, what: &str) -> String {
        format!(
            "{what} drops {:.0}% from {} to {}{}",
            100.0 * self.drop(),
            format_size(self.from),
            format_size(self.to),
            self.cause.as_deref().map(|c| format!(": it {c}")).unwrap_or_else(|| ": no known limit lies there".into())
        )
    }
}

/// The machine's limits: its CPU caches holding data, and the page cache's bound.
pub fn machine_limits() -> Vec<Limit> {
    let mut out: Vec<Limit> = crate::env::cpu_caches(|p| std::fs::read_to_string(p).ok())
        .into_iter()
        .map(|c| Limit { name: format!("the L{} {} cache", c.level, c.kind.to_lowercase()), bytes: c.bytes })
        .collect();
    let (bytes, what) = crate::env::page_cache_bound();
    if bytes > 0 {
        out.push(Limit { name: format!("the page cache (bounded by {what})"), bytes });
    }
    out
}

/// The cliffs of a curve: `points` are (size, rate) in increasing size; a cliff is a drop of
/// more than `fraction` (0 to 1) from one point to the next. Each is explained by the limit
/// the working set crosses between the two sizes (`from <= limit < to`), else by one within
/// a factor of 2 of them ("near"), else by nothing.
pub fn cliffs(points: &[(u64, f64)], fraction: f64, limits: &[Limit]) -> Vec<Cliff> {
    points
        .windows(2)
        .filter(|w| w[0].1 > 0.0 && w[1].1 < w[0].1 * (1.0 - fraction))
        .map(|w| {
            let ((from, before), (to, after)) = (w[0], w[1]);
            Cliff { from, to, before, after, cause: cause(from, to, limits) }
        })
        .collect()
}

fn cause(from: u64, to: u64, limits: &[Limit]) -> Option<String> {
    let said = |l: &Limit| format!("{} ({})", l.name, format_size(l.bytes));
    if let Some(l) = limits.iter().find(|l| from <= l.bytes && l.bytes < to) {
        return Some(format!("crosses {}", said(l)));
    }
    limits
        .iter()
        .filter(|l| l.bytes >= from / 2 && l.bytes <= to.saturating_mul(2))
        .min_by_key(|l| l.bytes.abs_diff(from))
        .map(|l| format!("is near {}", said(l)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Vec<Limit> {
        vec![
            Limit { name: "the L2 unified cache".into(), bytes: 2 << 20 },
            Limit { name: "the page cache (bounded by RAM)".into(), bytes: 16 << 30 },
        ]
    }

    #[test]
    fn drops_beyond_the_fraction_are_cliffs_with_their_causes() {
        // Flat to 1 MiB, a fall after 2 MiB (the L2), flat, a fall after 16 GiB (RAM).
        let mib = |m: u64| m << 20;
        let points = [
            (mib(1), 9000.0),
            (mib(2), 8800.0),
            (mib(4), 4000.0),
            (mib(8), 3900.0),
            (16 << 30, 3800.0),
            (32 << 30, 500.0),
            (64 << 30, 480.0),
        ];
        let found = cliffs(&points, 0.3, &limits());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].from, found[0].to), (mib(2), mib(4)));
        assert_eq!(found[0].cause.as_deref(), Some("crosses the L2 unified cache (2 MiB)"));
        assert!((found[0].drop() - (1.0 - 4000.0 / 8800.0)).abs() < 1e-12);
        assert_eq!(found[1].cause.as_deref(), Some("crosses the page cache (bounded by RAM) (16 GiB)"));
        assert_eq!(
            found[1].sentence("read"),
            "read drops 87% from 16 GiB to 32 GiB: it crosses the page cache (bounded by RAM) (16 GiB)"
        );
        assert!(cliffs(&points, 0.9, &limits()).is_empty(), "no drop is that steep");
    }

    #[test]
    fn a_cliff_with_no_limit_near_says_so() {
        let found = cliffs(&[(64 << 10, 100.0), (128 << 10, 40.0)], 0.3, &limits());
        assert_eq!(found[0].cause, None);
        assert!(found[0].sentence("write").ends_with("no known limit lies there"));
        // A limit just past the larger size is "near".
        let found = cliffs(&[(512 << 10, 100.0), (1 << 20, 40.0)], 0.3, &limits());
        assert_eq!(found[0].cause.as_deref(), Some("is near the L2 unified cache (2 MiB)"));
    }
}
