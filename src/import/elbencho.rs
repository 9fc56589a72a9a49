//! elbencho's results file, CSV (`--csvfile`) or JSON (`--jsonfile`: a list of objects with
//! the CSV's column names as keys): the rows of one command line a run, its WRITE and READ
//! rows a phase each at the "last done" figures (MiB/s, 2^20 bytes), the "first done"
//! figures as the rate while every thread was busy; the other rows (MKDIRS, STAT, ...) kept
//! as elbencho's own parameters.

use super::text::{self, Json};
use super::{figures, phase, Bad, Imported, Made, MIB};
use crate::env::Environment;
use crate::spec::{Access, Data, Op, Pattern, Workload};
use std::collections::BTreeMap;

/// One row: its line, and its fields by column name.
type Row = (usize, BTreeMap<String, String>);

/// Reads elbencho's CSV or JSON results file.
pub fn parse(input: &str) -> Result<Imported, Bad> {
    let rows = match input.trim_start().starts_with('[') {
        true => json_rows(input)?,
        false => csv_rows(input)?,
    };
    if rows.is_empty() {
        return Err(Bad::at(input.lines().count().max(1), "at least one row of elbencho's results"));
    }
    let version = rows[0].1.get("version").cloned().unwrap_or_default();
    let source = format!("elbencho {version}");
    let mut runs = Vec::new();
    let mut start = 0;
    let command_of = |r: &BTreeMap<String, String>| r.get("command").cloned().unwrap_or_default();
    while start < rows.len() {
        // A row without a command is one with an empty command: it never ends its own group.
        let command = command_of(&rows[start].1);
        let end = rows[start..].iter().position(|(_, r)| command_of(r) != command).map_or(rows.len(), |k| start + k);
        if let Some(run) = run_of(&rows[start..end], &command)? {
            runs.push(run);
        }
        start = end;
    }
    if runs.is_empty() {
        return Err(Bad::at(rows[0].0, "a WRITE or READ row in elbencho's results"));
    }
    Ok(Imported { source, runs, ..Imported::default() })
}

fn csv_rows(input: &str) -> Result<Vec<Row>, Bad> {
    let mut lines = input.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else { return Ok(Vec::new()) };
    let names = text::csv_fields(header).ok_or_else(|| Bad::at(1, "elbencho's CSV header, its quotes closed"))?;
    if !names.iter().any(|n| n == "operation") {
        return Err(Bad::at(1, "elbencho's CSV header with an 'operation' column"));
    }
    lines
        .map(|(i, line)| {
            let fields = text::csv_fields(line).ok_or_else(|| Bad::at(i + 1, "a CSV row with its quotes closed"))?;
            if fields.len() != names.len() {
                return Err(Bad::at(i + 1, format!("{} fields as in the header, found {}", names.len(), fields.len())));
            }
            Ok((i + 1, names.iter().cloned().zip(fields).collect()))
        })
        .collect()
}

fn json_rows(input: &str) -> Result<Vec<Row>, Bad> {
    let doc = Json::parse(input, "elbencho's JSON")?;
    let Some(list) = doc.value.as_array() else { return Err(Bad::at(1, "a JSON list of elbencho's rows")) };
    let lines = doc.lines_of("operation");
    list.iter()
        .enumerate()
        .map(|(i, row)| {
            let line = lines.get(i).or(lines.last()).copied().unwrap_or(1);
            let obj = row.as_object().ok_or_else(|| Bad::at(line, "an object per elbencho row"))?;
            Ok((line, obj.iter().map(|(k, v)| (k.clone(), text::param_text(v))).collect()))
        })
        .collect()
}

