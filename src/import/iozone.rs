//! IOzone's output. The automatic mode's table (`-a`, and the same figures as `-R`'s Excel
//! reports when the table is not there) becomes a matrix, stored as mN: IOzone's table *is*
//! a file x record matrix of test kinds, iosurvey's matrix has a kind for each of its columns
//! but two, and its grids, peaks, cliffs and comparison of two matrices then read an imported
//! table as they read a measured one; runs per cell would scatter one table over hundreds of
//! runs that `ls` lists and nothing groups. The throughput mode (`-t N`) is one run of N
//! tasks. Figures are kB/s, IOzone's kB being 1024 bytes, or operations per second with
//! `-O` (then times the record size).

use super::text;
use super::{figures, phase, Bad, Imported, Made, KIB};
use crate::env::Environment;
use crate::measure::TimedFigures;
use crate::plan::matrix::{Grid, Kind, Shape};
use crate::record::{MatrixCell, MatrixRecord, IMPORTED};
use crate::spec::{Access, Data, Op, Workload};
use std::collections::BTreeMap;

/// What the file says before its figures.
#[derive(Default)]
struct Head {
    version: String,
    started: i64,
    command: String,
    /// Figures are operations per second (`-O`), not kB/s.
    ops: bool,
}

/// The kind of an automatic-mode column or Excel report, if iosurvey's matrix has it.
fn kind_of(name: &str) -> Option<Kind> {
    Some(match name {
        "write" | "Writer report" => Kind::Write,
        "rewrite" | "Re-writer report" => Kind::Rewrite,
        "read" | "Reader report" => Kind::Read,
        "reread" | "Re-Reader report" => Kind::Reread,
        "random read" | "Random read report" => Kind::RandomRead,
        "random write" | "Random write report" => Kind::RandomWrite,
        "bkwd read" | "Backward read report" => Kind::BackwardRead,
        "record rewrite" | "Record rewrite report" => Kind::RecordRewrite,
        "stride read" | "Stride read report" => Kind::StrideRead,
        "fwrite" | "Fwrite report" => Kind::StreamWrite,
        "fread" | "Fread report" => Kind::StreamRead,
        _ => return None,
    })
}

/// The title line of iosurvey's `iozone` output, before iosurvey's version.
const IOSURVEYS: &str = "Iozone: Performance Test of File I/O (iosurvey ";

/// A column's name split over words of one header line ("random read", as iosurvey's layout
/// writes it where IOzone stacks "random" over "read") made one again.
fn joined(columns: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in columns {
        match out.last_mut() {
            Some(last) if kind_of(last).is_none() && !OTHER_COLUMNS.contains(&last.as_str()) => {
                let pair = format!("{last} {word}");
                if kind_of(&pair).is_some() {
                    *last = pair;
                    continue;
                }
                out.push(word);
            }
            _ => out.push(word),
        }
    }
    out
}

/// IOzone's columns that are no kind of iosurvey's matrix, kept as parameters.
const OTHER_COLUMNS: [&str; 2] = ["frewrite", "freread"];

/// Reads IOzone's output.
pub fn parse(input: &str) -> Result<Imported, Bad> {
    let lines: Vec<&str> = input.lines().collect();
    let mut head = Head::default();
    for line in &lines {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("Version $Revision:") {
            head.version = rest.trim_end_matches('$').trim().to_string();
        } else if let Some(own) = line.strip_prefix(IOSURVEYS) {
            // iosurvey's own IOzone layout names itself where IOzone prints its revision.
            head.version = format!("iosurvey {}", own.trim_end_matches(')').trim());
        } else if let Some(at) = line.strip_prefix("Run began:") {
            head.started = text::ctime(at.trim()).unwrap_or(0);
        } else if let Some(c) = line.strip_prefix("Command line used:") {
            head.command = c.trim().to_string();
        } else if line.contains("Output is in") {
            head.ops = line.contains("operations");
        }
    }
    if head.version.is_empty() {
        return Err(Bad::at(1, "IOzone's 'Version $Revision: N $' line"));
    }
    if !lines.iter().any(|l| l.trim() == "iozone test complete.") {
        return Err(Bad::at(lines.len().max(1), "IOzone's 'iozone test complete.' (the file ends early)"));
    }
    let source = format!("iozone {}", head.version);
    let table = match lines.iter().position(|l| l.split_whitespace().take(2).eq(["kB", "reclen"])) {
        Some(at) => Some(auto_table(&lines, at)?),
        None => excel(&lines)?,
    };
    if let Some(values) = table {
        return Ok(Imported { source, matrix: Some(matrix(&head, values)), ..Imported::default() });
    }
    if lines.iter().any(|l| l.contains("Children see throughput")) {
        return Ok(Imported { source, runs: vec![throughput(&head, &lines)?], ..Imported::default() });
    }
    Err(Bad::at(lines.len().max(1), "IOzone's automatic table ('kB  reclen ...'), Excel reports or throughput lines"))
}

