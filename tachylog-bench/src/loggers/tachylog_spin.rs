//! tachylog with its low-latency back end: `spin_backend(true)` (it never sleeps, so no log
//! call ever wakes it) on CPU 0 (`pin_backend`), where Quill's harness pins its back end,
//! for programs that give the logger a core. Set beside the `tachylog` row in `latency`, `throughput` and `scaling_t2`:
//! what the spinning back end buys the caller and costs the machine. `finish` drops the guard.

use std::path::Path;

use super::{log_calls, logger_err, BackendStats, BenchLogger};
use crate::error::BenchError;

/// The installed logger.
pub struct TachylogSpin {
    guard: ::tachylog::Guard,
}

impl BenchLogger for TachylogSpin {
    const NAME: &'static str = "tachylog_spin";
    const CRATES: &'static [&'static str] = &["tachylog"];
    const CONFIG: &'static str = "builder().file(..).on_full(OnFull::Block).spin_backend(true)\
         .pin_backend(0), other settings default";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let guard = ::tachylog::builder()
            .file(file)
            .on_full(::tachylog::OnFull::Block)
            .spin_backend(true)
            .pin_backend(0)
            .init()
            .map_err(logger_err(Self::NAME))?;
        Ok(TachylogSpin { guard })
    }

    super::tachylog::tachylog_calls!();

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }

    fn backend_stats(&self) -> Option<BackendStats> {
        Some(super::tachylog::backend_stats())
    }
}
