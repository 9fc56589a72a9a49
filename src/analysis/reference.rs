//! Published figures beside measured ones. `data/published.csv` holds the figures that the
//! evaluations our users wrote state, each with its source, system, tool and workload; a
//! report can set the runs chosen beside one published system, units converted, with every
//! difference in workload, client count and file system stated next to the numbers.

use super::{Cell, Report, Table};
use crate::record::RunRecord;
use crate::spec::{Access, Op};
use crate::units::mib_per_s;

const CATALOG: &str = include_str!("../../data/published.csv");

/// One published figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// The document it comes from.
    pub source: String,
    /// The system measured, as the document names it.
    pub system: String,
    /// Its file system.
    pub file_system: String,
    /// The benchmark tool and version.
    pub tool: String,
    /// "sequential write", "random read", ...
    pub workload: String,
    /// N-to-N, N-to-1, ...
    pub access: String,
    /// Client nodes, where stated.
    pub clients: String,
    /// Threads or processes, where stated.
    pub threads: String,
    /// Transfer size, where stated.
    pub transfer: String,
    /// Data per task, where stated.
    pub size: String,
    /// The unit: GB/s, MB/s, GiB/s, IOPS, Gbit/s, minutes.
    pub metric: String,
    /// The figure.
    pub value: f64,
    /// peak, at 64 clients, ...
    pub qualifier: String,
    /// The source's title.
    pub title: String,
    /// Who published it.
    pub organisation: String,
    /// When, or "n.d." where the document gives no date.
    pub year: String,
}

impl Published {
    /// The source as a citation: "title, organisation, year".
    pub fn citation(&self) -> String {
        format!("{}, {}, {}", self.title, self.organisation, self.year)
    }

    /// The client count a figure was stated at ("at 64 clients", "at 1 thread"), if any.
    fn at_count(&self) -> Option<usize> {
        let rest = self.qualifier.strip_prefix("at ")?;
        let (n, what) = rest.split_once(' ')?;
        what.starts_with("client").then_some(()).or(what.starts_with("thread").then_some(()))?;
        n.parse().ok()
    }
}

/// Every figure of the catalog (lines that do not parse are not figures: the header).
pub fn catalog() -> Vec<Published> {
    CATALOG
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let value = f.get(11)?.parse().ok()?;
            f.get(16)?;
            let s = |k: usize| f[k].to_string();
            Some(Published {
                source: s(0),
                system: s(1),
                file_system: s(2),
                tool: s(3),
                workload: s(4),
                access: s(5),
                clients: s(6),
                threads: s(7),
                transfer: s(8),
                size: s(9),
                metric: s(10),
                value,
                qualifier: s(12),
                title: s(14),
                organisation: s(15),
                year: s(16),
            })
        })
        .collect()
}

/// A system's short name: its words in lower case joined by '-' ("Isilon F800" is
/// `isilon-f800`).
pub fn short_name(system: &str) -> String {
    let lower = system.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    words.join("-")
}

/// The systems of the catalog, a row each.
pub fn systems() -> Report {
    let mut t = Table::new(
        "published systems (report --reference NAME)",
        &["name", "system", "file system", "figures", "source"],
    );
    let all = catalog();
    let mut seen: Vec<String> = Vec::new();
    for p in &all {
        let name = short_name(&p.system);
        if seen.contains(&name) {
            continue;
        }
        let figures = all.iter().filter(|q| short_name(&q.system) == name).count();
        t.rows.push(vec![
            Cell::text(name.clone()),
            Cell::text(p.system.clone()),
            Cell::text(p.file_system.clone()),
            Cell::Int(figures as u64),
            Cell::text(p.citation()),
        ]);
        seen.push(name);
    }
    Report { tables: vec![t], ..Report::default() }
}

/// A published figure in iosurvey's unit: MiB/s for bandwidth, IOPS as is; `None` for what
/// iosurvey does not measure in a run (network Gbit/s, durations).
pub fn converted(p: &Published) -> Option<(f64, &'static str)> {
    let bytes = match p.metric.as_str() {
        "GB/s" => 1e9,
        "MB/s" => 1e6,
        "GiB/s" => (1u64 << 30) as f64,
        "IOPS" => return Some((p.value, "IOPS")),
        _ => return None,
    };
    Some((mib_per_s(p.value * bytes), "MiB/s"))
}

