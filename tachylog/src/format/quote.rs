//! Quoting one text value for the structured formats: a JSON string ([`write_string`]) and a
//! logfmt value ([`write_value`]). Leaves of `format`: the line formats and the field
//! renderer all quote through here, so neither needs the other.

use super::escape::invisible_layout_char;
use std::fmt::Write as _;

/// Appends `text` as a quoted JSON string.
pub(crate) fn write_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut clean_from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f | 0x7f => b"",
            // U+2028 / U+2029 are E2 80 A8 / E2 80 A9.
            0xe2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                b""
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[clean_from..i]);
        if escape.is_empty() {
            let code = if b == 0xe2 {
                0x2000 + bytes[i + 2] as u32 - 0x80
            } else {
                b as u32
            };
            out.extend_from_slice(format!("\\u{code:04x}").as_bytes());
            clean_from = if b == 0xe2 { i + 3 } else { i + 1 };
        } else {
            out.extend_from_slice(escape);
            clean_from = i + 1;
        }
    }
    out.extend_from_slice(&bytes[clean_from.min(bytes.len())..]);
    out.push(b'"');
}

/// Appends one value, quoted only when it has to be.
pub(crate) fn write_value(value: &str, out: &mut Vec<u8>) {
    let needs_quotes = value.is_empty()
        || value.chars().any(|c| {
            c == ' '
                || c == '='
                || c == '"'
                || c == '\\'
                || c.is_control()
                || invisible_layout_char(c)
        });
    if !needs_quotes {
        out.extend_from_slice(value.as_bytes());
        return;
    }
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('"');
    for c in value.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() || invisible_layout_char(c) => {
                let _ = write!(quoted, "\\u{{{:x}}}", c as u32);
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    out.extend_from_slice(quoted.as_bytes());
}
