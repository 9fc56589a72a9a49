//! S3 buckets (`--s3 URL/BUCKET[/PREFIX]`): block k of a run's file NAME is the object
//! `PREFIX/iosurvey-TOKEN/NAME/k` (so `--block` is the object size, `--segments` how many each
//! task makes), named in the run's manifest before it is written; clean-up deletes exactly the
//! manifest's keys. A prefix that holds objects iosurvey's naming did not
//! make is refused unless told (`--force`), and nothing outside the prefix is listed,
//! written or deleted. Credentials come from the AWS environment or a profile file on every
//! process, never from what the lead shares nor from the command line.

use super::{DataRun, Lead, Refused, Registered, Taking};
use crate::engine::backends::ObjectLayout;
use crate::env::Environment;
use crate::s3::{empty_run, is_iosurvey_key, Client, Credentials, Location, Manifest, S3Error, HOLDER};
use crate::spec::{Access, Hint, Layout, Op, SpecError};
use crate::target::site::{object_key, Handle, Handles, Member, Object, Opening};
use crate::target::Options;
use std::any::Any;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// The kind.
pub const KIND: Registered = Registered { name: "s3", noun: "an S3 bucket", handles: Handles::Objects, take, join };

/// S3's smallest part of a multipart upload but the last.
const MIN_PART: u64 = 5 << 20;
/// S3's most parts of one upload.
const MAX_PARTS: u64 = 10_000;
/// The largest object the lead puts before a run that starts with a read (it holds one).
const MAX_PREFILL: u64 = 256 << 20;

/// The bucket as every process holds it: its client and the run's prefix.
#[derive(Debug)]
struct Bucket {
    client: Arc<Client>,
    run_prefix: String,
}

impl Member for Bucket {
    fn kind(&self) -> &'static str {
        KIND.name
    }

    fn handles(&self) -> Handles {
        Handles::Objects
    }

    fn path(&self) -> PathBuf {
        PathBuf::from(self.client.location().to_string())
    }

    fn show(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("{}/{}{name}", self.client.location().bucket, self.run_prefix))
    }

    fn open(&self, name: &str, _start: u64, _flags: i32, _how: Opening) -> io::Result<Handle> {
        Ok(Handle::Object(Object { client: self.client.clone(), key: format!("{}{name}", self.run_prefix) }))
    }

    /// Nothing: a PUT replaces an object whole, so a write phase after another writes new
    /// objects without a delete first.
    fn remove(&self, _name: &str) -> io::Result<()> {
        Ok(())
    }
}

/// An S3 error as a refusal: its one line and its hint.
fn refused(e: S3Error) -> Refused {
    Refused::Open { what: e.to_string(), hint: Hint::say(e.hint()) }
}

/// A client of `location` with the credentials of this process's environment.
fn client(location: &Location) -> Result<Arc<Client>, Refused> {
    let (credentials, _) = Credentials::load().map_err(refused)?;
    let options = crate::s3::Options::from_env().map_err(refused)?;
    Client::new(location, credentials, &options).map(Arc::new).map_err(refused)
}

/// A token of this run's naming, unique enough among the runs of one prefix.
fn token() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    crate::engine::offsets::mix(nanos, u64::from(std::process::id()))
}

