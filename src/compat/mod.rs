//! Other tools' command lines (IOR, mdtest, IOzone), read as those tools read them and turned
//! into the iosurvey command they mean: a front end parses, it runs nothing. The command it
//! gives is an ordinary `iosurvey run`, `meta` or `matrix` command line, parsed and played as
//! if typed (as a campaign's point is), so a front end's run is the native run, trace for
//! trace, and can be printed for the user to type (docs/methodology.md, "Other tools' command
//! lines").
//!
//! Each tool's words are its own: a flag the tool has and iosurvey does not take is refused in
//! one line naming the nearest native option; a flag iosurvey takes but measures differently
//! is noted once; a flag the tool does not have is refused as the tool would.

pub mod ior;
pub mod iozone;
pub mod layout;
pub mod line;
pub mod mdtest;

use crate::study::Study;
use std::path::PathBuf;
use thiserror::Error;

/// The tools whose command lines iosurvey takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// IOR.
    Ior,
    /// mdtest.
    Mdtest,
    /// IOzone.
    Iozone,
}

impl Tool {
    /// The tool a program name or first word names (`ior`, `/usr/bin/mdtest`, `iozone`).
    pub fn named(word: &str) -> Option<Tool> {
        match word.rsplit('/').next().unwrap_or(word) {
            "ior" => Some(Tool::Ior),
            "mdtest" => Some(Tool::Mdtest),
            "iozone" => Some(Tool::Iozone),
            _ => None,
        }
    }

    /// The native flags its line is turned into, each with the tool's flag for it: how a
    /// hint about the native command speaks to someone who typed the tool's line. The first
    /// of two tool flags that give one native flag is the one named.
    pub fn spelling(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Tool::Ior => &[
                ("--dir", "-o"),
                ("--op", "-w and -r"),
                ("--access", "-F"),
                ("--transfer", "-t"),
                ("--block", "-b"),
                ("--segments", "-s"),
                ("--iterations", "-i"),
                ("--pattern", "-z"),
                ("--stonewall", "-D"),
                ("--wear-out", "-O stoneWallingWearOut=1"),
                ("--signature", "-G"),
                ("--seed", "--random-offset-seed"),
                ("--clients", "-N"),
                ("--fsync", "-e"),
                ("--fsync-each", "-Y"),
                ("--direct", "--posix.odirect"),
                ("--reorder", "-C"),
                ("--verify", "-R"),
                ("--keep", "-k"),
                ("--json", "-O summaryFile"),
            ],
            Tool::Mdtest => &[
                ("--dir", "-d"),
                ("--items", "-n"),
                ("--items-per-dir", "-I"),
                ("--depth", "-z"),
                ("--branch", "-b"),
                ("--leaves-only", "-L"),
                ("--files-only", "-F"),
                ("--dirs-only", "-D"),
                ("--write-bytes", "-w"),
                ("--read-bytes", "-e"),
                ("--shift", "-N"),
                ("--iterations", "-i"),
                ("--stonewall", "-W"),
                ("--verify", "-X"),
                ("--sync", "-Y"),
                ("--phases", "-C, -T, -E or -r"),
            ],
            Tool::Iozone => &[
                ("--dir", "-f"),
                ("--kinds", "-i"),
                ("--min-file", "-n"),
                ("--max-file", "-g"),
                ("--min-record", "-y"),
                ("--max-record", "-q"),
                ("--tasks", "-t"),
                ("--all-records", "-z"),
                ("--include-close", "-c"),
                ("--include-fsync", "-e"),
                ("--keep", "-w"),
                ("--direct", "-I"),
                ("--csv", "-b"),
                ("--stand-in", "--engine"),
            ],
        }
    }

    /// What the front end takes, for `iosurvey TOOL --help`.
    pub fn help(self) -> &'static str {
        match self {
            Tool::Ior => IOR_HELP,
            Tool::Mdtest => MDTEST_HELP,
            Tool::Iozone => IOZONE_HELP,
        }
    }

    /// Its name as typed.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Ior => "ior",
            Tool::Mdtest => "mdtest",
            Tool::Iozone => "iozone",
        }
    }
}

