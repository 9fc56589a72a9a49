//! IOR's command line (and its `-f` scripts) as the `iosurvey run` commands it means.
//!
//! IOR's sizes are powers of two (k, m, g), its tasks are the launch's ranks, its defaults a
//! 1 MiB block of 256 KiB transfers, write then read when neither -w nor -r is given. IOR never
//! advises the page cache, so neither does its front end (`--no-fadvise`).

use super::{not_taken, note, number, read, size, CompatError, Flag, Native, Own, Typed};
use std::path::Path;

const TOOL: &str = "ior";

/// IOR's flags: those iosurvey takes, and those it refuses with the nearest native option.
const FLAGS: &[Flag] = &[
    Flag { name: "a", value: true },
    Flag { name: "A", value: true },
    Flag { name: "b", value: true },
    Flag { name: "c", value: false },
    Flag { name: "C", value: false },
    Flag { name: "d", value: true },
    Flag { name: "D", value: true },
    Flag { name: "e", value: false },
    Flag { name: "E", value: false },
    Flag { name: "f", value: true },
    Flag { name: "F", value: false },
    Flag { name: "g", value: false },
    Flag { name: "G", value: true },
    Flag { name: "h", value: false },
    Flag { name: "H", value: false },
    Flag { name: "i", value: true },
    Flag { name: "I", value: false },
    Flag { name: "j", value: true },
    Flag { name: "J", value: true },
    Flag { name: "k", value: false },
    Flag { name: "K", value: false },
    Flag { name: "l", value: true },
    Flag { name: "m", value: false },
    Flag { name: "M", value: true },
    Flag { name: "N", value: true },
    Flag { name: "o", value: true },
    Flag { name: "O", value: true },
    Flag { name: "q", value: false },
    Flag { name: "Q", value: true },
    Flag { name: "r", value: false },
    Flag { name: "R", value: false },
    Flag { name: "s", value: true },
    Flag { name: "t", value: true },
    Flag { name: "T", value: true },
    Flag { name: "u", value: false },
    Flag { name: "v", value: false },
    Flag { name: "V", value: false },
    Flag { name: "w", value: false },
    Flag { name: "W", value: false },
    Flag { name: "x", value: false },
    Flag { name: "X", value: true },
    Flag { name: "y", value: false },
    Flag { name: "Y", value: false },
    Flag { name: "z", value: false },
    Flag { name: "Z", value: false },
    Flag { name: "posix.odirect", value: false },
    Flag { name: "random-offset-seed", value: true },
    Flag { name: "dataPacketType", value: true },
];

/// How IOR's summary is written (`-O summaryFormat=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Summary {
    /// The text tables.
    #[default]
    Text,
    /// One JSON document.
    Json,
    /// The CSV rows.
    Csv,
}

/// One IOR test (a command line, or a script's RUN) as IOR's output needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// `-o`, as given.
    pub test_file: String,
    /// `-A`.
    pub ref_num: i64,
    /// `-v` given how many times.
    pub verbose: u32,
    /// Whether `-F`.
    pub file_per_proc: bool,
    /// `-k`.
    pub keep: bool,
    /// `-d`: seconds IOR pauses before each repetition.
    pub delay_secs: u64,
}

/// How the whole command's output is laid out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// Each test's settings, in order.
    pub tests: Vec<Test>,
    /// `-O summaryFormat=`.
    pub summary: Summary,
    /// `-O summaryFile=`: where the summary goes instead of standard output.
    pub summary_file: Option<String>,
    /// The command line as typed, for the header.
    pub command_line: String,
}

/// IOR's settings as they stand (a script's RUNs carry them on from one test to the next).
#[derive(Debug, Clone)]
struct State {
    block: u64,
    transfer: u64,
    segments: u64,
    file_per_proc: bool,
    write: bool,
    read: bool,
    check_write: bool,
    check_read: bool,
    random: bool,
    reorder: bool,
    fsync: bool,
    fsync_each: bool,
    direct: bool,
    repetitions: u32,
    stonewall: Option<u64>,
    wear_out: bool,
    keep: bool,
    signature: Option<u64>,
    num_tasks: Option<usize>,
    test_file: String,
    ref_num: i64,
    verbose: u32,
    delay_secs: u64,
    seed: Option<u64>,
}

