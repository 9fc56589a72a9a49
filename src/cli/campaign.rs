//! `iosurvey campaign plan|run|status`: a campaign file turned into points, each point into
//! the command line of the study's own command (so its settings are checked by the same
//! declarations as when typed), played in order with its hooks, filed under the campaign.

use super::commands::command;
use super::{Cli, Command, Failure};
use iosurvey::campaign::batch::{Emit, Job, System};
use iosurvey::campaign::hooks::{run_hook, HookRun};
use iosurvey::campaign::{self, Campaign, Done, Kind, Point};
use iosurvey::record::{GroupId, GroupKind};
use iosurvey::session::Within;
use iosurvey::store::campaigns::{PointKey, StudyKey};
use iosurvey::store::{PointName, Store};
use iosurvey::team::{share_value, Team};
use iosurvey::units::{format_duration, format_size};
use std::collections::HashMap;
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
    match n {
        Some(n) if n > campaign::MAX_SCALE => Err(format!(
            "--scale 1/{n} divides by more than 1/{} (2^40), the smallest scale (hint: give 1/N with N at most {})",
            campaign::MAX_SCALE,
            campaign::MAX_SCALE
        )),
        Some(n) => Ok(Scale(n)),
        None => Err(format!("'{text}' is not a scale (hint: give 1/N, e.g. --scale 1/4096)")),
    }
}

/// `--only study=NAME,target=LABEL,nodes=N`: a subset of the points.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Only {
    study: Vec<String>,
    target: Vec<String>,
    nodes: Vec<usize>,
}

impl Only {
    /// Every `--only` given, as one: a point is kept when its study is among the studies named
    /// (or none is) and its target among the targets named (or none is).
    pub(super) fn merged(all: &[Only]) -> Option<Only> {
        (!all.is_empty()).then(|| Only {
            study: all.iter().flat_map(|o| o.study.clone()).collect(),
            target: all.iter().flat_map(|o| o.target.clone()).collect(),
            nodes: all.iter().flat_map(|o| o.nodes.clone()).collect(),
        })
    }
}

/// The parts of an `--only` between its commas. A label or a study name may hold a comma
/// itself: written `\,` it stays in the part (and `\\` is one backslash).
fn only_parts(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, chars.peek()) {
            ('\\', Some(&next @ (',' | '\\'))) => {
                chars.next();
                parts.last_mut().expect("never empty").push(next);
            }
            (',', _) => parts.push(String::new()),
            _ => parts.last_mut().expect("never empty").push(ch),
        }
    }
    parts
}

