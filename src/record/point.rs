//! A campaign point's identity as data: what it measures ([`StudyKey`], a run's
//! [`WorkloadKey`] or a whole study's settings), at how many tasks, at which scale. The store
//! keeps each part in a column of its own; nothing here is text to be read back.

/// A run's workload key ([`crate::spec::Workload::key`]): what it measures, its count of
/// tasks aside (so that the runs of a sweep compare as one workload).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct WorkloadKey(pub String);

impl WorkloadKey {
    /// The key of `w`.
    pub fn of(w: &crate::spec::Workload) -> WorkloadKey {
        WorkloadKey(w.key())
    }
}

/// What a campaign point's study measures.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum StudyKey {
    /// A run or metadata point: the workload it runs (the runs table's `workload_key`).
    Workload(WorkloadKey),
    /// A study run whole (a survey, a matrix, an IO500 list): its kind and its settings, each
    /// value in its normal form ([`StudyKey::whole`]; the groups table's `key`).
    Whole(String),
}

impl StudyKey {
    /// The key as its column holds it.
    pub fn as_str(&self) -> &str {
        match self {
            StudyKey::Workload(WorkloadKey(k)) | StudyKey::Whole(k) => k,
        }
    }

    /// A whole study's key: its kind and its settings (a flag's name, and its value unless it
    /// is a switch), each value in its normal form and the settings in name order, so that
    /// settings that mean the same give the same key: `1g` and `1024m` are one size, `4` and
    /// `04` one count, `write, read` and `write,read` one list.
    ///
    /// The types are the settings' own per kind ([`SIZES`], [`DURATIONS`], numbers, lists);
    /// once a study is a typed value, its key is that value's normal form and this goes.
    pub fn whole<'a>(kind: &str, settings: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> StudyKey {
        let mut pairs: Vec<String> = settings
            .into_iter()
            .map(|(name, value)| {
                let name = name.trim_start_matches('-');
                match value {
                    Some(v) => format!("{name}={}", normal_value(name, v)),
                    None => name.to_string(),
                }
            })
            .collect();
        pairs.sort();
        StudyKey::Whole(format!("{kind} {}", pairs.join(" ")).trim_end().to_string())
    }
}

/// The settings of whole studies that are amounts of data, held as bytes in a key.
pub const SIZES: &[&str] = &["size", "min-file", "max-file", "min-record", "max-record"];

/// The settings of whole studies that are durations, held as nanoseconds in a key.
pub const DURATIONS: &[&str] = &["budget"];

/// A setting's value in its normal form: a size in bytes, a duration in nanoseconds, a number
/// as Rust prints it, a list item by item; anything else as written. A value its setting
/// would refuse stays as written (it never runs, so it never meets a stored key).
fn normal_value(name: &str, value: &str) -> String {
    if value.contains(',') {
        return value.split(',').map(|v| normal_value(name, v)).collect::<Vec<_>>().join(",");
    }
    let v = value.trim();
    let normal = if SIZES.contains(&name) {
        crate::units::parse_size(v).ok().map(|n| n.to_string())
    } else if DURATIONS.contains(&name) {
        crate::units::parse_long_duration(v).ok().map(|n| n.to_string())
    } else {
        let whole = v.strip_prefix('+').unwrap_or(v).parse::<u64>().ok().map(|n| n.to_string());
        whole.or_else(|| v.parse::<f64>().ok().filter(|x| x.is_finite()).map(|x| x.to_string()))
    };
    normal.unwrap_or_else(|| v.to_string())
}

/// A campaign point's identity beyond its study's name and its target's label: what it
/// measures, at how many tasks, at which scale. Each part is a column (a run's
/// `workload_key` and its tasks, a group's `key`, a hook's `key` and `tasks`, a campaign
/// version's scale in its spec), compared part by part and never read back from text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct PointKey {
    /// What the study measures.
    pub study: StudyKey,
    /// A run point's count of tasks; none for a study run whole.
    pub tasks: Option<usize>,
    /// `--scale 1/N` of the campaign version, so that a rehearsal never stands for the
    /// full-size point.
    pub scale: Option<u64>,
}

impl PointKey {
    /// The key of a run point of workload `w` at `scale`.
    pub fn run(w: &crate::spec::Workload, scale: Option<u64>) -> PointKey {
        PointKey { study: StudyKey::Workload(WorkloadKey::of(w)), tasks: Some(w.tasks), scale }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_mean_the_same_give_one_whole_study_key() {
        let key =
            |settings: &[(&'static str, Option<&'static str>)]| StudyKey::whole("matrix", settings.iter().copied());
        let a = key(&[("max-file", Some("1g")), ("tasks", Some("04")), ("kinds", Some("write, read")), ("full", None)]);
        let b =
            key(&[("full", None), ("--kinds", Some("write,read")), ("tasks", Some("4")), ("max-file", Some("1024m"))]);
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "matrix full kinds=write,read max-file=1073741824 tasks=4");
        assert_ne!(a, key(&[("max-file", Some("1g")), ("tasks", Some("4")), ("kinds", Some("write,read"))]));
        assert_ne!(a, StudyKey::whole("survey", [("max-file", Some("1g"))]));
        // A duration by its nanoseconds; a value its setting would refuse as written.
        assert_eq!(key(&[("budget", Some("10m"))]), key(&[("budget", Some("600s"))]));
        assert_eq!(key(&[("max-file", Some("1q"))]).as_str(), "matrix max-file=1q");
    }
}
