//! Where a run's data goes, as every process sees it: the member side of a target kind, the
//! one seam between the kinds. The engine asks a site to open file i of a run (a task's file,
//! or the shared one) and gets a handle: a descriptor and the offset its data starts at, or an
//! object of a bucket; it never asks what the target is. Files go round-robin over the site's
//! targets: file i to target i mod n, as a metadata run's task t works in base t mod n. Each
//! kind's members live beside its lead side in `session::kinds`, one file per kind.

use super::dir::Dir;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// What a member opens for an op.
pub enum Handle {
    /// A descriptor, and the offset the file's data starts at (a device's region).
    File(File, u64),
    /// An object of a bucket.
    Object(Object),
}

/// An object a task reads or writes: the client of its bucket and its key.
#[derive(Debug, Clone)]
pub struct Object {
    /// The bucket's client (shared by the process's tasks; each request is its own).
    pub client: Arc<crate::s3::Client>,
    /// The object's key, of iosurvey's naming.
    pub key: String,
}

/// The key of object `k` of the file whose key is `file`: the file's block k, each block of a
/// file on a bucket being an object of its own.
pub fn object_key(file: &str, k: u64) -> String {
    format!("{file}/{k:06}")
}

/// Which kind of handle a target gives and an engine takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Handles {
    /// File descriptors.
    Files,
    /// Objects.
    Objects,
}

impl Handles {
    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Handles::Files => "file descriptors",
            Handles::Objects => "objects",
        }
    }
}

/// One target of a run as every process holds it.
pub trait Member: Send + Sync + std::fmt::Debug {
    /// The kind's name in the registry.
    fn kind(&self) -> &'static str;
    /// The handles it gives.
    fn handles(&self) -> Handles;
    /// Where it is, as records and messages name it.
    fn path(&self) -> PathBuf;
    /// Where file `name` is, for messages.
    fn show(&self, name: &str) -> PathBuf;
    /// Opens file `name` with `flags`; `start` is where it would begin on a target that holds
    /// files as regions of itself.
    fn open(&self, name: &str, start: u64, flags: i32, how: Opening) -> io::Result<Handle>;
    /// Removes file `name` before a write phase that starts afresh.
    fn remove(&self, name: &str) -> io::Result<()>;
    /// Its directory, when it is one (a metadata run's base).
    fn dir(&self) -> Option<&Dir> {
        None
    }
}

/// The targets a run's data goes to.
#[derive(Debug, Clone)]
pub struct Site(Vec<Arc<dyn Member>>);

/// How a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Made if missing (a write).
    Create,
    /// Opened as it is.
    Existing,
}

impl Site {
    /// A site of these members.
    pub fn new(members: Vec<Arc<dyn Member>>) -> Site {
        Site(members)
    }

    /// A site of directories (the name of the kind that came first).
    #[allow(non_snake_case)]
    pub fn Dirs(dirs: Vec<Arc<Dir>>) -> Site {
        Site(dirs.into_iter().map(|d| d as Arc<dyn Member>).collect())
    }

    /// How many targets.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The targets `range` of this site.
    pub fn part(&self, range: std::ops::Range<usize>) -> Site {
        Site(self.0[range].to_vec())
    }

    /// The handles its targets give (files when it has none).
    pub fn handles(&self) -> Handles {
        self.0.first().map_or(Handles::Files, |m| m.handles())
    }

    /// Directory `k` (a metadata run's base), when the site is made of directories.
    pub fn dir(&self, k: usize) -> Option<&Dir> {
        self.0.get(k % self.0.len().max(1)).and_then(|m| m.dir())
    }

    /// The targets' paths.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.0.iter().map(|m| m.path()).collect()
    }

    /// Where file `index` of `names` is, for messages.
    pub fn show(&self, names: &[String], index: usize) -> PathBuf {
        self.0[index % self.len().max(1)].show(&names[index])
    }

    /// Opens file `index` of `names`, each `region` bytes, with `flags`.
    pub fn open(
        &self,
        names: &[String],
        (index, region): (usize, u64),
        flags: i32,
        how: Opening,
    ) -> io::Result<Handle> {
        let n = self.len().max(1);
        self.0[index % n].open(&names[index], (index / n) as u64 * region, flags, how)
    }

    /// Removes file `index` of `names` before a write phase that starts afresh.
    pub fn remove(&self, names: &[String], index: usize) -> io::Result<()> {
        self.0[index % self.len().max(1)].remove(&names[index])
    }
}

/// Which of a run's files `names` go to target `k` of `targets`: files k, k + n, ...
pub fn on_target(names: &[String], targets: usize, k: usize) -> Vec<String> {
    names.iter().skip(k).step_by(targets.max(1)).cloned().collect()
}

/// The bytes a run of `w` may move on `devices` devices of at least `smallest` bytes each,
/// used whole: the device given the most of its files (file i goes to device i mod n) holds
/// them all.
pub fn whole_devices(w: &crate::spec::Workload, devices: usize, smallest: u64) -> u64 {
    let files = match w.data() {
        Some(d) if d.access == crate::spec::Access::FilePerTask => w.tasks.max(1),
        _ => 1,
    } as u64;
    let most = files.div_ceil(devices.max(1) as u64);
    smallest / most * files
}
