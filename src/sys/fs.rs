//! Files and directories: the `*at` calls made through a directory's descriptor with a plain
//! name (`openat`, `mkdirat`, `unlinkat`, `fstatat`), `openat2` resolving a path beneath a
//! directory, `statx` for mount ids and O_DIRECT alignment, `fstatvfs`, `syncfs`, `flock`,
//! fadvise and fallocate, `close` with its error, pread and pwrite (plain and vectored), and
//! directory streams.
//!
//! Descriptors are taken as `RawFd` where the caller holds them by number (a directory the
//! task walks, the file of a phase): a descriptor that is not open fails with EBADF; none of
//! these calls touches memory through it, so a wrong number cannot break memory safety.
//! Names are `&CStr`, so they are NUL-terminated by construction.

use super::cvt;
use std::ffi::CStr;
use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

pub use libc::{
    AT_FDCWD, O_CLOEXEC, O_CREAT, O_DIRECT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_PATH, O_RDONLY, O_RDWR,
    O_WRONLY,
};

/// What kind of entry a [`Stat`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (reported as itself: stat calls here never follow one).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// The status of an entry, as `fstat` and `fstatat` give it: the fields iosurvey reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Its kind.
    pub kind: Kind,
    /// Its owner.
    pub uid: u32,
    /// Its number of names (hard links).
    pub nlink: u64,
    /// Its device.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits (with set-id and sticky bits), without the kind.
    pub mode: u32,
}

impl Stat {
    fn from_c(st: &libc::stat) -> Stat {
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            _ => Kind::Other,
        };
        let mode = st.st_mode & 0o7777;
        Stat { kind, uid: st.st_uid, nlink: st.st_nlink, dev: st.st_dev, ino: st.st_ino, size: st.st_size as u64, mode }
    }
}

/// A file system's figures, as `fstatvfs` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatVfs {
    /// The fragment size: the unit of the block counts.
    pub frsize: u64,
    /// Blocks free to an unprivileged user.
    pub bavail: u64,
    /// Inodes in all (0 where the file system counts none).
    pub files: u64,
    /// Inodes free to an unprivileged user.
    pub favail: u64,
    /// Mounted read-only.
    pub read_only: bool,
}

