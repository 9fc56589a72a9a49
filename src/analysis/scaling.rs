//! What a sweep over clients finds: the peak and where it occurs, the efficiency of each step
//! against linear scaling, where the curve plateaus and its knee (the seeds' "N-to-1 write did
//! not increase with more than 2 clients").

use super::Finding;

/// One point of a sweep: clients, the figure (in the unit of merit), and its run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Active clients (tasks).
    pub clients: u64,
    /// The figure.
    pub value: f64,
    /// The run it comes from.
    pub run: i64,
}

/// A step's efficiency against linear scaling, per doubling of clients: 1 when the figure
/// doubles with the clients, 0.5 when it stays the same.
pub fn efficiency_per_doubling(a: &Point, b: &Point) -> Option<f64> {
    let steps = (b.clients as f64 / a.clients as f64).log2();
    (steps > 0.0 && a.value > 0.0 && b.value > 0.0).then(|| (b.value / a.value).powf(1.0 / steps) / 2.0)
}

/// The caveat of a sweep with one run at some client count, said after each of its findings
/// (a report says it once per section instead, with a mark on each finding).
pub const ONE_RUN: &str =
    "one run per point at some client counts, no interval: run the sweep again (same label) to confirm";

/// Points within this fraction of the peak count as on its plateau.
const PLATEAU: f64 = 0.9;

/// A client count of a curve: its runs' figures and the runs.
struct Level {
    clients: u64,
    values: Vec<f64>,
    runs: Vec<i64>,
}