pub(super) fn only_arg(text: &str) -> Result<Only, String> {
    let mut only = Only::default();
    for part in only_parts(text) {
        let part = part.as_str();
        match part.split_once('=') {
            Some(("study", v)) if !v.is_empty() => only.study.push(v.to_string()),
            Some(("target", v)) if !v.is_empty() => only.target.push(v.to_string()),
            Some(("nodes", v)) if v.parse::<usize>().is_ok_and(|n| n >= 1) => only.nodes.push(v.parse().unwrap_or(1)),
            _ => {
                return Err(format!(
                "'{part}' is not study=NAME, target=LABEL or nodes=N (hint: give --only study=seq-write,target=f800)"
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
    /// `--root DIR`: every target placed at DIR/LABEL.
    pub root: Option<&'a Path>,
}

/// Reads the file after checking who may have written it: a campaign runs its hooks as the
/// user who runs it, so as root a file (or its directory) that someone else could change is
/// refused.
fn read(path: &Path) -> Result<Campaign, Failure> {
    read_placed(path, None).map(|(c, _)| c)
}

/// As [`read`], each target placed under `root` when given (made there, and removed when the
/// returned guard goes, if iosurvey made it); the file's own dirs need not exist then.
fn read_placed(path: &Path, root: Option<&Path>) -> Result<(Campaign, Option<campaign::root::Placed>), Failure> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |what: String, hint: &str| Failure::new(what, hint, 2);
    use iosurvey::input::{read_text, InputError, Links};
    let shown = iosurvey::escape::visible(&path.display().to_string()).to_string();
    // Read once, through the descriptor whose owner and mode are checked below.
    let (text, meta) = read_text(path, u64::MAX, Links::Refuse).map_err(|e| match e {
        InputError::NotRegular(what) => refuse(
            format!("{shown} is not a regular file ({what})"),
            "give the campaign file itself, not a link or a directory",
        ),
        InputError::Io(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            refuse(format!("cannot read {shown}: {e}"), "give a campaign file in UTF-8")
        }
        e => refuse(format!("cannot read {shown}: {e}"), "give the path of a campaign file"),
    })?;
    if iosurvey::target::dir::euid() == 0 {
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
    let parsed = match root {
        None => campaign::parse(path, &text),
        Some(_) => campaign::parse_stored(path, &text),
    };
    let mut c = parsed.map_err(|e| Failure::new(&e, &e.hint, 2))?;
    let placed = match root {
        Some(root) => Some(campaign::root::place(&mut c, root, true).map_err(|e| Failure::new(&e, &e.hint, 2))?),
        None => None,
    };
    super::hints::speak(spelling(&c));
    Ok((c, placed))
}

/// How hints name a point's flags to the one who wrote the campaign file: by the file's keys
/// (`force = true` where the point's command line has `--force`), the target's for what the
/// campaign sets from its targets.
fn spelling(c: &Campaign) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = vec![
        ("--dir".into(), "the target's dir".into()),
        ("--device".into(), "the target's device".into()),
        ("--label".into(), "the target's label".into()),
    ];
    let mut kinds: Vec<Kind> = c.studies.iter().map(|s| s.kind).collect();
    kinds.dedup();
    for (key, typed, values) in kinds.into_iter().flat_map(flags_of) {
        let theirs = SET_BY_CAMPAIGN.iter().any(|(k, _)| *k == key) || ["help", "version"].contains(&key.as_str());
        if typed.starts_with("--") && !theirs && !pairs.iter().any(|(t, _)| *t == typed) {
            pairs.push((typed, if values { format!("'{key}'") } else { format!("{key} = true") }));
        }
    }
    pairs
}

thread_local! {
    // The command line's declarations, built once: building them took a millisecond, which
    // per point (and per study) was most of the time of a plan of thousands. PARSER parses
    // the points; DECLARED is never parsed with, so it lists the flags as declared.
    static PARSER: std::cell::RefCell<clap::Command> = std::cell::RefCell::new(super::parser());
    static DECLARED: clap::Command = super::parser();
}

/// How each setting of `kind`'s command is typed, by its name in a campaign file: `--long`,
/// or `-C` for a flag that has only a letter (mdtest's -C, -T, -E, -r).
fn flags_of(kind: Kind) -> Vec<(String, String, bool)> {
    DECLARED
        .with(|d| {
            d.find_subcommand(kind.name()).map(|c| {
                c.get_arguments()
                    .filter_map(|a| {
                        let typed = match (a.get_long(), a.get_short()) {
                            (Some(long), _) => format!("--{long}"),
                            (None, Some(short)) => format!("-{short}"),
                            (None, None) => return None,
                        };
                        Some((a.get_id().as_str().replace('_', "-"), typed, a.get_action().takes_values()))
                    })
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// A study's settings as its command's flags, in the file's order: true as the flag alone,
/// false left out, a list joined by commas. `clients` is the campaign's to sweep and is left
/// out. A `[cache]` rule is added where the command takes it and the study does not set it.
fn study_args(c: &Campaign, s: &campaign::Study) -> Result<Vec<String>, Failure> {
    let flags = flags_of(s.kind);
    let typed = |key: &str| flags.iter().find(|(k, ..)| k == key).map_or(format!("--{key}"), |(_, t, _)| t.clone());
    let switch = |key: &str| flags.iter().any(|(k, _, values)| k == key && !values);
    let mut settings: Vec<&campaign::Setting> = s.settings.iter().collect();
    settings.sort_by_key(|set| set.line);
    let mut args = Vec::new();
    for set in settings {
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
        let refuse =
            |what: String, hint: &str| Err(at_line(c, Some(set.line), format!("study '{}': {what}", s.name), hint));
        match &set.value {
            campaign::Value::Bool(true) => args.push(typed(&set.key)),
            campaign::Value::Bool(false) => {}
            v if switch(&set.key) => {
                return refuse(format!("'{}' is true or false, not {}", set.key, v.as_arg()), "give true or false");
            }
            // A value the command would read as a flag of its own (a negative number too).
            v if v.as_arg().starts_with('-') => {
                return refuse(
                    format!("'{}' cannot begin with '-' ({})", set.key, v.as_arg()),
                    "give a value of 0 or more that does not begin with '-'",
                );
            }
            v => {
                args.push(typed(&set.key));
                args.push(v.as_arg());
            }
        }
    }
    let cache = &c.cache;
    for (on, flag) in [(cache.drop_caches, "drop-caches"), (cache.direct, "direct"), (cache.reorder, "reorder")] {
        let takes = flags.iter().any(|(k, ..)| k == flag);
        let set_by_study = s.settings.iter().any(|x| x.key == flag);
        if on && takes && !set_by_study {
            args.push(typed(flag));
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
    let full =
        ["iosurvey".to_string(), "--db".into(), db.display().to_string()].into_iter().chain(argv.iter().cloned());
    let parsed = PARSER.with(|p| p.borrow_mut().try_get_matches_from_mut(full)).and_then(|m| super::from_matches(&m));
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
        let why = super::parse_error_line(&super::clap_text(&e));
        let (what, hint) = match why.rsplit_once(" (hint: ") {
            Some((w, h)) => (w.to_string(), h.trim_end_matches(')').to_string()),
            None => (why, format!("see 'iosurvey {} --help'", s.kind.name())),
        };
        at_line(c, line, format!("study '{}' ({}): {what}", s.name, s.kind.name()), &hint)
    })
}

/// Divides the amounts of data of a parsed command by `by`, each still whole transfers for
/// its `clients` (or its tasks), and caps its threads at this machine's cores.
fn scaled(cli: &mut Cli, by: u64, clients: Option<usize>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let down = |v: u64, least: u64| (v / by).max(least);
    match &mut cli.command {
        Command::Run(a) => {
            a.team.tasks = a.team.tasks.min(cores);
            let n = clients.unwrap_or(a.team.tasks).max(1) as u64;
            if let iosurvey::spec::Shape::Data(d) = &mut a.workload.shape {
                d.block = down(d.block, d.transfer) / d.transfer * d.transfer;
                // The total splits into whole transfers over the point's tasks and segments.
                let step = d.transfer.saturating_mul(d.segments.max(1)).saturating_mul(n);
                a.total = a.total.map(|t| down(t, step) / step * step);
            }
        }
        Command::Meta(a) => {
            a.team.tasks = a.team.tasks.min(cores);
            a.meta.items = down(a.meta.items, 1);
            a.items_per_dir = a.items_per_dir.map(|n| down(n, 1));
        }
        Command::Survey(a) => {
            let tasks = a.tasks.get_or_insert(cores);
            *tasks = (*tasks).min(cores);
            a.size = down(a.size, (*tasks as u64) << 20);
        }
        Command::Matrix(a) => {
            a.tasks = a.tasks.min(cores);
            a.max_file = down(a.max_file, a.min_record);
            a.min_file = a.min_file.min(a.max_file);
            a.max_record = a.max_record.min(a.max_file);
        }
        Command::Io500(a) => {
            a.tasks = a.tasks.min(cores);
            a.quick = true;
        }
        _ => {}
    }
}

/// The `tasks` a study sets, when it does.
fn given_tasks(s: &campaign::Study) -> Option<usize> {
    s.settings.iter().find(|x| x.key == "tasks").and_then(|x| x.value.as_arg().parse::<usize>().ok())
}

/// The client counts a study's points run at (one `None` for a study run whole): its
/// `clients`, each once, capped at the launch's cores when scaled down.
fn client_counts<T: Team>(
    c: &Campaign,
    s: &campaign::Study,
    team: &T,
    scale: Option<Scale>,
    cores: usize,
) -> Result<Vec<Option<usize>>, Failure> {
    let given_tasks = given_tasks(s);
    let counts = match s.settings.iter().find(|x| x.key == "clients" && s.kind.swept()) {
        Some(set) => {
            let counts = iosurvey::plan::parse_counts(&set.value.as_arg()).map_err(|e| {
                at_line(c, Some(set.line), format!("study '{}': clients: {e}", s.name), "give clients = \"1..64:x2\"")
            })?;
            let mut seen = std::collections::HashSet::new();
            if let Some(twice) = counts.iter().find(|&&n| !seen.insert(n)) {
                return Err(at_line(
                    c,
                    Some(set.line),
                    format!("study '{}': clients names {twice} twice", s.name),
                    "name each client count once; repetitions = N repeats them",
                ));
            }
            counts
        }
        None => vec![team.processes() * given_tasks.unwrap_or(1)],
    };
    let mut counts: Vec<Option<usize>> =
        if s.kind.swept() { counts.into_iter().map(Some).collect() } else { vec![None] };
    if let (Some(_), true) = (scale, s.kind.swept()) {
        // Scaled down: the launch's cores are the most clients.
        let most = team.processes() * given_tasks.unwrap_or(cores).min(cores);
        counts = counts.into_iter().map(|n| n.map(|n| n.min(most))).collect();
        counts.dedup();
    }
    Ok(counts)
}

/// The points of the campaign in run order, each checked by its command's declarations;
/// refused in one line, before any is built, when they would be more than
/// [`campaign::MAX_POINTS`].
fn points<T: Team>(c: &Campaign, db: &Path, team: &T, scale: Option<Scale>) -> Result<Vec<Point>, Failure> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut sweeps, mut planned) = (Vec::new(), 0u64);
    for s in &c.studies {
        let counts = client_counts(c, s, team, scale, cores)?;
        let each = (counts.len() as u64).saturating_mul(s.targets.len() as u64);
        planned = planned.saturating_add(each.saturating_mul(u64::from(c.repetitions)));
        // Past the cap the counts are only counted, not kept: thousands of studies of 4096
        // counts each would otherwise fill memory before the refusal.
        if planned <= campaign::MAX_POINTS {
            sweeps.push(counts);
        }
    }
    if planned > campaign::MAX_POINTS {
        return Err(at_line(
            c,
            None,
            format!("the campaign has {planned} points, more than the {} a campaign may have", campaign::MAX_POINTS),
            "split it into campaigns, or give fewer targets, client counts or repetitions",
        ));
    }
    // The events of each study, by the target they name (None: every target of the study).
    let mut events: HashMap<(usize, Option<usize>), Vec<usize>> = HashMap::new();
    for (k, e) in c.events.iter().enumerate() {
        events.entry((e.study, e.target)).or_default().push(k);
    }
    let mut all = Vec::new();
    let mut fired = vec![false; c.events.len()];
    for ((si, s), counts) in c.studies.iter().enumerate().zip(sweeps) {
        let base = study_args(c, s)?;
        let given_tasks = given_tasks(s);
        for &t in &s.targets {
            let target = &c.targets[t];
            let mut argv = vec![s.kind.name().to_string()];
            argv.extend(base.iter().cloned());
            match s.kind {
                Kind::Survey => argv.push(target.dir.display().to_string()),
                // The file reader let only run studies onto a device.
                _ if target.device => argv.extend(["--device".to_string(), target.dir.display().to_string()]),
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
                let clients_of = clients.unwrap_or(team.processes() * given_tasks.unwrap_or(1));
                let mut mine: Vec<usize> =
                    [None, Some(t)].iter().filter_map(|&on| events.get(&(si, on))).flatten().copied().collect();
                // In the file's order, as the events were given.
                mine.sort_unstable();
                for k in mine {
                    let e = &c.events[k];
                    if e.clients.is_none_or(|n| n == clients_of) {
                        argv.extend(["--event".to_string(), e.event.clone()]);
                        fired[k] = true;
                    }
                }
                let mut cli = parse_point(c, s, db, &argv)?;
                if let Some(Scale(by)) = scale {
                    scaled(&mut cli, by, clients);
                }
                let measured = point_workload(&cli, clients).map_err(|f| in_study(c, s, clients, f))?;
                let scale_n = scale.map(|Scale(n)| n);
                let key = std::sync::Arc::new(match &measured {
                    Some(w) => PointKey::run(w, scale_n),
                    None => PointKey { study: whole_key(s, &base), tasks: None, scale: scale_n },
                });
                let what: std::sync::Arc<str> = measured.as_ref().map_or_else(|| sizes_of(&cli), |w| w.label()).into();
                let bytes = bytes_of(&cli, measured.as_ref());
                let argv: std::sync::Arc<[String]> = argv.into();
                let (refusal, flag) = match (refusal, &measured) {
                    (Some(r), _) => (Some(r), None),
                    (None, Some(w)) => data_rule(c, w, team, scale),
                    (None, None) => (None, None),
                };
                for repetition in 0..c.repetitions {
                    all.push(Point {
                        study: si,
                        target: t,
                        clients,
                        repetition,
                        key: key.clone(),
                        argv: argv.clone(),
                        what: what.clone(),
                        bytes,
                        refusal: refusal.clone(),
                        flag: flag.clone(),
                    });
                }
            }
        }
    }
    if let Some(e) = c.events.iter().zip(&fired).find(|(_, f)| !**f).map(|(e, _)| e) {
        return Err(at_line(
            c,
            e.line,
            format!(
                "this [[event]] matches no point of study '{}' (its target or client count)",
                c.studies[e.study].name
            ),
            "give a target and a client count the study runs, or leave them out",
        ));
    }
    Ok(campaign::ordered(all, c.order))
}

/// The points of a file asked to plan or run. At a scale the file must pass its checks at
/// full size as well: a rehearsal is there to find what the campaign itself would refuse,
/// and rounding sizes down to whole transfers can hide it (a total that does not split).
fn asked_points<T: Team>(c: &Campaign, db: &Path, team: &T, scale: Option<Scale>) -> Result<Vec<Point>, Failure> {
    if scale.is_some() {
        points(c, db, team, None).map_err(|f| Failure {
            line: f.line.map(|l| match l.rsplit_once(" (hint: ") {
                Some((what, hint)) => format!(
                    "{what}, at full size (hint: a rehearsal at --scale checks the file at full size too; {hint}"
                ),
                None => format!("{l}, at full size"),
            }),
            ..f
        })?;
    }
    points(c, db, team, scale)
}

/// The workload a run or metadata point runs: the study's, at the point's count of tasks.
fn point_workload(cli: &Cli, clients: Option<usize>) -> Result<Option<iosurvey::spec::Workload>, Failure> {
    let mut list = match &cli.command {
        // As the run will make it: on a device, the device's own defaults and size.
        Command::Run(a) => {
            let tasks = clients.unwrap_or(a.workload.tasks);
            super::commands::run_points(a, &[tasks], super::commands::smallest_here)?.0
        }
        Command::Meta(a) => {
            let w = super::commands::meta_run(a)?.workload;
            let tasks = clients.unwrap_or(w.tasks);
            iosurvey::plan::List::sweep(&w, &[tasks], None)?
        }
        _ => return Ok(None),
    };
    Ok(match iosurvey::plan::Plan::next(&mut list, iosurvey::plan::Last::Start) {
        iosurvey::plan::Step::Run { workload, .. } => Some(*workload),
        _ => None,
    })
}

/// A refusal of a point's settings, said with its study, its line and its client count.
fn in_study(c: &Campaign, s: &campaign::Study, clients: Option<usize>, f: Failure) -> Failure {
    let line = f.line.unwrap_or_default();
    let (what, hint) = line.rsplit_once(" (hint: ").map_or((line.as_str(), "see docs/campaigns.md)"), |(w, h)| (w, h));
    let at = clients.map_or(String::new(), |n| format!(" at {n} clients"));
    at_line(c, s.line, format!("study '{}'{at}: {what}", s.name), hint.trim_end_matches(')'))
}

/// What a study run whole measures, as the store knows it: its kind and its settings (those
/// of the file and those of `[cache]`, as `base` gives them to its command), each value in
/// its normal form.
fn whole_key(s: &campaign::Study, base: &[String]) -> StudyKey {
    // Pairs, not words: two studies that swap values between flags are not one.
    let mut pairs: Vec<(&str, Option<&str>)> = Vec::new();
    for arg in base {
        match (arg.starts_with('-'), pairs.last_mut()) {
            (false, Some((_, value @ None))) => *value = Some(arg.as_str()),
            _ => pairs.push((arg.as_str(), None)),
        }
    }
    StudyKey::whole(s.kind.name(), pairs)
}

/// The sizes a whole-study point runs with, after any scale, in words.
fn sizes_of(cli: &Cli) -> String {
    match &cli.command {
        Command::Survey(a) => format!("survey of {} per sequential phase", format_size(a.size)),
        Command::Matrix(a) => format!(
            "matrix of files {} to {}, records {} to {}",
            format_size(a.min_file),
            format_size(a.max_file),
            format_size(a.min_record),
            format_size(a.max_record)
        ),
        Command::Io500(a) => format!("io500{}", if a.quick { " --quick" } else { "" }),
        _ => String::new(),
    }
}

/// The bytes a point's files hold at most at once, for the space estimate.
fn bytes_of(cli: &Cli, measured: Option<&iosurvey::spec::Workload>) -> Option<u64> {
    match (&cli.command, measured) {
        (_, Some(w)) => w.data().map(|_| w.bytes_per_phase()),
        (Command::Survey(a), _) => Some(a.size),
        (Command::Matrix(a), _) => Some(a.max_file.saturating_mul(a.tasks as u64)),
        _ => None,
    }
}

/// The `[cache]` data rule for a data point: its data per node (over the nodes its tasks
/// are placed on, round-robin) against the node's memory (at the campaign's scale). A
/// refusal, or with `data-rule = "flag"` a flag.
fn data_rule<T: Team>(
    c: &Campaign,
    w: &iosurvey::spec::Workload,
    team: &T,
    scale: Option<Scale>,
) -> (Option<String>, Option<String>) {
    let Some(times) = c.cache.data_times_ram else { return (None, None) };
    if w.data().is_none() {
        return (None, None);
    }
    let nodes = Launch::of(team).nodes;
    let per_node = w.bytes_per_phase() / nodes.min(w.tasks.max(1)) as u64;
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

/// The points `--only` keeps. `launch`, when the points are to run here: its nodes and
/// processes, which `--only nodes=N` must match.
fn keep(c: &Campaign, points: Vec<Point>, only: Option<&Only>, launch: Option<Launch>) -> Result<Vec<Point>, Failure> {
    let Some(only) = only else { return Ok(points) };
    for name in &only.study {
        if !c.studies.iter().any(|s| &s.name == name) {
            return Err(Failure::new(
                format!("--only study={name}: the campaign has no such study"),
                "give a [[study]] name of the file (a comma in it written \\,)",
                2,
            ));
        }
    }
    for label in &only.target {
        if !c.targets.iter().any(|t| &t.label == label) {
            return Err(Failure::new(
                format!("--only target={label}: the campaign has no such target"),
                "give a [[target]] label of the file (a comma in it written \\,)",
                2,
            ));
        }
    }
    let nodes = match only.nodes.is_empty() {
        true => vec![0; points.len()],
        false => nodes_of(c, &points, launch)?,
    };
    Ok(points
        .into_iter()
        .zip(nodes)
        .filter(|(p, _)| only.study.is_empty() || only.study.contains(&c.studies[p.study].name))
        .filter(|(p, _)| only.target.is_empty() || only.target.contains(&c.targets[p.target].label))
        .filter(|(_, n)| only.nodes.is_empty() || only.nodes.contains(n))
        .map(|(p, _)| p)
        .collect())
}

/// "1 point", "2 points".
fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// A launch: its nodes and its processes.
#[derive(Debug, Clone, Copy)]
struct Launch {
    nodes: usize,
    processes: usize,
}

impl Launch {
    fn of<T: Team>(team: &T) -> Launch {
        let nodes = team.process_nodes().into_iter().collect::<std::collections::BTreeSet<_>>().len().max(1);
        Launch { nodes, processes: team.processes() }
    }
}

/// The nodes each point takes in a batch job, as `campaign emit` splits the campaign: its
/// clients over `[batch] tasks-per-node` (without `[batch]`, the launch's processes per node),
/// a whole-launch study `[batch] nodes` or the most any point takes.
fn nodes_of(c: &Campaign, points: &[Point], launch: Option<Launch>) -> Result<Vec<usize>, Failure> {
    let (per_node, whole) = match (&c.batch, launch) {
        (Some(b), _) => (b.tasks_per_node, b.nodes),
        (None, Some(l)) => (l.processes / l.nodes, None),
        (None, None) => {
            return Err(Failure::new(
                "--only nodes=N needs the campaign's [batch] table: its tasks-per-node says how points take nodes",
                "add [batch] to the file (docs/campaigns.md, \"Batch jobs\")",
                2,
            ))
        }
    };
    let clients: Vec<Option<usize>> = points.iter().map(|p| p.clients).collect();
    Ok(iosurvey::campaign::batch::nodes_taken(&clients, per_node, whole))
}

/// Refuses a launch that is not the batch job `--only nodes=N` was written for: the points of
/// an N-node job must run on N nodes with `tasks-per-node` each, or their runs would not be
/// what the campaign counts them as.
fn launch_fits(c: &Campaign, only: Option<&Only>, launch: Launch) -> Result<(), Failure> {
    let Some(only) = only.filter(|o| !o.nodes.is_empty()) else { return Ok(()) };
    let per_node = c.batch.as_ref().map_or(launch.processes / launch.nodes, |b| b.tasks_per_node);
    match only.nodes.iter().any(|&n| n == launch.nodes && launch.processes == n * per_node) {
        true => Ok(()),
        false => Err(Failure::new(
            format!(
                "--only nodes={} runs on that many nodes with {per_node} processes each, but this launch has {} processes on {} nodes",
                only.nodes.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(","),
                launch.processes,
                launch.nodes
            ),
            "launch it as the batch job campaign emit wrote (sbatch -N N --ntasks-per-node ...)",
            2,
        )),
    }
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
    let label = &c.targets[p.target].label;
    let windows =
        |r: iosurvey::record::RunRecord| -> f64 { r.phases.iter().map(|ph| ph.figures.window_ns as f64 / 1e9).sum() };
    let secs: Vec<f64> = match p.clients {
        // A run point: its own stored runs.
        Some(_) => {
            let ids = store.runs_of_point(label, &p.key).ok()?;
            ids.iter().take(5).filter_map(|&id| store.load(id).ok()).map(windows).collect()
        }
        // A whole study: the runs of each of its stored groups, together.
        None => {
            let groups = store.groups_of_point(label, &p.key).ok()?;
            groups
                .iter()
                .take(5)
                .filter_map(|&g| {
                    let ids = store.group_runs(g).ok()?;
                    Some(ids.iter().filter_map(|&id| store.load(id).ok()).map(windows).sum())
                })
                .collect()
        }
    };
    (!secs.is_empty()).then(|| secs.iter().sum::<f64>() / secs.len() as f64)
}

/// `campaign plan FILE`: every point in order, its hooks, refusals and estimates.
pub(super) fn plan<T: Team>(cli: &Cli, asked: &Asked, calibrate: bool, team: &T) -> Result<(), Failure> {
    let (c, _placed) = read_placed(asked.file, asked.root)?;
    let all = keep(&c, asked_points(&c, &cli.db, team, asked.scale)?, asked.only, Some(Launch::of(team)))?;
    let store = match (team.process(), cli.db.exists()) {
        (0, true) => Some(Store::open_existing(&cli.db)?),
        _ => None,
    };
    let calibrated = match calibrate {
        true => calibrations(cli, &c, &all, asked.scale, team)?,
        false => HashMap::new(),
    };
    if team.process() != 0 {
        return Ok(());
    }
    let done: Done = match &store {
        Some(s) => tally_done(s, &c.name)?,
        None => Done::new(),
    };
    let mut out = String::new();
    out += &format!(
        "campaign {} (version {}), {} targets, {} studies, {} repetitions summarized by their {:?}, order {:?}{}\n",
        c.name,
        c.version(),
        c.targets.len(),
        c.studies.len(),
        c.repetitions,
        c.summary,
        c.order,
        asked.scale.map_or(String::new(), |Scale(n)| format!(", every amount of data divided by {n}"))
    );
    let hooks = c.hooks.all();
    for (name, h) in &hooks {
        let place = match h.place {
            iosurvey::campaign::HookPlace::Lead => "on the lead",
            iosurvey::campaign::HookPlace::EveryNode => "on every node",
        };
        let failing = match (h.ignore_failure, name.starts_with("after")) {
            (true, _) => "a failure is kept and ignored",
            (false, false) => "a failure fails the point, which then does not run",
            (false, true) => "a failure fails the point, its run stored as failed",
        };
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
            let past = store.as_ref().and_then(|s| past_secs(s, &c, p)).map(|secs| (secs, "from stored runs".into()));
            match past.or_else(|| calibrated.get(&(p.study, p.target)).and_then(|cal| cal.estimate(p))) {
                Some((secs, from)) => {
                    total_secs += secs;
                    per_study[p.study].0 += secs;
                    format!("about {} ({from})", format_duration(secs))
                }
                None => {
                    unknown += 1;
                    per_study[p.study].1 += 1;
                    match calibrated.get(&(p.study, p.target)) {
                        Some(Calibration::Failed(why)) => format!("no estimate (its calibration run failed: {why})"),
                        _ => "no estimate (no stored run of this workload on this target; --calibrate measures one)"
                            .into(),
                    }
                }
            }
        };
        if let (Some(bytes), None) = (p.bytes, &p.refusal) {
            per_study[p.study].2 = per_study[p.study].2.max(bytes);
        }
        let flag = p.flag.as_ref().map_or(String::new(), |f| format!(" [flagged: {f}]"));
        out += &format!(
            "{:>4}. {}: {state}{flag}\n      iosurvey {}\n      measures: {}\n",
            k + 1,
            said(&c, p),
            iosurvey::escape::visible(&iosurvey::shell::words(&p.argv)),
            p.what
        );
    }
    for (s, (secs, unknown, bytes)) in c.studies.iter().zip(&per_study) {
        let time = match (*secs > 0.0, *unknown) {
            (_, 0) => format!("about {}", format_duration(*secs)),
            (false, n) => format!("no estimate for its {n} points"),
            (true, n) => format!("about {} + {n} points without an estimate", format_duration(*secs)),
        };
        let space = match bytes {
            0 => String::new(),
            b => format!("; its largest point holds {} of files at once", format_size(*b)),
        };
        out += &format!("study {}: {time}{space}\n", s.name);
    }
    let todo = all.len() - skipped - refused;
    let time = match (total_secs > 0.0, unknown) {
        (_, 0) => format!("about {}", format_duration(total_secs)),
        (false, n) => format!("no estimate for its {n} points to run"),
        (true, n) => format!("about {} + {n} points without an estimate", format_duration(total_secs)),
    };
    out += &format!(
        "total: {} points, {todo} to run, {skipped} stored already, {refused} refused; {time}{}{}\n",
        all.len(),
        if unknown > 0 { " (a point's first run, e.g. with 'campaign run --only', teaches its time)" } else { "" },
        c.budget_secs.map_or(String::new(), |b| format!("; budget {}", format_duration(b)))
    );
    out!("{out}");
    Ok(())
}

/// How much less data a calibration run moves than the point it stands for.
const CALIBRATE: u64 = 64;

/// What a calibration run of a study on a target found.
enum Calibration {
    /// Its wall time, and the bytes of the point it stood for.
    Ran { secs: f64, bytes: Option<u64> },
    /// Why it failed.
    Failed(String),
}

impl Calibration {
    /// A point's time from the calibration of its study on its target: the calibration's time
    /// times the data it left out, in proportion to the point's bytes where both have them.
    fn estimate(&self, p: &Point) -> Option<(f64, String)> {
        let Calibration::Ran { secs, bytes } = self else { return None };
        let share = match (p.bytes, bytes) {
            (Some(mine), Some(its)) if *its > 0 => mine as f64 / *its as f64,
            _ => 1.0,
        };
        let from = format!("from a calibration run at 1/{CALIBRATE} of the data, scaled up linearly");
        Some((secs * CALIBRATE as f64 * share, from))
    }
}

/// `plan --calibrate`: for each study and target with a point to run that no stored run
/// estimates, its first such point run once at 1/64 of its data, timed, into a scratch store
/// that is removed afterwards. Every process takes part; the lead decides which.
fn calibrations<T: Team>(
    cli: &Cli,
    c: &Campaign,
    all: &[Point],
    scale: Option<Scale>,
    team: &T,
) -> Result<HashMap<(usize, usize), Calibration>, Failure> {
    let store = match (team.process(), cli.db.exists()) {
        (0, true) => Some(Store::open_existing(&cli.db)?),
        _ => None,
    };
    let chosen: Option<Vec<usize>> = store.as_ref().map(|s| (s, tally_done(s, &c.name))).map(|(s, done)| {
        let done = done.unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        (0..all.len())
            .filter(|&k| {
                let p = &all[k];
                !campaign::is_done(c, p, &done) && p.refusal.is_none() && past_secs(s, c, p).is_none()
            })
            .filter(|&k| seen.insert((all[k].study, all[k].target)))
            .collect()
    });
    // No store yet: every study and target is calibrated.
    let chosen = match (team.process(), chosen) {
        (0, None) => {
            let mut seen = std::collections::HashSet::new();
            Some(
                (0..all.len())
                    .filter(|&k| all[k].refusal.is_none() && seen.insert((all[k].study, all[k].target)))
                    .collect(),
            )
        }
        (_, chosen) => chosen,
    };
    let chosen: Vec<usize> = share_value(team, chosen.as_ref());
    let made = super::opening::on_lead(team, || {
        // A fresh name (iosurvey::scratch): a name known in advance could be made first, by
        // another user or by a killed calibration whose process id came round again.
        let scratch = iosurvey::scratch::private_dir("iosurvey-calibrate").map_err(|e| {
            let tmp = std::env::temp_dir();
            Failure::new(
                format!("cannot make a directory in {}: {e}", tmp.display()),
                "free /tmp, or leave --calibrate out",
                1,
            )
        })?;
        let begun = Store::open(&scratch.join("calibration.db")).and_then(|store| {
            store.begin_group(&iosurvey::store::GroupStart {
                kind: GroupKind::Campaign,
                parent: None,
                started: iosurvey::units::now_unix(),
                command_line: super::opening::command_line(),
                spec: serde_json::json!({ "name": "calibration" }).to_string(),
                point: None,
            })
        });
        match begun {
            Ok(g) => Ok((scratch, g)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&scratch);
                Err(e.into())
            }
        }
    });
    let (scratch, campaign): (PathBuf, GroupId) = match made {
        Ok(made) => share_value(team, made.as_ref()),
        Err(f) => return Err(f),
    };
    let db = scratch.join("calibration.db");
    let by = Scale(scale.map_or(1, |Scale(n)| n).saturating_mul(CALIBRATE));
    let mut found = HashMap::new();
    for k in chosen {
        let p = &all[k];
        let outcome = point_cli(cli, c, p, Some(by)).and_then(|mut point| {
            point.db = db.clone();
            point.live = false;
            point.within = Some(Within { campaign, point: point_name(c, p), unjudged: false });
            let began = std::time::Instant::now();
            command(&point, team)?;
            let wall = began.elapsed().as_secs_f64();
            // A run's timed windows, as stored runs are estimated: its set-up, the same
            // at any size, would be multiplied with the rest. A whole study: its wall time.
            let windows = match (team.process(), p.clients) {
                (0, Some(_)) => Store::open_existing(&db)
                    .and_then(|s| s.campaign_runs("calibration").map(|ids| (s, ids)))
                    .ok()
                    .and_then(|(s, ids)| s.load(*ids.last()?).ok())
                    .map(|r| r.phases.iter().map(|ph| ph.figures.window_ns as f64 / 1e9).sum::<f64>()),
                _ => None,
            };
            Ok(windows.unwrap_or(wall))
        });
        let cal = match outcome {
            Ok(secs) => Calibration::Ran { secs, bytes: p.bytes },
            Err(f) => Calibration::Failed(f.line.unwrap_or_else(|| format!("exit code {}", f.code))),
        };
        found.insert((p.study, p.target), cal);
    }
    if team.process() == 0 {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    Ok(found)
}

fn tally_done(store: &Store, name: &str) -> Result<Done, Failure> {
    Ok(store.campaign_tally(name)?.into_iter().map(|(p, (ok, _))| ((p.study, p.target, p.key), ok)).collect())
}

/// What the lead decides before a campaign runs, and every process follows.
#[derive(serde::Serialize, serde::Deserialize)]
struct Start {
    /// The version the points are filed in; none when there is nothing to run.
    campaign: Option<GroupId>,
    /// Whether this command began that version.
    begun: bool,
    /// Indices into the planned points of those to run now.
    todo: Vec<usize>,
    skipped: usize,
    refused: usize,
}

/// A campaign running: its version and its points.
struct Running {
    campaign: GroupId,
    begun: bool,
    todo: Vec<usize>,
    skipped: usize,
    refused: usize,
}

/// `campaign run FILE`.
pub(super) fn run<T: Team>(cli: &Cli, asked: &Asked, team: &T) -> Result<(), Failure> {
    let (c, _placed) = read_placed(asked.file, asked.root)?;
    let launch = Launch::of(team);
    launch_fits(&c, asked.only, launch)?;
    let all = keep(&c, asked_points(&c, &cli.db, team, asked.scale)?, asked.only, Some(launch))?;
    super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    let start = super::opening::on_lead(team, || {
        let store = Store::open(&cli.db)?;
        store.settle_abandoned_campaigns()?;
        let done = tally_done(&store, &c.name)?;
        let todo: Vec<usize> =
            (0..all.len()).filter(|&k| !campaign::is_done(&c, &all[k], &done) && all[k].refusal.is_none()).collect();
        let skipped = all.iter().filter(|p| campaign::is_done(&c, p, &done)).count();
        let refused = all.iter().filter(|p| p.refusal.is_some() && !campaign::is_done(&c, p, &done)).count();
        // A rehearsal at another scale is another version: its file's text is not all it ran.
        let version = format!("{}{}", c.version(), asked.scale.map_or(String::new(), |Scale(n)| format!("/1:{n}")));
        let spec = serde_json::json!({ "name": c.name, "version": version, "file": c.path.display().to_string(), "text": c.text, "scale": asked.scale.map(|s| s.0) });
        let existing = store.campaign_version(&c.name, &version)?;
        let begun = existing.is_none() && !todo.is_empty();
        let campaign = match existing {
            // Nothing to run: no version is begun or reopened.
            _ if todo.is_empty() => None,
            Some(g) => Some(g),
            None => Some(store.begin_group(&iosurvey::store::GroupStart {
                kind: GroupKind::Campaign,
                parent: None,
                started: iosurvey::units::now_unix(),
                command_line: super::opening::command_line(),
                spec: spec.to_string(),
                point: None,
            })?),
        };
        if let Some(g) = campaign {
            store.campaign_running(g)?;
        }
        Ok(Start { campaign, begun, todo, skipped, refused })
    })?;
    let shared: Start = share_value(team, start.as_ref());
    let lead = team.process() == 0;
    let say = |line: String| {
        if lead && !cli.quiet {
            say!("iosurvey: {line}");
        }
    };
    let Some(campaign) = shared.campaign else {
        say(format!(
            "campaign {}: nothing to run ({} points stored already, {} refused)",
            c.name, shared.skipped, shared.refused
        ));
        return Ok(());
    };
    let start =
        Running { campaign, begun: shared.begun, todo: shared.todo, skipped: shared.skipped, refused: shared.refused };
    say(format!(
        "campaign {} ({}): {} points to run, {} stored already, {} refused",
        c.name,
        start.campaign,
        start.todo.len(),
        start.skipped,
        start.refused
    ));
    let began = std::time::Instant::now();
    let mounts: Vec<Option<Mount>> =
        c.targets.iter().map(|t| (!t.device).then(|| mount_of(&t.dir)).flatten()).collect();
    let mut unsaved: Vec<Kept> = Vec::new();
    let (mut ok, mut failed) = (0usize, 0usize);
    let mut stopped: Option<Failure> = None;
    let todo: Vec<&Point> = start.todo.iter().map(|&k| &all[k]).collect();
    for (k, p) in todo.iter().enumerate() {
        if super::CANCEL.is_cancelled() {
            stopped = Some(Failure::new(
                format!("campaign {} interrupted between points; the points stored stay", start.campaign),
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
        let before = [
            ("before-study", c.hooks.before_study.as_ref().filter(|_| first_of_study)),
            ("before-run", c.hooks.before_run.as_ref()),
        ];
        // A target unmounted since the file was read has the disk beneath in its place.
        let refused = hooks_at(team, &before, &env, &mut kept)
            .map(|why| (why, HOOKS.to_string()))
            .or_else(|| lead.then(|| left_behind(&c, p, &mounts)).flatten());
        let refused: Option<(String, String)> = share_value(team, lead.then_some(&refused));
        let after = [
            ("after-run", c.hooks.after_run.as_ref()),
            ("after-study", c.hooks.after_study.as_ref().filter(|_| last_of_study)),
        ];
        let unjudged = after.iter().any(|(_, h)| h.is_some_and(|h| !h.ignore_failure));
        let outcome = match refused {
            Some((why, hint)) => Err(Failure::new(why, hint, 1)),
            None => point_cli(cli, &c, p, asked.scale).and_then(|mut point| {
                point.within = Some(Within { campaign: start.campaign, point: name.clone(), unjudged });
                command(&point, team)
            }),
        };
        let status = if outcome.is_ok() { "ok" } else { "failed" };
        let mut env = env;
        env.push(("IOSURVEY_STATUS".into(), status.into()));
        let after_failed = hooks_at(team, &after, &env, &mut kept)
            .or_else(|| (lead && outcome.is_ok()).then(|| left_behind(&c, p, &mounts).map(|w| w.0)).flatten());
        let after_failed: Option<String> = share_value(team, lead.then_some(&after_failed));
        unsaved.push((name.clone(), p.repetition, s.name.clone(), kept));
        // A point whose after-hook failed is not whole: its run is stored as failed, so that
        // running the campaign again measures it again; one they passed is whole only now.
        let filed = super::opening::on_lead(team, || {
            let store = store_of(cli, start.campaign)?;
            save_kept(&store, start.campaign, &mut unsaved)?;
            match (&outcome, &after_failed) {
                (Ok(()), Some(why)) => store.fail_point(start.campaign, &name, why)?,
                (Ok(()), None) if unjudged => store.judge_point(start.campaign, &name)?,
                _ => {}
            }
            Ok(())
        });
        let outcome = match (outcome, after_failed) {
            (Ok(()), Some(why)) => Err(Failure::new(why, HOOKS, 1)),
            (outcome, _) => outcome,
        };
        if let Err(f) = filed {
            stopped = Some(f);
            break;
        }
        match outcome {
            Ok(()) => ok += 1,
            Err(f) if f.code == 130 || super::CANCEL.is_cancelled() => {
                failed += 1;
                stopped = Some(Failure::new(
                    format!(
                        "campaign {} interrupted during {}; the points stored stay, and that one's run, if it had begun, is stored as failed",
                        start.campaign,
                        said(&c, p)
                    ),
                    "run the same command again to resume",
                    130,
                ));
                break;
            }
            // A refusal (exit 2: of the target, or of the point's settings before it ran) would
            // meet the points after it alike: the campaign stops, said in one line.
            Err(f) if f.code == 2 => {
                let line = f.line.unwrap_or_default();
                let (what, hint) = line
                    .rsplit_once(" (hint: ")
                    .unwrap_or((line.as_str(), "mend it, then run the same command again)"));
                stopped = Some(Failure::new(
                    format!("campaign {} stopped at {}: {what}", start.campaign, said(&c, p)),
                    hint.trim_end_matches(')'),
                    2,
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
    // Filed on every path that gets here; a command killed before is settled by the next.
    let finished = super::opening::on_lead(team, || {
        let store = store_of(cli, start.campaign)?;
        save_kept(&store, start.campaign, &mut unsaved)?;
        // A version begun by this command that came to hold nothing is not kept.
        if !(start.begun && ok == 0 && failed == 0 && store.drop_empty_campaign(start.campaign)?) {
            store.finish_group(start.campaign, whole, None)?;
        }
        Ok(())
    });
    if let (Err(f), None) = (finished, &stopped) {
        return Err(f);
    }
    // A stop is said by its own line, the last.
    if stopped.is_none() {
        say(format!(
            "campaign {}: {ok} points ok, {failed} failed, {} stored before, {} refused",
            start.campaign, start.skipped, start.refused
        ));
    }
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

/// Runs the hooks given, keeps how each ran in `kept`, and says the first failure of one
/// whose failure is not ignored (on the lead).
fn hooks_at<T: Team>(
    team: &T,
    hooks: &[(&str, Option<&campaign::Hook>)],
    env: &[(String, String)],
    kept: &mut Vec<HookRun>,
) -> Option<String> {
    let mut failed = None;
    for (name, hook) in hooks {
        let Some(hook) = hook else { continue };
        let runs = run_hook(team, name, hook, env, &super::CANCEL);
        if !hook.ignore_failure {
            failed = failed.or(runs
                .iter()
                .find(|r| !r.ok())
                .map(|r| format!("hook {name} on {} ended with {}", r.node, r.ending())));
        }
        kept.extend(runs);
    }
    failed
}

/// What a failed hook's point says to do.
const HOOKS: &str = "see the hook's output in 'iosurvey campaign status'";

/// A point's hooks not yet in the store: its name, repetition, study and how they ran.
type Kept = (PointName, u32, String, Vec<HookRun>);

/// Stores the hooks kept, each once: those a store that could not take them held back
/// are stored with the next point's, or at the campaign's end.
fn save_kept(store: &Store, campaign: GroupId, kept: &mut Vec<Kept>) -> Result<(), Failure> {
    while let Some((point, repetition, study, runs)) = kept.first() {
        if !runs.is_empty() {
            store.save_hooks(campaign, Some((point, *repetition)), study, runs)?;
        }
        kept.remove(0);
    }
    Ok(())
}

/// The store, for a campaign's own writes: never made anew, for a store removed while the
/// campaign ran (by a hook, say) would come back empty, without the campaign.
fn store_of(cli: &Cli, campaign: GroupId) -> Result<Store, Failure> {
    let db = iosurvey::escape::visible(&cli.db.display().to_string()).into_owned();
    let gone = |what: &str| {
        Failure::new(
            format!("campaign {campaign} is no longer in {db}: the store was {what} while the campaign ran (by a hook?), and the points it stored went with it"),
            "keep hooks away from the store, then run the same command again to run the campaign anew",
            4,
        )
    };
    if std::fs::symlink_metadata(&cli.db).is_err() {
        return Err(gone("removed"));
    }
    let store = Store::open_existing(&cli.db)?;
    store.group(campaign).map_err(|_| gone("replaced"))?;
    Ok(store)
}

/// A file system as a campaign met it: the mount id, and the device's major and minor.
type Mount = (u64, u32, u32);

fn mount_of(dir: &Path) -> Option<Mount> {
    iosurvey::target::dir::Dir::open(dir).ok()?.mount().ok()
}

/// Why point `p` is not measured: its target's directory is no longer on the file system
/// it was on when the file was read (`mounts`), with what to do. Unmounted, the directory
/// left in its place is on the disk beneath, whose figures would be stored under the
/// target's label.
fn left_behind(c: &Campaign, p: &Point, mounts: &[Option<Mount>]) -> Option<(String, String)> {
    let t = &c.targets[p.target];
    let now = mount_of(&t.dir);
    let was = mounts[p.target]?;
    if now == Some(was) {
        return None;
    }
    let dir = iosurvey::escape::visible(&t.dir.display().to_string()).into_owned();
    let what = match now {
        None => "is gone since the campaign file was read (unmounted, or removed?)",
        Some(_) => "is no longer on the file system it was on when the campaign file was read (unmounted?)",
    };
    Some((
        format!("target {}: {dir} {what}; the point is not measured", iosurvey::escape::visible(&t.label)),
        "mount it again, then run the same command again".into(),
    ))
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
        scaled(&mut point, by, p.clients);
    }
    point.quiet = true;
    // The point's live rate under the campaign's line, on a terminal.
    point.live = !cli.quiet;
    Ok(point)
}

/// `campaign status FILE|cN`: per study and target, points stored whole, failed, to run.
pub(super) fn status<T: Team>(cli: &Cli, which: &str, scale: Option<Scale>, team: &T) -> Result<(), Failure> {
    let store = Store::open_existing(&cli.db)?;
    // A version whose command is gone is said as it ended; a store status may not write
    // is read as it is.
    let _ = store.settle_abandoned_campaigns();
    let (c, stored_scale) = resolve(&store, which)?;
    let scale = scale.or(stored_scale);
    let all = points(&c, &cli.db, team, scale)?;
    if team.process() != 0 {
        return Ok(());
    }
    let tally = store.campaign_tally(&c.name)?;
    let mut out = format!("campaign {} (version {})\n", c.name, c.version());
    let mut rows: Vec<(String, String, usize, usize, usize, usize)> = Vec::new();
    // Each study and target's row, found by look-up: a campaign may have thousands of targets.
    let mut row_of: HashMap<(usize, usize), usize> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for p in &all {
        let (study, target, key) = p.identity(&c);
        let row = *row_of.entry((p.study, p.target)).or_insert_with(|| {
            rows.push((study.clone(), target.clone(), 0, 0, 0, 0));
            rows.len() - 1
        });
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
        let output = h.run.output.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
        out += &format!(
            "hook {} of {} on {} ended with {}: {}\n",
            h.run.hook,
            h.study.as_deref().unwrap_or("-"),
            h.run.node,
            h.run.ending(),
            iosurvey::escape::visible(output)
        );
    }
    out!("{out}");
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
            let c = campaign::parse_stored(&path, text).map_err(|e| Failure::new(&e, &e.hint, 2))?;
            Ok((c, iosurvey::store::campaigns::stored_scale(&spec).map(Scale)))
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
    (output, format, units): (&Path, iosurvey::report::Format, iosurvey::report::units::Units),
    reference: Option<&str>,
    team: &T,
) -> Result<String, Failure> {
    use iosurvey::analysis::campaign as analysed;
    // A name that is no published system is refused before anything is read.
    if let Some(name) = reference {
        iosurvey::analysis::reference::beside(name, &[])
            .map_err(|why| Failure::new(why, "see iosurvey report --reference list", 2))?;
    }
    use iosurvey::report::paper::Block;
    super::output::check(output, &cli.db, "-o")?;
    let store = Store::open_existing(&cli.db)?;
    let (c, scale) = resolve(&store, which)?;
    let load = |ids: Vec<i64>| store.load_all(&ids);
    let runs = load(store.campaign_runs(&c.name)?)?;
    let groups = store.campaign_groups(&c.name)?;
    let mut matrices = Vec::new();
    let mut surveys = Vec::new();
    // A point the file of cN plans, stored whole: what the report draws (a point of another
    // version that this file no longer plans, or one that failed, is not).
    let all = points(&c, &cli.db, team, scale)?;
    let planned: std::collections::HashSet<PointName> = all.iter().map(|p| point_name(&c, p)).collect();
    let scales = store.campaign_scales(&c.name)?;
    let runs: Vec<iosurvey::record::RunRecord> = runs
        .into_iter()
        .filter(|r| {
            r.campaign_id.is_none_or(|n| {
                let scale = scales.get(&n).copied().flatten();
                let point = PointName {
                    study: r.name.clone().unwrap_or_default(),
                    target: r.label.clone().unwrap_or_default(),
                    key: PointKey::run(&r.workload, scale),
                };
                planned.contains(&point)
            })
        })
        .collect();
    for (g, point, state) in &groups {
        if state != "ok" || !planned.contains(point) {
            continue;
        }
        match g.kind {
            GroupKind::Matrix => matrices.push((point.study.clone(), store.load_matrix(g.number)?)),
            _ => surveys.push((point.study.clone(), g.number, load(store.group_runs(*g)?)?)),
        }
    }
    let mine: Vec<iosurvey::record::RunRecord> = runs.iter().filter(|r| r.campaign_id.is_some()).cloned().collect();
    let studies = iosurvey::analysis::campaign::studies(
        &c,
        &mine,
        |study| analysed::Grouped {
            surveys: surveys.iter().filter(|s| s.0 == study).map(|s| (s.1, s.2.clone())).collect(),
            matrices: matrices.iter().filter(|m| m.0 == study).map(|m| &m.1).collect(),
        },
        reference,
    );
    let missing = unmeasured(&c, &all, &store.campaign_tally(&c.name)?);
    let only_matrices: Vec<iosurvey::record::MatrixRecord> = matrices.iter().map(|m| m.1.clone()).collect();
    let mut paper = iosurvey::report::paper::paper(&cli.db.display().to_string(), runs, &only_matrices, reference)
        .map_err(|why| Failure::new(why, "report this as a bug", 1))?;
    paper.studies = studies;
    paper.title = Some(c.name.clone());
    paper.summary = c.summary;
    paper.rehearsal = scale.map(|Scale(n)| n);
    paper.studies.extend(analysed::not_measured(&missing));
    let mut blocks = paper.blocks();
    // The method says how this campaign's repetitions make a point, as its tables do.
    let summarized = match c.summary {
        campaign::Summary::Mean => None,
        campaign::Summary::Best => {
            Some("the best of the runs at each client count (the file's summary), with no error bars")
        }
        campaign::Summary::Median => {
            Some("the median of the runs at each client count (the file's summary), with no error bars")
        }
    };
    for b in blocks.iter_mut() {
        if let (Block::Text(t), Some(how)) = (&mut *b, summarized) {
            if t.starts_with("A figure over clients draws") {
                *t = format!("A figure over clients draws, per target, {how}; its table beneath gives the same numbers and the runs behind each.");
            }
        }
    }
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
    iosurvey::report::units::convert(&mut blocks, units);
    super::commands::write_paper(&cli.db, (output, format), &blocks, &counted)
}

/// `campaign emit FILE --slurm DIR` (or `--lsf`, `--pbs`): the campaign as batch jobs, a job
/// per node count its points still to run take, each limited to its points' estimate (from
/// the store, else `[batch] point-time`) times the margin. Writes nothing when a point has no
/// estimate: a job without a true limit is either killed early or holds nodes idle.
pub(super) fn emit<T: Team>(cli: &Cli, file: &Path, system: System, dir: &Path, team: &T) -> Result<(), Failure> {
    let c = read(file)?;
    let Some(batch) = &c.batch else {
        return Err(Failure::new(
            format!(
                "{} has no [batch] table: the jobs need the site's partition, account, launcher and modules",
                iosurvey::escape::visible(&file.display().to_string())
            ),
            "add [batch] to the file (docs/campaigns.md, \"Batch jobs\")",
            2,
        ));
    };
    let all = points(&c, &cli.db, team, None)?;
    if team.process() != 0 {
        return Ok(());
    }
    let store = match cli.db.exists() {
        true => Some(Store::open_existing(&cli.db)?),
        false => None,
    };
    let done = match &store {
        Some(s) => tally_done(s, &c.name)?,
        None => Done::new(),
    };
    let nodes = nodes_of(&c, &all, None)?;
    let mut jobs: std::collections::BTreeMap<usize, Job> = std::collections::BTreeMap::new();
    let mut unknown = 0;
    // A point refused here may run in its job (a launch of other nodes): the job decides.
    for (p, n) in all.iter().zip(nodes).filter(|(p, _)| !campaign::is_done(&c, p, &done)) {
        let job = jobs.entry(n).or_insert(Job { nodes: n, points: 0, secs: 0.0 });
        job.points += 1;
        match store.as_ref().and_then(|s| past_secs(s, &c, p)).or(batch.point_secs) {
            Some(secs) => job.secs += secs,
            None => unknown += 1,
        }
    }
    let db = iosurvey::escape::visible(&cli.db.display().to_string()).to_string();
    if jobs.is_empty() {
        outln!("campaign {}: every point is stored in {db}; no job to write", c.name);
        return Ok(());
    }
    if unknown > 0 {
        return Err(Failure::new(
            format!("{unknown} points to run have no estimate (no stored run of them in {db}), so no job's time limit can be set"),
            "give [batch] point-time = \"30m\" (a point's time when no stored run says it), or run a point once with campaign run --only",
            2,
        ));
    }
    let what = match system {
        System::Slurm => "--slurm",
        System::Lsf => "--lsf",
        System::Pbs => "--pbs",
    };
    let existed = std::fs::symlink_metadata(dir).is_ok();
    super::output::folder(dir, "the batch jobs", &format!("give {what} a directory of its own"))?;
    let written = write_jobs(cli, (&c, batch), &jobs, (system, what), (file, dir));
    if written.is_err() && !existed {
        // Made here for nothing: an empty directory of ours goes again.
        let _ = std::fs::remove_dir(dir);
    }
    written
}

/// Writes the jobs' scripts into `dir`, made for them, and says what they are.
fn write_jobs(
    cli: &Cli,
    (c, batch): (&Campaign, &iosurvey::campaign::Batch),
    jobs: &std::collections::BTreeMap<usize, Job>,
    (system, what): (System, &str),
    (file, dir): (&Path, &Path),
) -> Result<(), Failure> {
    let absolute = |p: &Path| {
        super::output::absolute(p).ok_or_else(|| {
            Failure::new(format!("cannot find where {} is", p.display()), "give a path in an existing directory", 2)
        })
    };
    let (file, store_path, dir) = (
        absolute(file)?,
        absolute(&cli.db)?,
        dir.canonicalize().map_err(|e| {
            Failure::new(format!("cannot read {}: {e}", dir.display()), format!("give {what} a directory"), 2)
        })?,
    );
    let workdir = std::env::current_dir().map_err(|e| {
        Failure::new(format!("cannot read the current directory: {e}"), "run from a directory that exists", 2)
    })?;
    let binary = match &batch.iosurvey {
        Some(b) => b.clone(),
        None => std::env::current_exe()
            .map_err(|e| {
                Failure::new(
                    format!("cannot find this iosurvey: {e}"),
                    "give [batch] iosurvey = \"/path/to/iosurvey\"",
                    2,
                )
            })?
            .display()
            .to_string(),
    };
    let jobs: Vec<Job> = jobs.values().cloned().collect();
    let scripts = iosurvey::campaign::batch::scripts(
        &Emit {
            system,
            batch,
            name: &c.name,
            file: &file,
            store: &store_path,
            binary: &binary,
            workdir: &workdir,
            dir: &dir,
            flag: what,
        },
        &jobs,
    )
    // What is checked is what the scripts would hold: a link on the way to DIR or the store
    // puts where it leads into them.
    .map_err(|why| {
        Failure::new(
            why,
            "give paths without blanks, % or control characters, quotes or backslashes, links on the way included",
            2,
        )
    })?;
    // Every name is checked before any is written: a file there that emit did not write is
    // the user's, and is left alone.
    for s in &scripts {
        let path = dir.join(&s.name);
        super::output::check(&path, &cli.db, what)?;
        let theirs = std::fs::symlink_metadata(&path).is_ok()
            && !iosurvey::input::read_text(&path, 1 << 20, iosurvey::input::Links::Refuse)
                .is_ok_and(|(t, _)| iosurvey::campaign::batch::is_emitted(&t));
        if theirs {
            return Err(Failure::new(
                format!(
                    "refusing to write the batch job {}: a file campaign emit did not write has that name",
                    path.display()
                ),
                format!("give {what} a directory of its own"),
                2,
            ));
        }
    }
    for s in &scripts {
        super::output::write(&dir.join(&s.name), s.text.as_bytes(), &cli.db, what)?;
    }
    let mut out = format!("campaign {} (version {}): {} jobs in {}\n", c.name, c.version(), jobs.len(), dir.display());
    for (j, s) in jobs.iter().zip(&scripts) {
        let limit = iosurvey::campaign::batch::limit_secs(j.secs, batch.margin);
        out += &format!(
            "  {}: {} on {} x {} tasks, estimated {}, limit {}\n",
            s.name,
            counted(j.points, "point"),
            counted(j.nodes, "node"),
            batch.tasks_per_node,
            format_duration(j.secs),
            format_duration(limit as f64)
        );
    }
    out += &format!(
        "  {}: merges the jobs' stores into {} once all have ended\nthe jobs run {binary}{}\nsubmit: bash {}/submit\n",
        scripts[jobs.len()].name,
        store_path.display(),
        if batch.iosurvey.is_none() { " (this one; [batch] iosurvey names another)" } else { "" },
        dir.display()
    );
    out!("{out}");
    Ok(())
}