/// How much data a study or a published figure moves: per client (a block each) or in all
/// (a total divided over the clients), in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Volume {
    /// Each client's own data.
    PerClient(f64),
    /// The data of all clients together.
    Total(f64),
}

impl Volume {
    /// The bytes, whichever way they are counted.
    fn bytes(self) -> f64 {
        match self {
            Volume::PerClient(b) | Volume::Total(b) => b,
        }
    }
}

/// The volume a published figure was measured at, as its size column says it ("2TB total",
/// "32GB per client": decimal units, as the papers write them).
pub fn volume(p: &Published) -> Option<Volume> {
    let (amount, how) = p.size.split_once(' ')?;
    let split = amount.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (digits, unit) = amount.split_at(split);
    let scale = match unit {
        "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        _ => return None,
    };
    let bytes = digits.parse::<f64>().ok()? * scale;
    match how {
        "total" => Some(Volume::Total(bytes)),
        "per client" => Some(Volume::PerClient(bytes)),
        _ => None,
    }
}

/// Of several published figures of one workload measured at different volumes, the one
/// measured nearest the study's `volume` (the same way of counting, the nearest size on a log
/// scale); figures whose volume is not stated, or a study whose volume is not known, keep all.
pub fn nearest_volume(figures: Vec<Published>, volume_of_study: Option<Volume>) -> Vec<Published> {
    let Some(study) = volume_of_study else { return figures };
    let same_kind = |v: Volume| std::mem::discriminant(&v) == std::mem::discriminant(&study);
    let distance = |p: &Published| volume(p).filter(|v| same_kind(*v)).map(|v| (v.bytes() / study.bytes()).ln().abs());
    figures
        .iter()
        .filter(|p| {
            let rivals: Vec<&Published> = figures
                .iter()
                .filter(|q| q.system == p.system && q.workload == p.workload && q.access == p.access)
                .collect();
            if rivals.len() < 2 {
                return true;
            }
            let best = rivals.iter().filter_map(|q| distance(q)).fold(f64::INFINITY, f64::min);
            match distance(p) {
                Some(d) => d <= best,
                // None of them is counted the study's way: keep them all, each said with its size.
                None => best.is_infinite(),
            }
        })
        .cloned()
        .collect()
}

/// What of ours compares with a published workload: (op, random, access).
fn counterpart(p: &Published) -> Option<(Op, bool, Access)> {
    let (kind, op) = p.workload.split_once(' ')?;
    let op = match op {
        "write" => Op::Write,
        "read" => Op::Read,
        _ => return None,
    };
    let access = match p.access.as_str() {
        "N-to-N" => Access::FilePerTask,
        "N-to-1" => Access::Shared,
        _ => return None,
    };
    Some((op, kind == "random", access))
}

