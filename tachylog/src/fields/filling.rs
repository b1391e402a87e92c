//! Filling a [`Fields`] on the back end: the decoders of the macros' fields, of `log`'s
//! key-values and of `tracing`'s fields and spans push here. Text goes into one reused
//! buffer; a user's `Display`/`Debug` runs inside a panic guard and costs only its own value.

use super::{Entry, FieldValue, Fields, Stored};
use std::fmt::{self, Write as _};
use std::ops::Range;

impl Fields {
    /// Empties the set, keeping its memory (unless one huge record grew it).
    #[inline]
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
        if let Err(panic) = crate::panic_guard::catch_user_panic(|| self.push_formatted(key, value))
        {
            self.text.truncate(text_len);
            self.entries.truncate(entries);
            self.push_formatted(key, &format_args!("<formatting panicked: {panic}>"));
        }
    }
}
