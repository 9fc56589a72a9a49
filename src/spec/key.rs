//! What a workload measures: its key, the settings left out of it, and how two keys differ.

use super::{Data, Op, Workload};

/// The fields of a [`Workload`] that do not change what is measured, left out of its key
/// ([`Workload::key`]); every other field is in it. Names are the stored records' (serde's),
/// a metadata shape's under `meta.`. A field added to `Workload` or `Meta` is in the key
/// unless named here (`every_field_is_classed_as_measured_or_not` makes the choice explicit).
pub const NOT_MEASURED: &[&str] = &[
    // The team size: a sweep varies it along one key; compare and recommend set runs side by
    // side by key and team size (and the label says the team).
    "tasks",
    // Repetitions of the same measurement: a run's figure is its mean over them.
    "iterations",
    // Which random order and data, not how random: every seed draws from one distribution.
    "seed",
    // The value verified data is stamped with: as many bytes are stamped and checked.
    "signature",
    // The width of the time series' intervals: how the phase is shown, not what it did.
    "interval_secs",
    // The name of the directory that holds a metadata run's trees: a name, the same calls.
    "meta.root",
];

/// Removes the field at a dotted path (`meta.root`), if there is one.
fn remove_path(fields: &mut serde_json::Map<String, serde_json::Value>, path: &str) {
    match path.split_once('.') {
        None => {
            fields.remove(path);
        }
        Some((head, rest)) => {
            if let Some(inner) = fields.get_mut(head).and_then(|v| v.as_object_mut()) {
                remove_path(inner, rest);
            }
        }
    }
}

