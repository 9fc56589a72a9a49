//! Charts as standalone SVG, drawn with plotters, fit for a page of a white paper: drawn at the
//! width they are shown (so 12 px type stays 12 px), every text at least [`MIN_TYPE`] px, the
//! legend below the data rather than over it, series told apart by colour (the Okabe-Ito
//! palette, distinct for colour-blind readers), by marker and by dash (distinct in grey
//! print), error bars where repetitions give a spread, published figures as dashed levels,
//! and a logarithmic axis where the values span more than a decade (clients as powers of two).
//! Heat maps carry their colour scale.

use crate::analysis::{Chart, Heat};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::{DashedPathElement, EmptyElement};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::fmt::Write;

/// The smallest type drawn, in px at the drawn size.
pub const MIN_TYPE: u32 = 12;
/// Type as plotters is asked for it: its SVG backend writes about 0.8 of the size asked
/// (17 is drawn at 13.7 px, 20 at 16.1).
const TYPE: u32 = 17;
const TITLE_TYPE: u32 = 20;
/// Type of the heat map, which is written here directly.
const HEAT_TYPE: u32 = 14;
/// The drawn width: a page's text column.
const WIDTH: u32 = 760;
const PLOT_HEIGHT: u32 = 430;
const LEGEND_ROW: u32 = 24;
/// The plot's width less its own: the y axis's labels and the margins.
const PLOT_SIDES: u32 = 84 + 12 + 24;
/// What a character of an axis's label takes across, at most (pixels).
const CHAR_WIDTH: usize = (TYPE as usize * 6).div_ceil(10);

/// Okabe and Ito's colours, in the order they stay apart best (yellow last: it fades on white).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xF0, 0xE4, 0x42),
];

/// Dash (length, gap) in px per series; (0, 0) is a solid line.
const DASHES: [(i32, i32); 4] = [(0, 0), (10, 5), (3, 4), (16, 4)];
/// Dash (length, gap) of each published level, all black: levels are not series.
const LEVEL_DASHES: [(i32, i32); 3] = [(8, 6), (2, 4), (14, 4)];

/// How an axis maps values to the page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Each power of `base` an equal step: base 2 for clients, 10 for rates and latencies.
    Log(f64),
}

impl Scale {
    fn to(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log(b) => v.log(b),
        }
    }
}

/// Whether positive values span more than a decade: a linear axis would crush the small ones
/// onto the axis.
pub fn spans_decade(values: &[f64]) -> bool {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    lo > 0.0 && hi / lo > 10.0
}

/// The scale of an x axis of these values: powers of two (team sizes swept by doubling) on a
/// base-2 axis from a four-fold span on, any other positive values over a decade on base 10.
pub fn x_scale(xs: &[f64]) -> Scale {
    let powers = xs.iter().all(|&x| x >= 1.0 && x.fract() == 0.0 && (x as u64).is_power_of_two());
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    if powers && hi / lo >= 4.0 {
        Scale::Log(2.0)
    } else if spans_decade(xs) {
        Scale::Log(10.0)
    } else {
        Scale::Linear
    }
}

/// The scale of a y axis: base 10 over a decade, else linear from 0.
pub fn y_scale(ys: &[f64]) -> Scale {
    if spans_decade(ys) {
        Scale::Log(10.0)
    } else {
        Scale::Linear
    }
}

/// Tick values within [lo, hi] (untransformed): 1-2-5 steps on a linear axis, the powers of
/// the base on a logarithmic one (with 2 and 5 between decades when they are few).
fn ticks(scale: Scale, lo: f64, hi: f64, whole: bool) -> Vec<f64> {
    match scale {
        Scale::Linear => {
            let raw = ((hi - lo) / 6.0).max(f64::MIN_POSITIVE);
            let magnitude = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(raw);
            let step = if whole { step.max(1.0).round() } else { step };
            let mut v = (lo / step).ceil() * step;
            let mut out = Vec::new();
            while v <= hi + step * 1e-9 && out.len() < 50 {
                out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                v += step;
            }
            out
        }
        Scale::Log(base) => {
            let (a, b) = (lo.log(base).floor() as i32, hi.log(base).ceil() as i32);
            let mults: &[f64] = if base == 10.0 && b - a <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            let mut out: Vec<f64> = (a..=b)
                .flat_map(|k| mults.iter().map(move |m| m * base.powi(k)))
                .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
                .collect();
            while out.len() > 10 {
                out = out.into_iter().step_by(2).collect();
            }
            out
        }
    }
}

