//! The rule for skipping (`common::skip`): under `CI=true` only a test tests/allowed-skips.txt
//! names may skip; elsewhere a skip is said on stderr and logged. And the allow-list names
//! tests there are, each with its reason.

mod common;

use common::*;
use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::Command;

#[test]
fn every_allowed_skip_names_a_test_there_is_and_says_why() {
    let list = "# comment\n\nsafety::a_test   needs what CI lacks\n  cli::b\tno chromium\ncli::c\n";
    assert_eq!(
        allowed_skips(list),
        [("safety::a_test", "needs what CI lacks"), ("cli::b", "no chromium"), ("cli::c", "")]
    );
    assert!(may_skip("cli::x", false, list) && may_skip("cli::b", true, list));
    assert!(!may_skip("cli::x", true, list) && !may_skip("b", true, list));
    let mut seen = HashSet::new();
    for (name, why) in allowed_skips(ALLOWED_SKIPS) {
        assert!(seen.insert(name), "{name} is listed twice");
        assert!(!why.is_empty(), "{name}: no reason given");
        let (file, test) = name.split_once("::").unwrap_or_else(|| panic!("{name} is not file::test"));
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(format!("{file}.rs"));
        let source = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {}: {e}", path.display()));
        assert!(source.contains(&format!("fn {test}() {{")), "{name}: no test {test} in {}", path.display());
    }
}

/// Skips when the test below runs it (in a child of this binary); otherwise does nothing.
#[test]
#[ignore = "run by a_skip_fails_the_test_in_ci_and_elsewhere_is_said_and_logged"]
fn a_test_that_skips() {
    if std::env::var_os("IOSURVEY_SKIP_PROBE").is_some() {
        skip("asked to by\nthe rule's test");
    }
}

#[test]
fn a_skip_fails_the_test_in_ci_and_elsewhere_is_said_and_logged() {
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("skips.log");
    let probe = |ci: Option<&str>| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["a_test_that_skips", "--exact", "--ignored", "--nocapture"])
            .env("IOSURVEY_SKIP_PROBE", "1")
            .env("IOSURVEY_SKIP_LOG", &log)
            .env_remove("CI");
        if let Some(ci) = ci {
            cmd.env("CI", ci);
        }
        outcome(cmd.output().unwrap())
    };
    let out = probe(Some("true"));
    assert_eq!(out.code, 101, "the test failed: {}", out.stdout);
    let refusal = "skip_rule::a_test_that_skips may not skip in CI (CI=true): asked to by the rule's test";
    assert!(out.stderr.contains(refusal), "{}", out.stderr);
    assert!(!log.exists(), "a refused skip is not logged");
    let line = "skipped: skip_rule::a_test_that_skips: asked to by the rule's test";
    for ci in [None, Some("false")] {
        let out = probe(ci);
        assert_eq!(out.code, 0, "{ci:?}: {}\n{}", out.stdout, out.stderr);
        assert!(out.stderr.lines().any(|l| l == line), "{ci:?}: {}", out.stderr);
    }
    assert_eq!(fs::read_to_string(&log).unwrap(), format!("{line}\n{line}\n"), "one line a skip, appended");
}
