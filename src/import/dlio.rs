//! DLIO's `summary.json` (the engine of MLPerf Storage; mlpstorage keeps one per invocation
//! in `RESULTS/training/MODEL/run/YYYYMMDD_HHMMSS/`): a training run, stored with the same
//! figures by the same names (`train.*`) as iosurvey's own `train`, so an official run sits
//! beside iosurvey's in `ls`, `show`, `compare` and the report's AU chart.
//!
//! DLIO gives per-epoch lists and their means: `metric.train_au_mean_percentage` (the mean
//! over epochs of the ranks' mean AU), `train_throughput_mean_samples_per_second` (summed
//! over ranks) and `train_io_mean_MB_per_second`, which is MiB/s whatever its name says
//! (samples/s x record length / 2^20). docs/methodology.md, "Imported results", says so too.

use super::text::{self, Json};
use super::{figures, phase, Bad, Imported, Made};
use crate::env::Environment;
use crate::spec::{Data, Op, Workload};
use serde_json::Value;
use std::collections::BTreeMap;

/// Whether a JSON text is DLIO's summary: its metric block has the AU DLIO computes.
pub fn looks_like(head: &str) -> bool {
    head.contains("\"train_au_mean_percentage\"") || head.contains("\"train_au_percentage\"")
}

/// Reads DLIO's summary.json; `model`, when the file's place names it (mlpstorage's
/// `training/MODEL/run/...`), is the workload's name.
pub fn parse(input: &str, model: Option<&str>) -> Result<Imported, Bad> {
    let doc = Json::parse(input, "DLIO's summary.json")?;
    let v = &doc.value;
    let metric = v.get("metric").ok_or_else(|| Bad::at(1, "DLIO's \"metric\" (a summary of a training run)"))?;
    let au = doc.number(metric, "train_au_mean_percentage", 0)? / 100.0;
    if !(0.0..=1.0 + 1e-9).contains(&au) {
        return Err(Bad::at(doc.line_of("train_au_mean_percentage", 0), "an AU of 0 to 100 percent"));
    }
    let samples = doc.number(metric, "train_throughput_mean_samples_per_second", 0)?;
    let mib = doc.number(metric, "train_io_mean_MB_per_second", 0)?;
    let accelerators = doc.number(v, "num_accelerators", 0)?.max(1.0) as usize;
    let started = v.get("start").and_then(Value::as_str).and_then(text::iso).unwrap_or(0);
    let ended = v.get("end").and_then(Value::as_str).and_then(text::iso);
    let secs = ended.map_or(0.0, |e| e.saturating_sub(started).max(0) as f64);
    let host = v.get("hostname").and_then(Value::as_str).unwrap_or("").to_string();
    let mut params = BTreeMap::new();
    let mut put = |k: &str, v: String| drop(params.insert(format!("train.{k}"), v));
    put("workload", model.unwrap_or("dlio").to_string());
    put("accelerators", accelerators.to_string());
    put("au", au.to_string());
    // DLIO judges the AU against its workload's threshold without saying it: MLPerf
    // Storage's, as iosurvey's presets hold it, for a workload it names.
    let preset = model.and_then(|m| <crate::train::Model as clap::ValueEnum>::from_str(m, true).ok());
    if let Some(m) = preset {
        put("au_target", m.preset().shape.au.to_string());
    }
    if let Some(said) = metric.get("train_au_meet_expectation").and_then(Value::as_str) {
        put("pass", if said == "success" { "pass" } else { "fail" }.into());
    }
    put("samples_per_s", format!("{samples:.2}"));
    put("read_mib_s", format!("{mib:.2}"));
    let list = |key: &str| {
        metric
            .get(key)
            .and_then(Value::as_array)
            .map(|xs| xs.iter().filter_map(Value::as_f64).map(|x| format!("{x}")).collect::<Vec<_>>().join(","))
    };
    if let Some(each) = list("train_au_percentage") {
        put("epoch_au_percent", each);
    }
    if let Some(each) = list("train_throughput_samples_per_second") {
        put("epoch_samples_per_s", each);
    }
    for (key, name) in
        [("num_files_train", "files"), ("num_samples_per_file", "samples_per_file"), ("epochs", "epochs")]
    {
        if let Some(n) = v.get(key).and_then(Value::as_u64) {
            put(name, n.to_string());
        }
    }
    let hosts = v.get("num_hosts").and_then(Value::as_u64);
    let ram = v.get("host_memory_GB").and_then(Value::as_array).and_then(|a| a.first()).and_then(Value::as_f64);
    let workload =
        Workload { ops: vec![Op::Read], tasks: accelerators, ..Workload::from(Data { block: 0, ..Data::default() }) };
    let made = Made {
        source: "dlio".into(),
        workload,
        env: Environment { host, ram_bytes: ram.map_or(0, |g| (g * 1e9) as u64), ..Environment::default() },
        command_line: format!(
            "dlio_benchmark (summary.json{})",
            hosts.map_or(String::new(), |h| format!(", {h} hosts"))
        ),
        started,
    };
    let bandwidth = mib * (1u64 << 20) as f64;
    let f = figures((bandwidth * secs) as u64, 0, secs, Some(bandwidth), None);
    let mut run = super::run(made, vec![phase(Op::Read, 0, f)], params);
    run.name = Some(format!("train {} x{accelerators}", model.unwrap_or("dlio")));
    Ok(Imported { source: "dlio".into(), runs: vec![run], ..Imported::default() })
}

/// The model mlpstorage's layout names for a summary at `path`: `.../training/MODEL/run/...`.
pub fn model_of(path: &std::path::Path) -> Option<String> {
    let parts: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let at = parts.iter().rposition(|p| p == "training")?;
    parts.get(at + 1).filter(|m| !m.is_empty()).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_au_and_rates_become_the_train_figures_and_a_bad_au_is_refused() {
        let text = r#"{"num_accelerators": 4, "hostname": "c1", "start": "2026-11-20T09:14:03.5", "end": "2026-11-20T09:15:43",
            "metric": {"train_au_percentage": [97.5, 98.5], "train_au_mean_percentage": 98.0,
            "train_au_meet_expectation": "success", "train_throughput_mean_samples_per_second": 40.0,
            "train_io_mean_MB_per_second": 5592.5}}"#;
        let got = parse(text, Some("unet3d")).unwrap();
        let r = &got.runs[0];
        let p = &r.tool_params;
        assert_eq!(
            (p["train.au"].as_str(), p["train.pass"].as_str(), p["train.accelerators"].as_str()),
            ("0.98", "pass", "4")
        );
        assert_eq!(p["train.epoch_au_percent"], "97.5,98.5");
        assert_eq!(r.phases[0].figures.bandwidth, Some(5592.5 * 1048576.0));
        assert_eq!(r.phases[0].figures.window_ns, 100_000_000_000);
        assert_eq!(r.provenance, "imported:dlio");
        let bad = "{\"metric\": {\n\"train_au_mean_percentage\": 140,\n\"train_throughput_mean_samples_per_second\": 1, \"train_io_mean_MB_per_second\": 1}, \"num_accelerators\": 1}";
        assert_eq!(parse(bad, None).unwrap_err().line, 2);
        assert_eq!(
            model_of(std::path::Path::new("/r/training/resnet50/run/20260101_000000/summary.json")).as_deref(),
            Some("resnet50")
        );
    }
}
