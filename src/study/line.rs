//! A study from its command's words, read as the command line reads them: how a front end's
//! native command (`run --dir X --transfer 1m ...`) becomes the study it means. The command
//! line and the front ends share what the reading decides: `--engine` read by the engine
//! registry, and a device read unless the phases are typed.

use super::{
    CheckpointArgs, Io500Args, MatrixArgs, MetaArgs, NetArgs, RunArgs, Study, SurveyArgs, TargetsArgs, TrainArgs,
};
use std::path::PathBuf;

/// A measuring command's words, with the store they name.
#[derive(clap::Parser)]
#[command(name = "iosurvey", no_binary_name = true)]
struct Line {
    #[command(subcommand)]
    study: Words,
    /// The store: named on the command's line, opened by whoever plays the study.
    #[arg(long, global = true)]
    db: Option<PathBuf>,
}

/// The measuring commands, by the name each is typed with.
#[derive(clap::Subcommand)]
enum Words {
    Run(Box<RunArgs>),
    Meta(Box<MetaArgs>),
    Matrix(Box<MatrixArgs>),
    Survey(SurveyArgs),
    Io500(Io500Args),
    Targets(Box<TargetsArgs>),
    Net(NetArgs),
    Train(Box<TrainArgs>),
    Checkpoint(Box<CheckpointArgs>),
}

/// `cli` with the `--engine` of each of its commands that has one read and checked by the
/// engine registry as it is parsed (so that a name it does not know ends the command before
/// anything is made), its help listing the registry's engines. The workload that declares
/// the flag sits below the engine room, so the registry is brought in here.
pub fn with_engines(mut cli: clap::Command) -> clap::Command {
    let with_engine: Vec<String> = cli
        .get_subcommands()
        .filter(|c| c.get_arguments().any(|a| a.get_id() == "engine"))
        .map(|c| c.get_name().to_string())
        .collect();
    let help = format!(
        "I/O interface: {} ('iosurvey engines --all' says what each is and whether this machine allows it)",
        crate::engine::backends::choices()
    );
    let depth = format!("Transfers each task keeps in flight ({})", crate::engine::backends::queueing());
    for name in with_engine {
        cli = cli.mut_subcommand(name, |c| {
            c.mut_arg("engine", |a| a.value_parser(super::common::engine_arg).help(help.clone()))
                .mut_arg("iodepth", |a| a.help(depth.clone()))
        });
    }
    cli
}

/// On a device (no `--dir`), the phases default to a read, the only thing a device allows
/// without a further word, unless `--op` was typed: `sub` is the command's own matches.
pub fn device_reads(sub: Option<&clap::ArgMatches>, dir: bool, ops: &mut Vec<crate::spec::Op>) {
    let typed = sub.and_then(|s| s.value_source("ops")) == Some(clap::parser::ValueSource::CommandLine);
    if !dir && !typed {
        *ops = vec![crate::spec::Op::Read];
    }
}

thread_local! {
    // The commands' declarations, built once per thread: building them takes a millisecond,
    // which per target of a campaign of thousands was most of the time of its plan.
    static DECLARED: std::cell::RefCell<clap::Command> = std::cell::RefCell::new({
        use clap::CommandFactory;
        with_engines(Line::command())
    });
}

/// `f` of the declarations of the measuring command `name` (its flags, as typed).
pub fn declared<X>(name: &str, f: impl FnOnce(&clap::Command) -> X) -> Option<X> {
    DECLARED.with(|c| c.borrow().find_subcommand(name).map(f))
}

/// Reads a measuring command's words (its name first, no program name) into the study they
/// mean, and the store they name, if any.
pub fn parse(words: &[String]) -> Result<(Study, Option<PathBuf>), clap::Error> {
    use clap::FromArgMatches;
    let m = DECLARED.with(|c| c.borrow_mut().try_get_matches_from_mut(words))?;
    let line = Line::from_arg_matches(&m)?;
    let study = match line.study {
        Words::Run(mut a) => {
            device_reads(m.subcommand_matches("run"), a.dir.is_some() || a.s3.is_some(), &mut a.workload.ops);
            Study::Run(a)
        }
        Words::Targets(mut a) => {
            device_reads(m.subcommand_matches("targets"), a.dir.is_some(), &mut a.workload.ops);
            Study::Targets(a)
        }
        Words::Meta(a) => Study::Meta(a),
        Words::Matrix(a) => Study::Matrix(a),
        Words::Survey(a) => Study::Survey(a),
        Words::Io500(a) => Study::Io500(a),
        Words::Net(a) => Study::Net(a),
        Words::Train(a) => Study::Train(a),
        Words::Checkpoint(a) => Study::Checkpoint(a),
    };
    Ok((study, line.db))
}

