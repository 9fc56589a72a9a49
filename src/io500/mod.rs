//! The IO500 suite's definition and scoring: the phases of the standard list in their order,
//! the shape each phase runs, the score and the validity rules, and the layout IO500 users
//! know (`[RESULT]` lines and the `[SCORE ]` line). Running the phases is the workloads'
//! business; this module says what to run and what the numbers add up to.
//!
//! The rules follow the IO500 reference (io500 `main.c`, `phase_*.c`): bandwidth = geometric
//! mean of the four IOR phases in GiB/s (2^30 bytes), metadata = geometric mean of the eight
//! metadata phases (find among them) in kIOPS (1000 operations per second), total = the square
//! root of their product. A phase scoring 0 or less is left out of its mean, as the reference
//! does, and marks the phase invalid. Extended and unscored phases (ior-rnd4K, mdworkbench)
//! are not part of it.

pub mod plan;

/// One phase of the standard list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// ior-easy write: a file per task, 2 MiB transfers, under the stonewall.
    IorEasyWrite,
    /// mdtest-easy create: a directory per task, empty files, under the stonewall.
    MdtestEasyWrite,
    /// The timestamp file find compares against (not scored).
    Timestamp,
    /// ior-hard write: one shared file, 47008-byte transfers and blocks, under the stonewall.
    IorHardWrite,
    /// mdtest-hard create: one shared directory, 3901-byte files, under the stonewall.
    MdtestHardWrite,
    /// find: files newer than the timestamp, of 3901 bytes, with "01" in the name.
    Find,
    /// ior-easy read.
    IorEasyRead,
    /// mdtest-easy stat.
    MdtestEasyStat,
    /// ior-hard read.
    IorHardRead,
    /// mdtest-hard stat.
    MdtestHardStat,
    /// mdtest-easy delete.
    MdtestEasyDelete,
    /// mdtest-hard read.
    MdtestHardRead,
    /// mdtest-hard delete.
    MdtestHardDelete,
}

/// Which score a phase counts towards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// GiB/s, into the bandwidth score.
    Bandwidth,
    /// kIOPS, into the metadata score.
    Metadata,
    /// Not scored (the timestamp).
    None,
}

/// Bytes per transfer and per block of ior-hard (and per file of mdtest-hard): deliberately
/// not a multiple of any page or stripe size.
pub const HARD_BYTES: u64 = 47008;
/// Bytes each mdtest-hard file is written and read with; find looks for files of this size.
pub const MDTEST_HARD_FILE: u64 = 3901;
/// Transfer size of ior-easy.
pub const EASY_TRANSFER: u64 = 2 << 20;
/// What find's names must contain.
pub const FIND_NAME_PART: &str = "01";
/// The stonewall of the write phases, seconds, unless told otherwise.
pub const STONEWALL_SECS: f64 = 300.0;

impl Phase {
    /// The standard list, in the order it runs.
    pub const ALL: [Phase; 13] = [
        Phase::IorEasyWrite,
        Phase::MdtestEasyWrite,
        Phase::Timestamp,
        Phase::IorHardWrite,
        Phase::MdtestHardWrite,
        Phase::Find,
        Phase::IorEasyRead,
        Phase::MdtestEasyStat,
        Phase::IorHardRead,
        Phase::MdtestHardStat,
        Phase::MdtestEasyDelete,
        Phase::MdtestHardRead,
        Phase::MdtestHardDelete,
    ];

    /// The phase's name in IO500's output.
    pub fn name(self) -> &'static str {
        match self {
            Phase::IorEasyWrite => "ior-easy-write",
            Phase::MdtestEasyWrite => "mdtest-easy-write",
            Phase::Timestamp => "timestamp",
            Phase::IorHardWrite => "ior-hard-write",
            Phase::MdtestHardWrite => "mdtest-hard-write",
            Phase::Find => "find",
            Phase::IorEasyRead => "ior-easy-read",
            Phase::MdtestEasyStat => "mdtest-easy-stat",
            Phase::IorHardRead => "ior-hard-read",
            Phase::MdtestHardStat => "mdtest-hard-stat",
            Phase::MdtestEasyDelete => "mdtest-easy-delete",
            Phase::MdtestHardRead => "mdtest-hard-read",
            Phase::MdtestHardDelete => "mdtest-hard-delete",
        }
    }

    /// The score it counts towards.
    pub fn group(self) -> Group {
        match self {
            Phase::Timestamp => Group::None,
            Phase::IorEasyWrite | Phase::IorHardWrite | Phase::IorEasyRead | Phase::IorHardRead => Group::Bandwidth,
            _ => Group::Metadata,
        }
    }

    /// Whether the phase writes under the stonewall, and so must run at least that long.
    pub fn stonewalled(self) -> bool {
        matches!(self, Phase::IorEasyWrite | Phase::MdtestEasyWrite | Phase::IorHardWrite | Phase::MdtestHardWrite)
    }
}