impl Default for State {
    fn default() -> Self {
        State {
            block: 1 << 20,
            transfer: 256 << 10,
            segments: 1,
            file_per_proc: false,
            write: false,
            read: false,
            check_write: false,
            check_read: false,
            random: false,
            reorder: false,
            fsync: false,
            fsync_each: false,
            direct: false,
            repetitions: 1,
            stonewall: None,
            wear_out: false,
            keep: false,
            signature: None,
            num_tasks: None,
            test_file: "testFile".into(),
            ref_num: 0,
            verbose: 0,
            delay_secs: 0,
            seed: None,
        }
    }
}

fn refuse(what: String, hint: &str) -> CompatError {
    CompatError::new(TOOL, what, hint)
}

/// Reads an IOR command line (without the program name) into the `iosurvey run` commands it
/// means; `script` reads a `-f` file's text by its path.
pub fn parse(
    args: &[String],
    script: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<Native<Settings>, CompatError> {
    let mut own = Own::default();
    let typed = read(TOOL, args, FLAGS, &mut own)?;
    let mut state = State::default();
    let mut out = Words {
        commands: Vec::new(),
        notes: Vec::new(),
        settings: Settings { command_line: format!("ior {}", args.join(" ")), ..Settings::default() },
    };
    let mut script_text = None;
    for flag in &typed {
        if flag.name == "f" {
            let path = flag.value.clone().unwrap_or_default();
            let text =
                script(&path).map_err(|why| refuse(format!("-f {path}: {why}"), "give a readable IOR script"))?;
            script_text = Some((path, text));
            continue;
        }
        apply(&mut state, flag, &mut out)?;
    }
    match script_text {
        Some((path, text)) => {
            let mut found = false;
            for (line_no, line) in script_lines(&text) {
                if line.eq_ignore_ascii_case("run") {
                    push_test(&state, &own, &mut out)?;
                    found = true;
                    continue;
                }
                let flag = script_flag(&line).map_err(|why| {
                    refuse(
                        format!("-f {path}, line {line_no}: {why}"),
                        "write KEY=VALUE, -X VALUE or RUN between IOR START and IOR STOP",
                    )
                })?;
                apply(&mut state, &flag, &mut out)
                    .map_err(|e| refuse(format!("-f {path}, line {line_no}: {}", e.what), &e.hint))?;
            }
            if !found {
                return Err(refuse(
                    format!("-f {path} holds no RUN between IOR START and IOR STOP"),
                    "end each test's settings with a RUN line",
                ));
            }
        }
        None => push_test(&state, &own, &mut out)?,
    }
    Native::read(TOOL, out.commands, out.notes, out.settings)
}

/// What the line says so far: the native command lines, the notes, IOR's own settings.
struct Words {
    commands: Vec<Vec<String>>,
    notes: Vec<String>,
    settings: Settings,
}

/// The lines between `IOR START` and `IOR STOP`, comments and blanks left out.
fn script_lines(text: &str) -> Vec<(usize, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        match line.to_ascii_lowercase().as_str() {
            "ior start" => inside = true,
            "ior stop" => inside = false,
            "" => {}
            _ if inside => out.push((i + 1, line.to_string())),
            _ => {}
        }
    }
    out
}

/// IOR's script keys (its long option names) and the flags they are.
const KEYS: &[(&str, &str)] = &[
    ("api", "a"),
    ("refnum", "A"),
    ("blocksize", "b"),
    ("collective", "c"),
    ("reordertasks", "C"),
    ("reordertasksconstant", "C"),
    ("intertestdelay", "d"),
    ("deadlineforstonewalling", "D"),
    ("fsync", "e"),
    ("useexistingtestfile", "E"),
    ("fileperproc", "F"),
    ("intratestbarriers", "g"),
    ("settimestampsignature", "G"),
    ("repetitions", "i"),
    ("keepfile", "k"),
    ("keepfilewitherror", "K"),
    ("multifile", "m"),
    ("numtasks", "N"),
    ("testfile", "o"),
    ("taskpernodeoffset", "Q"),
    ("readfile", "r"),
    ("checkread", "R"),
    ("segmentcount", "s"),
    ("transfersize", "t"),
    ("maxtimeduration", "T"),
    ("uniquedir", "u"),
    ("verbose", "v"),
    ("writefile", "w"),
    ("checkwrite", "W"),
    ("fsyncperwrite", "Y"),
    ("randomoffset", "z"),
    ("reordertasksrandom", "Z"),
    ("useo_direct", "posix.odirect"),
    ("stonewallingwearout", "O"),
];

