//! A real S3 server for the tests: versitygw over a POSIX directory, started by testbed/s3 on
//! loopback, one per test, and the test's ways of driving it and iosurvey against it. A test
//! takes it with `#[path = "common/s3.rs"] mod s3bed;` beside `mod common;`.
#![allow(dead_code)]

use crate::common::*;
use iosurvey::s3::{Client, Credentials, Location, Options};
use std::ffi::OsStr;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const BUCKET: &str = "iosv";

pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbed/s3")
}

/// A random hex string of `n` bytes.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes)).unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A versitygw of this test's own: its directory, port and root keys; stopped on drop.
pub struct Server {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub access: String,
    pub secret: String,
    pub pid: i32,
    /// For https: the CA that signed its certificate, the certificate chain and its key.
    pub tls: Option<Tls>,
}

/// A server's https set-up.
#[derive(Clone)]
pub struct Tls {
    pub ca: PathBuf,
    pub chain: PathBuf,
    pub key: PathBuf,
}

/// How `testbed/s3 up` ended.
pub enum Up {
    Ready,
    Skip,
    PortTaken,
}

impl Server {
    /// Starts a server, or skips the test (`None`) where testbed/s3 says it cannot run.
    pub fn start() -> Option<Server> {
        Server::start_with(None)
    }

    /// Starts a server, over https when `tls` is given.
    pub fn start_with(tls: Option<Tls>) -> Option<Server> {
        // A port the system just handed out and took back is free unless another process
        // (the server of a test running beside this one) takes it in the next instant; then
        // `up` says so (75) and another port is tried, never another test's server used.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut server = Server {
                dir: tempfile::tempdir().unwrap(),
                port,
                access: format!("AK{}", random_hex(8)),
                secret: format!("SeCrEt{}", random_hex(16)),
                pid: 0,
                tls: tls.clone(),
            };
            match server.up() {
                Up::Ready => {
                    server.client("").create_bucket().unwrap();
                    return Some(server);
                }
                Up::Skip => return None,
                Up::PortTaken => continue,
            }
        }
        panic!("testbed/s3 up: five ports in a row were taken before the server could listen");
    }

    pub fn up(&mut self) -> Up {
        let out = Command::new(script())
            .args(["up", "--dir"])
            .arg(self.dir.path())
            .args(["--port", &self.port.to_string()])
            .args(
                self.tls
                    .iter()
                    .flat_map(|t| [OsStr::new("--cert"), t.chain.as_os_str(), OsStr::new("--key"), t.key.as_os_str()]),
            )
            .env("ROOT_ACCESS_KEY_ID", &self.access)
            .env("ROOT_SECRET_ACCESS_KEY", &self.secret)
            .output()
            .unwrap();
        match out.status.code() {
            Some(77) => {
                skip(&String::from_utf8_lossy(&out.stderr));
                return Up::Skip;
            }
            Some(75) => return Up::PortTaken,
            _ => {}
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "testbed/s3 up: {}{}", stdout, String::from_utf8_lossy(&out.stderr));
        self.pid = stdout.lines().find_map(|l| l.strip_prefix("S3_PID=")).expect("S3_PID line").parse().unwrap();
        Up::Ready
    }

    pub fn location(&self, prefix: &str) -> Location {
        Location::parse(&self.url(prefix)).unwrap()
    }

    pub fn credentials(&self) -> Credentials {
        Credentials::new(&self.access, &self.secret, None)
    }

    pub fn client_with(&self, prefix: &str, options: &Options) -> Client {
        let ca_bundle = options.ca_bundle.clone().or_else(|| self.tls.as_ref().map(|t| t.ca.clone()));
        Client::new(&self.location(prefix), self.credentials(), &Options { ca_bundle, ..options.clone() }).unwrap()
    }

    pub fn client(&self, prefix: &str) -> Client {
        self.client_with(prefix, &Options::default())
    }

    /// Where versitygw keeps `key` on disk.
    pub fn backing_file(&self, key: &str) -> PathBuf {
        self.dir.path().join("root").join(BUCKET).join(key)
    }

    pub fn signal(&self, sig: i32) {
        // kill(1) of the server this test started, by its pid: never a name.
        let ok = Command::new("kill").arg(format!("-{sig}")).arg(self.pid.to_string()).status().unwrap();
        assert!(ok.success());
    }

    /// Stops the server, every thread of it.
    pub fn freeze(&self) {
        self.signal(libc::SIGSTOP);
        wait_stopped(self.pid as u32);
    }

    /// Waits until the server has closed every connection a killed client left (its side in
    /// ESTABLISHED or CLOSE_WAIT): only then has it finished, or dropped, the requests in flight,
    /// and an object they were writing has landed or never will.
    pub fn wait_for_connections_closed(&self) {
        let port = format!(":{:04X}", self.port);
        wait_until("the server to close the killed client's connections", 20, || {
            !std::fs::read_to_string("/proc/net/tcp").unwrap().lines().skip(1).any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f[1].ends_with(&port) && (f[3] == "01" || f[3] == "08")
            })
        });
    }

    /// Waits until a connection to the server holds bytes it has not read: a request in flight.
    pub fn wait_for_request_in_flight(&self) {
        let port = format!(":{:04X}", self.port);
        wait_until("a request in flight to the server", 20, || {
            std::fs::read_to_string("/proc/net/tcp").unwrap().lines().skip(1).any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let rx = f[4].split(':').nth(1).map_or(0, |q| u64::from_str_radix(q, 16).unwrap_or(0));
                f[1].ends_with(&port) && f[3] == "01" && rx > 0
            })
        });
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(script()).args(["down", "--dir"]).arg(self.dir.path()).output();
    }
}

