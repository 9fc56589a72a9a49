//! Stores merged into one (`iosurvey merge`): on a cluster each batch job writes a store of
//! its own (several writers of one SQLite file on a parallel file system are not safe), and
//! the stores are merged afterwards.
//!
//! A row is known by its uid (v16): runs, groups, network figures and hooks each by their
//! own, a run's nodes with their run, an import by its file's digest. A row already in the
//! destination with equal content is passed over, so merging twice changes nothing; equal
//! uids with other content refuse the whole merge. Ids and group names taken in the
//! destination are renumbered, and every reference to them (a run's group, a group's parent,
//! a hook's campaign, a matrix's cell runs, an import's rows, a record's group number)
//! follows. docs/methodology.md, "Merging stores", says the rules.

use super::{Store, StoreError};
use crate::record::MatrixRecord;
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What merging one input store did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged {
    /// Runs added.
    pub runs: usize,
    /// Groups added.
    pub groups: usize,
    /// Network figures added.
    pub net: usize,
    /// Hooks added.
    pub hooks: usize,
    /// Imports added.
    pub imports: usize,
    /// Rows passed over: there already, or made from a file the destination imported too.
    pub already: usize,
    /// Groups named otherwise in the destination: (name in the input, name there).
    pub renamed: Vec<(String, String)>,
    /// Groups the input holds as still running, by their names in the destination.
    pub running: Vec<String>,
}

impl Store {
    /// Merges every store of `inputs` into this one, in one transaction: all of them, or
    /// nothing when any fails. The inputs are read from private copies and never written.
    pub fn merge(&mut self, inputs: &[PathBuf]) -> Result<Vec<Merged>, StoreError> {
        let into = self.path.clone();
        let identity = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        let here = identity(&into);
        if let Some(input) = inputs.iter().find(|i| here.is_some() && identity(i) == here) {
            return Err(StoreError::SameStore(input.clone()));
        }
        let wrap = |source| StoreError::Sqlite { path: into.clone(), source };
        // Immediate: the write lock is taken before anything is read, so no other command
        // writes between a row's check and its insert.
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate).map_err(wrap)?;
        let mut all = Vec::new();
        for input in inputs {
            let copy = Snapshot::take(input)?;
            let merging = Merging {
                tx: &tx,
                src: &copy.store.conn,
                input,
                into: &into,
                groups: HashMap::new(),
                numbers: HashMap::new(),
                highest_number: HashMap::new(),
                runs: HashMap::new(),
                net: HashMap::new(),
                skip: Skip::default(),
                done: Merged::default(),
                joined: Vec::new(),
            };
            all.push(merging.run()?);
        }
        tx.commit().map_err(wrap)?;
        Ok(all)
    }
}

