//! Where a metadata workload's items live: a tree of directories (mdtest's -z depth and -b
//! branching), items in every directory or in the leaves only (mdtest's -L), spread evenly, and
//! the names of items and directories, written into a reused buffer so the hot path of a
//! metadata phase allocates nothing per item.
//!
//! Directories are numbered breadth-first: 0 is the tree's root, the children of directory d
//! are d * branch + 1 ..= d * branch + branch. A directory's path is its chain of indices from
//! the root, each component `t.<index among its siblings>`.

/// The shape of one task's (or the shared) tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tree {
    /// Levels below the root (0: the root alone).
    pub depth: u32,
    /// Children of each directory above the leaves.
    pub branch: u32,
    /// Items in the leaves only, not in every directory.
    pub leaves_only: bool,
}

/// Kinds of item, by the first letter of their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A file: `f.<task>.<index>`.
    File,
    /// A directory: `d.<task>.<index>`.
    Dir,
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

    /// The items per task actually placed: `items` rounded down to a multiple of the
    /// directories that hold items (as mdtest does), so every one holds as many.
    pub fn placed(&self, items: u64) -> u64 {
        self.holders().map_or(0, |(_, n)| items / n * n)
    }

    /// The directory (breadth-first index) of item `i`: items go round the holding
    /// directories in blocks, the first `per` in the first, and so on.
    pub fn dir_of(&self, i: u64, items: u64) -> u64 {
        let Some((first, n)) = self.holders() else { return 0 };
        let per = (self.placed(items) / n).max(1);
        first + (i / per).min(n - 1)
    }

    /// The parent of directory `d` (`None` for the root).
    pub fn parent(&self, d: u64) -> Option<u64> {
        (d > 0).then(|| (d - 1) / u64::from(self.branch.max(1)))
    }

    /// Appends directory `d`'s path below the tree's root (empty for the root) to `buf`,
    /// components separated by '/'.
    pub fn write_path(&self, d: u64, buf: &mut Vec<u8>) {
        let b = u64::from(self.branch.max(1));
        // The chain of sibling indices from d up to the root, written in reverse after.
        let mut chain = [0u64; 64];
        let mut len = 0;
        let mut at = d;
        while at > 0 && len < chain.len() {
            chain[len] = (at - 1) % b;
            at = (at - 1) / b;
            len += 1;
        }
        for (k, &c) in chain[..len].iter().rev().enumerate() {
            if k > 0 {
                buf.push(b'/');
            }
            buf.extend_from_slice(b"t.");
            write_decimal(c, buf);
        }
    }
}

/// Appends an item's name to `buf`: `f.<task>.<index>` or `d.<task>.<index>`.
pub fn write_item_name(kind: ItemKind, task: u64, index: u64, buf: &mut Vec<u8>) {
    buf.push(if kind == ItemKind::File { b'f' } else { b'd' });
    buf.push(b'.');
    write_decimal(task, buf);
    buf.push(b'.');
    write_decimal(index, buf);
}

/// Appends `n` in decimal, without allocating.
fn write_decimal(mut n: u64, buf: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[k..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(t: &Tree, d: u64) -> String {
        let mut b = Vec::new();
        t.write_path(d, &mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn a_tree_has_its_shape_and_paths() {
        let t = Tree { depth: 2, branch: 3, leaves_only: false };
        assert_eq!(t.dirs(), Some(1 + 3 + 9));
        assert_eq!(path(&t, 0), "");
        assert_eq!(path(&t, 1), "t.0");
        assert_eq!(path(&t, 3), "t.2");
        assert_eq!(path(&t, 4), "t.0/t.0");
        assert_eq!(path(&t, 12), "t.2/t.2");
        // Every directory's parent is its path without the last component.
        for d in 1..13 {
            let p = path(&t, d);
            let parent = path(&t, t.parent(d).unwrap());
            assert_eq!(p.rsplit_once('/').map_or("", |(head, _)| head), parent, "directory {d}");
        }
        assert_eq!(Tree { depth: 70, branch: 10, leaves_only: false }.dirs(), None, "too large to count");
        assert_eq!(Tree { depth: 0, branch: 0, leaves_only: true }.dirs(), Some(1));
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
            let mut per_dir = [0u64; 13];
            for i in 0..placed {
                per_dir[t.dir_of(i, items) as usize] += 1;
            }
            for (d, &count) in per_dir.iter().enumerate() {
                let expected = if holders.contains(&(d as u64)) { placed / n } else { 0 };
                assert_eq!(count, expected, "{t:?}: directory {d}");
            }
        }
    }

    #[test]
    fn names_are_written_into_a_reused_buffer() {
        let mut buf = Vec::with_capacity(64);
        write_item_name(ItemKind::File, 3, 1042, &mut buf);
        assert_eq!(buf, b"f.3.1042");
        let capacity = buf.capacity();
        for i in [0, 9, 10, u64::MAX] {
            buf.clear();
            write_item_name(ItemKind::Dir, 65535, i, &mut buf);
            assert_eq!(String::from_utf8_lossy(&buf), format!("d.65535.{i}"));
        }
        assert_eq!(buf.capacity(), capacity, "no allocation once the buffer is big enough");
    }
}
