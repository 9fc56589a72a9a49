//! Running a campaign: its points, in order, each a study value handed to one [`Player`],
//! with the hooks around them, the events inside them, the budget, the stop token, and
//! everything filed under the campaign's version so that running it again resumes it.
//! What it says goes to a [`Heard`]; what ended it is a [`study::Error`] whose hint is said
//! in the campaign file's keys.

use super::points::Keys;
use super::{Campaign, Done, Hook, Point};
use crate::cancel::Cancel;
use crate::record::{GroupId, GroupKind, HookRun};
use crate::session::{Leftovers, Within};
use crate::spec::Hint;
use crate::store::{GroupStart, PointName, Store};
use crate::study::play::{on_lead, Context, Observer, Outcome};
use crate::study::{self, Error, Kind, Study};
use crate::team::{share_value, Team};
use crate::units::format_duration;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Plays a point's study: [`study::play`] for the kinds it plays, or whatever its caller
/// plays a kind with. The context names the store, the stop token and the campaign point.
pub trait Player {
    /// Plays `study` in `ctx`: an error is what stopped it before it ran, the outcome's
    /// failure what stopped it after.
    fn play(&mut self, study: &Study, ctx: &Context) -> Result<Outcome, Error>;
}

/// The library's player: [`study::play`] with a team, its words to an observer.
pub struct Plays<'a, T: Team> {
    /// The team that plays.
    pub team: &'a T,
    /// Who hears the study.
    pub observer: &'a mut dyn Observer,
}

impl<T: Team> Player for Plays<'_, T> {
    fn play(&mut self, study: &Study, ctx: &Context) -> Result<Outcome, Error> {
        study::play(ctx, study, self.team, self.observer)
    }
}

/// Who hears a campaign: its lines of progress, on the lead.
pub trait Heard {
    /// A line: the campaign's start, a point beginning, a point failed, the tally.
    fn say(&mut self, _line: &str) {}
}

/// A campaign that hears nothing.
pub struct Deaf;

impl Heard for Deaf {}

/// A campaign's points, ready to run in one store.
pub struct Runner<'c> {
    /// The file, read.
    pub campaign: &'c Campaign,
    /// Its points in run order (those `--only` kept), every repetition.
    pub points: Vec<Point>,
    /// The result store.
    pub store: PathBuf,
    /// `--scale 1/N`.
    pub scale: Option<u64>,
    /// The stop token: between points it ends the campaign; during one, that point.
    pub cancel: Cancel,
    /// Where clean-up's leftovers go.
    pub leftovers: Leftovers,
    /// The command line kept with the campaign's version and its runs.
    pub command_line: String,
}

/// How a campaign ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ran {
    /// The version the points were filed in, when any was to run.
    pub campaign: Option<GroupId>,
    /// Points that ran whole now.
    pub ok: usize,
    /// Points that failed now.
    pub failed: usize,
    /// Points stored before.
    pub skipped: usize,
    /// Points a rule refused.
    pub refused: usize,
}

/// What the lead decides before a campaign runs, and every process follows.
#[derive(serde::Serialize, serde::Deserialize)]
struct Start {
    /// The version the points are filed in; none when there is nothing to run.
    campaign: Option<GroupId>,
    /// Whether this run began that version.
    begun: bool,
    /// Indices into the planned points of those to run now.
    todo: Vec<usize>,
    skipped: usize,
    refused: usize,
}

/// A campaign's own failure, its hint in words.
fn failure(kind: Kind, what: impl std::fmt::Display, hint: impl Into<String>) -> Error {
    Error::new(kind, what, Hint::Say(hint.into()))
}

/// What a failed hook's point says to do.
const HOOKS: &str = "see the hook's output in 'iosurvey campaign status'";

/// A point's hooks not yet in the store: its name, repetition, study and how they ran.
type Kept = (PointName, u32, String, Vec<HookRun>);

/// A file system as a campaign met it: the mount id, and the device's major and minor.
type Mount = (u64, u32, u32);

