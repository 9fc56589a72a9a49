//! A session: what every study shares, done once. Opening one makes the lead's checks (the
//! target, its janitor, the store), shares the target with every process, and hands back a
//! session that runs workloads and files them. Groups (a sweep, a survey, a matrix, an IO500
//! list, a campaign) are begun and finished through it, their names minted by the store.
//! A study is a [`Plan`]: the session asks it what to run next and runs that on every process.
//! Stopping is a [`Cancel`] token handed in. Dropping the session removes what its runs made
//! and hands what could not be removed to the caller's [`Leftovers`].
//!
//! Every method is collective: every process of the team calls it, in the same order; the
//! lead decides and the others follow, so nobody waits for ever. Sessions of one process may
//! run at the same time (on threads of their own, each with its team): what a session needs
//! is handed in (the stop token, the leftovers), and what the signal path must reach of a run
//! (its last will in `store::will`, its janitor duty, its live files) is kept per run.

use crate::cancel::Cancel;
use crate::kinds;
use crate::plan::{HookError, HookSite, Last, Plan, Step};
use crate::record::{GroupId, GroupKind, RunRecord};
use crate::runner::{check_meta_order, Filing, Lead, RunError, Runner, Watch};
use crate::spec::{Hint, Workload};
use crate::store::{GroupStart, PointName, Store};
use crate::target::device::Consent;
use crate::target::dir::Dir;
use crate::target::site::Site;
use crate::target::{Options, Target};
use crate::team::{all_agree, share_value, Team};
use crate::units::now_unix;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

mod fresh;

/// Where a session's runs go.
#[derive(Debug, Clone)]
pub enum Place {
    /// A directory the user named, and a metadata run's further base directories.
    Dir {
        /// The target.
        dir: PathBuf,
        /// Further base directories (`--dir a@b`), each a target of its own.
        more: Vec<PathBuf>,
    },
    /// Block devices (`--device`), with what the user allowed.
    Devices {
        /// The devices, in the order given.
        paths: Vec<PathBuf>,
        /// Consent to writing them.
        consent: Consent,
    },
    /// A target of a kind of the registry ([`crate::kinds::KINDS`]) as the user named it.
    Kind {
        /// The kind's name.
        kind: &'static str,
        /// What the user gave (`URL/BUCKET/PREFIX`, a path).
        spec: String,
    },
    /// A fresh directory `iosurvey-KIND-PID` made in `parent` (the current directory when
    /// none) and removed at the end, so a study can be pointed at a non-empty scratch space.
    Fresh {
        /// Where to make it.
        parent: Option<PathBuf>,
        /// The study's kind, in the directory's name.
        kind: &'static str,
    },
}

/// What could not be removed when sessions closed: said by whoever ends the process.
#[derive(Debug, Clone, Default)]
pub struct Leftovers(Arc<Mutex<Vec<String>>>);

impl Leftovers {
    /// Everything gathered so far, once.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn add(&self, problems: Vec<String>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend(problems);
    }
}

/// What a session is opened with.
pub struct Opening<'a> {
    /// The store's file.
    pub store: PathBuf,
    /// Where the runs go.
    pub place: Place,
    /// How the target is taken (force, keep, ...).
    pub options: Options,
    /// Tasks (threads) in each process.
    pub threads: usize,
    /// The command line, stored with every run and group.
    pub command_line: String,
    /// Refuse runs that need more space than is free.
    pub space_check: bool,
    /// The name the user gave the system measured (`--label`), filed with every run.
    pub label: Option<String>,
    /// Stops runs after their current transfers, and sequences before their next run.
    pub cancel: Cancel,
    /// Watches each run's live progress on the lead.
    pub watch: Option<&'a Watch>,
    /// Where clean-up's problems go.
    pub leftovers: Leftovers,
    /// Workloads whose metadata phase order is checked against what the target holds before
    /// the store is touched (a refused order leaves no store behind).
    pub check: Vec<Workload>,
    /// The campaign point the session runs, when it runs one.
    pub within: Option<Within>,
}

/// A campaign point a session runs: its runs are filed in the campaign's group under the
/// point's study, and the groups it begins are the campaign's, named as the point.
#[derive(Debug, Clone)]
pub struct Within {
    /// The campaign (the version of its file).
    pub campaign: GroupId,
    /// The point.
    pub point: PointName,
    /// Whether hooks judge the point after it ran: its run (or group) is stored as failed
    /// until they pass ([`crate::store::Store::judge_point`]), so that a campaign killed
    /// before they ran never counts it whole.
    pub unjudged: bool,
}

