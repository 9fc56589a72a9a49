//! A directory held open by its descriptor. The `--dir` path is resolved once, when it is
//! opened; from then on every open, create, stat and unlink of iosurvey's files goes through
//! the descriptor with plain names (`openat` with `O_NOFOLLOW`, `unlinkat`), so a symbolic
//! link, a `..` or a renamed parent can never make iosurvey touch anything outside it.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// Why an entry is not a file iosurvey may write, read or remove as its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsafe {
    /// The name holds a slash, is `.` or `..`, is empty or too long.
    BadName,
    /// A symbolic link (never followed).
    Symlink,
    /// Not a regular file (a directory, FIFO, device or socket).
    NotRegular,
    /// A regular file with other hard links: writing it would write another name too.
    Linked(u64),
    /// Owned by another user than the one running iosurvey.
    Owner(u32),
}

impl std::fmt::Display for Unsafe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsafe::BadName => f.write_str("is not a plain file name"),
            Unsafe::Symlink => f.write_str("is a symbolic link"),
            Unsafe::NotRegular => f.write_str("is not a regular file"),
            Unsafe::Linked(n) => write!(f, "is a hard link ({n} names share it)"),
            Unsafe::Owner(uid) => write!(f, "is owned by another user (uid {uid})"),
        }
    }
}

/// Whether `name` is one plain entry name: no slash, not `.` or `..`, no control characters
/// (the manifest is line based, and a carriage return would not survive it), at most 255
/// bytes.
pub fn plain_name(name: &OsStr) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b.len() <= 255 && b != b"." && b != b".." && !b.iter().any(|&c| c == b'/' || c < 0x20)
}

/// An open directory.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    if !plain_name(name) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{name:?} is not a plain file name")));
    }
    CString::new(name.as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// The user iosurvey runs as.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Whether `st` describes an entry iosurvey may treat as its own: a data file (below), or a
/// directory of its user (a metadata run's root).
pub fn own_entry(st: &libc::stat) -> Result<(), Unsafe> {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR if st.st_uid != euid() => Err(Unsafe::Owner(st.st_uid)),
        libc::S_IFDIR => Ok(()),
        _ => own_file(st),
    }
}

/// How deep [`Dir::remove_own`] goes: a metadata tree's deepest level, its task directory and
/// the root, with room; a deeper tree was not made by iosurvey, and the stack stays bounded.
const REMOVE_DEPTH: u32 = crate::spec::meta::MAX_DEPTH + 4;

/// Removes directory `name` in `parent` after everything of this user in it.
fn remove_tree(parent: RawFd, name: &std::ffi::CStr, depth: u32) -> io::Result<()> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: name is NUL-terminated; O_NOFOLLOW refuses a link in the directory's place.
    let fd = check(unsafe { libc::openat(parent, name.as_ptr(), flags) })?;
    // SAFETY: fdopendir takes ownership of fd; on failure it is closed here.
    let stream = unsafe { libc::fdopendir(fd) };
    if stream.is_null() {
        let e = io::Error::last_os_error();
        unsafe { libc::close(fd) };
        return Err(e);
    }
    let mut first_error = None;
    // Entries removed while reading may make readdir skip others: read again until a pass
    // removes nothing.
    for _pass in 0..4 {
        let mut removed = 0;
        // SAFETY: the stream is open.
        unsafe { libc::rewinddir(stream) };
        loop {
            // SAFETY: stream is open; the entry is used before the next readdir.
            let entry = unsafe { libc::readdir(stream) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated.
            let child = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
            if matches!(child.to_bytes(), b"." | b"..") {
                continue;
            }
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: child is NUL-terminated, st sized right.
            if unsafe { libc::fstatat(fd, child.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
                continue;
            }
            let result = match st.st_mode & libc::S_IFMT {
                _ if st.st_uid != euid() => Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} is owned by another user (uid {})", child.to_string_lossy(), st.st_uid),
                )),
                libc::S_IFDIR if depth == 0 => Err(io::Error::other("deeper than any tree iosurvey makes")),
                libc::S_IFDIR => remove_tree(fd, child, depth - 1),
                // SAFETY: child is NUL-terminated; unlinkat never follows a link.
                _ => check(unsafe { libc::unlinkat(fd, child.as_ptr(), 0) }).map(drop),
            };
            match result {
                Ok(()) => removed += 1,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if removed == 0 {
            break;
        }
    }
    // SAFETY: closes the stream and its descriptor once.
    unsafe { libc::closedir(stream) };
    // SAFETY: name is NUL-terminated.
    match check(unsafe { libc::unlinkat(parent, name.as_ptr(), libc::AT_REMOVEDIR) }) {
        Ok(_) => Ok(()),
        Err(e) => Err(first_error.unwrap_or(e)),
    }
}

