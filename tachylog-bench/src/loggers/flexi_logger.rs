//! flexi_logger (a `log` facade back end) with `WriteMode::Async` to one file, lines in its
//! `opt_format` (timestamp, level, file:line, message). Its async channel is unbounded, so
//! it never drops; memory grows instead while the writer lags.
//!
//! The calling thread formats the whole line into a pooled buffer and sends it; the writer
//! thread writes it. `finish` calls `LoggerHandle::shutdown`, which flushes and joins.

use std::path::Path;

use flexi_logger::{FileSpec, Logger, LoggerHandle, WriteMode};

use super::{log_calls, logger_err, BenchLogger};
use crate::error::BenchError;

/// Holds the handle whose shutdown drains the writer thread.
pub struct FlexiLogger {
    handle: LoggerHandle,
}

impl BenchLogger for FlexiLogger {
    const NAME: &'static str = "flexi_logger";
    const CRATES: &'static [&'static str] = &["flexi_logger", "log"];
    const CONFIG: &'static str = "try_with_str(\"info\"), log_to_file, WriteMode::Async \
         (unbounded channel), format = opt_format";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let dir = file.parent().unwrap_or(Path::new("."));
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("out");
        let handle = Logger::try_with_str("info")
            .map_err(logger_err(Self::NAME))?
            .log_to_file(
                FileSpec::default()
                    .directory(dir)
                    .basename(stem)
                    .suppress_timestamp(),
            )
            .format(flexi_logger::opt_format)
            .write_mode(WriteMode::Async)
            .start()
            .map_err(logger_err(Self::NAME))?;
        Ok(FlexiLogger { handle })
    }

    log_calls!(log::info);

    fn finish(self) -> Result<(), BenchError> {
        self.handle.shutdown();
        Ok(())
    }
}
