//! The commands, written once for any team: the lead process prints and owns the store and
//! the target; every process runs its tasks.

use super::opening::on_lead;
use super::{Cli, Command, Failure, MetaArgs, NetArgs, ReportFilter, RunArgs, SurveyArgs};
use iosurvey::analysis::{self, Report};
use iosurvey::net;
use iosurvey::plan;
use iosurvey::record::{GroupId, GroupKind, RunRecord};
use iosurvey::report::{self, Format};
use iosurvey::session::Place;
use iosurvey::store::Store;
use iosurvey::study::Study;
use iosurvey::team::Team;
use iosurvey::units::now_unix;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How long the team took to form (MPI_Init, node discovery, clock alignment), nanoseconds.
pub static TEAM_START_NS: OnceLock<u64> = OnceLock::new();

/// Runs the parsed command. Only the lead process prints errors: the others reach the same
/// verdict, or learned it from the lead.
pub fn dispatch<T: Team>(cli: &Cli, team: &T) -> Result<(), Failure> {
    use super::hints::Cmd;
    super::hints::set_command(match &cli.command {
        Command::Run(_) => Cmd::Run,
        Command::Meta(_) => Cmd::Meta,
        Command::Survey(_) => Cmd::Survey,
        Command::Matrix(_) => Cmd::Matrix,
        Command::Io500(_) => Cmd::Io500,
        Command::Targets(_) => Cmd::Targets,
        _ => Cmd::Other,
    });
    let result = command(cli, team);
    let result = match result {
        Err(f) if team.process() == 0 => Err(f.said()),
        other => other.map_err(|f| Failure::silent(f.code)),
    };
    // Nobody exits before the lead has said why: a launcher ends the whole job as soon as one
    // process exits with an error, and would cut the lead's line off.
    if team.processes() > 1 {
        team.share(vec![0]);
    }
    result
}

