//! Renderers of [`Report`]s, behind one trait: text for the terminal, JSON, CSV and Markdown
//! for other tools and documents, and one self-contained HTML page (charts will join it). They
//! only lay out what the analysis computed; no renderer computes a figure. Every text each
//! lays out goes through [`crate::escape`] (or the HTML escaping) for the format it lands in.

use crate::analysis::{Cell, Chart, Report, Table};
use crate::escape::{csv_field, markdown as md_escape, visible};
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
        let mut s = String::new();
        // Each piece made visible on its own, so a line break inside a label shows as `\n`
        // rather than breaking the table.
        for line in &report.heading {
            let _ = writeln!(s, "{}", visible(line));
        }
        for t in &report.tables {
            let _ = writeln!(s, "{}{}:", if s.is_empty() { "" } else { "\n" }, visible(&t.title));
            let mut table = comfy_table::Table::new();
            table.load_preset(presets::NOTHING).set_content_arrangement(ContentArrangement::Disabled);
            table.set_header(t.columns.iter().map(|c| visible(c)));
            for row in &t.rows {
                table.add_row(row.iter().map(|c| {
                    let cell = comfy_table::Cell::new(visible(&c.to_string()));
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
                let _ = writeln!(s, "{}", visible(note));
            }
        }
        for f in &report.findings {
            let _ = writeln!(s, "{}", visible(&f.text));
        }
        for line in &report.footer {
            let _ = writeln!(s, "{}", visible(line));
        }
        s
    }
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

/// Markdown: the heading as a paragraph, a `###` section and a pipe table per table, the
/// findings as a list.
pub struct Markdown;

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
            let heading: Vec<String> = report.heading.iter().map(|l| md_escape(l)).collect();
            let _ = writeln!(s, "{}\n", heading.join("  \n"));
        }
        for t in &report.tables {
            md_table(&mut s, t);
        }
        if !report.findings.is_empty() {
            let _ = writeln!(s, "### Findings\n");
            for f in &report.findings {
                let _ = writeln!(s, "- {}{}", md_escape(&f.text), runs_said(&f.runs));
            }
            s.push('\n');
        }
        for line in &report.footer {
            let _ = writeln!(s, "{}  ", md_escape(line));
        }
        s
    }
}

/// A report as Markdown for papers and wikis: the findings first, then the tables, then each
/// chart as an SVG file beside the text (named `STEM-chart-N.svg`) with its numbers under it.
/// Returns the text and the (file name, SVG) of each chart.
pub fn markdown_report(report: &Report, stem: &str) -> (String, Vec<(String, String)>) {
    let findings_first = Report { tables: Vec::new(), footer: Vec::new(), charts: Vec::new(), ..report.clone() };
    let mut s = Markdown.render(&findings_first);
    for t in &report.tables {
        md_table(&mut s, t);
    }
    let mut files = Vec::new();
    for (k, chart) in report.charts.iter().enumerate() {
        let name = format!("{stem}-chart-{}.svg", k + 1);
        // The file name comes from the -o path: percent-encoded, a space or ')' in it cannot
        // end the link.
        let _ = writeln!(s, "![{}]({})\n", md_escape(&chart.title), percent_encode(&name));
        md_table(&mut s, &chart.table());
        files.push((name, svg_chart(chart)));
    }
    for line in &report.footer {
        let _ = writeln!(s, "{}  ", md_escape(line));
    }
    (s, files)
}

/// One HTML page with nothing fetched from elsewhere: styles inline, each table's CSV as a
/// `data:` link, the findings first.
pub struct Html;

