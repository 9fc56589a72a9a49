//! The reader's refusals: each at its line, naming its key, with what to write.

use super::*;

const CAMPAIGN: &str = "[campaign]\nname = \"t\"\n";
const HEAD: &str = "[campaign]\nname = \"t\"\n[[target]]\nlabel = \"a\"\ndir = \"/nonexistent-iosurvey/a\"\n";

/// The file reader, its targets not looked for: the refusals here are of the file's text.
fn read(text: &str) -> Result<Campaign, FileError> {
    parse_unmounted(Path::new("c.toml"), text)
}

/// The refusal of `text`: its line, and its line as said, hint included.
fn refused(text: &str) -> (Option<usize>, String) {
    let e = read(text).expect_err("refused");
    (e.line, format!("{e} (hint: {})", e.hint))
}

#[test]
fn a_key_the_studys_kind_does_not_take_is_refused_where_the_file_is_read() {
    let (line, said) =
        refused(&format!("{HEAD}[[study]]\nname = \"s\"\nkind = \"run\"\ntransfer = \"1m\"\ntranfer = \"1m\"\n"));
    assert_eq!(line, Some(10), "{said}");
    assert!(said.contains("study 's' (run): unknown key 'tranfer' (hint: did you mean 'transfer'?)"), "{said}");
    // Its kind decides: a run's key is no metadata study's; mdtest's letter is no key.
    let (_, said) = refused(&format!("{HEAD}[[study]]\nname = \"m\"\nkind = \"meta\"\ntransfer = \"1m\"\n"));
    assert!(said.contains("study 'm' (meta): unknown key 'transfer'"), "{said}");
    let (_, said) = refused(&format!("{HEAD}[[study]]\nname = \"m\"\nkind = \"meta\"\nC = true\n"));
    assert!(said.contains("unknown key 'C'"), "{said}");
    // A flag's alias, a flag with only a letter by its name, and what the campaign sets
    // itself (refused when the points are made, with its reason) are keys.
    let c = read(&format!(
        "{HEAD}[[study]]\nname = \"r\"\nkind = \"run\"\nsize = \"1m\"\n[[study]]\nname = \"m\"\nkind = \"meta\"\ncreate-only = true\ndir = \"/x\"\n"
    ))
    .unwrap();
    assert_eq!(c.studies[0].settings[0].key, "size");
    assert_eq!(c.studies[1].settings.iter().map(|s| s.key.as_str()).collect::<Vec<_>>(), ["create-only", "dir"]);
}

#[test]
fn a_sweep_that_names_a_count_twice_is_refused_where_the_file_is_read() {
    let (line, said) = refused(&format!("{HEAD}[[study]]\nname = \"s\"\nkind = \"run\"\nclients = \"2,2,1\"\n"));
    assert_eq!(line, Some(9), "{said}");
    assert!(said.contains("study 's': clients names 2 twice"), "{said}");
    let (_, said) = refused(&format!("{HEAD}[[study]]\nname = \"k\"\nkind = \"checkpoint\"\nranks = \"1..x\"\n"));
    assert!(said.contains("study 'k': ranks: "), "{said}");
}

#[test]
fn every_table_refuses_a_key_it_does_not_have_at_its_line_with_the_nearest() {
    let study = "[[study]]\nname = \"s\"\nkind = \"run\"\n";
    let cases = [
        (
            format!("{HEAD}{study}[cache]\ndrop_cache = true\n"),
            10,
            "[cache]: unknown key 'drop_cache' (hint: did you mean 'drop-caches'?)",
        ),
        (
            format!("{HEAD}{study}[cach]\ndirect = true\n"),
            9,
            "the file: unknown key 'cach' (hint: did you mean 'cache'?)",
        ),
        (
            format!("{HEAD}{study}[hooks]\nbefore-run = {{ comand = \"sync\" }}\n"),
            10,
            "[hooks] before-run: unknown key 'comand' (hint: did you mean 'command'?)",
        ),
        (format!("{HEAD}foo = 1\n{study}"), 6, "[[target]]: unknown key 'foo'"),
        (
            format!(
                "{HEAD}{study}[[event]]\nstudy = \"s\"\nat = \"1s\"\ncommand = \"true\"\ntarget = \"a\"\nclient = 2\n"
            ),
            14,
            "did you mean 'clients'?",
        ),
    ];
    for (text, at, needle) in cases {
        let (line, said) = refused(&text);
        assert_eq!(line, Some(at), "{said}");
        assert!(said.contains(needle), "'{needle}' missing from: {said}");
    }
}

