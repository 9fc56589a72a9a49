//! Other tools' outputs read into iosurvey's records (`iosurvey import`): IOR text and JSON,
//! mdtest text, IOzone's automatic, Excel and throughput outputs, fio JSON (json+ latency
//! bins kept), elbencho CSV and JSON, iperf3 JSON and an IO500 result directory.
//!
//! A parser reads the whole text and gives what to store, or the first line it could not
//! read and what it expected there; it never stores anything itself, so a command can read
//! every file before the store takes any (docs/methodology.md, "Imported results", says how
//! each figure is converted).

pub mod dlio;
pub mod elbencho;
pub mod files;
pub mod fio;
pub mod io500;
pub mod ior;
pub mod iozone;
pub mod iperf3;
pub mod mdtest;
pub(crate) mod text;

use crate::env::Environment;
use crate::measure::PhaseFigures;
use crate::record::{PhaseRecord, RunFacts, RunRecord, IMPORTED};
use crate::spec::{Op, Workload};
use std::collections::BTreeMap;
use thiserror::Error;

/// What a file gives is plain data the store takes without importing this room.
pub use crate::record::imported::Imported;
pub use text::civil_seconds;

/// A tool whose output iosurvey reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Tool {
    /// IOR, text or JSON (`-O summaryFormat=JSON`).
    Ior,
    /// mdtest, text.
    Mdtest,
    /// IOzone: `-a` (with or without `-R`), or throughput mode (`-t N`).
    Iozone,
    /// fio, `--output-format=json` or `json+`.
    Fio,
    /// elbencho's `--csvfile` or `--jsonfile`.
    Elbencho,
    /// iperf3 `-J`.
    Iperf3,
    /// An IO500 result directory (or its result_summary.txt).
    Io500,
    /// DLIO's summary.json (MLPerf Storage), or an mlpstorage result directory.
    Dlio,
}

impl Tool {
    /// The tool's name, as provenance says it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Ior => "ior",
            Tool::Mdtest => "mdtest",
            Tool::Iozone => "iozone",
            Tool::Fio => "fio",
            Tool::Elbencho => "elbencho",
            Tool::Iperf3 => "iperf3",
            Tool::Io500 => "io500",
            Tool::Dlio => "dlio",
        }
    }
}

/// Where a file could not be read: its line (1-based) and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bad {
    /// The line.
    pub line: usize,
    /// What was expected, and what was found when it helps.
    pub expected: String,
}

impl Bad {
    /// At `line`, `expected` was expected.
    pub fn at(line: usize, expected: impl Into<String>) -> Bad {
        Bad { line, expected: expected.into() }
    }
}

/// A file that could not be imported, as the user is told.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}:{line}: expected {expected}")]
pub struct ImportError {
    /// The file, as named.
    pub file: String,
    /// The line.
    pub line: usize,
    /// What was expected there.
    pub expected: String,
}

impl ImportError {
    /// `bad`, in `file`.
    pub fn of(file: &str, bad: Bad) -> ImportError {
        ImportError { file: file.to_string(), line: bad.line, expected: bad.expected }
    }
}

/// Reads one file's text as `tool`'s output.
pub fn parse(tool: Tool, text: &str) -> Result<Imported, Bad> {
    match tool {
        Tool::Ior => ior::parse(text),
        Tool::Mdtest => mdtest::parse(text),
        Tool::Iozone => iozone::parse(text),
        Tool::Fio => fio::parse(text),
        Tool::Elbencho => elbencho::parse(text),
        Tool::Iperf3 => iperf3::parse(text),
        Tool::Io500 => io500::parse(text, None, None),
        Tool::Dlio => dlio::parse(text, None),
    }
}

/// Which tool made a file, from what it says of itself; none when it does not say.
pub fn detect(name: &str, text: &str) -> Option<Tool> {
    let head: String = text.chars().take(4096).collect();
    let trimmed = head.trim_start();
    // fio may print its jobs' lines, or notes, before its JSON.
    if head.contains("\"fio version\"") {
        return Some(Tool::Fio);
    }
    // A JSON object, or a list of them (elbencho's); not IO500's "[RESULT]".
    let list = trimmed.strip_prefix('[').is_some_and(|rest| rest.trim_start().starts_with(['{', ']']));
    if trimmed.starts_with('{') || list {
        return if dlio::looks_like(&head) {
            Some(Tool::Dlio)
        } else if head.contains("\"connecting_to\"") || head.contains("\"iperf") {
            Some(Tool::Iperf3)
        } else if head.contains("\"MiB/s [last]\"") || head.contains("\"IOPS [last]\"") {
            Some(Tool::Elbencho)
        } else if head.contains("\"tests\"") || head.contains("\"Version\"") {
            Some(Tool::Ior)
        } else {
            None
        };
    }
    if head.contains("MPI Coordinated Test of Parallel I/O") || trimmed.starts_with(ior::CSV_HEADER) {
        Some(Tool::Ior)
    } else if head.contains("was launched with") && head.contains("mdtest") {
        Some(Tool::Mdtest)
    } else if head.contains("Iozone: Performance Test of File I/O") {
        Some(Tool::Iozone)
    } else if trimmed.starts_with("ISO date,") || name.ends_with(".csv") && head.contains("MiB/s [last]") {
        Some(Tool::Elbencho)
    } else if head.lines().any(|l| l.starts_with("[RESULT]")) {
        Some(Tool::Io500)
    } else {
        None
    }
}