/// A script line as the flag it sets: `KEY=VALUE` (IOR's long names, any case; a switch set to
/// 0 is a line that sets nothing) or `-X VALUE`.
fn script_flag(line: &str) -> Result<Typed, String> {
    if line.starts_with('-') {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        let mut flags = read(TOOL, &words, FLAGS, &mut Own::default()).map_err(|e| e.what)?;
        return match flags.len() {
            1 => Ok(flags.remove(0)),
            _ => Err("one option per line".into()),
        };
    }
    let (key, value) = line.split_once('=').ok_or_else(|| format!("'{line}' is not KEY=VALUE"))?;
    let (key, value) = (key.trim().to_ascii_lowercase(), value.trim().to_string());
    let name = KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, f)| *f)
        .ok_or_else(|| format!("IOR has no setting '{}' that iosurvey takes", key))?;
    let flag = FLAGS.iter().find(|f| f.name == name).map(|f| f.name).unwrap_or("O");
    if key == "stonewallingwearout" {
        return Ok(Typed { name: "O", value: Some(format!("stoneWallingWearOut={value}")) });
    }
    let takes = FLAGS.iter().any(|f| f.name == name && f.value);
    Ok(match takes {
        true => Typed { name: flag, value: Some(value) },
        // A switch: 0 turns it off, which IOR's default already is, so the line means "none".
        false if value == "0" => Typed { name: "switch-off", value: Some(name.to_string()) },
        false => Typed { name: flag, value: None },
    })
}

/// Applies one flag to the state, or refuses it.
fn apply(s: &mut State, flag: &Typed, out: &mut Words) -> Result<(), CompatError> {
    match flag.name {
        "switch-off" => switch_off(s, flag.value.as_deref().unwrap_or("")),
        "a" => interface(flag)?,
        "A" => s.ref_num = number(TOOL, flag)?,
        "b" => s.block = size(TOOL, flag)?,
        "t" => s.transfer = size(TOOL, flag)?,
        "s" => s.segments = number(TOOL, flag)?,
        "F" => s.file_per_proc = true,
        "C" => s.reorder = true,
        "z" => s.random = true,
        "random-offset-seed" => s.seed = Some(number(TOOL, flag)?),
        "e" => s.fsync = true,
        "Y" => s.fsync_each = true,
        "D" => s.stonewall = Some(number(TOOL, flag)?).filter(|&secs| secs > 0),
        "O" => options(s, flag, out)?,
        "k" => s.keep = true,
        "i" => s.repetitions = number(TOOL, flag)?,
        "w" => s.write = true,
        "r" => s.read = true,
        "G" => s.signature = Some(number::<i64>(TOOL, flag)? as u64),
        "o" => s.test_file = flag.value.clone().unwrap_or_default(),
        "v" => s.verbose += 1,
        "N" => s.num_tasks = Some(number(TOOL, flag)?).filter(|&n| n > 0),
        "posix.odirect" => s.direct = true,
        _ => noted(s, flag, &mut out.notes)?,
    }
    Ok(())
}

/// `-a`: the interface, POSIX's alone.
fn interface(flag: &Typed) -> Result<(), CompatError> {
    let shown = flag.shown();
    match flag.value.as_deref().unwrap_or("").to_ascii_uppercase().as_str() {
        "POSIX" => Ok(()),
        "MPIIO" => Err(refuse(
            format!("{shown}: iosurvey has no MPI-IO interface yet"),
            "give -a POSIX; iosurvey run --engine sync, io_uring or libaio for other interfaces",
        )),
        "MMAP" => Err(not_taken(TOOL, flag, "iosurvey run --engine mmap")),
        other => Err(refuse(format!("{shown}: iosurvey has no {other} interface"), "give -a POSIX")),
    }
}

