//! fio's JSON (`--output-format=json` or `json+`): each job a run, its read and write a phase
//! each. Bandwidth is `bw_bytes` (bytes/s), or `bw` in KiB/s where older fio has no
//! `bw_bytes`; the completion latency's json+ bins (nanoseconds: count) become iosurvey's
//! latency histogram, and without bins its percentiles are kept as fio gave them.

use super::text::{self, Json};
use super::{figures, phase, Bad, Imported, Made, KIB};
use crate::env::Environment;
use crate::measure::histogram::{bucket, Histogram, Latency, BUCKETS};
use crate::spec::{Access, Data, EngineName, Op, Pattern, Workload};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Reads fio's JSON output.
pub fn parse(input: &str) -> Result<Imported, Bad> {
    // fio prints some notes and job lines to the same output before its JSON: they are
    // blanked, so that lines keep their numbers.
    let start = input.lines().position(|l| l.starts_with('{')).unwrap_or(0);
    let blanked: String;
    let input = if start == 0 {
        input
    } else {
        blanked = "\n".repeat(start) + &input.lines().skip(start).collect::<Vec<_>>().join("\n");
        &blanked
    };
    let doc = Json::parse(input, "fio's JSON")?;
    let v = &doc.value;
    let version = doc.text(v, "fio version", 0)?;
    let version = version.trim_start_matches("fio-").to_string();
    let started = v.get("timestamp").and_then(Value::as_i64).unwrap_or(0);
    let global: Map<String, Value> = v.get("global options").and_then(Value::as_object).cloned().unwrap_or_default();
    let Some(jobs) = v.get("jobs").and_then(Value::as_array).filter(|j| !j.is_empty()) else {
        return Err(Bad::at(doc.line_of("jobs", 0), "fio's list of jobs (\"jobs\")"));
    };
    let source = format!("fio {version}");
    let mut runs = Vec::new();
    for (j, job) in jobs.iter().enumerate() {
        let mut options = global.clone();
        if let Some(own) = job.get("job options").and_then(Value::as_object) {
            options.extend(own.clone());
        }
        let opt = |k: &str| options.get(k).map(text::param_text);
        let rw = opt("rw").or(opt("readwrite")).unwrap_or_else(|| "read".into());
        let mut phases = Vec::new();
        let mut ops = Vec::new();
        for (d, (key, op)) in [("read", Op::Read), ("write", Op::Write)].into_iter().enumerate() {
            let Some(side) = job.get(key) else { continue };
            // Every job has a read, a write and a trim side, each naming the same fields.
            let nth = j * 3 + d;
            let bytes = doc.number(side, "io_bytes", nth)?;
            if bytes == 0.0 {
                continue;
            }
            let bandwidth = match side.get("bw_bytes") {
                Some(_) => doc.number(side, "bw_bytes", nth)?,
                None => doc.number(side, "bw", nth)? * KIB,
            };
            let iops = doc.number(side, "iops", nth)?;
            let ms = doc.number(side, "runtime", nth)?;
            let calls = doc.number(side, "total_ios", nth).unwrap_or(0.0);
            let mut p = phase(op, 0, figures(bytes as u64, calls as u64, ms / 1000.0, Some(bandwidth), Some(iops)));
            p.latency = latency(&doc, side, nth)?;
            ops.push(op);
            phases.push(p);
        }
        if phases.is_empty() {
            continue;
        }
        let size = |k: &str| opt(k).and_then(|s| text::size(&s));
        let transfer = size("bs").or(size("blocksize")).unwrap_or(4096);
        let numjobs = opt("numjobs").and_then(|n| n.parse::<u64>().ok()).unwrap_or(1).max(1);
        let random = rw.starts_with("rand");
        let mut data = Data {
            access: Access::FilePerTask,
            pattern: if random { Pattern::Random } else { Pattern::Sequential },
            transfer,
            block: size("size").map_or(transfer, |s| s / numjobs.max(1)).max(transfer),
            direct: opt("direct").is_some_and(|d| d == "1"),
            iodepth: opt("iodepth").and_then(|d| d.parse().ok()).unwrap_or(1).max(1),
            ..Data::default()
        };
        if let Some(engine) = opt("ioengine") {
            data.engine = match engine.as_str() {
                "psync" | "sync" | "pvsync" => EngineName::new("sync", None),
                "libaio" => EngineName::new("libaio", None),
                "io_uring" => EngineName::new("io_uring", None),
                "mmap" => EngineName::new("mmap", None),
                // Named as fio names it: an engine iosurvey does not have.
                other => EngineName::new(other, None),
            };
        }
        let workload = Workload { ops, tasks: numjobs as usize, ..Workload::from(data) };
        let mut params: BTreeMap<String, String> =
            options.iter().map(|(k, val)| (format!("fio.{k}"), text::param_text(val))).collect();
        if let Some(name) = job.get("jobname").and_then(Value::as_str) {
            params.insert("fio.jobname".into(), name.to_string());
        }
        let target = opt("filename").or(opt("directory")).unwrap_or_default();
        let host = job.get("hostname").and_then(Value::as_str).unwrap_or_default().to_string();
        let env = Environment { host, target, tool_version: version.clone(), ..Environment::default() };
        let command = format!(
            "fio {}",
            options.iter().map(|(k, v)| format!("--{k}={}", text::param_text(v))).collect::<Vec<_>>().join(" ")
        );
        let made = Made { source: source.clone(), workload, env, command_line: command, started };
        runs.push(super::run(made, phases, params));
    }
    if runs.is_empty() {
        return Err(Bad::at(doc.line_of("jobs", 0), "a fio job that read or wrote bytes"));
    }
    Ok(Imported { source, runs, ..Imported::default() })
}

