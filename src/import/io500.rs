//! An IO500 result directory: result_summary.txt's `[RESULT]` lines (GiB/s, 2^30 bytes, or
//! kIOPS, 1000 operations per second), the configuration (config*.ini) and result.txt's
//! facts. Each scored phase iosurvey runs becomes a run, the runs stored as one IO500 list
//! as iosurvey's own `io500` stores its phases; find (a hook, not a run, in iosurvey's list)
//! and the `[SCORE ]` line are kept in the list's description and each run's parameters.

use super::text;
use super::{figures, phase, Bad, Imported, Made, GIB};
use crate::env::Environment;
use crate::io500::{Phase, EASY_TRANSFER, HARD_BYTES, MDTEST_HARD_FILE};
use crate::spec::{Access, Data, Layout, Meta, Op, Workload};
use std::collections::BTreeMap;

/// Reads result_summary.txt, with the configuration and result.txt when there are.
pub fn parse(summary: &str, config: Option<&str>, result: Option<&str>) -> Result<Imported, Bad> {
    let mut params = BTreeMap::new();
    for (file, body) in [("config", config), ("result", result)] {
        let mut section = String::new();
        for line in body.unwrap_or("").lines().map(str::trim) {
            if let Some(s) = line.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                section = s.to_string();
            } else if let Some((k, v)) = line.split_once('=').filter(|_| !line.starts_with([';', '#'])) {
                params.insert(format!("io500.{file}.{section}.{}", k.trim()), v.trim().to_string());
            }
        }
    }
    let procs = params.get("io500.result.run.procs").and_then(|p| p.parse::<usize>().ok()).unwrap_or(1).max(1);
    let started =
        result.unwrap_or("").lines().find_map(|l| l.trim().strip_prefix("; START ").and_then(text::iso)).unwrap_or(0);
    let mut version = params.get("io500.result.run.version").cloned().unwrap_or_default();
    let mut scores: Vec<(usize, String, f64, f64)> = Vec::new();
    let mut score = None;
    for (i, line) in summary.lines().enumerate() {
        let n = i + 1;
        if let Some(v) = line.strip_prefix("IO500 version ") {
            version = v.split_whitespace().next().unwrap_or("").to_string();
        } else if let Some(rest) = line.strip_prefix("[RESULT]") {
            // "NAME VALUE UNIT : time SECONDS seconds [INVALID]"
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words.len() < 6 || words[3] != ":" || words[4] != "time" {
                return Err(Bad::at(n, "'[RESULT] PHASE VALUE UNIT : time SECONDS seconds'"));
            }
            let value = text::number(words[1], n, "the phase's score")?;
            let secs = text::number(words[5], n, "the phase's time in seconds")?;
            scores.push((n, words[0].to_string(), value, secs));
            params.insert(format!("io500.{}", words[0]), rest.trim().to_string());
        } else if line.starts_with("[SCORE ]") {
            score = Some(line.trim().to_string());
        }
    }
    let Some(score) = score else {
        return Err(Bad::at(summary.lines().count().max(1), "IO500's '[SCORE ]' line (the list did not finish)"));
    };
    params.insert("io500.score".into(), score.clone());
    if version.is_empty() {
        version = "unknown".into();
    }
    let source = format!("io500 {version}");
    let mut runs = Vec::new();
    for (n, name, value, secs) in scores {
        let Some(p) = Phase::ALL.into_iter().find(|p| p.name() == name) else {
            return Err(Bad::at(n, format!("an IO500 phase of the standard list, found '{}'", text::shorten(&name))));
        };
        let Some((workload, bandwidth)) = shape(p, procs) else { continue };
        let f = match bandwidth {
            true => figures(0, 0, secs, Some(value * GIB), None),
            false => figures(0, 0, secs, None, Some(value * 1000.0)),
        };
        let op = workload.ops[0];
        let made = Made {
            source: source.clone(),
            workload,
            env: Environment { tool_version: version.clone(), ..Environment::default() },
            command_line: format!("io500 (result_summary.txt: {name})"),
            started,
        };
        let mut run = super::run(made, vec![phase(op, 0, f)], params.clone());
        run.name = Some(name);
        runs.push(run);
    }
    if runs.is_empty() {
        return Err(Bad::at(1, "IO500's [RESULT] lines"));
    }
    Ok(Imported { source, runs, io500: Some(score), ..Imported::default() })
}

