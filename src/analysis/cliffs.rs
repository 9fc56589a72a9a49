//! Where performance falls off a cliff, and why: between neighbouring sizes of a curve (file
//! sizes of an IOzone-style matrix, or record sizes) a rate that drops by more than a set
//! fraction is a cliff; the machine's limits that the working set crosses there (a CPU cache
//! level, the page cache bounded by RAM or a cgroup's limit, a device's cache when known) are
//! its likely cause.

use crate::units::format_size;

pub use crate::env::Limit;

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

/// The cliffs of a curve: `points` are (size, rate) in increasing size; a cliff lies between
/// two neighbours when both points up to the first (it and the one before) exceed both from
/// the second on (it and the one after) by more than `fraction` (0 to 1): a lone high or low
/// point, noise on a tiny cell, is not a cliff; at the curve's ends one point stands alone.
/// Each is explained by the limit the working set crosses between the two sizes
/// (`from <= limit < to`), else by one within a factor of 2 of them ("near"), else by nothing.
pub fn cliffs(points: &[(u64, f64)], fraction: f64, limits: &[Limit]) -> Vec<Cliff> {
    (1..points.len())
        .filter(|&i| {
            let before = points[i.saturating_sub(2)..i].iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let after = points[i..(i + 2).min(points.len())].iter().map(|p| p.1).fold(0.0, f64::max);
            before > 0.0 && after < before * (1.0 - fraction)
        })
        .map(|i| {
            let ((from, before), (to, after)) = (points[i - 1], points[i]);
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

/// Cliffs across runs of one workload at several sizes (the seeds' "nose-dives" where the
/// data outgrows RAM): runs that differ only in their size are a curve of the whole team's
/// bytes per phase against each op's mean rate; each drop of more than 30% between
/// neighbouring sizes is a finding, explained by the RAM of the run's host when it lies
/// between them. At least three sizes make a curve.
pub fn over_sizes(runs: &[crate::record::RunRecord]) -> Vec<super::Finding> {
    use crate::spec::Op;
    let mut groups: Vec<(String, Vec<&crate::record::RunRecord>)> = Vec::new();
    // One host's RAM bounds one host's page cache: runs over several hosts are left out.
    let single = |r: &&crate::record::RunRecord| r.hosts.len() <= 1;
    for r in runs.iter().filter(|r| r.status == crate::record::Status::Ok).filter(single) {
        let Some(data) = r.workload.data() else { continue };
        // The workload without its size (its key holds every other measured setting; the team,
        // which it leaves out, must match too), on the same host and target.
        let w = &r.workload;
        let sizeless = crate::spec::Data { block: 0, segments: 0, ..data.clone() };
        let sized = crate::spec::Workload { shape: crate::spec::Shape::Data(sizeless), ..w.clone() };
        let key = format!("{}/n{}@{}:{}", sized.key(), w.tasks, r.env.host, r.env.target);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let mut out = Vec::new();
    for (_, group) in groups {
        let mut sizes: Vec<u64> = group.iter().map(|r| r.workload.bytes_per_phase()).collect();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() < 3 {
            continue;
        }
        let ram = group[0].env.ram_bytes;
        let limits = [Limit { name: "the page cache (bounded by the host's RAM)".into(), bytes: ram }];
        for op in [Op::Write, Op::Read] {
            let at = |size: u64| -> Option<f64> {
                let rates: Vec<f64> = group
                    .iter()
                    .filter(|r| r.workload.bytes_per_phase() == size)
                    .filter_map(|r| r.summaries().into_iter().find(|s| s.op == op)?.bandwidth.map(|b| b.mean))
                    .collect();
                crate::measure::spread(&rates).map(|s| crate::units::mib_per_s(s.mean))
            };
            let points: Vec<(u64, f64)> = sizes.iter().filter_map(|&s| Some((s, at(s)?))).collect();
            for c in cliffs(&points, 0.3, &limits) {
                out.push(super::Finding {
                    text: format!(
                        "{} ({:.0} to {:.0} MiB/s)",
                        c.sentence(&format!("{} of {}", op.name(), group[0].workload.label())),
                        c.before,
                        c.after
                    ),
                    value: 100.0 * c.drop(),
                    runs: group.iter().filter_map(|r| r.id).collect(),
                });
            }
        }
    }
    out
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
    fn a_lone_point_and_noise_are_not_cliffs() {
        let at = |rates: &[f64]| -> Vec<(u64, f64)> {
            rates.iter().enumerate().map(|(i, &r)| (1u64 << (16 + i), r)).collect()
        };
        // A plateau with noise of up to 15% either way.
        let noisy = at(&[100.0, 86.0, 114.0, 88.0, 112.0, 85.0, 115.0]);
        assert!(cliffs(&noisy, 0.3, &limits()).is_empty());
        // One cell far above, or far below, its neighbours.
        assert!(cliffs(&at(&[100.0, 100.0, 250.0, 100.0, 100.0]), 0.3, &limits()).is_empty());
        assert!(cliffs(&at(&[100.0, 100.0, 30.0, 100.0, 100.0]), 0.3, &limits()).is_empty());
        // A fall that lasts is one, at its step.
        let fall = cliffs(&at(&[100.0, 105.0, 98.0, 40.0, 38.0, 41.0]), 0.3, &limits());
        assert_eq!(fall.iter().map(|c| (c.from, c.to)).collect::<Vec<_>>(), [(1 << 18, 1 << 19)]);
        // At the end of a curve the last point stands alone.
        assert_eq!(cliffs(&at(&[100.0, 100.0, 40.0]), 0.3, &limits()).len(), 1);
    }

    #[test]
    fn runs_at_growing_sizes_show_where_the_data_outgrows_ram() {
        let mut runs = Vec::new();
        // Reads from memory up to 2 GiB, from the disk from 4 GiB, on a host with 3 GiB.
        for (k, (gib, read)) in [(1u64, 5000.0), (2, 5100.0), (4, 800.0), (8, 780.0)].into_iter().enumerate() {
            let mut r = crate::record::fixtures::run(None);
            r.id = Some(k as i64 + 1);
            r.env.ram_bytes = 3 << 30;
            r.hosts = vec!["h".into()];
            r.workload.tasks = 1;
            r.workload.data_mut().segments = 1;
            r.workload.data_mut().block = gib << 30;
            for p in &mut r.phases {
                p.figures.bandwidth = Some(if p.op == crate::spec::Op::Read { read } else { 300.0 } * 1048576.0);
            }
            runs.push(r);
        }
        let found = over_sizes(&runs);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].text.starts_with("read of file-per-task"), "{}", found[0].text);
        assert!(
            found[0].text.ends_with(
                "drops 84% from 2 GiB to 4 GiB: it crosses the page cache (bounded by the host's RAM) (3 GiB) (5100 to 800 MiB/s)"
            ),
            "{}",
            found[0].text
        );
        assert_eq!(found[0].runs, [1, 2, 3, 4]);
        assert!(over_sizes(&runs[..2]).is_empty(), "two sizes are not a curve");
        // Runs that differ in more than size (here the team) are not one curve: two curves of
        // two sizes each.
        for r in &mut runs[2..] {
            r.workload.tasks = 2;
        }
        assert!(over_sizes(&runs).is_empty());
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
