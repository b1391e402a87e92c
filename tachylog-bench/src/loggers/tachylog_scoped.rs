//! tachylog with every call made inside a request scope: `debug!` calls, below the default
//! INFO filter, on a thread that is in a `Scope` (so the call sites are enabled by the scope
//! and every record carries its id). Set beside the `tachylog` row in `latency`: what a
//! record in a scope costs the caller. The scope is flushed before the first call, so the back
//! end writes every record (and the run checks them all); the caller's path is the same
//! whether the back end holds a record or writes it.

use std::path::Path;

use super::{log_calls, BackendStats, BenchLogger};
use crate::error::BenchError;

/// The installed logger, and the scope the calling thread stays in.
pub struct TachylogScoped {
    guard: ::tachylog::Guard,
}

impl BenchLogger for TachylogScoped {
    const NAME: &'static str = "tachylog_scoped";
    const CRATES: &'static [&'static str] = &["tachylog"];
    const CONFIG: &'static str = "builder().file(..).on_full(OnFull::Block), debug! calls in a \
         Scope (entered on the calling thread, flushed first), other settings default";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let guard = super::tachylog::install(file, Self::NAME)?;
        // The scope lives as long as the process; the calling thread never leaves it.
        let scope: &'static ::tachylog::Scope = Box::leak(Box::new(::tachylog::Scope::new()));
        scope.flush();
        std::mem::forget(scope.enter());
        Ok(TachylogScoped { guard })
    }

    log_calls!(tachylog::debug);

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }

    fn backend_stats(&self) -> Option<BackendStats> {
        Some(super::tachylog::backend_stats())
    }
}
