//! `cat_binary`: the reading side of the binary log. The log of `throughput_binary` is written
//! first (untimed), then read and turned into the default pattern's text lines the way
//! `tachylog cat` does it: `tachylog::read::Reader` over a buffered file, each record's
//! `Renderer::text` line rendered at the end of a 1 MiB output buffer, written out when full. The
//! output goes to `io::sink()`, so the figure is decoding and rendering, not a terminal or a
//! pipe.

use std::io::Write;
use std::path::Path;
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
         (`tachylog::read`), output discarded; records/s = records / read-and-render time; \
         tachylog only",
        group_digits(throughput_lines(scale))
    )
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
    let mut renderer = tachylog::read::Renderer::text(tachylog::Pattern::default(), zone);
    const OUTPUT_BUFFER: usize = 1 << 20;
    let mut out = std::io::sink();
    let mut pending = Vec::with_capacity(OUTPUT_BUFFER + 4096);
    let mut lines = 0u64;
    while let Some(record) = reader.next_record() {
        let record = record.map_err(io_err)?;
        renderer.render(record, &mut pending);
        if pending.len() >= OUTPUT_BUFFER {
            out.write_all(&pending)
                .map_err(|e| BenchError::io(file, e))?;
            pending.clear();
        }
        lines += 1;
    }
    out.write_all(&pending)
        .map_err(|e| BenchError::io(file, e))?;
    let total_s = start.elapsed().as_secs_f64();
    Ok(Throughput {
        lines,
        loop_s: total_s,
        total_s,
        cpu_s: Some(process_cpu_s() - cpu0),
    })
}
