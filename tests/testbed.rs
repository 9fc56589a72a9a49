//! Three client nodes (network namespaces) on a GlusterFS volume, through Open MPI: the test
//! bed of testbed/testbed. Needs root, /dev/fuse, GlusterFS and Open MPI (and Slurm and munge
//! for the Slurm test); skips otherwise (`common::skip`). The test bed is one per machine, so
//! the tests take turns (`one_bed_at_a_time`).
#![cfg(feature = "mpi")]

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn testbed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbed/testbed")
}

/// Takes the test bed down when the test ends, however it ends.
struct Up;

impl Drop for Up {
    fn drop(&mut self) {
        let _ = Command::new(testbed()).arg("down").status();
    }
}

const MOUNT: &str = "/mnt/iosurvey-gluster";

/// Held for the whole of a test that brings the bed up; a test that panicked only poisons it.
fn one_bed_at_a_time() -> MutexGuard<'static, ()> {
    static BED: Mutex<()> = Mutex::new(());
    BED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bed brought up (`testbed up ARGS`) for one test, until what this gives is dropped:
/// then it is taken down, before the next test's turn; `None` (a skip) where the machine
/// cannot run it.
fn bed_up(args: &[&str]) -> Option<(Up, MutexGuard<'static, ()>)> {
    let turn = one_bed_at_a_time();
    let _ = Command::new(testbed()).arg("down").output();
    let up = Command::new(testbed()).arg("up").args(args).output().unwrap();
    if up.status.code() == Some(77) {
        skip(&String::from_utf8_lossy(&up.stderr));
        return None;
    }
    assert!(up.status.success(), "testbed up {args:?}: {}", String::from_utf8_lossy(&up.stderr));
    Some((Up, turn))
}

/// `testbed exec NODE -- ARGS...`, as from a login shell on that node.
fn on(node: &str, args: &[&str]) -> Out {
    outcome(Command::new(testbed()).args(["exec", node, "--"]).args(args).output().unwrap())
}

/// A fresh directory on the shared volume, made from node1.
fn shared_dir(name: &str) -> String {
    let dir = format!("{MOUNT}/{name}");
    let ok = Command::new(testbed()).args(["exec", "node1", "--", "mkdir", "-p", &dir]).status().unwrap();
    assert!(ok.success());
    dir
}

#[test]
fn three_nodes_on_glusterfs_write_read_verify_reorder_and_measure_the_network() {
    let Some(_up) = bed_up(&["--nodes", "3"]) else { return };
    let mut bed = Bed::new();
    let tb = testbed().display().to_string();
    bed.launcher = vec![tb.clone(), "run".into(), "--np-per-node".into(), "2".into(), "--".into()];

    data_on_three_nodes(&mut bed);
    let sweep = sweep_over_nodes(&mut bed);
    metadata_over_the_volume(&mut bed);
    campaign_hooks_on_every_node(&bed, &tb);
    an_event_once_on_the_lead(&mut bed, &tb);
    network_ceilings(&bed, &tb, &sweep);
}

