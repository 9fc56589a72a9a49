//! The campaign file (TOML) read into a [`Campaign`] through serde ([`super::form`]): its
//! tables refuse keys they do not have, each value keeps its line, and every fault is said
//! as one line with the file, the line, the key and what to write (the nearest key there
//! is, for a misspelt one). A study's settings are checked against its kind's keys here and
//! kept as written, with their lines: its kind's own declarations read them into a study
//! value ([`super::points`]). The references between tables are checked in one place, once
//! the whole file is read ([`Names::check`]).

use super::form::{self, CacheForm, CampaignForm, EventForm, Form, HookForm, HooksForm, StudyForm};
use super::{Campaign, Hook, HookPlace, Hooks, Kind, Order, Setting, Study, Summary, TargetDef};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

mod batch;
#[cfg(test)]
mod tests;

/// What is wrong with a campaign file, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// The line (1 the first), when the fault has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub what: String,
    /// What to do.
    pub hint: String,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = self.line.map_or(String::new(), |l| format!(":{l}"));
        write!(f, "{}{at}: {}", crate::escape::visible(&self.path.display().to_string()), self.what)
    }
}

/// A value as the file wrote it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string.
    Str(String),
    /// A whole number.
    Int(i64),
    /// A number with a point.
    Float(f64),
    /// true or false.
    Bool(bool),
    /// A list of values.
    List(Vec<Value>),
}

impl Value {
    /// The value as a flag's argument: lists joined by commas, as the command line takes them.
    pub fn as_arg(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            Value::Int(n) => n.to_string(),
            Value::Float(x) => x.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::List(items) => items.iter().map(Value::as_arg).collect::<Vec<_>>().join(","),
        }
    }
}

/// Reads the text of a campaign file; every target's directory must exist.
pub fn parse(path: &Path, text: &str) -> Result<Campaign, FileError> {
    read(path, text, Reading::File).map(|s| s.campaign)
}

/// Reads the text of a campaign file as strictly as [`parse`], its targets not looked for:
/// they are placed elsewhere (`--root`) or not reached here.
pub fn parse_unmounted(path: &Path, text: &str) -> Result<Campaign, FileError> {
    read(path, text, Reading::Unmounted).map(|s| s.campaign)
}

/// Reads the text of a campaign as the store kept it, to report or count what it ran: its
/// targets need not be mounted here, and a key this version does not read is skipped and
/// named ([`Stored::skipped`]). The iosurvey that stored it read that key; a later one may
/// have dropped or renamed it, and the runs stored are no less there for that.
pub fn parse_stored(path: &Path, text: &str) -> Result<Stored, FileError> {
    read(path, text, Reading::Stored)
}

/// A campaign read back from the store.
#[derive(Debug)]
pub struct Stored {
    /// The campaign, as the file reader reads its text without the keys skipped.
    pub campaign: Campaign,
    /// The keys skipped, each once, in the order of the text: `'key'` at the top,
    /// `[campaign] 'key'`, `[[target]] 'key'`, `study 'NAME' 'key'`.
    pub skipped: Vec<String>,
}

impl Stored {
    /// The one line that says which keys were skipped, naming the campaign by `which` (`c3`);
    /// None when none was.
    pub fn warning(&self, which: &str) -> Option<String> {
        (!self.skipped.is_empty()).then(|| {
            format!(
                "campaign {which} ('{}') as stored has keys this iosurvey does not read, skipped: {} \
                 (hint: an earlier iosurvey ran it with them; what they set is not shown here)",
                crate::escape::visible(&self.campaign.name),
                self.skipped.iter().map(|k| crate::escape::visible(k)).collect::<Vec<_>>().join(", ")
            )
        })
    }
}

/// Whose text is read, which decides how strictly.
#[derive(Clone, Copy, PartialEq)]
enum Reading {
    /// A file the user gives, its targets mounted here.
    File,
    /// A file the user gives, its targets not looked for.
    Unmounted,
    /// The store's copy of a file some version of iosurvey ran.
    Stored,
}

fn read(path: &Path, text: &str, reading: Reading) -> Result<Stored, FileError> {
    let r = Reader { lines: Lines::of(text), path, text };
    let mut declared = Declared::default();
    let mut skipped = Skipped::default();
    let form = r.form(text, (reading == Reading::Stored).then_some((&mut declared, &mut skipped)))?;
    let head = r.head(form.campaign.as_ref())?;
    let (targets, target_at) = r.targets(&form.target, reading == Reading::File)?;
    let (mut studies, only_of, study_at) = r.studies(form.study, &mut declared)?;
    let cache = form.cache.as_ref().map(|c| r.cache(c)).transpose()?.unwrap_or_default();
    let hooks = form.hooks.as_ref().map(|h| r.hooks(h)).transpose()?.unwrap_or_default();
    let batch = form.batch.as_ref().map(|b| r.batch(b)).transpose()?;
    let named = form.event.iter().map(|e| r.event(e)).collect::<Result<Vec<_>, _>>()?;
    let names = Names { targets: &targets, target_at: &target_at, study_at: &study_at };
    let events = names.check(&r, &mut studies, only_of, named)?;
    let campaign = Campaign {
        path: path.to_path_buf(),
        text: text.to_string(),
        name: head.name,
        repetitions: head.repetitions,
        summary: head.summary,
        order: head.order,
        budget_secs: head.budget_secs,
        targets,
        studies,
        cache,
        hooks,
        events,
        batch,
    };
    Ok(Stored { campaign, skipped: skipped.said() })
}

