//! The floor: a bare `BufWriter<File>` (std's default 8 KiB buffer) written on the calling
//! thread, message text and `\n` only — no timestamp, level, lock or queue.
//!
//! No real logger can beat it on throughput; it shows how much of every other logger's time
//! is the logging rather than the bytes. Its per-call latency is a `memcpy` into the buffer
//! plus, every ~8 KiB, a `write(2)` on the calling thread: that tail is what async loggers
//! exist to remove.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::BenchLogger;
use crate::error::BenchError;

/// How this logger is configured, for the report.
pub const CONFIG: &str = "std BufWriter<File> (8 KiB), message text + newline, calling thread";

/// The open file and where it is, for error messages.
pub struct BufWriterFloor {
    out: BufWriter<File>,
    path: PathBuf,
}

impl BufWriterFloor {
    #[cold]
    #[inline(never)]
    fn failed(&self, e: std::io::Error) -> ! {
        panic!("bufwriter: writing {}: {e}", self.path.display())
    }
}

impl BenchLogger for BufWriterFloor {
    fn init(file: &Path) -> Result<Self, BenchError> {
        let f = File::create(file).map_err(|e| BenchError::io(file, e))?;
        Ok(BufWriterFloor {
            out: BufWriter::new(f),
            path: file.to_path_buf(),
        })
    }

    #[inline(always)]
    fn hello_world(&mut self) {
        if let Err(e) = self.out.write_all(b"Hello World!\n") {
            self.failed(e)
        }
    }

    #[inline(always)]
    fn request(&mut self, id: u64, ms: f64, path: &str) {
        if let Err(e) = writeln!(self.out, "request {} took {:.3} ms: {}", id, ms, path) {
            self.failed(e)
        }
    }

    #[inline(always)]
    fn static_message(&mut self) {
        if let Err(e) = self.out.write_all(b"static message with no arguments\n") {
            self.failed(e)
        }
    }

    fn finish(mut self) -> Result<(), BenchError> {
        self.out.flush().map_err(|e| BenchError::io(&self.path, e))
    }
}
