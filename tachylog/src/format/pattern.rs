//! The line layout: a pattern such as the default
//! `{time} {level} [{thread}/{tid}] {target}: {message} ({file}:{line})`, parsed once at
//! `init` into pieces and applied to every record.

use super::escape::EscapingWriter;
use super::line_shape::{CompiledShape, LineShape};
use super::message::Problem;
use super::segments::Segment;
use super::site_lines::{LinePlan, Step};
use super::time::TimeCache;
pub(crate) use super::view::{Message, RecordView, SiteMessage};
use crate::codec::render::RenderError;
use crate::codec::short_copy::append_bytes;
use crate::codec::TextBuf;
use crate::fields::Fields;
use crate::record::{Decode, Site};
#[cfg(feature = "color")]
use crate::Level;
use std::fmt::Write as _;

/// The default line pattern.
pub const DEFAULT_PATTERN: &str =
    "{time} {level} [{thread}/{tid}] {target}: {message} ({file}:{line})";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    Text(String),
    Time,
    Level,
    Thread,
    ThreadId,
    Target,
    Message,
    File,
    Line,
}

/// A parsed line pattern.
///
/// Placeholders: `{time}` (local or UTC date-time with microseconds), `{level}` (padded to five
/// characters), `{thread}` (thread name, `-` if none, cut to 64 characters), `{tid}` (OS thread
/// id), `{target}` (module path, or the `log` target), `{message}`, `{file}`, `{line}`. `{{`
/// and `}}` are literal braces. A newline is always appended. `{message}` includes the
/// record's structured fields, as ` key=value` after the text, and the spans of a `tracing`
/// event, as `outer{id=7}:inner: ` before it.
#[derive(Debug, Clone)]
pub struct Pattern {
    pieces: Vec<Piece>,
}

pub use crate::error::PatternError;

impl Pattern {
    /// Parses a pattern.
    ///
    /// ```
    /// let p = tachylog::Pattern::parse("{level} {message}").unwrap();
    /// assert!(tachylog::Pattern::parse("{nope}").is_err());
    /// # drop(p);
    /// ```
    pub fn parse(pattern: &str) -> Result<Pattern, PatternError> {
        let err = |reason: String| PatternError {
            pattern: pattern.to_string(),
            reason,
        };
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut rest = pattern;
        while let Some(c) = rest.chars().next() {
            if rest.starts_with("{{") || rest.starts_with("}}") {
                text.push(c);
                rest = &rest[2..];
            } else if c == '{' {
                let end = rest
                    .find('}')
                    .ok_or_else(|| err("unterminated `{`".into()))?;
                let piece = match &rest[1..end] {
                    "time" => Piece::Time,
                    "level" => Piece::Level,
                    "thread" => Piece::Thread,
                    "tid" => Piece::ThreadId,
                    "target" | "module" => Piece::Target,
                    "message" => Piece::Message,
                    "file" => Piece::File,
                    "line" => Piece::Line,
                    other => {
                        return Err(err(format!(
                            "unknown placeholder {{{other}}}; known: time, level, thread, tid, \
                             target, message, file, line"
                        )))
                    }
                };
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(piece);
                rest = &rest[end + 1..];
            } else if c == '}' {
                return Err(err("unmatched `}` (write `}}` for a literal brace)".into()));
            } else {
                text.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Pattern { pieces })
    }
}

impl Pattern {
    pub(super) fn pieces(&self) -> &[Piece] {
        &self.pieces
    }
}

impl Default for Pattern {
    fn default() -> Self {
        Pattern::parse(DEFAULT_PATTERN).expect("the default pattern parses")
    }
}

/// The ANSI colour of a level on a terminal: red errors, yellow warnings, green info, blue
/// debug, grey trace.
#[cfg(feature = "color")]
fn level_color(level: Level) -> &'static str {
    match level {
        Level::Error => "\x1b[1;31m",
        Level::Warn => "\x1b[33m",
        Level::Info => "\x1b[32m",
        Level::Debug => "\x1b[34m",
        Level::Trace => "\x1b[90m",
    }
}

