//! A training or checkpoint run's own figures, typed: what `train` and `checkpoint` measured
//! beside their phases, which `compare`, the report and the study's lines read. The study
//! also files them as text among the run's `tool_params` (`train.au`, `ckpt.rank_bytes`, ...),
//! which `show`, `export`, bench/vs-dlio and scripts read; runs filed before the record held
//! them, and DLIO's imported summaries, have that text only. [`RunRecord::training`] is the
//! one reading of either.

use super::RunRecord;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Display;

/// What a training study measured (boxed: every run's record holds the field, most of them
/// empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Training {
    /// Emulated accelerators fed from the storage (`iosurvey train`, DLIO).
    Train(Box<TrainRecord>),
    /// A model's checkpoint written and read back (`iosurvey checkpoint`).
    Checkpoint(Box<CheckpointRecord>),
}

/// A training run: its settings, then its figures. A setting or figure the source did not
/// give is `None` (DLIO's summary has no accelerator type, batch or compute time).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainRecord {
    /// The workload (unet3d, ...; `dlio` for a summary whose place did not name it).
    pub workload: String,
    /// The accelerator type (a100, h100, b200).
    pub accelerator: Option<String>,
    /// Emulated accelerators (ranks).
    pub accelerators: Option<usize>,
    /// The data set's format (npz, tfrecord, jpeg).
    pub format: Option<String>,
    /// Samples per step.
    pub batch: Option<u64>,
    /// Compute per step, seconds.
    pub compute_s: Option<f64>,
    /// Steps per epoch.
    pub steps: Option<u64>,
    /// Epochs.
    pub epochs: Option<u64>,
    /// Files in the data set.
    pub files: Option<u64>,
    /// Bytes of a sample.
    pub sample_bytes: Option<u64>,
    /// The workload's AU threshold, a fraction.
    pub au_target: Option<f64>,
    /// 1/N of the sizing rule's data set: a rehearsal.
    pub scale: Option<u64>,
    /// AU over ranks and epochs, a fraction.
    pub au: Option<f64>,
    /// Whether the AU reached the threshold.
    pub pass: Option<bool>,
    /// Each rank's AU over its epochs, by rank.
    pub rank_au: Vec<f64>,
    /// Samples per second summed over ranks, mean over epochs.
    pub samples_per_s: Option<f64>,
    /// Read MiB/s over the epochs' wall time.
    pub read_mib_s: Option<f64>,
    /// The median step's wait for data, seconds.
    pub wait_p50_s: Option<f64>,
    /// The 99th percentile step's wait for data, seconds.
    pub wait_p99_s: Option<f64>,
    /// Client CPU per sample read, seconds.
    pub cpu_per_sample_s: Option<f64>,
    /// The same figures epoch by epoch.
    pub epoch: EpochFigures,
    /// Each rank's compute of every step but its first, seconds, summed over epochs.
    pub rank_compute_s: Vec<f64>,
    /// Each rank's first step (wait and compute), seconds, summed over epochs.
    pub rank_first_step_s: Vec<f64>,
}

/// A training run's figures, a value per epoch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EpochFigures {
    /// AU, a fraction.
    pub au: Vec<f64>,
    /// Samples per second.
    pub samples_per_s: Vec<f64>,
    /// Read MiB/s.
    pub read_mib_s: Vec<f64>,
    /// Median step wait, seconds.
    pub wait_p50_s: Vec<f64>,
    /// 99th percentile step wait, seconds.
    pub wait_p99_s: Vec<f64>,
}

/// A checkpoint run: its settings, then the means over checkpoints of the slowest rank's
/// figures (each checkpoint's own are its phases).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckpointRecord {
    /// The model (llama3-8b, ...).
    pub model: String,
    /// Ranks writing and reading.
    pub ranks: Option<usize>,
    /// Shards the state is in.
    pub shards: Option<usize>,
    /// Bytes of a shard.
    pub rank_bytes: Option<u64>,
    /// Checkpoints written.
    pub checkpoints: Option<u64>,
    /// Checkpoints read back.
    pub reads: Option<u64>,
    /// Rank r reads what rank r + shift wrote.
    pub shift: Option<usize>,
    /// 1/N of the model's checkpoint: a rehearsal.
    pub scale: Option<u64>,
    /// The slowest rank's write duration, seconds.
    pub write_max_duration_s: Option<f64>,
    /// The slowest rank's write throughput, GiB/s.
    pub write_min_gib_s: Option<f64>,
    /// The slowest rank's read duration, seconds.
    pub read_max_duration_s: Option<f64>,
    /// The slowest rank's read throughput, GiB/s.
    pub read_min_gib_s: Option<f64>,
    /// The first read's duration, seconds.
    pub recovery_s: Option<f64>,
    /// What the 3x rule did on each client.
    pub cache_rule: Option<String>,
}

