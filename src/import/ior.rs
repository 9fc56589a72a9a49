//! IOR's output, text or JSON (`-O summaryFormat=JSON`): each test a run, each row of its
//! results a phase of one iteration. Bandwidth is in MiB/s (2^20 bytes).

use super::text::{self, Json};
use super::{figures, phase, Bad, Imported, Made, MIB};
use crate::env::Environment;
use crate::spec::{Access, Data, Op, Pattern, Workload};
use serde_json::Value;
use std::collections::BTreeMap;

/// Reads IOR's text, JSON or CSV output.
pub fn parse(text: &str) -> Result<Imported, Bad> {
    let start = text.trim_start();
    match () {
        _ if start.starts_with('{') => parse_json(text),
        _ if start.starts_with(CSV_HEADER) => parse_csv(text),
        _ => parse_text(text),
    }
}

/// The first line of IOR's `-O summaryFormat=CSV`: its results, a row per phase, and nothing
/// else (no version, date, host, path or access mode).
pub const CSV_HEADER: &str = "access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB)";

/// IOR's CSV summary: one run, a phase per row; what the CSV does not say (the access mode,
/// when, where) is left at what IOR does by default or unknown.
fn parse_csv(input: &str) -> Result<Imported, Bad> {
    let lines: Vec<&str> = input.lines().collect();
    let header: Vec<&str> = lines[0].trim().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let need = ["bw(MiB/s)", "IOPS", "block(KiB)", "xfer(KiB)", "total(s)", "numTasks"];
    let Some(at) = need.iter().map(|c| col(c)).collect::<Option<Vec<usize>>>() else {
        return Err(Bad::at(1, format!("IOR's CSV header with {}", need.join(", "))));
    };
    let mut test = Test { params: BTreeMap::new(), rows: Vec::new(), path: String::new(), line: 1 };
    for (i, line) in lines.iter().enumerate().skip(1).filter(|(_, l)| !l.trim().is_empty()) {
        let n = i + 1;
        let f: Vec<&str> = line.trim().split(',').collect();
        let Some(op) = f.first().and_then(|w| op_of(w)) else {
            return Err(Bad::at(n, "a row of IOR's CSV starting with write or read"));
        };
        if f.len() < header.len() {
            return Err(Bad::at(n, format!("{} fields in IOR's CSV row, found {}", header.len(), f.len())));
        }
        let number = |k: usize, what: &str| text::number(f[at[k]], n, what);
        let (bw, ops, secs) = (number(0, "a bandwidth in MiB/s")?, number(1, "IOPS")?, number(4, "a total time")?);
        let kib = |k: usize, what: &str| number(k, what).map(|v| format!("{} bytes", (v * 1024.0).round() as u64));
        test.params.insert("blocksize".into(), kib(2, "a block size in KiB")?);
        test.params.insert("xfersize".into(), kib(3, "a transfer size in KiB")?);
        test.params.insert("tasks".into(), f[at[5]].trim().to_string());
        test.rows.push((op, bw, ops, secs));
    }
    if test.rows.is_empty() {
        return Err(Bad::at(lines.len().max(1), "a row of IOR's CSV (the file ends early)"));
    }
    let most = [Op::Write, Op::Read].map(|op| test.rows.iter().filter(|r| r.0 == op).count());
    test.params.insert("repetitions".into(), most.iter().max().unwrap_or(&1).to_string());
    let head = Head { version: "(CSV)".into(), started: 0, command: String::new(), host: String::new() };
    let run = run_of(&head, test)?;
    Ok(Imported { source: "ior (CSV)".into(), runs: vec![run], ..Imported::default() })
}

/// What a test of either form says of itself.
struct Test {
    params: BTreeMap<String, String>,
    /// Each result: op, bandwidth MiB/s, IOPS, total seconds.
    rows: Vec<(Op, f64, f64, f64)>,
    path: String,
    /// The line the test starts at, for errors about the test as a whole.
    line: usize,
}

/// Everything the file says around its tests.
struct Head {
    version: String,
    started: i64,
    command: String,
    host: String,
}

fn op_of(access: &str) -> Option<Op> {
    match access {
        "write" => Some(Op::Write),
        "read" => Some(Op::Read),
        _ => None,
    }
}

/// A test's setting by any of its names, parsed.
fn setting<T>(params: &BTreeMap<String, String>, names: &[&str], read: impl Fn(&str) -> Option<T>) -> Option<T> {
    names.iter().find_map(|n| params.get(*n).and_then(|v| read(v)))
}

