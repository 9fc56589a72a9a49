//! The statistics behind a claim: the interval of a mean over repetitions, the interval of a
//! ratio between two sets of repetitions, and the verdict a ratio's interval allows. The
//! methods are named in every result, so a report can say how it knows (docs/findings.md).
//!
//! Repetitions are separate runs: iterations inside one run share its files and caches and
//! are not independent samples, so callers pass run-level figures only.

/// How an interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Student's t over the samples (few samples: 2 to 9).
    TInterval,
    /// Percentile bootstrap, 2000 resamples, seeded (10 samples or more).
    Bootstrap,
    /// Student's t on the log of the mean (the delta method): for a rate or count whose
    /// t-interval would reach below zero.
    LogT,
}

impl Method {
    /// How the method is named in reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::TInterval => "95% t-interval",
            Method::Bootstrap => "95% bootstrap interval",
            Method::LogT => "95% t-interval on the log scale",
        }
    }
}

/// A value with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The estimate.
    pub value: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// How the bounds were made.
    pub method: Method,
}

/// Samples from which the bootstrap takes over from the t-interval.
pub const BOOTSTRAP_FROM: usize = 10;
const DRAWS: usize = 2000;

/// The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%).
fn t975(df: f64) -> f64 {
    // Exact to 3 decimals at whole degrees of freedom; between them, the next lower one (wider).
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    let whole = df.floor().max(1.0) as usize;
    TABLE.get(whole - 1).copied().unwrap_or(1.960)
}

/// Mean and sample variance (n - 1) of 2 samples or more, from the spread the records use.
fn mean_var(xs: &[f64]) -> Option<(f64, f64)> {
    let s = crate::measure::spread(xs)?;
    Some((s.mean, s.stddev? * s.stddev?))
}

/// A small seeded generator (SplitMix64): the same samples always give the same interval.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }

    fn resample_mean(&mut self, xs: &[f64]) -> f64 {
        (0..xs.len()).map(|_| xs[self.below(xs.len())]).sum::<f64>() / xs.len() as f64
    }
}

/// The 2.5th and 97.5th percentiles of `draws` values of `f`.
fn percentiles(mut f: impl FnMut() -> f64) -> (f64, f64) {
    let mut v: Vec<f64> = (0..DRAWS).map(|_| f()).collect();
    v.sort_by(f64::total_cmp);
    (v[DRAWS / 40], v[DRAWS - 1 - DRAWS / 40])
}

/// The mean of the samples with its 95% interval; `None` for fewer than 2 samples (a single
/// sample has no interval, and a report says it is one). The samples are rates or counts, so
/// the interval never reaches below zero: where Student's t would, it is taken on the log of
/// the mean from 3 samples on, and from 2 there is none ([`unbounded`] says so).
pub fn mean_interval(xs: &[f64]) -> Option<Interval> {
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (m, var) = mean_var(xs)?;
    if xs.len() < BOOTSTRAP_FROM {
        let t = t975(xs.len() as f64 - 1.0);
        let half = t * (var / xs.len() as f64).sqrt();
        if m - half >= 0.0 {
            return Some(Interval { value: m, lo: m - half, hi: m + half, method: Method::TInterval });
        }
        // Two runs this far apart leave the mean anywhere from zero up: no bound is honest.
        if xs.len() < 3 || m <= 0.0 {
            return None;
        }
        let log_half = t * (var / xs.len() as f64).sqrt() / m;
        return Some(Interval { value: m, lo: m * (-log_half).exp(), hi: m * log_half.exp(), method: Method::LogT });
    }
    let mut rng = Rng(xs.len() as u64);
    let (lo, hi) = percentiles(|| rng.resample_mean(xs));
    Some(Interval { value: m, lo, hi, method: Method::Bootstrap })
}

/// Whether samples of a rate are enough for an interval in number but too spread to bound
/// one: 2 runs whose t-interval would reach below zero.
pub fn unbounded(xs: &[f64]) -> bool {
    xs.len() >= 2 && xs.iter().all(|x| x.is_finite()) && mean_interval(xs).is_none()
}