/// The flags iosurvey takes and measures differently from IOR (each said once, as a note),
/// and those it refuses.
fn noted(s: &mut State, flag: &Typed, notes: &mut Vec<String>) -> Result<(), CompatError> {
    let shown = flag.shown();
    match flag.name {
        "Q" => {
            let offset: u64 = number(TOOL, flag)?;
            if offset != 1 {
                note(notes, format!("{shown}: a task reads what the task one node on wrote (iosurvey --reorder), not {offset} nodes on"));
            }
        }
        "Z" => {
            s.reorder = true;
            note(
                notes,
                format!(
                    "{shown}: a task reads what the task one node on wrote (iosurvey --reorder), not a random task's"
                ),
            );
        }
        "X" => {
            let _: i64 = number(TOOL, flag)?;
            note(
                notes,
                format!("{shown}: the seed of -Z's random order has no use: a task reads the next node's data"),
            );
        }
        "K" => note(
            notes,
            format!("{shown}: iosurvey removes its files after a failed run as after any other (use -k to keep them)"),
        ),
        "E" => {
            note(notes, format!("{shown}: iosurvey writes its own files afresh; it does not reuse a file that exists"))
        }
        "d" => {
            s.delay_secs = number(TOOL, flag)?;
            if s.delay_secs > 0 {
                note(notes, format!("{shown}: iosurvey does not pause between repetitions"));
            }
        }
        "W" => {
            s.check_write = true;
            note(
                notes,
                format!("{shown}: the check reads what was written as a verified read phase, timed and stored"),
            );
        }
        "R" => {
            s.check_read = true;
            note(
                notes,
                format!("{shown}: the read phase is verified as it reads, rather than read twice and compared"),
            );
        }
        "c" => note(notes, format!("{shown}: collective I/O is MPI-IO's; with -a POSIX it changes nothing, as in IOR")),
        "g" => {
            note(notes, format!("{shown}: iosurvey's tasks meet at each phase's start only, not around open and close"))
        }
        _ => return Err(refused(flag)),
    }
    Ok(())
}

/// Why iosurvey does not take an IOR flag, with the nearest native option.
fn refused(flag: &Typed) -> CompatError {
    match flag.name {
        "m" => not_taken(TOOL, flag, "iosurvey run --iterations N writes a fresh set of files each iteration"),
        "T" => not_taken(TOOL, flag, "-D SECONDS (iosurvey run --stonewall)"),
        "u" => not_taken(TOOL, flag, "iosurvey run --dir per test"),
        "I" | "x" | "y" | "H" | "j" | "J" | "l" | "M" | "dataPacketType" | "q" | "V" => not_taken(
            TOOL,
            flag,
            "see 'iosurvey ior --help' for the IOR options iosurvey takes; iosurvey run --help for its own",
        ),
        "h" => refuse("-h: the help is 'iosurvey ior --help'".into(), "run iosurvey ior --help"),
        _ => not_taken(TOOL, flag, "see 'iosurvey ior --help'"),
    }
}

/// A script switch set to 0.
fn switch_off(s: &mut State, name: &str) {
    match name {
        "F" => s.file_per_proc = false,
        "C" | "Z" => s.reorder = false,
        "e" => s.fsync = false,
        "Y" => s.fsync_each = false,
        "k" => s.keep = false,
        "w" => s.write = false,
        "r" => s.read = false,
        "W" => s.check_write = false,
        "R" => s.check_read = false,
        "z" => s.random = false,
        "posix.odirect" => s.direct = false,
        _ => {}
    }
}

