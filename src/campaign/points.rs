//! A campaign's points as study values. Each `[[study]]`'s settings are read once per
//! target by its kind's own declarations (the flags its command takes, with their checks)
//! into a [`Study`]; each point is that value at its client count, and a scale edits the
//! value. Nothing made here is parsed again: the words a point shows in a plan are for the
//! reader, who may type them to run the point alone.

use super::{Campaign, FileError, Kind, Point, MAX_POINTS};
use crate::record::point::{PointKey, StudyKey};
use crate::spec::{Hint, Shape, Workload};
use crate::study::hint::{Flags, Respelled};
use crate::study::{self, Error, Spelling, Study};
use crate::team::Team;
use crate::units::format_size;
use std::collections::HashMap;
use std::sync::Arc;

/// The settings a campaign gives every point itself, from its targets and its store.
pub const SET_BY_CAMPAIGN: &[(&str, &str)] = &[
    ("dir", "the [[target]]'s dir"),
    ("label", "the [[target]]'s label"),
    ("db", "--db of the campaign command"),
    ("json", "the store; export with 'iosurvey show' or 'iosurvey report'"),
    ("csv", "the store; export with 'iosurvey show' or 'iosurvey report'"),
    ("quiet", "the campaign's own progress"),
];

/// How each setting of `kind` is typed, by its name in a campaign file: `--long`, or `-C`
/// for a flag that has only a letter (mdtest's -C, -T, -E, -r); and whether it takes a value.
/// The kind's declarations are its command's ([`study::line`]), read as the command line
/// reads them.
pub fn flags_of(kind: Kind) -> Vec<(String, String, bool)> {
    study::line::declared(kind.name(), |c| {
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
    .unwrap_or_default()
}

/// How a hint names a point's settings to the one who wrote the campaign file: by the
/// file's keys (`force = true` where the command has `--force`), the target's for what the
/// campaign sets from its targets. As `(flag, the file's spelling)` pairs.
pub fn key_pairs(c: &Campaign) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = vec![
        ("--dir".into(), "the target's dir".into()),
        ("--device".into(), "the target's device".into()),
        ("--label".into(), "the target's label".into()),
    ];
    let mut kinds: Vec<Kind> = c.studies.iter().map(|s| s.kind).collect();
    kinds.sort_by_key(|k| *k as usize);
    kinds.dedup();
    for (key, typed, values) in kinds.into_iter().flat_map(flags_of) {
        let theirs = SET_BY_CAMPAIGN.iter().any(|(k, _)| *k == key) || ["help", "version"].contains(&key.as_str());
        if typed.starts_with("--") && !theirs && !pairs.iter().any(|(t, _)| *t == typed) {
            pairs.push((typed, if values { format!("'{key}'") } else { format!("{key} = true") }));
        }
    }
    pairs
}

/// A campaign's spelling of hints: a study's flags, each named as the file names it.
pub struct Keys {
    pairs: Vec<(String, String)>,
}

impl Keys {
    /// The spelling of `c`'s keys.
    pub fn of(c: &Campaign) -> Keys {
        Keys { pairs: key_pairs(c) }
    }

    /// The pairs, flag first.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// `hint` as said to the one who wrote the file, about a study of `kind`.
    pub fn spell(&self, hint: &Hint, command: study::hint::Command) -> String {
        Respelled { base: &Flags(command), pairs: &self.pairs }.spell(hint)
    }

    /// `e` as said about a study of `command`, in the file's words; its kind kept.
    pub fn said(&self, e: Error, command: study::hint::Command) -> Error {
        match e.said {
            Some(s) => Error::new(e.kind, s.what, Hint::Say(self.spell(&s.hint, command))),
            None => e,
        }
    }
}

/// A refusal at a line of the file.
pub fn at_line(c: &Campaign, line: Option<usize>, what: String, hint: &str) -> Error {
    let e = FileError { path: c.path.clone(), line, what, hint: hint.to_string() };
    Error::refused(&e, hint)
}

/// A study's settings as its command's words, in the file's order: true as the flag alone,
/// false left out, a list joined by commas. `clients` is the campaign's to sweep and is left
/// out. A `[cache]` rule is added where the command takes it and the study does not set it.
fn study_words(c: &Campaign, s: &super::Study) -> Result<Vec<String>, Error> {
    let flags = flags_of(s.kind);
    let typed = |key: &str| flags.iter().find(|(k, ..)| k == key).map_or(format!("--{key}"), |(_, t, _)| t.clone());
    let switch = |key: &str| flags.iter().any(|(k, _, values)| k == key && !values);
    let mut settings: Vec<&super::Setting> = s.settings.iter().collect();
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
        if Some(set.key.as_str()) == s.kind.sweeps() {
            continue;
        }
        let refuse =
            |what: String, hint: &str| Err(at_line(c, Some(set.line), format!("study '{}': {what}", s.name), hint));
        match &set.value {
            super::Value::Bool(true) => args.push(typed(&set.key)),
            super::Value::Bool(false) => {}
            v if switch(&set.key) => {
                return refuse(format!("'{}' is true or false, not {}", set.key, v.as_arg()), "give true or false");
            }
            // A value the declarations would read as a flag of its own (a negative number too).
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

/// A study's words (its kind's name first) read as its command's line reads them
/// ([`study::line::parse`]: the one reader of the command line, the front ends and the file);
/// an error names the setting it came from, at its line, its hint in the file's keys.
fn read_study(c: &Campaign, s: &super::Study, words: &[String]) -> Result<Study, Error> {
    use clap::error::{ContextKind, ContextValue};
    let e = match study::line::parse(words) {
        Ok((study, _)) => return Ok(study),
        Err(e) => e,
    };
    let flag = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    let named = flag(ContextKind::InvalidArg)
        .map(|f| f.trim_start_matches('-').split([' ', '=', '<']).next().unwrap_or_default().to_string());
    let setting = named.as_ref().and_then(|n| s.settings.iter().find(|set| &set.key == n));
    let line = setting.map(|set| set.line).or(s.line);
    let said = |what: String, hint: &str| {
        Err(at_line(c, line, format!("study '{}' ({}): {what}", s.name, s.kind.name()), hint))
    };
    if e.kind() == clap::error::ErrorKind::UnknownArgument {
        let key = named.unwrap_or_default();
        let near = flag(ContextKind::SuggestedArg).map(|f| f.trim_start_matches('-').to_string());
        let hint = match near {
            Some(n) => format!("did you mean '{n}'?"),
            None => format!("see 'iosurvey {} --help' for its settings", s.kind.name()),
        };
        return said(format!("unknown key '{key}'"), &hint);
    }
    // A value its setting's own parser refused: the refusal is the error's source, typed.
    if let Some(r) = study::line::refusal(&e) {
        let (value, _) = study::line::refused_value(&e);
        let bad = format!("{} = {value}: {}", named.as_deref().unwrap_or_default(), r.what);
        return said(bad, &Keys::of(c).spell(&r.hint, s.command()));
    }
    let why = crate::escape::visible(&study::line::folded(&study::line::clap_text(&e))).into_owned();
    said(why, &format!("see 'iosurvey {} --help'", s.kind.name()))
}

impl super::Study {
    /// The command whose flags name this study's settings.
    pub fn command(&self) -> study::hint::Command {
        use study::hint::Command;
        match self.kind {
            Kind::Run => Command::Run,
            Kind::Survey => Command::Survey,
            Kind::Meta => Command::Meta,
            Kind::Matrix => Command::Matrix,
            Kind::Io500 => Command::Io500,
            Kind::Targets => Command::Targets,
            Kind::Net | Kind::Train | Kind::Checkpoint => Command::Other,
        }
    }
}

/// Divides the amounts of data of a study by `by`, each still whole transfers for its
/// `clients` (or its tasks), and caps its threads at this machine's cores.
pub fn scaled(study: &mut Study, by: u64, clients: Option<usize>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let down = |v: u64, least: u64| (v / by).max(least);
    match study {
        Study::Run(a) => {
            a.team.tasks = a.team.tasks.min(cores);
            let n = clients.unwrap_or(a.team.tasks).max(1) as u64;
            if let Shape::Data(d) = &mut a.workload.shape {
                d.block = down(d.block, d.transfer) / d.transfer * d.transfer;
                // The total splits into whole transfers over the point's tasks and segments.
                let step = d.transfer.saturating_mul(d.segments.max(1)).saturating_mul(n);
                a.total = a.total.map(|t| down(t, step) / step * step);
            }
        }
        Study::Meta(a) => {
            a.team.tasks = a.team.tasks.min(cores);
            a.meta.items = down(a.meta.items, 1);
            a.items_per_dir = a.items_per_dir.map(|n| down(n, 1));
        }
        Study::Survey(a) => {
            let tasks = a.tasks.get_or_insert(cores);
            *tasks = (*tasks).min(cores);
            a.size = down(a.size, (*tasks as u64) << 20);
        }
        Study::Matrix(a) => {
            a.tasks = a.tasks.min(cores);
            a.max_file = down(a.max_file, a.min_record);
            a.min_file = a.min_file.min(a.max_file);
            a.max_record = a.max_record.min(a.max_file);
        }
        Study::Io500(a) => {
            a.tasks = a.tasks.min(cores);
            a.quick = true;
        }
        Study::Targets(a) => {
            // Each target's bytes, still whole transfers for every stream.
            let step = a.workload.data().map_or(1, |d| d.transfer.saturating_mul(d.segments.max(1)));
            let step = step.saturating_mul(a.streams as u64).max(1);
            let full = a.size.unwrap_or(study::targets::STREAM_BYTES.saturating_mul(a.streams as u64));
            a.size = Some(down(full, step) / step * step);
        }
        Study::Net(a) => a.size = down(a.size, a.transfer) / a.transfer.max(1) * a.transfer,
        // The data set and the checkpoints are sized by their own rule; a rehearsal divides
        // it, and the run says it is one wherever it is shown.
        Study::Train(a) => a.scale = Some(a.scale.unwrap_or(1).saturating_mul(by).min(super::MAX_SCALE)),
        Study::Checkpoint(a) => a.scale = Some(a.scale.unwrap_or(1).saturating_mul(by).min(super::MAX_SCALE)),
    }
}

/// The `tasks` a study sets, when it does.
fn given_tasks(s: &super::Study) -> Option<usize> {
    s.settings.iter().find(|x| x.key == "tasks").and_then(|x| x.value.as_arg().parse::<usize>().ok())
}

/// The counts a study's points run at (one `None` for a study run whole): its `clients`
/// (capped at the launch's cores when scaled down), or a training study's `accelerators`
/// and a checkpoint study's `ranks`, each once.
fn client_counts<T: Team>(
    c: &Campaign,
    s: &super::Study,
    team: &T,
    scale: Option<u64>,
    cores: usize,
) -> Result<Vec<Option<usize>>, Error> {
    let given_tasks = given_tasks(s);
    // The file's reader checked the counts: this only names them again, said as it said them.
    let named = super::file::swept_counts(s).map_err(|(line, what, hint)| at_line(c, Some(line), what, &hint))?;
    let counts = match named {
        Some(counts) => counts,
        None if s.kind.swept() => vec![team.processes() * given_tasks.unwrap_or(1)],
        // The command's own default, one point.
        None => return Ok(vec![None]),
    };
    let mut counts: Vec<Option<usize>> = counts.into_iter().map(Some).collect();
    if let (Some(_), true) = (scale, s.kind.swept()) {
        // Scaled down: the launch's cores are the most clients.
        let most = team.processes() * given_tasks.unwrap_or(cores).min(cores);
        counts = counts.into_iter().map(|n| n.map(|n| n.min(most))).collect();
        counts.dedup();
    }
    Ok(counts)
}

/// A study at one target (a target survey at all of its targets, the network at none): its
/// words (its command's name, the settings', then the target's) and its value.
fn at_target(c: &Campaign, s: &super::Study, t: usize, base: &[String]) -> Result<(Vec<String>, Study), Error> {
    let target = &c.targets[t];
    let mut words = vec![s.kind.name().to_string()];
    words.extend(base.iter().cloned());
    let dir = target.dir.display().to_string();
    let label = ["--label".to_string(), target.label.clone()];
    match s.kind {
        Kind::Survey => {
            words.push(dir);
            words.extend(label);
        }
        Kind::Targets => {
            let dirs: Vec<String> = s.targets.iter().map(|&k| c.targets[k].dir.display().to_string()).collect();
            if let Some(d) = dirs.iter().find(|d| d.contains('@')) {
                return Err(at_line(
                    c,
                    s.line,
                    format!(
                        "study '{}' (targets): the dir {} holds '@', which joins a survey's dirs",
                        s.name,
                        crate::escape::visible(d)
                    ),
                    "give the study targets whose dirs hold no '@'",
                ));
            }
            // Filed under the study's name: each target is told apart by its run's role.
            words.extend(["--dir".to_string(), dirs.join("@"), "--label".to_string(), s.name.clone()]);
        }
        // Measured between the launch's processes: no target is touched.
        Kind::Net => {}
        // The file reader let only run studies onto a device or a bucket.
        _ if target.device => words.extend(["--device".to_string(), dir].into_iter().chain(label)),
        _ if target.s3 => words.extend(["--s3".to_string(), dir].into_iter().chain(label)),
        _ => words.extend(["--dir".to_string(), dir].into_iter().chain(label)),
    }
    let study = read_study(c, s, &words)?;
    Ok((words, study))
}

/// The study of a point at `clients` (`threads` tasks in each process, and the count to
/// sweep when the launch or the file needs it said), with its events, as a value: and the
/// words that show it.
struct AtCount<'a> {
    threads: Option<usize>,
    clients: Option<usize>,
    /// A training study's accelerators, a checkpoint study's ranks.
    swept: Option<usize>,
    events: Vec<&'a str>,
}

fn at_count(study: &Study, words: &mut Vec<String>, at: &AtCount) -> Result<Study, String> {
    let mut study = study.clone();
    let team = match &mut study {
        Study::Run(a) => Some(&mut a.team),
        Study::Meta(a) => Some(&mut a.team),
        _ => None,
    };
    if let Some(team) = team {
        if let Some(threads) = at.threads {
            team.tasks = threads;
            words.extend(["--tasks".into(), threads.to_string()]);
        }
        if let Some(n) = at.clients {
            team.clients = Some(n.to_string());
            words.extend(["--clients".into(), n.to_string()]);
        }
    }
    if let Some(n) = at.swept {
        let (count, flag) = match &mut study {
            Study::Train(a) => (Some(&mut a.accelerators), "--accelerators"),
            Study::Checkpoint(a) => (Some(&mut a.ranks), "--ranks"),
            _ => (None, ""),
        };
        if let Some(count) = count {
            *count = n;
            words.extend([flag.to_string(), n.to_string()]);
        }
    }
    for event in &at.events {
        if let Study::Run(a) = &mut study {
            a.workload.events.push(crate::spec::event_arg(event)?);
        }
        words.extend(["--event".to_string(), event.to_string()]);
    }
    Ok(study)
}

/// The points of the campaign in run order, each checked by its kind's declarations;
/// refused in one line, before any is built, when they would be more than [`MAX_POINTS`].
pub fn points<T: Team>(c: &Campaign, team: &T, scale: Option<u64>) -> Result<Vec<Point>, Error> {
    let sweeps = every_studys_counts(c, team, scale)?;
    // The events of each study, by the target they name (None: every target of the study).
    let mut events: HashMap<(usize, Option<usize>), Vec<usize>> = HashMap::new();
    for (k, e) in c.events.iter().enumerate() {
        events.entry((e.study, e.target)).or_default().push(k);
    }
    let keys = Keys::of(c);
    let mut all = Vec::new();
    let mut fired = vec![false; c.events.len()];
    for ((si, s), counts) in c.studies.iter().enumerate().zip(sweeps) {
        let base = study_words(c, s)?;
        let given_tasks = given_tasks(s);
        // A target survey is one point over all its targets, the network one point over none:
        // each is known by the study's first target.
        let at_targets = if s.kind.one_point() { &s.targets[..1] } else { &s.targets[..] };
        for &t in at_targets {
            let (words, study) = at_target(c, s, t, &base)?;
            for &count in &counts {
                let (clients, swept) = if s.kind.swept() { (count, None) } else { (None, count) };
                let mut at = AtCount { threads: None, clients: None, swept, events: Vec::new() };
                let too_few = clients.and_then(|n| clients_at(team, given_tasks, n, &mut at));
                let clients_of = clients.unwrap_or(team.processes() * given_tasks.unwrap_or(1));
                let mine = [None, Some(t)].iter().filter_map(|&on| events.get(&(si, on))).flatten().copied().collect();
                at.events = events_at(c, mine, clients_of, &mut fired);
                let mut words = words.clone();
                let unscaled = at_count(&study, &mut words, &at)
                    .map_err(|why| at_line(c, s.line, format!("study '{}': {why}", s.name), "see docs/campaigns.md"))?;
                let asked = Asked { c, s, keys: &keys, base: &base, clients, swept, scale };
                let m = measured(&asked, &unscaled, team, too_few.or_else(|| net_refusal(&study, team)))?;
                let (argv, unscaled): (Arc<[String]>, Arc<Study>) = (words.into(), Arc::new(unscaled));
                all.extend((0..c.repetitions).map(|repetition| Point {
                    study: si,
                    target: t,
                    clients,
                    swept,
                    repetition,
                    key: m.key.clone(),
                    argv: argv.clone(),
                    play: unscaled.clone(),
                    what: m.what.clone(),
                    bytes: m.bytes,
                    refusal: m.refusal.clone(),
                    flag: m.flag.clone(),
                }));
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
    Ok(super::ordered(all, c.order))
}

/// Each study's counts, refused in one line when the points they make would be more than
/// [`MAX_POINTS`].
fn every_studys_counts<T: Team>(c: &Campaign, team: &T, scale: Option<u64>) -> Result<Vec<Vec<Option<usize>>>, Error> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut sweeps, mut planned) = (Vec::new(), 0u64);
    for s in &c.studies {
        let counts = client_counts(c, s, team, scale, cores)?;
        let each = (counts.len() as u64).saturating_mul(if s.kind.one_point() { 1 } else { s.targets.len() as u64 });
        planned = planned.saturating_add(each.saturating_mul(u64::from(c.repetitions)));
        // Past the cap the counts are only counted, not kept: thousands of studies of 4096
        // counts each would otherwise fill memory before the refusal.
        if planned <= MAX_POINTS {
            sweeps.push(counts);
        }
    }
    if planned > MAX_POINTS {
        return Err(at_line(
            c,
            None,
            format!("the campaign has {planned} points, more than the {MAX_POINTS} a campaign may have"),
            "split it into campaigns, or give fewer targets, client counts or repetitions",
        ));
    }
    Ok(sweeps)
}

/// A point at `n` clients: a client is a process of a launch (a node, as the papers count
/// them), or a thread of the one process there is. Sets `at`'s threads and clients; says why
/// this launch cannot run it, if it cannot.
fn clients_at<T: Team>(team: &T, given_tasks: Option<usize>, n: usize, at: &mut AtCount) -> Option<String> {
    let threads = given_tasks.unwrap_or(if team.processes() > 1 { 1 } else { n });
    at.threads = given_tasks.is_none().then_some(threads);
    if n > team.processes() * threads {
        return Some(format!("needs a launch of {n} tasks (this one has {})", team.processes() * threads));
    }
    if team.processes() > 1 || given_tasks.is_some() {
        at.clients = Some(n);
    }
    None
}

/// The events (indices into the campaign's) of a point at `clients_of` clients, in the file's
/// order, as they were given; each marked as fired.
fn events_at<'c>(c: &'c Campaign, mut mine: Vec<usize>, clients_of: usize, fired: &mut [bool]) -> Vec<&'c str> {
    mine.sort_unstable();
    let mut chosen = Vec::new();
    for k in mine {
        let e = &c.events[k];
        if e.clients.is_none_or(|n| n == clients_of) {
            chosen.push(e.event.as_str());
            fired[k] = true;
        }
    }
    chosen
}

/// Where in the campaign a point is asked for.
struct Asked<'a> {
    c: &'a Campaign,
    s: &'a super::Study,
    keys: &'a Keys,
    base: &'a [String],
    clients: Option<usize>,
    swept: Option<usize>,
    scale: Option<u64>,
}

