//! A campaign file read for a command: its owner and mode checked first (a campaign runs its
//! hooks as the user who runs it), then parsed, its targets placed under `--root` when asked;
//! or a stored version (`cN`) read back as that version stored it.

use super::ask::Scale;
use super::{root, Campaign};
use crate::record::{GroupId, GroupKind};
use crate::store::Store;
use crate::study::Error;
use std::path::{Path, PathBuf};

/// Reads the file after checking who may have written it: as root, a file (or its
/// directory) that someone else could change is refused.
pub fn read(path: &Path) -> Result<Campaign, Error> {
    read_placed(path, None).map(|(c, _)| c)
}

/// As [`read`], each target placed under `root` when given (made there, and removed when the
/// returned guard goes, if iosurvey made it); the file's own dirs need not exist then.
pub fn read_placed(path: &Path, root: Option<&Path>) -> Result<(Campaign, Option<root::Placed>), Error> {
    let text = checked_text(path)?;
    let parsed = match root {
        None => super::parse(path, &text),
        Some(_) => super::parse_unmounted(path, &text),
    };
    let mut c = parsed.map_err(|e| Error::refused(&e, &e.hint))?;
    let placed = match root {
        Some(root) => Some(root::place(&mut c, root, true).map_err(|e| Error::refused(&e, &e.hint))?),
        None => None,
    };
    Ok((c, placed))
}

/// The file's text, read once through the descriptor whose owner and mode are checked.
fn checked_text(path: &Path) -> Result<String, Error> {
    use crate::input::{read_text, InputError, Links};
    use std::os::unix::fs::MetadataExt;
    let shown = crate::escape::visible(&path.display().to_string()).to_string();
    let (text, meta) = read_text(path, u64::MAX, Links::Refuse).map_err(|e| match e {
        InputError::NotRegular(what) => Error::refused(
            format!("{shown} is not a regular file ({what})"),
            "give the campaign file itself, not a link or a directory",
        ),
        InputError::Io(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            Error::refused(format!("cannot read {shown}: {e}"), "give a campaign file in UTF-8")
        }
        e => Error::refused(format!("cannot read {shown}: {e}"), "give the path of a campaign file"),
    })?;
    if crate::target::dir::euid() != 0 {
        return Ok(text);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    for (what, m) in
        [(shown.clone(), Some(meta)), (format!("its directory {}", dir.display()), std::fs::metadata(dir).ok())]
    {
        let Some(m) = m else { continue };
        // A sticky directory (/tmp) lets others add files but not replace this one.
        let sticky = m.is_dir() && m.mode() & 0o1000 != 0;
        if m.uid() != 0 || (m.mode() & 0o022 != 0 && !sticky) {
            return Err(Error::refused(
                format!("{what} can be changed by a user other than root, and a campaign runs its hooks as root"),
                "chown root and chmod go-w the file and its directory",
            ));
        }
    }
    Ok(text)
}

/// A campaign a command names, read.
pub struct Resolved {
    /// The campaign.
    pub campaign: Campaign,
    /// The scale a stored version ran at.
    pub scale: Option<Scale>,
    /// The line that names the keys a stored version's text holds and this version skipped.
    pub warning: Option<String>,
}

/// The campaign a name stands for: `cN` (the file as that version stored it, read leniently,
/// and the scale it ran at) or a file.
pub fn resolve(store: &Store, which: &str) -> Result<Resolved, Error> {
    match which.strip_prefix('c').and_then(|n| n.parse::<i64>().ok()) {
        Some(n) if !Path::new(which).exists() => {
            let row = store.group(GroupId { kind: GroupKind::Campaign, number: n })?;
            let spec: serde_json::Value = serde_json::from_str(&row.spec).unwrap_or_default();
            let text = spec["text"].as_str().unwrap_or_default();
            let path = PathBuf::from(spec["file"].as_str().unwrap_or(which));
            let stored = super::parse_stored(&path, text).map_err(|e| Error::refused(&e, &e.hint))?;
            let warning = stored.warning(&format!("c{n}"));
            let scale = crate::store::campaigns::stored_scale(&spec).map(Scale);
            Ok(Resolved { campaign: stored.campaign, scale, warning })
        }
        _ => Ok(Resolved { campaign: read(Path::new(which))?, scale: None, warning: None }),
    }
}
