//! The shape of a metadata workload (the mdtest class): how many items each task makes, in
//! which tree of directories, of which size, and whose items a task visits. The names and
//! paths of items are the engine's business (its `tree` module, a room above this one); what
//! is decided here is how many there are and where each goes, so that the rules are checked
//! before a run.
//!
//! Directories are numbered breadth-first: 0 is the tree's root, the children of directory d
//! are d * branch + 1 ..= d * branch + branch.

use super::{Hint, Op, Setting, SpecError, Workload};
use serde::{Deserialize, Serialize};

/// The name of the directory that holds everything a metadata run makes, unless told otherwise.
pub const ROOT: &str = "iosurvey.meta";

/// Whether `name` is one iosurvey's metadata naming makes (the engine's `tree` writes them):
/// in the run's root (`top`) a task's tree `u.N` or the shared tree `shared`; below, a tree
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

/// The shape of one task's (or the shared) tree of directories. Each field is declared once,
/// here, with its flag: `iosurvey meta` flattens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct Tree {
    /// Levels of directories below each tree's top (mdtest -z).
    #[arg(long, short = 'z', default_value_t = 0)]
    pub depth: u32,
    /// Subdirectories of each directory above the leaves (mdtest -b).
    #[arg(long, short = 'b', default_value_t = 1)]
    pub branch: u32,
    /// Items only in the leaves of the tree (mdtest -L).
    #[arg(long, short = 'L')]
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

/// How each metadata call finds its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolve {
    /// Every call resolves the item's whole path from `/`, as applications and mdtest do: the
    /// client's path walk is measured. Where a directory above the run's root could be changed
    /// by another user, paths start at the run's root, held open, and the run says so.
    Path,
    /// Every call is relative to the item's directory, held open, with the bare name: the file
    /// system's per-item cost without the client's path walk.
    Relative,
}

impl Resolve {
    /// What a record stored before the field means: those runs made their calls relative.
    fn before_the_field() -> Resolve {
        Resolve::Relative
    }

    /// The way `--relative` (given or not) asks for.
    fn relative_if(given: bool) -> Resolve {
        match given {
            true => Resolve::Relative,
            false => Resolve::Path,
        }
    }
}

/// A metadata workload's shape. The phases are the workload's `ops`. Each field is declared
/// once, here: its type, its help and its flag with mdtest's letter (`iosurvey meta` flattens
/// this struct) and its name in stored records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct Meta {
    /// Items each task makes in each item phase (mdtest -n); rounded down to a multiple of the
    /// directories that hold items.
    #[arg(long, short = 'n', default_value_t = 1000, conflicts_with = "items_per_dir")]
    pub items: u64,
    /// All tasks in one shared tree; by default each task has its own (mdtest -u).
    #[arg(long = "shared-dir")]
    pub shared: bool,
    /// The tree's shape.
    #[command(flatten)]
    pub tree: Tree,
    /// Bytes written into each file when it is made (mdtest -w).
    #[arg(long, short = 'w', value_parser = crate::units::size_arg, default_value = "0")]
    pub write_bytes: u64,
    /// Bytes read from each file in file-read (mdtest -e).
    #[arg(long, short = 'e', value_parser = crate::units::size_arg, default_value = "0")]
    pub read_bytes: u64,
    /// Stat, read and remove the items of the task this many ranks on (mdtest -N): give the
    /// tasks per node to have every task touch another node's items.
    #[arg(long, short = 'N', default_value_t = 0)]
    pub shift: usize,
    /// syncfs at the end of each phase, inside its time (mdtest -Y).
    #[arg(long, short = 'Y')]
    pub sync: bool,
    /// The directory in the target that holds everything the run makes.
    #[arg(skip = ROOT.to_string())]
    pub root: String,
    /// Further base directories (mdtest -d a@b, for several metadata servers), after the
    /// target: task t's tree is in base t mod (1 + these); each holds its own root.
    /// Stored lossily: a record must always serialize, whatever bytes a path holds.
    #[serde(serialize_with = "lossy_paths")]
    #[arg(skip)]
    pub bases: Vec<std::path::PathBuf>,
    /// Make each call relative to the item's directory, held open, with the bare name
    /// (fstatat, openat, mkdirat, unlinkat): the file system's per-item cost without the
    /// client's path walk. By default each call resolves the item's whole path from `/`, as
    /// applications and mdtest do (no mdtest letter: mdtest always walks); from the run's
    /// root, held open, where a directory above it is not held, said in every output.
    #[serde(default = "Resolve::before_the_field")]
    #[arg(
        long = "relative",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::TypedValueParser::map(clap::builder::BoolishValueParser::new(), Resolve::relative_if)
    )]
    pub resolve: Resolve,
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
            resolve: Resolve::Path,
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

    /// What `tasks` tasks' share of the run makes in one base at most at once, on a file
    /// system of `block`-byte blocks: (bytes, inodes). Every file written takes its bytes
    /// rounded up to whole blocks; every directory (of the tree, or an item) a block, which is
    /// what ext4 gives a new directory (XFS and others keep a small one in its inode, so this
    /// is an upper bound there); every item and directory an inode. Items are removed before
    /// the next iteration makes them again (the phase order is checked), so one iteration's
    /// worth is the peak.
    pub fn space_need(&self, ops: &[Op], tasks: u64, block: u64) -> (u64, u64) {
        let block = block.max(1);
        let per_task = self.tree.placed(self.items);
        let trees = if self.shared { tasks.min(1) } else { tasks };
        let tree_dirs = match ops.contains(&Op::TreeCreate) {
            true => trees.saturating_mul(self.tree.dirs().unwrap_or(u64::MAX)),
            false => 0,
        };
        let made = |op: Op| if ops.contains(&op) { tasks.saturating_mul(per_task) } else { 0 };
        let (dirs, files) = (made(Op::DirCreate), made(Op::FileCreate));
        let file_bytes = self.write_bytes.div_ceil(block).saturating_mul(block);
        let bytes =
            tree_dirs.saturating_add(dirs).saturating_mul(block).saturating_add(files.saturating_mul(file_bytes));
        (bytes, tree_dirs.saturating_add(dirs).saturating_add(files))
    }

    /// Bytes of buffers one task holds: a file's bytes, twice when reads are checked.
    pub fn buffer_bytes(&self, verify: bool) -> u64 {
        self.write_bytes.max(self.read_bytes) * (1 + verify as u64)
    }
}

