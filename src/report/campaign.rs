//! `report --campaign cN`'s document: the campaign's results section, its studies in the
//! file's order drawn from the points the file plans and the store holds whole, the points
//! not measured, and the file and its hooks in an appendix.

use super::paper::Block;
use super::units::Units;
use crate::analysis::campaign as analysed;
use crate::campaign::ask::Scale;
use crate::campaign::runner::{point_name, said};
use crate::campaign::{Campaign, Point, Summary};
use crate::record::net::NetResult;
use crate::record::{GroupKind, MatrixRecord, RunRecord};
use crate::store::campaigns::{PointKey, Tally};
use crate::store::{PointName, Store};
use crate::study::Error;
use std::collections::HashSet;
use std::path::Path;

/// A campaign version as the report reads it: the file as that version stored it, the scale
/// it ran at, and the points that file plans.
pub struct Version<'a> {
    /// The campaign.
    pub campaign: &'a Campaign,
    /// The scale it ran at (`--scale 1/N`).
    pub scale: Option<Scale>,
    /// Its points, in run order.
    pub points: &'a [Point],
}

/// What a campaign's points filed as groups: each study's surveys (and other groups), its
/// matrices and its network figures.
#[derive(Default)]
struct Groups {
    matrices: Vec<(String, MatrixRecord)>,
    surveys: Vec<(String, i64, Vec<RunRecord>)>,
    nets: Vec<(String, NetResult)>,
}

/// The report's blocks and what it holds in words (for the line that says it was written),
/// its rates in `units`, set beside the published system `reference` where given.
pub fn blocks(
    store: &Store,
    db: &Path,
    v: &Version,
    reference: Option<&str>,
    units: Units,
) -> Result<(Vec<Block>, String), Error> {
    let c = v.campaign;
    let runs = store.load_all(&store.campaign_runs(&c.name)?)?;
    // A point the file of cN plans, stored whole: what the report draws (a point of another
    // version that this file no longer plans, or one that failed, is not).
    let planned: HashSet<PointName> = v.points.iter().map(|p| point_name(c, p)).collect();
    let runs = planned_runs(store, c, runs, &planned)?;
    let groups = groups(store, c, &planned)?;
    let mine: Vec<RunRecord> = runs.iter().filter(|r| r.campaign_id.is_some()).cloned().collect();
    let studies = analysed::studies(
        c,
        &mine,
        |study| analysed::Grouped {
            surveys: groups.surveys.iter().filter(|s| s.0 == study).map(|s| (s.1, s.2.clone())).collect(),
            matrices: groups.matrices.iter().filter(|m| m.0 == study).map(|m| &m.1).collect(),
            net: groups.nets.iter().filter(|n| n.0 == study).map(|n| n.1.clone()).collect(),
        },
        reference,
    );
    let missing = unmeasured(c, v.points, &store.campaign_tally(&c.name)?);
    let only_matrices: Vec<MatrixRecord> = groups.matrices.iter().map(|m| m.1.clone()).collect();
    let mut paper = super::paper::paper(&db.display().to_string(), runs, &only_matrices, reference)
        .map_err(|why| Error::failed(why, "report this as a bug"))?;
    paper.studies = studies;
    paper.title = Some(c.name.clone());
    paper.summary = c.summary;
    paper.rehearsal = v.scale.map(|Scale(n)| n);
    paper.studies.extend(analysed::not_measured(&missing));
    let mut blocks = paper.blocks();
    summarized(&mut blocks, c.summary);
    appendix(store, v, &mut blocks)?;
    let counted = format!("campaign {} ({} studies, {} points not measured)", c.name, c.studies.len(), missing.len());
    super::units::convert(&mut blocks, units);
    Ok((blocks, counted))
}

