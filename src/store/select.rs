//! Choosing runs in SQL: what `report` (and whatever else picks runs by where and when they
//! ran) asks of the store, so that only the runs chosen are read back whole.

use super::{Store, StoreError};
use rusqlite::params;

/// Which runs to choose: each condition given narrows the choice; none given chooses every
/// run (a matrix's cells are the matrix's, never chosen).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only these runs (ids); `None` for every run.
    pub among: Option<Vec<i64>>,
    /// Only the runs whose target path holds this text.
    pub target: Option<String>,
    /// Only the runs started at or after this time (Unix seconds).
    pub since: Option<i64>,
    /// Only the runs started on or before this day (its midnight, Unix seconds, UTC): the
    /// whole of that day is taken.
    pub until: Option<i64>,
}

/// A day's seconds: `until` names a day, and takes all of it.
const DAY: i64 = 86_400;

impl Store {
    /// The ids of the runs `filter` chooses, in id order. A row whose start is not a time
    /// (altered outside iosurvey) is left out, for [`Store::unreadable`], as `list` leaves it.
    pub fn select(&self, filter: &Filter) -> Result<Vec<i64>, StoreError> {
        let among = filter.among.as_ref().map(|ids| serde_json::to_string(ids).unwrap_or_else(|_| "[]".into()));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.started FROM runs r LEFT JOIN groups g ON g.id = r.group_id
                 WHERE g.letter IS NOT 'm'
                   AND (?1 IS NULL OR r.id IN (SELECT value FROM json_each(?1)))
                   AND (?2 IS NULL OR instr(COALESCE(r.target, ''), ?2) > 0)
                   AND (?3 IS NULL OR r.started >= ?3)
                   AND (?4 IS NULL OR r.started < ?4)
                 ORDER BY r.id",
            )
            .map_err(|e| self.wrap(e))?;
        let until = filter.until.map(|day| day.saturating_add(DAY));
        let rows = stmt
            .query_map(params![among, filter.target, filter.since, until], |r| {
                let id: i64 = r.get(0)?;
                Ok(r.get::<_, i64>(1).map(|_| id).map_err(|e| (format!("run {id}"), super::one_line(&e))))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.wrap(e))?;
        Ok(self.readable(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_chooses_in_sql_what_the_report_filtered_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let day = 1_700_000_000 / DAY * DAY;
        let mut ids = Vec::new();
        for (target, started) in
            [("/lustre/a", day - 1), ("/lustre/b", day), ("/gpfs/c", day + DAY - 1), ("/lustre/d", day + DAY)]
        {
            let mut r = crate::record::fixtures::run(None);
            r.env.target = target.into();
            r.started = started;
            ids.push(store.save(&r).unwrap());
        }
        let chosen = |f: Filter| store.select(&f).unwrap();
        assert_eq!(chosen(Filter::default()), ids, "no condition: every run");
        assert_eq!(chosen(Filter { target: Some("lustre".into()), ..Default::default() }), [ids[0], ids[1], ids[3]]);
        // --since and --until name days, the whole of --until's included.
        let that_day = Filter { since: Some(day), until: Some(day), ..Default::default() };
        assert_eq!(chosen(that_day.clone()), [ids[1], ids[2]]);
        let among = Filter { among: Some(vec![ids[0], ids[2]]), ..that_day };
        assert_eq!(chosen(among), [ids[2]]);
        assert_eq!(chosen(Filter { among: Some(Vec::new()), ..Default::default() }), Vec::<i64>::new());
    }
}