/// What a metadata run finds before its first phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// No tree: nothing of the run's is there yet.
    Nothing,
    /// The tree is there: kept by an earlier `--keep` run, or made by an earlier run of the
    /// same command (io500's phases). Its items may be there or not.
    Tree,
}

/// Whether the items of a kind are there before a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum There {
    No,
    Yes,
    /// In a tree found in place: they may be.
    Maybe,
}

/// Checks that `ops` can run in their order, `iterations` times, from what is there
/// `before`: an item is made before it is stat'ed, read or removed (in this run, or by an
/// earlier run that kept it); a tree is made before items are made in it, removed only
/// after them, and never made over one that is there. The refusal names an order that works.
pub fn check_order(ops: &[Op], iterations: u32, before: Before) -> Result<(), SpecError> {
    let Some(fault) = order_fault(ops, iterations, before) else { return Ok(()) };
    let names = |ops: &[Op]| ops.iter().map(|o| o.name()).collect::<Vec<_>>().join(",");
    let hint = match working_order(ops, iterations, before) {
        Some(good) => Hint::Use(Setting::Ops, names(&good)),
        None => Hint::say("see 'iosurvey meta --help' for the phases and their order"),
    };
    let hint = match before {
        Before::Tree if ops.contains(&Op::TreeCreate) => {
            hint.or(Hint::say(format!("remove the kept tree below {ROOT} (or its whole directory) first")))
        }
        _ => hint,
    };
    Err(SpecError::Invalid { what: format!("the phases {} cannot run in this order: {fault}", names(ops)), hint })
}

