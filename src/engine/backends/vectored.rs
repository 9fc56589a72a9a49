//! pwritev/preadv with each transfer cut into 16 pieces (IOzone's vectored write and read):
//! what gathering and scattering I/O costs next to one buffer. One transfer at a time.

use super::{probe_by_opening, transfer_all, Backend, BufRef, Capabilities, Registered, Setup};
use crate::spec::Op;
use std::io;

/// Pieces each transfer is cut into.
pub const PIECES: usize = 16;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "vectored",
    about: "pwritev/preadv, each transfer in 16 pieces, one transfer at a time",
    caps: Capabilities::STORAGE,
    probe: |depth| probe_by_opening(open, depth),
    open,
    param: None,
    refuses: Some(|w| {
        // O_DIRECT wants every piece aligned: 16 pieces of a multiple of 4 KiB.
        let whole = (PIECES * 4096) as u64;
        (w.direct && w.transfer % whole != 0).then(|| {
            format!(
                "with --direct the vectored engine needs transfers of a multiple of {} (16 aligned pieces), got {}",
                crate::units::format_size(whole),
                w.transfer
            )
        })
    }),
};

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(super::sync::one_at_a_time(setup.bufs, transfer_vectored))
}

/// One vectored call over all of `buf` at `offset`; what it leaves (a partial transfer) goes
/// through plain pread/pwrite. Returns the bytes moved (fewer only at the end of a file).
fn transfer_vectored(fd: i32, op: Op, buf: BufRef, offset: u64) -> io::Result<usize> {
    let piece = buf.len.div_ceil(PIECES).max(1);
    let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; PIECES];
    let mut count: libc::c_int = 0;
    for (k, slot) in iov.iter_mut().enumerate() {
        let start = k * piece;
        if start >= buf.len {
            break;
        }
        // SAFETY: start < buf.len, so the piece lies within the buffer.
        *slot = libc::iovec { iov_base: unsafe { buf.ptr.add(start) }.cast(), iov_len: piece.min(buf.len - start) };
        count += 1;
    }
    let n = loop {
        // SAFETY: the iovecs cover disjoint parts of a buffer the task owns for its life.
        let n = unsafe {
            match op {
                Op::Write => libc::pwritev(fd, iov.as_ptr(), count, offset as libc::off_t),
                _ => libc::preadv(fd, iov.as_ptr(), count, offset as libc::off_t),
            }
        };
        if n >= 0 {
            break n as usize;
        }
        // Interrupted before it moved a byte: again (never taken for the end of a file).
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    if n == buf.len || (n == 0 && op != Op::Write) {
        return Ok(n);
    }
    // SAFETY: n < buf.len, so the rest lies within the buffer.
    let rest = BufRef { ptr: unsafe { buf.ptr.add(n) }, len: buf.len - n };
    Ok(n + transfer_all(fd, op, rest, offset + n as u64)?)
}