/// Opens `name` in directory `dir` (`mode` is used only with `O_CREAT`); the descriptor is the
/// caller's to own.
pub(crate) fn openat(dir: RawFd, name: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    // SAFETY: name is NUL-terminated; openat reads nothing else from this process's memory.
    let fd = cvt(unsafe { libc::openat(dir, name.as_ptr(), flags, mode as libc::c_uint) })?;
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `path` (the one call that follows links and resolves from the working directory:
/// the target's own path, once).
pub(crate) fn open(path: &CStr, flags: i32) -> io::Result<OwnedFd> {
    // SAFETY: path is NUL-terminated.
    let fd = cvt(unsafe { libc::open(path.as_ptr(), flags) })?;
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV`: opens `path` only
/// if it lies below `dir`, reached through no link and no mount. `ENOSYS` before Linux 5.6.
pub(crate) fn openat2_beneath(dir: RawFd, path: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    openat2(dir, path, flags, mode, libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_XDEV)
}

/// `openat2` with `RESOLVE_NO_SYMLINKS`: opens the whole path `path` from `/` only if no
/// component of it is a link (mounts on the way are the path's own). `ENOSYS` before Linux 5.6.
pub(crate) fn openat2_no_links(path: &CStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    openat2(libc::AT_FDCWD, path, flags, mode, libc::RESOLVE_NO_SYMLINKS)
}

fn openat2(dir: RawFd, path: &CStr, flags: i32, mode: u32, resolve: u64) -> io::Result<OwnedFd> {
    // SAFETY: open_how is plain data; zero is its every field's default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.mode = if flags & libc::O_CREAT != 0 { u64::from(mode) } else { 0 };
    how.resolve = resolve;
    // SAFETY: path is NUL-terminated and how a properly sized open_how the kernel only reads.
    let rc = cvt(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    })?;
    // SAFETY: rc is a descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

/// Makes directory `name` in `dir`.
pub(crate) fn mkdirat(dir: RawFd, name: &CStr, mode: u32) -> io::Result<()> {
    // SAFETY: name is NUL-terminated.
    cvt(unsafe { libc::mkdirat(dir, name.as_ptr(), mode as libc::mode_t) }).map(drop)
}

/// Removes entry `name` of `dir` that is not a directory (a link itself, never its target).
pub(crate) fn unlinkat(dir: RawFd, name: &CStr) -> io::Result<()> {
    // SAFETY: name is NUL-terminated.
    cvt(unsafe { libc::unlinkat(dir, name.as_ptr(), 0) }).map(drop)
}

/// Removes empty directory `name` of `dir`.
pub(crate) fn rmdirat(dir: RawFd, name: &CStr) -> io::Result<()> {
    // SAFETY: name is NUL-terminated.
    cvt(unsafe { libc::unlinkat(dir, name.as_ptr(), libc::AT_REMOVEDIR) }).map(drop)
}

/// The status of entry `name` of `dir`, a link reported as a link.
pub(crate) fn fstatat(dir: RawFd, name: &CStr) -> io::Result<Stat> {
    // SAFETY: stat is plain data, filled by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: name is NUL-terminated, st a properly sized out-parameter.
    cvt(unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(Stat::from_c(&st))
}

/// The status of an open descriptor.
pub(crate) fn fstat(fd: RawFd) -> io::Result<Stat> {
    // SAFETY: stat is plain data, filled by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a properly sized out-parameter.
    cvt(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(Stat::from_c(&st))
}

/// Sets the permission bits of an open file or directory.
pub(crate) fn fchmod(fd: RawFd, mode: u32) -> io::Result<()> {
    // SAFETY: fchmod reads nothing from this process's memory.
    cvt(unsafe { libc::fchmod(fd, mode as libc::mode_t) }).map(drop)
}

/// The mount an entry is on, from `statx`: the mount id where the kernel gives it (0 where it
/// does not; a bind mount of the same file system has its own), and the device's major and
/// minor. `name` `None` means `fd` itself. Links are not followed.
pub(crate) fn mount_of(fd: RawFd, name: Option<&CStr>) -> io::Result<(u64, u32, u32)> {
    // SAFETY: statx is plain data, filled by the call.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let (path, flags) = match name {
        Some(n) => (n.as_ptr(), libc::AT_SYMLINK_NOFOLLOW),
        None => (c"".as_ptr(), libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW),
    };
    // SAFETY: path is NUL-terminated, st a properly sized out-parameter.
    cvt(unsafe { libc::statx(fd, path, flags, libc::STATX_MNT_ID, &mut st) })?;
    let id = if st.stx_mask & libc::STATX_MNT_ID != 0 { st.stx_mnt_id } else { 0 };
    Ok((id, st.stx_dev_major, st.stx_dev_minor))
}

/// The file system's O_DIRECT offset alignment for an open file, from `statx`
/// (`STATX_DIOALIGN`, Linux 6.1), where the kernel reports it.
pub(crate) fn dio_offset_align(fd: RawFd) -> Option<u64> {
    const STATX_DIOALIGN: u32 = 0x2000;
    // SAFETY: statx is plain data, filled by the call.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: an empty path with AT_EMPTY_PATH stats the descriptor; st is sized right.
    let rc = unsafe { libc::statx(fd, c"".as_ptr(), libc::AT_EMPTY_PATH, STATX_DIOALIGN, &mut st) };
    (rc == 0 && st.stx_mask & STATX_DIOALIGN != 0 && st.stx_dio_offset_align > 0)
        .then_some(u64::from(st.stx_dio_offset_align))
}

/// The figures of the file system an open descriptor is on.
pub(crate) fn fstatvfs(fd: RawFd) -> io::Result<StatVfs> {
    // SAFETY: statvfs is plain data, filled by the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: st is a properly sized out-parameter.
    cvt(unsafe { libc::fstatvfs(fd, &mut st) })?;
    Ok(StatVfs {
        frsize: st.f_frsize,
        bavail: st.f_bavail,
        files: st.f_files,
        favail: st.f_favail,
        read_only: st.f_flag & libc::ST_RDONLY != 0,
    })
}

/// Whether this process may write `path` (access(2) with `W_OK`, by the real user).
pub(crate) fn writable(path: &CStr) -> bool {
    // SAFETY: path is NUL-terminated.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

/// Writes back the whole file system `fd` is on.
pub(crate) fn syncfs(fd: RawFd) -> io::Result<()> {
    // SAFETY: no memory is involved.
    cvt(unsafe { libc::syncfs(fd) }).map(drop)
}

/// Writes back every file system's dirty pages.
pub(crate) fn sync() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() }
}

/// Takes an exclusive `flock` on `fd` without waiting (`EWOULDBLOCK` when another holds it).
pub(crate) fn flock_exclusive(fd: RawFd) -> io::Result<()> {
    // SAFETY: no memory is involved.
    cvt(unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) }).map(drop)
}

/// Drops the `flock` held through `fd`'s open file description, whichever other descriptors
/// (copies, a forked child's) still refer to it.
pub(crate) fn flock_release(fd: RawFd) -> io::Result<()> {
    // SAFETY: no memory is involved.
    cvt(unsafe { libc::flock(fd, libc::LOCK_UN) }).map(drop)
}

/// Clears `O_NONBLOCK` on an open descriptor (failures are ignored: the flag only kept an
/// open from hanging).
pub(crate) fn clear_nonblock(fd: RawFd) {
    // SAFETY: plain flag reads and changes on a descriptor; no memory is involved.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
    }
}

/// A copy of a descriptor, close-on-exec, the caller's to own.
pub(crate) fn dup_cloexec(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: no memory is involved.
    let copy = cvt(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) })?;
    // SAFETY: copy was just made and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// Closes a descriptor and says how it went: std ignores close errors, and network file
/// systems report write-back errors there.
pub(crate) fn close(fd: impl Into<OwnedFd>) -> io::Result<()> {
    // SAFETY: into_raw_fd gives up ownership, so the descriptor is closed exactly once.
    match unsafe { libc::close(fd.into().into_raw_fd()) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// How a file will be read, for the page cache's readahead (`posix_fadvise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advice {
    /// In order: read far ahead.
    Sequential,
    /// Anywhere: read nothing ahead.
    Random,
    /// No pattern to tell.
    Normal,
}

/// Advises the page cache on the whole of an open file; the errno when it refuses.
pub(crate) fn fadvise(fd: RawFd, advice: Advice) -> io::Result<()> {
    let advice = match advice {
        Advice::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Advice::Random => libc::POSIX_FADV_RANDOM,
        Advice::Normal => libc::POSIX_FADV_NORMAL,
    };
    // SAFETY: advice on an open descriptor; no memory is involved.
    match unsafe { libc::posix_fadvise(fd, 0, 0, advice) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// Allocates the blocks of the first `len` bytes of a file (never shrinking it):
/// `posix_fallocate`, which returns its errno.
pub(crate) fn fallocate(fd: RawFd, len: u64) -> io::Result<()> {
    // SAFETY: no memory is involved.
    match unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) } {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// One `pread` into `buf` at `offset`: the bytes read (0 at the end of the file).
#[inline]
pub(crate) fn pread(fd: RawFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    // SAFETY: buf is valid for writes of its length and borrowed mutably for the call.
    let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), offset as libc::off_t) };
    cvt(n).map(|n| n as usize)
}

/// One `pwrite` of `buf` at `offset`: the bytes written.
#[inline]
pub(crate) fn pwrite(fd: RawFd, buf: &[u8], offset: u64) -> io::Result<usize> {
    // SAFETY: buf is valid for reads of its length for the call.
    let n = unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), offset as libc::off_t) };
    cvt(n).map(|n| n as usize)
}

