//! `plan::parse_counts`: never panics; on success the list is non-empty, every count is
//! positive, and its length is bounded by what the text can ask for.
#![no_main]

use iosurvey::plan::parse_counts;
use libfuzzer_sys::fuzz_target;

/// A generous bound on any client list a user may mean (one count per client, and no run has
/// more than this many clients). parse_counts does not bound its output itself: see README.md.
const MAX_LEN: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(list) = parse_counts(text) {
        assert!(!list.is_empty(), "{text:?} parsed to an empty list");
        assert!(list.len() <= MAX_LEN, "{text:?} parsed to {} counts", list.len());
        assert!(list.iter().all(|&n| n > 0), "{text:?} gave a zero count: {list:?}");
    }
});
