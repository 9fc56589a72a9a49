//! What every measuring command hands its study: the command line's settings as the study's
//! context, and an observer that says its warnings and progress on stderr.

use super::{progress, Cli};
use iosurvey::plan::Step;
use iosurvey::runner::Watch;
use iosurvey::study::play::{Context, Observer, Outcome};
use iosurvey::study::Study;
use iosurvey::team::Team;
use std::io::IsTerminal;

/// The command line as typed; an argument that is not UTF-8 is kept with replacement
/// characters (the record says so).
pub(super) fn command_line() -> String {
    std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

fn watcher(cli: &Cli) -> Option<&'static Watch> {
    ((!cli.quiet || cli.live) && std::io::stderr().is_terminal()).then_some(&progress::watch as &Watch)
}

/// What the command hands a study: its store, its command line, the stop the signal thread
/// asks for, where clean-up's leftovers go, its progress bar, its campaign point.
fn context(cli: &Cli) -> Context<'static> {
    Context {
        store: cli.db.clone(),
        command_line: command_line(),
        cancel: super::CANCEL.clone(),
        leftovers: super::LEFTOVERS.clone(),
        watch: watcher(cli),
        within: cli.within.clone(),
    }
}

/// The command line's ear for a study: warnings and steps said on stderr.
struct Said {
    quiet: bool,
    /// Where a battery is, once it has said its shape.
    progress: Option<Progress>,
}

impl Said {
    fn new(quiet: bool) -> Self {
        Said { quiet, progress: None }
    }
}

/// Where a battery is, for its progress lines: the step of all, the repetition of the
/// workload, and the time left at the pace of the steps done (none before the first ends).
struct Progress {
    per_round: usize,
    rounds: usize,
    begun: usize,
    start: std::time::Instant,
}

impl Progress {
    /// The words for the step beginning now: `[4/9, repetition 2 of 3, ETA 40 s]`.
    fn next(&mut self) -> String {
        let total = self.per_round * self.rounds;
        let eta = match self.begun {
            0 => "ETA after the first".to_string(),
            done => {
                let left = self.start.elapsed().as_secs_f64() / done as f64 * (total.saturating_sub(done)) as f64;
                format!("ETA {} s", left.round())
            }
        };
        self.begun += 1;
        let round = (self.begun - 1) / self.per_round + 1;
        format!("[{}/{total}, repetition {round} of {}, {eta}] ", self.begun, self.rounds)
    }
}

impl Observer for Said {
    fn warning(&mut self, line: &str) {
        say!("iosurvey: warning: {line}");
    }

    fn opening(&mut self) {
        // From here a signal stops the study cleanly instead of ending the process.
        super::RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn step(&mut self, step: &Step) {
        if let (Step::Run { workload, name }, false) = (step, self.quiet) {
            let at = self.progress.as_mut().map(Progress::next).unwrap_or_default();
            say!("iosurvey: {at}{} ({})", name.as_deref().unwrap_or("-"), workload.label());
        }
    }

    fn rounds(&mut self, per_round: usize, rounds: usize) {
        let per_round = per_round.max(1);
        self.progress = Some(Progress { per_round, rounds, begun: 0, start: std::time::Instant::now() });
    }

    fn progress(&mut self, line: &str) {
        if !self.quiet {
            say!("iosurvey: {line}");
        }
    }
}

/// Plays a study through the library, what it says said on stderr.
pub(super) fn play<T: Team>(cli: &Cli, study: &Study, team: &T) -> Result<Outcome, iosurvey::study::Error> {
    // A server's log of its clients is what it is run for: said even with -q.
    let quiet = cli.quiet && !matches!(study, Study::Net(a) if a.serve);
    iosurvey::study::play(&context(cli), study, team, &mut Said::new(quiet))
}