/// One phase's outcome: its score (GiB/s or kIOPS), its wall time around the whole phase,
/// and why it is not valid for submission, if it is not.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseScore {
    /// Which phase.
    pub phase: Phase,
    /// GiB/s for IOR phases, kIOPS for the others (0 for the timestamp).
    pub score: f64,
    /// Seconds, around the whole phase.
    pub seconds: f64,
    /// Why the phase breaks a rule (empty: valid).
    pub invalid: Vec<String>,
}

/// The three scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// Geometric mean of the IOR phases, GiB/s.
    pub bandwidth: f64,
    /// Geometric mean of the metadata phases, kIOPS.
    pub metadata: f64,
    /// sqrt(bandwidth x metadata).
    pub total: f64,
}

/// The geometric mean of the positive values (0 without any).
fn geometric_mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum_ln, n) = values.filter(|v| *v > 0.0).fold((0.0, 0u32), |(s, n), v| (s + v.ln(), n + 1));
    if n == 0 {
        0.0
    } else {
        (sum_ln / n as f64).exp()
    }
}

/// The scores of a run's phases.
pub fn score(phases: &[PhaseScore]) -> Score {
    let of = |g: Group| geometric_mean(phases.iter().filter(|p| p.phase.group() == g).map(|p| p.score));
    let (bandwidth, metadata) = (of(Group::Bandwidth), of(Group::Metadata));
    Score { bandwidth, metadata, total: (bandwidth * metadata).sqrt() }
}

/// Marks each phase that breaks a rule: a write phase shorter than the stonewall, a
/// stonewall other than 300 s, a scored phase with no score, a find that matched nothing.
/// `found` is find's count of matching files.
pub fn validate(phases: &mut [PhaseScore], stonewall_secs: f64, found: u64) {
    for p in phases.iter_mut() {
        if p.phase.stonewalled() {
            if p.seconds < stonewall_secs {
                p.invalid.push(format!("ran {:.3} s, below the stonewall of {stonewall_secs} s", p.seconds));
            }
            if stonewall_secs != STONEWALL_SECS {
                p.invalid.push(format!("the stonewall is {stonewall_secs} s, not {STONEWALL_SECS} s"));
            }
        }
        if p.phase.group() != Group::None && p.score <= 0.0 {
            p.invalid.push("no score".into());
        }
        if p.phase == Phase::Find && found == 0 {
            p.invalid.push("find matched no file".into());
        }
    }
}

/// A phase's line, in IO500's layout.
pub fn result_line(p: &PhaseScore) -> String {
    let tag = if p.phase.group() == Group::None { "[      ]" } else { "[RESULT]" };
    let unit = if p.phase.group() == Group::Bandwidth { "GiB/s" } else { "kIOPS" };
    let invalid = if p.invalid.is_empty() { "" } else { " [INVALID]" };
    format!("{tag} {:>20} {:>15.6} {unit} : time {:.3} seconds{invalid}", p.phase.name(), p.score, p.seconds)
}

