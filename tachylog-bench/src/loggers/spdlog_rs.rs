//! spdlog-rs, made asynchronous and lossless: a `FileSink` wrapped in an `AsyncPoolSink` with
//! `OverflowPolicy::Block`, on a thread pool of our own, installed as the default logger and
//! called through `spdlog::info!`.
//!
//! The calling thread formats the payload and copies the record (`Record::to_owned`) into a
//! crossbeam channel (capacity 8192 by default); the pool thread formats the line and writes
//! it through the `FileSink`'s buffer. `finish` queues a flush, swaps the default logger for
//! an empty one and drops the last handle on the pool, whose `Drop` processes every queued
//! task and joins its thread. (The crate's shared default pool is never dropped, so it could
//! not be drained at exit without spdlog's own atexit hook: hence our own pool.)

use std::path::Path;
use std::sync::Arc;

use spdlog::sink::{AsyncPoolSink, FileSink, OverflowPolicy};
use spdlog::{Logger, ThreadPool};

use super::{log_calls, logger_err, BenchLogger};
use crate::error::BenchError;

/// Holds the thread pool so `finish` can drain and join it.
pub struct SpdlogRs {
    pool: Arc<ThreadPool>,
}

impl BenchLogger for SpdlogRs {
    const NAME: &'static str = "spdlog_rs";
    const CRATES: &'static [&'static str] = &["spdlog-rs"];
    const CONFIG: &'static str = "default logger = FileSink in AsyncPoolSink, \
         OverflowPolicy::Block, own ThreadPool (defaults)";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let file_sink = Arc::new(
            FileSink::builder()
                .path(file)
                .build()
                .map_err(logger_err(Self::NAME))?,
        );
        let pool = Arc::new(ThreadPool::new().map_err(logger_err(Self::NAME))?);
        let async_sink = Arc::new(
            AsyncPoolSink::builder()
                .sink(file_sink)
                .overflow_policy(OverflowPolicy::Block)
                .thread_pool(Arc::clone(&pool))
                .build()
                .map_err(logger_err(Self::NAME))?,
        );
        let logger = Arc::new(
            Logger::builder()
                .sink(async_sink)
                .build()
                .map_err(logger_err(Self::NAME))?,
        );
        spdlog::set_default_logger(logger);
        Ok(SpdlogRs { pool })
    }

    log_calls!(spdlog::info);

    fn finish(self) -> Result<(), BenchError> {
        let silent = Arc::new(Logger::builder().build().map_err(logger_err(Self::NAME))?);
        let logger = spdlog::swap_default_logger(silent);
        logger.flush();
        // Last handles on the async sink, then on the pool: ThreadPool's Drop lets its worker
        // finish every queued record and the flush, then joins it.
        drop(logger);
        drop(self.pool);
        Ok(())
    }
}