/// Our figure on a published figure's workload, in its unit, by the same statistic: a
/// published peak against our peak (the best phase) over runs of at most its clients; a figure
/// stated at a client count against our mean over the runs of that many tasks; any other
/// against our mean over the runs. Phases flagged as possibly cached are left out: a page
/// cache's figure is not set beside a storage system's. (value, the runs, the statistic in
/// words.)
fn ours<'r>(p: &Published, unit: &str, runs: &[&'r RunRecord]) -> Option<(f64, Vec<&'r RunRecord>, String)> {
    let (op, random, access) = counterpart(p)?;
    let peak = p.qualifier.starts_with("peak");
    let clients: Option<usize> = p.clients.parse().ok();
    let at = p.at_count();
    let same = |r: &&RunRecord| {
        r.status == crate::record::Status::Ok
            && r.workload.data().is_some_and(|d| d.access == access)
            && r.workload.random() == random
            && match (peak, at, clients) {
                (true, _, Some(most)) => r.workload.tasks <= most,
                (false, Some(n), _) => r.workload.tasks == n,
                _ => true,
            }
    };
    let figures: Vec<(f64, &RunRecord)> = runs
        .iter()
        .copied()
        .filter(same)
        .flat_map(|r| r.phases.iter().filter(|ph| ph.op == op && ph.possibly_cached.is_none()).map(move |ph| (ph, r)))
        .filter_map(|(ph, r)| {
            let v = if unit == "IOPS" { ph.figures.iops? } else { mib_per_s(ph.figures.bandwidth?) };
            Some((v, r))
        })
        .collect();
    let mut used: Vec<&RunRecord> = figures.iter().map(|f| f.1).collect();
    used.dedup_by_key(|r| r.id);
    let n = used.len();
    let runs_said = format!("{n} run{}", if n == 1 { "" } else { "s" });
    if peak {
        let best = figures.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
        let range = clients.map_or(String::new(), |c| format!(" of at most {c} clients"));
        return Some((best.0, vec![best.1], format!("peak: our best phase over {runs_said}{range}")));
    }
    let mean = figures.iter().map(|f| f.0).sum::<f64>() / figures.len().max(1) as f64;
    let whose = at.map_or("at their own client counts".to_string(), |n| format!("at {n} clients"));
    (!figures.is_empty()).then(|| (mean, used, format!("mean: our mean over the phases of {runs_said} {whose}")))
}

/// The runs chosen beside published system `name`: a row per published figure.
pub fn beside(name: &str, runs: &[RunRecord]) -> Result<Report, String> {
    let figures: Vec<Published> = catalog().into_iter().filter(|p| short_name(&p.system) == name).collect();
    let Some(first) = figures.first() else {
        return Err(format!("no published system is called '{name}'"));
    };
    let mut labels: Vec<Option<&str>> = runs.iter().map(|r| r.label.as_deref()).collect();
    labels.sort_unstable();
    labels.dedup();
    if labels.is_empty() {
        labels.push(None);
    }
    let mut t = Table::new(
        format!("beside {} ({}), from {}", first.system, first.file_system, first.citation()),
        &[
            "workload",
            "access",
            "system",
            "published",
            "ours",
            "unit",
            "ours/published",
            "statistic",
            "published setup",
            "our setup",
        ],
    );
    for p in &figures {
        let setup = [
            (!p.clients.is_empty()).then(|| format!("{} clients", p.clients)),
            (!p.threads.is_empty()).then(|| format!("{} threads", p.threads)),
            (!p.transfer.is_empty()).then(|| format!("{} transfers", p.transfer)),
            (!p.size.is_empty()).then(|| p.size.clone()),
            Some(p.tool.clone()),
            (!p.qualifier.is_empty()).then(|| p.qualifier.clone()),
        ];
        let setup: Vec<String> = setup.into_iter().flatten().collect();
        let Some((published, unit)) = converted(p) else {
            t.rows.push(vec![
                Cell::text(p.workload.clone()),
                Cell::text(p.access.clone()),
                Cell::Empty,
                Cell::text(format!("{} {}", p.value, p.metric)),
                Cell::text("not compared: iosurvey does not measure this in a run"),
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::text(setup.join(", ")),
                Cell::Empty,
            ]);
            continue;
        };
        // Each system measured (each label) by itself: never a figure pooled over systems.
        for label in &labels {
            let of: Vec<&RunRecord> = runs.iter().filter(|r| r.label.as_deref() == *label).collect();
            t.rows.push(row(p, (published, unit), label.unwrap_or("-"), &of, &setup));
        }
    }
    t.notes.push(
        "published figures are as the source states them (GB/s = 10^9 B/s, MB/s = 10^6 B/s, here in MiB/s = 2^20 B/s); \
         ours is taken for each system measured (label) apart, by the same statistic as the published one (the \
         statistic column: a peak against our best phase over runs of at most the published clients, a figure at a \
         client count against our mean at that count, else our mean) on the same workload and access; the setups \
         differ as the last two columns say, so a ratio compares systems as measured, not like with like"
            .to_string(),
    );
    Ok(Report { tables: vec![t], ..Report::default() })
}

