//! The loggers under test, one file each, all driven through the [`BenchLogger`] trait.
//!
//! Every workload is generic over `BenchLogger`, so each logger's own macro is inlined into
//! the same timed loop: the harness is identical for all, only the log call differs. To add
//! a peer: write `src/loggers/<name>.rs` implementing the trait (configured lossless, with its
//! documented defaults otherwise), add its crate to Cargo.toml and one entry to [`ALL`].

use std::path::Path;

use crate::error::BenchError;
use crate::report::Measurement;
use crate::workloads::{self, Scale, Workload};

mod bufwriter;
mod mutex_file;
mod spdlog_rs;
mod tachylog;
mod tracing_appender;

/// A logger set up to write one file, as the workloads need it.
///
/// Loggers install process-global state, so each instance lives in its own child process and
/// `init` is called once per process.
pub trait BenchLogger: Sized {
    /// Installs the logger so that every record goes to `file` (which does not exist yet;
    /// its directory does).
    fn init(file: &Path) -> Result<Self, BenchError>;

    /// `info!("Hello World!")`.
    fn hello_world(&mut self);

    /// `info!("request {} took {:.3} ms: {}", id, ms, path)`.
    fn request(&mut self, id: u64, ms: f64, path: &str);

    /// `info!("static message with no arguments")`.
    fn static_message(&mut self);

    /// Shuts the logger down the way its users must at exit (drop the guard, flush, join the
    /// worker). When this returns every record logged so far has been written to the file
    /// (handed to the kernel; nothing calls fsync, for any logger).
    fn finish(self) -> Result<(), BenchError>;
}

/// How a child process runs one workload against one logger.
pub type RunFn = fn(Workload, Scale, &Path) -> Result<Measurement, BenchError>;

/// A logger in the registry.
pub struct Entry {
    /// Name on the command line and in the table.
    pub name: &'static str,
    /// The crates it is made of (looked up in Cargo.lock for the report); empty for std.
    pub crates: &'static [&'static str],
    /// One line on its configuration, for `--list` and the report.
    pub config: &'static str,
    /// The workloads, instantiated for this logger.
    pub run: RunFn,
}

/// Every logger, in table order: the subject first, then the std baselines, then the peers.
pub const ALL: &[Entry] = &[
    Entry {
        name: "tachylog",
        crates: &["tachylog"],
        config: tachylog::CONFIG,
        run: workloads::run::<tachylog::Tachylog>,
    },
    Entry {
        name: "bufwriter",
        crates: &[],
        config: bufwriter::CONFIG,
        run: workloads::run::<bufwriter::BufWriterFloor>,
    },
    Entry {
        name: "mutex_file",
        crates: &[],
        config: mutex_file::CONFIG,
        run: workloads::run::<mutex_file::MutexFile>,
    },
    Entry {
        name: "spdlog_rs",
        crates: &["spdlog-rs"],
        config: spdlog_rs::CONFIG,
        run: workloads::run::<spdlog_rs::SpdlogRs>,
    },
    Entry {
        name: "tracing_appender",
        crates: &["tracing", "tracing-subscriber", "tracing-appender"],
        config: tracing_appender::CONFIG,
        run: workloads::run::<tracing_appender::TracingAppender>,
    },
];

/// Looks a logger up by name.
pub fn find(name: &str) -> Option<&'static Entry> {
    ALL.iter().find(|e| e.name == name)
}