/// `-O key=value[,key=value]`.
fn options(s: &mut State, flag: &Typed, out: &mut Words) -> Result<(), CompatError> {
    for pair in flag.value.as_deref().unwrap_or("").split(',').filter(|p| !p.is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| refuse(format!("-O {pair}: expected KEY=VALUE"), "e.g. -O summaryFormat=JSON"))?;
        match key {
            "stoneWallingWearOut" => s.wear_out = value != "0",
            "summaryFormat" => {
                out.settings.summary = match value.to_ascii_uppercase().as_str() {
                    "JSON" => Summary::Json,
                    "CSV" => Summary::Csv,
                    "DEFAULT" | "TEXT" => Summary::Text,
                    _ => {
                        return Err(refuse(
                            format!("-O summaryFormat={value}: not a format IOR has"),
                            "give JSON, CSV or default",
                        ))
                    }
                }
            }
            "summaryFile" => out.settings.summary_file = Some(value.to_string()),
            _ => {
                return Err(refuse(
                    format!("-O {key}: iosurvey does not take this option"),
                    "iosurvey takes -O stoneWallingWearOut=1, summaryFormat=JSON|CSV and summaryFile=PATH",
                ))
            }
        }
    }
    Ok(())
}

/// The directory iosurvey works in for IOR's `-o PATH`: PATH's directory (IOR makes PATH and
/// PATH.00000000 there; iosurvey makes its own names).
pub fn dir_of(test_file: &str) -> String {
    match Path::new(test_file).parent().map(|p| p.to_string_lossy().into_owned()) {
        Some(p) if !p.is_empty() => p,
        _ => ".".into(),
    }
}