/// The keys a stored campaign's reading skipped, with their lines.
#[derive(Default)]
struct Skipped(Vec<(usize, String)>);

impl Skipped {
    /// Each key once, in the order of the text: a key of every [[target]] is said once.
    fn said(mut self) -> Vec<String> {
        self.0.sort();
        let mut seen = HashSet::new();
        self.0.into_iter().filter_map(|(_, k)| seen.insert(k.clone()).then_some(k)).collect()
    }
}

/// The line of each byte of the text, found by binary search over the line ends, counted
/// once: every value asks for its line, and counting from the start each time made a file
/// of 30,000 targets take minutes.
struct Lines(Vec<usize>);

impl Lines {
    fn of(text: &str) -> Lines {
        Lines(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(k, _)| k).collect())
    }

    fn at(&self, offset: usize) -> usize {
        self.0.partition_point(|&end| end < offset) + 1
    }
}

/// A value with its line.
#[derive(Clone)]
struct Item {
    value: Value,
    line: usize,
}

/// The `[[study]]`s, each one's `targets` as written (checked with the other references),
/// and each one's index by its name.
type Studies = (Vec<Study>, Vec<Option<Item>>, HashMap<String, usize>);

/// The `[campaign]` table, read.
struct Head {
    name: String,
    repetitions: u32,
    summary: Summary,
    order: Order,
    budget_secs: Option<f64>,
}

/// An `[[event]]` as written: the study and target it names are resolved with the other
/// references, once the whole file is read.
struct Named {
    study: Item,
    target: Option<Item>,
    clients: Option<usize>,
    event: String,
    line: usize,
}

/// The tables of arrays (`[[target]]`), as a message names them.
const ARRAYS: &[&str] = &["target", "study", "event"];

/// How a message names the table or key at `path`: `[campaign] name`, `[[target]] dir`.
fn named(path: &[String]) -> String {
    match path.split_first() {
        None => "the file".into(),
        Some((top, rest)) => {
            let table = if ARRAYS.contains(&top.as_str()) { format!("[[{top}]]") } else { format!("[{top}]") };
            std::iter::once(table).chain(rest.iter().cloned()).collect::<Vec<_>>().join(" ")
        }
    }
}

/// What serde's error points at in the file: a key the table does not have, or a value.
enum Hit<'d, 'i> {
    Key,
    Value(&'d DeValue<'i>),
}

/// The key or value of `t` at `at`, its path of keys left in `path`. A table or a list of
/// tables is hit only where the error names the whole of it; a value where the error lies
/// within it (an item of its list).
fn locate<'d, 'i>(t: &'d DeTable<'i>, at: &Range<usize>, path: &mut Vec<String>) -> Option<Hit<'d, 'i>> {
    for (k, v) in t {
        path.push(k.get_ref().to_string());
        if k.span() == *at {
            return Some(Hit::Key);
        }
        let (inner, whole) = match v.get_ref() {
            DeValue::Table(inner) => (locate(inner, at, path), true),
            DeValue::Array(items) if items.iter().any(|i| i.get_ref().is_table()) => {
                let tables = items.iter().filter_map(|i| i.get_ref().as_table());
                (tables.into_iter().find_map(|inner| locate(inner, at, path)), true)
            }
            _ => (None, false),
        };
        if inner.is_some() {
            return inner;
        }
        let span = v.span();
        if (whole && span == *at) || (!whole && span.start <= at.start && at.end <= span.end) {
            return Some(Hit::Value(v.get_ref()));
        }
        path.pop();
    }
    None
}

struct Reader<'a> {
    lines: Lines,
    path: &'a Path,
    /// The file's text, to name a key as it is written there.
    text: &'a str,
}

