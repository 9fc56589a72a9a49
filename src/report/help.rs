//! The command line's help laid out for the terminal: the top-level help grouped by what a
//! user does with each command, every help and its examples wrapped at the terminal's width,
//! and the front ends (`iosurvey ior ...`) offered as commands. The binary's clap tree goes in
//! and comes out laid out; nothing here parses.

/// What a user does with each command, in the order the help lists them: the top-level help
/// is grouped by these, not by the order the commands are declared in.
const GROUPS: &[(&str, &[&str])] = &[
    ("Measure", &["survey", "run", "meta", "matrix", "io500", "targets", "net", "train", "checkpoint"]),
    ("Keep and compare", &["ls", "show", "compare", "import", "export", "merge"]),
    ("Report", &["report"]),
    ("Campaigns (a whole evaluation from one file)", &["campaign"]),
    ("Other tools' command lines, run by iosurvey", &["ior", "mdtest", "iozone"]),
    ("Set up", &["engines", "completions", "manpages", "help"]),
];

/// The front ends (`iosurvey ior ...`) as commands of the tree, so that the help and the
/// completions offer them; their words are read by `compat` before clap sees them.
pub fn front_ends(cli: clap::Command) -> clap::Command {
    let about = [
        ("ior", "IOR's command line as it is, run natively, IOR's output ('iosurvey ior --help')"),
        ("mdtest", "mdtest's command line as it is, run as meta, mdtest's SUMMARY table"),
        ("iozone", "IOzone's command line as it is, run as matrix, IOzone's report"),
    ];
    about.into_iter().fold(cli, |cli, (name, about)| {
        cli.subcommand(clap::Command::new(name).about(about).disable_help_flag(true).arg(
            clap::Arg::new("args").num_args(0..).trailing_var_arg(true).allow_hyphen_values(true).value_name("OPTIONS"),
        ))
    })
}

/// The tree laid out for the terminal: the top-level help grouped by [`GROUPS`], every help
/// wrapped at `width` (the terminal's, when known), examples included.
pub fn fitted(cli: clap::Command, width: Option<usize>) -> clap::Command {
    let grouped = grouped_help(&cli, width.unwrap_or(100));
    let mut cli = cli.help_template(grouped);
    if let Some(w) = width {
        cli = wrapped_examples(cli, w);
    }
    cli
}

/// A command (and its subcommands) with each line of its examples wrapped at `width`, the
/// rest of a line indented under its start.
fn wrapped_examples(c: clap::Command, width: usize) -> clap::Command {
    let mut c = c.term_width(width);
    if let Some(after) = c.get_after_help().map(|t| t.to_string()) {
        let lines: Vec<String> = after
            .lines()
            .map(|l| {
                if l.chars().count() <= width {
                    // A line that fits keeps its own alignment.
                    return l.to_string();
                }
                let lead = l.len() - l.trim_start().len();
                let body = super::wrap(l.trim_start(), width.saturating_sub(lead).max(20), 4);
                body.lines().map(|b| format!("{}{b}", &l[..lead])).collect::<Vec<_>>().join("\n")
            })
            .collect();
        c = c.after_help(lines.join("\n"));
    }
    let names: Vec<String> = c.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for name in names {
        c = c.mut_subcommand(name, |s| wrapped_examples(s, width));
    }
    c
}

/// The top-level help's template: the commands a user sees, under what they are for, each
/// with the first sentence of its own about text (so the list never drifts from the
/// commands); hidden ones left out.
fn grouped_help(cli: &clap::Command, width: usize) -> String {
    let shown: Vec<&clap::Command> = cli.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    let pad = shown.iter().map(|c| c.get_name().len()).max().unwrap_or(0).max(4) + 4;
    let line = |name: &str, about: &str| {
        let body = super::wrap(about, width.saturating_sub(pad).max(20), 0);
        let lines = body.lines().enumerate().map(|(k, l)| match k {
            0 => format!("  {name:<w$}{l}", w = pad - 2),
            _ => format!("{:pad$}{l}", ""),
        });
        lines.collect::<Vec<_>>().join("\n")
    };
    let mut groups = String::new();
    let mut listed: Vec<&str> = Vec::new();
    let section = |title: &str, names: Vec<&str>, groups: &mut String| {
        let rows: Vec<String> = names
            .iter()
            .filter_map(|n| {
                let about = match *n {
                    "help" => "Print this help, or a command's ('iosurvey help run')".to_string(),
                    _ => shown.iter().find(|c| c.get_name() == *n).and_then(|c| c.get_about())?.to_string(),
                };
                Some(line(n, first_sentence(&about)))
            })
            .collect();
        if !rows.is_empty() {
            *groups += &format!("{title}:\n{}\n\n", rows.join("\n"));
        }
    };
    for (title, names) in GROUPS {
        section(title, names.to_vec(), &mut groups);
        listed.extend(names.iter());
    }
    // A command no group names is still listed, never dropped from the help.
    let rest: Vec<&str> = shown.iter().map(|c| c.get_name()).filter(|n| !listed.contains(n)).collect();
    section("Other", rest, &mut groups);
    format!("{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{groups}Options:\n{{options}}{{after-help}}")
}

/// The text up to its first full stop that ends a sentence.
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let end = text.find(". ").or_else(|| text.find(".\n")).map_or(text.len(), |k| k);
    text[..end].trim_end_matches('.')
}