/// Applies a [`Pattern`] to records. Owned by the back end.
pub(crate) struct LineFormatter {
    /// The pattern, compiled with its caches of thread and site runs.
    segments: Vec<Segment>,
    /// Call-site records' lines laid out per (thread, site).
    site_lines: super::site_lines::SiteLines,
    time: TimeCache,
    escape: bool,
    /// Bytes of formatted message kept before the rest is cut off (`usize::MAX`: no limit).
    max_message: usize,
    /// The default shapes of JSON and logfmt lines, for sinks that give none.
    default_json: CompiledShape,
    default_logfmt: CompiledShape,
}

impl LineFormatter {
    pub(crate) fn new(pattern: Pattern, zone: crate::zone::TimeZone, escape: bool) -> Self {
        LineFormatter {
            segments: super::segments::compile(pattern.pieces()),
            site_lines: Default::default(),
            time: TimeCache::new(zone),
            default_json: LineShape::new().compile(false),
            default_logfmt: LineShape::new().compile(true),
            escape,
            max_message: usize::MAX,
        }
    }

    /// Cuts messages longer than `bytes`, saying so in the message.
    pub(crate) fn limit_message(&mut self, bytes: usize) {
        self.max_message = bytes;
    }

    /// Formats the record's message, unescaped, into `out`, and decodes its structured fields
    /// into `fields` (both cleared first). The message is decoded from its call site's argument
    /// bytes, or is a marker naming the call site if the user's formatting code panicked or
    /// failed; it is cut to the configured limit, and so is each field's text.
    pub(crate) fn render_message(
        &self,
        message: &Message<'_>,
        out: &mut String,
        fields: &mut Fields,
    ) {
        render_message(message, out, fields, self.max_message);
    }

    /// Appends the record's text line, newline included, to `out`; `message` is the record's
    /// message from [`LineFormatter::render_message`].
    /// With `colored`, the level is wrapped in an ANSI colour (for a terminal; only the `color`
    /// feature asks for it, and without it the colouring code is not compiled).
    /// Structured fields follow the message as ` key=value`, and the spans it was logged in
    /// precede it as `outer{id=7}:inner: ` (see [`super::fields`]).
    pub(crate) fn format(
        &mut self,
        record: &RecordView<'_>,
        message: &str,
        fields: &Fields,
        colored: bool,
        out: &mut Vec<u8>,
    ) {
        debug_assert!(
            !colored || cfg!(feature = "color"),
            "colour asked for without the feature"
        );
        let escape = self.escape;
        out.reserve(96 + message.len() + record.target.len() + record.file.len());
        for segment in &mut self.segments {
            match segment {
                Segment::Text(t) => out.extend_from_slice(t.as_bytes()),
                Segment::Time => self.time.write(record.unix_nanos, out),
                #[cfg(feature = "color")]
                Segment::Level if colored => {
                    out.extend_from_slice(level_color(record.level).as_bytes());
                    out.extend_from_slice(record.level.padded().as_bytes());
                    out.extend_from_slice(b"\x1b[0m");
                }
                Segment::Level => out.extend_from_slice(record.level.padded().as_bytes()),
                Segment::Thread(run) => run.write(record, escape, out),
                Segment::Site(run) => run.write(record, escape, out),
                Segment::Message => write_message(record, message, fields, escape, out),
            }
        }
        out.push(b'\n');
    }