/// The first phase that cannot run, and why; `None` when every one can. Two iterations show
/// any fault a repetition would meet.
fn order_fault(ops: &[Op], iterations: u32, before: Before) -> Option<String> {
    use There::*;
    let (mut tree, mut dirs, mut files) = match before {
        Before::Nothing => (No, No, No),
        Before::Tree => (Yes, Maybe, Maybe),
    };
    for iteration in 0..iterations.clamp(1, 2) {
        let when = if iteration > 0 { "in the second iteration, " } else { "" };
        for &op in ops {
            let name = op.name();
            let dir_op = matches!(op, Op::DirCreate | Op::DirStat | Op::DirRemove);
            let (mut items, what) = if dir_op { (dirs, "directory items") } else { (files, "files") };
            let fault = match op {
                Op::TreeCreate if tree == Yes && before == Before::Tree && iteration == 0 => Some(format!(
                    "{name} would make the tree over the one already there (kept by an earlier --keep run)"
                )),
                Op::TreeCreate if tree == Yes => {
                    Some(format!("{name} would make the tree over the one made before it"))
                }
                Op::TreeCreate => {
                    tree = Yes;
                    None
                }
                Op::TreeRemove if tree == No => Some(format!("{name} removes a tree that no phase before it made")),
                Op::TreeRemove if dirs == Yes || files == Yes => {
                    Some(format!("{name} would remove the tree while items made before it are still in it"))
                }
                Op::TreeRemove => {
                    (tree, dirs, files) = (No, No, No);
                    None
                }
                Op::DirCreate | Op::FileCreate if tree == No => {
                    Some(format!("{name} makes {what} in a tree that no phase before it made"))
                }
                Op::DirCreate | Op::FileCreate if items == Yes => {
                    Some(format!("{name} would make the {what} again over those made before it"))
                }
                Op::DirCreate | Op::FileCreate => {
                    items = Yes;
                    None
                }
                _ if items == No => Some(format!(
                    "{name} needs {what} that no phase before it made{}",
                    if iteration == 0 { " and no --keep run left" } else { "" }
                )),
                Op::DirRemove | Op::FileRemove => {
                    items = No;
                    None
                }
                _ => None,
            };
            if let Some(fault) = fault {
                return Some(format!("{when}{fault}"));
            }
            match op {
                Op::TreeCreate | Op::TreeRemove => {}
                _ if dir_op => dirs = items,
                _ => files = items,
            }
        }
    }
    None
}

