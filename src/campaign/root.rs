//! A rehearsal's targets under one directory (`campaign run FILE --root DIR`): each directory
//! target is placed at DIR/LABEL, so that a paper's campaign runs on one machine from its file
//! as written. Only the targets in memory move: the file, and the text the store keeps of it,
//! keep the real paths.

use super::Campaign;
use std::path::{Path, PathBuf};

/// Why the targets cannot be placed under the directory.
#[derive(Debug, Clone, PartialEq)]
pub struct RootError {
    /// What is wrong.
    pub what: String,
    /// What to do.
    pub hint: String,
}

impl std::fmt::Display for RootError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

/// The directories [`place`] made, removed (when empty) as it goes out of scope: never one it
/// found there, and never what a run left inside one.
#[derive(Debug, Default)]
pub struct Placed {
    made: Vec<PathBuf>,
}

impl Placed {
    /// The directories made, in the order made.
    pub fn made(&self) -> &[PathBuf] {
        &self.made
    }
}

impl Drop for Placed {
    fn drop(&mut self) {
        // remove_dir takes only an empty directory: what a run left stays, to be seen.
        for dir in self.made.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The directory a target labelled `label` takes under `root`, or why the label cannot name
/// one.
fn under(root: &Path, label: &str) -> Result<PathBuf, RootError> {
    if label == "." || label == ".." || label.contains('/') || label.contains('\0') {
        return Err(RootError {
            what: format!("target label '{}' cannot name a directory under --root", crate::escape::visible(label)),
            hint: "give the target a label without '/' that is not . or .., or run without --root".into(),
        });
    }
    Ok(root.join(label))
}

/// Points every target of `c` at `root`/LABEL; with `make`, makes `root` and those directories
/// (mode 0700) where missing; an S3 target stays. A device target cannot move under a
/// directory and is refused, as is a `root` that is a link or not a directory.
pub fn place(c: &mut Campaign, root: &Path, make: bool) -> Result<Placed, RootError> {
    let shown = |p: &Path| crate::escape::visible(&p.display().to_string()).to_string();
    if let Some(t) = c.targets.iter().find(|t| t.device) {
        return Err(RootError {
            what: format!("target '{}' is a block device, which --root cannot place under a directory", t.label),
            hint: "run without --root, or give that target a dir".into(),
        });
    }
    // A bucket stays where the file names it: a rehearsal reaches it as the campaign would.
    let dirs: Vec<PathBuf> =
        c.targets.iter().filter(|t| !t.s3).map(|t| under(root, &t.label)).collect::<Result<_, _>>()?;
    let mut placed = Placed::default();
    if make {
        for dir in std::iter::once(root).chain(dirs.iter().map(PathBuf::as_path)) {
            if make_dir(dir).map_err(|why| RootError {
                what: format!("--root: cannot use {} as a directory: {why}", shown(dir)),
                hint: "give --root a directory of your own, or a path whose parent exists".into(),
            })? {
                placed.made.push(dir.to_path_buf());
            }
        }
    }
    for (t, dir) in c.targets.iter_mut().filter(|t| !t.s3).zip(dirs) {
        t.dir = dir;
    }
    Ok(placed)
}

/// Makes `dir` (0700) unless it is a directory already; whether it made it. A link is refused,
/// even to a directory: the targets would then lie elsewhere than the command said.
fn make_dir(dir: &Path) -> Result<bool, String> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err("it is a symbolic link".into()),
        Ok(m) if m.is_dir() => Ok(false),
        Ok(_) => Err("it is not a directory".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match std::fs::DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => Ok(true),
                // Another rank of the launch made it first: it is that rank's to remove.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => make_dir(dir),
                Err(e) => Err(e.to_string()),
            }
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const FILE: &str = "[campaign]\nname = \"t\"\n[[target]]\nlabel = \"a\"\ndir = \"/nowhere/a\"\n\
        [[target]]\nlabel = \"b\"\ndir = \"/nowhere/b\"\n[[study]]\nname = \"s\"\nkind = \"run\"\n";

    #[test]
    fn targets_go_under_the_root_made_0700_and_only_what_was_made_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let mut c = crate::campaign::parse_unmounted(Path::new("t.toml"), FILE).unwrap();
        let placed = place(&mut c, &root, true).unwrap();
        assert_eq!(c.targets.iter().map(|t| t.dir.clone()).collect::<Vec<_>>(), [root.join("a"), root.join("b")]);
        assert_eq!(placed.made(), [root.clone(), root.join("a"), root.join("b")]);
        for dir in placed.made() {
            assert_eq!(std::fs::metadata(dir).unwrap().permissions().mode() & 0o777, 0o700, "{dir:?}");
        }
        std::fs::write(root.join("b").join("left"), b"x").unwrap();
        drop(placed);
        // What a run left stays, and the directory holding it.
        assert!(!root.join("a").exists());
        assert!(root.join("b").join("left").exists());

        let mut c = crate::campaign::parse_unmounted(Path::new("t.toml"), FILE).unwrap();
        let placed = place(&mut c, &root, true).unwrap();
        assert_eq!(placed.made(), [root.join("a")], "root and b were there");
        drop(placed);
        assert!(root.join("b").exists());
    }

    #[test]
    fn a_label_that_is_no_directory_name_is_refused() {
        let text = FILE.replace("label = \"a\"", "label = \"../a\"");
        let mut c = crate::campaign::parse_unmounted(Path::new("t.toml"), &text).unwrap();
        let e = place(&mut c, Path::new("/tmp/x"), false).unwrap_err();
        assert!(e.what.contains("cannot name a directory"), "{e:?}");
    }
}
