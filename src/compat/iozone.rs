//! IOzone's command line as the `iosurvey matrix` command it means. Every IOzone run is a
//! file x record matrix: automatic mode (-a) a grid of them, a single test (-s, -r) one cell,
//! throughput mode (-t N) one cell with N tasks, each on its own file. IOzone's sizes without a
//! unit are KiB.

use super::{note, number, read, CompatError, Flag, Native, Own, Typed};

const TOOL: &str = "iozone";

const FLAGS: &[Flag] = &[
    Flag { name: "a", value: false },
    Flag { name: "A", value: false },
    Flag { name: "b", value: true },
    Flag { name: "B", value: false },
    Flag { name: "c", value: false },
    Flag { name: "C", value: false },
    Flag { name: "D", value: false },
    Flag { name: "e", value: false },
    Flag { name: "f", value: true },
    Flag { name: "F", value: true },
    Flag { name: "g", value: true },
    Flag { name: "G", value: false },
    Flag { name: "h", value: false },
    Flag { name: "i", value: true },
    Flag { name: "I", value: false },
    Flag { name: "j", value: true },
    Flag { name: "k", value: true },
    Flag { name: "K", value: false },
    Flag { name: "l", value: true },
    Flag { name: "L", value: true },
    Flag { name: "m", value: false },
    Flag { name: "M", value: false },
    Flag { name: "n", value: true },
    Flag { name: "N", value: false },
    Flag { name: "o", value: false },
    Flag { name: "O", value: false },
    Flag { name: "p", value: false },
    Flag { name: "P", value: true },
    Flag { name: "q", value: true },
    Flag { name: "Q", value: false },
    Flag { name: "r", value: true },
    Flag { name: "R", value: false },
    Flag { name: "s", value: true },
    Flag { name: "S", value: true },
    Flag { name: "t", value: true },
    Flag { name: "T", value: false },
    Flag { name: "u", value: true },
    Flag { name: "U", value: true },
    Flag { name: "v", value: false },
    Flag { name: "V", value: true },
    Flag { name: "w", value: false },
    Flag { name: "W", value: false },
    Flag { name: "x", value: false },
    Flag { name: "X", value: true },
    Flag { name: "y", value: true },
    Flag { name: "Y", value: true },
    Flag { name: "z", value: false },
    Flag { name: "Z", value: false },
    Flag { name: "+k", value: false },
    Flag { name: "+m", value: true },
    Flag { name: "+n", value: false },
    Flag { name: "+u", value: false },
    Flag { name: "+d", value: false },
];

/// What IOzone's output needs beyond the matrix.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// Automatic mode (-a, -A): the report's table of every cell.
    pub auto: bool,
    /// Throughput mode: this many tasks (-t).
    pub throughput: Option<usize>,
    /// `-O`: operations per second rather than KiB/s.
    pub ops: bool,
    /// `-R`: the Excel-style tables after the report.
    pub excel: bool,
    /// `-+m`: the host of each thread, in thread order.
    pub clients: Vec<String>,
    /// The tests asked for (-i), in IOzone's numbers.
    pub tests: Vec<u32>,
    /// `-+n`: no retests.
    pub no_retests: bool,
    /// `-x`: stonewalling off (IOzone's children stop counting when the first one is done
    /// unless it is given).
    pub no_stonewall: bool,
    /// The command line as typed.
    pub command_line: String,
}

fn refuse(what: String, hint: &str) -> CompatError {
    CompatError::new(TOOL, what, hint)
}

/// An IOzone size: KiB without a unit, else k, m, g as powers of two.
fn kib_size(flag: &Typed) -> Result<u64, CompatError> {
    let text = flag.value.as_deref().unwrap_or("").trim();
    let with_unit = match text.chars().last() {
        Some(c) if c.is_ascii_digit() => format!("{text}k"),
        _ => text.to_string(),
    };
    crate::units::parse_size(&with_unit).map_err(|e| {
        refuse(
            format!("{}: not a size: {}", flag.shown(), e.why),
            "give KiB, or a number with k, m or g, e.g. 4k or 32g",
        )
    })
}

