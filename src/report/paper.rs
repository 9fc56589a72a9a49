//! The `report` command's document, laid out as an evaluation's results section: a title
//! block (what was measured, when, with what, and the method in a few lines), a summary of
//! the findings that matter most, one section per study (its figures, each captioned, the
//! table beneath, its findings), the comparisons across studies, and an appendix (every run,
//! its settings, the environment). The layout is a list of [`Block`]s that the HTML and
//! Markdown renderers walk alike, so both number figures and tables the same way.

use crate::analysis::study::{self, spans, Study};
use crate::analysis::{self, guard, Chart, Finding, Report, Table};
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
    /// Text kept as written (a campaign file), shown in a fixed-width font.
    Code(String),
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
    /// The title, when the runs have a name of their own (a campaign's).
    pub title: Option<String>,
    /// How a point summarizes its runs (a campaign's `summary`).
    pub summary: analysis::study::Summary,
    /// The N of a rehearsal at 1/N of the sizes, said in the title block and every caption.
    pub rehearsal: Option<u64>,
    /// The runs that measured a matrix's cells: the matrix is their record, so the appendix
    /// lists them no more than a study does (a matrix campaign holds thousands).
    pub in_matrices: Vec<i64>,
}

/// The paper of `runs` and `matrices` from the store at `source`, their charts over clients
/// read against published system `reference` when one is named.
pub fn paper(
    source: &str,
    runs: Vec<RunRecord>,
    matrices: &[MatrixRecord],
    reference: Option<&str>,
) -> Result<Paper, String> {
    let in_matrices: Vec<i64> = matrices.iter().flat_map(|m| m.cells.iter().flat_map(|c| c.runs.clone())).collect();
    let of_cells = |r: &RunRecord| r.id.is_some_and(|id| in_matrices.contains(&id));
    // A cell's run is read as its matrix's cell, never as a run of its own.
    let own: Vec<RunRecord> = runs.iter().filter(|r| !of_cells(r)).cloned().collect();
    let mut studies = study::studies(&own, reference);
    studies.extend(analysis::train::study(&own));
    studies.extend(analysis::objects::beside_files(&own));
    studies.extend(matrices.iter().map(|m| Study {
        title: format!("Matrix m{} of {}", m.id.unwrap_or(0), m.env.target),
        runs: Vec::new(),
        report: analysis::matrix::matrix(m),
    }));
    let mut across = Report::default();
    let mut names: Vec<&str> = own.iter().filter_map(|r| r.label.as_deref()).collect();
    names.sort_unstable();
    names.dedup();
    if names.len() > 1 {
        let of: Vec<Vec<RunRecord>> =
            names.iter().map(|n| own.iter().filter(|r| r.label.as_deref() == Some(*n)).cloned().collect()).collect();
        let sides: Vec<analysis::Side> =
            names.iter().zip(&of).map(|(name, runs)| analysis::Side { name, runs }).collect();
        across = across.and(analysis::recommend(&sides));
    }
    across.findings.extend(analysis::cliffs::over_sizes(&own));
    if let Some(name) = reference {
        across = across.and(analysis::reference::beside(name, &own)?);
    }
    Ok(Paper {
        source: source.to_string(),
        runs,
        studies,
        across,
        title: None,
        summary: analysis::study::Summary::Mean,
        rehearsal: None,
        in_matrices,
    })
}

/// How many findings the summary takes at most, ranked across the studies.
const SUMMARY: usize = 8;

/// The caveats said once per section, each with its mark: (mark, what the finding's text
/// says after it, how it is said under the section).
const CAVEATS: [(&str, &str, &str); 2] = [
    (
        "†",
        analysis::scaling::ONE_RUN,
        "One run per point at some client counts, so no interval: run the sweep again (same label) to confirm",
    ),
    ("‡", analysis::CACHED, "Possibly the page cache's figure, not the storage's"),
];

