//! The floor: a bare `BufWriter<File>` (std's default 8 KiB buffer) written on the calling
//! thread, message text and `\n` only — no timestamp, level or queue (an uncontended mutex,
//! so two threads can share it).
//!
//! No real logger can beat it on throughput; it shows how much of every other logger's time
//! is the logging rather than the bytes. Its per-call latency is a `memcpy` into the buffer
//! plus, every ~8 KiB, a `write(2)` on the calling thread: that tail is what async loggers
//! exist to remove.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use super::{log_calls, BenchLogger};
use crate::error::BenchError;

/// The open file. Global, like every other logger's state, and locked only so the
/// multi-threaded workloads can share it; uncontended in the single-threaded ones.
static OUT: Mutex<Option<BufWriter<File>>> = Mutex::new(None);

/// Writes one line into the buffer; a failed write panics (the child then fails loudly).
#[inline(always)]
fn line(args: std::fmt::Arguments<'_>) {
    let mut out = OUT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(out) = out.as_mut() {
        if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
            failed(e)
        }
    }
}

#[cold]
#[inline(never)]
fn failed(e: std::io::Error) -> ! {
    panic!("bufwriter: write failed: {e}")
}

/// `line!(fmt, args..)` for [`log_calls!`].
macro_rules! line {
    ($($arg:tt)+) => {
        line(format_args!($($arg)+))
    };
}

/// Marker for the installed global buffer.
pub struct BufWriterFloor;

impl BenchLogger for BufWriterFloor {
    const NAME: &'static str = "bufwriter";
    const CRATES: &'static [&'static str] = &[];
    const CONFIG: &'static str =
        "std Mutex<BufWriter<File>> (8 KiB), message text + newline, calling thread";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let f = File::create(file).map_err(|e| BenchError::io(file, e))?;
        *OUT.lock().unwrap_or_else(|p| p.into_inner()) = Some(BufWriter::new(f));
        Ok(BufWriterFloor)
    }

    log_calls!(line);

    fn finish(self) -> Result<(), BenchError> {
        let out = OUT.lock().unwrap_or_else(|p| p.into_inner()).take();
        match out {
            Some(mut out) => out.flush().map_err(|e| BenchError::io("bufwriter file", e)),
            None => Ok(()),
        }
    }
}