impl Reader<'_> {
    fn at(&self, line: Option<usize>, what: impl Into<String>, hint: &str) -> FileError {
        FileError { path: self.path.to_path_buf(), line, what: what.into(), hint: hint.to_string() }
    }

    fn line(&self, offset: usize) -> usize {
        self.lines.at(offset)
    }

    /// The value of an optional key, with its line.
    fn get(&self, v: &form::Item) -> Option<Item> {
        v.as_ref().map(|v| Item { value: v.get_ref().clone(), line: self.line(v.span().start) })
    }

    /// The value of a key `table` (which begins at `line`) must have.
    fn need(&self, v: &form::Item, table: &str, key: &str, line: usize) -> Result<Item, FileError> {
        self.get(v)
            .ok_or_else(|| self.at(Some(line), format!("{table} has no {key}"), &format!("give {table} a {key}")))
    }

    /// The file's tables, read by serde; for a stored campaign, the keys this version does
    /// not read skipped first.
    fn form(&self, text: &str, lenient: Option<(&mut Declared, &mut Skipped)>) -> Result<Form, FileError> {
        let mut doc = self.document(text)?;
        if let Some((declared, skipped)) = lenient {
            self.skip_unknown(doc.get_mut(), &mut Vec::new(), declared, skipped);
        }
        Form::deserialize(toml::de::Deserializer::from(doc)).map_err(|e| {
            // The document again, to say what the error points at: read twice only when
            // the file is refused.
            match self.document(text) {
                Ok(doc) => self.said(doc.get_ref(), &e),
                Err(other) => other,
            }
        })
    }

    /// The text as TOML, every key with `_` read as `-`.
    fn document<'i>(&self, text: &'i str) -> Result<Spanned<DeTable<'i>>, FileError> {
        let mut doc = DeTable::parse(text).map_err(|e| {
            self.at(
                e.span().map(|s| self.line(s.start)),
                format!("not TOML: {}", e.message().trim()),
                "see docs/campaigns.md for the file's form",
            )
        })?;
        self.dashed(doc.as_mut(), &mut Vec::new())?;
        Ok(doc)
    }

    /// Takes out of `t` (the table at `path`) and the tables in it every key this version
    /// does not read, naming each in `skipped`. A study's keys are its kind's; a study of a
    /// kind this version does not have is left for the reader to refuse.
    fn skip_unknown(&self, t: &mut DeTable, path: &mut Vec<String>, declared: &mut Declared, skipped: &mut Skipped) {
        let study = (path.len() == 1 && path[0] == "study").then(|| study_of(t));
        let known: Vec<&str> = match (form::keys_at(path), &study) {
            (Some(keys), _) => keys.to_vec(),
            (None, Some((_, Some(kind)))) => {
                STUDY_OWN.iter().copied().chain(declared.of(*kind).iter().map(String::as_str)).collect()
            }
            _ => return,
        };
        let unknown: Vec<String> =
            t.keys().map(|k| k.get_ref().to_string()).filter(|k| !known.contains(&k.as_str())).collect();
        for key in unknown {
            let Some((k, _)) = t.remove_entry(key.as_str()) else { continue };
            let name = match &study {
                Some((name, _)) => format!("study '{name}' '{key}'"),
                None if path.is_empty() => format!("'{key}'"),
                None => format!("{} '{key}'", named(path)),
            };
            skipped.0.push((self.line(k.span().start), name));
        }
        if study.is_some() {
            return;
        }
        for (k, v) in t.iter_mut() {
            path.push(k.get_ref().to_string());
            match v.get_mut() {
                DeValue::Table(inner) => self.skip_unknown(inner, path, declared, skipped),
                DeValue::Array(items) => {
                    for item in items.iter_mut() {
                        if let DeValue::Table(inner) = item.get_mut() {
                            self.skip_unknown(inner, path, declared, skipped);
                        }
                    }
                }
                _ => {}
            }
            path.pop();
        }
    }

    /// `t`'s keys, and those of the tables in it, with `_` read as `-` (`max_file` is
    /// `max-file`), so serde and the study's kind see one spelling; a key given both ways is
    /// refused, at the later of its lines.
    fn dashed(&self, t: &mut DeTable, path: &mut Vec<String>) -> Result<(), FileError> {
        for (k, mut v) in std::mem::replace(t, DeTable::new()) {
            let key = k.get_ref().replace('_', "-");
            path.push(key.clone());
            match v.as_mut() {
                DeValue::Table(inner) => self.dashed(inner, path)?,
                DeValue::Array(items) => {
                    for item in items.iter_mut() {
                        if let DeValue::Table(inner) = item.as_mut() {
                            self.dashed(inner, path)?;
                        }
                    }
                }
                _ => {}
            }
            path.pop();
            if let Some((first, _)) = t.get_key_value(key.as_str()) {
                let line = self.line(first.span().start.max(k.span().start));
                let (what, hint) = match path.first().map(String::as_str) {
                    Some("study") => (format!("[[study]] setting '{key}' is given twice"), "give it once"),
                    _ => (format!("{} {key} is given twice (as '-' and '_')", named(path)), "give it once"),
                };
                return Err(self.at(Some(line), what, hint));
            }
            t.insert(Spanned::new(k.span(), Cow::Owned(key)), v);
        }
        Ok(())
    }

    /// serde's refusal of `doc`, said in the file's words at the key or value it points at.
    fn said(&self, doc: &DeTable, e: &toml::de::Error) -> FileError {
        let docs = "see docs/campaigns.md for the file's form";
        let Some(at) = e.span() else { return self.at(None, e.message().trim().to_string(), docs) };
        let line = Some(self.line(at.start));
        let mut path = Vec::new();
        let hit = locate(doc, &at, &mut path);
        let here = named(&path);
        match hit {
            Some(Hit::Key) => {
                let (table, key) = path.split_at(path.len() - 1);
                let written = self.text.get(at).map_or(key[0].as_str(), |k| k.trim_matches(['"', '\'']));
                self.unknown(written, line, &named(table), form::keys_at(table).unwrap_or_default())
            }
            Some(Hit::Value(_)) if path.len() == 1 && ARRAYS.contains(&path[0].as_str()) => self.at(
                line,
                format!("{here} must be written as [[{}]] above each entry, one table per entry", path[0]),
                &format!("write [[{}]] on a line of its own above each entry's keys", path[0]),
            ),
            Some(Hit::Value(_)) if path.len() == 1 => self.at(
                line,
                format!("{here} is not a table"),
                &format!("write {here} on a line of its own, its keys below"),
            ),
            Some(Hit::Value(v)) => self.no_setting(line, &here, v),
            None => self.at(line, e.message().trim().to_string(), docs),
        }
    }

    /// A value serde could not take as a setting: said by what the file holds there.
    fn no_setting(&self, line: Option<usize>, here: &str, v: &DeValue) -> FileError {
        let plain = "give a string, a number or true/false";
        match v {
            DeValue::Table(_) => self.at(line, format!("{here} is a table, which it cannot be"), plain),
            DeValue::Datetime(_) => self.at(line, format!("{here} is a date, which it cannot be"), plain),
            DeValue::Integer(n) => self.at(
                line,
                format!("{here} {} is not a whole number iosurvey can hold", n.as_str()),
                "give a smaller number",
            ),
            DeValue::Array(_) => self.at(
                line,
                format!("{here} holds a table or a date in its list"),
                "give a list of strings, numbers or true/false",
            ),
            _ => self.at(line, format!("{here} cannot be read"), plain),
        }
    }

    /// A key `table` does not have, with the nearest it has.
    fn unknown(&self, key: &str, line: Option<usize>, table: &str, known: &[&str]) -> FileError {
        let hint = match crate::spelling::nearest(&key.replace('_', "-"), known.iter().copied()) {
            Some(near) => format!("did you mean '{near}'?"),
            None => format!("the keys of {table} are {}", known.join(", ")),
        };
        self.at(line, format!("{table}: unknown key '{key}'"), &hint)
    }

    /// `[campaign]`: the name, how often and in which order.
    fn head(&self, c: Option<&Spanned<CampaignForm>>) -> Result<Head, FileError> {
        let c =
            c.ok_or_else(|| self.at(None, "has no [campaign] table", "begin the file with [campaign] and its name"))?;
        let (line, c) = (self.line(c.span().start), c.get_ref());
        let name = self.string(&self.need(&c.name, "[campaign]", "name", line)?, "[campaign] name")?;
        if !crate::record::is_label(&name) {
            return Err(self.at(
                self.get(&c.name).map(|v| v.line),
                "[campaign] name must be 1 to 64 printable characters",
                "give name = \"my-eval\"",
            ));
        }
        let repetitions = match self.get(&c.repetitions) {
            Some(v) => self.count(&v, "[campaign] repetitions", 1, 1000)? as u32,
            None => 1,
        };
        let choice = |v: &form::Item, what: &str, names: &[&str]| -> Result<Option<String>, FileError> {
            self.get(v).map(|v| self.choice(&v, what, names)).transpose()
        };
        let summary = match choice(&c.summary, "[campaign] summary", &["best", "mean", "median"])?.as_deref() {
            Some("best") => Summary::Best,
            Some("median") => Summary::Median,
            _ => Summary::Mean,
        };
        let seed = self.get(&c.seed).map(|v| self.count(&v, "[campaign] seed", 0, i64::MAX)).transpose()?;
        let order = match choice(&c.order, "[campaign] order", &["interleaved", "random", "sequential"])?.as_deref() {
            Some("random") => Order::Random(seed.map_or(1, |n| n as u64)),
            Some("sequential") => Order::Sequential,
            _ => Order::Interleaved,
        };
        let budget_secs = self.get(&c.budget).map(|v| self.budget(&v)).transpose()?;
        Ok(Head { name, repetitions, summary, order, budget_secs })
    }

    /// `[campaign] budget`, in seconds.
    fn budget(&self, v: &Item) -> Result<f64, FileError> {
        let text = self.string(v, "[campaign] budget")?;
        let ns = crate::units::parse_long_duration(&text).map_err(|why| {
            self.at(Some(v.line), format!("[campaign] budget: {why}"), "give a duration, e.g. budget = \"8h\"")
        })?;
        if ns == 0 {
            return Err(self.at(
                Some(v.line),
                "[campaign] budget of no time leaves no point time to run",
                "give a duration above 0, e.g. budget = \"8h\"",
            ));
        }
        Ok(ns as f64 / 1e9)
    }

    /// The `[[target]]`s, and each one's index by its label: a file may hold thousands, and
    /// every duplicate check and every reference to one is a look-up, not a scan.
    fn targets(
        &self,
        forms: &[Spanned<form::TargetForm>],
        mounted: bool,
    ) -> Result<(Vec<TargetDef>, HashMap<String, usize>), FileError> {
        let mut targets: Vec<TargetDef> = Vec::with_capacity(forms.len());
        let mut target_at = HashMap::with_capacity(forms.len());
        for t in forms {
            let def = self.target(t, mounted, &target_at)?;
            target_at.insert(def.label.clone(), targets.len());
            targets.push(def);
        }
        if targets.is_empty() {
            return Err(self.at(None, "names no [[target]]", "add a [[target]] with a label and a dir"));
        }
        Ok((targets, target_at))
    }

    /// A `[[target]]`: its label (one no target before it has) and one of dir, device and s3.
    fn target(
        &self,
        t: &Spanned<form::TargetForm>,
        mounted: bool,
        before: &HashMap<String, usize>,
    ) -> Result<TargetDef, FileError> {
        let (line, f) = (self.line(t.span().start), t.get_ref());
        let label_item = self.need(&f.label, "[[target]]", "label", line)?;
        let label = self.string(&label_item, "[[target]] label")?;
        if !crate::record::is_label(&label) {
            let hint = "give label = \"f800\"";
            return Err(self.at(Some(label_item.line), "a target's label is 1 to 64 printable characters", hint));
        }
        if before.contains_key(&label) {
            let what = format!("[[target]] label '{label}' is given twice");
            return Err(self.at(Some(label_item.line), what, "give each target its own label"));
        }
        let given: Vec<(&str, Item)> = [("dir", &f.dir), ("device", &f.device), ("s3", &f.s3)]
            .into_iter()
            .filter_map(|(k, v)| Some((k, self.get(v)?)))
            .collect();
        if let [(first, _), (second, v), ..] = &given[..] {
            let what = format!("[[target]] '{label}' gives both {first} and {second}");
            return Err(self.at(Some(v.line), what, "give one of dir, device and s3"));
        }
        let description = self.get(&f.description).map(|v| self.string(&v, "[[target]] description")).transpose()?;
        let mut def = TargetDef {
            label,
            dir: PathBuf::new(),
            device: false,
            s3: false,
            description: description.unwrap_or_default(),
            line: Some(line),
        };
        match given.first() {
            Some(("device", v)) => (def.dir, def.device) = (PathBuf::from(self.string(v, "[[target]] device")?), true),
            Some(("s3", v)) => (def.dir, def.s3) = (PathBuf::from(self.bucket(v, &def.label)?), true),
            _ => def.dir = self.dir(&self.need(&f.dir, "[[target]]", "dir", line)?, &def.label, mounted)?,
        }
        Ok(def)
    }

    /// A target's `s3`, checked as `run --s3` checks it, where the file names it; the bucket
    /// is reached only when a point runs.
    fn bucket(&self, v: &Item, label: &str) -> Result<String, FileError> {
        let url = self.string(v, "[[target]] s3")?;
        crate::s3::Location::parse(&url).map_err(|why| {
            self.at(
                Some(v.line),
                format!("[[target]] '{label}': {why}"),
                "give s3 = \"http://HOST:PORT/BUCKET/PREFIX\"",
            )
        })?;
        Ok(url)
    }

    /// A target's `dir`, a directory here when the file is to run.
    fn dir(&self, v: &Item, label: &str, mounted: bool) -> Result<PathBuf, FileError> {
        let dir = PathBuf::from(self.string(v, "[[target]] dir")?);
        if mounted && !dir.is_dir() {
            let shown = crate::escape::visible(&dir.display().to_string()).into_owned();
            return Err(self.at(
                Some(v.line),
                format!("[[target]] '{label}': dir {shown} is not a directory"),
                "mount the target, or give the directory it is mounted on",
            ));
        }
        Ok(dir)
    }

    /// The `[[study]]`s, each study's `targets` as written, and each one's index by its name.
    fn studies(&self, forms: Vec<Spanned<StudyForm>>, declared: &mut Declared) -> Result<Studies, FileError> {
        let (mut studies, mut only_of) = (Vec::with_capacity(forms.len()), Vec::with_capacity(forms.len()));
        let mut study_at = HashMap::with_capacity(forms.len());
        for s in forms {
            let (study, only) = self.study(s, declared)?;
            if study_at.insert(study.name.clone(), studies.len()).is_some() {
                let what = format!("[[study]] name '{}' is given twice", study.name);
                return Err(self.at(study.line, what, "give each study its own name"));
            }
            studies.push(study);
            only_of.push(only);
        }
        if studies.is_empty() {
            return Err(self.at(None, "names no [[study]]", "add a [[study]] with a name and a kind"));
        }
        Ok((studies, only_of, study_at))
    }

    /// A `[[study]]`: its name, its kind, the targets it names, and its settings, each a key
    /// its kind takes.
    fn study(&self, s: Spanned<StudyForm>, declared: &mut Declared) -> Result<(Study, Option<Item>), FileError> {
        let line = self.line(s.span().start);
        let mut entries = s.into_inner();
        let mut take = |key: &str| {
            entries.remove(key).map(|v| Item { value: v.get_ref().clone(), line: self.line(v.span().start) })
        };
        let (name, kind, only) = (take("name"), take("kind"), take("targets"));
        let name = self.string(
            &name.ok_or_else(|| self.at(Some(line), "a [[study]] has no name", "give it name = \"seq-write\""))?,
            "[[study]] name",
        )?;
        if !crate::record::is_label(&name) {
            let hint = "give name = \"seq-write\"";
            return Err(self.at(Some(line), "a study's name is 1 to 64 printable characters", hint));
        }
        let Some(kind) = kind else {
            let hint = format!("give kind = one of {}", Kind::NAMES.join(", "));
            return Err(self.at(Some(line), format!("[[study]] '{name}' has no kind"), &hint));
        };
        let kind =
            Kind::from_name(&self.choice(&kind, "[[study]] kind", Kind::NAMES)?).expect("checked against the names");
        let settings = self.settings(&name, kind, entries, declared.of(kind))?;
        Ok((Study { name, kind, targets: Vec::new(), settings, line: Some(line) }, only))
    }

    /// A study's settings in the file's order, each a flag's name its kind takes.
    fn settings(
        &self,
        name: &str,
        kind: Kind,
        entries: StudyForm,
        known: &[String],
    ) -> Result<Vec<Setting>, FileError> {
        let mut settings: Vec<Setting> = entries
            .into_iter()
            .map(|(k, v)| Setting { key: k.into_inner(), line: self.line(v.span().start), value: v.into_inner() })
            .collect();
        settings.sort_by_key(|s| s.line);
        for Setting { key, line, .. } in &settings {
            // A flag's name and nothing else: "csv=/x" would be a flag with its value.
            if key.is_empty() || !key.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-') || key.starts_with('-')
            {
                let what = format!("[[study]] key '{key}' is not the name of a setting");
                return Err(self.at(Some(*line), what, "give a flag's long name, e.g. transfer = \"1m\""));
            }
            if !known.contains(key) {
                let hint = match crate::spelling::nearest(key, known.iter().map(String::as_str)) {
                    Some(near) => format!("did you mean '{near}'?"),
                    None => format!("see 'iosurvey {} --help' for its settings", kind.name()),
                };
                return Err(self.at(
                    Some(*line),
                    format!("study '{name}' ({}): unknown key '{key}'", kind.name()),
                    &hint,
                ));
            }
        }
        Ok(settings)
    }

    /// `[cache]`.
    fn cache(&self, f: &CacheForm) -> Result<super::CacheRules, FileError> {
        let flag =
            |v: &form::Item, key: &str| self.get(v).map_or(Ok(false), |v| self.boolean(&v, &format!("[cache] {key}")));
        let mut cache = super::CacheRules {
            drop_caches: flag(&f.drop_caches, "drop-caches")?,
            direct: flag(&f.direct, "direct")?,
            reorder: flag(&f.reorder, "reorder")?,
            ..Default::default()
        };
        if let Some(v) = self.get(&f.data) {
            let text = self.string(&v, "[cache] data")?;
            cache.data_times_ram = Some(times_ram(&text).ok_or_else(|| {
                self.at(
                    Some(v.line),
                    format!("[cache] data '{text}' is not a multiple of RAM"),
                    "give data = \"2x ram\" (data per node at least twice its memory)",
                )
            })?);
        }
        if let Some(v) = self.get(&f.data_rule) {
            cache.flag_only = self.choice(&v, "[cache] data-rule", &["refuse", "flag"])? == "flag";
        }
        Ok(cache)
    }

    /// `[hooks]`.
    fn hooks(&self, f: &HooksForm) -> Result<Hooks, FileError> {
        let hook = |h: &Option<Spanned<HookForm>>, key: &str| h.as_ref().map(|h| self.hook(h, key)).transpose();
        Ok(Hooks {
            before_run: hook(&f.before_run, "before-run")?,
            after_run: hook(&f.after_run, "after-run")?,
            before_study: hook(&f.before_study, "before-study")?,
            after_study: hook(&f.after_study, "after-study")?,
        })
    }

    /// A hook: a command (run on the lead, its failure failing the point), or a table of
    /// `command`, `on` (lead or every-node) and `on-failure` (fail or ignore).
    fn hook(&self, h: &Spanned<HookForm>, key: &str) -> Result<Hook, FileError> {
        let what = format!("[hooks] {key}");
        let line = self.line(h.span().start);
        let t = match h.get_ref() {
            HookForm::Table(t) => t,
            HookForm::Command(v) => {
                let command = self.string(&Item { value: v.clone(), line }, &what)?;
                return Ok(Hook { command, place: HookPlace::Lead, ignore_failure: false, line: Some(line) });
            }
        };
        let command = self.string(&self.need(&t.command, &what, "command", line)?, &format!("{what} command"))?;
        let place = match self.get(&t.on) {
            Some(v) if self.choice(&v, &format!("{what} on"), &["lead", "every-node"])? == "every-node" => {
                HookPlace::EveryNode
            }
            _ => HookPlace::Lead,
        };
        let ignore_failure = match self.get(&t.on_failure) {
            Some(v) => self.choice(&v, &format!("{what} on-failure"), &["fail", "ignore"])? == "ignore",
            None => false,
        };
        Ok(Hook { command, place, ignore_failure, line: Some(line) })
    }

    /// An `[[event]]`: its time and command checked as `--event` checks them; the study and
    /// target it names are checked with the other references.
    fn event(&self, e: &Spanned<EventForm>) -> Result<Named, FileError> {
        let (line, f) = (self.line(e.span().start), e.get_ref());
        let study = self.need(&f.study, "[[event]]", "study", line)?;
        let clients = match self.get(&f.clients) {
            None => None,
            Some(Item { value: Value::Int(n), .. }) if n > 0 => Some(n as usize),
            Some(v) => return Err(self.at(Some(v.line), "[[event]] clients is a positive count", "give clients = 4")),
        };
        let at = self.need(&f.at, "[[event]]", "at", line)?;
        let command = self.string(&self.need(&f.command, "[[event]]", "command", line)?, "[[event]] command")?;
        let event = format!("{}:{command}", self.string(&at, "[[event]] at")?);
        if let Err(why) = crate::spec::event_arg(&event) {
            return Err(self.at(Some(at.line), format!("[[event]]: {why}"), "give at = \"30s\" and a command"));
        }
        Ok(Named { study, target: self.get(&f.target), clients, event, line })
    }

    fn string(&self, v: &Item, what: &str) -> Result<String, FileError> {
        match &v.value {
            Value::Str(s) => Ok(s.clone()),
            other => Err(self.at(
                Some(v.line),
                format!("{what} is a string, not {}", other.as_arg()),
                &format!("write {what} in quotes"),
            )),
        }
    }

    fn boolean(&self, v: &Item, what: &str) -> Result<bool, FileError> {
        match &v.value {
            Value::Bool(b) => Ok(*b),
            other => Err(self.at(
                Some(v.line),
                format!("{what} is true or false, not {}", other.as_arg()),
                "give true or false",
            )),
        }
    }

    fn count(&self, v: &Item, what: &str, least: i64, most: i64) -> Result<i64, FileError> {
        match &v.value {
            Value::Int(n) if (least..=most).contains(n) => Ok(*n),
            other => Err(self.at(
                Some(v.line),
                format!("{what} is a whole number from {least} to {most}, not {}", other.as_arg()),
                &format!("give {what} from {least} to {most}"),
            )),
        }
    }

    fn choice(&self, v: &Item, what: &str, names: &[&str]) -> Result<String, FileError> {
        let text = self.string(v, what)?;
        if names.contains(&text.as_str()) {
            return Ok(text);
        }
        let hint = match crate::spelling::nearest(&text, names.iter().copied()) {
            Some(near) => format!("did you mean '{near}'?"),
            None => format!("give one of {}", names.join(", ")),
        };
        Err(self.at(Some(v.line), format!("{what} '{text}' is not one of {}", names.join(", ")), &hint))
    }
}

