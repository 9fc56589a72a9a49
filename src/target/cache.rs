//! The page cache: emptying it between phases, where the system lets us.

use std::io;

/// Whether this process may drop the page cache (root with a writable /proc/sys/vm).
pub fn can_drop() -> bool {
    let root = crate::sys::proc::euid() == 0;
    root && std::path::Path::new("/proc/sys/vm/drop_caches").exists()
}

/// Writes dirty pages back and drops clean page cache, dentries and inodes.
pub fn drop_caches() -> io::Result<()> {
    // Dirty pages cannot be dropped, so they go first.
    crate::sys::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3")
}
