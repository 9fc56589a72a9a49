//! Typed workloads: what to do, checked before anything touches the storage.
//!
//! A [`Workload`] is the whole description of a run's I/O. [`Workload::validate`] refuses
//! combinations that cannot be run with one line saying what, why and what to do.

mod data;
#[cfg(test)]
mod fixtures;
mod hints;
mod key;
pub mod meta;
mod mix;
mod object_sizes;
mod op;
mod workload;

pub use data::{Access, Data, EngineName, Layout, Pattern, MAX_IODEPTH, VERIFY_HEADER};
pub use hints::{Hint, Setting, SpecError};
pub use key::NOT_MEASURED;
pub use meta::{Before, Meta, Tree};
pub use mix::Mix;
pub use object_sizes::ObjectSizes;
pub use op::{variant_name, Op};
pub use workload::{event_arg, Event, Shape, Workload, MAX_EVENT_SECS};
