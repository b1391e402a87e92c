//! Where renderers write: an append-only text view of a byte buffer.
//!
//! Why not `&mut String`: the text line of a call-site record is laid out in the sink's own
//! batch buffer, a `Vec<u8>` (a sink may be handed any bytes, so it cannot be a `String`).
//! Rendering the message into a `String` first costs a copy into that buffer and a call per
//! record: 37 instructions per record more than writing it in place through this view
//! (callgrind, `tachylog-bench --only tachylog,backend_iteration`). The view appends
//! only UTF-8, so the bytes it adds are text, whatever the buffer held before, and over a
//! `String` it keeps the `String` valid.

use super::short_copy::append_bytes;
use std::fmt;

/// Text appended to a byte buffer: every method appends whole UTF-8 (or removes what was
/// appended, back to a character boundary).
pub struct TextBuf<'a> {
    bytes: &'a mut Vec<u8>,
    /// The buffer's length when the view was made: it never truncates below that.
    start: usize,
}

impl<'a> TextBuf<'a> {
    /// A view that appends to `bytes`.
    #[inline]
    pub(crate) fn new(bytes: &'a mut Vec<u8>) -> Self {
        let start = bytes.len();
        TextBuf { bytes, start }
    }

    /// A view that appends to `text`.
    #[inline]
    pub(crate) fn of_string(text: &'a mut String) -> Self {
        // SAFETY: a `TextBuf` appends only whole UTF-8 sequences and truncates only at
        // character boundaries of what it appended (see `truncate`), so `text` stays UTF-8.
        let bytes = unsafe { text.as_mut_vec() };
        TextBuf::new(bytes)
    }

    /// The buffer's whole length, what was there before the view included.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the buffer is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends `text`.
    #[inline(always)]
    pub fn push_str(&mut self, text: &str) {
        append_bytes(self.bytes, text.as_bytes());
    }

    /// Appends `c`.
    #[inline]
    pub fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// Removes what was appended after `len`, a length this view reported: it must not be
    /// below the view's start, and must fall on a character boundary.
    ///
    /// # Panics
    /// If `len` is before the view's start or inside a character.
    pub fn truncate(&mut self, len: usize) {
        // Everything from `start` on is UTF-8 this view appended: a position there is a
        // character boundary unless its byte is a continuation byte (0b10xx_xxxx).
        let boundary = len >= self.bytes.len() || self.bytes[len] & 0xc0 != 0x80;
        assert!(
            len >= self.start && boundary,
            "TextBuf::truncate to {len}: not a boundary of what it appended"
        );
        self.bytes.truncate(len);
    }

    /// The last character boundary at or before `len` in what this view appended (`len` at
    /// least the view's start).
    pub(crate) fn floor_boundary(&self, len: usize) -> usize {
        let mut cut = len.min(self.bytes.len()).max(self.start);
        while cut > self.start && cut < self.bytes.len() && self.bytes[cut] & 0xc0 == 0x80 {
            cut -= 1;
        }
        cut
    }

    /// What this view appended so far.
    #[cfg(test)]
    pub(crate) fn appended(&self) -> &[u8] {
        &self.bytes[self.start..]
    }

    /// The buffer itself, for writers of ASCII digits that write in place.
    ///
    /// # Safety
    /// The caller must append only whole UTF-8 sequences (ASCII digits, signs, points), and
    /// must not remove or change anything.
    #[inline(always)]
    pub(crate) unsafe fn as_mut_vec(&mut self) -> &mut Vec<u8> {
        self.bytes
    }
}

impl fmt::Write for TextBuf<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    #[test]
    fn appends_text_to_any_bytes_and_truncates_only_what_it_appended() {
        let mut bytes = vec![0xff, b'x'];
        let mut text = TextBuf::new(&mut bytes);
        text.push_str("é");
        let after_accent = text.len();
        let (digit, sharp_s) = (1, 'ß');
        write!(text, "{digit}{sharp_s}").unwrap();
        assert_eq!(text.appended(), "é1ß".as_bytes());
        assert_eq!(
            text.floor_boundary(after_accent + 2),
            after_accent + 1,
            "inside ß"
        );
        assert_eq!(text.floor_boundary(1), 2, "never before the start");
        text.truncate(after_accent);
        assert_eq!(bytes, [0xff, b'x', 0xc3, 0xa9]);
    }

    #[test]
    #[should_panic(expected = "not a boundary")]
    fn truncating_inside_a_character_panics() {
        let mut s = String::from("ab");
        let mut text = TextBuf::of_string(&mut s);
        text.push('é');
        text.truncate(3);
    }

    #[test]
    #[should_panic(expected = "not a boundary")]
    fn truncating_before_the_start_panics() {
        let mut s = String::from("ab");
        TextBuf::of_string(&mut s).truncate(1);
    }
}
