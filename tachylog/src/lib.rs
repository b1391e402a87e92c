//! tachylog: an asynchronous logger whose log call costs the caller nanoseconds, never waits on
//! a disk or a socket, and never silently loses a line.
//!
//! ```
//! let dir = std::env::temp_dir().join("tachylog-doc-quickstart");
//! let guard = tachylog::builder()
//!     .file(dir.join("app.log"))
//!     .level(tachylog::Level::Debug)
//!     .init()?;
//! let (id, ms, path) = (42u64, 1.25f64, "/index.html");
//! tachylog::info!("request {} took {:.3} ms: {}", id, ms, path);
//! let user = "ada";
//! tachylog::debug!("user {user} logged in from {:?}", "127.0.0.1");
//! drop(guard); // drains every queue, flushes every sink, joins the worker
//! # std::fs::remove_dir_all(dir).unwrap();
//! # Ok::<(), tachylog::Error>(())
//! ```
//!
//! # The contract
//! - **Calling thread.** A log call checks its call site's cached filter verdict (one relaxed
//!   load; see [`Filter`] and [`set_filter`]), copies the arguments'
//!   bytes and a pointer to its static call site into the thread's own ring, stamps the time
//!   (`rdtsc`) and publishes with one release store. No formatting, no lock, no allocation, no
//!   system call, once the thread's ring exists (allocated on its first record). Argument types:
//!   integers, floats, `bool`, `char`, text and [`CopyArg`] types are copied raw; anything else
//!   that implements the placeholder's trait is formatted on the calling thread (the fallback).
//! - **Full ring.** [`OnFull::Block`] (default) waits for room: nothing is lost
//!   ([`Builder::max_block`] bounds the wait, then drops and counts).
//!   [`OnFull::Drop`] discards and counts; the count is written into the log.
//! - **Back end.** One thread merges the rings in timestamp order, formats, and writes whole
//!   lines in large batches; it flushes when the queues run empty and at least every 100 ms,
//!   and sleeps when idle.
//! - **Exit.** Dropping the [`Guard`], [`flush`], `std::process::exit` and a panic in any thread
//!   all write every record logged before them. SIGTERM and SIGINT drain and flush, then end
//!   the process with the signal, unless the application handles them itself (then it keeps
//!   control: see [`Builder::handle_termination`]); crash signals (SIGSEGV, SIGABRT, ...) get a bounded,
//!   best-effort drain; SIGKILL can never be handled, except that levels made synchronous
//!   with [`Builder::sync_level`] are already in the kernel. After `fork()` logging is off in
//!   the child. `RELIABILITY.md` lists each case and the test that proves it. On Windows,
//!   Ctrl-C and closing the console drain like SIGTERM (see [`Builder::handle_termination`]);
//!   `std::process::exit` is `ExitProcess` there, which ends the back end's thread and runs no
//!   exit hook: call [`flush`] (or drop the guard) before it. Returning from `main` is safe.
//! - **Failing sinks.** An error is reported once on stderr; lost records are counted and the
//!   count is written into the sink when it works again (`FaultSink`, feature `testing`,
//!   injects such faults).
//! - **One record, one line.** Control characters in messages are escaped.
//! - **Destinations.** Console (coloured on a terminal), files ([`FileSink`]), self-managing
//!   files (`RollingFile`: time patterns, size limit, retention, compression), syslog,
//!   journald, OpenTelemetry and any [`Sink`]; each sink has its own level and [`Format`] (text, JSON
//!   lines, logfmt).
//! - **Structured fields.** `info!(user_id = id, path = %p; "served {}", n)`: fields travel
//!   like arguments, keep their types ([`Fields`]) and are written as `key=value` in text and
//!   logfmt and as native JSON values (see [`info!`]).
//!
//! The `log` crate's macros go through the same engine once [`Builder::init`] has run; their
//! key-values become structured fields. With the `tracing` feature, `tracing_layer()` adds
//! tachylog to a `tracing_subscriber` stack: events, their fields and their spans' names and
//! fields travel through the same queue.
//!
//! # Cargo features
//! The core (text, JSON and logfmt lines, [`FileSink`], [`Stdout`], [`Stderr`]) is always
//! built; each other destination is a feature, so a program compiles only what it uses.
//! - `rolling` (default): `RollingFile`, self-managing files.
//! - `gzip`, `zstd` (default): compression of the files `RollingFile` leaves; imply `rolling`.
//! - `syslog` (default): `SyslogSink`, RFC 5424 over UDP, TCP or a Unix socket.
//! - `color` (default): the level coloured on a terminal (`ColorChoice`, `Builder::color`);
//!   without it the console is never coloured.
//! - `journald`: `JournaldSink`, the systemd journal's native protocol (Linux).
//! - `otlp`: `OtlpSink`, OTLP/HTTP logs to an OpenTelemetry collector.
//! - `otlp-tls`: `https://` for `OtlpSink` (rustls), with custom CAs and client certificates.
//! - `tracing`: `tracing_layer()`, a `tracing_subscriber` layer.
//! - `testing`: `FaultSink` and `Faults`, which inject sink failures; a test tool.

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

