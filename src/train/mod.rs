//! Training and checkpoint I/O, as MLPerf Storage's engine (DLIO) emulates them, natively: a
//! data set in its format's real layout, reader threads per emulated accelerator loading
//! batches ahead, each step sleeping the accelerator's compute time, ranks meeting at a
//! barrier per step; the figures by DLIO's definitions ([`figures`]) and the honesty DLIO
//! lacks (data set against RAM, page-cache reads, the client's CPU per sample).
//!
//! Accelerators (and checkpoint ranks) are threads, of every process of the team under MPI;
//! docs/methodology.md says how each figure is computed.

pub mod checkpoint;
pub mod emulate;
pub mod figures;
pub mod format;
pub mod record;

use format::Format;
use serde::{Deserialize, Serialize};

/// Why a training or checkpoint study is refused or stopped.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// Settings that cannot be run: said before anything is written.
    #[error("{what}")]
    Refused {
        /// What is wrong.
        what: String,
        /// What to do.
        hint: String,
    },
    /// The target refused.
    #[error(transparent)]
    Target(#[from] crate::target::TargetError),
    /// A file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// The operation and the file.
        what: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// A signal stopped the study.
    #[error("interrupted")]
    Interrupted,
}

impl TrainError {
    /// A refusal.
    pub fn refused(what: impl Into<String>, hint: impl Into<String>) -> Self {
        TrainError::Refused { what: what.into(), hint: hint.into() }
    }

    /// What the user can do.
    pub fn hint(&self) -> String {
        match self {
            TrainError::Refused { hint, .. } => hint.clone(),
            TrainError::Target(e) => format!("{:?}", e.hint()),
            TrainError::Io { .. } => "check the target's file system and free space".into(),
            TrainError::Interrupted => "run it again".into(),
        }
    }

    /// The exit code: 2 for refused settings, 130 for a signal, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            TrainError::Refused { .. } => 2,
            TrainError::Interrupted => 130,
            _ => 1,
        }
    }
}

/// The emulated accelerator, which sets the compute time per step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Accelerator {
    /// NVIDIA A100.
    A100,
    /// NVIDIA H100.
    H100,
    /// NVIDIA B200.
    B200,
}

/// A training workload of MLPerf Storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// 3D U-Net (medical images): large npz samples.
    Unet3d,
    /// ResNet-50 (ImageNet): small samples packed in tfrecord files.
    Resnet50,
    /// CosmoFlow: one tfrecord sample per file.
    Cosmoflow,
    /// RetinaNet (OpenImages): one jpeg per sample.
    Retinanet,
}

/// What a workload reads and how: a preset's, or a run's with the user's overrides applied.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// File format.
    pub format: Format,
    /// Samples in each file.
    pub samples_per_file: u64,
    /// Mean bytes per sample.
    pub sample_bytes: u64,
    /// Standard deviation of the bytes per sample.
    pub sample_stdev: u64,
    /// Samples per step per accelerator.
    pub batch: u64,
    /// Reader threads per accelerator.
    pub reader_threads: usize,
    /// The AU a run must reach to pass (a fraction).
    pub au: f64,
}

/// A workload's preset: mlcommons/storage's configs/dlio/workload/*.yaml, as issue 40 lists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    /// What it reads and how.
    pub shape: Shape,
    /// Compute per step, seconds, on the A100, H100 and B200 (none: not published).
    pub compute: [Option<f64>; 3],
}

