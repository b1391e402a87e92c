//! `tachylog`: reads binary logs (what a file sink with `Format::Binary` writes) back.
//!
//! `tachylog cat FILE...` prints the records as the text file sink would have written them,
//! byte for byte with the default pattern (or `--pattern`), or as JSON or logfmt lines;
//! filters by level, target, time and text; `--merge` interleaves several files by time,
//! holding one record per file; `--follow` reads one file as it grows, across rotations.
//! `tachylog stats FILE...` counts. `tachylog recover DIR --file PATH` writes what processes
//! that died left in a spool directory (`Builder::spool`) into the files it names. Reading
//! large files at a terminal shows how far it has come on standard error. Exit status: 0 when
//! every byte was read, 1 when damage was found (each stretch reported on standard error with
//! its byte offset; the records around it are still printed), 2 on a usage or I/O error.

mod cat;
mod filter;
mod progress;
#[cfg(unix)]
mod recover;
mod stats;
mod time;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "tachylog", version, about = "Reads tachylog binary logs back")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Prints the records of binary logs as lines.
    Cat(cat::CatArgs),
    /// Counts the records of binary logs: by level, time span, bytes per record, damage.
    Stats {
        /// Binary log files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Writes what dead processes left in a spool directory (`Builder::spool`) into the files
    /// named here, as their next start would write them into theirs.
    #[cfg(unix)]
    Recover(recover::RecoverArgs),
}

/// The line format of `cat`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum LineFormat {
    /// The text line of `--pattern`.
    Text,
    /// JSON lines.
    Json,
    /// logfmt lines.
    Logfmt,
}

/// How a command ended.
enum Outcome {
    /// Everything was read.
    Clean,
    /// Damage was found and reported.
    Damaged,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Cat(args) => cat::run(args),
        Command::Stats { files } => stats::run(&files),
        #[cfg(unix)]
        Command::Recover(args) => recover::run(args),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Damaged) => ExitCode::from(1),
        Err(message) => {
            eprintln!("tachylog: {message}");
            ExitCode::from(2)
        }
    }
}
