//! pwritev/preadv with each transfer cut into 16 pieces (IOzone's vectored write and read):
//! what gathering and scattering I/O costs next to one buffer. One transfer at a time.

use super::{probe_by_opening, transfer_all, Backend, Capabilities, Registered, Setup};
use crate::spec::Op;
use crate::sys::fs::{preadv, pwritev};
use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::RawFd;

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
    refuses: Some(|_, data| {
        // O_DIRECT wants every piece aligned: 16 pieces of a multiple of 4 KiB.
        let whole = (PIECES * 4096) as u64;
        (data.direct && data.transfer % whole != 0).then(|| {
            format!(
                "with --direct the vectored engine needs transfers of a multiple of {} (16 aligned pieces), got {}",
                crate::units::format_size(whole),
                data.transfer
            )
        })
    }),
    takes: super::Handles::Files,
};

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(super::sync::one_at_a_time(setup.bufs, transfer_vectored))
}

/// One vectored call over all of `buf` at `offset`; what it leaves (a partial transfer) goes
/// through plain pread/pwrite. Returns the bytes moved (fewer only at the end of a file).
fn transfer_vectored(fd: RawFd, op: Op, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let len = buf.len();
    let piece = len.div_ceil(PIECES).max(1);
    let n = loop {
        let moved = match op {
            Op::Write => {
                let mut iov = [IoSlice::new(&[]); PIECES];
                let count = pieces(&mut iov, buf.chunks(piece).map(IoSlice::new));
                pwritev(fd, &iov[..count], offset)
            }
            _ => {
                let mut iov: [IoSliceMut; PIECES] = std::array::from_fn(|_| IoSliceMut::new(&mut []));
                let count = pieces(&mut iov, buf.chunks_mut(piece).map(IoSliceMut::new));
                preadv(fd, &mut iov[..count], offset)
            }
        };
        match moved {
            Ok(n) => break n,
            // Interrupted before it moved a byte: again (never taken for the end of a file).
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    if n == len || (n == 0 && op != Op::Write) {
        return Ok(n);
    }
    Ok(n + transfer_all(fd, op, &mut buf[n..], offset + n as u64)?)
}

/// Puts `slices` (at most [`PIECES`]) at the start of `iov`: how many.
fn pieces<T>(iov: &mut [T; PIECES], slices: impl Iterator<Item = T>) -> usize {
    let mut count = 0;
    for (slot, slice) in iov.iter_mut().zip(slices) {
        *slot = slice;
        count += 1;
    }
    count
}
