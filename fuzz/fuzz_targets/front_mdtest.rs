//! `compat::mdtest::parse`: any command line (words split at blanks, a script or client list the
//! same bytes) never panics, and what it accepts gives native command lines and no empty
//! word among them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let words: Vec<String> = text.split_whitespace().map(String::from).collect();
    let parsed = iosurvey::compat::mdtest::parse(&words);
    if let Ok(native) = parsed {
        assert!(!native.commands.is_empty(), "{words:?}");
        for c in &native.commands {
            assert!(c.iter().all(|w| !w.is_empty()), "{words:?} -> {c:?}");
        }
    }
});
