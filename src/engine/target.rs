//! The directory under test: checks before a run, the manifest of files iosurvey created, and
//! the clean-up that removes those files and nothing else.
//!
//! A directory is iosurvey's own when every entry in it is named in its manifest
//! (`.iosurvey-manifest`). Files kept with `--keep` stay in the manifest, so a later run may
//! read them; a run removes only files it created itself.

use super::error::EngineError;
use crate::units::format_size;
use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const MANIFEST: &str = ".iosurvey-manifest";

/// A prepared target directory.
#[derive(Debug)]
pub struct Target {
    dir: PathBuf,
    created_dir: bool,
    created: Vec<PathBuf>,
    keep: bool,
}

fn read_manifest(dir: &Path) -> BTreeSet<String> {
    fs::read_to_string(dir.join(MANIFEST))
        .map(|s| s.lines().filter(|l| !l.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

impl Target {
    /// Checks `dir` and takes it as the target. `force` accepts `/` and foreign entries.
    pub fn open(dir: &Path, force: bool, keep: bool) -> Result<Target, EngineError> {
        let meta = fs::metadata(dir).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => EngineError::MissingDir(dir.to_path_buf()),
            _ => EngineError::io("stat", dir, None, e),
        })?;
        if !meta.is_dir() {
            return Err(EngineError::NotADir(dir.to_path_buf()));
        }
        let canonical = fs::canonicalize(dir).map_err(|e| EngineError::io("resolve", dir, None, e))?;
        if canonical == Path::new("/") && !force {
            return Err(EngineError::RootDir);
        }
        let known = read_manifest(dir);
        let entries = fs::read_dir(dir).map_err(|e| EngineError::io("list", dir, None, e))?;
        let mut foreign = Vec::new();
        for entry in entries {
            let name = entry.map_err(|e| EngineError::io("list", dir, None, e))?.file_name();
            let name = name.to_string_lossy().into_owned();
            if name != MANIFEST && !known.contains(&name) {
                foreign.push(name);
            }
        }
        if !foreign.is_empty() && !force {
            foreign.sort();
            return Err(EngineError::NotEmpty {
                dir: dir.to_path_buf(),
                count: foreign.len(),
                first: foreign[0].clone(),
            });
        }
        Ok(Target { dir: dir.to_path_buf(), created_dir: false, created: Vec::new(), keep })
    }

    /// Creates a fresh directory `parent/name` as the target; it is removed at clean-up.
    pub fn create(parent: &Path, name: &str, keep: bool) -> Result<Target, EngineError> {
        if !parent.is_dir() {
            return Err(EngineError::MissingDir(parent.to_path_buf()));
        }
        let dir = parent.join(name);
        fs::create_dir(&dir).map_err(|e| EngineError::io("mkdir", &dir, None, e))?;
        Ok(Target { dir, created_dir: true, created: Vec::new(), keep })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Records in the manifest, before they exist, the files among `paths` that this run will
    /// create, so that even a crash leaves them recognisably iosurvey's.
    pub fn claim(&mut self, paths: &[PathBuf]) -> Result<(), EngineError> {
        let fresh: Vec<PathBuf> = paths.iter().filter(|p| !p.exists() && !self.created.contains(p)).cloned().collect();
        if fresh.is_empty() {
            return Ok(());
        }
        let mut names = read_manifest(&self.dir);
        names.extend(fresh.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()));
        self.write_manifest(&names)?;
        self.created.extend(fresh);
        Ok(())
    }

    fn write_manifest(&self, names: &BTreeSet<String>) -> Result<(), EngineError> {
        let path = self.dir.join(MANIFEST);
        let text: String = names.iter().map(|n| format!("{n}\n")).collect();
        fs::write(&path, text).map_err(|e| EngineError::io("write", &path, None, e))
    }

    /// Refuses a run that needs more free space than the file system has.
    pub fn check_space(&self, paths: &[PathBuf], file_size: u64) -> Result<(), EngineError> {
        let existing = |p: &PathBuf| fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let need: u64 = paths.iter().map(|p| file_size.saturating_sub(existing(p))).sum();
        let free = free_bytes(&self.dir)?;
        if need > free {
            return Err(EngineError::NoSpace {
                dir: self.dir.clone(),
                need: format_size(need),
                free: format_size(free),
            });
        }
        Ok(())
    }

    /// Checks that the file system takes O_DIRECT and returns its offset alignment.
    pub fn direct_alignment(&self) -> Result<u64, EngineError> {
        let probe = self.dir.join(".iosurvey-probe");
        let file = fs::OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_DIRECT).open(&probe);
        let file = match file {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(EngineError::DirectRefused(self.dir.clone()))
            }
            Err(e) => return Err(EngineError::io("open", &probe, None, e)),
        };
        drop(file);
        let align = dio_offset_align(&probe).unwrap_or(512);
        fs::remove_file(&probe).map_err(|e| EngineError::io("remove", &probe, None, e))?;
        Ok(align)
    }

    /// Removes the files this run created (unless kept), then the manifest and the directory
    /// if nothing of iosurvey's is left in them. Returns what could not be removed.
    pub fn cleanup(self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.keep || (self.created.is_empty() && !self.created_dir) {
            return problems;
        }
        for p in &self.created {
            if let Err(e) = fs::remove_file(p) {
                if e.kind() != io::ErrorKind::NotFound {
                    problems.push(format!("{}: {e}", p.display()));
                }
            }
        }
        let left: BTreeSet<String> =
            read_manifest(&self.dir).into_iter().filter(|n| self.dir.join(n).exists()).collect();
        let manifest = self.dir.join(MANIFEST);
        let result = if left.is_empty() {
            fs::remove_file(&manifest)
        } else {
            self.write_manifest(&left).map_err(io::Error::other)
        };
        if let Err(e) = result {
            if e.kind() != io::ErrorKind::NotFound {
                problems.push(format!("{}: {e}", manifest.display()));
            }
        }
        if self.created_dir && left.is_empty() {
            if let Err(e) = fs::remove_dir(&self.dir) {
                problems.push(format!("{}: {e}", self.dir.display()));
            }
        }
        problems
    }
}

