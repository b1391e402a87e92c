//! tachylog itself, at its defaults: one file sink, `OnFull::Block` (lossless), local time.
//!
//! The calling thread pays for the `info!` macro (argument copy into its ring); formatting
//! and the write happen on tachylog's worker. `finish` drops the guard, which drains every
//! ring, flushes the sink and joins the worker.

use std::path::Path;

use super::{log_calls, logger_err, BackendStats, BenchLogger};
use crate::error::BenchError;

/// The log calls of the rows that log through tachylog's own macros (`tachylog`,
/// `tachylog_spool` and `tachylog_spin`), structured fields included.
macro_rules! tachylog_calls {
    () => {
        log_calls!(tachylog::info);

        const FIELDS: bool = true;
        #[inline(always)]
        fn fields(&self, id: u64, ms: f64, path: &str) {
            ::tachylog::info!(user_id = id, latency_ms = ms, path; "request served");
        }
    };
}
pub(super) use tachylog_calls;

/// A pattern with the content of spdlog-rs's default line, `[2026-01-01 12:00:00.123] [info]
/// message` (its `FullFormatter` with no logger name and no source location): date-time, level,
/// message. tachylog's `{time}` has microseconds and `{level}` is padded to five characters, so
/// its line is 3 to 4 bytes longer; the content is the same.
pub const SPDLOG_LIKE_PATTERN: &str = "[{time}] [{level}] {message}";

/// tachylog as this peer configures it, writing to `file`; shared with `tachylog_tracing`, so
/// the two differ only in the macros that feed the queue.
pub(super) fn install(file: &Path, name: &'static str) -> Result<::tachylog::Guard, BenchError> {
    install_with(file, name, None)
}

/// [`install`] with another line pattern (`None`: the default).
fn install_with(
    file: &Path,
    name: &'static str,
    pattern: Option<&str>,
) -> Result<::tachylog::Guard, BenchError> {
    let builder = ::tachylog::builder()
        .file(file)
        .on_full(::tachylog::OnFull::Block);
    match pattern {
        Some(p) => builder.pattern(p),
        None => builder,
    }
    .init()
    .map_err(logger_err(name))
}

/// tachylog's own count of its back end's wake-ups and CPU time.
pub(super) fn backend_stats() -> BackendStats {
    let stats = ::tachylog::stats();
    BackendStats {
        wakeups: stats.backend_wakeups,
        cpu_s: stats.backend_cpu.map(|d| d.as_secs_f64()),
    }
}

/// The installed logger; dropping the guard shuts it down.
pub struct Tachylog {
    guard: ::tachylog::Guard,
}

impl Tachylog {
    /// tachylog configured as [`BenchLogger::init`] does, but with the line `pattern`
    /// (`throughput_like_spdlog` and its floor).
    pub fn with_pattern(file: &Path, pattern: &str) -> Result<Self, BenchError> {
        Ok(Tachylog {
            guard: install_with(file, <Self as BenchLogger>::NAME, Some(pattern))?,
        })
    }
}

impl Tachylog {
    /// tachylog configured as [`BenchLogger::init`] does, but writing the binary log
    /// (`throughput_binary`).
    pub fn binary(file: &Path) -> Result<Self, BenchError> {
        let options = ::tachylog::SinkOptions::new().format(::tachylog::Format::Binary);
        let guard = ::tachylog::builder()
            .file_with(file, options)
            .on_full(::tachylog::OnFull::Block)
            .init()
            .map_err(logger_err(<Self as BenchLogger>::NAME))?;
        Ok(Tachylog { guard })
    }
}

impl BenchLogger for Tachylog {
    const NAME: &'static str = "tachylog";
    const CRATES: &'static [&'static str] = &["tachylog"];
    const CONFIG: &'static str =
        "builder().file(..).on_full(OnFull::Block), other settings default";

    fn init(file: &Path) -> Result<Self, BenchError> {
        Ok(Tachylog {
            guard: install(file, Self::NAME)?,
        })
    }

    tachylog_calls!();

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }

    fn backend_stats(&self) -> Option<BackendStats> {
        Some(backend_stats())
    }
}
