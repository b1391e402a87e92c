//! Structured key-value fields of a record, and of the spans it was logged in.
//!
//! Fields come from three places: the macros' field list (`info!(user_id = id, path = %p;
//! "served {}", n)`, encoded raw on the calling thread like message arguments), the `log`
//! crate's key-values, and `tracing` events and spans. The back end decodes them into one
//! reusable [`Fields`] per record, which every format and sink reads through
//! [`Line::fields`](crate::Line::fields). Values keep their type ([`FieldValue`]), so JSON gets
//! numbers and booleans, not strings.
//!
//! Runs on the back end only; after warm-up, filling a [`Fields`] allocates nothing.

pub(crate) mod wire;

use std::fmt::{self, Write as _};
use std::ops::Range;

/// One field's value, typed as it was logged.
///
/// ```
/// use tachylog::FieldValue;
/// assert_eq!(FieldValue::I64(-3).to_string(), "-3");
/// assert_eq!(FieldValue::Str("a b").to_string(), "a b");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FieldValue<'a> {
    /// No value (`None`, `()`).
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer that fits 64 bits.
    I64(i64),
    /// An unsigned integer that fits 64 bits.
    U64(u64),
    /// A signed 128-bit integer.
    I128(i128),
    /// An unsigned 128-bit integer.
    U128(u128),
    /// A floating-point number (possibly NaN or infinite).
    F64(f64),
    /// Text: strings, characters, and values logged with `%` (Display) or `?` (Debug).
    Str(&'a str),
}

impl fmt::Display for FieldValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FieldValue::Null => f.write_str("null"),
            FieldValue::Bool(v) => fmt::Display::fmt(&v, f),
            FieldValue::I64(v) => fmt::Display::fmt(&v, f),
            FieldValue::U64(v) => fmt::Display::fmt(&v, f),
            FieldValue::I128(v) => fmt::Display::fmt(&v, f),
            FieldValue::U128(v) => fmt::Display::fmt(&v, f),
            FieldValue::F64(v) => fmt::Display::fmt(&v, f),
            FieldValue::Str(v) => f.write_str(v),
        }
    }
}

/// One key-value field, as [`Fields::iter`] yields it.
///
/// ```
/// use tachylog::{Field, FieldValue};
/// let field = Field { key: "user_id", value: FieldValue::U64(42) };
/// assert_eq!(format!("{}={}", field.key, field.value), "user_id=42");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field<'a> {
    /// The field's name, as written at the call site (`user_id`, `http.method`).
    pub key: &'a str,
    /// Its value.
    pub value: FieldValue<'a>,
}

/// A span the record was logged in (from the `tracing` layer): its name and fields.
///
/// ```
/// // A sink that prints the span path of each record, outermost first.
/// struct Spans;
/// impl tachylog::Sink for Spans {
///     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
///         for span in line.fields.spans() {
///             print!("{}{{", span.name());
///             for field in span.fields() {
///                 print!(" {}={}", field.key, field.value);
///             }
///             print!(" }} ");
///         }
///         Ok(())
///     }
///     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
/// }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    fields: &'a Fields,
    index: usize,
}

