//! HTML: one self-contained page per report, nothing fetched from elsewhere (styles inline,
//! figures as inline SVG, each table's and figure's numbers as a `data:` download), and the
//! escaping every text on it goes through.

use super::{figures, Csv, Exporter};
use crate::analysis::{Cell, Report, Table};
use crate::escape::visible;
use std::fmt::Write;

/// One HTML page with nothing fetched from elsewhere: styles inline, each table's CSV as a
/// `data:` link, the findings first.
pub struct Html;

/// Text made safe inside HTML elements and attributes, its control characters made visible
/// first (a page is read in terminals too, and a browser would show nothing for them).
pub fn escape(text: &str) -> String {
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
pub(super) fn percent_encode(text: &str) -> String {
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
td.n{text-align:right;font-variant-numeric:tabular-nums}td.w{white-space:nowrap}caption{text-align:left;font-weight:bold}\
.findings li{margin:.3em 0}.runs{color:#666}";

/// " (runs 1-3, 7)" after a finding, or nothing when it rests on no stored run.
pub(super) fn runs_said(runs: &[i64]) -> String {
    match runs {
        [] => String::new(),
        _ => format!(" (runs {})", crate::analysis::study::spans(runs)),
    }
}

pub(super) fn table(s: &mut String, t: &Table) {
    let _ = writeln!(s, "<table>\n<caption>{}</caption>", escape(&t.title));
    let head: Vec<String> = t.columns.iter().map(|c| format!("<th>{}</th>", escape(c))).collect();
    let _ = writeln!(s, "<tr>{}</tr>", head.concat());
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| {
                // A name of a few characters ("tmpfs-a") stays on one line: broken at its hyphen
                // it reads as two.
                let class = match c {
                    Cell::Int(_) | Cell::Num { .. } | Cell::Empty => " class=\"n\"",
                    Cell::Text(t) if t.chars().count() <= 16 => " class=\"w\"",
                    Cell::Text(_) => "",
                };
                format!("<td{class}>{}</td>", escape(&c.to_string()))
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
            escape(&title)
        );
        for line in &report.heading {
            let _ = writeln!(s, "<p>{}</p>", escape(line));
        }
        if !report.findings.is_empty() {
            let _ = writeln!(s, "<h2>Findings</h2>\n<ul class=\"findings\">");
            for f in &report.findings {
                let runs = runs_said(&f.runs);
                let runs = if runs.is_empty() { runs } else { format!(" <span class=\"runs\">{}</span>", runs.trim()) };
                let _ = writeln!(s, "<li>{}{runs}</li>", escape(&f.text));
            }
            let _ = writeln!(s, "</ul>");
        }
        for t in &report.tables {
            table(&mut s, t);
            let one = Report { tables: vec![t.clone()], ..Report::default() };
            let _ = writeln!(
                s,
                "<p><a download=\"table.csv\" href=\"data:text/csv;charset=utf-8,{}\">CSV</a></p>",
                percent_encode(&Csv.render(&one))
            );
            for note in &t.notes {
                let _ = writeln!(s, "<p>{}</p>", escape(note));
            }
        }
        for c in &report.charts {
            // Inline SVG needs no namespace in HTML, and the page names no address at all.
            let svg = inline(&figures::svg(c));
            let _ = writeln!(s, "<figure>{svg}<figcaption>{}</figcaption></figure>", escape(&c.title));
            // The chart's numbers beside it, and their CSV.
            let numbers = c.table();
            let one = Report { tables: vec![numbers.clone()], ..Report::default() };
            let _ = writeln!(s, "<details><summary>the numbers</summary>");
            table(&mut s, &numbers);
            let _ = writeln!(s, "</details>");
            let _ = writeln!(
                s,
                "<p><a download=\"chart.csv\" href=\"data:text/csv;charset=utf-8,{}\">CSV</a></p>",
                percent_encode(&Csv.render(&one))
            );
        }
        for line in &report.footer {
            let _ = writeln!(s, "<p>{}</p>", escape(line));
        }
        s.push_str("</body></html>\n");
        s
    }
}

/// A standalone SVG made inline: HTML needs no namespace, and the page names no address at all.
pub(super) fn inline(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

/// The page's own styles: type large enough to read a figure's numbers beside it.
const PAGE_STYLE: &str = "body{font-family:system-ui,sans-serif;font-size:17px;line-height:1.45;margin:2em auto;max-width:62em;padding:0 1em}\
h1{font-size:1.8em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0 .5em}th,td{padding:.2em .6em;border-bottom:1px solid #ddd;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.w{white-space:nowrap}caption{text-align:left;padding:.3em 0}\
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}figcaption,caption{font-size:.95em}\
figure[data-kind=heat]{display:inline-block;width:49%;margin:.6em 0;vertical-align:top}figure[data-kind=heat] figcaption{font-size:.85em}\
.facts th{text-align:left;font-weight:normal;color:#555}.note,.downloads{color:#555;font-size:.9em}\
.findings li{margin:.3em 0}.runs{color:#666}.wide{overflow-x:auto}.contents{list-style:none;padding-left:1em}\
@media print{body{font-size:11pt;margin:0;max-width:none}.wide{overflow:visible}table{font-size:8.5pt}\
td.w,td.n{white-space:normal}figure{break-inside:avoid}.downloads{display:none}details{display:none}}";

/// The report command's document as one self-contained page.
pub fn page(blocks: &[super::paper::Block]) -> String {
    use super::paper::Block;
    let title = blocks.iter().find_map(|b| match b {
        Block::Heading(1, text, _) => Some(text.as_str()),
        _ => None,
    });
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\"><title>{}</title><style>{PAGE_STYLE}</style></head><body>\n",
        escape(title.unwrap_or("iosurvey report"))
    );
    for b in blocks {
        match b {
            Block::Heading(level, text, anchor) => {
                let _ = writeln!(s, "<h{level} id=\"{}\">{}</h{level}>", escape(anchor), escape(text));
            }
            Block::Text(text) => {
                let _ = writeln!(s, "<p>{}</p>", escape(text));
            }
            Block::Code(text) => {
                let _ = writeln!(s, "<pre>{}</pre>", escape(text));
            }
            Block::Facts(facts) => {
                let _ = writeln!(s, "<table class=\"facts\">");
                for (name, value) in facts {
                    let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", escape(name), escape(value));
                }
                let _ = writeln!(s, "</table>");
            }
            Block::Contents(entries) => {
                // No list numbers: the studies carry their own.
                let _ = writeln!(s, "<nav><h2>Contents</h2><ul class=\"contents\">");
                for (_, text, anchor) in entries {
                    let _ = writeln!(s, "<li><a href=\"#{}\">{}</a></li>", escape(anchor), escape(text));
                }
                let _ = writeln!(s, "</ul></nav>");
            }
            Block::Figure(n, chart, caption) => {
                let svg = figures::svg(chart);
                let numbers = Report { tables: vec![figures::numbers(chart)], ..Report::default() };
                // What the figure draws, for a reader's tools (and the tests that read pages).
                let kind = match (&chart.heat, chart.bars) {
                    (Some(_), _) => "heat",
                    (None, true) => "bars",
                    (None, false) => "line",
                };
                let _ = writeln!(
                    s,
                    "<figure id=\"figure-{n}\" data-kind=\"{kind}\">{}<figcaption><b>Figure {n}.</b> {} <span class=\"downloads\"><a download=\"figure-{n}.svg\" href=\"data:image/svg+xml;charset=utf-8,{}\">SVG</a> <a download=\"figure-{n}.csv\" href=\"data:text/csv;charset=utf-8,{}\">CSV</a></span></figcaption></figure>",
                    inline(&svg),
                    escape(caption),
                    percent_encode(&svg),
                    percent_encode(&Csv.render(&numbers))
                );
            }
            Block::Table(n, t, caption) => {
                let one = Report { tables: vec![t.clone()], ..Report::default() };
                let _ = writeln!(s, "<div class=\"wide\" id=\"table-{n}\">");
                numbered_table(&mut s, t, &format!("Table {n}."), caption);
                let _ = writeln!(
                    s,
                    "</div>\n<p class=\"downloads\"><a download=\"table-{n}.csv\" href=\"data:text/csv;charset=utf-8,{}\">CSV</a></p>",
                    percent_encode(&Csv.render(&one))
                );
                for note in &t.notes {
                    let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(note));
                }
            }
            Block::Findings(found) => {
                let _ = writeln!(s, "<ul class=\"findings\">");
                for (f, link) in found {
                    let runs = runs_said(&f.runs);
                    let runs =
                        if runs.is_empty() { runs } else { format!(" <span class=\"runs\">{}</span>", runs.trim()) };
                    let _ = writeln!(s, "<li>{}{runs} <a href=\"#{}\">see</a></li>", escape(&f.text), escape(link));
                }
                let _ = writeln!(s, "</ul>");
            }
        }
    }
    s.push_str("</body></html>\n");
    s
}

/// A table with a numbered caption ("Table 3." in bold, then the caption).
fn numbered_table(s: &mut String, t: &Table, number: &str, caption: &str) {
    let mut plain = String::new();
    table(&mut plain, &Table { title: String::new(), ..t.clone() });
    let _ = write!(
        s,
        "{}",
        plain.replacen("<caption></caption>", &format!("<caption><b>{number}</b> {}</caption>", escape(caption)), 1)
    );
}
