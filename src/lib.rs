//! iosurvey: measures storage the way HPC storage people do (IOR, mdtest, IOzone, fio), keeps
//! every result with its context in an embedded store, and reports what it found.
//!
//! Data flows one way: `spec` -> `plan` -> `engine` (per task, through `team`) -> `measure`
//! and `record` (team-wide figures) -> `store` -> `report`. See docs/architecture.md.
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
pub mod measure;
pub mod net;
pub mod plan;
pub mod record;
pub mod report;
pub mod runner;
pub mod scratch;
pub mod session;
pub mod shell;
pub mod spec;
pub mod spelling;
pub mod stats;
pub mod store;
/// The FFI: every libc call, system call and raw MPI call, behind safe wrappers (see the
/// module's own docs). Public only for the binary's signal handling and output flags.
#[doc(hidden)]
pub mod sys;
pub mod target;
pub mod team;
pub mod units;