#[test]
fn a_value_of_the_wrong_form_is_said_by_what_the_file_holds_there() {
    let study = "[[study]]\nname = \"s\"\nkind = \"run\"\n";
    let cases = [
        (format!("{CAMPAIGN}[target]\nlabel = \"b\"\n{study}"), "[[target]] must be written as [[target]]"),
        (format!("hooks = 5\n{HEAD}{study}"), "[hooks] is not a table"),
        (format!("{CAMPAIGN}seed = 1979-05-27\n{}{study}", &HEAD[CAMPAIGN.len()..]), "[campaign] seed is a date"),
        (
            format!("{CAMPAIGN}seed = 99999999999999999999\n{}{study}", &HEAD[CAMPAIGN.len()..]),
            "[campaign] seed 99999999999999999999 is not a whole number",
        ),
        (format!("{HEAD}{study}block = {{ n = 1 }}\n"), "[[study]] block is a table"),
        (
            format!("{HEAD}{study}[cache]\ndrop-caches = true\ndrop_caches = false\n"),
            "[cache] drop-caches is given twice (as '-' and '_')",
        ),
    ];
    for (text, needle) in cases {
        let (line, said) = refused(&text);
        assert!(line.is_some(), "no line: {said}");
        assert!(said.contains(needle), "'{needle}' missing from: {said}");
    }
}

#[test]
fn every_example_campaign_reads_and_plans() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/campaigns");
    let mut read_some = 0;
    for entry in std::fs::read_dir(examples).unwrap() {
        let path = entry.unwrap().path();
        let c = parse_unmounted(&path, &std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
        let points = crate::campaign::points::points(&c, &crate::team::local::LocalTeam, None);
        assert!(points.is_ok_and(|p| !p.is_empty()), "{}", path.display());
        read_some += 1;
    }
    assert!(read_some >= 4);
}

#[test]
fn a_stored_campaign_skips_the_keys_this_version_does_not_read_and_names_each_once() {
    // As an older iosurvey could have stored it: a key at the top, in [campaign], in every
    // [[target]], in a hook's table and in a study, none of which this version reads.
    let text = "colour = \"blue\"\n[campaign]\nname = \"t\"\nowner = \"ops\"\n\
        [[target]]\nlabel = \"a\"\ndir = \"/nonexistent-iosurvey/a\"\nrack = 1\n\
        [[target]]\nlabel = \"b\"\ndir = \"/nonexistent-iosurvey/b\"\nrack = 2\n\
        [hooks]\nbefore-run = { command = \"sync\", shell = \"sh\" }\n\
        [[study]]\nname = \"s\"\nkind = \"run\"\ntransfer = \"1m\"\nold_key = \"x\"\n";
    let stored = parse_stored(Path::new("c.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        stored.skipped,
        ["'colour'", "[campaign] 'owner'", "[[target]] 'rack'", "[hooks] before-run 'shell'", "study 's' 'old-key'"]
    );
    // Everything else is read as the file reader reads it.
    let c = &stored.campaign;
    assert_eq!((c.name.as_str(), c.targets.len(), c.text.as_str()), ("t", 2, text));
    assert_eq!(c.studies[0].settings.iter().map(|s| s.key.as_str()).collect::<Vec<_>>(), ["transfer"]);
    assert_eq!(c.hooks.before_run.as_ref().map(|h| h.command.as_str()), Some("sync"));
    let said = stored.warning("c3").expect("a warning");
    assert!(said.starts_with("campaign c3 ('t') as stored has keys this iosurvey does not read"), "{said}");
    assert!(said.contains("'colour', [campaign] 'owner', [[target]] 'rack'") && !said.contains('\n'), "{said}");
    // A file given by the user is refused at one such key, in one line.
    let (line, said) = refused(text);
    assert_eq!(line, Some(4), "{said}");
    assert!(said.contains("[campaign]: unknown key 'owner'"), "{said}");
    // A store whose campaign skips nothing says nothing.
    let whole = parse_stored(Path::new("c.toml"), &format!("{HEAD}[[study]]\nname = \"s\"\nkind = \"run\"\n")).unwrap();
    assert!(whole.skipped.is_empty() && whole.warning("c1").is_none());
}

#[test]
fn a_stored_campaign_is_still_refused_for_what_is_not_an_unknown_key() {
    // A kind this version does not have, or a value it cannot take, is no key to skip.
    let stored = |study: &str| parse_stored(Path::new("c.toml"), &format!("{HEAD}[[study]]\nname = \"s\"\n{study}"));
    let e = stored("kind = \"fly\"\n").map(|_| ()).unwrap_err();
    assert!(e.what.contains("[[study]] kind 'fly'"), "{e}");
    let e = stored("kind = \"run\"\nclients = \"2,2\"\n").map(|_| ()).unwrap_err();
    assert!(e.what.contains("clients names 2 twice"), "{e}");
}
