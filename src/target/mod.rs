//! The directory under test: the checks before a run, the lock that keeps one run per
//! directory, the manifest of the files iosurvey created, the clean-up that removes those
//! files and nothing else, free space, direct I/O and the page cache.
//!
//! Safety rests on three rules (docs/safety.md): every file operation goes through the
//! directory's descriptor with plain names and never through a link ([`dir`]); a file is
//! written or removed only if the manifest says this run created it, or an earlier run kept it
//! and it is still a regular, singly linked file of this user; and the manifest names a file
//! before the file exists, so a crash leaves nothing the next run cannot recognise.

pub mod cache;
pub mod device;
pub mod dir;
pub mod live;
pub mod manifest;
pub mod site;

use crate::spec::{Hint, Setting};
use crate::sys::errno::{
    EACCES, EDQUOT, EEXIST, EINVAL, ENOENT, ENOLCK, ENOSPC, ENOSYS, ENOTDIR, EOPNOTSUPP, EPERM, EROFS, EWOULDBLOCK,
};
use crate::sys::fs::{O_DIRECT, O_RDONLY, O_WRONLY};
use crate::units::{format_size, now_unix};
use dir::{own_entry, own_file, Dir, Unsafe};
use manifest::{BadManifest, Holder, Manifest, State};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// The manifest's name in the target.
pub const MANIFEST: &str = ".iosurvey-manifest";
const PROBE: &str = ".iosurvey-probe";

/// Why a target is refused (before any data is written) or could not be prepared.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TargetError {
    /// A system call failed on the directory or one of iosurvey's files.
    #[error("{op} failed on {path}: {source}")]
    Io {
        /// The call.
        op: &'static str,
        /// What it was called on.
        path: PathBuf,
        /// The system's reason.
        source: io::Error,
    },
    /// Neither the directory nor its parent exists.
    #[error("target directory {0} does not exist, nor does its parent")]
    MissingDir(PathBuf),
    /// The target does not exist and was to (a campaign's point: its file system may be gone).
    #[error("target directory {0} no longer exists, and a campaign's point never makes it (was its file system unmounted, or the directory removed?)")]
    Gone(PathBuf),
    /// The target does not exist, and its parent is where /etc/fstab mounts a file system that
    /// is not mounted.
    #[error("target directory {0} does not exist, and {1} is where /etc/fstab mounts a file system that is not mounted now, so iosurvey makes no directory there")]
    Unmounted(PathBuf, String),
    /// The target does not exist and its name is not one iosurvey makes.
    #[error("target directory {0} does not exist, and iosurvey makes no directory whose name {1}")]
    BadName(PathBuf, &'static str),
    /// The target is a file.
    #[error("target {0} is not a directory")]
    NotADir(PathBuf),
    /// The target is /.
    #[error("target is the root directory /, where iosurvey would scatter files")]
    RootDir,
    /// The target holds files iosurvey did not create.
    #[error("target {dir} holds {count} entries iosurvey did not create (first: {first})")]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
        /// How many.
        count: usize,
        /// One of them.
        first: String,
    },
    /// An entry iosurvey would write, read or remove is not safely its own.
    #[error("refusing {path}: it {why}")]
    Unsafe {
        /// The entry.
        path: PathBuf,
        /// What is wrong with it.
        why: Unsafe,
    },
    /// A file iosurvey did not create has the name of one it would write.
    #[error("refusing to write {0}: iosurvey did not create it")]
    Foreign(PathBuf),
    /// The manifest cannot be trusted.
    #[error("refusing the manifest {path}: {why}")]
    BadManifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        why: BadManifest,
    },
    /// An entry the run would remove is a mount point.
    #[error("{0} is a mount point (another file system, or a bind mount): iosurvey never removes anything inside another mount")]
    Mounted(PathBuf),
    /// Another run holds the directory.
    #[error("target {dir} is in use by another iosurvey run ({})", .holder.as_ref().map_or("holder unknown".to_string(), |h| h.to_string()))]
    Busy {
        /// The directory.
        dir: PathBuf,
        /// Who, as its manifest says.
        holder: Option<Holder>,
    },
    /// Not enough free space (bytes, or inodes for a metadata run).
    #[error("the run needs {need} in {dir} but only {free} is free")]
    NoSpace {
        /// The directory.
        dir: PathBuf,
        /// Bytes (or inodes) to be made, formatted.
        need: String,
        /// Free bytes (or inodes), formatted.
        free: String,
    },
    /// A run that writes, on a read-only mount.
    #[error("the file system holding {0} is mounted read-only and the run writes")]
    ReadOnly(PathBuf),
    /// A run that reads first, with nothing to read.
    #[error("nothing to read: {0} does not exist")]
    NoData(PathBuf),
    /// The file system refuses O_DIRECT.
    #[error("the file system at {0} refuses direct I/O (O_DIRECT)")]
    DirectRefused(PathBuf),
    /// Transfers not aligned for O_DIRECT.
    #[error("direct I/O needs transfers that are multiples of {align} bytes on {dir}, got {transfer}")]
    DirectMisaligned {
        /// The directory.
        dir: PathBuf,
        /// Required alignment.
        align: u64,
        /// The transfer given.
        transfer: u64,
    },
    /// `--device` names something that is not a block device.
    #[error("{0} is {1}, not a block device")]
    NotABlockDevice(PathBuf, &'static str),
    /// A run would write a device the user did not allow to be destroyed.
    #[error("the run writes to {0}, which destroys the data on it, and --destroy-data does not name it")]
    NoConsent(PathBuf),
    /// Two paths name one device.
    #[error("{0} and {1} are the same device")]
    DeviceTwice(PathBuf, PathBuf),
    /// `--destroy-data` names another device.
    #[error("--destroy-data names {named}, which is not the device under test {path}")]
    DestroyOther {
        /// The device under test.
        path: PathBuf,
        /// The device named.
        named: PathBuf,
    },
    /// The device (or its disk, a partition of it, a holder) is in use.
    #[error("refusing to write {path}: {why}")]
    DeviceInUse {
        /// The device.
        path: PathBuf,
        /// How it is used.
        why: String,
    },
    /// Writing the device would write the result store's files.
    #[error("refusing to write {path}: {why}")]
    DeviceOnStore {
        /// The device.
        path: PathBuf,
        /// Which of the store's files it stands on.
        why: String,
    },
    /// The device holds a file system or partition-table signature.
    #[error("refusing to write {path}: it holds {found}")]
    Signature {
        /// The device.
        path: PathBuf,
        /// What was found.
        found: String,
    },
    /// The run's regions go past the device's end.
    #[error("the run needs {need} of {path}, which holds {size}")]
    DeviceTooSmall {
        /// The device.
        path: PathBuf,
        /// Bytes the run addresses, formatted.
        need: String,
        /// The device's size, formatted.
        size: String,
    },
}