/// A setting or figure as a line says it: `-` where the run does not say it.
pub fn said(v: Option<impl Display>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

impl RunRecord {
    /// The run's training or checkpoint figures: the typed ones it was filed with, else those
    /// its `tool_params` say as text (a run filed before the record held them, or DLIO's).
    pub fn training(&self) -> Option<Cow<'_, Training>> {
        match &self.training {
            Some(t) => Some(Cow::Borrowed(t)),
            None => Training::from_params(&self.tool_params).map(Cow::Owned),
        }
    }
}

impl Training {
    /// The figures as text by their stored names (`train.*`, `ckpt.*`).
    pub fn params(&self) -> BTreeMap<String, String> {
        match self {
            Training::Train(t) => t.params(),
            Training::Checkpoint(c) => c.params(),
        }
    }

    /// The figures the text of [`Training::params`] (or DLIO's import) says; none when it
    /// names neither a workload nor a model.
    fn from_params(params: &BTreeMap<String, String>) -> Option<Training> {
        let read = Text(params);
        if let Some(workload) = params.get("train.workload") {
            return Some(Training::Train(Box::new(TrainRecord::read(workload, &read))));
        }
        let model = params.get("ckpt.model")?;
        Some(Training::Checkpoint(Box::new(CheckpointRecord::read(model, &read))))
    }
}

/// Stored text, read back by key.
struct Text<'p>(&'p BTreeMap<String, String>);

impl Text<'_> {
    fn num<T: std::str::FromStr>(&self, key: &str) -> Option<T> {
        self.0.get(key)?.parse().ok()
    }

    fn text(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }

    /// A comma-separated list, what does not parse left out.
    fn list(&self, key: &str) -> Vec<f64> {
        self.0.get(key).map_or("", String::as_str).split(',').filter_map(|v| v.parse().ok()).collect()
    }

    /// `1/N`.
    fn scale(&self, key: &str) -> Option<u64> {
        self.0.get(key)?.strip_prefix("1/")?.parse().ok()
    }
}

/// Writes figures as text under one prefix, each in the form it has always been stored in.
struct Writer {
    prefix: &'static str,
    out: BTreeMap<String, String>,
}

impl Writer {
    fn put(&mut self, key: &str, v: Option<String>) {
        if let Some(v) = v {
            self.out.insert(format!("{}.{key}", self.prefix), v);
        }
    }

    fn plain<T: Display>(&mut self, key: &str, v: Option<T>) {
        self.put(key, v.map(|v| v.to_string()));
    }

    fn fixed(&mut self, key: &str, v: Option<f64>, decimals: usize) {
        self.put(key, v.map(|v| format!("{v:.decimals$}")));
    }

    fn list(&mut self, key: &str, xs: &[f64], decimals: usize) {
        self.put(key, Some(xs.iter().map(|x| format!("{x:.decimals$}")).collect::<Vec<_>>().join(",")));
    }

    fn scale(&mut self, key: &str, n: Option<u64>) {
        self.put(key, n.map(|n| format!("1/{n}")));
    }
}

impl TrainRecord {
    fn params(&self) -> BTreeMap<String, String> {
        let mut w = Writer { prefix: "train", out: BTreeMap::new() };
        w.plain("workload", Some(&self.workload));
        w.plain("accelerator", self.accelerator.as_ref());
        w.plain("accelerators", self.accelerators);
        w.plain("format", self.format.as_ref());
        w.plain("batch", self.batch);
        w.plain("compute_s", self.compute_s);
        w.plain("steps", self.steps);
        w.plain("epochs", self.epochs);
        w.plain("files", self.files);
        w.plain("sample_bytes", self.sample_bytes);
        w.plain("au_target", self.au_target);
        w.scale("scale", self.scale);
        // A skeleton (nothing measured yet) is filed with its settings only.
        let Some(au) = self.au else { return w.out };
        w.plain("au", Some(au));
        w.put("pass", self.pass.map(|p| if p { "pass" } else { "fail" }.to_string()));
        w.list("rank_au", &self.rank_au, 4);
        w.fixed("samples_per_s", self.samples_per_s, 2);
        w.fixed("read_mib_s", self.read_mib_s, 2);
        w.fixed("wait_p50_s", self.wait_p50_s, 6);
        w.fixed("wait_p99_s", self.wait_p99_s, 6);
        w.fixed("cpu_per_sample_s", self.cpu_per_sample_s, 9);
        let e = &self.epoch;
        w.list("epoch_au", &e.au, 6);
        w.list("epoch_samples_per_s", &e.samples_per_s, 6);
        w.list("epoch_read_mib_s", &e.read_mib_s, 6);
        w.list("epoch_wait_p50_s", &e.wait_p50_s, 6);
        w.list("epoch_wait_p99_s", &e.wait_p99_s, 6);
        w.list("rank_compute_s", &self.rank_compute_s, 9);
        w.list("rank_first_step_s", &self.rank_first_step_s, 9);
        w.out
    }

