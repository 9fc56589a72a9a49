//! mdtest's command line as the `iosurvey meta` command it means. `iosurvey meta` already
//! takes mdtest's letters with mdtest's meanings; what differs is mdtest's defaults (one
//! directory shared by all tasks unless -u) and the flags `meta` spells otherwise.

use super::{not_taken, note, number, read, size, CompatError, Flag, Native, Own};

const TOOL: &str = "mdtest";

const FLAGS: &[Flag] = &[
    Flag { name: "a", value: true },
    Flag { name: "b", value: true },
    Flag { name: "B", value: false },
    Flag { name: "c", value: false },
    Flag { name: "C", value: false },
    Flag { name: "d", value: true },
    Flag { name: "D", value: false },
    Flag { name: "e", value: true },
    Flag { name: "E", value: false },
    Flag { name: "f", value: true },
    Flag { name: "F", value: false },
    Flag { name: "G", value: true },
    Flag { name: "h", value: false },
    Flag { name: "i", value: true },
    Flag { name: "I", value: true },
    Flag { name: "k", value: false },
    Flag { name: "l", value: true },
    Flag { name: "L", value: false },
    Flag { name: "n", value: true },
    Flag { name: "N", value: true },
    Flag { name: "p", value: true },
    Flag { name: "P", value: false },
    Flag { name: "r", value: false },
    Flag { name: "R", value: false },
    Flag { name: "s", value: true },
    Flag { name: "S", value: false },
    Flag { name: "t", value: false },
    Flag { name: "T", value: false },
    Flag { name: "u", value: false },
    Flag { name: "v", value: false },
    Flag { name: "V", value: true },
    Flag { name: "w", value: true },
    Flag { name: "W", value: true },
    Flag { name: "x", value: true },
    Flag { name: "X", value: false },
    Flag { name: "y", value: false },
    Flag { name: "Y", value: false },
    Flag { name: "z", value: true },
    Flag { name: "Z", value: false },
];

/// What mdtest's output needs beyond the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// `-d`, as given (the first of several joined by '@').
    pub dir: String,
    /// `-P`: print the times as well as the rates.
    pub times: bool,
    /// The command line as typed.
    pub command_line: String,
}

fn refuse(what: String, hint: &str) -> CompatError {
    CompatError::new(TOOL, what, hint)
}

/// Reads an mdtest command line (without the program name) into the `iosurvey meta` command.
pub fn parse(args: &[String]) -> Result<Native<Settings>, CompatError> {
    let mut own = Own::default();
    let typed = read(TOOL, args, FLAGS, &mut own)?;
    if own.engine.is_some() {
        return Err(refuse("--engine: a metadata run makes its calls itself".into(), "leave --engine out"));
    }
    let mut notes = Vec::new();
    let mut settings = Settings { dir: "./out".into(), command_line: args.join(" "), ..Settings::default() };
    let mut meta: Vec<String> = Vec::new();
    let mut unique = false;
    let (mut items, mut per_dir) = (None::<u64>, None::<u64>);
    let mut put = |flag: &str, value: Option<String>| {
        meta.push(flag.to_string());
        meta.extend(value);
    };
    for flag in &typed {
        let shown = flag.shown();
        match flag.name {
            "a" => match flag.value.as_deref().map(str::to_ascii_uppercase).as_deref() {
                Some("POSIX") => {}
                _ => {
                    return Err(refuse(
                        format!("{shown}: iosurvey's metadata calls are POSIX's"),
                        "give -a POSIX or leave -a out",
                    ))
                }
            },
            "d" => settings.dir = flag.value.clone().unwrap_or_default(),
            "n" => items = Some(number(TOOL, flag)?),
            "I" => per_dir = Some(number(TOOL, flag)?),
            "u" => unique = true,
            "z" | "b" | "N" | "i" => put(&format!("-{}", flag.name), Some(number::<u64>(TOOL, flag)?.to_string())),
            "w" | "e" => put(&format!("-{}", flag.name), Some(size(TOOL, flag)?.to_string())),
            "W" => put("-W", Some(number::<u64>(TOOL, flag)?.to_string())),
            "L" | "F" | "D" | "C" | "T" | "E" | "r" | "X" | "Y" => put(&format!("-{}", flag.name), None),
            "y" => {
                note(&mut notes, format!("{shown}: iosurvey syncs the file system at each phase's end (-Y) rather than each file after its write"));
                put("-Y", None);
            }
            "P" => settings.times = true,
            "v" | "V" => {}
            "B" => note(
                &mut notes,
                format!("{shown}: iosurvey's tasks always meet at each phase's start, as its timing needs"),
            ),
            "Z" => note(&mut notes, format!("{shown}: the summary gives rates; -P adds the times")),
            "t" => note(&mut notes, format!("{shown}: every run works in a directory of its own below -d already")),
            "S" => return Err(not_taken(TOOL, flag, "iosurvey run --access shared for one shared file")),
            "R" => return Err(not_taken(TOOL, flag, "-N SHIFT (iosurvey meta --shift) to visit another task's items")),
            "s" | "f" | "l" => return Err(not_taken(TOOL, flag, "iosurvey meta --clients LIST sweeps the task count")),
            "c" | "k" | "G" | "p" | "x" => return Err(not_taken(TOOL, flag, "see 'iosurvey mdtest --help'")),
            "h" => return Err(refuse("-h: the help is 'iosurvey mdtest --help'".into(), "run iosurvey mdtest --help")),
            _ => return Err(not_taken(TOOL, flag, "see 'iosurvey mdtest --help'")),
        }
    }
    let args = command(&settings.dir, (items, per_dir), unique, meta, &own)?;
    note(&mut notes, "mdtest's directory rename phase is not measured".into());
    Native::read(TOOL, vec![args], notes, settings)
}