/// Each access, write then read verified with every read crossing to another node, figures per node.
fn data_on_three_nodes(bed: &mut Bed) {
    for access in ["file-per-task", "shared"] {
        bed.dir = shared_dir(access).into();
        let out = bed.run(&format!("--access {access} --tasks 1 --transfer 256k --block 16m --verify --reorder"));
        assert_eq!(out.code, 0, "{access}: {}\n{}", out.stdout, out.stderr);
        let run = bed.last_run();
        assert_eq!(run["status"], "ok");
        assert_eq!(run["env"]["fs_type"], "fuse.glusterfs", "the target is the shared volume");
        let hosts: Vec<&str> = run["hosts"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
        assert_eq!(hosts, ["node1", "node2", "node3"]);
        for phase in run["phases"].as_array().unwrap() {
            let nodes: Vec<u64> =
                phase["tasks"].as_array().unwrap().iter().map(|t| t["node"].as_u64().unwrap()).collect();
            assert_eq!(nodes, [0, 0, 1, 1, 2, 2], "per-node figures come from these");
        }
        assert_eq!(run["reorder_crosses_nodes"], true, "every read crossed to another node");
        assert_eq!(run["phases"][1]["verify"]["checked"], 6 * 64);
        assert_eq!(run["phases"][1]["verify"]["bad"], 0);
        assert_eq!(run["phases"][1]["possibly_cached"], Value::Null, "read on another node than it was written");
        let text = iosurvey(&["show", &run["id"].to_string(), "--db", &bed.db]).stdout;
        let header = text.lines().skip_while(|l| !l.starts_with("per node (MiB/s), 3 nodes")).nth(1).unwrap_or("");
        assert!(header.contains("node1") && header.contains("node3"), "{text}");
    }
}

fn sweep_over_nodes(bed: &mut Bed) -> Vec<Value> {
    // Bandwidth per node count: one rank per node, 1, 2 and 3 nodes in one launch.
    bed.launcher[3] = "1".into();
    bed.dir = shared_dir("sweep").into();
    let out = bed.run("--tasks 1 --clients 1..3 --transfer 1m --block 64m --fsync");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sweep: Vec<Value> = bed.runs().into_iter().filter(|r| r["sweep_id"].is_i64()).collect();
    assert_eq!(sweep.len(), 3);
    for (i, row) in sweep.iter().enumerate() {
        let run = bed.show(row["id"].as_i64().unwrap());
        let nodes: Vec<u64> =
            run["phases"][0]["tasks"].as_array().unwrap().iter().map(|t| t["node"].as_u64().unwrap()).collect();
        assert_eq!(nodes, (0..=i as u64).collect::<Vec<_>>(), "one task per node, round-robin");
        let mib = |k: usize| run["phases"][k]["figures"]["bandwidth"].as_f64().unwrap() / 1048576.0;
        eprintln!("glusterfs {} node(s): write {:.1} MiB/s, read {:.1} MiB/s", i + 1, mib(0), mib(1));
    }
    sweep
}

fn metadata_over_the_volume(bed: &mut Bed) {
    // Metadata over the volume: 2 ranks per node, each stats and reads what the ranks of the
    // next node made (a shift of the tasks per node).
    bed.launcher[3] = "2".into();
    bed.dir = shared_dir("meta").into();
    let out = bed.meta("--items 60 --tasks 1 --files-only --shift 2 --write-bytes 100 --read-bytes 100 --verify");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    assert_eq!(run["reorder_crosses_nodes"], true, "every neighbour is on another node");
    let phases = run["phases"].as_array().unwrap();
    let ops: Vec<u64> = phases.iter().map(|p| p["figures"]["ops"].as_u64().unwrap()).collect();
    assert_eq!(ops, [6, 360, 360, 360, 360, 6], "tree, create, stat, read, remove, tree");
    assert_eq!(phases[2]["possibly_cached"], Value::Null, "stat on another node than the create");
    assert_eq!((phases[3]["verify"]["checked"].as_u64(), phases[3]["verify"]["bad"].as_u64()), (Some(360), Some(0)));
    for p in phases {
        eprintln!("glusterfs meta {}: {:.0} items/s", p["op"], p["figures"]["iops"].as_f64().unwrap());
    }
    assert!(listing(Path::new(&format!("{MOUNT}/meta"))).is_empty());
}

fn campaign_hooks_on_every_node(bed: &Bed, tb: &str) {
    // A campaign over the volume, one rank per node: each point's hook runs once on every
    // node, which writes its name.
    let dir = shared_dir("campaign");
    let log = bed.tmp.path().join("hooks.log");
    let file = bed.tmp.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            "[campaign]\nname = \"bed\"\n[[target]]\nlabel = \"gluster\"\ndir = \"{dir}\"\n\
             [[study]]\nname = \"seq\"\nkind = \"run\"\ntransfer = \"256k\"\nblock = \"4m\"\nclients = \"1,3\"\n\
             [hooks]\nbefore-run = {{ command = \"echo $(hostname) $IOSURVEY_CLIENTS >> {}\", on = \"every-node\" }}\n",
            log.display()
        ),
    )
    .unwrap();
    let out =
        launch(&[tb, "run", "--np-per-node", "1", "--"], &["campaign", "run", file.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines: Vec<String> = std::fs::read_to_string(&log).unwrap().lines().map(str::to_string).collect();
    lines.sort();
    assert_eq!(lines, ["node1 1", "node1 3", "node2 1", "node2 3", "node3 1", "node3 3"]);
    assert!(listing(Path::new(&dir)).is_empty());
}

fn an_event_once_on_the_lead(bed: &mut Bed, tb: &str) {
    // An event runs once, on the lead, whatever the number of nodes.
    bed.launcher[3] = "1".into();
    bed.dir = shared_dir("event").into();
    let events = bed.tmp.path().join("events.log");
    let event = format!("0s:echo $(hostname) >> {}", events.display());
    let out = launch(
        &[tb, "run", "--np-per-node", "1", "--"],
        &[
            "run",
            "--dir",
            &shared_dir("event"),
            "--db",
            &bed.db,
            "-q",
            "--transfer",
            "256k",
            "--block",
            "64m",
            "--op",
            "write",
            "--event",
            &event,
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&events).unwrap(), "node1\n", "once, on the lead");
    assert_eq!(bed.last_run()["events"][0]["ran"]["node"], "node1");
}

/// The network's ceilings between the three nodes, shown beside the last run of the sweep.
fn network_ceilings(bed: &Bed, tb: &str, sweep: &[Value]) {
    let net = launch(
        &[tb, "run", "--np-per-node", "1", "--"],
        &["net", "--size", "128m", "--messages", "256k..4m", "--db", &bed.db],
    );
    assert_eq!(net.code, 0, "{}", net.stderr);
    eprintln!("{}", net.stdout);
    // Three nodes: every pattern, in TCP with 1 and 4 streams and in MPI, one line each.
    let figure = |prefix: &str| -> f64 {
        let line =
            net.stdout.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("{prefix}: {}", net.stdout));
        line.rsplit_once(": ").unwrap().1.split(' ').next().unwrap().parse().unwrap()
    };
    for mode in ["tcp", "mpi"] {
        for pattern in ["1-to-1", "N-to-1", "1-to-N", "N-to-M", "bisection"] {
            assert!(figure(&format!("{mode} {pattern} streams=")) > 0.0);
        }
    }
    assert_eq!(net.stdout.lines().count(), 15, "{}", net.stdout);
    assert!(net.stdout.contains("tcp N-to-1 streams=1 node2,node3 -> node1: "), "who sends to whom: {}", net.stdout);
    // The old ceiling served its senders in turn, so N-to-1 came out at 45% of 1-to-1. TCP:
    // iperf3 on these nodes gives N-to-1 at or above 1-to-1 (bench/vs-iperf3); noise allows
    // 25%. MPI has no such bound: on these 2 cores its 1-to-1 figure is bimodal (1.5 or
    // 3.4 GB/s from one run to the next, as the receiving progress engine shares a core or
    // not), so N-to-1 fell to 0.45 of a fast 1-to-1 with nothing serialized; the MPI mode's
    // window in flight is tested in tests/mpi.rs.
    let (one, many) = (figure("tcp 1-to-1 streams=1"), figure("tcp N-to-1 streams=1"));
    assert!(many >= 0.75 * one, "tcp: N-to-1 {many} MiB/s against 1-to-1 {one} MiB/s");
    let id = sweep.last().unwrap()["id"].to_string();
    let show = iosurvey(&["show", &id, "--db", &bed.db]);
    assert!(show.stdout.contains("network ceiling"), "shown next to the storage figures: {}", show.stdout);
}

