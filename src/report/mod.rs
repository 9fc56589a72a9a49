//! Renderers of [`Report`]s, behind one trait: text for the terminal, JSON, CSV and Markdown
//! for other tools and documents, and one self-contained HTML page with its charts; and the
//! `report` command's document ([`paper`]), laid out as an evaluation and rendered as HTML or
//! Markdown with its figures ([`figures`]). They only lay out what the analysis computed; no
//! renderer computes a figure. Every text each lays out goes through [`crate::escape`] (or
//! the HTML escaping) for the format it lands in.

pub mod campaign;
pub mod chosen;
pub mod export;
pub mod figures;
pub mod help;
mod html;
mod markdown;
pub mod output;
pub mod paper;
pub mod stored;
pub mod train;
pub mod units;

pub use html::{page, Html};
pub use markdown::{document, Markdown};

use crate::analysis::{Cell, Report};
use crate::escape::{csv_field, visible};
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
    /// One self-contained HTML page: findings first, then each table with its CSV download.
    Html,
}

/// The exporter of a format.
pub fn exporter(format: Format) -> &'static dyn Exporter {
    match format {
        Format::Text => &Text,
        Format::Json => &Json,
        Format::Csv => &Csv,
        Format::Md => &Markdown,
        Format::Html => &Html,
    }
}

/// Aligned columns without rules, numbers to the right.
pub struct Text;

impl Exporter for Text {
    fn render(&self, report: &Report) -> String {
        text_within(report, None)
    }
}

/// The narrowest a wrapped text column is made before a table is laid out row by row.
const NARROWEST: usize = 16;

/// The text layout fitted to `width` columns when given: a table as it is if it fits; else
/// its long text columns (the workload, the verdict) wrapped within their cells, numbers and
/// short words kept whole, if that fits with each at least [`NARROWEST`] wide; else a block
/// per row (its first cell, then each other column's name and value). Every other line is
/// broken at spaces. Whole lines without a width (`--wide`, a pipe).
pub fn text_within(report: &Report, width: Option<usize>) -> String {
    let fit = |line: &str| match width {
        Some(w) => wrap(line, w, 2),
        None => line.to_string(),
    };
    let mut s = String::new();
    // Each piece made visible on its own, so a line break inside a label shows as `\n`
    // rather than breaking the table.
    for line in &report.heading {
        let _ = writeln!(s, "{}", fit(&visible(line)));
    }
    for t in &report.tables {
        let _ = writeln!(s, "{}{}:", if s.is_empty() { "" } else { "\n" }, fit(&visible(&t.title)));
        let header: Vec<String> = t.columns.iter().map(|c| visible(c).into_owned()).collect();
        let rows: Vec<Vec<String>> =
            t.rows.iter().map(|r| r.iter().map(|c| visible(&c.to_string()).into_owned()).collect()).collect();
        let numeric: Vec<bool> = (0..header.len())
            .map(|k| t.rows.iter().all(|r| r.get(k).is_none_or(|c| c.is_number() || matches!(c, Cell::Empty))))
            .collect();
        let natural: Vec<usize> = (0..header.len())
            .map(|k| {
                rows.iter().filter_map(|r| r.get(k)).chain([&header[k]]).map(|c| c.chars().count()).max().unwrap_or(0)
            })
            .collect();
        // Each column is padded by one on either side; the last one's right is trimmed.
        let wide = |ws: &mut dyn Iterator<Item = usize>| ws.map(|w| w + 2).sum::<usize>().saturating_sub(1);
        let long = |k: usize| !numeric[k] && natural[k] > NARROWEST;
        let layout = match width {
            Some(w) if wide(&mut natural.iter().copied()) > w => {
                match wide(&mut (0..natural.len()).map(|k| if long(k) { NARROWEST } else { natural[k] })) <= w {
                    true => Some(w),
                    false => {
                        s += &by_row(&header, &rows, w);
                        None
                    }
                }
            }
            _ => Some(0),
        };
        if let Some(w) = layout {
            let mut table = comfy_table::Table::new();
            table.load_preset(presets::NOTHING).set_content_arrangement(ContentArrangement::Disabled);
            table.set_header(&header);
            for (row, cells) in t.rows.iter().zip(&rows) {
                table.add_row(row.iter().zip(cells).map(|(c, text)| {
                    let cell = comfy_table::Cell::new(text);
                    if c.is_number() || matches!(c, Cell::Empty) {
                        cell.set_alignment(CellAlignment::Right)
                    } else {
                        cell
                    }
                }));
            }
            if w > 0 {
                table.set_content_arrangement(ContentArrangement::Dynamic).set_width(w.min(u16::MAX as usize) as u16);
                for (k, column) in table.column_iter_mut().enumerate() {
                    column.set_constraint(match long(k) {
                        true => {
                            comfy_table::ColumnConstraint::LowerBoundary(comfy_table::Width::Fixed(NARROWEST as u16))
                        }
                        false => comfy_table::ColumnConstraint::ContentWidth,
                    });
                }
            }
            for line in table.lines() {
                let _ = writeln!(s, "{}", line.trim_end());
            }
        }
        for note in &t.notes {
            let _ = writeln!(s, "{}", fit(&visible(note)));
        }
    }
    for f in &report.findings {
        let _ = writeln!(s, "{}", fit(&visible(&f.text)));
    }
    for line in &report.footer {
        let _ = writeln!(s, "{}", fit(&visible(line)));
    }
    s
}

