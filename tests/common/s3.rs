//! A real S3 server for a test: versitygw over a directory of the test's own, built by
//! testbed/s3 (`.ci/run` installs it) and started on loopback; stopped when dropped. The
//! client's keys reach a command through its environment, as a user's would.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The bucket every test's server holds.
pub const BUCKET: &str = "iosv";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbed/s3")
}

/// `n` random bytes in hex.
fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes)).unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A versitygw of one test: its directory, port and root keys.
pub struct S3Server {
    dir: tempfile::TempDir,
    /// Where it listens on 127.0.0.1.
    pub port: u16,
    /// The root account's key id.
    pub access: String,
    /// Its secret, which no output may hold.
    pub secret: String,
}

impl S3Server {
    /// Starts a server with [`BUCKET`] made, or skips the test (`None`) where testbed/s3 says
    /// it cannot run here.
    pub fn start() -> Option<S3Server> {
        // A port handed out and given back is free unless a test beside this one takes it
        // first: `up` then exits 75 and another is tried.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let server = S3Server {
                dir: tempfile::tempdir().unwrap(),
                port,
                access: format!("AK{}", random_hex(8)),
                secret: format!("SeCrEt{}", random_hex(16)),
            };
            let out = Command::new(script())
                .args(["up", "--dir"])
                .arg(server.dir.path())
                .args(["--port", &port.to_string()])
                .env("ROOT_ACCESS_KEY_ID", &server.access)
                .env("ROOT_SECRET_ACCESS_KEY", &server.secret)
                .output()
                .unwrap();
            match out.status.code() {
                Some(77) => {
                    super::skip(&String::from_utf8_lossy(&out.stderr));
                    return None;
                }
                Some(75) => continue,
                _ => {}
            }
            assert!(out.status.success(), "testbed/s3 up: {}", String::from_utf8_lossy(&out.stderr));
            let location = iosurvey::s3::Location::parse(&server.url("")).unwrap();
            let credentials = iosurvey::s3::Credentials::new(&server.access, &server.secret, None);
            iosurvey::s3::Client::new(&location, credentials, &iosurvey::s3::Options::default())
                .unwrap()
                .create_bucket()
                .unwrap();
            return Some(server);
        }
        panic!("testbed/s3 up: five ports in a row were taken before the server could listen");
    }

    /// `URL/BUCKET/PREFIX`, as `--s3` and a campaign's `s3 =` take it.
    pub fn url(&self, prefix: &str) -> String {
        format!("http://127.0.0.1:{}/{BUCKET}/{prefix}", self.port)
    }

    /// `cmd` with the server's keys, and no other, in its AWS environment.
    pub fn keyed<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        for var in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SHARED_CREDENTIALS_FILE", "AWS_REGION"] {
            cmd.env_remove(var);
        }
        cmd.env("AWS_ACCESS_KEY_ID", &self.access).env("AWS_SECRET_ACCESS_KEY", &self.secret)
    }

    /// Where the server keeps the objects under `prefix` on disk.
    pub fn backing(&self, prefix: &str) -> PathBuf {
        self.dir.path().join("root").join(BUCKET).join(prefix)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = Command::new(script()).args(["down", "--dir"]).arg(self.dir.path()).output();
    }
}