/// The targets the lead has taken, each in its kind's care: dropped, they are cleaned up and
/// released, whatever step of the session (or of its opening) ends.
struct Taken {
    /// The target first, then a metadata run's further bases (or the further devices).
    held: Vec<Box<dyn kinds::Lead>>,
    leftovers: Leftovers,
}

impl Drop for Taken {
    fn drop(&mut self) {
        for target in self.held.drain(..) {
            self.leftovers.add(target.clean_up());
        }
    }
}

impl Place {
    /// The kind of target it names.
    fn kind(&self) -> &'static kinds::Registered {
        match self {
            Place::Dir { .. } | Place::Fresh { .. } => &kinds::dir::KIND,
            Place::Devices { .. } => &kinds::device::KIND,
            Place::Kind { kind, .. } => kinds::entry(kind),
        }
    }
}

/// What only the lead holds: the store and the targets.
pub struct LeadSide {
    store: Store,
    taken: Taken,
    notes: Vec<String>,
}

impl LeadSide {
    /// The store.
    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The target directory (a session of a study that runs in a directory has one).
    pub fn target(&mut self) -> &mut Target {
        self.taken.held[0].as_dir().expect("a study that runs in a directory")
    }

    /// Before a study that writes its devices: every device's consent and checks at once, so
    /// that none is written when another would be refused.
    pub fn check_device_writes(&mut self) -> Result<(), RunError> {
        for d in &mut self.taken.held {
            d.check_write()?;
        }
        Ok(())
    }

    /// The lead's targets `range`.
    fn held(&mut self, range: std::ops::Range<usize>) -> (&mut Store, &mut [Box<dyn kinds::Lead>]) {
        (&mut self.store, &mut self.taken.held[range])
    }
}

/// What a plan's runs came to.
#[derive(Debug, Default)]
pub struct Played {
    /// The records of its runs, a failed one included (lead only).
    pub records: Vec<RunRecord>,
    /// What ended it early: a failed run, a refusal, a hook, or a stop.
    pub failure: Option<RunError>,
}

/// What the lead shares before each step.
#[derive(Serialize, Deserialize)]
enum Turn {
    Go(Step),
    Stop,
}

/// An open session.
pub struct Session<'t, T: Team> {
    team: &'t T,
    threads: usize,
    site: Site,
    lead: Option<LeadSide>,
    command_line: String,
    space_check: bool,
    label: Option<String>,
    cancel: Cancel,
    watch: Option<&'t Watch>,
    within: Option<Within>,
}

impl<'t, T: Team> Session<'t, T> {
    /// Opens a session: on the lead, the target (held in the janitor's care), the check of
    /// every workload's metadata phase order, then the store; on every process, the target's
    /// directory at the path the lead resolved. A refusal leaves no store and no directory.
    pub fn open(team: &'t T, o: Opening<'t>) -> Result<Self, RunError> {
        let mut lead = lead_decides(team, || open_lead(&o))?;
        let site = everywhere(team, o.place.kind(), lead.as_ref().map(|l| &l.taken.held[..]))?;
        if let Some(l) = lead.as_mut() {
            for t in &mut l.taken.held {
                l.notes.extend(t.take_notes());
            }
        }
        Ok(Session {
            team,
            threads: o.threads,
            site,
            lead,
            command_line: o.command_line,
            space_check: o.space_check,
            label: o.label,
            cancel: o.cancel,
            watch: o.watch,
            within: o.within,
        })
    }

    /// What the lead's checks found worth saying (reclaimed leftovers, no locks), once.
    pub fn notes(&mut self) -> Vec<String> {
        self.lead.as_mut().map(|l| std::mem::take(&mut l.notes)).unwrap_or_default()
    }

    /// Where the session's runs go.
    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The session without a progress display (a study of many short runs).
    pub fn unwatched(mut self) -> Self {
        self.watch = None;
        self
    }

    /// Runs `f` on the lead only; its success or exit code reaches every process, so that all
    /// of them stop together when the lead fails.
    pub fn on_lead<X>(&mut self, f: impl FnOnce(&mut LeadSide) -> Result<X, RunError>) -> Result<Option<X>, RunError> {
        let lead = &mut self.lead;
        lead_decides(self.team, || lead.as_mut().map(f).unwrap_or(Err(RunError::Peer { code: 1 })))
    }

    /// The lead's value of `f`, on every process.
    pub fn decide<X: Serialize + DeserializeOwned>(&mut self, f: impl FnOnce(&mut LeadSide) -> X) -> X {
        let mine = self.lead.as_mut().map(f);
        share_value(self.team, mine.as_ref())
    }

