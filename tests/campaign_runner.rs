//! The library's campaign runner, in this process (no binary spawned): a campaign of two
//! targets, a sweep and a metadata study, stopped through its cancel token between points and
//! run again, stores every point once; and a refusal of a point's settings names the file's
//! keys, not a command's flags.

use iosurvey::campaign::runner::{Deaf, Player, Plays, Runner};
use iosurvey::campaign::{self, points};
use iosurvey::study::play::{Context, Outcome, Unheard};
use iosurvey::study::{Error, Kind, Study};
use iosurvey::team::local::LocalTeam;
use std::fs;
use std::path::Path;

/// Plays through the library, and pulls the campaign's stop token after `stop_after` points.
struct StopsAfter<'a> {
    inner: Plays<'a, LocalTeam>,
    played: usize,
    stop_after: usize,
}

impl Player for StopsAfter<'_> {
    fn play(&mut self, study: &Study, ctx: &Context) -> Result<Outcome, Error> {
        let outcome = self.inner.play(study, ctx);
        self.played += 1;
        if self.played == self.stop_after {
            ctx.cancel.cancel();
        }
        outcome
    }
}

fn runner<'c>(c: &'c campaign::Campaign, db: &Path) -> Runner<'c> {
    Runner {
        campaign: c,
        points: points::points(c, &LocalTeam, None).expect("the points"),
        store: db.to_path_buf(),
        scale: None,
        cancel: iosurvey::cancel::Cancel::new(),
        leftovers: Default::default(),
        command_line: "campaign_runner test".into(),
    }
}

fn campaign_text(a: &Path, b: &Path) -> String {
    format!(
        "[campaign]\nname = \"inproc\"\nrepetitions = 1\norder = \"sequential\"\n\
         [[target]]\nlabel = \"a\"\ndir = \"{}\"\n[[target]]\nlabel = \"b\"\ndir = \"{}\"\n\
         [[study]]\nname = \"sweep\"\nkind = \"run\"\ntransfer = \"4k\"\nblock = \"64k\"\nclients = \"1,2\"\n\
         [[study]]\nname = \"md\"\nkind = \"meta\"\nitems = 20\n",
        a.display(),
        b.display()
    )
}

#[test]
fn a_campaign_stopped_through_its_token_and_run_again_stores_every_point_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    fs::create_dir(&a).unwrap();
    fs::create_dir(&b).unwrap();
    let db = tmp.path().join("store.db");
    let c = campaign::parse(&tmp.path().join("c.toml"), &campaign_text(&a, &b)).expect("the file reads");
    let first = runner(&c, &db);
    // 2 targets x (2 client counts of the sweep + 1 of the metadata study).
    assert_eq!(first.points.len(), 6);
    let mut observer = Unheard;
    let mut stopping =
        StopsAfter { inner: Plays { team: &LocalTeam, observer: &mut observer }, played: 0, stop_after: 2 };
    let stopped = first.run(&LocalTeam, &mut stopping, &mut Deaf).expect_err("the token stops it");
    assert_eq!(stopped.kind, Kind::Interrupted, "{stopped}");
    assert!(stopped.to_string().contains("interrupted between points"), "{stopped}");
    assert_eq!(stopping.played, 2, "no point begins after the token is pulled");

    let second = runner(&c, &db);
    let mut observer = Unheard;
    let ran = second
        .run(&LocalTeam, &mut Plays { team: &LocalTeam, observer: &mut observer }, &mut Deaf)
        .expect("the rest runs");
    assert_eq!((ran.ok, ran.failed, ran.skipped, ran.refused), (4, 0, 2, 0));

    let store = iosurvey::store::Store::open_existing(&db).unwrap();
    let tally = store.campaign_tally("inproc").unwrap();
    assert_eq!(tally.len(), 6, "every point, by its identity: {tally:?}");
    assert!(tally.values().all(|&(ok, failed)| ok == 1 && failed == 0), "each stored once, whole: {tally:?}");
    assert_eq!(store.campaign_runs("inproc").unwrap().len(), 6, "one run per point, none twice");
    // Nothing of the runs is left in the targets.
    for dir in [&a, &b] {
        assert_eq!(fs::read_dir(dir).unwrap().count(), 0, "{} holds what the runs left", dir.display());
    }
    // A third time there is nothing to run.
    let third = runner(&c, &db);
    let mut observer = Unheard;
    let ran =
        third.run(&LocalTeam, &mut Plays { team: &LocalTeam, observer: &mut observer }, &mut Deaf).expect("nothing");
    assert_eq!((ran.campaign, ran.ok, ran.skipped), (None, 0, 6));
}

#[test]
fn a_meta_studys_bad_phases_are_refused_in_the_files_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    fs::create_dir(&a).unwrap();
    let text = format!(
        "[campaign]\nname = \"m\"\n[[target]]\nlabel = \"a\"\ndir = \"{}\"\n\
         [[study]]\nname = \"md\"\nkind = \"meta\"\nitems = 20\nphases = \"file-stat\"\n",
        a.display()
    );
    let c = campaign::parse(&tmp.path().join("c.toml"), &text).expect("the file reads");
    let db = tmp.path().join("store.db");
    let mut observer = Unheard;
    let e = runner(&c, &db)
        .run(&LocalTeam, &mut Plays { team: &LocalTeam, observer: &mut observer }, &mut Deaf)
        .expect_err("a stat of files never made is refused");
    assert_eq!(e.kind, Kind::Refused, "{e}");
    let line = e.to_string();
    assert!(line.contains("stopped at md (meta) on a"), "{line}");
    assert!(line.contains("use 'phases' "), "the hint names the file's key: {line}");
    assert!(!line.contains("--phases") && !line.contains("--op"), "{line}");
}
