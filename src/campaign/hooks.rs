//! A campaign's hooks: shell commands run around runs and studies, on the lead or once on
//! every node, with the point's facts in their environment. What each printed (its last
//! 64 KiB) and how it ended are kept.

use super::{Hook, HookPlace};
use crate::engine::Cancel;
use crate::team::{Member, Team};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// How much of a hook's output is kept: its end, where a failure says why.
pub const KEPT_OUTPUT: usize = 64 * 1024;

/// One hook as it ran on one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    /// before-run, after-run, before-study or after-study.
    pub hook: String,
    /// The command.
    pub command: String,
    /// The node it ran on.
    pub node: String,
    /// Its exit status; none when a signal ended it or it could not start.
    pub status: Option<i32>,
    /// The end of what it printed (standard output and error together).
    pub output: String,
    /// How long it took.
    pub secs: f64,
}

impl HookRun {
    /// Whether it ended with status 0.
    pub fn ok(&self) -> bool {
        self.status == Some(0)
    }

    /// How it ended, in words.
    pub fn ending(&self) -> String {
        match self.status {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal, or could not start".into(),
        }
    }
}

/// How long the output of a hook that has ended is waited for: a process it started in the
/// background may hold the pipe for ever (a collector), and is not waited for.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `command` with `sh -c` in a process group of its own, `env` added to the
/// environment; its output's last [`KEPT_OUTPUT`] bytes are kept. A stop asked for through
/// `cancel` ends the whole group (SIGTERM): a hook that hangs cannot hold a campaign.
pub fn run(name: &str, command: &str, env: &[(String, String)], cancel: &Cancel) -> HookRun {
    use std::os::unix::process::CommandExt;
    let started = std::time::Instant::now();
    let node = crate::env::hostname();
    let kept = Arc::new(Mutex::new(Vec::<u8>::new()));
    let spawned = crate::sys::proc::pipe().and_then(|(mut reader, writer)| {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer.try_clone()?))
            .stderr(Stdio::from(writer))
            .process_group(0)
            .spawn()?;
        let (done, drained) = std::sync::mpsc::channel();
        let sink = kept.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut kept = sink.lock().unwrap_or_else(|p| p.into_inner());
                        kept.extend_from_slice(&buf[..n]);
                        if kept.len() > KEPT_OUTPUT {
                            let extra = kept.len() - KEPT_OUTPUT;
                            kept.drain(..extra);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        });
        let mut stopped = false;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if cancel.is_cancelled() && !stopped {
                crate::sys::proc::terminate_group(child.id());
                stopped = true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let waited = drained.recv_timeout(DRAIN).is_ok();
        Ok((status.code(), stopped, waited))
    });
    let mut output = String::from_utf8_lossy(&kept.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
    let status = match spawned {
        Ok((code, stopped, waited)) => {
            if stopped {
                output.push_str("\n[iosurvey: stopped by a signal to the campaign]");
            }
            if !waited {
                output.push_str("\n[iosurvey: a process the hook left running holds its output; not waited for]");
            }
            code
        }
        Err(e) => {
            output = format!("could not start sh: {e}");
            None
        }
    };
    HookRun {
        hook: name.to_string(),
        command: command.to_string(),
        node,
        status,
        output,
        secs: started.elapsed().as_secs_f64(),
    }
}

/// Runs `hook` where it says: on the lead, or on the first process of every node. Every
/// process calls it; the lead gets every node's run, in node order, the others nothing.
pub fn run_hook<T: Team>(team: &T, name: &str, hook: &Hook, env: &[(String, String)], cancel: &Cancel) -> Vec<HookRun> {
    let nodes = team.process_nodes();
    let me = team.process();
    let first_of_node = nodes.iter().position(|&n| n == nodes[me]) == Some(me);
    let mine = match hook.place {
        HookPlace::Lead => (me == 0).then(|| run(name, &hook.command, env, cancel)),
        HookPlace::EveryNode => first_of_node.then(|| run(name, &hook.command, env, cancel)),
    };
    if team.processes() == 1 {
        return mine.into_iter().collect();
    }
    let member = team.members(1).pop().expect("one member for one thread");
    member.gather(mine).map(|all| all.into_iter().flatten().collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_sees_its_environment_and_its_output_and_status_are_kept() {
        let env = vec![("IOSURVEY_TARGET".to_string(), "f800".to_string())];
        let r = run("before-run", "echo target=$IOSURVEY_TARGET; echo oops >&2; exit 3", &env, &Cancel::new());
        assert_eq!(r.status, Some(3));
        assert!(!r.ok());
        assert!(r.output.contains("target=f800") && r.output.contains("oops"), "{}", r.output);
        assert_eq!(r.hook, "before-run");
    }

    #[test]
    fn only_the_end_of_a_long_output_is_kept() {
        let r = run("after-run", "head -c 300000 /dev/zero | tr '\\0' a; echo END", &[], &Cancel::new());
        assert!(r.ok());
        assert_eq!(r.output.len(), KEPT_OUTPUT);
        assert!(r.output.ends_with("END\n"));
    }

    #[test]
    fn a_stop_ends_a_hanging_hook_and_its_children_and_a_background_child_is_not_waited_for() {
        // A stop asked for before the hook starts: its group is ended at the first look.
        let cancel = Cancel::new();
        cancel.cancel();
        let r = run("before-run", "sleep 600 & sleep 600", &[], &cancel);
        assert!(r.secs < 5.0, "stopped in {} s", r.secs);
        assert!(!r.ok() && r.output.contains("stopped by a signal"), "{r:?}");
        // A collector left running in the background: the hook ends when its shell does.
        let r = run("before-study", "sleep 4 & echo started", &[], &Cancel::new());
        assert!(r.ok() && r.output.starts_with("started"), "{r:?}");
        assert!(r.secs < 5.0 && r.output.contains("not waited for"), "{r:?}");
    }
}