/// What a report says of an interval that cannot be bounded.
pub const UNBOUNDED: &str = "too few runs to bound";

/// The ratio of the means of two independent sets of samples (a / b) with its 95% interval;
/// `None` unless each set has 2 samples or more and a positive mean. Few samples: a t-interval
/// on the log of the ratio (delta method, Welch's degrees of freedom); 10 or more in each:
/// a bootstrap resampling each set on its own.
pub fn ratio_interval(a: &[f64], b: &[f64]) -> Option<Interval> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a)?, mean_var(b)?);
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let ratio = ma / mb;
    if a.len() >= BOOTSTRAP_FROM && b.len() >= BOOTSTRAP_FROM {
        let mut rng = Rng((a.len() * 31 + b.len()) as u64);
        let (lo, hi) = percentiles(|| rng.resample_mean(a) / rng.resample_mean(b).max(f64::MIN_POSITIVE));
        return Some(Interval { value: ratio, lo, hi, method: Method::Bootstrap });
    }
    // Relative variances of the two means, and Welch-Satterthwaite's degrees of freedom.
    let ra = va / (a.len() as f64 * ma * ma);
    let rb = vb / (b.len() as f64 * mb * mb);
    let df = if ra + rb > 0.0 {
        (ra + rb).powi(2) / (ra * ra / (a.len() as f64 - 1.0) + rb * rb / (b.len() as f64 - 1.0))
    } else {
        f64::INFINITY
    };
    let half = t975(df.min(1e9)) * (ra + rb).sqrt();
    Some(Interval { value: ratio, lo: ratio * (-half).exp(), hi: ratio * half.exp(), method: Method::TInterval })
}

/// What a ratio's interval allows one to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The interval lies above 1.
    Higher,
    /// The interval lies below 1.
    Lower,
    /// The interval holds 1: no difference beyond the noise.
    NoDifference,
}

/// The verdict of a ratio's interval.
pub fn verdict(r: &Interval) -> Verdict {
    if r.lo > 1.0 {
        Verdict::Higher
    } else if r.hi < 1.0 {
        Verdict::Lower
    } else {
        Verdict::NoDifference
    }
}

/// One line in the manner of hyperfine: "A is 1.84 ± 0.05 times faster than B" when the
/// interval is symmetric about the ratio ([`spread_text`]), "A is 24.69 (10.57 to 57.69) times
/// faster than B" when it is not, or "no difference beyond the noise".
pub fn sentence(a: &str, b: &str, r: &Interval) -> String {
    match verdict(r) {
        Verdict::Higher => {
            format!("{a} is {} times faster than {b} ({})", spread_text(r.value, r.lo, r.hi), r.method.name())
        }
        Verdict::Lower => {
            // Said from the faster side, with the interval of the inverse ratio.
            let (v, lo, hi) = (1.0 / r.value, 1.0 / r.hi, 1.0 / r.lo);
            format!("{b} is {} times faster than {a} ({})", spread_text(v, lo, hi), r.method.name())
        }
        Verdict::NoDifference => format!(
            "{a} and {b}: no difference beyond the noise (ratio {:.2}, {} {:.2} to {:.2})",
            r.value,
            r.method.name(),
            r.lo,
            r.hi
        ),
    }
}

/// How far from symmetric an interval may be and still be said as ± its half width: its two
/// arms may differ by this share of its width.
pub const SYMMETRIC: f64 = 0.05;

/// A value with its interval as it is: "2.01 ± 0.04" when the interval is symmetric about the
/// value (within [`SYMMETRIC`]), else "24.69 (10.57 to 57.69)", low to high.
pub fn spread_text(value: f64, lo: f64, hi: f64) -> String {
    format!("{value:.2} {}", around(value, lo, hi, 2))
}

