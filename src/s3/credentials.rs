//! Where the keys come from: the standard AWS environment variables, else a profile of the
//! shared credentials file. Never from the command line (argv is visible to every user of the
//! machine in /proc), and the secret never printed: `Secret` has no `Display`, its `Debug`
//! says only that it is there, and no error of this module quotes a line of the file.

use super::error::S3Error;
use std::fmt;
use std::path::{Path, PathBuf};

/// A secret string: readable only as bytes by the signer, shown nowhere.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        // Overwrite the bytes before the allocation is freed, so a
        // later heap dump or core file of a long run holds no stale copy.
        let mut bytes = std::mem::take(&mut self.0).into_bytes();
        bytes.iter_mut().for_each(|b| *b = 0);
        std::hint::black_box(&bytes);
    }
}

/// An access key, its secret and, for temporary credentials, a session token.
#[derive(Clone, Debug)]
pub struct Credentials {
    access_key_id: String,
    secret: Secret,
    session_token: Option<Secret>,
}

/// Where credentials were found, for a line saying so (never the values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
    Environment,
    /// A profile of a shared credentials file.
    Profile {
        /// The file.
        file: PathBuf,
        /// The profile's name.
        profile: String,
    },
}

impl Credentials {
    /// Credentials from their parts.
    pub fn new(access_key_id: &str, secret: &str, session_token: Option<&str>) -> Credentials {
        Credentials {
            access_key_id: access_key_id.to_string(),
            secret: Secret(secret.to_string()),
            session_token: session_token.map(|t| Secret(t.to_string())),
        }
    }

    /// The access key id (not secret: it names the key, and goes in every request).
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    pub(super) fn secret_bytes(&self) -> &[u8] {
        self.secret.0.as_bytes()
    }

    pub(super) fn session_token(&self) -> Option<&str> {
        self.session_token.as_ref().map(|s| s.0.as_str())
    }

    /// Credentials from this process's environment: AWS_ACCESS_KEY_ID with
    /// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), else the profile AWS_PROFILE (or
    /// `default`) of AWS_SHARED_CREDENTIALS_FILE (or ~/.aws/credentials).
    pub fn load() -> Result<(Credentials, Source), S3Error> {
        Credentials::load_from(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// As `load`, with the environment read through `var` (tests give their own).
    pub fn load_from(var: impl Fn(&str) -> Option<String>) -> Result<(Credentials, Source), S3Error> {
        match (var("AWS_ACCESS_KEY_ID"), var("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => {
                let token = var("AWS_SESSION_TOKEN");
                return Ok((Credentials::new(&id, &secret, token.as_deref()), Source::Environment));
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(S3Error::Credentials {
                    why: "only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set".into(),
                })
            }
            (None, None) => {}
        }
        let profile = var("AWS_PROFILE").unwrap_or_else(|| "default".into());
        let file = match var("AWS_SHARED_CREDENTIALS_FILE") {
            Some(f) => PathBuf::from(f),
            None => match var("HOME") {
                Some(home) => Path::new(&home).join(".aws/credentials"),
                None => {
                    return Err(S3Error::Credentials {
                        why: "no AWS_ACCESS_KEY_ID in the environment, and no HOME to find ~/.aws/credentials in"
                            .into(),
                    })
                }
            },
        };
        let creds = from_profile_file(&file, &profile)?;
        Ok((creds, Source::Profile { file, profile }))
    }
}

/// Reads `profile` of a shared credentials file (INI: `[name]` sections of `key = value`).
pub fn from_profile_file(file: &Path, profile: &str) -> Result<Credentials, S3Error> {
    let text = std::fs::read_to_string(file).map_err(|e| S3Error::Credentials {
        why: format!("no AWS_ACCESS_KEY_ID in the environment, and {} cannot be read: {e}", file.display()),
    })?;
    parse_profile(&text, profile).map_err(|why| S3Error::Credentials { why: format!("{}: {why}", file.display()) })
}

/// The named profile of a credentials file's text. An error names lines by number only: a
/// malformed line may hold a secret.
fn parse_profile(text: &str, profile: &str) -> Result<Credentials, String> {
    let mut current: Option<&str> = None;
    let (mut id, mut secret, mut token) = (None, None, None);
    let mut seen = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim();
            current = Some(name.strip_prefix("profile ").unwrap_or(name).trim());
            seen |= current == Some(profile);
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {} is neither `[profile]` nor `key = value`", n + 1));
        };
        if current != Some(profile) {
            continue;
        }
        let value = value.trim().to_string();
        match key.trim() {
            "aws_access_key_id" => id = Some(value),
            "aws_secret_access_key" => secret = Some(Secret(value)),
            "aws_session_token" => token = Some(Secret(value)),
            _ => {}
        }
    }
    if !seen {
        return Err(format!("no profile [{profile}] (set AWS_PROFILE to one it has)"));
    }
    match (id, secret) {
        (Some(id), Some(secret)) => Ok(Credentials { access_key_id: id, secret, session_token: token }),
        _ => Err(format!("profile [{profile}] lacks aws_access_key_id or aws_secret_access_key")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cr3t/PLANTED+value";

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_environment_comes_first_and_debug_hides_the_secret_and_the_token() {
        let (c, src) = Credentials::load_from(env(&[
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("AWS_SESSION_TOKEN", "TOKEN-planted"),
            ("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"),
        ]))
        .unwrap();
        assert_eq!(src, Source::Environment);
        assert_eq!(c.access_key_id(), "AKID");
        assert_eq!(c.secret_bytes(), SECRET.as_bytes());
        let shown = format!("{c:?} {c:#?}");
        assert!(!shown.contains(SECRET) && !shown.contains("TOKEN-planted"), "{shown}");
    }

    #[test]
    fn a_profile_is_read_by_name_and_a_bad_line_is_named_by_number_not_quoted() {
        let text = format!("# keys\n[default]\naws_access_key_id = A\naws_secret_access_key = x\n\n[profile bench]\naws_access_key_id=B\naws_secret_access_key = {SECRET}\n");
        let c = parse_profile(&text, "bench").unwrap();
        assert_eq!((c.access_key_id(), c.secret_bytes()), ("B", SECRET.as_bytes()));
        let err = parse_profile(&format!("[bench]\n{SECRET}\n"), "bench").unwrap_err();
        assert!(err.contains("line 2") && !err.contains(SECRET), "{err}");
        let err = parse_profile(&text, "other").unwrap_err();
        assert!(err.contains("no profile [other]"), "{err}");
    }

    #[test]
    fn half_a_key_in_the_environment_is_refused_not_mixed_with_a_file() {
        let err = Credentials::load_from(env(&[("AWS_SECRET_ACCESS_KEY", SECRET)])).unwrap_err().to_string();
        assert!(err.contains("only one of") && !err.contains(SECRET), "{err}");
    }
}