/// A number on an axis: whole numbers with no decimals, others with three significant digits
/// (a series of 50 ms intervals is labelled 0.05, not 0).
fn axis_number(x: f64) -> String {
    let decimals = if x == 0.0 || x.abs() >= 1.0 { 3 } else { (2.0 - x.abs().log10().floor()) as usize };
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A heat map's number: whole from 100 on, else three significant digits (a rate in GB/s is
/// under one, and would read 0).
fn cell_number(v: f64) -> String {
    match v >= 100.0 {
        true => format!("{v:.0}"),
        false => {
            let decimals = if v <= 0.0 { 0 } else { (2.0 - v.log10().floor()).max(0.0) as usize };
            format!("{v:.decimals$}")
        }
    }
}

/// An error of the chart library, as words.
fn said(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The chart as a standalone SVG document.
pub fn svg(c: &Chart) -> String {
    let drawn = match &c.heat {
        Some(h) => return heat(&c.title, &c.y, &c.x, h),
        None => plot(c),
    };
    drawn.unwrap_or_else(|e| {
        // Drawing into a string cannot fail for want of a device; say so if it ever does.
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"40\"><text x=\"4\" y=\"24\" font-size=\"{TYPE}\">the chart could not be drawn: {}</text></svg>",
            super::html::escape(&e)
        )
    })
}

/// A chart's numbers as a table, as drawn: its points, each error bar's ends beside its
/// series, each published level in a row of its own.
pub fn numbers(c: &Chart) -> crate::analysis::Table {
    use crate::analysis::Cell;
    let mut t = c.table();
    for (k, bars) in c.errors.iter().enumerate().filter(|(_, b)| !b.is_empty()) {
        let name = c.series.get(k).map_or("", |s| s.0.as_str());
        t.columns.push(format!("{name} low ({})", c.y));
        t.columns.push(format!("{name} high ({})", c.y));
        for row in &mut t.rows {
            let x = match row.first() {
                Some(Cell::Num { value, .. }) => Some(*value),
                _ => None,
            };
            let bar = bars.iter().find(|b| Some(b.0) == x);
            row.push(bar.map_or(Cell::Empty, |b| Cell::Num { value: b.1, decimals: 1 }));
            row.push(bar.map_or(Cell::Empty, |b| Cell::Num { value: b.2, decimals: 1 }));
        }
    }
    t.notes.extend(c.marks.iter().map(|(name, at)| format!("{name}: at {at:.3} ({})", c.x)));
    // Published levels in columns of their own, beside no client count and no label's column.
    if !c.references.is_empty() || !c.published.is_empty() {
        let width = t.columns.len();
        t.columns.push("published".into());
        t.columns.push(format!("published level ({})", c.y));
        for row in &mut t.rows {
            row.resize(width + 2, Cell::Empty);
        }
        for (name, level) in &c.references {
            let mut row = vec![Cell::Empty; width];
            row.extend([Cell::Text(name.clone()), Cell::Num { value: *level, decimals: 1 }]);
            t.rows.push(row);
        }
        // A published point stands at its x, under no label's column.
        for (name, x, y) in &c.published {
            let mut row = vec![Cell::Empty; width];
            row[0] = Cell::Num { value: *x, decimals: 0 };
            row.extend([Cell::Text(name.clone()), Cell::Num { value: *y, decimals: 1 }]);
            t.rows.push(row);
        }
    }
    t
}

/// What a legend entry stands for.
#[derive(Clone, Copy)]
enum Entry {
    /// Series k, in its colour, marker and dash.
    Series(usize),
    /// A level or a mark, dashed black.
    Level,
    /// A published point, a black diamond.
    Point,
}

/// The legend's entries: each series, each level and mark, each published point.
fn legend(c: &Chart) -> Vec<(String, Entry)> {
    let mut entries: Vec<(String, Entry)> =
        c.series.iter().enumerate().map(|(k, s)| (s.0.clone(), Entry::Series(k))).collect();
    entries.extend(c.references.iter().chain(&c.marks).map(|(name, _)| (name.clone(), Entry::Level)));
    entries.extend(c.published.iter().map(|(name, ..)| (name.clone(), Entry::Point)));
    entries
}

/// A published point: a black diamond, hollow so a series' marker under it still shows.
fn diamond<DB: DrawingBackend, C: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, C>,
    p: C::From,
) -> Result<(), String>
where
    C::From: Clone,
{
    let ink = BLACK.stroke_width(2);
    area.draw(&(EmptyElement::at(p) + PathElement::new(vec![(0, -8), (8, 0), (0, 8), (-8, 0), (0, -8)], ink)))
        .map_err(said)
}