/// The state as an `iosurvey run` command line, added to the commands.
fn push_test(s: &State, own: &Own, out: &mut Words) -> Result<(), CompatError> {
    if s.transfer == 0 || s.block == 0 || s.block % s.transfer != 0 {
        return Err(refuse(
            format!("-b {} is not a whole number of -t {} transfers", s.block, s.transfer),
            "give a block that is a multiple of the transfer size, as IOR requires",
        ));
    }
    let (write, read) = match (s.write || s.check_write, s.read || s.check_read || s.check_write) {
        (false, false) => (true, true),
        other => other,
    };
    let ops: Vec<&str> =
        [(write, "write"), (read, "read")].into_iter().filter(|(on, _)| *on).map(|(_, op)| op).collect();
    let mut args: Vec<String> =
        ["run", "--dir", &dir_of(&s.test_file), "--force", "--no-fadvise"].map(String::from).to_vec();
    let mut put = |flag: &str, value: String| args.extend([flag.to_string(), value]);
    put("--op", ops.join(","));
    put("--access", if s.file_per_proc { "file-per-task" } else { "shared" }.into());
    put("--transfer", s.transfer.to_string());
    put("--block", s.block.to_string());
    put("--segments", s.segments.to_string());
    put("--iterations", s.repetitions.to_string());
    put("--engine", own.engine.clone().unwrap_or_else(|| "sync".into()));
    if s.random {
        put("--pattern", "random".into());
    }
    if let Some(secs) = s.stonewall {
        put("--stonewall", secs.to_string());
    }
    if let Some(sig) = s.signature {
        put("--signature", sig.to_string());
    }
    if let Some(seed) = s.seed {
        put("--seed", seed.to_string());
    }
    if let Some(n) = s.num_tasks {
        put("--clients", n.to_string());
    }
    let switches = [
        // IOR's fsync happens in a write phase's close; a read-only test has none.
        (s.fsync && write, "--fsync"),
        (s.fsync_each && write, "--fsync-each"),
        (s.direct, "--direct"),
        (s.reorder && read, "--reorder"),
        (s.check_write || s.check_read, "--verify"),
        (s.wear_out && s.stonewall.is_some(), "--wear-out"),
        (s.keep, "--keep"),
    ];
    args.extend(switches.into_iter().filter(|(on, _)| *on).map(|(_, f)| f.to_string()));
    args.extend(own.args());
    out.commands.push(args);
    out.settings.tests.push(Test {
        test_file: s.test_file.clone(),
        ref_num: s.ref_num,
        verbose: s.verbose,
        file_per_proc: s.file_per_proc,
        keep: s.keep,
        delay_secs: s.delay_secs,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(line: &str) -> Result<Native<Settings>, CompatError> {
        let words = crate::compat::words(line);
        parse(&words, &mut |_| Err("no scripts here".into()))
    }

    fn command(line: &str) -> String {
        native(line).unwrap().commands[0].join(" ")
    }

    #[test]
    fn ior_defaults_are_a_1m_block_of_256k_transfers_written_then_read() {
        assert_eq!(
            command("-o /s/t"),
            "run --dir /s --force --no-fadvise --op write,read --access shared --transfer 262144 --block 1048576 --segments 1 --iterations 1 --engine sync"
        );
    }

    #[test]
    fn each_taken_flag_lands_on_its_native_option() {
        let c = command("-a POSIX -F -C -z -e -Y -D 5 -O stoneWallingWearOut=1 -k -i 3 -w -r -G 77 -N 2 --posix.odirect -t 4k -b 1m -s 2 -o /x/f");
        for part in [
            "--op write,read",
            "--access file-per-task",
            "--transfer 4096",
            "--block 1048576",
            "--segments 2",
            "--iterations 3",
            "--pattern random",
            "--stonewall 5",
            "--signature 77",
            "--clients 2",
            "--fsync ",
            "--fsync-each",
            "--direct",
            "--reorder",
            "--wear-out",
            "--keep",
        ] {
            assert!(c.contains(part), "{part} missing from {c}");
        }
    }

    #[test]
    fn checks_verify_and_add_the_phase_they_read_in() {
        assert!(command("-w -W").contains("--op write,read"));
        assert!(command("-w -W").contains("--verify"));
        assert!(command("-r -R").contains("--op read --"));
    }

    #[test]
    fn what_iosurvey_cannot_do_is_refused_with_the_nearest_native_option() {
        let e = native("-a MPIIO").unwrap_err();
        assert!(e.what.contains("MPI-IO") && e.hint.contains("-a POSIX"), "{e:?}");
        assert!(native("-m").unwrap_err().hint.contains("--iterations"));
        assert!(native("-T 5").unwrap_err().hint.contains("-D"));
        assert!(native("-b 1000 -t 3").unwrap_err().what.contains("whole number"));
        assert!(native("-w s 1").unwrap_err().what.contains("'s'"));
    }

    #[test]
    fn what_is_measured_differently_is_noted_once() {
        let n = native("-d 3 -d 3 -c -g").unwrap();
        assert_eq!(n.notes.len(), 3, "{:?}", n.notes);
    }

    #[test]
    fn a_script_runs_each_run_with_the_settings_so_far() {
        let text = "# a comment\nIOR START\n  api=POSIX\n  blockSize=4m\n  transferSize=1m\n  filePerProc=1\n  writeFile=1\nRUN\n  -t 2m\n  filePerProc=0\nRUN\nIOR STOP\n";
        let words = vec!["-f".to_string(), "s.ior".to_string()];
        let n = parse(&words, &mut |_| Ok(text.into())).unwrap();
        assert_eq!(n.commands.len(), 2);
        let (a, b) = (n.commands[0].join(" "), n.commands[1].join(" "));
        assert!(
            a.contains("--op write ") && a.contains("--access file-per-task") && a.contains("--transfer 1048576"),
            "{a}"
        );
        assert!(
            b.contains("--access shared") && b.contains("--transfer 2097152") && b.contains("--block 4194304"),
            "{b}"
        );
        let bad = parse(&words, &mut |_| Ok("IOR START\nnoSuchKey=1\nRUN\nIOR STOP\n".into())).unwrap_err();
        assert!(bad.what.contains("line 2") && bad.what.contains("nosuchkey"), "{bad:?}");
        let none = parse(&words, &mut |_| Ok("IOR START\nblockSize=1m\nIOR STOP\n".into())).unwrap_err();
        assert!(none.what.contains("no RUN"));
    }

    #[test]
    fn summary_options_are_kept_for_the_output() {
        let n = native("-O summaryFormat=JSON,summaryFile=/tmp/s.json").unwrap();
        assert_eq!(n.settings.summary, Summary::Json);
        assert_eq!(n.settings.summary_file.as_deref(), Some("/tmp/s.json"));
        assert!(native("-O summaryFormat=XML").is_err());
    }
}