/// `value` as JSON text with every object's keys in sorted order, whatever order the map
/// keeps (serde_json's `preserve_order` would keep the declaration's): the one spelling of
/// a key.
fn canonical(value: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut names: Vec<&String> = map.keys().collect();
            names.sort();
            out.push('{');
            for (i, name) in names.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                canonical(&map[name], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A key's value as a reader is shown it: text bare, lists joined with commas, none as "none".
fn value_text(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The settings where two key values differ, objects that both are compared field by field
/// under `path`.
fn differences(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<(String, String, String)>) {
    if let (Some(x), Some(y)) = (a.as_object(), b.as_object()) {
        let mut names: Vec<&String> = x.keys().chain(y.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let inner = match path {
                "" => name.replace('_', "-"),
                _ => format!("{path}.{}", name.replace('_', "-")),
            };
            match (x.get(name), y.get(name)) {
                (Some(p), Some(q)) => differences(&inner, p, q, out),
                // One of them holds it (the names are both maps' own).
                (p, q) => out.push((inner, p.map_or("-".into(), value_text), q.map_or("-".into(), value_text))),
            }
        }
    } else if a != b {
        out.push((path.to_string(), value_text(a), value_text(b)));
    }
}

impl Workload {
    /// What the workload measures: one canonical text (JSON, keys sorted) of every field that
    /// changes what is measured, which is every field but those [`NOT_MEASURED`] names. Runs
    /// with the same key measured the same thing (at their team sizes: the key leaves the team
    /// out, so a sweep is one key); compare, recommend, sweeps, cliffs and the store's index
    /// all group by it. It is computed from the workload, so a record stored before a field
    /// was added gets the key it has now, the new field at its serde default.
    pub fn key(&self) -> String {
        let mut text = String::new();
        canonical(&self.key_value(), &mut text);
        text
    }

    /// The key's fields as a JSON value: the workload as stored, less [`NOT_MEASURED`], less
    /// what cannot change the measurement of this workload (a data shape's fields, at their
    /// defaults, for a metadata
    /// workload, the read share without a mix phase, the absent metadata shape of a data
    /// workload), its base directories counted (`meta.bases`: where they are is no more
    /// what is measured than the target directory is, how many the items spread over is),
    /// its engine named without a parameter.
    pub fn key_value(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        let Some(fields) = value.as_object_mut() else { return value };
        for path in NOT_MEASURED {
            remove_path(fields, path);
        }
        match fields.get_mut("meta").and_then(|m| m.as_object_mut()) {
            Some(meta) => {
                if let Some(bases) = meta.get_mut("bases") {
                    *bases = bases.as_array().map_or(0, Vec::len).into();
                }
                // A metadata run's phases never read them: they hold their defaults, and a
                // changed default must not split runs.
                if let serde_json::Value::Object(data) = serde_json::to_value(Data::default()).unwrap_or_default() {
                    fields.retain(|name, _| !data.contains_key(name));
                }
            }
            None => {
                fields.remove("meta");
            }
        }
        if !self.ops.contains(&Op::Mix) {
            fields.remove("read_percent");
        }
        // A mix of requests draws no read share.
        if fields.get("mix").is_some_and(|m| m.as_str().is_some_and(|m| !m.is_empty())) {
            fields.remove("read_percent");
        }
        // The engine by its name: the one parameter an engine takes (delay:D, a test engine
        // that touches no storage) is the latency of the storage it stands for, the system
        // measured (as a --label names one), not a setting of the workload.
        if let (Some(engine), Some(data)) = (fields.get_mut("engine"), self.data()) {
            *engine = data.engine.base().into();
        }
        value
    }

    /// The measured settings in which this workload and `other` differ, by their keys:
    /// (setting, this one's value, the other's), the setting named as [`Workload::changed`]
    /// names it (`fsync-each`; a metadata shape's `meta.sync`, `meta.tree.depth`), a value
    /// one of them does not hold as "-". Empty when their keys are the same.
    pub fn key_differences(&self, other: &Workload) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        differences("", &self.key_value(), &other.key_value(), &mut out);
        out
    }

    /// The value this workload's key holds for a setting named as [`Workload::key_differences`]
    /// names it, as text ("-" when it holds none).
    pub fn key_setting(&self, name: &str) -> String {
        let value = self.key_value();
        let mut at = Some(&value);
        for part in name.split('.') {
            at = at.and_then(|v| v.as_object()).and_then(|o| o.get(&part.replace('-', "_")));
        }
        at.map_or("-".into(), value_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::fixtures::{ok, set};
    use crate::spec::{meta, EngineName, Layout, Meta, Shape};

    #[test]
    fn the_key_ignores_team_size_and_repetitions_but_not_what_is_measured() {
        let a = ok();
        let not_measured =
            Workload { tasks: 8, iterations: 3, seed: 9, signature: Some(4), interval_secs: 0.5, ..ok() };
        assert_eq!(a.key(), not_measured.key());
        assert_ne!(
            a.key(),
            set(ok(), |d| {
                d.direct = true;
            })
            .key()
        );
        assert_ne!(
            a.key(),
            set(ok(), |d| {
                d.transfer = 8192;
            })
            .key()
        );
        assert_eq!(a.key(), OK_KEY);
        let mix = Workload { ops: vec![Op::Write, Op::Mix], ..ok() };
        let changes: [Workload; 14] = [
            set(ok(), |d| {
                d.fsync = true;
            }),
            set(ok(), |d| {
                d.fsync_each = true;
            }),
            Workload { verify: true, ..ok() },
            Workload { stonewall_secs: Some(2.0), ..ok() },
            Workload { stonewall_secs: Some(2.0), wear_out: true, ..ok() },
            Workload { drop_caches: true, ..ok() },
            set(ok(), |d| {
                d.reorder = true;
            }),
            set(ok(), |d| {
                d.no_fadvise = true;
            }),
            set(ok(), |d| {
                d.engine = EngineName::new("io_uring", None);
            }),
            set(ok(), |d| {
                d.engine = EngineName::new("io_uring", None);
                d.iodepth = 8;
            }),
            Workload { ops: vec![Op::Write], ..ok() },
            set(ok(), |d| {
                d.layout = Layout::Strided;
            }),
            set(mix.clone(), |d| {
                d.read_percent = 70;
            }),
            mix.clone(),
        ];
        let mut keys: Vec<String> = changes.iter().map(Workload::key).chain([a.key()]).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), changes.len() + 1, "each measured setting makes a key of its own");
        // The read share measures nothing without a mix phase; a metadata run's data settings
        // are never used.
        assert_eq!(
            a.key(),
            set(ok(), |d| {
                d.read_percent = 70;
            })
            .key()
        );
        let delay = |param: &str| set(ok(), |d| d.engine = EngineName::new("delay", Some(param))).key();
        assert_eq!(delay("200us"), delay("2ms"), "two simulated storages under one workload");
        assert_ne!(delay("2ms"), a.key());
        let meta = Workload { ops: meta::ALL_PHASES.to_vec(), ..Workload::from(Meta::default()) };
        // A metadata shape holds no data settings; a record that somehow kept some reads back
        // without them.
        let mut stored = serde_json::to_value(&meta).unwrap();
        stored["transfer"] = 4096.into();
        stored["direct"] = true.into();
        assert_eq!(meta.key(), serde_json::from_value::<Workload>(stored).unwrap().key());
        assert_ne!(meta.key(), Workload { drop_caches: true, ..meta.clone() }.key());
        let root = Meta { root: "iosurvey.other".into(), ..Meta::default() };
        assert_eq!(meta.key(), Workload { shape: Shape::Meta(root), ..meta.clone() }.key(), "the root is a name");
        let spread = Meta { bases: vec!["/a".into(), "/b".into()], ..Meta::default() };
        let elsewhere = Meta { bases: vec!["/c".into(), "/d".into()], ..Meta::default() };
        let with = |m: Meta| Workload { shape: Shape::Meta(m), ..meta.clone() }.key();
        assert_ne!(meta.key(), with(spread.clone()), "over 3 bases is not over 1");
        assert_eq!(with(spread), with(elsewhere), "where the bases are is not measured, how many is");
    }

    /// The key of `ok()`.
    const OK_KEY: &str = concat!(
        r#"{"access":"file-per-task","block":8192,"direct":false,"drop_caches":false,"engine":"sync","#,
        r#""fsync":false,"fsync_each":false,"iodepth":1,"layout":"segmented","no_fadvise":false,"#,
        r#""ops":["write","read"],"pattern":"sequential","reorder":false,"segments":1,"stonewall_secs":null,"#,
        r#""transfer":4096,"verify":false,"wear_out":false}"#
    );

    /// The fields the key holds, by the stored records' names (a metadata shape's under
    /// `meta.`): with [`NOT_MEASURED`], every field there is.
    const MEASURED: &[&str] = &[
        "access",
        "layout",
        "pattern",
        "ops",
        "transfer",
        "block",
        "segments",
        "direct",
        "fsync",
        "fsync_each",
        "verify",
        "stonewall_secs",
        "wear_out",
        "drop_caches",
        "reorder",
        // By its name: delay:D's D is the storage it stands for, not the workload.
        "engine",
        "iodepth",
        "read_percent",
        "no_fadvise",
        "meta",
        "meta.items",
        "meta.shared",
        "meta.tree",
        "meta.tree.depth",
        "meta.tree.branch",
        "meta.tree.leaves_only",
        "meta.write_bytes",
        "meta.read_bytes",
        "meta.shift",
        "meta.sync",
        // Counted: how many directories the items spread over, not where they are.
        "meta.bases",
        "meta.resolve",
    ];

    /// Every field's dotted name in `value`, objects' fields and the objects themselves.
    fn field_names(prefix: &str, value: &serde_json::Value, out: &mut Vec<String>) {
        for (name, inner) in value.as_object().into_iter().flatten() {
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
            field_names(&path, inner, out);
            out.push(path);
        }
    }

    #[test]
    fn every_field_is_classed_as_measured_or_not() {
        let w = Workload::from(Meta::default());
        let mut found = Vec::new();
        field_names("", &serde_json::to_value(&w).unwrap(), &mut found);
        let mut classed: Vec<String> = MEASURED.iter().chain(NOT_MEASURED).map(|s| s.to_string()).collect();
        found.sort();
        classed.sort();
        assert_eq!(
            found, classed,
            "each field of Workload, Meta and Tree is either measured (MEASURED, here) or left out of the key \
             (NOT_MEASURED, in spec/key.rs, with why); a measured field added changes every run's key, so the store \
             must re-key its runs (a migration step calling store::rekey)"
        );
    }

    #[test]
    fn two_keys_name_the_settings_they_differ_in() {
        let (a, b) = (
            ok(),
            set(Workload { tasks: 5, ..ok() }, |d| {
                d.direct = true;
                d.fsync = true;
            }),
        );
        assert_eq!(
            a.key_differences(&b),
            [("direct".into(), "false".into(), "true".into()), ("fsync".into(), "false".into(), "true".into())],
            "the team is not a difference of keys"
        );
        assert!(a.key_differences(&Workload { seed: 3, ..ok() }).is_empty());
        assert_eq!(b.key_setting("direct"), "true");
        let m = |sync| Workload::from(Meta { sync, ..Meta::default() });
        assert_eq!(m(false).key_differences(&m(true)), [("meta.sync".into(), "false".into(), "true".into())]);
        assert_eq!(m(true).key_setting("meta.tree.depth"), "0");
        assert_eq!(m(true).key_setting("direct"), "-", "a metadata key holds no data settings");
    }
}