/// FNV-1a, 64 bits, of a file's bytes: the same digest from every build of iosurvey, so that
/// importing the same file again is known whichever version stored it first.
pub fn digest(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |h, &b| (h ^ b as u64).wrapping_mul(PRIME))
}

/// What an imported run is made of, besides its phases.
pub(crate) struct Made {
    /// `tool version`, as provenance says it.
    pub source: String,
    /// The workload as iosurvey would name it.
    pub workload: Workload,
    /// Host and target, as far as the file says.
    pub env: Environment,
    /// The tool's command line.
    pub command_line: String,
    /// Start, Unix seconds (0 when the file does not say).
    pub started: i64,
}

/// A run of summary figures: `phases` set directly, no per-task timings.
pub(crate) fn run(made: Made, phases: Vec<PhaseRecord>, params: BTreeMap<String, String>) -> RunRecord {
    let hosts = if made.env.host.is_empty() { Vec::new() } else { vec![made.env.host.clone()] };
    let facts = RunFacts {
        env: made.env,
        command_line: made.command_line,
        started: made.started,
        hosts,
        clock_uncertainty_ns: 0,
    };
    let mut r = RunRecord::assemble(made.workload, Default::default(), facts);
    r.phases = phases;
    r.provenance = format!("{IMPORTED}{}", made.source);
    r.tool_params = params;
    r
}

/// One phase's summary figures; rates in bytes (or operations) per second.
pub(crate) fn phase(op: Op, iteration: u32, figures: PhaseFigures) -> PhaseRecord {
    PhaseRecord {
        op,
        iteration,
        figures,
        possibly_cached: None,
        caches_dropped: false,
        verify: None,
        latency: Default::default(),
        series: Default::default(),
        tasks: Vec::new(),
        requests: Vec::new(),
    }
}

/// Figures with a bandwidth and operations per second as the tool gave them, over a window
/// of `secs` seconds.
pub(crate) fn figures(bytes: u64, ops: u64, secs: f64, bandwidth: Option<f64>, iops: Option<f64>) -> PhaseFigures {
    PhaseFigures {
        bytes,
        ops,
        window_ns: text::nanos(secs),
        bandwidth,
        transfer_rate: None,
        iops,
        task_min: None,
        task_max: None,
        first_finish_rate: None,
        start_skew_ns: None,
    }
}

/// Bytes in a MiB: IOR's, elbencho's.
pub const MIB: f64 = 1_048_576.0;
/// Bytes in a KiB: IOzone's and fio's kB.
pub const KIB: f64 = 1024.0;
/// Bytes in a GiB: IO500's.
pub const GIB: f64 = 1_073_741_824.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_fnv_1a_64() {
        // The published test vectors of FNV-1a 64.
        assert_eq!(digest(b""), 0xcbf29ce484222325);
        assert_eq!(digest(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(digest(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn detection_reads_what_each_tool_says_of_itself() {
        assert_eq!(detect("x", "IOR-4.1.0: MPI Coordinated Test of Parallel I/O\n"), Some(Tool::Ior));
        assert_eq!(detect("x", "{\n \"Version\": \"4.1\",\n \"tests\": []}"), Some(Tool::Ior));
        assert_eq!(detect("x", "{\"fio version\": \"fio-3.33\"}"), Some(Tool::Fio));
        assert_eq!(detect("x", "{\"start\": {\"connecting_to\": {}}}"), Some(Tool::Iperf3));
        assert_eq!(detect("x", "[{\"MiB/s [last]\": \"1\"}]"), Some(Tool::Elbencho));
        assert_eq!(detect("x", "ISO date,label\n"), Some(Tool::Elbencho));
        assert_eq!(detect("x", "mdtest-4.1 was launched with 2 total task(s)"), Some(Tool::Mdtest));
        assert_eq!(detect("x", "\tIozone: Performance Test of File I/O\n"), Some(Tool::Iozone));
        assert_eq!(detect("x", "[RESULT] ior-easy-write 1 GiB/s : time 1 seconds\n"), Some(Tool::Io500));
        assert_eq!(detect("x", "hello"), None);
        assert_eq!(detect("x", "{\"a\": 1}"), None);
    }
}