impl Server {
    /// The URL of `prefix` in the test's bucket, as `--s3` takes it.
    pub fn url(&self, prefix: &str) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}/{BUCKET}/{prefix}", self.port)
    }

    /// `cmd` with the server's keys, and no other, in its AWS environment, as a user's would be.
    pub fn keyed<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        for var in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SHARED_CREDENTIALS_FILE", "AWS_REGION", "AWS_CA_BUNDLE"] {
            cmd.env_remove(var);
        }
        cmd.env("AWS_ACCESS_KEY_ID", &self.access).env("AWS_SECRET_ACCESS_KEY", &self.secret)
    }

    /// The binary with the server's keys in the AWS environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_iosurvey"));
        self.keyed(&mut cmd);
        cmd
    }

    /// Runs the binary as [`Server::command`] gives it.
    pub fn iosurvey(&self, args: &[&str]) -> Out {
        outcome(self.command().args(args).output().expect("start iosurvey"))
    }
}

impl Server {
    /// Starts a run under `prefix` long enough to be still uploading when the test acts, and
    /// returns once it is in its data phase (an object of its own stored: its target taken, its
    /// holder object put) with a request in flight.
    pub fn spawn_long_run(&self, prefix: &str, db: &str, stderr: std::process::Stdio) -> std::process::Child {
        let mut cmd = self.command();
        let url = self.url(prefix);
        let args = ["run", "--s3", &url, "--block", "5m", "--transfer", "5m", "--segments", "8", "--iterations", "200"];
        let child = cmd.args(args).args(["--db", db, "-q"]).stderr(stderr).spawn().unwrap();
        let client = self.client(prefix);
        wait_until("an object of the run stored", 20, || {
            client.list(&format!("{prefix}/")).unwrap_or_default().iter().any(|o| !o.key.ends_with("/.holder"))
        });
        self.wait_for_request_in_flight();
        child
    }
}

/// The stored run of a `--json` file.
pub fn record(json: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// The janitor a run's lead `lead` started (its child whose command line ends with `janitor`).
pub fn janitor_of(lead: u32) -> u32 {
    let parent = |pid: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
    };
    let cmdline = |pid: u32| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|&p| parent(p) == Some(lead) && cmdline(p).strip_suffix(b"\0").is_some_and(|c| c.ends_with(b"janitor")))
        .expect("the lead's janitor")
}

/// A test's server, its scratch directory and a store in it: the set-up of a test that runs
/// iosurvey on the bucket and reads back what the store kept.
pub struct S3Bed {
    pub server: Server,
    pub dir: tempfile::TempDir,
    pub db: String,
}

impl S3Bed {
    /// A server and a store not yet made, or `None` where the test is skipped (as
    /// [`Server::start`] says).
    pub fn start() -> Option<S3Bed> {
        let server = Server::start()?;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s3.db").display().to_string();
        Some(S3Bed { server, dir, db })
    }

    /// The binary with `args`, on the bed's store.
    pub fn iosurvey(&self, args: &[&str]) -> Out {
        self.server.iosurvey(&[args, &["--db", &self.db]].concat())
    }

    /// `run --s3` on the bucket under `prefix` with `args`, which must succeed: what it said,
    /// and the record the store keeps of it ([`S3Bed::shown`]).
    pub fn run(&self, prefix: &str, args: &[&str]) -> (Out, serde_json::Value) {
        let url = self.server.url(prefix);
        let out = self.iosurvey(&[&["run", "--s3", &url][..], args].concat());
        assert_eq!(out.code, 0, "{args:?}: {}{}", out.stdout, out.stderr);
        let record = self.shown(&self.last_id());
        (out, record)
    }

    /// The record of run `id`, as `show --json` prints it.
    pub fn shown(&self, id: &str) -> serde_json::Value {
        let out = self.iosurvey(&["show", id, "--json"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    }

    /// The id of the newest run in the store.
    pub fn last_id(&self) -> String {
        let out = self.iosurvey(&["ls", "--json"]);
        let runs: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        runs.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).max().unwrap().to_string()
    }
}
