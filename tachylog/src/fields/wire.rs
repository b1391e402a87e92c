//! The byte encoding of fields whose keys are only known at run time: the `log` crate's
//! key-values and `tracing` events and spans. It follows the message in a dynamic record (see
//! [`crate::record`]) as a flat stream of items, each starting with a tag byte:
//!
//! | tag | then |
//! |---|---|
//! | `NULL`, `TRUE`, `FALSE` | key |
//! | `I64`, `U64`, `F64` | key, 8 bytes |
//! | `I128`, `U128` | key, 16 bytes |
//! | `STR` | key, text |
//! | `SPAN` | name: the items that follow belong to this span |
//! | `EVENT` | nothing: the items that follow are the record's own |
//!
//! Keys, names and text are a `u32` length (native endian) and UTF-8 bytes. The stream is
//! written on the calling thread by [`FieldWriter`] and read on the back end by [`decode`],
//! which stops quietly at the first malformed item: fields decoded so far are kept.

use super::{FieldValue, Fields};
use std::fmt;

const NULL: u8 = 0;
const TRUE: u8 = 1;
const FALSE: u8 = 2;
const I64: u8 = 3;
const U64: u8 = 4;
const F64: u8 = 5;
const I128: u8 = 6;
const U128: u8 = 7;
const STR: u8 = 8;
const SPAN: u8 = 16;
const EVENT: u8 = 17;

/// Appends field items to a record being built on the calling thread.
pub(crate) struct FieldWriter<'a> {
    buf: &'a mut Vec<u8>,
}

impl<'a> FieldWriter<'a> {
    pub(crate) fn new(buf: &'a mut Vec<u8>) -> Self {
        FieldWriter { buf }
    }

    fn text(&mut self, text: &str) {
        let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
        self.buf.extend_from_slice(&len.to_ne_bytes());
        self.buf.extend_from_slice(&text.as_bytes()[..len as usize]);
    }

    fn keyed(&mut self, tag: u8, key: &str) {
        self.buf.push(tag);
        self.text(key);
    }

    /// A typed value.
    pub(crate) fn value(&mut self, key: &str, value: FieldValue<'_>) {
        match value {
            FieldValue::Null => self.keyed(NULL, key),
            FieldValue::Bool(true) => self.keyed(TRUE, key),
            FieldValue::Bool(false) => self.keyed(FALSE, key),
            FieldValue::I64(v) => {
                self.keyed(I64, key);
                self.buf.extend_from_slice(&v.to_ne_bytes());
            }
            FieldValue::U64(v) => {
                self.keyed(U64, key);
                self.buf.extend_from_slice(&v.to_ne_bytes());
            }
            FieldValue::F64(v) => {
                self.keyed(F64, key);
                self.buf.extend_from_slice(&v.to_ne_bytes());
            }
            FieldValue::I128(v) => {
                self.keyed(I128, key);
                self.buf.extend_from_slice(&v.to_ne_bytes());
            }
            FieldValue::U128(v) => {
                self.keyed(U128, key);
                self.buf.extend_from_slice(&v.to_ne_bytes());
            }
            FieldValue::Str(s) => {
                self.keyed(STR, key);
                self.text(s);
            }
        }
    }

    /// A value formatted right here (`Debug` values of `tracing`, `log`'s `Display` values),
    /// written straight into the record. A panicking or failing impl leaves a marker instead.
    pub(crate) fn formatted(&mut self, key: &str, value: &dyn fmt::Display) {
        self.keyed(STR, key);
        let len_at = self.buf.len();
        self.buf.extend_from_slice(&0u32.to_ne_bytes());
        let start = self.buf.len();
        let outcome = crate::panic_guard::catch_user_panic(|| {
            use std::io::Write as _;
            write!(self.buf, "{value}")
        });
        let marker = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(_)) => Some("<formatting error>".to_string()),
            Err(panic) => Some(format!("<formatting panicked: {panic}>")),
        };
        if let Some(marker) = marker {
            self.buf.truncate(start);
            self.buf.extend_from_slice(marker.as_bytes());
        }
        let len = u32::try_from(self.buf.len() - start).unwrap_or(u32::MAX);
        self.buf.truncate(start + len as usize);
        self.buf[len_at..start].copy_from_slice(&len.to_ne_bytes());
    }

    /// Starts a span's items.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))] // used by the `tracing` layer
    pub(crate) fn span(&mut self, name: &str) {
        self.buf.push(SPAN);
        self.text(name);
    }

    /// Starts the record's own items (after spans).
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))] // used by the `tracing` layer
    pub(crate) fn event(&mut self) {
        self.buf.push(EVENT);
    }

    /// Items encoded earlier by another writer (a span's fields, encoded once when it opened).
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))] // used by the `tracing` layer
    pub(crate) fn raw(&mut self, items: &[u8]) {
        self.buf.extend_from_slice(items);
    }
}

/// Reads items off the front of a byte slice.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, len: usize) -> Option<&'a [u8]> {
        if self.rest.len() < len {
            return None;
        }
        let (head, tail) = self.rest.split_at(len);
        self.rest = tail;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.bytes(N)?.try_into().ok()
    }

    fn text(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        let len = u32::from_ne_bytes(self.array()?) as usize;
        Some(String::from_utf8_lossy(self.bytes(len)?))
    }
}