// A `--cfg loom` build model-checks the queue alone, whose atomics and cells are then loom's:
// every other item is `cfg(not(loom))`, declared one by one (not through a macro) so that
// rustfmt, which does not look into macro bodies, reaches every module.
mod queue;

#[cfg(not(loom))]
mod backend;
#[cfg(not(loom))]
mod binary;
#[cfg(not(loom))]
mod codec;
#[cfg(not(loom))]
mod error;
#[cfg(not(loom))]
mod facade;
#[cfg(not(loom))]
mod fields;
#[cfg(not(loom))]
mod filter;
#[cfg(not(loom))]
mod format;
// Entry points for the fuzz targets (`fuzz/`): cargo-fuzz builds with `--cfg fuzzing`. Like
// this root they may name any module, so they sit in no layer (an inline module, outside the
// layer table of `tests/imports_only_go_down.rs`).
#[cfg(all(fuzzing, not(loom)))]
#[doc(hidden)]
pub mod __fuzz {
    mod entry;
    pub use entry::*;
}
#[cfg(not(loom))]
mod frontend;
#[cfg(not(loom))]
mod level;
#[cfg(not(loom))]
mod lifecycle;
#[cfg(not(loom))]
mod logger;
#[cfg(not(loom))]
mod panic_guard;
#[cfg(not(loom))]
pub mod read;
#[cfg(not(loom))]
mod record;
#[cfg(not(loom))]
mod sink;
#[cfg(not(loom))]
mod zone;

#[cfg(all(unix, not(loom)))]
pub use backend::recovery::Recovery;
#[cfg(not(loom))]
pub use backend::stats::{stats, Stats};
#[cfg(not(loom))]
pub use codec::{CopyArg, NativeValue};
#[cfg(not(loom))]
pub use error::Error;
#[cfg(not(loom))]
pub use facade::log::LogFacade;
#[cfg(not(loom))]
#[cfg(feature = "tracing")]
pub use facade::tracing::{tracing_layer, TracingLayer};
#[cfg(not(loom))]
pub use fields::{Field, FieldValue, Fields, Span};
#[cfg(not(loom))]
pub use filter::{Filter, FilterError};
#[cfg(not(loom))]
pub use format::pattern::{Pattern, PatternError, DEFAULT_PATTERN};
#[cfg(not(loom))]
pub use format::{Format, LineKey, LineShape};
#[cfg(not(loom))]
pub use frontend::args::{lossy, BytesArg, ListArg, ListElem, Lossy};
#[cfg(not(loom))]
pub use frontend::gate::{enabled, OnFull};
#[cfg(not(loom))]
pub use frontend::mute::mute_current_thread;
#[cfg(not(loom))]
pub use frontend::scope::{Bound, Entered, Scope, ScopeBuilder};
#[cfg(not(loom))]
pub use level::{Level, ParseLevelError};
#[cfg(not(loom))]
pub use logger::{builder, set_filter, set_level, Builder, Guard, SinkOptions};
#[cfg(not(loom))]
pub use queue::control::{dump_backtrace, flush, reopen};
#[cfg(not(loom))]
pub use record::TraceContext;
#[cfg(not(loom))]
#[cfg(feature = "color")]
pub use sink::ColorChoice;
#[cfg(not(loom))]
pub use sink::{current_thread_id, FileSink, Line, RecordDropped, Sink, Stderr, Stdout};
#[cfg(not(loom))]
#[cfg(feature = "rolling")]
pub use sink::{Compression, FileNamePatternError, Period, RollingFile, RollingFileBuilder};
#[cfg(not(loom))]
#[cfg(feature = "syslog")]
pub use sink::{Facility, SyslogBuilder, SyslogSink};
#[cfg(not(loom))]
#[cfg(feature = "testing")]
pub use sink::{FaultSink, Faults};
#[cfg(not(loom))]
#[cfg(all(feature = "journald", target_os = "linux"))]
pub use sink::{JournaldBuilder, JournaldSink, JOURNALD_SOCKET};
#[cfg(not(loom))]
#[cfg(feature = "otlp")]
pub use sink::{OtlpBuilder, OtlpError, OtlpSink, OtlpStats};
// A network sink's batches on disk until acknowledged: what makes an `OtlpSink` durable,
// open to any sink.
#[cfg(all(unix, not(loom)))]
pub use sink::{Outbox, OutboxBatch};
#[cfg(not(loom))]
pub use sink::{OutboxFormat, OutboxFull, OutboxReport};
#[cfg(not(loom))]
pub use zone::TimeZone;

