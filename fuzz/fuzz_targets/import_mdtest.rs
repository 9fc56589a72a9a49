//! The mdtest importer: see import_common.rs.
#![no_main]
#[path = "import_common.rs"]
mod common;
libfuzzer_sys::fuzz_target!(|data: &[u8]| common::check(iosurvey::import::Tool::Mdtest, data));