    /// [`LineFormatter::format`] without colour for a record read back from a binary log whose
    /// call site, as the reader defined it, has the serial number `site`: the line's constant
    /// parts are laid out once per (thread, site), as the back end lays out its own call-site
    /// records' lines ([`super::site_lines`]). The serial is never reused, so a plan cannot
    /// outlive the site it was laid out for. With `clean`, the message is known to need no
    /// escaping, and is not scanned.
    pub(crate) fn format_read_site(
        &mut self,
        record: &RecordView<'_>,
        (site, clean): (u64, bool),
        message: &str,
        fields: &Fields,
        out: &mut Vec<u8>,
    ) {
        out.reserve(128 + message.len());
        let escape = self.escape;
        // A serial wider than `usize` (a 32-bit reader past 2^32 sites defined) wraps; the
        // plan it could meet was dropped long before (the cache holds at most 16,384).
        let plan = self
            .site_lines
            .plan(&mut self.segments, record, site as usize, escape);
        let message_escape = escape && !clean;
        write_planned(plan, &mut self.time, record.unix_nanos, out, |out| {
            write_message(record, message, fields, message_escape, out)
        });
    }

    /// Appends the text line of a call-site record, newline included: the same bytes as
    /// [`LineFormatter::render_message`] followed by [`LineFormatter::format`] without colour,
    /// in one pass that sinks can point at their own buffer. `message` is scratch space for the
    /// message; `fields` receives the record's structured fields, as `render_message` fills it.
    pub(crate) fn format_site(
        &mut self,
        record: &RecordView<'_>,
        site_message: &SiteMessage<'_>,
        fields: &mut Fields,
        message: &mut String,
        out: &mut Vec<u8>,
    ) {
        fields.clear();
        fields.limit_values(self.max_message);
        let (escape, max_message) = (self.escape, self.max_message);
        out.reserve(128 + record.target.len() + record.file.len());
        let plan = self.site_lines.plan(
            &mut self.segments,
            record,
            site_message.site as *const Site as usize,
            escape,
        );
        // Numbers and clean literal text cannot need escaping: no scan of the message then
        // (the scan costs 46 instructions per record, callgrind,
        // `tachylog-bench --only tachylog,backend_iteration`).
        let clean = plan.site_text_clean()
            && matches!(
                site_message.decode,
                Decode::Rendered {
                    escape_free: true,
                    ..
                }
            );
        write_planned(plan, &mut self.time, record.unix_nanos, out, |out| {
            let settings = (escape, clean, max_message);
            write_site_message(record, site_message, fields, message, settings, out)
        });
    }

    /// Appends the record as one JSON object and a newline (see [`super::json`]), in `shape`
    /// or the default one.
    pub(crate) fn format_json(
        &mut self,
        record: &RecordView<'_>,
        message: &str,
        fields: &Fields,
        shape: Option<&CompiledShape>,
        out: &mut Vec<u8>,
    ) {
        let shape = shape.unwrap_or(&self.default_json);
        super::json::write_record(record, message, fields, shape, &mut self.time, out);
    }

    /// Appends the record as one logfmt line (see [`super::logfmt`]), in `shape` or the
    /// default one.
    pub(crate) fn format_logfmt(
        &mut self,
        record: &RecordView<'_>,
        message: &str,
        fields: &Fields,
        shape: Option<&CompiledShape>,
        out: &mut Vec<u8>,
    ) {
        let shape = shape.unwrap_or(&self.default_logfmt);
        super::logfmt::write_record(record, message, fields, shape, &mut self.time, out);
    }
}

/// Appends a line laid out by its `plan`: the plan's constant text, the date-time of
/// `unix_nanos`, and what `message` appends.
#[inline(always)]
fn write_planned(
    plan: &LinePlan,
    time: &mut TimeCache,
    unix_nanos: i64,
    out: &mut Vec<u8>,
    mut message: impl FnMut(&mut Vec<u8>),
) {
    // The plan's text ends with the line's newline.
    if let Some(layout) = plan.time_then_message() {
        // Empty in the default pattern, which starts with the date-time: the copy's length
        // checks cost 14 instructions per record.
        if !layout.before.is_empty() {
            append_bytes(out, layout.before);
        }
        time.write(unix_nanos, out);
        append_bytes(out, layout.between);
        message(out);
        append_bytes(out, layout.after);
    } else {
        for (step, text) in plan.steps() {
            match step {
                Step::Text { .. } => append_bytes(out, text),
                Step::Time => time.write(unix_nanos, out),
                Step::Message => message(out),
            }
        }
    }
}

