//! Turning records into text, on the back end: the text line [`pattern`], [`json`] lines and
//! [`logfmt`], the cached date-time ([`time`]) and the escaping that keeps one record on one line
//! ([`escape`]); and a call-site record read back without its writer's code, from its shape
//! ([`shaped`]).
//!
//! # The fast path
//!
//! **What a call site emits.** `info!("took {:.3} ms: {}", ms, path)` compiles to a
//! `static` [`Site`](crate::record::Site) holding plain data: level, target, file, line, and
//! the message as a table, one entry per placeholder with the literal text before it (also
//! zero-padded to 16 bytes when it fits, so the back end copies it with one fixed-width store),
//! its width and precision (literal, or "read a `usize` from the record") and whether it is a
//! plain `{}`, worked out at compile time; and the fields' keys.
//! How to read the arguments comes from their types: `Args::DECODE`, a constant of the
//! arguments' tuple type listing one *renderer* per argument
//! (`codec::render::display::<CopyCodec<f64>>`), so every call site that logs `(f64, &str)`
//! with `{}` and `{}` shares one, and each record carries its address beside the site's.
//! Renderers are generic over the argument's codec and the formatting trait only. When the
//! arguments are message values only (no field, no `{:.*}` count: most calls), the constant
//! is a `Decode::Rendered` group, which adds one function for the whole tuple type: it renders
//! each value after its placeholder's literal text through the value's renderer, called
//! directly (inlined) rather than through a pointer per argument; it also says whether every
//! value's text is escape-free (numbers and `bool`). The code a
//! call site emits is the arguments' evaluation, their slots and one call of `log_record`
//! (shared by every site with the same argument types), plus a one-line `write!` for a
//! placeholder with flags (`{:>8}`, `{:+}`, `{:#x}`, `{:08.2}`), since fill, alignment and
//! flags cannot be given to `core::fmt` at run time. The macro still runs the string through
//! `format_args!` in dead code, for the compiler's own checks.
//!
//! **What the back end does per record** (`message`, then `pattern::LineFormatter`'s
//! `format_site` for a call-site record's text line, `format` for the rest):
//! 1. for a `Decode::Rendered` group as long as the site's table, calls its one function;
//!    otherwise walks the record's `Decode` beside the site's table. Either way each literal
//!    piece is copied, the counts are read (a `{}` gets a constant plain spec), and the
//!    renderer offers the bytes to the codec's fast path first:
//!    - integers written in place (`codec::decimal`; `itoa` for 128 bits); `bool`, `char` and
//!      text copied;
//!    - floats that are short decimals (at most four places) through the integer path (the
//!      digits written once, the point slid in before the last ones), the others through
//!      `zmij`'s shortest digits, laid out as `std` does for `{}` and `{:?}`, and rounded
//!      exactly for `{:.N}` when the shortest digits decide it (`codec::plain`);
//!    - text the caller already formatted copied as it is;
//! 2. builds the line from the compiled pattern (`segments`): the date-time prefix, rebuilt
//!    once a second with only the microseconds written per record (`time`); for a call-site
//!    record, everything else but the message laid out once per (thread, call site)
//!    (`site_lines`: for the default pattern, ` INFO  [name/tid] target: ` and
//!    ` (file:line)` with the newline); for other records, the level, the thread's run
//!    (`[name/tid] `) rendered once per thread, and the target and file; and the message,
//!    whose escaping first checks sixteen bytes at a time whether any byte may need it
//!    (`escape`). A call-site message is not scanned at all when its values are escape-free
//!    and the site's own text (literal pieces, tail, no fill character) was found clean when
//!    its line plan was made;
//! 3. with one file as the only sink, all of it is written straight into the file's batch
//!    buffer, the call-site message included (renderers append to a `codec::TextBuf`, an
//!    append-only UTF-8 view of that buffer; the message is scanned for escaping where it
//!    landed and rewritten only when it needs it), and short pieces are copied without a
//!    call to `memcpy` (`codec::short_copy`).
//!
//! **When `core::fmt` is still used**: a spec with width, fill, alignment, sign, `#` or `0`;
//! the hex, octal, binary, exponent and pointer traits; `{:?}` of text and `char` (escaping);
//! a precision on anything but a float; user types (`CopyArg` impls) and the `std` types
//! without a fast path (`Duration`, addresses, `NonZero*`, `Option`, lists); a float whose
//! shortest digits are an exact tie or whose `{:.N}` the shortest digits do not decide. That
//! path runs under a panic guard, the only one per record; the fast path cannot panic.
//! Byte identity with `format!` is checked by property tests
//! (`tests/plain_formatting_matches_std.rs`, `tests/messages_format_like_std.rs`).
//!
//! Layer 4 (see `ARCHITECTURE.md`): imports layers 1 to 3 (the record layout, decoding,
//! thread names); never a sink or the worker.

pub(crate) mod escape;
pub(crate) mod fields;
pub(crate) mod json;
pub(crate) mod line_shape;
pub(crate) mod logfmt;
pub(crate) mod message;
pub(crate) mod pattern;
mod quote;
mod segments;
// The spool's recovery is its caller (and the fuzz target `spool_args`); a build without the
// spool has no other.
#[allow(dead_code)]
pub(crate) mod shaped;
mod site_lines;
pub(crate) mod time;
mod view;

pub use line_shape::{LineKey, LineShape};
pub(crate) use segments::AddressHasher;

/// How a sink's lines are written. Set per sink with
/// [`SinkOptions::format`](crate::SinkOptions::format).
///
/// ```
/// use tachylog::{Format, SinkOptions};
/// let dir = std::env::temp_dir().join("tachylog-doc-format");
/// let guard = tachylog::builder()
///     .stdout() // text, the default
///     .file_with(dir.join("app.jsonl"), SinkOptions::new().format(Format::Json))
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
    /// The binary log (file sinks of [`Builder::file_with`](crate::Builder::file_with) only):
    /// each call site's static parts once per block, then per record a site reference, a time
    /// delta, a thread reference and the values; read back with [`crate::read`] or the
    /// `tachylog` command, which render the same text lines.
    ///
    /// ```
    /// use tachylog::{Format, SinkOptions};
    /// let dir = std::env::temp_dir().join("tachylog-doc-format-binary");
    /// let guard = tachylog::builder()
    ///     .file_with(dir.join("app.tlog"), SinkOptions::new().format(Format::Binary))
    ///     .init()
    ///     .unwrap();
    /// tachylog::info!("served {} items", 3);
    /// drop(guard);
    /// let mut reader = tachylog::read::Reader::open(dir.join("app.tlog")).unwrap();
    /// assert_eq!(reader.next_record().unwrap().unwrap().message(), "served 3 items");
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    Binary,
}
