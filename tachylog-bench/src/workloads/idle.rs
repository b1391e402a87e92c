//! `idle_cpu`: the CPU a logger burns when nothing is logged. The child installs the logger,
//! logs one record, lets it settle for 0.5 s, then measures its own process CPU time (user +
//! system, all threads, from `getrusage`) over 5 s of sleep. A back end that polls shows up
//! here; one that sleeps when idle costs ~0.

use std::path::Path;
use std::time::{Duration, Instant};

use super::Scale;
use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::machine::process_cpu_s;
use crate::report::Idle;

/// The settling time and the measured window (tiny in the smoke test).
fn windows(scale: Scale) -> (Duration, Duration) {
    match scale {
        Scale::Smoke => (Duration::from_millis(20), Duration::from_millis(100)),
        Scale::Quick | Scale::Full => (Duration::from_millis(500), Duration::from_secs(5)),
    }
}

/// One line for the report header.
pub fn describe() -> String {
    "idle_cpu: 1 record, 0.5 s settle, then process CPU time (user+sys, getrusage) over 5 s \
     with no records"
        .to_string()
}

/// Runs the workload in this (child) process.
pub fn run<L: BenchLogger>(file: &Path, scale: Scale) -> Result<Idle, BenchError> {
    let (settle, window) = windows(scale);
    let logger = L::init(file)?;
    logger.hello_world();
    std::thread::sleep(settle);
    let cpu0 = process_cpu_s();
    let t0 = Instant::now();
    std::thread::sleep(window);
    let cpu_s = process_cpu_s() - cpu0;
    let wall_s = t0.elapsed().as_secs_f64();
    logger.finish()?;
    Ok(Idle { cpu_s, wall_s })
}
