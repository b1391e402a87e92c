//! The loggers under test, one file each, all driven through the [`BenchLogger`] trait.
//!
//! Every workload is generic over `BenchLogger`, so each logger's own macro is inlined into
//! the same timed loop: the harness is identical for all, only the log call differs. The
//! message shapes are written once, in [`log_calls!`], and expanded with each logger's macro,
//! so every logger logs exactly the same format strings. To add a peer: write
//! `src/loggers/<name>.rs` implementing the trait (configured lossless, with its documented
//! defaults otherwise), add its crate to Cargo.toml and one line to [`ALL`].

use std::path::Path;

use crate::error::BenchError;
use crate::report::Measurement;
use crate::workloads::{self, Scale, Shape, Workload};

mod bufwriter;
mod fast_log;
mod flexi_logger;
mod ftlog;
mod inqjet;
mod log4rs;
mod mutex_file;
mod nolog;
mod slog;
mod spdlog_rs;
mod tachylog;
mod tachylog_otlp;
mod tachylog_scoped;
mod tachylog_spin;
mod tachylog_spool;
mod tachylog_tracing;
mod ticklog;
mod tracing_appender;

pub use self::tachylog::{Tachylog, SPDLOG_LIKE_PATTERN};

/// A logger set up to write one file, as the workloads need it.
///
/// Loggers install process-global state, so each instance lives in its own child process and
/// `init` is called once per process. The calls take `&self` and the logger is `Sync`, so
/// the multi-threaded workloads share one instance across their threads.
pub trait BenchLogger: Sized + Sync {
    /// Name on the command line and in the tables.
    const NAME: &'static str;
    /// The crates it is made of (looked up in Cargo.lock for the report); empty for std.
    const CRATES: &'static [&'static str];
    /// One line on its configuration, for `--list` and the report.
    const CONFIG: &'static str;
    /// Message shapes its macros cannot express, with the reason (the report shows it).
    const UNSUPPORTED: &'static [(Shape, &'static str)] = &[];

    /// Installs the logger so that every record goes to `file` (which does not exist yet;
    /// its directory does).
    fn init(file: &Path) -> Result<Self, BenchError>;

    /// `info!("Hello World!")`.
    fn hello_world(&self);
    /// `info!("{}", "1 logged")`.
    fn one_logged(&self);
    /// `info!("request {} took {:.3} ms: {}", id, ms, path)`.
    fn request(&self, id: u64, ms: f64, path: &str);
    /// `info!("static message with no arguments")`.
    fn static_message(&self);
    /// `info!("payload {}", s)`, `s` a 100-byte string.
    fn payload(&self, s: &str);
    /// `info!("items {:?}", v)`, a list of strings through `Debug`.
    fn items(&self, v: &[String]);
    /// `info!("Iteration: {} int: {} double: {}", i, int, double)`.
    fn iteration(&self, i: u64, int: i64, double: f64);
    /// `info!("Logging iteration: {}, message: {}, double: {}", i, message, double)`: the record
    /// of Quill's latency harness.
    fn quill(&self, i: u64, message: u64, double: f64);
    /// `info!("limlog b={} c={} i={} u={} f={} s={}", ..)`: the limlog matrix's record.
    fn mixed(&self, b: bool, c: char, i: i32, u: u64, f: f64, s: &str);
    /// `info!("access {} GET {} {} {}us", peer, path, status, micros)`: the server's record.
    fn access(&self, peer: &str, path: &str, status: u16, micros: u64);
    /// `info!("GET /index.html {} {} bytes in {:.3} ms", status, bytes, ms)`: the paced
    /// workloads' access-log-like record.
    fn response(&self, status: u16, bytes: u64, ms: f64);
    /// Whether [`BenchLogger::fields`] is implemented (the logger has structured fields).
    const FIELDS: bool = false;
    /// `info!(user_id = id, latency_ms = ms, path = path; "request served")` in the logger's
    /// own structured-field syntax. Only called when [`BenchLogger::FIELDS`] is set.
    fn fields(&self, id: u64, ms: f64, path: &str) {
        let _ = (id, ms, path);
        unreachable!("{} has no structured fields here", Self::NAME)
    }

    /// Shuts the logger down the way its users must at exit (drop the guard, flush, join the
    /// worker). When this returns every record logged so far has been written to the file
    /// (handed to the kernel; nothing calls fsync, for any logger).
    fn finish(self) -> Result<(), BenchError>;

    /// The logger's own count of its back end's work so far, where it keeps one (tachylog);
    /// read just before [`BenchLogger::finish`], since the logger is gone after it.
    fn backend_stats(&self) -> Option<BackendStats> {
        None
    }
}

/// What a logger's back end says it did: the cost of its thread, seen from inside.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackendStats {
    /// Times the back end's thread woke from a sleep.
    pub wakeups: u64,
    /// CPU time of the back end's thread, seconds, where the platform tells.
    pub cpu_s: Option<f64>,
}