/// The private copies of a merge in progress, for a signal that ends the process ([`abandon`]).
static TAKEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn taken() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TAKEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes the private copies of a merge that a signal ends; whether there were any (a
/// merge was in progress).
pub fn abandon() -> bool {
    let dirs = std::mem::take(&mut *taken());
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    !dirs.is_empty()
}

/// The private copies' directories in `$TMPDIR`: `iosurvey-merge-PID-RANDOM`.
const MERGE_DIRS: &str = "iosurvey-merge";

/// An input store's private copy, migrated to the current schema; removed when dropped.
struct Snapshot {
    dir: PathBuf,
    store: Store,
}

impl Snapshot {
    /// Copies `input` through SQLite (`VACUUM INTO`, from a read-only connection: one
    /// consistent moment of it, its file and journal untouched) into a directory only this
    /// process may enter, then opens the copy as every store is opened, migrating it.
    fn take(input: &Path) -> Result<Snapshot, StoreError> {
        let wrap = |source| StoreError::Sqlite { path: input.to_path_buf(), source };
        let mut head = Vec::new();
        let (file, _) = crate::input::open(input, crate::input::Links::Refuse).map_err(|e| {
            let why = match e {
                crate::input::InputError::Io(e) => unreadable(&e),
                _ => "it is not a regular file",
            };
            StoreError::NotAStore { path: input.to_path_buf(), why }
        })?;
        if let Err(e) = std::io::Read::read_to_end(&mut std::io::Read::take(file, 16), &mut head) {
            return Err(StoreError::NotAStore { path: input.to_path_buf(), why: unreadable(&e) });
        }
        if !head.is_empty() && head != b"SQLite format 3\0" {
            return Err(StoreError::NotAStore { path: input.to_path_buf(), why: "not an SQLite database" });
        }
        // A read-only connection cannot roll a killed writer's journal back, and SQLite would
        // blame the file's permissions.
        let mut journal = input.as_os_str().to_owned();
        journal.push("-journal");
        if std::fs::metadata(&journal).is_ok_and(|m| m.len() > 0) {
            return Err(StoreError::Unfinished(input.to_path_buf()));
        }
        let src =
            Connection::open_with_flags(input, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
                .map_err(wrap)?;
        super::schema_of(&src, input)?;
        let dir = crate::scratch::private_dir(MERGE_DIRS).map_err(|e| StoreError::Copy {
            path: input.to_path_buf(),
            to: std::env::temp_dir().join(format!("{MERGE_DIRS}-...")),
            why: e.to_string(),
        })?;
        taken().push(dir.clone());
        let copy = dir.join("store.db");
        let taken = src.execute("VACUUM INTO ?1", [copy.to_string_lossy()]).map_err(wrap).and_then(|_| {
            drop(src);
            let mut store = Store::connect(&copy, OpenFlags::default())?;
            store.path = input.to_path_buf();
            // A row written without a uid (by a program other than iosurvey) gets the one its
            // content derives, as the migration gives them, so merging it again adds nothing.
            super::uid::fill(&store.conn).map_err(wrap)?;
            checked(&store.conn, input)?;
            Ok(store)
        });
        match taken {
            Ok(store) => Ok(Snapshot { dir, store }),
            Err(e) => {
                forget(&dir);
                Err(e)
            }
        }
    }
}

/// The tables a merge copies, each with how a row is named in a line and its uid (an
/// import's digest; a node's run's uid).
const CHECKED: &[(&str, &str, &str)] = &[
    ("runs", "'its run ' || id", "uid"),
    ("groups", "'its group ' || letter || number", "uid"),
    ("net_runs", "'its network figure ' || id", "uid"),
    ("hooks", "'its hook ' || id", "uid"),
    ("nodes", "'a node of its run ' || run_id", "(SELECT r.uid FROM runs r WHERE r.id = nodes.run_id)"),
    ("imports", "'its import ' || id", "digest"),
];

/// Refuses the whole merge, before anything is copied, for the first row of the input's
/// copy that a reader could not decode: a value of another type than its column's (a store
/// made before tables were STRICT takes any), text that is not JSON where JSON is kept, a
/// run's record or a matrix that does not read back. Copied, one such row made `ls`,
/// `report` and `export` fail for the whole destination.
fn checked(conn: &Connection, input: &Path) -> Result<(), StoreError> {
    let wrap = |source| StoreError::Sqlite { path: input.to_path_buf(), source };
    let refuse = |what: String, uid: Option<String>, why: String| StoreError::Unmergeable {
        store: input.to_path_buf(),
        what,
        uid: uid.unwrap_or_else(|| "none".into()),
        why,
    };
    for (table, what, uid) in CHECKED {
        let columns: Vec<(String, String)> = conn
            .prepare(&format!("SELECT name, upper(type) FROM pragma_table_info('{table}')"))
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(wrap)?;
        let mut cases = Vec::new();
        for (name, kind) in &columns {
            let (allowed, held) = match kind.as_str() {
                "INTEGER" => ("'integer'", "whole numbers"),
                "REAL" => ("'real', 'integer'", "numbers"),
                _ => ("'text'", "text"),
            };
            cases.push(format!(
                "WHEN typeof({name}) NOT IN ('null', {allowed}) THEN 'holds ' || typeof({name}) || ' in its {name} column, which holds {held}'"
            ));
            if name.ends_with("_json") || (*table, name.as_str()) == ("imports", "stored") {
                cases.push(format!("WHEN {name} IS NOT NULL AND NOT json_valid({name}) THEN 'holds text that is not JSON in its {name} column'"));
            }
        }
        let sql = format!(
            "SELECT * FROM (SELECT {what}, {uid}, CASE {} END AS why FROM {table}) WHERE why IS NOT NULL LIMIT 1",
            cases.join(" ")
        );
        let bad: Option<(String, Option<String>, String)> =
            conn.query_row(&sql, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional().map_err(wrap)?;
        if let Some((what, uid, why)) = bad {
            return Err(refuse(what, uid, why));
        }
    }
    // Valid JSON of the wrong shape: what `show`, `report` and `ls` decode.
    let mut runs = conn.prepare("SELECT id, uid, record_json, headline_json FROM runs").map_err(wrap)?;
    let mut rows = runs.query([]).map_err(wrap)?;
    while let Some(r) = rows.next().map_err(wrap)? {
        let (id, uid): (i64, Option<String>) = (r.get(0).map_err(wrap)?, r.get(1).map_err(wrap)?);
        let (record, best): (Option<String>, Option<String>) = (r.get(2).map_err(wrap)?, r.get(3).map_err(wrap)?);
        let best_reads = |b: &String| serde_json::from_str::<Vec<crate::record::BestFigure>>(b).is_ok();
        let why = match record.map(|t| serde_json::from_str::<super::StoredRecord>(&t)) {
            None => Some("has no record".to_string()),
            Some(Err(e)) => Some(format!("has a record that does not read back ({e})")),
            Some(Ok(_)) if !best.as_ref().is_none_or(best_reads) => {
                Some("has best figures (headline_json) that do not read back".to_string())
            }
            Some(Ok(_)) => None,
        };
        if let Some(why) = why {
            return Err(refuse(format!("its run {id}"), uid, why));
        }
    }
    let mut matrices =
        conn.prepare("SELECT letter || number, uid, spec_json FROM groups WHERE kind = 'matrix'").map_err(wrap)?;
    let mut rows = matrices.query([]).map_err(wrap)?;
    while let Some(r) = rows.next().map_err(wrap)? {
        let (name, uid, spec): (String, Option<String>, String) =
            (r.get(0).map_err(wrap)?, r.get(1).map_err(wrap)?, r.get(2).map_err(wrap)?);
        if let Err(e) = serde_json::from_str::<MatrixRecord>(&spec) {
            return Err(refuse(format!("its group {name}"), uid, format!("is a matrix that does not read back ({e})")));
        }
    }
    Ok(())
}

/// Removes a private copy, and its name from those a signal would remove.
fn forget(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    taken().retain(|d| d != dir);
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        forget(&self.dir);
    }
}

fn unreadable(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "it may not be read",
        std::io::ErrorKind::NotFound => "it does not exist",
        _ => "it cannot be read",
    }
}

/// A table whose rows merge on their own, by uid.
struct Table {
    name: &'static str,
    /// What a row is called in a line.
    what: &'static str,
    /// Every column but `id` and `uid`: what is copied, and what must be equal.
    columns: &'static [&'static str],
}