/// `found` with each caveat of [`CAVEATS`] taken out of its text and a mark left in its place,
/// and the caveats that were taken (mark, sentence), each once.
fn caveated(found: &[Finding]) -> (Vec<Finding>, Vec<(&'static str, &'static str)>) {
    let mut said: Vec<(&'static str, &'static str)> = Vec::new();
    let out = found
        .iter()
        .map(|f| {
            let mut text = f.text.clone();
            for (mark, inline, sentence) in CAVEATS {
                let before = text.clone();
                text = text.replace(&format!(" ({inline})"), &format!(" {mark}"));
                text = text.replace(&format!("; {inline}"), &format!(" {mark}"));
                if text != before && !said.iter().any(|s| s.0 == mark) {
                    said.push((mark, sentence));
                }
            }
            Finding { text, ..f.clone() }
        })
        .collect();
    (out, said)
}

/// The rank of a finding in the summary, the most telling first: systems set against each
/// other, a slow target, where a curve stops scaling, a cliff; then what else was found.
fn rank(f: &Finding) -> usize {
    let t = f.text.as_str();
    let has = |w: &str| t.contains(w);
    match () {
        _ if has(" times ") || has("x the lowest") || has("x of ") => 0,
        _ if has("slow one") => 1,
        _ if has("plateau") || has("knee") || has("stops") => 2,
        _ if has("cliff") || has("falls") => 3,
        _ if has("faster than linear") => 4,
        _ if has(" peaks at ") || has("no target stands apart") || has("spread") => 9,
        _ => 5,
    }
}

/// The `most` findings that matter, ranked across studies (a stable sort keeps each rank's in
/// the order of the studies); peaks are the summary's table, not its sentences.
fn ranked(found: Vec<(Finding, String)>, most: usize) -> Vec<(Finding, String)> {
    let mut kept: Vec<(Finding, String)> = found.into_iter().filter(|f| rank(&f.0) < 9).collect();
    kept.sort_by_key(|f| rank(&f.0));
    kept.truncate(most);
    kept
}

/// The findings too brief to measure as one paragraph, each target's op once: what ran too
/// briefly, how briefly, and what would fix it.
fn too_short_said(brief: &[guard::TooShort]) -> Option<String> {
    if brief.is_empty() {
        return None;
    }
    let parts: Vec<String> = brief
        .iter()
        .map(|t| format!("{} at {} (shortest {}; {})", t.what, t.at(), guard::duration(t.secs), t.fix))
        .collect();
    Some(format!(
        "Too short to measure (a phase under {} s times start-up and the clock as much as the storage, so no peak, scaling or ranking is read from it): {}.",
        analysis::BRIEF_PHASE_SECS,
        parts.join("; ")
    ))
}

/// Whether a study's table is the summary's (its peaks), not its section's.
fn in_summary(t: &Table) -> bool {
    t.title == analysis::shapes::PEAKS || t.title.ends_with(analysis::campaign::MATRIX_PEAKS)
}

/// The title block's line of a rehearsal at 1/`n`.
fn rehearsal_said(n: u64) -> String {
    format!(
        "rehearsal at 1/{n}: every size in the campaign file divided by {n}, client counts capped at the launch's cores; the figures show that the campaign runs, not what the systems do"
    )
}

/// The sections as they are laid out: their blocks and the contents' entries, the figures and
/// tables numbered so far, the findings the summary gathers (each with its link), and the
/// notes already said.
#[derive(Default)]
struct Body {
    blocks: Vec<Block>,
    contents: Vec<(u8, String, String)>,
    figures: usize,
    tables: usize,
    summary: Vec<(Finding, String)>,
    said_notes: Vec<String>,
}

impl Paper {
    /// The document in reading order.
    pub fn blocks(&self) -> Vec<Block> {
        let mut b = Body { contents: vec![(2, "Summary".to_string(), "summary".to_string())], ..Body::default() };
        for (k, s) in self.studies.iter().enumerate() {
            self.study_section(&mut b, k, s);
        }
        self.across_section(&mut b);
        self.appendix(&mut b);
        let summary = ranked(std::mem::take(&mut b.summary), SUMMARY);
        let mut out = self.title_block(std::mem::take(&mut b.contents));
        self.summary_section(&mut out, &mut b.blocks, summary);
        out.extend(b.blocks);
        out.push(Block::Text(format!("Made by iosurvey {} from {}.", env!("CARGO_PKG_VERSION"), self.source)));
        out
    }

