//! mdtest's text output: its SUMMARY rate table (max, min, mean and standard deviation over
//! the iterations, in operations per second) as one run of a metadata workload, each phase
//! iosurvey has an op for at its mean; the others, and the spread of all, kept as mdtest's
//! own parameters.

use super::text;
use super::{figures, phase, Bad, Imported, Made};
use crate::env::Environment;
use crate::spec::{Meta, Op, Tree, Workload};
use std::collections::BTreeMap;

/// iosurvey's op for an mdtest phase, if it has one.
fn op_of(name: &str) -> Option<Op> {
    Some(match name {
        "Directory creation" => Op::DirCreate,
        "Directory stat" => Op::DirStat,
        "Directory removal" => Op::DirRemove,
        "File creation" => Op::FileCreate,
        "File stat" => Op::FileStat,
        "File read" => Op::FileRead,
        "File removal" => Op::FileRemove,
        "Tree creation" => Op::TreeCreate,
        "Tree removal" => Op::TreeRemove,
        _ => return None,
    })
}

/// Reads mdtest's text output.
pub fn parse(input: &str) -> Result<Imported, Bad> {
    let lines: Vec<&str> = input.lines().collect();
    let mut version = String::new();
    let (mut started, mut tasks, mut items, mut iterations) = (0, 0u64, 0u64, 1u32);
    let mut command = String::new();
    let mut path = String::new();
    let mut rows: Vec<(usize, String, [f64; 4])> = Vec::new();
    let mut finished = false;
    let mut i = 0;
    while i < lines.len() {
        let (n, line) = (i + 1, lines[i].trim());
        i += 1;
        if let Some(at) = line.strip_prefix("-- started at ") {
            // mdtest prints "11/24/2026 23:04:15"; iosurvey's layout C's ctime().
            let at = at.trim_end_matches('-').trim();
            started = text::month_day_year(at).or_else(|| text::ctime(at)).unwrap_or(0);
        } else if line.starts_with("-- finished at") {
            finished = true;
        } else if let Some((v, rest)) = line.split_once(" was launched with ") {
            version = v.trim_start_matches("mdtest-").to_string();
            tasks = text::count(rest.split_whitespace().next().unwrap_or(""), n, "mdtest's task count")?;
        } else if let Some(c) = line.strip_prefix("Command line used:") {
            command = c.trim().to_string();
        } else if let Some(p) = line.strip_prefix("Path") {
            path = p.trim_start_matches([' ', ':']).trim().to_string();
        } else if line.ends_with("files/directories") {
            let words: Vec<&str> = line.split_whitespace().collect();
            items = text::count(words.get(2).copied().unwrap_or(""), n, "mdtest's count of files/directories")?;
        } else if line.starts_with("SUMMARY rate") {
            if let Some(of) = line.split("(of ").nth(1) {
                let k = of.split_whitespace().next().unwrap_or("");
                iterations = text::count(k, n, "mdtest's iteration count")?.clamp(1, u32::MAX as u64) as u32;
            }
            // The header and its dashes, then a row per phase until a line that is none.
            i += 2;
            summary_rows(&lines, &mut i, &mut rows)?;
        }
    }
    if version.is_empty() {
        return Err(Bad::at(1, "mdtest's line 'mdtest-VERSION was launched with N total task(s)'"));
    }
    if rows.is_empty() {
        return Err(Bad::at(lines.len().max(1), "mdtest's 'SUMMARY rate' table"));
    }
    if !finished {
        return Err(Bad::at(lines.len().max(1), "mdtest's '-- finished at' line (the file ends early)"));
    }
    let meta = meta_of(&command, items.checked_div(tasks).unwrap_or(items));
    let mut params = BTreeMap::new();
    let mut phases = Vec::new();
    let mut ops = Vec::new();
    for (_, name, [max, min, mean, sd]) in rows {
        params.insert(
            format!("mdtest.{name}"),
            format!("max {max}, min {min}, mean {mean}, stddev {sd} ops/s over {iterations} iterations"),
        );
        let Some(op) = op_of(&name) else { continue };
        if ops.contains(&op) {
            continue;
        }
        ops.push(op);
        let secs = if mean > 0.0 { items as f64 / mean } else { 0.0 };
        phases.push(phase(op, 0, figures(0, items, secs, None, Some(mean))));
    }
    let workload =
        Workload { ops, tasks: tasks.clamp(1, u32::MAX as u64) as usize, iterations, ..Workload::from(meta) };
    let env = Environment { target: path, tool_version: version.clone(), ..Environment::default() };
    let source = format!("mdtest {version}");
    let made = Made { source: source.clone(), workload, env, command_line: command, started };
    Ok(Imported { source, runs: vec![super::run(made, phases, params)], ..Imported::default() })
}

