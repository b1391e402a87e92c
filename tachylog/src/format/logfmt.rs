//! logfmt: `key=value` pairs on one line, as Heroku, Grafana Loki and many log tools read them.
//!
//! `ts=2026-11-21T16:04:05.125049Z level=info target=app::net thread=main tid=4211
//! msg="served 3 items" user_id=42 file=src/net.rs line=20`, structured fields following `msg`
//! and the spans, if any, before it as `spans="request{id=7}:db"`.
//!
//! A value is written bare when it is non-empty and holds no space, `=`, `"` or control
//! character; otherwise it is quoted, with `"` and `\` backslash-escaped and control characters
//! written as `\n`, `\r`, `\t` or `\u{..}`, so a record is always one line.

use super::line_shape::{merged_fields, CompiledShape, LineKey};
use super::quote::write_value;
use super::time::TimeCache;
use super::view::RecordView;
use crate::fields::Fields;

/// Appends `record` as one logfmt line shaped by `shape`.
pub(crate) fn write_record(
    record: &RecordView<'_>,
    message: &str,
    fields: &Fields,
    shape: &CompiledShape,
    time: &mut TimeCache,
    out: &mut Vec<u8>,
) {
    let mut members = shape.members();
    if members.key(LineKey::Timestamp, out) {
        time.write_rfc3339(record.unix_nanos, out);
    }
    if members.key(LineKey::Level, out) {
        let level = record.level.as_str().as_bytes();
        out.extend(level.iter().map(u8::to_ascii_lowercase));
    }
    members.statics(out);
    if members.key(LineKey::Target, out) {
        write_value(record.target, out);
    }
    if members.key(LineKey::Thread, out) {
        write_value(&record.thread.name, out);
    }
    if members.key(LineKey::Tid, out) {
        out.extend_from_slice(itoa::Buffer::new().format(record.thread.id).as_bytes());
    }
    if fields.has_spans() && members.key(LineKey::Spans, out) {
        let mut spans = Vec::new();
        if shape.flatten_spans() {
            super::fields::write_span_names(fields, &mut spans);
        } else {
            super::fields::write_span_path(fields, &mut spans);
        }
        write_value(&String::from_utf8_lossy(&spans), out);
    }
    if members.key(LineKey::Message, out) {
        write_value(message, out);
    }
    if record.backtrace {
        members.raw(b" backtrace=true", out);
    }
    if record.recovered {
        members.raw(b" recovered=true", out);
    }
    if let Some(trace) = &record.trace {
        members.raw(b" trace_id=", out);
        crate::record::write_hex(&trace.trace_id, out);
        out.extend_from_slice(b" span_id=");
        crate::record::write_hex(&trace.span_id, out);
    }
    if shape.flatten_spans() {
        for field in merged_fields(fields) {
            members.separator(b' ', out);
            super::fields::write_pair(&field, out);
        }
    } else {
        for field in fields.iter() {
            members.separator(b' ', out);
            super::fields::write_pair(&field, out);
        }
    }
    if members.key(LineKey::File, out) {
        write_value(record.file, out);
    }
    if members.key(LineKey::Line, out) {
        out.extend_from_slice(itoa::Buffer::new().format(record.line).as_bytes());
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> String {
        let mut out = Vec::new();
        write_value(text, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn bare_when_possible_quoted_and_escaped_otherwise() {
        assert_eq!(value("app::net"), "app::net");
        assert_eq!(value(""), r#""""#);
        assert_eq!(value("served 3 items"), r#""served 3 items""#);
        assert_eq!(value("a=b"), r#""a=b""#);
        assert_eq!(value("say \"hi\"\n\\"), r#""say \"hi\"\n\\""#);
        assert_eq!(value("\u{1b}[31m\u{2028}"), r#""\u{1b}[31m\u{2028}""#);
    }
}