/// The score line, in IO500's layout; `[INVALID]` when any phase is.
pub fn score_line(s: &Score, valid: bool) -> String {
    format!(
        "[SCORE ] Bandwidth {:.6} GiB/s : IOPS {:.6} kiops : TOTAL {:.6}{}",
        s.bandwidth,
        s.metadata,
        s.total,
        if valid { "" } else { " [INVALID]" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phases(score_of: impl Fn(Phase) -> f64) -> Vec<PhaseScore> {
        Phase::ALL
            .into_iter()
            .map(|phase| PhaseScore { phase, score: score_of(phase), seconds: 301.0, invalid: Vec::new() })
            .collect()
    }

    #[test]
    fn the_standard_list_has_its_order_and_groups() {
        let names: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(
            names[..6],
            ["ior-easy-write", "mdtest-easy-write", "timestamp", "ior-hard-write", "mdtest-hard-write", "find"]
        );
        assert_eq!(names[12], "mdtest-hard-delete");
        let count = |g: Group| Phase::ALL.iter().filter(|p| p.group() == g).count();
        assert_eq!((count(Group::Bandwidth), count(Group::Metadata), count(Group::None)), (4, 8, 1));
        assert_eq!(Phase::ALL.iter().filter(|p| p.stonewalled()).count(), 4);
    }

    #[test]
    fn scores_are_geometric_means_and_their_root() {
        // Bandwidth phases of 1, 2, 4 and 8 GiB/s: their geometric mean is 64^(1/4).
        let bw = [
            (Phase::IorEasyWrite, 1.0),
            (Phase::IorHardWrite, 2.0),
            (Phase::IorEasyRead, 4.0),
            (Phase::IorHardRead, 8.0),
        ];
        let ps = phases(|p| bw.iter().find(|(q, _)| *q == p).map_or(10.0, |(_, s)| *s));
        let s = score(&ps);
        assert!((s.bandwidth - 64f64.powf(0.25)).abs() < 1e-12, "{s:?}");
        assert!((s.metadata - 10.0).abs() < 1e-12, "eight phases of 10 kIOPS (the timestamp's 10 is not scored)");
        assert!((s.total - (s.bandwidth * 10.0).sqrt()).abs() < 1e-12);
        // A phase at 0 is left out of its mean (as IO500 does), not zeroing it.
        let ps = phases(|p| {
            if p == Phase::Find {
                0.0
            } else if p.group() == Group::Metadata {
                5.0
            } else {
                1.0
            }
        });
        assert!((score(&ps).metadata - 5.0).abs() < 1e-12);
        assert_eq!(score(&[]).total, 0.0);
    }

    #[test]
    fn rules_mark_phases_invalid() {
        let mut ps = phases(|_| 1.0);
        ps[0].seconds = 299.9;
        validate(&mut ps, 300.0, 12);
        assert_eq!(ps[0].invalid, ["ran 299.900 s, below the stonewall of 300 s"]);
        assert!(ps[1..].iter().all(|p| p.invalid.is_empty()), "reads and stats have no minimum");
        let mut ps = phases(|_| 1.0);
        validate(&mut ps, 30.0, 0);
        let invalid: Vec<&str> = ps.iter().filter(|p| !p.invalid.is_empty()).map(|p| p.phase.name()).collect();
        assert_eq!(invalid, ["ior-easy-write", "mdtest-easy-write", "ior-hard-write", "mdtest-hard-write", "find"]);
    }

    #[test]
    fn lines_have_io500s_layout() {
        let p = PhaseScore { phase: Phase::IorEasyWrite, score: 0.146316, seconds: 300.331, invalid: Vec::new() };
        assert_eq!(result_line(&p), "[RESULT]       ior-easy-write        0.146316 GiB/s : time 300.331 seconds");
        let p =
            PhaseScore { phase: Phase::MdtestEasyWrite, score: 15.711578, seconds: 1.057, invalid: vec!["x".into()] };
        assert_eq!(
            result_line(&p),
            "[RESULT]    mdtest-easy-write       15.711578 kIOPS : time 1.057 seconds [INVALID]"
        );
        let p = PhaseScore { phase: Phase::Timestamp, score: 0.0, seconds: 0.0, invalid: Vec::new() };
        assert_eq!(result_line(&p), "[      ]            timestamp        0.000000 kIOPS : time 0.000 seconds");
        let s = Score { bandwidth: 0.072008, metadata: 12.206056, total: 0.937512 };
        assert_eq!(score_line(&s, true), "[SCORE ] Bandwidth 0.072008 GiB/s : IOPS 12.206056 kiops : TOTAL 0.937512");
        assert!(score_line(&s, false).ends_with(" [INVALID]"));
    }
}