/// What a point measures, shared by its repetitions.
struct Measured {
    key: Arc<PointKey>,
    what: Arc<str>,
    bytes: Option<u64>,
    refusal: Option<String>,
    flag: Option<String>,
}

/// The point's study as it will be measured (at the campaign's scale), checked as it will
/// play, and what it is known by and refused for.
fn measured<T: Team>(a: &Asked, unscaled: &Study, team: &T, refusal: Option<String>) -> Result<Measured, Error> {
    let (c, s) = (a.c, a.s);
    let mut measured_study = unscaled.clone();
    if let Some(by) = a.scale {
        scaled(&mut measured_study, by, a.clients);
    }
    if matches!(s.kind, Kind::Targets | Kind::Net | Kind::Train | Kind::Checkpoint) {
        // Checked as it will play, when the file is read, as a run's workload is: a
        // refusal at play would stop the campaign at that point.
        measured_study.validate().map_err(|e| in_study(c, s, a.clients.or(a.swept), a.keys, e))?;
    }
    let measured = point_workload(&measured_study, a.clients).map_err(|e| in_study(c, s, a.clients, a.keys, e))?;
    let key = Arc::new(match &measured {
        Some(w) => PointKey::run(w, a.scale),
        None => PointKey { study: whole_key(s, a.base, a.swept), tasks: None, scale: a.scale },
    });
    let what: Arc<str> = measured.as_ref().map_or_else(|| sizes_of(&measured_study), |w| w.label()).into();
    let bytes = bytes_of(&measured_study, measured.as_ref());
    let (refusal, flag) = match (refusal, &measured) {
        (Some(r), _) => (Some(r), None),
        (None, Some(w)) => data_rule(c, w, team, a.scale),
        (None, None) => (None, None),
    };
    Ok(Measured { key, what, bytes, refusal, flag })
}

