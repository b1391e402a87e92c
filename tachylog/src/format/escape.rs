//! Keeps one record on one line: control characters inside messages are escaped as they are
//! written, so a message can never start a forged second record (CWE-117).

use crate::record::Site;
use std::fmt;

/// A `fmt::Write` that appends to a byte buffer, escaping control characters when `escape` is
/// on: `\n` and `\r` become `\n` and `\r` written as two characters, other C0 controls, DEL and
/// ESC become `\x1b` style, C1 controls become `\u{85}` style, and so do the Unicode line and
/// paragraph separators (U+2028, U+2029: line breaks to many viewers) and the bidirectional
/// overrides and isolates (U+202A..U+202E, U+2066..U+2069: they reorder what a reader sees).
/// Tab is kept.
pub(crate) struct EscapingWriter<'a> {
    pub(crate) out: &'a mut Vec<u8>,
    pub(crate) escape: bool,
}

#[inline]
fn needs_escape(b: u8) -> bool {
    // 0xC2 is the lead byte of U+0080..U+00BF, which holds the C1 controls, and 0xE2 that of
    // U+2000..U+2FFF, which holds the separators and bidi controls: a cheap superset check,
    // refined per character on the slow path.
    (b < 0x20 && b != b'\t') || b == 0x7f || b == 0xc2 || b == 0xe2
}

/// Whether any byte of `bytes` may need escaping (a superset: tab is included and refined
/// on the slow path). Every line's message is scanned, and even an eight-byte word scan takes
/// a third of the line formatter's own time (`perf`,
/// `tachylog-bench --only tachylog,backend_iteration`), hence sixteen bytes at a time with
/// SSE2 where there is SSE2.
#[inline]
pub(crate) fn may_need_escape(bytes: &[u8]) -> bool {
    scan::<TEXT>(bytes)
}

/// The bytes each scan looks for, beside those of [`may_need_escape`].
const TEXT: u8 = 0;
/// `"` and `\`.
const JSON: u8 = 1;
/// `"`, `\`, space and `=`.
const LOGFMT: u8 = 2;

/// [`may_need_escape`], and whether any byte is `"` or `\`: whether a JSON string of `bytes`
/// may need escaping. A JSON line is mostly its strings, and a byte-at-a-time scan of them was
/// the JSON line's largest cost (callgrind, `tachylog-bench --child tachylog
/// backend_iteration_json smoke DIR`).
#[inline]
pub(crate) fn may_need_json_escape(bytes: &[u8]) -> bool {
    scan::<JSON>(bytes)
}

/// [`may_need_json_escape`], and whether any byte is a space or `=`: whether a logfmt value of
/// `bytes` may need quotes.
#[inline]
pub(crate) fn may_need_logfmt_quotes(bytes: &[u8]) -> bool {
    scan::<LOGFMT>(bytes)
}

#[inline]
fn scan<const SET: u8>(bytes: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 16 {
        return sse2::may_need_escape::<SET>(bytes);
    }
    words_may_need_escape::<SET>(bytes)
}

/// Whether the text a call site itself puts in its message (the literal pieces and the tail)
/// needs no escaping, and no placeholder has a fill character that could: then a message of
/// such a site whose values are escape-free too (numbers, `bool`: see
/// [`Decode::Rendered`](crate::record::Decode::Rendered)) is not scanned. Conservative, like
/// [`may_need_escape`].
pub(crate) fn site_text_is_clean(site: &Site) -> bool {
    site.message.iter().all(|placeholder| {
        placeholder.flags.is_none() && !may_need_escape(placeholder.literal.as_bytes())
    }) && !may_need_escape(site.tail.as_bytes())
}

/// [`scan`] eight bytes at a time in a `u64`.
#[inline]
fn words_may_need_escape<const SET: u8>(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Per byte: a high bit set in the result iff some byte is below `n` (exact for `n <= 128`,
    // as a whole-word answer), or equal to zero.
    let below = |word: u64, n: u64| word.wrapping_sub(ONES * n) & !word & HIGHS;
    let zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let mut hits = below(word, 0x20)
            | zero(word ^ (ONES * 0x7f))
            | zero(word ^ (ONES * 0xc2))
            | zero(word ^ (ONES * 0xe2));
        if SET >= JSON {
            hits |= zero(word ^ (ONES * b'"' as u64)) | zero(word ^ (ONES * b'\\' as u64));
        }
        if SET == LOGFMT {
            hits |= zero(word ^ (ONES * b' ' as u64)) | zero(word ^ (ONES * b'=' as u64));
        }
        if hits != 0 {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| {
        b < 0x20
            || needs_escape(b)
            || (SET >= JSON && (b == b'"' || b == b'\\'))
            || (SET == LOGFMT && (b == b' ' || b == b'='))
    })
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    /// Sixteen bytes at a time; the last, partial block is read as the slice's last sixteen
    /// bytes, overlapping the block before. `bytes` is at least 16 long.
    #[inline]
    pub(super) fn may_need_escape<const SET: u8>(bytes: &[u8]) -> bool {
        debug_assert!(bytes.len() >= 16);
        let block_hits = |block: &[u8]| {
            // SAFETY: SSE2 is part of the x86_64 baseline, so these intrinsics are always
            // available; the load reads exactly the 16 bytes of `block` (callers pass 16-byte
            // slices), unaligned, which `_mm_loadu_si128` permits.
            unsafe {
                let v = _mm_loadu_si128(block.as_ptr() as *const __m128i);
                // `min(v, 0x1f) == v` is an unsigned `v <= 0x1f`: the C0 controls (and tab).
                let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
                let del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f));
                let c2 = _mm_cmpeq_epi8(v, _mm_set1_epi8(0xc2u8 as i8));
                let e2 = _mm_cmpeq_epi8(v, _mm_set1_epi8(0xe2u8 as i8));
                let mut hits = _mm_or_si128(_mm_or_si128(control, del), _mm_or_si128(c2, e2));
                if SET >= super::JSON {
                    let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
                    let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
                    hits = _mm_or_si128(hits, _mm_or_si128(quote, backslash));
                }
                if SET == super::LOGFMT {
                    let space = _mm_cmpeq_epi8(v, _mm_set1_epi8(b' ' as i8));
                    let equals = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'=' as i8));
                    hits = _mm_or_si128(hits, _mm_or_si128(space, equals));
                }
                _mm_movemask_epi8(hits) != 0
            }
        };
        let mut blocks = bytes.chunks_exact(16);
        if blocks.any(block_hits) {
            return true;
        }
        !blocks.remainder().is_empty() && block_hits(&bytes[bytes.len() - 16..])
    }
}

