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
    let empty = Map::new();
    // Read in place, never copied per job: a job's options are its own, then these.
    let global = v.get("global options").and_then(Value::as_object).unwrap_or(&empty);
    let Some(jobs) = v.get("jobs").and_then(Value::as_array).filter(|j| !j.is_empty()) else {
        return Err(Bad::at(doc.line_of("jobs", 0), "fio's list of jobs (\"jobs\")"));
    };
    bounded(&doc, global, jobs)?;
    let source = format!("fio {version}");
    let mut runs = Vec::new();
    // How many sides before this one have json+ bins: the nth "bins" of the text is its.
    let mut bins_seen = 0;
    for (j, job) in jobs.iter().enumerate() {
        let own = job.get("job options").and_then(Value::as_object).unwrap_or(&empty);
        let opt = |k: &str| own.get(k).or_else(|| global.get(k)).map(text::param_text);
        let rw = opt("rw").or(opt("readwrite")).unwrap_or_else(|| "read".into());
        let mut phases = Vec::new();
        let mut ops = Vec::new();
        for (d, (key, op)) in [("read", Op::Read), ("write", Op::Write)].into_iter().enumerate() {
            let Some(side) = job.get(key) else { continue };
            let bins_nth = bins_seen;
            bins_seen += has_bins(side) as usize;
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
            p.latency = latency(&doc, side, nth, bins_nth)?;
            ops.push(op);
            phases.push(p);
        }
        bins_seen += job.get("trim").is_some_and(has_bins) as usize;
        if phases.is_empty() {
            continue;
        }
        let workload = workload(&opt, &rw, ops);
        // Both maps are sorted by name: the job's own option wins where both name one.
        let options: BTreeMap<&String, &Value> = global.iter().chain(own).collect();
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

/// The workload of a job whose options `opt` reads (its own, then the global ones), of
/// readwrite mode `rw`, that ran `ops`.
fn workload(opt: &dyn Fn(&str) -> Option<String>, rw: &str, ops: Vec<Op>) -> Workload {
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
    Workload { ops, tasks: numjobs as usize, ..Workload::from(data) }
}

/// The most option text the runs of one file may hold, parameters and command lines
/// together: far above any fio file (a few dozen options of each job), far below what a
/// small file of many global options and many jobs would make when each job repeats them.
pub const MAX_OPTION_BYTES: usize = 64 << 20;

/// Refuses, before any run is built, a file whose runs would hold more than
/// [`MAX_OPTION_BYTES`] of options: each run keeps the global options with its own, in its
/// parameters and in its command line.
fn bounded(doc: &Json, global: &Map<String, Value>, jobs: &[Value]) -> Result<(), Bad> {
    let size = |m: &Map<String, Value>| m.iter().map(|(k, v)| k.len() + text::param_text(v).len() + 8).sum::<usize>();
    let shared = size(global);
    let mut total: usize = 0;
    for job in jobs {
        let own = job.get("job options").and_then(Value::as_object).map_or(0, size);
        // Twice: once as parameters, once in the command line.
        total = total.saturating_add(shared.saturating_add(own).saturating_mul(2));
        if total > MAX_OPTION_BYTES {
            let why = format!(
                "options the runs can hold: {} jobs, each keeping {} global options, would make more than {} MiB of parameters",
                jobs.len(),
                global.len(),
                MAX_OPTION_BYTES >> 20
            );
            return Err(Bad::at(doc.line_of("global options", 0), why));
        }
    }
    Ok(())
}

/// Whether a side's completion latency has json+ bins.
fn has_bins(side: &Value) -> bool {
    side.get("clat_ns").or_else(|| side.get("clat")).is_some_and(|c| c.get("bins").is_some())
}

/// The completion latency of one direction: the json+ bins as iosurvey's histogram, else
/// fio's own percentiles; nanoseconds either way (`clat` of old fio is microseconds).
/// `bins_nth`: how many sides before this one have bins.
fn latency(doc: &Json, side: &Value, nth: usize, bins_nth: usize) -> Result<Latency, Bad> {
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
        // Found only for an error: looking it up scans the text from its start, and once per
        // job that made reading a file quadratic in its jobs.
        let line = || doc.line_of("bins", bins_nth);
        for (at, count) in bins {
            let value =
                text::number(at, 0, "a latency in ns as a bin's name").map_err(|b| Bad::at(line(), b.expected))?;
            let c =
                count.as_u64().ok_or_else(|| Bad::at(line(), format!("a count for the bin {}", text::shorten(at))))?;
            // The histogram sums its counts: their total must fit, as fio's N does.
            total = total.checked_add(c).ok_or_else(|| Bad::at(line(), "bin counts that add up to fio's N"))?;
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