/// The runs of `runs` that are points `planned` names (a run filed by no campaign is kept).
fn planned_runs(
    store: &Store,
    c: &Campaign,
    runs: Vec<RunRecord>,
    planned: &HashSet<PointName>,
) -> Result<Vec<RunRecord>, Error> {
    let scales = store.campaign_scales(&c.name)?;
    Ok(runs
        .into_iter()
        .filter(|r| {
            r.campaign_id.is_none_or(|n| {
                let scale = scales.get(&n).copied().flatten();
                let point = PointName {
                    study: r.name.clone().unwrap_or_default(),
                    target: r.label.clone().unwrap_or_default(),
                    key: PointKey::run(&r.workload, scale),
                };
                planned.contains(&point)
            })
        })
        .collect())
}

/// The groups of the campaign's points that `planned` names and that ended well.
fn groups(store: &Store, c: &Campaign, planned: &HashSet<PointName>) -> Result<Groups, Error> {
    let mut out = Groups::default();
    for (g, point, state) in &store.campaign_groups(&c.name)? {
        if state != "ok" || !planned.contains(point) {
            continue;
        }
        match g.kind {
            GroupKind::Matrix => out.matrices.push((point.study.clone(), store.load_matrix(g.number)?)),
            // The group the campaign filed a training, checkpoint or network point in.
            GroupKind::Sweep => {
                let (ids, net) = store.point_made(*g)?;
                out.surveys.push((point.study.clone(), g.number, store.load_all(&ids)?));
                out.nets.extend(net.into_iter().map(|n| (point.study.clone(), n)));
            }
            _ => out.surveys.push((point.study.clone(), g.number, store.load_all(&store.group_runs(*g)?)?)),
        }
    }
    Ok(out)
}

/// The method says how this campaign's repetitions make a point, as its tables do.
fn summarized(blocks: &mut [Block], summary: Summary) {
    let how = match summary {
        Summary::Mean => return,
        Summary::Best => "the best of the runs at each client count (the file's summary), with no error bars",
        Summary::Median => "the median of the runs at each client count (the file's summary), with no error bars",
    };
    for b in blocks.iter_mut() {
        if let Block::Text(t) = b {
            if t.starts_with("A figure over clients draws") {
                *t = format!("A figure over clients draws, per target, {how}; its table beneath gives the same numbers and the runs behind each.");
            }
        }
    }
}

/// The appendix: the campaign file as run, and every hook's command as it ran.
fn appendix(store: &Store, v: &Version, blocks: &mut Vec<Block>) -> Result<(), Error> {
    let c = v.campaign;
    let tables = blocks.iter().filter(|b| matches!(b, Block::Table(..))).count();
    blocks.push(Block::Heading(2, format!("Appendix: campaign {}", c.name), "campaign-file".into()));
    blocks.push(Block::Text(format!(
        "The evaluation as run: the campaign file {} (version {}{}), to repeat it with 'iosurvey campaign run FILE'.",
        c.path.display(),
        c.version(),
        v.scale.map_or(String::new(), |Scale(n)| format!(", run at --scale 1/{n}"))
    )));
    blocks.push(Block::Code(c.text.clone()));
    let hooks = store.hooks_of(&c.name)?;
    if !hooks.is_empty() {
        blocks.push(Block::Table(
            tables + 1,
            analysed::hooks_table(&hooks),
            "Every hook's command, where it ran and how it ended".into(),
        ));
    }
    Ok(())
}

/// Each planned point not stored whole, with why: it failed, a rule refused it, or it has
/// not run yet.
fn unmeasured(c: &Campaign, all: &[Point], tally: &Tally) -> Vec<(String, String)> {
    all.iter()
        .filter_map(|p| {
            let (ok, failed) = tally.get(&point_name(c, p)).copied().unwrap_or((0, 0));
            if (p.repetition as usize) < ok {
                return None;
            }
            let why = match (&p.refusal, failed) {
                (Some(r), _) => format!("refused: {r}"),
                (None, 0) => "not run yet".to_string(),
                (None, n) => format!("failed ({n} attempt{})", if n == 1 { "" } else { "s" }),
            };
            Some((said(c, p), why))
        })
        .collect()
}
