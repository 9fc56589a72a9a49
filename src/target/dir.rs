//! A directory held open by its descriptor. The `--dir` path is resolved once, when it is
//! opened; from then on every open, create, stat and unlink of iosurvey's files goes through
//! the descriptor with plain names (`openat` with `O_NOFOLLOW`, `unlinkat`), or with a path
//! below it that [`openat_beneath`] walks without following a link or crossing a mount, so a
//! symbolic link, a `..` or a renamed parent can never make iosurvey touch anything outside it.

use crate::sys::errno::{EEXIST, ENOENT, ENOSYS, EXDEV};
use crate::sys::fs::{
    self as sys, DirStream, O_CLOEXEC, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_PATH, O_RDONLY, O_WRONLY,
};
pub use crate::sys::fs::{Kind, Stat, StatVfs};
use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::io::{AsRawFd, OwnedFd, RawFd};
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

/// The user iosurvey runs as.
pub fn euid() -> u32 {
    crate::sys::proc::euid()
}

/// Whether `st` describes an entry iosurvey may treat as its own: a data file (below), or a
/// directory of its user (a metadata run's root).
pub fn own_entry(st: &Stat) -> Result<(), Unsafe> {
    match st.kind {
        Kind::Dir if st.uid != euid() => Err(Unsafe::Owner(st.uid)),
        Kind::Dir => Ok(()),
        _ => own_file(st),
    }
}

/// The mode of a metadata run's root: no other user may enter it, so none can put a link, a
/// file or a mount point anywhere below it (only root, or this user, can).
pub const PRIVATE: u32 = 0o700;

/// How deep [`Dir::remove_own`] goes: a metadata tree's deepest level, its task directory and
/// the root, with room; a deeper tree was not made by iosurvey, and the stack stays bounded.
const REMOVE_DEPTH: u32 = crate::spec::meta::MAX_DEPTH + 4;

/// Opens `name` in `parent` only if it is below `parent` on the same mount and reached through
/// no link: a mount point on the way or at the end (another file system, or a bind mount of
/// this one, a directory or a file) is `EXDEV`, a link `ELOOP`, a path that climbs out (`..`,
/// or absolute) `EXDEV`. `name` may be a path of several components (a metadata item's from
/// the base directory). This keeps every open, walk and clean-up out of whatever an admin
/// mounts inside the target, even mid-run. `mode` is used only with `O_CREAT`.
pub fn openat_beneath(parent: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let flags = flags | O_NOFOLLOW | O_CLOEXEC;
    match sys::openat2_beneath(parent, name, flags, mode) {
        Err(e) if e.raw_os_error() == Some(ENOSYS) => {}
        opened => return opened,
    }
    beneath_without_openat2(parent, name, flags, mode)
}

/// [`openat_beneath`] before Linux 5.6, which has no `openat2`: `O_NOFOLLOW` guards the last
/// component only, so a path is walked one component at a time, each opened without following
/// a link and refused when it sits on another mount than the one before.
fn beneath_without_openat2(parent: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let bytes = name.to_bytes();
    // What RESOLVE_BENEATH refuses: a path that starts above `parent` or climbs out of it.
    if bytes.starts_with(b"/") || bytes.split(|&c| c == b'/').any(|c| c == b"..") {
        return Err(io::Error::from_raw_os_error(EXDEV));
    }
    let mut components = bytes.split(|&c| c == b'/').filter(|&c| !c.is_empty() && c != b".");
    let Some(leaf) = components.next_back() else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let mut at: Option<OwnedFd> = None;
    for dir in components {
        let dir = CString::new(dir).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let from = at.as_ref().map_or(parent, AsRawFd::as_raw_fd);
        at = Some(open_one(from, &dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)?);
    }
    let leaf = CString::new(leaf).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    open_one(at.as_ref().map_or(parent, AsRawFd::as_raw_fd), &leaf, flags, mode)
}

/// Opens one plain entry `name` of `parent` (`flags` holding `O_NOFOLLOW`), refusing it when it
/// is on another mount than `parent`.
fn open_one(parent: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let owned = sys::openat(parent, name, flags, mode)?;
    if mount_of(owned.as_raw_fd(), None)? != mount_of(parent, None)? {
        return Err(io::Error::from_raw_os_error(EXDEV));
    }
    Ok(owned)
}