/// The runs behind our figure in a few words, runs alike said once ("runs 1-7: 1 to 64 tasks,
/// 1 MiB transfers, 32 MiB per task, ext4"), so that the table fits a printed page.
fn setup_said(used: &[&RunRecord]) -> String {
    let range = |mut v: Vec<u64>, said: &dyn Fn(u64) -> String| {
        v.sort_unstable();
        v.dedup();
        match (v.first(), v.last()) {
            (Some(a), Some(b)) if a != b => format!("{} to {}", said(*a), said(*b)),
            (Some(a), _) => said(*a),
            _ => String::new(),
        }
    };
    let key = |r: &RunRecord| {
        let data = r.workload.data().cloned().unwrap_or_default();
        let imported =
            crate::record::imported_from(&r.provenance).map_or(String::new(), |t| format!(", imported from {t}"));
        (data.transfer, format!("{}{imported}", r.env.fs_type))
    };
    let mut groups: Vec<((u64, String), Vec<&RunRecord>)> = Vec::new();
    for r in used {
        match groups.iter_mut().find(|g| g.0 == key(r)) {
            Some(g) => g.1.push(r),
            None => groups.push((key(r), vec![r])),
        }
    }
    let said: Vec<String> = groups
        .iter()
        .map(|((transfer, fs), runs)| {
            let ids: Vec<i64> = runs.iter().filter_map(|r| r.id).collect();
            let tasks = range(runs.iter().map(|r| r.workload.tasks as u64).collect(), &|n| n.to_string());
            let sizes = runs.iter().filter_map(|r| r.workload.data().map(|d| d.block * d.segments)).collect();
            format!(
                "run{} {}: {tasks} tasks, {} transfers, {} per task, {fs}",
                if ids.len() == 1 { "" } else { "s" },
                super::study::spans(&ids),
                crate::units::format_size(*transfer),
                range(sizes, &crate::units::format_size)
            )
        })
        .collect();
    said.join("; ")
}

