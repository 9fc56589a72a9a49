//! `units::parse_size`: never panics; a plain decimal number parses to itself.
#![no_main]

use iosurvey::units::parse_size;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let got = parse_size(text);
    if let Err(e) = &got {
        assert_eq!(e.text, text, "the error names what the user typed");
    }
    // parse_size trims surrounding whitespace, so "plain decimal" is judged on the trimmed text.
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        match t.parse::<u64>() {
            Ok(n) => assert_eq!(got, Ok(n), "plain number {t:?}"),
            Err(_) => assert!(got.is_err(), "{t:?} does not fit in u64 but parsed as {got:?}"),
        }
    }
});
