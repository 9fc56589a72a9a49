//! Facts about the host and the target: what a reader needs to repeat or doubt a result.

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

/// Where a run ran.
// serde's own code for it is made as `Environment::serialize`/`deserialize` (remote "Self"),
// and the traits below settle `target` from `targets` around it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Environment {
    /// Host name.
    pub host: String,
    /// Kernel release (uname -r).
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpu_count: usize,
    /// Physical memory in bytes.
    pub ram_bytes: u64,
    /// Target directory, absolute; for a run on several, their listing, made from `targets`
    /// alone ([`Environment::on_several`], and again whenever a record is written or read).
    pub target: String,
    /// File system type of the mount holding the target (ext4, xfs, tmpfs, fuse.glusterfs...).
    pub fs_type: String,
    /// Mount source (device or server:volume).
    pub mount_source: String,
    /// Mount point.
    pub mount_point: String,
    /// Mount options, per mount and per super block.
    pub mount_options: String,
    /// Block device under the mount, when there is one (e.g. "vda", "loop3").
    pub block_device: Option<String>,
    /// iosurvey version.
    pub tool_version: String,
    /// The block devices under test, when the target is one or several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceFacts>,
    /// The directories of a run on several at once (a target survey's k at once), each also
    /// a target of its own runs; empty for a run on one (`target` names it), and in records
    /// stored before it was kept. `target` lists them joined with '@'.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
}

impl Environment {
    /// A run on the directories `paths` at once: the list, and the target that lists them.
    pub fn on_several(&mut self, paths: Vec<String>) {
        self.targets = paths;
        self.settle();
    }

    /// `target` as `targets` lists it, where there is a list.
    fn settle(&mut self) {
        if let Some(listed) = self.listing() {
            self.target = listed;
        }
    }

    /// The one listing of several directories.
    fn listing(&self) -> Option<String> {
        (!self.targets.is_empty()).then(|| self.targets.join("@"))
    }
}

impl Serialize for Environment {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.listing() {
            Some(listed) if listed != self.target => {
                Environment::serialize(&Environment { target: listed, ..self.clone() }, s)
            }
            _ => Environment::serialize(self, s),
        }
    }
}

impl<'de> Deserialize<'de> for Environment {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut e = Environment::deserialize(d)?;
        e.settle();
        Ok(e)
    }
}

/// What a record keeps of a device: enough to group devices by controller, port or card.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// The path given (`/dev/loop3`, `/dev/disk/by-id/...`).
    pub path: String,
    /// The kernel's name (`loop3`, `sdb`, `nvme0n1p2`).
    pub name: String,
    /// major:minor.
    pub dev: String,
    /// The model, as the device reports it (empty when it reports none, as loop devices).
    pub model: String,
    /// Bytes.
    pub size_bytes: u64,
    /// The smallest unit it addresses, bytes (the O_DIRECT alignment).
    pub logical_block: u64,
    /// The unit it writes internally, bytes.
    pub physical_block: u64,
    /// Whether it says it spins.
    pub rotational: bool,
    /// The I/O scheduler in use ("none", "mq-deadline").
    pub scheduler: String,
    /// The device's place in the kernel's device tree, from the root to it through its host
    /// adapter, port and target (`/sys/devices/pci0000:00/.../host2/target2:0:0/2:0:0:0/block/sdb`).
    pub sysfs_path: String,
    /// The disk it is a partition of, when it is one.
    pub partition_of: Option<String>,
}

impl DeviceFacts {
    /// The device's adapter path: its sysfs path up to the last component that names a host,
    /// port or controller, so devices behind one adapter share it. Virtual devices (loop) have
    /// none and group alone.
    pub fn adapter(&self) -> Option<String> {
        let parts: Vec<&str> = self.sysfs_path.split('/').collect();
        let at = parts.iter().rposition(|p| {
            let numbered = |prefix: &str| {
                p.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            };
            numbered("host")
                || numbered("nvme")
                || numbered("ata")
                || p.starts_with("port-")
                || p.starts_with("end_device-")
        })?;
        Some(parts[..=at].join("/"))
    }
}

/// File systems whose data lives in memory: every read is a memory read.
pub fn is_memory_fs(fs_type: &str) -> bool {
    matches!(fs_type, "tmpfs" | "ramfs" | "devtmpfs")
}

