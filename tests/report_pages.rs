//! Issue 38: each seed campaign's report (examples/campaigns), rehearsed small on this machine,
//! read in headless Chromium as its paper's reader would: each study drawn as what it varies
//! (a line over clients, bars over a setting or over like targets, heat maps of a matrix
//! naming their target), a summary naming every target and both ops, the rehearsal's scale in
//! the title block, no sentence said more than three times, and a printed length a vendor
//! could publish. Screenshots of each page's top go to target/report-shots/.

mod common;

use common::*;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Small enough that the five campaigns run in about a minute on two cores.
const SCALE: &str = "1/16384";

/// What a study's figure must be, from its campaign file.
#[derive(Debug, PartialEq)]
enum Kind {
    Line,
    Bars,
    Heat,
    /// A target survey: its targets as sorted bars (and k at once as a line).
    Targets,
    /// The network: refused in a rehearsal of one process, so drawn with no figure.
    Net,
}

/// A study as its file gives it: name, figure expected, its targets (none: every target).
struct StudyDef {
    name: String,
    kind: Kind,
    targets: Vec<String>,
}

/// The file's studies: a matrix is heat maps; a metadata study or one over a list or range of
/// client counts a line (this machine has at least two cores, so two counts run); one client
/// count, bars.
fn studies_of(text: &str) -> Vec<StudyDef> {
    text.split("[[study]]")
        .skip(1)
        .map(|block| {
            let block = block.split("\n[").next().unwrap_or(block);
            let value = |key: &str| {
                block.lines().find_map(|l| l.strip_prefix(&format!("{key} = ")).map(|v| v.trim().to_string()))
            };
            let unquoted = |v: String| v.trim_matches('"').to_string();
            let kind = match (value("kind").map(unquoted).as_deref(), value("clients")) {
                (Some("matrix"), _) => Kind::Heat,
                (Some("targets"), _) => Kind::Targets,
                (Some("net"), _) => Kind::Net,
                (Some("meta"), _) => Kind::Line,
                (_, Some(c)) if c.parse::<u64>().is_ok() => Kind::Bars,
                _ => Kind::Line,
            };
            let targets = block
                .split("targets = [")
                .nth(1)
                .map(|t| t.split(']').next().unwrap_or("").split(',').map(|n| unquoted(n.trim().to_string())).collect())
                .unwrap_or_default();
            StudyDef { name: unquoted(value("name").unwrap_or_default()), kind, targets }
        })
        .collect()
}

/// The file's target labels.
fn labels_of(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.strip_prefix("label = \"")).map(|l| l.trim_end_matches('"').to_string()).collect()
}

/// The example with each target's directory moved under the bed (made there).
fn moved(bed: &Bed, text: &str) -> String {
    text.lines()
        .map(|line| match line.strip_prefix("dir = \"") {
            Some(dir) => {
                let here = bed.tmp.path().join("t").join(dir.trim_end_matches('"').trim_start_matches('/'));
                fs::create_dir_all(&here).unwrap();
                format!("dir = \"{}\"\n", here.display())
            }
            None => format!("{line}\n"),
        })
        .collect()
}

/// The HTML of the section that `<h2 id="ID"` opens, to the next `<h2`.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom.find(&format!("<h2 id=\"{id}\"")).unwrap_or_else(|| panic!("no section {id}"));
    let rest = &dom[at + 4..];
    &dom[at..at + 4 + rest.find("<h2").unwrap_or(rest.len())]
}

