//! The one error a study gives: what went wrong, a typed hint, and a kind that decides the
//! exit code. The hint stays typed until it is said, and is said through a [`Spelling`] the
//! caller passes in: the command line's flags, a campaign file's keys, or a front end's own
//! options spell the same hint, so that nothing said is ever parsed back.

use crate::spec::Hint;

/// What kind of failure an error is: its exit code is [`Kind::exit_code`], the one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad input or a refused target, found before any byte is written.
    Refused,
    /// The work started and failed (an I/O error); what ran is stored, marked failed.
    Failed,
    /// Data verification found bad, stale or missing data.
    Mismatch,
    /// The result store cannot be opened or written.
    Store,
    /// Stopped by a signal.
    Interrupted,
    /// iosurvey's own fault (a bug): said as such.
    Internal,
}

/// Kind and exit code, both ways (README.md, "Exit codes").
const EXIT_CODES: [(Kind, i32); 6] = [
    (Kind::Failed, 1),
    (Kind::Refused, 2),
    (Kind::Mismatch, 3),
    (Kind::Store, 4),
    (Kind::Interrupted, 130),
    // A bug ends the command as a failure does: the code scripts already know.
    (Kind::Internal, 1),
];

impl Kind {
    /// The documented exit code of this kind.
    pub fn exit_code(self) -> i32 {
        EXIT_CODES.iter().find(|(k, _)| *k == self).map_or(1, |(_, code)| *code)
    }

    /// The kind an exit code documents (the first kind of a code two share); an unknown code
    /// is a failure.
    pub fn of_exit_code(code: i32) -> Kind {
        EXIT_CODES.iter().find(|(_, c)| *c == code).map_or(Kind::Failed, |(k, _)| *k)
    }
}

/// How a hint names settings: with a command's flags, a campaign file's keys, a front end's
/// options. Passed to whoever says the error, never held in a global.
pub trait Spelling {
    /// The hint in words, its settings named this way.
    fn spell(&self, hint: &Hint) -> String;
}

/// A hint's words as they are: for hints that name no setting.
pub struct Plain;

impl Spelling for Plain {
    fn spell(&self, hint: &Hint) -> String {
        super::hint::spell_for(hint, super::hint::Command::Other)
    }
}

/// A study's error: its kind, and the words the lead process says (none on a process that
/// follows its lead: the lead speaks for the team).
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// The kind, which decides the exit code.
    pub kind: Kind,
    /// What went wrong and what to do, unless another process says it.
    pub said: Option<Said>,
}

/// An error's words: what went wrong, then the typed hint.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    /// What went wrong, and why.
    pub what: String,
    /// What to do about it.
    pub hint: Hint,
}

impl Error {
    /// An error with its words.
    pub fn new(kind: Kind, what: impl std::fmt::Display, hint: Hint) -> Self {
        Error { kind, said: Some(Said { what: what.to_string(), hint }) }
    }

    /// A refusal whose hint names no setting.
    pub fn refused(what: impl std::fmt::Display, hint: impl std::fmt::Display) -> Self {
        Error::new(Kind::Refused, what, Hint::Say(hint.to_string()))
    }

    /// A failure of the work (exit 1) whose hint names no setting.
    pub fn failed(what: impl std::fmt::Display, hint: impl std::fmt::Display) -> Self {
        Error::new(Kind::Failed, what, Hint::Say(hint.to_string()))
    }

    /// An error another process says: this one ends with its code, silent.
    pub fn silent(kind: Kind) -> Self {
        Error { kind, said: None }
    }

    /// The exit code.
    pub fn exit_code(&self) -> i32 {
        self.kind.exit_code()
    }

    /// The error as one line, `WHAT (hint: HINT)`, its hint spelled by `spelling`; `None`
    /// when another process says it.
    pub fn line(&self, spelling: &dyn Spelling) -> Option<String> {
        self.said.as_ref().map(|s| format!("{} (hint: {})", s.what, spelling.spell(&s.hint)))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line(&Plain) {
            Some(line) => f.write_str(&line),
            None => write!(f, "stopped with exit code {} (its lead process says why)", self.exit_code()),
        }
    }
}

impl std::error::Error for Error {}

impl From<crate::runner::RunError> for Error {
    fn from(e: crate::runner::RunError) -> Self {
        let kind = Kind::of_exit_code(e.exit_code());
        match e {
            crate::runner::RunError::Peer { .. } => Error::silent(kind),
            e => Error::new(kind, &e, e.hint()),
        }
    }
}

impl From<crate::spec::SpecError> for Error {
    fn from(e: crate::spec::SpecError) -> Self {
        Error::new(Kind::Refused, &e, e.hint())
    }
}

impl From<crate::store::StoreError> for Error {
    fn from(e: crate::store::StoreError) -> Self {
        Error::new(Kind::of_exit_code(e.exit_code()), &e, e.hint())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_documented_exit_code_and_back() {
        for (kind, code) in [(Kind::Refused, 2), (Kind::Failed, 1), (Kind::Mismatch, 3), (Kind::Store, 4)] {
            assert_eq!(kind.exit_code(), code);
            assert_eq!(Kind::of_exit_code(code), kind);
        }
        assert_eq!(Kind::Interrupted.exit_code(), 130);
        assert_eq!(Kind::of_exit_code(130), Kind::Interrupted);
        assert_eq!(Kind::of_exit_code(77), Kind::Failed);
    }

    #[test]
    fn a_line_is_said_with_the_spelling_given() {
        let e = Error::new(Kind::Refused, "too large", Hint::Lower(vec![crate::spec::Setting::Block]));
        let flags = super::super::hint::Flags(super::super::hint::Command::Run);
        assert_eq!(e.line(&flags).as_deref(), Some("too large (hint: lower --block)"));
        assert_eq!(Error::silent(Kind::Failed).line(&flags), None);
    }
}
