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

/// A campaign file of `studies` over targets a, b and c (directories made under `tmp`).
fn three_targets(tmp: &Path, name: &str, studies: &str) -> campaign::Campaign {
    let mut text = format!("[campaign]\nname = \"{name}\"\norder = \"sequential\"\n");
    for label in ["a", "b", "c"] {
        let dir = tmp.join(label);
        fs::create_dir_all(&dir).unwrap();
        text += &format!("[[target]]\nlabel = \"{label}\"\ndir = \"{}\"\n", dir.display());
    }
    campaign::parse(&tmp.join("c.toml"), &(text + studies)).expect("the file reads")
}

fn run_all(c: &campaign::Campaign, db: &Path) -> Result<iosurvey::campaign::runner::Ran, Error> {
    let mut observer = Unheard;
    runner(c, db).run(&LocalTeam, &mut Plays { team: &LocalTeam, observer: &mut observer }, &mut Deaf)
}

/// Run again, the campaign finds its `stored` points in the store and runs none.
fn nothing_left(c: &campaign::Campaign, db: &Path, stored: usize) {
    let again = run_all(c, db).expect("nothing to run");
    assert_eq!((again.campaign, again.ok, again.skipped), (None, 0, stored));
}

#[test]
fn a_targets_study_is_one_point_over_all_its_targets_filed_as_a_target_survey_and_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    let c = three_targets(
        tmp.path(),
        "survey-of-luns",
        "[[study]]\nname = \"all-luns\"\nkind = \"targets\"\nop = \"write\"\ntransfer = \"64k\"\nsize = \"256k\"\nstreams = 1\nrepetitions = 1\n",
    );
    let db = tmp.path().join("store.db");
    let first = runner(&c, &db);
    assert_eq!(first.points.len(), 1, "one point for all the study's targets");
    let p = &first.points[0];
    let Study::Targets(a) = &*p.play else { panic!("a targets study plays a target survey: {:?}", p.play) };
    assert_eq!(a.count().unwrap(), 3);
    assert!(p.argv.join(" ").contains(&format!("--dir {}@", tmp.path().join("a").display())), "{:?}", p.argv);
    let ran = run_all(&c, &db).expect("the survey runs");
    assert_eq!((ran.ok, ran.failed), (1, 0));
    let store = iosurvey::store::Store::open_existing(&db).unwrap();
    let groups = store.campaign_groups("survey-of-luns").unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0].0.kind, iosurvey::record::GroupKind::Targets, "filed as a target survey");
    // 3 targets alone, then 1, 2 and 3 at once.
    assert_eq!(store.group_runs(groups[0].0).unwrap().len(), 6);
    nothing_left(&c, &db, 1);
}

