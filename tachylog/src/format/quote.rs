//! Quoting one text value for the structured formats: a JSON string ([`write_string`]) and a
//! logfmt value ([`write_value`]). Leaves of `format`: the line formats and the field
//! renderer all quote through here, so neither needs the other.

use super::escape::{invisible_layout_char, may_need_json_escape, may_need_logfmt_quotes};
use std::fmt::Write as _;

/// Appends `text` as a quoted JSON string. Beside what JSON requires (`"`, `\`, C0 controls),
/// DEL, the C1 controls, the line and paragraph separators and the bidi controls are written as
/// `\u` escapes too, as the text line escapes them: a JSON line shown in a terminal or a pager
/// stays one line and reads in its order.
pub(crate) fn write_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text.as_bytes();
    if !may_need_json_escape(bytes) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut clean_from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f | 0x7f => b"",
            // The lead bytes of U+0080..U+00BF (the C1 controls) and of U+2000..U+2FFF (the
            // separators and bidi controls): looked at as a character.
            0xc2 | 0xe2 => {
                let c = text[i..].chars().next().unwrap_or(' ');
                if !(c.is_control() || invisible_layout_char(c)) {
                    continue;
                }
                out.extend_from_slice(&bytes[clean_from..i]);
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
                clean_from = i + c.len_utf8();
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[clean_from..i]);
        if escape.is_empty() {
            out.extend_from_slice(format!("\\u{:04x}", b as u32).as_bytes());
        } else {
            out.extend_from_slice(escape);
        }
        clean_from = i + 1;
    }
    out.extend_from_slice(&bytes[clean_from.min(bytes.len())..]);
    out.push(b'"');
}

/// Appends one value, quoted only when it has to be.
pub(crate) fn write_value(value: &str, out: &mut Vec<u8>) {
    // The scan is a superset (a tab, a character after 0xC2 or 0xE2): refined per character.
    let needs_quotes = value.is_empty()
        || may_need_logfmt_quotes(value.as_bytes())
            && value.chars().any(|c| {
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
