//! The campaign file (TOML) read into a [`Campaign`]: every key checked where it stands, and
//! anything wrong said as one line with the file, the line and the key, and the nearest key
//! there is. A study's own settings are kept as written, with their lines: its kind's own
//! declarations check them as they are read into a study value ([`super::points`]).

use super::{Batch, Campaign, Hook, HookPlace, Hooks, Kind, Order, Setting, Study, Summary, TargetDef};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

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

/// A value as the file wrote it, with its line.
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
    read(path, text, true)
}

/// Reads the text of a campaign as the store kept it, to report or count what it ran: its
/// targets need not be mounted here.
pub fn parse_stored(path: &Path, text: &str) -> Result<Campaign, FileError> {
    read(path, text, false)
}

#[allow(clippy::too_many_lines)] // TODO(lead): owned by another branch this session
fn read(path: &Path, text: &str, mounted: bool) -> Result<Campaign, FileError> {
    // Every value asks for its line: found by binary search over the line ends, counted once,
    // so that reading stays linear in the file's size (counting from the start each time made
    // a file of 30,000 targets take minutes).
    let ends: Vec<usize> = text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(k, _)| k).collect();
    let line_of = |at: usize| ends.partition_point(|&end| end < at) + 1;
    let err = |line: Option<usize>, what: String, hint: &str| FileError {
        path: path.to_path_buf(),
        line,
        what,
        hint: hint.to_string(),
    };
    let doc = DeTable::parse(text).map_err(|e| {
        err(
            e.span().map(|s| line_of(s.start)),
            format!("not TOML: {}", e.message().trim()),
            "see docs/campaigns.md for the file's form",
        )
    })?;
    let r = Reader { line_of: &line_of, path };
    let top =
        r.table(doc.get_ref(), "the file", &["campaign", "target", "study", "cache", "hooks", "event", "batch"])?;
    let campaign_table = top
        .get("campaign")
        .ok_or_else(|| err(None, "has no [campaign] table".into(), "begin the file with [campaign] and its name"))?;
    let c = r.table_of(campaign_table, "[campaign]", &["name", "repetitions", "summary", "order", "seed", "budget"])?;
    let name = r.string(c.need("name", "[campaign]", &r)?, "[campaign] name")?;
    if !crate::record::is_label(&name) {
        return Err(r.at(
            c.line("name"),
            "[campaign] name must be 1 to 64 printable characters",
            "give name = \"my-eval\"",
        ));
    }
    let repetitions = match c.get("repetitions") {
        Some(v) => r.count(v, "[campaign] repetitions", 1, 1000)? as u32,
        None => 1,
    };
    let summary = match c.get("summary") {
        Some(v) => r.choice(v, "[campaign] summary", &["best", "mean", "median"])?,
        None => "mean".into(),
    };
    let summary = match summary.as_str() {
        "best" => Summary::Best,
        "median" => Summary::Median,
        _ => Summary::Mean,
    };
    let seed = match c.get("seed") {
        Some(v) => Some(r.count(v, "[campaign] seed", 0, i64::MAX)? as u64),
        None => None,
    };
    let order = match c.get("order") {
        Some(v) => r.choice(v, "[campaign] order", &["interleaved", "random", "sequential"])?,
        None => "interleaved".into(),
    };
    let order = match order.as_str() {
        "random" => Order::Random(seed.unwrap_or(1)),
        "sequential" => Order::Sequential,
        _ => Order::Interleaved,
    };
    let budget_secs = match c.get("budget") {
        Some(v) => {
            let text = r.string(v, "[campaign] budget")?;
            let ns = crate::units::parse_long_duration(&text).map_err(|why| {
                r.at(Some(v.line), format!("[campaign] budget: {why}"), "give a duration, e.g. budget = \"8h\"")
            })?;
            if ns == 0 {
                return Err(r.at(
                    Some(v.line),
                    "[campaign] budget of no time leaves no point time to run",
                    "give a duration above 0, e.g. budget = \"8h\"",
                ));
            }
            Some(ns as f64 / 1e9)
        }
        None => None,
    };

    let mut targets: Vec<TargetDef> = Vec::new();
    // Labels and names by index: a file may hold thousands of each, and every duplicate check
    // and every reference to one is a look-up, not a scan.
    let mut target_at: HashMap<String, usize> = HashMap::new();
    for t in r.array_of_tables(top.get("target"), "[[target]]")? {
        let line = t.at;
        let t = r.table_of(&t, "[[target]]", &["label", "dir", "device", "s3", "description"])?;
        let label = r.string(t.need("label", "[[target]]", &r)?, "[[target]] label")?;
        if !crate::record::is_label(&label) {
            return Err(r.at(
                t.line("label"),
                "a target's label is 1 to 64 printable characters",
                "give label = \"f800\"",
            ));
        }
        if target_at.insert(label.clone(), targets.len()).is_some() {
            return Err(r.at(
                t.line("label"),
                format!("[[target]] label '{label}' is given twice"),
                "give each target its own label",
            ));
        }
        let given: Vec<&str> = ["dir", "device", "s3"].into_iter().filter(|k| t.get(k).is_some()).collect();
        if let [first, second, ..] = given[..] {
            return Err(r.at(
                t.line(second),
                format!("[[target]] '{label}' gives both {first} and {second}"),
                "give one of dir, device and s3",
            ));
        }
        let description = match t.get("description") {
            Some(v) => r.string(v, "[[target]] description")?,
            None => String::new(),
        };
        if let Some(v) = t.get("device") {
            let dev = PathBuf::from(r.string(v, "[[target]] device")?);
            targets.push(TargetDef { label, dir: dev, device: true, s3: false, description, line: Some(line) });
            continue;
        }
        if let Some(v) = t.get("s3") {
            let url = r.string(v, "[[target]] s3")?;
            // Checked as `run --s3` checks it, where the file names it; the bucket is reached
            // only when a point runs.
            crate::s3::Location::parse(&url).map_err(|why| {
                r.at(
                    Some(v.line),
                    format!("[[target]] '{label}': {why}"),
                    "give s3 = \"http://HOST:PORT/BUCKET/PREFIX\"",
                )
            })?;
            targets.push(TargetDef {
                label,
                dir: PathBuf::from(url),
                device: false,
                s3: true,
                description,
                line: Some(line),
            });
            continue;
        }
        let dir = PathBuf::from(r.string(t.need("dir", "[[target]]", &r)?, "[[target]] dir")?);
        if mounted && !dir.is_dir() {
            return Err(r.at(
                t.line("dir"),
                format!(
                    "[[target]] '{label}': dir {} is not a directory",
                    crate::escape::visible(&dir.display().to_string())
                ),
                "mount the target, or give the directory it is mounted on",
            ));
        }
        targets.push(TargetDef { label, dir, device: false, s3: false, description, line: Some(line) });
    }
    if targets.is_empty() {
        return Err(r.at(None, "names no [[target]]", "add a [[target]] with a label and a dir"));
    }

    let mut studies: Vec<Study> = Vec::new();
    let mut study_at: HashMap<String, usize> = HashMap::new();
    // Each study's `targets` as written, resolved with the other references below.
    let mut only_of: Vec<Option<Item>> = Vec::new();
    for s in r.array_of_tables(top.get("study"), "[[study]]")? {
        let line = s.at;
        let Some(entries) = s.value.as_table() else {
            return Err(r.at(Some(line), "[[study]] is not a table", "write [[study]] followed by its keys"));
        };
        let (mut name, mut kind, mut only) = (None, None, None);
        let mut settings = Vec::new();
        let mut keys = HashSet::new();
        for (key, value) in entries {
            let (key, value) = (key.get_ref().to_string(), r.item(value)?);
            match key.as_str() {
                "name" => name = Some(r.string(&value, "[[study]] name")?),
                "kind" => kind = Some((r.choice(&value, "[[study]] kind", Kind::NAMES)?, value.line)),
                "targets" => only = Some(value),
                _ => {
                    let spelled = key.replace('_', "-");
                    // A flag's name and nothing else: "csv=/x" would be a flag with its value.
                    if spelled.is_empty()
                        || !spelled.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
                        || spelled.starts_with('-')
                    {
                        return Err(r.at(
                            Some(value.line),
                            format!("[[study]] key '{key}' is not the name of a setting"),
                            "give a flag's long name, e.g. transfer = \"1m\"",
                        ));
                    }
                    if !keys.insert(spelled.clone()) {
                        return Err(r.at(
                            Some(value.line),
                            format!("[[study]] setting '{spelled}' is given twice"),
                            "give it once",
                        ));
                    }
                    settings.push(Setting { key: spelled, value: value.value, line: value.line })
                }
            }
        }
        let name = name.ok_or_else(|| r.at(Some(line), "a [[study]] has no name", "give it name = \"seq-write\""))?;
        if !crate::record::is_label(&name) {
            return Err(r.at(
                Some(line),
                "a study's name is 1 to 64 printable characters",
                "give name = \"seq-write\"",
            ));
        }
        if study_at.insert(name.clone(), studies.len()).is_some() {
            return Err(r.at(
                Some(line),
                format!("[[study]] name '{name}' is given twice"),
                "give each study its own name",
            ));
        }
        let (kind, _) = kind.ok_or_else(|| {
            r.at(
                Some(line),
                format!("[[study]] '{name}' has no kind"),
                &format!("give kind = one of {}", Kind::NAMES.join(", ")),
            )
        })?;
        let kind = Kind::from_name(&kind).expect("checked against the names");
        only_of.push(only);
        studies.push(Study { name, kind, targets: Vec::new(), settings, line: Some(line) });
    }
    if studies.is_empty() {
        return Err(r.at(None, "names no [[study]]", "add a [[study]] with a name and a kind"));
    }

    let mut cache = super::CacheRules::default();
    if let Some(v) = top.get("cache") {
        let t = r.table_of(v, "[cache]", &["drop-caches", "direct", "reorder", "data", "data-rule"])?;
        let flag = |key: &str| -> Result<bool, FileError> {
            t.get(key).map_or(Ok(false), |v| r.boolean(v, &format!("[cache] {key}")))
        };
        cache.drop_caches = flag("drop-caches")?;
        cache.direct = flag("direct")?;
        cache.reorder = flag("reorder")?;
        if let Some(v) = t.get("data") {
            let text = r.string(v, "[cache] data")?;
            cache.data_times_ram = Some(times_ram(&text).ok_or_else(|| {
                r.at(
                    Some(v.line),
                    format!("[cache] data '{text}' is not a multiple of RAM"),
                    "give data = \"2x ram\" (data per node at least twice its memory)",
                )
            })?);
        }
        if let Some(v) = t.get("data-rule") {
            cache.flag_only = r.choice(v, "[cache] data-rule", &["refuse", "flag"])? == "flag";
        }
    }

    let mut hooks = Hooks::default();
    if let Some(v) = top.get("hooks") {
        let t = r.table_of(v, "[hooks]", &["before-run", "after-run", "before-study", "after-study"])?;
        for (key, slot) in [
            ("before-run", &mut hooks.before_run),
            ("after-run", &mut hooks.after_run),
            ("before-study", &mut hooks.before_study),
            ("after-study", &mut hooks.after_study),
        ] {
            if let Some(v) = t.raw(key) {
                *slot = Some(r.hook(v, key)?);
            }
        }
    }
    let batch = top.get("batch").map(|b| r.batch(b)).transpose()?;
    let mut named = Vec::new();
    for e in r.array_of_tables(top.get("event"), "[[event]]")? {
        let line = e.at;
        let t = r.table_of(&e, "[[event]]", &["study", "target", "clients", "at", "command"])?;
        let study = t.need("study", "[[event]]", &r)?.clone();
        let target = t.get("target").cloned();
        let clients = match t.get("clients") {
            None => None,
            Some(v) => match &v.value {
                Value::Int(n) if *n > 0 => Some(*n as usize),
                _ => return Err(r.at(Some(v.line), "[[event]] clients is a positive count", "give clients = 4")),
            },
        };
        let at = r.string(t.need("at", "[[event]]", &r)?, "[[event]] at")?;
        let command = r.string(t.need("command", "[[event]]", &r)?, "[[event]] command")?;
        let event = format!("{at}:{command}");
        if let Err(why) = crate::spec::event_arg(&event) {
            return Err(r.at(t.line("at"), format!("[[event]]: {why}"), "give at = \"30s\" and a command"));
        }
        named.push(Named { study, target, clients, event, line });
    }
    let names = Names { targets: &targets, target_at: &target_at, study_at: &study_at };
    let events = names.resolve(&r, &mut studies, only_of, named)?;
    Ok(Campaign {
        path: path.to_path_buf(),
        text: text.to_string(),
        name,
        repetitions,
        summary,
        order,
        budget_secs,
        targets,
        studies,
        cache,
        hooks,
        events,
        batch,
    })
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