#[cfg(not(loom))]
/// What the macros expand to. Not a public API: may change in any release.
#[doc(hidden)]
pub mod __private {
    #[cfg(all(unix, not(loom), feature = "testing"))]
    pub use crate::backend::spool_cut::kill_before_next_commit;
    pub use crate::codec::render::{self, Applied, Fmt};
    pub use crate::codec::{ArgWriter, Codec, Decoder, NativeField, View};
    pub use crate::filter::Interest;
    pub use crate::frontend::args::{
        field_role, fmt_trait, Args, CountSlot, Decodes, Encode, FmtTrait, Marked, Slot, Stage,
        ViaBytes, ViaCopy, ViaCopyRef, ViaFallback, ViaList, Wrap,
    };
    pub use crate::frontend::field_args::{
        NativeViaBytes, NativeViaCopy, NativeViaCopyRef, NativeViaDisplay,
    };
    pub use crate::frontend::gate::enabled;
    pub use crate::frontend::limit;
    pub use crate::frontend::producer::log_record;
    pub use crate::queue::control::hold_backend;
    #[cfg(all(unix, not(loom), feature = "testing"))]
    pub use crate::queue::spool::journal::tear_next_write;
    #[cfg(all(unix, not(loom), feature = "testing"))]
    pub use crate::queue::spool::kill_recovery_before_cleanup;
    pub use crate::record::{Count, Decode, Placeholder, Site};
    pub use tachylog_macros::__log;

