//! The commands, written once for any team: the lead process prints and owns the store and
//! the target; every process runs its tasks.

use super::{progress, Cli, Command, Failure, MetaArgs, NetArgs, ReportFilter, RunArgs, SurveyArgs};
use iosurvey::analysis::{self, Report};
use iosurvey::engine::INTERRUPTED;
use iosurvey::net;
use iosurvey::plan::{self, SurveyShape};
use iosurvey::record::RunRecord;
use iosurvey::report::{self, Format};
use iosurvey::runner::{Filing, Lead, RunError, Runner, Watch};
use iosurvey::spec::{Op, Workload};
use iosurvey::store::Store;
use iosurvey::target::dir::Dir;
use iosurvey::target::{cache, Target};
use iosurvey::team::{all_agree, share_value, Team};
use iosurvey::units::{format_size, now_unix};
use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Instant;

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

fn command<T: Team>(cli: &Cli, team: &T) -> Result<(), Failure> {
    match &cli.command {
        Command::Run(args) => run(cli, args, team),
        Command::Meta(args) => run(cli, &meta_run(args)?, team),
        Command::Io500(args) => super::io500::io500(cli, args, team),
        Command::Matrix(args) => super::matrix::matrix(cli, args, team),
        Command::Survey(args) => survey(cli, args, team),
        Command::Ls { json, label, format } => lead_prints(team, || {
            let store = Store::open_existing(&cli.db)?;
            let mut rows = store.list()?;
            rows.retain(|r| label.is_none() || r.system == *label);
            let mut matrices = store.matrices()?;
            matrices.retain(|m| label.is_none() || m.label == *label);
            // The JSON stays the array of runs it has always been; `show mN --json` gives a
            // matrix.
            Ok(match json {
                true => to_json(&rows)?,
                false => render(analysis::list(&rows).and(analysis::matrix::list(&matrices)), *format),
            })
        }),
        Command::Show { id, json, format } => lead_prints(team, || show(&cli.db, *id, *json, *format)),
        Command::Report { output, reference, format, filter } => {
            lead_prints(team, || match (output, reference.as_deref()) {
                (_, Some("list")) => Ok(render(analysis::reference::systems(), Format::Text)),
                (Some(output), reference) => html_report(&cli.db, (output, *format), reference, filter),
                (None, _) => Err(Failure::new("report needs -o FILE", "give -o report.html", 2)),
            })
        }
        Command::Compare { sides, format } => lead_prints(team, || compare(&cli.db, sides, *format)),
        Command::Net(args) => net(cli, args, team),
        Command::Overhead => lead_prints(team, || Ok(overhead())),
        // Served before the team starts (see cli::main).
        Command::Janitor => Ok(()),
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
        Command::TeamTiming { rounds } => team_timing(team, *rounds),
    }
}

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
            let shown =
                analysis::run(&record).and(analysis::net(&ceilings)).and(analysis::against_ceiling(&record, &ceilings));
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
        Shown::Sweep(n) => (group_ids(&store, id)?, format!("w{n}")),
    };
    if ids.is_empty() {
        return Err(Failure::new(
            format!("no runs of {group} in the store"),
            "list what is stored with 'iosurvey ls'",
            2,
        ));
    }
    let records = ids.into_iter().map(|i| store.load(i)).collect::<Result<Vec<_>, _>>()?;
    Ok(match id {
        _ if json => to_json(&records)?,
        Shown::Survey(n) => render(analysis::survey(n, &records), format),
        _ => render(analysis::sweep(records[0].sweep_id, &records), format),
    })
}

/// The ids of the runs a run, survey or sweep id names.
fn group_ids(store: &Store, id: super::Shown) -> Result<Vec<i64>, Failure> {
    use super::Shown;
    Ok(match id {
        Shown::Run(id) => vec![id],
        Shown::Survey(n) => store.survey_runs(n)?,
        Shown::Sweep(n) => store.sweep_runs(n)?,
        Shown::Matrix(n) => store.matrix_runs(n)?,
    })
}