/// What the file's references name: the targets by label, the studies by name.
struct Names<'a> {
    targets: &'a [TargetDef],
    target_at: &'a HashMap<String, usize>,
    study_at: &'a HashMap<String, usize>,
}

impl Names<'_> {
    /// Every reference of the file checked in one place, after it is read: each study's
    /// `targets` (labels of [[target]]s, each once, a device for run studies only) and each
    /// event's study and target (a run study, one of its targets). Whether an event matches
    /// a point is known only with the points (`points::points`).
    fn resolve(
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
            // The network's study only names the targets reached over it.
            let placed = |t: &&TargetDef| (t.device || t.s3) && !matches!(s.kind, Kind::Run | Kind::Net);
            if let Some(t) = s.targets.iter().map(|&k| &self.targets[k]).find(placed) {
                let what = if t.device { "the block device" } else { "the S3 bucket" };
                return Err(r.at(
                    s.line,
                    format!("study '{}' (kind {}) would run on {what} of target '{}'", s.name, s.kind.name(), t.label),
                    &format!(
                        "{} takes run studies only; give this study targets = [...] without it",
                        if t.device { "a device" } else { "a bucket" }
                    ),
                ));
            }
        }
        // The targets of each study an event names, as a set, made when first needed: a file
        // may hold thousands of targets and of events.
        let mut runs_on: HashMap<usize, HashSet<usize>> = HashMap::new();
        named.into_iter().map(|e| self.event(r, studies, &mut runs_on, e)).collect()
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

