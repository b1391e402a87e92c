//! fast_log (a `log` facade back end), writing its file appender through a bounded channel of
//! 100,000 records (`chan_len(Some(..))`; a full channel blocks the sender, so nothing is
//! lost; its default is an unbounded channel).
//!
//! The calling thread formats the message and sends the record; fast_log's worker formats
//! the line and writes. `finish` sends a flush command and waits on its `WaitGroup`.

use std::path::Path;

use fast_log::Config;

use super::{log_calls, logger_err, BenchLogger};
use crate::error::BenchError;

/// Marker for the installed global logger.
pub struct FastLog;

impl BenchLogger for FastLog {
    const NAME: &'static str = "fast_log";
    const CRATES: &'static [&'static str] = &["fast_log", "log"];
    const CONFIG: &'static str =
        "init(Config::new().file(..).chan_len(Some(100_000))), blocking send, defaults otherwise";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let path = file.to_str().ok_or_else(|| BenchError::Logger {
            logger: Self::NAME,
            message: format!("{} is not UTF-8", file.display()),
        })?;
        fast_log::init(Config::new().file(path).chan_len(Some(100_000)))
            .map_err(logger_err(Self::NAME))?;
        Ok(FastLog)
    }

    log_calls!(log::info);

    fn finish(self) -> Result<(), BenchError> {
        fast_log::flush().map_err(logger_err(Self::NAME))?.wait();
        Ok(())
    }
}