/// The runs a side of `compare` names: a run, a survey's or a sweep's by id, else every run
/// with that label.
fn side(store: &Store, name: &str) -> Result<Vec<RunRecord>, Failure> {
    let ids = match super::shown(name) {
        Ok(id) => group_ids(store, id)?,
        Err(_) => store.list()?.into_iter().filter(|r| r.system.as_deref() == Some(name)).map(|r| r.id).collect(),
    };
    if ids.is_empty() {
        return Err(Failure::new(
            format!("no runs for '{name}' in the store"),
            "give a run id (12), a survey (s3), a sweep (w2) or a --label that 'iosurvey ls' lists",
            2,
        ));
    }
    Ok(ids.into_iter().map(|i| store.load(i)).collect::<Result<Vec<_>, _>>()?)
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
        chosen = store.list()?.into_iter().map(|r| store.load(r.id)).collect::<Result<_, _>>()?;
    }
    // Matrices: those named, those of the labels named, or every one.
    let mut matrices = store.matrices()?;
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
    let mut report = analysis::Report::default();
    let counted = format!(
        "{} runs{}",
        chosen.len(),
        match matrices.len() {
            0 => String::new(),
            n => format!(" and {n} matri{}", if n == 1 { "x" } else { "ces" }),
        }
    );
    report.heading.push(format!("iosurvey report: {counted} from {}", db.display()));
    for m in &matrices {
        report = report.and(analysis::matrix::matrix(m));
    }
    report = report.and(analysis::grouped(&chosen));
    let mut names: Vec<&str> = chosen.iter().filter_map(|r| r.label.as_deref()).collect();
    names.sort_unstable();
    names.dedup();
    if names.len() > 1 {
        let runs: Vec<Vec<RunRecord>> =
            names.iter().map(|n| chosen.iter().filter(|r| r.label.as_deref() == Some(*n)).cloned().collect()).collect();
        let sides: Vec<analysis::Side> =
            names.iter().zip(&runs).map(|(name, runs)| analysis::Side { name, runs }).collect();
        report = report.and(analysis::recommend(&sides));
    }
    report.findings.extend(analysis::cliffs::over_sizes(&chosen));
    report = report.and(analysis::sweeps_by_system(&chosen));
    if let Some(name) = beside {
        report = report.and(
            analysis::reference::beside(name, &chosen)
                .map_err(|why| Failure::new(why, "see iosurvey report --reference list", 2))?,
        );
    }
    let write = |path: &Path, text: &str| super::output::write(path, text.as_bytes(), db, "-o");
    if format == Format::Md {
        let stem = output.file_stem().map_or("report".into(), |s| s.to_string_lossy().into_owned());
        let (text, charts) = iosurvey::report::markdown_report(&report, &stem);
        // Every chart's name is checked before any file is written.
        for (name, _) in &charts {
            super::output::check(&output.with_file_name(name), db, "-o")?;
        }
        for (name, svg) in &charts {
            write(&output.with_file_name(name), svg)?;
        }
        write(output, &text)?;
    } else {
        write(output, &iosurvey::report::exporter(Format::Html).render(&report))?;
    }
    Ok(format!("report of {counted} written to {}\n", iosurvey::escape::visible(&output.display().to_string())))
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
    let sides: Vec<analysis::Side> =
        names.iter().zip(&runs).map(|(name, runs)| analysis::Side { name, runs }).collect();
    let recommended = analysis::recommend(&sides);
    let report = match sides.as_slice() {
        [a, b] => analysis::compare(*a, *b).and(recommended),
        _ => recommended,
    };
    Ok(render(report, format))
}

/// Runs `f` on the lead process only; its success or exit code reaches every process, so
/// that all of them stop together when the lead refuses.
pub(super) fn on_lead<T: Team, X>(team: &T, f: impl FnOnce() -> Result<X, Failure>) -> Result<Option<X>, Failure> {
    let result = (team.process() == 0).then(f);
    let code = share_value(team, result.as_ref().map(|r| r.as_ref().err().map_or(&0, |f| &f.code)));
    match result {
        Some(r) => r.map(Some),
        None if code == 0 => Ok(None),
        None => Err(Failure::silent(code)),
    }
}

fn lead_prints<T: Team>(team: &T, f: impl FnOnce() -> Result<String, Failure>) -> Result<(), Failure> {
    if let Some(text) = on_lead(team, f)? {
        print!("{text}");
    }
    Ok(())
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(v)
        .map(|s| iosurvey::escape::json(s) + "\n")
        .map_err(|e| Failure::new(e, "report this as a bug", 1))
}

/// The command line as typed; an argument that is not UTF-8 is kept with replacement
/// characters (the record says so).
pub(super) fn command_line() -> String {
    std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

/// The target directory on every process: the lead's (locked, checked), and on the others
/// the same directory opened by the path the lead resolved.
pub(super) fn target_everywhere<T: Team>(team: &T, lead: Option<&Target>) -> Result<Arc<Dir>, Failure> {
    let path = team.share(lead.map(|t| t.dir().path().as_os_str().as_bytes().to_vec()).unwrap_or_default());
    let path = PathBuf::from(OsString::from_vec(path));
    let dir = match lead {
        Some(t) => Ok(t.dir().clone()),
        None => Dir::open(&path).map(Arc::new),
    };
    if !all_agree(team, dir.is_ok()) {
        return Err(match dir {
            Err(e) => {
                Failure::new(format!("cannot open the target {}: {e}", path.display()), "mount it on every node", 2)
            }
            Ok(_) => Failure::silent(2),
        });
    }
    dir.map_err(|_| Failure::silent(2))
}

/// Prints what the target's checks found worth saying (reclaimed leftovers, no locks).
fn say_notes(target: &mut Target) {
    for note in target.take_notes() {
        say!("iosurvey: warning: {note}");
    }
}

pub(super) fn watcher(cli: &Cli) -> Option<&'static Watch> {
    (!cli.quiet && std::io::stderr().is_terminal()).then_some(&progress::watch as &Watch)
}