impl Model {
    /// The preset of this workload.
    pub fn preset(self) -> Preset {
        match self {
            Model::Unet3d => Preset {
                shape: Shape {
                    format: Format::Npz,
                    samples_per_file: 1,
                    sample_bytes: 146_600_628,
                    sample_stdev: 68_341_808,
                    batch: 7,
                    reader_threads: 4,
                    au: 0.90,
                },
                compute: [Some(0.636), Some(0.323), Some(0.162)],
            },
            Model::Resnet50 => Preset {
                shape: Shape {
                    format: Format::Tfrecord,
                    samples_per_file: 1251,
                    sample_bytes: 114_660,
                    sample_stdev: 0,
                    batch: 400,
                    reader_threads: 8,
                    au: 0.90,
                },
                compute: [Some(0.435), Some(0.224), None],
            },
            Model::Cosmoflow => Preset {
                shape: Shape {
                    format: Format::Tfrecord,
                    samples_per_file: 1,
                    sample_bytes: 2_828_486,
                    sample_stdev: 71_311,
                    batch: 1,
                    reader_threads: 4,
                    au: 0.70,
                },
                compute: [Some(0.00551), Some(0.0035), None],
            },
            Model::Retinanet => Preset {
                shape: Shape {
                    format: Format::Jpeg,
                    samples_per_file: 1,
                    sample_bytes: 322_957,
                    sample_stdev: 0,
                    batch: 24,
                    reader_threads: 8,
                    au: 0.85,
                },
                compute: [None, None, Some(0.04755)],
            },
        }
    }

    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Model::Unet3d => "unet3d",
            Model::Resnet50 => "resnet50",
            Model::Cosmoflow => "cosmoflow",
            Model::Retinanet => "retinanet",
        }
    }
}

impl Accelerator {
    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Accelerator::A100 => "a100",
            Accelerator::H100 => "h100",
            Accelerator::B200 => "b200",
        }
    }
}

/// What the user set over the preset; `None` keeps the preset's value. The flags of
/// `iosurvey train` and the keys of a campaign's training study.
#[derive(Debug, Clone, Default, clap::Args, Serialize, Deserialize)]
pub struct Overrides {
    /// Files in the data set, instead of the sizing rule (max(500 steps, 5x RAM)).
    #[arg(long, value_name = "N")]
    pub files: Option<u64>,
    /// Mean bytes per sample.
    #[arg(long, value_parser = crate::units::size_arg, value_name = "BYTES")]
    pub sample_bytes: Option<u64>,
    /// Standard deviation of the bytes per sample.
    #[arg(long, value_parser = crate::units::size_arg, value_name = "BYTES")]
    pub sample_stdev: Option<u64>,
    /// Samples in each file.
    #[arg(long, value_name = "N")]
    pub samples_per_file: Option<u64>,
    /// Samples per step per accelerator.
    #[arg(long, value_name = "N")]
    pub batch: Option<u64>,
    /// Reader threads per accelerator.
    #[arg(long, value_name = "N")]
    pub reader_threads: Option<usize>,
    /// Batches each reader thread loads ahead (default 2).
    #[arg(long, value_name = "N")]
    pub prefetch: Option<usize>,
    /// Compute per step, seconds (default: the preset's for the accelerator).
    #[arg(long, value_name = "SECONDS")]
    pub compute: Option<f64>,
    /// Standard deviation of the compute per step, seconds.
    #[arg(long, value_name = "SECONDS")]
    pub compute_stdev: Option<f64>,
    /// The AU a run must reach to pass (default: the workload's).
    #[arg(long, value_name = "FRACTION")]
    pub au: Option<f64>,
    /// Bytes per read call of a tfrecord file (DLIO's transfer_size; default 256k).
    #[arg(long, value_parser = crate::units::size_arg, value_name = "BYTES")]
    pub transfer: Option<u64>,
    /// Steps per epoch (default: as many as each rank's block of samples holds).
    #[arg(long, value_name = "N")]
    pub steps: Option<u64>,
}

/// A training run's settings, every one resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The workload.
    pub model: Model,
    /// The accelerator.
    pub accelerator: Accelerator,
    /// What it reads and how, the user's overrides applied (read through `Deref`).
    #[serde(flatten)]
    pub shape: Shape,
    /// Batches each reader thread loads ahead (DLIO's prefetch).
    pub prefetch: usize,
    /// Compute per step, seconds.
    pub compute: f64,
    /// Its standard deviation, seconds.
    pub compute_stdev: f64,
    /// Bytes per read call of a tfrecord file (DLIO's transfer_size).
    pub transfer: u64,
    /// Emulated accelerators (ranks).
    pub accelerators: usize,
    /// Epochs.
    pub epochs: u32,
    /// Steps per epoch.
    pub steps: u64,
    /// Files in the data set.
    pub files: u64,
    /// Samples the sizing rule asks for (before any --scale or --files).
    pub rule_samples: u64,
    /// 1/N of the rule's data set: a rehearsal, not a result.
    pub scale: Option<u64>,
    /// Seed of the data and the shuffles.
    pub seed: u64,
    /// O_DIRECT reads (DLIO's odirect).
    pub direct: bool,
    /// RAM of the clients, bytes, as read from each node, summed.
    pub ram_bytes: u64,
}

