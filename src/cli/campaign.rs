//! `iosurvey campaign plan|run|status`: a campaign file turned into points, each point into
//! the command line of the study's own command (so its settings are checked by the same
//! declarations as when typed), played in order with its hooks, filed under the campaign.

use super::commands::command;
use super::{Cli, Command, Failure};
use iosurvey::campaign::hooks::{run_hook, HookRun};
use iosurvey::campaign::{self, Campaign, Done, Kind, Point};
use iosurvey::record::{GroupId, GroupKind};
use iosurvey::session::Within;
use iosurvey::store::{PointName, Store};
use iosurvey::team::{share_value, Team};
use iosurvey::units::{format_duration, format_size};
use std::path::{Path, PathBuf};

/// The settings a campaign gives every point itself, from its targets and its store.
const SET_BY_CAMPAIGN: &[(&str, &str)] = &[
    ("dir", "the [[target]]'s dir"),
    ("label", "the [[target]]'s label"),
    ("db", "--db of the campaign command"),
    ("json", "the store; export with 'iosurvey show' or 'iosurvey report'"),
    ("csv", "the store; export with 'iosurvey show' or 'iosurvey report'"),
    ("quiet", "the campaign's own progress"),
];

/// `--scale 1/N`: every amount of data divided by N, client counts capped at the launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scale(pub u64);

pub(super) fn scale_arg(text: &str) -> Result<Scale, String> {
    let n = text.strip_prefix("1/").and_then(|n| n.parse::<u64>().ok()).filter(|&n| n >= 1);
    n.map(Scale).ok_or_else(|| format!("'{text}' is not a scale (hint: give 1/N, e.g. --scale 1/4096)"))
}

/// `--only study=NAME,target=LABEL`: a subset of the points.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Only {
    study: Vec<String>,
    target: Vec<String>,
}

pub(super) fn only_arg(text: &str) -> Result<Only, String> {
    let mut only = Only::default();
    for part in text.split(',') {
        match part.split_once('=') {
            Some(("study", v)) if !v.is_empty() => only.study.push(v.to_string()),
            Some(("target", v)) if !v.is_empty() => only.target.push(v.to_string()),
            _ => {
                return Err(format!(
                    "'{part}' is not study=NAME or target=LABEL (hint: give --only study=seq-write,target=f800)"
                ))
            }
        }
    }
    Ok(only)
}

/// What `campaign` was asked.
pub(super) struct Asked<'a> {
    pub file: &'a Path,
    pub scale: Option<Scale>,
    pub only: Option<&'a Only>,
}

/// Reads the file after checking who may have written it: a campaign runs its hooks as the
/// user who runs it, so as root a file (or its directory) that someone else could change is
/// refused.
fn read(path: &Path) -> Result<Campaign, Failure> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |what: String, hint: &str| Failure::new(what, hint, 2);
    let shown = iosurvey::escape::visible(&path.display().to_string()).to_string();
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| refuse(format!("cannot read {shown}: {e}"), "give the path of a campaign file"))?;
    if !meta.is_file() {
        return Err(refuse(
            format!("{shown} is not a regular file"),
            "give the campaign file itself, not a link or a directory",
        ));
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if me == 0 {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        for (what, m) in [
            (shown.clone(), Some(meta.clone())),
            (format!("its directory {}", dir.display()), std::fs::metadata(dir).ok()),
        ] {
            let Some(m) = m else { continue };
            // A sticky directory (/tmp) lets others add files but not replace this one.
            let sticky = m.is_dir() && m.mode() & 0o1000 != 0;
            if m.uid() != 0 || (m.mode() & 0o022 != 0 && !sticky) {
                return Err(refuse(
                    format!("{what} can be changed by a user other than root, and a campaign runs its hooks as root"),
                    "chown root and chmod go-w the file and its directory",
                ));
            }
        }
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| refuse(format!("cannot read {shown}: {e}"), "give a campaign file in UTF-8"))?;
    campaign::parse(path, &text).map_err(|e| Failure::new(&e, &e.hint, 2))
}

/// The flags of `kind`'s command (the ids clap knows them by, `-` for `_`).
fn flags_of(kind: Kind) -> Vec<String> {
    super::parser()
        .find_subcommand(kind.name())
        .map(|c| c.get_arguments().map(|a| a.get_id().as_str().replace('_', "-")).collect())
        .unwrap_or_default()
}

