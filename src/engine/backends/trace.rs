//! What a test engine was asked to do: when the environment variable `IOSURVEY_TRACE` names a
//! file, the null and delay engines append one line per transfer, `TASK OP OFFSET LENGTH`, at
//! the end of each phase (one append per task and phase), so tests can check layouts and
//! orders exactly without storage.

use crate::spec::Op;
use std::io::Write;

/// The most transfers a task records per phase: the trace is for tests, and memory stays
/// bounded even if it is left on.
const MAX_RECORDS: usize = 1 << 20;

/// One task's record of a phase.
pub struct Trace {
    path: Option<std::path::PathBuf>,
    task: String,
    len: usize,
    offsets: Vec<(Op, u64)>,
}

impl Trace {
    /// A trace for transfers of `len` bytes, on only when `IOSURVEY_TRACE` is set.
    pub fn from_env(len: usize) -> Trace {
        // Task threads are named task-RANK by the core.
        let task = std::thread::current().name().and_then(|n| n.strip_prefix("task-")).unwrap_or("?").to_string();
        Trace { path: std::env::var_os("IOSURVEY_TRACE").map(Into::into), task, len, offsets: Vec::new() }
    }

    /// A phase starts.
    pub fn begin(&mut self) {
        self.offsets.clear();
    }

    /// A transfer of `op` at `offset` was issued.
    pub fn record(&mut self, op: Op, offset: u64) {
        if self.path.is_some() && self.offsets.len() < MAX_RECORDS {
            self.offsets.push((op, offset));
        }
    }

    /// The phase ended: appends its lines.
    pub fn flush(&mut self) {
        let Some(path) = &self.path else { return };
        let text: String =
            self.offsets.iter().map(|(op, o)| format!("{} {} {o} {}\n", self.task, op.name(), self.len)).collect();
        if let Ok(mut f) = std::fs::OpenOptions::new().append(true).create(true).open(path) {
            let _ = f.write_all(text.as_bytes());
        }
        self.offsets.clear();
    }
}
