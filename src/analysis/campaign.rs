//! A campaign read back from the store: the list `ls` shows, and its studies as a report's
//! sections (a chart per op with a line per target against clients, the table beneath, the
//! findings), the points not measured, and the appendix that lets the evaluation be repeated
//! (the file as run and every hook's command).

use super::study::{over_clients_as, Study};
use super::{Cell, Report, Table};
use crate::campaign::{Campaign, Kind};
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
}

/// A section per study of `c`, in the file's order: `runs` are the campaign's own (filed in
/// it under each study's name); `grouped(study)` gives a whole-study point's groups.
pub fn studies<'a>(c: &Campaign, runs: &[RunRecord], grouped: impl Fn(&str) -> Grouped<'a>) -> Vec<Study> {
    let mut out = Vec::new();
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
        let settings: Vec<String> = s.settings.iter().map(|x| format!("{} = {}", x.key, x.value.as_arg())).collect();
        let mut heading = vec![format!(
            "Study '{}' ({}), on {}; settings: {}.",
            s.name,
            s.kind.name(),
            targets.join(", "),
            if settings.is_empty() { "the command's defaults".to_string() } else { settings.join(", ") }
        )];
        let (title, mut report, ids) = if s.kind.swept() {
            let members: Vec<&RunRecord> =
                runs.iter().filter(|r| r.campaign_id.is_some() && r.name.as_deref() == Some(s.name.as_str())).collect();
            let ids: Vec<i64> = members.iter().filter_map(|r| r.id).collect();
            let report = match members.is_empty() {
                true => Report::default(),
                false => over_clients_as(&members, None, c.summary),
            };
            (format!("{}: {} over clients, one line per target", s.name, s.kind.name()), report, ids)
        } else {
            let g = grouped(&s.name);
            let mut report = Report::default();
            let mut ids = Vec::new();
            for (number, members) in &g.surveys {
                ids.extend(members.iter().filter_map(|r| r.id));
                report = report.and(super::survey(*number, members));
            }
            for m in &g.matrices {
                report = report.and(super::matrix::matrix(m));
            }
            let what = match s.kind {
                Kind::Matrix => "matrix of each target",
                Kind::Io500 => "IO500 list of each target",
                _ => "survey of each target",
            };
            (format!("{}: {what}", s.name), report, ids)
        };
        if ids.is_empty() && report.tables.is_empty() {
            heading.push("No point of this study is stored whole yet.".into());
        }
        heading.append(&mut report.heading);
        report.heading = heading;
        out.push(Study { title, runs: ids, report });
    }
    out
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
