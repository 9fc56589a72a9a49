//! Memory the kernel reads and writes: buffers aligned for O_DIRECT, and a task's transfer
//! buffers ([`IoBufs`]), which know which of them an asynchronous engine has handed to the
//! kernel, so nothing else can touch those until the kernel is done.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;

/// Buffers are aligned for O_DIRECT on every device we know of.
pub const ALIGN: usize = 4096;

/// A heap buffer aligned to [`ALIGN`], as O_DIRECT requires.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain owned memory with no thread affinity; the raw pointer is only
// the allocation's address, never shared with another owner.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (at least one page is allocated); `None` when the
    /// system cannot give that much.
    pub fn try_new(len: usize) -> Option<Self> {
        let layout = Self::layout(len)?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(AlignedBuf { ptr, len })
    }

    fn layout(len: usize) -> Option<Layout> {
        Layout::from_size_align(len.max(1).checked_next_multiple_of(ALIGN)?, ALIGN).ok()
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in try_new() with the same layout, which was valid then.
        unsafe { dealloc(self.ptr, Self::layout(self.len).expect("the layout it was made with")) }
    }
}

/// A task's transfer buffers: one [`AlignedBuf`] per slot, all of one length, each either
/// the task's to read and write or lent to the kernel (an io_uring or AIO submission) until
/// its completion is reaped. A lent slot is not given out ([`IoBufs::get`] says `None`), and
/// a slot still lent when the buffers are dropped is leaked rather than freed under the
/// kernel's feet. Only the wrappers in `sys` lend and take back.
pub struct IoBufs {
    bufs: Vec<AlignedBuf>,
    lent: Vec<bool>,
    len: usize,
}

impl IoBufs {
    /// `slots` zeroed buffers of `len` bytes each; `None` when the system cannot give that
    /// much.
    pub fn try_new(slots: usize, len: usize) -> Option<IoBufs> {
        let bufs = (0..slots).map(|_| AlignedBuf::try_new(len)).collect::<Option<Vec<_>>>()?;
        Some(IoBufs { bufs, lent: vec![false; slots], len })
    }

    /// How many slots.
    pub fn slots(&self) -> usize {
        self.bufs.len()
    }

    /// The length of each buffer.
    pub fn slot_len(&self) -> usize {
        self.len
    }

    /// Buffer `slot`, unless the kernel holds it (or there is no such slot).
    pub fn get(&self, slot: usize) -> Option<&[u8]> {
        (!*self.lent.get(slot)?).then(|| self.bufs[slot].as_slice())
    }

    /// Buffer `slot`, writable, unless the kernel holds it (or there is no such slot).
    pub fn get_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        (!*self.lent.get(slot)?).then(|| self.bufs[slot].as_mut_slice())
    }

    /// Every buffer the kernel does not hold, writable, with its slot.
    pub fn free_mut(&mut self) -> impl Iterator<Item = (usize, &mut [u8])> {
        self.bufs
            .iter_mut()
            .zip(&self.lent)
            .enumerate()
            .filter(|(_, (_, lent))| !**lent)
            .map(|(i, (b, _))| (i, b.as_mut_slice()))
    }

    /// Lends buffer `slot` to the kernel: its address and length, for a submission. Until
    /// [`IoBufs::take_back`], nothing here reads or writes it. Refused when the slot is lent
    /// already (two transfers in flight on one buffer would race) or does not exist.
    pub(super) fn lend(&mut self, slot: usize) -> io::Result<(*mut u8, usize)> {
        match self.lent.get_mut(slot) {
            Some(lent @ false) => *lent = true,
            _ => {
                let why = format!("buffer slot {slot} is in flight already (or does not exist)");
                return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
            }
        }
        // The address comes from the allocation itself, not from a reference, so no borrow
        // of `self` stands for the kernel's accesses.
        Ok((self.bufs[slot].ptr, self.len))
    }

    /// Takes buffer `slot` back from the kernel, whose transfer on it has completed.
    pub(super) fn take_back(&mut self, slot: usize) {
        self.lent[slot] = false;
    }

    /// Takes every buffer back: the kernel has let go of all of them (its context was
    /// destroyed, which waits for what was in flight).
    pub(super) fn take_back_all(&mut self) {
        self.lent.iter_mut().for_each(|l| *l = false);
    }

    /// Every buffer's address and length (io_uring registers them all once). The addresses
    /// stay put for the life of `self`: each is a heap allocation of its own.
    pub(super) fn regions(&self) -> impl Iterator<Item = (*mut u8, usize)> + '_ {
        self.bufs.iter().map(move |b| (b.ptr, self.len))
    }
}

impl Drop for IoBufs {
    fn drop(&mut self) {
        for (buf, lent) in self.bufs.drain(..).zip(&self.lent) {
            if *lent {
                // The kernel may still write it: never freed.
                std::mem::forget(buf);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffer_is_aligned() {
        let b = AlignedBuf::try_new(47008).unwrap();
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_slice().len(), 47008);
    }

    #[test]
    fn a_lent_slot_is_not_given_out_until_taken_back() {
        let mut bufs = IoBufs::try_new(2, 4096).unwrap();
        let (ptr, len) = bufs.lend(1).unwrap();
        assert!(bufs.lend(1).is_err() && bufs.lend(2).is_err());
        assert_eq!((ptr as usize % ALIGN, len), (0, 4096));
        assert!(bufs.get(1).is_none() && bufs.get_mut(1).is_none());
        assert_eq!(bufs.get_mut(0).map(|b| b.len()), Some(4096));
        assert!(bufs.get(2).is_none());
        bufs.take_back(1);
        assert_eq!(bufs.get(1).map(|b| b.as_ptr()), Some(ptr.cast_const()));
        bufs.lend(0).unwrap();
        drop(bufs);
    }
}