/// File systems a client reaches over the network: only their figures can be set beside a
/// network ceiling (a local disk's or memory's rate is bounded by no link).
pub fn is_network_fs(fs_type: &str) -> bool {
    matches!(
        fs_type,
        "nfs"
            | "nfs4"
            | "cifs"
            | "smb3"
            | "smbfs"
            | "lustre"
            | "gpfs"
            | "beegfs"
            | "ceph"
            | "fuse.ceph-fuse"
            | "glusterfs"
            | "fuse.glusterfs"
            | "fuse.sshfs"
            | "9p"
            | "orangefs"
            | "pvfs2"
            | "afs"
            | "weka"
            | "wekafs"
            | "panfs"
    )
}

/// Reads the facts for a target directory; unknown facts are left empty, never guessed.
pub fn collect(target: &Path) -> Environment {
    let target = fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    let mut env = host(target.display().to_string());
    if let Some(m) =
        fs::read_to_string("/proc/self/mountinfo").ok().and_then(|t| mount_of(&t, &target.to_string_lossy()))
    {
        env.block_device = block_device(&m.dev);
        env.fs_type = m.fs_type;
        env.mount_source = m.source;
        env.mount_point = m.point;
        env.mount_options = m.options;
    }
    env
}

/// The facts of a run on block devices: the host's, and each device's; the target is their
/// paths, the file system "block device".
pub fn for_devices(devices: &[DeviceFacts]) -> Environment {
    let mut env = host(devices.iter().map(|d| d.path.as_str()).collect::<Vec<_>>().join(","));
    env.fs_type = BLOCK_DEVICE.into();
    env.block_device = Some(devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(","));
    env.devices = devices.to_vec();
    env
}

/// The facts of a run on an S3 bucket: the host's, the bucket's URL as the target, the
/// endpoint as the mount's source, the file system "s3".
pub fn for_bucket(target: String, endpoint: String) -> Environment {
    let mut env = host(target);
    env.fs_type = "s3".into();
    env.mount_source = endpoint;
    env
}

/// The host's facts, and `target` as the target; no mount yet.
fn host(target: String) -> Environment {
    Environment {
        host: hostname(),
        kernel: crate::sys::proc::uname().map(|u| u.release).unwrap_or_default(),
        cpu_model: cpu_model(),
        cpu_count: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        ram_bytes: ram_bytes(),
        target,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        ..Environment::default()
    }
}

/// The file system type a run on block devices records.
pub const BLOCK_DEVICE: &str = "block device";

/// This machine's host name (uname's node name).
pub fn hostname() -> String {
    crate::sys::proc::uname().map(|u| u.nodename).unwrap_or_default()
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// Why `path` could not take a file iosurvey writes (a store, a JSON record), if it could
/// not: it must be a writable regular file, or a new name in a writable directory.
pub fn writable_file(path: &Path) -> Result<(), &'static str> {
    let (probe, why) = match fs::metadata(path) {
        Ok(m) if !m.is_file() => return Err("not a regular file"),
        Ok(_) => (path, "it is not writable"),
        Err(_) => {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if !parent.is_dir() {
                return Err("its directory does not exist");
            }
            (parent, "its directory is not writable")
        }
    };
    let c = std::ffi::CString::new(probe.as_os_str().as_encoded_bytes()).map_err(|_| "not a path")?;
    if !crate::sys::fs::writable(&c) {
        return Err(why);
    }
    Ok(())
}

/// A field of /proc/meminfo, in bytes.
fn meminfo(field: &str) -> Option<u64> {
    let t = fs::read_to_string("/proc/meminfo").ok()?;
    let line = t.lines().find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// Physical memory from /proc/meminfo, in bytes.
pub fn ram_bytes() -> u64 {
    meminfo("MemTotal").unwrap_or(0)
}

/// The memory this process may count on: the smaller of MemAvailable and the limit of its
/// memory cgroup (a batch job's allocation), in bytes.
pub fn memory_available() -> u64 {
    let limit = own_cgroup_memory_limit();
    meminfo("MemAvailable").unwrap_or(u64::MAX).min(limit.unwrap_or(u64::MAX))
}

/// A CPU cache level of this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuCache {
    /// 1, 2, 3...
    pub level: u32,
    /// Data, Instruction or Unified.
    pub kind: String,
    /// Bytes.
    pub bytes: u64,
}