/// The completion latency of one direction: the json+ bins as iosurvey's histogram, else
/// fio's own percentiles; nanoseconds either way (`clat` of old fio is microseconds).
fn latency(doc: &Json, side: &Value, nth: usize) -> Result<Latency, Bad> {
    let (clat, scale) = match (side.get("clat_ns"), side.get("clat")) {
        (Some(c), _) => (c, 1.0),
        (None, Some(c)) => (c, 1000.0),
        _ => return Ok(Latency::default()),
    };
    let n = clat.get("N").and_then(Value::as_u64).unwrap_or(0);
    if n == 0 {
        return Ok(Latency::default());
    }
    let ns = |k: &str| doc.number(clat, k, nth).map(|v| (v * scale).round() as u64);
    let (min, max, mean) = (ns("min")?, ns("max")?, doc.number(clat, "mean", nth)? * scale);
    if min > max {
        return Err(Bad::at(doc.line_of("max", nth), format!("a latency maximum of at least the minimum ({min} ns)")));
    }
    if let Some(bins) = clat.get("bins").and_then(Value::as_object) {
        let mut counts = vec![0u64; BUCKETS];
        let mut total: u64 = 0;
        let line = doc.line_of("bins", nth);
        for (at, count) in bins {
            let value = text::number(at, line, "a latency in ns as a bin's name")?;
            let c =
                count.as_u64().ok_or_else(|| Bad::at(line, format!("a count for the bin {}", text::shorten(at))))?;
            // The histogram sums its counts: their total must fit, as fio's N does.
            total = total.checked_add(c).ok_or_else(|| Bad::at(line, "bin counts that add up to fio's N"))?;
            counts[bucket((value * scale).round() as u64)] += c;
        }
        let sum = (mean * n as f64).round() as u64;
        let mut summary = Histogram::from_parts(counts, sum, min, max).summary();
        // fio's exact mean, not the one rounded back from the sum.
        summary.mean = mean;
        return Ok(summary);
    }
    let pct = clat.get("percentile").and_then(Value::as_object);
    let at = |p: &str| pct.and_then(|m| m.get(p)).and_then(Value::as_f64).map_or(0, |v| (v * scale).round() as u64);
    Ok(Latency {
        count: n,
        mean,
        min,
        p50: at("50.000000"),
        p90: at("90.000000"),
        p99: at("99.000000"),
        p999: at("99.900000"),
        p9999: at("99.990000"),
        max,
        buckets: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(side: &str) -> String {
        format!("{{\"fio version\": \"fio-3.33\", \"timestamp\": 5, \"jobs\": [{{\"jobname\": \"j\", \"job options\": {{\"rw\": \"randwrite\", \"bs\": \"4k\", \"size\": \"1m\"}}, \"write\": {side}}}]}}")
    }

    #[test]
    fn bins_become_the_latency_histogram() {
        let side = "{\"io_bytes\": 8192, \"bw\": 4, \"iops\": 1000.5, \"runtime\": 2, \"total_ios\": 2, \"clat_ns\": {\"N\": 3, \"min\": 1000, \"max\": 5000, \"mean\": 2333.3, \"bins\": {\"1000\": 2, \"5000\": 1}}}";
        let r = &parse(&job(side)).unwrap().runs[0];
        let p = &r.phases[0];
        assert_eq!((p.op, p.figures.bandwidth, p.figures.iops), (Op::Write, Some(4.0 * 1024.0), Some(1000.5)));
        assert_eq!((p.latency.count, p.latency.min, p.latency.max), (3, 1000, 5000));
        // The median to within iosurvey's bucket (0.8%).
        assert!(p.latency.p50.abs_diff(1000) <= 8, "{}", p.latency.p50);
        assert_eq!(p.latency.mean, 2333.3);
        let d = r.workload.data().unwrap();
        assert_eq!((d.pattern, d.transfer, d.block), (Pattern::Random, 4096, 1 << 20));
        assert_eq!(r.provenance, "imported:fio 3.33");
    }

    #[test]
    fn lines_before_the_json_are_passed_over() {
        let side = "{\"io_bytes\": 8192, \"bw\": 4, \"iops\": 1, \"runtime\": 2}";
        let text = format!("note: a job line\n{}", job(side));
        assert_eq!(parse(&text).unwrap().runs.len(), 1);
        assert_eq!(detect_fio(&text), Some(crate::import::Tool::Fio));
        let bad = "note\n{\n\"fio version\": 3\n,";
        assert_eq!(parse(bad).unwrap_err().line, 4);
    }

    fn detect_fio(text: &str) -> Option<crate::import::Tool> {
        crate::import::detect("f.json", text)
    }

    #[test]
    fn latencies_that_cannot_be_are_refused() {
        let side =
            |clat: &str| format!("{{\"io_bytes\": 1, \"bw\": 1, \"iops\": 1, \"runtime\": 1, \"clat_ns\": {clat}}}");
        let upside_down = side("{\"N\": 1, \"min\": 9, \"max\": 1, \"mean\": 5}");
        assert!(parse(&job(&upside_down)).unwrap_err().expected.contains("maximum"));
        let huge =
            side("{\"N\": 1, \"min\": 1, \"max\": 9, \"mean\": 5, \"bins\": {\"1\": 18446744073709551615, \"2\": 1}}");
        assert!(parse(&job(&huge)).unwrap_err().expected.contains("add up"));
    }

    #[test]
    fn a_bad_figure_names_its_line() {
        let text = job("{\n\"io_bytes\": 8192,\n\"bw\": \"lots\",\n\"iops\": 1, \"runtime\": 2}");
        let bad = parse(&text).unwrap_err();
        assert_eq!(bad.line, 3);
        assert!(bad.expected.contains("\"bw\""), "{}", bad.expected);
    }
}