fn run_of(head: &Head, test: Test) -> Result<crate::record::RunRecord, Bad> {
    let p = &test.params;
    let size = |names: &[&str]| setting(p, names, text::size);
    let whole = |names: &[&str]| setting(p, names, |v| v.trim().parse::<u64>().ok());
    let missing = |what: &str| Bad::at(test.line, format!("IOR's {what} in the test's options"));
    let transfer = size(&["xfersize", "transferSize"]).ok_or_else(|| missing("transfer size (xfersize)"))?;
    let block = size(&["blocksize", "blockSize"]).ok_or_else(|| missing("block size (blocksize)"))?;
    let segments = whole(&["segments", "segmentCount"]).unwrap_or(1);
    let tasks = whole(&["tasks", "numTasks"]).ok_or_else(|| missing("task count (tasks)"))?;
    let shared = match p.get("access").or(p.get("filePerProc")).map(String::as_str) {
        Some("file-per-process" | "1") => false,
        Some("single-shared-file" | "0") | None => true,
        Some(other) => return Err(Bad::at(test.line, format!("IOR's access, found '{}'", text::shorten(other)))),
    };
    // As a measured workload is held to: every byte of a phase has an offset below 2^63.
    if block.checked_mul(segments).and_then(|b| b.checked_mul(tasks)).is_none_or(|b| b > i64::MAX as u64) {
        return Err(Bad::at(test.line, "IOR's block size x segments x tasks within 2^63 bytes"));
    }
    let random =
        p.get("ordering in a file").is_some_and(|o| o == "random") || p.get("randomOffset").is_some_and(|o| o == "1");
    let iterations = whole(&["repetitions"]).unwrap_or(1).clamp(1, u32::MAX as u64) as u32;
    let mut ops: Vec<Op> = Vec::new();
    for (op, ..) in &test.rows {
        if !ops.contains(op) {
            ops.push(*op);
        }
    }
    let workload = Workload {
        ops,
        tasks: tasks.clamp(1, u32::MAX as u64) as usize,
        iterations,
        ..Workload::from(Data {
            access: if shared { Access::Shared } else { Access::FilePerTask },
            pattern: if random { Pattern::Random } else { Pattern::Sequential },
            transfer,
            block,
            segments,
            ..Data::default()
        })
    };
    let bytes = block.saturating_mul(segments).saturating_mul(tasks);
    let calls = bytes / transfer.max(1);
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let phases = test
        .rows
        .iter()
        .map(|&(op, mib, iops, secs)| {
            let n = seen.entry(op.name()).or_default();
            let iteration = *n;
            *n += 1;
            phase(op, iteration, figures(bytes, calls, secs, Some(mib * MIB), Some(iops)))
        })
        .collect();
    let params = test.params.into_iter().map(|(k, v)| (format!("ior.{k}"), v)).collect();
    let env = Environment {
        host: head.host.clone(),
        target: test.path,
        tool_version: head.version.clone(),
        ..Environment::default()
    };
    let made = Made {
        source: format!("ior {}", head.version),
        workload,
        env,
        command_line: head.command.clone(),
        started: head.started,
    };
    Ok(super::run(made, phases, params))
}

