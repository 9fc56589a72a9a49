//! `plan::parse_counts`: never panics; on success the list is non-empty, every count is
//! positive, and it holds at most `plan::MAX_COUNTS` counts.
#![no_main]

use iosurvey::plan::{parse_counts, MAX_COUNTS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(list) = parse_counts(text) {
        assert!(!list.is_empty(), "{text:?} parsed to an empty list");
        assert!(list.len() <= MAX_COUNTS, "{text:?} parsed to {} counts", list.len());
        assert!(list.iter().all(|&n| n > 0), "{text:?} gave a zero count: {list:?}");
    }
});
