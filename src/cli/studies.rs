//! The measuring commands: each is its study, played by the library (`iosurvey::study::play`);
//! what it stored and made is rendered here, tables on standard output and notes on stderr.
//! Only what names a file of the command line is the command's own: `--json` and `--csv`,
//! checked before the study and written after it.

use super::{output, Cli};
use iosurvey::analysis;
use iosurvey::record::RunRecord;
use iosurvey::report::{self, Format};
use iosurvey::study::play::on_lead;
use iosurvey::study::{Error, Made, Outcome, RunArgs, Study};
use iosurvey::team::Team;
use std::path::Path;

/// Plays `study` for the command line and renders what it made; its failure, if any, is the
/// command's.
pub(super) fn play<T: Team>(cli: &Cli, study: &Study, team: &T) -> Result<(), Error> {
    let played = played(cli, study, team)?;
    match study {
        Study::Run(a) => run(cli, a, &played)?,
        Study::Meta(a) => run(cli, &a.to_run()?, &played)?,
        Study::Survey(_) => survey(cli, team, &played),
        Study::Matrix(a) => matrix(cli, a.csv.as_deref(), team, &played)?,
        Study::Io500(_) => io500(cli, &played),
        Study::Targets(_) => targets(cli, team, &played),
        Study::Net(_) => net(cli, team, &played),
        Study::Train(_) => super::train::trained(cli, &played),
        Study::Checkpoint(_) => super::train::checkpointed(cli, &played),
    }
    played.failure.map_or(Ok(()), Err)
}

/// Plays `study` for the command line, the files it names checked first, and gives what it
/// stored and made: a command renders it, a front end prints it in its tool's layout.
pub(super) fn played<T: Team>(cli: &Cli, study: &Study, team: &T) -> Result<Outcome, Error> {
    before(cli, study, team)?;
    super::opening::play(cli, study, team)
}

/// Refuses, before anything runs, a file the command line names that could not or must not
/// be written.
fn before<T: Team>(cli: &Cli, study: &Study, team: &T) -> Result<(), Error> {
    let (path, flag) = match study {
        Study::Run(a) => (a.team.json.as_deref().filter(|p| !output::is_stdout(p)), "--json"),
        Study::Matrix(a) => (a.csv.as_deref(), "--csv"),
        _ => (None, ""),
    };
    match path {
        Some(path) => on_lead(team, || output::check(path, &cli.db, flag)).map(|_| ()),
        None => Ok(()),
    }
}

/// A report laid out as text.
fn text(r: analysis::Report) -> String {
    report::exporter(Format::Text).render(&r)
}

/// `run`: the record as JSON when asked, then each run's table (a sweep's as one), or with
/// -q the ids.
fn run(cli: &Cli, a: &RunArgs, played: &Outcome) -> Result<(), Error> {
    let (records, sweep) = (&played.records, played.group.is_some());
    let to_stdout = a.team.json.as_deref().is_some_and(output::is_stdout);
    if let (Some(path), false) = (&a.team.json, records.is_empty()) {
        write_json(path, records, sweep, &cli.db)?;
    }
    for r in records.iter().filter(|_| !to_stdout) {
        if cli.within.is_some() {
            // A campaign says its own progress.
        } else if cli.quiet {
            outln!("run {}", r.id.unwrap_or_default());
        } else if !sweep {
            out!("{}", text(analysis::run(r)));
        }
    }
    if sweep && !cli.quiet && !to_stdout && !records.is_empty() {
        out!("{}", text(analysis::sweep(played.group.map(|g| g.number), records)));
    }
    Ok(())
}

/// Writes the records as JSON: one object for a single run, an array for a sweep; `-` is
/// standard output, which then holds that document only.
fn write_json(path: &Path, records: &[RunRecord], sweep: bool, db: &Path) -> Result<(), Error> {
    let text = match (sweep, records.last()) {
        (false, Some(r)) => iosurvey::report::stored::to_json(r)?,
        _ => iosurvey::report::stored::to_json(&records)?,
    };
    if output::is_stdout(path) {
        out!("{text}");
        return Ok(());
    }
    output::write(path, text.as_bytes(), db, "--json")
}