/// Paths of the data files in `dir`: `iosurvey.shared`, or `iosurvey.NNNNNN` per task.
pub fn data_files(dir: &Path, shared: bool, files: usize) -> Vec<PathBuf> {
    if shared {
        vec![dir.join("iosurvey.shared")]
    } else {
        (0..files).map(|i| dir.join(format!("iosurvey.{i:06}"))).collect()
    }
}

fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// Free bytes available to this user on the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> Result<u64, EngineError> {
    let c = c_path(dir).ok_or_else(|| EngineError::io("statvfs", dir, None, io::ErrorKind::InvalidInput.into()))?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path and st a properly sized out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(EngineError::io("statvfs", dir, None, io::Error::last_os_error()));
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// The file system's O_DIRECT offset alignment from statx, where the kernel reports it.
fn dio_offset_align(path: &Path) -> Option<u64> {
    const STATX_DIOALIGN: u32 = 0x2000;
    let c = c_path(path)?;
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid path, st a properly sized out-parameter.
    let rc = unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, STATX_DIOALIGN, &mut st) };
    (rc == 0 && st.stx_mask & STATX_DIOALIGN != 0 && st.stx_dio_offset_align > 0)
        .then_some(st.stx_dio_offset_align as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_foreign_entries_and_removes_only_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("precious"), b"x").unwrap();
        let err = Target::open(tmp.path(), false, false).unwrap_err();
        assert!(matches!(err, EngineError::NotEmpty { count: 1, .. }), "{err}");
        let mut t = Target::open(tmp.path(), true, false).unwrap();
        let files = data_files(t.dir(), false, 2);
        t.claim(&files).unwrap();
        for f in &files {
            fs::write(f, b"data").unwrap();
        }
        assert!(t.cleanup().is_empty());
        let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec!["precious"]);
    }

    #[test]
    fn kept_files_make_the_directory_its_own_but_are_not_removed_by_a_later_run() {
        let tmp = tempfile::tempdir().unwrap();
        let mut t = Target::open(tmp.path(), false, true).unwrap();
        let files = data_files(t.dir(), true, 1);
        t.claim(&files).unwrap();
        fs::write(&files[0], b"data").unwrap();
        assert!(t.cleanup().is_empty());
        let mut again = Target::open(tmp.path(), false, false).expect("own directory accepted");
        again.claim(&files).unwrap();
        assert!(again.cleanup().is_empty());
        assert!(files[0].exists(), "a file the later run did not create survives");
    }

    #[test]
    fn created_directory_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let mut t = Target::create(tmp.path(), "scratch", false).unwrap();
        let files = data_files(t.dir(), false, 1);
        t.claim(&files).unwrap();
        fs::write(&files[0], b"x").unwrap();
        assert!(t.cleanup().is_empty());
        assert!(!tmp.path().join("scratch").exists());
    }

    #[test]
    fn space_check_names_both_sizes() {
        let tmp = tempfile::tempdir().unwrap();
        let t = Target::open(tmp.path(), false, false).unwrap();
        let files = data_files(t.dir(), false, 1);
        let err = t.check_space(&files, u64::MAX / 2).unwrap_err().to_string();
        assert!(err.contains("needs") && err.contains("free"), "{err}");
        t.check_space(&files, 4096).unwrap();
    }
}
