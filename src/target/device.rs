//! A block device under test (docs/safety.md, "Block devices"). Reading is allowed without a
//! word; writing destroys what the device holds, so it needs `--destroy-data` naming the same
//! device, and is refused while the device, a partition of its disk or a holder of either is
//! in use (mounted, swap, md/dm/LVM, opened exclusively by another process), while anything
//! it stands on (a loop device's backing, md/dm members, down to the bottom) is in use or is
//! the result store, or while it carries a file system or partition-table signature. The checks are made when the target
//! is taken and again right before each run that writes; from the first write on the lead
//! holds the device open exclusively (O_EXCL), so nothing can mount it meanwhile.
//!
//! A run's data goes to regions of its devices: file i of the run (a task's, or the one
//! shared file) goes to device i mod n, at region i / n of its size, so each task has its own
//! region or all share one, as the workload says ([`super::site`]).

use super::TargetError;
use crate::sys::errno::EBUSY;
use crate::sys::fs::{O_CLOEXEC, O_DIRECT, O_EXCL, O_NONBLOCK, O_PATH, O_RDONLY};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What a record keeps of a device is an environment fact; it is filled here, from sysfs.
pub use crate::env::DeviceFacts;

/// major and minor of a device number (glibc's encoding).
pub fn split_dev(rdev: u64) -> (u64, u64) {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    (major, minor)
}

/// A block device named by the user, checked to be one.
#[derive(Debug)]
pub struct Device {
    path: PathBuf,
    rdev: u64,
    facts: DeviceFacts,
    /// The device node, held (O_PATH) from the check on: every later open goes through it
    /// (/proc/self/fd/N), never through the path, which may name something else by then.
    node: File,
}

impl Device {
    /// The block device at `path` (a link to one, as /dev/disk/by-id holds, is followed: the
    /// device itself is what is checked), with its facts from sysfs.
    pub fn open(path: &Path) -> Result<Device, TargetError> {
        // O_PATH opens nothing: no driver sees it, whatever the path names.
        let node = OpenOptions::new()
            .read(true)
            .custom_flags(O_PATH | O_CLOEXEC)
            .open(path)
            .map_err(|e| TargetError::io("open", path, e))?;
        let meta = node.metadata().map_err(|e| TargetError::io("stat", path, e))?;
        let ft = meta.file_type();
        if !ft.is_block_device() {
            let what = match () {
                _ if ft.is_char_device() => "a character device",
                _ if ft.is_dir() => "a directory",
                _ if ft.is_file() => "a regular file",
                _ => "not a block device",
            };
            return Err(TargetError::NotABlockDevice(path.into(), what));
        }
        let rdev = meta.rdev();
        let mut facts = sysfs_facts(rdev);
        facts.path = path.display().to_string();
        let mut device = Device { path: path.into(), rdev, facts, node };
        if device.facts.size_bytes == 0 {
            // sysfs may be missing (a container): the device's end says its size.
            device.facts.size_bytes =
                device.open_data(O_RDONLY).and_then(|mut f| f.seek(SeekFrom::End(0))).unwrap_or(0);
        }
        Ok(device)
    }

    /// The path given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the record keeps.
    pub fn facts(&self) -> &DeviceFacts {
        &self.facts
    }

    /// Whether `other` names this very device.
    pub fn same_as(&self, other: &Path) -> bool {
        // A stat, which opens nothing.
        fs::metadata(other).is_ok_and(|m| m.file_type().is_block_device() && m.rdev() == self.rdev)
    }

    /// Opens the device for a task's transfers, with `flags` (access, O_DIRECT), and checks
    /// that what the path now names is still the device checked.
    pub fn open_data(&self, flags: i32) -> io::Result<File> {
        let access = flags & 3;
        let file = OpenOptions::new()
            .read(access != crate::sys::fs::O_WRONLY)
            .write(access != O_RDONLY)
            .custom_flags(flags & !3)
            .open(self.reopen())?;
        match file.metadata()?.rdev() == self.rdev {
            true => Ok(file),
            false => Err(io::Error::other("the path names another device than the one checked")),
        }
    }

