//! A campaign read back from the store: the list `ls` shows, and its studies as a report's
//! sections (a chart per op with a line per target against clients, the table beneath, the
//! findings), the points not measured, and the appendix that lets the evaluation be repeated
//! (the file as run and every hook's command).

use super::shapes::{self, Varies};
use super::study::{over_clients_as, Study};
use super::{Cell, Report, Table};
use crate::campaign::{Campaign, Kind};
use crate::record::net::NetResult;
use crate::record::{MatrixRecord, RunRecord};
use crate::store::campaigns::{CampaignRow, KeptHook};
use crate::units::format_time;

/// `iosurvey ls`: a row per version of each campaign.
pub fn list(rows: &[CampaignRow]) -> Report {
    if rows.is_empty() {
        return Report::default();
    }
    let mut t = Table::new("campaigns", &["id", "name", "version", "started", "state", "points ok", "points failed"]);
    for r in rows {
        t.rows.push(vec![
            Cell::text(&r.id),
            Cell::text(&r.name),
            Cell::text(&r.version),
            Cell::text(format_time(r.started)),
            Cell::text(&r.state),
            Cell::Int(r.ok as u64),
            Cell::Int(r.failed as u64),
        ]);
    }
    Report { tables: vec![t], ..Report::default() }
}

/// The runs of the groups that are a campaign study's points (a survey's, an IO500 list's),
/// by the number of each group.
pub struct Grouped<'a> {
    /// The survey or IO500 group's number and its runs.
    pub surveys: Vec<(i64, Vec<RunRecord>)>,
    /// The matrices.
    pub matrices: Vec<&'a MatrixRecord>,
    /// The network's figures, of a network study.
    pub net: Vec<NetResult>,
}

/// A section per study of `c`, in the file's order: `runs` are the campaign's own (filed in
/// it under each study's name); `grouped(study)` gives a whole-study point's groups.
pub fn studies<'a>(
    c: &Campaign,
    runs: &[RunRecord],
    grouped: impl Fn(&str) -> Grouped<'a>,
    reference: Option<&str>,
) -> Vec<Study> {
    let mut out = Vec::new();
    // The network studies' figures, each set beside the studies of the targets it reaches.
    let ceilings: Vec<(&crate::campaign::Study, Vec<NetResult>)> =
        c.studies.iter().filter(|s| s.kind == Kind::Net).map(|s| (s, grouped(&s.name).net)).collect();
    for s in &c.studies {
        let targets: Vec<String> = s
            .targets
            .iter()
            .map(|&t| {
                let t = &c.targets[t];
                match t.description.is_empty() {
                    true => t.label.clone(),
                    false => format!("{} ({})", t.label, t.description),
                }
            })
            .collect();
        let members: Vec<&RunRecord> =
            runs.iter().filter(|r| r.campaign_id.is_some() && r.name.as_deref() == Some(s.name.as_str())).collect();
        let settings: Vec<String> = s
            .settings
            .iter()
            .map(|x| {
                let given = format!("{} = {}", x.key, x.value.as_arg());
                match x.key.as_str() {
                    "clients" => format!("{given}{}", as_ran(&members)),
                    _ => given,
                }
            })
            .collect();
        let mut heading = vec![format!(
            "Study '{}' ({}), on {}; settings: {}.",
            s.name,
            s.kind.name(),
            targets.join(", "),
            if settings.is_empty() { "the command's defaults".to_string() } else { settings.join(", ") }
        )];
        let (title, mut report, ids) = match s.kind.swept() {
            true => swept(c, s, &members, reference),
            false => whole(c, s, grouped(&s.name)),
        };
        if ids.is_empty() && report.tables.is_empty() {
            heading.push("No point of this study is stored whole yet.".into());
        }
        if s.kind == Kind::Net {
            heading.push(format!(
                "The network that reaches {}: its ceiling bounds what they can deliver to clients over it.",
                targets.join(", ")
            ));
        }
        heading.extend(ceilings_beside(c, s, &ceilings));
        heading.append(&mut report.heading);
        report.heading = heading;
        out.push(Study { title, runs: ids, report });
    }
    out
}