#[test]
fn a_train_study_sweeps_accelerators_a_point_each_and_a_rehearsal_divides_its_data_set() {
    let tmp = tempfile::tempdir().unwrap();
    let c = three_targets(
        tmp.path(),
        "feeds",
        "[[study]]\nname = \"unet\"\nkind = \"train\"\ntargets = [\"a\"]\nworkload = \"unet3d\"\ngenerate = true\n\
         files = 12\nsample-bytes = \"20000\"\nsample-stdev = \"3000\"\nbatch = 2\ncompute = 0.001\naccelerators = [1, 2]\n",
    );
    let db = tmp.path().join("store.db");
    let first = runner(&c, &db);
    let counts: Vec<usize> = first
        .points
        .iter()
        .map(|p| match &*p.play {
            Study::Train(a) => a.accelerators,
            other => panic!("a train study plays train: {other:?}"),
        })
        .collect();
    assert_eq!(counts, [1, 2], "a point per accelerator count");
    assert_eq!(first.points.iter().map(|p| p.swept).collect::<Vec<_>>(), [Some(1), Some(2)]);
    assert!(first.points.iter().all(|p| p.clients.is_none()), "accelerators are no clients of a launch");
    assert_ne!(first.points[0].key, first.points[1].key, "each count its own point");
    let ran = run_all(&c, &db).expect("the training runs");
    assert_eq!((ran.ok, ran.failed), (2, 0));
    let store = iosurvey::store::Store::open_existing(&db).unwrap();
    let groups = store.campaign_groups("feeds").unwrap();
    assert_eq!(groups.len(), 2, "a group per point, the campaign's: {groups:?}");
    for ((g, _, state), n) in groups.iter().zip([1, 2]) {
        assert_eq!(state, "ok");
        let (ids, _) = store.point_made(*g).unwrap();
        let run = store.load(ids[0]).unwrap();
        assert_eq!(run.tool_params.get("train.accelerators").map(String::as_str), Some(n.to_string().as_str()));
        assert_eq!(run.label.as_deref(), Some("a"));
    }
    nothing_left(&c, &db, 2);
    // A rehearsal divides the data set the sizing rule asks for, and says so.
    let scaled = points::points(&c, &LocalTeam, Some(8)).unwrap();
    let rehearsal = runner(&c, &db).study_of(&scaled[0], Some(8));
    let Study::Train(a) = rehearsal else { panic!("train") };
    assert_eq!(a.scale, Some(8));
    assert!(scaled[0].what.contains("a rehearsal at 1/8 of the data set"), "{}", scaled[0].what);
    assert_ne!(scaled[0].key, first.points[0].key, "a rehearsal never stands for the full-size point");
    // A count the data set cannot feed is refused when the file is read, in the file's keys.
    let c = three_targets(
        tmp.path(),
        "starved",
        "[[study]]\nname = \"unet\"\nkind = \"train\"\ntargets = [\"a\"]\nworkload = \"unet3d\"\n\
         files = 12\nbatch = 2\ncompute = 0.001\naccelerators = [1, 8]\n",
    );
    let e = points::points(&c, &LocalTeam, None).expect_err("8 accelerators starve on 12 files");
    let line = e.to_string();
    assert!(line.contains("study 'unet' at 8 accelerators: "), "{line}");
    assert!(line.contains("'files'") && !line.contains("--files"), "{line}");
}

#[test]
fn a_net_study_measures_once_to_its_server_and_without_one_a_single_process_is_refused_the_point() {
    let tmp = tempfile::tempdir().unwrap();
    let alone =
        three_targets(tmp.path(), "ceiling", "[[study]]\nname = \"net\"\nkind = \"net\"\ntargets = [\"a\", \"b\"]\n");
    let planned = points::points(&alone, &LocalTeam, None).unwrap();
    assert_eq!(planned.len(), 1);
    let why = planned[0].refusal.as_deref().expect("one process has none to measure between");
    assert!(why.contains("2 processes") && why.contains("net --serve"), "{why}");

    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let server = iosurvey::net::serve::Server {
        bind: "127.0.0.1".parse().unwrap(),
        port: 0,
        once: true,
        max_clients: 8,
        limits: Default::default(),
    };
    let serving = std::thread::spawn(move || iosurvey::net::serve::serve(&server, |l| drop(tx.send(l.to_string()))));
    let first = rx.recv_timeout(std::time::Duration::from_secs(30)).expect("the server listens");
    let to = first.split("listening on ").nth(1).unwrap().split(';').next().unwrap().to_string();
    let c = three_targets(
        tmp.path(),
        "ceiling",
        &format!("[[study]]\nname = \"net\"\nkind = \"net\"\ntargets = [\"a\", \"b\"]\nto = \"{to}\"\nsize = \"4m\"\nstreams = 1\nrepetitions = 1\n"),
    );
    let db = tmp.path().join("store.db");
    let ran = run_all(&c, &db).expect("the network is measured");
    assert_eq!((ran.ok, ran.failed, ran.refused), (1, 0, 0));
    serving.join().unwrap().expect("the server served one session");
    let store = iosurvey::store::Store::open_existing(&db).unwrap();
    let groups = store.campaign_groups("ceiling").unwrap();
    let (_, net) = store.point_made(groups[0].0).unwrap();
    assert_eq!(net.len(), 1, "the figure is kept with its point");
    assert!(net[0].bandwidth.is_some_and(|b| b > 0.0));
    nothing_left(&c, &db, 1);
}