const IOR_HELP: &str = "\
iosurvey ior: IOR's command line, run as the iosurvey run it means, printed in IOR's layout
Usage: iosurvey ior [IOR OPTIONS] [--tasks N] [--engine E] [--label L] [--db PATH] [--no-space-check]
       (or the binary started through a link named ior; under MPI, a task per rank)

IOR options taken: -a POSIX -b -t -s -F -C -Q -Z -X -z -e -Y -D -k -K -E -i -d -w -r -W -R -G
  -o -v -N -c -g -O stoneWallingWearOut=1,summaryFormat=JSON|CSV,summaryFile=PATH
  --posix.odirect --random-offset-seed -f SCRIPT (IOR START ... RUN ... IOR STOP)
iosurvey's own: --tasks N (threads per process), --engine E, --label L, --db PATH,
  --no-space-check
Files are iosurvey's own names in -o's directory; -v prints the native command.
Options IOR has and iosurvey does not take are refused with the nearest native option;
those measured differently are noted once on stderr.
";

const MDTEST_HELP: &str = "\
iosurvey mdtest: mdtest's command line, run as the iosurvey meta it means, printed as mdtest does
Usage: iosurvey mdtest [MDTEST OPTIONS] [--tasks N] [--label L] [--db PATH] [--no-space-check]

mdtest options taken: -n -I -u -d (with @) -z -b -L -F -D -w -e -y -C -T -E -r -N -W -i -X -P
  -Y -B -Z -t -v -V -a POSIX
Without -u the tasks share one directory, as in mdtest.
";

const IOZONE_HELP: &str = "\
iosurvey iozone: IOzone's command line, run as the iosurvey matrix it means, printed as IOzone does
Usage: iosurvey iozone [IOZONE OPTIONS] [--label L] [--db PATH] [--no-space-check]

IOzone options taken: -a -A -z -g -n -y -q -i N (0 to 12) -r -s -t -T -F -c -e -x -w -I -O -+n -+k
  -j -f -R -b FILE (CSV, not a spreadsheet) -+m FILE (a host per thread: under MPI, the
  launch's nodes must be the list's hosts, which it takes round-robin as iosurvey places tasks)
Sizes without a unit are KiB, as in IOzone.
";

/// Why a tool's command line is not run: one line, with what to do.
#[derive(Debug, Error, PartialEq)]
#[error("{tool} {what}")]
pub struct CompatError {
    /// The tool whose words these are.
    pub tool: &'static str,
    /// What is wrong, naming the flag as typed.
    pub what: String,
    /// What to type instead.
    pub hint: String,
}

impl CompatError {
    /// A refusal of `tool`'s line: what is wrong, and what to type instead.
    pub(crate) fn new(tool: &'static str, what: String, hint: &str) -> CompatError {
        CompatError { tool, what, hint: hint.to_string() }
    }
}

/// A command line split at blanks, as the tests type them.
#[cfg(test)]
pub(crate) fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// iosurvey's own options, taken by every front end beside the tool's: a tool launched by MPI
/// has ranks for tasks, and on one machine without MPI threads stand in for them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Own {
    /// Threads per process (`--tasks N`).
    pub tasks: Option<usize>,
    /// The engine (`--engine E`): a test engine, or another interface than the tool's.
    pub engine: Option<String>,
    /// The store (`--db PATH`).
    pub db: Option<String>,
    /// The system measured (`--label NAME`).
    pub label: Option<String>,
    /// No free-space check (`--no-space-check`), which a refusal for space names.
    pub no_space_check: bool,
}

