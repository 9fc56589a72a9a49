//! The commands, written once for any team: the lead process prints and owns the store and
//! the target; every process runs its tasks.

use super::{Cli, Command, Failure, ReportFilter};
use iosurvey::analysis::{self, Report};
use iosurvey::record::{GroupId, GroupKind, RunRecord};
use iosurvey::report::{self, Format};
use iosurvey::store::Store;
use iosurvey::study::hint::{Command as Cmd, Flags};
use iosurvey::study::play::on_lead;
use iosurvey::study::Error;
use iosurvey::study::Study;
use iosurvey::team::Team;
use std::path::Path;
use std::sync::OnceLock;

/// How long the team took to form (MPI_Init, node discovery, clock alignment), nanoseconds.
pub static TEAM_START_NS: OnceLock<u64> = OnceLock::new();

/// Runs the parsed command. Only the lead process prints errors: the others reach the same
/// verdict, or learned it from the lead.
pub fn dispatch<T: Team>(cli: &Cli, team: &T) -> Result<(), Error> {
    let result = match ended(cli, team) {
        Err(Ended::Typed(e, spelling)) if team.process() == 0 => Err(super::closing(e, &spelling)),
        Err(Ended::Words(f)) if team.process() == 0 => Err(f.said()),
        Err(Ended::Typed(e, _)) => Err(Error::silent(e.kind)),
        Err(Ended::Words(f)) => Err(Error::silent(f.kind())),
        Ok(()) => Ok(()),
    };
    // Nobody exits before the lead has said why: a launcher ends the whole job as soon as one
    // process exits with an error, and would cut the lead's line off.
    if team.processes() > 1 {
        team.share(vec![0]);
    }
    result
}

/// The command whose flags spell the hints of `command`'s errors: `meta` has `--items` where
/// `run` has `--block`.
fn flags_of(command: &Command) -> Flags {
    Flags(match command {
        Command::Run(_) => Cmd::Run,
        Command::Meta(_) => Cmd::Meta,
        Command::Survey(_) => Cmd::Survey,
        Command::Matrix(_) => Cmd::Matrix,
        Command::Io500(_) => Cmd::Io500,
        Command::Targets(_) => Cmd::Targets,
        _ => Cmd::Other,
    })
}

/// The study a measuring command is; `None` for the other commands.
fn study(command: &Command) -> Result<Option<Study>, Error> {
    Ok(Some(match command {
        Command::Run(a) => Study::Run(a.clone()),
        // Played as the run it is, printed as run prints.
        Command::Meta(a) => Study::Run(Box::new(a.to_run()?)),
        Command::Survey(a) => Study::Survey(a.clone()),
        Command::Matrix(a) => Study::Matrix(a.clone()),
        Command::Io500(a) => Study::Io500(a.clone()),
        Command::Targets(a) => Study::Targets(a.clone()),
        Command::Net(a) => Study::Net(a.clone()),
        Command::Train(a) => Study::Train(a.clone()),
        Command::Checkpoint(a) => Study::Checkpoint(a.clone()),
        _ => return Ok(None),
    }))
}

/// How a command ended badly: a typed error and the flags that spell its hint, or the words
/// the campaign driver made of its own.
enum Ended {
    Typed(Error, Flags),
    Words(Failure),
}

impl From<Failure> for Ended {
    fn from(f: Failure) -> Self {
        Ended::Words(f)
    }
}

/// Runs the parsed command: a typed error keeps the flags of its own command to be said
/// with (a campaign's own errors are the campaign's words).
fn ended<T: Team>(cli: &Cli, team: &T) -> Result<(), Ended> {
    let spelling = flags_of(&cli.command);
    let typed = |e: Error| Ended::Typed(e, spelling);
    if let Some(study) = study(&cli.command).map_err(typed)? {
        return super::studies::play(cli, &study, team).map_err(typed);
    }
    match &cli.command {
        Command::Campaign(c) => Ok(campaign(cli, c, team)?),
        Command::Show { id: super::Shown::Campaign(n), json: false, .. } => {
            Ok(super::campaign::status(cli, &format!("c{n}"), None, team)?)
        }
        Command::Report { output: Some(output), campaign: Some(which), format, reference, units, .. } => {
            let text = super::opening::on_lead(team, || {
                super::campaign::report(cli, which, (output, *format, *units), reference.as_deref(), team)
            })?;
            text.iter().for_each(|text| out!("{text}"));
            Ok(())
        }
        _ => keeping(cli, team).map_err(typed),
    }
}