impl Level {
    fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    fn low(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn high(&self) -> f64 {
        self.values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }

    /// The level as one point, at its mean.
    fn at_mean(&self) -> Point {
        Point { clients: self.clients, value: self.mean(), run: 0 }
    }
}

/// The findings of one op's curve (`what` names it, e.g. "write"; `show` formats a figure with
/// its unit). Points of the same client count are repetitions (the runs of sweeps repeated):
/// each level's figure is their mean. With one run at some count every sentence says so and
/// what would confirm it; with several at every count, a bend is said only when it stands
/// beyond their spread (even the best pairing of the two levels' runs scales below 75% of
/// linear) and a plateau only when every later level's runs reach the peak's lowest.
pub fn findings(what: &str, points: &[Point], show: impl Fn(f64) -> String) -> Vec<Finding> {
    let levels = levels(points);
    if levels.len() < 2 {
        return Vec::new();
    }
    let runs: Vec<i64> = levels.iter().flat_map(|l| l.runs.iter().copied()).collect();
    let fewest = levels.iter().map(|l| l.values.len()).min().unwrap_or(0);
    let single = fewest < 2;
    let caveat = match single {
        true => ONE_RUN.to_string(),
        false => format!("mean of at least {fewest} runs per point"),
    };
    let peak = levels.iter().max_by(|a, b| a.mean().total_cmp(&b.mean())).expect("two levels");
    // The peak rests on its own runs; the shape of the curve on all of them.
    let mut out = vec![peak_said(what, peak, &show, &caveat)];
    out.extend(steps_said(what, &levels, &caveat, &runs));
    // The plateau: the fewest clients from which every larger count stays within 10% of the
    // peak, when that is not the last point; with repetitions, every run from there reaches
    // 90% of the peak's lowest run.
    let floor = PLATEAU * if single { peak.mean() } else { peak.low() };
    let on = |l: &Level| if single { l.mean() } else { l.low() } >= floor;
    if let Some(first_on) = levels.iter().position(|l| l.mean() >= PLATEAU * peak.mean()) {
        if levels[first_on..].iter().all(on) && first_on + 1 < levels.len() {
            out.push(Finding {
                text: format!(
                    "{what} plateaus from {} clients: from there it stays within {:.0}% of its peak ({caveat})",
                    levels[first_on].clients,
                    100.0 * (1.0 - PLATEAU)
                ),
                value: levels[first_on].clients as f64,
                runs: runs.clone(),
                ..Default::default()
            });
        }
    }
    // The knee: the first step below 75% of linear after steps at or above it; with
    // repetitions, below it even from the lowest run before to the highest after.
    let bends = levels.windows(2).enumerate().find_map(|(i, w)| {
        let e = efficiency_per_doubling(&w[0].at_mean(), &w[1].at_mean())?;
        let at_best = efficiency_per_doubling(
            &Point { clients: w[0].clients, value: w[0].low(), run: 0 },
            &Point { clients: w[1].clients, value: w[1].high(), run: 0 },
        )?;
        (e < 0.75).then_some((i, e, single || at_best < 0.75))
    });
    if let Some((i, e, stands)) = bends.filter(|(i, _, _)| *i > 0) {
        if stands {
            out.push(Finding {
                text: format!(
                    "{what} bends at {} clients: from there to {} it scales at {:.0}% of linear ({caveat})",
                    levels[i].clients,
                    levels[i + 1].clients,
                    100.0 * e
                ),
                value: levels[i].clients as f64,
                runs,
                ..Default::default()
            });
        }
    }
    out
}

/// The points' levels, by client count: the points of one count are its repetitions.
fn levels(points: &[Point]) -> Vec<Level> {
    let mut p: Vec<Point> = points.iter().copied().filter(|p| p.clients > 0 && p.value > 0.0).collect();
    p.sort_by_key(|x| x.clients);
    let mut levels: Vec<Level> = Vec::new();
    for x in p {
        match levels.last_mut() {
            Some(l) if l.clients == x.clients => {
                l.values.push(x.value);
                l.runs.push(x.run);
            }
            _ => levels.push(Level { clients: x.clients, values: vec![x.value], runs: vec![x.run] }),
        }
    }
    levels
}

/// The peak's finding: its figure and clients, with the interval over its runs.
fn peak_said(what: &str, peak: &Level, show: &dyn Fn(f64) -> String, caveat: &str) -> Finding {
    let spread = match crate::stats::mean_interval(&peak.values) {
        Some(i) => {
            format!(", {} {} to {} over its {} runs", i.method.name(), show(i.lo), show(i.hi), peak.values.len())
        }
        None if crate::stats::unbounded(&peak.values) => format!(
            ", {} its interval ({} runs: {} to {})",
            crate::stats::UNBOUNDED,
            peak.values.len(),
            show(peak.low()),
            show(peak.high())
        ),
        None => String::new(),
    };
    Finding {
        text: format!("{what} peaks at {} with {} clients{spread} ({caveat})", show(peak.mean()), peak.clients),
        value: peak.mean(),
        runs: peak.runs.clone(),
        ..Default::default()
    }
}

/// How the curve scales per doubling of clients, step by step, and the steps beyond linear.
fn steps_said(what: &str, levels: &[Level], caveat: &str, runs: &[i64]) -> Vec<Finding> {
    let steps: Vec<(String, f64)> = levels
        .windows(2)
        .filter_map(|w| {
            let e = efficiency_per_doubling(&w[0].at_mean(), &w[1].at_mean())?;
            Some((format!("{}->{}: {:.0}%", w[0].clients, w[1].clients, 100.0 * e), e))
        })
        .collect();
    // A step beyond linear by more than SUPERLINEAR is a cache's doing, not the storage's
    // scaling: it is said apart and left out of the scaling.
    let superlinear = |s: &&(String, f64)| s.1 > super::guard::SUPERLINEAR;
    let beyond: Vec<&(String, f64)> = steps.iter().filter(superlinear).collect();
    let scaling: Vec<&(String, f64)> = steps.iter().filter(|s| !superlinear(s)).collect();
    let mut out = Vec::new();
    if !scaling.is_empty() {
        let mean_efficiency = scaling.iter().map(|s| s.1).sum::<f64>() / scaling.len() as f64;
        let said: Vec<&str> = scaling.iter().map(|s| s.0.as_str()).collect();
        out.push(Finding {
            text: format!("{what} scales at {} of linear per doubling of clients ({caveat})", said.join(", ")),
            value: 100.0 * mean_efficiency,
            runs: runs.to_vec(),
            ..Default::default()
        });
    }
    if !beyond.is_empty() {
        let said: Vec<&str> = beyond.iter().map(|s| s.0.as_str()).collect();
        out.push(Finding {
            text: format!(
                "{what} rises faster than linear at {} per doubling of clients, beyond the {:.0}% more clients can give: probably a cache effect (the data fitting in memory), not scaling ({caveat})",
                said.join(", "),
                100.0 * super::guard::SUPERLINEAR
            ),
            value: 100.0 * beyond.iter().map(|s| s.1).fold(0.0, f64::max),
            runs: runs.to_vec(),
            ..Default::default()
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(values: &[(u64, f64)]) -> Vec<Point> {
        values.iter().enumerate().map(|(i, &(clients, value))| Point { clients, value, run: i as i64 + 1 }).collect()
    }

    #[test]
    fn efficiency_is_measured_per_doubling() {
        let p = |clients, value| Point { clients, value, run: 0 };
        assert_eq!(efficiency_per_doubling(&p(1, 100.0), &p(2, 200.0)), Some(1.0));
        assert_eq!(efficiency_per_doubling(&p(2, 100.0), &p(4, 100.0)), Some(0.5));
        // 1 -> 4 clients, 4x the figure: linear over two doublings.
        assert!((efficiency_per_doubling(&p(1, 100.0), &p(4, 400.0)).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(efficiency_per_doubling(&p(4, 100.0), &p(4, 100.0)), None);
    }

    #[test]
    fn a_curve_that_stops_growing_has_its_peak_plateau_and_knee() {
        let c = curve(&[(1, 100.0), (2, 195.0), (4, 380.0), (8, 420.0), (16, 410.0), (32, 415.0)]);
        let f = findings("write", &c, |v| format!("{v:.0} MiB/s"));
        let texts: Vec<&str> = f.iter().map(|x| x.text.as_str()).collect();
        let caveat =
            "one run per point at some client counts, no interval: run the sweep again (same label) to confirm";
        assert_eq!(texts[0], format!("write peaks at 420 MiB/s with 8 clients ({caveat})"));
        assert!(texts[1].starts_with("write scales at 1->2: 98%, 2->4: 97%, 4->8: 55%, 8->16: 49%"), "{}", texts[1]);
        assert_eq!(
            texts[2],
            format!("write plateaus from 4 clients: from there it stays within 10% of its peak ({caveat})")
        );
        assert!(
            texts[3].starts_with("write bends at 4 clients: from there to 8 it scales at 55% of linear"),
            "{}",
            texts[3]
        );
        assert_eq!(f[0].runs, [4], "the peak's run");
        assert_eq!(f[1].runs, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_linear_curve_has_no_plateau_or_knee_and_one_point_says_nothing() {
        let c = curve(&[(1, 100.0), (2, 200.0), (4, 400.0)]);
        let f = findings("read", &c, |v| format!("{v:.0}"));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(findings("read", &curve(&[(4, 100.0)]), |v| format!("{v}")).is_empty());
    }

    #[test]
    fn repeated_sweeps_are_pooled_per_client_count_and_a_bend_within_their_spread_is_not_made() {
        // Three sweeps: the means bend at 4 clients (4->8 at 57% of linear), runs tight.
        let tight = curve(&[
            (1, 100.0),
            (2, 200.0),
            (4, 400.0),
            (8, 460.0),
            (1, 102.0),
            (2, 198.0),
            (4, 404.0),
            (8, 455.0),
            (1, 98.0),
            (2, 202.0),
            (4, 396.0),
            (8, 465.0),
        ]);
        let f = findings("write", &tight, |v| format!("{v:.0} MiB/s"));
        let texts: Vec<&str> = f.iter().map(|x| x.text.as_str()).collect();
        assert_eq!(
            texts[0],
            "write peaks at 460 MiB/s with 8 clients, 95% t-interval 448 MiB/s to 472 MiB/s over its 3 runs (mean of at \
             least 3 runs per point)"
        );
        assert!(texts.iter().any(|t| t.starts_with("write bends at 4 clients")), "{texts:?}");
        assert_eq!(f[0].runs, [4, 8, 12], "the peak rests on its own runs");
        assert_eq!(f[1].runs.len(), 12, "the scaling on every run");
        // The same means, but runs so spread that the 4->8 step could be linear: no bend.
        let loose = curve(&[
            (1, 100.0),
            (2, 200.0),
            (4, 400.0),
            (8, 460.0),
            (1, 100.0),
            (2, 200.0),
            (4, 300.0),
            (8, 720.0),
            (1, 100.0),
            (2, 200.0),
            (4, 500.0),
            (8, 200.0),
        ]);
        let f = findings("write", &loose, |v| format!("{v:.0}"));
        assert!(f.iter().all(|x| !x.text.contains("bends")), "{f:?}");
    }

    #[test]
    fn a_step_beyond_linear_is_a_probable_cache_effect_not_scaling() {
        // 1 -> 2 clients at 863% of linear: the data came to fit in memory.
        let c = curve(&[(1, 100.0), (2, 1726.0), (4, 3000.0)]);
        let f = findings("read", &c, |v| format!("{v:.0}"));
        let texts: Vec<&str> = f.iter().map(|x| x.text.as_str()).collect();
        let scales = texts.iter().find(|t| t.starts_with("read scales at")).unwrap();
        assert!(!scales.contains("1->2") && scales.contains("2->4: 87%"), "{scales}");
        let cache = texts.iter().find(|t| t.starts_with("read rises faster than linear at 1->2: 863%")).unwrap();
        assert!(cache.contains("probably a cache effect") && cache.contains("beyond the 120%"), "{cache}");
        // Within 1.2x of linear is still scaling.
        let near = findings("read", &curve(&[(1, 100.0), (2, 230.0)]), |v| format!("{v:.0}"));
        assert!(near.iter().all(|x| !x.text.contains("cache effect")), "{near:?}");
    }

    #[test]
    fn a_peak_of_two_runs_too_far_apart_is_not_bounded_below_zero() {
        let c = curve(&[(1, 500.0), (1, 520.0), (2, 1000.0), (2, 2312.0)]);
        let f = findings("write", &c, |v| format!("{v:.1} MiB/s"));
        assert!(
            f[0].text.starts_with(
                "write peaks at 1656.0 MiB/s with 2 clients, too few runs to bound its interval (2 runs: 1000.0 MiB/s to 2312.0 MiB/s)"
            ),
            "{}",
            f[0].text
        );
        assert!(!f[0].text.contains('-'), "no interval below zero: {}", f[0].text);
    }
}
