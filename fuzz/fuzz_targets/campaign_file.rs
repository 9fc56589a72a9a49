//! `campaign::parse_unmounted`, the campaign file reader (without the check that each
//! target's directory exists, which would read this machine's file system): never panics;
//! what it accepts is a campaign whose references hold (every study's and event's target and
//! study is one of the file's, each label and name given once, at least one of each); a
//! fault's line is a line of the text; reading the same text twice gives the same answer;
//! and the store's lenient reading (`parse_stored`) takes it too, skipping nothing.
#![no_main]

use iosurvey::campaign::{parse_stored, parse_unmounted};
use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("c.toml");
    let read = parse_unmounted(path, text);
    assert_eq!(read, parse_unmounted(path, text), "{text:?} read twice differs");
    let lines = text.matches('\n').count() + 1;
    let c = match read {
        Err(e) => {
            assert!(e.line.is_none_or(|l| (1..=lines).contains(&l)), "{text:?}: line {:?} of {lines}", e.line);
            return;
        }
        Ok(c) => c,
    };
    let stored = parse_stored(path, text).unwrap_or_else(|e| panic!("{text:?}: the store's reading refused {e}"));
    assert!(stored.skipped.is_empty() && stored.campaign == c, "{text:?}: the store's reading differs");
    assert_eq!(c.text, text);
    assert!((1..=1000).contains(&c.repetitions), "{text:?}: {} repetitions", c.repetitions);
    assert!(!c.targets.is_empty() && !c.studies.is_empty(), "{text:?}");
    let labels: HashSet<&str> = c.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels.len(), c.targets.len(), "{text:?}: a label given twice");
    let names: HashSet<&str> = c.studies.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), c.studies.len(), "{text:?}: a study name given twice");
    for s in &c.studies {
        let on: HashSet<usize> = s.targets.iter().copied().collect();
        assert!(!s.targets.is_empty() && on.len() == s.targets.len(), "{text:?}: study {}", s.name);
        assert!(s.targets.iter().all(|&k| k < c.targets.len()), "{text:?}: study {}", s.name);
        let keys: HashSet<&str> = s.settings.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(keys.len(), s.settings.len(), "{text:?}: a setting given twice");
        assert!(s.settings.iter().all(|x| (1..=lines).contains(&x.line)), "{text:?}");
    }
    for e in &c.events {
        let study = &c.studies[e.study];
        assert!(e.target.is_none_or(|k| study.targets.contains(&k)), "{text:?}: event off its study's targets");
    }
});
