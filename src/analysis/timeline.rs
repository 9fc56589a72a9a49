//! A run's time line around its events (docs/methodology.md, "Events"): the rate before the
//! first event, during the disturbance (from the first event to recovery) and after it, and
//! how long after the last event the rate came back: within 10% of the rate before, for 3
//! intervals in a row. Only whole intervals count: the last interval of a phase is partial.

use super::{Cell, Finding, Table};
use crate::record::{PhaseRecord, RunRecord};
use crate::units::format_duration;

/// How near the rate before a rate must be to count as recovered.
pub const BAND: f64 = 0.10;
/// How many intervals in a row must be within the band.
pub const SETTLED: usize = 3;

/// What the time line of one phase says around its events.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The phase the first event fell in ("read 1").
    pub phase: String,
    /// Where the phase's time series starts, ns on the team clock.
    pub origin_ns: u64,
    /// Seconds into the phase of the first and the last event.
    pub first_event: f64,
    /// See `first_event`.
    pub last_event: f64,
    /// Width of an interval, seconds.
    pub width: f64,
    /// Mean rate and whole intervals before the first event.
    pub before: (f64, usize),
    /// From the first event's interval to recovery (or the end).
    pub during: Option<(f64, usize)>,
    /// From recovery to the end.
    pub after: Option<(f64, usize)>,
    /// The first interval after the first event outside the band, seconds into the phase.
    pub dropped_at: Option<f64>,
    /// Where the recovered intervals start, seconds into the phase.
    pub recovered_at: Option<f64>,
}

impl Timeline {
    /// Seconds from the last event to recovery.
    pub fn recovery_secs(&self) -> Option<f64> {
        self.recovered_at.map(|at| (at - self.last_event).max(0.0))
    }
}

/// The rates of a phase's whole intervals, MiB/s (items/s for metadata), from its series.
fn whole_rates(p: &PhaseRecord, meta: bool) -> Vec<f64> {
    let width = p.series.interval_ns as f64 / 1e9;
    let counts = if meta { &p.series.ops } else { &p.series.bytes };
    let scale = if meta { 1.0 } else { 1.0 / 1048576.0 };
    let whole = counts.len().saturating_sub(1);
    counts[..whole].iter().map(|&n| n as f64 * scale / width).collect()
}

fn mean(v: &[f64]) -> Option<(f64, usize)> {
    (!v.is_empty()).then(|| (v.iter().sum::<f64>() / v.len() as f64, v.len()))
}

/// The time line of the run around its events that ran and succeeded, in the phase the first
/// one fell in.
pub fn of(r: &RunRecord) -> Option<Timeline> {
    // An event whose command failed is said in the run's warnings; it marks no disturbance.
    // One still running when the run ended, and ended then, did what it was meant to.
    let starts: Vec<u64> = r
        .events
        .iter()
        .filter(|e| e.ran.as_ref().is_none_or(|ran| ran.ok() || ran.stopped))
        .filter_map(|e| e.started_ns)
        .collect();
    let &first = starts.iter().min()?;
    let p = r
        .phases
        .iter()
        .filter(|p| p.series.interval_ns > 0 && p.series.origin_ns <= first)
        .min_by_key(|p| first - p.series.origin_ns)?;
    // Only the events within that phase: a later phase's time line starts afresh.
    let end = p.series.origin_ns + p.series.interval_ns * p.series.bytes.len() as u64;
    let &last = starts.iter().filter(|&&t| t < end).max()?;
    let width = p.series.interval_ns as f64 / 1e9;
    let at = |t: u64| t.saturating_sub(p.series.origin_ns) as f64 / 1e9;
    let rates = whole_rates(p, r.workload.meta().is_some());
    let (first_event, last_event) = (at(first), at(last));
    // An interval counts as before an event when at most a tenth of it lies after the event,
    // and as after it when at most a tenth lies before: events land a few microseconds off
    // the boundaries they are asked at.
    let slack = 0.1 * width;
    let f = (((first_event + slack) / width).floor() as usize).min(rates.len());
    let after_last = (((last_event - slack) / width).ceil().max(0.0) as usize).min(rates.len());
    let before = mean(&rates[..f])?;
    if f >= rates.len() {
        // No whole interval after the event: nothing to say of it.
        return None;
    }
    let within = |x: f64| (x - before.0).abs() <= BAND * before.0;
    let dropped = (f..rates.len()).find(|&i| !within(rates[i]));
    let recovered = dropped.and_then(|d| {
        let from = (d + 1).max(after_last);
        (from..rates.len().saturating_sub(SETTLED - 1)).find(|&i| rates[i..i + SETTLED].iter().all(|&x| within(x)))
    });
    let end = recovered.unwrap_or(rates.len());
    Some(Timeline {
        phase: format!("{} {}", p.op.name(), p.iteration + 1),
        origin_ns: p.series.origin_ns,
        first_event,
        last_event,
        width,
        before,
        during: dropped.and_then(|_| mean(&rates[f..end])),
        after: recovered.and_then(|i| mean(&rates[i..])),
        dropped_at: dropped.map(|i| i as f64 * width),
        recovered_at: recovered.map(|i| i as f64 * width),
    })
}

