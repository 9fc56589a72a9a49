//! The S3 client's errors, one line each, typed by what the caller does next: a 503 SlowDown
//! is the server asking for less load, a timeout or a dropped connection is the path failing,
//! a status with its S3 code is the request refused. None carries a header, a signature or
//! a secret: they are built from the operation, the key and the server's code and message.

use std::fmt;
use thiserror::Error;

/// The S3 operation a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// PutObject.
    Put,
    /// GetObject, whole or a range.
    Get,
    /// HeadObject.
    Head,
    /// DeleteObject.
    Delete,
    /// ListObjectsV2.
    List,
    /// CreateBucket (test beds only).
    CreateBucket,
    /// CreateMultipartUpload.
    CreateMultipart,
    /// UploadPart.
    UploadPart,
    /// CompleteMultipartUpload.
    CompleteMultipart,
    /// AbortMultipartUpload.
    AbortMultipart,
    /// ListMultipartUploads.
    ListUploads,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Put => "PUT",
            Op::Get => "GET",
            Op::Head => "HEAD",
            Op::Delete => "DELETE",
            Op::List => "LIST",
            Op::CreateBucket => "CREATE BUCKET",
            Op::CreateMultipart => "multipart CREATE",
            Op::UploadPart => "multipart PART",
            Op::CompleteMultipart => "multipart COMPLETE",
            Op::AbortMultipart => "multipart ABORT",
            Op::ListUploads => "multipart LIST",
        })
    }
}

/// A failure of the S3 client.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum S3Error {
    /// The `URL/BUCKET[/PREFIX]` text cannot be used.
    #[error("S3 location `{text}` is not usable: {why}")]
    Location {
        /// The text as given (with anything before an `@` hidden).
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// No credentials, or a credentials file that cannot be used.
    #[error("S3 credentials: {why}")]
    Credentials {
        /// What is missing or wrong (never a value from the file).
        why: String,
    },
    /// The TLS set-up (a CA bundle) cannot be used.
    #[error("S3 TLS set-up: {why}")]
    Tls {
        /// What is wrong.
        why: String,
    },
    /// The server answered 503 to every try: it wants fewer requests (S3's SlowDown).
    #[error("S3 {op} {target}: the server is shedding load (503 {code} to each of {tries} tries over {over:.1?})")]
    SlowDown {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// The S3 error code, usually SlowDown.
        code: String,
        /// How many times the request was sent.
        tries: u32,
        /// From the first send to the last answer.
        over: std::time::Duration,
    },
    /// A setting of the environment cannot be used.
    #[error("{name}: {why}")]
    Setting {
        /// The variable.
        name: &'static str,
        /// What is wrong with its value.
        why: String,
    },
    /// The object or bucket does not exist.
    #[error("S3 {op} {target}: not found (404 {code})")]
    NotFound {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// NoSuchKey, NoSuchBucket, NoSuchUpload.
        code: String,
    },
    /// The server refused the request with another status.
    #[error("S3 {op} {target}: refused ({status} {code}: {message})")]
    Status {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// HTTP status.
        status: u16,
        /// The S3 error code (AccessDenied, SignatureDoesNotMatch, ...), or `-`.
        code: String,
        /// The server's message, one line, cut at 200 characters.
        message: String,
    },
    /// A connection, a response or a body took longer than its limit.
    #[error("S3 {op} {target}: timed out {phase}")]
    Timeout {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// Which wait: "connecting", "waiting for the response", "receiving the body", ...
        phase: &'static str,
    },
    /// No connection could be made to the endpoint.
    #[error("S3 {op} {target}: cannot connect to {endpoint}: {why}")]
    Connect {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// `host[:port]`.
        endpoint: String,
        /// The system's or the TLS layer's reason.
        why: String,
    },
    /// The connection broke during the request or its body.
    #[error("S3 {op} {target}: the connection dropped: {why}")]
    Dropped {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// The system's reason.
        why: String,
    },
    /// The server's answer is not what S3 says it is (bad XML, a short body).
    #[error("S3 {op} {target}: unexpected answer: {why}")]
    Protocol {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// What was wrong.
        why: String,
    },
    /// A key outside the location's prefix, or not of iosurvey's naming: refused before any
    /// request.
    #[error("S3 {op} {target}: refused: {why}")]
    Outside {
        /// The operation.
        op: Op,
        /// `bucket/key`.
        target: String,
        /// Why the key is not iosurvey's to touch.
        why: String,
    },
}

impl S3Error {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            S3Error::Location { .. } => "give the target as http[s]://HOST[:PORT]/BUCKET[/PREFIX]",
            S3Error::Credentials { .. } => {
                "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE naming a profile of ~/.aws/credentials (or AWS_SHARED_CREDENTIALS_FILE)"
            }
            S3Error::Setting { .. } => "give IOSURVEY_S3_TIMEOUT as a duration with its unit (30s, 500ms), or unset it for 60 s",
            S3Error::Tls { .. } => "point AWS_CA_BUNDLE at a readable PEM file of the CA that signed the server's certificate",
            S3Error::SlowDown { .. } => "the server is at its limit: run fewer tasks, or say how many requests it takes per second",
            S3Error::NotFound { .. } => "check the bucket name, and that nothing else removed the object",
            S3Error::Status { .. } => "check the credentials, the region (AWS_REGION) and that the bucket grants this key access",
            S3Error::Timeout { .. } => "the server or the network stalled: check the endpoint's health, or raise the timeout",
            S3Error::Connect { .. } => {
                "check the endpoint's host and port, that the server is up, and for https that AWS_CA_BUNDLE names a PEM file of the CA that signed its certificate"
            }
            S3Error::Dropped { .. } => "the server or a proxy closed the connection: check its logs and its limits on connections",
            S3Error::Protocol { .. } => "the endpoint may not be an S3 server, or a proxy changed the answer",
            S3Error::Outside { .. } => "iosurvey touches only objects its own naming made under its prefix",
        }
    }

    /// Whether this is the server asking for less load (a 503).
    pub fn is_slow_down(&self) -> bool {
        matches!(self, S3Error::SlowDown { .. })
    }
}

/// A server message made one line and short, so an error stays one line.
pub(super) fn one_line(message: &str) -> String {
    let flat: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat: String = flat.chars().filter(|c| !c.is_control()).collect();
    if flat.chars().count() > 200 {
        format!("{}...", flat.chars().take(200).collect::<String>())
    } else {
        flat
    }
}
