//! Object figures against a real S3 server (versitygw, testbed/s3): each request kind's rates,
//! latency percentiles and GET's time to first byte stored and shown; an object run compared
//! with a file run of the same label, named as what it is; both drawn on one chart.

mod common;
#[path = "common/s3.rs"]
mod s3bed;

use common::*;
use s3bed::*;
use serde_json::Value;

#[test]
fn a_bucket_run_stores_and_shows_each_requests_rates_percentiles_and_gets_time_to_first_byte() {
    let Some(bed) = S3Bed::start() else { return };
    let (_, record) = bed.run("figures", &["--tasks", "2", "--block", "1m", "--segments", "4", "--verify", "-q"]);
    let id = record["id"].to_string();
    let phases = record["phases"].as_array().unwrap();
    for (phase, request) in phases.iter().zip(["PUT", "GET"]) {
        let requests = phase["requests"].as_array().unwrap_or_else(|| panic!("no requests in {phase}"));
        assert_eq!(requests.len(), 1, "{requests:?}");
        let q = &requests[0];
        assert_eq!(q["request"], request);
        // 2 tasks x 4 objects of 1 MiB, one request each.
        assert_eq!((q["count"].as_u64(), q["bytes"].as_u64()), (Some(8), Some(8 << 20)), "{q}");
        let window = phase["figures"]["window_ns"].as_f64().unwrap();
        let ops = q["ops_per_s"].as_f64().unwrap();
        assert!((ops - 8.0 * 1e9 / window).abs() < 1e-6 * ops, "ops/s is count over the phase's window: {q}");
        assert!((q["bandwidth"].as_f64().unwrap() - ops * (1 << 20) as f64).abs() < 1e-6 * ops * 1e6, "{q}");
        let l = &q["latency"];
        assert_eq!(l["count"], 8);
        let at = |v: &Value, k: &str| v[k].as_u64().unwrap();
        assert!(at(l, "min") <= at(l, "p50") && at(l, "p50") <= at(l, "p99") && at(l, "p99") <= at(l, "max"), "{l}");
        match request {
            "GET" => {
                let f = &q["first_byte"];
                assert_eq!(f["count"], 8, "every GET times its first byte: {q}");
                assert!(at(f, "max") > 0 && at(f, "max") <= at(l, "max"), "the first byte comes before the last: {q}");
                assert_eq!(phase["verify"]["bad"], 0);
            }
            _ => assert!(q.get("first_byte").is_none(), "a PUT reads no body: {q}"),
        }
    }
    let out = bed.iosurvey(&["show", &id]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let table = out.stdout.split("per request (object store").nth(1).unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(table.contains("ttfb p50") && table.contains("ttfb max"), "{table}");
    let rows: Vec<&str> = table.lines().filter(|l| l.contains(" PUT ") || l.contains(" GET ")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(rows[0].trim_end().ends_with('-'), "a PUT has no time to first byte: {}", rows[0]);
}

#[test]
fn an_object_run_is_compared_with_a_file_run_of_its_label_and_drawn_beside_it_named_as_what_it_is() {
    let Some(bed) = S3Bed::start() else { return };
    let dir = bed.dir.path().join("files");
    std::fs::create_dir(&dir).unwrap();
    let shape = ["--tasks", "2", "--block", "1m", "--transfer", "1m", "--segments", "4", "--label", "box", "-q"];
    bed.run("beside", &shape);
    let out = bed.iosurvey(&[&["run", "--dir", dir.to_str().unwrap()][..], &shape].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = bed.iosurvey(&["compare", "1", "2", "--wide"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for needle in [
        "GET 1 MiB objects vs 1 MiB file reads, 2 tasks",
        "PUT 1 MiB objects vs 1 MiB file writes, 2 tasks",
        "target kinds differ",
    ] {
        assert!(out.stdout.contains(needle), "{needle}: {}", out.stdout);
    }
    assert!(!out.stdout.contains("not compared"), "{}", out.stdout);
    let page = bed.dir.path().join("report.html");
    let out = bed.iosurvey(&["report", "-o", page.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("box: objects and files, MiB/s by op and request size"), "no chart of both kinds");
    assert!(html.contains("objects (S3)") && html.contains("files ("), "both kinds are series of the one chart");
}

#[test]
fn head_list_and_delete_are_phases_of_their_own_with_their_own_request_figures_and_only_on_a_bucket() {
    let Some(bed) = S3Bed::start() else { return };
    let ops = "put,get,stat,list,delete";
    let shape = ["--tasks", "2", "--block", "64k", "--transfer", "64k", "--segments", "3", "--op", ops, "-q"];
    let (_, record) = bed.run("ops", &shape);
    let phases = record["phases"].as_array().unwrap();
    let said: Vec<(&str, &str)> =
        phases.iter().map(|p| (p["op"].as_str().unwrap(), p["requests"][0]["request"].as_str().unwrap())).collect();
    assert_eq!(said, [("write", "PUT"), ("read", "GET"), ("head", "HEAD"), ("list", "LIST"), ("delete", "DELETE")]);
    for p in &phases[2..] {
        let q = &p["requests"][0];
        // A HEAD and a DELETE per object, a listing per transfer: 2 tasks x 3.
        assert_eq!((q["count"].as_u64(), q["bytes"].as_u64()), (Some(6), Some(0)), "{q}");
        assert!(q["ops_per_s"].as_f64().unwrap() > 0.0 && q.get("bandwidth").is_none_or(Value::is_null), "{q}");
        assert_eq!(p["figures"]["bytes"], 0, "a {} moves no data: {p}", p["op"]);
    }
    assert!(
        bed.server.client("ops").list("ops/").unwrap().is_empty(),
        "nothing is left after the deletes and clean-up"
    );
    let dir = bed.dir.path().join("d");
    let out = bed.iosurvey(&["run", "--dir", dir.to_str().unwrap(), "--op", "write,head"]);
    assert_one_line_error(&out, 2, &["head phase asks an object store", "--s3"]);
}

#[test]
fn a_mix_keeps_each_requests_figures_apart_and_deletes_only_its_own_objects() {
    let Some(bed) = S3Bed::start() else { return };
    let url = bed.server.url("mixed");
    let mix = "get:45,stat:30,put:15,delete:10";
    let shape =
        ["--tasks", "2", "--block", "16k", "--transfer", "16k", "--segments", "50", "--op", "put,mix", "--mix", mix];
    let (_, record) = bed.run("mixed", &[&shape[..], &["-q"]].concat());
    let mixed = &record["phases"][1];
    assert_eq!(mixed["op"], "mix");
    let requests = mixed["requests"].as_array().unwrap();
    let count = |name: &str| requests.iter().find(|q| q["request"] == name).map_or(0, |q| q["count"].as_u64().unwrap());
    let kinds: Vec<&str> = requests.iter().map(|q| q["request"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["PUT", "GET", "HEAD", "DELETE"], "each kind apart, in one order");
    // 2 tasks x 50 draws; a draw on an object a DELETE removed PUTs it again, so PUTs gain
    // what the others lose.
    assert_eq!(count("PUT") + count("GET") + count("HEAD") + count("DELETE"), 100);
    assert!(count("GET") > 25 && count("HEAD") > 15 && count("DELETE") > 0, "{requests:?}");
    let bytes: u64 = requests.iter().map(|q| q["bytes"].as_u64().unwrap()).sum();
    assert_eq!(bytes, (count("PUT") + count("GET")) * 16384, "HEAD and DELETE move no object data");
    assert_eq!(mixed["figures"]["bytes"], bytes);
    let ops: f64 = requests.iter().map(|q| q["ops_per_s"].as_f64().unwrap()).sum();
    assert!((ops - mixed["figures"]["iops"].as_f64().unwrap()).abs() < 1e-6 * ops, "the kinds add up to the phase");
    assert!(
        requests.iter().find(|q| q["request"] == "GET").unwrap()["first_byte"]["count"].as_u64() == Some(count("GET"))
    );
    assert!(bed.server.client("mixed").list("mixed/").unwrap().is_empty(), "the run's objects are removed, none else");
    for (args, needles) in [
        (vec!["--op", "put,mix"], vec!["draws its requests from --mix", "get:45"]),
        (vec!["--op", "put,get", "--mix", mix], vec!["--mix names the requests of a mix phase", "--op put,mix"]),
        (vec!["--op", "put,mix", "--mix", "get:5,rewrite:5"], vec!["rewrite", "not a request of a mix"]),
    ] {
        let out = bed.iosurvey(&[&["run", "--s3", &url, "--block", "16k", "--transfer", "16k"][..], &args].concat());
        assert_one_line_error(&out, 2, &needles);
    }
}
