//! Where a run's data goes, as every process sees it: the one seam between the kinds of
//! target. The engine asks a site to open file i of a run (a task's file, or the shared one)
//! and gets a descriptor and the offset its data starts at; it never asks what the target is.
//! Files go round-robin over the site's targets: file i to target i mod n, as a metadata
//! run's task t works in base t mod n. In a directory a file is a name of iosurvey's own,
//! opened through the directory's descriptor; on a device it is a region, the (i / n)-th of
//! the run's region size.

use super::device::Device;
use super::dir::Dir;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// The targets a run's data goes to.
#[derive(Debug, Clone)]
pub enum Site {
    /// Directories, each held by its descriptor.
    Dirs(Vec<Arc<Dir>>),
    /// Block devices.
    Devices(Vec<Arc<Device>>),
}

/// How a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Made if missing (a write).
    Create,
    /// Opened as it is.
    Existing,
}

impl Site {
    /// How many targets.
    pub fn len(&self) -> usize {
        match self {
            Site::Dirs(d) => d.len(),
            Site::Devices(d) => d.len(),
        }
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The targets `range` of this site.
    pub fn part(&self, range: std::ops::Range<usize>) -> Site {
        match self {
            Site::Dirs(d) => Site::Dirs(d[range].to_vec()),
            Site::Devices(d) => Site::Devices(d[range].to_vec()),
        }
    }

    /// Directory `k` (a metadata run's base), when the site is made of directories.
    pub fn dir(&self, k: usize) -> Option<&Arc<Dir>> {
        match self {
            Site::Dirs(d) => d.get(k % d.len().max(1)),
            Site::Devices(_) => None,
        }
    }

    /// The targets' paths.
    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            Site::Dirs(d) => d.iter().map(|d| d.path().to_path_buf()).collect(),
            Site::Devices(d) => d.iter().map(|d| d.path().to_path_buf()).collect(),
        }
    }

    /// Where file `index` of `names` is, for messages.
    pub fn show(&self, names: &[String], index: usize) -> PathBuf {
        let n = self.len().max(1);
        match self {
            Site::Dirs(d) => d[index % n].show(&names[index]),
            Site::Devices(d) => d[index % n].path().to_path_buf(),
        }
    }

    /// Opens file `index` of `names`, each `region` bytes, with `flags`; returns it and the
    /// offset its data starts at.
    pub fn open(
        &self,
        names: &[String],
        (index, region): (usize, u64),
        flags: i32,
        how: Opening,
    ) -> io::Result<(File, u64)> {
        let n = self.len().max(1);
        match self {
            Site::Dirs(d) => {
                let dir = &d[index % n];
                let file = match how {
                    Opening::Create => dir.create_or_open_own(&names[index], flags)?,
                    Opening::Existing => dir.open_own(&names[index], flags)?,
                };
                Ok((file, 0))
            }
            Site::Devices(d) => Ok((d[index % n].open_data(flags)?, (index / n) as u64 * region)),
        }
    }

    /// Removes file `index` of `names` before a write phase that starts afresh; a device's
    /// region cannot be removed, so it is written over.
    pub fn remove(&self, names: &[String], index: usize) -> io::Result<()> {
        match self {
            Site::Dirs(d) => d[index % d.len().max(1)].unlink(&names[index]),
            Site::Devices(_) => Ok(()),
        }
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
