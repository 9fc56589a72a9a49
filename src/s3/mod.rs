//! An S3 client for measuring object storage: blocking, one request at a time per caller, so
//! each task of a run times its own requests as it times its file calls. SigV4 is signed here
//! (`sign`) over ureq's HTTP/1.1 connections (rustls for https); docs/architecture.md says why
//! this and not an SDK.
//!
//! A `Client` talks to one `Location` (endpoint, bucket, prefix) and refuses before any
//! request a key outside the prefix; writes and deletes must also be of iosurvey's naming
//! (`Manifest`), so a run can only ever remove what it made.

mod credentials;
mod error;
mod location;
mod manifest;
mod sign;
mod xml;

pub use credentials::{from_profile_file, Credentials, Secret, Source};
pub use error::{Op, S3Error};
pub use location::{Addressing, Location};
pub use manifest::{empty_run, is_iosurvey_key, Cleanup, Manifest, Swept, HOLDER};
pub use sign::Payload;
pub use xml::{Listed, Open};

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use ureq::http;

/// How a client talks to its server.
#[derive(Debug, Clone)]
pub struct Options {
    /// Path-style or virtual-host; `None` takes `Location::default_addressing`.
    pub addressing: Option<Addressing>,
    /// Whether PUT bodies are hashed and signed.
    pub payload: Payload,
    /// The signing region; `None` reads AWS_REGION, then AWS_DEFAULT_REGION, else `us-east-1`.
    pub region: Option<String>,
    /// Limit on making a connection (resolving included).
    pub connect_timeout: Duration,
    /// Limit on any one read or write of a connection once made: a stall, not a slow object.
    pub io_timeout: Duration,
    /// PEM file of the CAs to trust for https; `None` reads AWS_CA_BUNDLE, else the Mozilla
    /// roots built in.
    pub ca_bundle: Option<PathBuf>,
    /// Keys asked for per LIST request (S3 gives at most 1000).
    pub list_page_size: u32,
    /// How many times a request answered 503 (SlowDown) is sent again before it fails.
    pub retries: u32,
    /// The wait before the first resend; each next one waits twice as long, jittered.
    pub backoff: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            addressing: None,
            payload: Payload::Unsigned,
            region: None,
            connect_timeout: Duration::from_secs(10),
            io_timeout: Duration::from_secs(60),
            ca_bundle: None,
            list_page_size: 1000,
            retries: 4,
            backoff: Duration::from_millis(100),
        }
    }
}

/// The variable that sets the stall limit of every request of a run.
pub const TIMEOUT_VAR: &str = "IOSURVEY_S3_TIMEOUT";

impl Options {
    /// The defaults, with the stall limit from `IOSURVEY_S3_TIMEOUT` ("30s", "500ms") when
    /// set: read on every process of a run, as the credentials are.
    pub fn from_env() -> Result<Options, S3Error> {
        let mut options = Options::default();
        if let Some(text) = std::env::var(TIMEOUT_VAR).ok().filter(|v| !v.is_empty()) {
            let nanos =
                crate::units::parse_duration(&text).map_err(|why| S3Error::Setting { name: TIMEOUT_VAR, why })?;
            if nanos == 0 {
                return Err(S3Error::Setting { name: TIMEOUT_VAR, why: format!("'{text}' allows no wait at all") });
            }
            options.io_timeout = Duration::from_nanos(nanos);
            options.connect_timeout = options.connect_timeout.min(options.io_timeout);
        }
        Ok(options)
    }
}

/// When a request's answer came, from the moment it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// To the first byte of the body (GET), or to the response's head (other requests, and a
    /// GET of an empty object): warp's time to first byte.
    pub first_byte: Duration,
    /// To the last byte.
    pub total: Duration,
}

/// What HEAD says of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Size in bytes.
    pub size: u64,
    /// The ETag, quotes included.
    pub etag: String,
}

/// An uploaded part of a multipart upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its number, from 1.
    pub number: u32,
    /// Its ETag, quotes included.
    pub etag: String,
}