    /// The held node, by the name that reopens it.
    fn reopen(&self) -> PathBuf {
        use std::os::unix::io::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.node.as_raw_fd()))
    }

    /// Why the device may not be written, if it may not: in use, or holding a signature
    /// (unless `ignore_signature`). `held` is the lead's exclusive descriptor, when it holds
    /// one already; otherwise one is taken and returned. The signature is read through it,
    /// so it is this device's, whatever the path names by then.
    pub fn check_writable(
        &self,
        ignore_signature: bool,
        held: Option<&File>,
        store: &Path,
    ) -> Result<Option<File>, TargetError> {
        let refuse = |why: String| TargetError::DeviceInUse { path: self.path.clone(), why };
        // A plain open, through the held node, only to ask a loop device what it reads.
        let asked = self.open_data(O_RDONLY | O_NONBLOCK).ok();
        match refusal(&self.facts, &Uses::read(), asked.as_ref(), store) {
            Some(Refusal::InUse(why)) => return Err(refuse(why)),
            Some(Refusal::Store(why)) => return Err(TargetError::DeviceOnStore { path: self.path.clone(), why }),
            None => {}
        }
        let taken = match held {
            Some(_) => None,
            None => {
                let f = OpenOptions::new().read(true).custom_flags(O_EXCL | O_CLOEXEC).open(self.reopen()).map_err(
                    |e| match e.raw_os_error() {
                        Some(EBUSY) => refuse(
                            "it is open exclusively by another process (mounted, or held by md, dm, LVM or a program)"
                                .into(),
                        ),
                        _ => TargetError::io("open (exclusive)", &self.path, e),
                    },
                )?;
                if f.metadata().map_err(|e| TargetError::io("stat", &self.path, e))?.rdev() != self.rdev {
                    return Err(refuse("its path now names another device than the one checked".into()));
                }
                Some(f)
            }
        };
        if !ignore_signature {
            let file = held.or(taken.as_ref()).expect("held, or just taken");
            let mut head = vec![0u8; SIGNATURE_BYTES];
            let n = read_head(file, &mut head).map_err(|e| TargetError::io("read", &self.path, e))?;
            if let Some(found) = signature(&head[..n]).or_else(|| blkid_probe(file)) {
                return Err(TargetError::Signature { path: self.path.clone(), found });
            }
        }
        Ok(taken)
    }

    /// Bytes the device's data path must align to under O_DIRECT.
    pub fn alignment(&self) -> u64 {
        self.facts.logical_block.max(512)
    }
}

fn read_head(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// What libblkid's low-level probe (`blkid -p`, util-linux) finds on the device, when it is
/// installed: it knows far more formats than [`signature`], and looks past the device's
/// start (md superblocks at its end, ZFS labels). Run on our own descriptor of the device.
fn blkid_probe(file: &File) -> Option<String> {
    use std::os::unix::io::AsRawFd;
    let path = format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd());
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "export", &path])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let value = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).map(|v| crate::escape::visible(v));
    match out.status.code() {
        // Several signatures at once: libblkid will not choose, and neither do we.
        Some(8) => Some("more than one signature (blkid -p)".into()),
        // Only what is on the device counts: a partition's PART_ENTRY_* lines describe the
        // table of its disk, not its contents.
        Some(0) => value("TYPE=")
            .map(|t| format!("a {t} signature (blkid -p)"))
            .or_else(|| value("PTTYPE=").map(|t| format!("a {t} partition table (blkid -p)"))),
        _ => None,
    }
}

/// How much of the device's start the signature check reads: far enough for btrfs's
/// superblock (64 KiB + 64) and ISO 9660's descriptor (32 KiB + 1).
const SIGNATURE_BYTES: usize = 68 * 1024;

