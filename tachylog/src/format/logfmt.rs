//! logfmt: `key=value` pairs on one line, as Heroku, Grafana Loki and many log tools read them.
//!
//! `ts=2026-11-21T16:04:05.125049Z level=info target=app::net thread=main tid=4211
//! msg="served 3 items" user_id=42 file=src/net.rs line=20`, structured fields following `msg`
//! and the spans, if any, before it as `spans="request{id=7}:db"`.
//!
//! A value is written bare when it is non-empty and holds no space, `=`, `"` or control
//! character; otherwise it is quoted, with `"` and `\` backslash-escaped and control characters
//! written as `\n`, `\r`, `\t` or `\u{..}`, so a record is always one line.

use super::quote::write_value;
use super::time::TimeCache;
use super::view::RecordView;
use crate::fields::Fields;

/// Appends `record` as one logfmt line.
pub(crate) fn write_record(
    record: &RecordView<'_>,
    message: &str,
    fields: &Fields,
    time: &mut TimeCache,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"ts=");
    time.write_rfc3339(record.unix_nanos, out);
    out.extend_from_slice(b" level=");
    out.extend_from_slice(record.level.as_str().to_ascii_lowercase().as_bytes());
    out.extend_from_slice(b" target=");
    write_value(record.target, out);
    out.extend_from_slice(b" thread=");
    write_value(&record.thread.name, out);
    out.extend_from_slice(b" tid=");
    out.extend_from_slice(itoa::Buffer::new().format(record.thread.id).as_bytes());
    let mut spans = Vec::new();
    if super::fields::write_span_path(fields, &mut spans) {
        out.extend_from_slice(b" spans=");
        write_value(&String::from_utf8_lossy(&spans), out);
    }
    out.extend_from_slice(b" msg=");
    write_value(message, out);
    if record.backtrace {
        out.extend_from_slice(b" backtrace=true");
    }
    if record.recovered {
        out.extend_from_slice(b" recovered=true");
    }
    if let Some(trace) = &record.trace {
        crate::record::write_trace_pairs(trace, out);
    }
    super::fields::write_pairs(fields, out);
    out.extend_from_slice(b" file=");
    write_value(record.file, out);
    out.extend_from_slice(b" line=");
    out.extend_from_slice(itoa::Buffer::new().format(record.line).as_bytes());
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