/// Each figure: (file kB, record kB, column name, value as printed).
type Values = Vec<(u64, u64, String, f64)>;

/// The automatic mode's table whose header is at `at`; a column's name is its word with the
/// word above it that ends in the same place ("random" over "read").
fn auto_table(lines: &[&str], at: usize) -> Result<Values, Bad> {
    let ends = |line: &str| -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    out.push((i, line[s..i].to_string()));
                    start = None;
                }
                _ => {}
            }
        }
        out
    };
    let above: BTreeMap<usize, String> =
        at.checked_sub(1).map(|i| ends(lines[i])).unwrap_or_default().into_iter().collect();
    let columns: Vec<String> = joined(
        ends(lines[at])
            .into_iter()
            .skip(2)
            .map(|(end, word)| above.get(&end).map_or(word.clone(), |top| format!("{top} {word}")))
            .collect(),
    );
    let mut values = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(at + 1) {
        let n = i + 1;
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            break;
        }
        if words.len() != columns.len() + 2 {
            return Err(Bad::at(
                n,
                format!(
                    "{} figures in IOzone's row (file kB, record kB, then one per column), found {}",
                    columns.len() + 2,
                    words.len()
                ),
            ));
        }
        let file = text::count(words[0], n, "a file size in kB")?;
        let record = text::count(words[1], n, "a record size in kB")?;
        for (w, column) in words[2..].iter().zip(&columns) {
            values.push((file, record, column.clone(), text::number(w, n, &format!("a figure for {column}"))?));
        }
    }
    Ok(values)
}

/// `-R`'s Excel reports ("Writer report", the record sizes, then a row per file size), if
/// the file has them.
fn excel(lines: &[&str]) -> Result<Option<Values>, Bad> {
    let mut values = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        if !(line.starts_with('"') && line.ends_with(" report\"")) {
            continue;
        }
        let name = line.trim_matches('"').to_string();
        let unquote = |w: &str| w.trim_matches('"').to_string();
        let Some(header) = lines.get(i) else {
            return Err(Bad::at(i, format!("the record sizes of IOzone's {name}")));
        };
        let records: Vec<u64> = header
            .split_whitespace()
            .map(|w| text::count(&unquote(w), i + 1, "a record size in kB"))
            .collect::<Result<_, _>>()?;
        i += 1;
        while let Some(row) = lines.get(i).filter(|l| l.trim_start().starts_with('"')) {
            let n = i + 1;
            i += 1;
            let words: Vec<&str> = row.split_whitespace().collect();
            let file = text::count(&unquote(words[0]), n, "a file size in kB")?;
            if words.len() - 1 > records.len() {
                return Err(Bad::at(n, format!("at most {} figures in IOzone's {name} row", records.len())));
            }
            for (w, record) in words[1..].iter().zip(&records) {
                values.push((file, *record, name.clone(), text::number(w, n, &format!("a figure of the {name}"))?));
            }
        }
    }
    Ok((!values.is_empty()).then_some(values))
}

/// A figure as bytes per second: kB/s, or operations per second of `record_kb` each.
fn rate(head: &Head, value: f64, record_kb: u64) -> f64 {
    if head.ops {
        value * record_kb as f64 * KIB
    } else {
        value * KIB
    }
}

fn matrix(head: &Head, values: Values) -> MatrixRecord {
    let mut files: Vec<u64> = values.iter().map(|v| v.0.saturating_mul(1024)).collect();
    let mut records: Vec<u64> = values.iter().map(|v| v.1.saturating_mul(1024)).collect();
    for sizes in [&mut files, &mut records] {
        sizes.sort_unstable();
        sizes.dedup();
    }
    let mut kinds: Vec<Kind> = Vec::new();
    let mut cells = Vec::new();
    let mut params = BTreeMap::new();
    for (file, record, column, value) in values {
        match kind_of(&column) {
            Some(kind) => {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
                cells.push(MatrixCell {
                    kind,
                    file: file.saturating_mul(1024),
                    record: record.saturating_mul(1024),
                    samples: vec![TimedFigures { team: Some(rate(head, value, record)), ..TimedFigures::default() }],
                    runs: Vec::new(),
                    possibly_cached: None,
                });
            }
            None => {
                let unit = if head.ops { "ops/s" } else { "kB/s" };
                params.insert(format!("iozone.{column} {file} kB file {record} kB records"), format!("{value} {unit}"));
            }
        }
    }
    let words = text::words(&head.command);
    let grid = Grid { files, records, all_records: words.iter().any(|w| w == "-z") };
    let shape = Shape {
        tasks: 1,
        per_node: 1,
        direct: words.iter().any(|w| w == "-I"),
        fsync: words.iter().any(|w| w == "-e"),
        seed: 0,
        stand_in: None,
    };
    MatrixRecord {
        started: head.started,
        command_line: head.command.clone(),
        env: Environment { tool_version: head.version.clone(), ..Environment::default() },
        adaptive: false,
        cells,
        notes: vec![format!("imported from iozone {}: one sample per cell, as IOzone measured it", head.version)],
        provenance: Some(format!("{IMPORTED}iozone {}", head.version)),
        tool_params: params,
        ..MatrixRecord::new(grid, kinds, shape, 0.3)
    }
}

