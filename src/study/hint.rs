//! A hint's settings named as the user names them: a command's flags (`meta` has `--items`
//! where `run` has `--block`), or, respelled flag by flag, a campaign file's keys or a front
//! end's options. The spelling is a value handed to whoever says the error.

use super::error::Spelling;
use crate::spec::{Hint, Setting};

/// The command typed, whose flags spell the hints: `meta` has `--items` where `run` has
/// `--block`, and a survey's stonewall is its `--random-secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `run`.
    Run,
    /// `meta`.
    Meta,
    /// `survey`.
    Survey,
    /// `matrix`.
    Matrix,
    /// `io500`.
    Io500,
    /// `targets`: run's flags, but --size for the bytes of each target.
    Targets,
    /// Commands that run no workload (ls, show, report, ...): they name the store only.
    Other,
}

/// `text` with each whole `--flag` that `pairs` names replaced by its spelling.
pub fn respell(text: &str, pairs: &[(String, String)]) -> String {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let starts_word = rest[..at].chars().next_back().is_none_or(|c| !word(c));
        let end = rest[at + 2..].find(|c: char| !word(c)).map_or(rest.len(), |n| at + 2 + n);
        let flag = &rest[at..end];
        out.push_str(&rest[..at]);
        match pairs.iter().find(|(native, _)| native == flag).filter(|_| starts_word) {
            Some((_, spelled)) => out.push_str(spelled),
            None => out.push_str(flag),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The flag of a setting on `cmd`'s command line; `None` where it has none.
fn flag(s: Setting, cmd: Command) -> Option<&'static str> {
    use Command::*;
    use Setting::*;
    Some(match (s, cmd) {
        (Dir, Survey) => return None,
        (Dir, _) => "--dir",
        (Force, _) => "--force",
        (Keep, _) => "--keep",
        (NoSpaceCheck, _) => "--no-space-check",
        (Db, _) => "--db",
        (Tasks, Targets) => "--streams",
        (Tasks, _) => "--tasks",
        (Stonewall, Run | Meta | Io500 | Targets | Other) => "--stonewall",
        (Stonewall, Survey) => "--random-secs",
        (Iterations, Run | Meta | Targets | Other) => "--iterations",
        (Verify, Run | Meta | Targets | Other) => "--verify",
        (Interval, Run | Meta | Targets | Other) => "--interval",
        (Ops, Meta) => "--phases",
        (Items, Meta) => "--items",
        (Tree, Meta) => "--depth and --branch",
        (ItemBytes, Meta) => "--write-bytes and --read-bytes",
        (Block | Total, Survey | Targets) => "--size",
        (Block | Total, Matrix) => "--max-file",
        (Transfer, Matrix) => "--max-record",
        (Direct, Matrix) => "--direct",
        (Fsync, Matrix) => "--include-fsync",
        (_, Meta | Survey | Matrix | Io500) => return None,
        (Transfer, _) => "--transfer",
        (Block, _) => "--block",
        (Segments, _) => "--segments",
        (Total, _) => "--total",
        (Ops, _) => "--op",
        (Pattern, _) => "--pattern",
        (Iodepth, _) => "--iodepth",
        (Engine, _) => "--engine",
        (Fsync, _) => "--fsync and --fsync-each",
        (Direct, _) => "--direct",
        (Items | Tree | ItemBytes, _) => return None,
    })
}

/// A setting in words, for a command that has no flag for it (its own workload fixes it).
fn words(s: Setting) -> String {
    format!("the {}", format!("{s:?}").to_lowercase())
}

/// A hint in words, with `cmd`'s flags.
pub fn spell_for(h: &Hint, cmd: Command) -> String {
    let named = |s: Setting| flag(s, cmd).map_or_else(|| words(s), str::to_string);
    match h {
        Hint::Say(text) => text.clone(),
        Hint::Because(why, what) => format!("{} {why}", spell_for(what, cmd)),
        // A value ("9216") is used; a description ("an empty directory") is given.
        Hint::Use(s, v) if v.contains(' ') => format!("give {} {v}", named(*s)),
        Hint::Use(s, v) => format!("use {} {v}", named(*s)),
        Hint::AtLeast(s, v) => format!("give {} at least {v}", named(*s)),
        Hint::AtMost(s, v) => format!("give {} at most {v}", named(*s)),
        Hint::MultipleOf(s, v) => format!("give {} a multiple of {v}", named(*s)),
        // A list setting takes the value in; any other takes it as its argument.
        Hint::Add(Setting::Ops, Some(v)) => format!("add {v} to {}", named(Setting::Ops)),
        Hint::Add(s, Some(v)) => format!("add {} {v}", named(*s)),
        Hint::Add(s, None) => format!("add {}", named(*s)),
        Hint::Drop(s) => format!("drop {}", named(*s)),
        Hint::Lower(list) => {
            // Only the settings this command has: the others are another command's.
            let mut flags: Vec<&str> = list.iter().filter_map(|s| flag(*s, cmd)).collect();
            flags.dedup();
            match flags.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("lower {} or {last}", rest.join(", ")),
                Some((only, _)) => format!("lower {only}"),
                None => "ask for less".into(),
            }
        }
        Hint::Either(a, b) => format!("{} or {}", spell_for(a, cmd), spell_for(b, cmd)),
    }
}