/// The text of the page's paragraphs, list items and captions, tags taken out.
fn prose(dom: &str) -> Vec<String> {
    let mut out = Vec::new();
    for tag in ["p", "li", "figcaption", "caption"] {
        // An element with no attribute opens with "<p>", one with attributes with "<p ".
        let (plain, attributed) = (format!("<{tag}>"), format!("<{tag} "));
        let bare = dom.split(&plain).skip(1);
        let with = dom.split(&attributed).skip(1).map(|p| p.split_once('>').map_or("", |p| p.1));
        for inner in bare.chain(with) {
            let inner = inner.split(&format!("</{tag}>")).next().unwrap_or("");
            let mut text = String::new();
            let mut in_tag = false;
            for c in inner.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            out.push(text.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    out
}

/// Every sentence said more than three times on the page, with how often.
fn repeated(dom: &str) -> Vec<(String, usize)> {
    let mut count: HashMap<String, usize> = HashMap::new();
    for text in prose(dom) {
        for sentence in text.split(". ").map(|s| s.trim().trim_end_matches('.')) {
            if sentence.split_whitespace().count() >= 4 {
                *count.entry(sentence.to_string()).or_default() += 1;
            }
        }
    }
    let mut out: Vec<(String, usize)> = count.into_iter().filter(|c| c.1 > 3).collect();
    out.sort();
    out
}

/// Pages of a PDF Chromium printed.
fn pdf_pages(pdf: &Path) -> usize {
    let bytes = fs::read(pdf).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    text.matches("/Type /Page").count() - text.matches("/Type /Pages").count()
}

fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().join("report-shots");
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_seed_campaigns_report_draws_each_study_as_it_varies_and_reads_as_a_paper() {
    let Some(browser) = chromium() else { return };
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/campaigns");
    let mut files: Vec<PathBuf> = fs::read_dir(&examples).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for example in files {
        let name = example.file_stem().unwrap().to_string_lossy().into_owned();
        let bed = Bed::new();
        let text = moved(&bed, &fs::read_to_string(&example).unwrap());
        let path = bed.tmp.path().join("c.toml");
        fs::write(&path, &text).unwrap();
        let out = iosurvey(&["campaign", "run", path.to_str().unwrap(), "--scale", SCALE, "-q", "--db", &bed.db]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let page = bed.tmp.path().join("report.html");
        let out = iosurvey(&["report", "--campaign", "c1", "-o", page.to_str().unwrap(), "--db", &bed.db]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let (dom, log) = open_in_chromium(browser, &page, &["--dump-dom"]);
        assert!(dom.contains("</html>"), "{name}: {log}");

        // The title is the campaign's name; the title block says the rehearsal's scale.
        let campaign = text.lines().find_map(|l| l.strip_prefix("name = \"")).unwrap().trim_end_matches('"');
        assert!(dom.contains(&format!("<h1 id=\"top\">{campaign}</h1>")), "{name}: the title");
        let facts = &dom[dom.find("<table class=\"facts\">").unwrap()..];
        let facts = &facts[..facts.find("</table>").unwrap()];
        assert!(facts.contains(&format!("rehearsal at {SCALE}")), "{name}: the scale in the title block: {facts}");

        // Each study's figures are what it varies.
        let labels = labels_of(&text);
        let studies = studies_of(&text);
        drawn_as_they_vary(&name, &dom, &text, &labels, &studies);

        // The summary names every target studied and both ops.
        let summary = section(&dom, "summary");
        for label in &labels {
            let studied = studies.iter().any(|s| s.targets.is_empty() || s.targets.contains(label));
            if studied {
                assert!(summary.contains(&format!(">{label}<")), "{name}: the summary names {label}");
            }
        }
        for op in ["write", "read"] {
            assert!(summary.contains(&format!(">{op}")), "{name}: the summary names {op}");
        }

        // Nothing said over and over.
        let again = repeated(&dom);
        assert!(again.is_empty(), "{name}: sentences said more than 3 times: {again:#?}");

        // A published system's points on the matching study's axes, said with their setting.
        if name == "isilon" {
            isilon_beside_its_published_systems(&bed, browser);
        }

        // The page's top as a reader first sees it, and its length in print.
        let shot = shots().join(format!("issue38-{name}.png"));
        let arg = format!("--screenshot={}", shot.display());
        let _ = open_in_chromium(browser, &page, &[&arg, "--window-size=1100,3000"]);
        assert!(fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000), "a screenshot in {}", shot.display());
        let pdf = bed.tmp.path().join("report.pdf");
        let arg = format!("--print-to-pdf={}", pdf.display());
        let _ = open_in_chromium(browser, &page, &[&arg, "--no-pdf-header-footer"]);
        let pages = pdf_pages(&pdf);
        fs::copy(&pdf, shots().join(format!("issue38-{name}.pdf"))).unwrap();
        // A report a vendor could publish: a matrix campaign's too (its heat maps two abreast,
        // its grids in their CSV, its peaks one compact table).
        assert!((1..=40).contains(&pages), "{name}: {pages} printed pages");
    }
}

/// Each study's section of `dom` (example `name`, campaign file `text`) draws what the study
/// varies: lines over clients, bars across targets or settings, heat maps of a matrix.
fn drawn_as_they_vary(name: &str, dom: &str, text: &str, labels: &[String], studies: &[StudyDef]) {
    let mut k = 0;
    for s in studies {
        k += 1;
        let part = section(dom, &format!("study-{k}"));
        assert!(part.contains(&format!(". {}: ", s.name)), "{name}: study {k} is {}", s.name);
        let figures: Vec<&str> = part.split("<figure ").skip(1).collect();
        if s.kind == Kind::Net {
            assert!(figures.is_empty() && part.contains("No point of this study"), "{name}/{}", s.name);
            continue;
        }
        assert!(!figures.is_empty(), "{name}/{}: no figure", s.name);
        if s.kind == Kind::Targets {
            assert!(part.contains("data-kind=\"bars\""), "{name}/{}: the targets as bars", s.name);
            assert!(part.contains("spread"), "{name}/{}: the spread across targets", s.name);
        }
        let series_line = |f: &str| {
            f.split("<polyline").skip(1).any(|p| {
                let head = &p[..p.find("/>").unwrap_or(p.len())];
                head.contains("stroke=\"#0072B2\"") && head.matches(',').count() >= 2
            })
        };
        for f in &figures {
            let kind = f.split("data-kind=\"").nth(1).and_then(|k| k.split('"').next()).unwrap_or("");
            let caption = f.split("<figcaption>").nth(1).unwrap_or("");
            assert!(caption.contains(&format!("Rehearsal at {SCALE}")), "{name}/{}: {caption}", s.name);
            match s.kind {
                Kind::Line => {
                    assert_eq!(kind, "line", "{name}/{}", s.name);
                    assert!(series_line(f), "{name}/{}: a line per target", s.name);
                }
                Kind::Bars => {
                    assert_eq!(kind, "bars", "{name}/{}", s.name);
                    assert!(!series_line(f), "{name}/{}: bars, no line", s.name);
                }
                Kind::Targets => assert!(kind == "bars" || kind == "line", "{name}/{}", s.name),
                Kind::Net => unreachable!("a net study draws no figure here"),
                Kind::Heat => {
                    assert_eq!(kind, "heat", "{name}/{}", s.name);
                    let own: &[String] = if s.targets.is_empty() { labels } else { &s.targets };
                    assert!(own.iter().any(|t| caption.contains(&format!("{t}: "))), "{name}: {caption}");
                }
            }
        }
        if s.kind == Kind::Line && text.contains(&format!("name = \"{}\"\nkind = \"meta\"", s.name)) {
            assert_eq!(figures.len(), 1, "{name}/{}: every phase on one chart", s.name);
            assert!(figures[0].contains("ops/s"), "{name}/{}: in ops/s", s.name);
        }
    }
}

/// The isilon example's report set beside the published F800 and H600, and in GB/s.
fn isilon_beside_its_published_systems(bed: &Bed, browser: &str) {
    let beside = bed.tmp.path().join("beside.html");
    let args = ["report", "--campaign", "c1", "--reference", "isilon-f800", "-o", beside.to_str().unwrap()];
    let out = iosurvey(&[&args[..], &["--db", &bed.db]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&beside).unwrap();
    let seq = section(&html, "study-1");
    // Its IOR figure at the study's own size, not IOzone's of no stated size.
    let legend = "Isilon F800 published (8 GB/s, peak, 64 clients, 2TB total, size matched)";
    assert!(seq.contains(legend), "{seq}");
    assert!(seq.contains("Black diamonds: published points."), "{seq}");
    // The H600 published its random write at two sizes: each study is set beside the
    // one of its own size, said in the legend.
    let h600 = ["report", "--campaign", "c1", "--reference", "isilon-h600", "-o", beside.to_str().unwrap()];
    let out = iosurvey(&[&h600[..], &["--db", &bed.db]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&beside).unwrap();
    let at = |k: usize| section(&html, &format!("study-{k}")).to_string();
    assert!(at(3).contains("32GB per client, size matched"), "{}", at(3));
    assert!(!at(3).contains("8GB per client"), "{}", at(3));
    assert!(at(4).contains("8GB per client, size matched"), "{}", at(4));
    // In GB/s, as the papers: every rate of the page.
    let gb = bed.tmp.path().join("gb.html");
    let args = ["report", "--campaign", "c1", "--units", "gb", "-o", gb.to_str().unwrap()];
    let out = iosurvey(&[&args[..], &["--db", &bed.db]].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = fs::read_to_string(&gb).unwrap();
    let body = &html[html.find("<h2 id=\"summary\"").unwrap()..html.find("<h2 id=\"campaign-file\"").unwrap()];
    assert!(body.contains("GB/s") && !body.contains("MiB/s"), "rates in GB/s only");
    let shot = shots().join("issue38-isilon-reference.png");
    let arg = format!("--screenshot={}", shot.display());
    let framed = bed.tmp.path().join("framed.html");
    fs::write(&framed, "<iframe src=\"beside.html#study-1\" style=\"border:0;width:1100px;height:3000px\"></iframe>")
        .unwrap();
    let _ = open_in_chromium(browser, &framed, &[&arg, "--window-size=1100,3000"]);
    assert!(fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000), "a screenshot in {}", shot.display());
}
