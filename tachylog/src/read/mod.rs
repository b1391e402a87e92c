//! Reading a binary log back: [`Reader`] yields its records, typed, in file order; [`Renderer`]
//! turns each into the text line that a text file sink with the same [`Pattern`] writes (the
//! same code lays it out, so the bytes match), or into a JSON or logfmt line. A reading
//! program's threads only; nothing here touches a running logger.
//!
//! Input is never trusted: damage (a torn write, a flipped bit, a file cut short, text
//! appended by something else) is an [`ReadError::Damaged`] item naming the byte offset where
//! it starts, after which the reader goes on at the next intact block. No input makes it
//! panic, and memory stays bounded by the largest block (1 GiB at most, 64 KiB as written by default).
//!
//! ```
//! let dir = std::env::temp_dir().join("tachylog-doc-read");
//! # let _ = std::fs::remove_dir_all(&dir);
//! let guard = tachylog::builder()
//!     .utc(true)
//!     .file_with(dir.join("app.tlog"), tachylog::SinkOptions::new().format(tachylog::Format::Binary))
//!     .init()
//!     .unwrap();
//! tachylog::info!("served {} items", 3u64);
//! drop(guard);
//!
//! let mut reader = tachylog::read::Reader::open(dir.join("app.tlog")).unwrap();
//! let mut text = tachylog::read::Renderer::text(tachylog::Pattern::default(), tachylog::TimeZone::utc());
//! let mut line = Vec::new();
//! while let Some(record) = reader.next_record() {
//!     let record = record.unwrap();
//!     assert_eq!(record.message(), "served 3 items");
//!     assert_eq!(record.arg(0), Some(tachylog::FieldValue::U64(3)));
//!     text.render(record, &mut line);
//! }
//! let line = String::from_utf8(line).unwrap();
//! assert!(line.contains(" INFO  [main/") && line.contains("served 3 items ("), "{line}");
//! # std::fs::remove_dir_all(dir).unwrap();
//! ```
//!
#![doc = include_str!("../binary/FORMAT.md")]
//!
//! Layer 4 (see `ARCHITECTURE.md`), after `binary`: imports layers 1 to 3, `format` (the line
//! layouts) and `binary` (the decoding).

mod parallel;
mod reader;
#[cfg(all(unix, not(loom)))]
mod spool;

pub use crate::error::ReadError;
pub use parallel::{lines_in_parallel, BlockLines};
pub use reader::{Block, Reader};
#[cfg(all(unix, not(loom), fuzzing))]
pub(crate) use spool::fuzz as fuzz_spool;
#[cfg(all(unix, not(loom)))]
pub(crate) use spool::{dead_processes, DeadProcess};

use crate::binary::decoder::{ArgKind, Decoded};
use crate::codec::Typed;
use crate::fields::{FieldValue, Fields};
use crate::format::pattern::{LineFormatter, Message, Pattern, RecordView};
use crate::record::TraceContext;
use crate::zone::TimeZone;
use crate::Level;

/// One record of a binary log, as [`Reader`] reads it.
///
/// ```
/// # let dir = std::env::temp_dir().join("tachylog-doc-read-record");
/// # let _ = std::fs::remove_dir_all(&dir);
/// # let options = tachylog::SinkOptions::new().format(tachylog::Format::Binary);
/// # let guard = tachylog::builder().file_with(dir.join("a.tlog"), options).init().unwrap();
/// tachylog::warn!(attempt = 2u64; "retrying {}", "upload");
/// # drop(guard);
/// # let mut reader = tachylog::read::Reader::open(dir.join("a.tlog")).unwrap();
/// let record = reader.next_record().unwrap().unwrap();
/// assert_eq!(record.level(), tachylog::Level::Warn);
/// assert_eq!(record.message(), "retrying upload");
/// assert_eq!(record.fields().get("attempt"), Some(tachylog::FieldValue::U64(2)));
/// assert_eq!(record.format(), Some("retrying {}"));
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
#[derive(Debug, Default, Clone)]
pub struct Record(Decoded);

impl Record {
    /// Nanoseconds since the Unix epoch (UTC).
    pub fn unix_nanos(&self) -> i64 {
        self.0.unix_nanos
    }

    /// The record's level.
    pub fn level(&self) -> Level {
        self.0.level
    }

    /// The module path of the call site, or the `log`/`tracing` target.
    pub fn target(&self) -> &str {
        match &self.0.site {
            Some(site) => &site.target,
            None => &self.0.target,
        }
    }

    /// The source file.
    pub fn file(&self) -> &str {
        match &self.0.site {
            Some(site) => &site.file,
            None => &self.0.file,
        }
    }

    /// The source line.
    pub fn line(&self) -> u32 {
        match &self.0.site {
            Some(site) => site.line,
            None => self.0.line,
        }
    }

    /// The OS id of the thread that logged it.
    pub fn thread_id(&self) -> u64 {
        self.0.thread.id
    }

    /// The name of the thread that logged it (`-` if it had none).
    pub fn thread_name(&self) -> &str {
        &self.0.thread.name
    }

    /// The message, unescaped, as the text line shows it (before its fields).
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The call site's format string as written, for a record of a tachylog macro.
    pub fn format(&self) -> Option<&str> {
        self.0.site.as_ref().map(|site| site.format.as_str())
    }

