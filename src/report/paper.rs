//! The `report` command's document, laid out as an evaluation's results section: a title
//! block (what was measured, when, with what, and the method in a few lines), a summary of
//! the findings that matter most, one section per study (its figures, each captioned, the
//! table beneath, its findings), the comparisons across studies, and an appendix (every run,
//! its settings, the environment). The layout is a list of [`Block`]s that the HTML and
//! Markdown renderers walk alike, so both number figures and tables the same way.

use crate::analysis::study::{self, spans, Study};
use crate::analysis::{self, Chart, Finding, Report, Table};
use crate::record::{MatrixRecord, RunRecord};

/// One piece of the document, in reading order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading: level (1 the title), text, anchor.
    Heading(u8, String, String),
    /// A paragraph.
    Text(String),
    /// Name and value lines (the title block).
    Facts(Vec<(String, String)>),
    /// The table of contents: (level, text, anchor).
    Contents(Vec<(u8, String, String)>),
    /// A figure: its number, the chart, its caption.
    Figure(usize, Box<Chart>, String),
    /// A table: its number, the table, its caption.
    Table(usize, Table, String),
    /// Findings, each with the anchor of the figure or section it belongs to.
    Findings(Vec<(Finding, String)>),
}

/// What a report is made of before it is laid out.
pub struct Paper {
    /// Where the runs come from (the store's path), for the title.
    pub source: String,
    /// The runs, by id.
    pub runs: Vec<RunRecord>,
    /// Each study of them, and of the matrices.
    pub studies: Vec<Study>,
    /// What is found across the studies: systems against each other, published figures.
    pub across: Report,
}

/// The paper of `runs` and `matrices` from the store at `source`, their charts over clients
/// read against published system `reference` when one is named.
pub fn paper(
    source: &str,
    runs: Vec<RunRecord>,
    matrices: &[MatrixRecord],
    reference: Option<&str>,
) -> Result<Paper, String> {
    let mut studies = study::studies(&runs, reference);
    studies.extend(matrices.iter().map(|m| Study {
        title: format!("Matrix m{} of {}", m.id.unwrap_or(0), m.env.target),
        runs: Vec::new(),
        report: analysis::matrix::matrix(m),
    }));
    let mut across = Report::default();
    let mut names: Vec<&str> = runs.iter().filter_map(|r| r.label.as_deref()).collect();
    names.sort_unstable();
    names.dedup();
    if names.len() > 1 {
        let of: Vec<Vec<RunRecord>> =
            names.iter().map(|n| runs.iter().filter(|r| r.label.as_deref() == Some(*n)).cloned().collect()).collect();
        let sides: Vec<analysis::Side> =
            names.iter().zip(&of).map(|(name, runs)| analysis::Side { name, runs }).collect();
        across = across.and(analysis::recommend(&sides));
    }
    across.findings.extend(analysis::cliffs::over_sizes(&runs));
    if let Some(name) = reference {
        across = across.and(analysis::reference::beside(name, &runs)?);
    }
    Ok(Paper { source: source.to_string(), runs, studies, across })
}

/// How many of a study's findings the summary takes at most, and how many in all.
const SUMMARY_PER_STUDY: usize = 2;
const SUMMARY: usize = 8;

