//! The commands, written once for any team: the lead process prints and owns the store and
//! the target; every process runs its tasks.

use super::opening::{on_lead, precheck_all};
use super::{Cli, Command, Failure, MetaArgs, NetArgs, ReportFilter, RunArgs, SurveyArgs};
use iosurvey::analysis::{self, Report};
use iosurvey::net;
use iosurvey::plan::{self, SurveyShape};
use iosurvey::record::{GroupId, GroupKind, RunRecord};
use iosurvey::report::{self, Format};
use iosurvey::session::Place;
use iosurvey::spec::{Op, Workload};
use iosurvey::store::Store;
use iosurvey::target::cache;
use iosurvey::team::Team;
use iosurvey::units::{format_size, now_unix};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
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
        Command::Ls { json, label, format, limit, all } => lead_prints(team, || {
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
            Ok(render(
                listed.and(analysis::matrix::list(&matrices)).and(analysis::campaign::list(&store.campaigns()?)),
                *format,
            ))
        }),
        Command::Show { id: super::Shown::Campaign(n), json: false, .. } => {
            super::campaign::status(cli, &format!("c{n}"), None, team)
        }
        Command::Show { id, json, format } => lead_prints(team, || show(&cli.db, *id, *json, *format)),
        Command::Report { output: Some(output), campaign: Some(which), format, reference, .. } => {
            lead_prints(team, || super::campaign::report(cli, which, (output, *format), reference.as_deref(), team))
        }
        Command::Report { output, reference, format, filter, .. } => {
            lead_prints(team, || match (output, reference.as_deref()) {
                (_, Some("list")) => Ok(render(analysis::reference::systems(), Format::Text)),
                (Some(output), reference) => html_report(&cli.db, (output, *format), reference, filter),
                (None, _) => Err(Failure::new("report needs -o FILE", "give -o report.html", 2)),
            })
        }
        Command::Compare { sides, format } => lead_prints(team, || compare(&cli.db, sides, *format)),
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
                    &camp::Asked { file: &a.file, scale: a.scale, only: campaign::Only::merged(&a.only).as_ref() },
                    *calibrate,
                    team,
                ),
                super::CampaignCommand::Run(a) => camp::run(
                    cli,
                    &camp::Asked { file: &a.file, scale: a.scale, only: campaign::Only::merged(&a.only).as_ref() },
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
        Command::Overhead => lead_prints(team, || Ok(iosurvey::measure::overhead::report())),
        // Served before the team starts (see cli::main).
        Command::Janitor | Command::Completions { .. } | Command::Manpages { .. } | Command::Merge(_) => Ok(()),
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
    (output, format): (&Path, Format),
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
    write_paper(db, (output, format), &paper.blocks(), &counted)
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

fn compare(db: &Path, names: &[String], format: Format) -> Result<String, Failure> {
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
            return Ok(render(analysis::matrix::compare(&a, &b), format));
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
    let recommended = analysis::recommend(&sides);
    let report = match sides.as_slice() {
        [a, b] => analysis::compare(*a, *b).and(recommended),
        _ => recommended,
    };
    Ok(render(report, format))
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

/// Two of `dirs` that are one directory or one inside the other (as resolved now, a missing
/// leaf by its parent), outer first.
/// The directories of a `--dir a@b@c` (mdtest's separator), each distinct and holding none
/// of the others.
pub(super) fn base_dirs(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let dirs: Vec<PathBuf> =
        dir.as_os_str().as_bytes().split(|&c| c == b'@').map(|p| PathBuf::from(OsStr::from_bytes(p))).collect();
    if dirs.iter().any(|d| d.as_os_str().is_empty()) {
        return Err(Failure::new(
            format!("--dir {} has an empty directory between its '@'s", dir.display()),
            "give --dir DIR or DIR@DIR@...",
            2,
        ));
    }
    if let Some((outer, inner)) = overlapping(&dirs) {
        let how = if outer == inner { "is given twice".to_string() } else { format!("holds {}", inner.display()) };
        return Err(Failure::new(
            format!(
                "--dir {}: base directory {} {how}, so one base's run would take the other's for its own",
                dir.display(),
                outer.display()
            ),
            "give base directories that are distinct and hold none of the others",
            2,
        ));
    }
    Ok(dirs)
}

fn overlapping(dirs: &[PathBuf]) -> Option<(PathBuf, PathBuf)> {
    let resolved: Vec<PathBuf> =
        dirs.iter().filter_map(|d| d.canonicalize().ok().or_else(|| super::output::absolute(d))).collect();
    for (i, a) in resolved.iter().enumerate() {
        for b in &resolved[i + 1..] {
            if b.starts_with(a) {
                return Some((a.clone(), b.clone()));
            }
            if a.starts_with(b) {
                return Some((b.clone(), a.clone()));
            }
        }
    }
    None
}

/// A metadata command as the run it is: its shape goes into the workload, the rest as given.
pub(super) fn meta_run(a: &MetaArgs) -> Result<RunArgs, Failure> {
    use iosurvey::spec::{meta::ALL_PHASES, Meta};
    let tree = a.meta.tree;
    let items = match a.items_per_dir {
        Some(per) => per.checked_mul(tree.holding()).ok_or_else(|| {
            Failure::new(
                "--items-per-dir times the directories of the tree is too large",
                "lower --items-per-dir or --depth",
                2,
            )
        })?,
        None => a.meta.items,
    };
    // mdtest's -C, -T, -E and -r pick classes of phases; none picks them all.
    let picked = [
        (a.create_only, [Op::TreeCreate, Op::DirCreate, Op::FileCreate].as_slice()),
        (a.stat_only, &[Op::DirStat, Op::FileStat]),
        (a.read_only, &[Op::FileRead]),
        (a.remove_only, &[Op::DirRemove, Op::FileRemove, Op::TreeRemove]),
    ];
    let some = picked.iter().any(|(on, _)| *on);
    let wanted = |o: &Op| !some || picked.iter().any(|(on, ops)| *on && ops.contains(o));
    let ops: Vec<Op> = match (a.phases.is_empty(), a.files_only, a.dirs_only) {
        (false, ..) => a.phases.clone(),
        (_, true, _) => ALL_PHASES
            .into_iter()
            .filter(|o| !matches!(o, Op::DirCreate | Op::DirStat | Op::DirRemove))
            .filter(wanted)
            .collect(),
        (_, _, true) => ALL_PHASES.into_iter().filter(|o| !o.name().starts_with("file-")).filter(wanted).collect(),
        _ => ALL_PHASES.into_iter().filter(wanted).collect(),
    };
    let mut dirs = base_dirs(&a.dir)?;
    let dir = dirs.remove(0);
    let meta = Meta { bases: dirs.clone(), items, ..a.meta.clone() };
    let workload = Workload {
        ops,
        iterations: a.iterations,
        verify: a.verify,
        stonewall_secs: a.stonewall_secs,
        wear_out: a.stonewall_secs.is_some(),
        drop_caches: a.drop_caches,
        interval_secs: a.interval_secs,
        ..Workload::from(meta)
    };
    Ok(RunArgs {
        dir: Some(dir),
        device: super::DeviceArgs::default(),
        workload,
        total: None,
        team: a.team.clone(),
        more_dirs: dirs,
    })
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

/// Plays a run command's points (one run, or a sweep) and prints nothing: `run` prints its
/// tables, a front end its tool's layout.
pub(super) fn play_run<T: Team>(cli: &Cli, a: &RunArgs, team: &T) -> Result<PlayedRun, Failure> {
    let team_size = team.processes() * a.team.tasks;
    let counts = match &a.team.clients {
        Some(list) => plan::parse_counts(list).map_err(|e| Failure { line: Some(e), code: 2 })?,
        None => vec![team_size],
    };
    if let Some(&most) = counts.iter().max().filter(|&&m| m > team_size) {
        return Err(Failure::new(
            format!("--clients asks for {most} tasks but the team has {team_size}"),
            "launch more ranks or raise --tasks",
            2,
        ));
    }
    let (mut points, place) = run_points(a, &counts, |paths| smallest_device(team, paths))?;
    let workloads: Vec<Workload> = points.workloads().cloned().collect();
    precheck_all(team, a.team.tasks, &workloads)?;
    let sweep = counts.len() > 1;
    on_lead(team, || match &a.team.json {
        Some(path) => check_json_path(path, &cli.db),
        None => Ok(()),
    })?;
    let mut session = super::opening::open(cli, team, (place, &a.team.target), a.team.tasks, workloads)?;
    let group = match sweep {
        true => Some(session.begin(GroupKind::Sweep, &serde_json::json!({ "parameter": "clients" }))?),
        false => None,
    };
    let played = session.play(&mut points, group, |_| {});
    // A store that cannot take the sweep's end is said after what ran.
    let finished = group.map_or(Ok(()), |g| session.finish(g, played.failure.is_none(), None));
    drop(session);
    let outcome = played.failure.map_or(finished.map_err(Failure::from), |e| Err(e.into()));
    Ok(PlayedRun { records: played.records, group, outcome })
}

/// A run command's points and where they go. On block devices: O_DIRECT unless --buffered,
/// the devices with the user's consent, and used whole (as much of the smallest, `smallest`
/// of them, as the device given most files holds) unless --size.
pub(super) fn run_points(
    a: &RunArgs,
    counts: &[usize],
    smallest: impl FnOnce(&[PathBuf]) -> u64,
) -> Result<(plan::List, Place), Failure> {
    device_flags_need_a_device(&a.device, a.dir.is_some())?;
    let Some(first) = a.device.device.first() else {
        let place = Place::Dir { dir: a.dir.clone().unwrap_or_default(), more: a.more_dirs.clone() };
        return Ok((plan::List::sweep(&a.workload, counts, a.total)?, place));
    };
    let mut w = a.workload.clone();
    if let iosurvey::spec::Shape::Data(d) = &mut w.shape {
        d.direct = !a.device.buffered;
        if d.access == iosurvey::spec::Access::Shared && a.device.device.len() > 1 {
            return Err(Failure::new(
                format!("--access shared puts the run's one region on {} alone, of the devices given", first.display()),
                "give one device, or leave --access out",
                2,
            ));
        }
    }
    let paths = &a.device.device;
    let list = match a.total {
        Some(total) => plan::List::sweep(&w, counts, Some(total))?,
        None => {
            let smallest = smallest(paths);
            plan::List::filling(&w, counts, |p| iosurvey::target::site::whole_devices(p, paths.len(), smallest))?
        }
    };
    let consent = iosurvey::target::device::Consent {
        destroy: a.device.destroy_data.clone(),
        ignore_signature: a.device.ignore_signature,
    };
    Ok((list, Place::Devices { paths: paths.clone(), consent }))
}

/// Refuses the device flags beside a directory target: they would be taken and do nothing.
pub(super) fn device_flags_need_a_device(d: &super::DeviceArgs, dir: bool) -> Result<(), Failure> {
    if dir && (!d.destroy_data.is_empty() || d.ignore_signature || d.buffered) {
        return Err(Failure::new(
            "--destroy-data, --ignore-signature and --buffered apply to --device, and the target is a directory",
            "leave them out, or give --device",
            2,
        ));
    }
    Ok(())
}

/// The size of the smallest of `devices` as this process finds it (0 when it cannot read
/// one: the device's own check then says why).
pub(super) fn smallest_here(devices: &[PathBuf]) -> u64 {
    devices
        .iter()
        .map(|p| iosurvey::target::device::Device::open(p).map_or(0, |d| d.facts().size_bytes))
        .min()
        .unwrap_or(0)
}

/// The size of the smallest of `devices`, as the lead finds it (0 when it cannot read one:
/// the device's own check then says why).
pub(super) fn smallest_device<T: Team>(team: &T, devices: &[PathBuf]) -> u64 {
    let mine = (team.process() == 0).then(|| smallest_here(devices));
    iosurvey::team::share_value(team, mine.as_ref())
}

/// What the lead decides before a survey and every process needs.
#[derive(serde::Serialize, serde::Deserialize)]
struct SurveyChoice {
    direct: bool,
    drop_caches: bool,
}

fn survey<T: Team>(cli: &Cli, a: &SurveyArgs, team: &T) -> Result<(), Failure> {
    let threads = a.tasks.unwrap_or_else(|| {
        if team.processes() > 1 {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    });
    let tasks = team.processes() * threads;
    if !(a.random_secs > 0.0 && a.random_secs.is_finite()) {
        return Err(Failure::new(
            format!("--random-secs {} is not a positive number of seconds", a.random_secs),
            "give --random-secs above 0, e.g. 3",
            2,
        ));
    }
    // Every workload of the battery, either way the lead may find O_DIRECT, checked before
    // the survey makes its directory or its row in the store.
    let shape =
        |direct, drop_caches| SurveyShape { size: a.size, tasks, direct, drop_caches, random_secs: a.random_secs };
    let battery = |direct| plan::survey(shape(direct, false)).into_iter().map(|i| i.workload);
    let all: Vec<Workload> = battery(false).chain(battery(true)).collect();
    precheck_all(team, threads, &all)?;
    check_survey_size(a.size, tasks)?;
    let place = Place::Fresh { parent: a.dir.clone(), kind: "survey" };
    let mut session = super::opening::open(cli, team, (place, &a.target), threads, Vec::new())?;
    let choice = session.decide(|lead| SurveyChoice {
        direct: lead.target().direct_alignment(&[]).is_ok_and(|align| 4096 % align == 0),
        drop_caches: cache::can_drop(),
    });
    let target = session.site().paths()[0].to_string_lossy().into_owned();
    let group = session.begin(GroupKind::Survey, &serde_json::json!({ "target": target }))?;
    let mut battery = plan::survey_plan(shape(choice.direct, choice.drop_caches), a.repetitions as usize);
    let lead = team.process() == 0;
    let played = session.play(&mut battery, Some(group), |step| {
        if let (plan::Step::Run { workload, name }, false) = (step, cli.quiet) {
            say!("iosurvey: {} ({})", name.as_deref().unwrap_or("-"), workload.label());
        }
    });
    let finished = session.finish(group, played.failure.is_none(), None);
    drop(session);
    let records = played.records;
    if cli.within.is_some() {
        // A campaign says its own progress.
    } else if lead && cli.quiet {
        // As `run -q`: the ids only.
        for r in &records {
            outln!("run {}", r.id.unwrap_or_default());
        }
    } else if !records.is_empty() {
        out!("{}", render(analysis::survey(group.number, &records), Format::Text));
    }
    if lead && !choice.drop_caches && !cli.quiet {
        say!(
            "iosurvey: note: not root, so the page cache was not dropped; reads flagged as possibly cached may come from memory"
        );
    }
    played.failure.map_or(Ok(finished?), |e| Err(e.into()))
}

/// Refuses a survey `--size` that gives a task less than one transfer, before anything runs.
fn check_survey_size(size: u64, tasks: usize) -> Result<(), Failure> {
    // Each task moves whole 1 MiB transfers: less than one each would be rounded up.
    let least = (tasks as u64).saturating_mul(1 << 20);
    if size < least {
        return Err(Failure::new(
            format!("--size {} gives each of the {tasks} tasks less than one 1 MiB transfer", format_size(size)),
            format!("give --size at least {}", format_size(least)),
            2,
        ));
    }
    Ok(())
}

/// Most timed repetitions `net` takes: each is a full pass over every link.
const NET_REPETITIONS: usize = 1000;

/// Refuses `net`'s numbers that cannot give a measurement, before anything is sent or stored.
fn check_net(a: &NetArgs) -> Result<(), Failure> {
    refuse_net_zeros(a)?;
    let refuse = |what: String, hint: &str| Err(Failure::new(what, hint, 2));
    if a.repetitions > NET_REPETITIONS {
        return refuse(
            format!("--repetitions {} is more than the {NET_REPETITIONS} net takes", a.repetitions),
            "give --repetitions 1 to 1000",
        );
    }
    net::sizes(&a.messages)
        .map_err(|e| Failure::new(format!("--messages {}: {e}", a.messages), "give MIN..MAX, e.g. 64k..16m", 2))?;
    if !(1..=4096).contains(&a.window) {
        return refuse(format!("--window {} is out of range", a.window), "give 1 to 4096 messages");
    }
    Ok(())
}

fn net<T: Team>(cli: &Cli, a: &NetArgs, team: &T) -> Result<(), Failure> {
    check_net(a)?;
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

/// Refuses, before anything runs or is stored, settings that measure nothing (a link that
/// carries nothing, a figure with no timed round), never end (writes of no bytes) or serve
/// no one.
fn refuse_net_zeros(a: &NetArgs) -> Result<(), Failure> {
    let refusals: [(bool, String, &str, &str); 6] = [
        (
            a.transfer == 0,
            "--transfer 0".into(),
            "a write of no bytes moves nothing, for ever",
            "give 1 byte or more, e.g. --transfer 1m",
        ),
        (
            a.size == 0,
            "--size 0".into(),
            "a link that carries no bytes has no bandwidth",
            "give 1 byte or more, e.g. --size 256m",
        ),
        (
            a.repetitions == 0,
            "--repetitions 0".into(),
            "a figure needs a timed round (the warm-up is not timed)",
            "give --repetitions 1 or more",
        ),
        (
            a.streams.contains(&0),
            "--streams 0".into(),
            "a link carries its bytes on 1 stream or more",
            "give --streams 1 or more",
        ),
        (
            a.timeout == 0,
            "--timeout 0".into(),
            "a client that waits no time gives up at once",
            "give a time, e.g. --timeout 30s",
        ),
        (
            !(1..=net::serve::MAX_STREAMS).contains(&a.max_clients),
            format!("--max-clients {}", a.max_clients),
            "a server serves 1 to 256 clients at once, each with a stream of the 256 it reads at once",
            "give --max-clients 1 to 256",
        ),
    ];
    match refusals.into_iter().find(|r| r.0) {
        Some((_, what, why, hint)) => Err(Failure::new(format!("{what}: {why}"), hint, 2)),
        None => Ok(()),
    }
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