/// A study's settings as its command's flags: true as the flag alone, false left out, a list
/// joined by commas. `clients` is the campaign's to sweep and is left out.
fn study_args(c: &Campaign, s: &campaign::Study) -> Result<Vec<String>, Failure> {
    let mut args = Vec::new();
    for set in &s.settings {
        if let Some((_, from)) = SET_BY_CAMPAIGN.iter().find(|(k, _)| *k == set.key) {
            return Err(at_line(
                c,
                Some(set.line),
                format!("study '{}': '{}' is set by the campaign", s.name, set.key),
                &format!("leave it out: it comes from {from}"),
            ));
        }
        if set.key == "clients" && s.kind.swept() {
            continue;
        }
        match &set.value {
            campaign::Value::Bool(true) => args.push(format!("--{}", set.key)),
            campaign::Value::Bool(false) => {}
            v => {
                args.push(format!("--{}", set.key));
                args.push(v.as_arg());
            }
        }
    }
    let flags = flags_of(s.kind);
    let cache = &c.cache;
    for (on, flag) in [(cache.drop_caches, "drop-caches"), (cache.direct, "direct"), (cache.reorder, "reorder")] {
        if on && flags.iter().any(|f| f == flag) && !args.contains(&format!("--{flag}")) {
            args.push(format!("--{flag}"));
        }
    }
    Ok(args)
}

fn at_line(c: &Campaign, line: Option<usize>, what: String, hint: &str) -> Failure {
    let e = campaign::FileError { path: c.path.clone(), line, what, hint: hint.to_string() };
    Failure::new(&e, hint, 2)
}

/// The study's command line parsed by the command's own declarations; an error names the
/// setting it came from.
fn parse_point(c: &Campaign, s: &campaign::Study, db: &Path, argv: &[String]) -> Result<Cli, Failure> {
    use clap::error::ContextKind;
    use clap::FromArgMatches;
    let full =
        ["iosurvey".to_string(), "--db".into(), db.display().to_string()].into_iter().chain(argv.iter().cloned());
    let parsed = super::parser().try_get_matches_from(full).and_then(|m| Cli::from_arg_matches(&m));
    parsed.map_err(|e| {
        let flag = |kind| match e.get(kind) {
            Some(clap::error::ContextValue::String(s)) => Some(s.clone()),
            Some(clap::error::ContextValue::Strings(v)) => v.first().cloned(),
            _ => None,
        };
        let named = flag(ContextKind::InvalidArg)
            .map(|f| f.trim_start_matches('-').split([' ', '=', '<']).next().unwrap_or_default().to_string());
        let setting = named.as_ref().and_then(|n| s.settings.iter().find(|set| &set.key == n));
        let line = setting.map(|set| set.line).or(s.line);
        if e.kind() == clap::error::ErrorKind::UnknownArgument {
            let key = named.unwrap_or_default();
            let near = flag(ContextKind::SuggestedArg).map(|f| f.trim_start_matches('-').to_string());
            let hint = match near {
                Some(n) => format!("did you mean '{n}'?"),
                None => format!("see 'iosurvey {} --help' for its settings", s.kind.name()),
            };
            return at_line(c, line, format!("study '{}' ({}): unknown key '{key}'", s.name, s.kind.name()), &hint);
        }
        let why = super::parse_error_line(&e.to_string());
        let (what, hint) = match why.rsplit_once(" (hint: ") {
            Some((w, h)) => (w.to_string(), h.trim_end_matches(')').to_string()),
            None => (why, format!("see 'iosurvey {} --help'", s.kind.name())),
        };
        at_line(c, line, format!("study '{}' ({}): {what}", s.name, s.kind.name()), &hint)
    })
}

/// Divides the amounts of data of a parsed command by `by` (transfers and records kept, each
/// amount at least one of them).
fn scaled(cli: &mut Cli, by: u64) {
    let down = |v: u64, least: u64| (v / by).max(least);
    match &mut cli.command {
        Command::Run(a) => {
            if let iosurvey::spec::Shape::Data(d) = &mut a.workload.shape {
                d.block = down(d.block, d.transfer) / d.transfer * d.transfer;
            }
            let transfer = a.workload.data().map_or(1, |d| d.transfer);
            a.total = a.total.map(|t| down(t, transfer));
        }
        Command::Meta(a) => {
            a.meta.items = down(a.meta.items, 1);
            a.items_per_dir = a.items_per_dir.map(|n| down(n, 1));
        }
        Command::Survey(a) => a.size = down(a.size, 1 << 20),
        Command::Matrix(a) => {
            a.max_file = down(a.max_file, a.min_record);
            a.min_file = a.min_file.min(a.max_file);
            a.max_record = a.max_record.min(a.max_file);
        }
        Command::Io500(a) => a.quick = true,
        _ => {}
    }
}