// A run's settings read as its shape's: `s.batch`, not `s.shape.batch`.
impl std::ops::Deref for Settings {
    type Target = Shape;

    fn deref(&self) -> &Shape {
        &self.shape
    }
}

/// Bytes per read call of the whole-file formats: the file is read whole, in calls of at most
/// this, so that a reader thread holds one buffer however large the file.
pub const WHOLE_CALL: u64 = 16 << 20;

/// The fewest steps an epoch can have: DLIO's samples per second leave two out.
pub const MIN_STEPS: u64 = 3;

impl Settings {
    /// The preset of `model` on `accelerator` with `over` applied, for `accelerators` ranks,
    /// the data set sized by the rule for clients of `ram_bytes` in all (or `over.files`), divided
    /// by `scale`. Every refusal is one line, said before anything is written.
    pub fn resolve(
        (model, accelerator, accelerators): (Model, Accelerator, usize),
        over: &Overrides,
        (ram_bytes, scale): (u64, Option<u64>),
        (epochs, seed, direct): (u32, u64, bool),
    ) -> Result<Settings, TrainError> {
        let p = model.preset();
        let compute = match (over.compute, p.compute[accelerator as usize]) {
            (Some(c), _) => c,
            (None, Some(c)) => c,
            (None, None) => {
                return Err(TrainError::refused(
                    format!("{} on {} has no published compute time", model.name(), accelerator.name()),
                    "give --compute SECONDS, or another --accelerator",
                ))
            }
        };
        let p = p.shape;
        let s = Settings {
            model,
            accelerator,
            shape: Shape {
                format: p.format,
                samples_per_file: over.samples_per_file.unwrap_or(p.samples_per_file),
                sample_bytes: over.sample_bytes.unwrap_or(p.sample_bytes),
                sample_stdev: over.sample_stdev.unwrap_or(p.sample_stdev),
                batch: over.batch.unwrap_or(p.batch),
                reader_threads: over.reader_threads.unwrap_or(p.reader_threads),
                au: over.au.unwrap_or(p.au),
            },
            prefetch: over.prefetch.unwrap_or(2),
            compute,
            compute_stdev: over.compute_stdev.unwrap_or(0.0),
            transfer: over.transfer.unwrap_or(256 << 10),
            accelerators,
            epochs,
            steps: 0,
            files: 0,
            rule_samples: 0,
            scale,
            seed,
            direct,
            ram_bytes,
        };
        s.check()?;
        let rule_samples = rule_samples(s.batch, accelerators as u64, ram_bytes, s.sample_bytes);
        let wanted = rule_samples.div_ceil(scale.unwrap_or(1)).max(1);
        let files = over.files.unwrap_or_else(|| wanted.div_ceil(s.samples_per_file));
        let mut s = Settings { files, rule_samples, ..s };
        s.steps = s.most_steps();
        if let Some(steps) = over.steps {
            if steps > s.steps {
                return Err(TrainError::refused(
                    format!(
                        "--steps {steps} needs more data than the data set's {} files hold ({} steps per epoch for {} accelerators)",
                        s.files, s.steps, s.accelerators
                    ),
                    "give fewer --steps or more --files",
                ));
            }
            s.steps = steps;
        }
        if s.steps < MIN_STEPS {
            return Err(TrainError::refused(
                format!(
                    "the data set's {} files give {} steps per epoch for {} accelerators of batch {}: the figures need {MIN_STEPS}",
                    s.files, s.steps, s.accelerators, s.batch
                ),
                "give more --files, a smaller --batch or fewer --accelerators",
            ));
        }
        Ok(s)
    }

