//! What keeps a finding from saying more than its runs measured (docs/findings.md, "Findings
//! guarded"): a figure from a phase shorter than [`BRIEF_PHASE_SECS`] is no ground for a peak,
//! a scaling step or a cliff (it times start-up and the clock as much as the storage), and is
//! listed as too short to measure with what would make it long enough.

use super::BRIEF_PHASE_SECS;
use crate::record::RunRecord;
use crate::spec::Op;

/// A scaling step faster than linear by more than this (per doubling of clients) is no longer
/// read as scaling: more clients cannot more than double a storage system's rate, while data
/// that came to fit in the clients' (or servers') caches can.
pub const SUPERLINEAR: f64 = 1.2;

/// The shortest phase of `op` in run `r`, in seconds; `None` when it has none or its times are
/// not known (an imported run that gave no phase time).
pub fn shortest(r: &RunRecord, op: Op) -> Option<f64> {
    r.phases
        .iter()
        .filter(|p| p.op == op && p.figures.window_ns > 0)
        .map(|p| p.figures.window_ns as f64 / 1e9)
        .min_by(f64::total_cmp)
}

/// Whether run `r`'s figure of `op` rests on a phase too brief to measure.
pub fn too_brief(r: &RunRecord, op: Op) -> bool {
    shortest(r, op).is_some_and(|secs| secs < BRIEF_PHASE_SECS)
}

/// What would make run `r`'s phase of `secs` last the second a figure needs: a stonewalled
/// phase a longer stonewall, a data phase a size grown by the time it fell short (at least
/// twice), a metadata phase more items per task in the same proportion.
pub fn fix(r: &RunRecord, secs: f64) -> String {
    let factor = ((BRIEF_PHASE_SECS / secs.max(1e-9)).ceil() as u64).max(2);
    if let Some(meta) = r.workload.meta() {
        return format!("{} items per task or more", meta.items.saturating_mul(factor));
    }
    match r.workload.stonewall_secs {
        Some(wall) if secs >= 0.9 * wall => format!("--random-secs {BRIEF_PHASE_SECS} or more"),
        _ => {
            format!("--size {} or more", crate::units::format_size(r.workload.bytes_per_phase().saturating_mul(factor)))
        }
    }
}

/// Runs of one target and op whose phases were too brief to measure: what they are, at which
/// client counts, the shortest phase and what would make it last.
#[derive(Debug, Clone, PartialEq)]
pub struct TooShort {
    /// The target and op ("lustre read").
    pub what: String,
    /// The client counts of the brief runs.
    pub clients: Vec<usize>,
    /// The shortest phase, in seconds.
    pub secs: f64,
    /// What would make it last ("--size 64 MiB or more").
    pub fix: String,
}

impl TooShort {
    /// The client counts as a reader counts them: "1 client", "1, 2 clients".
    pub fn at(&self) -> String {
        let at: Vec<String> = self.clients.iter().map(usize::to_string).collect();
        format!("{} client{}", at.join(", "), if self.clients == [1] { "" } else { "s" })
    }

    /// The sentence of a finding.
    pub fn said(&self) -> String {
        format!(
            "{}: too short to measure at {} (a phase ran {}, under the {BRIEF_PHASE_SECS} s a figure needs): no peak or scaling is read from it; {} would make it last",
            self.what,
            self.at(),
            duration(self.secs),
            self.fix
        )
    }

    /// As a finding, resting on the brief runs among `runs`.
    pub fn finding(self, runs: &[&RunRecord], op: Op) -> super::Finding {
        super::Finding {
            text: self.said(),
            value: 0.0,
            runs: runs.iter().filter(|r| too_brief(r, op)).filter_map(|r| r.id).collect(),
            too_short: Some(self),
        }
    }
}

/// The runs of `what` (a label and op) whose `op` phases were too brief, by client count,
/// with the shortest phase and its fix; `None` when every run was long enough.
pub fn too_short(what: &str, runs: &[&RunRecord], op: Op) -> Option<TooShort> {
    let brief: Vec<(&RunRecord, f64)> =
        runs.iter().filter_map(|r| Some((*r, shortest(r, op).filter(|s| *s < BRIEF_PHASE_SECS)?))).collect();
    let (worst, secs) = brief.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let mut clients: Vec<usize> = brief.iter().map(|(r, _)| r.workload.tasks).collect();
    clients.sort_unstable();
    clients.dedup();
    Some(TooShort { what: what.to_string(), clients, secs, fix: fix(worst, secs) })
}

/// A brief duration as it reads: "0.008 s", or "40 us" under a millisecond (never "0.000 s").
pub fn duration(secs: f64) -> String {
    match secs < 1e-3 {
        true => format!("{:.0} us", secs * 1e6),
        false => format!("{secs:.3} s"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::fixtures;

    /// A run of `tasks` clients at `mib_s` per op whose phases each last `secs`.
    pub(crate) fn timed(id: i64, tasks: usize, mib_s: f64, secs: f64) -> RunRecord {
        let mut r = fixtures::run(None);
        r.id = Some(id);
        r.workload.tasks = tasks;
        for p in &mut r.phases {
            p.figures.bandwidth = Some(mib_s * 1048576.0);
            p.figures.window_ns = (secs * 1e9) as u64;
            p.possibly_cached = None;
        }
        r
    }

    #[test]
    fn a_phase_under_a_second_is_too_short_with_the_size_that_would_fix_it() {
        let runs = [timed(1, 1, 100.0, 0.008), timed(2, 2, 863.0, 0.008), timed(3, 4, 400.0, 2.0)];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        assert!(too_brief(&runs[0], Op::Read) && !too_brief(&runs[2], Op::Read));
        let line = too_short("lustre read", &refs, Op::Read).unwrap().said();
        assert!(line.starts_with("lustre read: too short to measure at 1, 2 clients (a phase ran 0.008 s"), "{line}");
        // 0.008 s: 125 times the size makes it last the second.
        let need = crate::units::format_size(runs[0].workload.bytes_per_phase() * 125);
        assert!(line.ends_with(&format!("--size {need} or more would make it last")), "{line}");
        assert!(too_short("x", &refs[2..], Op::Read).is_none());
        assert_eq!((duration(0.008), duration(0.000_04)), ("0.008 s".into(), "40 us".into()));
    }

    #[test]
    fn a_phase_of_eight_milliseconds_gives_no_scaling_or_peak_finding() {
        let mut runs: Vec<RunRecord> =
            (1..=3).map(|k| timed(k, 1 << (k - 1), 100.0 * (1 << (k - 1)) as f64, 2.0)).collect();
        // The reads of 1 and 2 clients took 8 ms.
        for r in &mut runs[..2] {
            r.phases.iter_mut().filter(|p| p.op == Op::Read).for_each(|p| p.figures.window_ns = 8_000_000);
        }
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let read = super::super::scaled("lustre read", &refs, Op::Read, false);
        let texts: Vec<&str> = read.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts.len(), 1, "no peak or scaling from one long point and two brief: {texts:?}");
        assert!(texts[0].starts_with("lustre read: too short to measure at 1, 2 clients"), "{texts:?}");
        assert_eq!(read[0].runs, [1, 2]);
        let write = super::super::scaled("lustre write", &refs, Op::Write, false);
        assert!(write[0].text.starts_with("lustre write peaks at 400.0 MiB/s with 4 clients"), "{write:?}");
        assert!(write.iter().all(|f| !f.text.contains("too short")));
    }
}
