//! A shell command run for a study (a campaign's hook, a run's event): `sh -c` in a process
//! group of its own, its output's end kept, a stop ending the whole group.

use crate::cancel::Cancel;
use crate::record::HookRun;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// How much of a hook's output is kept: its end, where a failure says why.
pub const KEPT_OUTPUT: usize = 64 * 1024;

/// How long a command asked to stop (SIGTERM) has before it is killed (SIGKILL).
const KILL_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

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
        let mut stopped: Option<std::time::Instant> = None;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            match stopped {
                None if cancel.is_cancelled() => {
                    crate::sys::proc::terminate_group(child.id(), false);
                    stopped = Some(std::time::Instant::now());
                }
                // A group that ignores SIGTERM is killed: nothing holds the caller for ever.
                Some(at) if at.elapsed() > KILL_AFTER => crate::sys::proc::terminate_group(child.id(), true),
                _ => {}
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let stopped = stopped.is_some();
        let waited = drained.recv_timeout(DRAIN).is_ok();
        Ok((status.code(), stopped, waited))
    });
    let mut output = String::from_utf8_lossy(&kept.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
    let was_stopped = matches!(spawned, Ok((_, true, _)));
    let status = match spawned {
        Ok((code, stopped, waited)) => {
            if stopped {
                output.push_str("\n[iosurvey: stopped: a stop signal, or the end of the run it was an event of]");
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
        stopped: was_stopped,
    }
}

/// Words as one line a shell reads back into the same words: each as it is where it holds
/// nothing a shell would read otherwise, else in single quotes.
pub fn words(argv: &[String]) -> String {
    let plain =
        |w: &String| !w.is_empty() && w.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_./=:,@+%".contains(&c));
    argv.iter()
        .map(|w| match plain(w) {
            true => w.clone(),
            false => format!("'{}'", w.replace('\'', r"'\''")),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_ignores_the_stop_is_killed_and_said_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let cancel = Cancel::new();
        let stop = cancel.clone();
        let marker = ready.clone();
        // Asked to stop only once the command ignores SIGTERM (it says so through the file).
        let asker = std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !marker.exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            stop.cancel();
        });
        let started = std::time::Instant::now();
        let command = format!("trap '' TERM; touch {}; sleep 60", ready.display());
        let ran = run("event", &command, &[], &cancel);
        asker.join().unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(45), "killed long before its sleep ends");
        assert!(ran.stopped && ran.status.is_none(), "{ran:?}");
        assert!(ran.output.contains("[iosurvey: stopped"), "{}", ran.output);
        let ok = run("event", "echo hi; exit 3", &[], &Cancel::new());
        assert_eq!((ok.status, ok.stopped, ok.output.trim()), (Some(3), false, "hi"));
    }
}
