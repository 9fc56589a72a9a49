//! What a site needs to install iosurvey as a tool among others: `--version` that says which
//! code and which optional parts, shell completions and man pages, all from the same clap
//! definitions the commands are parsed with, so that they never drift from the commands.

use iosurvey::study::Error;
use std::ffi::OsString;
use std::path::Path;

/// The shells completions are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Whether the command line is `iosurvey --version` (clap's own `-V` stays the short form).
pub(super) fn asks_version(args: &[OsString]) -> bool {
    args.len() == 2 && args[1] == "--version"
}

/// The version, the commit it was built from, the optional parts and the MPI library: what a
/// site's module page and a bug report need.
pub(super) fn version() -> String {
    let engines = iosurvey::engine::backends::states(false);
    let engine = |name: &str| match engines.iter().find(|e| e.name == name) {
        Some(e) if e.available => format!("{name} (available here)"),
        Some(e) => format!("{name} (built in; not here: {})", e.reason.as_deref().unwrap_or("unavailable")),
        None => format!("{name} (not built)"),
    };
    format!(
        "iosurvey {} (commit {})\nfeatures: {}, {}, {}\nMPI library: {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("IOSURVEY_COMMIT"),
        mpi_feature(),
        engine("io_uring"),
        engine("libaio"),
        mpi_library()
    )
}

#[cfg(feature = "mpi")]
fn mpi_feature() -> &'static str {
    "mpi"
}

#[cfg(not(feature = "mpi"))]
fn mpi_feature() -> &'static str {
    "mpi (not built: cargo install --path . --features mpi)"
}

#[cfg(feature = "mpi")]
fn mpi_library() -> String {
    iosurvey::team::mpi::library()
}

#[cfg(not(feature = "mpi"))]
fn mpi_library() -> String {
    "none (a build without the mpi feature runs threads on one node)".into()
}

/// `iosurvey completions SHELL`: the script on standard output. Made whole first:
/// clap_complete panics on a write error, such as a reader that closed the pipe.
pub(super) fn completions(shell: Shell) -> Result<(), Error> {
    let mut cmd = super::visible_tree();
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iosurvey", &mut script);
    super::stdout::print(script);
    Ok(())
}

/// `iosurvey manpages DIR`: a page per command and subcommand (iosurvey-campaign-run.1), the
/// hidden ones left out; each written whole, never through a link or over the store.
pub(super) fn manpages(dir: &Path, db: &Path) -> Result<(), Error> {
    let hint = "give manpages a directory of its own, e.g. /usr/local/share/man/man1";
    super::output::folder(dir, "the man pages", hint)?;
    let mut pages = Vec::new();
    pages_of(built(), "iosurvey", "iosurvey", &mut pages)?;
    for (name, _) in &pages {
        super::output::check(&dir.join(name), db, "manpages")?;
    }
    for (name, text) in &pages {
        super::output::write(&dir.join(name), text, db, "manpages")?;
    }
    outln!("{} man pages in {} (man -M {} iosurvey)", pages.len(), dir.display(), man_root(dir).display());
    Ok(())
}

/// The parser with its global options (--db) handed down to every command, as a page shows
/// them.
fn built() -> clap::Command {
    let mut cmd = super::parser();
    cmd.build();
    cmd
}

/// The page of `cmd`, named `name` (iosurvey-campaign-run) and typed as `typed` (iosurvey
/// campaign run), then those of its subcommands.
fn pages_of(cmd: clap::Command, name: &str, typed: &str, pages: &mut Vec<(String, Vec<u8>)>) -> Result<(), Error> {
    let cmd = cmd.name(name.to_string()).bin_name(typed.to_string()).version(env!("CARGO_PKG_VERSION"));
    let mut text = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut text)
        .map_err(|e| Error::failed(format!("cannot render the man page of {name}: {e}"), "report this as a bug"))?;
    pages.push((format!("{name}.1"), text));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        let sub_name = sub.get_name();
        pages_of(sub.clone(), &format!("{name}-{sub_name}"), &format!("{typed} {sub_name}"), pages)?;
    }
    Ok(())
}

/// The directory `man -M` takes: the parent of a `man1` folder, else the folder itself; a
/// relative `man1` has the current directory for parent, which has no name of its own.
fn man_root(dir: &Path) -> &Path {
    match (dir.file_name().and_then(|n| n.to_str()), dir.parent()) {
        (Some("man1"), Some(parent)) if parent.as_os_str().is_empty() => Path::new("."),
        (Some("man1"), Some(parent)) => parent,
        _ => dir,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_long_flag_alone_asks_the_long_version() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(asks_version(&args(&["iosurvey", "--version"])));
        assert!(!asks_version(&args(&["iosurvey", "-V"])));
        assert!(!asks_version(&args(&["iosurvey", "run", "--version"])));
    }

    #[test]
    fn every_visible_command_gets_a_page_and_hidden_ones_none() {
        let mut pages = Vec::new();
        assert!(pages_of(built(), "iosurvey", "iosurvey", &mut pages).is_ok());
        let names: Vec<&str> = pages.iter().map(|p| p.0.as_str()).collect();
        for name in
            ["iosurvey.1", "iosurvey-run.1", "iosurvey-campaign.1", "iosurvey-campaign-emit.1", "iosurvey-merge.1"]
        {
            assert!(names.contains(&name), "no {name} in {names:?}");
        }
        assert!(!names.iter().any(|n| n.contains("janitor") || n.contains("team-timing")), "{names:?}");
        let run = &pages.iter().find(|p| p.0 == "iosurvey-run.1").unwrap().1;
        let run = String::from_utf8_lossy(run);
        assert!(run.contains(".TH iosurvey-run") && run.contains("transfer"), "{run}");
        assert!(
            run.contains("iosurvey run") && run.contains("\\-\\-db"),
            "typed as a command, with the global --db:\n{run}"
        );
    }

    #[test]
    fn man_takes_the_parent_of_man1() {
        assert_eq!(man_root(Path::new("/usr/share/man/man1")), Path::new("/usr/share/man"));
        assert_eq!(man_root(Path::new("/tmp/pages")), Path::new("/tmp/pages"));
        assert_eq!(man_root(Path::new("man1")), Path::new("."), "never an empty path");
        assert_eq!(man_root(Path::new("man1/")), Path::new("."));
        assert_eq!(man_root(Path::new("share/man1")), Path::new("share"));
    }
}