fn take(t: &Taking, out: &mut Vec<Box<dyn Lead>>) -> Result<(), Refused> {
    let location = Location::parse(t.spec).map_err(refused)?;
    let client = client(&location)?;
    let listed = client.list(&location.prefix).map_err(refused)?;
    // Someone else's data under the prefix is not written beside unless the user says so.
    let foreign: Vec<_> = listed.iter().filter(|o| !is_iosurvey_key(&location, &o.key)).collect();
    if let (Some(first), false) = (foreign.first(), t.options.force) {
        return Err(Refused::Open {
            what: format!(
                "{location} holds {} objects iosurvey did not make (first: {})",
                foreign.len(),
                crate::escape::visible(&first.key)
            ),
            hint: Hint::say("give an empty prefix (URL/BUCKET/PREFIX), or add --force to write beside them (iosurvey still removes only its own)"),
        });
    }
    let notes = reclaim_dead_runs(&client, &location, &listed);
    let mut manifest = Manifest::new(&location, token());
    let holder = manifest.name(HOLDER).map_err(refused)?;
    let bucket = Arc::new(Bucket { client: client.clone(), run_prefix: manifest.prefix().to_string() });
    // In the janitor's care before anything is made, so that a lead killed from here on
    // still has its objects and uploads removed.
    crate::janitor::hold_bucket(held_bucket(&location, manifest.prefix()));
    // Taken before the holder is put: should the put fail, clean-up still deletes its key.
    out.push(Box::new(Held { bucket, location, manifest, options: t.options, notes }));
    client.put(&holder, format!("{} {}\n", crate::env::hostname(), std::process::id()).as_bytes()).map_err(refused)?;
    Ok(())
}

/// The janitor's duty on a bucket, done by the next run: the objects of runs of this host
/// whose process is gone (killed outright, its clean-up never ran) are deleted, each run's
/// prefix whole, as their holder object names them. Runs of other hosts, and runs whose
/// holder cannot be read, are left alone.
fn reclaim_dead_runs(client: &Client, location: &Location, listed: &[crate::s3::Listed]) -> Vec<String> {
    let host = crate::env::hostname();
    let mut notes = Vec::new();
    let holders = listed.iter().filter(|o| is_iosurvey_key(location, &o.key) && o.key.ends_with(&format!("/{HOLDER}")));
    for holder in holders {
        let mut body = Vec::new();
        if client.get(&holder.key, &mut body).is_err() {
            continue;
        }
        let text = String::from_utf8_lossy(&body);
        let mut words = text.split_whitespace();
        let (Some(h), Some(pid)) = (words.next(), words.next().and_then(|p| p.parse::<u32>().ok())) else { continue };
        if h != host || std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let run_prefix = &holder.key[..holder.key.len() - HOLDER.len()];
        let swept = empty_run(client, run_prefix);
        notes.push(format!(
            "{} left under {}/{} by a run (pid {pid}) killed before its clean-up",
            swept.said(),
            location.bucket,
            crate::escape::visible(run_prefix)
        ));
    }
    notes
}

/// A run's prefix as the janitor holds it.
fn held_bucket(location: &Location, run_prefix: &str) -> crate::janitor::HeldBucket {
    crate::janitor::HeldBucket { location: location.to_string(), prefix: run_prefix.to_string() }
}

fn join(share: &[u8]) -> Result<Arc<dyn Member>, Refused> {
    let text = String::from_utf8_lossy(share);
    let (location, run_prefix) = text.split_once('\n').unwrap_or((&text, ""));
    let location = Location::parse(location).map_err(refused)?;
    let client = client(&location)?;
    Ok(Arc::new(Bucket { client, run_prefix: run_prefix.to_string() }))
}

struct Held {
    bucket: Arc<Bucket>,
    location: Location,
    manifest: Manifest,
    options: Options,
    notes: Vec<String>,
}

