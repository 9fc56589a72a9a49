//! The error numbers the rest of iosurvey compares `io::Error::raw_os_error()` with, by their C
//! names: the kernel's words, where `io::ErrorKind` would merge some (EACCES and EPERM) and
//! has no name for others (EXDEV, ENOLCK).

pub(crate) use libc::{
    EACCES, EAGAIN, EBADF, EBUSY, EDQUOT, EEXIST, EINTR, EINVAL, EIO, ELOOP, ENOBUFS, ENOENT, ENOLCK, ENOSPC, ENOSYS,
    ENOTDIR, EOPNOTSUPP, EPERM, EROFS, ESRCH, EWOULDBLOCK, EXDEV,
};
