//! The target kinds, listed as the engines are: a kind is one file here and one line in
//! [`KINDS`]. Each has a lead side ([`Lead`]: the checks before a run, the claim of what it
//! will write, its manifest and clean-up, its janitor duty) and a member side
//! ([`Member`]: open file i of a run for an op, giving a descriptor or an object handle).
//! The session takes targets through it and shares them with every process; the runner asks
//! it for the checks before each run; the engine only ever sees members.

pub mod device;
pub mod dir;
pub mod s3;

use crate::engine::{backends, EngineError};
use crate::env::Environment;
use crate::spec::{Data, Hint, SpecError, Workload};
use crate::target::site::{Handles, Member};
use crate::target::{Options, Target, TargetError};
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// A kind in the registry.
pub struct Registered {
    /// Its name.
    pub name: &'static str,
    /// What it is, as a refusal says ("a block device").
    pub noun: &'static str,
    /// The handles its members give.
    pub handles: Handles,
    /// Takes the targets `spec` names, on the lead, pushing each as soon as it is taken so
    /// that a refusal of a later one still cleans up the earlier ones.
    pub take: Take,
    /// Opens, on another process, the member whose share the lead sent.
    pub join: Join,
}

/// Takes the targets the user named, on the lead, into the list given.
pub type Take = fn(&Taking, &mut Vec<Box<dyn Lead>>) -> Result<(), Refused>;

/// Opens a member on another process from what the lead shares of it.
pub type Join = fn(&[u8]) -> Result<Arc<dyn Member>, Refused>;

/// Every kind.
pub const KINDS: &[&Registered] = &[&dir::KIND, &device::KIND, &s3::KIND];

/// The kind named `name`.
pub fn entry(name: &str) -> &'static Registered {
    KINDS.iter().find(|k| k.name == name).copied().unwrap_or(&dir::KIND)
}

/// What a kind is taken with: the user's words for it and how.
pub struct Taking<'a> {
    /// The target as the user named it (`URL/BUCKET/PREFIX`, a path).
    pub spec: &'a str,
    /// Force, keep.
    pub options: Options,
    /// The result store's file, which a target must not stand on.
    pub store: &'a Path,
    /// Workloads checked against what the target holds before anything is made.
    pub check: &'a [Workload],
}

/// Why a kind refused, before anything ran.
#[derive(Debug)]
pub enum Refused {
    /// The target.
    Target(TargetError),
    /// The workload, on this kind.
    Spec(SpecError),
    /// The engine, on this kind.
    Engine(EngineError),
    /// A target that could not be reached (on a process other than the lead, too).
    Open {
        /// What, and why.
        what: String,
        /// What to do.
        hint: Hint,
    },
}

impl From<TargetError> for Refused {
    fn from(e: TargetError) -> Self {
        Refused::Target(e)
    }
}

impl From<SpecError> for Refused {
    fn from(e: SpecError) -> Self {
        Refused::Spec(e)
    }
}

/// A data run as the lead's checks see it on one target.
pub struct DataRun<'a> {
    /// The workload.
    pub w: &'a Workload,
    /// Its data shape.
    pub data: &'a Data,
    /// The files that go to this target.
    pub names: &'a [String],
    /// Whether a phase writes.
    pub writes: bool,
    /// Whether free space is checked.
    pub space_check: bool,
    /// Bytes of each file.
    pub file_size: u64,
    /// The engine.
    pub engine: &'static backends::Registered,
}

/// One target as the lead holds it for a session.
pub trait Lead: Send {
    /// Its kind.
    fn kind(&self) -> &'static Registered;
    /// Its member on the lead.
    fn member(&self) -> Arc<dyn Member>;
    /// What the other processes open their member by ([`Registered::join`]).
    fn share(&self) -> Vec<u8>;
    /// The checks before a data run, then the claim of the files it writes.
    fn check_data(&mut self, run: &DataRun) -> Result<(), Refused>;
    /// The facts of where a run on `group` (this target first) ran.
    fn environment(&self, group: &[Box<dyn Lead>]) -> Environment;
    /// Whether it keeps what runs wrote (`--keep`).
    fn keeps(&self) -> bool {
        false
    }
    /// What its checks found worth saying, once.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Before a study that writes every target: its own consent and checks.
    fn check_write(&mut self) -> Result<(), Refused> {
        Ok(())
    }
    /// The directory, when it is one (metadata runs, a study's hooks).
    fn as_dir(&mut self) -> Option<&mut Target> {
        None
    }
    /// Removes what its runs made and leaves its janitor's care; returns what could not be.
    fn clean_up(self: Box<Self>) -> Vec<String>;
    /// For a kind's own look at its group.
    fn as_any(&self) -> &dyn Any;
}
