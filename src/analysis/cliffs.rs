//! Where performance falls off a cliff, and why: between neighbouring sizes of a curve (file
//! sizes of an IOzone-style matrix, or record sizes) a rate that drops by more than a set
//! fraction is a cliff, if it stands beyond the noise of the samples it rests on (or said to
//! rest on a single sample); a machine's limit that the working set crosses there (a CPU cache
//! level, the page cache bounded by RAM or a cgroup's limit, a device's cache when known) is
//! named as its likely cause only when the cliff stands.

use crate::units::format_size;

pub use crate::env::Limit;
pub use crate::stats::{support, Support};

/// A size of a curve: its rate (the figure the curve draws: a mean or a median of the
/// samples) and the samples it comes from, one per run or visit.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The size.
    pub size: u64,
    /// The rate drawn.
    pub rate: f64,
    /// The rates measured there.
    pub samples: Vec<f64>,
}

impl Point {
    /// A point of these samples, drawn at `rate`.
    pub fn new(size: u64, rate: f64, samples: Vec<f64>) -> Point {
        Point { size, rate, samples }
    }
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
    /// What it rests on.
    pub support: Support,
    /// The limit the working set crosses between the two sizes ("crosses the L2 cache
    /// (2 MiB)"), named only for a cliff that stands.
    pub cause: Option<String>,
}

impl Cliff {
    /// The fraction lost, 0 to 1.
    pub fn drop(&self) -> f64 {
        1.0 - self.after / self.before
    }

    /// The cliff in one sentence, with what it rests on and, when it stands, its cause.
    pub fn sentence(&self, what: &str) -> String {
        let fall = format!(
            "{what} drops {:.0}% from {} to {}",
            100.0 * self.drop(),
            format_size(self.from),
            format_size(self.to)
        );
        match self.support {
            Support::Single => format!(
                "{fall}, on a single sample at one side: it may be noise; measure again (more repetitions) to confirm"
            ),
            Support::Stands { before, after } => format!(
                "{fall} ({before} and {after} samples, apart beyond their spread){}",
                self.cause
                    .as_deref()
                    .map(|c| format!(": it {c}"))
                    .unwrap_or_else(|| ": no known limit lies between them".into())
            ),
        }
    }
}

/// The cliffs of a curve: `points` in increasing size; a cliff lies between two neighbours
/// when both points up to the first (it and the one before) exceed both from the second on (it
/// and the one after) by more than `fraction` (0 to 1): a lone high or low point, noise on a
/// tiny cell, is not a cliff; at the curve's ends one point stands alone. It must also stand
/// beyond the noise of the two neighbours' samples ([`support`]), or it is said to rest on a
/// single sample. A cliff that stands is explained by the limit the working set crosses
/// between the two sizes (`from <= limit < to`), else by nothing.
pub fn cliffs(points: &[Point], fraction: f64, limits: &[Limit]) -> Vec<Cliff> {
    (1..points.len())
        .filter(|&i| {
            let before = points[i.saturating_sub(2)..i].iter().map(|p| p.rate).fold(f64::INFINITY, f64::min);
            let after = points[i..(i + 2).min(points.len())].iter().map(|p| p.rate).fold(0.0, f64::max);
            before > 0.0 && after < before * (1.0 - fraction)
        })
        .filter_map(|i| {
            let (one, two) = (&points[i - 1], &points[i]);
            let support = support(&one.samples, &two.samples)?;
            let cause = match support {
                Support::Stands { .. } => cause(one.size, two.size, limits),
                Support::Single => None,
            };
            Some(Cliff { from: one.size, to: two.size, before: one.rate, after: two.rate, support, cause })
        })
        .collect()
}

/// The limit the working set crosses from `from` to `to`: one nearby but outside is no cause.
fn cause(from: u64, to: u64, limits: &[Limit]) -> Option<String> {
    let l = limits.iter().find(|l| from <= l.bytes && l.bytes < to)?;
    Some(format!("crosses {} ({})", l.name, format_size(l.bytes)))
}