#[test]
fn every_points_study_is_what_its_words_mean_on_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let c = three_targets(
        tmp.path(),
        "every-kind",
        "[[study]]\nname = \"r\"\nkind = \"run\"\ntransfer = \"4k\"\nblock = \"8k\"\nclients = \"1,2\"\n\
         [[study]]\nname = \"m\"\nkind = \"meta\"\nitems = 20\n\
         [[study]]\nname = \"s\"\nkind = \"survey\"\nsize = \"64m\"\n\
         [[study]]\nname = \"x\"\nkind = \"matrix\"\nmax-file = \"1m\"\n\
         [[study]]\nname = \"t\"\nkind = \"targets\"\nsize = \"1m\"\n\
         [[study]]\nname = \"n\"\nkind = \"net\"\nto = \"127.0.0.1:9\"\n\
         [[study]]\nname = \"tr\"\nkind = \"train\"\nworkload = \"resnet50\"\naccelerators = \"1,2\"\n\
         [[study]]\nname = \"ck\"\nkind = \"checkpoint\"\nmodel = \"llama3-8b\"\nranks = [2, 4]\n",
    );
    let all = points::points(&c, &LocalTeam, None).expect("every kind reads");
    let kinds: std::collections::BTreeSet<&str> = all.iter().map(|p| p.argv[0].as_str()).collect();
    assert_eq!(kinds.len(), 8, "{kinds:?}");
    for p in &all {
        let (read, _) = iosurvey::study::line::parse(&p.argv).expect("the point's words read");
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::to_value(&*p.play).unwrap(),
            "{}",
            p.argv.join(" ")
        );
    }
}

/// Plays through the library and keeps the group each point's study says it filed.
struct KeepsGroups<'a> {
    inner: Plays<'a, LocalTeam>,
    groups: Vec<Option<iosurvey::record::GroupId>>,
}

impl Player for KeepsGroups<'_> {
    fn play(&mut self, study: &Study, ctx: &Context) -> Result<Outcome, Error> {
        let outcome = self.inner.play(study, ctx)?;
        self.groups.push(outcome.group);
        Ok(outcome)
    }
}

/// Training and checkpoint points file their own group in `study::play`, as a sweep or a
/// matrix does (the runner files none for them): the outcome names the group the store
/// holds for the point, with the runs the point stored, and a campaign run again skips them.
#[test]
fn train_and_checkpoint_points_file_their_own_group_when_they_play() {
    let tmp = tempfile::tempdir().unwrap();
    let c = three_targets(
        tmp.path(),
        "own-groups",
        "[[study]]\nname = \"unet\"\nkind = \"train\"\ntargets = [\"a\"]\nworkload = \"unet3d\"\ngenerate = true\n\
         files = 8\nsample-bytes = \"20000\"\nsample-stdev = \"0\"\nbatch = 2\ncompute = 0.001\naccelerators = [1]\n\
         [[study]]\nname = \"ck\"\nkind = \"checkpoint\"\ntargets = [\"b\"]\nmodel = \"llama3-8b\"\nscale = \"1/1000000\"\n\
         checkpoints = 1\nreads = 1\ncompute = 0\ntransfer = \"4k\"\nno-drop-caches = true\nranks = [2]\n",
    );
    let db = tmp.path().join("store.db");
    let mut observer = Unheard;
    let mut keeps = KeepsGroups { inner: Plays { team: &LocalTeam, observer: &mut observer }, groups: Vec::new() };
    let ran = runner(&c, &db).run(&LocalTeam, &mut keeps, &mut Deaf).expect("both points run");
    assert_eq!((ran.ok, ran.failed), (2, 0));
    let store = iosurvey::store::Store::open_existing(&db).unwrap();
    let stored: Vec<_> = store.campaign_groups("own-groups").unwrap().into_iter().map(|(g, ..)| g).collect();
    let said: Vec<_> = keeps.groups.iter().map(|g| g.expect("the study names its point's group")).collect();
    assert_eq!(said, stored, "one group per point, the one each study filed");
    for (g, name) in stored.iter().zip(["train", "checkpoint"]) {
        let (ids, _) = store.point_made(*g).unwrap();
        assert_eq!(ids.len(), 1, "{name}: its run kept in its group");
        assert!(store.load(ids[0]).unwrap().name.is_some_and(|n| n.starts_with(name)), "{name}");
    }
    nothing_left(&c, &db, 2);
}