    fn read(workload: &str, p: &Text) -> TrainRecord {
        let k = |key: &str| format!("train.{key}");
        TrainRecord {
            workload: workload.to_string(),
            accelerator: p.text(&k("accelerator")),
            accelerators: p.num(&k("accelerators")),
            format: p.text(&k("format")),
            batch: p.num(&k("batch")),
            compute_s: p.num(&k("compute_s")),
            steps: p.num(&k("steps")),
            epochs: p.num(&k("epochs")),
            files: p.num(&k("files")),
            sample_bytes: p.num(&k("sample_bytes")),
            au_target: p.num(&k("au_target")),
            scale: p.scale(&k("scale")),
            au: p.num(&k("au")),
            pass: p.text(&k("pass")).map(|v| v == "pass"),
            rank_au: p.list(&k("rank_au")),
            samples_per_s: p.num(&k("samples_per_s")),
            read_mib_s: p.num(&k("read_mib_s")),
            wait_p50_s: p.num(&k("wait_p50_s")),
            wait_p99_s: p.num(&k("wait_p99_s")),
            cpu_per_sample_s: p.num(&k("cpu_per_sample_s")),
            epoch: EpochFigures {
                au: p.list(&k("epoch_au")),
                samples_per_s: p.list(&k("epoch_samples_per_s")),
                read_mib_s: p.list(&k("epoch_read_mib_s")),
                wait_p50_s: p.list(&k("epoch_wait_p50_s")),
                wait_p99_s: p.list(&k("epoch_wait_p99_s")),
            },
            rank_compute_s: p.list(&k("rank_compute_s")),
            rank_first_step_s: p.list(&k("rank_first_step_s")),
        }
    }
}

impl CheckpointRecord {
    fn params(&self) -> BTreeMap<String, String> {
        let mut w = Writer { prefix: "ckpt", out: BTreeMap::new() };
        w.plain("model", Some(&self.model));
        w.plain("ranks", self.ranks);
        w.plain("shards", self.shards);
        w.plain("rank_bytes", self.rank_bytes);
        w.plain("checkpoints", self.checkpoints);
        w.plain("reads", self.reads);
        w.plain("shift", self.shift);
        w.scale("scale", self.scale);
        w.plain("write_max_duration_s", self.write_max_duration_s);
        w.plain("write_min_gib_s", self.write_min_gib_s);
        w.plain("read_max_duration_s", self.read_max_duration_s);
        w.plain("read_min_gib_s", self.read_min_gib_s);
        w.plain("recovery_s", self.recovery_s);
        w.plain("cache_rule", self.cache_rule.as_ref());
        w.out
    }

