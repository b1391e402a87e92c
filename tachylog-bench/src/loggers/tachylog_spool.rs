//! tachylog as the `tachylog` row configures it, with its rings in a spool
//! (`Builder::spool`) so that records survive SIGKILL: on `/dev/shm` where there is one (tmpfs,
//! as the documentation advises), else beside the log file. Set beside the `tachylog` row in
//! `latency`, `throughput` and `scaling_t2`: what the spool costs the caller and the whole run.
//! `finish` drops the guard (a clean end removes the process's spool directory), then the
//! directory made for the run.

use std::path::{Path, PathBuf};

use super::{log_calls, logger_err, BackendStats, BenchLogger};
use crate::error::BenchError;

/// The installed logger and its spool directory.
pub struct TachylogSpool {
    guard: ::tachylog::Guard,
    spool: PathBuf,
}

/// Where the run's spool goes: tmpfs if the machine has `/dev/shm`.
fn spool_dir(file: &Path) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let name = format!("tachylog-bench-spool-{}", std::process::id());
    if shm.is_dir() {
        shm.join(name)
    } else {
        file.with_file_name(name)
    }
}

impl BenchLogger for TachylogSpool {
    const NAME: &'static str = "tachylog_spool";
    const CRATES: &'static [&'static str] = &["tachylog"];
    const CONFIG: &'static str =
        "builder().file(..).on_full(OnFull::Block).spool(\"/dev/shm/..\"), other settings default";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let spool = spool_dir(file);
        let guard = ::tachylog::builder()
            .file(file)
            .on_full(::tachylog::OnFull::Block)
            .spool(&spool)
            .init()
            .map_err(logger_err(Self::NAME))?;
        Ok(TachylogSpool { guard, spool })
    }

    super::tachylog::tachylog_calls!();

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        let _ = std::fs::remove_dir_all(&self.spool);
        Ok(())
    }

    fn backend_stats(&self) -> Option<BackendStats> {
        Some(super::tachylog::backend_stats())
    }
}
