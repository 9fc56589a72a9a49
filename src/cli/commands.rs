//! The commands, written once for any team: the lead process prints and owns the store and
//! the target; every process runs its tasks.

use super::{Cli, Command};
use iosurvey::analysis;
use iosurvey::report::chosen::ReportArgs;
use iosurvey::report::stored::{self, ExportArgs, Kept, ShowArgs, Shown};
use iosurvey::report::{self, Format};
use iosurvey::store::Store;
use iosurvey::study::hint::{Command as Cmd, Flags};
use iosurvey::study::play::on_lead;
use iosurvey::study::Error;
use iosurvey::study::Study;
use iosurvey::team::Team;
use std::path::Path;
use std::sync::OnceLock;

/// How long the team took to form (MPI_Init, node discovery, clock alignment), nanoseconds.
pub static TEAM_START_NS: OnceLock<u64> = OnceLock::new();

/// Runs the parsed command, its error said now with its command's flags. Only the lead
/// process says it: the others reach the same verdict, or learned it from the lead.
pub fn dispatch<T: Team>(cli: &Cli, team: &T) -> Result<(), Error> {
    let result = match ended(cli, team) {
        Err(e) if team.process() == 0 => Err(super::closing(e, &flags_of(&cli.command))),
        Err(e) => Err(Error::silent(e.kind)),
        Ok(()) => Ok(()),
    };
    // Nobody exits before the lead has said why: a launcher ends the whole job as soon as one
    // process exits with an error, and would cut the lead's line off.
    if team.processes() > 1 {
        team.share(vec![0]);
    }
    result
}

/// The command whose flags spell the hints of `command`'s errors: `meta` has `--items` where
/// `run` has `--block`.
fn flags_of(command: &Command) -> Flags {
    Flags(match command {
        Command::Run(_) => Cmd::Run,
        Command::Meta(_) => Cmd::Meta,
        Command::Survey(_) => Cmd::Survey,
        Command::Matrix(_) => Cmd::Matrix,
        Command::Io500(_) => Cmd::Io500,
        Command::Targets(_) => Cmd::Targets,
        _ => Cmd::Other,
    })
}

/// The study a measuring command is; `None` for the other commands.
fn study(command: &Command) -> Result<Option<Study>, Error> {
    Ok(Some(match command {
        Command::Run(a) => Study::Run(a.clone()),
        // Played as the run it is, printed as run prints.
        Command::Meta(a) => Study::Run(Box::new(a.to_run()?)),
        Command::Survey(a) => Study::Survey(a.clone()),
        Command::Matrix(a) => Study::Matrix(a.clone()),
        Command::Io500(a) => Study::Io500(a.clone()),
        Command::Targets(a) => Study::Targets(a.clone()),
        Command::Net(a) => Study::Net(a.clone()),
        Command::Train(a) => Study::Train(a.clone()),
        Command::Checkpoint(a) => Study::Checkpoint(a.clone()),
        _ => return Ok(None),
    }))
}

/// Runs the parsed command.
fn ended<T: Team>(cli: &Cli, team: &T) -> Result<(), Error> {
    if let Some(study) = study(&cli.command)? {
        return super::studies::play(cli, &study, team);
    }
    match &cli.command {
        Command::Campaign(c) => super::campaign::command(cli, c, team),
        Command::Show(ShowArgs { id: Shown::Campaign(n), json: false, .. }) => {
            super::campaign::status(cli, &format!("c{n}"), None, team)
        }
        Command::Report(a) => match (&a.output, &a.campaign) {
            (Some(output), Some(which)) => lead_prints(team, || {
                super::campaign::report(cli, which, (output, a.format, a.units), a.reference.as_deref(), team)
            }),
            _ => keeping(cli, team),
        },
        _ => keeping(cli, team),
    }
}

