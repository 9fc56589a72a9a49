//! The library's hints, spelled with this command line's flag names. (A front end that takes
//! IOR's or IOzone's options spells the same hints with theirs.)

use iosurvey::spec::{Hint, Setting};

/// The flag of a setting on iosurvey's command line.
fn flag(s: Setting) -> &'static str {
    match s {
        Setting::Transfer => "--transfer",
        Setting::Verify => "--verify",
        Setting::Items => "--items",
        Setting::Tree => "--depth and --branch",
        Setting::ItemBytes => "--write-bytes and --read-bytes",
        Setting::Block => "--block",
        Setting::Segments => "--segments",
        Setting::Total => "--total",
        Setting::Tasks => "--tasks",
        Setting::Iterations => "--iterations",
        Setting::Ops => "--op",
        Setting::Pattern => "--pattern",
        Setting::Stonewall => "--stonewall",
        Setting::Iodepth => "--iodepth",
        Setting::Engine => "--engine",
        Setting::Interval => "--interval",
        Setting::Fsync => "--fsync and --fsync-each",
        Setting::Direct => "--direct",
        Setting::Dir => "--dir",
        Setting::Force => "--force",
        Setting::Keep => "--keep",
        Setting::NoSpaceCheck => "--no-space-check",
        Setting::Db => "--db",
    }
}

/// A hint in words, with flags.
pub fn spell(h: &Hint) -> String {
    match h {
        Hint::Say(text) => text.clone(),
        Hint::Because(why, what) => format!("{} {why}", spell(what)),
        // A value ("9216") is used; a description ("an empty directory") is given.
        Hint::Use(s, v) if v.contains(' ') => format!("give {} {v}", flag(*s)),
        Hint::Use(s, v) => format!("use {} {v}", flag(*s)),
        Hint::AtLeast(s, v) => format!("give {} at least {v}", flag(*s)),
        Hint::AtMost(s, v) => format!("give {} at most {v}", flag(*s)),
        Hint::MultipleOf(s, v) => format!("give {} a multiple of {v}", flag(*s)),
        // A list setting takes the value in; any other takes it as its argument.
        Hint::Add(Setting::Ops, Some(v)) => format!("add {v} to {}", flag(Setting::Ops)),
        Hint::Add(s, Some(v)) => format!("add {} {v}", flag(*s)),
        Hint::Add(s, None) => format!("add {}", flag(*s)),
        Hint::Drop(s) => format!("drop {}", flag(*s)),
        Hint::Lower(list) => {
            let flags: Vec<&str> = list.iter().map(|s| flag(*s)).collect();
            match flags.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("lower {} or {last}", rest.join(", ")),
                _ => format!("lower {}", flags.join("")),
            }
        }
        Hint::Either(a, b) => format!("{} or {}", spell(a), spell(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_spelled_with_flags() {
        assert_eq!(spell(&Hint::Use(Setting::Block, "9216".into())), "use --block 9216");
        assert_eq!(spell(&Hint::Use(Setting::Dir, "an empty directory".into())), "give --dir an empty directory");
        assert_eq!(
            spell(&Hint::Lower(vec![Setting::Block, Setting::Segments, Setting::Tasks])),
            "lower --block, --segments or --tasks"
        );
        let either =
            Hint::Either(Box::new(Hint::Add(Setting::Ops, Some("write".into()))), Box::new(Hint::Drop(Setting::Fsync)));
        assert_eq!(spell(&either), "add write to --op or drop --fsync and --fsync-each");
        assert_eq!(spell(&Hint::Add(Setting::Stonewall, Some("SECONDS".into()))), "add --stonewall SECONDS");
    }
}