/// "2x ram" as 2.0.
fn times_ram(text: &str) -> Option<f64> {
    let lower = text.to_lowercase().replace(' ', "");
    let n = lower.strip_suffix("xram")?.parse::<f64>().ok()?;
    (n.is_finite() && n > 0.0).then_some(n)
}

/// A value with its line.
#[derive(Clone)]
struct Item {
    value: Value,
    line: usize,
}

/// A table's entries with their lines, the raw values kept for nested tables.
struct Entries<'d, 'i> {
    items: Vec<(String, Item)>,
    raw: Vec<(String, &'d Spanned<DeValue<'i>>)>,
}

impl<'d, 'i> Entries<'d, 'i> {
    fn get(&self, key: &str) -> Option<&Item> {
        self.items.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn raw(&self, key: &str) -> Option<&'d Spanned<DeValue<'i>>> {
        self.raw.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    fn line(&self, key: &str) -> Option<usize> {
        self.get(key).map(|v| v.line)
    }

    fn need(&self, key: &str, table: &str, r: &Reader) -> Result<&Item, FileError> {
        self.get(key).ok_or_else(|| r.at(None, format!("{table} has no {key}"), &format!("give {table} a {key}")))
    }
}

/// A table of the array `[[name]]`, with the line it begins on.
struct Element<'d, 'i> {
    value: &'d DeValue<'i>,
    at: usize,
}

impl<'d, 'i> std::ops::Deref for Element<'d, 'i> {
    type Target = DeValue<'i>;
    fn deref(&self) -> &DeValue<'i> {
        self.value
    }
}

struct Reader<'a> {
    line_of: &'a dyn Fn(usize) -> usize,
    path: &'a Path,
}