/// clap's message, with the value it names as typed, control characters made visible: clap's
/// own text leaves a value's escape sequences out (`show $'\e[31m1'` would name '1', a valid
/// id).
pub fn clap_text(e: &clap::Error) -> String {
    let text = e.to_string();
    match e.get(clap::error::ContextKind::InvalidValue) {
        Some(clap::error::ContextValue::String(typed)) if typed.chars().any(char::is_control) => {
            let stripped = clap::builder::StyledStr::from(typed.clone()).to_string();
            text.replace(&format!("'{stripped}'"), &format!("'{}'", crate::escape::visible(typed)))
        }
        _ => text,
    }
}

/// What a value's own parser refused, with its hint still typed: clap keeps the parser's error
/// as its source, so it is read there, never from clap's text. A size is refused by the units'
/// own error, its hint fixed. None for clap's own errors and a parser that gives no hint.
pub fn refusal(e: &clap::Error) -> Option<super::hint::Refusal> {
    let source = std::error::Error::source(e)?;
    if let Some(r) = source.downcast_ref::<super::hint::Refusal>() {
        return Some(r.clone());
    }
    let size = source.downcast_ref::<crate::units::SizeError>()?;
    Some(super::hint::Refusal::say(format!("not a size: {}", size.why), crate::units::SizeError::HINT))
}

/// A value its own parser refused, as one line in the command's flags:
/// `invalid value 'V' for 'FLAG': WHAT (hint: HINT)`; None where [`refusal`] finds none.
pub fn refused_line(e: &clap::Error) -> Option<String> {
    use super::hint::{spell_for, Command};
    let r = refusal(e)?;
    let (value, flag) = refused_value(e);
    Some(format!("invalid value '{value}' for '{flag}': {} (hint: {})", r.what, spell_for(&r.hint, Command::Run)))
}

/// The value and the flag of a value its parser refused, as typed (control characters made
/// visible), from clap's context.
pub fn refused_value(e: &clap::Error) -> (String, String) {
    use clap::error::{ContextKind, ContextValue};
    let said = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => crate::escape::visible(s).into_owned(),
        _ => String::new(),
    };
    (said(ContextKind::InvalidValue), said(ContextKind::InvalidArg))
}

/// clap's message as one line: its first line with the lines that name things (the missing
/// arguments, say) folded in, usage and tips left out.
pub fn folded(text: &str) -> String {
    let mut parts = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") || line.starts_with("tip:") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.trim_start_matches("error: "));
        }
    }
    if parts.is_empty() {
        "invalid arguments".to_string()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_commands_words_are_the_study_they_mean_with_the_store_they_name() {
        let (study, db) = parse(&words("run --dir /s/x --transfer 4k --block 8k --engine null --db r.db")).unwrap();
        let Study::Run(a) = study else { panic!("not a run") };
        assert_eq!(a.workload.data().map(|d| (d.transfer, d.block)), Some((4096, 8192)));
        assert_eq!(a.workload.data().map(|d| d.engine.to_string()).as_deref(), Some("null"));
        assert_eq!(db, Some(PathBuf::from("r.db")));
        // A device is read unless the phases are typed.
        let (Study::Run(a), None) = parse(&words("run --device /dev/null")).unwrap() else { panic!("not a run") };
        assert_eq!(a.workload.ops, [crate::spec::Op::Read]);
        let (Study::Matrix(_), _) = parse(&words("matrix --dir /s")).unwrap() else { panic!("not a matrix") };
        // The registry reads --engine as it is parsed.
        let e = parse(&words("run --dir /s/x --engine no-such")).expect_err("refused");
        assert!(folded(&clap_text(&e)).contains("no-such"), "{e}");
    }
}