/// The phases asked for, with what they need before them (and, when the run repeats or
/// removes the tree, what undoes what they make), in mdtest's order; `None` if even that
/// cannot run.
fn working_order(ops: &[Op], iterations: u32, before: Before) -> Option<Vec<Op>> {
    let any = |list: &[Op], kinds: &[Op]| list.iter().any(|o| kinds.contains(o));
    let mut want = ops.to_vec();
    if before == Before::Nothing {
        if any(ops, &[Op::FileStat, Op::FileRead, Op::FileRemove]) {
            want.push(Op::FileCreate);
        }
        if any(ops, &[Op::DirStat, Op::DirRemove]) {
            want.push(Op::DirCreate);
        }
        if any(&want, &[Op::FileCreate, Op::DirCreate, Op::TreeRemove]) {
            want.push(Op::TreeCreate);
        }
    } else {
        // A kept tree most likely holds the items its run made: use them rather than make
        // them over themselves.
        let uses_files = any(ops, &[Op::FileStat, Op::FileRead, Op::FileRemove]);
        let uses_dirs = any(ops, &[Op::DirStat, Op::DirRemove]);
        want.retain(|o| match o {
            Op::TreeCreate => false,
            Op::FileCreate => !uses_files,
            Op::DirCreate => !uses_dirs,
            _ => true,
        });
    }
    if iterations > 1 || want.contains(&Op::TreeRemove) {
        for (made, undone) in
            [(Op::FileCreate, Op::FileRemove), (Op::DirCreate, Op::DirRemove), (Op::TreeCreate, Op::TreeRemove)]
        {
            if want.contains(&made) {
                want.push(undone);
            }
        }
    }
    let good: Vec<Op> = ALL_PHASES.into_iter().filter(|o| want.contains(o)).collect();
    order_fault(&good, iterations, before).is_none().then_some(good)
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

    /// The key of every metadata phase over the default shape, calls relative: no field of the
    /// data shape (reorder was one until the v12 store re-keyed).
    const RELATIVE_KEY: &str = concat!(
        r#"{"drop_caches":false,"meta":{"bases":0,"items":1000,"read_bytes":0,"resolve":"relative","#,
        r#""shared":false,"shift":0,"sync":false,"tree":{"branch":1,"depth":0,"leaves_only":false},"#,
        r#""write_bytes":0},"ops":["tree-create","dir-create","dir-stat","dir-remove","file-create","#,
        r#""file-stat","file-read","file-remove","tree-remove"],"stonewall_secs":null,"#,
        r#""verify":false,"wear_out":false}"#
    );

    #[test]
    fn a_meta_stored_without_the_resolve_field_was_relative_and_a_new_one_walks_paths() {
        assert_eq!(serde_json::to_value(Meta::default()).unwrap()["resolve"], "path");
        let mut old = serde_json::to_value(Meta::default()).unwrap();
        old.as_object_mut().unwrap().remove("resolve");
        assert_eq!(serde_json::from_value::<Meta>(old).unwrap().resolve, Resolve::Relative);
        // The two ways never pool, and a run stored before the field keys as the relative runs.
        let relative = Meta { resolve: Resolve::Relative, ..Meta::default() };
        let key = |m: Meta| meta_workload(m, ALL_PHASES.to_vec()).key();
        let mut before = serde_json::to_value(meta_workload(Meta::default(), ALL_PHASES.to_vec())).unwrap();
        before["meta"].as_object_mut().unwrap().remove("resolve");
        let before: Workload = serde_json::from_value(before).unwrap();
        assert_eq!(before.key(), key(relative.clone()));
        assert_ne!(key(Meta::default()), key(relative.clone()));
        assert_eq!(key(relative.clone()), RELATIVE_KEY);
        assert_eq!(key(Meta::default()), RELATIVE_KEY.replace("\"relative\"", "\"path\""));
        let label = |m: Meta| meta_workload(m, ALL_PHASES.to_vec()).label();
        assert!(label(Meta::default()).ends_with(", path walk, 1 task"), "{}", label(Meta::default()));
        assert!(label(relative.clone()).ends_with(", relative, no path walk, 1 task"), "{}", label(relative));
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
        Workload { ops, ..Workload::from(meta) }
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

    #[test]
    fn phases_in_an_order_that_cannot_run_are_refused_naming_one_that_can() {
        use Op::*;
        let refused = |ops: &[Op], iterations, before| check_order(ops, iterations, before).unwrap_err();
        let works = |ops: &[Op], iterations, before| check_order(ops, iterations, before).is_ok();
        assert!(works(&ALL_PHASES, 3, Before::Nothing));
        assert!(works(&[FileStat], 1, Before::Tree), "stat what a --keep run left");
        assert!(works(&[FileRemove, TreeRemove], 1, Before::Tree), "io500's delete phase");
        let cases: [(&[Op], u32, Before, &str, &str); 6] = [
            (&[FileStat], 1, Before::Nothing, "no phase before it made", "tree-create,file-create,file-stat"),
            (&[TreeRemove, TreeCreate], 1, Before::Nothing, "removes a tree", "tree-create,tree-remove"),
            (
                &ALL_PHASES,
                1,
                Before::Tree,
                "over the one already there",
                "\"dir-stat,dir-remove,file-stat,file-read,file-remove,tree-remove\"",
            ),
            (
                &[TreeCreate, FileCreate],
                2,
                Before::Nothing,
                "second iteration",
                "tree-create,file-create,file-remove,tree-remove",
            ),
            (
                &[TreeCreate, FileCreate, TreeRemove],
                1,
                Before::Nothing,
                "still in it",
                "file-create,file-remove,tree-remove",
            ),
            (
                &[FileCreate, FileStat],
                1,
                Before::Nothing,
                "in a tree that no phase",
                "tree-create,file-create,file-stat",
            ),
        ];
        for (ops, iterations, before, why, order) in cases {
            let e = refused(ops, iterations, before);
            assert!(e.to_string().contains(why), "{ops:?}: {e}");
            let hint = format!("{:?}", e.hint());
            assert!(hint.contains(order), "{ops:?}: {hint}");
            let named = match e.hint() {
                Hint::Either(first, _) => *first,
                other => other,
            };
            if let Hint::Use(Setting::Ops, good) = named {
                let good: Vec<Op> =
                    good.split(',').map(|n| *ALL_PHASES.iter().find(|o| o.name() == n).unwrap()).collect();
                assert!(works(&good, iterations, before), "the order named works: {good:?}");
            }
        }
    }

    #[test]
    fn the_space_a_metadata_run_needs_is_its_blocks_and_inodes() {
        let meta = Meta {
            items: 10,
            write_bytes: 5000,
            tree: Tree { depth: 1, branch: 2, leaves_only: false },
            ..Meta::default()
        };
        // 3 tree directories and 9 items per task (10 rounded down to a multiple of 3), 2 tasks.
        let (bytes, inodes) = meta.space_need(&ALL_PHASES, 2, 4096);
        assert_eq!(inodes, 2 * 3 + 2 * 9 + 2 * 9);
        assert_eq!(bytes, (2 * 3 + 2 * 9) * 4096 + 2 * 9 * 8192, "files of 5000 bytes take two blocks");
        let shared = Meta { shared: true, ..meta.clone() };
        assert_eq!(shared.space_need(&[Op::TreeCreate, Op::FileCreate], 2, 4096), (3 * 4096 + 18 * 8192, 3 + 18));
        assert_eq!(meta.space_need(&[Op::FileStat], 2, 4096), (0, 0), "a run that makes nothing needs nothing");
    }
}
