//! The shape of a metadata workload (the mdtest class): how many items each task makes, in
//! which tree of directories, of which size, and whose items a task visits. The names and
//! paths of items are the engine's business ([`crate::engine::tree`]); what is decided here is
//! how many there are and where each goes, so that the rules are checked before a run.
//!
//! Directories are numbered breadth-first: 0 is the tree's root, the children of directory d
//! are d * branch + 1 ..= d * branch + branch.

use super::{Hint, Op, Setting, SpecError, Workload};
use serde::{Deserialize, Serialize};

/// The name of the directory that holds everything a metadata run makes, unless told otherwise.
pub const ROOT: &str = "iosurvey.meta";

/// Whether `name` is one iosurvey's metadata naming makes ([`crate::engine::tree`]): in the
/// run's root (`top`) a task's tree `u.N` or the shared tree `shared`; below, a tree
/// directory `t.N` or an item `f.T.N` / `d.T.N`. Clean-up removes these names only, so a file
/// someone put in a tree is left and named, whoever owns it.
pub fn made_name(name: &[u8], top: bool) -> bool {
    fn numbers(rest: &[u8], count: usize) -> bool {
        let parts: Vec<&[u8]> = rest.split(|&c| c == b'.').collect();
        parts.len() == count && parts.iter().all(|p| !p.is_empty() && p.len() <= 20 && p.iter().all(u8::is_ascii_digit))
    }
    match name {
        b"shared" => top,
        [b'u', b'.', rest @ ..] => top && numbers(rest, 1),
        [b't', b'.', rest @ ..] => !top && numbers(rest, 1),
        [b'f' | b'd', b'.', rest @ ..] => !top && numbers(rest, 2),
        _ => false,
    }
}

/// Deepest tree accepted: deeper paths would outgrow what file systems take (PATH_MAX).
pub const MAX_DEPTH: u32 = 64;

/// Largest file an item may be written or read with: a task holds one such buffer (two when
/// verifying).
pub const MAX_ITEM_BYTES: u64 = 64 << 20;

/// The shape of one task's (or the shared) tree of directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// Levels below the root (0: the root alone; mdtest -z).
    pub depth: u32,
    /// Children of each directory above the leaves (mdtest -b).
    pub branch: u32,
    /// Items in the leaves only, not in every directory (mdtest -L).
    pub leaves_only: bool,
}

impl Default for Tree {
    fn default() -> Self {
        Tree { depth: 0, branch: 1, leaves_only: false }
    }
}

impl Tree {
    /// Directories in the tree, root included: 1 + b + b^2 + ... + b^depth. `None` when that
    /// does not fit in a u64.
    pub fn dirs(&self) -> Option<u64> {
        let b = u64::from(self.branch.max(1));
        (0..=self.depth).try_fold(0u64, |sum, level| sum.checked_add(b.checked_pow(level)?))
    }

    /// The first directory that holds items, and how many do.
    fn holders(&self) -> Option<(u64, u64)> {
        let all = self.dirs()?;
        if !self.leaves_only || self.depth == 0 {
            return Some((0, all));
        }
        let leaves = u64::from(self.branch.max(1)).checked_pow(self.depth)?;
        Some((all - leaves, leaves))
    }

    /// How many directories hold items.
    pub fn holding(&self) -> u64 {
        self.holders().map_or(0, |(_, n)| n)
    }

    /// The items per task actually placed: `items` rounded down to a multiple of the
    /// directories that hold items (as mdtest does), so every one holds as many.
    pub fn placed(&self, items: u64) -> u64 {
        self.holders().map_or(0, |(_, n)| items / n * n)
    }

    /// Where the items of a task with `items` items go: computed once per phase, so that
    /// placing an item is a division.
    pub fn placement(&self, items: u64) -> Placement {
        let (first, n) = self.holders().unwrap_or((0, 1));
        Placement { first, per: (self.placed(items) / n).max(1), last: n - 1 }
    }

    /// The parent of directory `d` (`None` for the root).
    pub fn parent(&self, d: u64) -> Option<u64> {
        (d > 0).then(|| (d - 1) / u64::from(self.branch.max(1)))
    }
}

/// Where a task's items go: the holding directories in blocks of `per`, the first block in
/// directory `first`, and so on.
#[derive(Debug, Clone, Copy)]
pub struct Placement {
    first: u64,
    per: u64,
    last: u64,
}

impl Placement {
    /// The directory (breadth-first index) of item `i`.
    pub fn dir_of(&self, i: u64) -> u64 {
        self.first + (i / self.per).min(self.last)
    }
}