/// The points of a file asked to plan or run. At a scale the file must pass its checks at
/// full size as well: a rehearsal is there to find what the campaign itself would refuse,
/// and rounding sizes down to whole transfers can hide it (a total that does not split).
pub fn asked_points<T: Team>(c: &Campaign, team: &T, scale: Option<u64>) -> Result<Vec<Point>, Error> {
    if scale.is_some() {
        points(c, team, None).map_err(|e| match e.said {
            Some(s) => Error::new(
                e.kind,
                format!("{}, at full size", s.what),
                Hint::Say(format!(
                    "a rehearsal at --scale checks the file at full size too; {}",
                    study::error::Plain.spell(&s.hint)
                )),
            ),
            None => e,
        })?;
    }
    points(c, team, scale)
}

/// The workload a run or metadata point runs: the study's, at the point's count of tasks.
pub fn point_workload(study: &Study, clients: Option<usize>) -> Result<Option<Workload>, Error> {
    let mut list = match study {
        // As the run will make it: on a device, the device's own defaults and size.
        Study::Run(a) => {
            let tasks = clients.unwrap_or(a.workload.tasks);
            a.points(&[tasks], study::run::smallest_here)?.0
        }
        Study::Meta(a) => {
            let w = a.to_run()?.workload;
            let tasks = clients.unwrap_or(w.tasks);
            crate::plan::List::sweep(&w, &[tasks], None)?
        }
        _ => return Ok(None),
    };
    Ok(match crate::plan::Plan::next(&mut list, crate::plan::Last::Start) {
        crate::plan::Step::Run { workload, .. } => Some(*workload),
        _ => None,
    })
}

