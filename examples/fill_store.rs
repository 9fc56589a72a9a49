//! Fills a result store to a given number of runs through iosurvey's own store API, for the
//! scale benchmarks (bench/store-scale): every run it adds is saved as `iosurvey run` saves
//! one, in a transaction of its own, with its columns and index computed from the record.
//!
//!     cargo run --release --example fill_store -- --db X --runs N
//!
//! The runs already in X are the templates (bench/store-scale stores a real campaign there
//! first); the copies are plain runs (no survey, sweep or campaign), each a template's record
//! with the template's workload, label and figures, started one second after the one before,
//! taken from the templates in turn. Nothing is done when X holds N runs or more already.

use iosurvey::record::RunRecord;
use iosurvey::store::Store;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    match fill() {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("fill_store: {why}");
            ExitCode::from(2)
        }
    }
}

fn fill() -> Result<String, String> {
    let (db, runs) = args()?;
    let mut store = Store::open(&db).map_err(|e| e.to_string())?;
    let ids: Vec<i64> = store.list().map_err(|e| e.to_string())?.iter().map(|r| r.id).collect();
    if ids.is_empty() {
        return Err(format!("{} holds no run to copy: store one first", db.display()));
    }
    let templates: Vec<RunRecord> =
        ids.iter().map(|&id| store.load(id)).collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    let last = templates.iter().map(|r| r.started).max().unwrap_or(0);
    let have = ids.len();
    for k in have..runs {
        let t = &templates[k % templates.len()];
        let started = last + (k - have) as i64 + 1;
        // A plain run: filed in no group, so that the campaign's points stay exactly the
        // campaign's.
        let copy = RunRecord {
            id: None,
            survey_id: None,
            sweep_id: None,
            matrix_id: None,
            campaign_id: None,
            targets_id: None,
            name: None,
            started,
            ..t.clone()
        };
        store.save(&copy).map_err(|e| e.to_string())?;
    }
    Ok(format!("{}: {} runs ({} added)", db.display(), have.max(runs), runs.saturating_sub(have)))
}

/// `--db PATH --runs N`, both required.
fn args() -> Result<(PathBuf, usize), String> {
    let usage = "usage: fill_store --db PATH --runs N";
    let (mut db, mut runs) = (None, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(usage)?;
        match flag.as_str() {
            "--db" => db = Some(PathBuf::from(value)),
            "--runs" => runs = Some(value.parse::<usize>().map_err(|_| format!("--runs {value}: not a count"))?),
            _ => return Err(usage.into()),
        }
    }
    Ok((db.ok_or(usage)?, runs.ok_or(usage)?))
}