/// A metadata workload's shape. The phases are the workload's `ops`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Meta {
    /// Items each task makes in each item phase, a multiple of the directories holding items.
    pub items: u64,
    /// All tasks in one shared tree; else one tree per task (mdtest -u).
    pub shared: bool,
    /// The tree's shape.
    pub tree: Tree,
    /// Bytes each file is written with when created (mdtest -w).
    pub write_bytes: u64,
    /// Bytes read from each file (mdtest -e).
    pub read_bytes: u64,
    /// A task stats, reads and removes the items of the task this many ranks on (mdtest -N).
    pub shift: usize,
    /// syncfs at the end of each phase, inside its time (mdtest -y, once per phase).
    pub sync: bool,
    /// The directory in the target that holds everything the run makes.
    pub root: String,
    /// Further base directories (mdtest -d a@b, for several metadata servers), after the
    /// target: task t's tree is in base t mod (1 + these); each holds its own root.
    /// Stored lossily: a record must always serialize, whatever bytes a path holds.
    #[serde(serialize_with = "lossy_paths")]
    pub bases: Vec<std::path::PathBuf>,
}

/// Paths as text, bytes that are not UTF-8 replaced (the run says so in a warning).
fn lossy_paths<S: serde::Serializer>(paths: &[std::path::PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(paths.iter().map(|p| p.to_string_lossy()))
}

impl Default for Meta {
    fn default() -> Self {
        Meta {
            items: 1000,
            shared: false,
            tree: Tree::default(),
            write_bytes: 0,
            read_bytes: 0,
            shift: 0,
            sync: false,
            root: ROOT.into(),
            bases: Vec::new(),
        }
    }
}

/// The phases of a full metadata run, in mdtest's order.
pub const ALL_PHASES: [Op; 9] = [
    Op::TreeCreate,
    Op::DirCreate,
    Op::DirStat,
    Op::DirRemove,
    Op::FileCreate,
    Op::FileStat,
    Op::FileRead,
    Op::FileRemove,
    Op::TreeRemove,
];

impl Meta {
    /// Checks the shape against the phases `ops` of workload `w`.
    pub(super) fn check(&self, w: &Workload) -> Result<(), SpecError> {
        let bad = |what: String, hint: Hint| Err(SpecError::Invalid { what, hint });
        if let Some(op) = w.ops.iter().find(|o| o.moves_data()) {
            return bad(
                format!("a metadata workload cannot have a {} phase", op.name()),
                Hint::say("run data transfers with iosurvey run"),
            );
        }
        if self.tree.depth > MAX_DEPTH {
            return bad(
                format!("a tree {} levels deep is deeper than {MAX_DEPTH}", self.tree.depth),
                Hint::AtMost(Setting::Tree, MAX_DEPTH.to_string()),
            );
        }
        if self.tree.depth > 0 && self.tree.branch == 0 {
            return bad(
                "a tree with levels needs at least one branch".into(),
                Hint::AtLeast(Setting::Tree, "1".into()),
            );
        }
        let Some(dirs) = self.tree.dirs() else {
            return bad("the tree has more directories than can be counted".into(), Hint::Lower(vec![Setting::Tree]));
        };
        let holding = self.tree.holding();
        let item_phases = w.ops.iter().any(|o| !matches!(o, Op::TreeCreate | Op::TreeRemove));
        if item_phases && self.tree.placed(self.items) == 0 {
            return bad(
                format!(
                    "{} items per task cannot fill the {holding} directories of the tree that hold items",
                    self.items
                ),
                Hint::AtLeast(Setting::Items, holding.to_string()),
            );
        }
        if (item_phases && self.items.checked_mul(w.tasks as u64).is_none())
            || dirs.checked_mul(w.tasks as u64).is_none()
        {
            return bad("the run would make more items than can be counted".into(), Hint::Lower(vec![Setting::Items]));
        }
        if self.write_bytes > MAX_ITEM_BYTES || self.read_bytes > MAX_ITEM_BYTES {
            return bad(
                format!("files of more than {} are not metadata", crate::units::format_size(MAX_ITEM_BYTES)),
                Hint::AtMost(Setting::ItemBytes, crate::units::format_size(MAX_ITEM_BYTES)),
            );
        }
        if self.read_bytes > self.write_bytes {
            return bad(
                format!("reading {} bytes of files written with {}", self.read_bytes, self.write_bytes),
                Hint::AtMost(Setting::ItemBytes, format!("the bytes written ({})", self.write_bytes)),
            );
        }
        let plain = !self.root.is_empty() && !self.root.contains('/') && self.root.starts_with("iosurvey.");
        if !plain {
            return bad(
                format!("'{}' is not a name iosurvey makes", self.root),
                Hint::say("leave the root's name alone"),
            );
        }
        Ok(())
    }

    /// Bytes of buffers one task holds: a file's bytes, twice when reads are checked.
    pub fn buffer_bytes(&self, verify: bool) -> u64 {
        self.write_bytes.max(self.read_bytes) * (1 + verify as u64)
    }

    /// The key part of what the workload measures.
    pub(super) fn key(&self) -> String {
        let t = &self.tree;
        format!(
            "meta/n{}/{}/z{}b{}{}/w{}e{}/N{}{}{}",
            self.items,
            if self.shared { "shared" } else { "unique" },
            t.depth,
            t.branch,
            if t.leaves_only { "L" } else { "" },
            self.write_bytes,
            self.read_bytes,
            self.shift,
            if self.sync { "/sync" } else { "" },
            if self.bases.is_empty() { String::new() } else { format!("/bases{}", 1 + self.bases.len()) }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meta_with_bases_that_are_not_utf8_still_serializes() {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"/scratch/\xff\xfe"));
        let m = Meta { bases: vec![odd], ..Meta::default() };
        let text = serde_json::to_string(&m).expect("a record always serializes");
        assert!(text.contains("/scratch/\u{fffd}\u{fffd}"), "{text}");
        let back: Meta = serde_json::from_str(&text).unwrap();
        assert_eq!(back.bases[0].to_str(), Some("/scratch/\u{fffd}\u{fffd}"));
    }

    #[test]
    fn items_spread_evenly_over_the_directories_that_hold_them() {
        for (t, holders) in [
            (Tree { depth: 2, branch: 3, leaves_only: false }, 0..13u64),
            (Tree { depth: 2, branch: 3, leaves_only: true }, 4..13u64),
            (Tree { depth: 0, branch: 5, leaves_only: true }, 0..1u64),
        ] {
            let items = 100;
            let placed = t.placed(items);
            let n = holders.end - holders.start;
            assert_eq!(placed, items / n * n, "{t:?}: rounded down to a multiple of {n}");
            assert_eq!(t.holding(), n);
            let mut per_dir = [0u64; 13];
            let placement = t.placement(items);
            for i in 0..placed {
                per_dir[placement.dir_of(i) as usize] += 1;
            }
            for (d, &count) in per_dir.iter().enumerate() {
                let expected = if holders.contains(&(d as u64)) { placed / n } else { 0 };
                assert_eq!(count, expected, "{t:?}: directory {d}");
            }
        }
        assert_eq!(Tree { depth: 2, branch: 3, leaves_only: false }.dirs(), Some(1 + 3 + 9));
        assert_eq!(Tree { depth: 70, branch: 10, leaves_only: false }.dirs(), None, "too large to count");
        assert_eq!(Tree { depth: 0, branch: 0, leaves_only: true }.dirs(), Some(1));
    }

    fn meta_workload(meta: Meta, ops: Vec<Op>) -> Workload {
        Workload { meta: Some(meta), ops, ..Workload::default() }
    }

    #[test]
    fn shapes_that_cannot_run_are_refused_with_the_setting_to_change() {
        let ok = meta_workload(Meta::default(), ALL_PHASES.to_vec());
        assert!(ok.validate().is_ok());
        let cases = [
            (Meta { items: 5, tree: Tree { depth: 1, branch: 10, leaves_only: false }, ..Meta::default() }, "fill"),
            (Meta { tree: Tree { depth: 65, branch: 1, leaves_only: false }, ..Meta::default() }, "deeper"),
            (Meta { tree: Tree { depth: 2, branch: 0, leaves_only: false }, ..Meta::default() }, "branch"),
            (Meta { write_bytes: 10, read_bytes: 11, ..Meta::default() }, "reading 11"),
            (Meta { write_bytes: 1 << 30, ..Meta::default() }, "not metadata"),
            (Meta { root: "../x".into(), ..Meta::default() }, "not a name"),
        ];
        for (meta, words) in cases {
            let e = meta_workload(meta.clone(), ALL_PHASES.to_vec()).validate().unwrap_err();
            assert!(e.to_string().contains(words), "{meta:?}: {e}");
        }
        let e = meta_workload(Meta::default(), vec![Op::FileCreate, Op::Read]).validate().unwrap_err();
        assert!(e.to_string().contains("cannot have a read phase"), "{e}");
        // A data workload may not hold metadata phases.
        let e = Workload { ops: vec![Op::FileStat], ..Workload::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("file-stat"), "{e}");
        // Tree phases alone need no items.
        assert!(meta_workload(Meta { items: 0, ..Meta::default() }, vec![Op::TreeCreate, Op::TreeRemove])
            .validate()
            .is_ok());
    }
}