/// A value a flag's own parser refused, its hint kept typed: clap says it in the command's
/// flags, and whoever reads the same words from elsewhere (a campaign file) finds it as the
/// error's source and says the hint in its own spelling, never parsing the text back.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// What is wrong with the value.
    pub what: String,
    /// What would do.
    pub hint: Hint,
}

impl Refusal {
    /// A refusal whose hint is `hint`'s words.
    pub fn say(what: impl Into<String>, hint: impl Into<String>) -> Refusal {
        Refusal { what: what.into(), hint: Hint::Say(hint.into()) }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (hint: {})", self.what, spell_for(&self.hint, Command::Run))
    }
}

impl std::error::Error for Refusal {}

/// A command's flags.
#[derive(Debug, Clone, Copy)]
pub struct Flags(pub Command);

impl Spelling for Flags {
    fn spell(&self, hint: &Hint) -> String {
        spell_for(hint, self.0)
    }
}

/// Another spelling's words with each `--flag` that `pairs` names replaced by the user's
/// spelling of it: `(flag, spelling)` pairs, as a campaign file's keys or a front end's
/// options.
pub struct Respelled<'a> {
    /// The command whose flags the hint names first.
    pub base: &'a dyn Spelling,
    /// The flags as iosurvey spells them, and as the user does.
    pub pairs: &'a [(String, String)],
}

impl Spelling for Respelled<'_> {
    fn spell(&self, hint: &Hint) -> String {
        respell(&self.base.spell(hint), self.pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spell(h: &Hint) -> String {
        spell_for(h, Command::Run)
    }

    #[test]
    fn each_command_spells_the_hints_with_its_own_flags() {
        let memory = Hint::Lower(vec![Setting::Iodepth, Setting::Transfer, Setting::ItemBytes, Setting::Tasks]);
        assert_eq!(spell_for(&memory, Command::Run), "lower --iodepth, --transfer or --tasks");
        assert_eq!(spell_for(&memory, Command::Meta), "lower --write-bytes and --read-bytes or --tasks");
        assert_eq!(spell_for(&memory, Command::Survey), "lower --tasks");
        let space = Hint::Lower(vec![Setting::Block, Setting::Total, Setting::Items, Setting::ItemBytes]);
        assert_eq!(spell_for(&space, Command::Meta), "lower --items or --write-bytes and --read-bytes");
        assert_eq!(spell_for(&space, Command::Survey), "lower --size", "block and total are both --size");
        assert_eq!(spell_for(&space, Command::Io500), "ask for less");
        let stonewall = Hint::AtLeast(Setting::Stonewall, "a number of seconds above 0".into());
        assert_eq!(spell_for(&stonewall, Command::Survey), "give --random-secs at least a number of seconds above 0");
        assert_eq!(
            spell_for(&Hint::Use(Setting::Ops, "tree-create".into()), Command::Meta),
            "use --phases tree-create"
        );
        assert_eq!(spell_for(&Hint::Use(Setting::Block, "9216".into()), Command::Meta), "use the block 9216");
    }

    #[test]
    fn a_hint_is_respelled_flag_by_flag_as_the_user_typed_it() {
        let pairs: Vec<(String, String)> =
            [("--items", "-n"), ("--write-bytes", "-w"), ("--read-bytes", "-e"), ("--force", "force = true")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .to_vec();
        assert_eq!(
            respell(" (hint: lower --items or --write-bytes and --read-bytes)", &pairs),
            " (hint: lower -n or -w and -e)"
        );
        assert_eq!(
            respell("add --force; --items-per-dir x--items", &pairs),
            "add force = true; --items-per-dir x--items"
        );
        assert_eq!(respell("--items", &pairs), "-n");
        assert_eq!(respell("no flag - here --", &pairs), "no flag - here --");
    }

    #[test]
    fn hints_are_spelled_with_flags() {
        assert_eq!(spell(&Hint::Use(Setting::Block, "9216".into())), "use --block 9216");
        assert_eq!(spell(&Hint::Use(Setting::Dir, "an empty directory".into())), "give --dir an empty directory");
        assert_eq!(
            spell(&Hint::Lower(vec![Setting::Block, Setting::Segments, Setting::Tasks])),
            "lower --block, --segments or --tasks"
        );
        let either =
            Hint::Either(Box::new(Hint::Add(Setting::Ops, Some("write".into()))), Box::new(Hint::Drop(Setting::Fsync)));
        assert_eq!(spell(&either), "add write to --op or drop --fsync and --fsync-each");
        assert_eq!(spell(&Hint::Add(Setting::Stonewall, Some("SECONDS".into()))), "add --stonewall SECONDS");
    }
}