/// Opens the whole path `path` from `/` only if no component of it is a link: one
/// `openat2` with `RESOLVE_NO_SYMLINKS` (a metadata item by the path mdtest would name it by,
/// [`Dir::held_path`]). Before Linux 5.6 only the last component is guarded (`O_NOFOLLOW`).
/// `mode` is used only with `O_CREAT`.
pub fn open_path_no_links(path: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let flags = flags | O_NOFOLLOW | O_CLOEXEC;
    match sys::openat2_no_links(path, flags, mode) {
        Err(e) if e.raw_os_error() == Some(ENOSYS) => sys::openat(sys::AT_FDCWD, path, flags, mode),
        opened => opened,
    }
}

/// Opens directory `name` in `parent` as [`openat_beneath`] does.
pub fn open_dir_beneath(parent: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    openat_beneath(parent, name, O_RDONLY | O_DIRECTORY, 0)
}

/// The mount an entry is on: the mount id where the kernel gives it (a bind mount of the
/// same file system has its own), and the device. `name` None means `fd` itself.
fn mount_of(fd: RawFd, name: Option<&CStr>) -> io::Result<(u64, u32, u32)> {
    sys::mount_of(fd, name)
}

/// Whether entry `name` of directory `dir` is a mount point (or on another mount than `dir`).
fn crosses_mount(dir: RawFd, name: &CStr) -> io::Result<bool> {
    Ok(mount_of(dir, Some(name))? != mount_of(dir, None)?)
}

/// What a clean-up left in a tree, and why: never more than a few names, with the count.
#[derive(Debug, Default)]
struct Left {
    count: usize,
    shown: Vec<String>,
}

impl Left {
    fn add(&mut self, at: &[u8], child: &[u8], why: &str) {
        self.count += 1;
        if self.shown.len() < 3 {
            let mut path = String::from_utf8_lossy(at).into_owned();
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(&String::from_utf8_lossy(child));
            self.shown.push(format!("{path} ({why})"));
        }
    }

    fn absorb(&mut self, other: Left) {
        self.count += other.count;
        let room = 3usize.saturating_sub(self.shown.len());
        self.shown.extend(other.shown.into_iter().take(room));
    }
}

/// Why a clean-up leaves an entry on another mount.
const MOUNT_POINT: &str = "a mount point: iosurvey never removes anything inside another mount";

impl std::fmt::Display for Left {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "left {} entr{} in place: {}",
            self.count,
            if self.count == 1 { "y" } else { "ies" },
            self.shown.join(", ")
        )?;
        if self.count > self.shown.len() {
            write!(f, " and {} more", self.count - self.shown.len())?;
        }
        Ok(())
    }
}