impl TargetError {
    /// What the user can do about it.
    pub fn hint(&self) -> Hint {
        use Setting::*;
        match self {
            TargetError::Io { source, .. } => Hint::say(match source.raw_os_error() {
                Some(EACCES) | Some(EPERM) => "check the permissions of the target, or pick a directory you may write to",
                Some(EROFS) => "the file system is mounted read-only; pick a writable target",
                Some(ENOSPC) | Some(EDQUOT) => "free space on the target (or raise the quota)",
                _ => "check the target file system and retry",
            }),
            TargetError::MissingDir(_) => Hint::say("create the parent directory first").or(Hint::Use(Dir, "an existing directory".into())),
            TargetError::NotADir(_) => Hint::Use(Dir, "a directory".into()),
            TargetError::Unmounted(..) => Hint::say("mount it first; to measure the disk beneath instead, make the directory yourself"),
            TargetError::Gone(_) => Hint::say("mount its file system again (or make the directory), then run the same command again"),
            TargetError::BadName(..) => Hint::Use(Dir, "a plain name (printable characters, at most 255 bytes)".into())
                .or(Hint::say("create that directory yourself first")),
            TargetError::RootDir | TargetError::NotEmpty { .. } => Hint::Use(Dir, "an empty directory".into()).or(Hint::Because(
                "to use it anyway (iosurvey still removes only its own files)".into(),
                Box::new(Hint::Add(Force, None)),
            )),
            TargetError::Unsafe { .. } | TargetError::BadManifest { .. } => Hint::say(
                "iosurvey writes and removes only plain files it created itself; remove or rename that entry, or use another directory",
            ),
            TargetError::Foreign(_) => Hint::say("move that file away or use another directory: iosurvey never writes a file it did not create, whatever it is told"),
            TargetError::Busy { .. } => Hint::say("wait for that run to end, or use another directory"),
            TargetError::Mounted(_) => Hint::say("unmount it, or use another directory"),
            TargetError::NoSpace { .. } => Hint::say("free space")
                // What sizes the files of data and of metadata runs: each front end names those
                // it has.
                .or(Hint::Lower(vec![Block, Total, Items, ItemBytes]))
                .or(Hint::Because("if the file system compresses or deduplicates".into(), Box::new(Hint::Add(NoSpaceCheck, None)))),
            TargetError::ReadOnly(_) => Hint::say("pick a writable target").or(Hint::Because("to read kept files".into(), Box::new(Hint::Use(Ops, "read".into())))),
            TargetError::NoData(_) => Hint::Use(Ops, "write,read".into()).or(Hint::Because(
                "in the run that writes them, with the same sizes and tasks".into(),
                Box::new(Hint::Add(Keep, None)),
            )),
            TargetError::DirectRefused(_) => Hint::Drop(Direct).or(Hint::say("use a file system that supports O_DIRECT")),
            TargetError::DirectMisaligned { align, .. } => Hint::MultipleOf(Transfer, align.to_string()),
            TargetError::NotABlockDevice(..) => Hint::say("give a block device (/dev/sdX, /dev/loopN), or --dir for a directory"),
            TargetError::NoConsent(path) => Hint::say(format!(
                "if every byte on it may be lost, add --destroy-data {}; or run --op read",
                crate::escape::visible(&path.display().to_string())
            )),
            TargetError::DeviceTwice(..) => Hint::say("give each device once"),
            TargetError::DestroyOther { .. } => Hint::say("name the device under test itself with --destroy-data"),
            TargetError::DeviceInUse { .. } => Hint::say("unmount it, stop what holds it (swapoff, mdadm --stop, vgchange -an), or pick another device"),
            TargetError::DeviceOnStore { .. } => Hint::say("pick another device, or keep the results in another store (--db)"),
            TargetError::Signature { .. } => Hint::say("pick another device, wipe it yourself, or add --ignore-signature if that data may be lost"),
            TargetError::DeviceTooSmall { .. } => Hint::Lower(vec![Total]),
        }
    }

    fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        TargetError::Io { op, path: path.into(), source }
    }
}

/// What is wrong with a name that [`dir::plain_name`] refuses, as the end of a sentence.
fn odd_name(name: &OsStr) -> &'static str {
    use std::os::unix::ffi::OsStrExt;
    let b = name.as_bytes();
    if b.len() > 255 {
        "is longer than 255 bytes"
    } else if b.iter().any(|&c| c < 0x20) {
        "holds a control character (a newline, a tab, an escape)"
    } else {
        "is . or .."
    }
}

/// What the user chose about the target.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Accept / and a directory holding foreign entries (never overwrite them).
    pub force: bool,
    /// Leave the data files, marked kept.
    pub keep: bool,
    /// Never make a missing directory: a campaign's target was there when its file was read,
    /// so a missing one means its file system went, and a leaf made now would be on the disk
    /// beneath.
    pub must_exist: bool,
}

/// A target directory taken for a run: locked, its manifest read and checked.
#[derive(Debug)]
pub struct Target {
    dir: Arc<Dir>,
    /// The parent and the name, when iosurvey made the directory (and so removes it).
    made: Option<(Dir, OsString)>,
    manifest: Manifest,
    writable: bool,
    keep: bool,
    notes: Vec<String>,
    live: live::Handle,
}

/// What clean-up could not do.
#[derive(Debug, Default)]
pub struct Leftovers {
    /// Entries that could not be removed, with why.
    pub problems: Vec<String>,
    /// Files left on purpose (--keep).
    pub kept: usize,
}

impl Target {
    /// Takes `path` as the target. A missing leaf is created (its parent must exist) and
    /// removed again at clean-up.
    pub fn open(path: &Path, options: Options) -> Result<Target, TargetError> {
        match Dir::open(path) {
            Ok(dir) => Target::adopt(dir, None, options),
            Err(e) if e.raw_os_error() == Some(ENOTDIR) => Err(TargetError::NotADir(path.into())),
            Err(e) if e.raw_os_error() == Some(ENOENT) && options.must_exist => Err(TargetError::Gone(path.into())),
            Err(e) if e.raw_os_error() == Some(ENOENT) => {
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                match (path.file_name(), Dir::open(parent)) {
                    (Some(name), Ok(parent)) if dir::plain_name(name) => {
                        // A leaf made under a mount point whose file system is gone would
                        // be on the disk beneath, measured under the target's name.
                        let at = std::fs::canonicalize(parent.path()).map(|p| p.join(name));
                        match at.ok().and_then(|at| crate::env::fstab_unmounted_above(&at)) {
                            Some(point) => Err(TargetError::Unmounted(path.into(), point)),
                            None => Target::create(parent, name, options),
                        }
                    }
                    // The parent is there: what stops iosurvey is the name it would make.
                    (Some(name), Ok(_)) => Err(TargetError::BadName(path.into(), odd_name(name))),
                    _ => Err(TargetError::MissingDir(path.into())),
                }
            }
            Err(e) => Err(TargetError::io("open", path, e)),
        }
    }

    /// Removes at once what a run that ended without cleaning up left in `dir`, as the next
    /// run there would on taking the directory: its `running` files, then the manifest and,
    /// when `made` (the run made the directory: its parent and name), the directory, if
    /// nothing else is in them. The directory is held by its descriptor, so it is cleaned
    /// where it is now, even renamed. Waits up to `patience` for the dead run's lock to go.
    /// Nothing is created. Returns what could not be removed.
    pub fn reclaim(
        dir: &Dir,
        made: Option<(&Dir, &OsStr)>,
        patience: std::time::Duration,
    ) -> Result<Vec<String>, TargetError> {
        let deadline = std::time::Instant::now() + patience;
        let options = Options { force: true, ..Options::default() };
        let copy = |d: &Dir| d.try_clone().map_err(|e| TargetError::io("open", d.path(), e));
        loop {
            let made = match made {
                Some((parent, name)) => Some((copy(parent)?, name.to_os_string())),
                None => None,
            };
            match Target::adopt(copy(dir)?, made, options) {
                Err(TargetError::Busy { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(50))
                }
                Err(e) => return Err(e),
                Ok(t) => return Ok(t.cleanup().problems),
            }
        }
    }

    /// Makes a fresh directory `name` in `parent` as the target; it is removed at clean-up.
    pub fn create(parent: Dir, name: &OsStr, options: Options) -> Result<Target, TargetError> {
        let dir = parent.mkdir(name).map_err(|e| TargetError::io("mkdir", parent.show(name), e))?;
        let made = Some((parent, name.to_os_string()));
        Target::adopt(dir, made, options)
    }

