//! A front end's command line around the tool's own reader: which tool a command line
//! speaks and its words, how hints name the tool's options, the files its line names, and
//! what a launch must be for IOzone's threads and its client list.

use super::{iozone, Native, Tool};
use crate::study::{Error, Study};
use crate::team::Team;
use std::ffi::OsString;

/// A front end's command line.
pub struct Invoked {
    /// The tool it speaks.
    pub tool: Tool,
    /// Its words after the tool's name, iosurvey's global options given before that name
    /// first among them.
    pub args: Vec<String>,
    /// `-q` before the tool's name: no progress bar.
    pub quiet: bool,
}

/// The front end the command line speaks, if it speaks one: the program's own name (a link
/// named ior), or iosurvey's first word after its global options (`iosurvey --db X ior ...`,
/// as every other command takes them).
pub fn invoked(args: &[OsString]) -> Option<Invoked> {
    let words: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    if let Some(tool) = words.first().and_then(|w| Tool::named(w)) {
        return Some(Invoked { tool, args: words[1..].to_vec(), quiet: false });
    }
    let (mut globals, mut quiet, mut at) = (Vec::new(), false, 1);
    while let Some(word) = words.get(at) {
        match word.as_str() {
            // Without its value, clap's parser says what is missing.
            "--db" => globals.extend(["--db".to_string(), words.get(at + 1)?.clone()]),
            w if w.starts_with("--db=") => globals.push(w.to_string()),
            "-q" | "--quiet" => quiet = true,
            _ => break,
        }
        at += if word == "--db" { 2 } else { 1 };
    }
    let tool =
        words.get(at).filter(|w| matches!(w.as_str(), "ior" | "mdtest" | "iozone")).and_then(|w| Tool::named(w))?;
    globals.extend(words[at + 1..].iter().cloned());
    Some(Invoked { tool, args: globals, quiet })
}

/// How hints about a front end's native commands name flags: as the tool does, and for
/// IOzone the one size typed (-s, -r) where it stands for both ends of a range.
pub fn spelling(tool: Tool, args: &[String]) -> Vec<(String, String)> {
    let typed = |letter: &str| args.iter().any(|a| a.starts_with(letter));
    tool.spelling()
        .iter()
        .map(|&(native, theirs)| {
            let theirs = match (tool, native) {
                (Tool::Iozone, "--min-file" | "--max-file") if typed("-s") => "-s",
                (Tool::Iozone, "--min-record" | "--max-record") if typed("-r") => "-r",
                _ => theirs,
            };
            (native.to_string(), theirs.to_string())
        })
        .collect()
}

/// Reads a file the tool's line names (an IOR script, an IOzone client list): a regular file
/// of at most 1 MiB of text.
pub fn small_file(path: &str) -> Result<String, String> {
    use crate::input::{read_text, Links};
    read_text(std::path::Path::new(path), 1 << 20, Links::Follow)
        .map(|(text, _)| text)
        .map_err(|e| format!("cannot read it: {e}"))
}

/// IOzone's threads over the ranks of a launch: each process runs its share as threads, so
/// the team holds the threads asked for, not that many per rank.
pub fn per_rank(mut native: Native<iozone::Settings>) -> Result<Native<iozone::Settings>, Error> {
    let Some((_, ranks)) = crate::team::launched_as_many(|v| std::env::var(v).ok()) else { return Ok(native) };
    for (study, words) in native.studies.iter_mut().zip(&mut native.commands) {
        let Study::Matrix(a) = study else { continue };
        let threads = a.tasks as u64;
        if threads % ranks != 0 {
            return Err(Error::refused(
                format!("iozone -t {threads} does not share evenly over the launch's {ranks} ranks"),
                "give -t a multiple of the ranks, e.g. -t equal to mpirun's -np",
            ));
        }
        a.tasks = (threads / ranks) as usize;
        // The native line says so too, for -v.
        if let Some(at) = words.iter().position(|w| w == "--tasks") {
            words[at + 1] = a.tasks.to_string();
        }
    }
    Ok(native)
}

/// Checks that IOzone's `-+m` list (a host per thread) is how this launch places its tasks:
/// iosurvey places task i on node i mod nodes, so the list's hosts must take turns in the
/// launch's node order; on one node every line must name one host.
pub fn clients_placed<T: Team>(clients: &[String], team: &T) -> Result<(), Error> {
    if clients.is_empty() {
        return Ok(());
    }
    let mut distinct: Vec<&String> = Vec::new();
    for c in clients {
        if !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    let hosts = team.hosts();
    let round_robin = clients.iter().enumerate().all(|(i, c)| c == distinct[i % distinct.len()]);
    let matches = distinct.len() == 1 && hosts.len() <= 1
        || round_robin && distinct.len() == hosts.len() && distinct.iter().zip(&hosts).all(|(a, b)| *a == b);
    if matches {
        return Ok(());
    }
    let list = distinct.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(",");
    Err(Error::refused(format!(
            "iozone -+m places {} threads on {} host(s) ({list}) but this launch runs on {} node(s) ({})",
            clients.len(),
            distinct.len(),
            hosts.len(),
            hosts.join(",")
        ), format!(
            "launch one rank per thread over those hosts in that order, e.g. mpirun --host {list} -np {} --map-by node iosurvey iozone ... (built with --features mpi)",
            clients.len()
        )))
}
