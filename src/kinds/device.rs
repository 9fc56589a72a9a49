//! Block devices: a run's files are regions of the device (file i the (i / n)-th of the run's
//! region size on device i mod n), written in place with the user's consent; nothing of
//! iosurvey's stays to remove, since what was written on it is its data now.

use super::{DataRun, Lead, Refused, Registered, Taking};
use crate::env::Environment;
use crate::spec::{Hint, SpecError};
use crate::target::device::{Consent, Device, DeviceTarget};
use crate::target::site::{Handle, Handles, Member, Opening};
use std::any::Any;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The kind.
pub const KIND: Registered = Registered { name: "device", noun: "a block device", handles: Handles::Files, take, join };

impl Member for Device {
    fn kind(&self) -> &'static str {
        KIND.name
    }

    fn handles(&self) -> Handles {
        Handles::Files
    }

    fn path(&self) -> PathBuf {
        Device::path(self).to_path_buf()
    }

    fn show(&self, _name: &str) -> PathBuf {
        Device::path(self).to_path_buf()
    }

    fn open(&self, _name: &str, start: u64, flags: i32, _how: Opening) -> io::Result<Handle> {
        Ok(Handle::File(self.open_data(flags)?, start))
    }

    /// A region cannot be removed, so it is written over.
    fn remove(&self, _name: &str) -> io::Result<()> {
        Ok(())
    }
}

struct Held(DeviceTarget);

fn take(t: &Taking, out: &mut Vec<Box<dyn Lead>>) -> Result<(), Refused> {
    take_paths(&[PathBuf::from(t.spec)], &Consent::default(), t.store, out)
}

/// Takes the devices at `paths` at once (each given once, the consent naming only them).
pub fn take_paths(
    paths: &[PathBuf],
    consent: &Consent,
    store: &Path,
    out: &mut Vec<Box<dyn Lead>>,
) -> Result<(), Refused> {
    let taken = DeviceTarget::open_all(paths, consent, store)?;
    out.extend(taken.into_iter().map(|d| Box::new(Held(d)) as Box<dyn Lead>));
    Ok(())
}

fn join(share: &[u8]) -> Result<Arc<dyn Member>, Refused> {
    Device::open(&PathBuf::from(OsString::from_vec(share.to_vec()))).map(|d| Arc::new(d) as Arc<dyn Member>).map_err(
        |e| Refused::Open {
            what: format!("cannot take the device on this node: {e}"),
            hint: Hint::say("give a device every node has at the same path"),
        },
    )
}

impl Lead for Held {
    fn kind(&self) -> &'static Registered {
        &KIND
    }

    fn member(&self) -> Arc<dyn Member> {
        self.0.device().clone()
    }

    fn share(&self) -> Vec<u8> {
        self.0.device().path().as_os_str().as_bytes().to_vec()
    }

    fn check_data(&mut self, run: &DataRun) -> Result<(), Refused> {
        let engine = run.engine;
        if engine.caps.writes_need_read || engine.caps.page_cache_always {
            return Err(SpecError::Engine {
                why: format!(
                    "the {} engine maps or buffers whole files; a block device is read and written in place",
                    engine.name
                ),
                fix: "sync, io_uring or libaio".into(),
            }
            .into());
        }
        let regions = run.names.len() as u64;
        self.0.check_run(run.data.direct, run.data.transfer, regions * run.file_size)?;
        match run.writes {
            true => self.0.check_write()?,
            false => self.0.probe_read()?,
        }
        Ok(())
    }

    fn environment(&self, group: &[Box<dyn Lead>]) -> Environment {
        let facts: Vec<_> = group
            .iter()
            .filter_map(|t| t.as_any().downcast_ref::<Held>())
            .map(|d| d.0.device().facts().clone())
            .collect();
        crate::env::for_devices(&facts)
    }

    fn check_write(&mut self) -> Result<(), Refused> {
        Ok(self.0.check_write()?)
    }

    fn clean_up(self: Box<Self>) -> Vec<String> {
        Vec::new()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