    fn adopt(dir: Dir, made: Option<(Dir, OsString)>, options: Options) -> Result<Target, TargetError> {
        let undo = |made: &Option<(Dir, OsString)>| {
            if let Some((parent, name)) = made {
                let _ = parent.rmdir(name);
            }
        };
        let mut notes = Vec::new();
        let result = (|| {
            if dir.path() == Path::new("/") && !options.force {
                return Err(TargetError::RootDir);
            }
            let exclusive = lock(&dir, &mut notes)?;
            Ok((read_manifest(&dir)?, exclusive))
        })();
        let (manifest, exclusive) = match result {
            Ok(m) => m,
            Err(e) => {
                undo(&made);
                return Err(e);
            }
        };
        let writable = !dir.read_only();
        let mut t = Target {
            dir: Arc::new(dir),
            made,
            manifest,
            writable,
            keep: options.keep,
            notes,
            live: live::Handle::default(),
        };
        if let Err(e) = t.check_entries(options.force, exclusive) {
            undo(&t.made);
            t.made = None;
            return Err(e);
        }
        Ok(t)
    }

    /// Checks every entry: manifest entries must be iosurvey's own plain files; files a dead
    /// run left (`running`) are removed; anything else is foreign. Then records this run as
    /// the holder.
    fn check_entries(&mut self, force: bool, exclusive: bool) -> Result<(), TargetError> {
        let dir = self.dir.clone();
        let mut reclaimed = Vec::new();
        for (name, state) in self.manifest.entries.clone() {
            let Some(st) = dir.stat(&name).map_err(|e| TargetError::io("stat", dir.show(&name), e))? else {
                self.manifest.entries.remove(&name);
                continue;
            };
            own_entry(&st).map_err(|why| TargetError::Unsafe { path: dir.show(&name), why })?;
            if state == State::Running {
                // Without a lock that keeps every other run out, a holder that may still be
                // alive may still be writing these: refuse rather than remove its files.
                let holder = self.manifest.holder.as_ref();
                if !may_reclaim(exclusive, holder) {
                    return Err(TargetError::Busy { dir: dir.path().into(), holder: holder.cloned() });
                }
                if dir.mount_point(&name).map_err(|e| TargetError::io("stat", dir.show(&name), e))? {
                    return Err(TargetError::Mounted(dir.show(&name)));
                }
                dir.remove_own(&name).map_err(|e| TargetError::io("remove", dir.show(&name), e))?;
                self.manifest.entries.remove(&name);
                reclaimed.push(name);
            }
        }
        if !reclaimed.is_empty() {
            let by = self.manifest.holder.as_ref().map_or("an earlier run".to_string(), |h| format!("run {h}"));
            self.notes.push(format!(
                "removed {} file{} left by {by}, which ended without cleaning up ({})",
                reclaimed.len(),
                if reclaimed.len() == 1 { "" } else { "s" },
                reclaimed.join(", ")
            ));
        }
        let mut foreign: Vec<String> = dir
            .list()
            .map_err(|e| TargetError::io("list", dir.path(), e))?
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| n != MANIFEST && !self.manifest.entries.contains_key(n))
            .collect();
        if !foreign.is_empty() && !force {
            foreign.sort();
            return Err(TargetError::NotEmpty {
                dir: dir.path().into(),
                count: foreign.len(),
                first: foreign.swap_remove(0),
            });
        }
        self.manifest.holder =
            Some(Holder { pid: std::process::id(), host: crate::env::hostname(), started: now_unix() });
        if self.writable {
            self.save_manifest()?;
        }
        Ok(())
    }

    /// The directory, for the engine's opens.
    pub fn dir(&self) -> &Arc<Dir> {
        &self.dir
    }

    /// Whether iosurvey made the directory for this run (and so removes it).
    pub fn made(&self) -> bool {
        self.made.is_some()
    }

    /// Where iosurvey made the directory (its parent and name), if it did.
    pub fn made_in(&self) -> Option<(&Dir, &OsStr)> {
        self.made.as_ref().map(|(parent, name)| (parent, name.as_os_str()))
    }

    /// What the user should hear about the target (locks, reclaimed leftovers), once.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Whether the run keeps its files.
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// Whether the file system takes writes.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Names in the manifest, as this run's, the files among `names` that do not exist yet;
    /// the tasks then create them ([`Dir::create_or_open_own`]), each on its own node, so no
    /// node caches them as empty. A name taken by a file iosurvey did not create is refused.
    pub fn claim(&mut self, names: &[String]) -> Result<(), TargetError> {
        let dir = self.dir.clone();
        let mut fresh = Vec::new();
        for name in names {
            if self.manifest.entries.contains_key(name) {
                continue;
            }
            if dir.stat(name).map_err(|e| TargetError::io("stat", dir.show(name), e))?.is_some() {
                return Err(TargetError::Foreign(dir.show(name)));
            }
            fresh.push(name.clone());
        }
        if fresh.is_empty() {
            return Ok(());
        }
        for name in &fresh {
            self.manifest.entries.insert(name.clone(), State::Running);
        }
        self.save_manifest()?;
        self.publish();
        Ok(())
    }

    /// Removes those of `names` that are this run's (named in its manifest), so that the next
    /// write makes them anew: the matrix measures the write of a new file. They stay named, so
    /// the write that makes them again needs no new claim.
    pub fn discard(&mut self, names: &[String]) -> Result<(), TargetError> {
        for name in names.iter().filter(|n| self.manifest.entries.contains_key(*n)) {
            self.dir.remove_own(name).map_err(|e| TargetError::io("remove", self.dir.show(name), e))?;
        }
        Ok(())
    }

    /// Names directory `name` in the manifest as this run's, then makes it (a metadata run's
    /// root): everything the run makes lives below it, so a crash leaves one entry to reclaim.
    /// It is made, or a kept one set, mode 0700: no other user can put anything below it,
    /// which is what lets the run's calls walk paths in it (docs/safety.md).
    pub fn claim_dir(&mut self, name: &str) -> Result<(), TargetError> {
        self.claim(&[name.to_string()])?;
        let path = self.dir.show(name);
        match self.dir.stat(name).map_err(|e| TargetError::io("stat", &path, e))? {
            None => self.dir.mkdir_private(name.as_ref()).map(drop).map_err(|e| TargetError::io("mkdir", &path, e)),
            Some(st) if st.kind == dir::Kind::Dir => {
                own_entry(&st).map_err(|why| TargetError::Unsafe { path: path.clone(), why })?;
                let kept = self.dir.open_subdir(name).map_err(|e| TargetError::io("open", &path, e))?;
                kept.make_private().map_err(|e| TargetError::io("chmod", &path, e))
            }
            Some(_) => Err(TargetError::Foreign(path)),
        }
    }

    /// Removes one file this run created, before the end of the run.
    fn release(&mut self, name: &str) -> Result<(), TargetError> {
        match self.dir.unlink(name) {
            Err(e) if e.raw_os_error() != Some(ENOENT) => {
                return Err(TargetError::io("remove", self.dir.show(name), e))
            }
            _ => {}
        }
        self.manifest.entries.remove(name);
        self.publish();
        self.save_manifest()
    }

    /// The files this run created: the manifest's `running` entries, since any a dead run
    /// left were removed when the run took the directory.
    fn created(&self) -> Vec<String> {
        self.manifest.entries.iter().filter(|(_, s)| **s == State::Running).map(|(n, _)| n.clone()).collect()
    }

    /// Tells the signal-time clean-up what this run has created.
    fn publish(&mut self) {
        let copies = self.dir.try_clone().ok().zip(match &self.made {
            Some((p, n)) => p.try_clone().ok().map(|p| Some((p, n.clone()))),
            None => Some(None),
        });
        if let Some((dir, made)) = copies {
            let ours = self.manifest.entries.values().all(|s| *s == State::Running);
            let names = if self.keep { Vec::new() } else { self.created() };
            self.live.update(live::Files { dir, names, manifest_too: ours && !self.keep, made });
        }
    }

    fn save_manifest(&self) -> Result<(), TargetError> {
        let text = self.manifest.render();
        let path = self.dir.show(MANIFEST);
        let file = match self.dir.open_own(MANIFEST, O_WRONLY) {
            Err(e) if e.raw_os_error() == Some(ENOENT) => self.dir.create(MANIFEST, 0),
            other => other,
        }
        .map_err(|e| TargetError::io("write", &path, e))?;
        // One write from offset 0, then cut what an older, longer text left behind.
        file.write_all_at(text.as_bytes(), 0)
            .and_then(|()| file.set_len(text.len() as u64))
            .map_err(|e| TargetError::io("write", &path, e))
    }

    /// Data files that a run reading first needs: each must exist as iosurvey's own file.
    pub fn check_readable(&self, names: &[String]) -> Result<(), TargetError> {
        for name in names {
            match self.dir.stat(name).map_err(|e| TargetError::io("stat", self.dir.show(name), e))? {
                None => return Err(TargetError::NoData(self.dir.show(name))),
                Some(st) => own_file(&st).map_err(|why| TargetError::Unsafe { path: self.dir.show(name), why })?,
            }
            if !self.manifest.entries.contains_key(name) {
                return Err(TargetError::Foreign(self.dir.show(name)));
            }
        }
        Ok(())
    }

    /// Refuses a run that needs more free space than the file system has.
    pub fn check_space(&self, names: &[String], file_size: u64) -> Result<(), TargetError> {
        let mut need = 0u64;
        for name in names {
            let existing = self.dir.stat(name).ok().flatten().map_or(0, |st| st.size);
            need = need.saturating_add(file_size.saturating_sub(existing));
        }
        let free = self.dir.free_bytes().map_err(|e| TargetError::io("statvfs", self.dir.path(), e))?;
        if need > free {
            return Err(TargetError::NoSpace {
                dir: self.dir.path().into(),
                need: format_size(need),
                free: format_size(free),
            });
        }
        Ok(())
    }

    /// Whether directory `inner` is in directory `outer` of the target (plain names, opened
    /// without following a link).
    pub fn has_dir(&self, outer: &str, inner: &str) -> bool {
        self.dir.open_subdir(outer).and_then(|d| d.open_subdir(inner)).is_ok()
    }

    /// Refuses a metadata run whose share in this directory (`tasks` tasks of workload `w`)
    /// needs more blocks or inodes than the file system has free ([`crate::spec::Meta::space_need`]).
    /// A file system that counts no inodes (btrfs says 0) is checked on bytes only.
    pub fn check_meta_space(
        &self,
        meta: &crate::spec::Meta,
        ops: &[crate::spec::Op],
        tasks: u64,
    ) -> Result<(), TargetError> {
        let st = self.dir.statvfs().map_err(|e| TargetError::io("statvfs", self.dir.path(), e))?;
        let (bytes, inodes) = meta.space_need(ops, tasks, st.frsize);
        let free = st.bavail.saturating_mul(st.frsize);
        let dir = self.dir.path().into();
        if bytes > free {
            return Err(TargetError::NoSpace { dir, need: format_size(bytes), free: format_size(free) });
        }
        if st.files > 0 && inodes > st.favail {
            let count = |n: u64| format!("{n} inodes");
            return Err(TargetError::NoSpace { dir, need: count(inodes), free: count(st.favail) });
        }
        Ok(())
    }

    /// Checks that the file system takes O_DIRECT and returns its offset alignment, with a
    /// probe file named in the manifest like any other.
    /// On a read-only file system nothing can be made, so the first of `existing` (files the
    /// run will read) is opened for the probe instead.
    pub fn direct_alignment(&mut self, existing: &[String]) -> Result<u64, TargetError> {
        let dir = self.dir.clone();
        let probe = |opened: io::Result<std::fs::File>, name: &str| match opened {
            Ok(f) => Ok(dio_offset_align(&f).unwrap_or(512)),
            Err(e) if e.raw_os_error() == Some(EINVAL) => Err(TargetError::DirectRefused(dir.path().into())),
            Err(e) if e.raw_os_error() == Some(EEXIST) => Err(TargetError::Foreign(dir.show(name))),
            Err(e) => Err(TargetError::io("open", dir.show(name), e)),
        };
        if !self.writable {
            return existing.first().map_or(Ok(512), |name| probe(dir.open_own(name, O_RDONLY | O_DIRECT), name));
        }
        self.claim(&[PROBE.to_string()])?;
        let align = probe(dir.create(PROBE, O_DIRECT), PROBE);
        self.release(PROBE)?;
        align
    }

    /// Removes the files this run created (unless kept: then they are marked kept), then
    /// the manifest and the directory if nothing of iosurvey's is left in them.
    pub fn cleanup(mut self) -> Leftovers {
        let mut left = Leftovers::default();
        let dir = self.dir.clone();
        self.manifest.holder = None;
        for name in self.created() {
            if self.keep {
                self.manifest.entries.insert(name, State::Kept);
                left.kept += 1;
                continue;
            }
            match dir.remove_own(&name) {
                Ok(()) => drop(self.manifest.entries.remove(&name)),
                Err(e) if e.raw_os_error() == Some(ENOENT) => drop(self.manifest.entries.remove(&name)),
                Err(e) => left.problems.push(format!("{}: {e}", dir.show(&name).display())),
            }
        }
        if self.writable {
            let result = if self.manifest.entries.is_empty() {
                dir.unlink(MANIFEST).or_else(|e| if e.raw_os_error() == Some(ENOENT) { Ok(()) } else { Err(e) })
            } else {
                self.save_manifest().map_err(io::Error::other)
            };
            if let Err(e) = result {
                left.problems.push(format!("{}: {e}", dir.show(MANIFEST).display()));
            }
        }
        if let Some((parent, name)) = &self.made {
            if self.manifest.entries.is_empty() && !dir.is_at(parent, name) {
                left.problems.push(format!(
                    "{}: the directory iosurvey made was moved while in use; it is left, empty of iosurvey's files, where it went",
                    parent.show(name).display()
                ));
            } else if self.manifest.entries.is_empty() {
                if let Err(e) = parent.rmdir(name) {
                    left.problems.push(format!("{}: {e}", parent.show(name).display()));
                }
            }
        }
        self.live.clear();
        // The lock is let go here, not when the last descriptor closes: a task's handle of
        // the directory may outlive the run for a moment (a thread still ending), and a
        // child forked by another thread holds a copy until it execs; either kept the next
        // run of the same process out ("in use by another iosurvey run"). A file system
        // without locks refuses this too; closing the descriptor then does what it can.
        drop(crate::sys::fs::flock_release(dir.raw()));
        left
    }
}

