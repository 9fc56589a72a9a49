//! The unit a report gives rates in: MiB/s (2^20 bytes per second, iosurvey's own) or GB/s
//! (10^9, as vendors' papers state theirs), so that a report can be set beside a paper's
//! figures without converting each by hand. The analysis computes in MiB/s; the document is
//! converted as a whole once it is laid out, every figure, table and sentence alike.

use super::paper::Block;
use crate::analysis::{Cell, Chart, Finding, Table};

/// `report --units`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Units {
    /// MiB/s: 2^20 bytes per second.
    #[default]
    Mib,
    /// GB/s: 10^9 bytes per second, as the papers state theirs.
    Gb,
}

const FROM: &str = "MiB/s";
const TO: &str = "GB/s";

/// One MiB/s in GB/s.
const FACTOR: f64 = 1_048_576.0 / 1e9;

/// A rate in GB/s as a paper writes it: three significant digits, at least one decimal.
pub fn gb(v: f64) -> String {
    let a = v.abs();
    let decimals = match a {
        _ if a >= 100.0 => 1,
        _ if a >= 1.0 || a == 0.0 => 2,
        _ => (2.0 - a.log10().floor()) as usize,
    };
    format!("{v:.decimals$}")
}

/// `text` with each rate in MiB/s said in GB/s: "235.6 MiB/s" becomes "0.247 GB/s", a bare
/// "MiB/s" (a unit in a title) "GB/s"; the numbers of an interval before its unit ("± 3.2",
/// "(1.0 to 2.0)") are not touched unless the unit follows them.
pub fn said_in_gb(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(FROM) {
        let before = &rest[..at];
        // The number just before " MiB/s", if there is one.
        let spaced = before.strip_suffix(' ');
        let number_start = spaced.map(|b| {
            b.char_indices()
                .rev()
                .take_while(|(_, c)| c.is_ascii_digit() || *c == '.' || *c == '-')
                .last()
                .map_or(b.len(), |(i, _)| i)
        });
        match (spaced, number_start) {
            (Some(b), Some(start)) if start < b.len() && b[start..].parse::<f64>().is_ok() => {
                let value: f64 = b[start..].parse().unwrap_or_default();
                out.push_str(&b[..start]);
                out.push_str(&gb(value * FACTOR));
                out.push(' ');
                out.push_str(TO);
            }
            _ => {
                out.push_str(before);
                out.push_str(TO);
            }
        }
        rest = &rest[at + FROM.len()..];
    }
    out.push_str(rest);
    out
}

/// The numbers of a text cell of a row in MiB/s (an interval: "± 3.2", "(1.0 to 2.0)") in GB/s.
fn numbers_in_gb(text: &str) -> String {
    let mut out = String::new();
    let mut number = String::new();
    let flush = |number: &mut String, out: &mut String| {
        match number.parse::<f64>() {
            Ok(v) => out.push_str(&gb(v * FACTOR)),
            Err(_) => out.push_str(number),
        }
        number.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() || (c == '.' && !number.is_empty()) || (c == '-' && number.is_empty()) {
            number.push(c);
        } else {
            flush(&mut number, &mut out);
            out.push(c);
        }
    }
    flush(&mut number, &mut out);
    out
}

fn num_in_gb(cell: &mut Cell) {
    if let Cell::Num { value, decimals } = cell {
        *value *= FACTOR;
        *decimals = 3;
    }
}

fn table_in_gb(t: &mut Table) {
    t.title = said_in_gb(&t.title);
    t.notes = t.notes.iter().map(|n| said_in_gb(n)).collect();
    let unit_column = t.columns.iter().position(|c| c == "unit");
    for (k, column) in t.columns.iter_mut().enumerate() {
        if column.contains(FROM) {
            *column = said_in_gb(column);
            for row in &mut t.rows {
                if let Some(cell) = row.get_mut(k) {
                    num_in_gb(cell);
                }
            }
        }
    }
    // A table of several units says each row's in a column of its own.
    let Some(u) = unit_column else { return };
    for row in &mut t.rows {
        if !matches!(row.get(u), Some(Cell::Text(unit)) if unit == FROM) {
            continue;
        }
        for (k, cell) in row.iter_mut().enumerate() {
            match cell {
                _ if k == u => *cell = Cell::Text(TO.into()),
                Cell::Num { .. } => num_in_gb(cell),
                Cell::Text(t) if t.starts_with('±') || t.starts_with('(') => *t = numbers_in_gb(t),
                _ => {}
            }
        }
    }
}