fn parse_text(input: &str) -> Result<Imported, Bad> {
    let lines: Vec<&str> = input.lines().collect();
    let field = |l: &str| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()));
    let mut head = Head { version: String::new(), started: 0, command: String::new(), host: String::new() };
    let mut tests: Vec<Test> = Vec::new();
    let mut summary = false;
    let mut i = 0;
    while i < lines.len() {
        let (n, line) = (i + 1, lines[i]);
        i += 1;
        if let Some(rest) = line.strip_prefix("IOR-") {
            head.version = rest.split(':').next().unwrap_or("").trim().to_string();
        } else if line.starts_with("Began") {
            head.started = field(line).and_then(|(_, v)| text::ctime(&v)).unwrap_or(0);
        } else if line.starts_with("Command line") {
            head.command = field(line).map(|(_, v)| v).unwrap_or_default();
        } else if line.starts_with("Machine") {
            head.host =
                field(line).and_then(|(_, v)| v.split_whitespace().last().map(str::to_string)).unwrap_or_default();
        } else if line.starts_with("Path") && tests.last().is_none_or(|t| !t.rows.is_empty() || !t.path.is_empty()) {
            // The path comes before the options of the test it belongs to.
            let path = field(line).map(|(_, v)| v).unwrap_or_default();
            tests.push(Test { params: BTreeMap::new(), rows: Vec::new(), path, line: n });
        } else if line.trim_end() == "Options:" {
            if tests.last().is_none_or(|t| !t.params.is_empty()) {
                tests.push(Test { params: BTreeMap::new(), rows: Vec::new(), path: String::new(), line: n });
            }
            let test = tests.last_mut().expect("just made");
            while i < lines.len() && !lines[i].trim().is_empty() {
                if let Some((k, v)) = field(lines[i]) {
                    test.params.insert(k, v);
                }
                i += 1;
            }
        } else if line.starts_with("access") && line.contains("bw(MiB/s)") {
            let header: Vec<&str> = line.split_whitespace().collect();
            let col = |name: &str| header.iter().position(|h| *h == name);
            let (Some(bw), Some(iops), Some(total)) = (col("bw(MiB/s)"), col("IOPS"), col("total(s)")) else {
                return Err(Bad::at(n, "IOR's results header: access bw(MiB/s) IOPS ... total(s) iter"));
            };
            let Some(test) = tests.last_mut() else {
                return Err(Bad::at(n, "IOR's Options before its results"));
            };
            // The dashes under the header, then a row per phase until a blank line.
            i += 1;
            while i < lines.len() && !lines[i].trim().is_empty() {
                let n = i + 1;
                let words: Vec<&str> = lines[i].split_whitespace().collect();
                i += 1;
                let Some(op) = words.first().and_then(|w| op_of(w)) else { continue };
                if words.len() < header.len() {
                    return Err(Bad::at(
                        n,
                        format!("{} columns in IOR's result row, found {}", header.len(), words.len()),
                    ));
                }
                let bw = text::number(words[bw], n, "a bandwidth in MiB/s")?;
                let ops = text::number(words[iops], n, "IOPS")?;
                let secs = text::number(words[total], n, "a total time in seconds")?;
                test.rows.push((op, bw, ops, secs));
            }
        } else if line.starts_with("Summary of all tests:") {
            summary = true;
        }
    }
    if head.version.is_empty() {
        return Err(Bad::at(1, "IOR's first line, 'IOR-VERSION: MPI Coordinated Test of Parallel I/O'"));
    }
    if !summary {
        return Err(Bad::at(lines.len().max(1), "IOR's 'Summary of all tests:' (the file ends early)"));
    }
    tests.retain(|t| !t.params.is_empty() || !t.rows.is_empty());
    if tests.iter().all(|t| t.rows.is_empty()) {
        return Err(Bad::at(lines.len().max(1), "IOR's results table (a line 'access bw(MiB/s) IOPS ...')"));
    }
    let source = format!("ior {}", head.version);
    let runs = tests.into_iter().filter(|t| !t.rows.is_empty()).map(|t| run_of(&head, t)).collect::<Result<_, _>>()?;
    Ok(Imported { source, runs, ..Imported::default() })
}