/// Decodes an item stream into `fields`, stopping at the end or at the first malformed item.
pub(crate) fn decode(bytes: &[u8], fields: &mut Fields) {
    let mut r = Reader { rest: bytes };
    while let Some(&tag) = r.rest.first() {
        r.rest = &r.rest[1..];
        let decoded = match tag {
            SPAN => r.text().map(|name| fields.begin_span(&name)),
            EVENT => {
                fields.begin_event();
                Some(())
            }
            _ => decode_value(tag, &mut r, fields),
        };
        if decoded.is_none() {
            return;
        }
    }
}

fn decode_value(tag: u8, r: &mut Reader<'_>, fields: &mut Fields) -> Option<()> {
    let key = r.text()?;
    let value = match tag {
        NULL => FieldValue::Null,
        TRUE => FieldValue::Bool(true),
        FALSE => FieldValue::Bool(false),
        I64 => FieldValue::I64(i64::from_ne_bytes(r.array()?)),
        U64 => FieldValue::U64(u64::from_ne_bytes(r.array()?)),
        F64 => FieldValue::F64(f64::from_ne_bytes(r.array()?)),
        I128 => FieldValue::I128(i128::from_ne_bytes(r.array()?)),
        U128 => FieldValue::U128(u128::from_ne_bytes(r.array()?)),
        STR => {
            let text = r.text()?;
            fields.push_value(&key, FieldValue::Str(&text));
            return Some(());
        }
        _ => return None,
    };
    fields.push_value(&key, value);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(fields: &Fields) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for span in fields.spans() {
            for f in span.fields() {
                out.push((
                    format!("{}.{}", span.name(), f.key),
                    format!("{:?}", f.value),
                ));
            }
        }
        for f in fields.iter() {
            out.push((f.key.to_string(), format!("{:?}", f.value)));
        }
        out
    }

    #[test]
    fn round_trips_every_type_and_spans() {
        let mut buf = Vec::new();
        let mut span_items = Vec::new();
        FieldWriter::new(&mut span_items).value("id", FieldValue::U64(9));
        let mut w = FieldWriter::new(&mut buf);
        w.span("req");
        w.raw(&span_items);
        w.event();
        w.value("n", FieldValue::Null);
        w.value("t", FieldValue::Bool(true));
        w.value("f", FieldValue::Bool(false));
        w.value("i", FieldValue::I64(-5));
        w.value("u", FieldValue::U64(u64::MAX));
        w.value("x", FieldValue::F64(1.5));
        w.value("I", FieldValue::I128(i128::MIN));
        w.value("U", FieldValue::U128(u128::MAX));
        w.value("s", FieldValue::Str("a\"b\n"));
        w.formatted("d", &format_args!("{:?}", Some(1)));
        let mut fields = Fields::new();
        decode(&buf, &mut fields);
        let expected: Vec<(String, String)> = [
            ("req.id", "U64(9)"),
            ("n", "Null"),
            ("t", "Bool(true)"),
            ("f", "Bool(false)"),
            ("i", "I64(-5)"),
            ("u", "U64(18446744073709551615)"),
            ("x", "F64(1.5)"),
            ("I", "I128(-170141183460469231731687303715884105728)"),
            ("U", "U128(340282366920938463463374607431768211455)"),
            ("s", "Str(\"a\\\"b\\n\")"),
            ("d", "Str(\"Some(1)\")"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(all(&fields), expected);
    }

    #[test]
    fn a_panicking_display_leaves_a_marker_and_the_rest_intact() {
        struct Boom;
        impl fmt::Display for Boom {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("partial")?;
                panic!("boom")
            }
        }
        let mut buf = Vec::new();
        let mut w = FieldWriter::new(&mut buf);
        w.formatted("bad", &Boom);
        w.value("good", FieldValue::I64(1));
        let mut fields = Fields::new();
        decode(&buf, &mut fields);
        assert_eq!(
            fields.get("bad"),
            Some(FieldValue::Str("<formatting panicked: boom>"))
        );
        assert_eq!(fields.get("good"), Some(FieldValue::I64(1)));
    }

    proptest::proptest! {
        /// Any truncation or corruption of a valid stream decodes without panicking or reading
        /// past its end: every decoded item took at least its 5 smallest bytes (a tag and a key
        /// length).
        #[test]
        fn damaged_streams_never_panic(cut in 0usize..200, flip in 0usize..200, byte: u8) {
            let mut buf = Vec::new();
            let mut w = FieldWriter::new(&mut buf);
            w.span("s");
            w.value("k", FieldValue::Str("value"));
            w.event();
            w.value("n", FieldValue::U128(7));
            w.value("m", FieldValue::F64(2.0));
            let mut damaged = buf.clone();
            if flip < damaged.len() {
                damaged[flip] = byte;
            }
            damaged.truncate(cut);
            let mut fields = Fields::new();
            decode(&damaged, &mut fields);
            let items = fields.iter().count()
                + fields.spans().map(|s| 1 + s.fields().count()).sum::<usize>();
            proptest::prop_assert!(items * 5 <= damaged.len());
        }
    }
}
