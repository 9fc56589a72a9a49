//! `iosurvey train`: the data set's formats read by independent readers, the AU contrast, the
//! search for the most accelerators, and the safety every study keeps.

mod common;

use common::{assert_one_line_error, iosurvey, listing, wait_until, Bed, Out};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn train(bed: &Bed, args: &str) -> Out {
    bed.command("train", args)
}

/// The stored run's study figures (`train.*`).
fn figures(bed: &Bed) -> serde_json::Map<String, Value> {
    bed.last_run()["tool_params"].as_object().expect("the study's figures").clone()
}

fn python(script: &str, args: &[&Path]) -> Out {
    python_at("python3", script, args)
}

fn python_at(python: &str, script: &str, args: &[&Path]) -> Out {
    let out = Command::new(python).arg("-c").arg(script).args(args).output().expect("python3 runs");
    common::outcome(out)
}

/// A python3 that imports numpy: the one on PATH may be a version manager's without it, while
/// Debian's python3-numpy (which .ci/run installs) belongs to /usr/bin/python3.
fn python_with_numpy() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|p| Command::new(p).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success()))
}

/// Python's zipfile opens every generated npz: two stored arrays whose CRCs check, whose
/// .npy headers give the shape the data fills; then numpy loads each array with that shape.
const NPZ_CHECK: &str = r#"
import ast, sys, zipfile
for path in sys.argv[1:]:
    z = zipfile.ZipFile(path)
    assert z.testzip() is None, path
    assert sorted(z.namelist()) == ["x.npy", "y.npy"], z.namelist()
    assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    x = z.read("x.npy")
    assert x[:6] == b"\x93NUMPY", x[:8]
    hlen = int.from_bytes(x[8:10], "little")
    head = ast.literal_eval(x[10:10 + hlen].decode("latin1"))
    assert head["descr"] == "|u1" and not head["fortran_order"], head
    n = 1
    for d in head["shape"]:
        n *= d
    assert (10 + hlen) % 64 == 0 and len(x) == 10 + hlen + n, (len(x), hlen, head)
    import numpy
    arrays = numpy.load(path)
    assert arrays["x"].shape == tuple(head["shape"]), (arrays["x"].shape, head)
    assert arrays["x"].dtype == numpy.uint8 and arrays["y"].size >= 1, (arrays["x"].dtype, arrays["y"])
print("ok", len(sys.argv) - 1, "numpy")
"#;