/// A size beyond which the machine behaves differently: a CPU cache, the page cache's bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// What it is, e.g. "the L2 unified cache" or "the page cache (bounded by RAM)".
    pub name: String,
    /// Bytes.
    pub bytes: u64,
}

/// The machine's limits: its CPU caches holding data, and the page cache's bound.
pub fn limits() -> Vec<Limit> {
    let mut out: Vec<Limit> = cpu_caches(|p| fs::read_to_string(p).ok())
        .into_iter()
        .map(|c| Limit { name: format!("the L{} {} cache", c.level, c.kind.to_lowercase()), bytes: c.bytes })
        .collect();
    let (bytes, what) = page_cache_bound();
    if bytes > 0 {
        out.push(Limit { name: format!("the page cache (bounded by {what})"), bytes });
    }
    out
}

/// The caches of CPU 0 that hold data (data and unified), from /sys, read through `read`.
pub fn cpu_caches(read: impl Fn(&str) -> Option<String>) -> Vec<CpuCache> {
    (0..16)
        .map_while(|i| {
            let at = |f: &str| read(&format!("/sys/devices/system/cpu/cpu0/cache/index{i}/{f}"));
            let size = at("size")?;
            let size = size.trim();
            let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit()).unwrap_or(size.len()));
            let scale = match unit {
                "K" => 1 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                _ => 1,
            };
            Some(CpuCache {
                level: at("level")?.trim().parse().ok()?,
                kind: at("type")?.trim().to_string(),
                bytes: digits.parse::<u64>().ok()? * scale,
            })
        })
        .filter(|c| c.kind != "Instruction")
        .collect()
}

/// What bounds the page cache of this process: the smaller of RAM and its memory cgroup's
/// limit, and which of the two it is.
pub fn page_cache_bound() -> (u64, &'static str) {
    match own_cgroup_memory_limit() {
        Some(limit) if limit < ram_bytes() => (limit, "the memory cgroup's limit"),
        _ => (ram_bytes(), "RAM"),
    }
}

/// The memory limit of this process's cgroup, if any.
fn own_cgroup_memory_limit() -> Option<u64> {
    let read = |p: &str| fs::read_to_string(p).unwrap_or_default();
    cgroup_memory_limit(&read("/proc/self/cgroup"), &read("/proc/self/mountinfo"), |p| fs::read_to_string(p).ok())
}

/// The memory limit of the cgroup named in `/proc/self/cgroup` text, under the v1 memory
/// controller or the v2 hierarchy wherever `mountinfo` says the machine mounts them, reading
/// control files through `read`; `None` when unlimited or unknown.
fn cgroup_memory_limit(cgroups: &str, mountinfo: &str, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
    // (mount point, fs type, super options) of each cgroup mount.
    let mounts: Vec<(&str, &str, &str)> = mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let point = left.split(' ').nth(4)?;
            let mut r = right.split(' ');
            let (kind, _, options) = (r.next()?, r.next()?, r.next().unwrap_or(""));
            kind.starts_with("cgroup").then_some((point, kind, options))
        })
        .collect();
    let v1 = mounts.iter().find(|m| m.1 == "cgroup" && m.2.split(',').any(|o| o == "memory")).map(|m| m.0);
    let v2 = mounts.iter().find(|m| m.1 == "cgroup2").map(|m| m.0);
    cgroups.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let file = if controllers.split(',').any(|c| c == "memory") {
            format!("{}{path}/memory.limit_in_bytes", v1?)
        } else if controllers.is_empty() {
            format!("{}{path}/memory.max", v2?)
        } else {
            return None;
        };
        // v1 writes "no limit" as a huge page-rounded number, v2 as "max".
        read(&file.replace("//", "/"))?.trim().parse::<u64>().ok().filter(|&l| l < 1 << 62)
    })
}

#[derive(Debug, PartialEq)]
struct Mount {
    dev: String,
    point: String,
    options: String,
    fs_type: String,
    source: String,
}