impl<'a> Span<'a> {
    /// The span's name.
    ///
    /// ```
    /// # use tachylog::FieldValue;
    /// # use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// # static CHECKED: AtomicUsize = AtomicUsize::new(0);
    /// # struct Check;
    /// # impl tachylog::Sink for Check {
    /// #     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    /// #         // The back end survives a sink's panic: count the checks that passed instead.
    /// #         let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    /// let fields = line.fields; // in a `Sink`, for `info!(n = 3u64, who = "ada"; "x")`
    /// for span in fields.spans() {
    ///     println!("in span {}", span.name());
    /// }
    /// #         }));
    /// #         if passed.is_ok() {
    /// #             CHECKED.fetch_add(1, SeqCst);
    /// #         }
    /// #         Ok(())
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// # let guard = tachylog::builder().sink(Check).init().unwrap();
    /// # tachylog::info!(n = 3u64, who = "ada"; "x");
    /// # drop(guard);
    /// # assert_eq!(CHECKED.load(SeqCst), 1);
    /// ```
    pub fn name(&self) -> &'a str {
        self.fields.text(self.fields.spans[self.index].clone())
    }

    /// The span's fields, in the order they were recorded.
    ///
    /// ```
    /// # use tachylog::FieldValue;
    /// # use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// # static CHECKED: AtomicUsize = AtomicUsize::new(0);
    /// # struct Check;
    /// # impl tachylog::Sink for Check {
    /// #     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    /// #         // The back end survives a sink's panic: count the checks that passed instead.
    /// #         let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    /// let fields = line.fields; // in a `Sink`, for `info!(n = 3u64, who = "ada"; "x")`
    /// for span in fields.spans() {
    ///     for field in span.fields() {
    ///         println!("{}.{}={}", span.name(), field.key, field.value);
    ///     }
    /// }
    /// #         }));
    /// #         if passed.is_ok() {
    /// #             CHECKED.fetch_add(1, SeqCst);
    /// #         }
    /// #         Ok(())
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// # let guard = tachylog::builder().sink(Check).init().unwrap();
    /// # tachylog::info!(n = 3u64, who = "ada"; "x");
    /// # drop(guard);
    /// # assert_eq!(CHECKED.load(SeqCst), 1);
    /// ```
    pub fn fields(&self) -> impl Iterator<Item = Field<'a>> + 'a {
        self.fields.owned_by(self.index as u32 + 1)
    }
}

/// A value as stored: text lives in [`Fields::text`], everything else as it came.
#[derive(Debug, Clone)]
enum Stored {
    /// Any value but [`FieldValue::Str`].
    Scalar(FieldValue<'static>),
    /// A range of [`Fields::text`].
    Str(Range<usize>),
}

#[derive(Debug, Clone)]
struct Entry {
    /// 0 for the record's own fields, `n` for those of span `n - 1`.
    owner: u32,
    key: Range<usize>,
    value: Stored,
}

/// The structured fields of one record, and the spans it was logged in (outermost first).
///
/// Sinks receive it in [`Line::fields`](crate::Line::fields):
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tachylog::FieldValue;
///
/// /// Keeps the `items` count of each record.
/// struct Items(Arc<Mutex<Vec<u64>>>);
/// impl tachylog::Sink for Items {
///     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
///         if let Some(FieldValue::U64(n)) = line.fields.get("items") {
///             self.0.lock().unwrap().push(n);
///         }
///         Ok(())
///     }
///     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
/// }
/// let items = Arc::new(Mutex::new(Vec::new()));
/// let guard = tachylog::builder().sink(Items(items.clone())).init().unwrap();
/// tachylog::info!(items = 3u64; "served");
/// drop(guard);
/// assert_eq!(*items.lock().unwrap(), [3]);
/// ```
#[derive(Debug, Default)]
pub struct Fields {
    /// Keys, string values and span names, back to back.
    text: String,
    entries: Vec<Entry>,
    /// Span names, as ranges of `text`; span `i` owns the entries with `owner == i + 1`.
    spans: Vec<Range<usize>>,
    /// The owner of the fields pushed next.
    current_owner: u32,
    /// Bytes kept of one string value; the rest is cut with a marker.
    max_value_bytes: usize,
}

/// The fields of a record that has none.
pub(crate) static NO_FIELDS: Fields = Fields::new();

impl Fields {
    /// An empty set.
    pub(crate) const fn new() -> Self {
        Fields {
            text: String::new(),
            entries: Vec::new(),
            spans: Vec::new(),
            current_owner: 0,
            max_value_bytes: usize::MAX,
        }
    }

    /// Cuts string values longer than `bytes` (they say so).
    pub(crate) fn limit_values(&mut self, bytes: usize) {
        self.max_value_bytes = bytes;
    }