/// A table too wide for `width` even with its text wrapped, a block per row: the row's first
/// cell, then `column value` for each other non-empty cell, wrapped and indented.
fn by_row(header: &[String], rows: &[Vec<String>], width: usize) -> String {
    let mut s = String::new();
    for row in rows {
        let Some((first, rest)) = row.split_first() else { continue };
        let _ = writeln!(s, "{}", wrap(first, width, 2));
        let pairs: Vec<String> =
            header.iter().skip(1).zip(rest).filter(|(_, v)| !v.is_empty()).map(|(h, v)| format!("{h}: {v};")).collect();
        let body = wrap(pairs.join(" ").trim_end_matches(';'), width.saturating_sub(2), 2);
        for line in body.lines() {
            let _ = writeln!(s, "  {}", line.trim_start().trim_end());
        }
    }
    s
}

/// `text` broken at spaces into lines of at most `width` columns (a word longer than that
/// stands alone), each line after the first indented by `indent` spaces.
pub fn wrap(text: &str, width: usize, indent: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let room = if lines.is_empty() { width } else { width.saturating_sub(indent) };
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    let pad = " ".repeat(indent);
    lines
        .iter()
        .enumerate()
        .map(|(k, l)| if k == 0 { l.clone() } else { format!("{pad}{l}") })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The report as one JSON document (numbers as numbers, empty cells as null; text exact, with
/// no raw control character: [`crate::escape::json`]).
pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        serde_json::to_string_pretty(report)
            .map_or_else(|e| format!("{{\"error\": \"{e}\"}}\n"), |s| crate::escape::json(s) + "\n")
    }
}

