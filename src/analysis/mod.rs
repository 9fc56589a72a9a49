//! Stored records turned into what a reader is shown: typed tables and findings, computed
//! here and rendered elsewhere (the report room's exporters), so that every renderer (text,
//! JSON, CSV, Markdown, HTML to come) shows the same numbers, and a finding is computed once.

pub mod campaign;
mod charts;
pub mod cliffs;
mod grouped;
pub mod guard;
pub mod matrix;
mod meta;
pub mod objects;
pub mod outliers;
pub mod reference;
pub mod scaling;
pub mod shapes;
pub mod study;
pub mod targets;
pub mod timeline;
pub mod train;

mod compare;
mod document;
mod figures;
#[cfg(test)]
mod fixtures;
mod groups;
mod net;
mod run;

pub use compare::{compare, recommend, Side};
pub use document::{interval_cell, Cell, Chart, Finding, Heat, Report, Table};
pub use grouped::grouped;
pub(crate) use groups::scaled;
pub use groups::{survey, sweep, sweeps_by_system, BRIEF_PHASE_SECS, CACHED, UNSTABLE_CV};
pub use net::{against_ceiling, net};
pub use run::{labelled, list, run, IMPORTED_NOTE};
// Shared with the other files here: a run's figures (shapes, study) and a phase's notes (meta).
use figures::{mean_of, random};
use run::phase_notes;