fn parse_json(input: &str) -> Result<Imported, Bad> {
    let doc = Json::parse(input, "IOR's JSON")?;
    let v = &doc.value;
    let version = doc.text(v, "Version", 0)?;
    let head = Head {
        started: v.get("Began").and_then(Value::as_str).and_then(text::ctime).unwrap_or(0),
        command: v.get("Command line").and_then(Value::as_str).unwrap_or_default().to_string(),
        host: v
            .get("Machine")
            .and_then(Value::as_str)
            .and_then(|m| m.split_whitespace().last())
            .unwrap_or_default()
            .to_string(),
        version,
    };
    let Some(tests) = v.get("tests").and_then(Value::as_array) else {
        return Err(Bad::at(doc.line_of("tests", 0), "a list of IOR's tests (\"tests\")"));
    };
    let mut runs = Vec::new();
    let mut result = 0;
    let test_lines = doc.lines_of("TestID");
    for (t, test) in tests.iter().enumerate() {
        let mut params = BTreeMap::new();
        for section in ["Parameters", "Options"] {
            for (k, val) in test.get(section).and_then(Value::as_object).into_iter().flatten() {
                params.entry(k.clone()).or_insert_with(|| text::param_text(val));
            }
        }
        // IOR 3 nests a list per iteration; IOR 4 lists the rows flat.
        let rows: Vec<&Value> = match test.get("Results").and_then(Value::as_array) {
            Some(list) => {
                list.iter().flat_map(|r| r.as_array().map_or(vec![r], |inner| inner.iter().collect())).collect()
            }
            None => return Err(Bad::at(doc.line_of("tests", 0), format!("IOR's \"Results\" of test {t}"))),
        };
        let mut parsed = Vec::new();
        for row in rows {
            // "access" is also an option of the test: a row's line is its figure's.
            let access = doc.text(row, "access", 0).map_err(|b| Bad::at(doc.line_of("bwMiB", result), b.expected))?;
            result += 1;
            let Some(op) = op_of(&access) else { continue };
            let bw = doc.number(row, "bwMiB", result - 1)?;
            let iops = doc.number(row, "iops", result - 1)?;
            let secs = doc.number(row, "totalTime", result - 1)?;
            parsed.push((op, bw, iops, secs));
        }
        let path = test.get("Path").and_then(Value::as_str).unwrap_or_default().to_string();
        let line = test_lines.get(t).or(test_lines.last()).copied().unwrap_or(1);
        runs.push(run_of(&head, Test { params, rows: parsed, path, line })?);
    }
    if v.get("Finished").is_none() {
        return Err(Bad::at(input.lines().count().max(1), "IOR's \"Finished\" (the run did not end)"));
    }
    runs.retain(|r| !r.phases.is_empty());
    if runs.is_empty() {
        return Err(Bad::at(doc.line_of("tests", 0), "at least one write or read result in IOR's tests"));
    }
    Ok(Imported { source: format!("ior {}", head.version), runs, ..Imported::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "IOR-4.1.0: MPI Coordinated Test of Parallel I/O\nBegan               : Tue Nov 24 23:04:07 2026\nMachine             : Linux node7\nPath                : /scratch/f\n\nOptions: \naccess              : single-shared-file\nsegments            : 2\nordering in a file  : random\ntasks               : 4\nrepetitions         : 1\nxfersize            : 1 MiB\nblocksize           : 4 MiB\n\nResults: \n\naccess    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter\n------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----\n";

    #[test]
    fn a_text_test_maps_to_a_workload() {
        let text = format!("{HEAD}write     100.5      100        0.01        4096       1024       0.1        0.2        0.1        0.32       0\n\nSummary of all tests:\n");
        let got = parse(&text).unwrap();
        let r = &got.runs[0];
        let d = r.workload.data().unwrap();
        assert_eq!(
            (d.access, d.pattern, d.transfer, d.block, d.segments),
            (Access::Shared, Pattern::Random, 1 << 20, 4 << 20, 2)
        );
        assert_eq!((r.workload.tasks, r.env.host.as_str(), r.provenance.as_str()), (4, "node7", "imported:ior 4.1.0"));
        assert_eq!(r.phases[0].figures.bandwidth, Some(100.5 * MIB));
        assert_eq!(r.phases[0].figures.window_ns, 320_000_000);
        assert_eq!(r.tool_params.get("ior.ordering in a file").map(String::as_str), Some("random"));
    }

    #[test]
    fn a_short_row_or_text_for_a_number_names_its_line() {
        let short = format!("{HEAD}write     100.5      100\n\nSummary of all tests:\n");
        assert_eq!(parse(&short).unwrap_err().line, 19);
        let word = format!("{HEAD}write     fast      100        0.01        4096       1024       0.1        0.2        0.1        0.32       0\n\nSummary of all tests:\n");
        let bad = parse(&word).unwrap_err();
        assert_eq!(bad.line, 19);
        assert!(bad.expected.contains("bandwidth") && bad.expected.contains("'fast'"), "{}", bad.expected);
    }

    #[test]
    fn sizes_past_what_a_file_can_hold_are_refused() {
        let huge = HEAD.replace("segments            : 2", "segments            : 18446744073709551615");
        let text = format!("{huge}write     1      1        0.01        4096       1024       0.1        0.2        0.1        0.32       0\n\nSummary of all tests:\n");
        assert!(parse(&text).unwrap_err().expected.contains("2^63"));
    }

    #[test]
    fn a_file_cut_before_its_summary_is_refused() {
        let cut = format!("{HEAD}write     100.5      100        0.01        4096       1024       0.1        0.2        0.1        0.32       0\n");
        assert!(parse(&cut).unwrap_err().expected.contains("ends early"));
        assert!(parse("").is_err());
        assert!(parse("{").is_err());
    }

    #[test]
    fn json_without_options_says_what_is_missing() {
        let text = "{\"Version\": \"4.1\", \"tests\": [{\"TestID\": 0, \"Results\": [{\"access\": \"write\", \"bwMiB\": 1, \"iops\": 2, \"totalTime\": 3}]}], \"Finished\": \"x\"}";
        let bad = parse(text).unwrap_err();
        assert!(bad.expected.contains("transfer size"), "{}", bad.expected);
    }
}