    /// Begins a group; the store mints its name, which every process gets.
    pub fn begin(&mut self, kind: GroupKind, spec: &impl Serialize) -> Result<GroupId, RunError> {
        let spec = serde_json::to_string(spec).unwrap_or_else(|_| "null".into());
        let start = GroupStart {
            kind,
            parent: self.within.as_ref().map(|w| w.campaign),
            started: now_unix(),
            command_line: self.command_line.clone(),
            spec,
            point: self.within.as_ref().map(|w| w.point.clone()),
        };
        let minted = self.on_lead(|l| Ok(l.store.begin_group(&start)?))?;
        Ok(share_value(self.team, minted.as_ref()))
    }

    /// Ends a group, ok or failed; `spec` replaces what it was begun with.
    pub fn finish(&mut self, group: GroupId, ok: bool, spec: Option<String>) -> Result<(), RunError> {
        // A campaign's point stays failed until the hooks that judge it pass.
        let ok = ok && !self.within.as_ref().is_some_and(|w| w.unjudged);
        self.on_lead(|l| Ok(l.store.finish_group(group, ok, spec.as_deref())?)).map(|_| ())
    }

    /// Runs one workload and files it. The files it creates stay registered in the target for
    /// clean-up when the session closes, so that later runs can reuse them.
    pub fn run(
        &mut self,
        w: &Workload,
        name: Option<&str>,
        group: Option<GroupId>,
    ) -> Result<Option<RunRecord>, RunError> {
        let all = 0..self.site.len();
        self.run_on(w, (name, group), all)
    }

    /// Runs one workload on the session's targets `range` only (a target survey's one target,
    /// or its first k) and files it under `name` in `group`.
    pub fn run_on(
        &mut self,
        w: &Workload,
        (name, group): (Option<&str>, Option<GroupId>),
        range: std::ops::Range<usize>,
    ) -> Result<Option<RunRecord>, RunError> {
        // A campaign's point run alone is filed in the campaign, under its study.
        let (name, group) = match (&self.within, group) {
            (Some(w), None) => (Some(w.point.study.as_str()), Some(w.campaign)),
            _ => (name, group),
        };
        let unjudged =
            group.is_some_and(|g| g.kind == GroupKind::Campaign) && self.within.as_ref().is_some_and(|w| w.unjudged);
        let filing = Filing { name, group, label: self.label.as_deref(), unjudged };
        let lead = self.lead.as_mut().map(|l| {
            let (store, held) = l.held(range.clone());
            Lead { store, held }
        });
        let mut runner = Runner {
            team: self.team,
            threads: self.threads,
            site: self.site.part(range),
            lead,
            command_line: self.command_line.clone(),
            space_check: self.space_check,
            watch: self.watch,
            cancel: self.cancel.clone(),
        };
        runner.run(w, filing)
    }

    /// Plays a plan to its end, filing its runs in `group`: the lead asks the plan for each
    /// step and every process takes it. `before` is called on the lead before each step. A stop
    /// asked for between steps ends it as [`RunError::Interrupted`].
    pub fn play(&mut self, plan: &mut dyn Plan, group: Option<GroupId>, mut before: impl FnMut(&Step)) -> Played {
        let mut played = Played::default();
        let mut refused = None;
        let mut last_ran = false;
        loop {
            // The plan always hears what became of the last step (a matrix files its samples
            // then), and a stop asked for since takes the place of any step but the end.
            let turn = self.lead.as_ref().map(|_| {
                let last = match (&refused, last_ran) {
                    (Some(e), _) => Last::Refused(e),
                    (None, true) => played.records.last().map_or(Last::Start, Last::Ran),
                    (None, false) => Last::Start,
                };
                match plan.next(last) {
                    Step::Done => Turn::Go(Step::Done),
                    _ if self.cancel.is_cancelled() => Turn::Stop,
                    step => Turn::Go(step),
                }
            });
            // Never a success: a batch script must see the sequence did not finish.
            let step = match share_value(self.team, turn.as_ref()) {
                Turn::Stop => {
                    played.failure = Some(RunError::Interrupted);
                    break;
                }
                Turn::Go(step) => step,
            };
            refused = None;
            last_ran = false;
            if self.lead.is_some() && step != Step::Done {
                before(&step);
            }
            match step {
                Step::Done => break,
                Step::Hook(name) => {
                    let threads = self.threads;
                    let hooked = self.on_lead(|l| {
                        let Some(target) = l.taken.held.first_mut().and_then(|t| t.as_dir()) else {
                            return Err(RunError::Hook {
                                name: name.clone(),
                                why: "the target is not a directory".into(),
                            });
                        };
                        let mut site = HookSite { target, threads };
                        plan.hook(&name, &mut site).map_err(|e| match e {
                            HookError::Target(e) => RunError::Target(e),
                            HookError::Other(why) => RunError::Hook { name: name.clone(), why },
                        })
                    });
                    if let Err(e) = hooked {
                        played.failure = Some(e);
                        break;
                    }
                }
                Step::Run { workload, name } => {
                    let result = self.run(&workload, name.as_deref(), group);
                    // The lead's word: a refusal the plan passes over goes on everywhere.
                    let pass_over = matches!(&result, Err(RunError::Spec(_))) && plan.passes_over_refusals();
                    let mine = self.lead.as_ref().map(|_| result.is_ok() || pass_over);
                    let go_on = share_value(self.team, mine.as_ref());
                    match result {
                        Ok(record) => {
                            last_ran = record.is_some();
                            played.records.extend(record);
                        }
                        Err(RunError::Spec(e)) if go_on => refused = Some(e),
                        Err(_) if go_on => {}
                        Err(e) => {
                            // A failed run is stored whole, so it is reported with the others.
                            if let RunError::Failed { record, .. } = &e {
                                played.records.push((**record).clone());
                            }
                            played.failure = Some(e);
                            break;
                        }
                    }
                }
            }
        }
        played
    }
}

