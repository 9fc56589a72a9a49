//! Other tools' output layouts, filled from iosurvey's records: IOR's results table, its
//! summary and its JSON and CSV forms; mdtest's SUMMARY table; IOzone's report, its `-R`
//! tables and its throughput lines. Scripts that parse those tools' output parse these; how
//! each figure is taken from a record is in docs/methodology.md, "Other tools' command lines".

pub mod ior;
pub mod iozone;
pub mod mdtest;

/// Unix seconds as C's ctime() writes them, in UTC: "Tue Nov 24 22:56:20 2026".
pub fn ctime(unix: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    // format_time gives "YYYY-MM-DD HH:MM:SS UTC".
    let text = crate::units::format_time(unix);
    let field = |a: usize, b: usize| text.get(a..b).unwrap_or("0").parse::<usize>().unwrap_or(0);
    let weekday = DAYS[unix.div_euclid(86_400).rem_euclid(7) as usize];
    let month = MONTHS[field(5, 7).clamp(1, 12) - 1];
    format!("{weekday} {month} {:>2} {} {}", field(8, 10), text.get(11..19).unwrap_or(""), field(0, 4))
}

/// When a run ended, Unix seconds: its start and its phases' windows (what the layouts print
/// as "Finished").
pub fn finished(r: &crate::record::RunRecord) -> i64 {
    r.started + (r.phases.iter().map(|p| p.figures.window_ns).sum::<u64>() / 1_000_000_000) as i64
}

/// Max, min, mean and standard deviation of `values` (population: over the values given, as
/// IOR's summary takes it; `sample` divides by n - 1, as mdtest's does).
pub fn spread(values: &[f64], sample: bool) -> (f64, f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let squares: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    let divisor = if sample { n - 1.0 } else { n };
    let sd = if divisor > 0.0 { (squares / divisor).sqrt() } else { 0.0 };
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    (max, min, mean, sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_writes_the_day_as_c_does() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_795_392_000 + 86_400 + 22 * 3600 + 56 * 60 + 20), "Tue Nov 24 22:56:20 2026");
    }

    #[test]
    fn spread_is_population_or_sample_as_asked() {
        let (max, min, mean, sd) = spread(&[1927.70, 1712.70], false);
        assert_eq!((max, min), (1927.70, 1712.70));
        assert!((mean - 1820.20).abs() < 1e-9 && (sd - 107.50).abs() < 1e-9);
        assert!((spread(&[1.0, 3.0], true).3 - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(spread(&[5.0], true).3, 0.0);
    }
}