/// A client of one bucket and prefix.
pub struct Client {
    agent: ureq::Agent,
    location: Location,
    credentials: Credentials,
    region: String,
    addressing: Addressing,
    payload: Payload,
    list_page_size: String,
    retries: u32,
    backoff: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("location", &self.location.to_string())
            .field("access_key_id", &self.credentials.access_key_id())
            .field("region", &self.region)
            .field("addressing", &self.addressing)
            .finish_non_exhaustive()
    }
}

/// A request before it is signed: the operation, the method, the object (none for a request
/// on the bucket), query pairs and headers to sign, all unencoded.
#[derive(Clone, Copy)]
struct Call<'a> {
    op: Op,
    method: &'a str,
    key: Option<&'a str>,
    query: &'a [(&'a str, &'a str)],
    headers: &'a [(&'a str, &'a str)],
}

impl Call<'_> {
    /// The key, or "" for a request on the bucket, as errors name it.
    fn name(&self) -> &str {
        self.key.unwrap_or("")
    }
}

/// `wait` made random within its upper half.
fn jitter(wait: Duration) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(wait.as_nanos() as u64);
    let half = wait / 2;
    half + Duration::from_nanos(h.finish() % (half.as_nanos() as u64).max(1))
}

/// Where a request goes: the URL to send to, and the host and path as signed.
struct Target {
    url: String,
    host: String,
    path: String,
}

impl Client {
    /// A client of `location` signing with `credentials`.
    pub fn new(location: &Location, credentials: Credentials, options: &Options) -> Result<Client, S3Error> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let region = options
            .region
            .clone()
            .or_else(|| env("AWS_REGION"))
            .or_else(|| env("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| "us-east-1".into());
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(options.connect_timeout))
            .timeout_per_read(Some(options.io_timeout))
            .timeout_per_write(Some(options.io_timeout))
            .timeout_recv_response(Some(options.io_timeout))
            .user_agent(concat!("iosurvey/", env!("CARGO_PKG_VERSION")));
        if location.https {
            let bundle = options.ca_bundle.clone().or_else(|| env("AWS_CA_BUNDLE").map(PathBuf::from));
            if let Some(bundle) = bundle {
                config = config.tls_config(ureq::tls::TlsConfig::builder().root_certs(ca_roots(&bundle)?).build());
            }
        }
        Ok(Client {
            agent: config.build().into(),
            addressing: options.addressing.unwrap_or_else(|| location.default_addressing()),
            location: location.clone(),
            credentials,
            region,
            payload: options.payload,
            list_page_size: options.list_page_size.clamp(1, 1000).to_string(),
            retries: options.retries,
            backoff: options.backoff,
        })
    }

    /// The location it serves.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Stores `body` as `key` (of iosurvey's naming).
    pub fn put(&self, key: &str, body: &[u8]) -> Result<Timing, S3Error> {
        self.ours(Op::Put, key)?;
        let (mut resp, start, head) =
            self.send(Call { op: Op::Put, method: "PUT", key: Some(key), query: &[], headers: &[] }, Some(body))?;
        self.drain(Op::Put, key, &mut resp)?;
        Ok(Timing { first_byte: head, total: start.elapsed() })
    }

    /// Reads `key` whole into `buf` (cleared first).
    pub fn get(&self, key: &str, buf: &mut Vec<u8>) -> Result<Timing, S3Error> {
        self.get_inner(key, None, buf)
    }

