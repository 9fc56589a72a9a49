//! Files the user names for iosurvey to write (`report -o`, `--json`, `--csv`, the Markdown
//! report's charts, batch jobs, man pages). iosurvey runs as root in shared directories, so an output is never
//! written through a link planted in its place, never over the result store or any other
//! SQLite database, and never half: the text goes to a new file beside it, which is then
//! renamed over the name (a rename replaces a link, it never follows one).

use crate::study::common::absolute;
use crate::study::Error;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why `path` may not take an output, if it may not; `store` is the result store's file.
fn refusal(path: &Path, store: &Path) -> Option<&'static str> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        // A new name: only the store itself, not yet made, shares it.
        return (absolute(path) == absolute(store)).then_some("it is the result store (--db)");
    };
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link, and iosurvey never writes an output through a link");
    }
    if !meta.is_file() {
        return Some("it is not a regular file");
    }
    if std::fs::metadata(store).is_ok_and(|s| (s.dev(), s.ino()) == (meta.dev(), meta.ino())) {
        return Some("it is the result store (--db)");
    }
    let mut head = [0u8; 16];
    // Opened as an input is: a FIFO swapped in since the check above must not hang the open.
    let sqlite = crate::input::open(path, crate::input::Links::Refuse)
        .is_ok_and(|(mut f, _)| std::io::Read::read_exact(&mut f, &mut head).is_ok() && &head == SQLITE_MAGIC);
    sqlite.then_some("it is an SQLite database, which an output would destroy")
}

/// What the output given with option `what` holds, for messages.
fn noun(what: &str) -> &'static str {
    match what {
        "-o" => "the report",
        "--slurm" | "--lsf" | "--pbs" => "the batch job",
        "manpages" => "the man page",
        "--json" => "the JSON record",
        "--csv" => "the CSV",
        _ => "the output",
    }
}

/// Refuses, before anything runs, an output that could not or must not be written. `what`
/// names the option ("--json", "-o").
pub fn check(path: &Path, store: &Path, what: &str) -> Result<(), Error> {
    if let Some(why) = refusal(path, store) {
        return Err(Error::refused(
            format!("refusing to write {} to {}: {why}", noun(what), path.display()),
            format!("give {what} a new file name"),
        ));
    }
    crate::env::writable_file(path).map_err(|why| {
        Error::refused(
            format!("cannot write {} to {}: {why}", noun(what), path.display()),
            format!("pick a writable {what} path"),
        )
    })
}

/// Makes sure `path` is a directory of its own for an output's files (the Markdown report's
/// figures, a campaign's batch jobs): made when missing, refused when it is a link (a file written into it would land
/// wherever the link points) or anything but a directory. Checked again before each file; each
/// file in it goes through [`check`] and [`write`], which keep the store safe.
pub fn folder(path: &Path, what: &str, hint: &str) -> Result<(), Error> {
    let refuse = |why: &str| Error::refused(format!("refusing to write {what} into {}: {why}", path.display()), hint);
    // "link/" names what the link points to: its trailing slash would follow the link.
    let path: &Path = &path.components().collect::<PathBuf>();
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(refuse("it is a symbolic link, and iosurvey never writes an output through a link"))
        }
        Ok(meta) if !meta.is_dir() => Err(refuse("it is not a directory")),
        Ok(_) => Ok(()),
        Err(_) => std::fs::create_dir(path)
            .map_err(|e| Error::refused(format!("cannot make {}: {e}", path.display()), "pick a writable place")),
    }
}

