//! Every engine against the sync engine: the same bytes in the files for every pattern and
//! access, verified reads, with and without O_DIRECT; latency and time series that add up.

mod common;

use common::*;
use std::fs;

/// Storage engines this kernel allows, as `iosurvey engines --json` reports them (the others
/// are skipped through `skip`: a failure under `CI=true`).
fn available() -> Vec<String> {
    let out = iosurvey(&["engines", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let states: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    states
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            if e["available"] == true {
                Some(name)
            } else {
                skip(&format!("engine {name}: {}", e["reason"]));
                None
            }
        })
        .collect()
}

/// Writes and reads with `engine`, keeps the files, and returns their bytes.
fn contents(engine: &str, workload: &str) -> Vec<Vec<u8>> {
    let bed = Bed::new();
    let queues = iosurvey::engine::backends::entry(&engine.parse().unwrap()).caps.queues;
    let depth = if queues { 8 } else { 1 };
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
    // stdio's buffer cannot be aligned for O_DIRECT: the stream engine refuses it (below).
    for engine in available().into_iter().filter(|e| e != "stream") {
        // The vectored engine's 16 pieces must each be aligned: 64 KiB transfers for it.
        let transfer = if engine == "vectored" { "64k" } else { "4k" };
        let workload = format!("--pattern random --transfer {transfer} --block 256k --tasks 2 --direct");
        assert!(contents(&engine, &workload) == contents("sync", &workload), "{engine} with --direct");
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
    // The engines that keep a queue, as the registry says.
    let queueing = format!("--engine {}", iosurvey::engine::backends::queueing());
    assert_one_line_error(&bed.run("--iodepth 32 --block 1m"), 2, &["sync engine", "queue depth of 32", &queueing]);
    assert!(queueing.contains("io_uring"), "{queueing}");
}

#[test]
fn engines_json_lists_the_registry_and_all_adds_the_test_engines() {
    let names = |args: &[&str]| -> Vec<String> {
        let out = iosurvey(args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| {
                assert!(e["available"].is_boolean() && e["capabilities"]["queues"].is_boolean(), "{e}");
                e["name"].as_str().unwrap().to_string()
            })
            .collect()
    };
    use iosurvey::engine::backends::ENGINES;
    let registry = |all: bool| -> Vec<String> {
        ENGINES.iter().filter(|e| all || !e.caps.hidden).map(|e| e.name.to_string()).collect()
    };
    assert_eq!(names(&["engines", "--json"]), registry(false));
    assert_eq!(names(&["engines", "--json", "--all"]), registry(true));
    assert!(registry(false).len() < registry(true).len(), "the registry has engines for tests, listed with --all");
    let text = iosurvey(&["engines"]);
    assert_eq!(text.stdout.lines().count(), registry(false).len(), "{}", text.stdout);
    for hidden in ENGINES.iter().filter(|e| e.caps.hidden) {
        assert!(!text.stdout.contains(hidden.name), "{}: {}", hidden.name, text.stdout);
    }
}

/// Runs `args` on the null engine with its trace on; it must succeed. Returns the trace's path.
fn run_traced(bed: &Bed, args: &str) -> std::path::PathBuf {
    let path = bed.tmp.path().join("trace");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["run", "--dir", bed.dir.to_str().unwrap(), "--db", &bed.db, "-q", "--engine", "null"])
        .args(args.split(' '))
        .env("IOSURVEY_TRACE", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

/// The lines of a trace the test engines wrote: (task, op, offset, length).
fn trace(path: &std::path::Path) -> Vec<(u64, String, u64, u64)> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].parse().unwrap(), f[1].to_string(), f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn the_null_engine_gives_exact_counts_and_layouts_without_storage() {
    let bed = Bed::new();
    let path = run_traced(
        &bed,
        "--access shared --layout strided --transfer 4k --block 12k --segments 2 --tasks 3 --iterations 2 --keep",
    );
    assert!(bed.entries().is_empty(), "no file made, even with --keep: {:?}", bed.entries());
    let run = bed.last_run();
    let phases = run["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    for p in phases {
        // 3 tasks x 2 segments x 3 transfers of 4 KiB.
        assert_eq!((p["figures"]["bytes"].as_u64(), p["figures"]["ops"].as_u64()), (Some(73728), Some(18)));
        assert_eq!(p["latency"]["count"], 18);
        let sum = |k: &str| p["series"][k].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum::<u64>();
        assert_eq!((sum("bytes"), sum("ops")), (73728, 18));
        assert_eq!(p["possibly_cached"], serde_json::Value::Null, "no storage, no cache");
    }
    // IOR's strided layout: transfer k of the file belongs to task k mod 3.
    let lines = trace(&path);
    assert_eq!(lines.len(), 4 * 18);
    for (task, op, offset, len) in &lines {
        assert!(op == "write" || op == "read");
        assert_eq!(*len, 4096);
        assert_eq!((offset / 4096) % 3, *task, "offset {offset} of task {task}");
    }
    let mut first_write: Vec<u64> = lines.iter().take(18).map(|l| l.2).collect();
    first_write.sort();
    assert_eq!(first_write, (0..18).map(|k| k * 4096).collect::<Vec<_>>(), "every transfer exactly once");
}

#[test]
fn the_delay_engine_bounds_latency_and_bandwidth_from_below_and_above() {
    let bed = Bed::new();
    let out = bed.run("--engine delay:2ms --iodepth 2 --transfer 4k --block 80k --tasks 2");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    for p in run["phases"].as_array().unwrap() {
        assert_eq!(p["figures"]["ops"], 40);
        assert!(p["latency"]["min"].as_u64().unwrap() >= 2_000_000, "no latency below D: {}", p["latency"]);
        // Each task keeps 2 transfers of 4 KiB in flight, each for at least 2 ms.
        let ceiling = 2.0 * (2.0 * 4096.0 / 0.002);
        let bw = p["figures"]["bandwidth"].as_f64().unwrap();
        assert!(bw <= ceiling, "bandwidth {bw} above what D allows ({ceiling})");
    }
}

#[test]
fn a_sweep_on_the_null_engine_stores_every_point_with_its_exact_bytes() {
    let bed = Bed::new();
    let out = bed.run("--engine null --tasks 4 --clients 1..4 --transfer 64k --block 1m --op write");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let runs = bed.runs();
    assert_eq!(runs.len(), 4);
    for (k, r) in runs.iter().enumerate() {
        let run = bed.show(r["id"].as_i64().unwrap());
        assert_eq!(run["sweep_id"], runs[0]["sweep_id"]);
        assert_eq!(run["phases"][0]["figures"]["bytes"], (k as u64 + 1) << 20);
        assert_eq!(run["phases"][0]["tasks"].as_array().unwrap().len(), k + 1);
    }
}

#[test]
fn rewrite_and_reread_are_phases_of_their_own_and_their_data_is_checked() {
    let bed = Bed::new();
    let out = bed.run("--op rewrite --transfer 4k --block 64k");
    assert_one_line_error(&out, 2, &["iosurvey.000000"]);
    let out = bed.run("--op write,rewrite,read,reread --verify --transfer 4k --block 64k --tasks 2");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let phases = run["phases"].as_array().unwrap();
    let ops: Vec<&str> = phases.iter().map(|p| p["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["write", "rewrite", "read", "reread"]);
    for p in phases {
        assert_eq!(p["figures"]["ops"], 32, "2 tasks x 16 transfers in {}", p["op"]);
    }
    for p in &phases[2..] {
        assert_eq!((p["verify"]["checked"].as_u64(), p["verify"]["bad"].as_u64()), (Some(32), Some(0)), "{}", p["op"]);
    }
    assert!(phases[3]["possibly_cached"].is_string(), "a reread without dropped caches is flagged");
}

#[test]
fn the_same_pattern_rewrites_one_record_again_and_again() {
    let bed = Bed::new();
    let path = run_traced(&bed, "--pattern same --op write --transfer 4k --block 32k --tasks 2");
    let lines = trace(&path);
    assert_eq!(lines.len(), 16, "8 transfers per task");
    assert!(lines.iter().all(|(_, op, offset, len)| op == "write" && *offset == 0 && *len == 4096), "{lines:?}");
    let out = bed.run("--pattern same --verify --transfer 4k --block 32k");
    assert_one_line_error(&out, 2, &["same pattern"]);
}

#[test]
fn the_vectored_engine_writes_what_the_sync_engine_reads_back() {
    let bed = Bed::new();
    let out = bed
        .run("--engine vectored --op write --transfer 100000 --block 1000000 --tasks 2 --verify --signature 5 --keep");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = bed.run("--engine sync --op read --transfer 100000 --block 1000000 --tasks 2 --verify --signature 5");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(bed.last_run()["phases"][0]["verify"]["bad"], 0);
    let out = bed.run("--engine vectored --op read --transfer 100000 --block 1000000 --tasks 2 --verify --signature 5");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(bed.last_run()["phases"][0]["verify"]["checked"], 20);
    let out = bed.run("--engine vectored --direct --transfer 4k --block 64k");
    assert_one_line_error(&out, 2, &["vectored engine needs transfers of a multiple of 64 KiB"]);
}

#[test]
fn the_stream_engine_writes_through_stdio_what_the_sync_engine_reads_back() {
    for pattern in ["sequential", "random", "backward"] {
        let workload = format!("--pattern {pattern} --transfer 12k --block 1200k --tasks 2");
        assert!(contents("stream", &workload) == contents("sync", &workload), "stream, {pattern}");
    }
    let bed = Bed::new();
    let out = bed.run("--engine stream --direct --transfer 4k --block 64k");
    assert_one_line_error(&out, 2, &["stream engine goes through stdio"]);
}

#[test]
fn a_mix_phase_draws_reads_and_writes_in_the_asked_proportion_the_same_way_every_time() {
    let bed = Bed::new();
    let args = "--op mix --pattern random --read-percent 30 --transfer 4k --block 8m --tasks 2";
    let first = trace(&run_traced(&bed, args));
    assert_eq!(first.len(), 2 * 2048, "every transfer of both tasks, once");
    let reads = first.iter().filter(|l| l.1 == "read").count();
    let writes = first.iter().filter(|l| l.1 == "write").count();
    assert_eq!(reads + writes, first.len());
    // 4096 draws at 30%: within 4 standard deviations (about 117) of 1229.
    assert!((1110..=1350).contains(&reads), "{reads} reads of {}", first.len());
    fs::remove_file(bed.tmp.path().join("trace")).unwrap();
    // Each task appends its lines at the end of the phase, in whichever order the tasks end.
    let sorted = |mut lines: Vec<(u64, String, u64, u64)>| {
        lines.sort();
        lines
    };
    let again = sorted(trace(&run_traced(&bed, args)));
    assert!(again == sorted(first), "seeded: the same draws again");
    let all_reads = trace(&run_traced(&Bed::new(), "--op mix --read-percent 100 --transfer 4k --block 64k"));
    assert!(all_reads.iter().all(|l| l.1 == "read"));
}

#[test]
fn a_mix_phase_runs_on_real_files_a_write_made() {
    let bed = Bed::new();
    assert_one_line_error(&bed.run("--op mix --transfer 4k --block 64k"), 2, &["iosurvey.000000"]);
    let out = bed.run("--op write,mix --pattern random --read-percent 50 --transfer 4k --block 1m --tasks 2 --engine io_uring --iodepth 8");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let mix = &run["phases"][1];
    assert_eq!((mix["op"].as_str(), mix["figures"]["ops"].as_u64()), (Some("mix"), Some(512)));
    assert!(mix["figures"]["iops"].as_f64().unwrap() > 0.0);
    assert_one_line_error(
        &bed.run("--op write,mix --verify --transfer 4k --block 64k"),
        2,
        &["verification cannot follow a mix", "--verify"],
    );
    assert_one_line_error(
        &bed.run("--op write,mix --engine mmap --transfer 4k --block 64k"),
        2,
        &["cannot mix reads and writes"],
    );
}

/// Entries made in and removed from a directory, in order, as the kernel reports them.
struct Watch(std::os::fd::OwnedFd);

impl Watch {
    fn new(dir: &std::path::Path) -> Watch {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: plain calls; the descriptor is owned from here on.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify: {}", std::io::Error::last_os_error());
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        let mask = libc::IN_CREATE | libc::IN_DELETE;
        assert!(unsafe { libc::inotify_add_watch(std::os::fd::AsRawFd::as_raw_fd(&fd), path.as_ptr(), mask) } >= 0);
        Watch(fd)
    }

    /// ("create" or "delete", name) of every event so far.
    fn events(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            // SAFETY: reads into a buffer of the length given.
            let n = unsafe { libc::read(std::os::fd::AsRawFd::as_raw_fd(&self.0), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return out;
            }
            let mut at = 0;
            while at < n as usize {
                // SAFETY: the kernel writes whole events; read_unaligned copes with any offset.
                let e: libc::inotify_event = unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                let start = at + std::mem::size_of::<libc::inotify_event>();
                let name = &buf[start..start + e.len as usize];
                let name = String::from_utf8_lossy(name.split(|&b| b == 0).next().unwrap()).into_owned();
                out.push((if e.mask & libc::IN_CREATE != 0 { "create" } else { "delete" }, name));
                at = start + e.len as usize;
            }
        }
    }
}

#[test]
fn every_write_iteration_writes_new_files_as_ior_repetitions_do() {
    for (access, files) in [("file-per-task", 2), ("shared", 1)] {
        let bed = Bed::new();
        let watch = Watch::new(&bed.dir);
        let out = bed.run(&format!("--access {access} --tasks 2 --block 1m --transfer 64k --iterations 3"));
        assert_eq!(out.code, 0, "{}", out.stderr);
        let mut data: Vec<(&str, String)> =
            watch.events().into_iter().filter(|(_, name)| name.starts_with("iosurvey.")).collect();
        data.sort_by(|a, b| a.1.cmp(&b.1)); // stable: each file's events keep their order
        let names: std::collections::BTreeSet<&String> = data.iter().map(|(_, n)| n).collect();
        assert_eq!(names.len(), files, "{access}: {data:?}");
        for name in names {
            let seen: Vec<&str> = data.iter().filter(|(_, n)| n == name).map(|(e, _)| *e).collect();
            // Made by each write phase, removed before the next one and at the end.
            assert_eq!(seen, ["create", "delete"].repeat(3), "{access} {name}");
        }
    }
}

#[test]
fn a_rewrite_overwrites_the_file_the_write_made() {
    let bed = Bed::new();
    let watch = Watch::new(&bed.dir);
    let out = bed.run("--tasks 1 --block 1m --transfer 64k --op write,rewrite,read");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let data: Vec<_> = watch.events().into_iter().filter(|(_, name)| name.starts_with("iosurvey.")).collect();
    assert_eq!(data, [("create", "iosurvey.000000".into()), ("delete", "iosurvey.000000".into())]);
}
