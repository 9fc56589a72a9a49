//! `iosurvey import`: other tools' outputs read whole, every file before any is stored
//! (`iosurvey::import::files`), then stored in one transaction (`Store::import`).

use iosurvey::import::files::{read_all, ImportArgs};
use iosurvey::store::imports::{Became, ImportFile, Outcome};
use iosurvey::store::Store;
use iosurvey::study::Error;
use std::path::Path;

pub(super) fn import(db: &Path, a: &ImportArgs) -> Result<String, Error> {
    let read = read_all(db, a)?;
    let mut store = Store::open(db)?;
    let command_line = super::opening::command_line();
    let files: Vec<ImportFile> = read
        .iter()
        .map(|r| ImportFile {
            file: &r.name,
            digest: r.digest,
            tool: r.tool.name(),
            parsed: &r.parsed,
            command_line: &command_line,
        })
        .collect();
    let outcomes = store.import(&files, iosurvey::units::now_unix())?;
    let mut out = String::new();
    for (r, outcome) in read.iter().zip(outcomes) {
        let name = iosurvey::escape::visible(&r.name);
        out.push_str(&match outcome {
            Outcome::Stored(became) => format!("imported {} file {name} as {}\n", r.parsed.source, said(&became)),
            Outcome::Before { file, became } => format!(
                "{name} was imported before (as {}, {}): nothing stored again\n",
                iosurvey::escape::visible(&file),
                said(&became)
            ),
        });
    }
    Ok(out)
}

/// What a file became, in one line: "IO500 list s1, runs 5-15".
fn said(b: &Became) -> String {
    let spans = iosurvey::analysis::study::spans;
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut parts = Vec::new();
    if let Some(s) = b.list {
        parts.push(format!("IO500 list s{s}"));
    }
    if !b.runs.is_empty() {
        parts.push(format!("run{} {}", plural(b.runs.len()), spans(&b.runs)));
    }
    if let Some(m) = b.matrix {
        parts.push(format!("matrix m{m}"));
    }
    if !b.net.is_empty() {
        parts.push(format!("network figure{} {}", plural(b.net.len()), spans(&b.net)));
    }
    parts.join(", ")
}
