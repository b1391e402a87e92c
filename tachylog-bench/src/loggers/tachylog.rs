//! tachylog itself, at its defaults: one file sink, `OnFull::Block` (lossless), local time.
//!
//! The calling thread pays for the `info!` macro (argument copy into its ring); formatting
//! and the write happen on tachylog's worker. `finish` drops the guard, which drains every
//! ring, flushes the sink and joins the worker.

use std::path::Path;

use super::BenchLogger;
use crate::error::BenchError;

/// How this logger is configured, for the report.
pub const CONFIG: &str = "builder().file(..).on_full(OnFull::Block), other settings default";

/// The installed logger; dropping the guard shuts it down.
pub struct Tachylog {
    guard: ::tachylog::Guard,
}

impl BenchLogger for Tachylog {
    fn init(file: &Path) -> Result<Self, BenchError> {
        let guard = ::tachylog::builder()
            .file(file)
            .on_full(::tachylog::OnFull::Block)
            .init()
            .map_err(|e| BenchError::Logger {
                logger: "tachylog",
                message: e.to_string(),
            })?;
        Ok(Tachylog { guard })
    }

    #[inline(always)]
    fn hello_world(&mut self) {
        ::tachylog::info!("Hello World!");
    }

    #[inline(always)]
    fn request(&mut self, id: u64, ms: f64, path: &str) {
        ::tachylog::info!("request {} took {:.3} ms: {}", id, ms, path);
    }

    #[inline(always)]
    fn static_message(&mut self) {
        ::tachylog::info!("static message with no arguments");
    }

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }
}