    fn check(&self) -> Result<(), TrainError> {
        let bad = |what: String, hint: &str| Err(TrainError::refused(what, hint));
        if self.accelerators == 0 || self.accelerators > 4096 {
            return bad(format!("--accelerators {} is not 1 to 4096", self.accelerators), "give --accelerators N");
        }
        if self.sample_bytes == 0 || self.samples_per_file == 0 || self.batch == 0 {
            return bad(
                "--sample-bytes, --samples-per-file and --batch must be above 0".into(),
                "give each a positive number",
            );
        }
        if self.reader_threads == 0 || self.reader_threads > 256 || self.prefetch == 0 || self.prefetch > 64 {
            return bad(
                format!(
                    "--reader-threads {} / --prefetch {}: each must be 1 to 256 / 1 to 64",
                    self.reader_threads, self.prefetch
                ),
                "give --reader-threads 1..256 and --prefetch 1..64",
            );
        }
        let compute_ok = self.compute.is_finite() && (0.0..=3600.0).contains(&self.compute);
        let stdev_ok = self.compute_stdev.is_finite() && self.compute_stdev >= 0.0;
        if !(compute_ok && stdev_ok) {
            return bad(
                format!(
                    "--compute {} / --compute-stdev {} is not a time of 0 to 3600 s",
                    self.compute, self.compute_stdev
                ),
                "give seconds, e.g. --compute 0.323",
            );
        }
        if !(self.au > 0.0 && self.au <= 1.0) {
            return bad(format!("--au {} is not a fraction above 0 and at most 1", self.au), "give e.g. --au 0.9");
        }
        if self.transfer == 0 || self.transfer > 1 << 30 {
            return bad(format!("--transfer {} is not 1 byte to 1 GiB", self.transfer), "give e.g. --transfer 256k");
        }
        if self.epochs == 0 || self.epochs > 1000 {
            return bad(format!("--epochs {} is not 1 to 1000", self.epochs), "give --epochs 1..1000");
        }
        if self.format == Format::Jpeg && self.samples_per_file != 1 {
            return bad("a jpeg file holds one sample".into(), "leave --samples-per-file out for jpeg workloads");
        }
        if self.format == Format::Npz
            && format::file_size(Format::Npz, &vec![self.largest_sample(); self.samples_per_file as usize])
                > format::NPZ_LIMIT
        {
            return bad(
                "an npz file of these samples would be 4 GiB or more (ZIP64 is not written)".into(),
                "give a smaller --sample-bytes, --sample-stdev or --samples-per-file",
            );
        }
        Ok(())
    }

    /// The largest sample the spread allows: 3 standard deviations above the mean.
    pub fn largest_sample(&self) -> u64 {
        self.sample_bytes.saturating_add(self.sample_stdev.saturating_mul(3))
    }

    /// Steps per epoch the data set holds: each rank's contiguous block of samples in whole
    /// batches (the samples left over are not read, as in DLIO).
    pub fn most_steps(&self) -> u64 {
        self.files.saturating_mul(self.samples_per_file) / self.accelerators as u64 / self.batch
    }

    /// Bytes of sample `k` of file `f`: normal around the mean with the standard deviation,
    /// within 3 of them and at least 1 byte; one size per file but for tfrecord (a size per
    /// record), as DLIO's generators draw them.
    pub fn sample_size(&self, f: u64, k: u64) -> u64 {
        if self.sample_stdev == 0 {
            return self.sample_bytes;
        }
        let k = if self.format == Format::Tfrecord { k } else { 0 };
        let mix = crate::engine::offsets::mix;
        let u = |salt: u64| {
            (mix(mix(self.seed, f), k.wrapping_mul(2).wrapping_add(salt)) >> 11) as f64 / (1u64 << 53) as f64
        };
        // Box-Muller from two uniforms.
        let z = (-2.0 * (1.0 - u(0)).ln()).sqrt() * (2.0 * std::f64::consts::PI * u(1)).cos();
        let size = self.sample_bytes as f64 + z.clamp(-3.0, 3.0) * self.sample_stdev as f64;
        (size.round() as u64).clamp(1, self.largest_sample())
    }

    /// The sample sizes of file `f`.
    pub fn file_samples(&self, f: u64) -> Vec<u64> {
        (0..self.samples_per_file).map(|k| self.sample_size(f, k)).collect()
    }

    /// The data set's file names, in order.
    pub fn names(&self) -> Vec<String> {
        (0..self.files).map(|f| format!("train-{f:07}.{}", self.format.extension())).collect()
    }

    /// Bytes of the whole data set.
    pub fn dataset_bytes(&self) -> u64 {
        (0..self.files).map(|f| format::file_size(self.format, &self.file_samples(f))).sum()
    }
}