/// The keys of a `[[study]]` that are no setting of its kind.
const STUDY_OWN: [&str; 3] = ["name", "kind", "targets"];

/// A study table's name as written (empty if it has none), and its kind, where it names one
/// this version has.
fn study_of(t: &DeTable) -> (String, Option<Kind>) {
    let text = |key: &str| t.get(key).and_then(|v| v.get_ref().as_str()).map(String::from);
    (text("name").unwrap_or_default(), text("kind").and_then(|k| Kind::from_name(&k)))
}

/// The keys a study of each kind takes, read from its command's declarations once per kind
/// the file names: each flag by its long name and its aliases (a flag with only a letter
/// by its name: `create-only` for `-C`), and the keys the campaign sets itself,
/// which the points refuse with their own reason ([`super::points::SET_BY_CAMPAIGN`]).
#[derive(Default)]
struct Declared(HashMap<&'static str, Vec<String>>);

impl Declared {
    fn of(&mut self, kind: Kind) -> &[String] {
        self.0.entry(kind.name()).or_insert_with(|| {
            let flags = crate::study::line::declared(kind.name(), |c| {
                c.get_arguments()
                    .filter(|a| a.get_long().is_some() || a.get_short().is_some())
                    .flat_map(|a| {
                        let aliases = a.get_all_aliases().unwrap_or_default().into_iter().map(String::from);
                        let name = a.get_long().map_or_else(|| a.get_id().as_str().replace('_', "-"), String::from);
                        std::iter::once(name).chain(aliases).collect::<Vec<_>>()
                    })
                    .filter(|k| k != "help" && k != "version")
                    .collect::<Vec<_>>()
            });
            let campaigns = super::points::SET_BY_CAMPAIGN.iter().map(|(k, _)| k.to_string());
            flags.unwrap_or_default().into_iter().chain(campaigns).collect()
        })
    }
}

/// What the file's references name: the targets by label, the studies by name.
struct Names<'a> {
    targets: &'a [TargetDef],
    target_at: &'a HashMap<String, usize>,
    study_at: &'a HashMap<String, usize>,
}