/// The commands that read the store, and the others that measure nothing.
fn keeping<T: Team>(cli: &Cli, team: &T) -> Result<(), Error> {
    match &cli.command {
        Command::Ls { json, label, format, limit, all, wide } => {
            lead_prints(team, || ls(&cli.db, label.as_deref(), (*json, *format, *wide), (*limit, *all)))
        }
        Command::Show { id, json, format } => lead_prints(team, || show(&cli.db, *id, *json, *format)),
        Command::Report { output, reference, format, filter, units, .. } => {
            lead_prints(team, || match (output, reference.as_deref()) {
                (_, Some("list")) => Ok(render(analysis::reference::systems(), Format::Text)),
                (Some(output), reference) => html_report(&cli.db, (output, *format, *units), reference, filter),
                (None, _) => Err(Error::refused("report needs -o FILE", "give -o report.html")),
            })
        }
        Command::Compare { sides, format, wide } => lead_prints(team, || compare(&cli.db, sides, (*format, *wide))),
        Command::Export { ids, format, output } => {
            lead_prints(team, || export(&cli.db, ids, *format, output.as_deref()))
        }
        Command::Import(args) => lead_prints(team, || super::import::import(&cli.db, args)),
        Command::Overhead => lead_prints(team, || Ok(iosurvey::engine::overhead::report())),
        Command::Engines { json, all } => lead_prints(team, || engines(*json, *all)),
        Command::TeamTiming { rounds } => {
            let timing = iosurvey::team::timing::measure(team, *rounds, TEAM_START_NS.get().copied().unwrap_or(0));
            lead_prints(team, || {
                let line = serde_json::to_string(&timing).map_err(|e| Error::failed(e, "report this as a bug"))?;
                Ok(format!("{}\n", iosurvey::escape::json(line)))
            })
        }
        // The studies are played above, the campaigns and imports too; the others are served
        // before the team starts (see cli::main).
        _ => Ok(()),
    }
}