/// Characters above U+00FF that change what a reader sees as lines or their order.
pub(crate) fn invisible_layout_char(c: char) -> bool {
    matches!(c as u32, 0x2028 | 0x2029 | 0x202a..=0x202e | 0x2066..=0x2069)
}

impl fmt::Write for EscapingWriter<'_> {
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if !self.escape || !may_need_escape(s.as_bytes()) {
            crate::codec::short_copy::append_bytes(self.out, s.as_bytes());
            return Ok(());
        }
        for c in s.chars() {
            match c {
                '\n' => self.out.extend_from_slice(b"\\n"),
                '\r' => self.out.extend_from_slice(b"\\r"),
                '\t' => self.out.push(b'\t'),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    let hex = b"0123456789abcdef";
                    let v = c as u32 as usize;
                    self.out
                        .extend_from_slice(&[b'\\', b'x', hex[v >> 4], hex[v & 15]]);
                }
                c if (0x80..0xa0).contains(&(c as u32)) || invisible_layout_char(c) => {
                    self.out
                        .extend_from_slice(format!("\\u{{{:x}}}", c as u32).as_bytes());
                }
                c => {
                    let mut buf = [0u8; 4];
                    self.out
                        .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    fn escaped(s: &str) -> String {
        let mut out = Vec::new();
        EscapingWriter {
            out: &mut out,
            escape: true,
        }
        .write_str(s)
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn newlines_and_controls_are_escaped() {
        assert_eq!(escaped("a\nb\r\nc"), "a\\nb\\r\\nc");
        assert_eq!(escaped("\x1b[31mred"), "\\x1b[31mred");
        assert_eq!(escaped("del\x7f nul\0"), "del\\x7f nul\\x00");
        assert_eq!(escaped("c1\u{85}x"), "c1\\u{85}x");
        assert_eq!(escaped("ls\u{2028}ps\u{2029}"), "ls\\u{2028}ps\\u{2029}");
        assert_eq!(
            escaped("rlo\u{202e}fsi\u{2068}"),
            "rlo\\u{202e}fsi\\u{2068}"
        );
        assert_eq!(escaped("“quotes” ✓"), "“quotes” ✓");
        assert_eq!(escaped("tab\tstays é ü"), "tab\tstays é ü");
    }

    #[test]
    fn the_word_scan_finds_every_byte_the_byte_check_finds() {
        for b in 0..=255u8 {
            for len in 1..40 {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = b;
                    let expected = bytes.iter().any(|&b| needs_escape(b) || b == b'\t');
                    assert_eq!(
                        may_need_escape(&bytes),
                        expected,
                        "byte {b:#x} at {at} of {len}"
                    );
                    let json = expected || b == b'"' || b == b'\\';
                    assert_eq!(
                        may_need_json_escape(&bytes),
                        json,
                        "JSON, byte {b:#x} at {at} of {len}"
                    );
                    assert_eq!(
                        may_need_logfmt_quotes(&bytes),
                        json || b == b' ' || b == b'=',
                        "logfmt, byte {b:#x} at {at} of {len}"
                    );
                }
            }
        }
        assert!(!may_need_escape(b"plain ascii text, longer than a word"));
        // U+2713 starts with 0xE2, like the separators: the word scan is a superset.
        assert!(may_need_escape("Ünïcödé ✓ ©".as_bytes()));
        assert!(!may_need_escape("Ünïcödé àé".as_bytes()));
        assert!(!may_need_escape(
            "Ünïcödé àé, and long enough for the block scan".as_bytes()
        ));
    }

    #[test]
    fn plain_text_is_untouched() {
        assert_eq!(escaped("Hello World!"), "Hello World!");
        assert_eq!(escaped("Ünïcödé ✓ ©"), "Ünïcödé ✓ ©");
    }

    #[test]
    fn escaping_can_be_turned_off() {
        let mut out = Vec::new();
        EscapingWriter {
            out: &mut out,
            escape: false,
        }
        .write_str("a\nb")
        .unwrap();
        assert_eq!(out, b"a\nb");
    }
}
