//! What goes into each transfer and how a read is checked.
//!
//! Plain runs write one pseudo-random buffer made before the clock starts, with the transfer's
//! offset stamped into its first word so no two transfers are identical (dedup and compression
//! see nothing to gain). Verified runs write a 32-byte header (magic, run token, writer task,
//! offset) and a payload generated from those three, and the read phase regenerates and
//! compares every byte.

use crate::engine::offsets::mix;
pub use crate::record::execution::{Fault, Mismatch};
pub use crate::sys::mem::{AlignedBuf, ALIGN};

const MAGIC: u64 = 0x696f_7375_7276_6579; // "iosurvey"

/// Fills `buf` with a xorshift stream from `seed`: about one cycle per byte.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.copy_from_slice(&x.to_le_bytes());
    }
    let tail = chunks.into_remainder();
    let last = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
    tail.copy_from_slice(&last[..tail.len()]);
}

/// Marks a plain (unverified) transfer so that each is unique.
#[inline]
pub fn stamp_plain(buf: &mut [u8], offset: u64) {
    if buf.len() >= 8 {
        buf[..8].copy_from_slice(&offset.to_le_bytes());
    }
}

/// Who wrote a verified transfer and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Random token of the run that wrote it.
    pub token: u64,
    /// Writer task.
    pub task: u64,
    /// Byte offset in its file.
    pub offset: u64,
}

impl Stamp {
    fn seed(&self) -> u64 {
        mix(mix(self.token, self.task), self.offset)
    }
}

/// Writes the header and deterministic payload of a verified transfer.
pub fn fill_verified(buf: &mut [u8], stamp: Stamp) {
    let header = [MAGIC, stamp.token, stamp.task, stamp.offset];
    for (dst, word) in buf[..32].chunks_exact_mut(8).zip(header) {
        dst.copy_from_slice(&word.to_le_bytes());
    }
    fill_random(&mut buf[32..], stamp.seed());
}

/// Checks a read transfer against what `stamp` wrote; `scratch` is a buffer of the same size.
pub fn check(buf: &[u8], stamp: Stamp, scratch: &mut [u8]) -> Option<Mismatch> {
    fill_verified(scratch, stamp);
    let pos = first_difference(buf, scratch)?;
    let word = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let fault = if word(0) != MAGIC {
        Fault::Corrupt
    } else if word(1) != stamp.token {
        Fault::Stale
    } else if word(2) != stamp.task || word(3) != stamp.offset {
        Fault::Misplaced
    } else {
        Fault::Corrupt
    };
    Some(Mismatch { fault, offset: stamp.offset + pos as u64, expected: scratch[pos], found: buf[pos] })
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    // Compare in 4 KiB slices first: slice equality is a memcmp, far faster than a byte loop.
    let mut base = 0;
    for (x, y) in a.chunks(4096).zip(b.chunks(4096)) {
        if x != y {
            return x.iter().zip(y).position(|(p, q)| p != q).map(|p| base + p);
        }
        base += x.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Stamp = Stamp { token: 7, task: 2, offset: 47008 };

    #[test]
    fn verified_data_passes_and_a_flipped_byte_is_found() {
        let mut buf = vec![0u8; 4096];
        let mut scratch = vec![0u8; 4096];
        fill_verified(&mut buf, S);
        assert_eq!(check(&buf, S, &mut scratch), None);
        let good = buf[1000];
        buf[1000] ^= 0x01;
        let m = check(&buf, S, &mut scratch).unwrap();
        assert_eq!(m, Mismatch { fault: Fault::Corrupt, offset: 47008 + 1000, expected: good, found: good ^ 1 });
    }

    #[test]
    fn data_from_another_run_is_stale_and_misplaced_data_is_named() {
        let mut buf = vec![0u8; 4096];
        let mut scratch = vec![0u8; 4096];
        fill_verified(&mut buf, Stamp { token: 8, ..S });
        assert_eq!(check(&buf, S, &mut scratch).unwrap().fault, Fault::Stale);
        fill_verified(&mut buf, Stamp { task: 3, ..S });
        assert_eq!(check(&buf, S, &mut scratch).unwrap().fault, Fault::Misplaced);
        let zeros = vec![0u8; 4096];
        assert_eq!(check(&zeros, S, &mut scratch).unwrap().fault, Fault::Corrupt);
    }

    #[test]
    fn random_fill_is_deterministic_and_not_constant() {
        let (mut a, mut b) = (vec![0u8; 1001], vec![0u8; 1001]);
        fill_random(&mut a, 5);
        fill_random(&mut b, 5);
        assert_eq!(a, b);
        fill_random(&mut b, 6);
        assert_ne!(a, b);
        let distinct: std::collections::BTreeSet<u8> = a.iter().copied().collect();
        assert!(distinct.len() > 200);
    }
}