/// Whether the `running` files of `holder` are a dead run's: certainly when this run holds a
/// lock that keeps every other run out, else only when the holder is known to have ended.
fn may_reclaim(exclusive: bool, holder: Option<&Holder>) -> bool {
    exclusive || holder.is_some_and(Holder::is_gone)
}

/// Takes the directory's lock for the whole run, on its own descriptor (no lock file).
/// Returns whether the lock keeps every other run out (not so without locks, or with locks
/// that hold per node only).
fn lock(dir: &Dir, notes: &mut Vec<String>) -> Result<bool, TargetError> {
    if let Err(e) = crate::sys::fs::flock_exclusive(dir.raw()) {
        let busy = || read_manifest(dir).ok().and_then(|m| m.holder);
        notes.extend(lock_refused(e, dir.path(), busy)?);
        return Ok(false);
    }
    let env = crate::env::collect(dir.path());
    let Some(why) = per_node_locks(&env.fs_type, &env.mount_options) else { return Ok(true) };
    notes.push(format!("{} {why}: a run on another node would not be kept out", dir.path().display()));
    Ok(false)
}

/// What a refused lock means: another run (an error naming its holder), a file system
/// without locks (a note, and the run goes on), or a failure.
fn lock_refused(
    e: io::Error,
    dir: &Path,
    holder: impl FnOnce() -> Option<Holder>,
) -> Result<Option<String>, TargetError> {
    match e.raw_os_error() {
        Some(EWOULDBLOCK) => Err(TargetError::Busy { dir: dir.into(), holder: holder() }),
        Some(ENOSYS) | Some(EOPNOTSUPP) | Some(ENOLCK) => Ok(Some(format!(
            "the file system at {} has no locks ({e}): another run in the same directory would not be kept out",
            dir.display()
        ))),
        _ => Err(TargetError::io("lock", dir, e)),
    }
}

