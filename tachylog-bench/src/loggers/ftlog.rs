//! ftlog (a `log` facade back end), writing a `FileAppender` through a bounded channel of
//! 100,000 records with `block_when_full = true` (its default channel drops silently).
//!
//! The calling thread formats the message into the record and sends it; ftlog's thread adds
//! the timestamp and writes. `finish` drops the `LoggerGuard`, which sends a flush and waits
//! for the thread to confirm it.

use std::path::Path;

use ftlog::appender::FileAppender;

use super::{log_calls, logger_err, BenchLogger};
use crate::error::BenchError;

/// Holds the guard whose drop flushes everything queued.
pub struct Ftlog {
    guard: ftlog::LoggerGuard,
}

impl BenchLogger for Ftlog {
    const NAME: &'static str = "ftlog";
    const CRATES: &'static [&'static str] = &["ftlog", "log"];
    const CONFIG: &'static str =
        "builder().root(FileAppender::new(..)).bounded(100_000, block_when_full = true)";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let logger = ftlog::builder()
            .root(FileAppender::new(file))
            .bounded(100_000, true)
            .build()
            .map_err(logger_err(Self::NAME))?;
        let guard = logger.init().map_err(logger_err(Self::NAME))?;
        Ok(Ftlog { guard })
    }

    log_calls!(log::info);

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }
}