/// The run of one command's rows, if any of them wrote or read.
fn run_of(rows: &[Row], command: &str) -> Result<Option<crate::record::RunRecord>, Bad> {
    let mut phases = Vec::new();
    let mut ops = Vec::new();
    let mut params = BTreeMap::new();
    let (first_line, first) = &rows[0];
    let get = |row: &BTreeMap<String, String>, line: usize, key: &str| -> Result<f64, Bad> {
        text::number(row.get(key).map_or("", String::as_str), line, &format!("a number in elbencho's column '{key}'"))
    };
    for (line, row) in rows {
        let operation = row.get("operation").cloned().unwrap_or_default();
        let op = match operation.as_str() {
            "WRITE" => Op::Write,
            "READ" => Op::Read,
            _ => {
                for (k, v) in row.iter().filter(|(k, v)| k.contains('[') && !v.is_empty()) {
                    params.insert(format!("elbencho.{operation} {k}"), v.clone());
                }
                continue;
            }
        };
        let line = *line;
        let mib = get(row, line, "MiB/s [last]")?;
        let first_mib = get(row, line, "MiB/s [first]")?;
        let iops = get(row, line, "IOPS [last]")?;
        let ms = get(row, line, "time ms [last]")?;
        let moved = get(row, line, "MiB [last]")?;
        let block = get(row, line, "block size")?.max(1.0);
        let bytes = (moved * MIB) as u64;
        let mut f = figures(bytes, (bytes as f64 / block) as u64, ms / 1000.0, Some(mib * MIB), Some(iops));
        f.first_finish_rate = Some(first_mib * MIB);
        for k in ["IO lat us [min]", "IO lat us [avg]", "IO lat us [max]"] {
            if let Some(v) = row.get(k).filter(|v| !v.is_empty()) {
                params.insert(format!("elbencho.{operation} {k}"), v.clone());
            }
        }
        ops.push(op);
        phases.push(phase(op, 0, f));
    }
    if phases.is_empty() {
        return Ok(None);
    }
    let whole = |key: &str| get(first, *first_line, key).map(|v| v as u64);
    let (threads, hosts, files) = (whole("threads")?.max(1), whole("hosts")?.max(1), whole("files")?);
    let (file_size, block) = (whole("file size")?, whole("block size")?);
    let per_task = file_size.checked_mul(files.max(1));
    if per_task
        .and_then(|b| b.checked_mul(threads))
        .and_then(|b| b.checked_mul(hosts))
        .is_none_or(|b| b > i64::MAX as u64)
    {
        return Err(Bad::at(*first_line, "elbencho's file size x files x threads x hosts within 2^63 bytes"));
    }
    let shared = first.get("path type").is_some_and(|t| t != "dir");
    let data = Data {
        access: if shared { Access::Shared } else { Access::FilePerTask },
        pattern: if first.get("random").is_some_and(|r| r == "1") { Pattern::Random } else { Pattern::Sequential },
        transfer: block,
        // Each thread's files one after the other, as one block of all its bytes.
        block: per_task.unwrap_or(0),
        direct: first.get("direct IO").is_some_and(|d| d == "1"),
        iodepth: whole("IO depth").unwrap_or(1).clamp(1, u32::MAX as u64) as u32,
        ..Data::default()
    };
    for (k, v) in first.iter().filter(|(k, _)| !k.contains('[')) {
        params.entry(format!("elbencho.{k}")).or_insert_with(|| v.clone());
    }
    let workload = Workload { ops, tasks: threads.saturating_mul(hosts) as usize, ..Workload::from(data) };
    let version = first.get("version").cloned().unwrap_or_default();
    let started = first.get("ISO date").and_then(|d| text::iso(d)).unwrap_or(0);
    let env = Environment { tool_version: version.clone(), ..Environment::default() };
    let made =
        Made { source: format!("elbencho {version}"), workload, env, command_line: command.to_string(), started };
    let mut run = super::run(made, phases, params);
    run.label = first.get("label").filter(|l| crate::record::is_label(l)).cloned();
    Ok(Some(run))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "ISO date,label,path type,threads,hosts,files,file size,block size,random,IO depth,operation,time ms [last],MiB/s [first],MiB/s [last],IOPS [last],MiB [last],version,command\n";

    #[test]
    fn write_and_read_rows_are_one_run() {
        let text = format!("{HEADER}2026-01-02T03:04:05,x,dir,2,1,4,1048576,65536,1,1,WRITE,100,30,32,512,8,3.0,elbencho a\n2026-01-02T03:04:06,x,dir,2,1,4,1048576,65536,1,1,READ,50,60,64,1024,8,3.0,elbencho a\n");
        let got = parse(&text).unwrap();
        let r = &got.runs[0];
        assert_eq!((r.workload.tasks, r.label.as_deref(), r.phases.len()), (2, Some("x"), 2));
        assert_eq!(r.phases[1].figures.bandwidth, Some(64.0 * MIB));
        assert_eq!(r.phases[0].figures.first_finish_rate, Some(30.0 * MIB));
        assert_eq!(r.started, text::civil_seconds(2026, 1, 2, (3, 4, 5)).unwrap());
    }

    #[test]
    fn rows_without_a_command_are_one_run() {
        // Found by the import_elbencho fuzz target (fuzz/regressions/import_elbencho): a first
        // row without the command column ended its own group before it began, and an empty
        // group was read.
        let row = |date: &str| format!("{{\"ISO date\": \"{date}\", \"label\": \"x\"}}");
        let text = format!("[{}, {}]", row("2026-11-24T23:20:02"), row("2026-11-24T23:20:03"));
        let bad = parse(&text).unwrap_err();
        assert!(bad.expected.contains("WRITE or READ"), "{}", bad.expected);
        let found = include_str!("../../fuzz/regressions/import_elbencho/panic-row-without-command");
        assert!(parse(found).is_ok_and(|g| !g.runs.is_empty()), "the rows with a command are a run");
    }

    #[test]
    fn a_row_of_the_wrong_width_or_a_word_for_a_figure_names_its_line() {
        let short = format!("{HEADER}2026-01-02T03:04:05,x,dir\n");
        assert_eq!(parse(&short).unwrap_err().line, 2);
        let word = format!(
            "{HEADER}2026-01-02T03:04:05,x,dir,2,1,4,1048576,65536,1,1,WRITE,100,30,fast,512,8,3.0,elbencho a\n"
        );
        let bad = parse(&word).unwrap_err();
        assert_eq!(bad.line, 2);
        assert!(bad.expected.contains("MiB/s [last]"), "{}", bad.expected);
    }
}