pub(super) fn command<T: Team>(cli: &Cli, team: &T) -> Result<(), Failure> {
    match &cli.command {
        Command::Run(args) => run(cli, args, team),
        Command::Meta(args) => run(cli, &meta_run(args)?, team),
        Command::Io500(args) => super::io500::io500(cli, args, team),
        Command::Matrix(args) => super::matrix::matrix(cli, args, team),
        Command::Survey(args) => survey(cli, args, team),
        Command::Targets(args) => super::targets::targets(cli, args, team),
        Command::Ls { json, label, format, limit, all, wide } => lead_prints(team, || {
            let store = Store::open_existing(&cli.db)?;
            // What scripts read (--json, the array of runs it has always been; csv and json
            // tables) stays whole unless --limit: a page of it would look whole. A table for
            // reading shows the newest LS_PAGE, and says how many more there are: no one
            // reads 100,000 rows, and laying them out took seconds.
            let read = !*json && matches!(format, Format::Text | Format::Md | Format::Html);
            let limit = match (all, read) {
                (true, _) => None,
                (false, false) => *limit,
                (false, true) => Some(limit.unwrap_or(LS_PAGE)),
            };
            let rows = store.newest(label.as_deref(), limit)?;
            let mut matrices = store.matrices()?;
            warn_unreadable(&store);
            matrices.retain(|m| label.is_none() || m.label == *label);
            // `show mN --json` gives a matrix.
            if *json {
                return to_json(&rows);
            }
            let mut listed = analysis::list(&rows);
            let unlisted = match limit {
                Some(n) if rows.len() == n => store.count(label.as_deref())? - n,
                _ => 0,
            };
            if unlisted > 0 {
                listed.tables[0]
                    .notes
                    .push(format!("{unlisted} older runs not shown: --limit N lists the newest N, --all every one"));
            }
            Ok(render_fitted(
                listed.and(analysis::matrix::list(&matrices)).and(analysis::campaign::list(&store.campaigns()?)),
                (*format, *wide),
            ))
        }),
        Command::Show { id: super::Shown::Campaign(n), json: false, .. } => {
            super::campaign::status(cli, &format!("c{n}"), None, team)
        }
        Command::Show { id, json, format } => lead_prints(team, || show(&cli.db, *id, *json, *format)),
        Command::Report { output: Some(output), campaign: Some(which), format, reference, units, .. } => {
            let to = (output.as_path(), *format, *units);
            lead_prints(team, || super::campaign::report(cli, which, to, reference.as_deref(), team))
        }
        Command::Report { output, reference, format, filter, units, .. } => {
            lead_prints(team, || match (output, reference.as_deref()) {
                (_, Some("list")) => Ok(render(analysis::reference::systems(), Format::Text)),
                (Some(output), reference) => html_report(&cli.db, (output, *format, *units), reference, filter),
                (None, _) => Err(Failure::new("report needs -o FILE", "give -o report.html", 2)),
            })
        }
        Command::Compare { sides, format, wide } => lead_prints(team, || compare(&cli.db, sides, (*format, *wide))),
        Command::Export { ids, format, output } => {
            lead_prints(team, || export(&cli.db, ids, *format, output.as_deref()))
        }
        Command::Net(args) => net(cli, args, team),
        Command::Import(args) => lead_prints(team, || super::import::import(&cli.db, args)),
        Command::Campaign(c) => {
            use super::campaign as camp;
            use super::campaign;
            match c {
                super::CampaignCommand::Plan { file: a, calibrate } => camp::plan(
                    cli,
                    &camp::Asked {
                        file: &a.file,
                        scale: a.scale,
                        only: campaign::Only::merged(&a.only).as_ref(),
                        root: a.root.as_deref(),
                    },
                    *calibrate,
                    team,
                ),
                super::CampaignCommand::Run(a) => camp::run(
                    cli,
                    &camp::Asked {
                        file: &a.file,
                        scale: a.scale,
                        only: campaign::Only::merged(&a.only).as_ref(),
                        root: a.root.as_deref(),
                    },
                    team,
                ),
                super::CampaignCommand::Status { which, scale } => camp::status(cli, which, *scale, team),
                super::CampaignCommand::Emit { file, slurm, lsf, pbs } => {
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
        Command::Overhead => lead_prints(team, || Ok(iosurvey::engine::overhead::report())),
        // Served before the team starts (see cli::main).
        Command::Janitor | Command::Completions { .. } | Command::Manpages { .. } | Command::Merge(_) => Ok(()),
        Command::Train(_) | Command::Checkpoint(_) => Ok(()),
        Command::Engines { json, all } => lead_prints(team, || {
            let states = iosurvey::engine::backends::states(*all);
            if *json {
                return to_json(&states);
            }
            Ok(states
                .iter()
                .map(|e| {
                    let state =
                        e.reason.as_ref().map_or("available".to_string(), |why| format!("NOT available: {why}"));
                    format!("{:<9} {:<24} {}\n", e.name, state, e.about)
                })
                .collect())
        }),
        Command::TeamTiming { rounds } => {
            let timing = iosurvey::team::timing::measure(team, *rounds, TEAM_START_NS.get().copied().unwrap_or(0));
            lead_prints(team, || {
                let line = serde_json::to_string(&timing).map_err(|e| Failure::new(e, "report this as a bug", 1))?;
                Ok(format!("{}\n", iosurvey::escape::json(line)))
            })
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
fn show(db: &Path, id: super::Shown, json: bool, format: Format) -> Result<String, Failure> {
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
        return Err(Failure::new(
            format!("no runs of {group} in the store"),
            "list what is stored with 'iosurvey ls'",
            2,
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
fn group_ids(store: &Store, id: super::Shown) -> Result<Vec<i64>, Failure> {
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

/// The runs a side of `compare` names: a run, a survey's or a sweep's by id, else every run
/// with that label.
fn side(store: &Store, name: &str) -> Result<Vec<RunRecord>, Failure> {
    let (ids, every) = match super::shown(name) {
        Ok(id) => (group_ids(store, id)?, false),
        Err(_) => (store.labelled(name)?, true),
    };
    if ids.is_empty() {
        return Err(Failure::new(
            format!("no runs for '{name}' in the store"),
            "give a run id (12), a survey (s3), a sweep (w2) or a --label that 'iosurvey ls' lists",
            2,
        ));
    }
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
) -> Result<String, Failure> {
    if !matches!(format, Format::Html | Format::Md) {
        return Err(Failure::new("a report is written as html or md", "give --format html or --format md", 2));
    }
    let beside = reference
        .map(|name| analysis::reference::beside(name, &[]).map(|_| name))
        .transpose()
        .map_err(|why| Failure::new(why, "see iosurvey report --reference list", 2))?;
    if let (Some(since), Some(until)) = (filter.since, filter.until) {
        if since > until {
            return Err(Failure::new(
                "--since is a later day than --until: no run can be in between",
                "give --since on or before --until",
                2,
            ));
        }
    }
    let (labels, ids) = (&filter.label, &filter.ids);
    super::output::check(output, db, "-o")?;
    let store = Store::open_existing(db)?;
    let matrix_id = |name: &String| match super::shown(name) {
        Ok(super::Shown::Matrix(id)) => Some(id),
        _ => None,
    };
    let mut chosen: Vec<RunRecord> = Vec::new();
    for name in ids.iter().filter(|n| matrix_id(n).is_none()).chain(labels) {
        chosen.extend(side(&store, name)?);
    }
    let everything = ids.is_empty() && labels.is_empty();
    if everything {
        chosen = store.load_readable(&store.list()?.iter().map(|r| r.id).collect::<Vec<_>>())?;
    }
    // Matrices: those named, those of the labels named, or every one.
    let mut matrices = store.matrices()?;
    warn_unreadable(&store);
    if let Some(id) = ids.iter().filter_map(matrix_id).find(|&id| !matrices.iter().any(|m| m.id == Some(id))) {
        return Err(Failure::new(
            format!("the store holds no matrix m{id}"),
            "see iosurvey ls for the matrices it holds",
            2,
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
    chosen.sort_by_key(|r| r.id);
    chosen.dedup_by_key(|r| r.id);
    let stored = chosen.len();
    chosen.retain(|r| {
        filter.target.as_ref().is_none_or(|t| r.env.target.contains(t.as_str()))
            && filter.since.is_none_or(|day| r.started >= day)
            && filter.until.is_none_or(|day| r.started < day + 86_400)
    });
    if chosen.is_empty() && matrices.is_empty() {
        return Err(match stored {
            0 => Failure::new("the store holds no runs", "run a workload or a survey first", 2),
            n => Failure::new(
                format!("none of the {n} runs chosen matches --target, --since and --until"),
                "widen them, or see iosurvey ls",
                2,
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
        .map_err(|why| Failure::new(why, "see iosurvey report --reference list", 2))?;
    let mut blocks = paper.blocks();
    report::units::convert(&mut blocks, units);
    write_paper(db, (output, format), &blocks, &counted)
}

/// What the Markdown report's folder holds, and how to free its name, for refusals.
const FIGURES: &str = "the report's figures";
const FIGURES_HINT: &str = "give -o a file name whose NAME_figures is free or a folder of its own";

/// Writes a report's blocks to `output`: one HTML page, or Markdown with its figures in a
/// folder of their own beside it.
pub(super) fn write_paper(
    db: &Path,
    (output, format): (&Path, Format),
    blocks: &[report::paper::Block],
    counted: &str,
) -> Result<String, Failure> {
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
fn export(db: &Path, names: &[String], format: super::ExportFormat, output: Option<&Path>) -> Result<String, Failure> {
    if let Some(path) = output {
        super::output::check(path, db, "-o")?;
    }
    let store = Store::open_existing(db)?;
    let mut runs: Vec<RunRecord> = Vec::new();
    for name in names {
        runs.extend(side(&store, name)?);
    }
    if names.is_empty() {
        runs = store.load_readable(&store.list()?.iter().map(|r| r.id).collect::<Vec<_>>())?;
    }
    warn_unreadable(&store);
    runs.sort_by_key(|r| r.id);
    runs.dedup_by_key(|r| r.id);
    let text = match format {
        super::ExportFormat::Csv => report::export::phases_csv(&runs),
        super::ExportFormat::IorJson => {
            if let Some(r) = runs.iter().find(|r| r.workload.data().is_none()) {
                return Err(Failure::new(
                    format!("run {} is a metadata run: IOR's JSON holds data runs", r.id.unwrap_or_default()),
                    "name data runs, or use --format csv",
                    2,
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

fn compare(db: &Path, names: &[String], (format, wide): (Format, bool)) -> Result<String, Failure> {
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
            return Err(Failure::new(
                "a matrix is compared with one other matrix only",
                "give two matrices, e.g. 'iosurvey compare m2 m1'",
                2,
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

fn lead_prints<T: Team>(team: &T, f: impl FnOnce() -> Result<String, Failure>) -> Result<(), Failure> {
    if let Some(text) = on_lead(team, f)? {
        out!("{text}");
    }
    Ok(())
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(v)
        .map(|s| iosurvey::escape::json(s) + "\n")
        .map_err(|e| Failure::new(e, "report this as a bug", 1))
}

/// A metadata command as the run it is (see `MetaArgs::to_run`).
pub(super) fn meta_run(a: &MetaArgs) -> Result<RunArgs, Failure> {
    Ok(a.to_run()?)
}

/// Refuses, before anything runs, a `--json` path that could not or must not be written.
fn check_json_path(path: &Path, db: &Path) -> Result<(), Failure> {
    if super::output::is_stdout(path) {
        return Ok(());
    }
    super::output::check(path, db, "--json")
}

/// Writes the records as JSON: one object for a single run, an array for a sweep; `-` is
/// standard output, which then holds that document only.
fn write_json(path: &Path, records: &[RunRecord], sweep: bool, db: &Path) -> Result<(), Failure> {
    let text = match (sweep, records.last()) {
        (false, Some(r)) => to_json(r)?,
        _ => to_json(&records)?,
    };
    if super::output::is_stdout(path) {
        out!("{text}");
        return Ok(());
    }
    super::output::write(path, text.as_bytes(), db, "--json")
}

fn run<T: Team>(cli: &Cli, a: &RunArgs, team: &T) -> Result<(), Failure> {
    let played = play_run(cli, a, team)?;
    let (records, sweep, group) = (&played.records, played.group.is_some(), played.group);
    let to_stdout = a.team.json.as_deref().is_some_and(super::output::is_stdout);
    if let (Some(path), false) = (&a.team.json, records.is_empty()) {
        write_json(path, records, sweep, &cli.db)?;
    }
    for r in records.iter().filter(|_| !to_stdout) {
        if cli.within.is_some() {
            // A campaign says its own progress.
        } else if cli.quiet {
            outln!("run {}", r.id.unwrap_or_default());
        } else if !sweep {
            out!("{}", render(analysis::run(r), Format::Text));
        }
    }
    if sweep && !cli.quiet && !to_stdout && !records.is_empty() {
        out!("{}", render(analysis::sweep(group.map(|g| g.number), records), Format::Text));
    }
    played.outcome
}

/// What a run command played: its records (those stored, in order), its sweep group if it
/// swept, and how it ended (the first failure, or the store's word on the sweep's end).
pub(super) struct PlayedRun {
    pub records: Vec<RunRecord>,
    pub group: Option<GroupId>,
    pub outcome: Result<(), Failure>,
}

/// Plays a run command's points (one run, or a sweep) through the library and prints
/// nothing: `run` prints its tables, a front end its tool's layout.
pub(super) fn play_run<T: Team>(cli: &Cli, a: &RunArgs, team: &T) -> Result<PlayedRun, Failure> {
    on_lead(team, || match &a.team.json {
        Some(path) => check_json_path(path, &cli.db),
        None => Ok(()),
    })?;
    let played = super::opening::play(cli, &Study::Run(Box::new(a.clone())), team)?;
    let outcome = played.failure.map_or(Ok(()), |e| Err(e.into()));
    Ok(PlayedRun { records: played.records, group: played.group, outcome })
}

/// A run command's points and where they go (see `RunArgs::points`).
pub(super) fn run_points(
    a: &RunArgs,
    counts: &[usize],
    smallest: impl FnOnce(&[PathBuf]) -> u64,
) -> Result<(plan::List, Place), Failure> {
    Ok(a.points(counts, smallest)?)
}

pub(super) use iosurvey::study::run::{smallest_device, smallest_here};

fn survey<T: Team>(cli: &Cli, a: &SurveyArgs, team: &T) -> Result<(), Failure> {
    let played = super::opening::play(cli, &Study::Survey(a.clone()), team)?;
    let records = &played.records;
    if cli.within.is_some() {
        // A campaign says its own progress.
    } else if team.process() == 0 && cli.quiet {
        // As `run -q`: the ids only.
        for r in records {
            outln!("run {}", r.id.unwrap_or_default());
        }
    } else if let (Some(group), false) = (played.group, records.is_empty()) {
        out!("{}", render(analysis::survey(group.number, records), Format::Text));
    }
    for note in played.notes.iter().filter(|_| !cli.quiet) {
        say!("iosurvey: note: {note}");
    }
    played.failure.map_or(Ok(()), |e| Err(e.into()))
}

fn net<T: Team>(cli: &Cli, a: &NetArgs, team: &T) -> Result<(), Failure> {
    a.validate()?;
    if a.serve {
        return net_serve(a, team);
    }
    let store = on_lead(team, || Ok(Store::open(&cli.db)?))?;
    let asked = net::study::Asked {
        mode: a.mode.clone(),
        pattern: a.pattern.clone(),
        both_ways: a.both_ways,
        streams: a.streams.clone(),
        // Checked before anything ran (check_net).
        sizes: net::sizes(&a.messages).unwrap_or_default(),
        window: a.window,
        transfer: a.transfer,
        size: a.size,
        repetitions: a.repetitions,
        interface: a.interface.clone(),
        zerocopy: a.zerocopy,
        timeout: a.timeout,
    };
    let results = match &a.to {
        Some(to) => net::study::client(&asked, to, team).map(|r| vec![r]),
        None => net::study::between(&asked, team),
    }
    .map_err(|e| Failure::new(e.what, e.hint, e.code))?;
    for r in results.iter().filter(|_| team.process() == 0) {
        if let Some(store) = &store {
            store.save_net(now_unix(), &super::opening::command_line(), r)?;
        }
        // Host names come from the machines: shown on the terminal, never obeyed by it.
        outln!("{}", iosurvey::escape::visible(&r.line()));
        for note in r.zerocopy_note().into_iter().chain(r.curve_note()).filter(|_| !cli.quiet) {
            say!("iosurvey: note: {note}");
        }
    }
    if results.iter().any(|r| r.one_node) && !cli.quiet {
        say!("iosurvey: note: every endpoint is a process of one node: the figures are its loopback and memory, not a network");
    }
    Ok(())
}

/// `net --serve`: one process, no store, until interrupted or, with --once, one client.
fn net_serve<T: Team>(a: &NetArgs, team: &T) -> Result<(), Failure> {
    if team.processes() > 1 {
        return Err(Failure::new("net --serve runs as one process", "start it without mpirun", 2));
    }
    let server = net::serve::Server {
        bind: a.bind,
        port: a.port,
        once: a.once,
        max_clients: a.max_clients,
        limits: net::serve::Limits::default(),
    };
    net::serve::serve(&server, |line| say!("iosurvey: {line}"))
        .map_err(|e| Failure::new(e, "pick a free --port, and a --bind address this host has", 1))
}