    /// The record's own fields, in the order they were written at the call site.
    ///
    /// ```
    /// # use tachylog::FieldValue;
    /// # use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// # static CHECKED: AtomicUsize = AtomicUsize::new(0);
    /// # struct Check;
    /// # impl tachylog::Sink for Check {
    /// #     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    /// #         // The back end survives a sink's panic: count the checks that passed instead.
    /// #         let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    /// let fields = line.fields; // in a `Sink`, for `info!(n = 3u64, who = "ada"; "x")`
    /// let keys: Vec<&str> = fields.iter().map(|f| f.key).collect();
    /// assert_eq!(keys, ["n", "who"]);
    /// #         }));
    /// #         if passed.is_ok() {
    /// #             CHECKED.fetch_add(1, SeqCst);
    /// #         }
    /// #         Ok(())
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// # let guard = tachylog::builder().sink(Check).init().unwrap();
    /// # tachylog::info!(n = 3u64, who = "ada"; "x");
    /// # drop(guard);
    /// # assert_eq!(CHECKED.load(SeqCst), 1);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Field<'_>> + '_ {
        self.owned_by(0)
    }

    /// Whether the record has no fields of its own.
    ///
    /// ```
    /// # use tachylog::FieldValue;
    /// # use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// # static CHECKED: AtomicUsize = AtomicUsize::new(0);
    /// # struct Check;
    /// # impl tachylog::Sink for Check {
    /// #     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    /// #         // The back end survives a sink's panic: count the checks that passed instead.
    /// #         let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    /// let fields = line.fields; // in a `Sink`, for `info!(n = 3u64, who = "ada"; "x")`
    /// assert!(!fields.is_empty());
    /// #         }));
    /// #         if passed.is_ok() {
    /// #             CHECKED.fetch_add(1, SeqCst);
    /// #         }
    /// #         Ok(())
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// # let guard = tachylog::builder().sink(Check).init().unwrap();
    /// # tachylog::info!(n = 3u64, who = "ada"; "x");
    /// # drop(guard);
    /// # assert_eq!(CHECKED.load(SeqCst), 1);
    /// ```
    pub fn is_empty(&self) -> bool {
        !self.entries.iter().any(|e| e.owner == 0)
    }

