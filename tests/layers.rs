//! The rooms' order, held: every `crate::` path in the library and every `iosurvey::` path in
//! the sources names a room listed before the room it is written in, in the one table at
//! src/lib.rs ("Layers"). An import that goes back, or a room the table does not place, fails
//! here with its file and line, so a cycle cannot come back unnoticed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The table: rooms in order, read from the `text` block under src/lib.rs's "# Layers".
fn table(lib: &str) -> Vec<String> {
    let mut lines = lib.lines().map(|l| l.trim_start_matches("//!").trim());
    lines.by_ref().find(|l| *l == "# Layers").expect("src/lib.rs has a \"# Layers\" section");
    lines.by_ref().find(|l| *l == "```text").expect("the layers are in a ```text block");
    let mut order = Vec::new();
    for line in lines.take_while(|l| *l != "```") {
        let (_, rooms) = line.split_once(':').unwrap_or_else(|| panic!("a layer line is `name: rooms`: {line}"));
        order.extend(rooms.split_whitespace().map(str::to_string));
    }
    order
}

fn ident(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// The first segment of each path after `prefix` (`crate::` or `iosurvey::`), with its line:
/// `crate::a::b` gives a, `crate::{a::x, b}` gives a and b.
fn used(text: &str, prefix: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(prefix).map(|i| i + from) {
        from = at + prefix.len();
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let line = text[..at].matches('\n').count() + 1;
        let rest = &text[from..];
        if let Some(group) = rest.strip_prefix('{') {
            // The names at the group's top level: the first of each comma-separated item.
            let (mut depth, mut start) = (0usize, true);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_ascii_alphabetic() || c == '_') => {
                        out.push((line, ident(&group[i..]).to_string()));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push((line, ident(rest).to_string()));
        }
    }
    out
}

/// The part of a file that is not its test module: tests may use any room. Clippy
/// (`items_after_test_module`) keeps the test module last, so it ends the file.
fn outside_tests(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |cut| &text[..cut])
}

/// Every path in `file` (in room `room`) that goes back against `order`, as `FILE:LINE: ...`.
fn back_edges(order: &[String], file: &str, room: &str, text: &str) -> Vec<String> {
    let pos: HashMap<&str, usize> = order.iter().enumerate().map(|(i, r)| (r.as_str(), i)).collect();
    let Some(&mine) = pos.get(room) else {
        return vec![format!(
            "{file}: room `{room}` is not in the layer table (src/lib.rs, \"# Layers\"); place it there"
        )];
    };
    // In the binary, `crate::` is the binary's own; the library is `iosurvey::`.
    let prefixes: &[&str] = if room == "cli" { &["iosurvey::"] } else { &["crate::", "iosurvey::"] };
    let text = outside_tests(text);
    let mut bad = Vec::new();
    for prefix in prefixes {
        for (line, name) in used(text, prefix) {
            match pos.get(name.as_str()) {
                Some(&theirs) if theirs > mine => bad.push(format!(
                    "{file}:{line}: `{room}` uses `{name}`, a room after it in the layer table (src/lib.rs, \"# Layers\"): \
                     move what it needs below `{room}`, or `{room}`'s code above `{name}`"
                )),
                _ => {}
            }
        }
    }
    bad
}

/// Every `.rs` file below `root`.
fn rust_files(root: &Path) -> Vec<PathBuf> {
    let (mut dirs, mut files) = (vec![root.to_path_buf()], Vec::new());
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path());
        for path in entries {
            match path.is_dir() {
                true => dirs.push(path),
                false if path.extension().is_some_and(|e| e == "rs") => files.push(path),
                false => {}
            }
        }
    }
    files
}

/// The room a source file is in: its first component under src/ (`main.rs` is the binary's).
fn room_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    match first.strip_suffix(".rs") {
        Some("main") => "cli".into(),
        Some(stem) => stem.into(),
        None => first,
    }
}

#[test]
fn every_room_uses_only_rooms_before_it_in_the_layer_table() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let order = table(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let files = rust_files(&src);
    assert!(files.len() > 50, "the sources were found ({} files)", files.len());
    let mut bad = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("src/lib.rs")) {
        let relative = file.strip_prefix(&src).unwrap();
        let text = std::fs::read_to_string(file).unwrap();
        bad.extend(back_edges(&order, &format!("src/{}", relative.display()), &room_of(relative), &text));
    }
    bad.sort();
    bad.dedup();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_layer_table_places_each_room_once() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let order = table(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut seen = std::collections::HashSet::new();
    for room in &order {
        assert!(seen.insert(room), "`{room}` is placed twice in the layer table");
        let exists = src.join(room).is_dir() || src.join(format!("{room}.rs")).is_file();
        assert!(exists, "the layer table names `{room}`, which is not a room in src/");
    }
}

#[test]
fn the_architecture_document_shows_the_layer_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let block = |text: &str| -> Vec<String> {
        let mut lines = text.lines().map(|l| l.trim_start_matches("//!").trim().to_string());
        lines.by_ref().find(|l| l == "# Layers" || l == "## Layers").expect("a Layers section");
        lines.by_ref().find(|l| l == "```text").expect("a ```text block");
        lines.take_while(|l| l != "```").collect()
    };
    assert_eq!(block(&doc), block(&lib), "docs/architecture.md's \"Layers\" shows src/lib.rs's table as it is");
}

#[test]
fn a_planted_back_edge_is_found_and_a_forward_one_is_not() {
    let lib = "//! # Layers\n//!\n//! ```text\n//! ground: units sys\n//! data:   spec record\n//! doing:  engine store\n//! binary: cli\n//! ```\n";
    let order = table(lib);
    assert_eq!(order, ["units", "sys", "spec", "record", "engine", "store", "cli"]);
    let forward = "use crate::units::Size;\nuse crate::{record::RunRecord, spec::{Op, Workload}};\n";
    assert!(back_edges(&order, "src/engine/x.rs", "engine", forward).is_empty());
    // Planted: record reaching up to the engine, in a path, a group and a doc link.
    let planted = "use crate::spec::Op;\nuse crate::{units::Size, engine::Cancel};\n/// See [`crate::store::Store`].\nfn f() { iosurvey::engine::run(); }\n";
    let bad = back_edges(&order, "src/record/mod.rs", "record", planted);
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[0].starts_with("src/record/mod.rs:2: `record` uses `engine`"), "{}", bad[0]);
    assert!(bad[1].starts_with("src/record/mod.rs:3: `record` uses `store`"), "{}", bad[1]);
    assert!(bad[2].starts_with("src/record/mod.rs:4: `record` uses `engine`"), "{}", bad[2]);
    // Tests may use any room; a word ending in the prefix is no path.
    let tested = "fn f() {}\nlet x = mycrate::engine;\n#[cfg(test)]\nmod tests {\n    use crate::store::Store;\n}\n";
    assert!(back_edges(&order, "src/record/mod.rs", "record", tested).is_empty());
    // The binary's `crate::` is its own; its `iosurvey::` paths are the library's.
    assert!(back_edges(&order, "src/cli/mod.rs", "cli", "use crate::cli::x;\nuse iosurvey::store::Store;\n").is_empty());
    // A room the table does not place is named.
    let unplaced = back_edges(&order, "src/train/mod.rs", "train", "");
    assert!(unplaced[0].contains("room `train` is not in the layer table"), "{unplaced:?}");
}
