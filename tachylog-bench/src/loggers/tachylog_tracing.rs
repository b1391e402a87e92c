//! `tracing`'s macros through tachylog's `tracing` layer: `registry().with(tracing_layer())`
//! as the global default, and tachylog configured as the `tachylog` peer is (one file sink,
//! `OnFull::Block`, lossless, local time, default text lines).
//!
//! The calling thread pays for `tracing`'s dispatch (the registry, the layer's filter check),
//! the message's formatting into a reused thread-local buffer and the copy of that text into
//! its ring; tachylog's worker writes the line. Set beside `tracing_appender`, whose calling
//! thread formats the whole line and sends it over a channel. `finish` drops tachylog's guard,
//! which drains every ring, flushes the sink and joins the worker.

use std::path::Path;

use tracing_subscriber::layer::SubscriberExt as _;

use super::{log_calls, logger_err, BackendStats, BenchLogger};
use crate::error::BenchError;

/// The installed logger; dropping the guard shuts tachylog down.
pub struct TachylogTracing {
    guard: ::tachylog::Guard,
}

impl BenchLogger for TachylogTracing {
    const NAME: &'static str = "tachylog_tracing";
    const CRATES: &'static [&'static str] = &["tachylog", "tracing", "tracing-subscriber"];
    const CONFIG: &'static str = "tracing macros -> registry().with(tachylog::tracing_layer()) -> \
         builder().file(..).on_full(OnFull::Block), other settings default";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let guard = super::tachylog::install(file, Self::NAME)?;
        let subscriber = tracing_subscriber::registry().with(::tachylog::tracing_layer());
        tracing::subscriber::set_global_default(subscriber).map_err(logger_err(Self::NAME))?;
        Ok(TachylogTracing { guard })
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

    fn backend_stats(&self) -> Option<BackendStats> {
        Some(super::tachylog::backend_stats())
    }
}