/// `survey`: its characterization, or with -q the run ids; its notes after.
fn survey<T: Team>(cli: &Cli, team: &T, played: &Outcome) {
    let records = &played.records;
    if cli.within.is_some() {
        // A campaign says its own progress.
    } else if team.process() == 0 && cli.quiet {
        // As `run -q`: the ids only.
        for r in records {
            outln!("run {}", r.id.unwrap_or_default());
        }
    } else if let (Some(group), false) = (played.group, records.is_empty()) {
        out!("{}", text(analysis::survey(group.number, records)));
    }
    for note in played.notes.iter().filter(|_| !cli.quiet) {
        say!("iosurvey: note: {note}");
    }
}

/// `matrix`: its CSV when asked, then its tables, on the lead.
fn matrix<T: Team>(cli: &Cli, csv: Option<&Path>, team: &T, played: &Outcome) -> Result<(), Error> {
    write_csv(cli, csv, team, played)?;
    if let (Made::Matrix(m), 0, false) = (&played.made, team.process(), cli.quiet) {
        out!("{}", text(analysis::matrix::matrix(m)));
    }
    Ok(())
}

/// A matrix's cells as CSV to `csv` (checked before it ran), on the lead.
pub(super) fn write_csv<T: Team>(cli: &Cli, csv: Option<&Path>, team: &T, played: &Outcome) -> Result<(), Error> {
    match (&played.made, csv, team.process()) {
        (Made::Matrix(m), Some(path), 0) => output::write(path, analysis::matrix::csv(m).as_bytes(), &cli.db, "--csv"),
        _ => Ok(()),
    }
}

/// `io500`: a whole list's `[RESULT]` lines and score, and why it is not valid for
/// submission where it is not.
fn io500(cli: &Cli, played: &Outcome) {
    let Made::Io500(scores) = &played.made else { return };
    if scores.is_empty() || cli.within.is_some() {
        return;
    }
    for p in scores {
        outln!("{}", iosurvey::io500::result_line(p));
    }
    let valid = scores.iter().all(|p| p.invalid.is_empty());
    outln!("{}", iosurvey::io500::score_line(&iosurvey::io500::score(scores), valid));
    if !valid && !cli.quiet {
        for p in scores.iter().filter(|p| !p.invalid.is_empty()) {
            say!("iosurvey: note: {} is not valid for submission: {}", p.phase.name(), p.invalid.join("; "));
        }
    }
}

/// `targets`: the survey's tables (`show tN` lays out the same), or with -q the run ids.
fn targets<T: Team>(cli: &Cli, team: &T, played: &Outcome) {
    let (records, Some(group)) = (&played.records, played.group) else { return };
    if team.process() != 0 {
        return;
    }
    if cli.quiet {
        records.iter().for_each(|r| outln!("run {}", r.id.unwrap_or_default()));
    } else if !records.is_empty() {
        out!("{}", text(analysis::targets::report(group.number, records)));
    }
}

/// `net`: a line per figure, its notes after it.
fn net<T: Team>(cli: &Cli, team: &T, played: &Outcome) {
    let Made::Net(results) = &played.made else { return };
    for r in results.iter().filter(|_| team.process() == 0) {
        // Host names come from the machines: shown on the terminal, never obeyed by it.
        outln!("{}", iosurvey::escape::visible(&r.line()));
        for note in r.zerocopy_note().into_iter().chain(r.curve_note()).filter(|_| !cli.quiet) {
            say!("iosurvey: note: {note}");
        }
    }
    if results.iter().any(|r| r.one_node) && !cli.quiet {
        say!("iosurvey: note: every endpoint is a process of one node: the figures are its loopback and memory, not a network");
    }
}