/// The message part of a text line whose message is already rendered: the backtrace and
/// recovery marks, the span path, the message (escaped), its fields as pairs, its trace ids.
#[inline]
fn write_message(
    record: &RecordView<'_>,
    message: &str,
    fields: &Fields,
    escape: bool,
    out: &mut Vec<u8>,
) {
    if record.backtrace {
        out.extend_from_slice(b"[backtrace] ");
    }
    if record.recovered {
        out.extend_from_slice(b"[recovered] ");
    }
    let fieldless = fields.holds_nothing();
    if !fieldless && super::fields::write_span_path(fields, out) {
        out.extend_from_slice(b": ");
    }
    let _ = EscapingWriter {
        out: &mut *out,
        escape,
    }
    .write_str(message);
    if !fieldless {
        super::fields::write_pairs(fields, out);
    }
    if let Some(trace) = &record.trace {
        crate::record::write_trace_pairs(trace, out);
    }
}

/// The message part of a call-site record's text line: the message rendered in place, then
/// scanned (the rare message that needs escaping is escaped through `scratch`), its fields as
/// pairs, its trace ids. `escape` and `max_message` are the formatter's settings; `clean`
/// says that the message, if rendered, cannot need escaping.
#[inline(always)]
fn write_site_message(
    record: &RecordView<'_>,
    site_message: &SiteMessage<'_>,
    fields: &mut Fields,
    scratch: &mut String,
    (escape, clean, max_message): (bool, bool, usize),
    out: &mut Vec<u8>,
) {
    if record.backtrace {
        out.extend_from_slice(b"[backtrace] ");
    }
    let start = out.len();
    let rendered = render_site_message(site_message, fields, max_message, &mut TextBuf::new(out));
    // A failed rendering's marker quotes the format string and a panic message: scanned.
    if escape && !(clean && rendered) && super::escape::may_need_escape(&out[start..]) {
        escape_tail(out, start, scratch);
    }
    // A call site's fields are pairs; spans come only with `tracing` events. Most sites have
    // none: no call then (the call costs 2% of a record's instructions).
    if !site_message.site.fields.is_empty() {
        super::fields::write_pairs(fields, out);
    }
    if let Some(trace) = &record.trace {
        crate::record::write_trace_pairs(trace, out);
    }
}

/// Appends a call-site record's message to `text` and records its fields in `fields`; a
/// failed rendering leaves a marker naming the call site instead, and a message longer than
/// `max_message` bytes is cut.
#[inline]
fn render_site_message(
    site_message: &SiteMessage<'_>,
    fields: &mut Fields,
    max_message: usize,
    text: &mut TextBuf<'_>,
) -> bool {
    let start = text.len();
    let rendered = match super::message::render(site_message, text, fields) {
        Ok(()) => true,
        Err(problem) => {
            text.truncate(start);
            write_problem(problem, site_message.site, text);
            false
        }
    };
    cut_message(text, start, max_message);
    rendered
}

/// [`LineFormatter::render_message`] with the limit `max_message`: also what the binary log
/// stores of a record without a call site.
pub(crate) fn render_message(
    message: &Message<'_>,
    out: &mut String,
    fields: &mut Fields,
    max_message: usize,
) {
    out.clear();
    fields.clear();
    fields.limit_values(max_message);
    let mut text = TextBuf::of_string(out);
    match message {
        Message::Text(message) => text.push_str(message),
        Message::Dynamic {
            text: message,
            fields: encoded,
        } => {
            text.push_str(message);
            crate::fields::wire::decode(encoded, fields);
        }
        Message::Decoded {
            text: message,
            fields: decoded,
        } => {
            text.push_str(message);
            fields.clone_from(decoded);
            fields.limit_values(max_message);
        }
        Message::Site(site_message) => {
            render_site_message(site_message, fields, max_message, &mut text);
            return;
        }
    }
    cut_message(&mut text, 0, max_message);
}