    /// Study `k`'s section: its heading, figures, tables, findings, caveats and footer.
    fn study_section(&self, b: &mut Body, k: usize, s: &Study) {
        let anchor = format!("study-{}", k + 1);
        let title = format!("{}. {}", k + 1, s.title);
        b.contents.push((2, title.clone(), anchor.clone()));
        b.blocks.push(Block::Heading(2, title, anchor.clone()));
        b.blocks.extend(s.report.heading.iter().map(|l| Block::Text(l.clone())));
        let first_figure = b.figures + 1;
        // A caveat is said once under the section's findings; each finding and figure it
        // touches carries its mark.
        let (study_findings, marks) = caveated(&s.report.findings);
        let marked: String = marks.iter().map(|m| format!(" {}", m.0)).collect();
        for c in &s.report.charts {
            b.figures += 1;
            let caption = format!("{}{marked}", self.caption(c, &s.runs));
            b.blocks.push(Block::Figure(b.figures, Box::new(c.clone()), caption));
        }
        let said = if s.runs.is_empty() { String::new() } else { format!(" (runs {})", spans(&s.runs)) };
        for t in s.report.tables.iter().filter(|t| !in_summary(t)) {
            b.tables += 1;
            // A note is said under the first table it explains, not under every one.
            let mut t = t.clone();
            t.notes.retain(|n| !b.said_notes.contains(n));
            b.said_notes.extend(t.notes.iter().cloned());
            let t = &t;
            b.blocks.push(Block::Table(b.tables, t.clone(), format!("{}{said}", t.title)));
        }
        // A finding links to the figure of its op ("f800 read peaks ..." to the chart of read),
        // else to the study's first figure, or to the study when it has none.
        let link = |f: &Finding| {
            let words: Vec<&str> = f.text.split_whitespace().take(3).collect();
            let of_op = s.report.charts.iter().position(|c| words.iter().any(|w| c.title.contains(&format!(": {w} "))));
            match (of_op, s.report.charts.is_empty()) {
                (_, true) => anchor.clone(),
                (Some(k), _) => format!("figure-{}", first_figure + k),
                (None, _) => format!("figure-{first_figure}"),
            }
        };
        // A study of no run (a matrix) cites no run: the ids its findings carry are not ids
        // that `ls` shows.
        let cited =
            |f: &Finding| Finding { runs: if s.runs.is_empty() { Vec::new() } else { f.runs.clone() }, ..f.clone() };
        let (brief, kept): (Vec<Finding>, Vec<Finding>) =
            study_findings.into_iter().partition(|f| f.too_short.is_some());
        let brief: Vec<guard::TooShort> = brief.into_iter().filter_map(|f| f.too_short).collect();
        let found: Vec<(Finding, String)> = kept.iter().map(|f| (cited(f), link(f))).collect();
        let name = s.title.split(':').next().unwrap_or(&s.title).to_string();
        b.summary.extend(
            found.iter().map(|(f, l)| (Finding { text: format!("{name}: {}", f.text), ..f.clone() }, l.clone())),
        );
        if !found.is_empty() {
            b.blocks.push(Block::Findings(found));
        }
        if let Some(line) = too_short_said(&brief) {
            b.blocks.push(Block::Text(line));
        }
        for (mark, caveat) in &marks {
            b.blocks.push(Block::Text(format!("{mark} {name}: {caveat}.")));
        }
        // A footer (the `*` of possibly cached cells, a matrix's timing) means the same in
        // every section it would close: said where it first applies, as a table's note is.
        for line in &s.report.footer {
            if !b.said_notes.contains(line) {
                b.said_notes.push(line.clone());
                b.blocks.push(Block::Text(line.clone()));
            }
        }
    }