impl Lead for Held {
    fn kind(&self) -> &'static Registered {
        &KIND
    }

    fn member(&self) -> Arc<dyn Member> {
        self.bucket.clone()
    }

    fn share(&self) -> Vec<u8> {
        format!("{}\n{}", self.location, self.bucket.run_prefix).into_bytes()
    }

    fn check_data(&mut self, run: &DataRun) -> Result<(), Refused> {
        let invalid = |what: String, hint: &str| Refused::Spec(SpecError::Invalid { what, hint: Hint::say(hint) });
        let (block, transfer) = (run.data.block, run.data.transfer);
        // Each block is an object of one writer: interleaved transfers of several tasks in one
        // block would be parts of one upload from several.
        // Several writers of one object would each upload parts of one multipart upload, whose
        // id they would have to share and whose completion one of them would have to wait
        // for: S3 has no shared write, so it is not measured as one.
        if run.writes && run.data.access == Access::Shared && run.data.layout == Layout::Strided && transfer < block {
            return Err(invalid(
                "an S3 object is written whole by one writer, and --layout strided interleaves the tasks' transfers in each block".into(),
                "leave --layout out (segmented: each task's block is an object of its own), give --transfer equal to --block, or --op read for N tasks reading each object (the lead puts them first)",
            ));
        }
        if run.writes && block > transfer && (transfer < MIN_PART || block.div_ceil(transfer) > MAX_PARTS) {
            return Err(invalid(
                format!(
                    "an object of {} (a block) is uploaded in parts of one transfer ({}), and S3 takes parts of 5 MiB to 5 GiB, at most 10000 of them",
                    crate::units::format_size(block),
                    crate::units::format_size(transfer)
                ),
                "give --transfer equal to --block (one PUT per object), or --transfer 5m or more",
            ));
        }
        let objects = run.file_size / block.max(1);
        // A run whose first phase reads (or rewrites) finds no object under its own prefix:
        // the lead puts each first, whole, untimed. So N tasks can read one object (--access
        // shared, each a ranged GET of its part) that no N writers could have made.
        let prefill = run.w.ops.first().is_some_and(|o| *o != Op::Write);
        if prefill {
            if run.w.verify {
                return Err(invalid(
                    "--verify checks data the run's own write phase stamped, and on a bucket a run that starts with a read has none (its objects are put by the lead, unstamped)".into(),
                    "give --op write,read to verify, or leave --verify out",
                ));
            }
            if block > MAX_PREFILL {
                return Err(invalid(
                    format!(
                        "a run that starts with a read has its objects put by the lead first, and an object of {} is more than it holds at once ({})",
                        crate::units::format_size(block),
                        crate::units::format_size(MAX_PREFILL)
                    ),
                    "give --block 256m or less, or --op write,read",
                ));
            }
        }
        if run.writes || prefill {
            for name in run.names {
                for k in 0..objects {
                    self.manifest.name(&object_key(name, k)).map_err(refused)?;
                }
            }
        }
        if prefill {
            let mut body = vec![0u8; block as usize];
            crate::engine::data::fill_random(&mut body, run.w.seed);
            let sizes = &run.data.object_size;
            for name in run.names {
                let layout = ObjectLayout { block, sizes, seed: run.w.seed, file: name };
                for k in 0..objects {
                    let key = object_key(&format!("{}{name}", self.bucket.run_prefix), k);
                    self.bucket.client.put(&key, &body[..layout.size_of(k) as usize]).map_err(refused)?;
                }
            }
        }
        Ok(())
    }

    fn environment(&self, _group: &[Box<dyn Lead>]) -> Environment {
        crate::env::for_bucket(self.location.to_string(), self.location.authority())
    }

    fn keeps(&self) -> bool {
        self.options.keep
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn clean_up(mut self: Box<Self>) -> Vec<String> {
        let held = held_bucket(&self.location, &self.bucket.run_prefix);
        let problems = self.empty();
        // Only now: a lead killed while cleaning up still has its objects removed.
        crate::janitor::release_bucket(&held);
        problems
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Held {
    /// Removes what the run made (but what it keeps): what could not be.
    fn empty(&mut self) -> Vec<String> {
        if self.options.keep {
            // The objects stay, and with no holder no later run takes them for a dead run's.
            let holder = format!("{}{HOLDER}", self.bucket.run_prefix);
            return self.bucket.client.delete(&holder).err().map(|e| e.to_string()).into_iter().collect();
        }
        let done = self.manifest.clean_up(&self.bucket.client);
        let mut problems: Vec<String> = done.failed.iter().map(|e| e.to_string()).collect();
        problems.extend(done.strangers.iter().map(|o| {
            format!(
                "{}/{} is under this run's prefix and not of its manifest: left in place",
                self.location.bucket,
                crate::escape::visible(&o.key)
            )
        }));
        problems
    }
}
