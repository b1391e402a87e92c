//! What a std-only logger does: a global `Mutex<File>`; each call formats
//! `YYYY-MM-DD HH:MM:SS.ffffff INFO  message\n` (UTC from `SystemTime`) into a fresh
//! `String` on the calling thread, takes the lock and `write_all`s it: one `write(2)` per line.
//!
//! Lossless and simple; every call pays an allocation, the date arithmetic, a lock and a
//! syscall, which is the cost the async loggers move off the calling thread.

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use super::{log_calls, BenchLogger};
use crate::civil_time::UtcMicros;
use crate::error::BenchError;

/// The process-wide sink, as a std-only logger keeps it.
static SINK: Mutex<Option<File>> = Mutex::new(None);

/// Formats one line and writes it under the lock; errors are reported on stderr, as such a
/// logger would (the line count check then fails the run).
#[inline]
fn log_info(args: fmt::Arguments<'_>) {
    let line = format!("{} INFO  {}\n", UtcMicros(SystemTime::now()), args);
    let mut sink = SINK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(file) = sink.as_mut() {
        if let Err(e) = file.write_all(line.as_bytes()) {
            eprintln!("mutex_file: write failed: {e}");
        }
    }
}

/// `log_line!(fmt, args..)` for [`log_calls!`].
macro_rules! log_line {
    ($($arg:tt)+) => {
        log_info(format_args!($($arg)+))
    };
}

/// Marker for the installed global sink.
pub struct MutexFile;

impl BenchLogger for MutexFile {
    const NAME: &'static str = "mutex_file";
    const CRATES: &'static [&'static str] = &[];
    const CONFIG: &'static str =
        "global Mutex<File>, format!(timestamp + message) then write_all per line";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let f = File::create(file).map_err(|e| BenchError::io(file, e))?;
        *SINK.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
        Ok(MutexFile)
    }

    log_calls!(log_line);

    fn finish(self) -> Result<(), BenchError> {
        // Unbuffered File: every line is already with the kernel; closing is all that is left.
        drop(SINK.lock().unwrap_or_else(|p| p.into_inner()).take());
        Ok(())
    }
}
