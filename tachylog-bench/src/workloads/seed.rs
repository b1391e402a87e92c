//! Whole-run workloads: N threads each log a fixed number of records as fast as they can,
//! and we report the time the calling threads spent in their loops (what the caller sees)
//! and the total until the logger's shutdown returns with every line written (what the
//! system pays). The logger is installed before the clock starts; its shutdown is inside.
//!
//! `seed_1m` (1,000,000 × `"Hello World!"`), `seed_2x100k` (2 threads × 100,000 ×
//! `"{}", "1 logged"`), `throughput` (`"Iteration: {} int: {} double: {}"`, 4M records
//! in the full suite, 1M in the quick one), `throughput_like_spdlog` (the same with tachylog's
//! line cut to spdlog-rs's content) and `scaling_t1`..`scaling_t8` (1, 2, 4 or 8 threads × 1M
//! `Iteration` records) all run here. Each also reports the process's CPU time (user + system,
//! every thread) over the same span, so records per CPU-second can be set beside records/s.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use super::Scale;
use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::machine::process_cpu_s;
use crate::report::{group_digits, Throughput};

/// Lines of `seed_1m`, at every scale (the anchors are for 1M).
pub const SEED_LINES: u64 = 1_000_000;

/// Lines per thread of `seed_2x100k`.
pub const TWO_THREAD_LINES: u64 = 100_000;

/// Records of `throughput`: 4M in the full suite, long enough that start-up and shutdown are a
/// small part of the time; 1M in the quick one, to keep it to minutes.
pub fn throughput_lines(scale: Scale) -> u64 {
    match scale {
        Scale::Quick => 1_000_000,
        Scale::Full => 4_000_000,
        Scale::Smoke => 1_000,
    }
}

/// Records per thread of `scaling_t*` (`scaling_t2` is "2 threads × 1M"); a thousandth in smoke.
pub const SCALING_LINES: u64 = 1_000_000;

/// Record 1 of `throughput` as std renders it.
pub fn iteration_probe() -> String {
    format!("Iteration: {} int: {} double: {}", 1, 2, 0.5)
}

/// One line for the report header.
pub fn describe_seed() -> String {
    format!(
        "seed_1m: {} x info!(\"Hello World!\") from one thread; total = until the logger's \
         guard drop / final flush returns",
        group_digits(SEED_LINES)
    )
}

/// One line for the report header.
pub fn describe_two_threads() -> String {
    format!(
        "seed_2x100k: 2 threads x {} x info!(\"{{}}\", \"1 logged\") to one file; loop = the \
         slower thread's loop",
        group_digits(TWO_THREAD_LINES)
    )
}

/// One line for the report header.
pub fn describe_throughput(scale: Scale) -> String {
    format!(
        "throughput: {} x info!(\"Iteration: {{}} int: {{}} double: {{}}\", u64, i64, f64) \
         from one thread; records/s = records / time until shutdown returns",
        group_digits(throughput_lines(scale))
    )
}

/// One line for the report header.
pub fn describe_throughput_like_spdlog(scale: Scale) -> String {
    format!(
        "throughput_like_spdlog: `throughput` ({} records) with tachylog's pattern `{}`: the \
         content of spdlog-rs's default line (date-time, level, message); tachylog only, the \
         peers' rows are their `throughput` rows (their lines do not change)",
        group_digits(throughput_lines(scale)),
        crate::loggers::SPDLOG_LIKE_PATTERN
    )
}

/// One line for the report header.
pub fn describe_throughput_binary(scale: Scale) -> String {
    format!(
        "throughput_binary: `throughput` ({} records) into a binary log (`Format::Binary`): \
         the same calls and ring, no text formatting on the back end; tachylog only; the run \
         is checked by reading the log back as text lines (`tachylog::read`)",
        group_digits(throughput_lines(scale))
    )
}

/// One line for the report header.
pub fn describe_scaling(threads: u8) -> String {
    format!(
        "scaling_t{threads}: {threads} thread(s) x {} x info!(\"Iteration: {{}} int: {{}} \
         double: {{}}\", u64, i64, f64) to one file; records/s = all records / time until \
         shutdown returns; CPU s = the process's user + system time over that span",
        group_digits(SCALING_LINES)
    )
}

/// One line for the report header.
pub fn describe_scaling_binary() -> String {
    format!(
        "scaling_t2_binary: `scaling_t2` (2 threads x {} records) into a binary log \
         (`Format::Binary`); tachylog only, beside its `scaling_t2` row",
        group_digits(SCALING_LINES)
    )
}

/// Installs `L` writing to `file` and runs [`run_with`].
pub fn run<L: BenchLogger>(
    file: &Path,
    threads: u8,
    per_thread: u64,
    call: impl Fn(&L, u64) + Sync,
) -> Result<Throughput, BenchError> {
    run_with(L::init(file)?, threads, per_thread, call)
}

/// The `throughput` record for loop index `i`: `iteration(i, 2i, i / 2)`.
pub fn iterate<L: BenchLogger>(logger: &L, i: u64) {
    logger.iteration(i, i as i64 * 2, i as f64 / 2.0)
}

/// Runs `threads` threads, each calling `call(logger, i)` for `i` in `0..per_thread`, then
/// shuts `logger` down; returns the slowest thread's loop time, the total until `finish`
/// returned and the process CPU time over the same span.
pub fn run_with<L: BenchLogger>(
    logger: L,
    threads: u8,
    per_thread: u64,
    call: impl Fn(&L, u64) + Sync,
) -> Result<Throughput, BenchError> {
    let cpu0 = process_cpu_s();
    let start = Instant::now();
    let loop_s = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    for i in 0..per_thread {
                        // The count is opaque, so no logger's call can be hoisted.
                        call(&logger, black_box(i));
                    }
                    start.elapsed().as_secs_f64()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or(f64::NAN))
            .fold(0.0, f64::max)
    });
    logger.finish()?;
    let total_s = start.elapsed().as_secs_f64();
    Ok(Throughput {
        lines: u64::from(threads) * per_thread,
        loop_s,
        total_s,
        cpu_s: Some(process_cpu_s() - cpu0),
    })
}
