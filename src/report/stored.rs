//! The commands that read the store and lay out what it holds: `ls`, `show`, `compare` and
//! `export`, their flags (clap derives, as the studies' own) and what each makes of the
//! store. The command renders a [`Kept`] in its format and prints or writes it, and says the
//! rows a reader left out ([`Store::unreadable`]).

use super::Format;
use crate::analysis::{self, Report};
use crate::record::{GroupId, GroupKind, RunRecord};
use crate::store::Store;
use crate::study::Error;
use std::path::PathBuf;

/// What a command made of the store: tables to render in its format, or a JSON document.
pub enum Kept {
    /// Tables.
    Report(Report),
    /// A JSON document, whole.
    Json(String),
}

/// `ls`'s flags.
#[derive(clap::Args)]
pub struct LsArgs {
    /// Print the rows as JSON instead of a table: every run, unless --limit.
    #[arg(long)]
    pub json: bool,
    /// Only the runs with this --label.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// The newest N runs (the table's default: the newest 50).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub limit: Option<usize>,
    /// Every run in the table, however many.
    #[arg(long)]
    pub all: bool,
    /// Lay the table out as text, json, csv or md.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Lines whole, however wide, where the text table otherwise fits the terminal
    /// (COLUMNS, else the terminal's width).
    #[arg(long)]
    pub wide: bool,
}

/// `compare`'s flags.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// Each side: a run id (12), a survey (s3), a sweep (w2), or a --label; or two matrices
    /// (m2 m1), their findings side by side.
    #[arg(required = true, num_args = 2.., value_name = "SIDE")]
    pub sides: Vec<String>,
    /// Lay the tables out as text, json, csv or md.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Lines whole, however wide, where the text tables otherwise fit the terminal
    /// (COLUMNS, else the terminal's width).
    #[arg(long)]
    pub wide: bool,
}

/// `export`'s flags.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Runs (12), surveys (s3), sweeps (w2) or labels, as compare takes them; none: every
    /// run.
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// csv (a row per phase) or ior-json (IOR's -O summaryFormat=JSON document).
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `show`'s flags.
#[derive(clap::Args)]
pub struct ShowArgs {
    /// A run id (7), a survey (s3), a sweep (w2), a matrix (m1) or a campaign (c1, its
    /// status), as `iosurvey ls` prints them.
    #[arg(value_parser = shown)]
    pub id: Shown,
    /// Print the whole record as JSON.
    #[arg(long)]
    pub json: bool,
    /// Lay the tables out as text, json, csv or md.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// How `export` writes runs.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    /// A row per phase.
    Csv,
    /// IOR's JSON document, a test per run.
    IorJson,
}

/// What `show` shows, by the number `ls` gives it.
#[derive(Clone, Copy, Debug)]
pub enum Shown {
    /// A run.
    Run(i64),
    /// A survey (sN).
    Survey(i64),
    /// A sweep (wN).
    Sweep(i64),
    /// A matrix (mN).
    Matrix(i64),
    /// A campaign version (cN).
    Campaign(i64),
    /// A target survey (tN).
    Targets(i64),
}

/// Reads what `show` is to show: `7`, `s3`, `w2`, `m1`, `c1` or `t1`.
pub fn shown(s: &str) -> Result<Shown, crate::study::hint::Refusal> {
    let (make, digits): (fn(i64) -> Shown, &str) = match s.as_bytes().first() {
        Some(b's') => (Shown::Survey, &s[1..]),
        Some(b'w') => (Shown::Sweep, &s[1..]),
        Some(b'm') => (Shown::Matrix, &s[1..]),
        Some(b'c') => (Shown::Campaign, &s[1..]),
        Some(b't') => (Shown::Targets, &s[1..]),
        _ => (Shown::Run, s),
    };
    digits.parse().map(make).map_err(|_| {
        crate::study::hint::Refusal::say(
            format!(
                "'{}' is not a run id (7), a survey (s3), a sweep (w2), a matrix (m1), a campaign (c1) or a target survey (t1)",
                crate::escape::visible(s)
            ),
            "'iosurvey ls' lists them",
        )
    })
}

/// The runs a table of `ls` lists unless given --limit or --all: the newest, as many as a
/// reader takes in.
const LS_PAGE: usize = 50;

