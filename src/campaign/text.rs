//! What `campaign plan` and `campaign status` print: every point in run order with its hooks,
//! refusals and estimates; per study and target, the points stored whole, failed and still to
//! run. Text only: the command prints it on the lead.

use super::ask::Scale;
use super::runner::{past_secs, said, tally_done, Calibration};
use super::{is_done, Campaign, Done, HookPlace, Point};
use crate::store::{PointName, Store};
use crate::study::Error;
use crate::units::{format_duration, format_size};
use std::collections::HashMap;

/// The calibration of each study (first) on each target (second) that ran one.
pub type Calibrated = HashMap<(usize, usize), Calibration>;

/// "1 point", "2 points".
pub fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `campaign plan`: every point of `all` in order, its hooks, refusals and estimates (from
/// the runs `store` holds, else from `calibrated`), per study and in total.
pub fn plan(
    c: &Campaign,
    all: &[Point],
    store: Option<&Store>,
    calibrated: &Calibrated,
    scale: Option<Scale>,
) -> Result<String, Error> {
    let done: Done = match store {
        Some(s) => tally_done(s, &c.name)?,
        None => Done::new(),
    };
    let mut out = heading(c, scale);
    let mut sums = Sums { per_study: vec![(0.0, 0, 0); c.studies.len()], ..Sums::default() };
    for (k, p) in all.iter().enumerate() {
        let state = sums.state(c, p, &done, (store, calibrated));
        let flag = p.flag.as_ref().map_or(String::new(), |f| format!(" [flagged: {f}]"));
        out += &format!(
            "{:>4}. {}: {state}{flag}\n      iosurvey {}\n      measures: {}\n",
            k + 1,
            said(c, p),
            crate::escape::visible(&crate::shell::words(&p.argv)),
            p.what
        );
    }
    out += &sums.closing(c, all.len());
    Ok(out)
}

/// The plan's first line and its hooks.
fn heading(c: &Campaign, scale: Option<Scale>) -> String {
    let mut out = format!(
        "campaign {} (version {}), {} targets, {} studies, {} repetitions summarized by their {:?}, order {:?}{}\n",
        c.name,
        c.version(),
        c.targets.len(),
        c.studies.len(),
        c.repetitions,
        c.summary,
        c.order,
        scale.map_or(String::new(), |Scale(n)| format!(", every amount of data divided by {n}"))
    );
    for (name, h) in &c.hooks.all() {
        let place = match h.place {
            HookPlace::Lead => "on the lead",
            HookPlace::EveryNode => "on every node",
        };
        let failing = match (h.ignore_failure, name.starts_with("after")) {
            (true, _) => "a failure is kept and ignored",
            (false, false) => "a failure fails the point, which then does not run",
            (false, true) => "a failure fails the point, its run stored as failed",
        };
        out += &format!("hook {name} ({place}; {failing}): {}\n", crate::escape::visible(&h.command));
    }
    out
}

/// What estimates a point's time: the store's runs, else the calibrations.
type Known<'a> = (Option<&'a Store>, &'a Calibrated);

/// What the plan adds up as it goes: the estimated seconds, the points without one, those
/// refused and those stored; per study its seconds, points without an estimate and largest
/// point's bytes.
#[derive(Default)]
struct Sums {
    total_secs: f64,
    unknown: usize,
    refused: usize,
    skipped: usize,
    per_study: Vec<(f64, usize, u64)>,
}

impl Sums {
    /// A point's state in words, counted.
    fn state(&mut self, c: &Campaign, p: &Point, done: &Done, (store, calibrated): Known) -> String {
        if let (Some(bytes), None) = (p.bytes, &p.refusal) {
            self.per_study[p.study].2 = self.per_study[p.study].2.max(bytes);
        }
        if is_done(c, p, done) {
            self.skipped += 1;
            return "stored".to_string();
        }
        if let Some(why) = &p.refusal {
            self.refused += 1;
            return format!("refused: {why}");
        }
        let past = store.and_then(|s| past_secs(s, c, p)).map(|secs| (secs, "from stored runs".into()));
        match past.or_else(|| calibrated.get(&(p.study, p.target)).and_then(|cal| cal.estimate(p))) {
            Some((secs, from)) => {
                self.total_secs += secs;
                self.per_study[p.study].0 += secs;
                format!("about {} ({from})", format_duration(secs))
            }
            None => {
                self.unknown += 1;
                self.per_study[p.study].1 += 1;
                match calibrated.get(&(p.study, p.target)) {
                    Some(Calibration::Failed(why)) => format!("no estimate (its calibration run failed: {why})"),
                    _ => "no estimate (no stored run of this workload on this target; --calibrate measures one)".into(),
                }
            }
        }
    }

    /// The lines per study and the total.
    fn closing(&self, c: &Campaign, points: usize) -> String {
        let mut out = String::new();
        for (s, (secs, unknown, bytes)) in c.studies.iter().zip(&self.per_study) {
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
        let todo = points - self.skipped - self.refused;
        let time = match (self.total_secs > 0.0, self.unknown) {
            (_, 0) => format!("about {}", format_duration(self.total_secs)),
            (false, n) => format!("no estimate for its {n} points to run"),
            (true, n) => format!("about {} + {n} points without an estimate", format_duration(self.total_secs)),
        };
        out += &format!(
            "total: {points} points, {todo} to run, {} stored already, {} refused; {time}{}{}\n",
            self.skipped,
            self.refused,
            if self.unknown > 0 {
                " (a point's first run, e.g. with 'campaign run --only', teaches its time)"
            } else {
                ""
            },
            c.budget_secs.map_or(String::new(), |b| format!("; budget {}", format_duration(b)))
        );
        out
    }
}

/// A row of `campaign status`: study, target, stored, failed, to run, refused.
type Row = (String, String, usize, usize, usize, usize);

/// `campaign status`: per study and target of `all`, the points `store` holds whole, those
/// failed, still to run and refused; then the hooks that failed.
pub fn status(store: &Store, c: &Campaign, all: &[Point]) -> Result<String, Error> {
    let rows = status_rows(store, c, all)?;
    let mut out = format!("campaign {} (version {})\n", c.name, c.version());
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
            crate::escape::visible(output)
        );
    }
    Ok(out)
}

/// The rows of `campaign status`, in the order their first point comes.
fn status_rows(store: &Store, c: &Campaign, all: &[Point]) -> Result<Vec<Row>, Error> {
    let tally = store.campaign_tally(&c.name)?;
    let mut rows: Vec<Row> = Vec::new();
    // Each study and target's row, found by look-up: a campaign may have thousands of targets.
    let mut row_of: HashMap<(usize, usize), usize> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for p in all {
        let (study, target, key) = p.identity(c);
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
    Ok(rows)
}