/// The throughput mode's "Children see throughput for N initial writers = X kB/sec" blocks.
fn throughput(head: &Head, lines: &[&str]) -> Result<crate::record::RunRecord, Bad> {
    let (mut tasks, mut file, mut record) = (None, None, None);
    let mut phases = Vec::new();
    let mut ops = Vec::new();
    let mut params = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let (n, line) = (i + 1, line.trim());
        if let Some(rest) = line.strip_prefix("Throughput test with") {
            tasks = Some(text::count(rest.split_whitespace().next().unwrap_or(""), n, "IOzone's process count")?);
        } else if let Some(rest) =
            line.strip_prefix("Each process writes a").or_else(|| line.strip_prefix("Each thread writes a"))
        {
            let words: Vec<&str> = rest.split_whitespace().collect();
            file = words.first().and_then(|w| w.parse::<u64>().ok());
            record = words
                .iter()
                .position(|w| *w == "in")
                .and_then(|p| words.get(p + 1))
                .and_then(|w| w.parse::<u64>().ok());
        } else if let Some(rest) = line.strip_prefix("Children see throughput for") {
            let Children { name, children, per, parent } = children(lines, i, rest)?;
            let unit = if head.ops { "ops/s" } else { "kB/s" };
            params.insert(
                format!("iozone.{name}"),
                format!("children {children}, parent {} {unit}", parent.map_or("-".into(), |p| p.to_string())),
            );
            let op = match name.as_str() {
                "initial writers" => Op::Write,
                "rewriters" => Op::Rewrite,
                "readers" => Op::Read,
                "re-readers" => Op::Reread,
                _ => continue,
            };
            let rec = record.unwrap_or(0);
            let bytes = file.unwrap_or(0).saturating_mul(1024).saturating_mul(tasks.unwrap_or(1));
            let calls = bytes / rec.saturating_mul(1024).max(1);
            let mut f = figures(bytes, calls, 0.0, Some(rate(head, children, rec)), None);
            f.task_min = per[0].map(|v| rate(head, v, rec));
            f.task_max = per[1].map(|v| rate(head, v, rec));
            ops.push(op);
            phases.push(phase(op, 0, f));
        }
    }
    // Without IOzone's "Each process writes" line, the sizes its command line gave.
    let words = text::words(&head.command);
    let kb = |flag: &str| text::option_value(&words, flag).and_then(|v| text::size(&v)).map(|b| b / 1024);
    let (file, record) = (file.or_else(|| kb("-s")), record.or_else(|| kb("-r")));
    let (Some(tasks), Some(file), Some(record)) = (tasks, file, record) else {
        return Err(Bad::at(
            1,
            "IOzone's 'Throughput test with N processes' and 'Each process writes a N kByte file in N kByte records'",
        ));
    };
    let workload = Workload {
        ops,
        tasks: tasks.clamp(1, u32::MAX as u64) as usize,
        ..Workload::from(Data {
            access: Access::FilePerTask,
            transfer: record.saturating_mul(1024),
            block: file.saturating_mul(1024),
            ..Data::default()
        })
    };
    let made = Made {
        source: format!("iozone {}", head.version),
        workload,
        env: Environment { tool_version: head.version.clone(), ..Environment::default() },
        command_line: head.command.clone(),
        started: head.started,
    };
    Ok(super::run(made, phases, params))
}

/// A "Children see throughput for N NAME = X" block's figures: the phase's name, the
/// children's throughput, the min and max per process (or thread), and the parent's.
struct Children {
    name: String,
    children: f64,
    per: [Option<f64>; 2],
    parent: Option<f64>,
}

/// The block whose first line, `i` (0-based), goes on with `rest`: the min and max per child
/// within its next five lines, the parent's on the next one.
fn children(lines: &[&str], i: usize, rest: &str) -> Result<Children, Bad> {
    let n = i + 1;
    let name: Vec<&str> = rest.split('=').next().unwrap_or("").split_whitespace().skip(1).collect();
    let name = name.join(" ");
    let children = after_equals(lines[i].trim(), n)?;
    let mut per = [None, None];
    // Processes by default; threads with -T, as iosurvey's children are.
    for (k, prefix) in ["Min throughput per ", "Max throughput per "].iter().enumerate() {
        if let Some((j, l)) = lines.iter().enumerate().skip(i + 1).take(5).find(|(_, l)| l.trim().starts_with(prefix)) {
            per[k] = Some(after_equals(l, j + 1)?);
        }
    }
    let parent =
        lines.get(i + 1).filter(|l| l.trim().starts_with("Parent sees")).map(|l| after_equals(l, n + 1)).transpose()?;
    Ok(Children { name, children, per, parent })
}