/// The points of the campaign in run order, each checked by its command's declarations.
fn points<T: Team>(c: &Campaign, db: &Path, team: &T, scale: Option<Scale>) -> Result<Vec<Point>, Failure> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut all = Vec::new();
    for (si, s) in c.studies.iter().enumerate() {
        let base = study_args(c, s)?;
        let given_tasks =
            s.settings.iter().find(|x| x.key == "tasks").and_then(|x| x.value.as_arg().parse::<usize>().ok());
        let counts = match s.settings.iter().find(|x| x.key == "clients" && s.kind.swept()) {
            Some(set) => iosurvey::plan::parse_counts(&set.value.as_arg()).map_err(|e| {
                at_line(c, Some(set.line), format!("study '{}': clients: {e}", s.name), "give clients = \"1..64:x2\"")
            })?,
            None => vec![team.processes() * given_tasks.unwrap_or(1)],
        };
        let mut counts: Vec<Option<usize>> =
            if s.kind.swept() { counts.into_iter().map(Some).collect() } else { vec![None] };
        if let (Some(_), true) = (scale, s.kind.swept()) {
            // Scaled down: the launch's cores are the most clients.
            let most = team.processes() * given_tasks.unwrap_or(cores);
            counts = counts.into_iter().map(|n| n.map(|n| n.min(most))).collect();
            counts.dedup();
        }
        for &t in &s.targets {
            let target = &c.targets[t];
            let mut argv = vec![s.kind.name().to_string()];
            argv.extend(base.iter().cloned());
            match s.kind {
                Kind::Survey => argv.push(target.dir.display().to_string()),
                _ => argv.extend(["--dir".to_string(), target.dir.display().to_string()]),
            }
            argv.extend(["--label".to_string(), target.label.clone()]);
            for &clients in &counts {
                let mut argv = argv.clone();
                let mut refusal = None;
                if let Some(n) = clients {
                    // A client is a process of a launch (a node, as the papers count them), or a
                    // thread of the one process there is.
                    let threads = given_tasks.unwrap_or(if team.processes() > 1 { 1 } else { n });
                    if given_tasks.is_none() {
                        argv.extend(["--tasks".into(), threads.to_string()]);
                    }
                    if n > team.processes() * threads {
                        refusal =
                            Some(format!("needs a launch of {n} tasks (this one has {})", team.processes() * threads));
                    } else if team.processes() > 1 || given_tasks.is_some() {
                        argv.extend(["--clients".into(), n.to_string()]);
                    }
                }
                let mut cli = parse_point(c, s, db, &argv)?;
                if let Some(Scale(by)) = scale {
                    scaled(&mut cli, by);
                }
                let key: std::sync::Arc<str> = point_key(&cli, s.kind, &base, scale, clients)?.into();
                let argv: std::sync::Arc<[String]> = argv.into();
                let (refusal, flag) = match refusal {
                    Some(r) => (Some(r), None),
                    None => data_rule(c, &cli, team, scale),
                };
                for repetition in 0..c.repetitions {
                    all.push(Point {
                        study: si,
                        target: t,
                        clients,
                        repetition,
                        key: key.clone(),
                        argv: argv.clone(),
                        refusal: refusal.clone(),
                        flag: flag.clone(),
                    });
                }
            }
        }
    }
    Ok(campaign::ordered(all, c.order))
}

/// What a point measures, as the store knows it: a run's workload key, or for a study run
/// whole its command's settings.
fn point_key(
    cli: &Cli,
    kind: Kind,
    base: &[String],
    scale: Option<Scale>,
    clients: Option<usize>,
) -> Result<String, Failure> {
    let run = match &cli.command {
        Command::Run(a) => Some((a.workload.clone(), a.total)),
        Command::Meta(a) => Some((super::commands::meta_run(a)?.workload, None)),
        _ => None,
    };
    if let Some((w, total)) = run {
        let tasks = clients.unwrap_or(w.tasks);
        let mut list = iosurvey::plan::List::sweep(&w, &[tasks], total)?;
        if let iosurvey::plan::Step::Run { workload, .. } =
            iosurvey::plan::Plan::next(&mut list, iosurvey::plan::Last::Start)
        {
            // As the store reads it back (`store::campaigns::RUN_KEY`).
            return Ok(format!("{} tasks={}", workload.key(), workload.tasks));
        }
    }
    let mut settings = base.to_vec();
    settings.sort();
    let scaled = scale.map_or(String::new(), |Scale(n)| format!(" scale=1/{n}"));
    Ok(format!("{} {}{scaled}", kind.name(), settings.join(" ")))
}

