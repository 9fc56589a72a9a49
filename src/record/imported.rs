//! What one file of another tool gave (`iosurvey import`), as plain data: the `import` room
//! reads files into it and the store takes it, so the store needs no parser.

use super::net::NetResult;
use super::{MatrixRecord, RunRecord};

/// What one file gives to store: runs (an IO500 list's runs as one group), a matrix, or
/// network figures.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// The tool and version, as the provenance says them (`ior 4.1.0+dev`).
    pub source: String,
    /// Runs.
    pub runs: Vec<RunRecord>,
    /// Whether the runs are one IO500 list, stored as a group as iosurvey's own are.
    pub io500: Option<String>,
    /// An IOzone automatic mode's matrix.
    pub matrix: Option<MatrixRecord>,
    /// iperf3's figures, with when each started.
    pub net: Vec<(i64, NetResult)>,
}

impl Imported {
    /// Puts the user's label on everything, and the file's name in each run's parameters.
    pub fn named(mut self, file: &str, label: Option<&str>) -> Imported {
        for r in &mut self.runs {
            r.tool_params.insert("import.file".into(), file.to_string());
            if let Some(l) = label {
                r.label = Some(l.to_string());
            }
        }
        if let Some(m) = &mut self.matrix {
            m.tool_params.insert("import.file".into(), file.to_string());
            if let Some(l) = label {
                m.label = Some(l.to_string());
            }
        }
        self
    }
}