/// A job's state and exit code, from the controller's memory: the bed keeps no accounting
/// (no sacct), and a finished job stays known for MinJobAge.
fn job_state(id: &str) -> (String, String) {
    let out = on("node1", &["scontrol", "-o", "show", "job", id]);
    let field = |k: &str| out.stdout.split_whitespace().find_map(|w| w.strip_prefix(k)).unwrap_or("").to_string();
    (field("JobState="), field("ExitCode="))
}

fn wait_for_jobs(ids: &[&str], deadline: Duration) -> Vec<(String, String)> {
    let end = Instant::now() + deadline;
    loop {
        let states: Vec<(String, String)> = ids.iter().map(|id| job_state(id)).collect();
        let active = ["", "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"];
        if states.iter().all(|(s, _)| !active.contains(&s.as_str())) {
            return states;
        }
        assert!(Instant::now() < end, "jobs {ids:?} not done after {deadline:?}: {states:?}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn slurm_runs_jobs_under_srun_and_mpirun_and_a_campaigns_emitted_jobs_each_on_their_nodes_merged_once() {
    let Some(_up) = bed_up(&["--nodes", "3", "--slurm"]) else { return };
    let dir = shared_dir("slurm");
    let bin = env!("CARGO_BIN_EXE_iosurvey");

    // Both ways into an allocation: srun starts the ranks itself (the bed's MpiDefault is
    // pmix, the one interface Debian's Open MPI and Slurm share), mpirun starts its daemons
    // through srun. The job's store and data are on the shared volume, as on a cluster.
    let mut ids = Vec::new();
    for launcher in ["srun", "mpirun"] {
        let script = format!(
            "#!/bin/sh\n#SBATCH -N 2 --ntasks-per-node=1 --exclusive -t 5 -p bed -o {dir}/%j.out\n\
             export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n\
             mkdir {dir}/$SLURM_JOB_ID\n\
             exec {launcher} {bin} run --dir {dir}/$SLURM_JOB_ID --engine null --tasks 1 \
             --transfer 1m --block 8m --db {dir}/job$SLURM_JOB_ID.db -q\n"
        );
        let path = format!("{dir}/{launcher}.sh");
        assert_eq!(on("node1", &["sh", "-c", "printf %s \"$1\" > \"$2\"", "sh", &script, &path]).code, 0);
        let sub = on("node1", &["sbatch", "--parsable", "-D", &dir, &path]);
        assert_eq!(sub.code, 0, "sbatch: {}", sub.stderr);
        ids.push(sub.stdout.trim().to_string());
    }
    let after = format!("afterany:{}:{}", ids[0], ids[1]);
    let wrap = format!("ls {dir} | grep '^job.*db$' > {dir}/after.txt");
    let sub =
        on("node1", &["sbatch", "--parsable", "-D", &dir, "-o", "/dev/null", "--dependency", &after, "--wrap", &wrap]);
    assert_eq!(sub.code, 0, "sbatch: {}", sub.stderr);
    let dependent = sub.stdout.trim().to_string();

    let all = [ids[0].as_str(), ids[1].as_str(), dependent.as_str()];
    let states = wait_for_jobs(&all, Duration::from_secs(120));
    for (id, (state, exit)) in all.iter().zip(&states) {
        let log = on("node1", &["sh", "-c", &format!("cat {dir}/{id}.out 2>/dev/null")]).stdout;
        assert_eq!((state.as_str(), exit.as_str()), ("COMPLETED", "0:0"), "job {id}: {log}");
    }
    for (launcher, id) in ["srun", "mpirun"].iter().zip(&ids) {
        let show = on("node1", &[bin, "show", "1", "--db", &format!("{dir}/job{id}.db"), "--json"]);
        assert_eq!(show.code, 0, "{launcher}: {}", show.stderr);
        let run: Value = serde_json::from_str(&show.stdout).unwrap();
        assert_eq!(run["status"], "ok");
        assert_eq!(run["hosts"], serde_json::json!(["node1", "node2"]), "{launcher}: one rank on each node");
    }
    // The dependent job started only once both had ended: it saw both stores.
    let mut seen: Vec<String> =
        on("node1", &["cat", &format!("{dir}/after.txt")]).stdout.lines().map(String::from).collect();
    seen.sort();
    let mut want: Vec<String> = ids.iter().map(|id| format!("job{id}.db")).collect();
    want.sort();
    assert_eq!(seen, want);

    campaign_as_batch_jobs(&dir, bin);
}

/// A campaign of 1, 2 and 3 clients as `campaign emit` writes it for Slurm: a job per node
/// count, each into its own store, and a merge job after them; submitted as a user would
/// (`bash jobs/submit` on the login node), every point stored once, each on its nodes.
fn campaign_as_batch_jobs(shared: &str, bin: &str) {
    let dir = format!("{shared}/campaign");
    let text = format!(
        "[campaign]\nname = \"bed\"\n[[target]]\nlabel = \"gluster\"\ndir = \"{dir}/target\"\n\
         [[study]]\nname = \"seq\"\nkind = \"run\"\nengine = \"null\"\nop = \"write,read\"\n\
         transfer = \"1m\"\nblock = \"8m\"\nclients = \"1,2,3\"\n\
         [batch]\npartition = \"bed\"\naccount = \"\"\nlauncher = \"srun\"\nmodules = []\npoint-time = \"1m\"\n"
    );
    let made =
        on("node1", &["sh", "-c", "mkdir -p \"$1/target\" && printf %s \"$2\" > \"$1/c.toml\"", "sh", &dir, &text]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let in_dir = |cmd: &str| on("node1", &["sh", "-c", &format!("cd {dir} && {cmd}")]);
    let emit = in_dir(&format!("{bin} campaign emit c.toml --slurm jobs --db eval.db"));
    assert_eq!(emit.code, 0, "{}", emit.stderr);
    for n in 1..=3 {
        assert!(emit.stdout.contains(&format!("nodes-{n}.sbatch: 1 point on {n} node")), "{}", emit.stdout);
    }
    let submitted = in_dir("bash jobs/submit");
    assert_eq!(submitted.code, 0, "{}", submitted.stderr);
    // "submitted jobs A B C; merge job M"
    let line = submitted.stdout.lines().last().unwrap_or_default().to_string();
    let (jobs, merge) = line.strip_prefix("submitted jobs ").and_then(|l| l.split_once("; merge job ")).unwrap();
    let mut all: Vec<&str> = jobs.split(' ').collect();
    all.push(merge.trim());
    assert_eq!(all.len(), 4, "{line}");
    let states = wait_for_jobs(&all, Duration::from_secs(240));
    for (id, (state, exit)) in all.iter().zip(&states) {
        let log = in_dir(&format!("cat jobs/*-{id}.out")).stdout;
        assert_eq!((state.as_str(), exit.as_str()), ("COMPLETED", "0:0"), "job {id}: {log}");
    }

    // Merged: every point once, each run on as many nodes as it had clients.
    let status = in_dir(&format!("{bin} campaign status c.toml --db eval.db"));
    assert!(status.stdout.contains("3 of 3 points stored whole; 0 to run"), "{}", status.stdout);
    let mut seen = Vec::new();
    for id in 1..=3 {
        let show = in_dir(&format!("{bin} show {id} --db eval.db --json"));
        assert_eq!(show.code, 0, "run {id}: {}", show.stderr);
        let run: Value = serde_json::from_str(&show.stdout).unwrap();
        assert_eq!(run["status"], "ok");
        let hosts: Vec<&str> = run["hosts"].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
        let tasks = run["workload"]["tasks"].as_u64().unwrap() as usize;
        // Slurm picks which nodes; the runs must be on as many distinct ones as clients.
        let distinct: std::collections::BTreeSet<&str> = hosts.iter().copied().collect();
        assert_eq!((hosts.len(), distinct.len()), (tasks, tasks), "a {tasks}-client point on {tasks} nodes: {hosts:?}");
        assert!(distinct.iter().all(|h| ["node1", "node2", "node3"].contains(h)), "{hosts:?}");
        seen.push(tasks);
    }
    seen.sort();
    assert_eq!(seen, [1, 2, 3], "each point stored exactly once");
    assert_eq!(in_dir(&format!("{bin} show 4 --db eval.db --json")).code, 2, "no fourth run");
    let again = in_dir(&format!("{bin} campaign run c.toml --db eval.db"));
    assert!(
        again.stderr.contains("nothing to run (3 points stored already"),
        "a resume runs nothing: {}",
        again.stderr
    );
    // The jobs' stores stay beside the campaign's, named by their jobs' ids.
    let listed = in_dir("ls").stdout;
    for id in &all[..3] {
        assert!(listed.lines().any(|l| l == format!("eval.job{id}.db")), "{listed}");
    }
}

/// Training and checkpoints across the bed's three nodes on the shared volume: each rank,
/// wherever it runs, reads its own block of the data set the lead wrote; a checkpoint written
/// by six ranks (two a node) is read in another launch by three (one a node), each reading
/// two shards; every run names the three hosts.
#[test]
fn train_reads_each_ranks_block_on_three_nodes_and_another_launch_reads_their_checkpoint() {
    let Some(_up) = bed_up(&["--nodes", "3"]) else { return };
    let mut bed = Bed::new();
    let tb = testbed().display().to_string();
    bed.launcher = vec![tb, "run".into(), "--np-per-node".into(), "1".into(), "--".into()];
    let nodes = |phase: &Value| -> Vec<u64> {
        phase["tasks"].as_array().unwrap().iter().map(|t| t["node"].as_u64().unwrap()).collect()
    };
    let hosts = |run: &Value| -> Vec<String> {
        run["hosts"].as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect()
    };

    // 3 processes x 2 accelerators: 6 ranks over 36 one-sample files, 6 each, 3 steps of 2.
    bed.dir = shared_dir("train").into();
    let out = bed.command(
        "train",
        "--workload cosmoflow --generate --keep --files 36 --sample-bytes 64k --sample-stdev 16k --batch 2 --compute 0.001 --accelerators 2",
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let run = bed.last_run();
    assert_eq!(run["env"]["fs_type"], "fuse.glusterfs", "the target is the shared volume");
    assert_eq!(hosts(&run), ["node1", "node2", "node3"]);
    assert_eq!(run["tool_params"]["train.accelerators"], "6");
    assert_eq!(nodes(&run["phases"][0]), [0, 0, 1, 1, 2, 2]);
    // Sizes spread by file, so a rank's bytes say which files it read: its own block's. The
    // volume is mounted in the nodes, so a node says the sizes.
    let dir = bed.dir.display().to_string();
    let listed = on("node1", &["sh", "-c", &format!("cd {dir} && stat -c '%n %s' train-*.tfrecord")]);
    let sizes: std::collections::BTreeMap<String, u64> = listed
        .stdout
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(n, s)| (n.to_string(), s.parse().unwrap())))
        .collect();
    assert_eq!(sizes.len(), 36, "{}", listed.stderr);
    let size = |f: u64| sizes[&format!("train-{f:07}.tfrecord")];
    for (r, t) in run["phases"][0]["tasks"].as_array().unwrap().iter().enumerate() {
        let r = r as u64;
        let want: u64 = (6 * r..6 * r + 6).map(size).sum();
        assert_eq!(t["bytes"].as_u64(), Some(want), "rank {r} read the files of its block");
    }

    // The rule's data set is 5x the clients' RAM, every node's once (the bed's nodes share
    // this machine's MemTotal): 3 nodes' worth, at 1/20000.
    bed.dir = shared_dir("rule").into();
    let out = bed.command(
        "train",
        "--workload unet3d --generate --scale 1/20000 --sample-bytes 64k --sample-stdev 0 --batch 1 --compute 0.0001",
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap();
    let want = (5 * 3 * kib * 1024).div_ceil(64 << 10).div_ceil(20000);
    assert_eq!(bed.last_run()["tool_params"]["train.files"], want.to_string(), "sized for 3 nodes' RAM");

    // llama3-8b at 1/1000000, 112,000 bytes in 6 shards of 18,666; written, kept, then read
    // by a launch of one rank a node, shifted so that rank r starts at shard r + 1.
    bed.dir = shared_dir("ckpt").into();
    let common = "--model llama3-8b --scale 1/1000000 --compute 0 --transfer 4k --no-drop-caches";
    let wrote = bed.command("checkpoint", &format!("{common} --ranks 2 --checkpoints 2 --reads 0 --keep"));
    assert_eq!(wrote.code, 0, "{}\n{}", wrote.stdout, wrote.stderr);
    let run = bed.last_run();
    assert_eq!(hosts(&run), ["node1", "node2", "node3"]);
    assert_eq!(nodes(&run["phases"][0]), [0, 0, 1, 1, 2, 2]);
    let read = bed.command("checkpoint", &format!("{common} --ranks 1 --checkpoints 0 --reads 2 --shift 1"));
    assert_eq!(read.code, 0, "{}\n{}", read.stdout, read.stderr);
    let run = bed.last_run();
    assert_eq!(hosts(&run), ["node1", "node2", "node3"]);
    assert_eq!(
        (run["tool_params"]["ckpt.ranks"].as_str(), run["tool_params"]["ckpt.shards"].as_str()),
        (Some("3"), Some("6"))
    );
    for phase in run["phases"].as_array().unwrap() {
        assert_eq!(phase["op"], "read");
        assert_eq!(nodes(phase), [0, 1, 2]);
        for t in phase["tasks"].as_array().unwrap() {
            assert_eq!(t["bytes"].as_u64(), Some(2 * 18666), "two shards a rank: {phase}");
        }
    }
    let kept = on("node1", &["ls", &bed.dir.display().to_string()]).stdout;
    assert_eq!(kept.lines().filter(|n| n.ends_with(".pt")).count(), 2 * 6 * 2, "the read removed none: {kept}");
}
