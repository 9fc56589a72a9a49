//! `report`'s flags and the runs and matrices it holds: those named by id or label (every
//! one by default), chosen in the store by --target, --since and --until, laid out as the
//! report's blocks. The command writes them, as it writes every output.

use super::paper::Block;
use super::stored::{matrix_id, side_ids};
use super::units::Units;
use super::Format;
use crate::record::{MatrixRecord, RunRecord};
use crate::store::Store;
use crate::study::Error;
use std::path::{Path, PathBuf};

/// `report`'s flags.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// Where to write the report (an HTML page, or Markdown with --format md).
    #[arg(long, short = 'o', value_name = "FILE", required_unless_present = "reference")]
    pub output: Option<PathBuf>,
    /// Set the runs beside a published system's figures (`--reference list` lists them).
    #[arg(long, value_name = "NAME")]
    pub reference: Option<String>,
    /// A campaign's report (c2, as `ls` lists it): a section per study drawn as it varies,
    /// the points not measured, and the campaign file in an appendix; with --reference,
    /// the published system's points on the matching studies' charts.
    #[arg(long, value_name = "cN", conflicts_with_all = ["label", "ids", "target", "since", "until"])]
    pub campaign: Option<String>,
    /// html (one self-contained page) or md (Markdown; each figure as SVG and CSV in a
    /// folder NAME_figures beside it).
    #[arg(long, default_value = "html", value_parser = report_format())]
    pub format: Format,
    /// Rates in mib (MiB/s, 2^20 bytes) or gb (GB/s, 10^9 bytes, as vendors' papers).
    #[arg(long, value_enum, default_value = "mib")]
    pub units: Units,
    /// Which runs.
    #[command(flatten)]
    pub filter: ReportFilter,
}

/// Which stored runs a report holds.
#[derive(clap::Args)]
pub struct ReportFilter {
    /// Only the runs with this label (repeatable).
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Only these runs, surveys (s3) or sweeps (w2); with no label or id, every run.
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Only the runs whose target path holds TEXT.
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only the runs started on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = crate::units::parse_date)]
    pub since: Option<i64>,
    /// Only the runs started on or before this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = crate::units::parse_date)]
    pub until: Option<i64>,
}

/// The formats a report is written in: the tables-only ones are for `show` and `compare`.
fn report_format() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["html", "md"]).map(|name| match name.as_str() {
        "md" => Format::Md,
        _ => Format::Html,
    })
}

/// Refuses, before the store is read, a report that cannot be written: a format that is no
/// document's, a published system there is none of, days in the wrong order.
pub fn check(a: &ReportArgs) -> Result<(), Error> {
    if !matches!(a.format, Format::Html | Format::Md) {
        return Err(Error::refused("a report is written as html or md", "give --format html or --format md"));
    }
    if let Some(name) = &a.reference {
        crate::analysis::reference::beside(name, &[])
            .map_err(|why| Error::refused(why, "see iosurvey report --reference list"))?;
    }
    if let (Some(since), Some(until)) = (a.filter.since, a.filter.until) {
        if since > until {
            return Err(Error::refused(
                "--since is a later day than --until: no run can be in between",
                "give --since on or before --until",
            ));
        }
    }
    Ok(())
}

/// The report's blocks and what it holds in words, for the line that says it was written;
/// `db` names the store in the title block.
pub fn blocks(store: &Store, db: &Path, a: &ReportArgs) -> Result<(Vec<Block>, String), Error> {
    let (chosen, stored) = chosen_runs(store, &a.filter)?;
    let matrices = chosen_matrices(store, &a.filter)?;
    if chosen.is_empty() && matrices.is_empty() {
        return Err(match stored {
            0 => Error::refused("the store holds no runs", "run a workload or a survey first"),
            n => Error::refused(
                format!("none of the {n} runs chosen matches --target, --since and --until"),
                "widen them, or see iosurvey ls",
            ),
        });
    }
    let counted = format!(
        "{} runs{}",
        chosen.len(),
        match matrices.len() {
            0 => String::new(),
            n => format!(" and {n} matri{}", if n == 1 { "x" } else { "ces" }),
        }
    );
    let paper = super::paper::paper(&db.display().to_string(), chosen, &matrices, a.reference.as_deref())
        .map_err(|why| Error::refused(why, "see iosurvey report --reference list"))?;
    let mut blocks = paper.blocks();
    super::units::convert(&mut blocks, a.units);
    Ok((blocks, counted))
}

/// The runs a report holds, chosen in the store (`Store::select`), and how many the ids and
/// labels named before --target, --since and --until (every run when they name none).
fn chosen_runs(store: &Store, filter: &ReportFilter) -> Result<(Vec<RunRecord>, usize), Error> {
    let (labels, ids) = (&filter.label, &filter.ids);
    // Runs named by id must be read whole; a label's are read as every run is.
    let (mut strict, mut lenient) = (Vec::new(), Vec::new());
    for name in ids.iter().filter(|n| matrix_id(n).is_none()).chain(labels) {
        match side_ids(store, name)? {
            (ids, false) => strict.extend(ids),
            (ids, true) => lenient.extend(ids),
        }
    }
    // An id named that is not in the store is said so, as `show` says it.
    let present = store.select(&crate::store::select::Filter { among: Some(strict.clone()), ..Default::default() })?;
    if let Some(&missing) = strict.iter().find(|id| !present.contains(id)) {
        store.load(missing)?;
    }
    let among: Option<Vec<i64>> = match ids.is_empty() && labels.is_empty() {
        true => None,
        false => Some(strict.iter().chain(&lenient).copied().collect()),
    };
    let stored = match &among {
        Some(named) => named.iter().collect::<std::collections::BTreeSet<_>>().len(),
        None => store.count(None)?,
    };
    let select =
        crate::store::select::Filter { among, target: filter.target.clone(), since: filter.since, until: filter.until };
    let (whole, readable): (Vec<i64>, Vec<i64>) =
        store.select(&select)?.into_iter().partition(|id| strict.contains(id));
    let mut chosen = store.load_all(&whole)?;
    chosen.extend(store.load_readable(&readable)?);
    chosen.sort_by_key(|r| r.id);
    Ok((chosen, stored))
}

/// The matrices a report holds: those named, those of the labels named, or every one; of
/// those, the ones --target, --since and --until choose.
fn chosen_matrices(store: &Store, filter: &ReportFilter) -> Result<Vec<MatrixRecord>, Error> {
    let (labels, ids) = (&filter.label, &filter.ids);
    let everything = ids.is_empty() && labels.is_empty();
    let mut matrices = store.matrices()?;
    if let Some(id) = ids.iter().filter_map(|n| matrix_id(n)).find(|&id| !matrices.iter().any(|m| m.id == Some(id))) {
        return Err(Error::refused(
            format!("the store holds no matrix m{id}"),
            "see iosurvey ls for the matrices it holds",
        ));
    }
    matrices.retain(|m| {
        everything
            || m.id.is_some_and(|id| ids.iter().any(|n| matrix_id(n) == Some(id)))
            || m.label.as_ref().is_some_and(|l| labels.contains(l))
    });
    matrices.retain(|m| {
        filter.target.as_ref().is_none_or(|t| m.env.target.contains(t.as_str()))
            && filter.since.is_none_or(|day| m.started >= day)
            && filter.until.is_none_or(|day| m.started < day + 86_400)
    });
    Ok(matrices)
}
