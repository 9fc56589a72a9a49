//! Every call into the C library, the kernel's system calls and MPI's C interface, each behind a
//! safe wrapper that takes Rust types (descriptors, `&CStr` names, slices) and returns
//! `std::io::Result` with errno. This is the one place `unsafe` is written: each block says
//! why the call is sound (`// SAFETY:`), and a wrapper that cannot check what soundness needs
//! stays `unsafe fn` with a `# Safety` section (none does today). The test at the end of this
//! file keeps the rule: no `unsafe` and no `libc::` anywhere else in `src/`.
//!
//! One file per subject: [`fs`] (the `*at` calls through a directory's descriptor, openat2
//! beneath it, stat, statx, fadvise, fallocate, fsync's relatives, locks, pread and pwrite,
//! directory streams), [`mem`] (aligned buffers and a task's transfer buffers, which know
//! which of them the kernel holds), [`aio`] (Linux kernel AIO), [`uring`] (io_uring),
//! [`mmap`] (a shared mapping and its SIGBUS guard), [`stdio`] (a C stdio stream),
//! [`signal`] (signal masks and waits, `kill`), [`term`] (the terminal's width), [`net`] (socket options, MSG_ZEROCOPY and its
//! error queue, interfaces), [`proc`] (ids, clocks, uname, getrandom), [`errno`] (the error
//! numbers the rest compares with) and, with the `mpi` feature, `mpi` (the raw MPI calls the
//! `mpi` crate has no safe form of).
//!
//! Only [`signal`], [`term`] and a few of [`fs`]'s flags are public, for the binary's signal
//! thread, its help and tables, and its output files; the rest is the library's own.

pub(crate) mod aio;
pub(crate) mod errno;
pub mod fs;
pub(crate) mod mem;
pub(crate) mod mmap;
#[cfg(feature = "mpi")]
pub(crate) mod mpi;
pub(crate) mod net;
pub(crate) mod proc;
pub mod signal;
pub(crate) mod stdio;
pub mod term;
pub(crate) mod uring;

use std::io;

/// The result of a call that returns -1 (or any negative value) and sets errno on failure.
fn cvt<T: Copy + PartialOrd + Default>(rc: T) -> io::Result<T> {
    if rc < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Whether a line of Rust holds the keyword `unsafe` (a block, fn, impl or trait), not
    /// the word inside a string or a comment.
    fn unsafe_keyword(line: &str) -> bool {
        let code = line.split("//").next().unwrap_or("");
        let mut outside = String::new();
        let mut quoted = false;
        let mut escaped = false;
        for c in code.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                _ if !quoted => outside.push(c),
                _ => {}
            }
        }
        outside.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == "unsafe")
    }

    #[test]
    fn unsafe_code_and_libc_live_only_in_sys() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        assert!(files.len() > 50, "the sources were found ({} files)", files.len());
        let mut broken = Vec::new();
        for file in files.iter().filter(|f| !f.starts_with(src.join("sys"))) {
            let text = std::fs::read_to_string(file).unwrap();
            let shown = file.strip_prefix(&src).unwrap().display();
            for (n, line) in text.lines().enumerate() {
                if unsafe_keyword(line) {
                    broken.push(format!("src/{shown}:{}: unsafe outside src/sys: {}", n + 1, line.trim()));
                }
                if line.contains("libc::") || line.contains("mpi::ffi") || line.contains("mpi_sys") {
                    broken.push(format!("src/{shown}:{}: a C call outside src/sys: {}", n + 1, line.trim()));
                }
            }
        }
        assert!(broken.is_empty(), "{}", broken.join("\n"));
    }

    #[test]
    fn the_rule_sees_the_keyword_and_not_the_word() {
        assert!(unsafe_keyword("    let n = unsafe { f() };"));
        assert!(unsafe_keyword("unsafe fn submit(&mut self);"));
        assert!(unsafe_keyword("unsafe impl Send for X {}"));
        assert!(!unsafe_keyword(r#"const CSP: &str = "style-src 'unsafe-inline'";"#));
        assert!(!unsafe_keyword("// unsafe { in a comment }"));
        assert!(!unsafe_keyword("pub enum Unsafe {"));
        assert!(!unsafe_keyword("fn not_unsafe_at_all() {}"));
    }
}
