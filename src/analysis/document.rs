//! The document model every analysis returns: typed cells, tables, findings and charts,
//! gathered in a report that the report room renders.

use super::guard;
use crate::units::mib_per_s;
use serde::Serialize;

/// One value of a table; numbers keep their value, with the decimals to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// Words.
    Text(String),
    /// A count.
    Int(u64),
    /// A measured value.
    Num {
        /// The value.
        value: f64,
        /// Decimals to print.
        #[serde(skip)]
        decimals: usize,
    },
    /// Nothing to show (printed as "-").
    Empty,
}

impl Cell {
    pub(super) fn num(value: Option<f64>, decimals: usize) -> Cell {
        value.map_or(Cell::Empty, |value| Cell::Num { value, decimals })
    }

    pub(super) fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// Whether the cell holds a number (renderers align those right).
    pub fn is_number(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Num { .. })
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Text(s) => f.write_str(s),
            Cell::Int(n) => write!(f, "{n}"),
            Cell::Num { value, decimals } => write!(f, "{value:.decimals$}"),
            Cell::Empty => f.write_str("-"),
        }
    }
}

/// A titled table with its notes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// What it shows.
    pub title: String,
    /// Column headers, with units.
    pub columns: Vec<String>,
    /// Rows of cells, as many as columns.
    pub rows: Vec<Vec<Cell>>,
    /// Lines to read with it (series ranges, footnotes).
    pub notes: Vec<String>,
}

impl Table {
    pub(super) fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// A sentence the stored numbers defend, with its number and the runs behind it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Finding {
    /// The sentence.
    pub text: String,
    /// Its number.
    pub value: f64,
    /// Ids of the runs it rests on.
    pub runs: Vec<i64>,
    /// What ran too briefly to measure, when that is what the finding says: a report gathers
    /// these into one paragraph from the data, not from the sentence.
    #[serde(skip)]
    pub too_short: Option<guard::TooShort>,
}

/// A chart: named series of (x, y) points, as lines or as bars, each with its numbers in a
/// table of the same report (charts only draw; the table is the record).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Chart {
    /// What it shows.
    pub title: String,
    /// The x axis, with its unit.
    pub x: String,
    /// The y axis, with its unit.
    pub y: String,
    /// (name, points) per line (or group of bars).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// Bars at whole x positions (one per task, node or phase) rather than lines.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bars: bool,
    /// Names of x positions that are categories (hosts, phases), in place of their numbers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ticks: Vec<(f64, String)>,
    /// A heat map in place of lines or bars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heat: Option<Heat>,
    /// Error bars, by series (same order as `series`): (x, low, high) per point that has
    /// repetitions to give it a spread.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Vec<(f64, f64, f64)>>,
    /// Figures to read the series against, each drawn as a level across the chart: a
    /// published system's (name, value in the chart's unit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<(String, f64)>,
    /// Published points measured at a stated x (a system's peak at 64 clients): (name with
    /// the setting it was measured at, x, y in the chart's unit), drawn as black diamonds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<(String, f64, f64)>,
    /// Moments on the x axis, each drawn as a vertical dashed line and named in the legend
    /// (a run's events on its time line).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<(String, f64)>,
    /// Ids of the runs whose numbers it draws.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<i64>,
}

/// A heat map: a value per row and column (a matrix kind's MiB/s, files down and records
/// across), with the boundaries where a cliff lies drawn between rows or columns.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Heat {
    /// Row names, top to bottom.
    pub rows: Vec<String>,
    /// Column names, left to right.
    pub columns: Vec<String>,
    /// `values[row][column]`; none where nothing was measured.
    pub values: Vec<Vec<Option<f64>>>,
    /// Cliffs between row i and row i + 1, by i.
    pub row_cliffs: Vec<usize>,
    /// Cliffs between column i and column i + 1, by i.
    pub column_cliffs: Vec<usize>,
}

impl Chart {
    /// The chart's numbers as a table: a row per x, a column per series (a heat map's grid as
    /// it is drawn).
    pub fn table(&self) -> Table {
        if let Some(h) = &self.heat {
            let mut columns = vec![format!("{} \\ {}", self.y, self.x)];
            columns.extend(h.columns.iter().cloned());
            let rows = h
                .rows
                .iter()
                .zip(&h.values)
                .map(|(name, v)| {
                    std::iter::once(Cell::text(name.clone())).chain(v.iter().map(|x| Cell::num(*x, 0))).collect()
                })
                .collect();
            return Table { title: self.title.clone(), columns, rows, notes: Vec::new() };
        }
        let mut xs: Vec<f64> = self.series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut columns = vec![self.x.clone()];
        columns.extend(self.series.iter().map(|(name, _)| format!("{name} ({})", self.y)));
        let rows = xs
            .iter()
            .map(|&x| {
                let named = self.ticks.iter().find(|(at, _)| *at == x).map(|(_, name)| Cell::text(name.clone()));
                let decimals = if x.fract() == 0.0 { 0 } else { 3 };
                let mut row = vec![named.unwrap_or(Cell::num(Some(x), decimals))];
                row.extend(self.series.iter().map(|(_, p)| Cell::num(p.iter().find(|q| q.0 == x).map(|q| q.1), 1)));
                row
            })
            .collect();
        Table { title: self.title.clone(), columns, rows, notes: Vec::new() }
    }
}

/// What a command shows: a heading, tables, findings, charts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// Lines of context before the tables.
    pub heading: Vec<String>,
    /// The tables, in order.
    pub tables: Vec<Table>,
    /// The findings.
    pub findings: Vec<Finding>,
    /// Lines after everything (warnings, failure).
    pub footer: Vec<String>,
    /// Charts of the tables' numbers (drawn by the HTML exporter only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub charts: Vec<Chart>,
}

pub(super) fn mib(v: Option<f64>) -> Cell {
    Cell::num(v.map(mib_per_s), 1)
}

/// The 95% interval of a mean as a table shows it: "± h" when symmetric, else "(lo to hi)".
pub fn interval_cell(i: &crate::stats::Interval, decimals: usize) -> Cell {
    Cell::text(crate::stats::around(i.value, i.lo, i.hi, decimals))
}

impl Report {
    /// This report followed by another's tables and lines.
    pub fn and(mut self, other: Report) -> Report {
        self.heading.extend(other.heading);
        self.tables.extend(other.tables);
        self.findings.extend(other.findings);
        self.footer.extend(other.footer);
        self.charts.extend(other.charts);
        self
    }
}