/// Text made safe inside HTML elements and attributes, its control characters made visible
/// first (a page is read in terminals too, and a browser would show nothing for them).
fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in visible(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Bytes as a `data:` URL's percent-encoded payload.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// What the page may load: nothing from anywhere, only its own inline styles and `data:`
/// images, so "no network" is the browser's rule, not only the page's habit.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}\
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{padding:.2em .6em;border-bottom:1px solid #ddd}\
td.n{text-align:right;font-variant-numeric:tabular-nums}caption{text-align:left;font-weight:bold}\
.findings li{margin:.3em 0}.runs{color:#666}";

/// A chart as SVG, drawn by plotters: axes from 0 to a little above the largest value; per
/// series a line with dots, or a bar at each x (the series of one x side by side); the x
/// values, or their names, as ticks; a legend.
fn svg_chart(c: &Chart) -> String {
    use plotters::prelude::*;
    if let Some(h) = &c.heat {
        return svg_heat(&c.title, h);
    }
    const COLOURS: [RGBColor; 6] = [
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0xd6, 0x27, 0x28),
        RGBColor(0x2c, 0xa0, 0x2c),
        RGBColor(0x94, 0x67, 0xbd),
        RGBColor(0xff, 0x7f, 0x0e),
        RGBColor(0x8c, 0x56, 0x4b),
    ];
    let points = c.series.iter().flat_map(|(_, p)| p.iter());
    let xmin = points.clone().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let xmin = if xmin.is_finite() { xmin } else { 0.0 };
    let xmax = points.clone().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max).max(xmin + 1.0);
    // Whole x values (clients, tasks) get whole ticks only.
    let whole = c.bars || !c.ticks.is_empty() || c.series.iter().all(|(_, p)| p.iter().all(|q| q.0.fract() == 0.0));
    let ymax = points.map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    // Bars sit in the middle of one slot per whole x.
    let (x0, x1) = if c.bars { (xmin - 0.5, xmax + 0.5) } else { (xmin, xmax) };
    let mut svg = String::new();
    let drawn = (|| -> Result<(), String> {
        let root = SVGBackend::with_string(&mut svg, (560, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(said)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&c.title, ("sans-serif", 13))
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, 0.0..ymax)
            .map_err(said)?;
        let label = |x: &f64| match c.ticks.iter().find(|(at, _)| (at - x).abs() < 1e-9) {
            Some((_, name)) => name.clone(),
            None if c.ticks.is_empty() && (!whole || x.fract() == 0.0) => axis_number(*x),
            None => String::new(),
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(c.x.as_str()).y_desc(c.y.as_str()).x_label_formatter(&label).disable_x_mesh();
        if whole {
            // One label per named or whole position, at most about twenty: named ticks sit at
            // whole positions, which the axis's own key points then include.
            mesh.x_labels(((x1 - x0).ceil() as usize + 1).min(20));
        }
        mesh.draw().map_err(said)?;
        let width = 0.8 / c.series.len().max(1) as f64;
        for (k, (name, pts)) in c.series.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()];
            if c.bars {
                let left = |x: f64| x - 0.4 + k as f64 * width;
                chart
                    .draw_series(
                        pts.iter()
                            .map(|&(x, y)| Rectangle::new([(left(x), 0.0), (left(x) + width, y)], colour.filled())),
                    )
                    .map_err(said)?
                    .label(name.as_str())
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
            } else {
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(2)))
                    .map_err(said)?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], colour.stroke_width(2)));
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled()))).map_err(said)?;
            }
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(said)?;
        root.present().map_err(said)?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        // Drawing into a string cannot fail for want of a device; say so if it ever does.
        Err(e) => format!("<p>the chart could not be drawn: {}</p>", html_escape(&e.to_string())),
    }
}