/// `ls`: the newest runs (a page of them for reading, unless --all or --limit), the matrices
/// and the campaigns.
fn ls(
    db: &Path,
    label: Option<&str>,
    (json, format, wide): (bool, Format, bool),
    (limit, all): (Option<usize>, bool),
) -> Result<String, Error> {
    let store = Store::open_existing(db)?;
    // What scripts read (--json, the array of runs it has always been; csv and json
    // tables) stays whole unless --limit: a page of it would look whole. A table for
    // reading shows the newest LS_PAGE, and says how many more there are: no one
    // reads 100,000 rows, and laying them out took seconds.
    let read = !json && matches!(format, Format::Text | Format::Md | Format::Html);
    let limit = match (all, read) {
        (true, _) => None,
        (false, false) => limit,
        (false, true) => Some(limit.unwrap_or(LS_PAGE)),
    };
    let rows = store.newest(label, limit)?;
    let mut matrices = store.matrices()?;
    warn_unreadable(&store);
    matrices.retain(|m| label.is_none() || m.label.as_deref() == label);
    // `show mN --json` gives a matrix.
    if json {
        return to_json(&rows);
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
    Ok(render_fitted(
        listed.and(analysis::matrix::list(&matrices)).and(analysis::campaign::list(&store.campaigns()?)),
        (format, wide),
    ))
}

/// `engines`: each engine of the registry, whether this machine allows it, and what it is.
fn engines(json: bool, all: bool) -> Result<String, Error> {
    let states = iosurvey::engine::backends::states(all);
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

/// `campaign plan|run|status|emit`.
fn campaign<T: Team>(cli: &Cli, c: &super::CampaignCommand, team: &T) -> Result<(), Failure> {
    use super::campaign as camp;
    use super::CampaignCommand;
    fn asked<'a>(a: &'a super::CampaignFileArgs, only: Option<&'a camp::Only>) -> camp::Asked<'a> {
        camp::Asked { file: &a.file, scale: a.scale, only, root: a.root.as_deref() }
    }
    match c {
        CampaignCommand::Plan { file: a, calibrate } => {
            camp::plan(cli, &asked(a, camp::Only::merged(&a.only).as_ref()), *calibrate, team)
        }
        CampaignCommand::Run(a) => camp::run(cli, &asked(a, camp::Only::merged(&a.only).as_ref()), team),
        CampaignCommand::Status { which, scale } => camp::status(cli, which, *scale, team),
        CampaignCommand::Emit { file, slurm, lsf, pbs } => {
            use iosurvey::campaign::batch::System;
            let (system, dir) = match (slurm, lsf, pbs) {
                (Some(d), _, _) => (System::Slurm, d),
                (_, Some(d), _) => (System::Lsf, d),
                (_, _, Some(d)) => (System::Pbs, d),
                // clap requires one of them.
                _ => unreachable!("campaign emit without a batch system"),
            };
            camp::emit(cli, file, system, dir, team)
        }
    }
}

/// The runs a table of `ls` lists unless given --limit or --all: the newest, as many as a
/// reader takes in.
const LS_PAGE: usize = 50;

/// A report laid out in a format.
fn render(r: Report, format: Format) -> String {
    report::exporter(format).render(&r)
}

/// As [`render`], a text table fitted to the terminal unless `wide`; the machine formats
/// always whole.
fn render_fitted(r: Report, (format, wide): (Format, bool)) -> String {
    match (format, wide) {
        (Format::Text, false) => report::text_within(&r, super::width::columns()),
        _ => render(r, format),
    }
}

/// `show`: one run in full, or the table of a survey or a sweep.
fn show(db: &Path, id: super::Shown, json: bool, format: Format) -> Result<String, Error> {
    use super::Shown;
    let store = Store::open_existing(db)?;
    let (ids, group) = match id {
        Shown::Run(id) => {
            let record = store.load(id)?;
            if json {
                return to_json(&record);
            }
            let ceilings = store.net_within(&record.hosts)?;
            let shown = analysis::run(&record).and(analysis::against_ceiling(&record, &ceilings));
            return Ok(render(shown, format));
        }
        Shown::Matrix(n) => {
            let m = store.load_matrix(n)?;
            return match json {
                true => to_json(&m),
                false => Ok(render(analysis::matrix::matrix(&m), format)),
            };
        }
        Shown::Survey(n) => (group_ids(&store, id)?, format!("s{n}")),
        Shown::Campaign(n) => (group_ids(&store, id)?, format!("c{n}")),
        Shown::Sweep(n) => (group_ids(&store, id)?, format!("w{n}")),
        Shown::Targets(n) => (group_ids(&store, id)?, format!("t{n}")),
    };
    if ids.is_empty() {
        return Err(Error::refused(
            format!("no runs of {group} in the store"),
            "list what is stored with 'iosurvey ls'",
        ));
    }
    let records = store.load_all(&ids)?;
    Ok(match id {
        _ if json => to_json(&records)?,
        Shown::Survey(n) => render(analysis::survey(n, &records), format),
        Shown::Targets(n) => render(analysis::targets::report(n, &records), format),
        _ => render(analysis::sweep(records[0].sweep_id, &records), format),
    })
}

/// The ids of the runs a run, survey or sweep id names.
fn group_ids(store: &Store, id: super::Shown) -> Result<Vec<i64>, Error> {
    use super::Shown;
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
fn side_ids(store: &Store, name: &str) -> Result<(Vec<i64>, bool), Error> {
    let (ids, every) = match super::shown(name) {
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

/// One warning line for each row a reader of many left out, unreadable: the others are
/// still listed, reported or exported.
fn warn_unreadable(store: &Store) {
    for (what, why) in store.unreadable() {
        say!("iosurvey: warning: {what} in the store cannot be read ({why}); it is left out (hint: it was altered outside iosurvey; 'iosurvey merge' refuses such rows)");
    }
}

/// `iosurvey report`: the chosen runs (every one by default) as one HTML page.
fn html_report(
    db: &Path,
    (output, format, units): (&Path, Format, iosurvey::report::units::Units),
    reference: Option<&str>,
    filter: &ReportFilter,
) -> Result<String, Error> {
    if !matches!(format, Format::Html | Format::Md) {
        return Err(Error::refused("a report is written as html or md", "give --format html or --format md"));
    }
    let beside = reference
        .map(|name| analysis::reference::beside(name, &[]).map(|_| name))
        .transpose()
        .map_err(|why| Error::refused(why, "see iosurvey report --reference list"))?;
    if let (Some(since), Some(until)) = (filter.since, filter.until) {
        if since > until {
            return Err(Error::refused(
                "--since is a later day than --until: no run can be in between",
                "give --since on or before --until",
            ));
        }
    }
    super::output::check(output, db, "-o")?;
    let store = Store::open_existing(db)?;
    let (chosen, stored) = chosen_runs(&store, filter)?;
    let matrices = chosen_matrices(&store, filter)?;
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
    let paper = report::paper::paper(&db.display().to_string(), chosen, &matrices, beside)
        .map_err(|why| Error::refused(why, "see iosurvey report --reference list"))?;
    let mut blocks = paper.blocks();
    report::units::convert(&mut blocks, units);
    write_report(db, (output, format), &blocks, &counted)
}

/// The matrix a report's id names, if it names one.
fn matrix_id(name: &str) -> Option<i64> {
    match super::shown(name) {
        Ok(super::Shown::Matrix(id)) => Some(id),
        _ => None,
    }
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
    let present =
        store.select(&iosurvey::store::select::Filter { among: Some(strict.clone()), ..Default::default() })?;
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
    let select = iosurvey::store::select::Filter {
        among,
        target: filter.target.clone(),
        since: filter.since,
        until: filter.until,
    };
    let (whole, readable): (Vec<i64>, Vec<i64>) =
        store.select(&select)?.into_iter().partition(|id| strict.contains(id));
    let mut chosen = store.load_all(&whole)?;
    chosen.extend(store.load_readable(&readable)?);
    chosen.sort_by_key(|r| r.id);
    Ok((chosen, stored))
}

/// The matrices a report holds: those named, those of the labels named, or every one; of
/// those, the ones --target, --since and --until choose.
fn chosen_matrices(store: &Store, filter: &ReportFilter) -> Result<Vec<iosurvey::record::MatrixRecord>, Error> {
    let (labels, ids) = (&filter.label, &filter.ids);
    let everything = ids.is_empty() && labels.is_empty();
    let mut matrices = store.matrices()?;
    warn_unreadable(store);
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

/// What the Markdown report's folder holds, and how to free its name, for refusals.
const FIGURES: &str = "the report's figures";
const FIGURES_HINT: &str = "give -o a file name whose NAME_figures is free or a folder of its own";

/// [`write_report`], for the campaign driver's report.
pub(super) fn write_paper(
    db: &Path,
    to: (&Path, Format),
    blocks: &[report::paper::Block],
    counted: &str,
) -> Result<String, Failure> {
    Ok(write_report(db, to, blocks, counted)?)
}

/// Writes a report's blocks to `output`: one HTML page, or Markdown with its figures in a
/// folder of their own beside it.
fn write_report(
    db: &Path,
    (output, format): (&Path, Format),
    blocks: &[report::paper::Block],
    counted: &str,
) -> Result<String, Error> {
    let write = |path: &Path, text: &str| super::output::write(path, text.as_bytes(), db, "-o");
    if format == Format::Md {
        // The figures go in a folder of their own beside the report, named after it, so that a
        // report never scatters files into the directory it was written from.
        let stem = output.file_stem().map_or("report".into(), |s| s.to_string_lossy().into_owned());
        let folder = format!("{stem}_figures");
        let (text, files) = report::document(blocks, &folder);
        let folder = output.with_file_name(&folder);
        super::output::folder(&folder, FIGURES, FIGURES_HINT)?;
        // Every file's name is checked before any is written.
        for (name, _) in &files {
            super::output::check(&folder.join(name), db, "-o")?;
        }
        for (name, contents) in &files {
            super::output::folder(&folder, FIGURES, FIGURES_HINT)?;
            write(&folder.join(name), contents)?;
        }
        write(output, &text)?;
        let keep: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
        super::output::remove_stale_figures(&folder, &keep);
    } else {
        write(output, &report::page(blocks))?;
    }
    Ok(format!("report of {counted} written to {}\n", iosurvey::escape::visible(&output.display().to_string())))
}

/// `export`: the runs named (every one when none is), as CSV or IOR's JSON, printed or
/// written to `output`.
fn export(db: &Path, names: &[String], format: super::ExportFormat, output: Option<&Path>) -> Result<String, Error> {
    if let Some(path) = output {
        super::output::check(path, db, "-o")?;
    }
    let store = Store::open_existing(db)?;
    let mut runs: Vec<RunRecord> = Vec::new();
    for name in names {
        runs.extend(side(&store, name)?);
    }
    if names.is_empty() {
        runs = store.load_readable(&store.select(&Default::default())?)?;
    }
    warn_unreadable(&store);
    runs.sort_by_key(|r| r.id);
    runs.dedup_by_key(|r| r.id);
    let text = match format {
        super::ExportFormat::Csv => report::export::phases_csv(&runs),
        super::ExportFormat::IorJson => {
            if let Some(r) = runs.iter().find(|r| r.workload.data().is_none()) {
                return Err(Error::refused(
                    format!("run {} is a metadata run: IOR's JSON holds data runs", r.id.unwrap_or_default()),
                    "name data runs, or use --format csv",
                ));
            }
            iosurvey::compat::layout::ior::of_runs(&runs)
        }
    };
    match output {
        Some(path) => {
            super::output::write(path, text.as_bytes(), db, "-o")?;
            Ok(String::new())
        }
        None => Ok(text),
    }
}

fn compare(db: &Path, names: &[String], (format, wide): (Format, bool)) -> Result<String, Error> {
    let store = Store::open_existing(db)?;
    let matrices: Vec<i64> = names
        .iter()
        .filter_map(|n| match super::shown(n) {
            Ok(super::Shown::Matrix(id)) => Some(id),
            _ => None,
        })
        .collect();
    match (matrices.len(), names.len()) {
        (0, _) => {}
        (2, 2) => {
            let (a, b) = (store.load_matrix(matrices[0])?, store.load_matrix(matrices[1])?);
            return Ok(render_fitted(analysis::matrix::compare(&a, &b), (format, wide)));
        }
        _ => {
            return Err(Error::refused(
                "a matrix is compared with one other matrix only",
                "give two matrices, e.g. 'iosurvey compare m2 m1'",
            ))
        }
    }
    let runs = names.iter().map(|n| side(&store, n)).collect::<Result<Vec<_>, _>>()?;
    warn_unreadable(&store);
    // A side of imported runs says so wherever its name is shown.
    let names: Vec<String> = names
        .iter()
        .zip(&runs)
        .map(|(name, runs)| {
            let mut tools: Vec<&str> =
                runs.iter().filter_map(|r| iosurvey::record::imported_from(&r.provenance)).collect();
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
    let report = match sides.as_slice() {
        [a, b] => analysis::compare(*a, *b),
        _ => analysis::recommend(&sides),
    };
    Ok(render_fitted(report, (format, wide)))
}

fn lead_prints<T: Team>(team: &T, f: impl FnOnce() -> Result<String, Error>) -> Result<(), Error> {
    if let Some(text) = on_lead(team, f)? {
        out!("{text}");
    }
    Ok(())
}

pub(super) fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Error> {
    serde_json::to_string_pretty(v)
        .map(|s| iosurvey::escape::json(s) + "\n")
        .map_err(|e| Error::failed(e, "report this as a bug"))
}