    /// Whether a custom target is free of the characters that text lines escape in messages:
    /// C0 and C1 controls, DEL, the Unicode line and paragraph separators and the bidi
    /// controls (checked at compile time, since call-site metadata is written unescaped).
    pub const fn is_plain_target(target: &str) -> bool {
        let b = target.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c1_control =
                b[i] == 0xc2 && i + 1 < b.len() && b[i + 1] >= 0x80 && b[i + 1] <= 0x9f;
            let layout = b[i] == 0xe2
                && i + 2 < b.len()
                && ((b[i + 1] == 0x80 && b[i + 2] >= 0xa8 && b[i + 2] <= 0xae)
                    || (b[i + 1] == 0x81 && b[i + 2] >= 0xa6 && b[i + 2] <= 0xa9));
            if b[i] < 0x20 || b[i] == 0x7f || c1_control || layout {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Which clock the log call reads: `"tsc"` or `"monotonic"` (the fallback, also forced
    /// by `TACHYLOG_CLOCK=monotonic`). Chosen once per process.
    pub fn clock_source() -> &'static str {
        crate::frontend::clock::source_name()
    }

    /// Type-checks a call's format string and arguments; never called.
    #[inline(always)]
    pub fn check_format(_: core::fmt::Arguments<'_>) {}
}

/// Logs at [`Level::Error`]. Takes a format string and arguments exactly as `format!` does.
///
/// ```
/// let code = 503;
/// tachylog::error!("upstream failed with {code}");
/// ```
#[macro_export]
macro_rules! error {
    ($($arg:tt)+) => { $crate::__private::__log!($crate, Error, $($arg)+) };
}

/// Logs at [`Level::Warn`]. Takes a format string and arguments exactly as `format!` does.
///
/// ```
/// tachylog::warn!("disk {:.1}% full", 93.25);
/// ```
#[macro_export]
macro_rules! warn {
    ($($arg:tt)+) => { $crate::__private::__log!($crate, Warn, $($arg)+) };
}

/// Logs at [`Level::Info`]. Takes a format string and arguments exactly as `format!` does,
/// optionally preceded by structured fields and a `;`.
///
/// ```
/// tachylog::info!("request {} took {:.3} ms: {}", 7u64, 0.25, "/");
/// ```
///
/// # Structured fields
///
/// `key = value` keeps the value's type: integers, floats, `bool`, `char`, text, and `Option`
/// of those (`None` is null), so JSON lines get numbers and booleans ([`NativeValue`]); any
/// other `Display` type is formatted. `key = %value` records its `Display`, `key = ?value`
/// its `Debug`. A bare `key` (or `%key`, `?key`) takes the variable of that name; keys may be
/// dotted (`http.method`) or quoted (`"content-type"`). Values are encoded like message
/// arguments: numbers and text are copied raw and formatted on the back end.
///
/// ```
/// let user_id = 42u64;
/// let path = std::path::Path::new("/index.html");
/// let elapsed = std::time::Duration::from_micros(250);
/// tachylog::info!(user_id, path = %path.display(), ?elapsed, http.method = "GET"; "served {}", 3);
/// ```
///
/// # Rate limits and sampling
///
/// `every = DURATION` lets at most one call through per period, `sample = N` one call in N
/// (counted per thread); `key = k` beside either keeps a limit per key (64 slots per call site,
/// so memory stays bounded). A skipped call evaluates none of its arguments. A call that passes
/// carries `suppressed = N`, the calls skipped since the last one that passed; skipped calls
/// that no later call reports are written by the back end as a summary record of the call site,
/// at its level and with its target, so it goes wherever the site's records go (`rate limit
/// summary: N calls suppressed at FILE:LINE:COLUMN ...`), at [`flush`], when the
/// guard drops and otherwise within about two flush intervals. So a site's lines and every
/// `suppressed` count add up to the calls made. A field really named `every`, `sample` or `key`
/// is written quoted: `"key" = k`.
///
/// ```
/// use std::time::Duration;
///
/// for job in 0..1000 {
///     tachylog::warn!(every = Duration::from_secs(1); "queue full, dropping job {}", job);
///     tachylog::debug!(sample = 100; "polled {} times", job);
///     let peer = "10.0.0.7";
///     tachylog::error!(every = Duration::from_secs(3600), key = peer, peer; "handshake failed");
/// }
/// ```
///
/// # Target
///
/// The target, which filters and lines show, is the module path unless `target: "name"`
/// comes first (a literal or a `const`; control characters are refused at compile time):
///
/// ```
/// tachylog::info!(target: "audit", user_id = 7u32; "login");
/// ```
///
/// ```compile_fail
/// tachylog::info!(target: "two\nlines", "forged");
/// ```
///
/// A value with no native encoding needs a sigil, and the compiler says so:
///
/// ```compile_fail
/// let elapsed = std::time::Duration::from_micros(250); // no `Display`: write `?elapsed`
/// tachylog::info!(elapsed; "done");
/// ```
///
/// ```compile_fail
/// struct Opaque;
/// tachylog::info!(x = %Opaque; "no Display impl");
/// ```
#[macro_export]
macro_rules! info {
    ($($arg:tt)+) => { $crate::__private::__log!($crate, Info, $($arg)+) };
}

/// Logs at [`Level::Debug`]. Takes a format string and arguments exactly as `format!` does.
///
/// ```
/// let user = "ada";
/// tachylog::debug!("user {user} logged in from {:?}", "10.0.0.1");
/// ```
#[macro_export]
macro_rules! debug {
    ($($arg:tt)+) => { $crate::__private::__log!($crate, Debug, $($arg)+) };
}

/// Logs at [`Level::Trace`]. Takes a format string and arguments exactly as `format!` does.
///
/// ```
/// tachylog::trace!("{:>8}|{:<8}|{:^8}", "r", "l", "c");
/// ```
#[macro_export]
macro_rules! trace {
    ($($arg:tt)+) => { $crate::__private::__log!($crate, Trace, $($arg)+) };
}
