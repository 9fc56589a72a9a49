//! `iosurvey campaign plan|run|status|emit`: the front of the library's campaign runner. It
//! reads the flags and the file, hands the runner a player (the library's, with this
//! command's progress), prints what the runner says and what the store holds, and ends with
//! the runner's exit code.

use super::{Cli, Failure};
use iosurvey::campaign::batch::{Emit, Job, System};
use iosurvey::campaign::points::Launch;
use iosurvey::campaign::runner::{past_secs, point_name, said, Calibration, Runner};
use iosurvey::campaign::{self, Campaign, Done, Point};
use iosurvey::record::{GroupId, GroupKind};
use iosurvey::store::campaigns::PointKey;
use iosurvey::store::{PointName, Store};
use iosurvey::study::play::{Context, Outcome};
use iosurvey::study::{Error as StudyError, Study};
use iosurvey::team::Team;
use iosurvey::units::{format_duration, format_size};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

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
    Ok((c, placed))
}

/// The points of a file asked to plan or run (see `campaign::points::asked_points`).
fn asked_points<T: Team>(c: &Campaign, team: &T, scale: Option<Scale>) -> Result<Vec<Point>, Failure> {
    Ok(campaign::points::asked_points(c, team, scale.map(|Scale(n)| n))?)
}

/// The points of a campaign at `scale`, in run order.
fn points<T: Team>(c: &Campaign, team: &T, scale: Option<Scale>) -> Result<Vec<Point>, Failure> {
    Ok(campaign::points::points(c, team, scale.map(|Scale(n)| n))?)
}

/// How many of each point a store holds whole.
fn tally_done(store: &Store, name: &str) -> Result<Done, Failure> {
    Ok(campaign::runner::tally_done(store, name)?)
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

/// `campaign plan FILE`: every point in order, its hooks, refusals and estimates.
#[allow(clippy::too_many_lines)] // TODO(lead): owned by another branch this session
pub(super) fn plan<T: Team>(cli: &Cli, asked: &Asked, calibrate: bool, team: &T) -> Result<(), Failure> {
    let (c, _placed) = read_placed(asked.file, asked.root)?;
    let all = keep(&c, asked_points(&c, team, asked.scale)?, asked.only, Some(Launch::of(team)))?;
    let store = match (team.process(), cli.db.exists()) {
        (0, true) => Some(Store::open_existing(&cli.db)?),
        _ => None,
    };
    let calibrated = match calibrate {
        true => runner(cli, &c, all.clone(), asked.scale).calibrate(team, &mut Plays { cli, team })?,
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

/// `campaign run FILE`.
pub(super) fn run<T: Team>(cli: &Cli, asked: &Asked, team: &T) -> Result<(), Failure> {
    let (c, _placed) = read_placed(asked.file, asked.root)?;
    let launch = Launch::of(team);
    launch_fits(&c, asked.only, launch)?;
    let all = keep(&c, asked_points(&c, team, asked.scale)?, asked.only, Some(launch))?;
    super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut heard = Lines { quiet: cli.quiet };
    runner(cli, &c, all, asked.scale).run(team, &mut Plays { cli, team }, &mut heard)?;
    Ok(())
}

/// The library's runner of `c`'s points `all`, in this command's store, stopped by its
/// signal.
fn runner<'c>(cli: &Cli, c: &'c Campaign, all: Vec<Point>, scale: Option<Scale>) -> Runner<'c> {
    Runner {
        campaign: c,
        points: all,
        store: cli.db.clone(),
        scale: scale.map(|Scale(n)| n),
        cancel: super::CANCEL.clone(),
        leftovers: super::LEFTOVERS.clone(),
        command_line: super::opening::command_line(),
    }
}

/// The campaign's lines on stderr, unless quiet.
struct Lines {
    quiet: bool,
}

impl campaign::runner::Heard for Lines {
    fn say(&mut self, line: &str) {
        if !self.quiet {
            say!("iosurvey: {line}");
        }
    }
}

/// The command line's player of a campaign's points: the library plays every kind, with this
/// command's progress bar.
struct Plays<'a, T: Team> {
    cli: &'a Cli,
    team: &'a T,
}

impl<T: Team> campaign::runner::Player for Plays<'_, T> {
    fn play(&mut self, study: &Study, ctx: &Context) -> Result<Outcome, StudyError> {
        use std::io::IsTerminal;
        // The point's live rate under the campaign's line, on a terminal; a calibration's
        // run, in its scratch store, draws none (the plan is printed after it).
        let watch = (!self.cli.quiet && ctx.store == self.cli.db && std::io::stderr().is_terminal())
            .then_some(&super::progress::watch as &iosurvey::runner::Watch);
        let context = Context {
            store: ctx.store.clone(),
            command_line: ctx.command_line.clone(),
            cancel: ctx.cancel.clone(),
            leftovers: ctx.leftovers.clone(),
            watch,
            within: ctx.within.clone(),
        };
        iosurvey::study::play(&context, study, self.team, &mut Warnings)
    }
}

/// A campaign point's ear: its warnings said; its steps are the campaign's to say.
struct Warnings;

impl iosurvey::study::Observer for Warnings {
    fn warning(&mut self, line: &str) {
        say!("iosurvey: warning: {line}");
    }

    fn opening(&mut self) {
        // From here a signal stops the study cleanly instead of ending the process.
        super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `campaign status FILE|cN`: per study and target, points stored whole, failed, to run.
pub(super) fn status<T: Team>(cli: &Cli, which: &str, scale: Option<Scale>, team: &T) -> Result<(), Failure> {
    let store = Store::open_existing(&cli.db)?;
    // A version whose command is gone is said as it ended; a store status may not write
    // is read as it is.
    let _ = store.settle_abandoned_campaigns();
    let (c, stored_scale) = resolve(&store, which)?;
    let scale = scale.or(stored_scale);
    let all = points(&c, team, scale)?;
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
#[allow(clippy::too_many_lines)] // TODO(lead): owned by another branch this session
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
    let mut nets = Vec::new();
    // A point the file of cN plans, stored whole: what the report draws (a point of another
    // version that this file no longer plans, or one that failed, is not).
    let all = points(&c, team, scale)?;
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
            // The group the campaign filed a training, checkpoint or network point in.
            GroupKind::Sweep => {
                let (ids, net) = store.point_made(*g)?;
                surveys.push((point.study.clone(), g.number, load(ids)?));
                nets.extend(net.into_iter().map(|n| (point.study.clone(), n)));
            }
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
            net: nets.iter().filter(|n| n.0 == study).map(|n| n.1.clone()).collect(),
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
    let all = points(&c, team, None)?;
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
#[allow(clippy::too_many_lines)] // TODO(lead): owned by another branch this session
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