impl Own {
    /// Takes `--NAME VALUE` or `--NAME=VALUE` if it is one of iosurvey's own; else `None`.
    fn take(&mut self, name: &str, value: &mut dyn FnMut() -> Option<String>) -> Option<Result<(), String>> {
        let slot = match name {
            "tasks" => None,
            "engine" => Some(&mut self.engine),
            "db" => Some(&mut self.db),
            "label" => Some(&mut self.label),
            _ => return None,
        };
        let Some(text) = value().filter(|v| !v.is_empty()) else { return Some(Err(format!("--{name} needs a value"))) };
        match slot {
            Some(slot) => *slot = Some(text),
            None => match text.parse::<usize>() {
                Ok(n) if n > 0 => self.tasks = Some(n),
                _ => return Some(Err(format!("--tasks {text} is not a positive whole number"))),
            },
        }
        Some(Ok(()))
    }

    /// These options as the native command line's.
    pub fn args(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut put = |flag: &str, v: &Option<String>| {
            if let Some(v) = v {
                out.extend([flag.to_string(), v.clone()]);
            }
        };
        put("--tasks", &self.tasks.map(|n| n.to_string()));
        put("--label", &self.label);
        put("--db", &self.db);
        if self.no_space_check {
            out.push("--no-space-check".into());
        }
        out
    }
}

/// What a tool's flag is to a parser: whether it takes a value.
pub(crate) struct Flag {
    /// The letters after the dash: "b", "+m", or a long name.
    pub name: &'static str,
    /// Whether a value follows (in the same word or the next).
    pub value: bool,
}

/// One flag as typed, with its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Typed {
    /// As in the table ("b", "+n", "posix.odirect").
    pub name: &'static str,
    /// Its value, if it takes one.
    pub value: Option<String>,
}

impl Typed {
    /// The flag as the user typed it, for messages.
    pub fn shown(&self) -> String {
        let dashes = if self.name.len() > 2 && !self.name.starts_with('+') { "--" } else { "-" };
        match &self.value {
            Some(v) => format!("{dashes}{} {v}", self.name),
            None => format!("{dashes}{}", self.name),
        }
    }
}

/// A command line read against a tool's table of flags: short flags with their value in the
/// same word or the next, flags without values run together (`-wr`), `--long` and
/// `--long=value`, IOzone's `-+x`. iosurvey's own options (`Own`) are taken out on the way.
pub(crate) fn read(
    tool: &'static str,
    args: &[String],
    table: &[Flag],
    own: &mut Own,
) -> Result<Vec<Typed>, CompatError> {
    let refuse = |what: String, hint: &str| CompatError::new(tool, what, hint);
    let help = format!("see 'iosurvey {tool} --help' for the options iosurvey takes");
    let mut out = Vec::new();
    let mut words = args.iter().peekable();
    while let Some(word) = words.next() {
        let find = |name: &str| table.iter().find(|f| f.name == name);
        if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let mut inline_value = inline.clone();
            if name == "no-space-check" && inline.is_none() {
                own.no_space_check = true;
                continue;
            }
            let mut next = || inline_value.take().or_else(|| words.next().cloned());
            if let Some(taken) = own.take(name, &mut next) {
                taken.map_err(|why| refuse(why, "give a value after it"))?;
                continue;
            }
            let Some(flag) = find(name) else {
                return Err(refuse(format!("has no option --{name}"), &help));
            };
            let value = match (flag.value, inline) {
                (true, Some(v)) if !v.is_empty() => Some(v),
                (true, Some(_)) => return Err(refuse(format!("--{name} needs a value"), "give a value after it")),
                (true, None) => Some(
                    words
                        .next()
                        .cloned()
                        .ok_or_else(|| refuse(format!("--{name} needs a value"), "give a value after it"))?,
                ),
                (false, Some(_)) => return Err(refuse(format!("--{name} takes no value"), "give it alone")),
                (false, None) => None,
            };
            out.push(Typed { name: flag.name, value });
            continue;
        }
        let Some(short) = word.strip_prefix('-').filter(|s| !s.is_empty()) else {
            return Err(refuse(
                format!("does not take the word '{word}' (every word is an option or an option's value)"),
                "check the command line for a lost '-' or a value without its option",
            ));
        };
        shorts(tool, short, &mut words, table, &mut out)?;
    }
    Ok(out)
}

