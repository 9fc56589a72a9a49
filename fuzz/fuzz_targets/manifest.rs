//! `target::manifest::Manifest::parse`: never panics; every entry is a plain name (non-empty,
//! no '/', not "." or ".."); a v2 manifest renders to text that parses back to itself.
#![no_main]

use iosurvey::target::manifest::Manifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(m) = Manifest::parse(text) else { return };
    for name in m.entries.keys() {
        assert!(
            !name.is_empty() && !name.contains('/') && name != "." && name != "..",
            "{text:?} gave entry {name:?}"
        );
    }
    if text.starts_with("iosurvey-manifest 2") {
        let rendered = m.render();
        assert_eq!(Manifest::parse(&rendered), Ok(m.clone()), "{text:?} rendered as {rendered:?}");
    }
});