/// A heat map as SVG: a square per value, coloured from dark blue (the lowest) to yellow (the
/// highest) on a logarithmic scale (rates span decades), its number written in it, nothing
/// where nothing was measured; a cliff is a thick red line between the two sizes it falls
/// between.
fn svg_heat(title: &str, h: &crate::analysis::Heat) -> String {
    const W: usize = 58;
    const H: usize = 22;
    const LEFT: usize = 70;
    const TOP: usize = 46;
    let present: Vec<f64> = h.values.iter().flatten().flatten().copied().filter(|v| *v > 0.0).collect();
    let lo = present.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = present.iter().copied().fold(0.0, f64::max);
    let shade = |v: f64| {
        let t = if hi > lo { ((v / lo).ln() / (hi / lo).ln()).clamp(0.0, 1.0) } else { 1.0 };
        // From (40, 30, 110) to (250, 220, 40), through a green-teal middle.
        let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        (mix(40.0, 250.0), mix(30.0, 220.0), mix(110.0, 40.0), t)
    };
    let (width, height) = (LEFT + W * h.columns.len() + 10, TOP + H * h.rows.len() + 10);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"10\">\n<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n<text x=\"{}\" y=\"14\" font-size=\"13\" text-anchor=\"middle\">{}</text>\n",
        width / 2,
        html_escape(title)
    );
    for (j, name) in h.columns.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            LEFT + j * W + W / 2,
            TOP - 6,
            html_escape(name)
        );
    }
    for (i, (name, row)) in h.rows.iter().zip(&h.values).enumerate() {
        let y = TOP + i * H;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LEFT - 6,
            y + H / 2 + 4,
            html_escape(name)
        );
        for (j, v) in row.iter().enumerate() {
            let Some(v) = v.filter(|v| *v > 0.0) else { continue };
            let (r, g, b, t) = shade(v);
            let ink = if t > 0.6 { "black" } else { "white" };
            let x = LEFT + j * W;
            let _ = writeln!(
                s,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{W}\" height=\"{H}\" fill=\"rgb({r},{g},{b})\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{v:.0}</text>",
                x + W / 2,
                y + H / 2 + 4
            );
        }
    }
    let (right, bottom) = (LEFT + W * h.columns.len(), TOP + H * h.rows.len());
    for &i in &h.row_cliffs {
        let y = TOP + (i + 1) * H;
        let _ = writeln!(s, "<line class=\"cliff\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{right}\" y2=\"{y}\" stroke=\"red\" stroke-width=\"3\"/>");
    }
    for &j in &h.column_cliffs {
        let x = LEFT + (j + 1) * W;
        let _ = writeln!(s, "<line class=\"cliff\" x1=\"{x}\" y1=\"{TOP}\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"red\" stroke-width=\"3\"/>");
    }
    let _ = writeln!(
        s,
        "<text x=\"4\" y=\"{}\">file</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">record</text>",
        TOP - 6,
        LEFT - 6,
        TOP - 20
    );
    s.push_str("</svg>");
    s
}