/// Checks every workload a command will run before it makes anything (no store row, no
/// directory): each one's rules, its engine's, and the memory bound for `threads` tasks per
/// process. The lead decides (memory differs between nodes) and every process follows; when
/// all pass, says whether the tasks crowd the cores.
pub(super) fn precheck_all<'w, T: Team>(
    team: &T,
    threads: usize,
    workloads: impl IntoIterator<Item = &'w Workload>,
) -> Result<(), Failure> {
    let per_node = iosurvey::runner::per_node(team, threads);
    on_lead(team, || {
        let available = iosurvey::env::memory_available();
        for w in workloads {
            iosurvey::runner::precheck(w, per_node, available)?;
        }
        Ok(())
    })?;
    warn_crowded(team, threads);
    Ok(())
}

/// Tasks per core above which a run measures the scheduler as much as the storage.
const CROWDED: usize = 4;

/// One warning line when `threads` tasks in this process far exceed the cores it may use.
pub(super) fn warn_crowded<T: Team>(team: &T, threads: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if team.process() == 0 && threads > CROWDED * cores {
        say!(
            "iosurvey: warning: --tasks {threads} runs {threads} threads on the {cores} core{} this process may use (more than {CROWDED} per core): the figures will show the scheduler as much as the storage",
            if cores == 1 { "" } else { "s" }
        );
    }
}

/// Two of `dirs` that are one directory or one inside the other (as resolved now, a missing
/// leaf by its parent), outer first.
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
fn meta_run(a: &MetaArgs) -> Result<RunArgs, Failure> {
    use iosurvey::spec::{meta::Resolve, meta::ALL_PHASES, Meta, Tree};
    let tree = Tree { depth: a.depth, branch: a.branch, leaves_only: a.leaves_only };
    let items = match a.items_per_dir {
        Some(per) => per.checked_mul(tree.holding()).ok_or_else(|| {
            Failure::new(
                "--items-per-dir times the directories of the tree is too large",
                "lower --items-per-dir or --depth",
                2,
            )
        })?,
        None => a.items,
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
    // mdtest's separator: a@b@c are three base directories.
    let mut dirs: Vec<PathBuf> =
        a.dir.as_os_str().as_bytes().split(|&c| c == b'@').map(|p| PathBuf::from(OsStr::from_bytes(p))).collect();
    if dirs.iter().any(|d| d.as_os_str().is_empty()) {
        return Err(Failure::new(
            format!("--dir {} has an empty directory between its '@'s", a.dir.display()),
            "give --dir DIR or DIR@DIR@...",
            2,
        ));
    }
    if let Some((outer, inner)) = overlapping(&dirs) {
        let how = if outer == inner { "is given twice".to_string() } else { format!("holds {}", inner.display()) };
        return Err(Failure::new(
            format!(
                "--dir {}: base directory {} {how}, so one base's run would take the other's for its own",
                a.dir.display(),
                outer.display()
            ),
            "give base directories that are distinct and hold none of the others",
            2,
        ));
    }
    let dir = dirs.remove(0);
    let meta = Meta {
        bases: dirs.clone(),
        items,
        shared: a.shared_dir,
        tree,
        write_bytes: a.write_bytes,
        read_bytes: a.read_bytes,
        shift: a.shift,
        sync: a.sync,
        resolve: if a.relative { Resolve::Relative } else { Resolve::Path },
        ..Meta::default()
    };
    let workload = Workload {
        ops,
        iterations: a.iterations,
        verify: a.verify,
        stonewall_secs: a.stonewall_secs,
        wear_out: a.stonewall_secs.is_some(),
        drop_caches: a.drop_caches,
        interval_secs: a.interval_secs,
        meta: Some(meta),
        ..Workload::default()
    };
    Ok(RunArgs { dir, workload, total: None, team: a.team.clone(), more_dirs: dirs })
}

fn workload(a: &RunArgs, tasks: usize) -> Result<Workload, Failure> {
    let mut w = Workload { tasks, ..a.workload.clone() };
    if let Some(total) = a.total {
        w.set_total(total)?;
    }
    w.validate()?;
    Ok(w)
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
        print!("{text}");
        return Ok(());
    }
    super::output::write(path, text.as_bytes(), db, "--json")
}

/// Cleans up after the target; what could not be removed is said in the command's closing
/// line ([`super::leftovers_said`]), so a fault still ends with one line.
pub(super) fn clean_up(target: Target) {
    let key = iosurvey::janitor::key(&target);
    super::LEFTOVERS.lock().unwrap_or_else(|p| p.into_inner()).extend(target.cleanup().problems);
    // Only now: a lead killed while removing still has its files removed by the janitor.
    iosurvey::janitor::release(key);
}