/// Why locks on a mount of this type with these options may hold only within one node.
fn per_node_locks(fs_type: &str, mount_options: &str) -> Option<&'static str> {
    let opts: Vec<&str> = mount_options.split([',', ' ']).collect();
    match fs_type {
        "lustre" if !opts.contains(&"flock") => {
            Some("is on Lustre without the flock mount option, so its locks hold only per node")
        }
        "nfs" | "nfs4" if opts.iter().any(|o| matches!(*o, "local_lock=flock" | "local_lock=all")) => {
            Some("is on NFS with local_lock, so its locks hold only per node")
        }
        _ => None,
    }
}

/// The manifest, if any, checked to be iosurvey's own plain file and bounded in size.
fn read_manifest(dir: &Dir) -> Result<Manifest, TargetError> {
    let path = dir.show(MANIFEST);
    let mut file = match dir.open_own(MANIFEST, O_RDONLY) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(ENOENT) => return Ok(Manifest::default()),
        Err(_) => {
            let why = match dir.stat(MANIFEST) {
                Ok(Some(st)) => own_file(&st).err().unwrap_or(Unsafe::NotRegular),
                _ => Unsafe::NotRegular,
            };
            return Err(TargetError::Unsafe { path, why });
        }
    };
    let mut text = String::new();
    (&mut file)
        .take(manifest::MAX_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| TargetError::io("read", &path, e))?;
    Manifest::parse(&text).map_err(|why| TargetError::BadManifest { path, why })
}