fn chart_in_gb(c: &mut Chart) {
    let rates = c.y.contains(FROM) || (c.heat.is_some() && c.title.contains(FROM));
    c.title = said_in_gb(&c.title);
    if !rates {
        return;
    }
    c.y = said_in_gb(&c.y);
    for (_, points) in &mut c.series {
        points.iter_mut().for_each(|p| p.1 *= FACTOR);
    }
    for bars in &mut c.errors {
        bars.iter_mut().for_each(|b| (b.1, b.2) = (b.1 * FACTOR, b.2 * FACTOR));
    }
    c.references.iter_mut().for_each(|r| r.1 *= FACTOR);
    c.published.iter_mut().for_each(|p| p.2 *= FACTOR);
    if let Some(h) = &mut c.heat {
        h.values.iter_mut().flatten().flatten().for_each(|v| *v *= FACTOR);
    }
}

/// The document with its rates in `units`.
pub fn convert(blocks: &mut [Block], units: Units) {
    if units == Units::Mib {
        return;
    }
    for b in blocks {
        match b {
            Block::Heading(_, text, _) | Block::Text(text) => *text = said_in_gb(text),
            Block::Facts(facts) => facts.iter_mut().for_each(|f| f.1 = said_in_gb(&f.1)),
            Block::Figure(_, chart, caption) => {
                chart_in_gb(chart);
                *caption = said_in_gb(caption);
            }
            Block::Table(_, t, caption) => {
                table_in_gb(t);
                *caption = said_in_gb(caption);
            }
            Block::Findings(found) => {
                for (f, _) in found.iter_mut() {
                    *f = Finding { text: said_in_gb(&f.text), ..f.clone() };
                }
            }
            Block::Contents(_) | Block::Code(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_in_mib_is_said_in_decimal_gb_everywhere_in_the_document() {
        assert_eq!(
            said_in_gb("lustre write peaks at 1000.0 MiB/s with 4 clients"),
            "lustre write peaks at 1.05 GB/s with 4 clients"
        );
        assert_eq!(said_in_gb("seq: write MiB/s against clients"), "seq: write GB/s against clients");
        assert_eq!(said_in_gb("from 235.6 MiB/s to 100 MiB/s"), "from 0.247 GB/s to 0.105 GB/s");
        let columns = ["target", "peak", "95% interval", "unit"].map(String::from).to_vec();
        let mut t = Table { title: "peaks".into(), columns, rows: Vec::new(), notes: Vec::new() };
        t.rows.push(vec![
            Cell::Text("a".into()),
            Cell::Num { value: 1000.0, decimals: 1 },
            Cell::Text("± 100.0".into()),
            Cell::Text("MiB/s".into()),
        ]);
        t.rows.push(vec![
            Cell::Text("b".into()),
            Cell::Num { value: 1000.0, decimals: 0 },
            Cell::Empty,
            Cell::Text("IOPS".into()),
        ]);
        let mut c = Chart { title: "write MiB/s against clients".into(), y: "MiB/s".into(), ..Chart::default() };
        c.series.push(("a".into(), vec![(1.0, 1000.0)]));
        c.errors.push(vec![(1.0, 900.0, 1100.0)]);
        let mut blocks = vec![
            Block::Table(1, t, "Peak of each op".into()),
            Block::Figure(1, Box::new(c), "write MiB/s".into()),
            Block::Text("read reaches 500.0 MiB/s".into()),
        ];
        convert(&mut blocks, Units::Gb);
        let Block::Table(_, t, _) = &blocks[0] else { panic!() };
        assert_eq!(t.rows[0][1].to_string(), "1.049");
        assert_eq!(t.rows[0][2].to_string(), "± 0.105");
        assert_eq!(t.rows[0][3].to_string(), "GB/s");
        assert_eq!(t.rows[1][1].to_string(), "1000", "IOPS untouched");
        let Block::Figure(_, c, caption) = &blocks[1] else { panic!() };
        assert_eq!((c.y.as_str(), caption.as_str()), ("GB/s", "write GB/s"));
        assert!((c.series[0].1[0].1 - 1.048576).abs() < 1e-9 && (c.errors[0][0].2 - 1.1534336).abs() < 1e-9);
        assert!(matches!(&blocks[2], Block::Text(t) if t == "read reaches 0.524 GB/s"));
    }
}