    /// What is found across the studies, when anything is: its tables and findings.
    fn across_section(&self, b: &mut Body) {
        // A table with no rows says nothing: it is left out.
        let across: Vec<&crate::analysis::Table> = self.across.tables.iter().filter(|t| !t.rows.is_empty()).collect();
        if across.is_empty() && self.across.findings.is_empty() {
            return;
        }
        let anchor = "across".to_string();
        b.contents.push((2, "Across the studies".into(), anchor.clone()));
        b.blocks.push(Block::Heading(2, "Across the studies".into(), anchor.clone()));
        for t in across {
            b.tables += 1;
            b.blocks.push(Block::Table(
                b.tables,
                t.clone(),
                format!("{} (from the runs of the studies above)", t.title),
            ));
        }
        let (across_findings, marks) = caveated(&self.across.findings);
        let found: Vec<(Finding, String)> = across_findings.iter().map(|f| (f.clone(), anchor.clone())).collect();
        // Systems set against each other lead the summary: they are what an evaluation is for.
        b.summary.splice(0..0, found.iter().cloned());
        if !found.is_empty() {
            b.blocks.push(Block::Findings(found));
        }
        for (mark, caveat) in &marks {
            b.blocks.push(Block::Text(format!("{mark} Across the studies: {caveat}.")));
        }
    }

    /// The appendix: the runs, their settings and their environments.
    fn appendix(&self, b: &mut Body) {
        b.contents.push((2, "Appendix".into(), "appendix".into()));
        b.blocks.push(Block::Heading(2, "Appendix".into(), "appendix".into()));
        let listed: Vec<RunRecord> =
            self.runs.iter().filter(|r| r.id.is_none_or(|id| !self.in_matrices.contains(&id))).cloned().collect();
        for t in [study::runs_table(&listed), study::settings_table(&listed), study::environment_table(&listed)]
            .into_iter()
            .filter(|t| !t.rows.is_empty())
        {
            b.tables += 1;
            let caption =
                format!("{} (runs {})", t.title, spans(&listed.iter().filter_map(|r| r.id).collect::<Vec<_>>()));
            b.blocks.push(Block::Table(b.tables, t, caption));
        }
    }

    /// The title, the facts, the method and the contents.
    fn title_block(&self, contents: Vec<(u8, String, String)>) -> Vec<Block> {
        let (mut facts, method) = study::about(&self.runs);
        let title = match &self.title {
            Some(name) => name.clone(),
            None => format!("Storage evaluation: {}", self.targets()),
        };
        if let Some(n) = self.rehearsal {
            facts.insert(0, ("scale".into(), rehearsal_said(n)));
        }
        let mut out = vec![
            Block::Heading(1, title, "top".into()),
            Block::Facts(facts),
            Block::Heading(3, "Method".into(), "method".into()),
        ];
        out.extend(method.into_iter().map(Block::Text));
        out.push(Block::Contents(contents));
        out
    }

