//! The phases a workload lists, and the one spelling of an enum's names.

use serde::{Deserialize, Serialize};

/// One phase kind; a workload lists them in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Write every transfer (on a bucket: PUT).
    #[value(alias = "put")]
    Write,
    /// Read every transfer (on a bucket: GET).
    #[value(alias = "get")]
    Read,
    /// Write every transfer again, into the file a write made (IOzone's rewrite): recorded
    /// apart from the first write, whose cost includes allocating the blocks.
    Rewrite,
    /// Read every transfer again (IOzone's reread): the page cache's figure when nothing was
    /// dropped in between, recorded apart from the first read.
    Reread,
    /// Each transfer a read or a write, drawn (seeded) with `--read-percent` chances of a read
    /// (IOzone's random mix, with --pattern random), in files a write made.
    Mix,
    /// Ask a bucket for every object's size and ETag (S3 HEAD, warp's STAT), a request per
    /// transfer, in objects a write made.
    #[value(alias = "stat")]
    Head,
    /// List each task's own objects (S3 LIST, a page of up to 1000 keys a request), a listing
    /// per transfer.
    List,
    /// Remove every object a write of this run made (S3 DELETE), a request per transfer.
    Delete,
    /// Make the directories of the metadata tree (one per task, or the shared one).
    #[value(skip)]
    TreeCreate,
    /// Make every directory item (mkdir).
    #[value(skip)]
    DirCreate,
    /// stat every directory item.
    #[value(skip)]
    DirStat,
    /// Remove every directory item (rmdir).
    #[value(skip)]
    DirRemove,
    /// Create every file item (open with O_CREAT|O_EXCL, optionally write, close).
    #[value(skip)]
    FileCreate,
    /// stat every file item.
    #[value(skip)]
    FileStat,
    /// Open, read and close every file item.
    #[value(skip)]
    FileRead,
    /// Remove every file item (unlink).
    #[value(skip)]
    FileRemove,
    /// Remove the directories of the metadata tree, deepest first.
    #[value(skip)]
    TreeRemove,
}

impl Op {
    /// The name used in output and in the store: serde's, the one spelling.
    pub fn name(self) -> String {
        variant_name(&self)
    }

    /// Whether the phase moves data through a data file (else it works on metadata items).
    pub fn moves_data(self) -> bool {
        matches!(self, Op::Write | Op::Read | Op::Rewrite | Op::Reread | Op::Mix | Op::Head | Op::List | Op::Delete)
    }

    /// Whether the phase asks an object store for what only it has (HEAD, LIST, DELETE): it
    /// moves no data, and no engine of files makes it.
    pub fn on_objects_only(self) -> bool {
        matches!(self, Op::Head | Op::List | Op::Delete)
    }

    /// What a data phase does to its file: `Write` for write and rewrite, `Read` for read and
    /// reread (the data path knows only the two).
    pub fn direction(self) -> Op {
        match self {
            Op::Rewrite => Op::Write,
            // They write nothing, and work on objects a write made, as a read does.
            Op::Reread | Op::Head | Op::List | Op::Delete => Op::Read,
            other => other,
        }
    }
}

/// The text serde gives a unit variant, so that an enum's names are spelled in one place.
pub fn variant_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}
