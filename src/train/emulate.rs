//! The training emulation: the data set written in its format, then per epoch each rank
//! (emulated accelerator, a thread) takes its contiguous block of sample indices, shuffled
//! with the seed and the epoch, and its reader threads load batches ahead of it (at most
//! `prefetch` batches per reader thread); the rank waits for each batch, sleeps the compute
//! time, and meets every other rank at a barrier.

use super::figures::{RankEpoch, Step};
use super::format::{self, Format};
use super::{Settings, TrainError, WHOLE_CALL};
use crate::cancel::Cancel;
use crate::engine::offsets::mix;
use crate::measure::TaskTiming;
use crate::sys::mem::{AlignedBuf, ALIGN};
use crate::target::dir::Dir;
use crate::target::Target;
use crate::team::Member;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A cap on the reads' aggregate rate, shared by every reader: storage slower than the one
/// under test, for rehearsals and tests (a planted limit).
#[derive(Debug)]
pub struct Throttle {
    bytes_per_sec: f64,
    next: Mutex<Option<Instant>>,
}

impl Throttle {
    /// Reads at most `bytes_per_sec` in all.
    pub fn new(bytes_per_sec: u64) -> Throttle {
        Throttle { bytes_per_sec: bytes_per_sec.max(1) as f64, next: Mutex::new(None) }
    }

    /// Waits for the slot in which `bytes` may be read.
    fn take(&self, bytes: usize) {
        let until = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let start = next.filter(|t| *t > now).unwrap_or(now);
            let end = start + Duration::from_secs_f64(bytes as f64 / self.bytes_per_sec);
            *next = Some(end);
            end
        };
        let now = Instant::now();
        if until > now {
            std::thread::sleep(until - now);
        }
    }
}

/// What a training run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    /// `epochs[e][r]`: rank r's steps in epoch e.
    pub epochs: Vec<Vec<RankEpoch>>,
    /// `timings[e][r]`: rank r's reads in epoch e as a task's timing (ns from the run's start).
    pub timings: Vec<Vec<TaskTiming>>,
    /// Samples read.
    pub samples: u64,
    /// Bytes read.
    pub bytes: u64,
    /// CPU time of the whole process over the epochs, ns (readers; the ranks sleep).
    pub cpu_ns: u64,
    /// Wall time of the epochs, ns.
    pub wall_ns: u64,
}

/// What generating the data set took.
#[derive(Debug, Clone, Copy)]
pub struct Generated {
    /// Bytes written.
    pub bytes: u64,
    /// Seconds.
    pub secs: f64,
}

fn io_error(what: &str, t: &Target, name: &str, e: std::io::Error) -> TrainError {
    TrainError::Io { what: format!("{what} {}", t.dir().show(name).display()), source: e }
}

