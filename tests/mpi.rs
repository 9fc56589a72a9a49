//! The MPI team under `mpirun --oversubscribe -np 4` on this machine (build with
//! `--features mpi`). Multi-node behaviour is tested on the test bed (tests/testbed.rs).
#![cfg(feature = "mpi")]

mod common;

use common::*;
use serde_json::Value;
use std::process::Command;
use std::time::Instant;

/// A bed whose runs go through mpirun with 4 ranks, or `None` (a `skip`) without mpirun.
fn mpi_bed() -> Option<Bed> {
    if Command::new("mpirun").arg("--version").output().is_err() {
        skip("mpirun is not installed");
        return None;
    }
    launcher_on(Bed::new())
}

/// Makes `bed`'s runs go through mpirun with 4 ranks, each launch with its own session
/// directory (concurrent launches otherwise race to make the same one under /tmp).
fn launcher_on(mut bed: Bed) -> Option<Bed> {
    let session = bed.tmp.path().join("ompi").display().to_string();
    bed.launcher =
        ["mpirun", "--oversubscribe", "--mca", "orte_tmpdir_base", &session, "-np", "4"].map(String::from).to_vec();
    // Open MPI refuses root unless told; CI runs as root.
    std::env::set_var("OMPI_ALLOW_RUN_AS_ROOT", "1");
    std::env::set_var("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    Some(bed)
}

#[test]
fn shared_file_contents_are_exact_across_ranks_and_threads() {
    let Some(bed) = mpi_bed() else { return };
    for layout in ["segmented", "strided"] {
        let out = bed.run(&format!(
            "--access shared --layout {layout} --tasks 2 --transfer 4k --block 8k --segments 2 --op write,read --verify --signature 11 --keep"
        ));
        assert_eq!(out.code, 0, "{}", out.stderr);
        let slots = headers(&bed.dir.join("iosurvey.shared"), 4096, 11);
        assert_eq!(slots.len(), 32, "4 ranks x 2 threads x 2 segments x 2 transfers");
        for (k, &(task, offset)) in slots.iter().enumerate() {
            let at = k as u64 * 4096;
            let owner = match layout {
                "segmented" => (at % (8 * 8192)) / 8192,
                _ => k as u64 % 8,
            };
            assert_eq!((task, offset), (owner, at), "{layout} slot {k}");
        }
        let run = bed.last_run();
        assert_eq!(run["workload"]["tasks"], 8);
        assert_eq!(run["phases"][1]["verify"]["checked"], 32);
        std::fs::remove_file(bed.dir.join("iosurvey.shared")).unwrap();
        std::fs::remove_file(bed.dir.join(".iosurvey-manifest")).unwrap();
    }
}

#[test]
fn the_aggregate_is_the_sum_of_its_parts() {
    let Some(bed) = mpi_bed() else { return };
    let out = bed.run("--tasks 2 --transfer 64k --block 2m --fsync");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    for phase in run["phases"].as_array().unwrap() {
        let tasks = phase["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 8);
        let n = |t: &Value, k: &str| t[k].as_u64().unwrap();
        let bytes: u64 = tasks.iter().map(|t| n(t, "bytes")).sum();
        let ops: u64 = tasks.iter().map(|t| n(t, "ops")).sum();
        let start = tasks.iter().map(|t| n(t, "open_start")).min().unwrap();
        let end = tasks.iter().map(|t| n(t, "close_end")).max().unwrap();
        let f = &phase["figures"];
        assert_eq!((f["bytes"].as_u64(), f["ops"].as_u64()), (Some(bytes), Some(ops)));
        assert_eq!(bytes, 8 * 2 * 1024 * 1024);
        assert_eq!(f["window_ns"].as_u64(), Some(end - start));
        let bw = f["bandwidth"].as_f64().unwrap();
        assert!((bw - bytes as f64 * 1e9 / (end - start) as f64).abs() < 1e-6 * bw);
        assert_eq!(phase["latency"]["count"].as_u64(), Some(ops), "histograms merged over ranks and threads");
        let series: u64 = phase["series"]["bytes"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(series, bytes, "the team's time series sums every rank's bytes");
        let mut ranks: Vec<u64> = tasks.iter().map(|t| n(t, "task")).collect();
        ranks.dedup();
        assert_eq!(ranks, (0..8).collect::<Vec<_>>(), "every task reports once, in rank order");
    }
    assert_eq!(run["hosts"].as_array().unwrap().len(), 1, "one machine is one node");
}

#[test]
fn every_phase_of_an_mpi_run_records_how_far_apart_its_ranks_started() {
    let Some(bed) = mpi_bed() else { return };
    // The first phase (tree-create, one directory per rank) is where the ranks began
    // milliseconds apart, each leaving the origin's reduction in its own time. How far apart
    // they start depends on the machine's load (bench/vs-mdtest and docs/methodology.md give
    // measured figures); what every run must hold is the skew, recorded right.
    let out = bed.meta("--items 100");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    for phase in run["phases"].as_array().unwrap() {
        let tasks = phase["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 4, "a task per rank");
        let starts: Vec<u64> = tasks.iter().map(|t| t["open_start"].as_u64().unwrap()).collect();
        let skew = starts.iter().max().unwrap() - starts.iter().min().unwrap();
        assert_eq!(phase["figures"]["start_skew_ns"].as_u64(), Some(skew), "recorded with every phase");
    }
}

#[test]
fn a_sweep_runs_every_point_in_one_launch_and_links_them() {
    let Some(bed) = mpi_bed() else { return };
    let out = bed.run("--tasks 2 --clients 1..8:x2 --total 8m --transfer 256k --verify");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let runs = bed.runs();
    assert_eq!(runs.len(), 4);
    let sweep = runs[0]["sweep_id"].clone();
    assert!(sweep.is_i64());
    assert!(runs.iter().all(|r| r["sweep_id"] == sweep && r["status"] == "ok"));
    for (run, clients) in runs.iter().zip([1u64, 2, 4, 8]) {
        let r = bed.show(run["id"].as_i64().unwrap());
        assert_eq!(r["workload"]["tasks"], clients);
        assert!(r["sweep_id"].is_i64());
        let write = &r["phases"][0];
        assert_eq!(write["tasks"].as_array().unwrap().len() as u64, clients);
        assert_eq!(write["figures"]["bytes"], 8 * 1024 * 1024, "--total keeps the aggregate fixed");
    }
    let text = iosurvey(&["ls", "--db", &bed.db]);
    assert_eq!(text.code, 0);
}

#[test]
fn an_error_on_one_rank_stops_every_rank_quickly_and_is_reported_by_the_lead() {
    if Command::new("mpirun").arg("--version").output().is_err() {
        skip("mpirun is not installed");
        return;
    }
    // Task 5's file fails with EIO after 1 MiB while the others would write 4 GiB each.
    let env = [
        ("FAULTFS_ERRNO", "5"),
        ("FAULTFS_OP", "write"),
        ("FAULTFS_AFTER_BYTES", "1048576"),
        ("FAULTFS_MATCH", "iosurvey.000005"),
    ];
    let Some(ffs) = FaultFs::mount(&env) else { return };
    let Some(bed) = launcher_on(ffs.bed.clone_paths()) else { return };
    let started = Instant::now();
    let out = bed.run("--tasks 2 --transfer 4k --block 4g --fsync-each --no-space-check");
    assert!(started.elapsed().as_secs() < 30, "the other ranks were stopped");
    assert_eq!(out.code, 1, "{}", out.stderr);
    let errors: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("iosurvey: error:")).collect();
    assert_eq!(errors.len(), 1, "only the lead reports: {}", out.stderr);
    assert!(
        errors[0].contains("task 5 on ")
            && errors[0].contains("iosurvey.000005")
            && errors[0].contains("Input/output error"),
        "{}",
        out.stderr
    );
    let run = bed.last_run();
    assert_eq!(run["status"], "failed");
    assert!(bed.entries().is_empty(), "iosurvey removed its own files: {:?}", bed.entries());
    assert!(ffs.backing_entries().is_empty(), "{:?}", ffs.backing_entries());
}

#[test]
fn test_engines_under_mpi_give_figures_computed_independently() {
    let Some(bed) = mpi_bed() else { return };
    // 4 ranks x 2 threads x 3 segments x 16 transfers of 64 KiB, twice each way.
    let out = bed.run("--engine null --tasks 2 --transfer 64k --block 1m --segments 3 --iterations 2");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    for p in run["phases"].as_array().unwrap() {
        assert_eq!(p["figures"]["bytes"], (8 * 3) << 20);
        assert_eq!(p["figures"]["ops"], 8 * 3 * 16);
        assert_eq!(p["latency"]["count"], 8 * 3 * 16);
        assert_eq!(p["tasks"].as_array().unwrap().len(), 8);
        let ops: u64 = p["series"]["ops"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(ops, 8 * 3 * 16);
    }
    // Four ranks of one node read one clock: nothing to align, nothing uncertain (a ping-pong
    // with each rank measured its round trip instead).
    assert_eq!((run["hosts"].as_array().unwrap().len(), run["clock_uncertainty_ns"].as_u64()), (1, Some(0)));
    // With delay D at depth 1, each task needs at least 16 x D per phase: no rate above that.
    let out = bed.run("--engine delay:5ms --tasks 2 --transfer 64k --block 1m --op write");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let p = &bed.last_run()["phases"][0];
    assert!(p["latency"]["min"].as_u64().unwrap() >= 5_000_000, "{}", p["latency"]);
    let ceiling = 8.0 * 65536.0 / 0.005;
    assert!(p["figures"]["bandwidth"].as_f64().unwrap() <= ceiling);
    assert!(bed.entries().is_empty());
}

#[test]
fn a_rank_killed_mid_phase_stops_the_others_within_seconds_and_the_run_is_filed() {
    let Some(bed) = mpi_bed() else { return };
    let (mpirun, rank1) = long_write_and_rank(&bed, 1);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(rank1 as i32, libc::SIGKILL) };
    let killed = Instant::now();
    let out = outcome(mpirun.wait_with_output().unwrap());
    assert!(killed.elapsed().as_secs() < 10, "the others stopped after {:?}", killed.elapsed());
    assert_ne!(out.code, 0);
    let ours: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("iosurvey")).collect();
    assert_eq!(ours.len(), 1, "{}", out.stderr);
    assert!(ours[0].contains("janitor removes the run's files and stores it as failed"), "{}", ours[0]);
    // The janitor outlives the launcher: give it a few seconds.
    wait_until("the janitor to remove the files and store the run", 15, || {
        bed.entries().is_empty() && bed.runs().len() == 1
    });
    let run = bed.last_run();
    assert_eq!(run["status"], "failed");
    assert!(run["error"].as_str().unwrap().contains("ended during the run"), "{}", run["error"]);
    assert_store_intact(&bed.db);
}

#[test]
fn a_stop_signal_to_a_helper_rank_ends_the_job_with_the_leads_one_line() {
    let Some(bed) = mpi_bed() else { return };
    let (mpirun, rank2) = long_write_and_rank(&bed, 2);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(rank2 as i32, libc::SIGTERM) };
    let out = outcome(mpirun.wait_with_output().unwrap());
    assert_ne!(out.code, 0);
    // The helper stops its work and stays: the lead ends the run cleanly and speaks for it.
    let ours: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("iosurvey")).collect();
    assert_eq!(ours.len(), 1, "{}", out.stderr);
    assert!(ours[0].contains("task 2 on") && ours[0].contains("interrupted by a signal"), "{}", ours[0]);
    wait_until("the janitor to remove the files and store the run", 15, || {
        bed.entries().is_empty() && bed.runs().len() == 1
    });
    assert_eq!(bed.last_run()["status"], "failed");
    assert_store_intact(&bed.db);
}