/// Cliffs across runs of one workload at several sizes (the seeds' "nose-dives" where the
/// data outgrows RAM): runs that differ only in their size are a curve of the whole team's
/// bytes per phase against each op's mean rate over the runs of each size; each drop of more
/// than 30% between neighbouring sizes that stands beyond the runs' spread is a finding,
/// explained by the RAM of the run's host when it lies between them, or one resting on a
/// single run, said so. At least three sizes make a curve.
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
            let at = |size: u64| -> Option<Point> {
                let rates: Vec<f64> = group
                    .iter()
                    .filter(|r| r.workload.bytes_per_phase() == size)
                    .filter_map(|r| r.summaries().into_iter().find(|s| s.op == op)?.bandwidth.map(|b| b.mean))
                    .map(crate::units::mib_per_s)
                    .collect();
                let mean = crate::measure::spread(&rates)?.mean;
                Some(Point::new(size, mean, rates))
            };
            let points: Vec<Point> = sizes.iter().filter_map(|&s| at(s)).collect();
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
                    ..Default::default()
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

    /// A point of three samples within 2% of `rate`.
    fn steady(size: u64, rate: f64) -> Point {
        Point::new(size, rate, vec![rate * 0.98, rate, rate * 1.02])
    }

    /// A point of one sample.
    fn once(size: u64, rate: f64) -> Point {
        Point::new(size, rate, vec![rate])
    }

    #[test]
    fn drops_beyond_the_fraction_and_the_noise_are_cliffs_with_their_causes() {
        // Flat to 1 MiB, a fall after 2 MiB (the L2), flat, a fall after 16 GiB (RAM).
        let mib = |m: u64| m << 20;
        let points = [
            steady(mib(1), 9000.0),
            steady(mib(2), 8800.0),
            steady(mib(4), 4000.0),
            steady(mib(8), 3900.0),
            steady(16 << 30, 3800.0),
            steady(32 << 30, 500.0),
            steady(64 << 30, 480.0),
        ];
        let found = cliffs(&points, 0.3, &limits());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].from, found[0].to), (mib(2), mib(4)));
        assert_eq!(found[0].support, Support::Stands { before: 3, after: 3 });
        assert_eq!(found[0].cause.as_deref(), Some("crosses the L2 unified cache (2 MiB)"));
        assert!((found[0].drop() - (1.0 - 4000.0 / 8800.0)).abs() < 1e-12);
        assert_eq!(found[1].cause.as_deref(), Some("crosses the page cache (bounded by RAM) (16 GiB)"));
        assert_eq!(
            found[1].sentence("read"),
            "read drops 87% from 16 GiB to 32 GiB (3 and 3 samples, apart beyond their spread): it crosses the \
             page cache (bounded by RAM) (16 GiB)"
        );
        assert!(cliffs(&points, 0.9, &limits()).is_empty(), "no drop is that steep");
    }

    #[test]
    fn a_single_sample_names_no_cause_and_says_what_would_confirm_it() {
        let found = cliffs(&[once(1 << 20, 100.0), once(4 << 20, 40.0)], 0.3, &limits());
        assert_eq!((found[0].support, found[0].cause.clone()), (Support::Single, None), "the L2 lies between");
        let said = found[0].sentence("write");
        assert!(
            said.ends_with(
                "on a single sample at one side: it may be noise; measure again (more repetitions) to confirm"
            ),
            "{said}"
        );
        // One side alone of one sample is enough to say so.
        let one_side = cliffs(&[steady(1 << 20, 100.0), once(4 << 20, 40.0)], 0.3, &limits());
        assert_eq!(one_side[0].support, Support::Single);
    }

    #[test]
    fn a_drop_within_the_noise_of_its_samples_is_no_cliff() {
        // The means fall by 38%, but the samples of the two sides overlap.
        let before = Point::new(1 << 20, 100.0, vec![60.0, 100.0, 140.0]);
        let after = Point::new(4 << 20, 62.0, vec![45.0, 50.0, 91.0]);
        assert!(cliffs(&[before.clone(), after], 0.3, &limits()).is_empty());
        let apart = Point::new(4 << 20, 40.0, vec![38.0, 40.0, 42.0]);
        assert_eq!(cliffs(&[before, apart], 0.3, &limits()).len(), 1, "apart: it stands");
    }

    #[test]
    fn a_lone_point_and_noise_are_not_cliffs() {
        let at = |rates: &[f64]| -> Vec<Point> {
            rates.iter().enumerate().map(|(i, &r)| steady(1u64 << (16 + i), r)).collect()
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

    /// Runs of one workload at 1, 2, 4 and 8 GiB on a host of 3 GiB, `each` runs of every size
    /// (their rates 1% apart): reads from memory up to 2 GiB, from the disk from 4 GiB.
    fn sized_runs(each: usize) -> Vec<crate::record::RunRecord> {
        let mut runs = Vec::new();
        for (gib, read) in [(1u64, 5000.0), (2, 5100.0), (4, 800.0), (8, 780.0)] {
            for k in 0..each {
                let mut r = crate::record::fixtures::run(None);
                r.id = Some(runs.len() as i64 + 1);
                r.env.ram_bytes = 3 << 30;
                r.hosts = vec!["h".into()];
                r.workload.tasks = 1;
                r.workload.data_mut().segments = 1;
                r.workload.data_mut().block = gib << 30;
                let noise = 1.0 + 0.01 * k as f64;
                for p in &mut r.phases {
                    let rate = if p.op == crate::spec::Op::Read { read } else { 300.0 };
                    p.figures.bandwidth = Some(rate * noise * 1048576.0);
                }
                runs.push(r);
            }
        }
        runs
    }

    #[test]
    fn runs_at_growing_sizes_show_where_the_data_outgrows_ram() {
        let mut runs = sized_runs(2);
        let found = over_sizes(&runs);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].text.starts_with("read of file-per-task"), "{}", found[0].text);
        assert!(
            found[0].text.ends_with(
                "drops 84% from 2 GiB to 4 GiB (2 and 2 samples, apart beyond their spread): it crosses the page \
                 cache (bounded by the host's RAM) (3 GiB) (5126 to 804 MiB/s)"
            ),
            "{}",
            found[0].text
        );
        assert_eq!(found[0].runs, (1..=8).collect::<Vec<i64>>());
        assert!(over_sizes(&runs[..4]).is_empty(), "two sizes are not a curve");
        // One run of each size: the drop is said, on a single sample, and no cause is named.
        let single = over_sizes(&sized_runs(1));
        assert!(
            single[0].text.contains("on a single sample") && !single[0].text.contains("page cache"),
            "{}",
            single[0].text
        );
        // Runs that differ in more than size (here the team) are not one curve: two curves of
        // two sizes each.
        for r in &mut runs[4..] {
            r.workload.tasks = 2;
        }
        assert!(over_sizes(&runs).is_empty());
    }

    #[test]
    fn a_cliff_with_no_limit_between_its_sizes_says_so() {
        let found = cliffs(&[steady(64 << 10, 100.0), steady(128 << 10, 40.0)], 0.3, &limits());
        assert_eq!(found[0].cause, None);
        assert!(found[0].sentence("write").ends_with("no known limit lies between them"));
        // A limit just past the larger size is no cause: the boundary does not match.
        let found = cliffs(&[steady(512 << 10, 100.0), steady(1 << 20, 40.0)], 0.3, &limits());
        assert_eq!(found[0].cause, None);
    }
}