/// iosurvey's kinds for IOzone's test number, and what it notes about it.
fn kinds_of(test: u32, no_retests: bool) -> Result<(Vec<&'static str>, Option<String>), CompatError> {
    let retest = |first: &'static str, again: &'static str| match no_retests {
        true => vec![first],
        false => vec![first, again],
    };
    Ok(match test {
        0 => (retest("write", "rewrite"), None),
        1 => (retest("read", "reread"), None),
        2 => (vec!["random-read", "random-write"], None),
        3 => (vec!["backward-read"], None),
        4 => (vec!["record-rewrite"], None),
        5 => (vec!["stride-read"], None),
        6 => (vec!["stream-write"], Some("-i 6: fwrite is measured; frewrite is not".into())),
        7 => (vec!["stream-read"], Some("-i 7: fread is measured; freread is not".into())),
        8 => (vec!["mix"], None),
        9 => (retest("write", "rewrite"), Some("-i 9: iosurvey's write and rewrite call pwrite already".into())),
        10 => (retest("read", "reread"), Some("-i 10: iosurvey's read and reread call pread already".into())),
        11 => (vec!["vectored-write"], None),
        12 => (vec!["vectored-read"], None),
        n => return Err(refuse(format!("-i {n}: IOzone has tests 0 to 12"), "give -i 0 to -i 12")),
    })
}

/// Takes `-F f1 f2 ...` out of the line: IOzone reads as many names as threads.
fn split_files(args: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut rest, mut files) = (Vec::new(), Vec::new());
    let mut words = args.iter().peekable();
    while let Some(w) = words.next() {
        if w == "-F" {
            while let Some(f) = words.next_if(|n| !n.starts_with('-')) {
                files.push(f.clone());
            }
        } else {
            rest.push(w.clone());
        }
    }
    (rest, files)
}

