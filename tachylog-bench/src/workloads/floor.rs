//! `floor` and `floor_like_spdlog`: what writing tachylog's bytes costs with no logging at all.
//!
//! The child first lets tachylog write `throughput`'s records (default pattern, or the
//! spdlog-like one) into a scratch file, untimed, reads those bytes into memory and deletes
//! the scratch file. Then, timed: one thread opens the run's file as tachylog's file sink does
//! (`O_APPEND | O_CREAT`, mode 0640) and writes the bytes in the batches tachylog's sink
//! writes (whole lines, up to [`BATCH`] bytes, one `write_all` each), then closes it. No
//! formatting, no queue, no copy into a buffer: nothing a logger could skip. The report sets
//! tachylog's end-to-end `throughput` against it as a percentage.

use std::fs::OpenOptions;
use std::io::Write;
use std::ops::Range;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

use super::{seed, Scale};
use crate::error::BenchError;
use crate::loggers::{BenchLogger, Tachylog, SPDLOG_LIKE_PATTERN};
use crate::machine::process_cpu_s;
use crate::report::{group_digits, Throughput};

/// Bytes of whole lines per `write`: tachylog's file sink's batch (`BATCH` in
/// `tachylog/src/sink/append.rs`, private there, so repeated here).
pub const BATCH: usize = 1024 * 1024;

/// Name of the scratch file tachylog writes the lines into (deleted before the timed write,
/// so the parent counts only the run's own file).
const SOURCE: &str = "floor-source.tmp";

/// One line for the report header.
pub fn describe(name: &str, like_spdlog: bool, scale: Scale) -> String {
    format!(
        "{name}: the floor under {}: its {} lines, formatted beforehand by tachylog, written by \
         one thread in whole-line batches of up to {} KiB (tachylog's file-sink batch), \
         O_APPEND; time = open to close",
        if like_spdlog {
            "`throughput_like_spdlog`"
        } else {
            "`throughput`"
        },
        group_digits(seed::throughput_lines(scale)),
        BATCH / 1024
    )
}

/// Cuts `bytes` into runs of whole lines of at most [`BATCH`] bytes (a longer line alone).
fn batches(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(bytes.len() / BATCH + 1);
    let mut start = 0;
    while start < bytes.len() {
        let window_end = (start + BATCH).min(bytes.len());
        let end = if window_end == bytes.len() {
            window_end
        } else {
            match memchr::memrchr(b'\n', &bytes[start..window_end]) {
                Some(i) => start + i + 1,
                // One line longer than a batch: written on its own, as tachylog does.
                None => memchr::memchr(b'\n', &bytes[window_end..])
                    .map_or(bytes.len(), |i| window_end + i + 1),
            }
        };
        out.push(start..end);
        start = end;
    }
    out
}

/// Runs the workload in this (child) process.
pub fn run(file: &Path, like_spdlog: bool, scale: Scale) -> Result<Throughput, BenchError> {
    let n = seed::throughput_lines(scale);
    let source = file.with_file_name(SOURCE);
    let logger = if like_spdlog {
        Tachylog::with_pattern(&source, SPDLOG_LIKE_PATTERN)?
    } else {
        Tachylog::init(&source)?
    };
    for i in 0..n {
        seed::iterate(&logger, i);
    }
    logger.finish()?;
    let bytes = std::fs::read(&source).map_err(|e| BenchError::io(&source, e))?;
    std::fs::remove_file(&source).map_err(|e| BenchError::io(&source, e))?;
    let batches = batches(&bytes);

    let cpu0 = process_cpu_s();
    let start = Instant::now();
    let mut out = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o640)
        .open(file)
        .map_err(|e| BenchError::io(file, e))?;
    for batch in batches {
        out.write_all(&bytes[batch])
            .map_err(|e| BenchError::io(file, e))?;
    }
    drop(out);
    let total_s = start.elapsed().as_secs_f64();
    Ok(Throughput {
        lines: n,
        loop_s: total_s,
        total_s,
        cpu_s: Some(process_cpu_s() - cpu0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_whole_lines_within_the_limit() {
        let line = [b'x'; 99].iter().chain(b"\n").copied().collect::<Vec<u8>>();
        // Three batches' worth of 100-byte lines.
        let mut bytes: Vec<u8> = line.repeat(3 * BATCH / 100);
        // One line longer than a batch, then a short tail.
        bytes.extend(std::iter::repeat_n(b'y', BATCH + 10));
        bytes.extend(b"\nlast\n");
        let b = batches(&bytes);
        assert_eq!(b.first().map(|r| r.start), Some(0));
        assert_eq!(b.last().map(|r| r.end), Some(bytes.len()));
        for pair in b.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
        for r in &b {
            assert_eq!(bytes[r.end - 1], b'\n', "{r:?} ends mid-line");
        }
        assert!(b.iter().filter(|r| r.len() > BATCH).count() == 1);
        assert_eq!(b[0].len(), BATCH / 100 * 100);
    }
}
