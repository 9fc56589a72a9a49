//! The s3 engine: each block of a task's file (`--block` bytes) is an object of its own,
//! written whole by one PUT when the block is one transfer, else as a multipart upload whose
//! part n is the block's transfer at (n - 1) x the transfer size (so any order of offsets
//! uploads the same object), and read by GETs of a transfer each (ranged when the transfer is
//! less than the object). One request at a time: tasks are the concurrency, as warp's are.
//! With `--object-size` each object holds the size drawn for it (at most the block), put and
//! got whole. The engine keeps its own tally of each kind of request, handed over at the
//! phase's end, so the core's per-transfer path is the same for every engine.

use super::{in_flight, Backend, Capabilities, Completion, Handles, IoBufs, Object, ObjectLayout, Registered, Setup};
use crate::engine::requests::RequestTrace;
use crate::record::execution::Request;
use crate::s3::Part;
use crate::spec::{ObjectSizes, Op};
use crate::target::site::object_key;
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::time::Instant;

/// The registry's entry.
pub const ENTRY: Registered = Registered {
    name: "s3",
    about: "PUT (multipart past one transfer), GET (ranged within an object), HEAD, LIST and DELETE of objects, one request at a time",
    caps: Capabilities::STORAGE,
    probe: |_| Ok(()),
    open,
    param: None,
    refuses: Some(|ops, data| {
        (ops.contains(&Op::Mix) && data.mix.is_empty()).then(|| {
            "a mix phase on a bucket draws its requests from --mix (e.g. --mix get:45,stat:30,put:15,delete:10)".into()
        })
    }),
    takes: Handles::Objects,
};

struct S3 {
    bufs: IoBufs,
    object: Option<Object>,
    /// Bytes of each block: the room of one object.
    block: u64,
    /// How each object's size is drawn, and from what (`ObjectLayout`).
    sizes: ObjectSizes,
    seed: u64,
    file: String,
    /// The multipart uploads under way, by object: upload id and the parts sent.
    uploads: BTreeMap<u64, (String, Vec<Part>)>,
    done: Option<Completion>,
    /// Each kind of request made since the phase's attach.
    tally: RequestTrace,
}

fn open(setup: Setup) -> io::Result<Box<dyn Backend>> {
    Ok(Box::new(S3 {
        bufs: setup.bufs,
        object: None,
        block: 0,
        sizes: ObjectSizes::Block,
        seed: 0,
        file: String::new(),
        uploads: BTreeMap::new(),
        done: None,
        tally: RequestTrace::default(),
    }))
}

fn failed(e: crate::s3::S3Error) -> io::Error {
    io::Error::other(e.to_string())
}

impl S3 {
    /// Bytes object `k` holds.
    fn size_of(&self, k: u64) -> u64 {
        let layout = ObjectLayout { block: self.block, sizes: &self.sizes, seed: self.seed, file: &self.file };
        layout.size_of(k)
    }

    /// Makes the request of one transfer: the object bytes it moved, the kind of request, and
    /// its time to first byte when it read a body.
    fn transfer(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<(usize, Request, Option<u64>)> {
        let object = self.object.clone().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no object"))?;
        let client = &object.client;
        let (k, within) = (offset / self.block.max(1), offset % self.block.max(1));
        let size = self.size_of(k);
        let buf = self.bufs.get_mut(slot).ok_or_else(in_flight)?;
        let len = buf.len() as u64;
        let key = object_key(&object.key, k);
        match op {
            Op::Head => return client.head(&key).map(|_| (0, Request::Head, None)).map_err(failed),
            // The task's own objects: the keys under its file's name.
            Op::List => {
                return client.list(&format!("{}/", object.key)).map(|_| (0, Request::List, None)).map_err(failed)
            }
            Op::Delete => return client.delete(&key).map(|()| (0, Request::Delete, None)).map_err(failed),
            _ => {}
        }
        if op != Op::Write {
            // Into the task's buffer: a copy through another costs as much as the read. A
            // whole object is read at the size it is stored at, which must be its own.
            let range = (within != 0 || len != self.block).then_some((within, len));
            let want = if range.is_some() { len } else { size };
            let (timing, n) = client.get_into(&key, range, buf).map_err(failed)?;
            if n as u64 != want {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{key} holds {n} bytes where {want} were written"),
                ));
            }
            return Ok((n, Request::Get, Some(timing.first_byte.as_nanos() as u64)));
        }
        if len >= self.block {
            client.put(&key, &buf[..size as usize]).map_err(failed)?;
            return Ok((size as usize, Request::Put, None));
        }
        let (id, parts) = match self.uploads.entry(k) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert((client.create_multipart(&key).map_err(failed)?.0, Vec::new()))
            }
        };
        parts.push(client.upload_part(&key, id, (within / len + 1) as u32, buf).map_err(failed)?);
        // Whole once every transfer of the block is up.
        if parts.len() as u64 == self.block.div_ceil(len) {
            let (id, parts) = self.uploads.remove(&k).expect("there");
            if let Err(e) = client.complete_multipart(&key, &id, &parts) {
                client.abort_multipart(&key, &id);
                return Err(failed(e));
            }
        }
        Ok((buf.len(), Request::Put, None))
    }
}

impl Backend for S3 {
    fn attach(&mut self, _file: Option<&File>, _op: Op, _size: u64) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "the s3 engine takes objects, not files"))
    }

    fn attach_object(&mut self, object: &Object, _op: Op, layout: &ObjectLayout) -> io::Result<()> {
        self.object = Some(object.clone());
        (self.block, self.seed, self.file) = (layout.block, layout.seed, layout.file.to_string());
        self.sizes = layout.sizes.clone();
        self.tally = RequestTrace::default();
        Ok(())
    }

    fn submit(&mut self, slot: usize, offset: u64, op: Op) -> io::Result<()> {
        let start = Instant::now();
        let result = self.transfer(slot, offset, op);
        if let Ok((n, request, first_byte)) = &result {
            self.tally.record(*request, start.elapsed().as_nanos() as u64, *n as u64, *first_byte);
        }
        self.done = Some((slot, result.map(|(n, ..)| n)));
        Ok(())
    }

    fn reap(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        done.extend(self.done.take());
        Ok(())
    }

    /// Joins the uploads a stonewall left short: each object holds the parts it got.
    fn finish(&mut self) -> io::Result<()> {
        let Some(object) = self.object.clone() else { return Ok(()) };
        while let Some((k, (id, parts))) = self.uploads.pop_first() {
            let key = object_key(&object.key, k);
            if let Err(e) = object.client.complete_multipart(&key, &id, &parts) {
                object.client.abort_multipart(&key, &id);
                return Err(failed(e));
            }
        }
        Ok(())
    }

    fn detach(&mut self) {
        // Uploads not completed (a failed or stopped phase) leave no parts behind.
        if let Some(object) = &self.object {
            for (k, (id, _)) in std::mem::take(&mut self.uploads) {
                object.client.abort_multipart(&object_key(&object.key, k), &id);
            }
        }
        self.object = None;
    }

    fn requests(&mut self) -> Option<RequestTrace> {
        Some(std::mem::take(&mut self.tally))
    }

    fn bufs(&mut self) -> &mut IoBufs {
        &mut self.bufs
    }
}