/// The file system, volume or partition-table signature at the start of `head`, named.
/// Two-byte magics (ext, MBR) are taken only with fields that random data would not hold, so
/// a device iosurvey wrote before is not taken for a file system.
pub fn signature(head: &[u8]) -> Option<String> {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    let le16 = |off: usize| head.get(off..off + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let le32 = |off: usize| head.get(off..off + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let found = |s: &str| Some(s.to_string());
    if at(0, b"XFSB") {
        return found("an xfs file system");
    }
    if at(0x10040, b"_BHRfS_M") {
        return found("a btrfs file system");
    }
    // ext2/3/4: the magic, a block size of 1-64 KiB and inodes.
    if le16(1024 + 0x38) == Some(0xEF53)
        && le32(1024 + 0x18).is_some_and(|log| log <= 6)
        && le32(1024).is_some_and(|inodes| inodes > 0)
    {
        let features = le32(1024 + 0x60).unwrap_or(0);
        return found(if features & 0x40 != 0 { "an ext4 file system" } else { "an ext2/ext3 file system" });
    }
    if at(4086, b"SWAPSPACE2") || at(4086, b"SWAP-SPACE") {
        return found("a swap area");
    }
    if at(0, b"LUKS\xba\xbe") {
        return found("a LUKS encrypted volume");
    }
    if (0..4).any(|s| at(s * 512, b"LABELONE")) {
        return found("an LVM physical volume");
    }
    if le32(0) == Some(0xa92b_4efc) || le32(4096) == Some(0xa92b_4efc) {
        return found("an md RAID member");
    }
    if at(3, b"NTFS    ") {
        return found("an NTFS file system");
    }
    if at(54, b"FAT1") || at(82, b"FAT32   ") {
        return found("a FAT file system");
    }
    if at(32769, b"CD001") {
        return found("an ISO 9660 file system");
    }
    if at(0, b"hsqs") {
        return found("a squashfs file system");
    }
    // An iosurvey store (or any other SQLite database) on a loop device over its file.
    if at(0, b"SQLite format 3\0") {
        return found("an SQLite database");
    }
    if at(512, b"EFI PART") {
        return found("a GPT partition table");
    }
    // MBR: the boot signature, and four entries each with a boot flag of 0 or 0x80 and at
    // least one partition.
    if at(510, &[0x55, 0xAA]) {
        let entries = (0..4).map(|i| 446 + 16 * i);
        let flags_ok = entries.clone().all(|e| matches!(head[e], 0x00 | 0x80));
        let any = entries.clone().any(|e| head[e + 4] != 0);
        if flags_ok && any {
            return found("an MBR partition table");
        }
    }
    None
}

/// Where to look for uses of a device: sysfs and the device nodes (`/sys` and `/dev`, but in
/// tests), and the system's tables, read once per check.
struct Uses {
    sys: PathBuf,
    dev: PathBuf,
    mountinfo: String,
    swaps: String,
}

impl Uses {
    fn read() -> Uses {
        Uses {
            sys: PathBuf::from("/sys"),
            dev: PathBuf::from("/dev"),
            mountinfo: fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
            swaps: fs::read_to_string("/proc/swaps").unwrap_or_default(),
        }
    }

    /// A block device's directory in sysfs, by its kernel name.
    fn block(&self, name: &str) -> PathBuf {
        self.sys.join("class/block").join(name)
    }

    /// The kernel name of the block device `dev` (major:minor).
    fn name_of(&self, dev: &str) -> Option<String> {
        let real = fs::canonicalize(self.sys.join("dev/block").join(dev)).ok()?;
        real.file_name().map(|n| n.to_string_lossy().into_owned())
    }

    /// The disk a block device is of: itself, or the disk of a partition.
    fn disk_of(&self, name: &str) -> String {
        let dir = self.block(name);
        match dir.join("partition").exists() {
            true => fs::canonicalize(&dir)
                .ok()
                .and_then(|r| r.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| name.into()),
            false => name.into(),
        }
    }

    /// The names in a directory of sysfs links (`holders`, `slaves`).
    fn names(&self, dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    }

    /// The loop devices set up, by name.
    fn loops(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .names(&self.sys.join("block"))
            .into_iter()
            .filter(|n| self.block(n).join("loop/backing_file").exists())
            .collect();
        all.sort();
        all
    }

    /// What the loop device `name` is backed by, if it is one that is set up. `open` is the
    /// caller's own descriptor of it, when it has one; otherwise, with `may_open`, its node is
    /// opened to ask the kernel, which only a device something else holds open may be (the
    /// last close of an auto-clearing loop device detaches it).
    fn backing(&self, name: &str, open: Option<&File>, may_open: bool) -> Option<Backing> {
        let dir = self.block(name);
        let text = fs::read_to_string(dir.join("loop/backing_file")).ok()?;
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let (path, deleted) = match text.strip_suffix(" (deleted)") {
            Some(p) => (p.to_string(), true),
            None => (text.to_string(), false),
        };
        let mut node = None;
        let mut rdev = None;
        let ours;
        let file = match open {
            Some(f) => Some(f),
            None if may_open => {
                ours = self.open_node(name, &dir);
                ours.as_ref()
            }
            None => None,
        };
        if let Some(k) = file.and_then(|f| crate::sys::fs::loop_backing(std::os::fd::AsRawFd::as_raw_fd(f)).ok()) {
            node = Some(FileNode::new(k.dev, k.ino));
            rdev = (k.rdev != 0).then(|| format_dev(k.rdev));
        } else if !deleted {
            // The path is the kernel's, of a file that was there when it was set up: what it
            // names now is taken only when nothing better can be asked.
            if let Ok(m) = fs::metadata(&path) {
                node = Some(FileNode::new(m.dev(), m.ino()));
                rdev = m.file_type().is_block_device().then(|| format_dev(m.rdev()));
            }
        }
        Some(Backing { path, node, rdev })
    }

    /// The node of block device `name` opened for reading, checked to be that device.
    fn open_node(&self, name: &str, dir: &Path) -> Option<File> {
        let want = fs::read_to_string(dir.join("dev")).ok()?;
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(O_NONBLOCK | O_CLOEXEC | crate::sys::fs::O_NOFOLLOW)
            .open(self.dev.join(name))
            .ok()?;
        let m = f.metadata().ok()?;
        (m.file_type().is_block_device() && format_dev(m.rdev()) == want.trim()).then_some(f)
    }

    /// Where the block device `dev` (major:minor) is mounted, if it is.
    fn mount_of(&self, dev: &str) -> Option<String> {
        self.mountinfo.lines().find_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.get(2) == Some(&dev)).then(|| f.get(4).copied().unwrap_or("?").to_string())
        })
    }

    /// Whether the block device `dev` (major:minor) is used as swap.
    fn swap_on(&self, dev: &str) -> bool {
        self.swap_paths()
            .any(|p| fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device() && format_dev(m.rdev()) == dev))
    }

    fn swap_paths(&self) -> impl Iterator<Item = &str> {
        self.swaps.lines().skip(1).filter_map(|l| l.split_whitespace().next())
    }

    /// The loop device over the block device `dev` (major:minor), if any but those in `not`.
    fn loop_over(&self, dev: &str, not: &[String]) -> Option<String> {
        self.loops().into_iter().filter(|n| !not.contains(n)).find(|n| {
            let text = fs::read_to_string(self.block(n).join("loop/backing_file")).unwrap_or_default();
            let path = text.trim_end_matches('\n').trim_end_matches(" (deleted)");
            fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device() && format_dev(m.rdev()) == dev)
        })
    }
}