/// The `[cache]` data rule for a data run: its data per node against the node's memory (at
/// the campaign's scale). A refusal, or with `data-rule = "flag"` a flag.
fn data_rule<T: Team>(c: &Campaign, cli: &Cli, team: &T, scale: Option<Scale>) -> (Option<String>, Option<String>) {
    let Some(times) = c.cache.data_times_ram else { return (None, None) };
    let Command::Run(a) = &cli.command else { return (None, None) };
    let w = &a.workload;
    let per_task = a.total.map_or_else(|| w.bytes_per_phase() / w.tasks.max(1) as u64, |t| t / w.tasks.max(1) as u64);
    let nodes = team.process_nodes().into_iter().collect::<std::collections::BTreeSet<_>>().len().max(1);
    let per_node = per_task.saturating_mul(w.tasks as u64) / nodes as u64;
    let ram = iosurvey::env::ram_bytes() / scale.map_or(1, |Scale(n)| n);
    let need = (ram as f64 * times) as u64;
    if per_node >= need {
        return (None, None);
    }
    let why = format!(
        "{} per node is less than {times}x the node's memory ({}{})",
        format_size(per_node),
        format_size(need),
        if scale.is_some() { ", scaled" } else { "" }
    );
    match c.cache.flag_only {
        true => (None, Some(why)),
        false => (Some(why), None),
    }
}

/// The points `--only` keeps.
fn keep(c: &Campaign, points: Vec<Point>, only: Option<&Only>) -> Result<Vec<Point>, Failure> {
    let Some(only) = only else { return Ok(points) };
    for name in &only.study {
        if !c.studies.iter().any(|s| &s.name == name) {
            return Err(Failure::new(
                format!("--only study={name}: the campaign has no such study"),
                "give a [[study]] name of the file",
                2,
            ));
        }
    }
    for label in &only.target {
        if !c.targets.iter().any(|t| &t.label == label) {
            return Err(Failure::new(
                format!("--only target={label}: the campaign has no such target"),
                "give a [[target]] label of the file",
                2,
            ));
        }
    }
    Ok(points
        .into_iter()
        .filter(|p| only.study.is_empty() || only.study.contains(&c.studies[p.study].name))
        .filter(|p| only.target.is_empty() || only.target.contains(&c.targets[p.target].label))
        .collect())
}

/// A point in words.
fn said(c: &Campaign, p: &Point) -> String {
    let s = &c.studies[p.study];
    let clients = p.clients.map_or(String::new(), |n| format!(", {n} client{}", if n == 1 { "" } else { "s" }));
    format!(
        "{} ({}) on {}{clients}, repetition {} of {}",
        s.name,
        s.kind.name(),
        c.targets[p.target].label,
        p.repetition + 1,
        c.repetitions
    )
}

fn point_name(c: &Campaign, p: &Point) -> PointName {
    let (study, target, key) = p.identity(c);
    PointName { study, target, key }
}

/// How long a point took before, from the store: the mean of the phases' windows of its
/// stored runs (the window excludes set-up, so the estimate is low by that much).
fn past_secs(store: &Store, c: &Campaign, p: &Point) -> Option<f64> {
    let ids = store.runs_of_point(&c.targets[p.target].label, &p.key).ok()?;
    let secs: Vec<f64> = ids
        .iter()
        .take(5)
        .filter_map(|&id| store.load(id).ok())
        .map(|r| r.phases.iter().map(|ph| ph.figures.window_ns as f64 / 1e9).sum())
        .collect();
    (!secs.is_empty()).then(|| secs.iter().sum::<f64>() / secs.len() as f64)
}