/// The chart's drawing area over its data, in the axes' units (logarithms on a log axis).
type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Where a chart's values lie and how its axes map them: each axis's scale, the drawn range
/// (in the scale's units) and the values' own bounds.
struct Frame {
    xscale: Scale,
    yscale: Scale,
    /// Bars, or x positions named as categories.
    categorical: bool,
    xs: Vec<f64>,
    x_bounds: (f64, f64),
    x: (f64, f64),
    y: (f64, f64),
    /// The x axis's ticks and their names.
    ticks: Vec<(f64, String)>,
    /// Whether the names of the x axis's categories stand upright.
    upright: bool,
    /// The height below the plot that the x axis's names take, in px.
    label_area: u32,
}

fn frame(c: &Chart) -> Frame {
    let points = || c.series.iter().flat_map(|(_, p)| p.iter().copied());
    let mut xs: Vec<f64> = points().map(|p| p.0).collect();
    xs.extend(c.marks.iter().map(|m| m.1));
    xs.extend(c.published.iter().map(|p| p.1));
    let mut ys: Vec<f64> = points().map(|p| p.1).collect();
    ys.extend(c.published.iter().map(|p| p.2));
    ys.extend(c.errors.iter().flatten().flat_map(|e| [e.1, e.2]));
    ys.extend(c.references.iter().map(|r| r.1));
    let categorical = c.bars || !c.ticks.is_empty();
    let xscale = if categorical { Scale::Linear } else { x_scale(&xs) };
    // Bars grow from zero: a bar on a logarithmic axis has no base.
    let yscale = if c.bars { Scale::Linear } else { y_scale(&ys) };
    let (xlo, xhi) = bounds(&xs, 1.0);
    let (ylo, yhi) = bounds(&ys, 1.0);
    let x = match xscale {
        Scale::Linear if categorical => (xlo - 0.5, xhi + 0.5),
        // A margin either side, so that a dodged line's first and last points stay inside.
        Scale::Linear if xhi > xlo => (xlo - 0.04 * (xhi - xlo), xhi + 0.04 * (xhi - xlo)),
        Scale::Linear => (xlo - 0.5, xlo + 0.5),
        Scale::Log(_) => (xscale.to(xlo) - 0.15, xscale.to(xhi) + 0.15),
    };
    let y = match yscale {
        Scale::Linear => (0.0, yhi.max(1e-9) * 1.1),
        Scale::Log(_) => (yscale.to(ylo) - 0.1, yscale.to(yhi) + 0.1),
    };
    let mut f = Frame {
        xscale,
        yscale,
        categorical,
        xs,
        x_bounds: (xlo, xhi),
        x,
        y,
        ticks: Vec::new(),
        upright: false,
        label_area: 52,
    };
    f.ticks = x_ticks(c, &f);
    // Names of categories too wide for their room side by side stand upright, so that
    // neighbours never overlap; the plot grows by what they need.
    let room = (WIDTH - PLOT_SIDES) as usize / f.ticks.len().max(1);
    let widest = f.ticks.iter().map(|t| t.1.chars().count() * CHAR_WIDTH).max().unwrap_or(0);
    f.upright = categorical && widest + 8 > room;
    f.label_area = if f.upright { widest as u32 + 40 } else { 52 };
    f
}

/// The x axis's ticks and their names: every category, else round values across the range.
fn x_ticks(c: &Chart, f: &Frame) -> Vec<(f64, String)> {
    if f.categorical {
        let named = |x: f64| c.ticks.iter().find(|(at, _)| (at - x).abs() < 1e-9).map(|t| t.1.clone());
        let mut at: Vec<f64> = f.xs.clone();
        at.extend(c.ticks.iter().map(|t| t.0));
        at.sort_by(f64::total_cmp);
        at.dedup();
        return at.into_iter().map(|x| (x, named(x).unwrap_or_else(|| axis_number(x)))).collect();
    }
    let whole = f.xs.iter().all(|x| x.fract() == 0.0);
    let (lo, hi) = match f.xscale {
        Scale::Log(_) => f.x_bounds,
        Scale::Linear => f.x,
    };
    ticks(f.xscale, lo, hi, whole).into_iter().map(|v| (v, axis_number(v))).collect()
}

