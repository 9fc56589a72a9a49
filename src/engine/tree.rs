//! The names of a metadata workload's items and directories, written into a reused buffer so
//! the hot path of a metadata phase allocates nothing per item. The tree's shape and where
//! each item goes are the workload's ([`crate::spec::Tree`]).
//!
//! A directory's path below the tree's root is its chain of indices from the root, each
//! component `t.<index among its siblings>`; a task's own tree is `u.<task>` in the run's
//! root directory, the shared tree `shared`.

use crate::spec::Tree;

/// Kinds of item, by the first letter of their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A file: `f.<task>.<index>`.
    File,
    /// A directory: `d.<task>.<index>`.
    Dir,
}

/// Appends the name of the tree of `task` (or the shared tree) in the run's root directory.
pub fn write_tree_name(shared: bool, task: u64, buf: &mut Vec<u8>) {
    if shared {
        buf.extend_from_slice(b"shared");
    } else {
        buf.extend_from_slice(b"u.");
        write_decimal(task, buf);
    }
}

/// Appends the path of tree directory `d` of `task`'s tree (or the shared one) in the run's
/// root directory: the tree's name, then `d`'s path below it.
pub fn write_tree_dir(shared: bool, task: u64, tree: &Tree, d: u64, buf: &mut Vec<u8>) {
    write_tree_name(shared, task, buf);
    if d > 0 {
        buf.push(b'/');
        write_path(tree, d, buf);
    }
}

/// Appends directory `d`'s path below the tree's root (empty for the root) to `buf`,
/// components separated by '/'.
pub fn write_path(tree: &Tree, d: u64, buf: &mut Vec<u8>) {
    let b = u64::from(tree.branch.max(1));
    // The chain of sibling indices from d up to the root, written in reverse after.
    let mut chain = [0u64; crate::spec::meta::MAX_DEPTH as usize + 1];
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
        write_component(c, buf);
    }
}

/// Appends the name of the tree directory that is child `index` of its parent: `t.<index>`.
pub fn write_component(index: u64, buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"t.");
    write_decimal(index, buf);
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
pub fn write_decimal(mut n: u64, buf: &mut Vec<u8>) {
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
        write_path(t, d, &mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn a_tree_has_its_paths() {
        let t = Tree { depth: 2, branch: 3, leaves_only: false };
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
        buf.clear();
        write_tree_name(false, 12, &mut buf);
        assert_eq!(buf, b"u.12");
        assert_eq!(buf.capacity(), capacity, "no allocation once the buffer is big enough");
    }

    #[test]
    fn every_name_written_is_one_clean_up_removes_and_no_other() {
        use crate::spec::meta::made_name;
        let t = Tree { depth: 3, branch: 4, leaves_only: false };
        let mut buf = Vec::new();
        for shared in [false, true] {
            buf.clear();
            write_tree_name(shared, 7, &mut buf);
            assert!(made_name(&buf, true) && !made_name(&buf, false), "{buf:?}");
        }
        for d in 1..t.dirs().unwrap() {
            buf.clear();
            write_path(&t, d, &mut buf);
            for component in buf.split(|&c| c == b'/') {
                assert!(made_name(component, false) && !made_name(component, true), "{component:?}");
            }
        }
        for kind in [ItemKind::File, ItemKind::Dir] {
            buf.clear();
            write_item_name(kind, 65535, u64::MAX, &mut buf);
            assert!(made_name(&buf, false) && !made_name(&buf, true), "{buf:?}");
        }
        for foreign in ["README-admin.txt", "keepme", "u.", "u.x", "t.1.2", "f.1", "f.1.2.3", "f..1", "shared2", "u.1 "]
        {
            assert!(!made_name(foreign.as_bytes(), true) && !made_name(foreign.as_bytes(), false), "{foreign}");
        }
    }
}
