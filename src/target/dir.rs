//! A directory held open by its descriptor. The `--dir` path is resolved once, when it is
//! opened; from then on every open, create, stat and unlink of iosurvey's files goes through
//! the descriptor with plain names (`openat` with `O_NOFOLLOW`, `unlinkat`), or with a path
//! below it that [`openat_beneath`] walks without following a link or crossing a mount, so a
//! symbolic link, a `..` or a renamed parent can never make iosurvey touch anything outside it.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::io::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
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

/// Opens `name` in `parent` only if it is below `parent` on the same mount and reached through
/// no link: a mount point on the way or at the end (another file system, or a bind mount of
/// this one, a directory or a file) is `EXDEV`, a link `ELOOP`, a path that climbs out (`..`,
/// or absolute) `EXDEV`. `name` may be a path of several components (a metadata item's from
/// the base directory). This keeps every open, walk and clean-up out of whatever an admin
/// mounts inside the target, even mid-run. `mode` is used only with `O_CREAT`.
pub fn openat_beneath(parent: RawFd, name: &CStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: open_how is plain data; zero is its every field's default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.mode = if flags & libc::O_CREAT != 0 { u64::from(mode) } else { 0 };
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_XDEV;
    // SAFETY: name is NUL-terminated and how a properly sized open_how.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            parent,
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if rc >= 0 {
        // SAFETY: rc is a descriptor just opened and owned by nobody else.
        return Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) });
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOSYS) {
        return Err(e);
    }
    beneath_without_openat2(parent, name, flags, mode)
}

/// [`openat_beneath`] before Linux 5.6, which has no `openat2`: `O_NOFOLLOW` guards the last
/// component only, so a path is walked one component at a time, each opened without following
/// a link and refused when it sits on another mount than the one before.
fn beneath_without_openat2(parent: RawFd, name: &CStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let bytes = name.to_bytes();
    // What RESOLVE_BENEATH refuses: a path that starts above `parent` or climbs out of it.
    if bytes.starts_with(b"/") || bytes.split(|&c| c == b'/').any(|c| c == b"..") {
        return Err(io::Error::from_raw_os_error(libc::EXDEV));
    }
    let mut components = bytes.split(|&c| c == b'/').filter(|&c| !c.is_empty() && c != b".");
    let Some(leaf) = components.next_back() else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let mut at: Option<OwnedFd> = None;
    for dir in components {
        let dir = CString::new(dir).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let from = at.as_ref().map_or(parent, AsRawFd::as_raw_fd);
        at = Some(open_one(from, &dir, libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0)?);
    }
    let leaf = CString::new(leaf).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    open_one(at.as_ref().map_or(parent, AsRawFd::as_raw_fd), &leaf, flags, mode)
}

/// Opens one plain entry `name` of `parent` (`flags` holding `O_NOFOLLOW`), refusing it when it
/// is on another mount than `parent`.
fn open_one(parent: RawFd, name: &CStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: name is NUL-terminated; the mode is used only with O_CREAT.
    let fd = check(unsafe { libc::openat(parent, name.as_ptr(), flags, mode as libc::c_uint) })?;
    // SAFETY: fd was just opened and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    if mount_of(owned.as_raw_fd(), None)? != mount_of(parent, None)? {
        return Err(io::Error::from_raw_os_error(libc::EXDEV));
    }
    Ok(owned)
}

/// Opens directory `name` in `parent` as [`openat_beneath`] does.
pub fn open_dir_beneath(parent: RawFd, name: &CStr) -> io::Result<OwnedFd> {
    openat_beneath(parent, name, libc::O_RDONLY | libc::O_DIRECTORY, 0)
}