/// A refusal of a point's settings, said with its study, its line and its client count, its
/// hint in the file's keys.
fn in_study(c: &Campaign, s: &super::Study, clients: Option<usize>, keys: &Keys, e: Error) -> Error {
    let e = keys.said(e, s.command());
    let Some(said) = e.said.clone() else { return e };
    let at = clients.map_or(String::new(), |n| format!(" at {n} {}", s.kind.sweeps().unwrap_or("clients")));
    let hint = study::error::Plain.spell(&said.hint);
    at_line(c, s.line, format!("study '{}'{at}: {}", s.name, said.what), &hint)
}

/// What a study run whole measures, as the store knows it: its kind and its settings (those
/// of the file and those of `[cache]`, as `base` gives them to its command, and the count it
/// is swept at), each value in its normal form.
fn whole_key(s: &super::Study, base: &[String], swept: Option<usize>) -> StudyKey {
    // Pairs, not words: two studies that swap values between flags are not one.
    let mut pairs: Vec<(&str, Option<&str>)> = Vec::new();
    for arg in base {
        match (arg.starts_with('-'), pairs.last_mut()) {
            (false, Some((_, value @ None))) => *value = Some(arg.as_str()),
            _ => pairs.push((arg.as_str(), None)),
        }
    }
    let count = swept.map(|n| n.to_string());
    if let (Some(key), Some(n)) = (s.kind.sweeps(), &count) {
        pairs.push((key, Some(n.as_str())));
    }
    StudyKey::whole(s.kind.name(), pairs)
}

