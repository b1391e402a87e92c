//! tachylog-bench: per-call latency and whole-run throughput of tachylog, two std baselines
//! and its peers, under one harness.
//!
//! `cargo run --release -p tachylog-bench [-- --only NAME --full]`. The parent process runs
//! every (logger, workload) in a child process of its own (loggers install global state),
//! counts the lines each left on disk — a missing line fails the suite — and prints a
//! Markdown report, also saved as JSON under `target/bench-report/`.
//!
//! Layout: `loggers/` one file per logger behind the `BenchLogger` trait; `workloads/` what
//! the child does; `clock` and `stats` the latency harness; `parent`, `child`, `verify` the
//! process plumbing; `report` the tables and JSON.

use std::process::ExitCode;

mod baseline;
mod build_info;
mod child;
mod civil_time;
mod cli;
mod clock;
mod error;
mod loggers;
mod machine;
mod parent;
mod report;
mod stats;
mod verify;
mod workloads;

use cli::Command;
use workloads::{Scale, Workload};

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let command = match cli::parse(argv.get(1..).unwrap_or_default()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tachylog-bench: {e}");
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => {
            println!("{}", cli::USAGE);
            ExitCode::SUCCESS
        }
        Command::List => {
            println!("loggers:");
            for e in loggers::ALL {
                println!("  {:<18} {}", e.name, e.config);
            }
            println!("workloads (quick scale):");
            for w in Workload::all() {
                println!("  {:<26} {}", w.name(), w.describe(Scale::Quick));
            }
            ExitCode::SUCCESS
        }
        Command::Child(child) => match child::run(&child) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!(
                    "tachylog-bench child ({} {}): {e}",
                    child.logger.name,
                    child.workload.name()
                );
                ExitCode::FAILURE
            }
        },
        Command::Suite(suite) => match parent::run(&suite, &argv) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(e) => {
                eprintln!("tachylog-bench: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