/// Whether `st` describes a file iosurvey may treat as its own data file.
pub fn own_file(st: &libc::stat) -> Result<(), Unsafe> {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFLNK => return Err(Unsafe::Symlink),
        libc::S_IFREG => {}
        _ => return Err(Unsafe::NotRegular),
    }
    if st.st_nlink > 1 {
        return Err(Unsafe::Linked(st.st_nlink));
    }
    if st.st_uid != euid() {
        return Err(Unsafe::Owner(st.st_uid));
    }
    Ok(())
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open and st a properly sized out-parameter.
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

impl Dir {
    /// Opens the directory at `path`, following links in the path this once.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: c is a valid NUL-terminated path.
        let fd = check(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) })?;
        // SAFETY: fd was just opened and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let path = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_else(|_| path.into());
        Ok(Dir { fd, path })
    }

    /// A second handle on the same open directory (for the signal-time clean-up).
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir { fd: self.fd.try_clone()?, path: self.path.clone() })
    }

    /// The directory as it was resolved when opened (for messages and records).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of an entry, for messages only: nothing opens it by path.
    pub fn show(&self, name: impl AsRef<Path>) -> PathBuf {
        self.path.join(name)
    }

    /// The raw descriptor (for `flock` and a signal-time clean-up).
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The entry's own status (a link is reported as a link); `None` when it does not exist.
    pub fn stat(&self, name: &str) -> io::Result<Option<libc::stat>> {
        let c = c_name(name.as_ref())?;
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: c is a valid name, st a properly sized out-parameter.
        match check(unsafe { libc::fstatat(self.raw(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) }) {
            Ok(_) => Ok(Some(st)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates a new file: fails if anything (a file, a link) already has the name.
    pub fn create(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        self.open_at(name, flags | libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY)
    }

    /// Creates one of iosurvey's files, or opens it if another task (or an earlier phase)
    /// made it first: either way never through a link, and never a file that is not its own.
    pub fn create_or_open_own(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        // The access mode goes with O_CREAT; `create` adds O_WRONLY, so open directly.
        match self.open_at(name, flags | libc::O_CREAT | libc::O_EXCL) {
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => self.open_own(name, flags),
            other => other,
        }
    }

    /// Opens one of iosurvey's own files: never through a link, never a FIFO or device, never
    /// a hard-linked or foreign-owned file (refused as `PermissionDenied`, naming why).
    pub fn open_own(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        // O_NONBLOCK keeps a FIFO put in the file's place from hanging the open.
        let file = self.open_at(name, flags | libc::O_NONBLOCK)?;
        let st = fstat(file.as_raw_fd())?;
        if let Err(why) = own_file(&st) {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, format!("refused: it {why}")));
        }
        // SAFETY: plain flag change on an open descriptor.
        unsafe {
            let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
        Ok(file)
    }

    fn open_at(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        let c = c_name(name.as_ref())?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: c is a valid name; the mode is used only with O_CREAT.
        let fd = check(unsafe { libc::openat(self.raw(), c.as_ptr(), flags, 0o644 as libc::c_uint) })?;
        // SAFETY: fd was just opened and is owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Removes a file entry (never what a link points to).
    pub fn unlink(&self, name: &str) -> io::Result<()> {
        let c = c_name(name.as_ref())?;
        // SAFETY: c is a valid name.
        check(unsafe { libc::unlinkat(self.raw(), c.as_ptr(), 0) }).map(drop)
    }

    /// Makes a subdirectory and opens it (it cannot be a link: it was just made).
    pub fn mkdir(&self, name: &OsStr) -> io::Result<Dir> {
        let c = c_name(name)?;
        // SAFETY: c is a valid name.
        check(unsafe { libc::mkdirat(self.raw(), c.as_ptr(), 0o755) })?;
        // O_NOFOLLOW refuses a link swapped in since.
        self.open_subdir(name)
    }

    /// Opens a subdirectory, never through a link.
    pub fn open_subdir(&self, name: impl AsRef<OsStr>) -> io::Result<Dir> {
        let name = name.as_ref();
        let c = c_name(name)?;
        // SAFETY: c is a valid name.
        let fd = check(unsafe {
            libc::openat(
                self.raw(),
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: fd was just opened and is owned by nobody else.
        Ok(Dir { fd: unsafe { OwnedFd::from_raw_fd(fd) }, path: self.path.join(name) })
    }

    /// Removes one of iosurvey's entries: a file, or a directory (a metadata run's root) with
    /// everything in it that is iosurvey's, deepest first. Links are removed, never followed;
    /// an entry of another owner is left, and so is every directory above it (the error then
    /// says which directory is not empty).
    pub fn remove_own(&self, name: &str) -> io::Result<()> {
        match self.stat(name)? {
            Some(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => {
                let c = c_name(name.as_ref())?;
                remove_tree(self.raw(), &c, REMOVE_DEPTH)
            }
            Some(_) => self.unlink(name),
            None => Ok(()),
        }
    }

    /// Removes an empty subdirectory.
    pub fn rmdir(&self, name: &OsStr) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: c is a valid name.
        check(unsafe { libc::unlinkat(self.raw(), c.as_ptr(), libc::AT_REMOVEDIR) }).map(drop)
    }

    /// The names of the directory's entries (without `.` and `..`).
    pub fn list(&self) -> io::Result<Vec<OsString>> {
        // SAFETY: dup of an open descriptor; fdopendir takes ownership of the copy.
        let copy = check(unsafe { libc::fcntl(self.raw(), libc::F_DUPFD_CLOEXEC, 0) })?;
        let stream = unsafe { libc::fdopendir(copy) };
        if stream.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: copy is ours and was not taken by fdopendir.
            unsafe { libc::close(copy) };
            return Err(e);
        }
        // SAFETY: a fresh stream over the copy starts at its own position after rewind.
        unsafe { libc::rewinddir(stream) };
        let mut names = Vec::new();
        loop {
            // SAFETY: stream is open; readdir's entry is copied before the next call.
            let entry = unsafe { libc::readdir(stream) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated.
            let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) }.to_bytes();
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name.to_vec()));
            }
        }
        // SAFETY: closes the stream and its descriptor once.
        unsafe { libc::closedir(stream) };
        Ok(names)
    }

    /// The file system's figures (free space, read-only flag).
    pub fn statvfs(&self) -> io::Result<libc::statvfs> {
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: the descriptor is open, st a properly sized out-parameter.
        check(unsafe { libc::fstatvfs(self.raw(), &mut st) })?;
        Ok(st)
    }

    /// Free bytes available to this user (quotas are not seen: they fail writes as EDQUOT).
    pub fn free_bytes(&self) -> io::Result<u64> {
        let st = self.statvfs()?;
        Ok(st.f_bavail.saturating_mul(st.f_frsize))
    }

    /// Whether the file system is mounted read-only.
    pub fn read_only(&self) -> bool {
        self.statvfs().is_ok_and(|st| st.f_flag & libc::ST_RDONLY != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn removing_a_tree_removes_links_in_it_never_what_they_point_to() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("deep/precious"), b"x").unwrap();
        let root = tmp.path().join("target/iosurvey.meta");
        std::fs::create_dir_all(root.join("u.0/t.0")).unwrap();
        std::fs::write(root.join("u.0/t.0/f.0.1"), b"").unwrap();
        symlink(&outside, root.join("u.0/t.1")).unwrap();
        symlink(outside.join("deep/precious"), root.join("u.0/f.0.2")).unwrap();
        let target = Dir::open(&tmp.path().join("target")).unwrap();
        target.remove_own("iosurvey.meta").unwrap();
        assert!(!root.exists());
        assert!(outside.join("deep/precious").exists(), "what the links point to stays");
    }

    #[test]
    fn plain_names_only() {
        for bad in ["", ".", "..", "a/b", "../x", "a\nb", "a\r", "\0"] {
            assert!(!plain_name(bad.as_ref()), "{bad:?}");
        }
        assert!(plain_name("iosurvey.000000".as_ref()));
        assert!(!plain_name(OsStr::from_bytes(&[b'x'; 256])));
    }

    #[test]
    fn never_follows_or_writes_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        let inside = tmp.path().join("in");
        std::fs::create_dir(&inside).unwrap();
        symlink(&outside, inside.join("f")).unwrap();
        let d = Dir::open(&inside).unwrap();
        assert_eq!(d.create("f", 0).unwrap_err().raw_os_error(), Some(libc::EEXIST));
        assert_eq!(d.open_own("f", libc::O_WRONLY).unwrap_err().raw_os_error(), Some(libc::ELOOP));
        assert!(d.create("../escape", 0).is_err());
        assert!(!outside.exists() && !tmp.path().join("escape").exists());
        let st = d.stat("f").unwrap().unwrap();
        assert_eq!(own_file(&st), Err(Unsafe::Symlink));
        d.unlink("f").unwrap();
        assert!(d.list().unwrap().is_empty());
    }

    #[test]
    fn hard_links_are_not_own_files() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a"), b"x").unwrap();
        std::fs::hard_link(tmp.path().join("a"), tmp.path().join("b")).unwrap();
        let d = Dir::open(tmp.path()).unwrap();
        let e = d.open_own("b", libc::O_RDONLY).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("hard link"), "{e}");
    }

    #[test]
    fn the_resolved_path_is_kept_and_survives_a_rename() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("real")).unwrap();
        symlink(tmp.path().join("real"), tmp.path().join("alias")).unwrap();
        let d = Dir::open(&tmp.path().join("alias")).unwrap();
        assert!(d.path().ends_with("real"));
        std::fs::rename(tmp.path().join("real"), tmp.path().join("moved")).unwrap();
        drop(d.create("f", 0).unwrap());
        assert!(tmp.path().join("moved/f").exists(), "writes follow the directory, not its old name");
    }
}