/// Writes the data set into the target (its files named in the target's manifest first), on
/// `threads` threads; fsynced, so that what is read later comes from the storage.
pub fn generate(s: &Settings, target: &mut Target, threads: usize, cancel: &Cancel) -> Result<Generated, TrainError> {
    let names = s.names();
    if target.writable() {
        target.check_space(&names, 0).ok();
    }
    let need = s.dataset_bytes();
    let free = target.dir().free_bytes().unwrap_or(u64::MAX);
    if need > free {
        return Err(TrainError::refused(
            format!(
                "the data set needs {} but {} has {} free",
                crate::units::format_size(need),
                target.dir().path().display(),
                crate::units::format_size(free)
            ),
            "give --scale 1/N for a rehearsal, or --files N, or free space",
        ));
    }
    target.claim(&names)?;
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let written = AtomicU64::new(0);
    let failure: Mutex<Option<TrainError>> = Mutex::new(None);
    let t: &Target = target;
    std::thread::scope(|sc| {
        for _ in 0..threads.max(1) {
            sc.spawn(|| loop {
                let f = next.fetch_add(1, Relaxed);
                if f >= s.files || cancel.is_cancelled() || failure.lock().map_or(true, |g| g.is_some()) {
                    return;
                }
                let name = &names[f as usize];
                match write_file(s, t, f, name) {
                    Ok(n) => drop(written.fetch_add(n, Relaxed)),
                    Err(e) => {
                        if let Ok(mut g) = failure.lock() {
                            g.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if cancel.is_cancelled() {
        return Err(TrainError::Interrupted);
    }
    Ok(Generated { bytes: written.into_inner(), secs: started.elapsed().as_secs_f64() })
}

fn write_file(s: &Settings, t: &Target, f: u64, name: &str) -> Result<u64, TrainError> {
    let file =
        t.dir().create_or_open_own(name, crate::sys::fs::O_WRONLY).map_err(|e| io_error("create", t, name, e))?;
    let sizes = s.file_samples(f);
    let seed = mix(s.seed, f);
    let n = match s.format {
        Format::Npz => format::write_npz(&file, sizes.len() as u64, sizes[0], seed),
        Format::Tfrecord => format::write_tfrecord(&file, &sizes, seed),
        Format::Jpeg => format::write_jpeg(&file, sizes[0], seed),
    }
    .map_err(|e| io_error("write", t, name, e))?;
    file.set_len(n).map_err(|e| io_error("truncate", t, name, e))?;
    file.sync_all().map_err(|e| io_error("fsync", t, name, e))?;
    Ok(n)
}

/// Checks that the data set a run reads without generating is there, iosurvey's own, and of
/// the sizes these settings give (else it was generated with other settings).
pub fn check_existing(s: &Settings, target: &Target) -> Result<(), TrainError> {
    let names = s.names();
    target.check_readable(&names).map_err(|e| {
        TrainError::refused(format!("no data set for these settings: {e}"), "add --generate (with --keep to reuse it)")
    })?;
    for (f, name) in names.iter().enumerate() {
        let want = format::file_size(s.format, &s.file_samples(f as u64));
        let have = target.dir().stat(name).ok().flatten().map_or(0, |st| st.size);
        if have != want {
            return Err(TrainError::refused(
                format!("{} holds {have} bytes, not the {want} these settings give: the data set was generated with other settings", target.dir().show(name).display()),
                "give the settings it was generated with, or --generate",
            ));
        }
    }
    Ok(())
}

/// Where each sample is: its file and its byte range there.
struct Layout {
    /// For tfrecord: each file's record offsets.
    offsets: Vec<Vec<u64>>,
}

impl Layout {
    fn new(s: &Settings) -> Layout {
        let offsets = match s.format {
            Format::Tfrecord => (0..s.files)
                .map(|f| {
                    let mut at = 0;
                    s.file_samples(f)
                        .into_iter()
                        .map(|n| {
                            let here = at;
                            at += n + format::FRAME;
                            here
                        })
                        .collect()
                })
                .collect(),
            _ => Vec::new(),
        };
        Layout { offsets }
    }
}

/// One rank's epoch as its readers and its step loop share it.
struct Queue {
    /// The next batch a reader takes.
    next: usize,
    /// Batches the rank has taken.
    consumed: usize,
    /// Loaded batches: bytes and read calls, or the error.
    loaded: HashMap<usize, Result<(u64, u64), String>>,
    /// Stop loading.
    stop: bool,
}

/// The samples rank `r` reads in `epoch`: its contiguous block, shuffled with the seed and the
/// epoch, as many as its steps take.
pub fn rank_samples(s: &Settings, r: usize, epoch: u32) -> Vec<u64> {
    let per_rank = s.files * s.samples_per_file / s.accelerators as u64;
    let mut block: Vec<u64> = (r as u64 * per_rank..(r as u64 + 1) * per_rank).collect();
    let mut state = mix(s.seed, epoch as u64 + 1);
    for i in (1..block.len()).rev() {
        state = mix(state, i as u64);
        block.swap(i, (state % (i as u64 + 1)) as usize);
    }
    block.truncate((s.steps * s.batch) as usize);
    block
}

/// A reader thread's buffer and the file it read last (a whole-file format reads a file once
/// for consecutive samples in it).
struct Reader {
    buf: AlignedBuf,
    last_file: Option<u64>,
}

impl Reader {
    fn new(s: &Settings) -> Result<Reader, TrainError> {
        let len = match s.format {
            Format::Tfrecord => s.transfer,
            _ => WHOLE_CALL.min(format::file_size(s.format, &vec![s.largest_sample(); s.samples_per_file as usize])),
        };
        let len = (len as usize).div_ceil(ALIGN) * ALIGN;
        let buf = AlignedBuf::try_new(len).ok_or_else(|| {
            TrainError::refused(format!("cannot allocate a read buffer of {len} bytes"), "give a smaller --transfer")
        })?;
        Ok(Reader { buf, last_file: None })
    }

    /// Reads one sample; gives the bytes and the read calls.
    fn read(
        &mut self,
        s: &Settings,
        (dir, layout): (&Dir, &Layout),
        id: u64,
        throttle: Option<&Throttle>,
    ) -> std::io::Result<(u64, u64)> {
        let (f, k) = (id / s.samples_per_file, id % s.samples_per_file);
        let (start, len) = match s.format {
            Format::Tfrecord => (layout.offsets[f as usize][k as usize], s.sample_size(f, k) + format::FRAME),
            _ if self.last_file == Some(f) => return Ok((0, 0)),
            _ => (0, format::file_size(s.format, &s.file_samples(f))),
        };
        self.last_file = Some(f);
        let name = format!("train-{f:07}.{}", s.format.extension());
        let flags = crate::sys::fs::O_RDONLY | if s.direct { crate::sys::fs::O_DIRECT } else { 0 };
        let file = dir.open_own(&name, flags)?;
        // O_DIRECT reads whole aligned blocks around the range.
        let (mut at, end) = match s.direct {
            true => (start / ALIGN as u64 * ALIGN as u64, (start + len).div_ceil(ALIGN as u64) * ALIGN as u64),
            false => (start, start + len),
        };
        let (mut bytes, mut calls) = (0u64, 0u64);
        let buf = self.buf.as_mut_slice();
        while at < end {
            let n = ((end - at) as usize).min(buf.len());
            if let Some(th) = throttle {
                th.take(n);
            }
            let got = std::os::unix::fs::FileExt::read_at(&file, &mut buf[..n], at)?;
            calls += 1;
            if got == 0 {
                break;
            }
            bytes += got as u64;
            at += got as u64;
        }
        Ok((bytes, calls))
    }
}

/// What one rank did, gathered on the lead.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RankPart {
    /// Its epochs: steps and reads.
    epochs: Vec<(RankEpoch, TaskTiming)>,
    /// The first read that failed, said.
    error: Option<String>,
    /// A stop was asked for in its process.
    interrupted: bool,
    /// Its process's CPU time over the epochs, ns (given by one rank of each process).
    cpu_ns: u64,
}

/// Runs the epochs over the data set in `dir`: each of `members` (this process's share of the
/// team, one per rank, the team's size `s.accelerators`) reads the block of samples its team
/// rank owns, and every rank of every process meets the others after each step. The lead
/// process (the one holding rank 0) gets the outcome, or the first failure; the others get
/// `None` (the lead speaks for the team).
pub fn train<M: Member>(
    s: &Settings,
    dir: &Dir,
    members: Vec<M>,
    throttle: Option<&Throttle>,
    cancel: &Cancel,
) -> Result<Option<Outcome>, TrainError> {
    let layout = Layout::new(s);
    let origin = Instant::now();
    let cpu0 = crate::sys::proc::process_cpu_ns();
    let gathered: Vec<Option<Vec<RankPart>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = members
            .into_iter()
            .map(|member| {
                let layout = &layout;
                sc.spawn(move || {
                    let rank = Rank { s, dir, layout, throttle, cancel, origin };
                    let mut part = RankPart::default();
                    for e in 0..s.epochs {
                        member.barrier();
                        match rank.epoch(&member, e) {
                            Ok(done) => part.epochs.push(done),
                            Err(why) => {
                                part.error = why;
                                break;
                            }
                        }
                    }
                    part.interrupted = cancel.is_cancelled();
                    if member.local_index() == 0 {
                        part.cpu_ns = crate::sys::proc::process_cpu_ns().saturating_sub(cpu0);
                    }
                    member.gather(part)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    let wall_ns = origin.elapsed().as_nanos() as u64;
    let Some(parts) = gathered.into_iter().flatten().next() else { return Ok(None) };
    if let Some(e) = parts.iter().find_map(|p| p.error.clone()) {
        return Err(TrainError::Io { what: "read".into(), source: std::io::Error::other(e) });
    }
    if cancel.is_cancelled() || parts.iter().any(|p| p.interrupted) {
        return Err(TrainError::Interrupted);
    }
    let done = parts.iter().map(|p| p.epochs.len()).min().unwrap_or(0);
    let mut epochs = vec![Vec::new(); done];
    let mut timings = vec![Vec::new(); done];
    for part in &parts {
        for (e, (steps, timing)) in part.epochs.iter().take(done).enumerate() {
            epochs[e].push(steps.clone());
            timings[e].push(*timing);
        }
    }
    let bytes = timings.iter().flatten().map(|t: &TaskTiming| t.bytes).sum();
    let samples = done as u64 * parts.len() as u64 * s.steps * s.batch;
    let cpu_ns = parts.iter().map(|p| p.cpu_ns).sum();
    Ok(Some(Outcome { epochs, timings, samples, bytes, cpu_ns, wall_ns }))
}

/// What a rank's thread works with.
struct Rank<'a> {
    s: &'a Settings,
    dir: &'a Dir,
    layout: &'a Layout,
    throttle: Option<&'a Throttle>,
    cancel: &'a Cancel,
    origin: Instant,
}

impl Rank<'_> {
    /// This rank's epoch `e`; when the team stops, its own read error, if it had one.
    fn epoch<M: Member>(&self, member: &M, e: u32) -> Result<(RankEpoch, TaskTiming), Option<String>> {
        let s = self.s;
        let r = member.rank();
        let mut failed: Option<String> = None;
        let samples = rank_samples(s, r, e);
        let queue = Mutex::new(Queue { next: 0, consumed: 0, loaded: HashMap::new(), stop: false });
        let ready = Condvar::new();
        let depth = s.prefetch * s.reader_threads;
        let start = Instant::now();
        let mut steps = Vec::with_capacity(s.steps as usize);
        let (mut bytes, mut calls) = (0u64, 0u64);
        let mut stopped = false;
        std::thread::scope(|sc| {
            for _ in 0..s.reader_threads {
                sc.spawn(|| self.load(&samples, &queue, &ready, depth));
            }
            for b in 0..s.steps as usize {
                let t0 = Instant::now();
                let got = {
                    let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                    loop {
                        if let Some(got) = q.loaded.remove(&b) {
                            q.consumed = b + 1;
                            break got;
                        }
                        q = ready.wait(q).unwrap_or_else(|p| p.into_inner());
                    }
                };
                ready.notify_all();
                let wait_ns = t0.elapsed().as_nanos() as u64;
                match got {
                    Ok((n, c)) => (bytes, calls) = (bytes + n, calls + c),
                    Err(why) => drop(failed.get_or_insert(why)),
                }
                let c0 = Instant::now();
                super::nap(self.compute_time(r, e, b as u64), self.cancel);
                let compute_ns = c0.elapsed().as_nanos() as u64;
                steps.push(Step { wait_ns, compute_ns });
                // Every rank of every process meets the others here, and they stop together
                // when any of them failed or was asked to stop.
                let halt = failed.is_some() || self.cancel.is_cancelled();
                stopped = member.max(halt as u64) == 1;
                if stopped {
                    break;
                }
            }
            queue.lock().unwrap_or_else(|p| p.into_inner()).stop = true;
            ready.notify_all();
        });
        if stopped {
            return Err(failed);
        }
        let wall_ns = start.elapsed().as_nanos() as u64;
        let from = start.duration_since(self.origin).as_nanos() as u64;
        let to = from + wall_ns;
        let timing = TaskTiming {
            task: r as u32,
            node: member.node(),
            bytes,
            ops: calls,
            open_start: from,
            xfer_start: from,
            xfer_end: to,
            sync_end: to,
            close_end: to,
            bytes_at_first_finish: bytes,
        };
        Ok((RankEpoch { wall_ns, steps }, timing))
    }

    /// A reader thread: takes the next batch while fewer than `depth` are loaded ahead of the
    /// rank, reads its samples, hands it over.
    fn load(&self, samples: &[u64], queue: &Mutex<Queue>, ready: &Condvar, depth: usize) {
        let s = self.s;
        // A reader without its buffer fails each batch it takes, with why.
        let (mut reader, why) = match Reader::new(s) {
            Ok(r) => (Some(r), String::new()),
            Err(e) => (None, e.to_string()),
        };
        loop {
            let b = {
                let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if q.stop || q.next >= s.steps as usize {
                        return;
                    }
                    if q.next < q.consumed + depth {
                        break;
                    }
                    q = ready.wait(q).unwrap_or_else(|p| p.into_inner());
                }
                q.next += 1;
                q.next - 1
            };
            let batch = &samples[b * s.batch as usize..(b + 1) * s.batch as usize];
            let mut got = Ok((0u64, 0u64));
            for &id in batch {
                let Some(reader) = reader.as_mut() else {
                    got = Err(why.clone());
                    break;
                };
                match reader.read(s, (self.dir, self.layout), id, self.throttle) {
                    Ok((n, c)) => got = got.map(|(b0, c0)| (b0 + n, c0 + c)),
                    Err(e) => {
                        got = Err(format!("sample {id}: {e}"));
                        break;
                    }
                }
            }
            queue.lock().unwrap_or_else(|p| p.into_inner()).loaded.insert(b, got);
            ready.notify_all();
        }
    }

    /// The compute of rank `r`'s step: the mean, spread normally by the standard deviation
    /// (never below zero), the same for the same seed.
    fn compute_time(&self, r: usize, e: u32, b: u64) -> Duration {
        let s = self.s;
        if s.compute_stdev == 0.0 {
            return Duration::from_secs_f64(s.compute);
        }
        let seed = mix(mix(s.seed, r as u64), mix(e as u64, b));
        let u = |salt: u64| ((mix(seed, salt) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let z = (-2.0 * u(1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u(2)).cos();
        Duration::from_secs_f64((s.compute + z * s.compute_stdev).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rank_reads_its_own_block_shuffled_per_epoch() {
        let over =
            super::super::Overrides { files: Some(40), batch: Some(2), sample_bytes: Some(100), ..Default::default() };
        let s = Settings::resolve(
            (super::super::Model::Unet3d, super::super::Accelerator::H100, 2),
            &over,
            (1 << 30, None),
            (2, 7, false),
        )
        .unwrap();
        let a0 = rank_samples(&s, 0, 0);
        let a1 = rank_samples(&s, 0, 1);
        let b0 = rank_samples(&s, 1, 0);
        assert!(a0.iter().all(|&i| i < 20) && b0.iter().all(|&i| (20..40).contains(&i)));
        assert_ne!(a0, a1, "a new order each epoch");
        let (mut x, mut y) = (a0.clone(), a1);
        x.sort_unstable();
        y.sort_unstable();
        assert_eq!(x, y, "the same block");
        assert_eq!(a0, rank_samples(&s, 0, 0), "the same seed, the same order");
    }
}