/// Why a network study cannot run on this launch: it measures between processes, and a
/// launch of one has none to measure between (unless it sends to a server, `to`).
fn net_refusal<T: Team>(study: &Study, team: &T) -> Option<String> {
    match study {
        Study::Net(a) if a.to.is_none() && team.processes() < 2 => Some(format!(
            "needs a launch of 2 processes or more to measure between (this one has {}), or to = \"HOST:PORT\" of a 'net --serve'",
            team.processes()
        )),
        _ => None,
    }
}

/// The sizes a whole-study point runs with, after any scale, in words.
fn sizes_of(study: &Study) -> String {
    match study {
        Study::Survey(a) => format!("survey of {} per sequential phase", format_size(a.size)),
        Study::Matrix(a) => format!(
            "matrix of files {} to {}, records {} to {}",
            format_size(a.min_file),
            format_size(a.max_file),
            format_size(a.min_record),
            format_size(a.max_record)
        ),
        Study::Io500(a) => format!("io500{}", if a.quick { " --quick" } else { "" }),
        Study::Targets(a) => format!(
            "target survey of {} targets, {} each with {} streams",
            a.count().unwrap_or(0),
            a.size.map_or("1 GiB per stream".into(), format_size),
            a.streams
        ),
        Study::Net(a) => match &a.to {
            Some(to) => format!("network to {}, {} per link", crate::escape::visible(to), format_size(a.size)),
            None => format!("network between the launch's processes, {} per link", format_size(a.size)),
        },
        Study::Train(a) => format!(
            "train {} on {} {} accelerators{}",
            a.workload.name(),
            a.accelerators,
            a.accelerator.name(),
            a.scale.map_or(String::new(), |n| format!(", a rehearsal at 1/{n} of the data set"))
        ),
        Study::Checkpoint(a) => format!(
            "checkpoint {} over {} ranks{}",
            a.model.name(),
            a.ranks,
            a.scale.map_or(String::new(), |n| format!(", a rehearsal at 1/{n} of the model's size"))
        ),
        Study::Run(_) | Study::Meta(_) => String::new(),
    }
}

