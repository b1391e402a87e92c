//! Structured fields in each output format, on the back end.
//!
//! - Text lines and logfmt: ` key=value` pairs after the message, values quoted and escaped
//!   as logfmt does when they hold a space, `=`, `"`, `\` or a control character; keys have
//!   such characters replaced by `_` (keys from `log` and `tracing` are run-time strings).
//!   The spans a record was logged in read `outer{id=7}:inner`, as tracing's own formatter
//!   writes them.
//! - JSON: `"fields":{"key":value,...}` with native JSON types (integers, floats, booleans,
//!   null, strings) and `"spans":[{"name":"outer","id":7},...]` (flattened as tracing's own JSON
//!   does, so a span field itself called `name` follows the span's name under the same key;
//!   most parsers keep the last). NaN and infinities, which
//!   JSON cannot represent as numbers, are written as the strings `"NaN"`, `"inf"`, `"-inf"`.

use super::line_shape::{merged_fields, LineKey, Members};
use super::quote::{write_string, write_value};
use crate::codec::{TextBuf, Typed};
use crate::fields::{Field, FieldValue, Fields};
use std::io::Write as _;

/// Appends ` key=value` for each of the record's own fields.
pub(crate) fn write_pairs(fields: &Fields, out: &mut Vec<u8>) {
    for field in fields.iter() {
        out.push(b' ');
        write_pair(&field, out);
    }
}

pub(crate) fn write_pair(field: &Field<'_>, out: &mut Vec<u8>) {
    write_key(field.key, out);
    out.push(b'=');
    // Numbers by the writers of the message's values (the same text as their `Display`), not
    // through `core::fmt`: a pair cost about 580 instructions that way (callgrind, `tachylog
    // cat` of `tachylog-bench`'s `throughput_mix_binary` log).
    let typed = match field.value {
        FieldValue::Str(s) => return write_value(s, out),
        FieldValue::Null => return out.extend_from_slice(b"null"),
        FieldValue::Bool(v) => Typed::Bool(v),
        FieldValue::I64(v) => Typed::I64(v),
        FieldValue::U64(v) => Typed::U64(v),
        FieldValue::I128(v) => Typed::I128(v),
        FieldValue::U128(v) => Typed::U128(v),
        FieldValue::F64(v) => Typed::F64(v),
    };
    typed.render(&mut TextBuf::new(out));
}

/// A key as logfmt allows it: no space, `=`, `"`, control or layout character; never empty.
pub(crate) fn write_key(key: &str, out: &mut Vec<u8>) {
    if key.is_empty() {
        out.push(b'_');
        return;
    }
    // Most keys are ASCII words: copied whole.
    if key
        .bytes()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'=' | b'"' | b'\\'))
    {
        out.extend_from_slice(key.as_bytes());
        return;
    }
    for c in key.chars() {
        let bad = c == ' ' || c == '=' || c == '"' || c == '\\' || c.is_control();
        let c = if bad || super::escape::invisible_layout_char(c) {
            '_'
        } else {
            c
        };
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

/// Appends the span path, `outer{id=7}:inner`, if the record has spans. Returns whether it did.
pub(crate) fn write_span_path(fields: &Fields, out: &mut Vec<u8>) -> bool {
    for (i, span) in fields.spans().enumerate() {
        if i > 0 {
            out.push(b':');
        }
        write_key(span.name(), out);
        let mut span_fields = span.fields().peekable();
        if span_fields.peek().is_some() {
            out.push(b'{');
            for (j, field) in span_fields.enumerate() {
                if j > 0 {
                    out.push(b' ');
                }
                write_pair(&field, out);
            }
            out.push(b'}');
        }
    }
    fields.has_spans()
}

/// Appends the span path without the spans' fields, `outer:inner`.
pub(crate) fn write_span_names(fields: &Fields, out: &mut Vec<u8>) {
    for (i, span) in fields.spans().enumerate() {
        if i > 0 {
            out.push(b':');
        }
        write_key(span.name(), out);
    }
}

/// Appends `,"fields":{...}` and `,"spans":[...]` when the record has them, as the sink's
/// shape says: the fields nested or at the top level, the spans a list of objects or, with
/// their fields flattened into the record's, a path of names.
pub(crate) fn write_json(fields: &Fields, members: &mut Members<'_>, out: &mut Vec<u8>) {
    let shape = members.shape;
    if shape.flatten_spans() {
        write_json_fields(merged_fields(fields).peekable(), members, out);
    } else {
        write_json_fields(fields.iter().peekable(), members, out);
    }
    if !fields.has_spans() {
        return;
    }
    if shape.flatten_spans() {
        if members.key(LineKey::Spans, out) {
            let mut names = Vec::new();
            write_span_names(fields, &mut names);
            write_string(&String::from_utf8_lossy(&names), out);
        }
        return;
    }
    if members.key(LineKey::Spans, out) {
        out.push(b'[');
        for (i, span) in fields.spans().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"name\":");
            write_string(span.name(), out);
            if span.fields().next().is_some() {
                out.push(b',');
                write_json_members(span.fields(), out);
            }
            out.push(b'}');
        }
        out.push(b']');
    }
}

/// The fields as the `fields` object, or at the top level when the shape flattens them (a key
/// the line has already is written `fields.KEY`).
fn write_json_fields<'a>(
    mut fields: std::iter::Peekable<impl Iterator<Item = Field<'a>>>,
    members: &mut Members<'_>,
    out: &mut Vec<u8>,
) {
    if fields.peek().is_none() {
        return;
    }
    if !members.shape.flatten_fields() {
        if members.key(LineKey::Fields, out) {
            out.push(b'{');
            write_json_members(fields, out);
            out.push(b'}');
        }
        return;
    }
    for field in fields {
        members.separator(b',', out);
        if members.shape.collides(field.key) {
            write_string(&format!("fields.{}", field.key), out);
        } else {
            write_string(field.key, out);
        }
        out.push(b':');
        write_json_value(field.value, out);
    }
}