const RUNS: Table = Table {
    name: "runs",
    what: "run",
    columns: &[
        "group_id",
        "name",
        "started",
        "status",
        "error",
        "command_line",
        "label",
        "spec_json",
        "warnings_json",
        "host",
        "target",
        "fs_type",
        "tool_version",
        "record_json",
        "provenance",
        "workload_key",
        "headline_json",
        "random",
        "system_label",
    ],
};

const NET: Table = Table {
    name: "net_runs",
    what: "network figure",
    columns: &[
        "started",
        "command_line",
        "pattern",
        "senders_json",
        "receivers_json",
        "message",
        "bytes",
        "window_ns",
        "bandwidth",
        "record_json",
    ],
};

const HOOKS: Table = Table {
    name: "hooks",
    what: "hook",
    columns: &[
        "campaign",
        "hook",
        "command",
        "study",
        "target",
        "key",
        "repetition",
        "node",
        "status",
        "output",
        "secs",
        "started",
        "tasks",
    ],
};

impl Table {
    fn at(&self, column: &str) -> usize {
        self.columns.iter().position(|c| *c == column).unwrap_or(usize::MAX)
    }
}

/// How a table's row is made the destination's (its references mapped), given its input id
/// and uid; false leaves it out.
type Fix = dyn Fn(&Merging<'_>, i64, &str, &mut [Value]) -> Result<bool, StoreError>;

/// What became of a row.
enum Fate {
    /// Inserted under this id.
    Added(i64),
    /// There already under this id, equal.
    There(i64),
    /// Left out: made from a file the destination imported too.
    Skipped,
}

/// The rows an input made from files the destination imported too: the destination keeps
/// what it made of each file, once.
#[derive(Default)]
struct Skip {
    runs: HashSet<i64>,
    /// Groups by letter and number.
    groups: HashSet<(String, i64)>,
    net: HashSet<i64>,
}

/// A group of the input, as read.
struct GroupIn {
    id: i64,
    kind: String,
    letter: String,
    number: i64,
    parent: Option<i64>,
    command_line: String,
    started: i64,
    state: String,
    spec: String,
    point: [Option<String>; 3],
    uid: String,
}

/// Where an input group went.
struct Placed {
    row: i64,
    number: i64,
    added: bool,
}

/// What an import said it became, as `store::imports` writes it.
type Became = super::imports::Became;

struct Merging<'a> {
    tx: &'a Connection,
    src: &'a Connection,
    input: &'a Path,
    into: &'a Path,
    /// Input group row -> where it went.
    groups: HashMap<i64, Placed>,
    /// Input (letter, number) -> number in the destination.
    numbers: HashMap<(String, i64), i64>,
    /// The input's highest group number of each letter.
    highest_number: HashMap<String, i64>,
    runs: HashMap<i64, i64>,
    net: HashMap<i64, i64>,
    skip: Skip,
    done: Merged,
    /// Campaign versions there already that this input joined, to settle once its runs are in.
    joined: Vec<i64>,
}

