//! The slow one among many: a task, a node or a target whose rate stands apart from its peers
//! (the seeds' "statistics across many targets to find the slow one").
//!
//! A member is an outlier when it is both far from the others in their own terms (more than
//! three scaled median absolute deviations below the median, a rule that a few slow members
//! cannot hide by pulling the mean) and far in yours (below 80% of the median), so that a
//! tight group does not flag a member 1% slower.

/// Members needed before one can stand apart.
pub const AT_LEAST: usize = 4;
const MADS: f64 = 3.0;
/// The scale that makes the MAD estimate a normal distribution's standard deviation.
const MAD_SCALE: f64 = 1.4826;
/// A slow member is also below this share of the median: a material difference.
pub const MATERIAL: f64 = 0.8;

/// The band a member must leave to stand apart: the median, and a half width of the larger
/// of three scaled median absolute deviations and `material` of the median; none with fewer
/// than [`AT_LEAST`] values.
pub fn band(values: &[f64], material: f64) -> Option<(f64, f64)> {
    if values.len() < AT_LEAST {
        return None;
    }
    let med = crate::measure::median(values).unwrap_or(0.0);
    let deviations: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
    let mad = MAD_SCALE * crate::measure::median(&deviations).unwrap_or(0.0);
    Some((med, (MADS * mad).max(material * med)))
}

/// The slow outliers among `members` (a name and a rate each), slowest first, with the
/// median they stand apart from; none with fewer than [`AT_LEAST`] members.
pub fn slow(members: &[(String, f64)]) -> (Vec<&(String, f64)>, f64) {
    let values: Vec<f64> = members.iter().map(|m| m.1).collect();
    let Some((med, half)) = band(&values, 1.0 - MATERIAL) else { return (Vec::new(), 0.0) };
    let mut out: Vec<&(String, f64)> = members.iter().filter(|m| m.1 < med - half).collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    (out, med)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(values: &[f64]) -> Vec<(String, f64)> {
        values.iter().enumerate().map(|(i, &v)| (format!("t{i}"), v)).collect()
    }

    #[test]
    fn the_slow_member_stands_out_and_a_tight_group_flags_nobody() {
        let m = named(&[400.0, 410.0, 395.0, 405.0, 180.0, 402.0, 398.0, 401.0]);
        let (out, med) = slow(&m);
        assert_eq!(out.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["t4"]);
        assert_eq!(med, 400.5);
        // 1% slower is within any sensible noise.
        assert!(slow(&named(&[400.0, 401.0, 399.0, 396.0])).0.is_empty());
        // Far in the group's terms but not materially slower: a very tight group.
        assert!(slow(&named(&[100.0, 100.0, 100.0, 100.0, 85.0])).0.is_empty());
        // Two slow ones of eight, slowest first.
        let m = named(&[400.0, 100.0, 405.0, 395.0, 150.0, 410.0, 402.0, 398.0]);
        assert_eq!(slow(&m).0.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["t1", "t4"]);
        assert!(slow(&named(&[1.0, 100.0, 100.0])).0.is_empty(), "three are too few to judge");
    }
}
