//! JSON lines: one object per record, on one line.
//!
//! `{"timestamp":"2026-11-21T16:04:05.125049Z","level":"INFO","target":"app::net",
//! "file":"src/net.rs","line":20,"thread":"main","tid":4211,"message":"...",
//! "fields":{"user_id":42},"spans":[{"name":"request","id":7}]}` (the last two only when the
//! record has them; see [`super::fields`]), or as the sink's [`super::line_shape`] says.
//!
//! Every string is escaped as JSON requires (`"`, `\`, and all control characters as `\n`,
//! `\r`, `\t` or `\u00XX`), plus U+2028 and U+2029, which some JSON consumers (JavaScript
//! before ES2019) treat as line ends. Text reaching here is always valid UTF-8 (invalid input is
//! made lossy at the call site), so every line is valid JSON. Written by hand rather than with
//! `serde_json`: the record is flat, and this avoids building a value per record on the back
//! end's hot loop.

use super::line_shape::{CompiledShape, LineKey};
use super::quote::write_string;
use super::time::TimeCache;
use super::view::RecordView;
use crate::fields::Fields;

/// Appends `record` as a JSON object shaped by `shape`, and a newline.
pub(crate) fn write_record(
    record: &RecordView<'_>,
    message: &str,
    fields: &Fields,
    shape: &CompiledShape,
    time: &mut TimeCache,
    out: &mut Vec<u8>,
) {
    let mut members = shape.members();
    out.push(b'{');
    if members.key(LineKey::Timestamp, out) {
        out.push(b'"');
        time.write_rfc3339(record.unix_nanos, out);
        out.push(b'"');
    }
    if members.key(LineKey::Level, out) {
        out.push(b'"');
        out.extend_from_slice(record.level.as_str().as_bytes());
        out.push(b'"');
    }
    members.statics(out);
    if members.key(LineKey::Target, out) {
        write_string(record.target, out);
    }
    if members.key(LineKey::File, out) {
        write_string(record.file, out);
    }
    if members.key(LineKey::Line, out) {
        out.extend_from_slice(itoa::Buffer::new().format(record.line).as_bytes());
    }
    if members.key(LineKey::Thread, out) {
        write_string(&record.thread.name, out);
    }
    if members.key(LineKey::Tid, out) {
        out.extend_from_slice(itoa::Buffer::new().format(record.thread.id).as_bytes());
    }
    if members.key(LineKey::Message, out) {
        write_string(message, out);
    }
    if record.backtrace {
        members.raw(b",\"backtrace\":true", out);
    }
    if record.recovered {
        members.raw(b",\"recovered\":true", out);
    }
    if let Some(trace) = &record.trace {
        members.raw(b",\"trace_id\":\"", out);
        crate::record::write_hex(&trace.trace_id, out);
        out.extend_from_slice(b"\",\"span_id\":\"");
        crate::record::write_hex(&trace.span_id, out);
        out.extend_from_slice(b"\",\"trace_flags\":");
        out.extend_from_slice(itoa::Buffer::new().format(trace.flags).as_bytes());
    }
    super::fields::write_json(fields, &mut members, out);
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(text: &str) -> String {
        let mut out = Vec::new();
        write_string(text, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_what_json_requires_and_the_js_line_separators() {
        assert_eq!(string("plain"), r#""plain""#);
        assert_eq!(string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(
            string("l1\nl2\r\t\u{1b}[31m\u{7f}"),
            r#""l1\nl2\r\t\u001b[31m\u007f""#
        );
        assert_eq!(string("x\u{2028}y\u{2029}z"), r#""x\u2028y\u2029z""#);
        assert_eq!(string("é€😀\u{2027}"), "\"é€😀\u{2027}\"");
    }

    proptest::proptest! {
        #[test]
        fn every_string_round_trips_through_a_json_parser(text in ".*") {
            let json = string(&text);
            let parsed: String = serde_json::from_str(&json).unwrap();
            proptest::prop_assert_eq!(parsed, text);
            proptest::prop_assert!(!json.contains('\n') && !json.contains('\r'));
        }
    }
}