impl Names<'_> {
    /// Every reference of the file checked in one place, after it is read: each study's
    /// `targets` (labels of [[target]]s, each once, a device or a bucket for run studies
    /// only), the counts it sweeps, and each event's study and target (a run study, one of
    /// its targets). Whether an event matches a point is known only with the points and
    /// the launch they run on (`points::points`).
    fn check(
        &self,
        r: &Reader,
        studies: &mut [Study],
        only_of: Vec<Option<Item>>,
        named: Vec<Named>,
    ) -> Result<Vec<super::EventDef>, FileError> {
        for (s, only) in studies.iter_mut().zip(only_of) {
            s.targets = match only {
                None => (0..self.targets.len()).collect(),
                Some(v) => self.labels(r, &s.name, &v)?,
            };
            self.placed(r, s)?;
            swept_counts(s).map_err(|(line, what, hint)| r.at(Some(line), what, &hint))?;
        }
        // The targets of each study an event names, as a set, made when first needed: a file
        // may hold thousands of targets and of events.
        let mut runs_on: HashMap<usize, HashSet<usize>> = HashMap::new();
        named.into_iter().map(|e| self.event(r, studies, &mut runs_on, e)).collect()
    }

    /// Refuses a study other than `run` on a device or a bucket; the network's study only
    /// names the targets reached over it.
    fn placed(&self, r: &Reader, s: &Study) -> Result<(), FileError> {
        let placed = |t: &&TargetDef| (t.device || t.s3) && !matches!(s.kind, Kind::Run | Kind::Net);
        let Some(t) = s.targets.iter().map(|&k| &self.targets[k]).find(placed) else { return Ok(()) };
        let what = if t.device { "the block device" } else { "the S3 bucket" };
        Err(r.at(
            s.line,
            format!("study '{}' (kind {}) would run on {what} of target '{}'", s.name, s.kind.name(), t.label),
            &format!(
                "{} takes run studies only; give this study targets = [...] without it",
                if t.device { "a device" } else { "a bucket" }
            ),
        ))
    }

    /// A study's `targets`: the [[target]]s it names, each once.
    fn labels(&self, r: &Reader, name: &str, v: &Item) -> Result<Vec<usize>, FileError> {
        let labels = match &v.value {
            Value::List(items) => items.iter().map(|i| i.as_arg()).collect::<Vec<_>>(),
            Value::Str(s) => vec![s.clone()],
            _ => return Err(r.at(Some(v.line), "[[study]] targets is a list of labels", "give targets = [\"f800\"]")),
        };
        if labels.is_empty() {
            return Err(r.at(
                Some(v.line),
                format!("study '{name}' names no target"),
                "name at least one [[target]] label, or leave targets out for all",
            ));
        }
        let mut picked = Vec::new();
        let mut seen = HashSet::new();
        for l in labels {
            match self.target_at.get(&l).copied() {
                Some(k) if !seen.insert(k) => {
                    return Err(r.at(
                        Some(v.line),
                        format!("study '{name}' names target '{l}' twice"),
                        "name each target once",
                    ))
                }
                Some(k) => picked.push(k),
                None => {
                    let near = crate::spelling::nearest(&l, self.targets.iter().map(|t| t.label.as_str()));
                    return Err(r.at(
                        Some(v.line),
                        format!("study '{name}' names target '{l}', which no [[target]] has"),
                        &near.map_or("give the label of a [[target]]".into(), |n| format!("did you mean '{n}'?")),
                    ));
                }
            }
        }
        Ok(picked)
    }

    /// An event's study (a run study of the file) and target (one the study runs on).
    fn event(
        &self,
        r: &Reader,
        studies: &[Study],
        runs_on: &mut HashMap<usize, HashSet<usize>>,
        e: Named,
    ) -> Result<super::EventDef, FileError> {
        let study_name = r.string(&e.study, "[[event]] study")?;
        let Some(study) = self.study_at.get(&study_name).copied() else {
            let near = crate::spelling::nearest(&study_name, studies.iter().map(|s| s.name.as_str()));
            return Err(r.at(
                Some(e.study.line),
                format!("[[event]] names study '{study_name}', which no [[study]] has"),
                &near.map_or("give the name of a [[study]]".into(), |n| format!("did you mean '{n}'?")),
            ));
        };
        if studies[study].kind != Kind::Run {
            return Err(r.at(
                Some(e.line),
                format!("[[event]] on study '{study_name}', which is not a run study"),
                "events run within run studies",
            ));
        }
        let target = match &e.target {
            None => None,
            Some(v) => {
                let label = r.string(v, "[[event]] target")?;
                let of_study = runs_on.entry(study).or_insert_with(|| studies[study].targets.iter().copied().collect());
                match self.target_at.get(&label).copied().filter(|k| of_study.contains(k)) {
                    Some(k) => Some(k),
                    None => {
                        return Err(r.at(
                            Some(v.line),
                            format!("[[event]] names target '{label}', which study '{study_name}' does not run on"),
                            "give the label of one of the study's targets",
                        ))
                    }
                }
            }
        };
        Ok(super::EventDef { study, target, clients: e.clients, event: e.event, line: Some(e.line) })
    }
}