/// `ls`: the newest runs (a page of them for reading, unless --all or --limit), the matrices
/// and the campaigns.
pub fn ls(store: &Store, a: &LsArgs) -> Result<Kept, Error> {
    let label = a.label.as_deref();
    // What scripts read (--json, the array of runs it has always been; csv and json
    // tables) stays whole unless --limit: a page of it would look whole. A table for
    // reading shows the newest LS_PAGE, and says how many more there are: no one
    // reads 100,000 rows, and laying them out took seconds.
    let read = !a.json && matches!(a.format, Format::Text | Format::Md | Format::Html);
    let limit = match (a.all, read) {
        (true, _) => None,
        (false, false) => a.limit,
        (false, true) => Some(a.limit.unwrap_or(LS_PAGE)),
    };
    let rows = store.newest(label, limit)?;
    let mut matrices = store.matrices()?;
    matrices.retain(|m| label.is_none() || m.label.as_deref() == label);
    // `show mN --json` gives a matrix.
    if a.json {
        return to_json(&rows).map(Kept::Json);
    }
    let mut listed = analysis::list(&rows);
    let unlisted = match limit {
        Some(n) if rows.len() == n => store.count(label)? - n,
        _ => 0,
    };
    if unlisted > 0 {
        listed.tables[0]
            .notes
            .push(format!("{unlisted} older runs not shown: --limit N lists the newest N, --all every one"));
    }
    let campaigns = analysis::campaign::list(&store.campaigns()?);
    Ok(Kept::Report(listed.and(analysis::matrix::list(&matrices)).and(campaigns)))
}

/// `show`: one run in full, or the table of a survey, a sweep, a matrix or a target survey.
pub fn show(store: &Store, id: Shown, json: bool) -> Result<Kept, Error> {
    let (ids, group) = match id {
        Shown::Run(id) => {
            let record = store.load(id)?;
            if json {
                return to_json(&record).map(Kept::Json);
            }
            let ceilings = store.net_within(&record.hosts)?;
            return Ok(Kept::Report(analysis::run(&record).and(analysis::against_ceiling(&record, &ceilings))));
        }
        Shown::Matrix(n) => {
            let m = store.load_matrix(n)?;
            return match json {
                true => to_json(&m).map(Kept::Json),
                false => Ok(Kept::Report(analysis::matrix::matrix(&m))),
            };
        }
        Shown::Survey(n) => (group_ids(store, id)?, format!("s{n}")),
        Shown::Campaign(n) => (group_ids(store, id)?, format!("c{n}")),
        Shown::Sweep(n) => (group_ids(store, id)?, format!("w{n}")),
        Shown::Targets(n) => (group_ids(store, id)?, format!("t{n}")),
    };
    if ids.is_empty() {
        return Err(Error::refused(
            format!("no runs of {group} in the store"),
            "list what is stored with 'iosurvey ls'",
        ));
    }
    let records = store.load_all(&ids)?;
    Ok(match id {
        _ if json => Kept::Json(to_json(&records)?),
        Shown::Survey(n) => Kept::Report(analysis::survey(n, &records)),
        Shown::Targets(n) => Kept::Report(analysis::targets::report(n, &records)),
        _ => Kept::Report(analysis::sweep(records[0].sweep_id, &records)),
    })
}

/// The ids of the runs a run, survey or sweep id names.
fn group_ids(store: &Store, id: Shown) -> Result<Vec<i64>, Error> {
    let group = |kind, number| store.group_runs(GroupId { kind, number });
    Ok(match id {
        Shown::Run(id) => vec![id],
        Shown::Survey(n) => group(GroupKind::Survey, n)?,
        Shown::Sweep(n) => group(GroupKind::Sweep, n)?,
        Shown::Matrix(n) => group(GroupKind::Matrix, n)?,
        Shown::Campaign(n) => group(GroupKind::Campaign, n)?,
        Shown::Targets(n) => group(GroupKind::Targets, n)?,
    })
}

/// The ids of the runs a side of `compare` names: a run, a survey's or a sweep's by id, else
/// every run with that label (then `true`: read as every run is, one unreadable left out).
pub fn side_ids(store: &Store, name: &str) -> Result<(Vec<i64>, bool), Error> {
    let (ids, every) = match shown(name) {
        Ok(id) => (group_ids(store, id)?, false),
        Err(_) => (store.labelled(name)?, true),
    };
    if ids.is_empty() {
        return Err(Error::refused(
            format!("no runs for '{name}' in the store"),
            "give a run id (12), a survey (s3), a sweep (w2) or a --label that 'iosurvey ls' lists",
        ));
    }
    Ok((ids, every))
}