/// Removes from a report's figures `folder` the figures an earlier report of the same name
/// wrote and this one does not (`keep`), so that the folder holds only what its report shows:
/// only regular files named as iosurvey names figures (`figure-N.svg`, `figure-N.csv`), never a
/// link or another name. A file that cannot be removed is left, unsaid: it is only stale.
pub fn remove_stale_figures(folder: &Path, keep: &[&str]) {
    let ours = |name: &str| {
        let stem = name.strip_suffix(".svg").or_else(|| name.strip_suffix(".csv"));
        stem.and_then(|s| s.strip_prefix("figure-"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if regular && ours(name) && !keep.contains(&name) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Where the new file an output is being written to is kept until it is renamed over its
/// name: a signal that ends the process in the middle removes it ([`abandon`]).
pub type Pending = Mutex<Option<PathBuf>>;

/// Writes `text` to `path` whole or not at all, after checking it again (the name may have
/// changed since the run began); the new file is `pending` until renamed.
pub fn write(path: &Path, text: &[u8], store: &Path, what: &str, pending: &Pending) -> Result<(), Error> {
    check(path, store, what)?;
    let failed = |e: std::io::Error| {
        Error::failed(
            format!("cannot write {} to {}: {e}", noun(what), path.display()),
            format!("pick a writable {what} path"),
        )
    };
    let name = path.file_name().ok_or_else(|| failed(std::io::ErrorKind::InvalidInput.into()))?;
    let mut temporary = std::ffi::OsString::from(".");
    temporary.push(name);
    temporary.push(format!(".iosurvey-{}.tmp", std::process::id()));
    let temporary = path.with_file_name(temporary);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(crate::sys::fs::O_NOFOLLOW | crate::sys::fs::O_CLOEXEC)
        .mode(0o644)
        .open(&temporary)
        .and_then(|mut f| {
            // Ours from here until renamed: a signal that ends the process removes it.
            *held(pending) = Some(temporary.clone());
            f.write_all(text)?;
            f.sync_data()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    let ours = held(pending).take().is_some();
    if let Err(e) = written {
        // create_new refused a name already taken: that name is not ours to remove.
        if ours {
            let _ = std::fs::remove_file(&temporary);
        }
        return Err(failed(e));
    }
    Ok(())
}

/// The new file an output is being written to.
fn held(pending: &Pending) -> std::sync::MutexGuard<'_, Option<PathBuf>> {
    pending.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes an output's new file that a signal ends the process in the middle of: the old
/// output stays whole, and nothing of iosurvey's is left beside it.
pub fn abandon(pending: &Pending) {
    if let Some(path) = held(pending).take() {
        let _ = std::fs::remove_file(path);
    }
}

/// Whether `path` names standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str().as_bytes() == b"-"
}

/// What the Markdown report's folder holds, and how to free its name, for refusals.
const FIGURES: &str = "the report's figures";
const FIGURES_HINT: &str = "give -o a file name whose NAME_figures is free or a folder of its own";

/// Writes a report's blocks to `output`: one HTML page, or Markdown with its figures in a
/// folder of their own beside it; the new file being written is `pending` until renamed.
pub fn report(
    db: &Path,
    (output, format): (&Path, super::Format),
    blocks: &[super::paper::Block],
    counted: &str,
    pending: &Pending,
) -> Result<String, Error> {
    let write = |path: &Path, text: &str| write(path, text.as_bytes(), db, "-o", pending);
    if format == super::Format::Md {
        // The figures go in a folder of their own beside the report, named after it, so that a
        // report never scatters files into the directory it was written from.
        let stem = output.file_stem().map_or("report".into(), |s| s.to_string_lossy().into_owned());
        let named = format!("{stem}_figures");
        let (text, files) = super::document(blocks, &named);
        let dir = output.with_file_name(&named);
        folder(&dir, FIGURES, FIGURES_HINT)?;
        // Every file's name is checked before any is written.
        for (name, _) in &files {
            check(&dir.join(name), db, "-o")?;
        }
        for (name, contents) in &files {
            folder(&dir, FIGURES, FIGURES_HINT)?;
            write(&dir.join(name), contents)?;
        }
        write(output, &text)?;
        let keep: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
        remove_stale_figures(&dir, &keep);
    } else {
        write(output, &super::page(blocks))?;
    }
    Ok(format!("report of {counted} written to {}\n", crate::escape::visible(&output.display().to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_stores_and_databases_are_refused_a_write_is_whole_and_an_abandoned_one_removed() {
        let pending = Pending::default();
        let write = |path: &Path, text: &[u8], store: &Path, what: &str| write(path, text, store, what, &pending);
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("s.db");
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, b"victim").unwrap();
        std::os::unix::fs::symlink(&victim, tmp.path().join("link")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), tmp.path().join("dangling")).unwrap();
        std::fs::hard_link(&victim, tmp.path().join("same")).unwrap();
        let mut db = SQLITE_MAGIC.to_vec();
        db.extend_from_slice(&[0; 100]);
        std::fs::write(tmp.path().join("other.db"), &db).unwrap();
        assert_eq!(refusal(&store, &store), Some("it is the result store (--db)"), "not made yet");
        assert!(refusal(&tmp.path().join("./s.db"), &store).is_some());
        std::fs::write(&store, &db).unwrap();
        assert_eq!(refusal(&store, &store), Some("it is the result store (--db)"));
        assert!(refusal(&tmp.path().join("link"), &store).unwrap().contains("symbolic link"));
        assert!(refusal(&tmp.path().join("dangling"), &store).unwrap().contains("symbolic link"));
        assert!(refusal(&tmp.path().join("other.db"), &store).unwrap().contains("SQLite"));
        assert!(refusal(tmp.path(), &store).unwrap().contains("not a regular file"));
        assert_eq!(refusal(&tmp.path().join("new.html"), &store), None);
        assert_eq!(refusal(&victim, &store), None, "a plain file of text may be replaced");
        assert!(write(&tmp.path().join("link"), b"x", &store, "-o").is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"victim", "nothing written through the link");
        assert!(write(&tmp.path().join("same"), b"new", &store, "-o").is_ok());
        assert_eq!(std::fs::read(&victim).unwrap(), b"victim", "a rename, so another name of the file is untouched");
        assert_eq!(std::fs::read(tmp.path().join("same")).unwrap(), b"new");
        let mut names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert!(names.iter().all(|n| !n.to_string_lossy().contains(".tmp")), "{names:?}");
        let tmp = tempfile::tempdir().unwrap();
        let half = tmp.path().join(".r.html.iosurvey-1.tmp");
        std::fs::write(&half, b"half").unwrap();
        *held(&pending) = Some(half.clone());
        abandon(&pending);
        assert!(!half.exists());
        abandon(&pending);
        // A name someone else holds where the new file would go: refused, and left as it was.
        let out = tmp.path().join("r.html");
        let theirs = tmp.path().join(format!(".r.html.iosurvey-{}.tmp", std::process::id()));
        std::fs::write(&theirs, b"theirs").unwrap();
        assert!(write(&out, b"x", &tmp.path().join("s.db"), "-o").is_err());
        assert_eq!(std::fs::read(&theirs).unwrap(), b"theirs");
        assert!(!out.exists() && held(&pending).is_none());
    }
}