impl Paper {
    /// The document in reading order.
    pub fn blocks(&self) -> Vec<Block> {
        let (facts, method) = study::about(&self.runs);
        let mut body = Vec::new();
        let (mut figures, mut tables) = (0, 0);
        let mut summary: Vec<(Finding, String)> = Vec::new();
        let mut contents = vec![(2, "Summary".to_string(), "summary".to_string())];
        for (k, s) in self.studies.iter().enumerate() {
            let anchor = format!("study-{}", k + 1);
            let title = format!("{}. {}", k + 1, s.title);
            contents.push((2, title.clone(), anchor.clone()));
            body.push(Block::Heading(2, title, anchor.clone()));
            body.extend(s.report.heading.iter().map(|l| Block::Text(l.clone())));
            let first_figure = figures + 1;
            for c in &s.report.charts {
                figures += 1;
                body.push(Block::Figure(figures, Box::new(c.clone()), self.caption(c, &s.runs)));
            }
            let said = if s.runs.is_empty() { String::new() } else { format!(" (runs {})", spans(&s.runs)) };
            for t in &s.report.tables {
                tables += 1;
                body.push(Block::Table(tables, t.clone(), format!("{}{said}", t.title)));
            }
            // A finding links to the study's first figure, or to the study when it has none.
            let link = if s.report.charts.is_empty() { anchor } else { format!("figure-{first_figure}") };
            let found: Vec<(Finding, String)> = s.report.findings.iter().map(|f| (f.clone(), link.clone())).collect();
            summary.extend(found.iter().filter(|f| f.0.text.contains(" peaks at ")).take(SUMMARY_PER_STUDY).cloned());
            if !found.is_empty() {
                body.push(Block::Findings(found));
            }
            body.extend(s.report.footer.iter().map(|l| Block::Text(l.clone())));
        }
        if !self.across.tables.is_empty() || !self.across.findings.is_empty() {
            let anchor = "across".to_string();
            contents.push((2, "Across the studies".into(), anchor.clone()));
            body.push(Block::Heading(2, "Across the studies".into(), anchor.clone()));
            for t in &self.across.tables {
                tables += 1;
                body.push(Block::Table(tables, t.clone(), format!("{} (from the runs of the studies above)", t.title)));
            }
            let found: Vec<(Finding, String)> =
                self.across.findings.iter().map(|f| (f.clone(), anchor.clone())).collect();
            // Systems set against each other lead the summary: they are what an evaluation is for.
            summary.splice(0..0, found.iter().cloned());
            if !found.is_empty() {
                body.push(Block::Findings(found));
            }
        }
        contents.push((2, "Appendix".into(), "appendix".into()));
        body.push(Block::Heading(2, "Appendix".into(), "appendix".into()));
        for t in
            [study::runs_table(&self.runs), study::settings_table(&self.runs), study::environment_table(&self.runs)]
        {
            tables += 1;
            let caption =
                format!("{} (runs {})", t.title, spans(&self.runs.iter().filter_map(|r| r.id).collect::<Vec<_>>()));
            body.push(Block::Table(tables, t, caption));
        }
        summary.truncate(SUMMARY);
        let mut out = vec![
            Block::Heading(1, format!("Storage evaluation: {}", self.targets()), "top".into()),
            Block::Facts(facts),
            Block::Heading(3, "Method".into(), "method".into()),
        ];
        out.extend(method.into_iter().map(Block::Text));
        out.push(Block::Contents(contents));
        out.push(Block::Heading(2, "Summary".into(), "summary".into()));
        out.push(match summary.is_empty() {
            true => Block::Text("No finding stands out: see each study.".into()),
            false => Block::Findings(summary),
        });
        out.extend(body);
        out.push(Block::Text(format!("Made by iosurvey {} from {}.", env!("CARGO_PKG_VERSION"), self.source)));
        out
    }

    /// The labels (or targets) the runs measured, for the title.
    fn targets(&self) -> String {
        let mut names: Vec<String> =
            self.runs.iter().map(|r| r.label.clone().unwrap_or_else(|| r.env.target.clone())).collect();
        names.sort();
        names.dedup();
        match names.len() {
            0 => "matrices".into(),
            1..=4 => names.join(", "),
            n => format!("{n} targets"),
        }
    }

    /// A figure's caption: what it shows, where (the targets of its runs), how many runs.
    fn caption(&self, c: &Chart, study_runs: &[i64]) -> String {
        let ids = if c.runs.is_empty() { study_runs } else { &c.runs };
        if ids.is_empty() {
            return format!("{}.", c.title);
        }
        let mut places: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.id.is_some_and(|i| ids.contains(&i)))
            .map(|r| format!("{} ({})", r.env.target, r.env.fs_type))
            .collect();
        places.sort();
        places.dedup();
        let bars = if c.errors.iter().any(|e| !e.is_empty()) {
            " Points are means over runs; error bars, their 95% t-interval."
        } else {
            ""
        };
        let levels = if c.references.is_empty() { "" } else { " Dashed black: published figures." };
        format!(
            "{}. On {}; {} run{} ({}).{bars}{levels}",
            c.title,
            places.join(", "),
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            spans(ids)
        )
    }
}
