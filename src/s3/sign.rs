//! AWS Signature Version 4 for S3, written from the published algorithm: a canonical request,
//! the string to sign over its SHA-256, and a key derived from the secret per day, region and
//! service. Signing happens per request on the caller's thread; nothing here allocates more
//! than the few short strings the canonical forms need.

use super::credentials::Credentials;
use ring::{digest, hmac};
use std::fmt::Write as _;
use std::time::SystemTime;

/// The SHA-256 of an empty body, hex: the payload hash of every request without one.
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// What `x-amz-content-sha256` says of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// The body's SHA-256 is computed and signed: the server rejects a body changed on the way.
    Signed,
    /// `UNSIGNED-PAYLOAD`: no hash over the body, so a PUT costs the client no pass over the
    /// data beyond sending it (what load generators do to keep client CPU out of the figure).
    Unsigned,
}

/// A request as it is signed: method, the path as sent (already encoded), the query pairs
/// (unencoded), and the headers beside `host` that must be signed.
pub struct Request<'a> {
    /// GET, PUT, HEAD, DELETE, POST.
    pub method: &'a str,
    /// The host header's value: host, and `:port` unless it is the scheme's default.
    pub host: &'a str,
    /// The URI path, encoded as it goes on the wire.
    pub path: &'a str,
    /// Query parameters, unencoded; order does not matter.
    pub query: &'a [(&'a str, &'a str)],
    /// Extra headers to sign (lower-case names), such as `range`.
    pub headers: &'a [(&'a str, &'a str)],
    /// The hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`.
    pub payload_hash: &'a str,
}

/// The headers a signed request carries: `x-amz-date`, `x-amz-content-sha256`,
/// `x-amz-security-token` when the credentials have a session token, and `authorization`.
pub struct Signed {
    /// Name and value of each header to add to the request.
    pub headers: Vec<(&'static str, String)>,
}

/// Signs `req` for `region` at time `now`.
pub fn sign(req: &Request, creds: &Credentials, region: &str, now: SystemTime) -> Signed {
    let stamp = amz_date(now);
    let day = &stamp[..8];
    let mut headers: Vec<(String, String)> = vec![
        ("host".into(), req.host.to_string()),
        ("x-amz-content-sha256".into(), req.payload_hash.to_string()),
        ("x-amz-date".into(), stamp.clone()),
    ];
    if let Some(token) = creds.session_token() {
        headers.push(("x-amz-security-token".into(), token.to_string()));
    }
    for (name, value) in req.headers {
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    headers.sort();
    let signed_names = headers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(";");
    let mut canonical = String::with_capacity(256);
    let _ = write!(canonical, "{}\n{}\n{}\n", req.method, req.path, canonical_query(req.query));
    for (name, value) in &headers {
        let _ = writeln!(canonical, "{name}:{value}");
    }
    let _ = write!(canonical, "\n{signed_names}\n{}", req.payload_hash);
    let scope = format!("{day}/{region}/s3/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref())
    );
    let key = signing_key(creds.secret_bytes(), day, region);
    let signature = hex(hmac::sign(&key, to_sign.as_bytes()).as_ref());
    let mut out = vec![("x-amz-date", stamp), ("x-amz-content-sha256", req.payload_hash.to_string())];
    if let Some(token) = creds.session_token() {
        out.push(("x-amz-security-token", token.to_string()));
    }
    out.push((
        "authorization",
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_names}, Signature={signature}",
            creds.access_key_id()
        ),
    ));
    Signed { headers: out }
}

fn signing_key(secret: &[u8], day: &str, region: &str) -> hmac::Key {
    let mut first = Vec::with_capacity(4 + secret.len());
    first.extend_from_slice(b"AWS4");
    first.extend_from_slice(secret);
    let mut key = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &first), day.as_bytes());
    // The derived key is as sensitive as the secret: wipe the copy that held the secret.
    first.iter_mut().for_each(|b| *b = 0);
    for part in [region, "s3", "aws4_request"] {
        key = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key.as_ref()), part.as_bytes());
    }
    hmac::Key::new(hmac::HMAC_SHA256, key.as_ref())
}

/// The hex SHA-256 of `body`, for a signed payload.
pub fn payload_sha256(body: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, body).as_ref())
}

fn canonical_query(query: &[(&str, &str)]) -> String {
    let mut pairs: Vec<(String, String)> = query.iter().map(|(k, v)| (encode(k, true), encode(v, true))).collect();
    pairs.sort();
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
}

/// Percent-encodes `s` the way SigV4 wants: every byte but `A-Z a-z 0-9 - . _ ~` as `%XX` in
/// upper-case hex, and `/` too unless `slash` is false (an object key's path keeps its
/// slashes; a query value does not).
pub fn encode(s: &str, slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') || (b == b'/' && !slash) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `YYYYMMDDTHHMMSSZ` in UTC, the form `x-amz-date` takes.
pub fn amz_date(t: SystemTime) -> String {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(days as i64);
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Year, month, day of `days` since 1970-01-01 in the proleptic Gregorian calendar, counting
/// in 400-year eras (each exactly 146097 days) from a year that starts in March, so the leap
/// day falls at the end of the counted year.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of the March-based year
    let mp = (5 * doy + 2) / 153; // month from March = 0
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_are_utc_and_cross_leap_days_and_centuries() {
        let at = |s: u64| amz_date(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "19700101T000000Z");
        assert_eq!(at(1_369_353_600), "20130524T000000Z");
        assert_eq!(at(951_782_400), "20000229T000000Z");
        assert_eq!(at(951_868_800), "20000301T000000Z");
        assert_eq!(at(4_102_444_799), "20991231T235959Z");
        assert_eq!(at(4_107_542_400), "21000301T000000Z");
        assert_eq!(at(1_709_251_199), "20240229T235959Z");
    }

    #[test]
    fn keys_keep_slashes_and_query_values_do_not() {
        assert_eq!(encode("a b/c~d*é", false), "a%20b/c~d%2A%C3%A9");
        assert_eq!(encode("a/b=c&d", true), "a%2Fb%3Dc%26d");
    }

    /// The GET-with-a-range example of the S3 SigV4 documentation: its published signature is
    /// the check that the canonical request, the scope and the key derivation are right.
    #[test]
    fn the_documented_ranged_get_signs_to_its_published_signature() {
        let creds = Credentials::new("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None);
        let req = Request {
            method: "GET",
            host: "examplebucket.s3.amazonaws.com",
            path: "/test.txt",
            query: &[],
            headers: &[("range", "bytes=0-9")],
            payload_hash: EMPTY_SHA256,
        };
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_369_353_600);
        let signed = sign(&req, &creds, "us-east-1", now);
        let auth = &signed.headers.iter().find(|(n, _)| *n == "authorization").unwrap().1;
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }
}
