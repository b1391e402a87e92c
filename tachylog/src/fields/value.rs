//! The read side of structured fields, as sinks see them: a typed [`FieldValue`], a
//! [`Field`] (key and value) and a [`Span`] (a `tracing` span's name and fields).

use super::Fields;
use std::fmt;

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
    pub(super) fields: &'a Fields,
    pub(super) index: usize,
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
