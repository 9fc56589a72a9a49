//! A run's events (`--event 30s:"COMMAND"`): commands the lead runs at their times into the
//! run's first phase, one after another on a thread of their own, while the tasks transfer.
//! Each is stamped on the team's clock, the clock of the time series, so the report can mark
//! it on the run's time line and the findings can split the run at it. An event whose command
//! fails is kept as it ended and the run goes on; an event the run ended before is kept as
//! not reached.

use crate::cancel::Cancel;
use crate::engine::Progress;
use crate::record::EventRun;
use crate::spec::Event;
use crate::team::clock::monotonic_ns;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the scheduler looks at the clock and at whether the run ended.
const TICK: Duration = Duration::from_millis(5);

/// How long a command still running when the run ends is waited for before its process
/// group is ended.
const GRACE: Duration = Duration::from_secs(10);

/// The events of a run, scheduled.
pub struct Scheduled {
    thread: JoinHandle<Vec<EventRun>>,
    /// The run ended: no event is started from now on.
    ended: Cancel,
    /// A command still running is ended.
    kill: Cancel,
    /// The user's stop.
    stop: Cancel,
}

/// Starts the scheduler: each event runs `at_secs` after the first phase begins, in time
/// order; a stop (`stop`) ends a running command and starts no more.
pub fn start(events: &[Event], progress: Arc<Progress>, stop: Cancel) -> Scheduled {
    let mut events = events.to_vec();
    events.sort_by(|a, b| a.at_secs.total_cmp(&b.at_secs));
    let (ended, kill) = (Cancel::new(), Cancel::new());
    let (ended2, kill2, stop2) = (ended.clone(), kill.clone(), stop.clone());
    let thread = std::thread::spawn(move || {
        let over = || ended2.is_cancelled() || stop2.is_cancelled();
        let mut out = Vec::with_capacity(events.len());
        let begun = loop {
            match progress.first_phase() {
                Some(t) => break Some(t),
                None if over() => break None,
                None => std::thread::sleep(TICK),
            }
        };
        for e in events {
            let due = begun.map(|t| t.saturating_add((e.at_secs * 1e9) as u64));
            let reached = due.is_some_and(|due| loop {
                if over() {
                    break false;
                }
                let now = monotonic_ns();
                if now >= due {
                    break true;
                }
                std::thread::sleep(Duration::from_nanos(due - now).min(TICK));
            });
            if !reached {
                out.push(EventRun { at_secs: e.at_secs, started_ns: None, ran: None, command: e.command });
                continue;
            }
            let started_ns = progress.on_team_clock(monotonic_ns());
            let env = [("IOSURVEY_EVENT_AT".to_string(), e.at_secs.to_string())];
            let ran = crate::shell::run("event", &e.command, &env, &kill2);
            out.push(EventRun { at_secs: e.at_secs, started_ns: Some(started_ns), ran: Some(ran), command: e.command });
        }
        out
    });
    Scheduled { thread, ended, kill, stop }
}

impl Scheduled {
    /// The run ended: events not yet started are not reached; a command still running is
    /// waited for a while, then ended. Returns every event as it went.
    pub fn finish(self) -> Vec<EventRun> {
        self.ended.cancel();
        if self.stop.is_cancelled() {
            self.kill.cancel();
        }
        let deadline = std::time::Instant::now() + GRACE;
        while !self.thread.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(TICK);
        }
        self.kill.cancel();
        self.thread.join().unwrap_or_default()
    }
}

/// What the run says of events that did not go as asked.
pub fn warnings(events: &[EventRun]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| {
            let at = crate::units::format_duration(e.at_secs);
            let command = crate::escape::visible(&e.command);
            match &e.ran {
                None => Some(format!("event at {at} ({command}) was not reached: the run ended first")),
                Some(r) if r.stopped => {
                    Some(format!("event at {at} ({command}) was still running when the run ended, and was ended"))
                }
                Some(r) if !r.ok() => Some(format!("event at {at} ({command}) failed: {}", r.ending())),
                Some(_) => None,
            }
        })
        .collect()
}