/// A block per table: a `# title` line, the header, the rows (RFC 4180 quoting; a field a
/// spreadsheet would take for a formula opens as text, see [`crate::escape::csv_field`]).
pub struct Csv;

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
            // The title is a comment line, not a field: a line break in it would start a row.
            let _ = writeln!(s, "# {}", visible(&t.title));
            let _ = writeln!(s, "{}", t.columns.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(","));
            for row in &t.rows {
                let _ = writeln!(
                    s,
                    "{}",
                    row.iter().map(|c| csv_field(&raw(c)).into_owned()).collect::<Vec<_>>().join(",")
                );
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped_and_fetches_nothing() {
        let mut report = analysis::Report::default();
        report.heading.push("run <1> & \"two\"".into());
        report.findings.push(analysis::Finding {
            text: "<script>alert(1)</script>".into(),
            value: 1.0,
            runs: vec![3],
            ..Default::default()
        });
        let html = Html.render(&report);
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("run &lt;1&gt; &amp; &quot;two&quot;"));
        assert!(!html.contains("http:") && !html.contains("https:") && !html.contains(" src="), "self-contained");
        report.charts.push(analysis::Chart {
            title: "sweep <1>".into(),
            x: "clients".into(),
            y: "MiB/s".into(),
            series: vec![("write".into(), vec![(1.0, 100.0), (2.0, 200.0)])],
            ..analysis::Chart::default()
        });
        let html = Html.render(&report);
        assert!(html.contains("<svg ") && html.contains("<polyline") && html.contains("sweep &lt;1&gt;"), "{html}");
        assert!(
            html.contains("<th>write (MiB/s)</th>") && html.contains("<td class=\"n\">200.0</td>"),
            "numbers beside it"
        );
        // The line goes up and to the right from (1, 100) to (2, 200), on a y axis from 0.
        let at = html.find("stroke=\"#0072B2\" stroke-width=\"2\" points=").expect("the series' line");
        let points = html[at..].split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        let xy: Vec<(f64, f64)> = points
            .split_whitespace()
            .map(|p| p.split_once(',').map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap())).unwrap())
            .collect();
        assert_eq!(xy.len(), 2, "{points}");
        assert!(xy[1].0 > xy[0].0 && xy[1].1 < xy[0].1, "{points}");
        assert!(html.contains(">\n0\n</text>") || html.contains(">0</text>"), "the y axis starts at 0: {html}");
        assert_eq!(html::percent_encode("a b,\n"), "a%20b%2C%0A");
    }
    #[test]
    fn hostile_text_is_neutralized_by_every_exporter() {
        let mut report = analysis::Report::default();
        report.heading.push("target /t\x1b]0;owned\x07\n<b>x</b>".into());
        report.tables.push(analysis::Table {
            title: "runs of \u{9b}2J".into(),
            columns: vec!["label".into(), "MiB/s".into()],
            rows: vec![vec![
                analysis::Cell::Text("=HYPERLINK(\"x\")".into()),
                analysis::Cell::Num { value: -2.5, decimals: 1 },
            ]],
            notes: vec!["<img src=x onerror=alert(1)>".into()],
        });
        report.findings.push(analysis::Finding {
            text: "[a](javascript:b)".into(),
            value: 0.0,
            runs: vec![],
            ..Default::default()
        });
        let text = Text.render(&report);
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert!(text.contains("/t\\x1b]0;owned\\x07\\n<b>") && text.contains("runs of \\u{9b}2J:"), "{text}");
        let csv = Csv.render(&report);
        assert!(csv.contains("\"'=HYPERLINK(\"\"x\"\")\",-2.5\n"), "a formula as text, a number as data: {csv}");
        assert!(csv.starts_with("# runs of \\u{9b}2J\n"), "{csv}");
        let md = Markdown.render(&report);
        for escaped in ["\\<b\\>x\\</b\\>", "\\<img src=x onerror=alert(1)\\>", "- \\[a\\](javascript:b)"] {
            assert!(md.contains(escaped), "{escaped} in {md}");
        }
    }

    use crate::analysis;
    use crate::plan::Role;
    use crate::record::{fixtures, BestFigure, RunRecord};
    use crate::spec::Access;
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
                r.workload.tasks = 2;
                r.workload.data_mut().access =
                    if role == Role::SeqShared { Access::Shared } else { Access::FilePerTask };
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
                campaign_id: None,
                targets_id: None,
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
                campaign_id: None,
                targets_id: None,
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
        for format in [Format::Text, Format::Json, Format::Csv, Format::Md, Format::Html] {
            for (name, report) in reports() {
                insta::assert_snapshot!(format!("{format:?}_{name}").to_lowercase(), exporter(format).render(&report));
            }
        }
    }

    /// Two sides of three runs each: B's runs at about half of A's.
    fn two_sides() -> (Vec<RunRecord>, Vec<RunRecord>) {
        let side = |scale: f64, first: i64| -> Vec<RunRecord> {
            [0.97, 1.0, 1.03]
                .into_iter()
                .enumerate()
                .map(|(k, wobble)| {
                    let mut r = fixtures::run(None);
                    r.id = Some(first + k as i64);
                    for p in &mut r.phases {
                        p.figures.bandwidth = p.figures.bandwidth.map(|b| b * wobble * scale);
                    }
                    r
                })
                .collect()
        };
        (side(1.0, 1), side(0.5, 4))
    }

    #[test]
    fn compare_keeps_its_layout() {
        let (a, b) = two_sides();
        let report =
            analysis::compare(analysis::Side { name: "lustre-a", runs: &a }, analysis::Side { name: "f800", runs: &b });
        insta::assert_snapshot!("text_compare", Text.render(&report));
    }

    #[test]
    fn sweeps_of_one_workload_on_two_systems_share_a_chart() {
        let mut runs = Vec::new();
        for (label, scale) in [("lustre-a", 1.0), ("f800", 2.0)] {
            for tasks in [1usize, 2, 4] {
                let mut r = fixtures::run(None);
                r.sweep_id = Some(if label == "f800" { 2 } else { 1 });
                r.label = Some(label.into());
                r.workload.tasks = tasks;
                for p in &mut r.phases {
                    p.figures.bandwidth = Some(100.0 * tasks as f64 * scale * 1048576.0);
                }
                runs.push(r);
            }
        }
        let charts = analysis::sweeps_by_system(&runs).charts;
        assert_eq!(charts.len(), 1);
        let names: Vec<&str> = charts[0].series.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f800 write", "f800 read", "lustre-a write", "lustre-a read"]);
        assert_eq!(charts[0].series[0].1, [(1.0, 200.0), (2.0, 400.0), (4.0, 800.0)]);
        // One system alone has nothing to be set beside.
        assert!(analysis::sweeps_by_system(&runs[..3]).charts.is_empty());
    }

    #[test]
    fn the_survey_finds_the_shared_file_at_half_of_file_per_task() {
        let r = analysis::survey(3, &survey_runs());
        let texts: Vec<&str> = r.findings.iter().map(|f| f.text.as_str()).collect();
        let single = "of N-to-N (from 1 and 1 run(s): no interval; --repetitions 3 gives one)";
        assert_eq!(texts, [format!("N-to-1 write is 50% {single}"), format!("N-to-1 read is 50% {single}")]);
        assert_eq!(r.findings[0].runs, [10, 12]);
        // Three repetitions, each run within 2% of the others: the share with its interval.
        let repeated = |shared_scale: f64| -> Vec<RunRecord> {
            let mut all = Vec::new();
            for (k, wobble) in [0.98, 1.0, 1.02].into_iter().enumerate() {
                for mut r in survey_runs() {
                    let scale = if r.name.as_deref() == Some("seq-shared") { shared_scale } else { 1.0 };
                    r.id = r.id.map(|id| id + 10 * k as i64);
                    for p in &mut r.phases {
                        p.figures.bandwidth = p.figures.bandwidth.map(|b| b * wobble * scale);
                    }
                    all.push(r);
                }
            }
            all
        };
        let r = analysis::survey(3, &repeated(1.0));
        // The table: each workload's mean over its runs and the half-width of its t-interval.
        let own: Vec<f64> = [0.98, 1.0, 1.02].map(|k| k * 123355.26315789473).to_vec();
        let iv = crate::stats::mean_interval(&own).unwrap();
        let row = &r.tables[0].rows[0];
        assert_eq!(row[1].to_string(), "3");
        assert_eq!(row[2].to_string(), format!("{:.1}", iv.value));
        assert_eq!(row[3].to_string(), format!("± {:.1}", (iv.hi - iv.lo) / 2.0), "a t-interval is symmetric");
        assert!(
            r.findings[0].text.starts_with("N-to-1 write is 50% of N-to-N (95% t-interval 4"),
            "{}",
            r.findings[0].text
        );
        assert!(r.findings[0].text.ends_with("3 and 3 runs)"));
        // Shared as fast as file per task, within the noise: no difference is claimed.
        let r = analysis::survey(3, &repeated(2.0));
        assert!(r.findings[0].text.contains("cannot be told apart: ratio 1.00"), "{}", r.findings[0].text);
        let mut one_task = survey_runs();
        for r in &mut one_task {
            r.workload.tasks = 1;
        }
        assert!(analysis::survey(3, &one_task).findings.is_empty(), "with one task the two workloads are the same");
    }
}

#[cfg(test)]
mod wrap_tests {
    use super::wrap;

    #[test]
    fn wrap_keeps_every_line_within_the_width_and_indents_the_rest() {
        let text = "iosurvey run --dir /scratch/x --access shared --layout strided --transfer 47008 --block 47008";
        let wrapped = wrap(text, 40, 6);
        assert!(wrapped.lines().all(|l| l.chars().count() <= 40), "{wrapped}");
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with("      ")), "{wrapped}");
        assert_eq!(wrapped.split_whitespace().collect::<Vec<_>>(), text.split_whitespace().collect::<Vec<_>>());
    }
}