/// " (runs 1, 2)" after a finding, or nothing when it rests on no stored run.
fn runs_said(runs: &[i64]) -> String {
    match runs {
        [] => String::new(),
        _ => format!(" (runs {})", runs.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// A number on an axis: at most three decimals, none that are zeros.
fn axis_number(x: f64) -> String {
    let text = format!("{x:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An error of the chart library, as words.
fn said(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn html_table(s: &mut String, t: &Table) {
    let _ = writeln!(s, "<table>\n<caption>{}</caption>", html_escape(&t.title));
    let head: Vec<String> = t.columns.iter().map(|c| format!("<th>{}</th>", html_escape(c))).collect();
    let _ = writeln!(s, "<tr>{}</tr>", head.concat());
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| {
                let class = if c.is_number() || matches!(c, Cell::Empty) { " class=\"n\"" } else { "" };
                format!("<td{class}>{}</td>", html_escape(&c.to_string()))
            })
            .collect();
        let _ = writeln!(s, "<tr>{}</tr>", cells.concat());
    }
    let _ = writeln!(s, "</table>");
}

impl Exporter for Html {
    fn render(&self, report: &Report) -> String {
        let mut s = String::new();
        let title = report.heading.first().or(report.tables.first().map(|t| &t.title)).cloned().unwrap_or_default();
        let _ = write!(
            s,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\"><title>{}</title><style>{STYLE}</style></head><body>\n",
            html_escape(&title)
        );
        for line in &report.heading {
            let _ = writeln!(s, "<p>{}</p>", html_escape(line));
        }
        if !report.findings.is_empty() {
            let _ = writeln!(s, "<h2>Findings</h2>\n<ul class=\"findings\">");
            for f in &report.findings {
                let runs = runs_said(&f.runs);
                let runs = if runs.is_empty() { runs } else { format!(" <span class=\"runs\">{}</span>", runs.trim()) };
                let _ = writeln!(s, "<li>{}{runs}</li>", html_escape(&f.text));
            }
            let _ = writeln!(s, "</ul>");
        }
        for t in &report.tables {
            html_table(&mut s, t);
            let one = Report { tables: vec![t.clone()], ..Report::default() };
            let _ = writeln!(
                s,
                "<p><a download=\"table.csv\" href=\"data:text/csv;charset=utf-8,{}\">CSV</a></p>",
                percent_encode(&Csv.render(&one))
            );
            for note in &t.notes {
                let _ = writeln!(s, "<p>{}</p>", html_escape(note));
            }
        }
        for c in &report.charts {
            // Inline SVG needs no namespace in HTML, and the page names no address at all.
            let svg = svg_chart(c).replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
            let _ = writeln!(s, "<figure>{svg}<figcaption>{}</figcaption></figure>", html_escape(&c.title));
            // The chart's numbers beside it, and their CSV.
            let numbers = c.table();
            let one = Report { tables: vec![numbers.clone()], ..Report::default() };
            let _ = writeln!(s, "<details><summary>the numbers</summary>");
            html_table(&mut s, &numbers);
            let _ = writeln!(s, "</details>");
            let _ = writeln!(
                s,
                "<p><a download=\"chart.csv\" href=\"data:text/csv;charset=utf-8,{}\">CSV</a></p>",
                percent_encode(&Csv.render(&one))
            );
        }
        for line in &report.footer {
            let _ = writeln!(s, "<p>{}</p>", html_escape(line));
        }
        s.push_str("</body></html>\n");
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
        report.findings.push(analysis::Finding { text: "<script>alert(1)</script>".into(), value: 1.0, runs: vec![3] });
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
        let at = html.find("stroke=\"#1F77B4\" stroke-width=\"2\" points=").expect("the series' line");
        let points = html[at..].split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        let xy: Vec<(f64, f64)> = points
            .split_whitespace()
            .map(|p| p.split_once(',').map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap())).unwrap())
            .collect();
        assert_eq!(xy.len(), 2, "{points}");
        assert!(xy[1].0 > xy[0].0 && xy[1].1 < xy[0].1, "{points}");
        assert!(html.contains(">\n0.0\n</text>") || html.contains(">0.0</text>"), "the y axis starts at 0: {html}");
        assert_eq!(percent_encode("a b,\n"), "a%20b%2C%0A");
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
        report.findings.push(analysis::Finding { text: "[a](javascript:b)".into(), value: 0.0, runs: vec![] });
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
    fn compare_and_the_markdown_report_keep_their_layout() {
        let (a, b) = two_sides();
        let report =
            analysis::compare(analysis::Side { name: "lustre-a", runs: &a }, analysis::Side { name: "f800", runs: &b });
        insta::assert_snapshot!("text_compare", Text.render(&report));
        let mut run = fixtures::run(None);
        run.id = Some(7);
        let (text, charts) = markdown_report(&analysis::run(&run).and(analysis::survey(3, &survey_runs())), "paper");
        insta::assert_snapshot!("md_report", text);
        let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names[0], "paper-chart-1.svg");
        assert!(
            charts.iter().all(|(_, svg)| svg.starts_with("<svg ") && svg.contains("xmlns=")),
            "standalone SVG files"
        );
    }

    #[test]
    fn among_five_systems_the_slow_one_is_named() {
        let sides: Vec<(String, Vec<RunRecord>)> = [1.0, 1.05, 0.97, 1.02, 0.4]
            .into_iter()
            .enumerate()
            .map(|(k, scale)| {
                let mut r = fixtures::run(None);
                r.id = Some(k as i64 + 1);
                for p in &mut r.phases {
                    p.figures.bandwidth = p.figures.bandwidth.map(|b| b * scale);
                }
                (format!("ost{k}"), vec![r])
            })
            .collect();
        let sides: Vec<analysis::Side> = sides.iter().map(|(name, runs)| analysis::Side { name, runs }).collect();
        let found = analysis::recommend(&sides).findings;
        assert_eq!(found.len(), 2, "write and read: {found:?}");
        assert!(found[0].text.starts_with("ost4 is the slow one on file-per-task"), "{}", found[0].text);
        assert!(
            found[0].text.ends_with("40% of the median of 5 systems; on a single run: run it again to confirm"),
            "{}",
            found[0].text
        );
        assert_eq!(found[0].runs, [5]);
        assert!(analysis::recommend(&sides[..4]).findings.is_empty(), "none stands apart among the four others");
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
        assert_eq!(row[3].to_string(), format!("{:.1}", (iv.hi - iv.lo) / 2.0));
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