    fn read(model: &str, p: &Text) -> CheckpointRecord {
        let k = |key: &str| format!("ckpt.{key}");
        CheckpointRecord {
            model: model.to_string(),
            ranks: p.num(&k("ranks")),
            shards: p.num(&k("shards")),
            rank_bytes: p.num(&k("rank_bytes")),
            checkpoints: p.num(&k("checkpoints")),
            reads: p.num(&k("reads")),
            shift: p.num(&k("shift")),
            scale: p.scale(&k("scale")),
            write_max_duration_s: p.num(&k("write_max_duration_s")),
            write_min_gib_s: p.num(&k("write_min_gib_s")),
            read_max_duration_s: p.num(&k("read_max_duration_s")),
            read_min_gib_s: p.num(&k("read_min_gib_s")),
            recovery_s: p.num(&k("recovery_s")),
            cache_rule: p.text(&k("cache_rule")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A training run's text as `train` filed it before the record held its figures typed.
    const OLD_TEXT: [(&str, &str); 27] = [
        ("workload", "unet3d"),
        ("accelerator", "h100"),
        ("accelerators", "2"),
        ("format", "npz"),
        ("batch", "7"),
        ("compute_s", "0.323"),
        ("steps", "5"),
        ("epochs", "2"),
        ("files", "40"),
        ("sample_bytes", "65536"),
        ("au_target", "0.9"),
        ("scale", "1/20000"),
        ("au", "0.9312"),
        ("pass", "pass"),
        ("rank_au", "0.9300,0.9324"),
        ("samples_per_s", "10.25"),
        ("read_mib_s", "640.50"),
        ("wait_p50_s", "0.001250"),
        ("wait_p99_s", "0.002500"),
        ("cpu_per_sample_s", "0.000012500"),
        ("epoch_au", "0.930000,0.932400"),
        ("epoch_samples_per_s", "10.000000,10.500000"),
        ("epoch_read_mib_s", "640.000000,641.000000"),
        ("epoch_wait_p50_s", "0.001000,0.001500"),
        ("epoch_wait_p99_s", "0.002000,0.003000"),
        ("rank_compute_s", "1.250000000,1.500000000"),
        ("rank_first_step_s", "0.500000000,0.750000000"),
    ];

    /// A checkpoint run's text, likewise.
    const OLD_CHECKPOINT: [(&str, &str); 14] = [
        ("model", "llama3-8b"),
        ("ranks", "2"),
        ("shards", "4"),
        ("rank_bytes", "28000"),
        ("checkpoints", "3"),
        ("reads", "3"),
        ("shift", "1"),
        ("scale", "1/1000000"),
        ("write_max_duration_s", "0.25"),
        ("write_min_gib_s", "1.5"),
        ("read_max_duration_s", "0.125"),
        ("read_min_gib_s", "3"),
        ("recovery_s", "0.0625"),
        ("cache_rule", "h: 54.69 KiB of 1 GiB RAM (under 3x): dropped"),
    ];

    fn text(prefix: &str, pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (format!("{prefix}.{k}"), v.to_string())).collect()
    }

    /// A record JSON of the old shape: `tool_params` only, no `training`.
    fn old_record(text: BTreeMap<String, String>) -> RunRecord {
        let mut v =
            serde_json::to_value(RunRecord::assemble(Default::default(), Default::default(), Default::default()))
                .unwrap();
        assert!(v.get("training").is_none(), "a run with no training figures files none: {v}");
        v["tool_params"] = serde_json::to_value(text).unwrap();
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_record_of_the_old_shape_reads_its_figures_from_its_text_and_writes_the_same_text() {
        let r = old_record(text("train", &OLD_TEXT));
        let Some(Training::Train(t)) = r.training().map(Cow::into_owned) else { panic!("a training run") };
        assert_eq!((t.workload.as_str(), t.accelerators, t.batch, t.scale), ("unet3d", Some(2), Some(7), Some(20000)));
        assert_eq!((t.au, t.pass, t.au_target, t.samples_per_s), (Some(0.9312), Some(true), Some(0.9), Some(10.25)));
        assert_eq!(t.rank_au, [0.93, 0.9324]);
        assert_eq!((t.wait_p50_s, t.cpu_per_sample_s), (Some(0.00125), Some(0.0000125)));
        assert_eq!(t.epoch.au, [0.93, 0.9324]);
        assert_eq!(t.epoch.wait_p99_s, [0.002, 0.003]);
        assert_eq!(t.rank_first_step_s, [0.5, 0.75]);
        // The typed figures write the text back as it was filed: one form, both ways.
        assert_eq!(Training::Train(t).params(), text("train", &OLD_TEXT));

        let r = old_record(text("ckpt", &OLD_CHECKPOINT));
        let Some(Training::Checkpoint(c)) = r.training().map(Cow::into_owned) else { panic!("a checkpoint run") };
        assert_eq!((c.model.as_str(), c.shards, c.rank_bytes, c.shift), ("llama3-8b", Some(4), Some(28000), Some(1)));
        assert_eq!((c.read_min_gib_s, c.recovery_s), (Some(3.0), Some(0.0625)));
        assert_eq!(Training::Checkpoint(c).params(), text("ckpt", &OLD_CHECKPOINT));
        assert!(old_record(text("import", &[("file", "x")])).training().is_none(), "neither a workload nor a model");
    }

    #[test]
    fn the_typed_figures_are_read_before_the_text_and_stored_beside_the_phases() {
        let mut r = old_record(text("train", &OLD_TEXT));
        let typed = TrainRecord { workload: "resnet50".into(), au: Some(0.5), ..TrainRecord::default() };
        r.training = Some(Training::Train(Box::new(typed.clone())));
        assert_eq!(r.training().as_deref(), Some(&Training::Train(Box::new(typed))), "the text says unet3d at 93%");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["training"]["train"]["workload"], "resnet50");
        let back: RunRecord = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
