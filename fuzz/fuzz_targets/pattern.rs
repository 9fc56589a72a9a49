//! `spec::Pattern`'s FromStr: never panics; what parses prints back to text that parses to
//! the same pattern.
#![no_main]

use iosurvey::spec::Pattern;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(p) = text.parse::<Pattern>() {
        let shown = p.to_string();
        assert_eq!(shown.parse::<Pattern>(), Ok(p), "{text:?} -> {p:?} -> {shown:?}");
    }
});
