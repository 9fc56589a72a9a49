//! What several studies take alike: the target's options, the team's, block devices, and
//! the readers of their values.

use super::Error;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Block devices as targets (docs/safety.md, "Block devices").
#[derive(Debug, Clone, Default, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct DeviceArgs {
    /// Block device under test, instead of --dir; repeat or comma-separate for several at
    /// once. Task t's region (or the one shared region) is on device t mod their number, the
    /// (t / that number)-th of its size there; O_DIRECT unless --buffered; all of the devices
    /// unless --size; --op read unless --op. Reading needs no further word.
    #[arg(long, value_name = "DEVICE", value_delimiter = ',', conflicts_with = "block")]
    pub device: Vec<PathBuf>,
    /// Allow writing this device, which destroys every byte on it: name each device written.
    #[arg(long, value_name = "DEVICE", value_delimiter = ',', requires = "device")]
    pub destroy_data: Vec<PathBuf>,
    /// Write over a file system or partition-table signature found on the device.
    #[arg(long, requires = "destroy_data")]
    pub ignore_signature: bool,
    /// Go through the page cache of the device instead of O_DIRECT.
    #[arg(long, requires = "device", conflicts_with = "direct")]
    pub buffered: bool,
}

/// Who runs a workload, where it is filed and what else is written: the same for `run` and
/// `meta`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct TeamArgs {
    /// Tasks (threads) in each process; under MPI the team is ranks x tasks.
    #[arg(long, default_value_t = 1, value_parser = tasks_arg)]
    pub tasks: usize,
    /// How the target is taken.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Sweep the number of active tasks inside one launch: "1,2,4,8", "1..64:x2", "2..8:+2";
    /// active tasks are taken round-robin over nodes, the others wait.
    #[arg(long, value_name = "LIST")]
    pub clients: Option<String>,
    /// Also write the run record as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// How a study takes its target, and the name it files its runs under.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct TargetArgs {
    /// Leave the data files in place (they stay recorded as iosurvey's).
    #[arg(long)]
    pub keep: bool,
    /// Use a directory that holds other files, or /; iosurvey still removes only its own.
    #[arg(long)]
    pub force: bool,
    /// Skip the free-space check (for file systems that compress or deduplicate).
    #[arg(long)]
    pub no_space_check: bool,
    /// Name the system measured, e.g. lustre-a or f800 (listed, filtered on, compared by).
    #[arg(long, value_name = "NAME", value_parser = label_arg)]
    pub label: Option<String>,
}

/// A `--label`: a short name of printable characters.
pub fn label_arg(text: &str) -> Result<String, String> {
    if !crate::record::is_label(text) {
        return Err("a label is 1 to 64 printable characters".into());
    }
    Ok(text.to_string())
}

impl TargetArgs {
    /// The target options these settings ask for.
    pub fn options(&self) -> crate::target::Options {
        crate::target::Options { force: self.force, keep: self.keep, must_exist: false }
    }
}

/// A `--tasks`: a count of at least 1.
pub fn tasks_arg(text: &str) -> Result<usize, super::hint::Refusal> {
    use super::hint::Refusal;
    match text.parse::<usize>() {
        Ok(0) => Err(Refusal::say("a run needs at least one task", "give --tasks 1 or more")),
        Ok(n) => Ok(n),
        Err(_) => {
            Err(Refusal::say(format!("'{text}' is not a count of tasks"), "give --tasks a whole number, 1 or more"))
        }
    }
}

/// An engine of the registry that touches no storage.
pub fn stand_in_arg(text: &str) -> Result<crate::spec::EngineName, super::hint::Refusal> {
    use super::hint::{spell_for, Command, Refusal};
    // The engine's own words, naming this flag.
    let engine = engine_arg(text).map_err(|r| {
        let hint = spell_for(&r.hint, Command::Run).replace("--engine", "--stand-in");
        Refusal::say(r.what.replace("--engine", "--stand-in"), hint)
    })?;
    match crate::engine::backends::entry(&engine).caps.storage {
        true => Err(Refusal::say(
            format!("{text} touches storage"),
            "give a test engine that touches none: null, or delay:D",
        )),
        false => Ok(engine),
    }
}

/// `--engine`, read by the engine registry: a registered name, with its parameter where the
/// engine takes one; else what is wrong and every name there is.
pub fn engine_arg(text: &str) -> Result<crate::spec::EngineName, super::hint::Refusal> {
    crate::engine::backends::parse(text).map_err(|e| super::hint::Refusal { what: e.to_string(), hint: e.hint() })
}

/// Refuses the device flags beside a directory target: they would be taken and do nothing.
pub fn device_flags_need_a_device(d: &DeviceArgs, dir: bool) -> Result<(), Error> {
    if dir && (!d.destroy_data.is_empty() || d.ignore_signature || d.buffered) {
        return Err(Error::refused(
            "--destroy-data, --ignore-signature and --buffered apply to --device, and the target is a directory",
            "leave them out, or give --device",
        ));
    }
    Ok(())
}

/// The directories of a `--dir a@b@c` (mdtest's separator), each distinct and holding none
/// of the others.
pub fn base_dirs(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let dirs: Vec<PathBuf> =
        dir.as_os_str().as_bytes().split(|&c| c == b'@').map(|p| PathBuf::from(OsStr::from_bytes(p))).collect();
    if dirs.iter().any(|d| d.as_os_str().is_empty()) {
        return Err(Error::refused(
            format!("--dir {} has an empty directory between its '@'s", dir.display()),
            "give --dir DIR or DIR@DIR@...",
        ));
    }
    if let Some((outer, inner)) = overlapping(&dirs) {
        let how = if outer == inner { "is given twice".to_string() } else { format!("holds {}", inner.display()) };
        return Err(Error::refused(
            format!(
                "--dir {}: base directory {} {how}, so one base's run would take the other's for its own",
                dir.display(),
                outer.display()
            ),
            "give base directories that are distinct and hold none of the others",
        ));
    }
    Ok(dirs)
}

/// Two of `dirs` that are one directory or one inside the other (as resolved now, a missing
/// leaf by its parent), outer first.
fn overlapping(dirs: &[PathBuf]) -> Option<(PathBuf, PathBuf)> {
    let resolved: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok().or_else(|| absolute(d))).collect();
    for (i, a) in resolved.iter().enumerate() {
        for b in &resolved[i + 1..] {
            if b.starts_with(a) {
                return Some((a.clone(), b.clone()));
            }
            if a.starts_with(b) {
                return Some((b.clone(), a.clone()));
            }
        }
    }
    None
}

/// The path made absolute through its directory's real path (the name itself is not
/// followed), to tell whether two names that do not exist yet are one.
pub fn absolute(path: &Path) -> Option<PathBuf> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}

/// Where `--s3 URL/BUCKET[/PREFIX]` sends a run: the registry's S3 kind.
pub fn bucket(spec: &str) -> crate::session::Place {
    crate::session::Place::Kind { kind: crate::kinds::s3::KIND.name, spec: spec.to_string() }
}

/// `w` as it runs on a bucket: the s3 engine where the default (sync) was left.
pub fn on_bucket(w: &crate::spec::Workload) -> crate::spec::Workload {
    let mut w = w.clone();
    if let crate::spec::Shape::Data(d) = &mut w.shape {
        if d.engine.base() == crate::engine::backends::ENGINES[0].name {
            d.engine = crate::spec::EngineName::new(crate::kinds::s3::KIND.name, None);
        }
    }
    w
}
