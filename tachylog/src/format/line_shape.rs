//! The shape of a sink's JSON or logfmt lines, as a collector expects them: keys renamed or
//! left out, static fields on every line, the record's fields and its spans' fields flattened.
//! [`LineShape`] is what the application gives; [`CompiledShape`] is what the back end writes with:
//! every key already quoted for its format and every static field already rendered, so a
//! shaped line costs the copies of a default one.

use super::quote::{write_string, write_value};
use crate::fields::{Field, Fields};

/// A key of a JSON or logfmt line that [`LineShape`] can rename or leave out.
///
/// ```
/// use tachylog::{LineKey, LineShape};
/// let shape = LineShape::new().rename(LineKey::Timestamp, "@timestamp");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LineKey {
    /// `timestamp` in JSON, `ts` in logfmt.
    Timestamp,
    /// `level`.
    Level,
    /// `target`.
    Target,
    /// `file`.
    File,
    /// `line`.
    Line,
    /// `thread`, the thread's name.
    Thread,
    /// `tid`, the thread's OS id.
    Tid,
    /// `message` in JSON, `msg` in logfmt.
    Message,
    /// `fields`, the object of the record's fields (JSON only: logfmt's fields are pairs).
    Fields,
    /// `spans`.
    Spans,
}

const KEYS: usize = 10;

impl LineKey {
    const ALL: [LineKey; KEYS] = [
        LineKey::Timestamp,
        LineKey::Level,
        LineKey::Target,
        LineKey::File,
        LineKey::Line,
        LineKey::Thread,
        LineKey::Tid,
        LineKey::Message,
        LineKey::Fields,
        LineKey::Spans,
    ];

    fn default_name(self, logfmt: bool) -> &'static str {
        match self {
            LineKey::Timestamp if logfmt => "ts",
            LineKey::Timestamp => "timestamp",
            LineKey::Level => "level",
            LineKey::Target => "target",
            LineKey::File => "file",
            LineKey::Line => "line",
            LineKey::Thread => "thread",
            LineKey::Tid => "tid",
            LineKey::Message if logfmt => "msg",
            LineKey::Message => "message",
            LineKey::Fields => "fields",
            LineKey::Spans => "spans",
        }
    }
}

/// How a sink's JSON or logfmt lines are shaped: given with the sink
/// ([`SinkOptions::shape`](crate::SinkOptions::shape)), fixed when the logger starts.
///
/// - [`rename`](LineShape::rename) a key (`timestamp` to `@timestamp`, `level` to `severity`,
///   `message` to `msg`) or [`omit`](LineShape::omit) it;
/// - [`static_field`](LineShape::static_field): `service`, `version`, `env` on every line,
///   right after the level;
/// - [`flatten_fields`](LineShape::flatten_fields): in JSON, the record's fields at the top
///   level instead of under `fields` (a field whose key the line already has, such as
///   `message`, is written as `fields.message`);
/// - [`flatten_spans`](LineShape::flatten_spans): the fields of the `tracing` spans the record
///   was logged in, written with the record's own fields (the record's own value wins, then
///   the innermost span's), and `spans` the span names alone, `request:db`.
///
/// The OpenTelemetry ids (`trace_id`, `span_id`, `trace_flags`) and the `backtrace` and
/// `recovered` marks keep their names. A text or binary sink ignores the shape.
///
/// ```
/// use tachylog::{Format, LineKey, LineShape, SinkOptions};
/// let dir = std::env::temp_dir().join("tachylog-doc-line-shape");
/// let shape = LineShape::new()
///     .rename(LineKey::Timestamp, "@timestamp")
///     .rename(LineKey::Level, "severity")
///     .omit(LineKey::File)
///     .omit(LineKey::Line)
///     .static_field("service", "shop")
///     .flatten_fields(true);
/// let options = SinkOptions::new().format(Format::Json).shape(shape);
/// let guard = tachylog::builder().file_with(dir.join("app.jsonl"), options).init().unwrap();
/// tachylog::info!(user_id = 42u64; "paid");
/// drop(guard);
/// let line = std::fs::read_to_string(dir.join("app.jsonl")).unwrap();
/// assert!(line.starts_with(r#"{"@timestamp":"#));
/// assert!(line.contains(r#","severity":"INFO","service":"shop","target":"#));
/// assert!(line.ends_with("\"message\":\"paid\",\"user_id\":42}\n"));
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use = "a shape does nothing until given with a sink's options"]
pub struct LineShape {
    /// Per key (in [`LineKey::ALL`]'s order): `None` for the default name, `Some(None)` when
    /// left out, `Some(Some(name))` when renamed.
    names: [Option<Option<String>>; KEYS],
    statics: Vec<(String, String)>,
    flatten_fields: bool,
    flatten_spans: bool,
}