/// Runs `f` on the lead only; its success or exit code reaches every process.
fn lead_decides<T: Team, X>(team: &T, f: impl FnOnce() -> Result<X, RunError>) -> Result<Option<X>, RunError> {
    let result = (team.process() == 0).then(f);
    let code = share_value(
        team,
        result
            .as_ref()
            .map(|r| match r {
                Ok(_) => 0,
                Err(e) => e.exit_code(),
            })
            .as_ref(),
    );
    match result {
        Some(r) => r.map(Some),
        None if code == 0 => Ok(None),
        None => Err(RunError::Peer { code }),
    }
}

/// The lead's part of opening: every target first (a refused target leaves no trace, not even
/// a new store), then the phase order, then the store.
fn open_lead(o: &Opening) -> Result<LeadSide, RunError> {
    // Whatever refuses from here on, what was taken is cleaned up when `taken` drops.
    let mut taken = Taken { held: Vec::new(), leftovers: o.leftovers.clone() };
    let mut notes = Vec::new();
    match &o.place {
        Place::Dir { dir, more } => {
            let paths: Vec<PathBuf> = std::iter::once(dir).chain(more).cloned().collect();
            kinds::dir::take_paths(&paths, o.options, &mut taken.held)?;
            if let Some(first) = taken.held[0].as_dir() {
                for w in &o.check {
                    check_meta_order(first, w)?;
                }
            }
        }
        Place::Devices { paths, consent } => kinds::device::take_paths(paths, consent, &o.store, &mut taken.held)?,
        Place::Kind { kind, spec } => {
            let taking = kinds::Taking { spec, options: o.options, store: &o.store, check: &o.check };
            (kinds::entry(kind).take)(&taking, &mut taken.held)?;
        }
        Place::Fresh { parent, kind } => {
            let parent = match parent {
                Some(d) => d.to_path_buf(),
                None => std::env::current_dir().map_err(|e| RunError::Open {
                    what: format!("cannot read the current directory: {e}"),
                    hint: Hint::say("cd to a directory that exists"),
                })?,
            };
            let parent_dir = Dir::open(&parent).map_err(|e| RunError::Open {
                what: format!("cannot open {}: {e}", parent.display()),
                hint: Hint::say("give an existing directory"),
            })?;
            notes = fresh::reclaim_dead_siblings(&parent_dir);
            let name = fresh::name(kind);
            taken.held.push(kinds::dir::Held::hold(Target::create(parent_dir, name.as_ref(), o.options)?));
        }
    }
    let store = Store::open(&o.store)?;
    Ok(LeadSide { store, taken, notes })
}

/// The targets on every process: the lead's (taken, checked), and on the others each
/// opened by what the lead shares of it.
fn everywhere<T: Team>(
    team: &T,
    kind: &'static kinds::Registered,
    lead: Option<&[Box<dyn kinds::Lead>]>,
) -> Result<Site, RunError> {
    let count = share_value(team, lead.map(<[_]>::len).as_ref());
    let mut members = Vec::with_capacity(count);
    for k in 0..count {
        let share = team.share(lead.map(|l| l[k].share()).unwrap_or_default());
        let member = match lead {
            Some(l) => Ok(l[k].member()),
            None => (kind.join)(&share),
        };
        if !all_agree(team, member.is_ok()) {
            return Err(match member {
                Err(e) => e.into(),
                Ok(_) => RunError::Peer { code: 2 },
            });
        }
        members.push(member.map_err(|_| RunError::Peer { code: 2 })?);
    }
    Ok(Site::new(members))
}
