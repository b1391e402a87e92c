//! `seed_1m`: the seed project's benchmark. One thread logs 1,000,000 × `info!("Hello World!")`
//! to a file as fast as it can; we report the time spent in that loop (what the caller
//! sees) and the total until the logger's shutdown returns with every line written (what the
//! system pays). The logger is installed before the clock starts; its shutdown is inside.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::report::{group_digits, Throughput};

/// Lines logged, at every scale (the name says 1m; the anchors are for 1M).
pub const LINES: u64 = 1_000_000;

/// One line for the report header.
pub fn describe() -> String {
    format!(
        "seed_1m: {} x info!(\"Hello World!\") from one thread; total = until the logger's \
         guard drop / final flush returns",
        group_digits(LINES)
    )
}

/// Runs the workload in this (child) process.
pub fn run<L: BenchLogger>(file: &Path) -> Result<Throughput, BenchError> {
    let mut logger = L::init(file)?;
    let start = Instant::now();
    for i in 0..LINES {
        // Keeps the loop a loop: the count is opaque, so no logger's call can be hoisted.
        black_box(i);
        logger.hello_world();
    }
    let loop_s = start.elapsed().as_secs_f64();
    logger.finish()?;
    let total_s = start.elapsed().as_secs_f64();
    Ok(Throughput {
        lines: LINES,
        loop_s,
        total_s,
    })
}
