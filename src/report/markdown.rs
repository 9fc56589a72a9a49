//! Markdown: pipe tables, findings as lists, every text escaped so that it stays text.

use super::Exporter;
use crate::analysis::{Cell, Report, Table};
use crate::escape::markdown as md_escape;
use std::fmt::Write;

/// Markdown: the heading as a paragraph, a `###` section and a pipe table per table, the
/// findings as a list.
pub struct Markdown;

pub(super) fn table(s: &mut String, t: &Table) {
    let _ = writeln!(s, "### {}\n", md_escape(&t.title));
    let _ = writeln!(s, "| {} |", t.columns.iter().map(|c| md_escape(c)).collect::<Vec<_>>().join(" | "));
    let align: Vec<&str> = (0..t.columns.len())
        .map(|i| if t.rows.iter().any(|r| r.get(i).is_some_and(Cell::is_number)) { "---:" } else { "---" })
        .collect();
    let _ = writeln!(s, "| {} |", align.join(" | "));
    for row in &t.rows {
        let _ = writeln!(s, "| {} |", row.iter().map(|c| md_escape(&c.to_string())).collect::<Vec<_>>().join(" | "));
    }
    for note in &t.notes {
        let _ = writeln!(s, "\n{}", md_escape(note));
    }
    s.push('\n');
}

impl Exporter for Markdown {
    fn render(&self, report: &Report) -> String {
        let mut s = String::new();
        if !report.heading.is_empty() {
            let heading: Vec<String> = report.heading.iter().map(|l| md_escape(l)).collect();
            let _ = writeln!(s, "{}\n", heading.join("  \n"));
        }
        for t in &report.tables {
            table(&mut s, t);
        }
        if !report.findings.is_empty() {
            let _ = writeln!(s, "### Findings\n");
            for f in &report.findings {
                let _ = writeln!(s, "- {}{}", md_escape(&f.text), super::html::runs_said(&f.runs));
            }
            s.push('\n');
        }
        for line in &report.footer {
            let _ = writeln!(s, "{}  ", md_escape(line));
        }
        s
    }
}

/// The report command's document as Markdown, its figures as files in `folder` (a name beside
/// the document): returns the text and each file's (name within the folder, contents), an
/// SVG and a CSV per figure.
pub fn document(blocks: &[super::paper::Block], folder: &str) -> (String, Vec<(String, String)>) {
    use super::paper::Block;
    let mut s = String::new();
    let mut files = Vec::new();
    for b in blocks {
        match b {
            Block::Heading(level, text, anchor) => {
                let _ = writeln!(
                    s,
                    "<a id=\"{}\"></a>\n\n{} {}\n",
                    md_escape(anchor),
                    "#".repeat(*level as usize),
                    md_escape(text)
                );
            }
            Block::Text(text) => {
                let _ = writeln!(s, "{}\n", md_escape(text));
            }
            Block::Code(text) => {
                // A fence longer than any run of backticks in the text cannot be closed by it.
                let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                let fence = "`".repeat(longest.max(2) + 1);
                let _ = writeln!(s, "{fence}\n{text}\n{fence}\n");
            }
            Block::Facts(facts) => {
                for (name, value) in facts {
                    let _ = writeln!(s, "- **{}**: {}", md_escape(name), md_escape(value));
                }
                s.push('\n');
            }
            Block::Contents(entries) => {
                let _ = writeln!(s, "## Contents\n");
                // Bullets: the studies carry their own numbers.
                for (_, text, anchor) in entries {
                    let _ = writeln!(s, "- [{}](#{})", md_escape(text), md_escape(anchor));
                }
                s.push('\n');
            }
            Block::Figure(n, chart, caption) => {
                let (svg, csv) = (format!("figure-{n}.svg"), format!("figure-{n}.csv"));
                // The folder comes from the -o path: percent-encoded, a space or ')' in it cannot
                // end the link.
                let at = |name: &str| format!("{}/{name}", super::html::percent_encode(folder));
                let _ = writeln!(
                    s,
                    "<a id=\"figure-{n}\"></a>\n\n![Figure {n}]({})\n\n**Figure {n}.** {} ([numbers]({}))\n",
                    at(&svg),
                    md_escape(caption),
                    at(&csv)
                );
                let numbers = Report { tables: vec![super::figures::numbers(chart)], ..Report::default() };
                files.push((svg, super::figures::svg(chart)));
                files.push((csv, super::Csv.render(&numbers)));
            }
            Block::Table(n, t, caption) => {
                table(&mut s, &Table { title: format!("Table {n}. {caption}"), ..t.clone() });
            }
            Block::Findings(found) => {
                for (f, link) in found {
                    let _ = writeln!(
                        s,
                        "- {}{} ([see](#{}))",
                        md_escape(&f.text),
                        super::html::runs_said(&f.runs),
                        md_escape(link)
                    );
                }
                s.push('\n');
            }
        }
    }
    (s, files)
}