impl LineShape {
    /// The default shape: every key under its usual name, nothing added, nothing flattened.
    ///
    /// ```
    /// assert_eq!(tachylog::LineShape::new(), tachylog::LineShape::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes `key` under `name`. In logfmt, characters a key cannot hold (space, `=`, `"`,
    /// controls) become `_`.
    ///
    /// ```
    /// use tachylog::{LineKey, LineShape};
    /// let shape = LineShape::new().rename(LineKey::Message, "msg");
    /// ```
    pub fn rename(mut self, key: LineKey, name: impl Into<String>) -> Self {
        self.names[key as usize] = Some(Some(name.into()));
        self
    }

    /// Leaves `key` out of every line.
    ///
    /// ```
    /// use tachylog::{LineKey, LineShape};
    /// let shape = LineShape::new().omit(LineKey::Thread).omit(LineKey::Tid);
    /// ```
    pub fn omit(mut self, key: LineKey) -> Self {
        self.names[key as usize] = Some(None);
        self
    }

    /// Adds `key` with the string `value` to every line, after the level, in the order given.
    ///
    /// ```
    /// let shape = tachylog::LineShape::new().static_field("service", "shop").static_field("env", "prod");
    /// ```
    pub fn static_field(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.statics.push((key.into(), value.into()));
        self
    }

    /// In JSON, writes the record's fields at the top level of the object instead of in a
    /// `fields` object (logfmt's fields are always pairs on the line).
    ///
    /// ```
    /// let shape = tachylog::LineShape::new().flatten_fields(true);
    /// ```
    pub fn flatten_fields(mut self, flatten: bool) -> Self {
        self.flatten_fields = flatten;
        self
    }

    /// Writes the fields of the record's `tracing` spans with its own fields, each key once
    /// (the record's own value first, then the innermost span's), and `spans` as the span
    /// names alone (`request:db`).
    ///
    /// ```
    /// let shape = tachylog::LineShape::new().flatten_spans(true);
    /// ```
    pub fn flatten_spans(mut self, flatten: bool) -> Self {
        self.flatten_spans = flatten;
        self
    }

    /// The shape compiled for JSON (`logfmt` false) or logfmt lines.
    pub(crate) fn compile(&self, logfmt: bool) -> CompiledShape {
        let mut keys: [Option<Box<[u8]>>; KEYS] = Default::default();
        let mut top_level = Vec::new();
        for key in LineKey::ALL {
            let name = match &self.names[key as usize] {
                None => Some(key.default_name(logfmt)),
                Some(name) => name.as_deref(),
            };
            if let Some(name) = name {
                keys[key as usize] = Some(quoted_key(name, logfmt).into());
                top_level.push(name.to_string());
            }
        }
        let mut statics = Vec::new();
        for (key, value) in &self.statics {
            statics.extend_from_slice(&quoted_key(key, logfmt));
            if logfmt {
                write_value(value, &mut statics);
            } else {
                write_string(value, &mut statics);
            }
            top_level.push(key.clone());
        }
        top_level.extend(
            [
                "trace_id",
                "span_id",
                "trace_flags",
                "backtrace",
                "recovered",
            ]
            .map(String::from),
        );
        CompiledShape {
            keys,
            statics: statics.into(),
            flatten_fields: self.flatten_fields && !logfmt,
            flatten_spans: self.flatten_spans,
            top_level,
        }
    }
}