    /// The summary after `out`: the peaks' tables (numbered ahead of the studies' tables in
    /// `body`), each study's headline, then the `summary` findings with their caveats.
    fn summary_section(&self, out: &mut Vec<Block>, body: &mut [Block], summary: Vec<(Finding, String)>) {
        out.push(Block::Heading(2, "Summary".into(), "summary".into()));
        let ids = spans(&self.runs.iter().filter_map(|r| r.id).collect::<Vec<_>>());
        let mut first: Vec<(Table, String)> = Vec::new();
        if let Some(t) = analysis::shapes::peaks(&self.studies, &self.runs, self.summary) {
            let caption = format!("{} (runs {ids})", t.title);
            first.push((t, caption));
        }
        // A matrix study's peaks, a row per target, where its sections give heat maps only.
        for t in self.studies.iter().flat_map(|s| &s.report.tables).filter(|t| in_summary(t)) {
            if t.title != analysis::shapes::PEAKS {
                first.push((t.clone(), t.title.clone()));
            }
        }
        // The summary's tables are numbered first, ahead of the studies' own.
        let shift = first.len();
        for b in out.iter_mut().chain(body.iter_mut()) {
            if let Block::Table(n, ..) = b {
                *n += shift;
            }
        }
        for (k, (t, caption)) in first.into_iter().enumerate() {
            out.push(Block::Table(k + 1, t, caption));
        }
        let (summary_findings, marks) = caveated(&summary.iter().map(|f| f.0.clone()).collect::<Vec<_>>());
        // Each study's headline between its systems leads, linked to its study's section.
        let heads = analysis::shapes::headlines(&self.studies, &self.runs, self.summary);
        let summary: Vec<(Finding, String)> = heads
            .into_iter()
            .map(|(k, f)| (f, format!("study-{}", k + 1)))
            .chain(summary_findings.into_iter().zip(summary.into_iter().map(|f| f.1)))
            .collect();
        out.push(match summary.is_empty() {
            true => Block::Text("No finding stands out beyond the peaks above: see each study.".into()),
            false => Block::Findings(summary),
        });
        for (mark, caveat) in &marks {
            out.push(Block::Text(format!("{mark} {caveat}.")));
        }
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
            let rehearsal = self.rehearsal.map_or(String::new(), |n| format!("Rehearsal at 1/{n}: "));
            return format!("{rehearsal}{}.", c.title);
        }
        let mut places: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.id.is_some_and(|i| ids.contains(&i)))
            .map(|r| format!("{} ({})", r.env.target, r.env.fs_type))
            .collect();
        places.sort();
        places.dedup();
        // Said within the caption's own sentence, which its runs make its own: the same
        // sentence under every figure would be read past.
        let bars = if c.errors.iter().any(|e| !e.is_empty()) {
            ", each point the mean of its runs with its 95% t-interval as error bars"
        } else {
            ""
        };
        let levels = match (c.references.is_empty(), c.bars) {
            (true, _) => "",
            (false, true) => " Dashed black: the median and the band's lower edge.",
            (false, false) => " Dashed black: published figures.",
        };
        let points = if c.published.is_empty() { "" } else { " Black diamonds: published points." };
        let rehearsal = self.rehearsal.map_or(String::new(), |n| format!("Rehearsal at 1/{n}: "));
        format!(
            "{rehearsal}{}. On {}; {} run{} ({}){bars}.{levels}{points}",
            c.title,
            places.join(", "),
            ids.len(),
            if ids.len() == 1 { "" } else { "s" },
            spans(ids)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures;

    /// Labels a and b swept over 1, 2 and 4 clients three times each (b at half a's rate,
    /// each repetition a few percent apart), then a survey's run and a run of its own.
    fn runs() -> Vec<RunRecord> {
        let mut out = Vec::new();
        let mut id = 0;
        for (label, scale) in [("a", 1.0), ("b", 0.5)] {
            for (rep, wobble) in [0.97, 1.0, 1.03].into_iter().enumerate() {
                for tasks in [1usize, 2, 4] {
                    id += 1;
                    let mut r = fixtures::run(None);
                    r.id = Some(id);
                    r.label = Some(label.into());
                    r.sweep_id = Some(if label == "a" { 1 } else { 4 } + rep as i64);
                    r.workload.tasks = tasks;
                    for p in &mut r.phases {
                        p.figures.bandwidth = Some(100.0 * 1048576.0 * tasks as f64 * scale * wobble);
                        p.figures.window_ns = 2_000_000_000;
                    }
                    out.push(r);
                }
            }
        }
        let mut surveyed = fixtures::run(None);
        (surveyed.id, surveyed.survey_id, surveyed.name) = (Some(19), Some(1), Some("seq-file-per-task".into()));
        let mut alone = fixtures::run(None);
        alone.id = Some(20);
        out.extend([surveyed, alone]);
        out
    }

    fn figures(blocks: &[Block]) -> Vec<&Chart> {
        blocks
            .iter()
            .filter_map(|b| match b {
                Block::Figure(_, c, _) => Some(&**c),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn two_labels_over_clients_share_a_chart_with_error_bars_and_the_published_level() {
        let blocks = paper("s.db", runs(), &[], None).unwrap().blocks();
        let write = figures(&blocks).into_iter().find(|c| c.title.contains("write MiB/s against clients")).unwrap();
        let names: Vec<&str> = write.series.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        // Each point is the mean of its three repetitions, its bar their 95% t-interval.
        assert_eq!(write.series[0].1.iter().map(|p| p.0).collect::<Vec<_>>(), [1.0, 2.0, 4.0]);
        let two = [0.97, 1.0, 1.03].map(|w| 200.0 * w);
        let iv = crate::stats::mean_interval(&two).unwrap();
        let (mean, bar) = (write.series[0].1[1].1, write.errors[0][1]);
        assert!((mean - 200.0).abs() < 1e-9 && (bar.1 - iv.lo).abs() < 1e-9 && (bar.2 - iv.hi).abs() < 1e-9);
        assert!(write.errors.iter().all(|e| e.len() == 3), "a bar at every point of both lines");
        assert!(write.references.is_empty() && write.published.is_empty(), "no published figure unless asked");
        assert_eq!(write.runs.len(), 18);
        let svg = super::super::figures::svg(write);
        assert!(svg.contains(">\na\n</text>") && svg.contains(">\nb\n</text>"), "both in the legend");
        let asked = paper("s.db", runs(), &[], Some("isilon-f800")).unwrap().blocks();
        let write = figures(&asked).into_iter().find(|c| c.title.contains("write MiB/s against clients")).unwrap();
        // Measured at 64 clients, the published peak is a point at 64 on the same axes.
        assert!(!write.published.is_empty());
        let (name, x, level) = &write.published[0];
        assert!(name.starts_with("Isilon F800 published (8 GB/s, peak, 64 clients, 2TB total"), "{name}");
        assert_eq!(*x, 64.0);
        assert!((level - 8e9 / 1048576.0).abs() < 1e-6, "in the chart's unit, MiB/s");
        // Each finding links to the figure of its op.
        let read = asked.iter().find_map(|b| match b {
            Block::Figure(n, c, _) if c.title.contains(": read ") => Some(*n),
            _ => None,
        });
        let links: Vec<&String> = asked
            .iter()
            .filter_map(|b| match b {
                Block::Findings(found) => {
                    found.iter().find(|(f, _)| f.text.starts_with("b read peaks")).map(|(_, l)| l)
                }
                _ => None,
            })
            .collect();
        assert!(!links.is_empty() && links.iter().all(|l| **l == format!("figure-{}", read.unwrap())), "{links:?}");
    }

    #[test]
    fn every_table_names_its_runs_and_no_run_is_in_two_studies() {
        let blocks = paper("s.db", runs(), &[], None).unwrap().blocks();
        let mut section = String::new();
        let mut seen: Vec<(i64, String)> = Vec::new();
        for b in &blocks {
            match b {
                Block::Heading(_, text, _) => section = text.clone(),
                Block::Table(_, _, caption) => {
                    let runs = caption.rsplit_once("(runs ").map(|(_, r)| r.trim_end_matches(')'));
                    // The summary's table of peaks and the comparisons draw on every study.
                    if section == "Across the studies" || section == "Summary" {
                        continue;
                    }
                    let runs = runs.unwrap_or_else(|| panic!("a table with no runs named: {caption}"));
                    if section == "Appendix" {
                        assert_eq!(runs, "1-20", "{caption}");
                        continue;
                    }
                    for part in runs.split(", ") {
                        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
                        for id in lo.parse::<i64>().unwrap()..=hi.parse().unwrap() {
                            if let Some((_, other)) = seen.iter().find(|(i, s)| *i == id && *s != section) {
                                panic!("run {id} in {other} and in {section}");
                            }
                            seen.push((id, section.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
        let mut ids: Vec<i64> = seen.iter().map(|s| s.0).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids, (1..=20).collect::<Vec<_>>(), "every run in a study");
        let studies: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Heading(2, t, _) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(studies.len(), 6, "summary, the sweep, the survey, the run alone, across, appendix: {studies:?}");
    }

    /// Labels a, b and c swept once over 1, 2 and 4 clients: every finding rests on one run
    /// per point.
    fn once_each() -> Vec<RunRecord> {
        let mut out = Vec::new();
        for (k, label) in ["a", "b", "c"].into_iter().enumerate() {
            for tasks in [1usize, 2, 4] {
                let mut r = fixtures::run(None);
                r.id = Some(out.len() as i64 + 1);
                r.label = Some(label.into());
                r.sweep_id = Some(k as i64 + 1);
                r.workload.tasks = tasks;
                for p in &mut r.phases {
                    p.figures.bandwidth = Some(100.0 * 1048576.0 * tasks as f64 * (k + 1) as f64);
                    p.figures.window_ns = 2_000_000_000;
                }
                out.push(r);
            }
        }
        out
    }

    #[test]
    fn a_caveat_is_said_once_per_section_and_marked_on_each_finding_and_figure() {
        let blocks = paper("s.db", once_each(), &[], None).unwrap().blocks();
        let mut section = String::new();
        let mut said: Vec<(String, usize)> = Vec::new();
        for b in &blocks {
            match b {
                Block::Heading(2, text, _) => section = text.clone(),
                Block::Text(t) if t.starts_with("† ") => match said.iter_mut().find(|s| s.0 == section) {
                    Some(s) => s.1 += 1,
                    None => said.push((section.clone(), 1)),
                },
                Block::Findings(found) => {
                    for (f, _) in found {
                        assert!(!f.text.contains(analysis::scaling::ONE_RUN), "said in the finding: {}", f.text);
                    }
                }
                Block::Figure(_, _, caption) if section.starts_with("1.") => {
                    assert!(caption.contains(". †"), "the figure carries the mark: {caption}")
                }
                _ => {}
            }
        }
        assert!(!said.is_empty() && said.iter().all(|s| s.1 == 1), "once per section: {said:?}");
        let marked =
            blocks.iter().any(|b| matches!(b, Block::Findings(f) if f.iter().any(|(f, _)| f.text.ends_with(" †"))));
        assert!(marked, "each finding it touches carries the mark");
    }

    #[test]
    fn a_footer_that_closes_several_sections_is_said_once_where_it_first_applies() {
        let mut p = paper("s.db", once_each(), &[], None).unwrap();
        let again =
            analysis::study::Study { title: "again".into(), runs: Vec::new(), report: p.studies[0].report.clone() };
        p.studies.push(again);
        let line = "* possibly the page cache's figure: data smaller than RAM".to_string();
        for s in &mut p.studies {
            s.report.footer.push(line.clone());
        }
        let blocks = p.blocks();
        let said = blocks.iter().filter(|b| matches!(b, Block::Text(t) if *t == line)).count();
        assert_eq!(said, 1, "said once, under the first section it closes");
    }

    #[test]
    fn the_summary_gives_each_targets_peak_of_both_ops_per_study_and_names_the_study() {
        let blocks = paper("s.db", once_each(), &[], None).unwrap().blocks();
        let at = blocks.iter().position(|b| matches!(b, Block::Heading(2, t, _) if t == "Summary")).unwrap();
        let Block::Table(1, table, _) = &blocks[at + 1] else {
            panic!("the summary opens with its table: {:?}", blocks[at + 1])
        };
        let cells: Vec<String> = table.rows.iter().map(|r| format!("{} {} {} {}", r[1], r[2], r[3], r[5])).collect();
        for label in ["a", "b", "c"] {
            for op in ["write", "read"] {
                assert!(cells.iter().any(|c| c.starts_with(&format!("{label} {op} "))), "{label} {op}: {cells:?}");
            }
        }
        // c's write peaks at 4 clients, 1200 MiB/s.
        assert!(cells.contains(&"c write 1200.0 4".to_string()), "{cells:?}");
        let Block::Findings(found) = &blocks[at + 2] else { panic!("then the ranked findings") };
        assert!(found.len() <= SUMMARY && !found.is_empty());
        for (f, _) in found {
            assert!(f.text.contains(": ") && (f.text.contains("write") || f.text.contains("read")), "{}", f.text);
        }
    }
}