/// A swept study's section: over clients, by setting or across like targets, as its `members`
/// vary; its title, report and runs.
fn swept(
    c: &Campaign,
    s: &crate::campaign::Study,
    members: &[&RunRecord],
    reference: Option<&str>,
) -> (String, Report, Vec<i64>) {
    let ids: Vec<i64> = members.iter().filter_map(|r| r.id).collect();
    // Targets that nothing but their names tells apart are like targets (the LUNs of
    // one array); targets described apart stand for a setting (a stripe count).
    let mut described: Vec<&str> = s.targets.iter().map(|&t| c.targets[t].description.as_str()).collect();
    described.dedup();
    let varies = shapes::varies(members, described.len() == 1);
    let what = super::study::shape_said(members);
    let report = match (members.is_empty(), varies) {
        (true, _) => Report::default(),
        (false, Varies::Clients) => over_clients_as(members, reference.map(|name| (name, volume_of(s))), c.summary),
        (false, Varies::Setting) => shapes::by_setting(members, &what, c.summary),
        (false, Varies::Targets) => shapes::across_targets(members, &what, c.summary),
    };
    let how = match varies {
        Varies::Clients => "over clients, one line per target",
        Varies::Setting => "by target, one client count",
        Varies::Targets => "across like targets, highest first",
    };
    (format!("{}: {} {how}", s.name, s.kind.name()), report, ids)
}

/// The section of a study whose points are whole groups `g` (surveys, matrices, IO500 lists,
/// the targets' survey, a network's figures, training runs): its title, report and runs.
fn whole(c: &Campaign, s: &crate::campaign::Study, g: Grouped) -> (String, Report, Vec<i64>) {
    let mut report = Report::default();
    let mut ids = Vec::new();
    for (number, members) in &g.surveys {
        ids.extend(members.iter().filter_map(|r| r.id));
        report = report.and(match s.kind {
            // Drawn below, over every point's runs.
            Kind::Targets | Kind::Train => Report::default(),
            Kind::Checkpoint => members.iter().fold(Report::default(), |r, m| r.and(super::run(m))),
            _ => super::survey(*number, members),
        });
    }
    let runs: Vec<RunRecord> = g.surveys.iter().flat_map(|(_, m)| m.iter().cloned()).collect();
    if let (Kind::Targets, Some((number, _))) = (s.kind, g.surveys.first()) {
        // The campaign's repetitions of the survey, together: each target's runs are
        // its runs alone in every repetition, so its interval is over all of them.
        let labelled = by_label(c, &s.targets, &runs);
        report = report.and(super::targets::report(*number, &labelled));
        report.tables.extend(alone_peaks(&labelled));
    }
    if s.kind == Kind::Train {
        if let Some(train) = super::train::study(&runs) {
            report = report.and(train.report);
        }
    }
    if s.kind == Kind::Net {
        report = report.and(super::net(&g.net));
    }
    let named: Vec<(&MatrixRecord, String)> =
        g.matrices.iter().map(|m| (*m, label_of_dir(c, &s.targets, &m.env.target))).collect();
    for (m, target) in &named {
        report = report.and(matrix_of(m, target));
    }
    report.tables.extend(matrix_peaks(&s.name, &named));
    let what = match s.kind {
        Kind::Matrix => "matrix of each target",
        Kind::Io500 => "IO500 list of each target",
        Kind::Targets => "the targets side by side, each alone and then k at once",
        Kind::Net => "the network's ceiling",
        Kind::Train => "accelerator utilization and samples/s against accelerators",
        Kind::Checkpoint => "checkpoint write and read of each point",
        _ => "survey of each target",
    };
    (format!("{}: {what}", s.name), report, ids)
}

/// The ceiling of each network study that reaches a target of `s`, said beside `s`'s
/// figures: a network bounds only the targets reached over it, never a local disk.
fn ceilings_beside(
    c: &Campaign,
    s: &crate::campaign::Study,
    ceilings: &[(&crate::campaign::Study, Vec<NetResult>)],
) -> Vec<String> {
    if s.kind == Kind::Net {
        return Vec::new();
    }
    ceilings
        .iter()
        .filter_map(|(net, results)| {
            let reached: Vec<&str> =
                s.targets.iter().filter(|t| net.targets.contains(t)).map(|&t| c.targets[t].label.as_str()).collect();
            let best = results.iter().filter(|r| !r.both_ways).filter_map(|r| Some((r, r.bandwidth?))).max_by(|a, b| a.1.total_cmp(&b.1));
            let (r, limit) = best.filter(|_| !reached.is_empty())?;
            Some(format!(
                "The network that reaches {} tops out at {:.1} MiB/s (study '{}': {} {}, {} stream{}), a ceiling on these figures.",
                reached.join(", "),
                crate::units::mib_per_s(limit),
                net.name,
                crate::spec::variant_name(&r.mode),
                r.pattern.name(),
                r.streams,
                if r.streams == 1 { "" } else { "s" }
            ))
        })
        .collect()
}

