//! iosurvey: measures storage the way HPC storage people do (IOR, mdtest, IOzone, fio), keeps
//! every result with its context in an embedded store, and reports what it found.
//!
//! Data flows one way: `spec` -> `plan` -> `engine` (per task, through `team`) -> `measure`
//! and `record` (team-wide figures) -> `store` -> `report`. See docs/architecture.md.
//!
//! # Layers
//!
//! The rooms in the one order they may use each other: a room uses only rooms listed before
//! it (on an earlier line, or earlier on its own), so no import goes back and the rooms make
//! no cycle. `tests/layers.rs` reads every `crate::` path of the library and `iosurvey::` path
//! of the binary outside test modules, doc links included, and fails on one that goes back
//! and on a room this table does not place; docs/architecture.md shows the same table.
//!
//! ```text
//! ground:  units escape spelling cancel sys input scratch
//! data:    measure env spec stats record
//! machine: team s3 target shell engine net events
//! keep:    store janitor
//! run:     kinds runner plan session io500 train study campaign
//! tools:   compat import
//! results: analysis report
//! binary:  cli
//! ```
#![deny(missing_docs)]

pub mod analysis;
pub mod campaign;
pub mod cancel;
pub mod compat;
pub mod engine;
pub mod env;
pub mod escape;
pub mod events;
pub mod import;
pub mod input;
pub mod io500;
pub mod janitor;
pub mod kinds;
pub mod measure;
pub mod net;
pub mod plan;
pub mod record;
pub mod report;
pub mod runner;
pub mod s3;
pub mod scratch;
pub mod session;
pub mod shell;
pub mod spec;
pub mod spelling;
pub mod stats;
pub mod store;
pub mod study;
/// The FFI: every libc call, system call and raw MPI call, behind safe wrappers (see the
/// module's own docs). Public only for the binary's signal handling and output flags.
#[doc(hidden)]
pub mod sys;
pub mod target;
pub mod team;
pub mod train;
pub mod units;
