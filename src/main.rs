//! The `iosurvey` binary: everything is in the library; this only sets the exit code.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