/// `,"name":` for JSON (the writer drops the comma of the first member), ` name=` for logfmt.
fn quoted_key(name: &str, logfmt: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 4);
    if logfmt {
        out.push(b' ');
        super::fields::write_key(name, &mut out);
        out.push(b'=');
    } else {
        out.push(b',');
        write_string(name, &mut out);
        out.push(b':');
    }
    out
}

/// A [`LineShape`] ready for one format.
#[derive(Debug)]
pub(crate) struct CompiledShape {
    keys: [Option<Box<[u8]>>; KEYS],
    /// Every static field, rendered with its separator.
    statics: Box<[u8]>,
    flatten_fields: bool,
    flatten_spans: bool,
    /// The keys the line writes itself: a flattened field of one of these names is written
    /// as `fields.NAME`.
    top_level: Vec<String>,
}

impl CompiledShape {
    /// A writer of one line's members.
    pub(crate) fn members(&self) -> Members<'_> {
        Members {
            shape: self,
            first: true,
        }
    }

    /// A writer of members that follow one the caller wrote.
    #[cfg(test)]
    pub(crate) fn members_after_one(&self) -> Members<'_> {
        Members {
            shape: self,
            first: false,
        }
    }

    pub(crate) fn flatten_fields(&self) -> bool {
        self.flatten_fields
    }

    pub(crate) fn flatten_spans(&self) -> bool {
        self.flatten_spans
    }

    /// Whether a flattened field called `key` would repeat one of the line's own keys.
    pub(crate) fn collides(&self, key: &str) -> bool {
        self.top_level.iter().any(|name| name == key)
    }
}

/// Writes one line's members, each with its separator (`,` or a space) but the first.
pub(crate) struct Members<'s> {
    pub(crate) shape: &'s CompiledShape,
    first: bool,
}

impl Members<'_> {
    /// Appends `key`'s separator and name (`,"name":` or ` name=`); `false` when the shape
    /// leaves the key out.
    #[inline]
    pub(crate) fn key(&mut self, key: LineKey, out: &mut Vec<u8>) -> bool {
        match &self.shape.keys[key as usize] {
            Some(bytes) => {
                self.raw(bytes, out);
                true
            }
            None => false,
        }
    }

    /// Appends `bytes`, a member (or several) that starts with its separator.
    #[inline]
    pub(crate) fn raw(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        if self.first && !bytes.is_empty() {
            self.first = false;
            out.extend_from_slice(&bytes[1..]);
        } else {
            out.extend_from_slice(bytes);
        }
    }

    /// Appends every static field.
    pub(crate) fn statics(&mut self, out: &mut Vec<u8>) {
        let statics = &self.shape.statics;
        self.raw(statics, out);
    }

    /// The separator of a member the caller writes itself.
    pub(crate) fn separator(&mut self, separator: u8, out: &mut Vec<u8>) {
        if !std::mem::take(&mut self.first) {
            out.push(separator);
        }
    }
}

/// The record's own fields, then, from the innermost span out, its spans' fields whose key
/// was not met before: each key once, the most specific value kept. Allocates nothing: a
/// span field's key is looked for again in what came before it (records have few fields).
pub(crate) fn merged_fields(fields: &Fields) -> impl Iterator<Item = Field<'_>> + '_ {
    let count = fields.spans().count();
    let own = fields.iter();
    let from_spans = (0..count).rev().flat_map(move |index| {
        let span = fields.spans().nth(index).expect("index below the count");
        span.fields().enumerate().filter(move |(position, field)| {
            let key = field.key;
            let in_own = fields.iter().any(|f| f.key == key);
            let in_inner = fields
                .spans()
                .skip(index + 1)
                .any(|inner| inner.fields().any(|f| f.key == key));
            let earlier_here = span.fields().take(*position).any(|f| f.key == key);
            !(in_own || in_inner || earlier_here)
        })
    });
    own.chain(from_spans.map(|(_, field)| field))
}