/// The time line as a table and its findings, for `show` and the report.
pub fn tables(r: &RunRecord, t: &Timeline) -> (Table, Vec<Finding>) {
    let unit = if r.workload.meta().is_some() { "items/s" } else { "MiB/s" };
    let runs: Vec<i64> = r.id.into_iter().collect();
    let mut table = Table::new(
        format!("{} around its events ({unit}, intervals of {} s)", t.phase, t.width),
        &["part", "from s", "to s", "intervals", unit, "% of before"],
    );
    let row = |name: &str, from: f64, to: Option<f64>, (rate, n): (f64, usize)| {
        vec![
            Cell::text(name),
            Cell::num(Some(from), 1),
            Cell::num(to, 1),
            Cell::Int(n as u64),
            Cell::num(Some(rate), 1),
            Cell::num(Some(100.0 * rate / t.before.0), 0),
        ]
    };
    table.rows.push(row("before", 0.0, Some(t.first_event), t.before));
    let from = ((t.first_event + 0.1 * t.width) / t.width).floor() * t.width;
    if let Some(d) = t.during {
        table.rows.push(row("during", from, t.recovered_at, d));
    }
    if let (Some(a), Some(at)) = (t.after, t.recovered_at) {
        table.rows.push(row("after", at, None, a));
    }
    let few = |n: usize| if n == 1 { " (a single interval)".to_string() } else { format!(" ({n} intervals)") };
    let mut findings = Vec::new();
    let before = format!("{:.1} {unit}{}", t.before.0, few(t.before.1));
    match (t.during, t.recovered_at) {
        (None, _) => findings.push(Finding {
            text: format!(
                "{}: after the event at {} the rate stayed within {:.0}% of the {before} before it",
                t.phase,
                format_duration(t.first_event),
                BAND * 100.0
            ),
            value: t.before.0,
            runs,
            ..Default::default()
        }),
        (Some(d), recovered) => {
            let share = 100.0 * d.0 / t.before.0;
            let ending = match (recovered, t.after) {
                (Some(_), Some(a)) => format!(
                    "; it was back within {:.0}% for {SETTLED} intervals {} after the last event, at {:.1} {unit}{} after",
                    BAND * 100.0,
                    format_duration(t.recovery_secs().unwrap_or(0.0)),
                    a.0,
                    few(a.1)
                ),
                _ => "; not recovered within the run".to_string(),
            };
            findings.push(Finding {
                text: format!(
                    "{}: from {before} before the event at {}, the rate fell to {:.1} {unit}{} during, {share:.0}% of before{ending}",
                    t.phase,
                    format_duration(t.first_event),
                    d.0,
                    few(d.1)
                ),
                value: share,
                runs,
                ..Default::default()
            });
        }
    }
    (table, findings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::EventRun;

    /// A run whose read phase moved `mib[i]` MiB in interval i of 1 s (then a partial one),
    /// with events at `events` seconds.
    fn run(mib: &[u64], events: &[f64]) -> RunRecord {
        let mut r = crate::record::fixtures::run(None);
        r.phases.truncate(1);
        let p = &mut r.phases[0];
        p.series.origin_ns = 1_000_000_000;
        p.series.interval_ns = 1_000_000_000;
        p.series.bytes = mib.iter().map(|m| m << 20).chain([1]).collect();
        r.events = events
            .iter()
            .map(|&at| EventRun {
                at_secs: at,
                started_ns: Some(1_000_000_000 + (at * 1e9) as u64),
                ran: None,
                command: "x".into(),
            })
            .collect();
        r
    }

    #[test]
    fn a_throttle_and_its_lift_give_before_during_after_and_the_recovery() {
        let r = run(&[100, 100, 25, 25, 25, 100, 100, 100, 100], &[2.0, 5.0]);
        let t = of(&r).unwrap();
        assert_eq!(t.before, (100.0, 2));
        assert_eq!(t.during, Some((25.0, 3)));
        assert_eq!(t.after, Some((100.0, 4)));
        assert_eq!(t.dropped_at, Some(2.0));
        assert_eq!(t.recovered_at, Some(5.0), "the lift's interval, begun as the lift ran, counts");
        assert_eq!(t.recovery_secs(), Some(0.0));
        // A lift half way into an interval: that interval is not after it.
        let late = run(&[100, 100, 25, 25, 25, 60, 100, 100, 100, 100], &[2.0, 5.5]);
        assert_eq!(of(&late).unwrap().recovered_at, Some(6.0));
        assert_eq!(of(&late).unwrap().recovery_secs(), Some(0.5));
        let (_, findings) = tables(&r, &of(&r).unwrap());
        assert!(
            findings[0].text.contains("fell to 25.0 MiB/s (3 intervals) during, 25% of before"),
            "{}",
            findings[0].text
        );
    }

    #[test]
    fn no_recovery_no_drop_and_nothing_before_are_said_as_such() {
        let r = run(&[100, 100, 40, 40, 40, 95], &[2.0]);
        let t = of(&r).unwrap();
        assert_eq!(t.recovered_at, None);
        assert_eq!(t.during, Some(((40.0 * 3.0 + 95.0) / 4.0, 4)));
        assert!(tables(&r, &of(&r).unwrap()).1[0].text.ends_with("not recovered within the run"));
        // A rate that never leaves the band: no during, no after.
        let flat = run(&[100, 100, 95, 105, 100], &[2.0]);
        let t = of(&flat).unwrap();
        assert_eq!((t.during, t.after), (None, None));
        assert!(tables(&flat, &of(&flat).unwrap()).1[0].text.contains("stayed within 10%"));
        // Two intervals back within the band are not yet three.
        let short = run(&[100, 100, 10, 100, 100], &[2.0]);
        assert_eq!(of(&short).unwrap().recovered_at, None);
        // An event before the first whole interval leaves no rate before it.
        assert_eq!(of(&run(&[100, 100], &[0.5])), None);
        // One in the last, partial interval leaves no whole interval after it.
        assert_eq!(of(&run(&[100, 100], &[2.2])), None);
        // An event past the phase's end counts in none of its intervals.
        let later = run(&[100, 100, 25, 25, 100, 100, 100], &[2.0, 50.0]);
        assert_eq!(of(&later).unwrap().recovered_at, Some(4.0));
        // No event that ran: no time line.
        let mut none = run(&[100, 100, 100], &[1.0]);
        none.events[0].started_ns = None;
        assert_eq!(of(&none), None);
    }
}