/// A file's device (major, minor) and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileNode(u64, u64, u64);

impl FileNode {
    fn new(dev: u64, ino: u64) -> FileNode {
        let (major, minor) = split_dev(dev);
        FileNode(major, minor, ino)
    }
}

/// What a loop device reads and writes.
#[derive(Debug)]
struct Backing {
    /// As sysfs names it, " (deleted)" left out.
    path: String,
    /// The file, when it could be told.
    node: Option<FileNode>,
    /// Its major:minor when it is a block device.
    rdev: Option<String>,
}

impl Backing {
    /// Whether `path` with `node` may be the same file. The same path counts (a deleted file's
    /// name, or one seen from another mount namespace, may be all there is to compare), so
    /// the doubt falls on the side of refusing.
    fn same(&self, path: &str, node: Option<FileNode>) -> bool {
        self.path == path || (self.node.is_some() && self.node == node)
    }
}

/// Why a device may not be written.
#[derive(Debug, PartialEq)]
enum Refusal {
    /// Something on it, or beneath it, is in use.
    InUse(String),
    /// It writes the result store's files.
    Store(String),
}

/// How deep a chain of devices, one on another, is followed: deeper is refused, as no real
/// stack (a loop on LVM on md on partitions) comes near it.
const MAX_DEPTH: usize = 16;

/// Why the device cannot be written, if it is in use, or what it stands on is.
fn refusal(facts: &DeviceFacts, uses: &Uses, asked: Option<&File>, store: &Path) -> Option<Refusal> {
    if let Some(why) = in_use(facts, uses) {
        return Some(Refusal::InUse(why));
    }
    let top = facts.partition_of.clone().unwrap_or_else(|| facts.name.clone());
    let chain = match Chain::walk(uses, &top, asked) {
        Ok(chain) => chain,
        Err(why) => return Some(Refusal::InUse(why)),
    };
    // Down the chain nothing counts as using what it stands on: only what is off it does.
    for (name, disk) in &chain.below {
        if let Some((who, what)) = used(uses, &family(uses, disk, None), &chain.disks) {
            return Some(Refusal::InUse(match who {
                Some(who) if &who != name => format!("it stands on {name}, and {who}, of the same disk, is {what}"),
                _ => format!("it stands on {name}, which is {what}"),
            }));
        }
    }
    for (over, file) in &chain.files {
        if let Some(why) = on_store(file, store) {
            return Some(Refusal::Store(format!(
                "its backing file {} (of {over}) is {why}",
                crate::escape::visible(&file.path)
            )));
        }
        if let Some(why) = file_in_use(uses, file, &chain.disks) {
            return Some(Refusal::InUse(format!(
                "its backing file {} (of {over}) is {why}",
                crate::escape::visible(&file.path)
            )));
        }
    }
    None
}

/// What a device stands on: each block device and file below it, through loop devices'
/// backing files and md/dm members (`slaves`), as far down as they go.
#[derive(Debug, Default)]
struct Chain {
    /// The disks on it, the device's own first.
    disks: Vec<String>,
    /// Each block device below, by its name and its disk's.
    below: Vec<(String, String)>,
    /// Each file below, with the loop device over it.
    files: Vec<(String, Backing)>,
}

impl Chain {
    fn walk(uses: &Uses, top: &str, asked: Option<&File>) -> Result<Chain, String> {
        let mut chain = Chain { disks: vec![top.to_string()], ..Chain::default() };
        let mut next = vec![(top.to_string(), 0)];
        while let Some((disk, depth)) = next.pop() {
            let mut lower = uses.names(&uses.block(&disk).join("slaves"));
            // Only the device itself is opened by the caller; one below is held open by the
            // one above it, so opening it to ask cannot be its last close.
            let own = asked.filter(|_| disk == top);
            if let Some(b) = uses.backing(&disk, own, true) {
                match &b.rdev {
                    Some(dev) => match uses.name_of(dev) {
                        Some(name) => lower.push(name),
                        None => return Err(format!("it stands on device {dev}, which sysfs does not show")),
                    },
                    None => chain.files.push((disk.clone(), b)),
                }
            }
            for name in lower {
                let below = uses.disk_of(&name);
                // Met before: a member shared by two paths down is looked at once.
                if chain.disks.contains(&below) {
                    continue;
                }
                if depth + 1 > MAX_DEPTH {
                    return Err(format!(
                        "it stands on more than {MAX_DEPTH} devices one on another, deeper than iosurvey follows"
                    ));
                }
                chain.disks.push(below.clone());
                chain.below.push((name, below.clone()));
                next.push((below, depth + 1));
            }
        }
        Ok(chain)
    }
}