/// The mountinfo entry whose mount point is the longest prefix of `path`.
fn mount_of(mountinfo: &str, path: &str) -> Option<Mount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split_whitespace().collect();
            let r: Vec<&str> = right.split_whitespace().collect();
            let point = unescape(l.get(4)?);
            Some(Mount {
                dev: l.get(2)?.to_string(),
                options: format!("{} {}", l.get(5)?, r.get(2).unwrap_or(&"")).trim().to_string(),
                fs_type: r.first()?.to_string(),
                source: r.get(1).unwrap_or(&"").to_string(),
                point,
            })
        })
        .filter(|m| path == m.point || m.point == "/" || path.starts_with(&format!("{}/", m.point)))
        .max_by_key(|m| m.point.len())
}

/// The mount point that `fstab` names at or above `dir` (absolute, links resolved) and
/// `mountinfo` does not hold: the file system meant to be there is not mounted, so a
/// directory made at `dir` now would be on the disk beneath it.
fn unmounted_above(dir: &Path, fstab: &str, mountinfo: &str) -> Option<String> {
    let mounted: std::collections::HashSet<String> =
        mountinfo.lines().filter_map(|l| l.split_whitespace().nth(4)).map(unescape).collect();
    let dir = dir.to_string_lossy();
    fstab
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_whitespace().nth(1).map(|p| unescape(p).trim_end_matches('/').to_string()))
        .filter(|p| p.starts_with('/'))
        .filter(|p| *dir == **p || dir.starts_with(&format!("{p}/")))
        .find(|p| !mounted.contains(p))
}

/// [`unmounted_above`] on this machine: /etc/fstab against this process's mounts. None
/// when either cannot be read.
pub fn fstab_unmounted_above(dir: &Path) -> Option<String> {
    let fstab = fs::read_to_string("/etc/fstab").ok()?;
    unmounted_above(dir, &fstab, &fs::read_to_string("/proc/self/mountinfo").ok()?)
}

