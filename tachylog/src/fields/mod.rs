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
//!
//! Layer 2 (see `ARCHITECTURE.md`): imports only layer 1 (`panic_guard`, for users' `fmt`).

mod filling;
mod value;
pub(crate) mod wire;

pub use value::{Field, FieldValue, Span};

use std::ops::Range;

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
#[derive(Debug, Default, Clone)]
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

    /// Neither fields nor spans: what a writer checks before it walks either.
    pub(crate) fn holds_nothing(&self) -> bool {
        self.entries.is_empty() && self.spans.is_empty()
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

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
            .map(|s| {
                (
                    s.name(),
                    s.fields().map(|x| (x.key, x.value)).collect::<Vec<_>>(),
                )
            })
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
        assert_eq!(
            values,
            vec!["éé…[truncated 6 bytes]", "01234…[truncated 5 bytes]"]
        );
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