/// Which of the result store's files `file` is, if it is one: a loop device over it writes
/// over the results.
fn on_store(file: &Backing, store: &Path) -> Option<&'static str> {
    let store = std::path::absolute(store).unwrap_or_else(|_| store.to_path_buf());
    let dir = store.parent().map(|p| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())).unwrap_or_default();
    let name = store.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for (suffix, what) in [
        ("", "the result store (--db)"),
        ("-journal", "the result store's journal"),
        ("-wal", "the result store's write-ahead log"),
        ("-shm", "the result store's shared memory"),
    ] {
        let path = dir.join(format!("{name}{suffix}"));
        let node = fs::metadata(&path).ok().map(|m| FileNode::new(m.dev(), m.ino()));
        if file.same(&path.to_string_lossy(), node) {
            return Some(what);
        }
    }
    // A record spilled when the store could not take it: beside the store, or in the
    // temporary directory (`Store::save_or_spill`).
    let at = Path::new(&file.path);
    let spilled = at.file_name().map(|n| n.to_string_lossy()).is_some_and(|n| {
        n.strip_prefix(&name).and_then(|r| r.strip_prefix(".run-")).is_some_and(|r| r.ends_with(".json"))
    });
    let temp = fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
    (spilled && at.parent().is_some_and(|p| p == dir || p == temp)).then_some("a run record spilled beside the store")
}

/// Why the file a loop device of the chain reads cannot be written, if it is in use: used as
/// swap, or the backing file of a loop device off the chain that is in use.
fn file_in_use(uses: &Uses, file: &Backing, chain: &[String]) -> Option<String> {
    let swap = uses.swap_paths().any(|p| {
        let node = fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| FileNode::new(m.dev(), m.ino()));
        node.is_some() && file.same(p, node)
    });
    if swap {
        return Some("used as swap".into());
    }
    for other in uses.loops().into_iter().filter(|n| !chain.contains(n)) {
        let Some((who, what)) = used(uses, &family(uses, &other, None), chain) else { continue };
        // In use, so held open by what uses it: it may be opened to ask what it reads.
        let Some(theirs) = uses.backing(&other, None, true) else { continue };
        let who = || match &who {
            Some(who) if who != &other => format!("{other}, and {who}, of the same disk, is {what}"),
            _ => format!("{other}, which is {what}"),
        };
        if file.same(&theirs.path, theirs.node) {
            return Some(format!("also the backing file of {}", who()));
        }
        // A file known by its name alone (deleted, or not to be asked) might be any.
        if theirs.rdev.is_none() && (file.node.is_none() || theirs.node.is_none()) {
            return Some(format!("perhaps also the backing file of {}: the two cannot be compared", who()));
        }
    }
    None
}

/// Why the device cannot be written, if it is in use: the device, its disk or another
/// partition of that disk mounted, used as swap, or held by another block device.
fn in_use(facts: &DeviceFacts, uses: &Uses) -> Option<String> {
    let disk = facts.partition_of.clone().unwrap_or_else(|| facts.name.clone());
    let members = family(uses, &disk, Some((&facts.name, &facts.dev)));
    let (who, what) = used(uses, &members, &[])?;
    Some(match who {
        Some(who) if who != facts.name => format!("{who}, of the same disk, is {what}"),
        _ => format!("it is {what}"),
    })
}

/// How a family of block devices is in use, if it is: which member, and what it is. Holders
/// and loop devices named in `chain` do not count: they are the way down to it.
fn used(uses: &Uses, members: &[Member], chain: &[String]) -> Option<(Option<String>, String)> {
    for m in members {
        let who = Some(m.name.clone());
        if let Some(point) = uses.mount_of(&m.dev) {
            return Some((who, format!("mounted at {}", crate::escape::visible(&point))));
        }
        if uses.swap_on(&m.dev) {
            return Some((who, "used as swap".into()));
        }
        if let Some(holder) = m.holders.iter().find(|h| !chain.contains(h)) {
            return Some((who, format!("held by {holder} (md, dm or LVM)")));
        }
        // A loop device over it holds it without showing as a holder or opening it
        // exclusively, and its file system may lie past the start the signature check reads.
        if let Some(over) = uses.loop_over(&m.dev, chain) {
            return Some((who, format!("the backing device of {over}")));
        }
    }
    None
}

fn format_dev(rdev: u64) -> String {
    let (major, minor) = split_dev(rdev);
    format!("{major}:{minor}")
}

/// A block device of a family, with its major:minor and holders.
#[derive(Debug)]
struct Member {
    name: String,
    dev: String,
    holders: Vec<String>,
}