    /// The value of the record's own field `key`, if it has one (the last, if repeated).
    ///
    /// ```
    /// # use tachylog::FieldValue;
    /// # use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// # static CHECKED: AtomicUsize = AtomicUsize::new(0);
    /// # struct Check;
    /// # impl tachylog::Sink for Check {
    /// #     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    /// #         // The back end survives a sink's panic: count the checks that passed instead.
    /// #         let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    /// let fields = line.fields; // in a `Sink`, for `info!(n = 3u64, who = "ada"; "x")`
    /// assert_eq!(fields.get("who"), Some(FieldValue::Str("ada")));
    /// assert_eq!(fields.get("nope"), None);
    /// #         }));
    /// #         if passed.is_ok() {
    /// #             CHECKED.fetch_add(1, SeqCst);
    /// #         }
    /// #         Ok(())
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// # let guard = tachylog::builder().sink(Check).init().unwrap();
    /// # tachylog::info!(n = 3u64, who = "ada"; "x");
    /// # drop(guard);
    /// # assert_eq!(CHECKED.load(SeqCst), 1);
    /// ```
    pub fn get(&self, key: &str) -> Option<FieldValue<'_>> {
        self.iter().filter(|f| f.key == key).last().map(|f| f.value)
    }

    /// The spans the record was logged in, outermost first (only `tracing` events have any).
    ///
    /// ```
    /// # use tachylog::FieldValue;
    /// # use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// # static CHECKED: AtomicUsize = AtomicUsize::new(0);
    /// # struct Check;
    /// # impl tachylog::Sink for Check {
    /// #     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    /// #         // The back end survives a sink's panic: count the checks that passed instead.
    /// #         let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    /// let fields = line.fields; // in a `Sink`, for `info!(n = 3u64, who = "ada"; "x")`
    /// assert_eq!(fields.spans().count(), 0); // a macro call is in no span
    /// #         }));
    /// #         if passed.is_ok() {
    /// #             CHECKED.fetch_add(1, SeqCst);
    /// #         }
    /// #         Ok(())
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// # let guard = tachylog::builder().sink(Check).init().unwrap();
    /// # tachylog::info!(n = 3u64, who = "ada"; "x");
    /// # drop(guard);
    /// # assert_eq!(CHECKED.load(SeqCst), 1);
    /// ```
    pub fn spans(&self) -> impl Iterator<Item = Span<'_>> + '_ {
        (0..self.spans.len()).map(move |index| Span {
            fields: self,
            index,
        })
    }

    /// Whether the record was logged inside any span.
    ///
    /// ```
    /// # use tachylog::FieldValue;
    /// # use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// # static CHECKED: AtomicUsize = AtomicUsize::new(0);
    /// # struct Check;
    /// # impl tachylog::Sink for Check {
    /// #     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    /// #         // The back end survives a sink's panic: count the checks that passed instead.
    /// #         let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    /// let fields = line.fields; // in a `Sink`, for `info!(n = 3u64, who = "ada"; "x")`
    /// assert!(!fields.has_spans());
    /// #         }));
    /// #         if passed.is_ok() {
    /// #             CHECKED.fetch_add(1, SeqCst);
    /// #         }
    /// #         Ok(())
    /// #     }
    /// #     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
    /// # }
    /// # let guard = tachylog::builder().sink(Check).init().unwrap();
    /// # tachylog::info!(n = 3u64, who = "ada"; "x");
    /// # drop(guard);
    /// # assert_eq!(CHECKED.load(SeqCst), 1);
    /// ```
    pub fn has_spans(&self) -> bool {
        !self.spans.is_empty()
    }

    fn owned_by(&self, owner: u32) -> impl Iterator<Item = Field<'_>> + '_ {
        self.entries
            .iter()
            .filter(move |e| e.owner == owner)
            .map(move |e| Field {
                key: self.text(e.key.clone()),
                value: match &e.value {
                    Stored::Scalar(v) => *v,
                    Stored::Str(r) => FieldValue::Str(self.text(r.clone())),
                },
            })
    }

    fn text(&self, range: Range<usize>) -> &str {
        // Ranges are only made here, on character boundaries of `text`.
        &self.text[range]
    }

    /// Empties the set, keeping its memory (unless one huge record grew it).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.spans.clear();
        self.current_owner = 0;
        if self.text.capacity() > 1 << 20 {
            self.text = String::with_capacity(1024);
        } else {
            self.text.clear();
        }
    }

    fn push_text(&mut self, text: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(text);
        start..self.text.len()
    }

    /// Appends formatted text to the arena, cut to the value limit; returns its range.
    fn push_display(&mut self, value: &dyn fmt::Display) -> Result<Range<usize>, fmt::Error> {
        let start = self.text.len();
        let result = write!(self.text, "{value}");
        if result.is_err() {
            self.text.truncate(start);
            return Err(fmt::Error);
        }
        self.cut_value(start);
        Ok(start..self.text.len())
    }

    /// Cuts the value that starts at `start` to the limit, saying how much was removed.
    fn cut_value(&mut self, start: usize) {
        let len = self.text.len() - start;
        if len <= self.max_value_bytes {
            return;
        }
        let mut cut = start + self.max_value_bytes;
        while !self.text.is_char_boundary(cut) {
            cut -= 1;
        }
        let removed = self.text.len() - cut;
        self.text.truncate(cut);
        let _ = write!(self.text, "…[truncated {removed} bytes]");
    }

    fn push(&mut self, key: &str, value: Stored) {
        let key = self.push_text(key);
        self.entries.push(Entry {
            owner: self.current_owner,
            key,
            value,
        });
    }

    /// Starts a span: the fields pushed next are its own, until [`Fields::begin_event`].
    pub(crate) fn begin_span(&mut self, name: &str) {
        let name = self.push_text(name);
        self.spans.push(name);
        self.current_owner = self.spans.len() as u32;
    }

    /// The fields pushed next are the record's own.
    pub(crate) fn begin_event(&mut self) {
        self.current_owner = 0;
    }

    /// Adds a typed value.
    pub(crate) fn push_value(&mut self, key: &str, value: FieldValue<'_>) {
        let stored = match value {
            FieldValue::Null => Stored::Scalar(FieldValue::Null),
            FieldValue::Bool(v) => Stored::Scalar(FieldValue::Bool(v)),
            FieldValue::I64(v) => Stored::Scalar(FieldValue::I64(v)),
            FieldValue::U64(v) => Stored::Scalar(FieldValue::U64(v)),
            FieldValue::I128(v) => Stored::Scalar(FieldValue::I128(v)),
            FieldValue::U128(v) => Stored::Scalar(FieldValue::U128(v)),
            FieldValue::F64(v) => Stored::Scalar(FieldValue::F64(v)),
            FieldValue::Str(s) => {
                let start = self.text.len();
                self.text.push_str(s);
                self.cut_value(start);
                Stored::Str(start..self.text.len())
            }
        };
        self.push(key, stored);
    }

    /// Adds a value formatted with `Display` (the `%` and `?` sigils, values with no native
    /// type). A formatting error is shown in place of the value.
    pub(crate) fn push_formatted(&mut self, key: &str, value: &dyn fmt::Display) {
        let range = match self.push_display(value) {
            Ok(range) => range,
            Err(fmt::Error) => self.push_text("<formatting error>"),
        };
        self.push(key, Stored::Str(range));
    }
}