/// `campaign plan FILE`: every point in order, its hooks, refusals and estimates.
pub(super) fn plan<T: Team>(cli: &Cli, asked: &Asked, team: &T) -> Result<(), Failure> {
    let c = read(asked.file)?;
    let all = keep(&c, points(&c, &cli.db, team, asked.scale)?, asked.only)?;
    if team.process() != 0 {
        return Ok(());
    }
    let store = match cli.db.exists() {
        true => Some(Store::open_existing(&cli.db)?),
        false => None,
    };
    let done: Done = match &store {
        Some(s) => tally_done(s, &c.name)?,
        None => Done::new(),
    };
    let mut out = String::new();
    out += &format!(
        "campaign {} (version {}), {} targets, {} studies, {} repetitions, order {:?}\n",
        c.name,
        c.version(),
        c.targets.len(),
        c.studies.len(),
        c.repetitions,
        c.order
    );
    let hooks = c.hooks.all();
    for (name, h) in &hooks {
        let place = match h.place {
            iosurvey::campaign::HookPlace::Lead => "on the lead",
            iosurvey::campaign::HookPlace::EveryNode => "on every node",
        };
        let failing = if h.ignore_failure { "a failure is ignored" } else { "a failure fails the point" };
        out += &format!("hook {name} ({place}; {failing}): {}\n", iosurvey::escape::visible(&h.command));
    }
    let (mut total_secs, mut unknown, mut refused, mut skipped) = (0.0, 0usize, 0usize, 0usize);
    let mut per_study: Vec<(f64, usize, u64)> = vec![(0.0, 0, 0); c.studies.len()];
    for (k, p) in all.iter().enumerate() {
        let state = if campaign::is_done(&c, p, &done) {
            skipped += 1;
            "stored".to_string()
        } else if let Some(why) = &p.refusal {
            refused += 1;
            format!("refused: {why}")
        } else {
            let est = store.as_ref().and_then(|s| past_secs(s, &c, p));
            match est {
                Some(secs) => {
                    total_secs += secs;
                    per_study[p.study].0 += secs;
                    format!("about {} (from stored runs)", format_duration(secs))
                }
                None => {
                    unknown += 1;
                    per_study[p.study].1 += 1;
                    "no estimate (no stored run of this workload on this target)".into()
                }
            }
        };
        if let Some(bytes) = bytes_of(&cli.db, &c, p) {
            per_study[p.study].2 = per_study[p.study].2.max(bytes);
        }
        let flag = p.flag.as_ref().map_or(String::new(), |f| format!(" [flagged: {f}]"));
        out += &format!(
            "{:>4}. {}: {state}{flag}\n      iosurvey {}\n",
            k + 1,
            said(&c, p),
            iosurvey::escape::visible(&p.argv.join(" "))
        );
    }
    for (s, (secs, unknown, bytes)) in c.studies.iter().zip(&per_study) {
        let more = if *unknown > 0 { format!(" + {unknown} points without an estimate") } else { String::new() };
        out += &format!(
            "study {}: about {}{more}; writes up to {} per point at once\n",
            s.name,
            format_duration(*secs),
            format_size(*bytes)
        );
    }
    let todo = all.len() - skipped - refused;
    out += &format!(
        "total: {} points, {todo} to run, {skipped} stored already, {refused} refused; about {}{}{}\n",
        all.len(),
        format_duration(total_secs),
        if unknown > 0 {
            format!(" + {unknown} points without an estimate (run them once, or 'campaign run --only', to learn their time)")
        } else {
            String::new()
        },
        c.budget_secs.map_or(String::new(), |b| format!("; budget {}", format_duration(b)))
    );
    print!("{out}");
    Ok(())
}

/// The bytes a data point writes at most at once (its files), for the space estimate.
fn bytes_of(db: &Path, c: &Campaign, p: &Point) -> Option<u64> {
    let cli = parse_point(c, &c.studies[p.study], db, &p.argv).ok()?;
    match &cli.command {
        Command::Run(a) => Some(a.total.unwrap_or_else(|| a.workload.bytes_per_phase())),
        Command::Survey(a) => Some(a.size),
        Command::Matrix(a) => Some(a.max_file.saturating_mul(a.tasks as u64)),
        _ => None,
    }
}

fn tally_done(store: &Store, name: &str) -> Result<Done, Failure> {
    Ok(store.campaign_tally(name)?.into_iter().map(|(p, (ok, _))| ((p.study, p.target, p.key), ok)).collect())
}

/// What the lead decides before a campaign runs, and every process follows.
#[derive(serde::Serialize, serde::Deserialize)]
struct Start {
    campaign: GroupId,
    /// Indices into the planned points of those to run now.
    todo: Vec<usize>,
    skipped: usize,
    refused: usize,
}