/// The rows of a 'SUMMARY rate' table from line `*i` on (0-based), each its line number,
/// phase name and max, min, mean and standard deviation; `*i` ends past the last row.
fn summary_rows(lines: &[&str], i: &mut usize, rows: &mut Vec<(usize, String, [f64; 4])>) -> Result<(), Bad> {
    while *i < lines.len() {
        let n = *i + 1;
        let words: Vec<&str> = lines[*i].split_whitespace().collect();
        let named = words.first().is_some_and(|w| w.starts_with(|c: char| c.is_ascii_uppercase()));
        if words.len() < 5 || !named || words[0] == "SUMMARY" {
            break;
        }
        *i += 1;
        let (name, figs) = words.split_at(words.len() - 4);
        let mut v = [0.0; 4];
        for (slot, (w, what)) in
            v.iter_mut().zip(figs.iter().zip(["a maximum", "a minimum", "a mean", "a standard deviation"]))
        {
            *slot = text::number(w, n, &format!("{what} in ops/s"))?;
        }
        rows.push((n, name.join(" "), v));
    }
    Ok(())
}

/// The metadata shape mdtest's `command` line asked for, `per_task` items when it does not
/// say (-n).
fn meta_of(command: &str, per_task: u64) -> Meta {
    let words = text::words(command);
    let flag = |f: &str| words.iter().any(|w| w == f);
    let value = |f: &str| text::option_value(&words, f).and_then(|v| text::size(&v));
    Meta {
        items: value("-n").unwrap_or(per_task),
        // mdtest's -u gives each task its own directory, iosurvey's default.
        shared: !flag("-u"),
        tree: Tree {
            depth: value("-z").unwrap_or(0).min(u32::MAX as u64) as u32,
            branch: value("-b").unwrap_or(1).min(u32::MAX as u64) as u32,
            leaves_only: flag("-L"),
        },
        write_bytes: value("-w").unwrap_or(0),
        read_bytes: value("-e").unwrap_or(0),
        ..Meta::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rows: &str) -> String {
        format!("-- started at 11/24/2026 23:04:15 --\n\nmdtest-4.1.0 was launched with 2 total task(s) on 1 node(s)\nCommand line used: mdtest '-n' '10' '-u' '-z' '2'\n2 tasks, 20 files/directories\n\nSUMMARY rate (in ops/sec): (of 3 iterations)\n   Operation                     Max            Min           Mean        Std Dev\n   ---------                     ---            ---           ----        -------\n{rows}-- finished at 11/24/2026 23:04:17 --\n")
    }

    #[test]
    fn phases_iosurvey_has_become_ops_and_the_rest_parameters() {
        let got = parse(&file("   File creation  4 2 3 1\n   Directory rename  9 8 8.5 0.5\n")).unwrap();
        let r = &got.runs[0];
        let m = r.workload.meta().unwrap();
        assert_eq!((m.items, m.shared, m.tree.depth), (10, false, 2));
        assert_eq!((r.workload.ops.as_slice(), r.workload.iterations), ([Op::FileCreate].as_slice(), 3));
        assert_eq!(r.phases[0].figures.iops, Some(3.0));
        assert!(r.tool_params["mdtest.Directory rename"].contains("mean 8.5"), "{:?}", r.tool_params);
    }

    #[test]
    fn a_word_for_a_figure_is_refused_at_its_line() {
        let bad = parse(&file("   File creation  4 x 3 1\n")).unwrap_err();
        assert_eq!(bad.line, 10);
        assert!(bad.expected.contains("minimum"), "{}", bad.expected);
        let cut = file("   File creation  4 2 3 1\n");
        let cut = &cut[..cut.find("-- finished").unwrap()];
        assert!(parse(cut).unwrap_err().expected.contains("ends early"));
    }
}
