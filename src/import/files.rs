//! The files `iosurvey import` names, each read whole and parsed, every one before the
//! store takes any: a tool's output, an IO500 result directory, or an mlpstorage one (its
//! DLIO summaries). Nothing here writes.

use super::{ImportError, Imported, Tool};
use crate::study::Error;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// `import`'s flags.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The files: a tool's output, or an IO500 or mlpstorage result directory.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The name of the system the files measured, as `run --label` gives one.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// The tool that made every file (by default read from each file).
    #[arg(long, value_enum)]
    pub tool: Option<Tool>,
}

/// The largest file read: far above any tool's summary, far below what memory holds.
const MAX_BYTES: u64 = 256 << 20;

/// The files of an IO500 result directory, by the name IO500 gives each.
const IO500_SUMMARY: &str = "result_summary.txt";

/// How deep below a named directory mlpstorage keeps its summaries:
/// `training/MODEL/run/YYYYMMDD_HHMMSS/summary.json`.
const MLPSTORAGE_DEPTH: usize = 5;

/// The DLIO summaries of an mlpstorage result directory (each `training/.../*summary.json`
/// at most five levels below it, in name order), or `path` itself when it is a file, an IO500 result
/// directory or holds none.
fn mlpstorage_summaries(path: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let p = e.path();
            if kind.is_dir() && depth > 0 {
                walk(&p, depth - 1, found);
            } else if kind.is_file() && is_mlpstorage_summary(&p) {
                found.push(p);
            }
        }
    }
    if !path.is_dir() || path.join(IO500_SUMMARY).is_file() {
        return vec![path.to_path_buf()];
    }
    let mut found = Vec::new();
    walk(path, MLPSTORAGE_DEPTH, &mut found);
    found.sort();
    if found.is_empty() {
        found.push(path.to_path_buf());
    }
    found
}

/// A DLIO summary where mlpstorage keeps one: `*summary.json` below a `training` directory
/// (another tool's JSON whose name ends the same way, elsewhere, is not one).
fn is_mlpstorage_summary(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().ends_with("summary.json"))
        && path.components().any(|c| c.as_os_str() == "training")
}

/// One file read and parsed.
pub struct Read {
    /// The name it was given by.
    pub name: String,
    /// The tool that wrote it.
    pub tool: Tool,
    /// Its bytes' digest, by which a file imported before is known.
    pub digest: u64,
    /// What it holds.
    pub parsed: Imported,
}

/// Every file `a` names read and parsed, in order; the first that cannot be is refused with
/// its line and what was expected there. `db` is the store, which is never a file to import.
pub fn read_all(db: &Path, a: &ImportArgs) -> Result<Vec<Read>, Error> {
    if let Some(label) = &a.label {
        if !crate::record::is_label(label) {
            return Err(Error::refused(
                format!("--label '{label}' is not a name"),
                "give 1 to 64 printable characters",
            ));
        }
    }
    let files: Vec<PathBuf> = a.files.iter().flat_map(|f| mlpstorage_summaries(f)).collect();
    files.iter().map(|f| read_one(f, db, a)).collect()
}

/// The failure of a file that is not what it should be: its line and what was expected.
fn bad(e: ImportError) -> Error {
    Error::refused(
        e,
        "give the tool's whole output as it wrote it (--tool if it is not recognised); nothing was stored",
    )
}