/// The workload of a phase, as iosurvey's list runs it (its sizes are the run's, which the
/// summary does not give), and whether its score is a bandwidth; none for find and the
/// timestamp, which are no runs.
fn shape(p: Phase, tasks: usize) -> Option<(Workload, bool)> {
    let easy = Data { access: Access::FilePerTask, transfer: EASY_TRANSFER, block: EASY_TRANSFER, ..Data::default() };
    let hard = Data {
        access: Access::Shared,
        layout: Layout::Strided,
        transfer: HARD_BYTES,
        block: HARD_BYTES,
        ..Data::default()
    };
    let easy_meta = Meta { items: 0, ..Meta::default() };
    let hard_meta =
        Meta { items: 0, shared: true, write_bytes: MDTEST_HARD_FILE, read_bytes: MDTEST_HARD_FILE, ..Meta::default() };
    let (op, base, bandwidth) = match p {
        Phase::IorEasyWrite => (Op::Write, Workload::from(easy), true),
        Phase::IorEasyRead => (Op::Read, Workload::from(easy), true),
        Phase::IorHardWrite => (Op::Write, Workload::from(hard), true),
        Phase::IorHardRead => (Op::Read, Workload::from(hard), true),
        Phase::MdtestEasyWrite => (Op::FileCreate, Workload::from(easy_meta), false),
        Phase::MdtestEasyStat => (Op::FileStat, Workload::from(easy_meta), false),
        Phase::MdtestEasyDelete => (Op::FileRemove, Workload::from(easy_meta), false),
        Phase::MdtestHardWrite => (Op::FileCreate, Workload::from(hard_meta), false),
        Phase::MdtestHardStat => (Op::FileStat, Workload::from(hard_meta), false),
        Phase::MdtestHardRead => (Op::FileRead, Workload::from(hard_meta), false),
        Phase::MdtestHardDelete => (Op::FileRemove, Workload::from(hard_meta), false),
        Phase::Find | Phase::Timestamp => return None,
    };
    Some((Workload { ops: vec![op], tasks, ..base }, bandwidth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_runs_and_find_a_parameter() {
        let summary = "IO500 version v9\n[RESULT]       ior-easy-write        2.000000 GiB/s : time 301.442 seconds\n[RESULT]                 find      400.000000 kIOPS : time 19.881 seconds\n[SCORE ] Bandwidth 2 GiB/s : IOPS 400 kiops : TOTAL 28\n";
        let got = parse(summary, None, Some("[run]\nprocs = 8\n; START 2026-11-20 09:14:03\n")).unwrap();
        assert_eq!(got.runs.len(), 1);
        let r = &got.runs[0];
        assert_eq!(
            (r.name.as_deref(), r.workload.tasks, r.phases[0].figures.bandwidth),
            (Some("ior-easy-write"), 8, Some(2.0 * GIB))
        );
        assert!(r.tool_params["io500.find"].starts_with("find"));
        assert_eq!(r.provenance, "imported:io500 v9");
        assert!(got.io500.unwrap().starts_with("[SCORE ]"));
    }

    #[test]
    fn an_unknown_phase_or_a_cut_list_is_refused() {
        let bad = parse("[RESULT] ior-odd 1 GiB/s : time 1 seconds\n[SCORE ] x\n", None, None).unwrap_err();
        assert_eq!(bad.line, 1);
        assert!(parse("[RESULT] ior-easy-write 1 GiB/s : time 1 seconds\n", None, None)
            .unwrap_err()
            .expected
            .contains("did not finish"));
        assert_eq!(
            parse("[RESULT] ior-easy-write x GiB/s : time 1 seconds\n[SCORE ] x\n", None, None).unwrap_err().line,
            1
        );
    }
}