/// The commands that read the store, and the others that measure nothing.
fn keeping<T: Team>(cli: &Cli, team: &T) -> Result<(), Error> {
    let db = &cli.db;
    match &cli.command {
        Command::Ls(a) => lead_prints(team, || {
            let kept = read(db, |store| stored::ls(store, a))?;
            Ok(render(kept, (a.format, a.wide)))
        }),
        Command::Show(a) => lead_prints(team, || {
            let kept = read(db, |store| stored::show(store, a.id, a.json))?;
            // Wide: a run in full is read whole, as it always was.
            Ok(render(kept, (a.format, true)))
        }),
        Command::Report(a) => lead_prints(team, || match (&a.output, a.reference.as_deref()) {
            (_, Some("list")) => Ok(render(Kept::Report(analysis::reference::systems()), (Format::Text, true))),
            (Some(output), _) => report(db, output, a),
            (None, _) => Err(Error::refused("report needs -o FILE", "give -o report.html")),
        }),
        Command::Compare(a) => lead_prints(team, || {
            let report = read(db, |store| stored::compare(store, &a.sides))?;
            Ok(render(Kept::Report(report), (a.format, a.wide)))
        }),
        Command::Export(a) => lead_prints(team, || export(db, a)),
        Command::Import(args) => lead_prints(team, || super::import::import(db, args)),
        Command::Overhead => lead_prints(team, || Ok(iosurvey::engine::overhead::report())),
        Command::Engines { json, all } => lead_prints(team, || stored::engines(*json, *all)),
        Command::TeamTiming { rounds } => {
            let timing = iosurvey::team::timing::measure(team, *rounds, TEAM_START_NS.get().copied().unwrap_or(0));
            lead_prints(team, || {
                let line = serde_json::to_string(&timing).map_err(|e| Error::failed(e, "report this as a bug"))?;
                Ok(format!("{}\n", iosurvey::escape::json(line)))
            })
        }
        // The studies are played above, the campaigns and imports too; the others are served
        // before the team starts (see cli::main).
        _ => Ok(()),
    }
}

/// What `f` reads of the store at `db`, then one warning line for each row a reader of many
/// left out, unreadable: the others are still listed, reported or exported.
fn read<X>(db: &Path, f: impl FnOnce(&Store) -> Result<X, Error>) -> Result<X, Error> {
    let store = Store::open_existing(db)?;
    let read = f(&store);
    for (what, why) in store.unreadable() {
        say!("iosurvey: warning: {what} in the store cannot be read ({why}); it is left out (hint: it was altered outside iosurvey; 'iosurvey merge' refuses such rows)");
    }
    read
}

/// What a command read laid out in `format`: a text table fitted to the terminal unless
/// `wide`; the machine formats, and JSON documents, always whole.
fn render(kept: Kept, (format, wide): (Format, bool)) -> String {
    match (kept, format, wide) {
        (Kept::Json(text), _, _) => text,
        (Kept::Report(r), Format::Text, false) => report::text_within(&r, super::width::columns()),
        (Kept::Report(r), format, _) => report::exporter(format).render(&r),
    }
}

/// `iosurvey report`: the chosen runs (every one by default) as one HTML page, or Markdown.
fn report(db: &Path, output: &Path, a: &ReportArgs) -> Result<String, Error> {
    iosurvey::report::chosen::check(a)?;
    super::output::check(output, db, "-o")?;
    let (blocks, counted) = read(db, |store| iosurvey::report::chosen::blocks(store, db, a))?;
    write_report(db, (output, a.format), &blocks, &counted)
}

/// Writes a report's blocks to `output` (see `iosurvey::report::output::report`).
pub(super) fn write_report(
    db: &Path,
    to: (&Path, Format),
    blocks: &[report::paper::Block],
    counted: &str,
) -> Result<String, Error> {
    report::output::report(db, to, blocks, counted, &super::process::PENDING)
}

/// `export`: the runs named (every one when none is), as CSV or IOR's JSON, printed or
/// written to `-o`.
fn export(db: &Path, a: &ExportArgs) -> Result<String, Error> {
    if let Some(path) = &a.output {
        super::output::check(path, db, "-o")?;
    }
    let text = read(db, |store| stored::export(store, &a.ids, a.format))?;
    match &a.output {
        Some(path) => {
            super::output::write(path, text.as_bytes(), db, "-o")?;
            Ok(String::new())
        }
        None => Ok(text),
    }
}

fn lead_prints<T: Team>(team: &T, f: impl FnOnce() -> Result<String, Error>) -> Result<(), Error> {
    if let Some(text) = on_lead(team, f)? {
        out!("{text}");
    }
    Ok(())
}
