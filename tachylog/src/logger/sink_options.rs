//! [`SinkOptions`]: what one sink takes (its own level) and how its lines look (its format),
//! given together with the sink so that they cannot attach to another one.

use crate::format::{Format, LineShape};
use crate::Level;

/// The options of one sink, given with it: [`Builder::stdout_with`](crate::Builder::stdout_with),
/// [`stderr_with`](crate::Builder::stderr_with), [`file_with`](crate::Builder::file_with),
/// [`sink_with`](crate::Builder::sink_with). A sink added without options takes every record
/// that passes the logger's filter, as text lines.
///
/// ```
/// use tachylog::{Format, Level, SinkOptions};
///
/// let dir = std::env::temp_dir().join("tachylog-doc-sink-options");
/// let guard = tachylog::builder()
///     .level(Level::Debug)
///     .stdout()
///     .file_with(dir.join("errors.jsonl"), SinkOptions::new().level(Level::Error).format(Format::Json))
///     .init()
///     .unwrap();
/// tachylog::debug!("on stdout only");
/// tachylog::error!("on stdout and in errors.jsonl");
/// drop(guard);
/// let json = std::fs::read_to_string(dir.join("errors.jsonl")).unwrap();
/// assert_eq!(json.lines().count(), 1);
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use = "options do nothing until given with a sink"]
pub struct SinkOptions {
    pub(crate) level: Option<Level>,
    pub(crate) format: Format,
    pub(crate) shape: Option<LineShape>,
}

impl SinkOptions {
    /// Every record that passes the logger's filter, as text lines.
    ///
    /// ```
    /// assert_eq!(tachylog::SinkOptions::new(), tachylog::SinkOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The most verbose level this sink takes. The logger's filter
    /// ([`Builder::level`](crate::Builder::level), [`Builder::filter`](crate::Builder::filter))
    /// still decides first: a sink never sees a record the filter left out.
    ///
    /// ```
    /// let errors_only = tachylog::SinkOptions::new().level(tachylog::Level::Error);
    /// # let _ = errors_only;
    /// ```
    pub fn level(mut self, level: Level) -> Self {
        self.level = Some(level);
        self
    }

    /// The line format: [`Format::Text`] (the default), JSON lines or logfmt.
    ///
    /// ```
    /// let json = tachylog::SinkOptions::new().format(tachylog::Format::Json);
    /// # let _ = json;
    /// ```
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// How this sink's JSON or logfmt lines are shaped: keys renamed or left out, static
    /// fields, fields and span fields flattened (see [`LineShape`]). Text and binary sinks
    /// ignore it.
    ///
    /// ```
    /// use tachylog::{Format, LineKey, LineShape, SinkOptions};
    /// let options = SinkOptions::new()
    ///     .format(Format::Json)
    ///     .shape(LineShape::new().rename(LineKey::Timestamp, "@timestamp").static_field("service", "shop"));
    /// # let _ = options;
    /// ```
    pub fn shape(mut self, shape: LineShape) -> Self {
        self.shape = Some(shape);
        self
    }
}