fn read_one(path: &Path, db: &Path, a: &ImportArgs) -> Result<Read, Error> {
    let name = path.display().to_string();
    let refuse = |why: &str, hint: &str| Error::refused(format!("cannot import {name}: {why}"), hint);
    let meta =
        std::fs::metadata(path).map_err(|e| refuse(&e.to_string(), "name a file that exists and you may read"))?;
    if std::fs::metadata(db).is_ok_and(|s| (s.dev(), s.ino()) == (meta.dev(), meta.ino())) {
        return Err(refuse("it is the result store (--db)", "name a tool's output, not the store"));
    }
    if meta.is_dir() {
        return read_io500(path, &name, a);
    }
    if !meta.is_file() {
        return Err(refuse("not a regular file or a directory", "name a tool's output file"));
    }
    let (text, bytes) = read_text(path, &name)?;
    let tool = match a.tool.or_else(|| super::detect(&name, &text)) {
        Some(t) => t,
        None => return Err(bad(ImportError {
            file: name,
            line: 1,
            expected:
                "the output of ior, mdtest, iozone, fio, elbencho, iperf3, io500 or dlio, which this file does not look like"
                    .into(),
        })),
    };
    let parsed = match tool {
        // mlpstorage's layout names the model of a summary: `training/MODEL/run/...`.
        Tool::Dlio => super::dlio::parse(&text, super::dlio::model_of(path).as_deref()),
        tool => super::parse(tool, &text),
    };
    let parsed = parsed.map_err(|b| bad(ImportError::of(&name, b)))?;
    let parsed = parsed.named(&name, a.label.as_deref());
    Ok(Read { digest: super::digest(&bytes), name, tool, parsed })
}

/// A file's bytes and its text, refused when too large or not UTF-8 (at the line where it
/// stops being text).
fn read_text(path: &Path, name: &str) -> Result<(String, Vec<u8>), Error> {
    let refuse = |why: String| Error::refused(format!("cannot import {name}: {why}"), "name a tool's output file");
    use crate::input::{read, InputError, Links};
    let bytes = match read(path, MAX_BYTES, Links::Follow) {
        Ok((bytes, _)) => bytes,
        Err(InputError::TooLarge { size, .. }) => {
            return Err(refuse(format!("{size} bytes, more than any tool's output iosurvey reads ({MAX_BYTES})")))
        }
        Err(e) => return Err(refuse(e.to_string())),
    };
    match String::from_utf8(bytes.clone()) {
        Ok(text) => Ok((text, bytes)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Err(bad(ImportError {
                file: name.to_string(),
                line,
                expected: "text (UTF-8), found bytes that are not".into(),
            }))
        }
    }
}

/// An IO500 result directory: its result_summary.txt, its configuration (the first *.ini in
/// name order) and result.txt.
fn read_io500(dir: &Path, name: &str, a: &ImportArgs) -> Result<Read, Error> {
    if a.tool.is_some_and(|t| t != Tool::Io500) {
        return Err(Error::refused(
            format!(
                "cannot import {name}: a directory is an IO500 result directory, not {} output",
                a.tool.map_or("", |t| t.name())
            ),
            "name the tool's output file, or leave --tool out",
        ));
    }
    let summary = dir.join(IO500_SUMMARY);
    if !summary.is_file() {
        return Err(Error::refused(
            format!("cannot import {name}: a directory, but not an IO500 result directory (it has no {IO500_SUMMARY}) nor an mlpstorage one (no summary.json)"),
            "name an IO500 or mlpstorage result directory, or a tool's output file",
        ));
    }
    let mut inis: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ini"))
                .collect()
        })
        .unwrap_or_default();
    inis.sort();
    let optional = |p: Option<&PathBuf>| -> Result<Option<(String, Vec<u8>)>, Error> {
        p.filter(|p| p.is_file()).map(|p| read_text(p, &p.display().to_string())).transpose()
    };
    let config = optional(inis.first())?;
    let result = optional(Some(&dir.join("result.txt")))?;
    let summary_name = summary.display().to_string();
    let (text, bytes) = read_text(&summary, &summary_name)?;
    let parsed =
        super::io500::parse(&text, config.as_ref().map(|c| c.0.as_str()), result.as_ref().map(|r| r.0.as_str()))
            .map_err(|b| bad(ImportError::of(&summary_name, b)))?
            .named(name, a.label.as_deref());
    // The directory's digest is its files', in one order, each ended by a byte no text has.
    let mut all = bytes;
    for part in [config, result].into_iter().flatten() {
        all.push(0);
        all.extend(part.1);
    }
    Ok(Read { name: name.to_string(), tool: Tool::Io500, digest: super::digest(&all), parsed })
}
