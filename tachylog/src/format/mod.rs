//! Turning records into text, on the back end: the text line [`pattern`], [`json`] lines and
//! [`logfmt`], the cached date-time ([`time`]) and the escaping that keeps one record on one line
//! ([`escape`]).
//!
//! Layer 4 (see `ARCHITECTURE.md`): imports layers 1 to 3 (the record layout, decoding,
//! thread names); never a sink or the worker.

pub(crate) mod escape;
pub(crate) mod fields;
pub(crate) mod json;
pub(crate) mod logfmt;
mod message;
pub(crate) mod pattern;
mod quote;
mod segments;
pub(crate) mod time;
mod view;

/// How a sink's lines are written. Set per sink with
/// [`Builder::sink_format`](crate::Builder::sink_format).
///
/// ```
/// let dir = std::env::temp_dir().join("tachylog-doc-format");
/// let guard = tachylog::builder()
///     .stdout()                                   // text, the default
///     .file(dir.join("app.jsonl"))
///     .sink_format(tachylog::Format::Json)        // this file gets JSON lines
///     .init()
///     .unwrap();
/// tachylog::info!("served {} items", 3);
/// drop(guard);
/// let line = std::fs::read_to_string(dir.join("app.jsonl")).unwrap();
/// assert!(line.contains(r#""message":"served 3 items""#));
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// The text line of the [`Pattern`](crate::Pattern) (the default).
    #[default]
    Text,
    /// One JSON object per line: RFC 3339 `timestamp`, `level`, `target`, `file`, `line`,
    /// `thread`, `tid`, `message`, then `fields` (an object of the structured fields, with
    /// native JSON types) and `spans` when the record has them. Valid JSON for every input.
    Json,
    /// logfmt: `ts=... level=info target=... thread=... tid=... msg="..." key=value ...
    /// file=... line=...`, the structured fields after `msg`.
    Logfmt,
}