impl Merging<'_> {
    fn run(mut self) -> Result<Merged, StoreError> {
        let imports = self.imports_before()?;
        let groups = self.read_groups()?;
        self.place_groups(&groups)?;
        for (id, fate) in self.rows(&RUNS, &|m, id, uid, v| m.fix_run(id, uid, v))? {
            self.count(&fate, |d| &mut d.runs);
            if let Fate::Added(row) = fate {
                self.copy_nodes(id, row)?;
            }
            if let Fate::Added(row) | Fate::There(row) = fate {
                self.runs.insert(id, row);
            }
        }
        for (id, fate) in self.rows(&NET, &|m, id, _, _| Ok(!m.skip.net.contains(&id)))? {
            self.count(&fate, |d| &mut d.net);
            if let Fate::Added(row) | Fate::There(row) = fate {
                self.net.insert(id, row);
            }
        }
        for (_, fate) in self.rows(&HOOKS, &|m, id, uid, v| m.fix_hook(id, uid, v))? {
            self.count(&fate, |d| &mut d.hooks);
        }
        self.settle_groups(&groups)?;
        self.settle_campaigns()?;
        self.imports_after(imports)?;
        Ok(self.done)
    }

    fn count(&mut self, fate: &Fate, added: impl Fn(&mut Merged) -> &mut usize) {
        match fate {
            Fate::Added(_) => *added(&mut self.done) += 1,
            Fate::There(_) | Fate::Skipped => self.done.already += 1,
        }
    }

    fn at_src(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.input.to_path_buf(), source }
    }

    fn at_into(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite { path: self.into.to_path_buf(), source }
    }

    /// The merge refused for one row: `what` of the input, with its uid.
    fn refuse(&self, what: String, uid: &str, why: String) -> StoreError {
        StoreError::Unmergeable { store: self.input.to_path_buf(), what, uid: uid.to_string(), why }
    }

    /// A row there already with other content.
    fn differs(&self, what: String, uid: &str, column: &str) -> StoreError {
        let why = format!("is in {} already with other content (its {column} differs)", self.into.display());
        self.refuse(what, uid, why)
    }

    /// The input's imports: those of files the destination imported too are counted and
    /// what they made is left out; the others are returned, to be added last (they name the
    /// rows they made, by their ids in the destination).
    fn imports_before(&mut self) -> Result<Vec<(i64, Vec<Value>)>, StoreError> {
        let mut stmt = self
            .src
            .prepare("SELECT id, digest, file, tool, imported, stored FROM imports ORDER BY id")
            .map_err(|e| self.at_src(e))?;
        let rows: Vec<(i64, Vec<Value>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, (1..6).map(|i| r.get(i)).collect::<Result<_, _>>()?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.at_src(e))?;
        let mut left = Vec::new();
        for (id, row) in rows {
            let there: bool = self
                .tx
                .query_row("SELECT EXISTS (SELECT 1 FROM imports WHERE digest = ?1)", [&row[0]], |r| r.get(0))
                .map_err(|e| self.at_into(e))?;
            if !there {
                left.push((id, row));
                continue;
            }
            self.done.already += 1;
            let became: Became = match &row[4] {
                Value::Text(t) => serde_json::from_str(t).unwrap_or_default(),
                _ => Became::default(),
            };
            self.skip.runs.extend(became.runs);
            self.skip.net.extend(became.net);
            self.skip.groups.extend(became.list.map(|n| ("s".to_string(), n)));
            self.skip.groups.extend(became.matrix.map(|n| ("m".to_string(), n)));
        }
        Ok(left)
    }

    /// The imports left, with the ids and names of what they made as the destination has them.
    fn imports_after(&mut self, imports: Vec<(i64, Vec<Value>)>) -> Result<(), StoreError> {
        let highest = self.highest("imports")?;
        for (id, mut row) in imports {
            if let Value::Text(t) = &row[4] {
                if let Ok(b) = serde_json::from_str::<Became>(t) {
                    let number = |letter: &str, n: i64| *self.numbers.get(&(letter.to_string(), n)).unwrap_or(&n);
                    let mapped = Became {
                        runs: b.runs.iter().map(|r| *self.runs.get(r).unwrap_or(r)).collect(),
                        list: b.list.map(|n| number("s", n)),
                        matrix: b.matrix.map(|n| number("m", n)),
                        net: b.net.iter().map(|r| *self.net.get(r).unwrap_or(r)).collect(),
                    };
                    row[4] = Value::Text(serde_json::to_string(&mapped).unwrap_or_else(|_| t.clone()));
                }
            }
            let id = self.free_id("imports", id, highest)?;
            self.tx
                .execute(
                    "INSERT INTO imports (id, digest, file, tool, imported, stored) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params_from_iter(std::iter::once(Value::Integer(id)).chain(row)),
                )
                .map_err(|e| self.at_into(e))?;
            self.done.imports += 1;
        }
        Ok(())
    }

    /// The id a row of `table` takes in the destination: its own when free, else one past
    /// both the destination's highest and the input's (`highest`), so that it never takes
    /// the id a later row of the input keeps.
    fn free_id(&self, table: &str, id: i64, highest: i64) -> Result<i64, StoreError> {
        let (taken, top): (bool, i64) = self
            .tx
            .prepare_cached(&format!(
                "SELECT EXISTS (SELECT 1 FROM {table} WHERE id = ?1), COALESCE((SELECT MAX(id) FROM {table}), 0)"
            ))
            .and_then(|mut s| s.query_row([id], |r| Ok((r.get(0)?, r.get(1)?))))
            .map_err(|e| self.at_into(e))?;
        Ok(if taken { top.max(highest) + 1 } else { id })
    }

    /// The input's highest id in `table`.
    fn highest(&self, table: &str) -> Result<i64, StoreError> {
        self.src
            .query_row(&format!("SELECT COALESCE(MAX(id), 0) FROM {table}"), [], |r| r.get(0))
            .map_err(|e| self.at_src(e))
    }

    fn read_groups(&self) -> Result<Vec<GroupIn>, StoreError> {
        let mut stmt = self
            .src
            .prepare(
                "SELECT id, kind, letter, number, parent, command_line, started, state, spec_json, name, label, key, uid
                 FROM groups ORDER BY id",
            )
            .map_err(|e| self.at_src(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(GroupIn {
                    id: r.get(0)?,
                    kind: r.get(1)?,
                    letter: r.get(2)?,
                    number: r.get(3)?,
                    parent: r.get(4)?,
                    command_line: r.get(5)?,
                    started: r.get(6)?,
                    state: r.get(7)?,
                    spec: r.get(8)?,
                    point: [r.get(9)?, r.get(10)?, r.get(11)?],
                    uid: r.get(12)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.at_src(e))?;
        Ok(rows)
    }

    /// Every group placed, parents before their children: found by uid, or added under its
    /// own number when free, else the next of its letter.
    fn place_groups(&mut self, groups: &[GroupIn]) -> Result<(), StoreError> {
        for g in groups {
            let top = self.highest_number.entry(g.letter.clone()).or_default();
            *top = (*top).max(g.number);
        }
        let mut left: Vec<&GroupIn> =
            groups.iter().filter(|g| !self.skip.groups.contains(&(g.letter.clone(), g.number))).collect();
        while !left.is_empty() {
            let (ready, rest): (Vec<&GroupIn>, Vec<&GroupIn>) =
                left.into_iter().partition(|g| g.parent.is_none_or(|p| self.groups.contains_key(&p)));
            if ready.is_empty() {
                let g = rest[0];
                return Err(self.refuse(
                    format!("its group {}{}", g.letter, g.number),
                    &g.uid,
                    "is part of a group that store does not hold".into(),
                ));
            }
            for g in ready {
                self.place_group(g)?;
            }
            left = rest;
        }
        Ok(())
    }

    fn place_group(&mut self, g: &GroupIn) -> Result<(), StoreError> {
        let parent = g.parent.and_then(|p| self.groups.get(&p)).map(|p| p.row);
        let what = || format!("its group {}{}", g.letter, g.number);
        let there = self
            .tx
            .query_row(
                "SELECT id, number, kind, command_line, started, name, label, key, parent, spec_json, state
                 FROM groups WHERE uid = ?1",
                [&g.uid],
                |r| {
                    let same: Vec<Value> = (2..9).map(|i| r.get(i)).collect::<Result<_, _>>()?;
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        same,
                        r.get::<_, String>(9)?,
                        r.get::<_, String>(10)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.at_into(e))?;
        let placed = match there {
            Some((row, number, same, spec, state)) => {
                let text = |s: &Option<String>| s.clone().map_or(Value::Null, Value::Text);
                let mine = [
                    Value::Text(g.kind.clone()),
                    Value::Text(g.command_line.clone()),
                    Value::Integer(g.started),
                    text(&g.point[0]),
                    text(&g.point[1]),
                    text(&g.point[2]),
                    parent.map_or(Value::Null, Value::Integer),
                ];
                let names = ["kind", "command line", "start", "name", "label", "key", "parent"];
                if g.kind == "campaign" && same[0] == mine[0] {
                    // One campaign version run by several jobs: one group, all their points.
                    if without_file(&spec) != without_file(&g.spec) {
                        return Err(self.differs(what(), &g.uid, "campaign file"));
                    }
                    self.tx
                        .execute(
                            "UPDATE groups SET started = MIN(started, ?1), state = ?2 WHERE id = ?3",
                            params![g.started, joined(&state, &g.state), row],
                        )
                        .map_err(|e| self.at_into(e))?;
                    self.joined.push(row);
                } else if let Some(k) = (0..mine.len()).find(|&k| same[k] != mine[k]) {
                    return Err(self.differs(what(), &g.uid, names[k]));
                }
                self.done.already += 1;
                Placed { row, number, added: false }
            }
            None => self.add_group(g, parent)?,
        };
        if placed.number != g.number {
            self.done.renamed.push((format!("{}{}", g.letter, g.number), format!("{}{}", g.letter, placed.number)));
        }
        if g.state == "running" {
            self.done.running.push(format!("{}{}", g.letter, placed.number));
        }
        self.numbers.insert((g.letter.clone(), g.number), placed.number);
        self.groups.insert(g.id, placed);
        Ok(())
    }

    /// Adds group `g` under `parent` (a row), as its own number when that is free, else as the
    /// next of its letter past both stores' numbers.
    fn add_group(&mut self, g: &GroupIn, parent: Option<i64>) -> Result<Placed, StoreError> {
        let taken: bool = self
            .tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM groups WHERE letter = ?1 AND number = ?2)",
                params![g.letter, g.number],
                |r| r.get(0),
            )
            .map_err(|e| self.at_into(e))?;
        // Past the input's own numbers too, as ids are (`free_id`).
        let highest = self.highest_number.get(&g.letter).copied().unwrap_or(0);
        let number = match taken {
            true => self
                .tx
                .query_row(
                    "SELECT MAX(MAX(number), ?2) + 1 FROM groups WHERE letter = ?1",
                    params![g.letter, highest],
                    |r| r.get(0),
                )
                .map_err(|e| self.at_into(e))?,
            false => g.number,
        };
        self.tx
            .execute(
                "INSERT INTO groups (kind, letter, number, parent, command_line, started, state, spec_json,
                    name, label, key, uid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    g.kind,
                    g.letter,
                    number,
                    parent,
                    g.command_line,
                    g.started,
                    g.state,
                    g.spec,
                    g.point[0],
                    g.point[1],
                    g.point[2],
                    g.uid
                ],
            )
            .map_err(|e| self.at_into(e))?;
        self.done.groups += 1;
        Ok(Placed { row: self.tx.last_insert_rowid(), number, added: true })
    }

    /// Once the runs are placed: each group's state and spec (a matrix's names its cells'
    /// runs), set for those added, compared for those there. A group there as running takes
    /// the input's end (its command finished after a first merge); one the input holds as
    /// running is older than the destination's.
    fn settle_groups(&self, groups: &[GroupIn]) -> Result<(), StoreError> {
        for g in groups {
            let Some(placed) = self.groups.get(&g.id) else { continue };
            let spec = self.spec_there(g);
            let (state, had): (String, String) = self
                .tx
                .query_row("SELECT state, spec_json FROM groups WHERE id = ?1", [placed.row], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .map_err(|e| self.at_into(e))?;
            let update = match (placed.added, g.kind.as_str()) {
                (true, _) => spec != had,
                (false, "campaign") => false,
                _ if (state == g.state && spec == had) || g.state == "running" => false,
                _ if state == "running" => true,
                _ => {
                    let column = if state != g.state { "state" } else { "spec" };
                    return Err(self.differs(format!("its group {}{}", g.letter, g.number), &g.uid, column));
                }
            };
            if update {
                self.tx
                    .execute(
                        "UPDATE groups SET state = ?1, spec_json = ?2 WHERE id = ?3",
                        params![g.state, spec, placed.row],
                    )
                    .map_err(|e| self.at_into(e))?;
            }
        }
        Ok(())
    }

    /// A group's spec as the destination would hold it: a matrix's cells name their runs by
    /// id, which may have been renumbered.
    fn spec_there(&self, g: &GroupIn) -> String {
        if g.kind != "matrix" {
            return g.spec.clone();
        }
        let Ok(mut m) = serde_json::from_str::<MatrixRecord>(&g.spec) else { return g.spec.clone() };
        let mut changed = false;
        for run in m.cells.iter_mut().flat_map(|c| c.runs.iter_mut()) {
            if let Some(&there) = self.runs.get(run).filter(|&&t| t != *run) {
                *run = there;
                changed = true;
            }
        }
        // Rewritten only when a number changed, so an unchanged spec stays as stored.
        match changed {
            true => serde_json::to_string(&m).unwrap_or_else(|_| g.spec.clone()),
            false => g.spec.clone(),
        }
    }

    /// A run's group as the destination has it, and its record's group number with it.
    fn fix_run(&self, id: i64, uid: &str, v: &mut [Value]) -> Result<bool, StoreError> {
        if self.skip.runs.contains(&id) {
            return Ok(false);
        }
        let Value::Integer(group) = v[0] else { return Ok(true) };
        let name: Option<(String, i64)> = self
            .src
            .prepare_cached("SELECT letter, number FROM groups WHERE id = ?1")
            .and_then(|mut s| s.query_row([group], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(|e| self.at_src(e))?;
        let (letter, placed) = match (name, self.groups.get(&group)) {
            (Some((letter, _)), Some(placed)) => (letter, placed),
            // A run of a group made from a file the destination imported too.
            (Some(name), None) if self.skip.groups.contains(&name) => return Ok(false),
            _ => {
                let why = "belongs to a group that store does not hold".to_string();
                return Err(self.refuse(format!("its run {id}"), uid, why));
            }
        };
        v[0] = Value::Integer(placed.row);
        let field = match letter.as_str() {
            "s" => "survey_id",
            "w" => "sweep_id",
            "m" => "matrix_id",
            "c" => "campaign_id",
            _ => "targets_id",
        };
        let at = RUNS.at("record_json");
        let Value::Text(text) = &v[at] else { return Ok(true) };
        let path = format!("$.record.{field}");
        let old: Option<i64> = self
            .tx
            .query_row("SELECT CASE WHEN json_valid(?1) THEN json_extract(?1, ?2) END", params![text, path], |r| {
                r.get(0)
            })
            .map_err(|e| self.at_into(e))?;
        // Rewritten only when the number changed, so a record stays as stored where it can.
        if old.is_some_and(|n| n != placed.number) {
            v[at] = self
                .tx
                .query_row("SELECT json_set(?1, ?2, ?3)", params![text, path, placed.number], |r| r.get(0))
                .map_err(|e| self.at_into(e))?;
        }
        Ok(true)
    }

    /// A hook's campaign as the destination has it.
    fn fix_hook(&self, id: i64, uid: &str, v: &mut [Value]) -> Result<bool, StoreError> {
        let Value::Integer(campaign) = v[0] else { return Ok(true) };
        match self.groups.get(&campaign) {
            Some(placed) => {
                v[0] = Value::Integer(placed.row);
                Ok(true)
            }
            None => {
                Err(self.refuse(format!("its hook {id}"), uid, "belongs to a campaign that store does not hold".into()))
            }
        }
    }

    /// Every row of `t`, fixed by `fix` (false: left out), then found by uid and compared, or
    /// added under its own id when free.
    fn rows(&self, t: &Table, fix: &Fix) -> Result<Vec<(i64, Fate)>, StoreError> {
        let columns = t.columns.join(", ");
        let n = t.columns.len();
        let mut read = self
            .src
            .prepare(&format!("SELECT id, uid, {columns} FROM {} ORDER BY id", t.name))
            .map_err(|e| self.at_src(e))?;
        let mut rows = read.query([]).map_err(|e| self.at_src(e))?;
        let find = format!("SELECT id, {columns} FROM {} WHERE uid = ?1", t.name);
        let marks: Vec<String> = (3..n + 3).map(|i| format!("?{i}")).collect();
        let insert = format!("INSERT INTO {} (id, uid, {columns}) VALUES (?1, ?2, {})", t.name, marks.join(", "));
        let highest = self.highest(t.name)?;
        let mut fates = Vec::new();
        while let Some(r) = rows.next().map_err(|e| self.at_src(e))? {
            let (id, uid): (i64, String) =
                (r.get(0).map_err(|e| self.at_src(e))?, r.get(1).map_err(|e| self.at_src(e))?);
            let mut values: Vec<Value> =
                (2..n + 2).map(|i| r.get(i)).collect::<Result<_, _>>().map_err(|e| self.at_src(e))?;
            if !fix(self, id, &uid, &mut values)? {
                fates.push((id, Fate::Skipped));
                continue;
            }
            let there: Option<(i64, Vec<Value>)> = self
                .tx
                .prepare_cached(&find)
                .and_then(|mut s| {
                    s.query_row([&uid], |r| Ok((r.get(0)?, (1..=n).map(|i| r.get(i)).collect::<Result<_, _>>()?)))
                        .optional()
                })
                .map_err(|e| self.at_into(e))?;
            let fate = match there {
                Some((row, had)) => match (0..n).find(|&k| had[k] != values[k]) {
                    Some(k) => return Err(self.differs(format!("its {} {id}", t.what), &uid, t.columns[k])),
                    None => Fate::There(row),
                },
                None => {
                    let head = [Value::Integer(self.free_id(t.name, id, highest)?), Value::Text(uid)];
                    self.tx
                        .prepare_cached(&insert)
                        .and_then(|mut s| s.execute(params_from_iter(head.into_iter().chain(values))))
                        .map_err(|e| self.at_into(e))?;
                    Fate::Added(self.tx.last_insert_rowid())
                }
            };
            fates.push((id, fate));
        }
        Ok(fates)
    }

    /// The nodes of input run `id`, for its new row.
    fn copy_nodes(&self, id: i64, row: i64) -> Result<(), StoreError> {
        let mut stmt =
            self.src.prepare_cached("SELECT node, host FROM nodes WHERE run_id = ?1").map_err(|e| self.at_src(e))?;
        let nodes: Vec<(i64, String)> = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.at_src(e))?;
        for (node, host) in nodes {
            self.tx
                .prepare_cached("INSERT INTO nodes (run_id, node, host) VALUES (?1, ?2, ?3)")
                .and_then(|mut s| s.execute(params![row, node, host]))
                .map_err(|e| self.at_into(e))?;
        }
        Ok(())
    }
}

/// A campaign version's spec without the path its file was read from (jobs may name the
/// same file by other paths) and the process that ran it last (each job's own).
fn without_file(spec: &str) -> Option<serde_json::Value> {
    let mut v: serde_json::Value = serde_json::from_str(spec).ok()?;
    let o = v.as_object_mut()?;
    o.remove("file");
    o.remove("process");
    Some(v)
}

/// The state of a campaign version run by several jobs, before its points settle it
/// ([`Merging::settle_campaigns`]): running only while every part is (a job killed at its time
/// limit never ends its own, and must not keep the whole version running for good).
fn joined(a: &str, b: &str) -> &'static str {
    match (a, b) {
        ("running", "running") => "running",
        _ => "ok",
    }
}

/// Whether a campaign version holds a point none of whose attempts ended ok: its runs (a run
/// point's study, target, workload and tasks) and its groups (a study's point).
const FAILED_POINT: &str = "SELECT EXISTS (SELECT 1 FROM (
        SELECT MAX(status = 'ok') AS ok FROM runs WHERE group_id = ?1
            GROUP BY name, system_label, workload_key, json_extract(spec_json, '$.tasks')
        UNION ALL
        SELECT MAX(state = 'ok') FROM groups WHERE parent = ?1 GROUP BY name, label, key
    ) WHERE ok = 0)";