/// Sleeps `d` (an emulated compute time), waking early once `cancel` asks the study to stop:
/// a step of minutes must not hold a stop past its deadline.
pub(crate) fn nap(d: std::time::Duration, cancel: &crate::cancel::Cancel) {
    const SLICE: std::time::Duration = std::time::Duration::from_millis(50);
    let end = std::time::Instant::now() + d;
    loop {
        let now = std::time::Instant::now();
        if now >= end || cancel.is_cancelled() {
            return;
        }
        std::thread::sleep((end - now).min(SLICE));
    }
}

/// The samples a data set needs by MLPerf Storage's rule: enough for 500 steps of every
/// accelerator, and at least 5 times the clients' RAM, summed over their nodes (so that no
/// page cache can hold its part).
pub fn rule_samples(batch: u64, accelerators: u64, ram_bytes: u64, sample_bytes: u64) -> u64 {
    let steps = 500u64.saturating_mul(batch).saturating_mul(accelerators);
    let ram = 5u64.saturating_mul(ram_bytes).div_ceil(sample_bytes.max(1));
    steps.max(ram)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(over: Overrides, accelerators: usize) -> Result<Settings, TrainError> {
        Settings::resolve((Model::Unet3d, Accelerator::H100, accelerators), &over, (1 << 30, None), (1, 1, false))
    }

    #[test]
    fn the_rule_takes_the_larger_of_steps_and_five_times_ram() {
        // 500 steps x 7 x 8 = 28000 samples; 5 x 1 GiB / 146.6 MB = 37 samples.
        assert_eq!(rule_samples(7, 8, 1 << 30, 146_600_628), 28_000);
        // 5 x 64 GiB / 114660 B.
        assert_eq!(rule_samples(1, 1, 64 << 30, 114_660), (5u64 * (64 << 30)).div_ceil(114_660));
    }

    #[test]
    fn presets_apply_and_every_field_is_overridden() {
        let s = settings(Overrides::default(), 2).unwrap();
        assert_eq!((s.compute, s.batch, s.reader_threads, s.au), (0.323, 7, 4, 0.9));
        assert_eq!(s.files, 7000);
        let over = Overrides {
            batch: Some(2),
            files: Some(40),
            compute: Some(0.5),
            sample_bytes: Some(4096),
            ..Default::default()
        };
        let s = settings(over, 2).unwrap();
        assert_eq!((s.batch, s.files, s.compute, s.sample_bytes, s.steps), (2, 40, 0.5, 4096, 10));
    }

    #[test]
    fn settings_that_cannot_run_are_refused_in_one_line() {
        let refused = |over: Overrides, acc: usize| match settings(over, acc) {
            Err(e @ TrainError::Refused { .. }) => {
                assert!(!e.to_string().contains('\n'));
                assert_eq!(e.exit_code(), 2);
            }
            other => panic!("not refused: {other:?}"),
        };
        refused(Overrides { files: Some(4), ..Default::default() }, 1);
        refused(Overrides { batch: Some(0), ..Default::default() }, 1);
        refused(Overrides { compute: Some(f64::NAN), ..Default::default() }, 1);
        refused(Overrides { au: Some(1.5), ..Default::default() }, 1);
        refused(Overrides { steps: Some(1_000_000), ..Default::default() }, 1);
        refused(Overrides::default(), 0);
        let none = Settings::resolve(
            (Model::Retinanet, Accelerator::A100, 1),
            &Overrides::default(),
            (1 << 30, None),
            (1, 1, false),
        );
        assert!(none.unwrap_err().to_string().contains("no published compute time"));
    }

    #[test]
    fn sample_sizes_spread_within_three_deviations() {
        let s = settings(Overrides { files: Some(200), ..Default::default() }, 1).unwrap();
        let sizes: Vec<u64> = (0..200).map(|f| s.sample_size(f, 0)).collect();
        let mean = sizes.iter().sum::<u64>() as f64 / 200.0;
        assert!((mean - 146_600_628.0).abs() < 0.25 * 68_341_808.0, "{mean}");
        assert!(sizes.iter().all(|&x| x >= 1 && x <= s.largest_sample()));
        assert!(sizes.windows(2).any(|w| w[0] != w[1]));
    }
}