/// The mount an entry is on: the mount id where the kernel gives it (a bind mount of the
/// same file system has its own), and the device. `name` None means `fd` itself.
fn mount_of(fd: RawFd, name: Option<&CStr>) -> io::Result<(u64, u32, u32)> {
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let (path, flags) = match name {
        Some(n) => (n.as_ptr(), libc::AT_SYMLINK_NOFOLLOW),
        None => (c"".as_ptr(), libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW),
    };
    // SAFETY: path is NUL-terminated, st sized right.
    check(unsafe { libc::statx(fd, path, flags, libc::STATX_MNT_ID, &mut st) })?;
    let id = if st.stx_mask & libc::STATX_MNT_ID != 0 { st.stx_mnt_id } else { 0 };
    Ok((id, st.stx_dev_major, st.stx_dev_minor))
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
    // SAFETY: fdopendir takes ownership of the descriptor.
    let stream = unsafe { libc::fdopendir(fd.as_raw_fd()) };
    if stream.is_null() {
        return Err(io::Error::last_os_error());
    }
    let fd = fd.into_raw_fd();
    let top = at.is_empty();
    let mut first_error = None;
    // Entries removed while reading may make readdir skip others: read again until a pass
    // removes nothing. Each pass sees the whole directory, so the last one says what is left.
    let mut seen = Left::default();
    for pass in 1..=4 {
        seen = Left::default();
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
            let child = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
            let bytes = child.to_bytes();
            if matches!(bytes, b"." | b"..") {
                continue;
            }
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: child is NUL-terminated, st sized right.
            if unsafe { libc::fstatat(fd, child.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
                continue;
            }
            let refusal = if !crate::spec::meta::made_name(bytes, top) {
                Some("not a name iosurvey makes".to_string())
            } else if st.st_uid != euid() {
                Some(format!("owned by uid {}", st.st_uid))
            } else if mount_of(fd, Some(child)).map_or(true, |m| m != here) {
                Some(MOUNT_POINT.to_string())
            } else {
                None
            };
            if let Some(why) = refusal {
                seen.add(at, bytes, &why);
                continue;
            }
            let result = match st.st_mode & libc::S_IFMT {
                libc::S_IFDIR if depth == 0 => Err(io::Error::other("deeper than any tree iosurvey makes")),
                libc::S_IFDIR => {
                    let mark = at.len();
                    if !at.is_empty() {
                        at.push(b'/');
                    }
                    at.extend_from_slice(bytes);
                    let r = remove_tree(fd, child, depth - 1, at, &mut seen);
                    at.truncate(mark);
                    r
                }
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
        if removed == 0 || pass == 4 {
            break;
        }
    }
    left.absorb(seen);
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

    /// The directory's device and inode: who it is, whatever its name now.
    pub fn id(&self) -> io::Result<(u64, u64)> {
        let st = fstat(self.raw())?;
        Ok((st.st_dev, st.st_ino))
    }

    /// Whether entry `name` of `parent` is still this directory (not renamed away, nor
    /// replaced by another under the same name).
    pub fn is_at(&self, parent: &Dir, name: &OsStr) -> bool {
        let c = match c_name(name) {
            Ok(c) => c,
            Err(_) => return false,
        };
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: c is a valid name, st sized right.
        let found = unsafe { libc::fstatat(parent.raw(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0;
        found && self.id().is_ok_and(|id| id == (st.st_dev, st.st_ino))
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
        Ok(File::from(openat_beneath(self.raw(), &c, flags, 0o644)?))
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
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
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

    /// Whether entry `name` is a mount point (another file system, or a bind mount).
    pub fn mount_point(&self, name: &str) -> io::Result<bool> {
        crosses_mount(self.raw(), &c_name(name.as_ref())?)
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
        let create = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY;
        type Open = fn(RawFd, &CStr, libc::c_int, u32) -> io::Result<OwnedFd>;
        let ways: [(&str, Open); 2] = [("openat2", openat_beneath), ("walked", beneath_without_openat2)];
        for (way, open) in ways {
            let fd = open(d.raw(), c"a/b/f", libc::O_RDONLY | libc::O_NOFOLLOW, 0).unwrap();
            assert_eq!(std::fs::read_to_string(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap(), "in", "{way}");
            assert!(open(d.raw(), c"a/./b", libc::O_PATH | libc::O_DIRECTORY, 0).is_ok(), "{way}");
            let walk = libc::O_PATH | libc::O_DIRECTORY;
            for (path, flags) in [(c"a/l/f", libc::O_RDONLY), (c"a/l/new", create), (c"a/l", walk)] {
                let e = open(d.raw(), path, flags | libc::O_NOFOLLOW, 0o644);
                assert!(e.is_err(), "{way}: {path:?} went through the link");
            }
            for path in [c"a/../../outside/f", c"../outside/f", c"/etc/hostname"] {
                let e = open(d.raw(), path, libc::O_RDONLY | libc::O_NOFOLLOW, 0).unwrap_err();
                assert_eq!(e.raw_os_error(), Some(libc::EXDEV), "{way}: {path:?}");
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
