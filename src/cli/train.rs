//! `iosurvey train` and `iosurvey checkpoint`: the studies of `iosurvey::study::train`,
//! played through the library as every study is; this says their figures
//! (`iosurvey::report::train`).

use super::Cli;
use iosurvey::report::train;
use iosurvey::study::Outcome;

/// `train`'s lines for what it stored.
pub(super) fn trained(cli: &Cli, played: &Outcome) {
    for line in played.records.iter().filter(|_| !cli.quiet).filter_map(train::trained) {
        outln!("{line}");
    }
    // The answer of --find-max: said even with -q, as it is what was asked.
    for note in &played.notes {
        outln!("{note}");
    }
}

/// `checkpoint`'s line for what it stored.
pub(super) fn checkpointed(cli: &Cli, played: &Outcome) {
    for r in played.records.iter().filter(|r| !cli.quiet && r.error.is_none()) {
        outln!("{}", train::checkpointed(r));
        for w in &r.warnings {
            say!("iosurvey: warning: {w}");
        }
    }
}