fn plot(c: &Chart) -> Result<String, String> {
    let entries = legend(c);
    let f = frame(c);
    let label_area = f.label_area;
    let plot_height = PLOT_HEIGHT + label_area - 52;
    let height = PLOT_HEIGHT + LEGEND_ROW * entries.len() as u32 + 12 + label_area - 52;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(said)?;
        let (top, bottom) = root.split_vertically(plot_height);
        let mut chart = ChartBuilder::on(&top)
            .caption(&c.title, ("sans-serif", TITLE_TYPE))
            .margin(12)
            .margin_right(24)
            .x_label_area_size(label_area)
            .y_label_area_size(84)
            .build_cartesian_2d(f.x.0..f.x.1, f.y.0..f.y.1)
            .map_err(said)?;
        axes(&top, &mut chart, c, &f)?;
        let width = 0.8 / c.series.len().max(1) as f64;
        for (k, (_, pts)) in c.series.iter().enumerate() {
            match c.bars {
                true => bars(&mut chart, c, k, pts, width)?,
                false => line(&mut chart, c, &f, k, pts)?,
            }
        }
        levels(&mut chart, c, &f)?;
        draw_legend(&bottom, c, &entries)?;
        root.present().map_err(said)?;
    }
    Ok(out)
}

/// The axes' names, ticks and tick labels, and the grid's levels across the plot.
fn axes<DB: DrawingBackend>(
    top: &DrawingArea<DB, Shift>,
    chart: &mut Plot<DB>,
    c: &Chart,
    f: &Frame,
) -> Result<(), String> {
    let ((x0, x1), (y0, y1)) = (f.x, f.y);
    // A logarithmic axis says so in its name: a reader takes an axis for linear unless told.
    let (x_desc, y_desc) = (axis_name(&c.x, f.xscale), axis_name(&c.y, f.yscale));
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .x_desc(x_desc.as_str())
        .y_desc(y_desc.as_str())
        .axis_desc_style(("sans-serif", TYPE))
        .draw()
        .map_err(said)?;
    let grid = RGBColor(0xDD, 0xDD, 0xDD);
    let label = ("sans-serif", TYPE).into_font();
    for (v, name) in &f.ticks {
        let t = f.xscale.to(*v);
        let (px, py) = chart.backend_coord(&(t, y0));
        top.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK)).map_err(said)?;
        let style = match f.upright {
            true => {
                label.clone().transform(FontTransform::Rotate270).color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center))
            }
            false => label.clone().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top)),
        };
        top.draw(&Text::new(name.clone(), (px, py + 8), style)).map_err(said)?;
    }
    let (ya, yb) = match f.yscale {
        Scale::Log(b) => (b.powf(y0), b.powf(y1)),
        Scale::Linear => (y0, y1),
    };
    for v in ticks(f.yscale, ya, yb, false) {
        let t = f.yscale.to(v);
        chart.draw_series(std::iter::once(PathElement::new(vec![(x0, t), (x1, t)], grid))).map_err(said)?;
        let (px, py) = chart.backend_coord(&(x0, t));
        top.draw(&PathElement::new(vec![(px - 5, py), (px, py)], BLACK)).map_err(said)?;
        let style = label.clone().color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
        top.draw(&Text::new(axis_number(v), (px - 8, py), style)).map_err(said)?;
    }
    Ok(())
}

/// Series `k` as bars `width` wide beside the other series' at each x, with their intervals.
fn bars<DB: DrawingBackend>(
    chart: &mut Plot<DB>,
    c: &Chart,
    k: usize,
    pts: &[(f64, f64)],
    width: f64,
) -> Result<(), String> {
    let colour = PALETTE[k % PALETTE.len()];
    let left = |x: f64| x - 0.4 + k as f64 * width;
    chart
        .draw_series(pts.iter().map(|&(x, y)| Rectangle::new([(left(x), 0.0), (left(x) + width, y)], colour.filled())))
        .map_err(said)?;
    // Each bar's interval, black over the bar's middle.
    for &(x, lo, hi) in c.errors.get(k).into_iter().flatten() {
        let middle = left(x) + width / 2.0;
        let ink = BLACK.stroke_width(2);
        let (a, b) = ((middle, lo), (middle, hi));
        let cap = |y| EmptyElement::at((middle, y)) + PathElement::new(vec![(-6, 0), (6, 0)], ink);
        chart.draw_series(std::iter::once(PathElement::new(vec![a, b], ink))).map_err(said)?;
        chart.draw_series([cap(lo), cap(hi)]).map_err(said)?;
    }
    Ok(())
}