impl Reader<'_> {
    fn at(&self, line: Option<usize>, what: impl Into<String>, hint: &str) -> FileError {
        FileError { path: self.path.to_path_buf(), line, what: what.into(), hint: hint.to_string() }
    }

    /// The top-level keys, each checked against `known`.
    fn table<'d, 'i>(
        &self,
        t: &'d DeTable<'i>,
        what: &str,
        known: &[&str],
    ) -> Result<std::collections::BTreeMap<String, Element<'d, 'i>>, FileError> {
        let mut out = std::collections::BTreeMap::new();
        for (k, v) in t {
            let key = k.get_ref().to_string();
            let line = (self.line_of)(k.span().start);
            self.known(&key, line, what, known)?;
            out.insert(key, Element { value: v.get_ref(), at: (self.line_of)(v.span().start) });
        }
        Ok(out)
    }

    fn known(&self, key: &str, line: usize, what: &str, known: &[&str]) -> Result<(), FileError> {
        let spelled = key.replace('_', "-");
        if known.contains(&spelled.as_str()) {
            return Ok(());
        }
        let hint = match crate::spelling::nearest(&spelled, known.iter().copied()) {
            Some(near) => format!("did you mean '{near}'?"),
            None => format!("the keys of {what} are {}", known.join(", ")),
        };
        Err(self.at(Some(line), format!("{what}: unknown key '{key}'"), &hint))
    }

    /// A table's entries, each key checked against `known` (`_` read as `-`).
    fn table_of<'d, 'i>(&self, e: &Element<'d, 'i>, what: &str, known: &[&str]) -> Result<Entries<'d, 'i>, FileError> {
        let Some(t) = e.value.as_table() else {
            return Err(self.at(
                Some(e.at),
                format!("{what} is not a table"),
                &format!("write {what} on a line of its own, its keys below"),
            ));
        };
        let mut out = Entries { items: Vec::new(), raw: Vec::new() };
        for (k, v) in t {
            let key = k.get_ref().replace('_', "-");
            self.known(k.get_ref(), (self.line_of)(k.span().start), what, known)?;
            if v.get_ref().is_table() {
                // Only a hook may be a table; anywhere else a table would be dropped unread.
                if what != "[hooks]" {
                    return Err(self.at(
                        Some((self.line_of)(k.span().start)),
                        format!("{what} {key} is a table, which it cannot be"),
                        "give a string, a number or true/false",
                    ));
                }
                out.raw.push((key, v));
            } else {
                if out.items.iter().any(|(k, _)| *k == key) {
                    return Err(self.at(
                        Some((self.line_of)(k.span().start)),
                        format!("{what} {key} is given twice (as '-' and '_')"),
                        "give it once",
                    ));
                }
                out.items.push((key.clone(), self.item(v)?));
                out.raw.push((key, v));
            }
        }
        Ok(out)
    }

    /// The tables of `[[what]]`.
    fn array_of_tables<'d, 'i>(
        &self,
        e: Option<&Element<'d, 'i>>,
        what: &str,
    ) -> Result<Vec<Element<'d, 'i>>, FileError> {
        let Some(e) = e else { return Ok(Vec::new()) };
        let Some(items) = e.value.as_array() else {
            return Err(self.at(
                Some(e.at),
                format!("{what} must be written [{what}]: one table per entry"),
                &format!("write {what} above each entry"),
            ));
        };
        Ok(items.iter().map(|v| Element { value: v.get_ref(), at: (self.line_of)(v.span().start) }).collect())
    }

    fn item(&self, v: &Spanned<DeValue>) -> Result<Item, FileError> {
        let line = (self.line_of)(v.span().start);
        let value = match v.get_ref() {
            DeValue::String(s) => Value::Str(s.to_string()),
            DeValue::Integer(n) => {
                Value::Int(i64::from_str_radix(&n.as_str().replace('_', ""), n.radix()).map_err(|_| {
                    self.at(
                        Some(line),
                        format!("{} is not a whole number iosurvey can hold", n.as_str()),
                        "give a smaller number",
                    )
                })?)
            }
            DeValue::Float(x) => Value::Float(x.as_str().replace('_', "").parse().map_err(|_| {
                self.at(Some(line), format!("{} is not a number", x.as_str()), "give a plain number, e.g. 2.5")
            })?),
            DeValue::Boolean(b) => Value::Bool(*b),
            DeValue::Array(items) => {
                Value::List(items.iter().map(|i| self.item(i).map(|i| i.value)).collect::<Result<_, _>>()?)
            }
            DeValue::Datetime(_) => {
                return Err(self.at(Some(line), "a date is no setting here", "give a string, a number or true/false"))
            }
            DeValue::Table(_) => {
                return Err(self.at(Some(line), "a table is no setting here", "give a string, a number or true/false"))
            }
        };
        Ok(Item { value, line })
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

    /// The `[batch]` table: what a site's batch system needs and only the site can say
    /// (partition, account, launcher, modules) must be given, even as "" or [] for none, so
    /// that no script guesses it; the rest has a stated default.
    #[allow(clippy::too_many_lines)] // TODO(lead): owned by another branch this session
    fn batch(&self, e: &Element) -> Result<Batch, FileError> {
        let what = "[batch]";
        let t = self.table_of(e, what, Batch::KEYS)?;
        let text = |key: &str| -> Result<String, FileError> {
            let v = t.get(key).ok_or_else(|| {
                self.at(
                    Some(e.at),
                    format!("{what} has no {key}, which only the site can choose"),
                    &format!("give {key} = \"...\" (\"\" for the site's default)"),
                )
            })?;
            self.string(v, &format!("{what} {key}"))
        };
        let lines = |key: &str, needed: bool| -> Result<Vec<String>, FileError> {
            match t.get(key) {
                Some(Item { value: Value::List(items), line }) => items
                    .iter()
                    .map(|v| self.string(&Item { value: v.clone(), line: *line }, &format!("{what} {key}")))
                    .collect(),
                Some(v) => Ok(vec![self.string(v, &format!("{what} {key}"))?]),
                None if needed => Err(self.at(
                    Some(e.at),
                    format!("{what} has no {key}, which only the site can choose"),
                    &format!("give {key} = [\"...\"] ([] for none)"),
                )),
                None => Ok(Vec::new()),
            }
        };
        // Each value lands in a script: a directive takes one word, and no value may hold a
        // line's end (a line of its own would be a command, and end the directives).
        let word = |key: &str, v: String| -> Result<String, FileError> {
            match v.chars().find(|c| !(c.is_ascii_alphanumeric() || "_.,:+@/-".contains(*c))) {
                Some(c) => Err(self.at(
                    t.line(key),
                    format!(
                        "{what} {key} '{}' holds {c:?}, which a batch directive cannot take",
                        crate::escape::visible(&v)
                    ),
                    "give the name as the batch system knows it: letters, digits and _.,:+@/-",
                )),
                None => Ok(v),
            }
        };
        let line = |key: &str, v: String| -> Result<String, FileError> {
            match v.chars().any(char::is_control) {
                true => Err(self.at(
                    t.line(key),
                    format!(
                        "{what} {key} holds a control character (a line's end), which would split the script's line"
                    ),
                    &format!("give {key} as one line"),
                )),
                false => Ok(v),
            }
        };
        let launcher = line("launcher", text("launcher")?)?;
        if launcher.trim().is_empty() {
            return Err(self.at(
                t.line("launcher"),
                format!("{what} launcher is empty: the jobs need a command that starts their ranks"),
                "give launcher = \"srun\" (or \"mpirun\", with its options)",
            ));
        }
        let tasks_per_node = match t.get("tasks-per-node") {
            Some(v) => self.count(v, &format!("{what} tasks-per-node"), 1, 4096)? as usize,
            None => 1,
        };
        let nodes = match t.get("nodes") {
            Some(v) => Some(self.count(v, &format!("{what} nodes"), 1, 100_000)? as usize),
            None => None,
        };
        let margin = match t.get("margin") {
            Some(Item { value: Value::Float(x), .. }) if (1.0..=100.0).contains(x) => *x,
            Some(Item { value: Value::Int(n), .. }) if (1..=100).contains(n) => *n as f64,
            Some(v) => {
                return Err(self.at(
                    Some(v.line),
                    format!("{what} margin is a factor from 1 to 100, not {}", v.value.as_arg()),
                    "give margin = 1.5 (the estimate times 1.5)",
                ))
            }
            None => 1.5,
        };
        let point_secs = match t.get("point-time") {
            Some(v) => {
                let text = self.string(v, &format!("{what} point-time"))?;
                let ns = crate::units::parse_long_duration(&text)
                    .and_then(|ns| if ns > 0 { Ok(ns) } else { Err("no time".into()) })
                    .map_err(|why| {
                        self.at(Some(v.line), format!("{what} point-time '{text}': {why}"), "give point-time = \"10m\"")
                    })?;
                Some(ns as f64 / 1e9)
            }
            None => None,
        };
        let iosurvey = match t.get("iosurvey") {
            Some(v) => match line("iosurvey", self.string(v, &format!("{what} iosurvey"))?)? {
                b if b.trim().is_empty() => {
                    return Err(self.at(
                        Some(v.line),
                        format!("{what} iosurvey is empty"),
                        "give the path of iosurvey on the compute nodes, or leave the key out",
                    ))
                }
                b => Some(b),
            },
            None => None,
        };
        Ok(Batch {
            partition: word("partition", text("partition")?)?,
            account: word("account", text("account")?)?,
            launcher,
            modules: lines("modules", true)?.into_iter().map(|m| word("modules", m)).collect::<Result<_, _>>()?,
            setup: lines("setup", false)?.into_iter().map(|l| line("setup", l)).collect::<Result<_, _>>()?,
            tasks_per_node,
            nodes,
            margin,
            point_secs,
            iosurvey,
        })
    }

    /// A hook: a command (run on the lead, its failure failing the point), or a table of
    /// `command`, `on` (lead or every-node) and `on-failure` (fail or ignore).
    fn hook(&self, v: &Spanned<DeValue>, key: &str) -> Result<Hook, FileError> {
        let what = format!("[hooks] {key}");
        let line = (self.line_of)(v.span().start);
        if !v.get_ref().is_table() {
            let command = self.string(&self.item(v)?, &what)?;
            return Ok(Hook { command, place: HookPlace::Lead, ignore_failure: false, line: Some(line) });
        }
        let t = self.table_of(&Element { value: v.get_ref(), at: line }, &what, &["command", "on", "on-failure"])?;
        let command = self.string(t.need("command", &what, self)?, &format!("{what} command"))?;
        let place = match t.get("on") {
            Some(v) if self.choice(v, &format!("{what} on"), &["lead", "every-node"])? == "every-node" => {
                HookPlace::EveryNode
            }
            _ => HookPlace::Lead,
        };
        let ignore_failure = match t.get("on-failure") {
            Some(v) => self.choice(v, &format!("{what} on-failure"), &["fail", "ignore"])? == "ignore",
            None => false,
        };
        Ok(Hook { command, place, ignore_failure, line: Some(line) })
    }
}
