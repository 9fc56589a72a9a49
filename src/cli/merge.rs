//! `iosurvey merge A.db B.db --into eval.db`: the stores of several jobs merged into one
//! (`Store::merge`), every input in one transaction, none of them written.

use iosurvey::store::merge::Merged;
use iosurvey::store::{Store, StoreError};
use iosurvey::study::Error;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub(super) struct MergeArgs {
    /// The stores to merge (each job's --db); they are read, never written.
    #[arg(required = true, value_name = "STORE")]
    stores: Vec<PathBuf>,
    /// The store they are merged into; made when missing. Never a symbolic link, never one
    /// of the inputs.
    #[arg(long, value_name = "PATH")]
    into: PathBuf,
}

pub(super) fn merge(a: &MergeArgs) -> Result<String, Error> {
    let into = std::fs::symlink_metadata(&a.into).ok();
    for input in &a.stores {
        check_input(input, &a.into, into.as_ref())?;
    }
    let mut store = Store::open(&a.into).map_err(|e| match e {
        StoreError::BadPath { path, why } => Error::refused(
            format!("cannot merge into {}: {why}", path.display()),
            "give --into a regular file, or a new name in a directory you may write to",
        ),
        e => e.into(),
    })?;
    // Made by this command: a refused or interrupted merge leaves no store behind it, as none
    // was there.
    let made = match into {
        None => std::fs::metadata(&a.into).ok().map(|m| (m.dev(), m.ino())),
        Some(_) => None,
    };
    if made.is_some() {
        *made_here() = Some(a.into.clone());
    }
    let merged = store.merge(&a.stores);
    made_here().take();
    match merged {
        Ok(all) => Ok(a.stores.iter().zip(all).map(|(input, m)| said(input, &m)).collect()),
        Err(e) => {
            drop(store);
            let now = std::fs::symlink_metadata(&a.into).ok().map(|m| (m.dev(), m.ino()));
            if made.is_some() && now == made {
                let _ = std::fs::remove_file(&a.into);
            }
            Err(e.into())
        }
    }
}

/// An input refused before anything is made: missing, a link, not a file, or the
/// destination itself (by device and inode, whatever the path says).
fn check_input(input: &Path, into: &Path, there: Option<&std::fs::Metadata>) -> Result<(), Error> {
    let name = input.display();
    let refuse = |why: &str, hint: &str| Error::refused(format!("cannot merge {name}: {why}"), hint);
    let meta = std::fs::symlink_metadata(input).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => refuse("it does not exist", "name a store that exists (each job's --db)"),
        _ => refuse(&e.to_string(), "name a store you may read"),
    })?;
    if meta.file_type().is_symlink() {
        return Err(refuse("a symbolic link, never followed", "name the store itself"));
    }
    if !meta.is_file() {
        return Err(refuse("not a regular file", "name a store iosurvey made (the --db of its commands)"));
    }
    if there.is_some_and(|t| (t.dev(), t.ino()) == (meta.dev(), meta.ino())) {
        return Err(refuse(
            &format!("it is the destination (--into {}) as well", into.display()),
            "give --into a new file, or a store that is not one of the inputs",
        ));
    }
    Ok(())
}

/// One line for an input: "merged B.db: 12 runs, 3 groups (s1 -> s4, w1 -> w2), 2 already
/// there".
fn said(input: &Path, m: &Merged) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![count(m.runs, "run"), count(m.groups, "group")];
    if !m.renamed.is_empty() {
        let renamed: Vec<String> = m.renamed.iter().map(|(from, to)| format!("{from} -> {to}")).collect();
        parts[1].push_str(&format!(" ({})", renamed.join(", ")));
    }
    for (n, what) in [(m.net, "network figure"), (m.hooks, "hook"), (m.imports, "import")] {
        if n > 0 {
            parts.push(count(n, what));
        }
    }
    parts.push(format!("{} already there", m.already));
    let mut line = format!("merged {}: {}", iosurvey::escape::visible(&input.display().to_string()), parts.join(", "));
    if !m.running.is_empty() {
        line.push_str(&format!("; still running in that store, merged as they are: {}", m.running.join(", ")));
    }
    line + "\n"
}

/// The destination this command made, while the merge into it goes on (see
/// `process::MERGING`).
fn made_here() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    super::process::MERGING.lock().unwrap_or_else(|p| p.into_inner())
}

/// For a signal that ends a merge: its private copies removed, and the destination it made
/// (with its journal: the transaction was never committed). Whether a merge was going on.
pub(super) fn abandon() -> bool {
    let copies = iosurvey::store::merge::abandon();
    let made = made_here().take();
    if let Some(path) = &made {
        for end in ["", "-journal"] {
            let mut name = path.as_os_str().to_owned();
            name.push(end);
            let _ = std::fs::remove_file(name);
        }
    }
    copies || made.is_some()
}