/// The runs a side of `compare` names (see [`side_ids`]).
fn side(store: &Store, name: &str) -> Result<Vec<RunRecord>, Error> {
    let (ids, every) = side_ids(store, name)?;
    // A label's runs are read as every run is: one unreadable run is left out, said once.
    Ok(if every { store.load_readable(&ids)? } else { store.load_all(&ids)? })
}

/// The matrix a name (`m2`) names, if it names one.
pub fn matrix_id(name: &str) -> Option<i64> {
    match shown(name) {
        Ok(Shown::Matrix(id)) => Some(id),
        _ => None,
    }
}

/// `export`: the runs named (every one when none is), as CSV or IOR's JSON.
pub fn export(store: &Store, names: &[String], format: ExportFormat) -> Result<String, Error> {
    let mut runs: Vec<RunRecord> = Vec::new();
    for name in names {
        runs.extend(side(store, name)?);
    }
    if names.is_empty() {
        runs = store.load_readable(&store.select(&Default::default())?)?;
    }
    runs.sort_by_key(|r| r.id);
    runs.dedup_by_key(|r| r.id);
    Ok(match format {
        ExportFormat::Csv => super::export::phases_csv(&runs),
        ExportFormat::IorJson => {
            if let Some(r) = runs.iter().find(|r| r.workload.data().is_none()) {
                return Err(Error::refused(
                    format!("run {} is a metadata run: IOR's JSON holds data runs", r.id.unwrap_or_default()),
                    "name data runs, or use --format csv",
                ));
            }
            crate::compat::layout::ior::of_runs(&runs)
        }
    })
}

/// `compare`: two sides like with like, or with more, which is best for each I/O pattern;
/// two matrices, their findings side by side.
pub fn compare(store: &Store, names: &[String]) -> Result<Report, Error> {
    let matrices: Vec<i64> = names.iter().filter_map(|n| matrix_id(n)).collect();
    match (matrices.len(), names.len()) {
        (0, _) => {}
        (2, 2) => {
            let (a, b) = (store.load_matrix(matrices[0])?, store.load_matrix(matrices[1])?);
            return Ok(analysis::matrix::compare(&a, &b));
        }
        _ => {
            return Err(Error::refused(
                "a matrix is compared with one other matrix only",
                "give two matrices, e.g. 'iosurvey compare m2 m1'",
            ))
        }
    }
    let runs = names.iter().map(|n| side(store, n)).collect::<Result<Vec<_>, _>>()?;
    // A side of imported runs says so wherever its name is shown.
    let names: Vec<String> = names
        .iter()
        .zip(&runs)
        .map(|(name, runs)| {
            let mut tools: Vec<&str> =
                runs.iter().filter_map(|r| crate::record::imported_from(&r.provenance)).collect();
            tools.sort_unstable();
            tools.dedup();
            match tools.is_empty() {
                true => name.clone(),
                false => format!("{name} (imported:{})", tools.join(", ")),
            }
        })
        .collect();
    let sides: Vec<analysis::Side> =
        names.iter().zip(&runs).map(|(name, runs)| analysis::Side { name, runs }).collect();
    // Two sides: the table's verdict column says each verdict; a pick per I/O pattern would
    // say them again.
    Ok(match sides.as_slice() {
        [a, b] => analysis::compare(*a, *b),
        _ => analysis::recommend(&sides),
    })
}

/// `engines`: each engine of the registry, whether this machine allows it, and what it is.
pub fn engines(json: bool, all: bool) -> Result<String, Error> {
    let states = crate::engine::backends::states(all);
    if json {
        return to_json(&states);
    }
    Ok(states
        .iter()
        .map(|e| {
            let state = e.reason.as_ref().map_or("available".to_string(), |why| format!("NOT available: {why}"));
            format!("{:<9} {:<24} {}\n", e.name, state, e.about)
        })
        .collect())
}

/// A value as pretty JSON, made safe for a terminal, with a newline.
pub fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string_pretty(v)
        .map(|s| crate::escape::json(s) + "\n")
        .map_err(|e| Error::failed(e, "report this as a bug"))
}
