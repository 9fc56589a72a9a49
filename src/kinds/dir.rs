//! Directories: files of iosurvey's own naming, opened through the directory's descriptor,
//! named in its manifest before they exist, removed at clean-up, and in the janitor's care
//! from the moment the lead takes the directory until its clean-up is done.

use super::{DataRun, Lead, Refused, Registered, Taking};
use crate::env::Environment;
use crate::spec::{Hint, Op};
use crate::target::dir::Dir;
use crate::target::site::{Handle, Handles, Member, Opening};
use crate::target::{Options, Target, TargetError};
use std::any::Any;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::Arc;

/// The kind.
pub const KIND: Registered = Registered { name: "dir", noun: "a directory", handles: Handles::Files, take, join };

impl Member for Dir {
    fn kind(&self) -> &'static str {
        KIND.name
    }

    fn handles(&self) -> Handles {
        Handles::Files
    }

    fn path(&self) -> PathBuf {
        Dir::path(self).to_path_buf()
    }

    fn show(&self, name: &str) -> PathBuf {
        Dir::show(self, name)
    }

    fn open(&self, name: &str, _start: u64, flags: i32, how: Opening) -> io::Result<Handle> {
        let file = match how {
            Opening::Create => self.create_or_open_own(name, flags)?,
            Opening::Existing => self.open_own(name, flags)?,
        };
        Ok(Handle::File(file, 0))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        self.unlink(name)
    }

    fn dir(&self) -> Option<&Dir> {
        Some(self)
    }
}

/// A directory the lead took, in the janitor's care until its clean-up.
pub struct Held(Target);

impl Held {
    /// `target`, put in the janitor's care at once: whatever happens next, the janitor removes
    /// what the session made.
    pub fn hold(target: Target) -> Box<dyn Lead> {
        crate::janitor::hold(&target);
        Box::new(Held(target))
    }
}

fn take(t: &Taking, out: &mut Vec<Box<dyn Lead>>) -> Result<(), Refused> {
    take_paths(&[PathBuf::from(t.spec)], t.options, out)
}

/// Takes each of `paths` in turn.
pub fn take_paths(paths: &[PathBuf], options: Options, out: &mut Vec<Box<dyn Lead>>) -> Result<(), Refused> {
    for path in paths {
        out.push(Held::hold(Target::open(path, options)?));
    }
    Ok(())
}

fn join(share: &[u8]) -> Result<Arc<dyn Member>, Refused> {
    let path = PathBuf::from(OsString::from_vec(share.to_vec()));
    match Dir::open(&path) {
        Ok(dir) => Ok(Arc::new(dir)),
        Err(e) => Err(Refused::Open {
            what: format!("cannot open the target {}: {e}", path.display()),
            hint: Hint::say("mount it on every node"),
        }),
    }
}

impl Lead for Held {
    fn kind(&self) -> &'static Registered {
        &KIND
    }

    fn member(&self) -> Arc<dyn Member> {
        self.0.dir().clone()
    }

    fn share(&self) -> Vec<u8> {
        self.0.dir().path().as_os_str().as_bytes().to_vec()
    }

    /// Writable, holding what a read needs, aligned for O_DIRECT, room for the files; then
    /// the files it will hold are claimed.
    fn check_data(&mut self, run: &DataRun) -> Result<(), Refused> {
        let target = &mut self.0;
        if run.writes && !target.writable() {
            return Err(TargetError::ReadOnly(target.dir().path().into()).into());
        }
        // A read, or a rewrite, needs the files a write made before.
        if run.w.ops.first().is_some_and(|o| *o != Op::Write) {
            target.check_readable(run.names)?;
        }
        if run.data.direct {
            let align = target.direct_alignment(run.names)?;
            if run.data.transfer % align != 0 {
                let dir = target.dir().path().into();
                return Err(TargetError::DirectMisaligned { dir, align, transfer: run.data.transfer }.into());
            }
        }
        if run.writes {
            if run.space_check {
                target.check_space(run.names, run.file_size)?;
            }
            target.claim(run.names)?;
        }
        Ok(())
    }

    fn environment(&self, group: &[Box<dyn Lead>]) -> Environment {
        let mut e = crate::env::collect(self.0.dir().path());
        if group.len() > 1 {
            e.on_several(group.iter().map(|t| t.member().path().display().to_string()).collect());
        }
        e
    }

    fn keeps(&self) -> bool {
        self.0.keeps()
    }

    fn take_notes(&mut self) -> Vec<String> {
        self.0.take_notes()
    }

    fn as_dir(&mut self) -> Option<&mut Target> {
        Some(&mut self.0)
    }

    fn clean_up(self: Box<Self>) -> Vec<String> {
        let key = crate::janitor::key(&self.0);
        let problems = self.0.cleanup().problems;
        // Only now: a lead killed while removing still has its files removed by the janitor.
        crate::janitor::release(key);
        problems
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