/// The bytes a point's files hold at most at once, for the space estimate.
fn bytes_of(study: &Study, measured: Option<&Workload>) -> Option<u64> {
    match (study, measured) {
        (_, Some(w)) => w.data().map(|_| w.bytes_per_phase()),
        (Study::Survey(a), _) => Some(a.size),
        (Study::Matrix(a), _) => Some(a.max_file.saturating_mul(a.tasks as u64)),
        // Every target at once, the survey's last runs.
        (Study::Targets(a), _) => a.size.map(|b| b.saturating_mul(a.count().unwrap_or(1) as u64)),
        _ => None,
    }
}

/// A launch: its nodes and its processes.
#[derive(Debug, Clone, Copy)]
pub struct Launch {
    /// The nodes its processes are on.
    pub nodes: usize,
    /// Its processes.
    pub processes: usize,
}

impl Launch {
    /// The launch `team` is.
    pub fn of<T: Team>(team: &T) -> Launch {
        let nodes = team.process_nodes().into_iter().collect::<std::collections::BTreeSet<_>>().len().max(1);
        Launch { nodes, processes: team.processes() }
    }
}

/// The `[cache]` data rule for a data point: its data per node (over the nodes its tasks
/// are placed on, round-robin) against the node's memory (at the campaign's scale). A
/// refusal, or with `data-rule = "flag"` a flag.
fn data_rule<T: Team>(c: &Campaign, w: &Workload, team: &T, scale: Option<u64>) -> (Option<String>, Option<String>) {
    let Some(times) = c.cache.data_times_ram else { return (None, None) };
    if w.data().is_none() {
        return (None, None);
    }
    let nodes = Launch::of(team).nodes;
    let per_node = w.bytes_per_phase() / nodes.min(w.tasks.max(1)) as u64;
    let ram = crate::env::ram_bytes() / scale.unwrap_or(1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::team::local::LocalTeam;

    fn campaign(study: &str) -> Campaign {
        let text = format!(
            "[campaign]\nname = \"t\"\n[[target]]\nlabel = \"a\"\ndir = \"/nonexistent-iosurvey/a\"\n[[study]]\n{study}"
        );
        super::super::parse_unmounted(std::path::Path::new("c.toml"), &text).unwrap()
    }

    #[test]
    fn a_point_is_its_studys_value_at_its_client_count_and_a_scale_edits_a_copy() {
        let c = campaign("name = \"s\"\nkind = \"run\"\ntransfer = \"64k\"\nblock = \"1m\"\nclients = \"1,2\"\n");
        let all = points(&c, &LocalTeam, None).unwrap();
        assert_eq!(all.len(), 2);
        for (p, n) in all.iter().zip([1, 2]) {
            let Study::Run(a) = &*p.play else { panic!("a run study plays a run: {:?}", p.play) };
            assert_eq!((a.team.tasks, a.team.target.label.as_deref()), (n, Some("a")));
            assert_eq!(a.dir.as_deref(), Some(std::path::Path::new("/nonexistent-iosurvey/a")));
            assert!(p.argv.join(" ").ends_with(&format!("--label a --tasks {n}")), "{:?}", p.argv);
        }
        let mut scaled_down = Study::clone(&all[0].play);
        scaled(&mut scaled_down, 4, Some(1));
        let Study::Run(a) = scaled_down else { unreachable!() };
        assert_eq!(a.workload.data().map(|d| d.block), Some(256 << 10));
        let Study::Run(unscaled) = &*all[0].play else { unreachable!() };
        assert_eq!(unscaled.workload.data().map(|d| d.block), Some(1 << 20), "the point keeps its full size");
    }

    #[test]
    fn a_refused_setting_is_said_at_its_line_in_the_files_keys() {
        // The value's own check names its flag; the file names it by its key.
        let c = campaign("name = \"s\"\nkind = \"run\"\ntasks = 0\n");
        let e = points(&c, &LocalTeam, None).unwrap_err();
        let line = e.to_string();
        assert!(line.starts_with("c.toml:9: study 's' (run): "), "{line}");
        assert!(line.ends_with("(hint: give 'tasks' 1 or more)"), "{line}");
    }
}
