//! slog with slog-term's `FullFormat` on a `PlainDecorator` over the file, behind
//! `slog_async::Async` with `OverflowStrategy::Block` (its default drops and counts).
//!
//! The calling thread serialises the record into the async channel; slog-async's thread
//! formats and writes. `finish` drops the `AsyncGuard`, which waits for the thread to drain.

use std::fs::File;
use std::path::Path;
use std::sync::OnceLock;

use slog::Drain;
use slog_async::{Async, AsyncGuard, OverflowStrategy};

use super::{log_calls, BenchLogger};
use crate::error::BenchError;

/// The root logger, global like every other logger's state, so the calls need no handle.
static ROOT: OnceLock<slog::Logger> = OnceLock::new();

/// The installed root logger (a discarding one before `init`, which never happens in a run).
#[inline(always)]
fn root() -> &'static slog::Logger {
    ROOT.get_or_init(|| slog::Logger::root(slog::Discard, slog::o!()))
}

/// Holds the guard whose drop drains and joins slog-async's thread.
pub struct Slog {
    guard: AsyncGuard,
}

impl BenchLogger for Slog {
    const NAME: &'static str = "slog";
    const CRATES: &'static [&'static str] = &["slog", "slog-async", "slog-term"];
    const CONFIG: &'static str = "Async(FullFormat(PlainDecorator(File))), \
         OverflowStrategy::Block, default channel size";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let f = File::create(file).map_err(|e| BenchError::io(file, e))?;
        let format = slog_term::FullFormat::new(slog_term::PlainDecorator::new(f))
            .build()
            .fuse();
        let (drain, guard) = Async::new(format)
            .overflow_strategy(OverflowStrategy::Block)
            .build_with_guard();
        ROOT.set(slog::Logger::root(drain.fuse(), slog::o!()))
            .map_err(|_| BenchError::Logger {
                logger: Self::NAME,
                message: "initialised twice".into(),
            })?;
        Ok(Slog { guard })
    }

    log_calls!(slog::info, root());

    const FIELDS: bool = true;
    #[inline(always)]
    fn fields(&self, id: u64, ms: f64, path: &str) {
        slog::info!(root(), "request served"; "user_id" => id, "latency_ms" => ms, "path" => path);
    }

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }
}