/// Removes directory `name` in `parent` after everything in it that iosurvey's naming made
/// ([`crate::spec::meta::made_name`]) and this user owns, on the same mount. Anything else
/// (a foreign name, another owner, a mount point) stays, and so does every directory above
/// it; `left` says what and why. `at` is the path of `name` below the tree's root.
fn remove_tree(parent: RawFd, name: &CStr, depth: u32, at: &mut Vec<u8>, left: &mut Left) -> io::Result<()> {
    let fd = open_dir_beneath(parent, name)?;
    // The directory's own mount, once: each entry is compared with it.
    let here = mount_of(fd.as_raw_fd(), None)?;
    let mut stream = DirStream::new(fd)?;
    let fd = stream.raw();
    let top = at.is_empty();
    let mut first_error = None;
    // Entries removed while reading may make readdir skip others: read again until a pass
    // removes nothing. Each pass sees the whole directory, so the last one says what is left.
    let mut seen = Left::default();
    for pass in 1..=4 {
        seen = Left::default();
        let mut removed = 0;
        stream.rewind();
        while let Some(child) = stream.next_name() {
            let bytes = child.to_bytes();
            if matches!(bytes, b"." | b"..") {
                continue;
            }
            let Ok(st) = sys::fstatat(fd, child) else { continue };
            let refusal = if !crate::spec::meta::made_name(bytes, top) {
                Some("not a name iosurvey makes".to_string())
            } else if st.uid != euid() {
                Some(format!("owned by uid {}", st.uid))
            } else if mount_of(fd, Some(child)).map_or(true, |m| m != here) {
                Some(MOUNT_POINT.to_string())
            } else {
                None
            };
            if let Some(why) = refusal {
                seen.add(at, bytes, &why);
                continue;
            }
            let result = match st.kind {
                Kind::Dir if depth == 0 => Err(io::Error::other("deeper than any tree iosurvey makes")),
                Kind::Dir => {
                    let mark = at.len();
                    if !at.is_empty() {
                        at.push(b'/');
                    }
                    at.extend_from_slice(bytes);
                    let r = remove_tree(fd, child, depth - 1, at, &mut seen);
                    at.truncate(mark);
                    r
                }
                // unlinkat never follows a link.
                _ => sys::unlinkat(fd, child),
            };
            match result {
                Ok(()) => removed += 1,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if removed == 0 || pass == 4 {
            break;
        }
    }
    left.absorb(seen);
    // Closes the stream and its descriptor before the directory goes.
    drop(stream);
    match sys::rmdirat(parent, name) {
        Ok(()) => Ok(()),
        Err(e) => Err(first_error.unwrap_or(e)),
    }
}

/// Whether `st` describes a file iosurvey may treat as its own data file.
pub fn own_file(st: &Stat) -> Result<(), Unsafe> {
    match st.kind {
        Kind::Symlink => return Err(Unsafe::Symlink),
        Kind::File => {}
        _ => return Err(Unsafe::NotRegular),
    }
    if st.nlink > 1 {
        return Err(Unsafe::Linked(st.nlink));
    }
    if st.uid != euid() {
        return Err(Unsafe::Owner(st.uid));
    }
    Ok(())
}

impl Dir {
    /// Opens the directory at `path`, following links in the path this once.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let fd = sys::open(&c, O_RDONLY | O_DIRECTORY | O_CLOEXEC)?;
        let path = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_else(|_| path.into());
        Ok(Dir { fd, path })
    }

    /// A second handle on the same open directory (for the signal-time clean-up).
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir { fd: self.fd.try_clone()?, path: self.path.clone() })
    }

    /// The directory's device and inode: who it is, whatever its name now.
    pub fn id(&self) -> io::Result<(u64, u64)> {
        let st = sys::fstat(self.raw())?;
        Ok((st.dev, st.ino))
    }

    /// Whether entry `name` of `parent` is still this directory (not renamed away, nor
    /// replaced by another under the same name).
    pub fn is_at(&self, parent: &Dir, name: &OsStr) -> bool {
        let c = match c_name(name) {
            Ok(c) => c,
            Err(_) => return false,
        };
        let Ok(st) = sys::fstatat(parent.raw(), &c) else { return false };
        self.id().is_ok_and(|id| id == (st.dev, st.ino))
    }

    /// The whole path from `/` of entry `entry` of this directory, when no user but root and
    /// the one running iosurvey can change where it leads: every directory on the way, this
    /// one too, is owned by one of them and either writable by nobody else or sticky with its
    /// next entry owned by one of them (so nobody else can rename, remove or replace that
    /// entry), no component is a link, and the path leads to this very directory. Otherwise
    /// why not, naming the directory. A few `fstatat` and `open` calls: made outside any
    /// phase's time.
    pub fn held_path(&self, entry: &OsStr) -> Result<PathBuf, String> {
        let trusted = |uid: u32| uid == 0 || uid == euid();
        let failed = |what: &Path, e: io::Error| format!("{} could not be checked: {e}", what.display());
        let slash = Path::new("/");
        let mut at = sys::open(c"/", O_PATH | O_DIRECTORY | O_CLOEXEC).map_err(|e| failed(slash, e))?;
        let mut shown = slash.to_path_buf();
        let names = self.path.components().filter_map(|c| match c {
            std::path::Component::Normal(name) => Some(name),
            _ => None,
        });
        if !self.path.is_absolute() || self.path.components().count() != names.clone().count() + 1 {
            return Err(format!("{} is not a plain path from /", self.path.display()));
        }
        for name in names.chain(std::iter::once(entry)) {
            let st = sys::fstat(at.as_raw_fd()).map_err(|e| failed(&shown, e))?;
            let c = c_name(name).map_err(|e| failed(&shown, e))?;
            let child = sys::fstatat(at.as_raw_fd(), &c).map_err(|e| failed(&shown.join(name), e))?;
            if !trusted(st.uid) {
                return Err(format!("{} belongs to uid {}, who may rename what is in it", shown.display(), st.uid));
            }
            if st.mode & 0o022 != 0 && st.mode & 0o1000 == 0 {
                let (dir, mode) = (shown.display(), st.mode);
                return Err(format!("{dir} (mode {mode:04o}) lets other users rename or replace {name:?} in it"));
            }
            if st.mode & 0o022 != 0 && !trusted(child.uid) {
                let (entry, uid, mode) = (shown.join(name), child.uid, st.mode);
                return Err(format!(
                    "{} belongs to uid {uid}, who may replace it (its directory's mode is {mode:04o})",
                    entry.display()
                ));
            }
            if child.kind != Kind::Dir {
                return Err(format!("{} is not a directory (a link?)", shown.join(name).display()));
            }
            if shown == self.path && self.id().map_err(|e| failed(&shown, e))? != (st.dev, st.ino) {
                return Err(format!("{} no longer leads to the directory the run opened", shown.display()));
            }
            // The path's own mounts are crossed, as the kernel's walk crosses them.
            at = sys::openat(at.as_raw_fd(), &c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
                .map_err(|e| failed(&shown.join(name), e))?;
            shown.push(name);
        }
        Ok(shown)
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
    pub fn stat(&self, name: &str) -> io::Result<Option<Stat>> {
        let c = c_name(name.as_ref())?;
        match sys::fstatat(self.raw(), &c) {
            Ok(st) => Ok(Some(st)),
            Err(e) if e.raw_os_error() == Some(ENOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates a new file: fails if anything (a file, a link) already has the name.
    pub fn create(&self, name: &str, flags: i32) -> io::Result<File> {
        self.open_at(name, flags | O_CREAT | O_EXCL | O_WRONLY)
    }

    /// Creates one of iosurvey's files, or opens it if another task (or an earlier phase)
    /// made it first: either way never through a link, and never a file that is not its own.
    pub fn create_or_open_own(&self, name: &str, flags: i32) -> io::Result<File> {
        // The access mode goes with O_CREAT; `create` adds O_WRONLY, so open directly.
        match self.open_at(name, flags | O_CREAT | O_EXCL) {
            Err(e) if e.raw_os_error() == Some(EEXIST) => self.open_own(name, flags),
            other => other,
        }
    }

    /// Opens one of iosurvey's own files: never through a link, never a FIFO or device, never
    /// a hard-linked or foreign-owned file (refused as `PermissionDenied`, naming why).
    pub fn open_own(&self, name: &str, flags: i32) -> io::Result<File> {
        // O_NONBLOCK keeps a FIFO put in the file's place from hanging the open.
        let file = self.open_at(name, flags | O_NONBLOCK)?;
        let st = sys::fstat(file.as_raw_fd())?;
        if let Err(why) = own_file(&st) {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, format!("refused: it {why}")));
        }
        sys::clear_nonblock(file.as_raw_fd());
        Ok(file)
    }

    fn open_at(&self, name: &str, flags: i32) -> io::Result<File> {
        let c = c_name(name.as_ref())?;
        Ok(File::from(openat_beneath(self.raw(), &c, flags, 0o644)?))
    }

    /// Removes a file entry (never what a link points to).
    pub fn unlink(&self, name: &str) -> io::Result<()> {
        sys::unlinkat(self.raw(), &c_name(name.as_ref())?)
    }

    /// Makes a subdirectory and opens it (it cannot be a link: it was just made).
    pub fn mkdir(&self, name: &OsStr) -> io::Result<Dir> {
        sys::mkdirat(self.raw(), &c_name(name)?, 0o755)?;
        // O_NOFOLLOW refuses a link swapped in since.
        self.open_subdir(name)
    }

    /// Makes a subdirectory that only this user may enter (a metadata run's root) and opens
    /// it. Mode 0700 is asked for by the mkdir itself, so there is no moment when another
    /// user could enter it, and set again through the descriptor, which the umask cannot
    /// narrow.
    pub fn mkdir_private(&self, name: &OsStr) -> io::Result<Dir> {
        sys::mkdirat(self.raw(), &c_name(name)?, PRIVATE)?;
        let dir = self.open_subdir(name)?;
        dir.make_private()?;
        Ok(dir)
    }

    /// Makes this directory, which must be this user's, one that only this user may enter.
    pub fn make_private(&self) -> io::Result<()> {
        let st = sys::fstat(self.raw())?;
        if st.uid != euid() {
            let why = Unsafe::Owner(st.uid);
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, format!("refused: it {why}")));
        }
        if st.mode != PRIVATE {
            sys::fchmod(self.raw(), PRIVATE)?;
        }
        Ok(())
    }

    /// Opens a subdirectory, never through a link or into another mount.
    pub fn open_subdir(&self, name: impl AsRef<OsStr>) -> io::Result<Dir> {
        let name = name.as_ref();
        let c = c_name(name)?;
        Ok(Dir { fd: open_dir_beneath(self.raw(), &c)?, path: self.path.join(name) })
    }

    /// Removes one of iosurvey's entries: a file, or a directory (a metadata run's root) with
    /// everything in it that is iosurvey's, deepest first. Links are removed, never followed;
    /// an entry of another owner is left, and so is every directory above it (the error then
    /// says which directory is not empty).
    pub fn remove_own(&self, name: &str) -> io::Result<()> {
        let Some(st) = self.stat(name)? else { return Ok(()) };
        let c = c_name(name.as_ref())?;
        if crosses_mount(self.raw(), &c)? {
            return Err(io::Error::other(format!("{name} is {MOUNT_POINT}; left in place")));
        }
        if st.kind != Kind::Dir {
            return self.unlink(name);
        }
        let mut left = Left::default();
        let result = remove_tree(self.raw(), &c, REMOVE_DEPTH, &mut Vec::new(), &mut left);
        match (result, left.count) {
            (Ok(()), _) => Ok(()),
            (Err(e), 0) => Err(e),
            (Err(_), _) => Err(io::Error::other(format!("{left}, so {name} stays"))),
        }
    }

    /// The mount the directory is on: the mount id where the kernel gives it, and the device.
    pub fn mount(&self) -> io::Result<(u64, u32, u32)> {
        mount_of(self.raw(), None)
    }

    /// Whether entry `name` is a mount point (another file system, or a bind mount).
    pub fn mount_point(&self, name: &str) -> io::Result<bool> {
        crosses_mount(self.raw(), &c_name(name.as_ref())?)
    }

    /// Removes an empty subdirectory.
    pub fn rmdir(&self, name: &OsStr) -> io::Result<()> {
        sys::rmdirat(self.raw(), &c_name(name)?)
    }

    /// The names of the directory's entries (without `.` and `..`).
    pub fn list(&self) -> io::Result<Vec<OsString>> {
        let mut stream = DirStream::new(sys::dup_cloexec(self.raw())?)?;
        // The copy shares the descriptor's position, wherever an earlier listing left it.
        stream.rewind();
        let mut names = Vec::new();
        while let Some(name) = stream.next_name() {
            let name = name.to_bytes();
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name.to_vec()));
            }
        }
        Ok(names)
    }

    /// The file system's figures (free space, read-only flag).
    pub fn statvfs(&self) -> io::Result<StatVfs> {
        sys::fstatvfs(self.raw())
    }

    /// Free bytes available to this user (quotas are not seen: they fail writes as EDQUOT).
    pub fn free_bytes(&self) -> io::Result<u64> {
        let st = self.statvfs()?;
        Ok(st.bavail.saturating_mul(st.frsize))
    }

    /// Whether the file system is mounted read-only.
    pub fn read_only(&self) -> bool {
        self.statvfs().is_ok_and(|st| st.read_only)
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
    fn a_path_is_held_only_while_no_other_user_can_change_where_it_leads() {
        use std::os::unix::fs::{chown, PermissionsExt};
        let set = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let (a, base) = (tmp.path().join("a"), tmp.path().join("a/b"));
        std::fs::create_dir_all(base.join("run")).unwrap();
        let dir = Dir::open(&base).unwrap();
        let run = OsStr::new("run");
        let canonical = std::fs::canonicalize(&a).unwrap();
        assert_eq!(dir.held_path(run), Ok(canonical.join("b/run")));
        // A directory on the way that others may write: anyone could swap `b` for a link.
        set(&a, 0o777);
        let why = dir.held_path(run).unwrap_err();
        assert!(why.starts_with(&format!("{} (mode 0777)", canonical.display())) && why.contains("\"b\""), "{why}");
        // Sticky, as /tmp is: only the owner of `b` may rename it, and that is this user.
        set(&a, 0o1777);
        assert!(dir.held_path(run).is_ok());
        if euid() == 0 {
            chown(&base, Some(65534), None).unwrap();
            let why = dir.held_path(run).unwrap_err();
            assert!(why.contains("b belongs to uid 65534, who may replace it (its directory's mode is 1777)"), "{why}");
            chown(&base, Some(0), None).unwrap();
            chown(&a, Some(65534), None).unwrap();
            let why = dir.held_path(run).unwrap_err();
            assert!(why.contains("a belongs to uid 65534, who may rename what is in it"), "{why}");
            chown(&a, Some(0), None).unwrap();
        }
        set(&a, 0o755);
        assert!(dir.held_path(run).is_ok());
        // The entry swapped for a link, and the directory's name given to another directory.
        std::fs::rename(base.join("run"), base.join("away")).unwrap();
        symlink(base.join("away"), base.join("run")).unwrap();
        let why = dir.held_path(run).unwrap_err();
        assert!(why.ends_with("b/run is not a directory (a link?)"), "{why}");
        std::fs::rename(&base, a.join("moved")).unwrap();
        std::fs::create_dir_all(base.join("run")).unwrap();
        let why = dir.held_path(run).unwrap_err();
        assert!(why.ends_with("b no longer leads to the directory the run opened"), "{why}");
    }

    #[test]
    fn a_path_never_leaves_its_directory_with_openat2_or_without() {
        let tmp = tempfile::tempdir().unwrap();
        let (inside, outside) = (tmp.path().join("in"), tmp.path().join("outside"));
        std::fs::create_dir_all(inside.join("a/b")).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(inside.join("a/b/f"), b"in").unwrap();
        std::fs::write(outside.join("f"), b"out").unwrap();
        // A directory on the way swapped for a link to one with the same names.
        symlink(&outside, inside.join("a/l")).unwrap();
        let d = Dir::open(&inside).unwrap();
        let create = O_CREAT | O_EXCL | O_WRONLY;
        type Open = fn(RawFd, &CStr, i32, u32) -> io::Result<OwnedFd>;
        let ways: [(&str, Open); 2] = [("openat2", openat_beneath), ("walked", beneath_without_openat2)];
        for (way, open) in ways {
            let fd = open(d.raw(), c"a/b/f", O_RDONLY | O_NOFOLLOW, 0).unwrap();
            assert_eq!(std::fs::read_to_string(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap(), "in", "{way}");
            assert!(open(d.raw(), c"a/./b", O_PATH | O_DIRECTORY, 0).is_ok(), "{way}");
            let walk = O_PATH | O_DIRECTORY;
            for (path, flags) in [(c"a/l/f", O_RDONLY), (c"a/l/new", create), (c"a/l", walk)] {
                let e = open(d.raw(), path, flags | O_NOFOLLOW, 0o644);
                assert!(e.is_err(), "{way}: {path:?} went through the link");
            }
            for path in [c"a/../../outside/f", c"../outside/f", c"/etc/hostname"] {
                let e = open(d.raw(), path, O_RDONLY | O_NOFOLLOW, 0).unwrap_err();
                assert_eq!(e.raw_os_error(), Some(EXDEV), "{way}: {path:?}");
            }
        }
        assert_eq!(listing(&outside), ["f"], "nothing made through the link");
        assert_eq!(std::fs::read(outside.join("f")).unwrap(), b"out");
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
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
        assert_eq!(d.create("f", 0).unwrap_err().raw_os_error(), Some(EEXIST));
        assert_eq!(d.open_own("f", O_WRONLY).unwrap_err().raw_os_error(), Some(crate::sys::errno::ELOOP));
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
        let e = d.open_own("b", O_RDONLY).unwrap_err();
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