/// The row of a published figure beside one system's runs `of`.
fn row(p: &Published, (published, unit): (f64, &str), label: &str, of: &[&RunRecord], setup: &[String]) -> Vec<Cell> {
    let found = ours(p, unit, of);
    let our_setup = found.as_ref().map(|(_, used, _)| setup_said(used));
    vec![
        Cell::text(p.workload.clone()),
        Cell::text(p.access.clone()),
        Cell::text(label),
        Cell::num(Some(published), if unit == "IOPS" { 0 } else { 1 }),
        found.as_ref().map_or(
            Cell::text("no run of this workload and client count chosen, or only cached figures"),
            |(v, ..)| Cell::num(Some(*v), if unit == "IOPS" { 0 } else { 1 }),
        ),
        Cell::text(unit),
        Cell::num(found.as_ref().map(|(v, ..)| v / published), 3),
        found.as_ref().map_or(Cell::Empty, |(.., how)| Cell::text(how.clone())),
        Cell::text(setup.join(", ")),
        our_setup.map_or(Cell::Empty, Cell::text),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_parses_whole_and_names_its_systems() {
        let all = catalog();
        assert_eq!(all.len(), CATALOG.lines().count() - 1, "every line but the header is a figure");
        assert_eq!(short_name("Isilon F800"), "isilon-f800");
        assert_eq!(short_name("NetApp E5560 DDP LUN (cache off)"), "netapp-e5560-ddp-lun-cache-off");
        let f800 = all.iter().find(|p| p.system == "Isilon F800" && p.workload == "sequential write").unwrap();
        assert_eq!(f800.value, 8.0);
        // 8 GB/s = 8e9 B/s = 7629.39 MiB/s.
        let (mib, unit) = converted(f800).unwrap();
        assert_eq!(unit, "MiB/s");
        assert!((mib - 8e9 / 1048576.0).abs() < 1e-9);
        assert_eq!(counterpart(f800), Some((Op::Write, false, Access::FilePerTask)));
        assert!(systems().tables[0].rows.iter().any(|r| r[0].to_string() == "isilon-f800"));
        assert!(beside("no-such-system", &[]).is_err());
        let table = &beside("isilon-f800", &[]).unwrap().tables[0];
        assert!(table
            .rows
            .iter()
            .all(|r| r[4].to_string().contains("no run") || r[4].to_string().contains("not compared")));
    }

    /// A run of `tasks` tasks whose phases moved `mib` MiB/s, none flagged as possibly cached.
    fn run(id: i64, tasks: usize, mib: f64) -> RunRecord {
        let mut r = crate::record::fixtures::run(None);
        r.id = Some(id);
        r.workload.tasks = tasks;
        for p in &mut r.phases {
            p.possibly_cached = None;
            p.figures.bandwidth = Some(mib * 1048576.0);
        }
        r
    }

    #[test]
    fn an_imported_run_beside_a_published_system_says_so() {
        let mut imported = run(1, 2, 100.0);
        imported.provenance = "imported:ior 4.1.0".into();
        let table = &beside("isilon-f800", &[imported]).unwrap().tables[0];
        let write = table.rows.iter().find(|r| r[0].to_string() == "sequential write").unwrap();
        assert!(write
            .iter()
            .any(|c| c.to_string().contains("run 1: 2 tasks") && c.to_string().contains("imported from ior 4.1.0")));
    }

    #[test]
    fn a_source_is_cited_and_each_side_is_taken_by_the_same_statistic() {
        let all = catalog();
        assert!(all.iter().all(|p| !p.title.is_empty() && !p.organisation.is_empty() && !p.year.is_empty()));
        let lustre = all.iter().find(|p| p.system.starts_with("Dell Storage for HPC")).unwrap();
        assert_eq!(
            lustre.citation(),
            "Dell Storage for HPC with Intel Enterprise Edition 2.3 for Lustre software (white paper; Quy Ta), Dell HPC \
             Engineering, 2015"
        );
        // The F800's published peaks are over 1..64 clients: our peak over runs of at most 64
        // tasks, the 128-task run left out; said which.
        let runs = [run(1, 2, 100.0), run(2, 4, 300.0), run(3, 128, 900.0)];
        let table = &beside("isilon-f800", &runs).unwrap().tables[0];
        assert!(
            table.title.ends_with(
                "from Dell EMC Isilon F800 and H600 sequential and random I/O performance \
             (technical white paper), Dell EMC, n.d."
            ),
            "{}",
            table.title
        );
        let write = table.rows.iter().find(|r| r[0].to_string() == "sequential write").unwrap();
        assert_eq!(write[4].to_string(), "300.0");
        assert_eq!(write[7].to_string(), "peak: our best phase over 2 runs of at most 64 clients");
        // Two systems measured: a row each, never one figure pooled over both.
        let mut two = runs.to_vec();
        two[1].label = Some("b".into());
        let table = &beside("isilon-f800", &two).unwrap().tables[0];
        let writes: Vec<(String, String)> = table
            .rows
            .iter()
            .filter(|r| r[0].to_string() == "sequential write")
            .map(|r| (r[2].to_string(), r[4].to_string()))
            .take(2)
            .collect();
        assert_eq!(writes, [("-".to_string(), "100.0".to_string()), ("b".to_string(), "300.0".to_string())]);
        // A figure stated at a client count is set against our mean at that count.
        let pix = all.iter().find(|p| p.system == "PixStor" && p.qualifier == "at 1 thread").unwrap();
        assert_eq!(pix.at_count(), Some(1));
        let ours_at = |runs: &[RunRecord]| {
            let runs: Vec<&RunRecord> = runs.iter().collect();
            ours(pix, "IOPS", &runs).map(|(v, used, how)| (v, used.len(), how))
        };
        let random = |id, tasks, iops: f64| {
            let mut r = run(id, tasks, 1.0);
            r.workload.data_mut().pattern = crate::spec::Pattern::Random;
            for p in &mut r.phases {
                p.figures.iops = Some(iops);
            }
            r
        };
        let (v, n, how) = ours_at(&[random(1, 1, 100.0), random(2, 1, 300.0), random(3, 8, 5000.0)]).unwrap();
        assert_eq!((v, n, how.as_str()), (200.0, 2, "mean: our mean over the phases of 2 runs at 1 clients"));
        assert!(ours_at(&[random(3, 8, 5000.0)]).is_none(), "no run at 1 client");
    }
}
