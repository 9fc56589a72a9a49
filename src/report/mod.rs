//! Renderers of [`Report`]s, behind one trait: text for the terminal, JSON, CSV and Markdown
//! for other tools and documents (HTML with charts will be one more). They only lay out what
//! the analysis computed; no renderer computes a figure.

use crate::analysis::{Cell, Report, Table};
use comfy_table::{presets, CellAlignment, ContentArrangement};
use std::fmt::Write;

/// Lays out a report in one format.
pub trait Exporter {
    /// The whole report as text in this format.
    fn render(&self, report: &Report) -> String;
}

/// The formats `--format` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables for a terminal.
    Text,
    /// One JSON document.
    Json,
    /// Comma-separated values, a block per table.
    Csv,
    /// Markdown tables.
    Md,
}

/// The exporter of a format.
pub fn exporter(format: Format) -> &'static dyn Exporter {
    match format {
        Format::Text => &Text,
        Format::Json => &Json,
        Format::Csv => &Csv,
        Format::Md => &Markdown,
    }
}

/// Aligned columns without rules, numbers to the right.
pub struct Text;

impl Exporter for Text {
    fn render(&self, report: &Report) -> String {
        let mut s = String::new();
        for line in &report.heading {
            let _ = writeln!(s, "{line}");
        }
        for t in &report.tables {
            let _ = writeln!(s, "{}{}:", if s.is_empty() { "" } else { "\n" }, t.title);
            let mut table = comfy_table::Table::new();
            table.load_preset(presets::NOTHING).set_content_arrangement(ContentArrangement::Disabled);
            table.set_header(&t.columns);
            for row in &t.rows {
                table.add_row(row.iter().map(|c| {
                    let cell = comfy_table::Cell::new(c.to_string());
                    if c.is_number() || matches!(c, Cell::Empty) {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
                    }
                }));
            }
            for line in table.lines() {
                let _ = writeln!(s, "{}", line.trim_end());
            }
            for note in &t.notes {
                let _ = writeln!(s, "{note}");
            }
        }
        for f in &report.findings {
            let _ = writeln!(s, "{}", f.text);
        }
        for line in &report.footer {
            let _ = writeln!(s, "{line}");
        }
        s
    }
}

/// The report as one JSON document (numbers as numbers, empty cells as null).
pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        serde_json::to_string_pretty(report).map_or_else(|e| format!("{{\"error\": \"{e}\"}}\n"), |s| s + "\n")
    }
}

/// A block per table: a `# title` line, the header, the rows (RFC 4180 quoting).
pub struct Csv;

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn raw(c: &Cell) -> String {
    match c {
        // Full precision: a spreadsheet rounds for itself.
        Cell::Num { value, .. } => value.to_string(),
        Cell::Empty => String::new(),
        other => other.to_string(),
    }
}

impl Exporter for Csv {
    fn render(&self, report: &Report) -> String {
        let mut s = String::new();
        for t in &report.tables {
            let _ = writeln!(s, "# {}", t.title);
            let _ = writeln!(s, "{}", t.columns.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(","));
            for row in &t.rows {
                let _ = writeln!(s, "{}", row.iter().map(|c| csv_field(&raw(c))).collect::<Vec<_>>().join(","));
            }
            s.push('\n');
        }
        s
    }
}

/// Markdown: the heading as a paragraph, a `###` section and a pipe table per table, the
/// findings as a list.
pub struct Markdown;

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|")
}

fn md_table(s: &mut String, t: &Table) {
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
            let _ = writeln!(s, "{}\n", report.heading.join("  \n"));
        }
        for t in &report.tables {
            md_table(&mut s, t);
        }
        if !report.findings.is_empty() {
            let _ = writeln!(s, "### Findings\n");
            for f in &report.findings {
                let runs: Vec<String> = f.runs.iter().map(|i| i.to_string()).collect();
                let _ = writeln!(s, "- {} (runs {})", md_escape(&f.text), runs.join(", "));
            }
            s.push('\n');
        }
        for line in &report.footer {
            let _ = writeln!(s, "{}  ", md_escape(line));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis;
    use crate::plan::Role;
    use crate::record::{fixtures, BestFigure, RunRecord};
    use crate::spec::{Access, Workload};
    use crate::store::RunRow;

    fn survey_runs() -> Vec<RunRecord> {
        [Role::SeqFilePerTask, Role::Random4k, Role::SeqShared]
            .into_iter()
            .enumerate()
            .map(|(i, role)| {
                let mut r = fixtures::run(None);
                r.id = Some(10 + i as i64);
                r.survey_id = Some(3);
                r.name = Some(role.name().into());
                r.workload = Workload {
                    tasks: 2,
                    access: if role == Role::SeqShared { Access::Shared } else { Access::FilePerTask },
                    ..r.workload
                };
                if role == Role::SeqShared {
                    // The shared file moved half the bytes in the same time.
                    for p in &mut r.phases {
                        p.figures.bandwidth = p.figures.bandwidth.map(|b| b / 2.0);
                    }
                }
                r
            })
            .collect()
    }

    fn rows() -> Vec<RunRow> {
        let best =
            |op: &str, bandwidth, iops, cached| BestFigure { op: op.into(), bandwidth, iops, possibly_cached: cached };
        vec![
            RunRow {
                id: 1,
                survey_id: None,
                sweep_id: Some(2),
                started: 1_795_430_045,
                status: "ok".into(),
                label: "file-per-task sequential 1 MiB transfers, 1 GiB per task, 4 tasks".into(),
                host: "node1".into(),
                target: "/scratch/x".into(),
                fs_type: "lustre".into(),
                random: false,
                best: vec![best("write", Some(2.5e9), Some(2384.0), false), best("read", Some(4.0e9), None, true)],
                provenance: "measured".into(),
                system: Some("lustre-a".into()),
            },
            RunRow {
                id: 2,
                survey_id: Some(1),
                sweep_id: None,
                started: 1_795_430_100,
                status: "failed".into(),
                label: "shared segmented random 4 KiB transfers, 1 GiB per task, 4 tasks, a \"quoted\", comma".into(),
                host: "node1".into(),
                target: "/scratch/x|y".into(),
                fs_type: "lustre".into(),
                random: true,
                best: vec![best("write", None, Some(12345.6), false)],
                provenance: "measured".into(),
                system: None,
            },
        ]
    }

    fn reports() -> Vec<(&'static str, analysis::Report)> {
        let mut run = fixtures::run(None);
        run.id = Some(7);
        vec![
            ("run", analysis::run(&run)),
            ("survey", analysis::survey(3, &survey_runs())),
            ("list", analysis::list(&rows())),
        ]
    }

    #[test]
    fn every_exporter_lays_out_the_same_reports() {
        for format in [Format::Text, Format::Json, Format::Csv, Format::Md] {
            for (name, report) in reports() {
                insta::assert_snapshot!(format!("{format:?}_{name}").to_lowercase(), exporter(format).render(&report));
            }
        }
    }

    #[test]
    fn the_survey_finds_the_shared_file_at_half_of_file_per_task() {
        let r = analysis::survey(3, &survey_runs());
        let texts: Vec<&str> = r.findings.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["N-to-1 write is 50% of N-to-N", "N-to-1 read is 50% of N-to-N"]);
        assert_eq!(r.findings[0].runs, [10, 12]);
        let mut one_task = survey_runs();
        for r in &mut one_task {
            r.workload.tasks = 1;
        }
        assert!(analysis::survey(3, &one_task).findings.is_empty(), "with one task the two workloads are the same");
    }
}
