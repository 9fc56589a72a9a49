//! The group of a campaign point whose study files no group through a session: training and
//! checkpoint runs are stored one by one, outside a plan, and the network's figures are no
//! runs at all. Such a study begins the point's group itself, as a sweep, a survey or a
//! matrix does, so that the campaign knows the point whole or not (and resumes past it), and
//! finds what the point made in the group's spec. Played alone, the study files no group.

use super::play::{on_lead, Context, Made, Outcome};
use super::Error;
use crate::record::{GroupId, GroupKind};
use crate::store::{GroupStart, Store};
use crate::team::{share_value, Team};

/// A point's group while its study plays; nothing outside a campaign.
pub struct PointGroup {
    /// The group, within a campaign.
    group: Option<GroupId>,
    /// The study's kind, kept in the group's spec.
    kind: &'static str,
    /// Hooks judge the point after it ran: it stays failed until they pass.
    unjudged: bool,
}

/// Begins the group of the point `ctx` is within (on the lead; every process gets its name),
/// before the study does anything, so that a study that fails at any step is filed failed.
pub fn begin<T: Team>(ctx: &Context, team: &T, kind: &'static str) -> Result<PointGroup, Error> {
    let Some(within) = &ctx.within else { return Ok(PointGroup { group: None, kind, unjudged: false }) };
    let start = GroupStart {
        kind: GroupKind::Sweep,
        parent: Some(within.campaign),
        started: crate::units::now_unix(),
        command_line: ctx.command_line.clone(),
        spec: serde_json::json!({ "kind": kind }).to_string(),
        point: Some(within.point.clone()),
    };
    let group = on_lead(team, || Ok(Store::open_existing(&ctx.store)?.begin_group(&start)?))?;
    let group: GroupId = share_value(team, group.as_ref());
    Ok(PointGroup { group: Some(group), kind, unjudged: within.unjudged })
}

impl PointGroup {
    /// Ends the group with what the study came to: whole when it ended without a failure
    /// (and no hook is still to judge it), its runs' ids and the network's figures kept in
    /// its spec. The outcome names the group; a store that cannot take the end is its
    /// failure, unless it failed already.
    pub fn finish<T: Team>(self, ctx: &Context, team: &T, played: Result<Outcome, Error>) -> Result<Outcome, Error> {
        let Some(group) = self.group else { return played };
        let (ok, spec) = match &played {
            Ok(o) => (o.failure.is_none() && !self.unjudged, Some(made(self.kind, o))),
            Err(_) => (false, None),
        };
        let finished =
            on_lead(team, || Ok(Store::open_existing(&ctx.store)?.finish_group(group, ok, spec.as_deref())?));
        let mut outcome = played?;
        outcome.group = Some(group);
        if let Err(e) = finished {
            outcome.failure.get_or_insert(e);
        }
        Ok(outcome)
    }
}

/// What a point made, as its group keeps it ([`Store::point_made`] reads it back): the ids
/// of the runs it stored, and the network's figures.
fn made(kind: &str, o: &Outcome) -> String {
    let runs: Vec<i64> = o.records.iter().filter_map(|r| r.id).collect();
    let net = match &o.made {
        Made::Net(results) => results.as_slice(),
        _ => &[],
    };
    serde_json::json!({ "kind": kind, "runs": runs, "net": net }).to_string()
}