/// Implements every message method of [`BenchLogger`] with one logging macro, so all loggers
/// log the very same format strings. `log_calls!(path::to::info)` for a facade-style macro;
/// `log_calls!(slog::info, receiver_expr)` for a macro that takes a logger first.
macro_rules! log_calls {
    ($($mac:ident)::+ $(, $recv:expr)?) => {
        #[inline(always)]
        fn hello_world(&self) {
            $($mac)::+!($($recv,)? "Hello World!");
        }
        #[inline(always)]
        fn one_logged(&self) {
            $($mac)::+!($($recv,)? "{}", "1 logged");
        }
        #[inline(always)]
        fn request(&self, id: u64, ms: f64, path: &str) {
            $($mac)::+!($($recv,)? "request {} took {:.3} ms: {}", id, ms, path);
        }
        #[inline(always)]
        fn static_message(&self) {
            $($mac)::+!($($recv,)? "static message with no arguments");
        }
        #[inline(always)]
        fn payload(&self, s: &str) {
            $($mac)::+!($($recv,)? "payload {}", s);
        }
        #[inline(always)]
        fn items(&self, v: &[String]) {
            $($mac)::+!($($recv,)? "items {:?}", v);
        }
        #[inline(always)]
        fn iteration(&self, i: u64, int: i64, double: f64) {
            $($mac)::+!($($recv,)? "Iteration: {} int: {} double: {}", i, int, double);
        }
        #[inline(always)]
        fn quill(&self, i: u64, message: u64, double: f64) {
            $($mac)::+!($($recv,)? "Logging iteration: {}, message: {}, double: {}", i, message, double);
        }
        #[inline(always)]
        fn mixed(&self, b: bool, c: char, i: i32, u: u64, f: f64, s: &str) {
            $($mac)::+!($($recv,)? "limlog b={} c={} i={} u={} f={} s={}", b, c, i, u, f, s);
        }
        #[inline(always)]
        fn access(&self, peer: &str, path: &str, status: u16, micros: u64) {
            $($mac)::+!($($recv,)? "access {} GET {} {} {}us", peer, path, status, micros);
        }
        #[inline(always)]
        fn response(&self, status: u16, bytes: u64, ms: f64) {
            $($mac)::+!($($recv,)? "GET /index.html {} {} bytes in {:.3} ms", status, bytes, ms);
        }
    };
}
pub(crate) use log_calls;

/// Maps any displayable error of logger `name` to a [`BenchError`].
pub fn logger_err<E: std::fmt::Display>(name: &'static str) -> impl Fn(E) -> BenchError {
    move |e| BenchError::Logger {
        logger: name,
        message: e.to_string(),
    }
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
    /// Shapes it cannot log, and why.
    pub unsupported: &'static [(Shape, &'static str)],
    /// Whether it logs structured fields ([`Shape::Fields`]).
    pub fields: bool,
    /// The workloads, instantiated for this logger.
    pub run: RunFn,
}

impl Entry {
    /// The registry entry of `L`.
    const fn of<L: BenchLogger>() -> Entry {
        Entry {
            name: L::NAME,
            crates: L::CRATES,
            config: L::CONFIG,
            unsupported: L::UNSUPPORTED,
            fields: L::FIELDS,
            run: workloads::run::<L>,
        }
    }

    /// Why this logger cannot run `workload`, if it cannot.
    pub fn cannot_run(&self, workload: Workload) -> Option<&'static str> {
        let shape = workload.shape();
        if shape == Shape::Fields && !self.fields {
            return Some("no structured fields in this configuration");
        }
        self.unsupported
            .iter()
            .find(|(s, _)| *s == shape)
            .map(|(_, why)| *why)
    }
}

/// Every logger, in table order: the subject, the std baselines, the peers, and `nolog`
/// (the reference of the workloads that subtract what running without a logger costs).
pub const ALL: &[Entry] = &[
    Entry::of::<tachylog::Tachylog>(),
    Entry::of::<tachylog_spool::TachylogSpool>(),
    Entry::of::<tachylog_otlp::TachylogOtlp<false>>(),
    Entry::of::<tachylog_otlp::TachylogOtlp<true>>(),
    Entry::of::<tachylog_spin::TachylogSpin>(),
    Entry::of::<tachylog_scoped::TachylogScoped>(),
    Entry::of::<bufwriter::BufWriterFloor>(),
    Entry::of::<mutex_file::MutexFile>(),
    Entry::of::<spdlog_rs::SpdlogRs>(),
    Entry::of::<tracing_appender::TracingAppender>(),
    Entry::of::<tachylog_tracing::TachylogTracing>(),
    Entry::of::<ticklog::Ticklog>(),
    Entry::of::<inqjet::Inqjet>(),
    Entry::of::<ftlog::Ftlog>(),
    Entry::of::<fast_log::FastLog>(),
    Entry::of::<flexi_logger::FlexiLogger>(),
    Entry::of::<log4rs::Log4rs>(),
    Entry::of::<slog::Slog>(),
    Entry::of::<nolog::NoLog>(),
];

/// Looks a logger up by name.
pub fn find(name: &str) -> Option<&'static Entry> {
    ALL.iter().find(|e| e.name == name)
}