/// A target just taken, put in the janitor's care until [`clean_up`] has cleaned it.
fn held(target: Target) -> Target {
    iosurvey::janitor::hold(&target);
    target
}

fn run<T: Team>(cli: &Cli, a: &RunArgs, team: &T) -> Result<(), Failure> {
    super::RUNNING.store(true, Ordering::Relaxed);
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
    let points = counts.iter().map(|&c| workload(a, c)).collect::<Result<Vec<_>, _>>()?;
    precheck_all(team, a.team.tasks, &points)?;
    let sweep = counts.len() > 1;
    let mut state = on_lead(team, || {
        if let Some(path) = &a.team.json {
            check_json_path(path, &cli.db)?;
        }
        // The target first: a refused target leaves no trace, not even a new store.
        let mut target = held(Target::open(&a.dir, a.team.target.options())?);
        // A metadata run's phase order depends on what the target holds (a kept tree).
        if let Err(e) = points.iter().try_for_each(|w| iosurvey::runner::check_meta_order(&target, w)) {
            clean_up(target);
            return Err(e.into());
        }
        let store = match Store::open(&cli.db) {
            Ok(s) => s,
            Err(e) => {
                clean_up(target);
                return Err(e.into());
            }
        };
        say_notes(&mut target);
        let mut more = Vec::with_capacity(a.more_dirs.len());
        for path in &a.more_dirs {
            match Target::open(path, a.team.target.options()).map(held) {
                Ok(mut t) => {
                    say_notes(&mut t);
                    more.push(t);
                }
                Err(e) => {
                    std::iter::once(target).chain(more).for_each(clean_up);
                    return Err(RunError::from(e).into());
                }
            }
        }
        let sweep_id = match sweep.then(|| store.begin_sweep(now_unix(), "clients", &command_line())).transpose() {
            Ok(id) => id,
            Err(e) => {
                std::iter::once(target).chain(more).for_each(clean_up);
                return Err(e.into());
            }
        };
        Ok((store, target, sweep_id, more))
    })?;
    let sweep_id = state.as_ref().and_then(|s| s.2);
    let dir = target_everywhere(team, state.as_ref().map(|s| &s.1))?;
    let bases = (0..a.more_dirs.len())
        .map(|k| target_everywhere(team, state.as_ref().map(|s| &s.3[k])))
        .collect::<Result<Vec<_>, _>>()?;
    let mut runner = Runner {
        team,
        threads: a.team.tasks,
        dir,
        bases,
        lead: state.as_mut().map(|(store, target, _, more)| Lead { store, target, more }),
        command_line: command_line(),
        space_check: !a.team.target.no_space_check,
        watch: watcher(cli),
    };
    let label = a.team.target.label.as_deref();
    let (records, failure) = run_in_turn(
        &mut runner,
        points.iter().map(|p| (p, Filing { sweep_id, label, ..Filing::default() })),
        |_, _| {},
    );
    drop(runner);
    if let Some((_, target, _, more)) = state {
        std::iter::once(target).chain(more).for_each(clean_up);
    }
    let to_stdout = a.team.json.as_deref().is_some_and(super::output::is_stdout);
    if let (Some(path), false) = (&a.team.json, records.is_empty()) {
        write_json(path, &records, sweep, &cli.db)?;
    }
    for r in records.iter().filter(|_| !to_stdout) {
        if cli.quiet {
            println!("run {}", r.id.unwrap_or_default());
        } else if !sweep {
            print!("{}", render(analysis::run(r), Format::Text));
        }
    }
    if sweep && !cli.quiet && !to_stdout && !records.is_empty() {
        print!("{}", render(analysis::sweep(sweep_id, &records), Format::Text));
    }
    failure.map_or(Ok(()), |e| Err(e.into()))
}

/// Runs workloads one after the other until one fails or a signal arrives. Returns the
/// records (the failed one included) and the failure.
pub(super) fn run_in_turn<'w, T: Team>(
    runner: &mut Runner<T>,
    runs: impl Iterator<Item = (&'w Workload, Filing<'w>)>,
    mut before: impl FnMut(&Workload, &Filing),
) -> (Vec<RunRecord>, Option<RunError>) {
    let mut records = Vec::new();
    for (w, filing) in runs {
        if INTERRUPTED.load(Ordering::Relaxed) {
            // Never a success: a batch script must see the sequence did not finish.
            return (records, Some(RunError::Interrupted));
        }
        before(w, &filing);
        match runner.run(w, filing) {
            Ok(record) => records.extend(record),
            Err(e) => {
                // A failed run is stored whole, so it is reported with the others.
                if let RunError::Failed { record, .. } = &e {
                    records.push((**record).clone());
                }
                return (records, Some(e));
            }
        }
    }
    (records, None)
}

