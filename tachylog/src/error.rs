//! Errors of setting the logger up. Logging itself never returns errors: sink failures are
//! reported on stderr and counted (see [`crate::Sink`]).
//!
//! Layer 1 (see `ARCHITECTURE.md`): imports nothing from the crate. Every error type lives here,
//! including those of the parsers further up (line patterns, file-name patterns, filters), so
//! that any layer can return [`Error`] and `Error` can wrap them without an import going up.

use std::path::PathBuf;

/// Why [`Builder::init`](crate::Builder::init) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A logger is already running in this process; drop its guard first.
    #[error("tachylog is already initialised in this process; drop the existing guard before calling init again")]
    AlreadyInitialized,
    /// A log file (or its directory) could not be created or opened.
    #[error("cannot open log file {path}: {source}{}", open_file_hint(source))]
    OpenFile {
        /// The file's path.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The line pattern is invalid.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// A [`RollingFile`](crate::RollingFile) file-name pattern is invalid.
    #[cfg(feature = "rolling")]
    #[error(transparent)]
    FileNamePattern(#[from] FileNamePatternError),
    /// A filter directive given in code is invalid.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The back end's thread could not be started.
    #[error("cannot start a tachylog thread: {0}")]
    SpawnWorker(#[source] std::io::Error),
    /// Another logger already holds the `log` crate's global slot, and the builder was told to
    /// take it ([`LogFacade::Required`](crate::LogFacade::Required), the default).
    #[error("another logger already holds the `log` crate's global logger (set_logger was called before tachylog's init), so log::info! records would bypass tachylog; call .log_facade(LogFacade::Off) to leave the slot to it (a tracing-subscriber stack with tracing-log forwards them to tachylog::tracing_layer()), or .log_facade(LogFacade::BestEffort) to start anyway")]
    LogSlotTaken,
    /// The local time zone could not be determined.
    #[error("cannot determine the local time zone ({0}); set TZ or use .utc(true)")]
    TimeZone(String),
    /// [`Format::Binary`](crate::Format::Binary) was asked of a sink that cannot take it: only
    /// a file sink added with [`Builder::file_with`](crate::Builder::file_with) writes the
    /// binary log.
    #[error("sink {sink} cannot write Format::Binary: only a file added with Builder::file_with writes the binary log; give this sink Format::Text, Json or Logfmt")]
    BinaryNeedsFile {
        /// The sink's description.
        sink: String,
    },
    /// A time zone asked for by name, rule or offset does not exist.
    #[error("time zone {zone:?}: {reason}")]
    BadTimeZone {
        /// The name, rule or offset asked for.
        zone: String,
        /// Why it cannot be used.
        reason: String,
    },
}

/// What to check, for the errors a directory or the path's kind explains; other errors (a
/// FIFO no one reads, a full disk) say their own cause.
fn open_file_hint(source: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as Kind;
    match source.kind() {
        Kind::PermissionDenied
        | Kind::IsADirectory
        | Kind::NotADirectory
        | Kind::ReadOnlyFilesystem => {
            " (check that the directory is writable and the path is not a directory)"
        }
        _ => "",
    }
}

/// Why a binary log could not be read, or where it was damaged
/// ([`read::Reader`](crate::read::Reader)).
///
/// ```
/// use tachylog::read::{ReadError, Reader};
/// let mut reader = Reader::new(&b"text where a block should be"[..]);
/// match reader.next_record() {
///     Some(Err(ReadError::Damaged { offset, skipped, .. })) => assert_eq!((offset, skipped), (0, 28)),
///     _ => unreachable!("damage is reported"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Bytes that are not an intact block: a torn or partial write, a flipped bit, other data.
    /// The reader skipped them and goes on at the next intact block, if there is one.
    #[error(
        "damaged binary log at byte {offset}: {reason}; {skipped} bytes skipped{}",
        if *.to_end { ", up to the end: no intact block follows" } else { "" }
    )]
    Damaged {
        /// Where the damage starts, in bytes from the start of the source.
        offset: u64,
        /// What was found there.
        reason: &'static str,
        /// Bytes skipped.
        skipped: u64,
        /// Whether the damage runs to the end of the source: no intact block follows it.
        to_end: bool,
    },
    /// The file could not be opened.
    #[error("cannot open binary log {path}: {source}")]
    Open {
        /// The file's path.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// Reading failed; nothing more is read from this source.
    #[error("cannot read the binary log: {0}")]
    Io(#[source] std::io::Error),
}

/// A line pattern ([`Pattern`](crate::Pattern)) that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid line pattern {pattern:?}: {reason}")]
pub struct PatternError {
    pub(crate) pattern: String,
    pub(crate) reason: String,
}

/// Why a [`RollingFile`](crate::RollingFile) file-name pattern was refused.
#[cfg(feature = "rolling")]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid file-name pattern {pattern:?}: {reason}")]
pub struct FileNamePatternError {
    pub(crate) pattern: String,
    pub(crate) reason: String,
}

/// Why a filter string ([`Filter`](crate::Filter)) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid log filter directive {directive:?}: {reason}")]
pub struct FilterError {
    pub(crate) directive: String,
    pub(crate) reason: String,
}

/// Why a record could not be read back from its call site's data and its arguments' shape
/// (`codec/SHAPES.md`), as recovering a record another process left behind does. Each names
/// where the bad byte or placeholder is, so that a damaged spool can be reported precisely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[allow(dead_code)] // Its producers' caller is the spool's recovery.
pub(crate) enum ShapeError {
    /// The shape bytes are malformed.
    #[error("malformed argument shape at byte {offset}: {reason}")]
    Shape {
        /// Where in the shape.
        offset: usize,
        /// What was wrong.
        reason: &'static str,
    },
    /// The call site's format string could not be split into literal text and placeholders.
    #[error("malformed format string at byte {offset}: {reason}")]
    Format {
        /// Where in the format string.
        offset: usize,
        /// What was wrong.
        reason: &'static str,
    },
    /// A placeholder's spec (what follows `:`) could not be parsed.
    #[error("placeholder {placeholder} has an unreadable spec {spec:?}: {reason}")]
    Spec {
        /// Its index in the message.
        placeholder: usize,
        /// The spec's text.
        spec: String,
        /// What was wrong.
        reason: &'static str,
    },
    /// The shape's slots do not fit the call site's placeholders and fields.
    #[error("slot {slot} of the shape does not fit the call site: {reason}")]
    Mismatch {
        /// The slot's index in the shape.
        slot: usize,
        /// What does not fit.
        reason: &'static str,
    },
    /// The record's argument bytes are malformed for its shape.
    #[error("malformed argument bytes at byte {offset} (slot {slot}): {reason}")]
    Args {
        /// The slot being read.
        slot: usize,
        /// Where in the argument bytes.
        offset: usize,
        /// What was wrong.
        reason: &'static str,
    },
}
