//! A campaign's hooks: shell commands run around runs and studies, on the lead or once on
//! every node, with the point's facts in their environment. What each printed (its last
//! 64 KiB) and how it ended are kept.

use super::{Hook, HookPlace};
use crate::cancel::Cancel;
pub use crate::record::HookRun;
pub use crate::shell::{run, KEPT_OUTPUT};
use crate::team::{Member, Team};

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
        assert!(!r.ok() && r.stopped && r.output.contains("[iosurvey: stopped"), "{r:?}");
        // A collector left running in the background: the hook ends when its shell does.
        let r = run("before-study", "sleep 4 & echo started", &[], &Cancel::new());
        assert!(r.ok() && r.output.starts_with("started"), "{r:?}");
        assert!(r.secs < 5.0 && r.output.contains("not waited for"), "{r:?}");
    }
}