/// What the macros' generated field decoders call. Not a public API.
#[doc(hidden)]
impl Fields {
    #[inline]
    pub fn __push_native<V: crate::codec::NativeField>(&mut self, key: &str, value: &V) {
        value.push_to(key, self);
    }

    pub fn __push_display(&mut self, key: &str, value: &dyn fmt::Display) {
        self.push_guarded(key, value);
    }

    pub fn __push_debug(&mut self, key: &str, value: &dyn fmt::Debug) {
        self.push_guarded(key, &format_args!("{value:?}"));
    }

    /// A user's `Display`/`Debug` runs here, on the back end: a panic in it is caught and shown
    /// in place of this one value.
    fn push_guarded(&mut self, key: &str, value: &dyn fmt::Display) {
        let text_len = self.text.len();
        let entries = self.entries.len();
        if let Err(panic) = crate::lifecycle::catch_user_panic(|| self.push_formatted(key, value)) {
            self.text.truncate(text_len);
            self.entries.truncate(entries);
            self.push_formatted(key, &format_args!("<formatting panicked: {panic}>"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_types_order_and_span_ownership() {
        let mut f = Fields::new();
        f.begin_span("request");
        f.push_value("id", FieldValue::U64(7));
        f.begin_span("db");
        f.push_formatted("query", &"select 1");
        f.begin_event();
        f.push_value("rows", FieldValue::I64(-1));
        f.push_value("ok", FieldValue::Bool(true));
        f.push_value("ratio", FieldValue::F64(0.5));
        f.push_value("none", FieldValue::Null);
        let own: Vec<_> = f.iter().map(|x| (x.key, x.value)).collect();
        assert_eq!(
            own,
            vec![
                ("rows", FieldValue::I64(-1)),
                ("ok", FieldValue::Bool(true)),
                ("ratio", FieldValue::F64(0.5)),
                ("none", FieldValue::Null),
            ]
        );
        let spans: Vec<_> = f
            .spans()
            .map(|s| (s.name(), s.fields().map(|x| (x.key, x.value)).collect::<Vec<_>>()))
            .collect();
        assert_eq!(
            spans,
            vec![
                ("request", vec![("id", FieldValue::U64(7))]),
                ("db", vec![("query", FieldValue::Str("select 1"))]),
            ]
        );
        assert_eq!(f.get("rows"), Some(FieldValue::I64(-1)));
        assert_eq!(f.get("id"), None, "span fields are not the record's own");
        f.clear();
        assert!(f.is_empty() && !f.has_spans());
    }

    #[test]
    fn long_values_are_cut_on_a_char_boundary_and_say_so() {
        let mut f = Fields::new();
        f.limit_values(5);
        f.push_value("s", FieldValue::Str("ééééé"));
        f.push_formatted("d", &"0123456789");
        let values: Vec<_> = f.iter().map(|x| x.value.to_string()).collect();
        assert_eq!(values, vec!["éé…[truncated 6 bytes]", "01234…[truncated 5 bytes]"]);
    }

    #[test]
    fn a_failing_display_is_marked_not_fatal() {
        struct Fails;
        impl fmt::Display for Fails {
            fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
                Err(fmt::Error)
            }
        }
        let mut f = Fields::new();
        f.push_formatted("x", &Fails);
        f.push_value("y", FieldValue::U64(1));
        assert_eq!(f.get("x"), Some(FieldValue::Str("<formatting error>")));
        assert_eq!(f.get("y"), Some(FieldValue::U64(1)));
    }
}