/// One word of short flags (`-wr`, `-b1m`, IOzone's `-+m`): switches run together, and the
/// value of the one that takes a value from the rest of the word or the next word.
fn shorts(
    tool: &'static str,
    short: &str,
    words: &mut dyn Iterator<Item = &String>,
    table: &[Flag],
    out: &mut Vec<Typed>,
) -> Result<(), CompatError> {
    let refuse = |what: String, hint: &str| CompatError::new(tool, what, hint);
    let help = format!("see 'iosurvey {tool} --help' for the options iosurvey takes");
    let find = |name: &str| table.iter().find(|f| f.name == name);
    let mut rest = short;
    while !rest.is_empty() {
        let len = if rest.starts_with('+') {
            rest.chars().take(2).map(char::len_utf8).sum()
        } else {
            rest.chars().next().map_or(1, char::len_utf8)
        };
        let name = &rest[..len.min(rest.len())];
        rest = &rest[name.len()..];
        let Some(flag) = find(name) else {
            return Err(refuse(format!("has no option -{name}"), &help));
        };
        if flag.value {
            let value = match rest {
                "" => words
                    .next()
                    .cloned()
                    .ok_or_else(|| refuse(format!("-{name} needs a value"), "give a value after it"))?,
                inline => inline.trim_start_matches('=').to_string(),
            };
            if value.is_empty() {
                return Err(refuse(format!("-{name} needs a value"), "give a value after it"));
            }
            out.push(Typed { name: flag.name, value: Some(value) });
            break;
        }
        out.push(Typed { name: flag.name, value: None });
    }
    Ok(())
}

/// A size as the tools write them: a number with an optional k, m, g or t (powers of two, as
/// IOR, mdtest and IOzone all take them).
pub(crate) fn size(tool: &'static str, flag: &Typed) -> Result<u64, CompatError> {
    let text = flag.value.as_deref().unwrap_or("");
    crate::units::parse_size(text).map_err(|e| CompatError {
        tool,
        what: format!("{}: not a size: {}", flag.shown(), e.why),
        hint: "give a number with an optional k, m, g or t, e.g. 1m".into(),
    })
}

/// A whole number.
pub(crate) fn number<N: std::str::FromStr>(tool: &'static str, flag: &Typed) -> Result<N, CompatError> {
    let text = flag.value.as_deref().unwrap_or("");
    text.trim().parse().map_err(|_| CompatError {
        tool,
        what: format!("{}: '{text}' is not a whole number", flag.shown()),
        hint: "give a whole number".into(),
    })
}

/// A flag the tool has that iosurvey does not take, with the nearest native option.
pub(crate) fn not_taken(tool: &'static str, flag: &Typed, nearest: &str) -> CompatError {
    CompatError {
        tool,
        what: format!("{}: iosurvey does not take this option", flag.shown()),
        hint: nearest.to_string(),
    }
}

/// What a front end gives: the studies to play in turn (IOR scripts have several tests), each
/// with the native command line it is (for the user to type), and the notes to say once on
/// stderr.
#[derive(Debug, Clone)]
pub struct Native<S> {
    /// The studies, one per test, in order.
    pub studies: Vec<Study>,
    /// The store the line names (`--db`), if it names one.
    pub store: Option<PathBuf>,
    /// The native command lines, without the program name, one per study.
    pub commands: Vec<Vec<String>>,
    /// What iosurvey measures differently from the tool, said once each.
    pub notes: Vec<String>,
    /// What the output needs that the native run does not keep (the tool's own settings).
    pub settings: S,
}