/// `campaign run FILE`.
pub(super) fn run<T: Team>(cli: &Cli, asked: &Asked, team: &T) -> Result<(), Failure> {
    let c = read(asked.file)?;
    let all = keep(&c, points(&c, &cli.db, team, asked.scale)?, asked.only)?;
    super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    let start = super::opening::on_lead(team, || {
        let store = Store::open(&cli.db)?;
        let done = tally_done(&store, &c.name)?;
        let todo: Vec<usize> =
            (0..all.len()).filter(|&k| !campaign::is_done(&c, &all[k], &done) && all[k].refusal.is_none()).collect();
        let skipped = all.iter().filter(|p| campaign::is_done(&c, p, &done)).count();
        let refused = all.iter().filter(|p| p.refusal.is_some() && !campaign::is_done(&c, p, &done)).count();
        let spec = serde_json::json!({ "name": c.name, "version": c.version(), "file": c.path.display().to_string(), "text": c.text, "scale": asked.scale.map(|s| s.0) });
        let campaign = match store.campaign_version(&c.name, &c.version())? {
            Some(g) => g,
            None => store.begin_group(&iosurvey::store::GroupStart {
                kind: GroupKind::Campaign,
                parent: None,
                started: iosurvey::units::now_unix(),
                command_line: super::opening::command_line(),
                spec: spec.to_string(),
                point: None,
            })?,
        };
        Ok(Start { campaign, todo, skipped, refused })
    })?;
    let start: Start = share_value(team, start.as_ref());
    let lead = team.process() == 0;
    let say = |line: String| {
        if lead && !cli.quiet {
            say!("iosurvey: {line}");
        }
    };
    say(format!(
        "campaign {} ({}): {} points to run, {} stored already, {} refused",
        c.name,
        start.campaign,
        start.todo.len(),
        start.skipped,
        start.refused
    ));
    let began = std::time::Instant::now();
    let (mut ok, mut failed) = (0usize, 0usize);
    let mut stopped: Option<Failure> = None;
    let todo: Vec<&Point> = start.todo.iter().map(|&k| &all[k]).collect();
    for (k, p) in todo.iter().enumerate() {
        if super::CANCEL.is_cancelled() {
            stopped = Some(Failure::new(
                format!(
                    "campaign {} interrupted; the points stored stay, the one in progress is stored as failed",
                    start.campaign
                ),
                "run the same command again to resume",
                130,
            ));
            break;
        }
        if let Some(budget) = c.budget_secs.filter(|&b| began.elapsed().as_secs_f64() > b) {
            stopped = Some(Failure::new(
                format!(
                    "campaign {}: its budget of {} is spent, {} points not run",
                    start.campaign,
                    format_duration(budget),
                    todo.len() - k
                ),
                "run the same command again to go on",
                1,
            ));
            break;
        }
        let eta = match k {
            0 => String::new(),
            _ => {
                format!(", ETA {}", format_duration(began.elapsed().as_secs_f64() / k as f64 * (todo.len() - k) as f64))
            }
        };
        say(format!("[{}/{}{eta}] {}", k + 1, todo.len(), said(&c, p)));
        let name = point_name(&c, p);
        let s = &c.studies[p.study];
        let env = environment(&c, p, start.campaign);
        let first_of_study = !todo[..k].iter().any(|q| q.study == p.study);
        let last_of_study = !todo[k + 1..].iter().any(|q| q.study == p.study);
        let mut kept: Vec<HookRun> = Vec::new();
        let mut hook_failed = None;
        for (hook_name, hook) in [
            ("before-study", c.hooks.before_study.as_ref().filter(|_| first_of_study)),
            ("before-run", c.hooks.before_run.as_ref()),
        ] {
            let Some(hook) = hook else { continue };
            let runs = run_hook(team, hook_name, hook, &env);
            if !hook.ignore_failure {
                hook_failed = hook_failed.or(runs
                    .iter()
                    .find(|r| !r.ok())
                    .map(|r| format!("hook {hook_name} on {} ended with {}", r.node, r.ending())));
            }
            kept.extend(runs);
        }
        let hook_failed: Option<String> = share_value(team, lead.then_some(&hook_failed));
        let outcome = match hook_failed {
            Some(why) => Err(Failure::new(why, "see the hook's output in 'iosurvey campaign status'", 1)),
            None => point_cli(cli, &c, p, asked.scale).and_then(|mut point| {
                point.within = Some(Within { campaign: start.campaign, point: name.clone() });
                command(&point, team)
            }),
        };
        let status = if outcome.is_ok() { "ok" } else { "failed" };
        let mut env = env;
        env.push(("IOSURVEY_STATUS".into(), status.into()));
        for (hook_name, hook) in [
            ("after-run", c.hooks.after_run.as_ref()),
            ("after-study", c.hooks.after_study.as_ref().filter(|_| last_of_study)),
        ] {
            let Some(hook) = hook else { continue };
            kept.extend(run_hook(team, hook_name, hook, &env));
        }
        if lead && !kept.is_empty() {
            let store = Store::open(&cli.db)?;
            store.save_hooks(start.campaign, Some((&name, p.repetition)), &s.name, &kept)?;
        }
        match outcome {
            Ok(()) => ok += 1,
            Err(f) if f.code == 130 || super::CANCEL.is_cancelled() => {
                failed += 1;
                stopped = Some(Failure::new(
                    format!(
                        "campaign {} interrupted during {}; the points stored stay, that one is stored as failed",
                        start.campaign,
                        said(&c, p)
                    ),
                    "run the same command again to resume",
                    130,
                ));
                break;
            }
            Err(f) => {
                failed += 1;
                if let Some(line) = &f.line {
                    say(format!("point failed: {}: {}", said(&c, p), line));
                }
            }
        }
    }
    let whole = stopped.is_none() && failed == 0;
    super::opening::on_lead(team, || Ok(Store::open(&cli.db)?.finish_group(start.campaign, whole, None)?))?;
    say(format!(
        "campaign {}: {ok} points ok, {failed} failed, {} stored before, {} refused",
        start.campaign, start.skipped, start.refused
    ));
    match stopped {
        Some(f) => Err(f),
        None if failed > 0 => Err(Failure::new(
            format!("campaign {}: {failed} points failed", start.campaign),
            "see 'iosurvey campaign status', mend, and run the same command again",
            1,
        )),
        None => Ok(()),
    }
}

