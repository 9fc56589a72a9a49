//! Copies to and from a shared mapping of the file. Writes allocate the file's blocks to its
//! full size first (posix_fallocate, never shrinking): a store into a mapped page the file
//! system cannot back kills the process (SIGBUS), so a full disk must show up here, as an
//! ordinary ENOSPC, before the first copy. Reads refuse a file shorter than the workload for
//! the same reason.

use super::{Backend, BufRef, Completion};
use crate::spec::Op;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

struct Mmap {
    bufs: Vec<BufRef>,
    map: *mut u8,
    size: usize,
    op: Op,
    done: Option<Completion>,
}

pub fn open(_depth: usize, bufs: Vec<BufRef>) -> io::Result<Box<dyn Backend>> {
    Ok(Box::new(Mmap { bufs, map: std::ptr::null_mut(), size: 0, op: Op::Read, done: None }))
}

impl Backend for Mmap {
    fn attach(&mut self, file: &File, op: Op, size: u64) -> io::Result<()> {
        let len = file.metadata()?.len();
        match op {
            Op::Write => {
                // SAFETY: allocates blocks of an open descriptor; returns an errno, not -1.
                let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, size as libc::off_t) };
                if rc != 0 {
                    return Err(io::Error::from_raw_os_error(rc));
                }
            }
            Op::Read if len < size => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the file holds {len} bytes, the workload reads {size}"),
                ))
            }
            _ => {}
        }
        let prot = match op {
            Op::Write => libc::PROT_READ | libc::PROT_WRITE,
            Op::Read => libc::PROT_READ,
        };
        // SAFETY: a fresh shared mapping of an open file; checked for MAP_FAILED.
        let map =
            unsafe { libc::mmap(std::ptr::null_mut(), size as usize, prot, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        (self.map, self.size, self.op) = (map as *mut u8, size as usize, op);
        Ok(())
    }
    unsafe fn submit(&mut self, slot: usize, offset: u64) -> io::Result<()> {
        let buf = self.bufs[slot];
        let at = offset as usize;
        if at + buf.len > self.size {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: the range lies inside the mapping (checked above) and inside the buffer.
        unsafe {
            match self.op {
                Op::Write => std::ptr::copy_nonoverlapping(buf.ptr, self.map.add(at), buf.len),
                Op::Read => std::ptr::copy_nonoverlapping(self.map.add(at), buf.ptr, buf.len),
            }
        }
        self.done = Some((slot, Ok(buf.len)));
        Ok(())
    }
    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        // SAFETY: the mapping is live between attach and detach.
        if unsafe { libc::msync(self.map as *mut libc::c_void, self.size, libc::MS_SYNC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    fn detach(&mut self) {
        if !self.map.is_null() {
            // SAFETY: unmaps exactly what attach mapped.
            unsafe { libc::munmap(self.map as *mut libc::c_void, self.size) };
            self.map = std::ptr::null_mut();
        }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        self.detach();
    }
}
