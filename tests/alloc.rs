//! A metadata phase allocates nothing per item: the whole run's allocations do not grow with
//! its items (counted by a global allocator around the engine, one task, no threads but its
//! own).

use iosurvey::engine::{self, DataFiles, Progress, RunInputs};
use iosurvey::spec::meta::{Meta, ALL_PHASES};
use iosurvey::spec::Workload;
use iosurvey::target::dir::Dir;
use iosurvey::team::local::LocalTeam;
use std::alloc::{GlobalAlloc, Layout, System};
use std::os::unix::fs::DirBuilderExt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        System.realloc(ptr, layout, size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Allocations of one metadata run of `items` items (every phase, files written and read).
fn allocations(items: u64) -> u64 {
    let tmp = tempfile::tempdir().unwrap();
    // As the lead makes it: private to the run's user (the tasks check its mode).
    std::fs::DirBuilder::new().mode(0o700).create(tmp.path().join("iosurvey.meta")).unwrap();
    let meta = Meta { items, write_bytes: 100, read_bytes: 100, ..Meta::default() };
    let w = Workload { ops: ALL_PHASES.to_vec(), verify: true, interval_secs: 60.0, ..Workload::from(meta) };
    let files = DataFiles {
        site: iosurvey::target::site::Site::Dirs(vec![Arc::new(Dir::open(tmp.path()).unwrap())]),
        names: Vec::new(),
        region: 0,
    };
    let inputs = RunInputs {
        w: &w,
        files: &files,
        token: 7,
        drop_caches: false,
        progress: Progress::new(1),
        cancel: Default::default(),
        path_start: engine::PathStart::Slash,
    };
    let before = ALLOCATIONS.load(Relaxed);
    let exec = engine::execute(&LocalTeam, 1, inputs).unwrap();
    let used = ALLOCATIONS.load(Relaxed) - before;
    assert!(exec.failure.is_none(), "{:?}", exec.failure);
    assert_eq!(exec.phases[4].tasks[0].ops, items, "file-create made every item");
    used
}

#[test]
fn a_metadata_phase_allocates_nothing_per_item() {
    allocations(100); // warm: one-time allocations of the process
    let (small, large) = (allocations(1000), allocations(20000));
    // 19000 more items in each of 7 item phases: not one more allocation per item.
    assert!(large < small + 200, "{small} allocations for 1000 items, {large} for 20000");
}