/// The facts of a point, for its hooks.
fn environment(c: &Campaign, p: &Point, campaign: GroupId) -> Vec<(String, String)> {
    let t = &c.targets[p.target];
    let mut env = vec![
        ("IOSURVEY_CAMPAIGN".to_string(), c.name.clone()),
        ("IOSURVEY_CAMPAIGN_ID".into(), campaign.to_string()),
        ("IOSURVEY_STUDY".into(), c.studies[p.study].name.clone()),
        ("IOSURVEY_KIND".into(), c.studies[p.study].kind.name().into()),
        ("IOSURVEY_TARGET".into(), t.label.clone()),
        ("IOSURVEY_TARGET_DIR".into(), t.dir.display().to_string()),
        ("IOSURVEY_REPETITION".into(), (p.repetition + 1).to_string()),
    ];
    if let Some(n) = p.clients {
        env.push(("IOSURVEY_CLIENTS".into(), n.to_string()));
    }
    env
}

/// A point's command, parsed as at planning and scaled alike, to be filed in the campaign.
fn point_cli(cli: &Cli, c: &Campaign, p: &Point, scale: Option<Scale>) -> Result<Cli, Failure> {
    let mut point = parse_point(c, &c.studies[p.study], &cli.db, &p.argv)?;
    if let Some(Scale(by)) = scale {
        scaled(&mut point, by);
    }
    point.quiet = true;
    Ok(point)
}

/// `campaign status FILE|cN`: per study and target, points stored whole, failed, to run.
pub(super) fn status<T: Team>(cli: &Cli, which: &str, scale: Option<Scale>, team: &T) -> Result<(), Failure> {
    let store = Store::open_existing(&cli.db)?;
    let (c, stored_scale) = resolve(&store, which)?;
    let scale = scale.or(stored_scale);
    let all = points(&c, &cli.db, team, scale)?;
    if team.process() != 0 {
        return Ok(());
    }
    let tally = store.campaign_tally(&c.name)?;
    let mut out = format!("campaign {} (version {})\n", c.name, c.version());
    let mut rows: Vec<(String, String, usize, usize, usize, usize)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in &all {
        let (study, target, key) = p.identity(&c);
        let row = match rows.iter_mut().position(|r| r.0 == study && r.1 == target) {
            Some(k) => k,
            None => {
                rows.push((study.clone(), target.clone(), 0, 0, 0, 0));
                rows.len() - 1
            }
        };
        let (ok, bad) = tally.get(&PointName { study, target, key: key.clone() }).copied().unwrap_or((0, 0));
        let r = &mut rows[row];
        if (p.repetition as usize) < ok {
            r.2 += 1;
        } else if p.refusal.is_some() {
            r.5 += 1;
        } else {
            r.4 += 1;
        }
        if seen.insert((p.study, p.target, key)) {
            r.3 += bad;
        }
    }
    out +=
        &format!("{:<24} {:<16} {:>6} {:>7} {:>7} {:>8}\n", "study", "target", "stored", "failed", "to run", "refused");
    for r in &rows {
        out += &format!("{:<24} {:<16} {:>6} {:>7} {:>7} {:>8}\n", r.0, r.1, r.2, r.3, r.4, r.5);
    }
    let (stored, to_run): (usize, usize) = rows.iter().fold((0, 0), |a, r| (a.0 + r.2, a.1 + r.4));
    out += &format!("{stored} of {} points stored whole; {to_run} to run\n", all.len());
    let hooks = store.hooks_of(&c.name)?;
    for h in hooks.iter().filter(|h| !h.run.ok()) {
        let output = h.run.output.lines().last().unwrap_or_default();
        out += &format!(
            "hook {} of {} on {} ended with {}: {}\n",
            h.run.hook,
            h.study.as_deref().unwrap_or("-"),
            h.run.node,
            h.run.ending(),
            iosurvey::escape::visible(output)
        );
    }
    print!("{out}");
    Ok(())
}