    /// The number of message values stored on their own (a call site's placeholders; none
    /// for a record stored as text).
    pub fn arg_count(&self) -> usize {
        self.0.args.len()
    }

    /// The `index`th message value: typed (an integer, a float, a `bool`) when the writer
    /// kept it as one (a number or `bool` under a spec the reader applies, such as `{}`,
    /// `{:.3}` or `{:>8}`, or a text that was an integer's decimal digits under `{}`), before
    /// its spec is applied; else its text, spec applied, as [`FieldValue::Str`] (an `f32` is
    /// widened to [`FieldValue::F64`]).
    pub fn arg(&self, index: usize) -> Option<FieldValue<'_>> {
        let (range, kind) = self.0.args.get(index)?;
        Some(match *kind {
            ArgKind::Typed(Typed::U64(v)) => FieldValue::U64(v),
            ArgKind::Typed(Typed::I64(v)) => FieldValue::I64(v),
            ArgKind::Typed(Typed::U128(v)) => FieldValue::U128(v),
            ArgKind::Typed(Typed::I128(v)) => FieldValue::I128(v),
            ArgKind::Typed(Typed::F64(v)) => FieldValue::F64(v),
            ArgKind::Typed(Typed::F32(v)) => FieldValue::F64(f64::from(v)),
            ArgKind::Typed(Typed::Bool(v)) => FieldValue::Bool(v),
            ArgKind::Text => FieldValue::Str(self.0.message.get(range.clone())?),
        })
    }

    /// The structured fields and spans, typed.
    pub fn fields(&self) -> &Fields {
        &self.0.fields
    }

    /// Whether a later process wrote it from the spool of one that died (`Builder::spool`).
    pub fn is_recovered(&self) -> bool {
        self.0.recovered
    }

    /// Whether it was written from the backtrace ring.
    pub fn is_backtrace(&self) -> bool {
        self.0.backtrace
    }

    /// The OpenTelemetry span it was logged in, if any.
    pub fn trace(&self) -> Option<TraceContext> {
        self.0.trace
    }
}

/// A decoded record as the formatters take it.
pub(crate) fn view_of(r: &crate::binary::decoder::Decoded) -> RecordView<'_> {
    let (target, file, line) = match &r.site {
        Some(site) => (site.target.as_str(), site.file.as_str(), site.line),
        None => (r.target.as_str(), r.file.as_str(), r.line),
    };
    RecordView {
        unix_nanos: r.unix_nanos,
        level: r.level,
        target,
        file,
        line,
        thread: &r.thread,
        message: Message::Decoded {
            text: &r.message,
            fields: &r.fields,
        },
        static_metadata: r.static_metadata,
        backtrace: r.backtrace,
        recovered: r.recovered,
        trace: r.trace,
    }
}

/// Lines a [`Record`] the way a sink writes it: the text line of a [`Pattern`], a JSON line or
/// a logfmt line, with the same code as the logger, so the bytes are those the logger would
/// have written with that format, pattern and time zone (control characters escaped, as by
/// default).
///
/// ```
/// let text = tachylog::read::Renderer::text(
///     tachylog::Pattern::parse("{level} {message}").unwrap(),
///     tachylog::TimeZone::utc(),
/// );
/// let json = tachylog::read::Renderer::json(tachylog::TimeZone::utc());
/// # drop((text, json));
/// ```
pub struct Renderer {
    formatter: LineFormatter,
    kind: Kind,
}

enum Kind {
    Text,
    Json,
    Logfmt,
}

impl Renderer {
    /// The text line of `pattern`, times in `zone`.
    pub fn text(pattern: Pattern, zone: TimeZone) -> Self {
        Renderer {
            formatter: LineFormatter::new(pattern, zone, true),
            kind: Kind::Text,
        }
    }

    /// JSON lines, times in `zone`.
    pub fn json(zone: TimeZone) -> Self {
        Renderer {
            formatter: LineFormatter::new(Pattern::default(), zone, true),
            kind: Kind::Json,
        }
    }

    /// logfmt lines, times in `zone`.
    pub fn logfmt(zone: TimeZone) -> Self {
        Renderer {
            formatter: LineFormatter::new(Pattern::default(), zone, true),
            kind: Kind::Logfmt,
        }
    }

    /// Appends `record`'s line, newline included, to `out`.
    pub fn render(&mut self, record: &Record, out: &mut Vec<u8>) {
        self.render_decoded(&record.0, out);
    }

    pub(crate) fn render_decoded(
        &mut self,
        r: &crate::binary::decoder::Decoded,
        out: &mut Vec<u8>,
    ) {
        let view = view_of(r);
        match self.kind {
            Kind::Text => match &r.site {
                Some(site) => {
                    let site = (site.serial, r.clean_message);
                    self.formatter
                        .format_read_site(&view, site, &r.message, &r.fields, out)
                }
                None => self
                    .formatter
                    .format(&view, &r.message, &r.fields, false, out),
            },
            Kind::Json => self
                .formatter
                .format_json(&view, &r.message, &r.fields, None, out),
            Kind::Logfmt => self
                .formatter
                .format_logfmt(&view, &r.message, &r.fields, None, out),
        }
    }
}