/// The file system's O_DIRECT offset alignment from statx, where the kernel reports it.
fn dio_offset_align(file: &std::fs::File) -> Option<u64> {
    crate::sys::fs::dio_offset_align(file.as_raw_fd())
}

/// Names of the data files: `iosurvey.shared`, or `iosurvey.NNNNNN` per task.
pub fn data_files(shared: bool, files: usize) -> Vec<String> {
    if shared {
        vec!["iosurvey.shared".to_string()]
    } else {
        (0..files).map(|i| format!("iosurvey.{i:06}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::errno::EBADF;
    use std::fs;

    fn open(path: &Path, force: bool, keep: bool) -> Result<Target, TargetError> {
        Target::open(path, Options { force, keep, ..Options::default() })
    }

    fn listing(path: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(path).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn refuses_foreign_entries_and_removes_only_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("precious"), b"x").unwrap();
        let err = open(tmp.path(), false, false).unwrap_err();
        assert!(matches!(err, TargetError::NotEmpty { count: 1, .. }), "{err}");
        let mut t = open(tmp.path(), true, false).unwrap();
        t.claim(&data_files(false, 2)).unwrap();
        for name in data_files(false, 2) {
            drop(t.dir().create_or_open_own(&name, O_WRONLY).unwrap());
        }
        assert_eq!(listing(tmp.path()), [".iosurvey-manifest", "iosurvey.000000", "iosurvey.000001", "precious"]);
        assert!(t.cleanup().problems.is_empty());
        assert_eq!(listing(tmp.path()), ["precious"]);
    }

    #[test]
    fn a_foreign_file_with_iosurveys_name_is_never_claimed_even_with_force() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("iosurvey.000000"), b"PRECIOUS").unwrap();
        let mut t = open(tmp.path(), true, false).unwrap();
        let err = t.claim(&data_files(false, 1)).unwrap_err();
        assert!(matches!(err, TargetError::Foreign(_)), "{err}");
        assert!(t.cleanup().problems.is_empty());
        assert_eq!(fs::read(tmp.path().join("iosurvey.000000")).unwrap(), b"PRECIOUS");
        assert_eq!(listing(tmp.path()), ["iosurvey.000000"]);
    }

    #[test]
    fn kept_files_stay_and_a_later_run_may_use_but_not_remove_them() {
        let tmp = tempfile::tempdir().unwrap();
        let mut t = open(tmp.path(), false, true).unwrap();
        let files = data_files(true, 1);
        t.claim(&files).unwrap();
        drop(t.dir().create_or_open_own(&files[0], O_WRONLY).unwrap());
        assert_eq!(t.cleanup().kept, 1);
        let mut again = open(tmp.path(), false, false).expect("own directory accepted");
        again.check_readable(&files).unwrap();
        again.claim(&files).unwrap();
        assert!(again.cleanup().problems.is_empty());
        assert!(tmp.path().join("iosurvey.shared").exists(), "a file the later run did not create survives");
    }

    #[test]
    fn a_dead_runs_files_are_reclaimed_and_said_so_and_kept_files_stay() {
        let tmp = tempfile::tempdir().unwrap();
        for f in ["iosurvey.000000", "iosurvey.000001", "iosurvey.shared"] {
            fs::write(tmp.path().join(f), b"data").unwrap();
        }
        let text = "iosurvey-manifest 2\nholder 999999 elsewhere 1\nrunning iosurvey.000000\nrunning iosurvey.000001\nkept iosurvey.shared\n";
        fs::write(tmp.path().join(MANIFEST), text).unwrap();
        let mut next = open(tmp.path(), false, false).unwrap();
        let notes = next.take_notes();
        assert!(
            notes.iter().any(|n| n.contains("removed 2 files") && n.contains("pid 999999 on elsewhere")),
            "{notes:?}"
        );
        assert!(next.cleanup().problems.is_empty());
        assert_eq!(listing(tmp.path()), [".iosurvey-manifest", "iosurvey.shared"]);
        let m = Manifest::parse(&fs::read_to_string(tmp.path().join(MANIFEST)).unwrap()).unwrap();
        assert_eq!(m.holder, None);
        assert_eq!(m.entries.into_iter().collect::<Vec<_>>(), [("iosurvey.shared".to_string(), State::Kept)]);
    }

    #[test]
    fn a_second_run_is_refused_while_the_first_holds_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let first = open(tmp.path(), false, false).unwrap();
        let err = open(tmp.path(), false, false).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, TargetError::Busy { .. }) && text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        drop(first.cleanup());
        open(tmp.path(), false, false).unwrap().cleanup();
        assert!(listing(tmp.path()).is_empty(), "no lock file is left");
    }

    #[test]
    fn a_run_cleaned_up_lets_the_next_in_though_a_handle_of_its_directory_lives_on() {
        let tmp = tempfile::tempdir().unwrap();
        let first = open(tmp.path(), false, false).unwrap();
        // A task's handle, or a forked child's copy of the descriptor, still open.
        let (shared, copy) = (first.dir().clone(), first.dir().try_clone().unwrap());
        assert!(first.cleanup().problems.is_empty());
        let next = open(tmp.path(), false, false).expect("the ended run's lock is gone");
        assert!(next.cleanup().problems.is_empty());
        drop((shared, copy));
    }

    #[test]
    fn file_systems_without_locks_or_with_per_node_locks_are_said_so() {
        let dir = Path::new("/scratch/x");
        let holder = || Some(Holder { pid: 9, host: "n2".into(), started: 0 });
        for errno in [ENOLCK, EOPNOTSUPP, ENOSYS] {
            let note = lock_refused(io::Error::from_raw_os_error(errno), dir, holder).unwrap().unwrap();
            assert!(note.contains("has no locks"), "{note}");
        }
        let busy = lock_refused(io::Error::from_raw_os_error(EWOULDBLOCK), dir, holder).unwrap_err();
        assert!(busy.to_string().contains("pid 9 on n2"), "{busy}");
        assert!(lock_refused(io::Error::from_raw_os_error(EBADF), dir, holder).is_err());
        assert!(per_node_locks("lustre", "rw,localflock").is_some());
        assert!(per_node_locks("lustre", "rw,flock").is_none());
        assert!(per_node_locks("nfs4", "rw,relatime rw,vers=4.2,local_lock=flock").is_some());
        assert!(per_node_locks("nfs4", "rw local_lock=none").is_none());
        assert!(per_node_locks("ext4", "rw").is_none());
    }

    #[test]
    fn without_a_lock_only_a_holder_known_dead_has_its_files_reclaimed() {
        let me = Holder { pid: std::process::id(), host: crate::env::hostname(), started: 0 };
        let dead = Holder { pid: i32::MAX as u32, ..me.clone() };
        let elsewhere = Holder { host: "another-node".into(), ..dead.clone() };
        assert!(may_reclaim(true, Some(&me)), "the lock is proof enough");
        assert!(!may_reclaim(false, Some(&me)), "a live holder keeps its files");
        assert!(may_reclaim(false, Some(&dead)));
        assert!(!may_reclaim(false, Some(&elsewhere)), "another host's pid cannot be checked");
        assert!(!may_reclaim(false, None));
    }

    #[test]
    fn a_missing_leaf_is_made_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let mut t = open(&tmp.path().join("scratch"), false, false).unwrap();
        t.claim(&data_files(false, 1)).unwrap();
        assert!(t.cleanup().problems.is_empty());
        assert!(listing(tmp.path()).is_empty());
        assert!(matches!(open(&tmp.path().join("a/b"), false, false), Err(TargetError::MissingDir(_))));
        let must = Options { must_exist: true, ..Options::default() };
        assert!(matches!(Target::open(&tmp.path().join("a"), must), Err(TargetError::Gone(_))));
        assert!(!tmp.path().join("a").exists(), "a directory that must exist is never made");
    }

    #[test]
    fn space_check_names_both_sizes() {
        let tmp = tempfile::tempdir().unwrap();
        let t = open(tmp.path(), false, false).unwrap();
        let files = data_files(false, 1);
        let err = t.check_space(&files, u64::MAX / 2).unwrap_err().to_string();
        assert!(err.contains("needs") && err.contains("free"), "{err}");
        t.check_space(&files, 4096).unwrap();
    }
}