impl<S> Native<S> {
    /// The front end's native command lines, read into the studies they mean as the command
    /// line reads them (`study::line`): what the front end plays is the native study itself.
    pub(crate) fn read(
        tool: &'static str,
        commands: Vec<Vec<String>>,
        notes: Vec<String>,
        settings: S,
    ) -> Result<Self, CompatError> {
        let mut studies = Vec::new();
        let mut store = None;
        for words in &commands {
            let (study, db) = crate::study::line::parse(words).map_err(|e| {
                let why = crate::study::line::folded(&crate::study::line::clap_text(&e));
                CompatError::new(tool, format!("cannot run as {}: {why}", shell_line(words)), "see its --help")
            })?;
            studies.push(study);
            store = store.or(db);
        }
        Ok(Native { studies, store, commands, notes, settings })
    }
}

/// Adds `note` once.
pub(crate) fn note(notes: &mut Vec<String>, note: String) {
    if !notes.contains(&note) {
        notes.push(note);
    }
}

/// A native command line as one line a user can type.
pub fn shell_line(words: &[String]) -> String {
    format!("iosurvey {}", crate::shell::words(words))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Flag] = &[
        Flag { name: "b", value: true },
        Flag { name: "w", value: false },
        Flag { name: "r", value: false },
        Flag { name: "+n", value: false },
        Flag { name: "+m", value: true },
        Flag { name: "posix.odirect", value: false },
    ];

    fn names(line: &str) -> Result<Vec<(String, Option<String>)>, CompatError> {
        let mut own = Own::default();
        Ok(read("t", &words(line), TABLE, &mut own)?.into_iter().map(|t| (t.name.to_string(), t.value)).collect())
    }

    #[test]
    fn values_attach_or_follow_and_valueless_flags_run_together() {
        let got = names("-b 1m -b2m -wr -+n -+m list --posix.odirect").unwrap();
        let want = [
            ("b", Some("1m")),
            ("b", Some("2m")),
            ("w", None),
            ("r", None),
            ("+n", None),
            ("+m", Some("list")),
            ("posix.odirect", None),
        ];
        assert_eq!(got, want.map(|(n, v)| (n.to_string(), v.map(String::from))).to_vec());
    }

    #[test]
    fn a_flag_the_tool_lacks_a_stray_word_and_a_missing_value_are_each_one_refusal() {
        assert!(names("-q").unwrap_err().what.contains("no option -q"));
        assert!(names("-w s 1").unwrap_err().what.contains("'s'"));
        assert!(names("-b").unwrap_err().what.contains("needs a value"));
        assert!(names("--nope").unwrap_err().what.contains("--nope"));
        assert!(names("--posix.odirect=1").unwrap_err().what.contains("takes no value"));
        // Found by fuzzing: an empty value after '=' was taken, and became an empty file name.
        assert!(names("-b=").unwrap_err().what.contains("needs a value"));
        assert!(names("-+m=").unwrap_err().what.contains("needs a value"));
    }

    #[test]
    fn iosurveys_own_options_are_taken_out_of_any_tool_line() {
        let mut own = Own::default();
        let line = words("-w --tasks 4 --engine=null --db x.db --no-space-check --label lab -r");
        let got = read("t", &line, TABLE, &mut own).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            own,
            Own {
                tasks: Some(4),
                engine: Some("null".into()),
                db: Some("x.db".into()),
                label: Some("lab".into()),
                no_space_check: true
            }
        );
        assert!(read("t", &words("--tasks 0"), TABLE, &mut Own::default()).is_err());
        // Found by fuzzing: an empty store path was taken.
        assert!(read("t", &words("--db="), TABLE, &mut Own::default()).is_err());
    }

    #[test]
    fn a_shell_line_quotes_what_the_shell_would_split() {
        assert_eq!(shell_line(&words("run --dir /a/b")), "iosurvey run --dir /a/b");
        assert_eq!(shell_line(&["run".into(), "a b".into(), "it's".into()]), r"iosurvey run 'a b' 'it'\''s'");
    }
}