/// Series `k` as a line of its colour, dash and marker, with its error bars.
fn line<DB: DrawingBackend>(
    chart: &mut Plot<DB>,
    c: &Chart,
    f: &Frame,
    k: usize,
    pts: &[(f64, f64)],
) -> Result<(), String> {
    // Each line is dodged a little sideways, so that the error bars of several lines at
    // one x stand apart rather than over each other.
    let shift = dodge(k, c.series.len(), f.x.1 - f.x.0);
    let at = |p: (f64, f64)| (f.xscale.to(p.0) + shift, f.yscale.to(p.1));
    let colour = PALETTE[k % PALETTE.len()];
    let line: Vec<(f64, f64)> = pts.iter().map(|&p| at(p)).collect();
    let style = colour.stroke_width(2);
    let (dash, gap) = DASHES[k % DASHES.len()];
    if dash == 0 {
        chart.draw_series(LineSeries::new(line.clone(), style)).map_err(said)?;
    } else {
        chart.draw_series(DashedLineSeries::new(line.clone(), dash, gap, style)).map_err(said)?;
    }
    if let Some(bars) = c.errors.get(k) {
        for &(x, lo, hi) in bars {
            let (a, b) = (at((x, lo)), at((x, hi)));
            let cap = |y| EmptyElement::at((a.0, y)) + PathElement::new(vec![(-6, 0), (6, 0)], style);
            chart.draw_series(std::iter::once(PathElement::new(vec![a, b], style))).map_err(said)?;
            chart.draw_series([cap(a.1), cap(b.1)]).map_err(said)?;
        }
    }
    for p in line {
        chart.plotting_area().draw(&EmptyElement::at(p)).map_err(said)?;
        marker(chart.plotting_area(), p, k)?;
    }
    Ok(())
}

/// The published levels across the plot, the published points, and the marks up it.
fn levels<DB: DrawingBackend>(chart: &mut Plot<DB>, c: &Chart, f: &Frame) -> Result<(), String> {
    let ((x0, x1), (y0, y1)) = (f.x, f.y);
    for (r, (_, level)) in c.references.iter().enumerate() {
        let y = f.yscale.to(*level);
        let (dash, gap) = LEVEL_DASHES[r % LEVEL_DASHES.len()];
        chart
            .draw_series(DashedLineSeries::new(vec![(x0, y), (x1, y)], dash, gap, BLACK.stroke_width(2)))
            .map_err(said)?;
    }
    for (_, x, y) in &c.published {
        diamond(chart.plotting_area(), (f.xscale.to(*x), f.yscale.to(*y)))?;
    }
    for (m, (_, at)) in c.marks.iter().enumerate() {
        let x = f.xscale.to(*at);
        let (dash, gap) = LEVEL_DASHES[(c.references.len() + m) % LEVEL_DASHES.len()];
        chart
            .draw_series(DashedLineSeries::new(vec![(x, y0), (x, y1)], dash, gap, BLACK.stroke_width(2)))
            .map_err(said)?;
    }
    Ok(())
}