/// Escapes the text line's message, `out[start..]`, in place, through `scratch`.
#[cold]
fn escape_tail(out: &mut Vec<u8>, start: usize, scratch: &mut String) {
    scratch.clear();
    // The message is text a `TextBuf` appended, so this copies it as it is.
    scratch.push_str(&String::from_utf8_lossy(&out[start..]));
    out.truncate(start);
    let _ = EscapingWriter { out, escape: true }.write_str(scratch);
}

/// The marker that replaces a message whose rendering failed, naming its call site.
#[cold]
fn write_problem(problem: Problem, site: &Site, out: &mut TextBuf<'_>) {
    let problem = match problem {
        Problem::Malformed | Problem::Render(RenderError::Malformed) => {
            "malformed record".to_string()
        }
        Problem::Render(RenderError::Format) => {
            "a Display/Debug impl returned an error".to_string()
        }
        Problem::Render(RenderError::Panicked(panic)) => format!("formatting panicked: {panic}"),
    };
    let _ = write!(
        out,
        "<{problem}; call site {}:{} format {:?}>",
        site.file, site.line, site.format
    );
}

/// Cuts the message that starts at `start` in `text` to `max` bytes, on a character boundary,
/// and appends `…[truncated N bytes]`; a shorter message is left as it is.
#[inline]
fn cut_message(text: &mut TextBuf<'_>, start: usize, max: usize) {
    if text.len() - start > max {
        cut_long_message(text, start, max);
    }
}

#[cold]
fn cut_long_message(text: &mut TextBuf<'_>, start: usize, max: usize) {
    let cut = text.floor_boundary(start + max);
    let removed = text.len() - cut;
    text.truncate(cut);
    let _ = write!(text, "…[truncated {removed} bytes]");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::registry::ThreadInfo;
    use crate::Level;

    #[test]
    fn parses_the_default() {
        let p = Pattern::default();
        assert_eq!(p.pieces.len(), 16);
        assert_eq!(p.pieces[0], Piece::Time);
        assert_eq!(p.pieces[1], Piece::Text(" ".into()));
    }

    #[test]
    fn braces_and_errors() {
        let p = Pattern::parse("{{{level}}}").unwrap();
        assert_eq!(
            p.pieces,
            vec![
                Piece::Text("{".into()),
                Piece::Level,
                Piece::Text("}".into())
            ]
        );
        assert!(Pattern::parse("{level").is_err());
        assert!(Pattern::parse("}").is_err());
        let e = Pattern::parse("{bogus}").unwrap_err().to_string();
        assert!(e.contains("bogus") && e.contains("known"), "{e}");
    }

    #[test]
    fn formats_a_text_record() {
        let mut f = LineFormatter::new(Pattern::default(), crate::zone::TimeZone::utc(), true);
        let thread = ThreadInfo::new("main".into(), 4211);
        let mut out = Vec::new();
        let record = RecordView {
            unix_nanos: 1_795_277_045_125_049_000,
            level: Level::Info,
            target: "app::net",
            file: "src/net.rs",
            line: 20,
            thread: &thread,
            message: Message::Text("two\nlines"),
            static_metadata: false,
            backtrace: false,
            recovered: false,
            trace: None,
        };
        let mut message = String::new();
        let mut fields = Fields::new();
        f.render_message(&record.message, &mut message, &mut fields);
        f.format(&record, &message, &fields, false, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2026-11-21 16:04:05.125049 INFO  [main/4211] app::net: two\\nlines (src/net.rs:20)\n"
        );
    }
}