/// An independent TFRecord reader: every length and data CRC32C (bitwise, masked) checks,
/// and the records fill the file exactly.
const TFRECORD_CHECK: &str = r#"
import struct, sys
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF
def masked(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
records = 0
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    at = 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        (lcrc,) = struct.unpack_from("<I", data, at + 8)
        assert lcrc == masked(crc32c(data[at:at + 8])), (path, at)
        body = data[at + 12:at + 12 + length]
        (dcrc,) = struct.unpack_from("<I", data, at + 12 + length)
        assert dcrc == masked(crc32c(body)), (path, at)
        at += 16 + length
        records += 1
    assert at == len(data), path
print("ok", records)
"#;

fn kept_files(bed: &Bed, ext: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> =
        listing(&bed.dir).into_iter().filter(|n| n.ends_with(ext)).map(|n| bed.dir.join(n)).collect();
    files.sort();
    files
}

#[test]
fn generated_npz_files_open_with_pythons_zipfile_and_numpy() {
    let Some(python) = python_with_numpy() else {
        return common::skip("no python3 here imports numpy (.ci/run installs Debian's python3-numpy)");
    };
    let bed = Bed::new();
    let out = train(&bed, "--workload unet3d --generate --keep --files 6 --sample-bytes 20000 --sample-stdev 3000 --batch 2 --compute 0.001");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let files = kept_files(&bed, ".npz");
    assert_eq!(files.len(), 6);
    let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let check = python_at(python, NPZ_CHECK, &paths);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    assert_eq!(check.stdout.trim(), "ok 6 numpy");
}

#[test]
fn generated_tfrecord_crcs_verify_with_an_independent_reader() {
    let bed = Bed::new();
    // resnet50's layout (many records per file), its sizes spread so that no two records agree.
    let out = train(&bed, "--workload resnet50 --generate --keep --files 3 --samples-per-file 5 --sample-bytes 3000 --sample-stdev 500 --batch 1 --compute 0.001");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let files = kept_files(&bed, ".tfrecord");
    assert_eq!(files.len(), 3);
    let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let check = python(TFRECORD_CHECK, &paths);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    assert_eq!(check.stdout.trim(), "ok 15");
    // A run without --generate reads the kept set: 15 samples, a block of 5 for each of 3
    // ranks, 5 steps of 1.
    let again = train(&bed, "--workload resnet50 --files 3 --samples-per-file 5 --sample-bytes 3000 --sample-stdev 500 --batch 1 --compute 0.001 --accelerators 3");
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(figures(&bed)["train.steps"], "5");
}

/// The planted contrast on tmpfs: the same reads with a compute time far shorter than a
/// batch's load fail the AU; with one far longer, pass.
#[test]
fn a_short_compute_fails_the_au_and_a_long_one_passes() {
    let Some(fs) = common::Tmpfs::mount("size=256m") else { return };
    let bed = &fs.bed;
    let common = "--workload cosmoflow --accelerators 2 --files 24 --sample-bytes 4m --sample-stdev 0 --batch 2 --reader-threads 1 --prefetch 1";
    let out = train(bed, &format!("--generate --keep {common} --compute 0.00001"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let short = figures(bed);
    assert_eq!(short["train.pass"], "fail", "{short:?}");
    let out = train(bed, &format!("{common} --compute 0.3"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let long = figures(bed);
    assert_eq!(long["train.pass"], "pass", "{long:?}");
    assert_eq!(long["train.au_target"], "0.7");
    let run = bed.last_run();
    // The read phase is stored as every run's, with the page-cache flag tmpfs earns.
    assert_eq!(run["phases"][0]["op"], "read");
    assert!(run["phases"][0]["possibly_cached"].to_string().contains("memory file system"), "{}", run["phases"][0]);
    assert!(run["warnings"].to_string().contains("under 5x the clients' RAM"), "{}", run["warnings"]);
}

/// A shared read rate planted so that 2 ranks need 0.83 of it and 3 ranks 1.25: the most
/// accelerators that pass is 2.
#[test]
fn find_max_finds_the_planted_boundary() {
    let bed = Bed::new();
    // Each step of each rank reads 1 MiB (4 x 256 KiB) in 0.1 s of compute: 2.4 ranks
    // saturate 24 MiB/s.
    let dir = bed.dir.display().to_string();
    let out = iosurvey(&[
        "train",
        "--dir",
        &dir,
        "--db",
        &bed.db,
        "--workload",
        "cosmoflow",
        "--generate",
        "--files",
        "256",
        "--sample-bytes",
        "256k",
        "--sample-stdev",
        "0",
        "--batch",
        "4",
        "--reader-threads",
        "2",
        "--compute",
        "0.1",
        "--au",
        "0.9",
        "--steps",
        "8",
        "--throttle",
        "24m",
        "--find-max",
        "--max-accelerators",
        "8",
        "--probe-runs",
        "3",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("most accelerators that pass: 2\n"), "{}", out.stdout);
    assert!(bed.runs().len() >= 3, "each probe's runs stored");
    assert!(listing(&bed.dir).is_empty() || !bed.dir.exists(), "the data set removed");
}

/// `--direct` (DLIO's odirect): the reads bypass the page cache, so the read phase is not
/// flagged as possibly cached, and each record is read in whole 4 KiB blocks around it; a
/// tfrecord transfer that is not whole blocks is refused before anything is written. The
/// client's CPU per sample is stored with every run.
#[test]
fn direct_reads_bypass_the_page_cache_in_whole_blocks_and_a_misaligned_transfer_is_refused() {
    let bed = Bed::new();
    // 3 files of 5 records of 3000 bytes (+16 of framing): 15 records, one a step of 1 rank.
    let args = "--workload resnet50 --generate --files 3 --samples-per-file 5 --sample-bytes 3000 --sample-stdev 0 --batch 1 --compute 0.001";
    let cached = train(&bed, args);
    assert_eq!(cached.code, 0, "{}", cached.stderr);
    let flag = bed.last_run()["phases"][0]["possibly_cached"].clone();
    assert!(flag.to_string().contains("without --direct"), "the same run without --direct: {flag}");
    let out = train(&bed, &format!("{args} --direct"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    assert_eq!(run["phases"][0]["possibly_cached"], Value::Null, "{}", run["phases"][0]);
    assert_eq!(run["workload"]["direct"], true);
    // Records at 3016-byte strides in files of 15,080 bytes: each read covers the 4 KiB blocks
    // its record touches, up to the end of the file.
    let per_file: u64 =
        (0..5u64).map(|k| (((k + 1) * 3016).div_ceil(4096) * 4096).min(15080) - k * 3016 / 4096 * 4096).sum();
    assert_eq!(run["phases"][0]["tasks"][0]["bytes"].as_u64(), Some(3 * per_file));
    let cpu = run["tool_params"]["train.cpu_per_sample_s"].as_str().and_then(|c| c.parse::<f64>().ok());
    assert!(cpu.is_some_and(|c| c > 0.0), "{}", run["tool_params"]);
    let refused = train(&bed, &format!("{args} --direct --transfer 6000"));
    assert_one_line_error(&refused, 2, &["--direct needs --transfer in whole 4 KiB blocks"]);
}

#[test]
fn malformed_settings_are_refused_in_one_line_before_anything_is_written() {
    let bed = Bed::new();
    let target = bed.dir.join("fresh");
    let dir = target.display().to_string();
    for (args, needle) in [
        ("--batch 0", "--batch"),
        ("--au 1.5", "--au 1.5"),
        ("--files 2 --batch 7", "steps per epoch"),
        ("--compute=-1", "--compute"),
        ("--accelerators 0", "--accelerators 0"),
    ] {
        let mut all = vec!["train", "--dir", &dir, "--db", &bed.db, "--workload", "unet3d", "--generate"];
        all.extend(args.split_whitespace());
        let out = iosurvey(&all);
        assert_one_line_error(&out, 2, &[needle]);
        assert!(!target.exists(), "{args}: nothing made");
        assert!(!Path::new(&bed.db).exists(), "{args}: no store made");
    }
    // retinanet has no published A100 time.
    let out = iosurvey(&["train", "--dir", &dir, "--db", &bed.db, "--workload", "retinanet", "--accelerator", "a100"]);
    assert_one_line_error(&out, 2, &["no published compute time"]);
}

#[test]
fn the_data_set_is_removed_unless_kept_and_a_foreign_file_is_never_touched() {
    let bed = Bed::new();
    let args =
        "--workload retinanet --accelerator b200 --generate --files 8 --sample-bytes 10k --batch 2 --compute 0.001";
    let out = train(&bed, args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(listing(&bed.dir).is_empty(), "{:?}", listing(&bed.dir));
    // A directory with someone else's file is refused, the file left as it was.
    std::fs::write(bed.dir.join("theirs.jpg"), b"keep me").unwrap();
    let out = train(&bed, args);
    assert_ne!(out.code, 0);
    assert_eq!(std::fs::read(bed.dir.join("theirs.jpg")).unwrap(), b"keep me");
    assert_eq!(listing(&bed.dir), vec!["theirs.jpg".to_string()]);
    // Without --generate a missing data set is refused in one line.
    std::fs::remove_file(bed.dir.join("theirs.jpg")).unwrap();
    let out =
        train(&bed, "--workload retinanet --accelerator b200 --files 8 --sample-bytes 10k --batch 2 --compute 0.001");
    assert_one_line_error(&out, 2, &["no data set", "--generate"]);
}

#[test]
fn a_scaled_run_says_it_is_a_rehearsal() {
    let bed = Bed::new();
    // The rule's data set (5x this machine's RAM in 64 KiB samples), at 1/20000.
    let out = train(
        &bed,
        "--workload unet3d --generate --scale 1/20000 --sample-bytes 64k --sample-stdev 0 --batch 1 --compute 0.001",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    assert_eq!(run["tool_params"]["train.scale"], "1/20000");
    assert!(run["warnings"].to_string().contains("rehearsal"), "{}", run["warnings"]);
    let shown = iosurvey(&["show", &run["id"].to_string(), "--db", &bed.db]);
    assert!(shown.stdout.contains("train.au"), "{}", shown.stdout);
}

#[test]
fn checkpoints_are_sharded_per_rank_read_back_shifted_and_stored_with_the_slowest_ranks_figures() {
    let bed = Bed::new();
    // llama3-8b at 1/1000000: 112,000 bytes, 28,000 a rank on 4 ranks.
    let args = "--model llama3-8b --ranks 4 --scale 1/1000000 --checkpoints 3 --reads 2 --compute 0.01 --shift 1 --transfer 4k --no-drop-caches --keep";
    let out = bed.command("checkpoint", args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let files = listing(&bed.dir);
    let model: Vec<&String> = files.iter().filter(|n| n.ends_with("-model.pt")).collect();
    let optim: Vec<&String> = files.iter().filter(|n| n.ends_with("-optim.pt")).collect();
    assert_eq!((model.len(), optim.len()), (12, 12), "{files:?}");
    assert_eq!(std::fs::metadata(bed.dir.join("ckpt-0002-rank-00003-model.pt")).unwrap().len(), 4000);
    assert_eq!(std::fs::metadata(bed.dir.join("ckpt-0002-rank-00003-optim.pt")).unwrap().len(), 24000);
    let run = bed.last_run();
    let p = &run["tool_params"];
    assert_eq!(p["ckpt.rank_bytes"], "28000");
    assert_eq!(p["ckpt.shift"], "1");
    for k in ["ckpt.write_max_duration_s", "ckpt.write_min_gib_s", "ckpt.read_min_gib_s", "ckpt.recovery_s"] {
        assert!(p[k].as_str().and_then(|v| v.parse::<f64>().ok()).is_some_and(|v| v > 0.0), "{k}: {p}");
    }
    let ops: Vec<&str> = run["phases"].as_array().unwrap().iter().map(|ph| ph["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["write", "write", "write", "read", "read"]);
    let warnings = run["warnings"].to_string();
    assert!(warnings.contains("rehearsal") && warnings.contains("page cache"), "{warnings}");
    let host = run["hosts"][0].as_str().unwrap();
    assert!(warnings.contains(&format!("without the page cache dropped on {host}")), "{warnings}");
    let rule = p["ckpt.cache_rule"].as_str().unwrap_or_default();
    assert!(rule.starts_with(&format!("{host}: 328.12 KiB of ")), "3 checkpoints of 112,000 bytes: {rule}");
    assert!(rule.ends_with("RAM (under 3x): kept (--no-drop-caches)"), "{rule}");
}

/// The 3x rule as a run applies it (as root, as CI runs): this client's share of the
/// checkpoints, under 3x its RAM, has its page cache dropped before the first read, and the
/// record says what the rule weighed and did, per client.
#[test]
fn a_checkpoint_drops_the_page_cache_by_its_clients_share_of_the_data_and_its_ram() {
    let bed = Bed::new();
    // llama3-8b at 1/1000000 on 2 ranks, 2 checkpoints: 224,000 bytes, all on this client.
    let args = "--model llama3-8b --ranks 2 --scale 1/1000000 --checkpoints 2 --reads 2 --compute 0 --transfer 4k";
    let out = bed.command("checkpoint", args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let run = bed.last_run();
    let host = run["hosts"][0].as_str().unwrap();
    let rule = run["tool_params"]["ckpt.cache_rule"].as_str().unwrap_or_default();
    assert!(rule.starts_with(&format!("{host}: 218.75 KiB of ")), "{rule}");
    assert!(rule.ends_with("RAM (under 3x): dropped"), "one client, its cache dropped: {rule}");
    let phases = run["phases"].as_array().unwrap();
    let dropped: Vec<bool> = phases.iter().map(|p| p["caches_dropped"].as_bool().unwrap()).collect();
    assert_eq!(dropped, [false, false, true, false], "dropped before the first read only");
    assert!(!run["warnings"].to_string().contains("page cache"), "{}", run["warnings"]);
}

/// The data files of a directory with their sizes and modification times: what a run that
/// only reads must leave as it found them (the manifest names each run that holds the
/// directory).
fn stat_all(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut all: Vec<_> = listing(dir)
        .into_iter()
        .filter(|n| n != ".iosurvey-manifest")
        .map(|n| {
            let m = std::fs::metadata(dir.join(&n)).unwrap();
            (n, m.len(), m.modified().unwrap())
        })
        .collect();
    all.sort();
    all
}

/// As mlpstorage splits a checkpoint study into a run that writes (num_checkpoints_read=0)
/// and a run that reads (num_checkpoints_write=0), possibly on other ranks: the second run
/// finds the shards the first kept and shares them over its own ranks, reads only those, and
/// leaves every file as it was.
#[test]
fn a_checkpoint_kept_by_one_run_is_read_by_another_on_fewer_ranks_and_left_as_it_was() {
    let bed = Bed::new();
    // llama3-8b at 1/1000000: 112,000 bytes in 4 shards of 28,000.
    let common = "--model llama3-8b --scale 1/1000000 --compute 0 --transfer 4k --no-drop-caches";
    let wrote = bed.command("checkpoint", &format!("{common} --ranks 4 --checkpoints 2 --reads 0 --keep"));
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    let ops = |run: &Value| -> Vec<String> {
        run["phases"].as_array().unwrap().iter().map(|p| p["op"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(ops(&bed.last_run()), ["write", "write"]);
    let kept = stat_all(&bed.dir);
    assert_eq!(kept.iter().filter(|(n, ..)| n.ends_with(".pt")).count(), 2 * 4 * 2, "{kept:?}");

    // Read on 2 ranks: each reads 2 of the 4 shards, rank 1 starting one shard on (--shift 1).
    let read = bed.command("checkpoint", &format!("{common} --ranks 2 --checkpoints 0 --reads 2 --shift 1"));
    assert_eq!(read.code, 0, "{}", read.stderr);
    let run = bed.last_run();
    assert_eq!(ops(&run), ["read", "read"]);
    let p = &run["tool_params"];
    assert_eq!((p["ckpt.ranks"].as_str(), p["ckpt.shards"].as_str()), (Some("2"), Some("4")), "{p}");
    assert_eq!(p["ckpt.rank_bytes"], "28000", "a shard's bytes, as written");
    for phase in run["phases"].as_array().unwrap() {
        let bytes: Vec<u64> = phase["tasks"].as_array().unwrap().iter().map(|t| t["bytes"].as_u64().unwrap()).collect();
        assert_eq!(bytes, [56000, 56000], "two shards a rank: {phase}");
    }
    assert!(p["ckpt.recovery_s"].as_str().and_then(|v| v.parse::<f64>().ok()).is_some_and(|v| v > 0.0), "{p}");
    assert!(p.get("ckpt.write_min_gib_s").is_none(), "nothing written: {p}");
    assert_eq!(stat_all(&bed.dir), kept, "the read left every file as it was");

    // What the kept checkpoints cannot give is refused in one line, before anything is read.
    for (args, needle) in [
        ("--ranks 8 --checkpoints 0 --reads 1", "--ranks 8 is more than the 4 shards"),
        ("--ranks 2 --checkpoints 0 --reads 3", "holds 2 checkpoints"),
        ("--ranks 2 --checkpoints 0 --reads 0", "--checkpoints 0 / --reads 0"),
    ] {
        let out = bed.command("checkpoint", &format!("{common} {args}"));
        assert_one_line_error(&out, 2, &[needle]);
    }
    let other = bed.command(
        "checkpoint",
        "--model llama3-70b --scale 1/1000000 --ranks 2 --checkpoints 0 --reads 1 --transfer 4k --no-drop-caches",
    );
    assert_one_line_error(&other, 2, &["other settings"]);
    assert_eq!(stat_all(&bed.dir), kept, "refusals left every file as it was");

    // A directory with no checkpoint says how to make one.
    let empty = Bed::new();
    let none = empty.command("checkpoint", &format!("{common} --ranks 2 --checkpoints 0 --reads 1"));
    assert_one_line_error(&none, 2, &["no checkpoint", "--keep"]);
}

#[test]
fn checkpoint_settings_that_cannot_run_are_refused_before_anything_is_written() {
    let bed = Bed::new();
    let target = bed.dir.join("fresh");
    let dir = target.display().to_string();
    for (args, needle) in [("--shift 8", "--shift 8"), ("--reads 11", "--reads 11"), ("--ranks 0", "--ranks 0")] {
        let mut all = vec!["checkpoint", "--dir", &dir, "--db", &bed.db, "--model", "llama3-8b"];
        all.extend(args.split_whitespace());
        let out = iosurvey(&all);
        assert_one_line_error(&out, 2, &[needle]);
        assert!(!target.exists() && !Path::new(&bed.db).exists(), "{args}: nothing made");
    }
}

fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// A stopped study is filed as every study's run is: one line, exit 130, the run stored as
/// failed (interrupted), its files removed.
fn assert_stopped_and_filed(bed: &Bed, child: std::process::Child, kind: &str) {
    let out = common::outcome(child.wait_with_output().unwrap());
    assert_one_line_error(&out, 130, &["interrupted"]);
    let runs = bed.runs();
    assert_eq!(runs.len(), 1, "stored once: {runs:?}");
    assert_eq!(runs[0]["status"], "failed", "{:?}", runs[0]);
    let run = bed.last_run();
    assert!(run["error"].as_str().is_some_and(|e| e.contains("interrupted")), "{run}");
    assert!(run["name"].as_str().is_some_and(|n| n.starts_with(kind)), "{run}");
    assert!(listing(&bed.dir).is_empty(), "{:?}", listing(&bed.dir));
}

#[test]
fn an_interrupted_train_is_stored_as_failed_and_its_data_set_removed() {
    let bed = Bed::new();
    // 40 steps of 0.5 s after the data set is written: 20 s of training to interrupt.
    let args = "--workload cosmoflow --generate --files 40 --sample-bytes 64k --sample-stdev 0 --batch 1 --compute 0.5";
    let child = bed.spawn_command("train", args);
    wait_until("the data set's 40 files", 20, || {
        listing(&bed.dir).iter().filter(|n| n.ends_with(".tfrecord")).count() == 40
    });
    signal(&child, libc::SIGINT);
    assert_stopped_and_filed(&bed, child, "train");
}

#[test]
fn an_interrupted_checkpoint_is_stored_as_failed_and_its_files_removed() {
    let bed = Bed::new();
    // 30 s of compute after the first checkpoint: the signal comes in between.
    let args = "--model llama3-8b --ranks 2 --scale 1/1000000 --checkpoints 3 --reads 1 --compute 30 --transfer 4k";
    let child = bed.spawn_command("checkpoint", args);
    wait_until("the first checkpoint", 20, || listing(&bed.dir).iter().any(|n| n == "ckpt-0000-rank-00001-optim.pt"));
    signal(&child, libc::SIGTERM);
    assert_stopped_and_filed(&bed, child, "checkpoint");
}

/// A DLIO summary.json with the fields DLIO documents (`metric.train_au_mean_percentage`, the
/// per-epoch lists, `num_accelerators`, `start`, `end`, `hostname`).
fn dlio_summary(accelerators: u32, au: f64) -> String {
    format!(
        r#"{{"model": "unet3d", "start": "2026-11-20T09:14:03.104510", "end": "2026-11-20T09:24:03.5", "num_accelerators": {accelerators},
  "num_hosts": 1, "hostname": "client1", "host_memory_GB": [512], "num_files_train": 28000, "num_samples_per_file": 1,
  "metric": {{"train_au_percentage": [{au}, {au}], "train_au_mean_percentage": {au}, "train_au_meet_expectation": "{}",
    "train_au_stdev_percentage": 0.0, "train_throughput_samples_per_second": [20.0, 22.0],
    "train_throughput_mean_samples_per_second": 21.0, "train_throughput_stdev_samples_per_second": 1.0,
    "train_io_mean_MB_per_second": 2936.1, "train_io_stdev_MB_per_second": 139.8}}}}"#,
        if au >= 90.0 { "success" } else { "fail" }
    )
}

#[test]
fn dlio_summaries_of_an_mlpstorage_result_directory_import_beside_iosurveys_runs() {
    let bed = Bed::new();
    let results = bed.tmp.path().join("results");
    for (stamp, k, au) in [("20261120_091403", 4, 97.5), ("20261120_101403", 8, 71.0)] {
        let dir = results.join("training/unet3d/run").join(stamp);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("summary.json"), dlio_summary(k, au)).unwrap();
    }
    let out = iosurvey(&["import", results.to_str().unwrap(), "--db", &bed.db, "--label", "lustre"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.matches("imported dlio file").count(), 2, "{}", out.stdout);
    let runs = bed.runs();
    assert_eq!(runs.len(), 2);
    let first = bed.show(runs[0]["id"].as_i64().unwrap());
    let p = &first["tool_params"];
    assert_eq!((p["train.workload"].as_str(), p["train.accelerators"].as_str()), (Some("unet3d"), Some("4")));
    assert_eq!((p["train.au"].as_str(), p["train.pass"].as_str()), (Some("0.975"), Some("pass")));
    assert_eq!(first["provenance"], "imported:dlio");
    // The same file alone is known by its digest, and a summary with no AU is refused.
    let one = results.join("training/unet3d/run/20261120_091403/summary.json");
    let again = iosurvey(&["import", one.to_str().unwrap(), "--db", &bed.db]);
    assert!(again.stdout.contains("was imported before"), "{}", again.stdout);
    let cut = bed.tmp.path().join("cut.json");
    std::fs::write(&cut, "{\"metric\": {\"train_au_percentage\": [1]}}").unwrap();
    let refused = iosurvey(&["import", cut.to_str().unwrap(), "--db", &bed.db]);
    assert_one_line_error(&refused, 2, &["train_au_mean_percentage"]);
    // Its figures sit on the report's AU chart with iosurvey's own.
    let page = bed.tmp.path().join("r.html");
    let report = iosurvey(&["report", "-o", page.to_str().unwrap(), "--db", &bed.db]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("accelerator utilization against accelerators"), "no AU chart");
    assert!(html.contains("AU threshold 90%"), "no threshold drawn");
    assert!(html.contains("the most accelerators that reach the 90% AU is 4"), "no finding");
}

/// `compare` of the stored report of two runs, as JSON.
fn compared(bed: &Bed, a: &str, b: &str) -> Value {
    let out = iosurvey(&["compare", a, b, "--db", &bed.db, "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

/// A table's row by its first cell.
fn row<'v>(table: &'v Value, figure: &str) -> &'v Vec<Value> {
    let rows = table["rows"].as_array().unwrap();
    rows.iter()
        .map(|r| r.as_array().unwrap())
        .find(|r| r[0] == figure)
        .unwrap_or_else(|| panic!("no {figure}: {table}"))
}

/// Two training runs compared by their own figures, not their read phases: AU (and its
/// spread over ranks), samples/s, read MiB/s and the step waits; the run of three epochs gives
/// an interval over them, the run of one is said to be a single sample; the identity line
/// names the accelerators as what differs. Two checkpoint runs likewise, by the slowest
/// rank's throughput and duration, each checkpoint a sample.
#[test]
fn compare_sets_training_and_checkpoint_runs_side_by_side_by_their_own_figures() {
    let bed = Bed::new();
    let common = "--workload cosmoflow --files 8 --sample-bytes 64k --sample-stdev 0 --batch 1 --compute 0.001";
    let out = train(&bed, &format!("{common} --generate --keep --accelerators 1 --epochs 3"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = bed.last_run()["id"].to_string();
    let out = train(&bed, &format!("{common} --accelerators 2"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let second = bed.last_run()["id"].to_string();
    let report = compared(&bed, &first, &second);
    let t = &report["tables"][0];
    let notes = t["notes"].to_string();
    assert!(notes.contains(&format!("what differs: accelerators ({first}: 1, {second}: 2)")), "{notes}");
    assert!(!notes.contains("target ("), "one target: {notes}");
    let au = row(t, "AU");
    assert_eq!(
        (&au[1], &au[3], &au[5]),
        (&Value::from("%"), &Value::from("3 epochs of 1 run"), &Value::from("1 run: a single sample"))
    );
    assert_eq!(au[9], "a single sample on a side: no interval, no verdict");
    for figure in ["AU over ranks", "samples/s", "read", "step wait p50", "step wait p99"] {
        row(t, figure);
    }
    assert_eq!(row(t, "AU over ranks")[1], "% lowest to highest");
    assert!(row(t, "read")[2].is_string() && row(t, "read")[4].is_string(), "both sides read: {t}");
    assert!(report["findings"].to_string().contains("threshold"), "{}", report["findings"]);

    let ckpt =
        "--model llama3-8b --scale 1/1000000 --checkpoints 3 --reads 3 --compute 0 --transfer 4k --no-drop-caches";
    let out = bed.command("checkpoint", &format!("{ckpt} --ranks 2"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let two = bed.last_run()["id"].to_string();
    let out = bed.command("checkpoint", &format!("{ckpt} --ranks 4"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let four = bed.last_run()["id"].to_string();
    let report = compared(&bed, &two, &four);
    let t = &report["tables"][0];
    assert!(t["notes"].to_string().contains(&format!("ranks ({two}: 2, {four}: 4)")), "{}", t["notes"]);
    for (figure, unit, samples) in [
        ("write, slowest rank", "GiB/s", "3 checkpoints written of 1 run"),
        ("write duration, slowest rank", "s", "3 checkpoints written of 1 run"),
        ("read, slowest rank", "GiB/s", "3 checkpoints read of 1 run"),
        ("read duration, slowest rank", "s", "3 checkpoints read of 1 run"),
        ("recovery", "s", "1 run: a single sample"),
    ] {
        let r = row(t, figure);
        assert_eq!((&r[1], &r[3], &r[5]), (&Value::from(unit), &Value::from(samples), &Value::from(samples)), "{r:?}");
    }
    // Each side of three checkpoints has an interval, and so has the ratio.
    let write = row(t, "write, slowest rank");
    assert!(write[7]["value"].is_number() && write[8]["value"].is_number(), "{write:?}");
    assert!(write[2].as_str().is_some_and(|c| c.contains('±') || c.contains(" to ")), "{write:?}");
}

/// A cell's leading number and its decimals ("93.1 ± 1.2" is 93.1 to 1 decimal).
fn lead(cell: &Value) -> Option<(f64, i32)> {
    let word = cell.as_str()?.split_whitespace().next()?;
    Some((word.parse().ok()?, word.split('.').nth(1).map_or(0, |d| d.len() as i32)))
}

/// Runs filed before the record held their figures typed (their stored JSON without
/// `training`, so `tool_params` alone) compare by the same figures as the runs filed now: the
/// same rows, samples and verdicts, each side's value to within the text's rounding (which
/// may make a sub-microsecond wait 0, and leave its ratio unjudged).
#[test]
fn runs_of_the_old_shape_compare_by_the_same_figures() {
    let bed = Bed::new();
    let common = "--workload cosmoflow --files 8 --sample-bytes 64k --sample-stdev 0 --batch 1 --compute 0.001";
    let mut ids = Vec::new();
    for more in ["--generate --keep --accelerators 1 --epochs 3", "--accelerators 2"] {
        let out = train(&bed, &format!("{common} {more}"));
        assert_eq!(out.code, 0, "{}", out.stderr);
        ids.push(bed.last_run()["id"].as_i64().unwrap());
    }
    let mut store = iosurvey::store::Store::open(Path::new(&bed.db)).unwrap();
    let old: Vec<i64> = ids
        .iter()
        .map(|&id| {
            let mut v = serde_json::to_value(store.load(id).unwrap()).unwrap();
            assert!(v.as_object_mut().unwrap().remove("training").is_some(), "filed typed: {v}");
            v["id"] = Value::Null;
            store.save(&serde_json::from_value(v).unwrap()).unwrap()
        })
        .collect();
    drop(store);
    let (now, then) = (
        compared(&bed, &ids[0].to_string(), &ids[1].to_string()),
        compared(&bed, &old[0].to_string(), &old[1].to_string()),
    );
    let (tn, tt) = (&now["tables"][0], &then["tables"][0]);
    assert!(
        tt["notes"].to_string().contains(&format!("accelerators ({}: 1, {}: 2)", old[0], old[1])),
        "{}",
        tt["notes"]
    );
    let (rows_now, rows_then) = (tn["rows"].as_array().unwrap(), tt["rows"].as_array().unwrap());
    assert_eq!(rows_then.len(), rows_now.len(), "{tt}");
    assert!(rows_now.len() >= 6, "{tn}");
    for (n, t) in rows_now.iter().zip(rows_then) {
        for column in [0, 1, 3, 5] {
            assert_eq!(n[column], t[column], "{n} against {t}");
        }
        // A wait the text rounds to 0 has no ratio to judge; any other, the same verdict.
        if !t[6].is_null() {
            assert_eq!(n[9], t[9], "{n} against {t}");
        }
        for column in [2, 4] {
            let ((x, decimals), (y, _)) = (lead(&n[column]).unwrap(), lead(&t[column]).unwrap());
            assert!((x - y).abs() <= 1.01 * 10f64.powi(-decimals) + 1e-4 * x.abs(), "{n} against {t}");
        }
    }
    assert_eq!(now["findings"].as_array().map(Vec::len), then["findings"].as_array().map(Vec::len));
}