/// The legend below the plot: a row per entry, its sample drawn as the plot draws it.
fn draw_legend<DB: DrawingBackend>(
    bottom: &DrawingArea<DB, Shift>,
    c: &Chart,
    entries: &[(String, Entry)],
) -> Result<(), String> {
    let label = ("sans-serif", TYPE).into_font();
    for (row, (name, k)) in entries.iter().enumerate() {
        let y = 8 + row as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        let x = 100;
        match *k {
            Entry::Point => diamond(bottom, (x + 19, y))?,
            Entry::Series(k) if c.bars => {
                let colour = PALETTE[k % PALETTE.len()];
                bottom.draw(&Rectangle::new([(x + 8, y - 7), (x + 30, y + 7)], colour.filled())).map_err(said)?;
            }
            Entry::Series(k) => {
                let style = PALETTE[k % PALETTE.len()].stroke_width(2);
                let (dash, gap) = DASHES[k % DASHES.len()];
                if dash == 0 {
                    bottom.draw(&PathElement::new(vec![(x, y), (x + 38, y)], style)).map_err(said)?;
                } else {
                    bottom.draw(&DashedPathElement::new(vec![(x, y), (x + 38, y)], dash, gap, style)).map_err(said)?;
                }
                marker(bottom, (x + 19, y), k)?;
            }
            Entry::Level => {
                let (dash, gap) = LEVEL_DASHES[(row - c.series.len()) % LEVEL_DASHES.len()];
                bottom
                    .draw(&DashedPathElement::new(vec![(x, y), (x + 38, y)], dash, gap, BLACK.stroke_width(2)))
                    .map_err(said)?;
            }
        }
        let style = label.clone().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        bottom.draw(&Text::new(name.clone(), (x + 48, y), style)).map_err(said)?;
    }
    Ok(())
}

/// An axis's name, with its scale when that is logarithmic.
fn axis_name(name: &str, scale: Scale) -> String {
    match scale {
        Scale::Linear => name.to_string(),
        Scale::Log(2.0) => format!("{name} (log scale, base 2)"),
        Scale::Log(_) => format!("{name} (log scale)"),
    }
}

/// How far series `k` of `n` is moved sideways, in axis units of an axis `span` wide: 1.2% of
/// the axis between neighbours, centred on the true x, none for a single series.
pub fn dodge(k: usize, n: usize, span: f64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    (k as f64 - (n - 1) as f64 / 2.0) * 0.012 * span
}

/// The lowest and highest of some values (`fallback` for none).
fn bounds(values: &[f64], fallback: f64) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() {
        (lo, hi)
    } else {
        (fallback, fallback)
    }
}

/// Series `k`'s marker at `p`: circle, triangle, square, cross in turn, so series stay apart
/// where their colours do not.
fn marker<DB: DrawingBackend, C: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, C>,
    p: C::From,
    k: usize,
) -> Result<(), String>
where
    C::From: Clone,
{
    let colour = PALETTE[k % PALETTE.len()];
    match k % 4 {
        0 => area.draw(&Circle::new(p, 5, colour.filled())),
        1 => area.draw(&TriangleMarker::new(p, 7, colour.filled())),
        2 => area.draw(&(EmptyElement::at(p) + Rectangle::new([(-5, -5), (5, 5)], colour.filled()))),
        _ => area.draw(&Cross::new(p, 6, colour.stroke_width(3))),
    }
    .map_err(said)
}

/// A heat map: a square per value, coloured from dark blue (the lowest) to yellow (the
/// highest) on a logarithmic scale (rates span decades), its number written in it, nothing
/// where nothing was measured; a cliff is a thick red line between the two sizes it falls
/// between; the colour scale beside it, with its values.
fn heat(title: &str, rows_name: &str, columns_name: &str, h: &Heat) -> String {
    const W: usize = 66;
    const H: usize = 28;
    const LEFT: usize = 96;
    const TOP: usize = 64;
    const SCALE: usize = 150;
    let escape = super::html::escape;
    let present: Vec<f64> = h.values.iter().flatten().flatten().copied().filter(|v| *v > 0.0).collect();
    let lo = present.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = present.iter().copied().fold(0.0, f64::max);
    let share = |v: f64| if hi > lo { ((v / lo).ln() / (hi / lo).ln()).clamp(0.0, 1.0) } else { 1.0 };
    let (grid_w, grid_h) = (W * h.columns.len(), H * h.rows.len().max(6));
    let (width, height) = (LEFT + grid_w + SCALE, TOP + grid_h + 20);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"13\">\n<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n<text x=\"{}\" y=\"20\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
        width / 2,
        escape(title)
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" font-size=\"{HEAT_TYPE}\" text-anchor=\"middle\">{}</text><text x=\"8\" y=\"{}\" font-size=\"{HEAT_TYPE}\">{}</text>",
        LEFT + grid_w / 2,
        TOP - 26,
        escape(columns_name),
        TOP - 6,
        escape(rows_name)
    );
    for (j, name) in h.columns.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            LEFT + j * W + W / 2,
            TOP - 6,
            escape(name)
        );
    }
    for (i, (name, row)) in h.rows.iter().zip(&h.values).enumerate() {
        let y = TOP + i * H;
        let _ =
            writeln!(s, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", LEFT - 6, y + H / 2 + 4, escape(name));
        for (j, v) in row.iter().enumerate() {
            let Some(v) = v.filter(|v| *v > 0.0) else { continue };
            let t = share(v);
            let ink = if t > 0.6 { "black" } else { "white" };
            let x = LEFT + j * W;
            let _ = writeln!(
                s,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{W}\" height=\"{H}\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{ink}\">{}</text>",
                shade(t),
                x + W / 2,
                y + H / 2 + 4,
                cell_number(v)
            );
        }
    }
    let (right, bottom) = (LEFT + grid_w, TOP + H * h.rows.len());
    for &i in &h.row_cliffs {
        let y = TOP + (i + 1) * H;
        let _ = writeln!(s, "<line class=\"cliff\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{right}\" y2=\"{y}\" stroke=\"red\" stroke-width=\"3\"/>");
    }
    for &j in &h.column_cliffs {
        let x = LEFT + (j + 1) * W;
        let _ = writeln!(s, "<line class=\"cliff\" x1=\"{x}\" y1=\"{TOP}\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"red\" stroke-width=\"3\"/>");
    }
    if hi > 0.0 {
        colour_scale(&mut s, right + 24, TOP, grid_h.max(H * 5), (lo, hi));
    }
    s.push_str("</svg>");
    s
}

