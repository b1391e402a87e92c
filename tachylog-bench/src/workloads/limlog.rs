//! The limlog matrix: records of ~80 B, ~1 KiB and ~4 KiB (a bool, a char, two integers, a
//! float and a string of 16, 1,000 or 4,000 bytes) from 1, 2 or 4 threads, 100,000 records
//! per thread; the figure is µs per record (total time / all records), as limlog reports it.

use std::path::Path;

use super::seed;
use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::report::Throughput;

/// Records per thread.
pub const RECORDS: u64 = 100_000;

/// The string argument of `size` bytes.
fn text(size: usize) -> String {
    "abcdefghijklmnopqrstuvwxyz0123456789"
        .chars()
        .cycle()
        .take(size)
        .collect()
}

/// The record every thread logs as std renders it (the same arguments each time, as limlog).
pub fn probe(size: usize) -> String {
    format!(
        "limlog b={} c={} i={} u={} f={} s={}",
        true,
        'x',
        -42,
        1_234_567_890_u64,
        3.25,
        text(size)
    )
}

/// One line for the report header.
pub fn describe(name: &str, size: usize, threads: u8) -> String {
    format!(
        "{name}: {threads} thread(s) x {RECORDS} (full and quick) x info!(\"limlog b={{}} c={{}} i={{}} u={{}} \
         f={{}} s={{}}\") with a {size}-byte string; us/record = total / records"
    )
}

/// Runs one cell of the matrix in this (child) process.
pub fn run<L: BenchLogger>(
    file: &Path,
    size: usize,
    threads: u8,
    records: u64,
) -> Result<Throughput, BenchError> {
    let s = text(size);
    seed::run::<L>(file, threads, records, |l, _| {
        l.mixed(true, 'x', -42, 1_234_567_890, 3.25, &s)
    })
}
