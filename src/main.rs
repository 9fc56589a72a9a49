//! The `iosurvey` binary: everything is in the library; this only sets the exit code.
// As in the library: a function over clippy.toml's too-many-lines-threshold fails CI.
#![warn(clippy::too_many_lines)]

mod cli;

fn main() {
    std::process::exit(cli::main());
}
