//! tracing with the usual file setup: a `tracing-subscriber` fmt layer (default format,
//! no ANSI colours) writing through `tracing_appender::non_blocking` to a `File`, with
//! `.lossy(false)` so a full queue blocks instead of dropping lines (its default is lossy).
//!
//! The calling thread formats the whole line into a `Vec<u8>` and sends it over a bounded
//! crossbeam channel (128,000 lines); the worker `write_all`s each line to the unbuffered
//! `File` and flushes when the channel is empty. `finish` drops the `WorkerGuard`, which
//! queues a shutdown marker behind every line and waits for the worker (tracing-appender
//! gives up after 100 ms to enqueue plus 1 s to drain; the line count check catches that).

use std::fs::File;
use std::path::Path;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};

use super::{log_calls, logger_err, BenchLogger};
use crate::error::BenchError;

/// Holds the guard whose drop flushes and stops the worker.
pub struct TracingAppender {
    guard: WorkerGuard,
}

impl BenchLogger for TracingAppender {
    const NAME: &'static str = "tracing_appender";
    const CRATES: &'static [&'static str] = &["tracing", "tracing-subscriber", "tracing-appender"];
    const CONFIG: &'static str =
        "fmt().with_ansi(false) -> non_blocking(File), lossy(false), default 128k-line channel";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let f = File::create(file).map_err(|e| BenchError::io(file, e))?;
        let (writer, guard) = NonBlockingBuilder::default().lossy(false).finish(f);
        let subscriber = tracing_subscriber::fmt()
            .with_writer(writer)
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber).map_err(logger_err(Self::NAME))?;
        Ok(TracingAppender { guard })
    }

    log_calls!(tracing::info);

    const FIELDS: bool = true;
    #[inline(always)]
    fn fields(&self, id: u64, ms: f64, path: &str) {
        tracing::info!(user_id = id, latency_ms = ms, path, "request served");
    }

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }
}
