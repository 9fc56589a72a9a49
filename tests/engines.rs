//! Every engine against the sync engine: the same bytes in the files for every pattern and
//! access, verified reads, with and without O_DIRECT; latency and time series that add up.

mod common;

use common::*;
use std::fs;

/// Engines this kernel allows, as `iosurvey engines` reports them (the others are skipped, said).
fn available() -> Vec<String> {
    let out = iosurvey(&["engines"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .filter_map(|l| {
            let name = l.split_whitespace().next()?.to_string();
            if l.contains("NOT available") {
                eprintln!("skipped engine: {l}");
                None
            } else {
                Some(name)
            }
        })
        .collect()
}

/// Writes and reads with `engine`, keeps the files, and returns their bytes.
fn contents(engine: &str, workload: &str) -> Vec<Vec<u8>> {
    let bed = Bed::new();
    let depth = if engine == "io_uring" || engine == "libaio" { 8 } else { 1 };
    let out = bed.run(&format!("--engine {engine} --iodepth {depth} {workload} --verify --signature 21 --keep"));
    assert_eq!(out.code, 0, "{engine} {workload}: {}", out.stderr);
    let run = bed.last_run();
    let read = run["phases"].as_array().unwrap().iter().find(|p| p["op"] == "read").unwrap();
    assert_eq!(read["verify"]["bad"], 0);
    assert!(read["verify"]["checked"].as_u64().unwrap() > 0);
    let mut names = bed.entries();
    names.retain(|n| n.starts_with("iosurvey."));
    names.iter().map(|n| fs::read(bed.dir.join(n)).unwrap()).collect()
}

#[test]
fn every_engine_writes_what_sync_writes_for_every_pattern() {
    let engines = available();
    for access in ["--access shared --layout strided", "--access file-per-task"] {
        for pattern in ["sequential", "random", "backward", "stride:3"] {
            let workload = format!("{access} --pattern {pattern} --transfer 4k --block 96k --segments 2 --tasks 3");
            let reference = contents("sync", &workload);
            for engine in engines.iter().filter(|e| *e != "sync") {
                assert!(contents(engine, &workload) == reference, "{engine} differs from sync: {workload}");
            }
        }
    }
}

#[test]
fn every_engine_works_with_direct_io() {
    for engine in available() {
        let workload = "--pattern random --transfer 4k --block 256k --tasks 2 --direct";
        assert!(contents(&engine, workload) == contents("sync", workload), "{engine} with --direct");
    }
}

#[test]
fn the_time_series_adds_up_to_the_phase_and_latency_counts_every_transfer() {
    let bed = Bed::new();
    let out = bed.run("--engine io_uring --iodepth 4 --transfer 16k --block 64m --tasks 2 --fsync --interval 0.005");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    for phase in run["phases"].as_array().unwrap() {
        let sum = |k: &str| phase["series"][k].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum::<u64>();
        let figures = &phase["figures"];
        assert_eq!(sum("bytes"), figures["bytes"].as_u64().unwrap(), "series bytes = phase bytes");
        assert_eq!(sum("ops"), figures["ops"].as_u64().unwrap(), "series ops = phase ops");
        assert_eq!(phase["latency"]["count"], figures["ops"], "one latency per transfer, all tasks merged");
        let l = &phase["latency"];
        let p = |k: &str| l[k].as_u64().unwrap();
        assert!(p("min") <= p("p50") && p("p50") <= p("p90") && p("p90") <= p("p99") && p("p99") <= p("max"));
        let buckets: u64 = l["buckets"].as_array().unwrap().iter().map(|b| b[1].as_u64().unwrap()).sum();
        assert_eq!(buckets, p("count"));
    }
}

#[test]
fn a_queue_depth_without_a_queueing_engine_is_refused() {
    let bed = Bed::new();
    assert_one_line_error(&bed.run("--iodepth 32 --block 1m"), 2, &["sync engine", "--iodepth 32"]);
}