impl Runner<'_> {
    /// The study point `p` plays, at the campaign's scale.
    pub fn study_of(&self, p: &Point, scale: Option<u64>) -> Study {
        let mut study = Study::clone(&p.play);
        if let Some(by) = scale {
            super::points::scaled(&mut study, by, p.clients);
        }
        study
    }

    /// The context a point plays in: this store (or `store`), its campaign point.
    fn context(&self, store: &Path, within: Within) -> Context<'static> {
        Context {
            store: store.to_path_buf(),
            command_line: self.command_line.clone(),
            cancel: self.cancel.clone(),
            leftovers: self.leftovers.clone(),
            watch: None,
            within: Some(within),
        }
    }

    /// Runs the points the store does not hold whole, in order, and files each.
    pub fn run<T: Team>(&self, team: &T, player: &mut dyn Player, heard: &mut dyn Heard) -> Result<Ran, Error> {
        let c = self.campaign;
        let all = &self.points;
        let start = on_lead(team, || self.start())?;
        let start: Start = share_value(team, start.as_ref());
        let lead = team.process() == 0;
        let mut say = |line: String| {
            if lead {
                heard.say(&line);
            }
        };
        let mut ran =
            Ran { campaign: start.campaign, skipped: start.skipped, refused: start.refused, ..Ran::default() };
        let Some(campaign) = start.campaign else {
            say(format!(
                "campaign {}: nothing to run ({} points stored already, {} refused)",
                c.name, start.skipped, start.refused
            ));
            return Ok(ran);
        };
        say(format!(
            "campaign {} ({campaign}): {} points to run, {} stored already, {} refused",
            c.name,
            start.todo.len(),
            start.skipped,
            start.refused
        ));
        let began = std::time::Instant::now();
        let mounts: Vec<Option<Mount>> =
            c.targets.iter().map(|t| (!t.device && !t.s3).then(|| mount_of(&t.dir)).flatten()).collect();
        let mut unsaved: Vec<Kept> = Vec::new();
        let mut stopped: Option<Error> = None;
        let todo: Vec<&Point> = start.todo.iter().map(|&k| &all[k]).collect();
        for (k, p) in todo.iter().enumerate() {
            stopped = self.halt(campaign, began, todo.len() - k);
            if stopped.is_some() {
                break;
            }
            say(format!("[{}/{}{}] {}", k + 1, todo.len(), eta(began, k, todo.len()), said(c, p)));
            let first_of_study = !todo[..k].iter().any(|q| q.study == p.study);
            let last_of_study = !todo[k + 1..].iter().any(|q| q.study == p.study);
            let edges = (first_of_study, last_of_study);
            let (outcome, filed) = self.point(team, player, (campaign, p, edges), (&mounts, &mut unsaved));
            stopped = match (filed, outcome) {
                (Err(e), _) => Some(e),
                (Ok(()), Ok(())) => {
                    ran.ok += 1;
                    None
                }
                (Ok(()), Err(e)) => self.judge((campaign, p), e, &mut ran, &mut say),
            };
            if stopped.is_some() {
                break;
            }
        }
        let whole = stopped.is_none() && ran.failed == 0;
        let finished = self.finish(team, (campaign, start.begun, whole), &ran, &mut unsaved);
        if let (Err(e), None) = (finished, &stopped) {
            return Err(e);
        }
        // A stop is said by its own line, the last.
        if stopped.is_none() {
            say(format!(
                "campaign {campaign}: {} points ok, {} failed, {} stored before, {} refused",
                ran.ok, ran.failed, ran.skipped, ran.refused
            ));
        }
        match stopped {
            Some(e) => Err(e),
            None if ran.failed > 0 => Err(failure(
                Kind::Failed,
                format!("campaign {campaign}: {} points failed", ran.failed),
                "see 'iosurvey campaign status', mend, and run the same command again",
            )),
            None => Ok(ran),
        }
    }

    /// Why no further point may begin: the stop token is pulled, or the budget is spent
    /// with `left` points not run.
    fn halt(&self, campaign: GroupId, began: std::time::Instant, left: usize) -> Option<Error> {
        if self.cancel.is_cancelled() {
            return Some(failure(
                Kind::Interrupted,
                format!("campaign {campaign} interrupted between points; the points stored stay"),
                "run the same command again to resume",
            ));
        }
        let budget = self.campaign.budget_secs.filter(|&b| began.elapsed().as_secs_f64() > b)?;
        Some(failure(
            Kind::Failed,
            format!("campaign {campaign}: its budget of {} is spent, {left} points not run", format_duration(budget)),
            "run the same command again to go on",
        ))
    }

    /// A point's failure judged: what stops the campaign (a stop, or a refusal that would
    /// meet the points after it alike), or a failed point, said and counted.
    fn judge(
        &self,
        (campaign, p): (GroupId, &Point),
        e: Error,
        ran: &mut Ran,
        say: &mut dyn FnMut(String),
    ) -> Option<Error> {
        let c = self.campaign;
        let command = c.studies[p.study].command();
        if e.kind == Kind::Interrupted || self.cancel.is_cancelled() {
            ran.failed += 1;
            return Some(failure(
                Kind::Interrupted,
                format!(
                    "campaign {campaign} interrupted during {}; the points stored stay, and that one's run, if it had begun, is stored as failed",
                    said(c, p)
                ),
                "run the same command again to resume",
            ));
        }
        if e.kind == Kind::Refused {
            let (what, hint) = match &e.said {
                Some(s) => (s.what.clone(), Keys::of(c).spell(&s.hint, command)),
                None => (String::new(), "mend it, then run the same command again".into()),
            };
            return Some(failure(
                Kind::Refused,
                format!("campaign {campaign} stopped at {}: {what}", said(c, p)),
                hint,
            ));
        }
        ran.failed += 1;
        if let Some(line) = Keys::of(c).said(e, command).line(&study::error::Plain) {
            say(format!("point failed: {}: {line}", said(c, p)));
        }
        None
    }

    /// Files the campaign's end, on every path that gets there (a command killed before is
    /// settled by the next): the hooks not yet stored, and the version whole or not; a
    /// version begun by this run that came to hold nothing is not kept.
    fn finish<T: Team>(
        &self,
        team: &T,
        (campaign, begun, whole): (GroupId, bool, bool),
        ran: &Ran,
        unsaved: &mut Vec<Kept>,
    ) -> Result<(), Error> {
        on_lead(team, || {
            let store = self.store_of(campaign)?;
            save_kept(&store, campaign, unsaved)?;
            if !(begun && ran.ok == 0 && ran.failed == 0 && store.drop_empty_campaign(campaign)?) {
                store.finish_group(campaign, whole, None)?;
            }
            Ok(())
        })
        .map(|_| ())
    }

    /// The lead's start: the points to run, and the version they are filed in (begun, or
    /// the one this file at this scale began before).
    fn start(&self) -> Result<Start, Error> {
        let (c, all) = (self.campaign, &self.points);
        let store = Store::open(&self.store)?;
        store.settle_abandoned_campaigns()?;
        let done = tally_done(&store, &c.name)?;
        let todo: Vec<usize> =
            (0..all.len()).filter(|&k| !super::is_done(c, &all[k], &done) && all[k].refusal.is_none()).collect();
        let skipped = all.iter().filter(|p| super::is_done(c, p, &done)).count();
        let refused = all.iter().filter(|p| p.refusal.is_some() && !super::is_done(c, p, &done)).count();
        // A rehearsal at another scale is another version: its file's text is not all it ran.
        let version = format!("{}{}", c.version(), self.scale.map_or(String::new(), |n| format!("/1:{n}")));
        let spec = serde_json::json!({ "name": c.name, "version": version, "file": c.path.display().to_string(), "text": c.text, "scale": self.scale });
        let existing = store.campaign_version(&c.name, &version)?;
        let begun = existing.is_none() && !todo.is_empty();
        let campaign = match existing {
            // Nothing to run: no version is begun or reopened.
            _ if todo.is_empty() => None,
            Some(g) => Some(g),
            None => Some(store.begin_group(&GroupStart {
                kind: GroupKind::Campaign,
                parent: None,
                started: crate::units::now_unix(),
                command_line: self.command_line.clone(),
                spec: spec.to_string(),
                point: None,
            })?),
        };
        if let Some(g) = campaign {
            store.campaign_running(g)?;
        }
        Ok(Start { campaign, begun, todo, skipped, refused })
    }

    /// One point: its hooks before, its study, its hooks after, all filed. The point's
    /// outcome, and whether the store took it.
    fn point<T: Team>(
        &self,
        team: &T,
        player: &mut dyn Player,
        (campaign, p, (first_of_study, last_of_study)): (GroupId, &Point, (bool, bool)),
        (mounts, unsaved): (&[Option<Mount>], &mut Vec<Kept>),
    ) -> (Result<(), Error>, Result<(), Error>) {
        let c = self.campaign;
        let lead = team.process() == 0;
        let name = point_name(c, p);
        let env = environment(c, p, campaign);
        let mut kept: Vec<HookRun> = Vec::new();
        let before = [
            ("before-study", c.hooks.before_study.as_ref().filter(|_| first_of_study)),
            ("before-run", c.hooks.before_run.as_ref()),
        ];
        // A target unmounted since the file was read has the disk beneath in its place.
        let refused = self
            .hooks_at(team, &before, &env, &mut kept)
            .map(|why| (why, HOOKS.to_string()))
            .or_else(|| lead.then(|| left_behind(c, p, mounts)).flatten());
        let refused: Option<(String, String)> = share_value(team, lead.then_some(&refused));
        let after = [
            ("after-run", c.hooks.after_run.as_ref()),
            ("after-study", c.hooks.after_study.as_ref().filter(|_| last_of_study)),
        ];
        let unjudged = after.iter().any(|(_, h)| h.is_some_and(|h| !h.ignore_failure));
        let outcome = match refused {
            Some((why, hint)) => Err(failure(Kind::Failed, why, hint)),
            None => {
                let ctx = self.context(&self.store, Within { campaign, point: name.clone(), unjudged });
                player.play(&self.study_of(p, self.scale), &ctx).and_then(|o| o.failure.map_or(Ok(()), Err))
            }
        };
        let mut env = env;
        env.push(("IOSURVEY_STATUS".into(), if outcome.is_ok() { "ok" } else { "failed" }.into()));
        let after_failed = self
            .hooks_at(team, &after, &env, &mut kept)
            .or_else(|| (lead && outcome.is_ok()).then(|| left_behind(c, p, mounts).map(|w| w.0)).flatten());
        let after_failed: Option<String> = share_value(team, lead.then_some(&after_failed));
        unsaved.push((name.clone(), p.repetition, c.studies[p.study].name.clone(), kept));
        // A point whose after-hook failed is not whole: its run is stored as failed, so that
        // running the campaign again measures it again; one they passed is whole only now.
        let filed = on_lead(team, || {
            let store = self.store_of(campaign)?;
            save_kept(&store, campaign, unsaved)?;
            match (&outcome, &after_failed) {
                (Ok(()), Some(why)) => store.fail_point(campaign, &name, why)?,
                (Ok(()), None) if unjudged => store.judge_point(campaign, &name)?,
                _ => {}
            }
            Ok(())
        })
        .map(|_| ());
        let outcome = match (outcome, after_failed) {
            (Ok(()), Some(why)) => Err(failure(Kind::Failed, why, HOOKS)),
            (outcome, _) => outcome,
        };
        (outcome, filed)
    }

    /// Runs the hooks given, keeps how each ran in `kept`, and says the first failure of one
    /// whose failure is not ignored (on the lead).
    fn hooks_at<T: Team>(
        &self,
        team: &T,
        hooks: &[(&str, Option<&Hook>)],
        env: &[(String, String)],
        kept: &mut Vec<HookRun>,
    ) -> Option<String> {
        let mut failed = None;
        for (name, hook) in hooks {
            let Some(hook) = hook else { continue };
            let runs = super::hooks::run_hook(team, name, hook, env, &self.cancel);
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

    /// The store, for a campaign's own writes: never made anew, for a store removed while
    /// the campaign ran (by a hook, say) would come back empty, without the campaign.
    fn store_of(&self, campaign: GroupId) -> Result<Store, Error> {
        let db = crate::escape::visible(&self.store.display().to_string()).into_owned();
        let gone = |what: &str| {
            failure(
                Kind::Store,
                format!("campaign {campaign} is no longer in {db}: the store was {what} while the campaign ran (by a hook?), and the points it stored went with it"),
                "keep hooks away from the store, then run the same command again to run the campaign anew",
            )
        };
        if std::fs::symlink_metadata(&self.store).is_err() {
            return Err(gone("removed"));
        }
        let store = Store::open_existing(&self.store)?;
        store.group(campaign).map_err(|_| gone("replaced"))?;
        Ok(store)
    }
}

/// How many of each identity the store holds whole, for a campaign of this name.
pub fn tally_done(store: &Store, name: &str) -> Result<Done, Error> {
    Ok(store.campaign_tally(name)?.into_iter().map(|(p, (ok, _))| ((p.study, p.target, p.key), ok)).collect())
}

/// Stores the hooks kept, each once: those a store that could not take them held back
/// are stored with the next point's, or at the campaign's end.
fn save_kept(store: &Store, campaign: GroupId, kept: &mut Vec<Kept>) -> Result<(), Error> {
    while let Some((point, repetition, study, runs)) = kept.first() {
        if !runs.is_empty() {
            store.save_hooks(campaign, Some((point, *repetition)), study, runs)?;
        }
        kept.remove(0);
    }
    Ok(())
}

fn mount_of(dir: &Path) -> Option<Mount> {
    crate::target::dir::Dir::open(dir).ok()?.mount().ok()
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
    let dir = crate::escape::visible(&t.dir.display().to_string()).into_owned();
    let what = match now {
        None => "is gone since the campaign file was read (unmounted, or removed?)",
        Some(_) => "is no longer on the file system it was on when the campaign file was read (unmounted?)",
    };
    Some((
        format!("target {}: {dir} {what}; the point is not measured", crate::escape::visible(&t.label)),
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

/// A point in words.
pub fn said(c: &Campaign, p: &Point) -> String {
    let s = &c.studies[p.study];
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut clients = p.clients.map_or(String::new(), |n| format!(", {n} client{}", plural(n)));
    if let (Some(n), Some(key)) = (p.swept, s.kind.sweeps()) {
        // "4 accelerators", "8 ranks": the file's key, made one where there is one.
        let one = key.strip_suffix('s').unwrap_or(key);
        clients = format!(", {n} {one}{}", plural(n));
    }
    format!(
        "{} ({}) on {}{clients}, repetition {} of {}",
        s.name,
        s.kind.name(),
        c.targets[p.target].label,
        p.repetition + 1,
        c.repetitions
    )
}

/// A point's name in the store.
pub fn point_name(c: &Campaign, p: &Point) -> PointName {
    let (study, target, key) = p.identity(c);
    PointName { study, target, key }
}

/// How long a point took before, from the store: the mean of the phases' windows of its
/// stored runs (the window excludes set-up, so the estimate is low by that much).
pub fn past_secs(store: &Store, c: &Campaign, p: &Point) -> Option<f64> {
    let label = &c.targets[p.target].label;
    let windows =
        |r: crate::record::RunRecord| -> f64 { r.phases.iter().map(|ph| ph.figures.window_ns as f64 / 1e9).sum() };
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

/// How much less data a calibration run moves than the point it stands for.
pub const CALIBRATE: u64 = 64;

/// What a calibration run of a study on a target found.
pub enum Calibration {
    /// Its wall time, and the bytes of the point it stood for.
    Ran {
        /// Seconds.
        secs: f64,
        /// The bytes of the point it stood for.
        bytes: Option<u64>,
    },
    /// Why it failed.
    Failed(String),
}

impl Calibration {
    /// A point's time from the calibration of its study on its target: the calibration's time
    /// times the data it left out, in proportion to the point's bytes where both have them.
    pub fn estimate(&self, p: &Point) -> Option<(f64, String)> {
        let Calibration::Ran { secs, bytes } = self else { return None };
        let share = match (p.bytes, bytes) {
            (Some(mine), Some(its)) if *its > 0 => mine as f64 / *its as f64,
            _ => 1.0,
        };
        let from = format!("from a calibration run at 1/{CALIBRATE} of the data, scaled up linearly");
        Some((secs * CALIBRATE as f64 * share, from))
    }
}

impl Runner<'_> {
    /// `plan --calibrate`: for each study and target with a point to run that no stored run
    /// estimates, its first such point run once at 1/64 of its data, timed, into a scratch
    /// store that is removed afterwards. Every process takes part; the lead decides which.
    pub fn calibrate<T: Team>(
        &self,
        team: &T,
        player: &mut dyn Player,
    ) -> Result<HashMap<(usize, usize), Calibration>, Error> {
        let (c, all) = (self.campaign, &self.points);
        let chosen = on_lead(team, || self.to_calibrate())?;
        let chosen: Vec<usize> = share_value(team, chosen.as_ref());
        let made = on_lead(team, || {
            // A fresh name (crate::scratch): a name known in advance could be made first, by
            // another user or by a killed calibration whose process id came round again.
            let scratch = crate::scratch::private_dir("iosurvey-calibrate").map_err(|e| {
                let tmp = std::env::temp_dir();
                failure(
                    Kind::Failed,
                    format!("cannot make a directory in {}: {e}", tmp.display()),
                    "free /tmp, or leave --calibrate out",
                )
            })?;
            let begun = Store::open(&scratch.join("calibration.db")).and_then(|store| {
                store.begin_group(&GroupStart {
                    kind: GroupKind::Campaign,
                    parent: None,
                    started: crate::units::now_unix(),
                    command_line: self.command_line.clone(),
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
        })?;
        let (scratch, campaign): (PathBuf, GroupId) = share_value(team, made.as_ref());
        let db = scratch.join("calibration.db");
        let by = self.scale.unwrap_or(1).saturating_mul(CALIBRATE);
        let mut found = HashMap::new();
        for k in chosen {
            let p = &all[k];
            let ctx = self.context(&db, Within { campaign, point: point_name(c, p), unjudged: false });
            let began = std::time::Instant::now();
            let played = player.play(&self.study_of(p, Some(by)), &ctx).and_then(|o| o.failure.map_or(Ok(()), Err));
            let wall = began.elapsed().as_secs_f64();
            let cal = match played {
                // A run's timed windows, as stored runs are estimated: its set-up, the same
                // at any size, would be multiplied with the rest. A whole study: its wall time.
                Ok(()) => {
                    let windows = match (team.process(), p.clients) {
                        (0, Some(_)) => Store::open_existing(&db)
                            .and_then(|s| s.campaign_runs("calibration").map(|ids| (s, ids)))
                            .ok()
                            .and_then(|(s, ids)| s.load(*ids.last()?).ok())
                            .map(|r| r.phases.iter().map(|ph| ph.figures.window_ns as f64 / 1e9).sum::<f64>()),
                        _ => None,
                    };
                    Calibration::Ran { secs: windows.unwrap_or(wall), bytes: p.bytes }
                }
                Err(e) => {
                    let e = Keys::of(c).said(e, c.studies[p.study].command());
                    let code = e.exit_code();
                    Calibration::Failed(e.line(&study::error::Plain).unwrap_or_else(|| format!("exit code {code}")))
                }
            };
            found.insert((p.study, p.target), cal);
        }
        if team.process() == 0 {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        Ok(found)
    }

    /// The points to calibrate, on the lead: the first of each study and target that is to
    /// run and that no stored run estimates (every study and target's, without a store).
    fn to_calibrate(&self) -> Result<Vec<usize>, Error> {
        let (c, all) = (self.campaign, &self.points);
        let store = match self.store.exists() {
            true => Some(Store::open_existing(&self.store)?),
            false => None,
        };
        let done = match &store {
            Some(s) => tally_done(s, &c.name).unwrap_or_default(),
            None => Done::new(),
        };
        let mut seen = std::collections::HashSet::new();
        Ok((0..all.len())
            .filter(|&k| {
                let p = &all[k];
                let estimated = store.as_ref().is_some_and(|s| past_secs(s, c, p).is_some());
                !super::is_done(c, p, &done) && p.refusal.is_none() && !estimated
            })
            .filter(|&k| seen.insert((all[k].study, all[k].target)))
            .collect())
    }
}

/// The time the rest of `total` points will take at the pace of the `done` so far, said after
/// a point's count (nothing before the first has run).
fn eta(began: std::time::Instant, done: usize, total: usize) -> String {
    match done {
        0 => String::new(),
        _ => format!(", ETA {}", format_duration(began.elapsed().as_secs_f64() / done as f64 * (total - done) as f64)),
    }
}