/// One `preadv` into `bufs` at `offset`: the bytes read.
pub(crate) fn preadv(fd: RawFd, bufs: &mut [IoSliceMut], offset: u64) -> io::Result<usize> {
    // SAFETY: IoSliceMut is ABI-compatible with iovec, and each is valid for writes of its
    // length, borrowed mutably for the call.
    let n = unsafe { libc::preadv(fd, bufs.as_mut_ptr().cast(), bufs.len() as libc::c_int, offset as libc::off_t) };
    cvt(n).map(|n| n as usize)
}

/// One `pwritev` of `bufs` at `offset`: the bytes written.
pub(crate) fn pwritev(fd: RawFd, bufs: &[IoSlice], offset: u64) -> io::Result<usize> {
    // SAFETY: IoSlice is ABI-compatible with iovec, and each is valid for reads of its length.
    let n = unsafe { libc::pwritev(fd, bufs.as_ptr().cast(), bufs.len() as libc::c_int, offset as libc::off_t) };
    cvt(n).map(|n| n as usize)
}

/// A directory stream (`fdopendir`, `readdir`), which owns its descriptor.
pub(crate) struct DirStream {
    stream: std::ptr::NonNull<libc::DIR>,
    fd: RawFd,
}

impl DirStream {
    /// A stream over an open directory, from where the descriptor stands (a copy shares its
    /// original's position: [`DirStream::rewind`] first).
    pub(crate) fn new(fd: OwnedFd) -> io::Result<DirStream> {
        let raw = fd.as_raw_fd();
        // SAFETY: raw is an open descriptor; fdopendir takes it over only when it succeeds.
        let Some(stream) = std::ptr::NonNull::new(unsafe { libc::fdopendir(raw) }) else {
            return Err(io::Error::last_os_error());
        };
        Ok(DirStream { stream, fd: fd.into_raw_fd() })
    }