/// On the lead: the store, a fresh directory `iosurvey-KIND-PID` in `parent` (the current
/// directory by default) as the target, removed afterwards, and a survey to file the runs in.
pub(super) fn fresh_target(
    cli: &Cli,
    parent: Option<&Path>,
    kind: &str,
    options: iosurvey::target::Options,
) -> Result<(Store, Target, i64), Failure> {
    let (store, target) = fresh_dir(cli, parent, kind, options)?;
    match store.begin_survey(now_unix(), &target.dir().path().to_string_lossy(), &command_line()) {
        Ok(survey_id) => Ok((store, target, survey_id)),
        Err(e) => {
            // The directory is made: removed before the refusal is said.
            clean_up(target);
            Err(e.into())
        }
    }
}

/// On the lead: the store, and a fresh directory `iosurvey-KIND-PID` in `parent` (the current
/// directory by default) as the target, removed afterwards.
pub(super) fn fresh_dir(
    cli: &Cli,
    parent: Option<&Path>,
    kind: &str,
    options: iosurvey::target::Options,
) -> Result<(Store, Target), Failure> {
    let parent = match parent {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().map_err(|e| {
            Failure::new(format!("cannot read the current directory: {e}"), "cd to a directory that exists", 2)
        })?,
    };
    let store = Store::open(&cli.db)?;
    let parent = Dir::open(&parent)
        .map_err(|e| Failure::new(format!("cannot open {}: {e}", parent.display()), "give an existing directory", 2))?;
    for note in reclaim_dead_siblings(&parent) {
        say!("iosurvey: warning: {note}");
    }
    let name = format!("iosurvey-{kind}-{}", std::process::id());
    let mut target = held(Target::create(parent, name.as_ref(), options).map_err(RunError::from)?);
    say_notes(&mut target);
    Ok((store, target))
}