/// Reads an IOzone command line (without the program name) into the `iosurvey matrix`
/// command; `client_list` reads a `-+m` file by its path.
pub fn parse(
    args: &[String],
    client_list: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<Native<Settings>, CompatError> {
    let mut s = Settings { command_line: args.join(" "), ..Settings::default() };
    let (args, files) = split_files(args);
    let mut own = Own::default();
    let typed = read(TOOL, &args, FLAGS, &mut own)?;
    // IOzone fsyncs each written file after its timing (src/iozone.c, the children's and
    // write_perf_test's untimed fsync before close).
    let mut said = Said { switches: vec!["--fsync-after"], ..Said::default() };
    for flag in &typed {
        take(&mut s, &mut said, flag, client_list)?;
    }
    if let Some(first) = files.first() {
        said.dir = Some(super::ior::dir_of(first));
    }
    let tasks = tasks(&s, &own, files.len())?;
    s.clients.truncate(tasks);
    let kinds = kinds(&mut s, &mut said.notes)?;
    let out = command(&s, &said, &own, tasks, &kinds);
    Native::read(TOOL, vec![out], said.notes, s)
}

/// What an IOzone line's flags say besides its settings, before the matrix is sized.
#[derive(Default)]
struct Said {
    file: Option<u64>,
    record: Option<u64>,
    min_file: Option<u64>,
    max_file: Option<u64>,
    min_rec: Option<u64>,
    max_rec: Option<u64>,
    switches: Vec<&'static str>,
    dir: Option<String>,
    csv: Option<String>,
    constant_total: bool,
    notes: Vec<String>,
}

/// Takes one flag into the settings and what the line says, or refuses it.
fn take(
    s: &mut Settings,
    said: &mut Said,
    flag: &Typed,
    client_list: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<(), CompatError> {
    let shown = flag.shown();
    let notes = &mut said.notes;
    match flag.name {
        "a" => s.auto = true,
        "A" | "z" => {
            s.auto |= flag.name == "A";
            said.switches.push("--all-records");
        }
        "s" => said.file = Some(kib_size(flag)?),
        "r" => said.record = Some(kib_size(flag)?),
        "n" => said.min_file = Some(kib_size(flag)?),
        "g" => said.max_file = Some(kib_size(flag)?),
        "y" => said.min_rec = Some(kib_size(flag)?),
        "q" => said.max_rec = Some(kib_size(flag)?),
        "i" => s.tests.push(number(TOOL, flag)?),
        "t" => s.throughput = Some(number(TOOL, flag)?).filter(|&n: &usize| n > 0),
        "T" => note(notes, format!("{shown}: iosurvey's tasks are threads in any case")),
        "c" => said.switches.push("--include-close"),
        "e" => said.switches.push("--include-fsync"),
        "w" => said.switches.push("--keep"),
        "I" => said.switches.push("--direct"),
        "O" => s.ops = true,
        // IOzone's -v says its version; here it says the native command as well.
        "v" => {}
        "R" => s.excel = true,
        "+n" => s.no_retests = true,
        "x" => s.no_stonewall = true,
        "+k" => said.constant_total = true,
        "j" => {
            let stride: u64 = number(TOOL, flag)?;
            if stride != crate::plan::matrix::STRIDE {
                note(notes, format!("{shown}: iosurvey's stride read steps {} records", crate::plan::matrix::STRIDE));
            }
        }
        "f" => said.dir = Some(super::ior::dir_of(flag.value.as_deref().unwrap_or(""))),
        "b" => {
            said.csv = flag.value.clone();
            note(notes, format!("{shown}: written as CSV (every cell, a row each), not as a spreadsheet"));
        }
        "+m" => s.clients = clients(flag, client_list)?,
        "h" => return Err(refuse("-h: the help is 'iosurvey iozone --help'".into(), "run iosurvey iozone --help")),
        _ => return Err(super::not_taken(
            TOOL,
            flag,
            "see 'iosurvey iozone --help' for the IOzone options iosurvey takes; iosurvey matrix --help for its own",
        )),
    }
    Ok(())
}

/// `-+m`'s hosts, a line per thread.
fn clients(
    flag: &Typed,
    client_list: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<Vec<String>, CompatError> {
    let path = flag.value.clone().unwrap_or_default();
    let text = client_list(&path).map_err(|why| refuse(format!("-+m {path}: {why}"), "give a readable client list"))?;
    let hosts: Vec<String> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    if hosts.is_empty() {
        return Err(refuse(format!("-+m {path} lists no client"), "write one line per thread: HOST DIR IOZONE"));
    }
    Ok(hosts)
}

/// The threads: -t's, no more than -+m's lines and as many as -F's names; else iosurvey's
/// own --tasks.
fn tasks(s: &Settings, own: &Own, files: usize) -> Result<usize, CompatError> {
    let tasks = match (s.throughput, s.clients.len()) {
        (Some(t), n) if n > 0 && n < t => {
            return Err(refuse(
                format!("-t {t} asks for more threads than the {n} lines of -+m"),
                "give a line per thread, or a smaller -t",
            ))
        }
        (Some(t), _) => t,
        (None, 0) => own.tasks.unwrap_or(1),
        (None, _) => return Err(refuse("-+m needs -t THREADS".into(), "give -t, e.g. -t 16")),
    };
    if files > 0 && s.throughput.is_some_and(|t| files != t) {
        return Err(refuse(format!("-F names {files} files for -t {tasks}"), "give one name per thread"));
    }
    Ok(tasks)
}

/// The matrix's kinds for the tests asked (every one by default), each once, with their notes.
fn kinds(s: &mut Settings, notes: &mut Vec<String>) -> Result<Vec<&'static str>, CompatError> {
    if s.tests.is_empty() {
        s.tests = (0..=12).collect();
    }
    let mut kinds: Vec<&str> = Vec::new();
    for &test in &s.tests {
        let (ks, said) = kinds_of(test, s.no_retests)?;
        kinds.extend(ks.into_iter().filter(|k| !kinds.contains(k)).collect::<Vec<_>>());
        if let Some(said) = said {
            note(notes, said);
        }
    }
    if !s.tests.contains(&0) && !s.tests.contains(&9) {
        note(
            notes,
            "each file is written first, untimed: iosurvey never reuses a file it did not write in the run".into(),
        );
    }
    Ok(kinds)
}

/// The `iosurvey matrix` command line: IOzone's own defaults where the line gives no size
/// (automatic mode's grid, or a single 512 KiB file of 4 KiB records).
fn command(s: &Settings, said: &Said, own: &Own, tasks: usize, kinds: &[&str]) -> Vec<String> {
    let (auto_files, auto_recs) = ((64 << 10, 512 << 20), (4 << 10, 16 << 20));
    let one = (512 << 10, 4 << 10);
    let mut files_range = match (said.file, s.auto) {
        (Some(f), _) => (f, f),
        (None, true) => (said.min_file.unwrap_or(auto_files.0), said.max_file.unwrap_or(auto_files.1)),
        (None, false) => (one.0, one.0),
    };
    let recs = match (said.record, s.auto) {
        (Some(r), _) => (r, r),
        (None, true) => (said.min_rec.unwrap_or(auto_recs.0), said.max_rec.unwrap_or(auto_recs.1)),
        (None, false) => (one.1, one.1),
    };
    if said.constant_total {
        files_range = (files_range.0 / tasks as u64, files_range.1 / tasks as u64);
    }
    let mut out: Vec<String> =
        ["matrix", "--dir", said.dir.as_deref().unwrap_or("."), "--full"].map(String::from).to_vec();
    let mut put = |flag: &str, value: String| out.extend([flag.to_string(), value]);
    put("--kinds", kinds.join(","));
    put("--min-file", files_range.0.to_string());
    put("--max-file", files_range.1.to_string());
    put("--min-record", recs.0.to_string());
    put("--max-record", recs.1.to_string());
    put("--tasks", tasks.to_string());
    if let Some(csv) = &said.csv {
        put("--csv", csv.clone());
    }
    if let Some(engine) = &own.engine {
        put("--stand-in", engine.clone());
    }
    out.extend(said.switches.iter().map(|s| s.to_string()));
    let own = Own { tasks: None, ..own.clone() };
    out.extend(own.args());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(line: &str) -> Result<Native<Settings>, CompatError> {
        let words = crate::compat::words(line);
        parse(&words, &mut |_| Ok("node1 /w /iozone\nnode2 /w /iozone\nnode1 /w /iozone\nnode2 /w /iozone\n".into()))
    }

    fn command(line: &str) -> String {
        native(line).unwrap().commands[0].join(" ")
    }

    #[test]
    fn automatic_mode_is_the_full_grid_with_iozones_defaults_and_sizes_in_kib() {
        let c = command("-a -g 12G");
        assert!(c.starts_with("matrix --dir . --full --kinds write,rewrite,read,reread,random-read,random-write,backward-read,record-rewrite,stride-read,stream-write,stream-read,mix,vectored-write,vectored-read"), "{c}");
        assert!(
            c.contains("--min-file 65536 --max-file 12884901888 --min-record 4096 --max-record 16777216 --tasks 1"),
            "{c}"
        );
        assert!(command("-a -n 64 -g 256 -y 4 -q 16")
            .contains("--min-file 65536 --max-file 262144 --min-record 4096 --max-record 16384"));
    }

    #[test]
    fn the_pixstor_lines_are_one_cell_with_a_task_per_thread() {
        let c = command("-i0 -c -e -w -r 8M -s 32G -t 4 -+n -+m list");
        assert!(c.contains("--kinds write --min-file 34359738368 --max-file 34359738368 --min-record 8388608 --max-record 8388608 --tasks 4"), "{c}");
        for s in ["--include-close", "--include-fsync", "--keep"] {
            assert!(c.contains(s), "{s} in {c}");
        }
        let n = native("-i2 -c -O -w -r 4K -s 32G -t 4 -+n -+m list").unwrap();
        assert!(n.commands[0].join(" ").contains("--kinds random-read,random-write"));
        assert_eq!(n.settings.clients, ["node1", "node2", "node1", "node2"]);
        assert!(n.settings.ops);
        assert!(n.notes.iter().any(|x| x.contains("written first")));
    }

    #[test]
    fn x_turns_iozones_stonewall_off() {
        assert!(native("-i 0 -t 2 -s 1m -x").unwrap().settings.no_stonewall);
        assert!(!native("-i 0 -t 2 -s 1m").unwrap().settings.no_stonewall);
    }

    #[test]
    fn constant_aggregate_divides_the_file_over_the_threads() {
        assert!(command("-i 0 -s 4m -r 1m -t 4 -+k").contains("--min-file 1048576 --max-file 1048576"));
    }

    #[test]
    fn files_and_their_directory_and_counts_are_checked() {
        assert!(command("-i 0 -t 2 -F /x/a /x/b").contains("--dir /x "));
        assert!(native("-i 0 -t 3 -F /x/a /x/b").unwrap_err().what.contains("2 files"));
        assert!(native("-i 0 -t 8 -+m list").unwrap_err().what.contains("4 lines"));
        assert!(native("-i 13").unwrap_err().what.contains("0 to 12"));
        assert!(native("-Q").is_err());
    }
}
