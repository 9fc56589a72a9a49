//! The `[batch]` table: what a site's batch system needs and only the site can say
//! (partition, account, launcher, modules) must be given, even as "" or [] for none, so that
//! no script guesses it; the rest has a stated default. Each value lands in a script: a
//! directive takes one word, and no value may hold a line's end (a line of its own would be
//! a command, and end the directives).

use super::{FileError, Item, Reader, Value};
use crate::campaign::form::{self, BatchForm};
use crate::campaign::Batch;
use toml::Spanned;

const WHAT: &str = "[batch]";

impl Reader<'_> {
    /// `[batch]`, for `campaign emit`.
    pub(super) fn batch(&self, b: &Spanned<BatchForm>) -> Result<Batch, FileError> {
        let (at, f) = (self.line(b.span().start), b.get_ref());
        let launcher = self.site(&f.launcher, "launcher", at)?;
        let launcher = self.one_line(&launcher, "launcher")?;
        if launcher.trim().is_empty() {
            return Err(self.at(
                self.get(&f.launcher).map(|v| v.line),
                format!("{WHAT} launcher is empty: the jobs need a command that starts their ranks"),
                "give launcher = \"srun\" (or \"mpirun\", with its options)",
            ));
        }
        let partition = self.word(&self.site(&f.partition, "partition", at)?, "partition")?;
        let account = self.word(&self.site(&f.account, "account", at)?, "account")?;
        let modules = self.site_lines(&f.modules, "modules", Some(at))?;
        let setup = self.site_lines(&f.setup, "setup", None)?;
        Ok(Batch {
            partition,
            account,
            launcher,
            modules: modules
                .iter()
                .map(|m| self.word(&self.with(m, &f.modules), "modules"))
                .collect::<Result<_, _>>()?,
            setup: setup.iter().map(|l| self.one_line(&self.with(l, &f.setup), "setup")).collect::<Result<_, _>>()?,
            tasks_per_node: match self.get(&f.tasks_per_node) {
                Some(v) => self.count(&v, &format!("{WHAT} tasks-per-node"), 1, 4096)? as usize,
                None => 1,
            },
            nodes: self
                .get(&f.nodes)
                .map(|v| self.count(&v, &format!("{WHAT} nodes"), 1, 100_000))
                .transpose()?
                .map(|n| n as usize),
            margin: self.get(&f.margin).map(|v| self.margin(&v)).transpose()?.unwrap_or(1.5),
            point_secs: self.get(&f.point_time).map(|v| self.point_time(&v)).transpose()?,
            iosurvey: self.get(&f.iosurvey).map(|v| self.iosurvey(&v)).transpose()?,
        })
    }

    /// A string only the site can choose, given (`[batch]` begins at `at`).
    fn site(&self, v: &form::Item, key: &str, at: usize) -> Result<Item, FileError> {
        let v = self.get(v).ok_or_else(|| {
            self.at(
                Some(at),
                format!("{WHAT} has no {key}, which only the site can choose"),
                &format!("give {key} = \"...\" (\"\" for the site's default)"),
            )
        })?;
        let text = self.string(&v, &format!("{WHAT} {key}"))?;
        Ok(Item { value: Value::Str(text), line: v.line })
    }

    /// A list of strings (or one), which must be given when `needed` names where `[batch]`
    /// begins.
    fn site_lines(&self, v: &form::Item, key: &str, needed: Option<usize>) -> Result<Vec<String>, FileError> {
        let what = format!("{WHAT} {key}");
        match self.get(v) {
            Some(Item { value: Value::List(items), line }) => {
                items.into_iter().map(|value| self.string(&Item { value, line }, &what)).collect()
            }
            Some(v) => Ok(vec![self.string(&v, &what)?]),
            None => match needed {
                Some(at) => Err(self.at(
                    Some(at),
                    format!("{WHAT} has no {key}, which only the site can choose"),
                    &format!("give {key} = [\"...\"] ([] for none)"),
                )),
                None => Ok(Vec::new()),
            },
        }
    }

    /// `text` at the line of `v`.
    fn with(&self, text: &str, v: &form::Item) -> Item {
        Item { value: Value::Str(text.to_string()), line: self.get(v).map_or(0, |v| v.line) }
    }

    /// A name a batch directive takes as one word.
    fn word(&self, v: &Item, key: &str) -> Result<String, FileError> {
        let text = self.string(v, &format!("{WHAT} {key}"))?;
        match text.chars().find(|c| !(c.is_ascii_alphanumeric() || "_.,:+@/-".contains(*c))) {
            Some(c) => Err(self.at(
                Some(v.line),
                format!(
                    "{WHAT} {key} '{}' holds {c:?}, which a batch directive cannot take",
                    crate::escape::visible(&text)
                ),
                "give the name as the batch system knows it: letters, digits and _.,:+@/-",
            )),
            None => Ok(text),
        }
    }

    /// A value that stays one line of the script.
    fn one_line(&self, v: &Item, key: &str) -> Result<String, FileError> {
        let text = self.string(v, &format!("{WHAT} {key}"))?;
        if text.chars().any(char::is_control) {
            return Err(self.at(
                Some(v.line),
                format!("{WHAT} {key} holds a control character (a line's end), which would split the script's line"),
                &format!("give {key} as one line"),
            ));
        }
        Ok(text)
    }

    /// The factor of the time limit over the estimate.
    fn margin(&self, v: &Item) -> Result<f64, FileError> {
        match v.value {
            Value::Float(x) if (1.0..=100.0).contains(&x) => Ok(x),
            Value::Int(n) if (1..=100).contains(&n) => Ok(n as f64),
            _ => Err(self.at(
                Some(v.line),
                format!("{WHAT} margin is a factor from 1 to 100, not {}", v.value.as_arg()),
                "give margin = 1.5 (the estimate times 1.5)",
            )),
        }
    }

    /// The estimate of a point no stored run estimates, in seconds.
    fn point_time(&self, v: &Item) -> Result<f64, FileError> {
        let text = self.string(v, &format!("{WHAT} point-time"))?;
        let ns = crate::units::parse_long_duration(&text)
            .and_then(|ns| if ns > 0 { Ok(ns) } else { Err("no time".into()) })
            .map_err(|why| {
                self.at(Some(v.line), format!("{WHAT} point-time '{text}': {why}"), "give point-time = \"10m\"")
            })?;
        Ok(ns as f64 / 1e9)
    }

    /// The iosurvey the jobs run.
    fn iosurvey(&self, v: &Item) -> Result<String, FileError> {
        let text = self.one_line(v, "iosurvey")?;
        if text.trim().is_empty() {
            return Err(self.at(
                Some(v.line),
                format!("{WHAT} iosurvey is empty"),
                "give the path of iosurvey on the compute nodes, or leave the key out",
            ));
        }
        Ok(text)
    }
}