/// A heat map's colour scale at `x`, from `top` down `strip` px: a strip from the highest
/// (top) to the lowest, with five values.
fn colour_scale(s: &mut String, x: usize, top: usize, strip: usize, (lo, hi): (f64, f64)) {
    let steps = 20usize;
    for k in 0..steps {
        let t = 1.0 - k as f64 / (steps - 1) as f64;
        let y = top + k * strip / steps;
        let _ = writeln!(
            s,
            "<rect class=\"scale\" x=\"{x}\" y=\"{y}\" width=\"18\" height=\"{}\" fill=\"{}\"/>",
            strip / steps + 1,
            shade(t)
        );
    }
    for k in 0..5 {
        let t = 1.0 - k as f64 / 4.0;
        let value = if hi > lo { lo * (hi / lo).powf(t) } else { hi };
        let y = top + k * (strip - 1) / 4;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>",
            x + 24,
            y,
            axis_number(value.round())
        );
    }
    let _ = writeln!(s, "<text x=\"{x}\" y=\"{}\">log scale</text>", top - 22);
}

/// The colour of share `t` (0 the lowest, 1 the highest): dark blue through teal to yellow,
/// its lightness rising all the way, so the order survives grey print and colour blindness.
fn shade(t: f64) -> String {
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!("rgb({},{},{})", mix(40.0, 250.0), mix(30.0, 220.0), mix(110.0, 40.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every font size an SVG names.
    pub(crate) fn type_sizes(svg: &str) -> Vec<f64> {
        svg.split("font-size=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next()?.trim_end_matches("px").parse().ok())
            .collect()
    }

    #[test]
    fn axes_go_logarithmic_past_a_decade_and_clients_by_powers_of_two() {
        assert!(spans_decade(&[3.0, 31.0]) && !spans_decade(&[3.0, 30.0]) && !spans_decade(&[0.0, 500.0]));
        assert_eq!(x_scale(&[1.0, 2.0, 4.0, 8.0]), Scale::Log(2.0));
        assert_eq!(x_scale(&[1.0, 2.0]), Scale::Linear, "two points side by side");
        assert_eq!(x_scale(&[1.0, 3.0, 5.0]), Scale::Linear);
        assert_eq!(x_scale(&[1.0, 3.0, 50.0]), Scale::Log(10.0));
        assert_eq!(y_scale(&[20.0, 90_000.0]), Scale::Log(10.0));
        assert_eq!(ticks(Scale::Log(2.0), 1.0, 8.0, true), [1.0, 2.0, 4.0, 8.0]);
        assert_eq!(ticks(Scale::Log(10.0), 20.0, 900.0, false), [20.0, 50.0, 100.0, 200.0, 500.0]);
        assert_eq!(ticks(Scale::Linear, 0.0, 30.0, false), [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
        let labels: Vec<String> = [0.0, 0.05, 0.000_000_15, 2.5, 30.0].map(axis_number).to_vec();
        assert_eq!(labels, ["0", "0.05", "0.00000015", "2.5", "30"]);
    }

    #[test]
    fn a_published_level_has_columns_of_its_own_in_the_numbers() {
        let chart = Chart {
            title: "t".into(),
            x: "clients".into(),
            y: "MiB/s".into(),
            series: vec![("a".into(), vec![(1.0, 10.0), (2.0, 20.0)])],
            references: vec![("F800 published".into(), 300.0)],
            ..Chart::default()
        };
        let t = numbers(&chart);
        let at = |name: &str| t.columns.iter().position(|c| c.starts_with(name)).unwrap();
        let (name, level) = (at("published"), at("published level"));
        let last = t.rows.last().unwrap();
        assert_eq!((last[name].to_string(), last[level].to_string()), ("F800 published".into(), "300.0".into()));
        assert!(last[..name].iter().all(|c| *c == crate::analysis::Cell::Empty), "under no client count or label");
        assert!(t.rows[0][name] == crate::analysis::Cell::Empty && t.rows.iter().all(|r| r.len() == t.columns.len()));
    }

    #[test]
    fn every_text_is_at_least_twelve_pixels_and_the_legend_sits_below_the_data() {
        let chart = Chart {
            title: "t".into(),
            x: "clients".into(),
            y: "MiB/s".into(),
            series: vec![("a".into(), vec![(1.0, 10.0), (8.0, 900.0)]), ("b".into(), vec![(1.0, 5.0), (8.0, 50.0)])],
            references: vec![("published".into(), 300.0)],
            ..Chart::default()
        };
        let drawn = svg(&chart);
        let sizes = type_sizes(&drawn);
        assert!(!sizes.is_empty() && sizes.iter().all(|&s| s >= MIN_TYPE as f64), "{sizes:?}");
        // The legend's names are drawn below the plot's lowest edge.
        let y_of = |name: &str| -> f64 {
            let at = drawn
                .find(&format!(">\n{name}\n</text>"))
                .or_else(|| drawn.find(&format!(">{name}</text>")))
                .expect(name);
            let head = &drawn[..at];
            let y = head.rsplit(" y=\"").next().unwrap();
            y.split('"').next().unwrap().parse().unwrap()
        };
        assert!(y_of("published") > PLOT_HEIGHT as f64 && y_of("a") > PLOT_HEIGHT as f64, "{drawn}");
        let heat_map = Chart {
            title: "m".into(),
            heat: Some(Heat {
                rows: vec!["1 MiB".into()],
                columns: vec!["4 KiB".into(), "64 KiB".into()],
                values: vec![vec![Some(10.0), Some(1000.0)]],
                ..Heat::default()
            }),
            ..Chart::default()
        };
        let drawn = svg(&heat_map);
        assert!(type_sizes(&drawn).iter().all(|&s| s >= MIN_TYPE as f64), "{drawn}");
        assert!(drawn.matches("class=\"scale\"").count() > 5, "a colour scale: {drawn}");
        assert!(drawn.contains(">1000</text>") && drawn.contains(">10</text>"), "its ends named: {drawn}");
    }

    #[test]
    fn names_too_wide_for_their_bars_stand_upright_and_short_ones_lie_flat() {
        let bars = |names: &[&str]| Chart {
            title: "t".into(),
            x: "target".into(),
            y: "MiB/s".into(),
            bars: true,
            series: vec![("write".into(), (0..names.len()).map(|k| (k as f64, 100.0)).collect())],
            ticks: names.iter().enumerate().map(|(k, n)| (k as f64, n.to_string())).collect(),
            ..Chart::default()
        };
        let luns: Vec<String> = (1..=12).map(|k| format!("e5560-lun{k:02}")).collect();
        let names: Vec<&str> = luns.iter().map(String::as_str).collect();
        let drawn = svg(&bars(&names));
        let flat = svg(&bars(&["ost2", "ost4", "ost8"]));
        // The y axis's name stands upright in both.
        let upright = |svg: &str| svg.matches("rotate(270").count();
        assert_eq!(upright(&drawn), 13, "each name upright");
        assert_eq!(upright(&flat), 1, "short names side by side");
        // The plot grew by what the names need: the legend still sits below them.
        let height: u32 = drawn.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(height > PLOT_HEIGHT + LEGEND_ROW + 12, "{height}");
    }
}