/// The `iosurvey meta` command line the settings read mean.
fn command(
    dir: &str,
    (items, per_dir): (Option<u64>, Option<u64>),
    unique: bool,
    meta: Vec<String>,
    own: &Own,
) -> Result<Vec<String>, CompatError> {
    if items.is_some() && per_dir.is_some() {
        return Err(refuse(
            "-n and -I both set the items; mdtest takes one of them".into(),
            "give -n ITEMS or -I ITEMS_PER_DIR",
        ));
    }
    let mut args = vec!["meta".to_string(), "-d".into(), dir.to_string(), "--force".into()];
    match (items, per_dir) {
        (_, Some(per)) => args.extend(["-I".into(), per.to_string()]),
        (Some(n), None) => args.extend(["-n".into(), n.to_string()]),
        // mdtest's default is no items at all: only the tree's phases.
        (None, None) => {
            return Err(refuse(
                "needs -n ITEMS or -I ITEMS_PER_DIR: without them mdtest makes no items".into(),
                "give -n, e.g. -n 1000",
            ))
        }
    }
    if !unique {
        args.push("--shared-dir".into());
    }
    args.extend(meta);
    args.extend(own.args());
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str) -> Result<String, CompatError> {
        let words = crate::compat::words(line);
        parse(&words).map(|n| n.commands[0].join(" "))
    }

    #[test]
    fn without_u_the_tasks_share_one_directory_as_in_mdtest() {
        assert_eq!(command("-n 100 -d /m").unwrap(), "meta -d /m --force -n 100 --shared-dir");
        assert_eq!(command("-n 100 -d /m -u").unwrap(), "meta -d /m --force -n 100");
    }

    #[test]
    fn mdtests_letters_pass_to_meta_with_their_values() {
        let c = command("-u -d /a@/b -z 2 -b 3 -I 10 -L -F -w 3901 -e 3901 -N 4 -i 2 -W 5 -X -Y -C -T -E -r").unwrap();
        assert_eq!(c, "meta -d /a@/b --force -I 10 -z 2 -b 3 -L -F -w 3901 -e 3901 -N 4 -i 2 -W 5 -X -Y -C -T -E -r");
    }

    #[test]
    fn what_meta_cannot_do_is_refused_with_its_nearest_option() {
        assert!(command("-n 1 -S").unwrap_err().hint.contains("--access shared"));
        assert!(command("-n 1 -R").unwrap_err().hint.contains("-N"));
        assert!(command("-d /m").unwrap_err().what.contains("-n"));
        assert!(command("-n 1 -I 2").unwrap_err().what.contains("one of them"));
        assert!(command("-n 1 -a DFS").is_err());
    }

    #[test]
    fn y_is_noted_and_p_kept_for_the_output() {
        let words = crate::compat::words("-n 5 -y -P");
        let n = parse(&words).unwrap();
        assert!(n.settings.times);
        assert!(n.notes.iter().any(|x| x.starts_with("-y")));
        assert!(n.commands[0].contains(&"-Y".to_string()));
    }
}