/// Whether `name` is one [`fresh_dir`] makes: `iosurvey-KIND-PID`.
fn fresh_dir_name(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(b"iosurvey-") else { return false };
    match rest.iter().rposition(|&c| c == b'-') {
        Some(at) => {
            let (kind, pid) = (&rest[..at], &rest[at + 1..]);
            !kind.is_empty()
                && kind.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && !pid.is_empty()
                && pid.iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

/// Removes the fresh directories in `parent` of commands that were killed with their janitor,
/// as the next run in each would (their `running` files, their manifest, then the directory if
/// nothing else is in it): only where its lock shows no run holds it, or its holder is a process
/// of this host that has ended. Returns what to say.
fn reclaim_dead_siblings(parent: &Dir) -> Vec<String> {
    let mut notes = Vec::new();
    for name in parent.list().unwrap_or_default() {
        if !fresh_dir_name(name.as_bytes()) || name.as_bytes().ends_with(format!("-{}", std::process::id()).as_bytes())
        {
            continue;
        }
        let Ok(dir) = parent.open_subdir(&name) else { continue };
        // Only a directory with iosurvey's manifest: it says whose files are in it.
        if !dir.stat(iosurvey::target::MANIFEST).is_ok_and(|m| m.is_some()) {
            continue;
        }
        let left = Target::reclaim(&dir, Some((parent, &name)), std::time::Duration::ZERO);
        if let Ok(problems) = left {
            let what = parent.show(&name).display().to_string();
            notes.push(match problems.is_empty() {
                true => format!("removed {what}, left by an iosurvey command that was killed"),
                false => format!(
                    "could not remove all of {what}, left by a killed iosurvey command: {}",
                    problems.join("; ")
                ),
            });
        }
    }
    notes
}

/// What the lead decides before a survey and every process needs.
#[derive(serde::Serialize, serde::Deserialize)]
struct SurveyPlan {
    direct: bool,
    drop_caches: bool,
}

fn survey<T: Team>(cli: &Cli, a: &SurveyArgs, team: &T) -> Result<(), Failure> {
    super::RUNNING.store(true, Ordering::Relaxed);
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
    let battery = |direct| {
        let shape = SurveyShape { size: a.size, tasks, direct, drop_caches: false, random_secs: a.random_secs };
        plan::survey(shape).into_iter().map(|i| i.workload)
    };
    let all: Vec<Workload> = battery(false).chain(battery(true)).collect();
    precheck_all(team, threads, &all)?;
    check_survey_size(a.size, tasks)?;
    let mut state = on_lead(team, || {
        let (store, mut target, survey_id) = fresh_target(cli, a.dir.as_deref(), "survey", a.target.options())?;
        let plan = SurveyPlan {
            direct: target.direct_alignment(&[]).is_ok_and(|align| 4096 % align == 0),
            drop_caches: cache::can_drop(),
        };
        Ok((store, target, survey_id, plan))
    })?;
    let dir = target_everywhere(team, state.as_ref().map(|s| &s.1))?;
    let plan: SurveyPlan = share_value(team, state.as_ref().map(|s| &s.3));
    let survey_id = state.as_ref().map_or(0, |s| s.2);
    let shape = SurveyShape {
        size: a.size,
        tasks,
        direct: plan.direct,
        drop_caches: plan.drop_caches,
        random_secs: a.random_secs,
    };
    let mut runner = Runner {
        team,
        threads,
        dir,
        bases: Vec::new(),
        lead: state.as_mut().map(|(store, target, _, _)| Lead { store, target, more: &mut [] }),
        command_line: command_line(),
        space_check: !a.target.no_space_check,
        watch: watcher(cli),
    };
    let lead = team.process() == 0;
    let items = plan::survey(shape);
    // Whole batteries in turn: a drift over the survey spreads over every workload alike, and
    // the random workload always finds the sequential one's files just written.
    let items: Vec<&plan::SurveyItem> = (0..a.repetitions).flat_map(|_| items.iter()).collect();
    let runs = items.iter().map(|i| {
        let filing = Filing {
            name: Some(i.role.name()),
            survey_id: Some(survey_id),
            sweep_id: None,
            label: a.target.label.as_deref(),
            ..Filing::default()
        };
        (&i.workload, filing)
    });
    let (records, failure) = run_in_turn(&mut runner, runs, |w, filing| {
        if lead && !cli.quiet {
            say!("iosurvey: {} ({})", filing.name.unwrap_or("-"), w.label());
        }
    });
    drop(runner);
    if let Some((_, target, _, _)) = state {
        clean_up(target);
    }
    if lead && cli.quiet {
        // As `run -q`: the ids only.
        for r in &records {
            println!("run {}", r.id.unwrap_or_default());
        }
    } else if !records.is_empty() {
        print!("{}", render(analysis::survey(survey_id, &records), Format::Text));
    }
    if lead && !shape.drop_caches && !cli.quiet {
        say!(
            "iosurvey: note: not root, so the page cache was not dropped; reads flagged as possibly cached may come from memory"
        );
    }
    failure.map_or(Ok(()), |e| Err(e.into()))
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
    let results = match &a.to {
        Some(to) => vec![net_client(a, to, team)?],
        None => net_between(a, team)?,
    };
    for r in results.iter().filter(|_| team.process() == 0) {
        if let Some(store) = &store {
            store.save_net(now_unix(), &command_line(), r)?;
        }
        // Host names come from the machines: shown on the terminal, never obeyed by it.
        println!("{}", iosurvey::escape::visible(&r.line()));
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

/// The ceilings between the team's nodes: every mode, stream count and pattern asked for.
fn net_between<T: Team>(a: &NetArgs, team: &T) -> Result<Vec<net::NetResult>, Failure> {
    let (ends, _) = net::endpoints(&team.process_nodes());
    if ends.len() < 2 {
        return Err(Failure::new(
            format!("iosurvey net needs at least 2 processes, and this team has {}", ends.len()),
            "launch it with mpirun across nodes, from a build with --features mpi, or use --to HOST with 'iosurvey net --serve' there",
            2,
        ));
    }
    // Checked before anything ran (check_net).
    let sizes = net::sizes(&a.messages).unwrap_or_default();
    let modes = if a.mode.is_empty() { vec![net::Mode::Tcp, net::Mode::Mpi] } else { a.mode.clone() };
    let patterns: Vec<net::Pattern> = if a.pattern.is_empty() {
        net::Pattern::ALL.into_iter().filter(|p| p.worth_it(ends.len())).collect()
    } else {
        a.pattern.clone()
    };
    let streams = if a.streams.is_empty() { vec![1, 4] } else { a.streams.clone() };
    let ways: &[bool] = if a.both_ways { &[false, true] } else { &[false] };
    if modes.contains(&net::Mode::Tcp) {
        for (&p, &both, &n) in combinations(&patterns, ways, &streams) {
            let need = net::tcp_buffers(&p.links(ends.len(), both), ends.len(), n.max(1), a.transfer);
            if need > net::MAX_BUFFERS {
                return Err(Failure::new(
                    format!(
                        "{} with {n} streams of {} writes would hold {} of buffers in one process, over the {} allowed",
                        p.name(),
                        format_size(a.transfer),
                        format_size(need),
                        format_size(net::MAX_BUFFERS)
                    ),
                    "use fewer --streams or a smaller --transfer",
                    2,
                ));
            }
        }
    }
    let mpi = net::mpi_mode::Plan { sizes, per_link: a.size, window: a.window, repetitions: a.repetitions };
    let mut results = Vec::new();
    for mode in modes {
        let counts: &[usize] = if mode == net::Mode::Tcp { &streams } else { &[1] };
        for &p in counts {
            let tcp = net::tcp_mode::Plan {
                streams: p,
                per_link: a.size,
                write: a.transfer as usize,
                repetitions: a.repetitions,
                interface: a.interface.clone(),
                zerocopy: a.zerocopy,
            };
            for &pattern in &patterns {
                // Bisection is both ways by definition: measured once.
                let ways = if pattern == net::Pattern::Bisection { &ways[..1] } else { ways };
                for &both in ways {
                    let r = match mode {
                        net::Mode::Mpi => net::mpi_mode::measure(team, pattern, both, &mpi),
                        net::Mode::Tcp => net::tcp_mode::measure(team, pattern, both, &tcp),
                    };
                    results.extend(r);
                }
            }
        }
    }
    Ok(results)
}

/// Every combination of a pattern, a direction and a stream count.
fn combinations<'a>(
    patterns: &'a [net::Pattern],
    ways: &'a [bool],
    streams: &'a [usize],
) -> impl Iterator<Item = (&'a net::Pattern, &'a bool, &'a usize)> {
    patterns.iter().flat_map(move |p| ways.iter().flat_map(move |w| streams.iter().map(move |s| (p, w, s))))
}

/// N clients (the team's processes) to one server started with `net --serve`.
fn net_client<T: Team>(a: &NetArgs, to: &str, team: &T) -> Result<net::NetResult, Failure> {
    use iosurvey::team::Member;
    let addr =
        net::serve::parse_to(to).map_err(|e| Failure::new(format!("--to {to}: {e}"), "give HOST or HOST:PORT", 2))?;
    let member = team.members(1).pop().ok_or_else(|| Failure::silent(1))?;
    let streams = a.streams.first().copied().unwrap_or(1).max(1);
    if streams as u64 * a.transfer > net::MAX_BUFFERS {
        return Err(Failure::new(
            format!(
                "{streams} streams of {} writes would hold more than {} of buffers",
                format_size(a.transfer),
                format_size(net::MAX_BUFFERS)
            ),
            "use fewer --streams or a smaller --transfer",
            2,
        ));
    }
    let total = a.size * team.processes() as u64;
    let wait = std::time::Duration::from_nanos(a.timeout);
    // One session for the whole run, every process and round, which the server serves as one
    // client until the lead's bye. Its id is random: whoever knows it can end it.
    let mine = (team.process() == 0).then(|| {
        net::tcp::new_session().unwrap_or_else(|e| iosurvey::team::broken(&format!("no random session id: {e}")))
    });
    let session: u64 = iosurvey::team::share_value(team, mine.as_ref());
    let count = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    let hello =
        net::tcp::Hello { session, streams: count(streams * team.processes()), index: count(streams * team.process()) };
    let mut samples = Vec::new();
    let mut fastest = u64::MAX;
    let mut zc = net::zerocopy::Report::default();
    // An untimed first round: TCP's slow start.
    for round in 0..=a.repetitions {
        member.barrier();
        let start = iosurvey::team::clock::monotonic_ns();
        let how = net::tcp::Sending { streams, write: a.transfer as usize, zerocopy: a.zerocopy, wait };
        let sent = match net::tcp::send(addr, hello, how, a.size) {
            Ok(sent) => {
                zc = zc + sent.zerocopy;
                sent.bytes
            }
            Err(e) if team.processes() == 1 => return Err(Failure::new(e, NO_SERVER, 1)),
            Err(e) => iosurvey::team::broken(&e.to_string()),
        };
        let elapsed = iosurvey::team::clock::monotonic_ns() - start;
        member.rest();
        let window_ns = member.max(elapsed);
        let arrived = member.sum(sent);
        if round > 0 && arrived == total {
            fastest = fastest.min(window_ns);
            samples.extend(iosurvey::units::rate(total, window_ns));
        }
    }
    let zerocopy = a.zerocopy.then(|| zc.over_team(&member));
    // Every process's streams have been counted (the sums above): the session is over.
    if team.process() == 0 {
        net::tcp::bye(addr, session, wait).map_err(|e| Failure::new(e, NO_SERVER, 1))?;
    }
    let hosts = team.hosts();
    let senders: Vec<String> =
        team.process_nodes().iter().map(|&n| hosts.get(n as usize).cloned().unwrap_or_default()).collect();
    Ok(net::NetResult {
        mode: net::Mode::Tcp,
        pattern: if team.processes() > 1 { net::Pattern::ManyToOne } else { net::Pattern::OneToOne },
        both_ways: false,
        streams,
        receivers: vec![to.to_string(); senders.len()],
        senders,
        message: a.transfer,
        bytes: total,
        window_ns: fastest,
        bandwidth: net::mean(&samples),
        samples,
        curve: Vec::new(),
        peak_in_flight: 0,
        one_node: false,
        zerocopy,
    })
}

/// The hint when the server of `net --to` fails the client.
const NO_SERVER: &str =
    "check that 'iosurvey net --serve' runs there and is reachable; its log says why it dropped a client";

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

/// What `team-timing` prints (one JSON line, from the lead).
#[derive(serde::Serialize)]
struct TeamTiming {
    processes: usize,
    nodes: usize,
    start_ms: f64,
    clock_uncertainty_us: f64,
    barrier_us: f64,
    gather_us: f64,
    gather_bytes_per_task: usize,
}

fn team_timing<T: Team>(team: &T, rounds: u32) -> Result<(), Failure> {
    use iosurvey::measure::TaskTiming;
    use iosurvey::team::Member;
    let member = team.members(1).pop().expect("one member");
    let rounds = rounds.max(1);
    member.barrier();
    let t = Instant::now();
    for _ in 0..rounds {
        member.barrier();
    }
    let barrier_us = t.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    // A gather of what each task reports after a phase: its timing record.
    let record = TaskTiming { task: member.rank() as u32, bytes: 1 << 30, ..TaskTiming::default() };
    let bytes = serde_json::to_vec(&record).map_or(0, |b| b.len());
    member.barrier();
    let t = Instant::now();
    for _ in 0..rounds {
        let _ = member.gather(record);
    }
    let gather_us = t.elapsed().as_secs_f64() * 1e6 / rounds as f64;
    let result = TeamTiming {
        processes: team.processes(),
        nodes: team.hosts().len(),
        start_ms: TEAM_START_NS.get().copied().unwrap_or(0) as f64 / 1e6,
        clock_uncertainty_us: team.clock_uncertainty() as f64 / 1e3,
        barrier_us,
        gather_us,
        gather_bytes_per_task: bytes,
    };
    if team.process() == 0 {
        let line = serde_json::to_string(&result).map_err(|e| Failure::new(e, "report this as a bug", 1))?;
        println!("{}", iosurvey::escape::json(line));
    }
    Ok(())
}

/// Nanoseconds per call of `f`, over enough calls to take about 0.2 s.
fn per_call(mut f: impl FnMut(u64)) -> f64 {
    let mut n = 1u64 << 10;
    loop {
        let t = Instant::now();
        for i in 0..n {
            f(i);
        }
        let elapsed = t.elapsed().as_secs_f64();
        if elapsed > 0.2 {
            return elapsed * 1e9 / n as f64;
        }
        n *= 4;
    }
}

/// What the data path adds to each transfer besides the I/O, measured here and now.
fn overhead() -> String {
    use iosurvey::engine::data::{check, fill_verified, Stamp};
    use iosurvey::measure::histogram::Histogram;
    use iosurvey::measure::Series;
    use iosurvey::team::clock::monotonic_ns;
    use std::hint::black_box;
    use std::sync::atomic::{AtomicBool, AtomicU64};
    let clock = per_call(|_| {
        black_box(monotonic_ns());
    });
    let mut h = Histogram::default();
    let hist = per_call(|i| h.record(black_box(i * 7919 % 1_000_000)));
    let mut series = Series { interval_ns: 1_000_000, ..Series::default() };
    let add = per_call(|i| series.add(black_box(i * 10), 4096));
    let (counter, flag) = (AtomicU64::new(0), AtomicBool::new(false));
    let atomics = per_call(|i| {
        counter.store(i, Ordering::Relaxed);
        black_box(flag.load(Ordering::Relaxed));
    });
    let mut buf = vec![0u8; 1 << 20];
    let mut scratch = vec![0u8; 1 << 20];
    let stamp = Stamp { token: 1, task: 0, offset: 0 };
    let fill = per_call(|_| fill_verified(black_box(&mut buf), stamp));
    let verify = per_call(|_| {
        black_box(check(&buf, stamp, &mut scratch));
    });
    let gib = |ns: f64| (1u64 << 20) as f64 / ns;
    format!(
        "clock read             {clock:>8.1} ns (two per transfer)\n\
         histogram record       {hist:>8.1} ns\n\
         time-series add        {add:>8.1} ns\n\
         progress + abort flag  {atomics:>8.1} ns\n\
         per transfer in all    {:>8.1} ns\n\
         verify: write fill     {:>8.2} GB/s ({fill:.0} ns per MiB)\n\
         verify: read check     {:>8.2} GB/s ({verify:.0} ns per MiB)\n",
        2.0 * clock + hist + add + atomics,
        gib(fill),
        gib(verify)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_fresh_dir_makes_are_reclaimed() {
        for ours in ["iosurvey-survey-42", "iosurvey-io500-1", "iosurvey-matrix-99999"] {
            assert!(fresh_dir_name(ours.as_bytes()), "{ours}");
        }
        for other in [
            "iosurvey-survey-",
            "iosurvey--42",
            "iosurvey-Survey-4",
            "iosurvey-survey-4x",
            "data",
            "iosurvey.meta",
            "x-iosurvey-survey-4",
        ] {
            assert!(!fresh_dir_name(other.as_bytes()), "{other}");
        }
    }
}