/// A target survey's figure of each target and op, for the summary's table of peaks: the
/// mean of its runs alone, with their interval, at its streams.
fn alone_peaks(runs: &[RunRecord]) -> Option<Table> {
    use super::targets::Role;
    let mut by: Vec<((String, crate::spec::Op), Vec<f64>, usize)> = Vec::new();
    for r in runs.iter().filter(|r| r.status == crate::record::Status::Ok) {
        let Some(Role::Alone(label)) = r.name.as_deref().and_then(Role::of) else { continue };
        for p in &r.phases {
            let Some(rate) = p.figures.bandwidth else { continue };
            let key = (label.clone(), p.op);
            match by.iter_mut().find(|b| b.0 == key) {
                Some(b) => b.1.push(rate / 1048576.0),
                None => by.push((key, vec![rate / 1048576.0], r.workload.tasks)),
            }
        }
    }
    let mut t = Table::new(shapes::PEAKS, &["target", "op", "peak", "95% interval", "clients", "runs", "unit"]);
    for ((label, op), rates, streams) in by {
        let mean = rates.iter().sum::<f64>() / rates.len() as f64;
        let interval = crate::stats::mean_interval(&rates)
            .map_or(Cell::Empty, |i| Cell::text(crate::stats::around(mean, i.lo.max(0.0), i.hi, 1)));
        t.rows.push(vec![
            Cell::text(label),
            Cell::text(op.name()),
            Cell::num(Some(mean), 1),
            interval,
            Cell::Int(streams as u64),
            Cell::Int(rates.len() as u64),
            Cell::text("MiB/s"),
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

/// A target survey's runs with each target named by its label in the campaign: the survey
/// names its targets by directory.
fn by_label(c: &Campaign, study_targets: &[usize], runs: &[RunRecord]) -> Vec<RunRecord> {
    use super::targets::Role;
    runs.iter()
        .map(|r| {
            let mut r = r.clone();
            if let Some(Role::Alone(dir)) = r.name.as_deref().and_then(Role::of) {
                r.name = Some(Role::Alone(label_of_dir(c, study_targets, &dir)).name());
            }
            r
        })
        .collect()
}

/// The data a study moves as its file says it (`block` per client, or `total`), by which a
/// published figure measured at a like volume is chosen over others.
fn volume_of(s: &crate::campaign::Study) -> Option<super::reference::Volume> {
    use super::reference::Volume;
    s.settings.iter().find_map(|x| {
        let bytes = crate::units::size_arg(&x.value.as_arg()).ok()? as f64;
        match x.key.as_str() {
            "block" => Some(Volume::PerClient(bytes)),
            "total" => Some(Volume::Total(bytes)),
            _ => None,
        }
    })
}

/// The client counts a study's runs ran at, when they are not what the file asked: " (ran at
/// 1, 2: capped at the 2 cores of node1)" where a rehearsal capped them, else that the others
/// were not measured.
fn as_ran(runs: &[&RunRecord]) -> String {
    let mut ran: Vec<usize> = runs.iter().map(|r| r.workload.tasks).collect();
    ran.sort_unstable();
    ran.dedup();
    let Some(&most) = ran.last() else { return String::new() };
    let cores = runs.iter().map(|r| r.env.cpu_count * r.hosts.len().max(1)).max().unwrap_or(0);
    let said: Vec<String> = ran.iter().map(usize::to_string).collect();
    let why = match most == cores {
        true => format!(
            "capped at the {cores} cores of {}",
            runs.first().map_or(String::new(), |r| r.hosts.join(", ").chars().take(80).collect())
        ),
        false => "the other counts are listed under Points not measured".to_string(),
    };
    format!(" (ran at {}: {why})", said.join(", "))
}

/// The label of the target of `study_targets` whose directory is `dir` (a matrix names its
/// target by directory), else the directory itself.
fn label_of_dir(c: &Campaign, study_targets: &[usize], dir: &str) -> String {
    study_targets
        .iter()
        .map(|&t| &c.targets[t])
        .find(|t| {
            let own = t.dir.to_string_lossy();
            dir == own || dir.starts_with(&format!("{}/", own.trim_end_matches('/')))
        })
        .map_or_else(|| dir.to_string(), |t| t.label.clone())
}

/// A matrix as a campaign report shows it: a heat map per kind, its caption naming the target,
/// and its cliffs; its full grids go to the figures' CSV and its peaks to the study's table
/// ([`matrix_peaks`]), so that a matrix campaign's report stays a few dozen pages.
fn matrix_of(m: &MatrixRecord, target: &str) -> Report {
    let mut r = super::matrix::untimed(m);
    r.tables.retain(|t| !super::matrix::is_grid(t));
    // How a cell is timed is the same for every matrix of a campaign: a note, said once in
    // the report (as footers are), not a line of each target's heading.
    r.footer.push(super::matrix::timing_said(m));
    for chart in &mut r.charts {
        chart.title = format!("{target}: {}", chart.title);
    }
    r.findings = super::matrix::cliff_findings(m);
    for f in &mut r.findings {
        f.text = format!("{target} {}", f.text);
    }
    r
}

/// The title of a matrix study's table of each target's peak of each kind, which the summary
/// shows (and the study's section does not).
pub const MATRIX_PEAKS: &str = "each target's peak of each kind";

/// A matrix study's peaks in one compact table: a row per target, a column per kind, each cell
/// the kind's best rate over the grid (its file and record sizes are the figures' CSV).
fn matrix_peaks(study: &str, matrices: &[(&MatrixRecord, String)]) -> Option<Table> {
    let mut kinds: Vec<crate::plan::matrix::Kind> = Vec::new();
    for (m, _) in matrices {
        for f in super::matrix::findings(m) {
            if !kinds.contains(&f.kind) {
                kinds.push(f.kind);
            }
        }
    }
    if kinds.is_empty() {
        return None;
    }
    let mut columns = vec!["target".to_string()];
    columns.extend(kinds.iter().map(|k| k.name()));
    columns.push("unit".into());
    let mut t = Table::new(format!("{study}: {MATRIX_PEAKS}"), &columns.iter().map(String::as_str).collect::<Vec<_>>());
    for (m, target) in matrices {
        let found = super::matrix::findings(m);
        let mut row = vec![Cell::text(target)];
        row.extend(kinds.iter().map(|k| {
            let peak = found.iter().find(|f| f.kind == *k).and_then(|f| f.peak);
            Cell::num(peak.map(|p| crate::units::mib_per_s(p.0)), 0)
        }));
        row.push(Cell::text("MiB/s"));
        t.rows.push(row);
    }
    t.notes.push(
        "each kind's best cell over the file and record sizes measured; every cell of each grid is in its figure's CSV"
            .into(),
    );
    Some(t)
}

/// The points that were not measured (failed, refused, still to run), as a section.
pub fn not_measured(lines: &[(String, String)]) -> Option<Study> {
    if lines.is_empty() {
        return None;
    }
    let mut t = Table::new("points not measured", &["point", "why"]);
    t.rows = lines.iter().map(|(p, why)| vec![Cell::text(p), Cell::text(why)]).collect();
    Some(Study {
        title: "Points not measured".into(),
        runs: Vec::new(),
        report: Report { tables: vec![t], ..Report::default() },
    })
}

/// Every hook's command, where it ran, and how often it ended how: for the appendix.
pub fn hooks_table(hooks: &[KeptHook]) -> Table {
    let mut t = Table::new("hooks as they ran", &["hook", "command", "node", "runs", "failed", "last failure"]);
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for h in hooks {
        let key = (h.run.hook.clone(), h.run.command.clone(), h.run.node.clone());
        if seen.contains(&key) {
            continue;
        }
        let same: Vec<&KeptHook> =
            hooks.iter().filter(|o| o.run.hook == key.0 && o.run.command == key.1 && o.run.node == key.2).collect();
        let failed: Vec<&&KeptHook> = same.iter().filter(|o| !o.run.ok()).collect();
        t.rows.push(vec![
            Cell::text(&key.0),
            Cell::text(&key.1),
            Cell::text(&key.2),
            Cell::Int(same.len() as u64),
            Cell::Int(failed.len() as u64),
            Cell::text(failed.last().map_or(String::new(), |f| {
                format!("{}: {}", f.run.ending(), f.run.output.lines().last().unwrap_or_default())
            })),
        ]);
        seen.push(key);
    }
    t
}
