//! `janitor::Message::parse`, `net::tcp::Hello::decode` and `spec::meta::made_name`, the
//! parsers issue 19 added: never panic; a hold the parser takes writes back as the same line;
//! a hello decodes to what encodes to the same bytes; a name clean-up would remove is plain.
#![no_main]

use iosurvey::janitor::Message;
use iosurvey::net::tcp::{Hello, HELLO};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(Message::Hold(h)) = Message::parse(text) {
            let again = format!("hold {}", serde_json::to_string(&h).unwrap());
            assert!(matches!(Message::parse(&again), Some(Message::Hold(_))), "{text:?}");
        }
    }
    if let Ok(bytes) = <[u8; HELLO]>::try_from(data.get(..HELLO).unwrap_or_default()) {
        if let Some(hello) = Hello::decode(&bytes) {
            assert_eq!(Hello::decode(&hello.encode()), Some(hello));
        }
    }
    for top in [true, false] {
        if iosurvey::spec::meta::made_name(data, top) {
            assert!(!data.is_empty() && !data.contains(&b'/') && data != b"." && data != b"..", "{data:?}");
        }
    }
});