/// The campaign a name stands for: `cN` (the file as that version stored it) or a file.
fn resolve(store: &Store, which: &str) -> Result<(Campaign, Option<Scale>), Failure> {
    match which.strip_prefix('c').and_then(|n| n.parse::<i64>().ok()) {
        Some(n) if !Path::new(which).exists() => {
            let row = store.group(GroupId { kind: GroupKind::Campaign, number: n })?;
            let spec: serde_json::Value = serde_json::from_str(&row.spec).unwrap_or_default();
            let text = spec["text"].as_str().unwrap_or_default();
            let path = PathBuf::from(spec["file"].as_str().unwrap_or(which));
            let c = campaign::parse(&path, text).map_err(|e| Failure::new(&e, &e.hint, 2))?;
            Ok((c, spec["scale"].as_u64().map(Scale)))
        }
        _ => Ok((read(Path::new(which))?, None)),
    }
}

/// Each planned point not stored whole, with why: it failed, a rule refused it, or it has
/// not run yet.
fn unmeasured(c: &Campaign, all: &[Point], tally: &iosurvey::store::campaigns::Tally) -> Vec<(String, String)> {
    all.iter()
        .filter_map(|p| {
            let (ok, failed) = tally.get(&point_name(c, p)).copied().unwrap_or((0, 0));
            if (p.repetition as usize) < ok {
                return None;
            }
            let why = match (&p.refusal, failed) {
                (Some(r), _) => format!("refused: {r}"),
                (None, 0) => "not run yet".to_string(),
                (None, n) => format!("failed ({n} attempt{})", if n == 1 { "" } else { "s" }),
            };
            Some((said(c, p), why))
        })
        .collect()
}

/// `report --campaign cN`: the campaign's results section, its studies in the file's order,
/// the points not measured, and the file and hooks in an appendix.
pub(super) fn report<T: Team>(
    cli: &Cli,
    which: &str,
    (output, format): (&Path, iosurvey::report::Format),
    team: &T,
) -> Result<String, Failure> {
    use iosurvey::analysis::campaign as analysed;
    use iosurvey::report::paper::Block;
    super::output::check(output, &cli.db, "-o")?;
    let store = Store::open_existing(&cli.db)?;
    let (c, scale) = resolve(&store, which)?;
    let load = |ids: Vec<i64>| ids.into_iter().map(|i| store.load(i)).collect::<Result<Vec<_>, _>>();
    let runs = load(store.campaign_runs(&c.name)?)?;
    let groups = store.campaign_groups(&c.name)?;
    let mut matrices = Vec::new();
    let mut surveys = Vec::new();
    for (g, point, _) in &groups {
        match g.kind {
            GroupKind::Matrix => matrices.push((point.study.clone(), store.load_matrix(g.number)?)),
            _ => surveys.push((point.study.clone(), g.number, load(store.group_runs(*g)?)?)),
        }
    }
    let mine: Vec<iosurvey::record::RunRecord> = runs.iter().filter(|r| r.campaign_id.is_some()).cloned().collect();
    let studies = iosurvey::analysis::campaign::studies(&c, &mine, |study| analysed::Grouped {
        surveys: surveys.iter().filter(|s| s.0 == study).map(|s| (s.1, s.2.clone())).collect(),
        matrices: matrices.iter().filter(|m| m.0 == study).map(|m| &m.1).collect(),
    });
    let all = points(&c, &cli.db, team, scale)?;
    let missing = unmeasured(&c, &all, &store.campaign_tally(&c.name)?);
    let only_matrices: Vec<iosurvey::record::MatrixRecord> = matrices.iter().map(|m| m.1.clone()).collect();
    let mut paper = iosurvey::report::paper::paper(&cli.db.display().to_string(), runs, &only_matrices, None)
        .map_err(|why| Failure::new(why, "report this as a bug", 1))?;
    paper.studies = studies;
    paper.studies.extend(analysed::not_measured(&missing));
    let mut blocks = paper.blocks();
    let tables = blocks.iter().filter(|b| matches!(b, Block::Table(..))).count();
    blocks.push(Block::Heading(2, format!("Appendix: campaign {}", c.name), "campaign-file".into()));
    blocks.push(Block::Text(format!(
        "The evaluation as run: the campaign file {} (version {}{}), to repeat it with 'iosurvey campaign run FILE'.",
        c.path.display(),
        c.version(),
        scale.map_or(String::new(), |Scale(n)| format!(", run at --scale 1/{n}"))
    )));
    blocks.push(Block::Code(c.text.clone()));
    let hooks = store.hooks_of(&c.name)?;
    if !hooks.is_empty() {
        blocks.push(Block::Table(
            tables + 1,
            analysed::hooks_table(&hooks),
            "Every hook's command, where it ran and how it ended".into(),
        ));
    }
    let counted = format!("campaign {} ({} studies, {} points not measured)", c.name, c.studies.len(), missing.len());
    super::commands::write_paper(&cli.db, (output, format), &blocks, &counted)
}