impl Merging<'_> {
    /// A campaign version that jobs joined is failed when one of its points has no attempt
    /// that ended ok, else ok (unless every part still runs): the same whatever order the
    /// stores are merged in, and a point run again after a failure mends it.
    fn settle_campaigns(&self) -> Result<(), StoreError> {
        for &row in &self.joined {
            let failed: bool = self.tx.query_row(FAILED_POINT, [row], |r| r.get(0)).map_err(|e| self.at_into(e))?;
            self.tx
                .execute(
                    "UPDATE groups SET state = ?1 WHERE id = ?2 AND state <> 'running'",
                    params![if failed { "failed" } else { "ok" }, row],
                )
                .map_err(|e| self.at_into(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{GroupId, GroupKind};
    use crate::store::GroupStart;

    /// A store with `surveys` surveys of one run each, and `loose` runs in none.
    fn made(path: &Path, surveys: usize, loose: usize) -> Store {
        let mut store = Store::open(path).unwrap();
        for _ in 0..surveys {
            let start = GroupStart {
                kind: GroupKind::Survey,
                parent: None,
                started: 1,
                command_line: "iosurvey survey".into(),
                spec: "{}".into(),
                point: None,
            };
            let GroupId { number, .. } = store.begin_group(&start).unwrap();
            let mut run = crate::record::fixtures::run(None);
            run.survey_id = Some(number);
            store.save(&run).unwrap();
        }
        for _ in 0..loose {
            store.save(&crate::record::fixtures::run(None)).unwrap();
        }
        store
    }

    #[test]
    fn a_taken_id_or_name_goes_past_the_inputs_own_and_a_free_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (into, input) = (dir.path().join("into.db"), dir.path().join("in.db"));
        let mut dest = made(&into, 1, 1);
        // s1 (run 1) and s2 (run 2), then runs 3 and 4 in no group.
        drop(made(&input, 2, 2));
        let merged = dest.merge(&[input]).unwrap();
        assert_eq!(merged[0].renamed, [("s1".to_string(), "s3".to_string())], "s2 was free and stays s2");
        assert_eq!((merged[0].runs, merged[0].groups, merged[0].already), (4, 2, 0));
        // Runs 1 and 2 were taken: past both stores' highest (4), so run 3 and 4 keep theirs.
        let placed: Vec<(i64, Option<i64>)> = dest.list().unwrap().iter().map(|r| (r.id, r.survey_id)).collect();
        assert_eq!(placed, [(1, Some(1)), (2, None), (3, None), (4, None), (5, Some(3)), (6, Some(2))]);
        for (id, survey) in [(5, 3), (6, 2)] {
            assert_eq!(dest.load(id).unwrap().survey_id, Some(survey), "the record follows its group's name");
        }
    }

    #[test]
    fn a_campaign_joined_runs_only_while_every_part_runs_and_its_points_settle_the_rest() {
        for (a, b, both) in [
            ("ok", "ok", "ok"),
            ("ok", "running", "ok"),
            ("running", "running", "running"),
            ("running", "failed", "ok"),
            ("failed", "ok", "ok"),
        ] {
            assert_eq!((joined(a, b), joined(b, a)), (both, both), "{a} and {b}");
        }
    }
}