#[test]
fn a_campaign_under_mpirun_sweeps_within_the_launch_and_runs_hooks_once_per_node() {
    let Some(bed) = mpi_bed() else { return };
    let log = bed.tmp.path().join("hooks.log");
    let file = bed.tmp.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            "[campaign]\nname = \"m\"\n[[target]]\nlabel = \"a\"\ndir = \"{}\"\n\
             [[study]]\nname = \"seq\"\nkind = \"run\"\nengine = \"null\"\ntransfer = \"64k\"\nblock = \"256k\"\nclients = \"1,2,4,8\"\n\
             [hooks]\nbefore-run = {{ command = \"echo $(hostname) $IOSURVEY_CLIENTS >> {}\", on = \"every-node\" }}\n",
            bed.dir.display(),
            log.display()
        ),
    )
    .unwrap();
    let launcher: Vec<&str> = bed.launcher.iter().map(String::as_str).collect();
    let out = launch(&launcher, &["campaign", "run", file.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // 4 ranks of one task: 1, 2 and 4 clients run in this launch; 8 needs a larger one.
    assert!(out.stderr.contains("3 points to run, 0 stored already, 1 refused"), "{}", out.stderr);
    let runs = bed.runs();
    let tasks: Vec<u64> =
        runs.iter().map(|r| bed.show(r["id"].as_i64().unwrap())["workload"]["tasks"].as_u64().unwrap()).collect();
    assert_eq!(tasks, [1, 2, 4]);
    // The ranks share one node here: the hook ran once per point, not once per rank.
    let host = iosurvey::env::hostname();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), format!("{host} 1\n{host} 2\n{host} 4\n"));
    let plan = launch(&launcher, &["campaign", "plan", file.to_str().unwrap(), "--db", &bed.db]);
    assert!(plan.stdout.contains("refused: needs a launch of 8 tasks (this one has 4)"), "{}", plan.stdout);
    assert!(bed.entries().is_empty());
}