    /// Reads `len` bytes of `key` from `offset` into `buf` (cleared first); a shorter answer is
    /// an error, as a short read of a file is.
    pub fn get_range(&self, key: &str, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<Timing, S3Error> {
        self.get_inner(key, Some((offset, len)), buf)
    }

    fn get_inner(&self, key: &str, range: Option<(u64, u64)>, buf: &mut Vec<u8>) -> Result<Timing, S3Error> {
        let (mut resp, start, head) = self.get_request(key, range)?;
        let len = resp.body().content_length().or(range.map(|(_, l)| l)).unwrap_or(0);
        buf.clear();
        buf.resize(len as usize, 0);
        let (n, first) = self.read_body(key, &mut resp, start, buf)?;
        buf.truncate(n);
        let mut rest = Vec::new();
        // A body longer than it said (or with no length): read to its end.
        resp.body_mut().as_reader().read_to_end(&mut rest).map_err(|e| self.transport(Op::Get, key, e.into()))?;
        buf.extend_from_slice(&rest);
        self.check_range(key, range, buf.len())?;
        Ok(Timing { first_byte: first.unwrap_or(head), total: start.elapsed() })
    }

    /// Reads `key` whole, or `len` bytes of it from `offset`, into the start of `out`: the
    /// bytes read. The body goes from the connection straight into `out` (a task's own
    /// buffer), with no copy in between; an object longer than `out` is an error.
    pub fn get_into(&self, key: &str, range: Option<(u64, u64)>, out: &mut [u8]) -> Result<(Timing, usize), S3Error> {
        let (mut resp, start, head) = self.get_request(key, range)?;
        let (n, first) = self.read_body(key, &mut resp, start, out)?;
        // The end of the body, so the connection goes back to the pool; a byte more is more
        // than was asked for.
        let mut more = [0u8; 1];
        loop {
            match resp.body_mut().as_reader().read(&mut more) {
                Ok(0) => break,
                Ok(_) => {
                    return Err(S3Error::Protocol {
                        op: Op::Get,
                        target: self.target(key),
                        why: format!("the object is longer than the {} bytes asked for", out.len()),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.transport(Op::Get, key, e.into())),
            }
        }
        self.check_range(key, range, n)?;
        Ok((Timing { first_byte: first.unwrap_or(head), total: start.elapsed() }, n))
    }

    /// Sends the GET of `key` (a range of it, when given).
    fn get_request(
        &self,
        key: &str,
        range: Option<(u64, u64)>,
    ) -> Result<(http::Response<ureq::Body>, Instant, Duration), S3Error> {
        self.under_prefix(Op::Get, key)?;
        if range.is_some_and(|(_, l)| l == 0) {
            return Err(S3Error::Protocol {
                op: Op::Get,
                target: self.target(key),
                why: "a ranged GET of 0 bytes".into(),
            });
        }
        let range_value = range.map(|(o, l)| format!("bytes={o}-{}", o + l - 1));
        let headers: Vec<(&str, &str)> = range_value.as_deref().map(|r| ("range", r)).into_iter().collect();
        self.send(Call { op: Op::Get, method: "GET", key: Some(key), query: &[], headers: &headers }, None)
    }

    /// Reads a GET's body into `out` until it is full or the body ends: the bytes read and
    /// when the first came.
    fn read_body(
        &self,
        key: &str,
        resp: &mut http::Response<ureq::Body>,
        start: Instant,
        out: &mut [u8],
    ) -> Result<(usize, Option<Duration>), S3Error> {
        let mut reader = resp.body_mut().as_reader();
        let (mut n, mut first) = (0, None);
        while n < out.len() {
            match reader.read(&mut out[n..]) {
                Ok(0) => break,
                Ok(k) => {
                    first.get_or_insert_with(|| start.elapsed());
                    n += k;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.transport(Op::Get, key, ureq::Error::from(e))),
            }
        }
        Ok((n, first))
    }

    /// A ranged GET must give exactly the bytes asked for, as a read of a file must.
    fn check_range(&self, key: &str, range: Option<(u64, u64)>, got: usize) -> Result<(), S3Error> {
        match range {
            Some((_, len)) if got as u64 != len => Err(S3Error::Protocol {
                op: Op::Get,
                target: self.target(key),
                why: format!("asked for {len} bytes, got {got}"),
            }),
            _ => Ok(()),
        }
    }

    /// Size and ETag of `key`.
    pub fn head(&self, key: &str) -> Result<Head, S3Error> {
        self.under_prefix(Op::Head, key)?;
        let (resp, _, _) =
            self.send(Call { op: Op::Head, method: "HEAD", key: Some(key), query: &[], headers: &[] }, None)?;
        let header = |name: &str| resp.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        let size = header("content-length").and_then(|v| v.parse().ok());
        let size = size.ok_or_else(|| S3Error::Protocol {
            op: Op::Head,
            target: self.target(key),
            why: "no Content-Length".into(),
        })?;
        Ok(Head { size, etag: header("etag").unwrap_or_default() })
    }

    /// Removes `key` (of iosurvey's naming). S3 answers a delete of a key that is not there
    /// as one that was, so this does not tell which.
    pub fn delete(&self, key: &str) -> Result<(), S3Error> {
        self.ours(Op::Delete, key)?;
        match self.send(Call { op: Op::Delete, method: "DELETE", key: Some(key), query: &[], headers: &[] }, None) {
            Ok((mut resp, _, _)) => self.drain(Op::Delete, key, &mut resp),
            Err(S3Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every object whose key starts with `prefix`, which must lie under the location's.
    pub fn list(&self, prefix: &str) -> Result<Vec<Listed>, S3Error> {
        self.under_prefix(Op::List, prefix)?;
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut query = vec![("list-type", "2"), ("max-keys", self.list_page_size.as_str()), ("prefix", prefix)];
            if let Some(t) = &token {
                query.push(("continuation-token", t));
            }
            let (mut resp, _, _) =
                self.send(Call { op: Op::List, method: "GET", key: None, query: &query, headers: &[] }, None)?;
            let body = self.text(Op::List, prefix, &mut resp)?;
            let page = xml::list_page(&body).map_err(|why| S3Error::Protocol {
                op: Op::List,
                target: self.target(prefix),
                why,
            })?;
            // A server that answers outside the prefix asked for is not trusted with a delete.
            if let Some(stray) = page.objects.iter().find(|o| !o.key.starts_with(prefix)) {
                let why = format!("the listing holds `{}`, outside the prefix asked for", stray.key);
                return Err(S3Error::Protocol { op: Op::List, target: self.target(prefix), why });
            }
            out.extend(page.objects);
            match page.next {
                Some(next) if Some(&next) != token.as_ref() => token = Some(next),
                Some(_) => {
                    return Err(S3Error::Protocol {
                        op: Op::List,
                        target: self.target(prefix),
                        why: "the listing repeats its continuation token".into(),
                    })
                }
                None => return Ok(out),
            }
        }
    }

    /// Every multipart upload not yet completed nor aborted whose key starts with `prefix`,
    /// which must lie under the location's.
    pub fn list_uploads(&self, prefix: &str) -> Result<Vec<Open>, S3Error> {
        self.under_prefix(Op::ListUploads, prefix)?;
        let mut out = Vec::new();
        let mut marker: Option<(String, String)> = None;
        loop {
            let mut query = vec![("max-uploads", self.list_page_size.as_str()), ("prefix", prefix), ("uploads", "")];
            if let Some((key, id)) = &marker {
                query.push(("key-marker", key));
                query.push(("upload-id-marker", id));
            }
            let (mut resp, _, _) =
                self.send(Call { op: Op::ListUploads, method: "GET", key: None, query: &query, headers: &[] }, None)?;
            let body = self.text(Op::ListUploads, prefix, &mut resp)?;
            let (page, next) = xml::uploads_page(&body).map_err(|why| S3Error::Protocol {
                op: Op::ListUploads,
                target: self.target(prefix),
                why,
            })?;
            if let Some(stray) = page.iter().find(|u| !u.key.starts_with(prefix)) {
                let why = format!("the upload listing holds `{}`, outside the prefix asked for", stray.key);
                return Err(S3Error::Protocol { op: Op::ListUploads, target: self.target(prefix), why });
            }
            out.extend(page);
            match next {
                Some(next) if Some(&next) != marker.as_ref() => marker = Some(next),
                Some(_) => {
                    return Err(S3Error::Protocol {
                        op: Op::ListUploads,
                        target: self.target(prefix),
                        why: "the upload listing repeats its markers".into(),
                    })
                }
                None => return Ok(out),
            }
        }
    }

    /// The objects under the location's prefix that iosurvey's naming did not make: a prefix
    /// holding any is someone else's data, not to be written beside unless the user says so.
    pub fn foreign_objects(&self) -> Result<Vec<Listed>, S3Error> {
        let prefix = self.location.prefix.clone();
        Ok(self.list(&prefix)?.into_iter().filter(|o| !is_iosurvey_key(&self.location, &o.key)).collect())
    }

    /// Stores `body` as `key` in parts of `part_size` bytes (S3 wants at least 5 MiB but for
    /// the last); an upload that fails is aborted, so no parts are left behind.
    pub fn put_multipart(&self, key: &str, body: &[u8], part_size: usize) -> Result<Timing, S3Error> {
        let start = Instant::now();
        let (id, head) = self.create_multipart(key)?;
        let chunks: Vec<&[u8]> = if body.is_empty() { vec![body] } else { body.chunks(part_size.max(1)).collect() };
        let parts: Result<Vec<Part>, S3Error> =
            chunks.into_iter().enumerate().map(|(i, part)| self.upload_part(key, &id, i as u32 + 1, part)).collect();
        match parts.and_then(|parts| self.complete_multipart(key, &id, &parts)) {
            Ok(()) => Ok(Timing { first_byte: head, total: start.elapsed() }),
            Err(e) => {
                // The upload's own error is the one to report; a failed abort leaves parts the
                // server expires by its lifecycle rules.
                self.abort_multipart(key, &id);
                Err(e)
            }
        }
    }

    /// Begins a multipart upload of `key` (of iosurvey's naming): its upload id, and the time
    /// to the answer's head.
    pub fn create_multipart(&self, key: &str) -> Result<(String, Duration), S3Error> {
        self.ours(Op::CreateMultipart, key)?;
        let (mut resp, _, head) = self.send(
            Call { op: Op::CreateMultipart, method: "POST", key: Some(key), query: &[("uploads", "")], headers: &[] },
            Some(&[]),
        )?;
        let answer = self.text(Op::CreateMultipart, key, &mut resp)?;
        let id = xml::upload_id(&answer).map_err(|why| S3Error::Protocol {
            op: Op::CreateMultipart,
            target: self.target(key),
            why,
        })?;
        Ok((id, head))
    }

    /// Uploads part `number` (from 1) of the upload `id` of `key`.
    pub fn upload_part(&self, key: &str, id: &str, number: u32, body: &[u8]) -> Result<Part, S3Error> {
        self.ours(Op::UploadPart, key)?;
        let n = number.to_string();
        let (mut resp, _, _) = self.send(
            Call {
                op: Op::UploadPart,
                method: "PUT",
                key: Some(key),
                query: &[("partNumber", &n), ("uploadId", id)],
                headers: &[],
            },
            Some(body),
        )?;
        let etag = resp.headers().get("etag").and_then(|v| v.to_str().ok()).map(str::to_string);
        self.drain(Op::UploadPart, key, &mut resp)?;
        let etag = etag.ok_or_else(|| S3Error::Protocol {
            op: Op::UploadPart,
            target: self.target(key),
            why: format!("part {number} came back without an ETag"),
        })?;
        Ok(Part { number, etag })
    }

    /// Joins the upload `id` of `key` from `parts` (in any order).
    pub fn complete_multipart(&self, key: &str, id: &str, parts: &[Part]) -> Result<(), S3Error> {
        self.ours(Op::CompleteMultipart, key)?;
        let mut sorted: Vec<&Part> = parts.iter().collect();
        sorted.sort_by_key(|p| p.number);
        let mut done = String::from("<CompleteMultipartUpload>");
        for p in sorted {
            done.push_str(&format!(
                "<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>",
                p.number,
                xml::escape(&p.etag)
            ));
        }
        done.push_str("</CompleteMultipartUpload>");
        let (mut resp, _, _) = self.send(
            Call {
                op: Op::CompleteMultipart,
                method: "POST",
                key: Some(key),
                query: &[("uploadId", id)],
                headers: &[],
            },
            Some(done.as_bytes()),
        )?;
        // S3 may answer 200 and report the failure in the body, after the parts were joined.
        let answer = self.text(Op::CompleteMultipart, key, &mut resp)?;
        match xml::error(&answer) {
            Some((code, message)) => Err(self.status_error(Op::CompleteMultipart, key, 200, (code, message))),
            None => Ok(()),
        }
    }

    /// Abandons the upload `id` of `key`, its parts with it; a failure is not said (the
    /// run's clean-up lists the uploads left open and tries again).
    pub fn abort_multipart(&self, key: &str, id: &str) {
        let _ = self.abort_upload(key, id);
    }

    /// Abandons the upload `id` of `key` (of iosurvey's naming), its parts with it.
    pub fn abort_upload(&self, key: &str, id: &str) -> Result<(), S3Error> {
        self.ours(Op::AbortMultipart, key)?;
        let call =
            Call { op: Op::AbortMultipart, method: "DELETE", key: Some(key), query: &[("uploadId", id)], headers: &[] };
        match self.send(call, None) {
            Ok((mut resp, _, _)) => self.drain(Op::AbortMultipart, key, &mut resp),
            Err(S3Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Makes the location's bucket: for test beds, where the server starts empty.
    pub fn create_bucket(&self) -> Result<(), S3Error> {
        let (mut resp, _, _) =
            self.send(Call { op: Op::CreateBucket, method: "PUT", key: None, query: &[], headers: &[] }, Some(&[]))?;
        self.drain(Op::CreateBucket, "", &mut resp)
    }

    /// `bucket/key`, as errors name it.
    fn target(&self, key: &str) -> String {
        format!("{}/{key}", self.location.bucket)
    }

    fn under_prefix(&self, op: Op, key: &str) -> Result<(), S3Error> {
        if key.starts_with(&self.location.prefix) {
            Ok(())
        } else {
            Err(S3Error::Outside {
                op,
                target: self.target(key),
                why: format!("outside the prefix `{}`", self.location.prefix),
            })
        }
    }

    fn ours(&self, op: Op, key: &str) -> Result<(), S3Error> {
        self.under_prefix(op, key)?;
        if is_iosurvey_key(&self.location, key) {
            Ok(())
        } else {
            Err(S3Error::Outside {
                op,
                target: self.target(key),
                why: "not of iosurvey's naming (PREFIX/iosurvey-TOKEN/...)".into(),
            })
        }
    }

    fn request_target(&self, key: Option<&str>) -> Target {
        let scheme = if self.location.https { "https" } else { "http" };
        let authority = self.location.authority();
        let key_path = key.map(|k| format!("/{}", sign::encode(k, false)));
        let (host, path) = match self.addressing {
            Addressing::Path => (authority, format!("/{}{}", self.location.bucket, key_path.unwrap_or_default())),
            Addressing::VirtualHost => {
                (format!("{}.{authority}", self.location.bucket), key_path.unwrap_or_else(|| "/".into()))
            }
        };
        Target { url: format!("{scheme}://{host}{path}"), host, path }
    }

    /// Signs and sends one request; gives the response of a 2xx status, the instant it was
    /// first sent and how long its head took from then, or the typed error of any other
    /// outcome. A 503 is the server asking for less load: the request is sent again, signed
    /// anew, after a backoff that doubles (jittered, so that tasks throttled together do not
    /// come back together), up to `retries` times; the time waited is the request's.
    fn send(
        &self,
        call: Call,
        body: Option<&[u8]>,
    ) -> Result<(http::Response<ureq::Body>, Instant, Duration), S3Error> {
        let start = Instant::now();
        let mut wait = self.backoff;
        for retry in 0.. {
            let mut resp =
                self.agent.run(self.build(&call, body)?).map_err(|e| self.transport(call.op, call.name(), e))?;
            let head = start.elapsed();
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return Ok((resp, start, head));
            }
            // A HEAD has no body to say why; its status alone is the answer.
            let text = if call.method == "HEAD" {
                String::new()
            } else {
                self.text(call.op, call.name(), &mut resp).unwrap_or_default()
            };
            if status == 503 && retry < self.retries {
                std::thread::sleep(jitter(wait));
                wait = wait.saturating_mul(2);
                continue;
            }
            let (code, message) = xml::error(&text).unwrap_or_else(|| ("-".into(), String::new()));
            let err = self.status_error(call.op, call.name(), status, (code, message));
            return Err(match err {
                S3Error::SlowDown { op, target, code, .. } => {
                    S3Error::SlowDown { op, target, code, tries: retry + 1, over: start.elapsed() }
                }
                e => e,
            });
        }
        unreachable!("the loop returns")
    }

    /// The request of `call`, signed now.
    fn build<'b>(&self, call: &Call, body: Option<&'b [u8]>) -> Result<http::Request<&'b [u8]>, S3Error> {
        let Call { op, method, key, query, headers } = *call;
        let target = self.request_target(key);
        let payload_hash = match (body, self.payload) {
            (None, _) | (Some([]), _) => sign::EMPTY_SHA256.to_string(),
            (Some(b), Payload::Signed) => sign::payload_sha256(b),
            (Some(_), Payload::Unsigned) => "UNSIGNED-PAYLOAD".to_string(),
        };
        let request = sign::Request {
            method,
            host: &target.host,
            path: &target.path,
            query,
            headers,
            payload_hash: &payload_hash,
        };
        let signed = sign::sign(&request, &self.credentials, &self.region, SystemTime::now());
        let mut uri = target.url;
        if !query.is_empty() {
            let pairs: Vec<String> =
                query.iter().map(|(k, v)| format!("{}={}", sign::encode(k, true), sign::encode(v, true))).collect();
            uri.push('?');
            uri.push_str(&pairs.join("&"));
        }
        let mut builder = http::Request::builder().method(method).uri(&uri);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        for (name, value) in &signed.headers {
            builder = builder.header(*name, value.as_str());
        }
        builder.body(body.unwrap_or(&[])).map_err(|e| S3Error::Protocol {
            op,
            target: self.target(call.name()),
            why: format!("request cannot be built: {e}"),
        })
    }

    /// The error of a status other than 2xx, with the S3 error's code and message.
    fn status_error(&self, op: Op, key: &str, status: u16, (code, message): (String, String)) -> S3Error {
        let target = self.target(key);
        match status {
            503 => S3Error::SlowDown { op, target, code, tries: 1, over: Duration::ZERO },
            404 => S3Error::NotFound { op, target, code },
            _ => S3Error::Status { op, target, status, code, message: error::one_line(&message) },
        }
    }

    /// Reads a (small) answer body as text.
    fn text(&self, op: Op, key: &str, resp: &mut http::Response<ureq::Body>) -> Result<String, S3Error> {
        let mut text = String::new();
        resp.body_mut()
            .with_config()
            .limit(16 << 20)
            .reader()
            .read_to_string(&mut text)
            .map_err(|e| self.transport(op, key, ureq::Error::from(e)))?;
        Ok(text)
    }

    /// Reads what is left of a body so the connection goes back to the pool.
    fn drain(&self, op: Op, key: &str, resp: &mut http::Response<ureq::Body>) -> Result<(), S3Error> {
        std::io::copy(&mut resp.body_mut().as_reader(), &mut std::io::sink())
            .map(|_| ())
            .map_err(|e| self.transport(op, key, ureq::Error::from(e)))
    }

    /// The typed error of a request that got no status.
    fn transport(&self, op: Op, key: &str, e: ureq::Error) -> S3Error {
        use std::io::ErrorKind as K;
        use ureq::Timeout as T;
        let target = self.target(key);
        let endpoint = self.location.authority();
        match e {
            ureq::Error::Timeout(t) => S3Error::Timeout {
                op,
                target,
                phase: match t {
                    T::Resolve | T::Connect => "connecting",
                    T::SendRequest | T::SendBody | T::PerWrite => "sending",
                    T::RecvResponse => "waiting for the response",
                    T::RecvBody | T::PerRead => "receiving",
                    _ => "(the request's overall limit)",
                },
            },
            ureq::Error::HostNotFound => {
                S3Error::Connect { op, target, endpoint, why: "the host name does not resolve".into() }
            }
            ureq::Error::ConnectionFailed => {
                S3Error::Connect { op, target, endpoint, why: "no address of the host answered".into() }
            }
            ureq::Error::Io(io)
                if matches!(
                    io.kind(),
                    K::ConnectionRefused | K::AddrNotAvailable | K::HostUnreachable | K::NetworkUnreachable
                ) =>
            {
                S3Error::Connect { op, target, endpoint, why: io.to_string() }
            }
            // rustls says a handshake's failure (a certificate not trusted) through the stream
            // it wraps, as data it cannot take: not a dropped connection.
            ureq::Error::Io(io) if self.location.https && io.kind() == K::InvalidData => {
                S3Error::Connect { op, target, endpoint, why: format!("TLS: {io}") }
            }
            ureq::Error::Io(io) => S3Error::Dropped { op, target, why: io.to_string() },
            ureq::Error::Rustls(t) => S3Error::Connect { op, target, endpoint, why: format!("TLS: {t}") },
            ureq::Error::Tls(t) => S3Error::Connect { op, target, endpoint, why: format!("TLS: {t}") },
            other => S3Error::Protocol { op, target, why: other.to_string() },
        }
    }
}

/// The CAs of a PEM bundle.
fn ca_roots(bundle: &std::path::Path) -> Result<ureq::tls::RootCerts, S3Error> {
    let pem =
        std::fs::read(bundle).map_err(|e| S3Error::Tls { why: format!("{} cannot be read: {e}", bundle.display()) })?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        if let Ok(ureq::tls::PemItem::Certificate(c)) = item {
            certs.push(c);
        }
    }
    if certs.is_empty() {
        return Err(S3Error::Tls { why: format!("{} holds no PEM certificate", bundle.display()) });
    }
    Ok(ureq::tls::RootCerts::Specific(Arc::new(certs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(url: &str, addressing: Addressing) -> Client {
        let options = Options { addressing: Some(addressing), region: Some("us-east-1".into()), ..Options::default() };
        Client::new(&Location::parse(url).unwrap(), Credentials::new("AK", "SK", None), &options).unwrap()
    }

    #[test]
    fn path_style_names_the_bucket_in_the_path_and_virtual_host_in_the_host() {
        let path = client("http://10.0.0.1:9000/bkt/p", Addressing::Path).request_target(Some("p/a b"));
        assert_eq!(
            (path.url.as_str(), path.host.as_str(), path.path.as_str()),
            ("http://10.0.0.1:9000/bkt/p/a%20b", "10.0.0.1:9000", "/bkt/p/a%20b")
        );
        let vhost = client("https://s3.example.org/bkt/p", Addressing::VirtualHost);
        let t = vhost.request_target(Some("p/x"));
        assert_eq!(
            (t.url.as_str(), t.host.as_str(), t.path.as_str()),
            ("https://bkt.s3.example.org/p/x", "bkt.s3.example.org", "/p/x")
        );
        let t = vhost.request_target(None);
        assert_eq!((t.url.as_str(), t.path.as_str()), ("https://bkt.s3.example.org/", "/"));
    }
}
