//! Workloads the spec tests share.

use super::{Data, Workload};

/// `w`, a data workload, with its data shape changed by `f`.
pub(super) fn set(mut w: Workload, f: impl FnOnce(&mut Data)) -> Workload {
    f(w.data_mut());
    w
}

pub(super) fn ok() -> Workload {
    set(Workload { tasks: 2, ..Workload::default() }, |d| {
        d.transfer = 4096;
        d.block = 8192;
    })
}