/// Starts a write on `bed` that runs until stopped, once every rank has made its file, and
/// the process id of rank `rank`.
fn long_write_and_rank(bed: &Bed, rank: u32) -> (std::process::Child, u32) {
    let mpirun = bed.spawn("--op write --transfer 64k --block 64m --iterations 100000 --no-space-check");
    wait_until("the run's files", 30, || bed.entries().iter().any(|e| e == "iosurvey.000003"));
    let pid = rank_pid(bed, rank).unwrap_or_else(|| panic!("rank {rank} is running"));
    (mpirun, pid)
}

/// The process id of MPI rank `rank` of the run on `bed`.
fn rank_pid(bed: &Bed, rank: u32) -> Option<u32> {
    let dir = bed.dir.display().to_string();
    std::fs::read_dir("/proc").ok()?.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()).find(|pid| {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        String::from_utf8_lossy(&cmd).contains(&dir)
            && env.split(|&b| b == 0).any(|v| v == format!("OMPI_COMM_WORLD_RANK={rank}").as_bytes())
    })
}

#[test]
fn mpi_mode_keeps_its_window_in_flight_and_moves_every_byte() {
    let Some(bed) = mpi_bed() else { return };
    let launcher: Vec<&str> = bed.launcher.iter().map(String::as_str).collect();
    let out = launch(
        &launcher,
        &[
            "net",
            "--mode",
            "mpi",
            "--pattern",
            "1-to-1,N-to-1",
            "--window",
            "8",
            "--messages",
            "64k..128k",
            "--size",
            "4m",
            "--repetitions",
            "2",
            "--db",
            &bed.db,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(lines[1].starts_with("mpi N-to-1 streams=1 ") && lines[1].contains(" -> "), "{}", lines[1]);
    let conn = rusqlite::Connection::open(&bed.db).unwrap();
    let mut stmt = conn.prepare("SELECT record_json FROM net_runs ORDER BY id").unwrap();
    let records: Vec<Value> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|t| serde_json::from_str(&t.unwrap()).unwrap())
        .collect();
    for (r, links) in records.iter().zip([1u64, 3]) {
        assert_eq!(r["peak_in_flight"], 8, "{r}");
        let message = r["message"].as_u64().unwrap();
        assert_eq!(r["bytes"].as_u64(), Some(links * (4 << 20)), "{links} links of 4 MiB at {message}-byte messages");
        assert_eq!(r["curve"].as_array().unwrap().len(), 2, "64k and 128k");
        assert_eq!(r["samples"].as_array().unwrap().len(), 2);
        assert_eq!(r["one_node"], true);
    }
}

#[test]
fn every_rank_is_a_client_of_one_server_at_once() {
    use std::io::BufRead;
    let Some(bed) = mpi_bed() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_iosurvey"))
        .args(["net", "--serve", "--port", &port.to_string(), "--max-clients", "4"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The server's log, line by line, as it comes.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let log = std::io::BufReader::new(server.stderr.take().unwrap());
    std::thread::spawn(move || log.lines().map_while(Result::ok).for_each(|l| drop(tx.send(l))));
    let wait = std::time::Duration::from_secs(10);
    assert!(rx.recv_timeout(wait).unwrap().contains("listening on"), "the server listens first");
    let launcher: Vec<&str> = bed.launcher.iter().map(String::as_str).collect();
    let to = format!("127.0.0.1:{port}");
    let out = launch(
        &launcher,
        &["net", "--to", &to, "--streams", "2", "--size", "2m", "--repetitions", "1", "--db", &bed.db],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.trim().starts_with("tcp N-to-1 streams=2 "), "{}", out.stdout);
    // The launch is one client: one session of 4 ranks x 2 streams, begun by the first
    // stream and logged whole at the lead's bye, after two rounds (one untimed).
    let mut lines = Vec::new();
    while !lines.iter().any(|l: &String| l.contains(" bytes in ")) {
        match rx.recv_timeout(wait) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    server.kill().unwrap();
    let _ = server.wait();
    assert_eq!(lines.iter().filter(|l| l.contains(": a session of 8 streams at once")).count(), 1, "{lines:?}");
    assert!(lines.last().unwrap().contains(": 16 streams (8 at once), 16777216 bytes in "), "{lines:?}");
}

#[test]
fn meta_counts_every_ranks_items_and_a_shift_reads_another_ranks_files() {
    let Some(bed) = mpi_bed() else { return };
    let out = bed.meta("--items 100 --tasks 1 --files-only --shift 1 --write-bytes 64 --read-bytes 64 --verify");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let phases = run["phases"].as_array().unwrap();
    let ops: Vec<(&str, u64)> =
        phases.iter().map(|p| (p["op"].as_str().unwrap(), p["figures"]["ops"].as_u64().unwrap())).collect();
    assert_eq!(
        ops,
        [
            ("tree-create", 4),
            ("file-create", 400),
            ("file-stat", 400),
            ("file-read", 400),
            ("file-remove", 400),
            ("tree-remove", 4)
        ]
    );
    for p in phases {
        assert_eq!(p["tasks"].as_array().unwrap().len(), 4, "every rank's timing");
        assert_eq!(p["latency"]["count"], p["figures"]["ops"], "latencies merged over ranks");
    }
    assert_eq!(phases[3]["verify"]["checked"], 400);
    assert_eq!(phases[3]["verify"]["bad"], 0, "each rank read what its neighbour wrote");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
    // A shared directory under MPI: the first rank makes it, every rank fills it.
    let out = bed.meta("--items 50 --tasks 2 --shared-dir --phases tree-create,file-create,file-stat --shift 2");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    assert_eq!(run["phases"][1]["figures"]["ops"], 400, "4 ranks x 2 threads x 50");
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

#[test]
fn a_quick_io500_runs_over_mpi_ranks_and_every_rank_works() {
    let Some(bed) = mpi_bed() else { return };
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let dir = shm.path().display().to_string();
    let launcher: Vec<&str> = bed.launcher.iter().map(String::as_str).collect();
    let out = launch(&launcher, &["io500", "--dir", &dir, "--db", &bed.db, "--quick", "--stonewall", "0.5", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().filter(|l| l.starts_with("[RESULT]")).count(), 12, "{}", out.stdout);
    assert!(
        out.stdout.lines().last().unwrap().starts_with("[SCORE ]"),
        "one score line, from the lead: {}",
        out.stdout
    );
    for r in bed.runs() {
        let run = bed.show(r["id"].as_i64().unwrap());
        assert_eq!(run["status"], "ok");
        for p in run["phases"].as_array().unwrap().iter().filter(|p| !p["op"].as_str().unwrap().starts_with("tree-")) {
            let tasks = p["tasks"].as_array().unwrap();
            assert_eq!(tasks.len(), 4, "{} {}", run["name"], p["op"]);
            assert!(
                tasks.iter().all(|t| t["ops"].as_u64() > Some(0)),
                "every rank works in {} {}",
                run["name"],
                p["op"]
            );
        }
    }
    assert!(listing(shm.path()).is_empty());
}

#[test]
fn a_matrix_over_mpi_ranks_measures_every_cell_with_every_rank_in_throughput_mode() {
    let Some(bed) = mpi_bed() else { return };
    let out = bed.command(
        "matrix",
        "--full --kinds write,read,random-read --min-file 64k --max-file 128k --min-record 32k --max-record 64k",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let show = |args: &[&str]| {
        let mut all = vec!["show", "m1", "--db", bed.db.as_str()];
        all.extend(args);
        let out = iosurvey(&all);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let m: Value = serde_json::from_str(&show(&["--json"])).unwrap();
    assert_eq!((m["status"].as_str(), m["shape"]["tasks"].as_u64()), (Some("ok"), Some(4)));
    let cells = m["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4 * 3, "4 cells x 3 kinds");
    for c in cells {
        let run = bed.show(c["runs"][0].as_i64().unwrap());
        for p in run["phases"].as_array().unwrap() {
            let tasks = p["tasks"].as_array().unwrap();
            assert_eq!(tasks.len(), 4);
            assert!(tasks.iter().all(|t| t["bytes"] == c["file"]), "every rank its whole file: {p}");
        }
    }
    assert!(show(&[]).contains("throughput of 4 tasks"));
    assert!(bed.entries().is_empty(), "{:?}", bed.entries());
}

#[test]
fn the_front_ends_under_mpirun_take_a_task_per_rank_and_print_once() {
    let Some(bed) = mpi_bed() else { return };
    let dir = bed.dir.display().to_string();
    let launcher: Vec<&str> = bed.launcher.iter().map(String::as_str).collect();
    // IOR's tasks are the ranks: 4, one output from the lead.
    let out = launch(
        &launcher,
        &["ior", "-w", "-r", "-F", "-t", "1m", "-b", "2m", "-o", &format!("{dir}/t"), "--db", &bed.db],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.matches("Summary of all tests:").count(), 1, "{}", out.stdout);
    assert_eq!(bed.last_run()["workload"]["tasks"], 4);
    // IOzone's -t 4 over 4 ranks is a thread each, placed as the one-host client list says.
    let list = bed.tmp.path().join("threadlist");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string();
    std::fs::write(&list, format!("{host} {dir} iozone\n").repeat(4)).unwrap();
    let list = list.display().to_string();
    let out = launch(
        &launcher,
        &[
            "iozone",
            "-i",
            "0",
            "-r",
            "4k",
            "-s",
            "64k",
            "-t",
            "4",
            "-+m",
            &list,
            "-f",
            &format!("{dir}/f"),
            "--db",
            &bed.db,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.matches("Children see throughput for  4 initial writers").count(), 1, "{}", out.stdout);
    // A rank per child is IOzone's own process per child, said in its words.
    assert!(out.stdout.contains("\tThroughput test with 4 processes\n"), "{}", out.stdout);
    assert!(out.stdout.contains("\tMin throughput per process \t"), "{}", out.stdout);
    // -t that does not share evenly over the ranks is refused before any rank runs.
    let out = launch(
        &launcher,
        &["iozone", "-i", "0", "-r", "4k", "-s", "64k", "-t", "6", "-f", &format!("{dir}/f"), "--db", &bed.db],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("-t 6 does not share evenly over the launch's 4 ranks"), "{}", out.stderr);
}

#[test]
fn train_under_mpi_gives_each_rank_its_own_block_of_samples_and_files_one_run() {
    let Some(bed) = mpi_bed() else { return };
    // 4 processes x 2 accelerators: 8 ranks over 48 one-sample files, 6 each, 3 steps of 2.
    let out = bed.command(
        "train",
        "--workload cosmoflow --generate --keep --files 48 --sample-bytes 64k --sample-stdev 16k --batch 2 --compute 0.001 --accelerators 2",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(bed.runs().len(), 1, "one run for the whole launch");
    let run = bed.last_run();
    assert_eq!(run["tool_params"]["train.accelerators"], "8");
    assert_eq!(run["tool_params"]["train.rank_au"].as_str().unwrap().split(',').count(), 8);
    let tasks = run["phases"][0]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 8, "every rank's reads");
    // Sizes spread by file, so a rank's bytes say which files it read: its own block's.
    let size = |f: u64| std::fs::metadata(bed.dir.join(format!("train-{f:07}.tfrecord"))).unwrap().len();
    for (r, t) in tasks.iter().enumerate() {
        let r = r as u64;
        assert_eq!(t["task"].as_u64(), Some(r));
        let want: u64 = (6 * r..6 * r + 6).map(size).sum();
        assert_eq!(t["bytes"].as_u64(), Some(want), "rank {r} read the files of its block");
    }
}

#[test]
fn a_checkpoint_under_mpi_is_written_by_every_rank_and_read_back_by_another_process() {
    let Some(bed) = mpi_bed() else { return };
    // 4 processes x 2 ranks: 8 shards; a shift of 2 has each rank read the shard that a rank
    // of the next process wrote.
    let out = bed.command(
        "checkpoint",
        "--model llama3-8b --ranks 2 --scale 1/1000000 --checkpoints 2 --reads 2 --compute 0 --shift 2 --transfer 4k --no-drop-caches --keep",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(bed.runs().len(), 1, "one run for the whole launch");
    let run = bed.last_run();
    assert_eq!(run["tool_params"]["ckpt.ranks"], "8");
    // llama3-8b at 1/1000000 is 112,000 bytes: 14,000 a rank.
    assert_eq!(run["tool_params"]["ckpt.rank_bytes"], "14000");
    let files = bed.entries();
    assert_eq!(files.iter().filter(|n| n.ends_with(".pt")).count(), 2 * 8 * 2, "{files:?}");
    for phase in run["phases"].as_array().unwrap() {
        let tasks = phase["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 8, "every rank, in every phase");
        for t in tasks {
            assert_eq!(t["bytes"].as_u64(), Some(14000), "{phase}");
        }
    }
    let ops: Vec<&str> = run["phases"].as_array().unwrap().iter().map(|p| p["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["write", "write", "read", "read"]);
    // The 3x rule per client: the 4 processes share one node, whose share is all 8 ranks'
    // 2 checkpoints (224,000 bytes), said once.
    let rule = run["tool_params"]["ckpt.cache_rule"].as_str().unwrap_or_default();
    assert!(!rule.contains(';') && rule.contains(": 218.75 KiB of "), "{rule}");
    assert!(rule.ends_with("kept (--no-drop-caches)"), "{rule}");
}

/// `--find-max` under mpirun: every probe runs on all 4 processes, the same probe sequence
/// on each (the lead's AU decides, shared). Each process's readers share their own planted
/// rate, so that 2 accelerators per process need 0.83 of it and 3 need 1.25: 2 per process
/// pass, 8 in all.
#[test]
fn find_max_under_mpi_probes_every_process_and_finds_the_planted_boundary_per_process() {
    let Some(bed) = mpi_bed() else { return };
    // Each step of each rank reads 256 KiB (4 x 64 KiB) in 0.1 s of compute: 2.4 ranks
    // saturate 6 MiB/s.
    let out = bed.command(
        "train",
        "--workload cosmoflow --generate --files 512 --sample-bytes 64k --sample-stdev 0 --batch 4 --reader-threads 2 --compute 0.1 --au 0.9 --steps 8 --throttle 6m --find-max --max-accelerators 4 --probe-runs 3",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.matches("most accelerators that pass:").count(), 1, "said once, by the lead: {}", out.stdout);
    assert!(
        out.stdout
            .contains("most accelerators that pass: 2 per process, 8 per host, 8 in all (4 processes on 1 host)\n"),
        "{}",
        out.stdout
    );
    // Every probe's runs are stored, each over every process's ranks.
    let runs = bed.runs();
    assert!(runs.len() >= 3, "{runs:?}");
    let mut counts = Vec::new();
    for r in &runs {
        let run = bed.show(r["id"].as_i64().unwrap());
        let k: usize = run["tool_params"]["train.accelerators"].as_str().unwrap().parse().unwrap();
        assert_eq!(k % 4, 0, "a multiple of the 4 processes: {k}");
        assert_eq!(run["phases"][0]["tasks"].as_array().unwrap().len(), k, "every rank's reads");
        counts.push(k / 4);
    }
    counts.dedup();
    assert_eq!(counts, [1, 2, 4, 3], "doubling, then bisecting: {counts:?}");
    assert!(bed.entries().is_empty() || !bed.dir.exists(), "the data set removed: {:?}", bed.entries());
}

/// A checkpoint written by one launch (4 processes x 2 ranks: 8 shards, kept) and read by
/// another on other ranks: one process of 3 ranks, each reading the shards that ranks of
/// other processes wrote.
#[test]
fn a_checkpoint_written_by_one_launch_is_read_by_another_of_fewer_ranks() {
    let Some(bed) = mpi_bed() else { return };
    let common = "--model llama3-8b --scale 1/1000000 --compute 0 --transfer 4k --no-drop-caches";
    let wrote = bed.command("checkpoint", &format!("{common} --ranks 2 --checkpoints 2 --reads 0 --keep"));
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    assert_eq!(bed.entries().iter().filter(|n| n.ends_with(".pt")).count(), 2 * 8 * 2);
    let dir = bed.dir.display().to_string();
    let mut args = vec!["checkpoint", "--dir", &dir, "--db", &bed.db, "-q", "--ranks", "3", "--checkpoints", "0"];
    args.extend(["--reads", "2", "--shift", "1"]);
    args.extend(common.split_whitespace());
    let read = iosurvey(&args);
    assert_eq!(read.code, 0, "{}", read.stderr);
    let run = bed.last_run();
    assert_eq!(
        (run["tool_params"]["ckpt.ranks"].as_str(), run["tool_params"]["ckpt.shards"].as_str()),
        (Some("3"), Some("8"))
    );
    // 14,000 bytes a shard; shard j is read by rank (j - 1) mod 3: 3, 2 and 3 shards.
    for phase in run["phases"].as_array().unwrap() {
        let bytes: Vec<u64> = phase["tasks"].as_array().unwrap().iter().map(|t| t["bytes"].as_u64().unwrap()).collect();
        assert_eq!(bytes, [3 * 14000, 2 * 14000, 3 * 14000], "{phase}");
    }
    assert_eq!(bed.entries().iter().filter(|n| n.ends_with(".pt")).count(), 2 * 8 * 2, "none removed");
}
