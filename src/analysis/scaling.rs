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

/// Points within this fraction of the peak count as on its plateau.
const PLATEAU: f64 = 0.9;

/// The findings of one op's curve (`what` names it, e.g. "write"; `show` formats a figure with
/// its unit). One run per point, so each sentence says it rests on single samples.
pub fn findings(what: &str, points: &[Point], show: impl Fn(f64) -> String) -> Vec<Finding> {
    let mut p: Vec<Point> = points.iter().copied().filter(|p| p.clients > 0 && p.value > 0.0).collect();
    p.sort_by_key(|x| x.clients);
    p.dedup_by_key(|x| x.clients);
    if p.len() < 2 {
        return Vec::new();
    }
    let runs: Vec<i64> = p.iter().map(|x| x.run).collect();
    let caveat = "one run per point, no interval";
    let peak = *p.iter().max_by(|a, b| a.value.total_cmp(&b.value)).expect("two points");
    let mut out = vec![Finding {
        text: format!("{what} peaks at {} with {} clients ({caveat})", show(peak.value), peak.clients),
        value: peak.value,
        runs: runs.clone(),
    }];
    let steps: Vec<String> = p
        .windows(2)
        .filter_map(|w| {
            let e = efficiency_per_doubling(&w[0], &w[1])?;
            Some(format!("{}->{}: {:.0}%", w[0].clients, w[1].clients, 100.0 * e))
        })
        .collect();
    let mean_efficiency = {
        let e: Vec<f64> = p.windows(2).filter_map(|w| efficiency_per_doubling(&w[0], &w[1])).collect();
        e.iter().sum::<f64>() / e.len().max(1) as f64
    };
    out.push(Finding {
        text: format!("{what} scales at {} of linear per doubling of clients ({caveat})", steps.join(", ")),
        value: 100.0 * mean_efficiency,
        runs: runs.clone(),
    });
    // The plateau: the fewest clients from which every larger count stays within 10% of the
    // peak, when that is not the last point.
    let first_on = p.iter().position(|x| x.value >= PLATEAU * peak.value).expect("the peak itself");
    let stays = p[first_on..].iter().all(|x| x.value >= PLATEAU * peak.value);
    if stays && first_on + 1 < p.len() {
        let at = p[first_on];
        out.push(Finding {
            text: format!(
                "{what} plateaus from {} clients: from there it stays within {:.0}% of its peak ({caveat})",
                at.clients,
                100.0 * (1.0 - PLATEAU)
            ),
            value: at.clients as f64,
            runs: runs.clone(),
        });
    }
    // The knee: the first step below 75% of linear after steps at or above it.
    let effs: Vec<(usize, f64)> =
        p.windows(2).enumerate().filter_map(|(i, w)| Some((i, efficiency_per_doubling(&w[0], &w[1])?))).collect();
    if let Some(&(i, e)) = effs.iter().find(|(_, e)| *e < 0.75).filter(|(i, _)| *i > 0) {
        out.push(Finding {
            text: format!(
                "{what} bends at {} clients: from there to {} it scales at {:.0}% of linear ({caveat})",
                p[i].clients,
                p[i + 1].clients,
                100.0 * e
            ),
            value: p[i].clients as f64,
            runs,
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
        assert_eq!(texts[0], "write peaks at 420 MiB/s with 8 clients (one run per point, no interval)");
        assert!(texts[1].starts_with("write scales at 1->2: 98%, 2->4: 97%, 4->8: 55%, 8->16: 49%"), "{}", texts[1]);
        assert_eq!(
            texts[2],
            "write plateaus from 4 clients: from there it stays within 10% of its peak (one run per point, no interval)"
        );
        assert!(
            texts[3].starts_with("write bends at 4 clients: from there to 8 it scales at 55% of linear"),
            "{}",
            texts[3]
        );
        assert_eq!(f[0].runs, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_linear_curve_has_no_plateau_or_knee_and_one_point_says_nothing() {
        let c = curve(&[(1, 100.0), (2, 200.0), (4, 400.0)]);
        let f = findings("read", &c, |v| format!("{v:.0}"));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(findings("read", &curve(&[(4, 100.0)]), |v| format!("{v}")).is_empty());
    }
}
