//! Private scratch directories in `$TMPDIR`: a merge's copies of its inputs, a calibration's
//! store. Each is made under a fresh random name that no other process had (`mkdir` fails on
//! a name that exists, so a name another user made first is never taken over, and none can
//! be made in advance to block a command), mode 0700. A SIGKILL leaves one behind: the next
//! command that makes one of the same kind reclaims those whose process is gone.

use crate::sys::errno::ESRCH;
use crate::sys::fs::{self as sysfs, Kind, O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_RDONLY};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Makes `$TMPDIR/PREFIX-PID-RANDOM` (mode 0700), after reclaiming the leftovers of `prefix`.
pub fn private_dir(prefix: &str) -> io::Result<PathBuf> {
    let tmp = std::env::temp_dir();
    reclaim(&tmp, prefix);
    let mut random = [0u8; 8];
    for _ in 0..8 {
        crate::sys::proc::getrandom(&mut random)?;
        let dir = tmp.join(format!("{prefix}-{}-{:016x}", std::process::id(), u64::from_ne_bytes(random)));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "every fresh name tried was taken"))
}

/// Removes the directories `PREFIX-PID[-...]` in `tmp` whose process is gone (no process has
/// that id), that this user owns, with the files in them; how many. Each is opened without
/// following a link and checked through its descriptor: a link, another user's directory,
/// or one whose process lives (or whose id another user's process took since) stays, and so
/// does anything in it but plain files.
pub fn reclaim(tmp: &Path, prefix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else { return 0 };
    let Ok(parent) = CString::new(tmp.as_os_str().as_bytes()) else { return 0 };
    let Ok(parent) = sysfs::open(&parent, DIR) else { return 0 };
    let mut reclaimed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = owner_pid(name.as_bytes(), prefix) else { continue };
        // ESRCH only: EPERM is a live process of another user.
        let gone = crate::sys::signal::probe_process(pid).is_err_and(|e| e.raw_os_error() == Some(ESRCH));
        if !gone || pid == std::process::id() {
            continue;
        }
        let Ok(name) = CString::new(name.as_bytes()) else { continue };
        if remove_own(parent.as_raw_fd(), &name).is_ok() {
            reclaimed += 1;
        }
    }
    reclaimed
}

/// The process id in `PREFIX-PID` or `PREFIX-PID-RANDOM`.
fn owner_pid(name: &[u8], prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix.as_bytes())?.strip_prefix(b"-")?;
    let pid = rest.split(|&b| b == b'-').next()?;
    std::str::from_utf8(pid).ok()?.parse().ok().filter(|&p| p > 0)
}

/// Removes directory `name` of `parent` when it is this user's, with its plain files.
fn remove_own(parent: std::os::fd::RawFd, name: &CStr) -> io::Result<()> {
    let fd = sysfs::openat(parent, name, DIR | O_NOFOLLOW, 0)?;
    let st = sysfs::fstat(fd.as_raw_fd())?;
    if st.kind != Kind::Dir || st.uid != crate::sys::proc::euid() {
        return Err(io::Error::from(io::ErrorKind::PermissionDenied));
    }
    let mut stream = sysfs::DirStream::new(fd)?;
    let dir = stream.raw();
    let mut names = Vec::new();
    while let Some(child) = stream.next_name() {
        if !matches!(child.to_bytes(), b"." | b"..") {
            names.push(child.to_owned());
        }
    }
    for child in names {
        // unlinkat never follows a link, and leaves a directory (which makes rmdir fail).
        if sysfs::fstatat(dir, &child).is_ok_and(|s| s.kind != Kind::Dir) {
            let _ = sysfs::unlinkat(dir, &child);
        }
    }
    sysfs::rmdirat(parent, name)
}

/// How a directory is opened here, to read its entries.
const DIR: i32 = O_DIRECTORY | O_RDONLY | O_CLOEXEC;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_their_process() {
        assert_eq!(owner_pid(b"iosurvey-merge-123-00ff", "iosurvey-merge"), Some(123));
        assert_eq!(owner_pid(b"iosurvey-calibrate-77", "iosurvey-calibrate"), Some(77));
        for other in [&b"iosurvey-merge-x-1"[..], b"iosurvey-merged-1", b"iosurvey-merge-0", b"other-1"] {
            assert_eq!(owner_pid(other, "iosurvey-merge"), None);
        }
    }

    #[test]
    fn only_own_directories_of_gone_processes_are_reclaimed() {
        let tmp = tempfile::tempdir().unwrap();
        // No process has the largest id the kernel allows.
        let gone = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse::<u32>().unwrap();
        let dead = tmp.path().join(format!("iosurvey-merge-{gone}-ab"));
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("store.db"), b"copy").unwrap();
        let live = tmp.path().join(format!("iosurvey-merge-{}-cd", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let elsewhere = tmp.path().join("target");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("keep"), b"").unwrap();
        let link = tmp.path().join(format!("iosurvey-merge-{gone}-ef"));
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert_eq!(reclaim(tmp.path(), "iosurvey-merge"), 1);
        assert!(!dead.exists() && live.exists());
        assert!(link.symlink_metadata().is_ok() && elsewhere.join("keep").exists(), "a link is never followed");
    }
}