fn write_json_members<'a>(fields: impl Iterator<Item = Field<'a>>, out: &mut Vec<u8>) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(field.key, out);
        out.push(b':');
        write_json_value(field.value, out);
    }
}

fn write_json_value(value: FieldValue<'_>, out: &mut Vec<u8>) {
    match value {
        FieldValue::Null => out.extend_from_slice(b"null"),
        FieldValue::Bool(v) => out.extend_from_slice(if v { b"true" } else { b"false" }),
        FieldValue::I64(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        FieldValue::U64(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        FieldValue::I128(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        FieldValue::U128(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        // Rust's `Display` for floats is the shortest text that reads back as the same number,
        // never in exponent form: always a valid JSON number when finite.
        FieldValue::F64(v) if v.is_finite() => {
            let _ = write!(out, "{v}");
        }
        FieldValue::F64(v) => write_string(&v.to_string(), out),
        FieldValue::Str(s) => write_string(s, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Fields {
        let mut f = Fields::new();
        f.begin_span("request");
        f.push_value("id", FieldValue::U64(7));
        f.begin_span("db");
        f.begin_event();
        f.push_value("user", FieldValue::Str("ada lovelace"));
        f.push_value("n", FieldValue::I64(-2));
        f.push_value("ok", FieldValue::Bool(true));
        f.push_value("ratio", FieldValue::F64(0.25));
        f.push_value("nan", FieldValue::F64(f64::NAN));
        f.push_value("none", FieldValue::Null);
        f.push_value("bad key=\n", FieldValue::Str("x\"y"));
        f
    }

    /// The fields as a default-shaped JSON line writes them after its first member.
    fn write_json(fields: &Fields, out: &mut Vec<u8>) {
        let shape = crate::format::LineShape::new().compile(false);
        super::write_json(fields, &mut shape.members_after_one(), out);
    }

    fn text(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        write(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn pairs_quote_and_escape_values_and_sanitise_keys() {
        let f = sample();
        assert_eq!(
            text(|o| write_pairs(&f, o)),
            r#" user="ada lovelace" n=-2 ok=true ratio=0.25 nan=NaN none=null bad_key__="x\"y""#
        );
        assert_eq!(
            text(|o| assert!(write_span_path(&f, o))),
            "request{id=7}:db"
        );
        assert!(!write_span_path(&Fields::new(), &mut Vec::new()));
    }

    #[test]
    fn json_has_native_types_and_parses() {
        let f = sample();
        let json = text(|o| {
            o.extend_from_slice(b"{\"m\":1");
            write_json(&f, o);
            o.push(b'}');
        });
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["fields"]["user"], "ada lovelace");
        assert_eq!(v["fields"]["n"], -2);
        assert_eq!(v["fields"]["ok"], true);
        assert_eq!(v["fields"]["ratio"], 0.25);
        assert_eq!(v["fields"]["nan"], "NaN");
        assert!(v["fields"]["none"].is_null());
        assert_eq!(v["fields"]["bad key=\n"], "x\"y");
        assert_eq!(v["spans"][0]["name"], "request");
        assert_eq!(v["spans"][0]["id"], 7);
        assert_eq!(v["spans"][1], serde_json::json!({"name": "db"}));
    }

    #[test]
    fn no_fields_no_output() {
        assert_eq!(text(|o| write_json(&Fields::new(), o)), "");
        assert_eq!(text(|o| write_pairs(&Fields::new(), o)), "");
    }

    #[test]
    fn big_integers_stay_exact_in_json() {
        let mut f = Fields::new();
        f.push_value("u", FieldValue::U128(u128::MAX));
        f.push_value("f", FieldValue::F64(1e21));
        let json = text(|o| write_json(&f, o));
        assert_eq!(
            json,
            r#","fields":{"u":340282366920938463463374607431768211455,"f":1000000000000000000000}"#
        );
    }

    proptest::proptest! {
        /// Whatever the keys and values hold, text pairs stay on one line and JSON parses
        /// back to the same keys and values.
        #[test]
        fn any_key_and_value_stay_one_line_and_valid_json(
            entries in proptest::collection::vec((".*", ".*"), 0..4),
            span in ".*",
        ) {
            let mut f = Fields::new();
            f.begin_span(&span);
            f.push_value("k", FieldValue::Str(&span));
            f.begin_event();
            for (key, value) in &entries {
                f.push_value(key, FieldValue::Str(value));
            }
            let pairs = text(|o| {
                write_span_path(&f, o);
                write_pairs(&f, o);
            });
            proptest::prop_assert!(!pairs.contains('\n') && !pairs.contains('\r'), "{pairs:?}");
            let json = text(|o| {
                o.push(b'{');
                o.extend_from_slice(b"\"m\":1");
                write_json(&f, o);
                o.push(b'}');
            });
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            for (key, _) in &entries {
                // A repeated key keeps its last value in the parsed object.
                let last = entries.iter().rev().find(|(k, _)| k == key).unwrap();
                proptest::prop_assert_eq!(&v["fields"][key], &serde_json::Value::from(last.1.as_str()));
            }
            proptest::prop_assert_eq!(&v["spans"][0]["name"], &serde_json::Value::from(span.as_str()));
        }
    }
}