/// An interval about `value` with `decimals` decimals: "± 0.04" when it is symmetric (within
/// [`SYMMETRIC`] of its width), else "(10.57 to 57.69)"; a width that rounds to nothing is
/// said by its ends too, never as "± 0.00".
pub fn around(value: f64, lo: f64, hi: f64, decimals: usize) -> String {
    let width = hi - lo;
    let shown = format!("{:.decimals$}", width / 2.0);
    let nothing = shown.trim_start_matches(['0', '.']).is_empty();
    if ((hi - value) - (value - lo)).abs() <= SYMMETRIC * width && !nothing {
        format!("± {shown}")
    } else {
        let places = if nothing { decimals + 3 } else { decimals };
        format!("({lo:.places$} to {hi:.places$})")
    }
}

/// What a drop between two sets of samples rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Each side has two samples or more, and every sample before the drop exceeds every
    /// sample after it: the drop is larger than the spread of either side.
    Stands {
        /// Samples on the side before the drop.
        before: usize,
        /// Samples on the side after it.
        after: usize,
    },
    /// One side has a single sample: the drop may be that sample's noise.
    Single,
}

/// What a drop from `before` to `after` rests on; `None` when both sides have several samples
/// and they overlap, a drop within the noise, which is no finding.
pub fn support(before: &[f64], after: &[f64]) -> Option<Support> {
    if before.len() < 2 || after.len() < 2 {
        return Some(Support::Single);
    }
    let lowest = before.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = after.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lowest > highest).then_some(Support::Stands { before: before.len(), after: after.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_of_a_rate_never_reaches_below_zero() {
        // Two runs far apart: Student's t would say -2239.6 to 5552.7; no bound is given.
        let two = [1000.0, 2312.0];
        assert!(mean_interval(&two).is_none() && unbounded(&two));
        assert!(!unbounded(&[5.0]) && !unbounded(&[100.0, 101.0]));
        // Three runs far apart: on the log scale, around the mean, above zero.
        let three = [100.0, 900.0, 2000.0];
        let iv = mean_interval(&three).unwrap();
        assert_eq!(iv.method, Method::LogT);
        assert!(iv.lo > 0.0 && iv.lo < iv.value && iv.hi > iv.value, "{iv:?}");
        assert!(((iv.value / iv.lo) - (iv.hi / iv.value)).abs() < 1e-9, "symmetric on the log scale");
        // Close runs keep the plain t-interval.
        assert_eq!(mean_interval(&[100.0, 101.0, 102.0]).unwrap().method, Method::TInterval);
        // Many runs: the bootstrap's means of resamples are never below the lowest run.
        let many: Vec<f64> = (0..12).map(|k| if k % 2 == 0 { 1.0 } else { 1000.0 }).collect();
        assert!(mean_interval(&many).unwrap().lo >= 1.0);
    }

    #[test]
    fn an_interval_is_said_as_plus_or_minus_only_when_it_is_symmetric() {
        assert_eq!(spread_text(2.01, 1.97, 2.05), "2.01 ± 0.04");
        assert_eq!(spread_text(24.69, 10.57, 57.69), "24.69 (10.57 to 57.69)");
        assert_eq!(spread_text(1.726, 1.723, 1.730), "1.73 (1.72300 to 1.73000)", "never ± 0.00");
        assert_eq!(around(5180.8, 5144.5, 5225.6, 1), "(5144.5 to 5225.6)", "arms of 36.3 and 44.8");
        let skewed = Interval { value: 24.69, lo: 10.57, hi: 57.69, method: Method::Bootstrap };
        assert_eq!(
            sentence("a", "b", &skewed),
            "a is 24.69 (10.57 to 57.69) times faster than b (95% bootstrap interval)"
        );
        // The inverse of a symmetric ratio interval is not symmetric: said by its ends.
        let slower = Interval { value: 0.5, lo: 0.25, hi: 0.75, method: Method::TInterval };
        assert!(
            sentence("a", "b", &slower).starts_with("b is 2.00 (1.33 to 4.00) times faster than a"),
            "{}",
            sentence("a", "b", &slower)
        );
    }

    #[test]
    fn a_t_interval_of_few_samples_matches_the_hand_computation() {
        // 10, 12, 14: mean 12, s = 2, se = 2/sqrt(3), t(2) = 4.303.
        let i = mean_interval(&[10.0, 12.0, 14.0]).unwrap();
        let half = 4.303 * 2.0 / 3f64.sqrt();
        assert_eq!(i.method, Method::TInterval);
        assert!(
            (i.value - 12.0).abs() < 1e-12
                && (i.lo - (12.0 - half)).abs() < 1e-9
                && (i.hi - (12.0 + half)).abs() < 1e-9
        );
        assert!(mean_interval(&[5.0]).is_none(), "a single sample has no interval");
        assert!(mean_interval(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn ten_samples_or_more_are_bootstrapped_and_hold_the_mean() {
        let xs: Vec<f64> = (0..12).map(|i| 100.0 + i as f64).collect();
        let i = mean_interval(&xs).unwrap();
        assert_eq!(i.method, Method::Bootstrap);
        assert!(i.lo < i.value && i.value < i.hi, "{i:?}");
        // Narrower than the range of the samples, wider than nothing.
        assert!(i.lo > 100.0 && i.hi < 111.0 && i.hi - i.lo > 1.0, "{i:?}");
        assert_eq!(mean_interval(&xs), Some(i), "seeded: the same samples, the same interval");
    }

    #[test]
    fn ratios_say_faster_slower_or_no_difference() {
        let fast = [200.0, 204.0, 198.0];
        let slow = [100.0, 101.0, 99.0];
        let r = ratio_interval(&fast, &slow).unwrap();
        assert!((r.value - 2.0066).abs() < 1e-3 && r.lo > 1.9 && r.hi < 2.12, "{r:?}");
        assert_eq!(verdict(&r), Verdict::Higher);
        assert!(sentence("A", "B", &r).starts_with("A is 2.01 ± 0.0"), "{}", sentence("A", "B", &r));
        let back = ratio_interval(&slow, &fast).unwrap();
        assert_eq!(verdict(&back), Verdict::Lower);
        assert!(sentence("B", "A", &back).starts_with("A is 2.01 ± "), "{}", sentence("B", "A", &back));
        // Overlapping noisy samples: the interval holds 1.
        let r = ratio_interval(&[100.0, 130.0, 90.0], &[110.0, 95.0, 120.0]).unwrap();
        assert_eq!(verdict(&r), Verdict::NoDifference);
        assert!(sentence("A", "B", &r).contains("no difference beyond the noise"));
        assert!(ratio_interval(&[1.0], &[1.0, 2.0]).is_none(), "one run is not a repetition");
        assert!(ratio_interval(&[0.0, 0.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn a_ratio_of_few_runs_takes_welchs_degrees_of_freedom_rounded_down() {
        // The example of docs/findings.md: relative variances ra = 9.333 / (3 x 200.667^2),
        // rb = 1 / (3 x 100^2); Welch's df = (ra + rb)^2 / (ra^2 / 2 + rb^2 / 2) = 3.45, so t(3)
        // = 3.182 (t(4) = 2.776 would give 1.9489 to 2.0661).
        let r = ratio_interval(&[200.0, 204.0, 198.0], &[100.0, 101.0, 99.0]).unwrap();
        assert_eq!(r.method, Method::TInterval);
        assert!((r.lo - 1.94063).abs() < 1e-5 && (r.hi - 2.07495).abs() < 1e-5, "{r:?}");
    }

    #[test]
    fn identical_samples_give_an_interval_of_no_width() {
        let r = ratio_interval(&[3.0, 3.0], &[1.5, 1.5]).unwrap();
        assert_eq!((r.value, r.lo, r.hi), (2.0, 2.0, 2.0));
        assert!(
            (t975(1.0) - 12.706).abs() < 1e-9 && (t975(100.0) - 1.96).abs() < 1e-9 && (t975(2.5) - 4.303).abs() < 1e-9
        );
    }
}