/// The counts a study's swept setting names (`clients`, a training study's `accelerators`,
/// a checkpoint study's `ranks`), each once; None where the study leaves the count to its
/// command or the launch. A fault as its line, what is wrong and what to write.
pub(super) fn swept_counts(s: &Study) -> Result<Option<Vec<usize>>, (usize, String, String)> {
    let Some(key) = s.kind.sweeps() else { return Ok(None) };
    let Some(set) = s.settings.iter().find(|x| x.key == key) else { return Ok(None) };
    let counts = crate::plan::parse_counts(&set.value.as_arg())
        .map_err(|e| (set.line, format!("study '{}': {key}: {e}", s.name), format!("give {key} = \"1..64:x2\"")))?;
    let mut seen = HashSet::new();
    if let Some(twice) = counts.iter().find(|&&n| !seen.insert(n)) {
        return Err((
            set.line,
            format!("study '{}': {key} names {twice} twice", s.name),
            format!("name each {key} count once; repetitions = N repeats them"),
        ));
    }
    Ok(Some(counts))
}

/// "2x ram" as 2.0.
fn times_ram(text: &str) -> Option<f64> {
    let lower = text.to_lowercase().replace(' ', "");
    let n = lower.strip_suffix("xram")?.parse::<f64>().ok()?;
    (n.is_finite() && n > 0.0).then_some(n)
}
