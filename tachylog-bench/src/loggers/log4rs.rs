//! log4rs (a `log` facade back end) with a `FileAppender` and its default pattern
//! (`{d} {l} {t} - {m}{n}`). log4rs has no asynchronous mode: the calling thread formats and
//! writes each line itself, so it is lossless by construction.
//!
//! `finish` flushes the facade's logger.

use std::path::Path;

use log::LevelFilter;
use log4rs::append::file::FileAppender;
use log4rs::config::{Appender, Config, Root};

use super::{log_calls, logger_err, BenchLogger};
use crate::error::BenchError;

/// Holds the handle so the configuration stays installed.
pub struct Log4rs {
    _handle: log4rs::Handle,
}

impl BenchLogger for Log4rs {
    const NAME: &'static str = "log4rs";
    const CRATES: &'static [&'static str] = &["log4rs", "log"];
    const CONFIG: &'static str =
        "FileAppender with the default pattern, root at Info; synchronous (no async mode)";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let appender = FileAppender::builder()
            .build(file)
            .map_err(|e| BenchError::io(file, e))?;
        let config = Config::builder()
            .appender(Appender::builder().build("file", Box::new(appender)))
            .build(Root::builder().appender("file").build(LevelFilter::Info))
            .map_err(logger_err(Self::NAME))?;
        let handle = log4rs::init_config(config).map_err(logger_err(Self::NAME))?;
        Ok(Log4rs { _handle: handle })
    }

    log_calls!(log::info);

    fn finish(self) -> Result<(), BenchError> {
        log::logger().flush();
        Ok(())
    }
}
