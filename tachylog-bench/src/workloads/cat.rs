//! `cat_binary`: the reading side of the binary log. The log of `throughput_binary` is written
//! first (untimed), then read and turned into the default pattern's text lines the way
//! `tachylog cat` does it: `tachylog::read::lines_in_parallel` over the file, one decoding
//! thread per core, each with its own `Renderer::text`, a block's lines written out at a time.
//! The output goes to `io::sink()`, so the figure is decoding and rendering, not a terminal or
//! a pipe.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::seed::throughput_lines;
use super::Scale;
use crate::error::BenchError;
use crate::machine::process_cpu_s;
use crate::report::{group_digits, Throughput};

/// One line for the report header.
pub fn describe(scale: Scale) -> String {
    format!(
        "cat_binary: the binary log of `throughput_binary` ({} records), written untimed, then \
         read back and rendered to default-pattern text lines as `tachylog cat` does \
         (`tachylog::read::lines_in_parallel`, a decoding thread per core), output discarded; \
         records/s = records / read-and-render time; tachylog only",
        group_digits(throughput_lines(scale))
    )
}

/// A decoding thread's renderer, with the records it rendered: added to `total` when the
/// thread is done, so that the threads share no counter while they work.
struct Counted<'a> {
    renderer: tachylog::read::Renderer,
    records: u64,
    total: &'a AtomicU64,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.total.fetch_add(self.records, Ordering::Relaxed);
    }
}

/// Reads and renders `file`; the time is the whole read, the file's opening included.
pub fn run(file: &Path) -> Result<Throughput, BenchError> {
    let io_err =
        |e: tachylog::read::ReadError| BenchError::io(file, std::io::Error::other(e.to_string()));
    let zone = tachylog::TimeZone::system()
        .map_err(|e| BenchError::io(file, std::io::Error::other(e.to_string())))?;
    let cpu0 = process_cpu_s();
    let start = Instant::now();
    let mut reader = tachylog::read::Reader::open(file).map_err(io_err)?;
    let threads = std::thread::available_parallelism().unwrap_or(std::num::NonZeroUsize::MIN);
    let records = AtomicU64::new(0);
    let make_line = || {
        let mut counted = Counted {
            renderer: tachylog::read::Renderer::text(tachylog::Pattern::default(), zone.clone()),
            records: 0,
            total: &records,
        };
        move |record: &tachylog::read::Record, out: &mut Vec<u8>| {
            counted.renderer.render(record, out);
            counted.records += 1;
        }
    };
    let mut out = std::io::sink();
    let mut damage = None;
    tachylog::read::lines_in_parallel(&mut reader, threads, make_line, |block| {
        damage = damage.take().or(block.damage);
        out.write_all(block.lines)
    })
    .map_err(|e| BenchError::io(file, e))?;
    let lines = records.load(Ordering::Relaxed);
    if let Some(damage) = damage {
        return Err(io_err(damage));
    }
    let total_s = start.elapsed().as_secs_f64();
    Ok(Throughput {
        lines,
        loop_s: total_s,
        total_s,
        cpu_s: Some(process_cpu_s() - cpu0),
    })
}