/// The disk `disk` and every partition of it. `alone` is a device (name, major:minor) taken
/// by its number when sysfs does not show it.
fn family(uses: &Uses, disk: &str, alone: Option<(&str, &str)>) -> Vec<Member> {
    let base = uses.block(disk);
    let mut out = Vec::new();
    let mut add = |dir: &Path, name: String| {
        let dev = fs::read_to_string(dir.join("dev")).map(|s| s.trim().to_string()).unwrap_or_default();
        out.push(Member { name, dev, holders: uses.names(&dir.join("holders")) });
    };
    add(&base, disk.to_string());
    if let Ok(entries) = fs::read_dir(&base) {
        for e in entries.filter_map(|e| e.ok()) {
            if e.path().join("partition").exists() {
                add(&e.path(), e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    if let Some((name, dev)) = alone {
        if out.iter().all(|m| m.dev != dev) {
            // No sysfs: the device alone, by its number.
            out.push(Member { name: name.into(), dev: dev.into(), holders: Vec::new() });
        }
    }
    out
}

/// The device's facts from /sys/dev/block/MAJOR:MINOR.
fn sysfs_facts(rdev: u64) -> DeviceFacts {
    let dev = format_dev(rdev);
    let link = PathBuf::from("/sys/dev/block").join(&dev);
    let real = fs::canonicalize(&link).unwrap_or(link);
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partition = real.join("partition").exists();
    // A partition's queue and device are its disk's.
    let disk = if partition { real.parent().map(Path::to_path_buf).unwrap_or(real.clone()) } else { real.clone() };
    let read = |p: PathBuf| fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
    let number = |p: PathBuf| read(p).parse::<u64>().unwrap_or(0);
    let scheduler = read(disk.join("queue/scheduler"));
    let scheduler = match (scheduler.find('['), scheduler.find(']')) {
        (Some(a), Some(b)) if a < b => scheduler[a + 1..b].to_string(),
        _ => scheduler,
    };
    DeviceFacts {
        path: String::new(),
        name,
        dev,
        model: read(disk.join("device/model")),
        size_bytes: number(real.join("size")) * 512,
        logical_block: number(disk.join("queue/logical_block_size")),
        physical_block: number(disk.join("queue/physical_block_size")),
        rotational: read(disk.join("queue/rotational")) == "1",
        scheduler,
        sysfs_path: real.display().to_string(),
        partition_of: partition.then(|| disk.file_name().map(|n| n.to_string_lossy().into_owned())).flatten(),
    }
}

/// A device taken by the lead for a session: its checks made, and from the first write on
/// held open exclusively.
#[derive(Debug)]
pub struct DeviceTarget {
    device: std::sync::Arc<Device>,
    /// The device the user allowed to be written (`--destroy-data`), checked to be this one.
    destroy: bool,
    ignore_signature: bool,
    exclusive: Option<File>,
    /// The result store's file, which the device must not stand on.
    store: PathBuf,
}

/// What the user said about writing a device.
#[derive(Debug, Clone, Default)]
pub struct Consent {
    /// The devices `--destroy-data` named.
    pub destroy: Vec<PathBuf>,
    /// Write over a file system or partition-table signature.
    pub ignore_signature: bool,
}

impl DeviceTarget {
    /// Takes the devices at `paths`: block devices, each that `consent` names among them,
    /// for a session whose results go to `store`.
    pub fn open_all(paths: &[PathBuf], consent: &Consent, store: &Path) -> Result<Vec<DeviceTarget>, TargetError> {
        let devices = paths.iter().map(|p| Device::open(p)).collect::<Result<Vec<_>, _>>()?;
        for (i, d) in devices.iter().enumerate() {
            if let Some(twice) = devices[..i].iter().find(|e| e.rdev == d.rdev) {
                return Err(TargetError::DeviceTwice(twice.path.clone(), d.path.clone()));
            }
        }
        if let Some(named) = consent.destroy.iter().find(|n| !devices.iter().any(|d| d.same_as(n))) {
            let path = paths.first().cloned().unwrap_or_default();
            return Err(TargetError::DestroyOther { path, named: named.clone() });
        }
        Ok(devices
            .into_iter()
            .map(|device| DeviceTarget {
                destroy: consent.destroy.iter().any(|n| device.same_as(n)),
                device: std::sync::Arc::new(device),
                ignore_signature: consent.ignore_signature,
                exclusive: None,
                store: store.to_path_buf(),
            })
            .collect())
    }

    /// The device.
    pub fn device(&self) -> &std::sync::Arc<Device> {
        &self.device
    }

    /// Before a run that writes: the consent, then every check again; the device is held
    /// exclusively from the first such run on.
    pub fn check_write(&mut self) -> Result<(), TargetError> {
        if !self.destroy {
            return Err(TargetError::NoConsent(self.device.path.clone()));
        }
        if let Some(f) = self.device.check_writable(self.ignore_signature, self.exclusive.as_ref(), &self.store)? {
            self.exclusive = Some(f);
        }
        Ok(())
    }

    /// Before any run: the transfer aligned for O_DIRECT, the run's regions within the device.
    pub fn check_run(&self, direct: bool, transfer: u64, bytes: u64) -> Result<(), TargetError> {
        let align = self.device.alignment();
        if direct && transfer % align != 0 {
            return Err(TargetError::DirectMisaligned { dir: self.device.path.clone(), align, transfer });
        }
        let size = self.device.facts.size_bytes;
        if bytes > size {
            return Err(TargetError::DeviceTooSmall {
                path: self.device.path.clone(),
                need: crate::units::format_size(bytes),
                size: crate::units::format_size(size),
            });
        }
        Ok(())
    }

    /// Opens the device for reading, unbuffered, to probe that it can be read.
    pub fn probe_read(&self) -> Result<(), TargetError> {
        self.device.open_data(O_RDONLY | O_DIRECT).map(drop).map_err(|e| TargetError::io("open", &self.device.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_split_as_glibc_does() {
        assert_eq!(split_dev(0x0703), (7, 3));
        // A large minor (loop devices past 255) and a large major.
        assert_eq!(split_dev((259 << 8) | (300 & 0xff) | ((300 & !0xff) << 12)), (259, 300));
    }

    #[test]
    fn signatures_are_named_and_random_data_is_not_taken_for_one() {
        let mut head = vec![0u8; SIGNATURE_BYTES];
        assert_eq!(signature(&head), None);
        head[0..4].copy_from_slice(b"XFSB");
        assert_eq!(signature(&head).as_deref(), Some("an xfs file system"));
        head[0..4].fill(0);
        head[0..16].copy_from_slice(b"SQLite format 3\0");
        assert_eq!(signature(&head).as_deref(), Some("an SQLite database"));
        head[0..16].fill(0);
        // ext4: magic, log block size 2 (4 KiB), inodes, the extents feature.
        head[1024 + 0x38..1024 + 0x3a].copy_from_slice(&0xEF53u16.to_le_bytes());
        head[1024 + 0x18] = 2;
        head[1024] = 9;
        head[1024 + 0x60] = 0x40;
        assert_eq!(signature(&head).as_deref(), Some("an ext4 file system"));
        // The magic alone, with a block size no ext file system has, is random data.
        head[1024 + 0x18] = 200;
        assert_eq!(signature(&head), None);
        let mut mbr = vec![0u8; SIGNATURE_BYTES];
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        assert_eq!(signature(&mbr), None, "a boot signature without a partition is not a table");
        mbr[446 + 4] = 0x83;
        assert_eq!(signature(&mbr).as_deref(), Some("an MBR partition table"));
        mbr[446] = 0x17;
        assert_eq!(signature(&mbr), None, "a boot flag other than 0 or 0x80 is random data");
        // Pseudo-random bytes, as a write run leaves: no signature, over many seeds.
        for seed in 1..2000u64 {
            let mut x = seed;
            let data: Vec<u8> = (0..SIGNATURE_BYTES)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            assert_eq!(signature(&data), None, "seed {seed}");
        }
    }

    #[test]
    fn the_adapter_is_the_path_up_to_the_host() {
        let f = DeviceFacts {
            sysfs_path: "/sys/devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdb".into(),
            ..DeviceFacts::default()
        };
        assert_eq!(f.adapter().as_deref(), Some("/sys/devices/pci0000:00/0000:00:1f.2/ata3/host2"));
        let loop_dev = DeviceFacts { sysfs_path: "/sys/devices/virtual/block/loop3".into(), ..DeviceFacts::default() };
        assert_eq!(loop_dev.adapter(), None);
    }

    /// A sysfs of block devices under a directory of the test: each device's `dev`, its
    /// `holders` and `slaves` (empty files where sysfs has links: only names are read), and
    /// `dev/block/MAJOR:MINOR` linked to it.
    struct FakeSys {
        root: tempfile::TempDir,
        mountinfo: String,
    }

    impl FakeSys {
        fn new() -> FakeSys {
            let root = tempfile::tempdir().unwrap();
            for d in ["sys/class/block", "sys/block", "sys/dev/block", "dev"] {
                fs::create_dir_all(root.path().join(d)).unwrap();
            }
            FakeSys { root, mountinfo: String::new() }
        }

        /// A disk, or with `of` a partition of that disk.
        fn device(&self, name: &str, dev: &str, of: Option<&str>) -> &FakeSys {
            let class = self.root.path().join("sys/class/block");
            let dir = match of {
                Some(disk) => class.join(disk).join(name),
                None => class.join(name),
            };
            fs::create_dir_all(dir.join("holders")).unwrap();
            fs::create_dir_all(dir.join("slaves")).unwrap();
            fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
            if of.is_some() {
                fs::write(dir.join("partition"), "1\n").unwrap();
                std::os::unix::fs::symlink(&dir, class.join(name)).unwrap();
            }
            std::os::unix::fs::symlink(&dir, self.root.path().join("sys/dev/block").join(dev)).unwrap();
            self
        }

        /// `upper` (md, dm) made of `lower`.
        fn stack(&self, upper: &str, lower: &str) -> &FakeSys {
            let class = self.root.path().join("sys/class/block");
            fs::write(class.join(upper).join("slaves").join(lower), "").unwrap();
            fs::write(class.join(lower).join("holders").join(upper), "").unwrap();
            self
        }

        fn mount(&mut self, dev: &str, at: &str) {
            self.mountinfo.push_str(&format!("30 1 {dev} / {at} rw - ext4 x rw\n"));
        }

        fn why(&self, name: &str, dev: &str) -> Option<Refusal> {
            let uses = Uses {
                sys: self.root.path().join("sys"),
                dev: self.root.path().join("dev"),
                mountinfo: self.mountinfo.clone(),
                swaps: String::new(),
            };
            let facts = DeviceFacts { name: name.into(), dev: dev.into(), ..DeviceFacts::default() };
            refusal(&facts, &uses, None, &self.root.path().join("s.db"))
        }
    }

    #[test]
    fn a_dm_or_md_device_is_judged_by_every_member_beneath_it() {
        let mut sys = FakeSys::new();
        sys.device("sdb", "8:16", None)
            .device("sdc", "8:32", None)
            .device("sdc1", "8:33", Some("sdc"))
            .device("sdc2", "8:34", Some("sdc"))
            .device("md0", "9:0", None)
            .device("dm-0", "253:0", None)
            .stack("md0", "sdb")
            .stack("md0", "sdc1")
            .stack("dm-0", "md0");
        // dm-0 on md0 on sdb and sdc1, nothing in use: its own members hold it, no one else.
        assert_eq!(sys.why("dm-0", "253:0"), None);
        // A partition of a member's disk mounted, two levels down.
        sys.mount("8:34", "/srv");
        let why = |r| match r {
            Some(Refusal::InUse(w)) => w,
            other => panic!("{other:?}"),
        };
        assert_eq!(why(sys.why("dm-0", "253:0")), "it stands on sdc1, and sdc2, of the same disk, is mounted at /srv");
        sys.mountinfo.clear();
        // A second holder of a member: another volume on the same disk.
        sys.device("dm-1", "253:1", None).stack("dm-1", "sdb");
        assert_eq!(why(sys.why("dm-0", "253:0")), "it stands on sdb, which is held by dm-1 (md, dm or LVM)");
    }

    #[test]
    fn a_chain_deeper_than_the_cap_is_refused_and_a_cycle_ends() {
        // dm-0 on dm-1 on ... on dm-{below}.
        let chain = |below: usize| {
            let sys = FakeSys::new();
            for i in 0..=below {
                sys.device(&format!("dm-{i}"), &format!("253:{i}"), None);
            }
            for i in 0..below {
                sys.stack(&format!("dm-{i}"), &format!("dm-{}", i + 1));
            }
            sys.why("dm-0", "253:0")
        };
        assert_eq!(chain(MAX_DEPTH), None);
        match chain(MAX_DEPTH + 1) {
            Some(Refusal::InUse(w)) => assert!(w.contains("more than 16 devices"), "{w}"),
            other => panic!("{other:?}"),
        }
        // A member that is its own member's member (no kernel makes one) is looked at once.
        let cycle = FakeSys::new();
        cycle.device("dm-0", "253:0", None).device("dm-1", "253:1", None).stack("dm-0", "dm-1");
        let class = cycle.root.path().join("sys/class/block");
        fs::write(class.join("dm-1/slaves/dm-0"), "").unwrap();
        assert_eq!(cycle.why("dm-0", "253:0"), None);
    }

    #[test]
    fn the_stores_files_and_spilled_records_are_told_by_name_and_by_inode() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        let store = dir.join("s.db");
        fs::write(&store, b"SQLite format 3\0").unwrap();
        fs::hard_link(&store, dir.join("other-name")).unwrap();
        let m = fs::metadata(&store).unwrap();
        let by_node =
            |path: &str| Backing { path: path.into(), node: Some(FileNode::new(m.dev(), m.ino())), rdev: None };
        let by_path = |path: &Path| Backing { path: path.display().to_string(), node: None, rdev: None };
        assert_eq!(
            on_store(&by_node(&dir.join("other-name").display().to_string()), &store),
            Some("the result store (--db)")
        );
        assert_eq!(on_store(&by_node("/elsewhere (deleted)"), &store), Some("the result store (--db)"));
        assert_eq!(on_store(&by_path(&dir.join("s.db-journal")), &store), Some("the result store's journal"));
        assert_eq!(on_store(&by_path(&dir.join("s.db-wal")), &store), Some("the result store's write-ahead log"));
        let spilled = dir.join("s.db.run-1795769910-24078.json");
        assert_eq!(on_store(&by_path(&spilled), &store), Some("a run record spilled beside the store"));
        assert_eq!(on_store(&by_path(&dir.join("t.db.run-1-2.json")), &store), None);
        assert_eq!(on_store(&by_path(&dir.join("disk.img")), &store), None);
        // A relative --db names the same file.
        let here = fs::canonicalize(std::env::current_dir().unwrap()).unwrap();
        let up = "../".repeat(here.components().count() - 1);
        let relative = PathBuf::from(format!("{up}{}", store.strip_prefix("/").unwrap().display()));
        assert_eq!(on_store(&by_path(&store), &relative), Some("the result store (--db)"));
    }
}