/// The throughput after a line's '=', in kB/sec (or ops/s), of line `n`.
fn after_equals(line: &str, n: usize) -> Result<f64, Bad> {
    let value = line.split_once('=').map(|(_, v)| v.split_whitespace().next().unwrap_or("")).unwrap_or("");
    text::number(value, n, "a throughput in kB/sec after '='")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "\tVersion $Revision: 3.508 $\n\tCommand line used: iozone -a\n\tOutput is in kBytes/sec\n";

    /// An automatic-mode table as IOzone lays it out: every column right-aligned in 10
    /// characters, a column's first word above its second.
    fn table(columns: &[(&str, &str)], rows: &[&[u64]]) -> String {
        let mut top = format!("{:24}", "");
        let mut names = format!("{:>16}{:>8}", "kB", "reclen");
        for (above, name) in columns {
            top.push_str(&format!("{above:>10}"));
            names.push_str(&format!("{name:>10}"));
        }
        let mut text = format!("{HEAD}{top}\n{names}\n");
        for row in rows {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, v)| format!("{v:>w$}", w = if i < 2 { [16, 8][i] } else { 10 }))
                .collect();
            text.push_str(&cells.concat());
            text.push('\n');
        }
        text + "\niozone test complete.\n"
    }

    #[test]
    fn the_auto_table_becomes_a_matrix_of_bytes_per_second() {
        let columns = [
            ("", "write"),
            ("", "rewrite"),
            ("", "read"),
            ("", "reread"),
            ("random", "read"),
            ("random", "write"),
            ("", "frewrite"),
        ];
        let text = table(&columns, &[&[64, 4, 100, 200, 300, 400, 500, 600, 700]]);
        let m = parse(&text).unwrap().matrix.unwrap();
        assert_eq!(
            m.kinds,
            [Kind::Write, Kind::Rewrite, Kind::Read, Kind::Reread, Kind::RandomRead, Kind::RandomWrite]
        );
        let random_write = m.cells.iter().find(|c| c.kind == Kind::RandomWrite).unwrap();
        assert_eq!((random_write.file, random_write.record, random_write.rate()), (65536, 4096, Some(600.0 * 1024.0)));
        assert_eq!(m.tool_params.get("iozone.frewrite 64 kB file 4 kB records").map(String::as_str), Some("700 kB/s"));
        assert_eq!(m.provenance.as_deref(), Some("imported:iozone 3.508"));
    }

    #[test]
    fn operations_per_second_count_whole_records() {
        let text = table(&[("", "write")], &[&[64, 4, 10]])
            .replace("Output is in kBytes/sec", "OPS Mode. Output is in operations per second.");
        let m = parse(&text).unwrap().matrix.unwrap();
        assert_eq!(m.cells[0].rate(), Some(10.0 * 4096.0));
    }

    #[test]
    fn a_record_size_past_u64_in_bytes_does_not_overflow() {
        // Found by the import_iozone fuzz target (fuzz/regressions/import_iozone): a record
        // of more than 2^54 kB overflowed when counted in bytes.
        let text = format!("{HEAD}\tThroughput test with 2 processes\n\tEach process writes a 256 kByte file in 18446744073709551615 kByte records\n\n\tChildren see throughput for  2 initial writers \t= 100.00 kB/sec\n\niozone test complete.\n");
        let r = &parse(&text).unwrap().runs[0];
        assert_eq!((r.phases[0].figures.ops, r.phases[0].figures.bandwidth), (0, Some(102_400.0)));
        let found = include_bytes!("../../fuzz/regressions/import_iozone/panic-mul-overflow-record");
        let _ = parse(&String::from_utf8_lossy(found));
    }

    #[test]
    fn a_short_row_and_a_cut_file_are_refused() {
        let short = format!("{HEAD}              kB  reclen    write    rewrite\n              64       4      100\n\niozone test complete.\n");
        assert_eq!(parse(&short).unwrap_err().line, 5);
        let cut = format!("{HEAD}              kB  reclen    write\n              64       4      100\n");
        assert!(parse(&cut).unwrap_err().expected.contains("ends early"));
        let excel = format!("{HEAD}\"Writer report\"\n        \"4\"  \"8\"\n\"64\"   5 x\n\niozone test complete.\n");
        assert_eq!(parse(&excel).unwrap_err().line, 6);
    }
}