    /// The directory's descriptor (the stream's own: not to be closed).
    pub(crate) fn raw(&self) -> RawFd {
        self.fd
    }

    /// Back to the first entry.
    pub(crate) fn rewind(&mut self) {
        // SAFETY: the stream is open.
        unsafe { libc::rewinddir(self.stream.as_ptr()) }
    }

    /// The next entry's name (`.` and `..` included), `None` at the end (or on an error).
    pub(crate) fn next_name(&mut self) -> Option<&CStr> {
        // SAFETY: the stream is open.
        let entry = unsafe { libc::readdir(self.stream.as_ptr()) };
        if entry.is_null() {
            return None;
        }
        // SAFETY: d_name of the entry readdir gave is NUL-terminated, and stays valid until
        // the next readdir or closedir on this stream, which need `&mut self` or `self`: the
        // name's borrow of `self` ends before either.
        Some(unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) })
    }
}

impl Drop for DirStream {
    fn drop(&mut self) {
        // SAFETY: closes the stream and its descriptor, once.
        unsafe { libc::closedir(self.stream.as_ptr()) };
    }
}

/// The file a loop device reads and writes, as the kernel holds it (`LOOP_GET_STATUS64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopBacking {
    /// The device of the file system holding it (the kernel's encoding of a device number).
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// Its device number when it is a block device, 0 when a file.
    pub rdev: u64,
}

/// The kernel's `struct loop_info64` (linux/loop.h); only the first three fields are read.
#[repr(C)]
struct LoopInfo64 {
    device: u64,
    inode: u64,
    rdevice: u64,
    offset: u64,
    sizelimit: u64,
    number: u32,
    encrypt_type: u32,
    encrypt_key_size: u32,
    flags: u32,
    file_name: [u8; 64],
    crypt_name: [u8; 64],
    encrypt_key: [u8; 32],
    init: [u64; 2],
}

/// What the loop device open as `fd` is backed by. The kernel answers by the file it holds,
/// so a backing file renamed or deleted since is still named by its inode, which the path in
/// sysfs can no longer give.
pub fn loop_backing(fd: RawFd) -> io::Result<LoopBacking> {
    const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
    // SAFETY: an all-zero loop_info64 is valid (integers and byte arrays).
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one loop_info64 into the buffer passed, which is one; a
    // descriptor that is not a loop device fails with an error and writes nothing.
    cvt(unsafe { libc::ioctl(fd, LOOP_GET_STATUS64 as _, &mut info as *mut LoopInfo64) })?;
    Ok(LoopBacking { dev: info.device, ino: info.inode, rdev: info.rdevice })
}
