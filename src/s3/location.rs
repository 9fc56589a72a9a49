//! `URL/BUCKET[/PREFIX]`: which server, which bucket, and the part of it iosurvey may touch.

use super::error::S3Error;

/// How the bucket is named in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressing {
    /// `http://host/bucket/key`: works with any host name or address, what on-premises
    /// gateways and test servers take.
    Path,
    /// `http://bucket.host/key`: what AWS prefers; needs DNS (or a wildcard record) for
    /// `bucket.host`.
    VirtualHost,
}

/// An S3 endpoint, bucket and prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Whether requests go over TLS (`https://`).
    pub https: bool,
    /// Host name or address (an IPv6 address in brackets), without the port.
    pub host: String,
    /// The port, when the URL names one other than the scheme's default.
    pub port: Option<u16>,
    /// The bucket.
    pub bucket: String,
    /// The key prefix iosurvey keeps to: empty, or ending in `/`.
    pub prefix: String,
}

impl Location {
    /// Reads `http[s]://HOST[:PORT]/BUCKET[/PREFIX]`.
    pub fn parse(text: &str) -> Result<Location, S3Error> {
        let bad = |why: String| S3Error::Location { text: text.to_string(), why };
        let (https, rest) = if let Some(r) = text.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = text.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(bad("it does not start with http:// or https://".into()));
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        if let Some((_, after)) = authority.rsplit_once('@') {
            // The part before `@` may be a secret: the error shows the URL without it.
            let scheme = if https { "https" } else { "http" };
            let shown = format!("{scheme}://(hidden)@{after}/{path}");
            return Err(S3Error::Location {
                text: shown,
                why: "credentials do not go in the URL (use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile)"
                    .into(),
            });
        }
        let (host, port) = split_port(authority).map_err(bad)?;
        if host.is_empty() {
            return Err(bad("it names no host".into()));
        }
        let port = port.filter(|&p| p != if https { 443 } else { 80 });
        let (bucket, prefix) = path.split_once('/').unwrap_or((path, ""));
        check_bucket(bucket).map_err(bad)?;
        if prefix.contains("//") || prefix.split('/').any(|p| p == "." || p == "..") || prefix.contains(['?', '#']) {
            return Err(bad("the prefix has an empty, `.` or `..` part, or a `?` or `#`".into()));
        }
        let prefix = match prefix.trim_end_matches('/') {
            "" => String::new(),
            p => format!("{p}/"),
        };
        Ok(Location { https, host: host.to_ascii_lowercase(), port, bucket: bucket.to_string(), prefix })
    }

    /// `host[:port]` as the Host header carries it.
    pub fn authority(&self) -> String {
        match self.port {
            Some(p) => format!("{}:{p}", self.host),
            None => self.host.clone(),
        }
    }

    /// The addressing to use when the user says nothing: path-style for an address, for
    /// `localhost` and for a bucket name that cannot be a DNS label (dots break TLS names),
    /// virtual-host otherwise.
    pub fn default_addressing(&self) -> Addressing {
        let address = self.host.starts_with('[') || self.host.parse::<std::net::Ipv4Addr>().is_ok();
        if address || self.host == "localhost" || self.bucket.contains('.') {
            Addressing::Path
        } else {
            Addressing::VirtualHost
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}/{}/{}", self.authority(), self.bucket, self.prefix.trim_end_matches('/'))
    }
}

fn split_port(authority: &str) -> Result<(&str, Option<u16>), String> {
    let (host, port) = if authority.starts_with('[') {
        match authority.find(']') {
            Some(end) => (&authority[..=end], authority[end + 1..].strip_prefix(':')),
            None => return Err("an IPv6 address has no closing `]`".into()),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| "the port is not a number from 1 to 65535".to_string())?,
        ),
        None => None,
    };
    Ok((host, port))
}

/// S3's bucket naming rules: 3 to 63 of `a-z 0-9 . -`, starting and ending with a letter or
/// digit.
fn check_bucket(bucket: &str) -> Result<(), String> {
    let ok_chars = bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    let ends = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if bucket.is_empty() {
        Err("it names no bucket (the form is URL/BUCKET[/PREFIX])".into())
    } else if !(3..=63).contains(&bucket.len())
        || !ok_chars
        || !ends(bucket.bytes().next())
        || !ends(bucket.bytes().last())
    {
        Err(format!("`{bucket}` is not a bucket name (3 to 63 of a-z, 0-9, `.` and `-`, starting and ending with a letter or digit)"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_bucket_and_prefix_are_read_and_the_default_port_dropped() {
        let l = Location::parse("http://127.0.0.1:7070/bench/runs/a/").unwrap();
        assert_eq!(
            (l.https, l.host.as_str(), l.port, l.bucket.as_str(), l.prefix.as_str()),
            (false, "127.0.0.1", Some(7070), "bench", "runs/a/")
        );
        assert_eq!(l.default_addressing(), Addressing::Path);
        assert_eq!(l.to_string(), "http://127.0.0.1:7070/bench/runs/a");
        let l = Location::parse("https://S3.Example.org:443/data").unwrap();
        assert_eq!((l.https, l.host.as_str(), l.port, l.prefix.as_str()), (true, "s3.example.org", None, ""));
        assert_eq!(l.default_addressing(), Addressing::VirtualHost);
        let l = Location::parse("http://[::1]:9000/b.with.dots/p").unwrap();
        assert_eq!((l.host.as_str(), l.port, l.authority()), ("[::1]", Some(9000), "[::1]:9000".to_string()));
        assert_eq!(l.default_addressing(), Addressing::Path);
    }

    #[test]
    fn each_bad_location_says_why_in_one_line() {
        for (text, why) in [
            ("s3://b", "http:// or https://"),
            ("http://h:99999/b", "port"),
            ("http://h:9000", "no bucket"),
            ("http://h/B_ad", "not a bucket name"),
            ("http://h/ab", "not a bucket name"),
            ("http://key:secret@h/bkt", "credentials do not go in the URL"),
            ("http://h/bkt/a/../b", "`..`"),
        ] {
            let e = Location::parse(text).unwrap_err().to_string();
            assert!(e.contains(why) && !e.contains('\n'), "{text}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
    }
}