/// mountinfo escapes blanks as octal (\040).
fn unescape(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

fn block_device(dev: &str) -> Option<String> {
    let link = fs::read_link(format!("/sys/dev/block/{dev}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_caches_are_read_from_sys_without_instruction_caches() {
        let files: std::collections::HashMap<String, &str> = [
            ("index0/level", "1"),
            ("index0/type", "Data"),
            ("index0/size", "48K"),
            ("index1/level", "1"),
            ("index1/type", "Instruction"),
            ("index1/size", "32K"),
            ("index2/level", "2"),
            ("index2/type", "Unified"),
            ("index2/size", "2048K\n"),
            ("index3/level", "3"),
            ("index3/type", "Unified"),
            ("index3/size", "260M"),
        ]
        .into_iter()
        .map(|(k, v)| (format!("/sys/devices/system/cpu/cpu0/cache/{k}"), v))
        .collect();
        let caches = cpu_caches(|p| files.get(p).map(|v| v.to_string()));
        let got: Vec<(u32, u64)> = caches.iter().map(|c| (c.level, c.bytes)).collect();
        assert_eq!(got, [(1, 48 << 10), (2, 2 << 20), (3, 260 << 20)]);
        assert!(cpu_caches(|_| None).is_empty());
    }

    #[test]
    fn the_memory_cgroup_limit_is_found_for_v1_and_v2() {
        let files = |p: &str| match p {
            "/sys/fs/cgroup/memory/job/7/memory.limit_in_bytes" => Some("1073741824\n".to_string()),
            "/sys/fs/cgroup/user.slice/memory.max" => Some("max\n".to_string()),
            "/sys/fs/cgroup/slurm/job9/memory.max" => Some("2147483648\n".to_string()),
            "/sys/fs/cgroup/memory/memory.limit_in_bytes" => Some("9223372036854771712\n".to_string()),
            _ => None,
        };
        // Version 1 with the memory controller at /sys/fs/cgroup/memory, version 2 alone at
        // /sys/fs/cgroup, and a hybrid machine whose version 2 hierarchy is elsewhere.
        let v1 = "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                  31 25 0:27 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n";
        let v2 = "30 25 0:26 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n";
        let hybrid = "30 25 0:26 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(cgroup_memory_limit("8:pids:/\n4:memory:/job/7\n0::/\n", v1, files), Some(1 << 30));
        assert_eq!(cgroup_memory_limit("0::/slurm/job9\n", v2, files), Some(2 << 30));
        assert_eq!(cgroup_memory_limit("0::/user.slice\n", v2, files), None);
        assert_eq!(cgroup_memory_limit("4:memory:/\n", v1, files), None, "v1's no-limit value");
        assert_eq!(cgroup_memory_limit("4:memory:/job/7\n", v2, files), None, "no v1 controller mounted");
        let unified = |p: &str| (p == "/sys/fs/cgroup/unified/slurm/job9/memory.max").then(|| "4096\n".to_string());
        assert_eq!(cgroup_memory_limit("0::/slurm/job9\n", hybrid, unified), Some(4096));
        assert!(memory_available() > 0);
    }

    const INFO: &str = "\
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 22 0:25 / /dev/shm rw,nosuid - tmpfs tmpfs rw,size=1024k
31 22 7:3 / /mnt/my\\040disk rw - xfs /dev/loop3 rw,attr2
";

    #[test]
    fn a_mount_point_fstab_names_and_nothing_mounts_is_found_above_a_path() {
        let fstab = "# /mnt/old\n/dev/sdb1 /mnt/my\\040disk xfs defaults 0 0\nfs:/x /lustre/ lustre noauto 0 0\n/swap none swap sw 0 0\n";
        let gone = |p: &str| unmounted_above(Path::new(p), fstab, INFO);
        assert_eq!(gone("/mnt/my disk/iosurvey"), None, "mounted");
        assert_eq!(gone("/lustre/iosurvey").as_deref(), Some("/lustre"));
        assert_eq!(gone("/lustre"), Some("/lustre".into()));
        assert_eq!(gone("/lustrefs/iosurvey"), None, "another directory");
        assert_eq!(gone("/mnt/old/iosurvey"), None, "a comment names nothing");
        assert_eq!(gone("/tmp/x"), None);
    }

    #[test]
    fn a_run_on_several_directories_lists_them_from_its_list_alone() {
        let mut e = Environment { target: "/a".into(), ..Environment::default() };
        e.on_several(vec!["/a".into(), "/b".into()]);
        assert_eq!((e.target.as_str(), &e.targets[..]), ("/a@/b", &["/a".to_string(), "/b".to_string()][..]));
        // Stored and read back, the listing is the list's, whatever the record says beside it.
        let record = |target: &str, targets: &[&str]| {
            let mut said = serde_json::to_value(Environment::default()).unwrap();
            said["target"] = target.into();
            if !targets.is_empty() {
                said["targets"] = targets.into();
            }
            serde_json::from_value::<Environment>(said).unwrap()
        };
        let back = record("/x", &["/a", "/b"]);
        assert_eq!(back.target, "/a@/b");
        let mut stale = e.clone();
        stale.target = "/a".into();
        let written = serde_json::to_value(&stale).unwrap();
        assert_eq!(written["target"], "/a@/b");
        // A record of a run on one, or one stored before the list, keeps its target.
        let old = record("/t/x@/t/y", &[]);
        assert_eq!((old.target.as_str(), old.targets.len()), ("/t/x@/t/y", 0));
        let one = Environment { target: "/t/x".into(), ..Environment::default() };
        assert_eq!(serde_json::to_value(&one).unwrap()["target"], "/t/x");
    }

    #[test]
    fn finds_the_deepest_mount_holding_a_path() {
        let m = mount_of(INFO, "/dev/shm/x/y").unwrap();
        assert_eq!((m.fs_type.as_str(), m.point.as_str()), ("tmpfs", "/dev/shm"));
        assert_eq!(m.options, "rw,nosuid rw,size=1024k");
        assert_eq!(mount_of(INFO, "/home/u").unwrap().fs_type, "ext4");
        assert_eq!(mount_of(INFO, "/dev/shmx").unwrap().fs_type, "ext4");
        let d = mount_of(INFO, "/mnt/my disk/a").unwrap();
        assert_eq!((d.source.as_str(), d.dev.as_str()), ("/dev/loop3", "7:3"));
    }

    #[test]
    fn collects_this_host() {
        let env = collect(Path::new("/"));
        assert!(!env.kernel.is_empty() && env.cpu_count >= 1 && env.ram_bytes > 0);
        assert!(!env.fs_type.is_empty());
        assert!(is_memory_fs("tmpfs") && !is_memory_fs("ext4"));
    }
}
