//! The OTLP protobuf messages, written by hand: `LogRecord`s on the back end's thread (one
//! per [`Sink::write_line`](crate::Sink::write_line), into the batch being built), and the
//! `ExportLogsServiceRequest` around a batch on the exporter's thread. Also the little reading
//! the exporter needs: the `partial_success` of an `ExportLogsServiceResponse`.
//!
//! Why by hand and not `prost` with the `opentelemetry-proto` types: the messages we write are
//! six, and writing them needs only varints, length-delimited fields and `fixed64`. Encoding
//! straight from a [`Line`] into a reused buffer costs no allocation per record, where the
//! generated types want an owned `String` per attribute. And `opentelemetry-proto` with its
//! `logs` feature pulls in `opentelemetry`, `opentelemetry_sdk`, the `futures` crates, `prost`
//! and a proc-macro stack (23 crates, counted with `cargo tree`), for what is 200 lines
//! here.
//!
//! Against `prost` 0.14 with `opentelemetry-proto` 0.33, the same bytes out of both (one record
//! with a 30-byte message, the code and thread attributes, four typed fields and a trace
//! context, in batches of 512), `prost` is 3.7-6.5 times slower per record, most of it in
//! building the `LogRecord`'s owned strings on the back end, so we keep ours (measured:
//! `cargo run -p tachylog --release --features otlp --example otlp_encoder_vs_prost`). The
//! test suite decodes what we write with `opentelemetry-proto` to prove the wire format
//! (`tests/otlp_reaches_a_receiver.rs`), and a real collector reads it
//! (`tests/otlp_reaches_a_real_collector.rs`).
//!
//! Field numbers are those of `opentelemetry/proto/{collector/logs,logs,common,resource}/v1`.

use crate::{FieldValue, Level, Line};

/// Protobuf wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

// ExportLogsServiceRequest
const REQUEST_RESOURCE_LOGS: u32 = 1;
// ResourceLogs
const RESOURCE_LOGS_RESOURCE: u32 = 1;
const RESOURCE_LOGS_SCOPE_LOGS: u32 = 2;
// ScopeLogs
const SCOPE_LOGS_SCOPE: u32 = 1;
const SCOPE_LOGS_LOG_RECORDS: u32 = 2;
// Resource
const RESOURCE_ATTRIBUTES: u32 = 1;
// InstrumentationScope
const SCOPE_NAME: u32 = 1;
const SCOPE_VERSION: u32 = 2;
// LogRecord
const RECORD_TIME: u32 = 1;
const RECORD_SEVERITY_NUMBER: u32 = 2;
const RECORD_SEVERITY_TEXT: u32 = 3;
const RECORD_BODY: u32 = 5;
const RECORD_ATTRIBUTES: u32 = 6;
const RECORD_FLAGS: u32 = 8;
const RECORD_TRACE_ID: u32 = 9;
const RECORD_SPAN_ID: u32 = 10;
const RECORD_OBSERVED_TIME: u32 = 11;
// KeyValue
const KV_KEY: u32 = 1;
const KV_VALUE: u32 = 2;
// AnyValue
const ANY_STRING: u32 = 1;
const ANY_BOOL: u32 = 2;
const ANY_INT: u32 = 3;
const ANY_DOUBLE: u32 = 4;
// ExportLogsServiceResponse / ExportLogsPartialSuccess
const RESPONSE_PARTIAL_SUCCESS: u32 = 1;
const PARTIAL_REJECTED: u32 = 1;
const PARTIAL_MESSAGE: u32 = 2;

/// The OTLP `SeverityNumber` of a level: the first number of each range (TRACE 1, DEBUG 5,
/// INFO 9, WARN 13, ERROR 17).
pub(super) fn severity_number(level: Level) -> u64 {
    match level {
        Level::Trace => 1,
        Level::Debug => 5,
        Level::Info => 9,
        Level::Warn => 13,
        Level::Error => 17,
    }
}

/// A value of a `KeyValue` attribute.
#[derive(Debug, Clone, Copy)]
pub(super) enum Value<'a> {
    Str(&'a str),
    Int(i64),
    Bool(bool),
    Double(f64),
    /// An `AnyValue` with no member set: OTLP's null.
    Empty,
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u64) -> usize {
    // 1 byte per started group of 7 bits; 0 takes one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

fn put_tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(out, u64::from(field) << 3 | u64::from(wire));
}

fn put_len_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_tag(out, field, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(out, field, VARINT);
    put_varint(out, v);
}

fn put_fixed64_field(out: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(out, field, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

/// The encoded length of an `AnyValue` holding `value`.
fn any_value_len(value: Value<'_>) -> usize {
    match value {
        Value::Str(s) => 1 + varint_len(s.len() as u64) + s.len(),
        // int64 is a varint of the two's complement: a negative number takes 10 bytes.
        Value::Int(i) => 1 + varint_len(i as u64),
        Value::Bool(_) => 2,
        Value::Double(_) => 9,
        Value::Empty => 0,
    }
}

fn put_any_value(out: &mut Vec<u8>, value: Value<'_>) {
    match value {
        Value::Str(s) => put_len_field(out, ANY_STRING, s.as_bytes()),
        Value::Int(i) => put_varint_field(out, ANY_INT, i as u64),
        Value::Bool(b) => put_varint_field(out, ANY_BOOL, u64::from(b)),
        Value::Double(d) => put_fixed64_field(out, ANY_DOUBLE, d.to_bits()),
        Value::Empty => {}
    }
}

/// Appends `field` = `KeyValue { key, value }`. Lengths are computed up front: no scratch
/// buffer.
pub(super) fn put_key_value(out: &mut Vec<u8>, field: u32, key: &str, value: Value<'_>) {
    let any_len = any_value_len(value);
    let kv_len =
        1 + varint_len(key.len() as u64) + key.len() + 1 + varint_len(any_len as u64) + any_len;
    put_tag(out, field, LEN);
    put_varint(out, kv_len as u64);
    put_len_field(out, KV_KEY, key.as_bytes());
    put_tag(out, KV_VALUE, LEN);
    put_varint(out, any_len as u64);
    put_any_value(out, value);
}

/// The attribute value of a structured field: OTLP has signed 64-bit integers, doubles,
/// booleans and strings, so integers outside `i64` travel as their decimal text (exact).
fn field_value<'a>(value: FieldValue<'a>, digits: &'a mut itoa::Buffer) -> Value<'a> {
    match value {
        FieldValue::Null => Value::Empty,
        FieldValue::Bool(b) => Value::Bool(b),
        FieldValue::I64(i) => Value::Int(i),
        FieldValue::U64(u) => {
            i64::try_from(u).map_or_else(|_| Value::Str(digits.format(u)), Value::Int)
        }
        FieldValue::I128(i) => {
            i64::try_from(i).map_or_else(|_| Value::Str(digits.format(i)), Value::Int)
        }
        FieldValue::U128(u) => {
            i64::try_from(u).map_or_else(|_| Value::Str(digits.format(u)), Value::Int)
        }
        FieldValue::F64(d) => Value::Double(d),
        FieldValue::Str(s) => Value::Str(s),
    }
}

/// A record's trace context, from its fields named `trace_id`, `span_id` and `trace_flags`.
#[derive(Debug, Default, PartialEq)]
pub(super) struct TraceContext {
    trace_id: Option<[u8; 16]>,
    span_id: Option<[u8; 8]>,
    flags: Option<u8>,
}

impl TraceContext {
    /// Takes `key = value` into the context if it is one of its fields with a valid value
    /// (hex of the right length and not all zeros, as W3C Trace Context requires; flags 0 to
    /// 255); `false` leaves it an attribute.
    fn take(&mut self, key: &str, value: FieldValue<'_>) -> bool {
        match (key, value) {
            ("trace_id", FieldValue::Str(hex)) => {
                hex_id(hex).map(|id| self.trace_id = Some(id)).is_some()
            }
            ("span_id", FieldValue::Str(hex)) => {
                hex_id(hex).map(|id| self.span_id = Some(id)).is_some()
            }
            ("trace_flags", FieldValue::I64(n)) => {
                u8::try_from(n).map(|f| self.flags = Some(f)).is_ok()
            }
            ("trace_flags", FieldValue::U64(n)) => {
                u8::try_from(n).map(|f| self.flags = Some(f)).is_ok()
            }
            _ => false,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        if let Some(flags) = self.flags {
            put_tag(out, RECORD_FLAGS, FIXED32);
            out.extend_from_slice(&u32::from(flags).to_le_bytes());
        }
        if let Some(id) = &self.trace_id {
            put_len_field(out, RECORD_TRACE_ID, id);
        }
        if let Some(id) = &self.span_id {
            put_len_field(out, RECORD_SPAN_ID, id);
        }
    }
}

/// `N` bytes from `2 * N` hex digits, not all zero.
fn hex_id<const N: usize>(hex: &str) -> Option<[u8; N]> {
    let hex = hex.as_bytes();
    if hex.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut id = [0u8; N];
    for (byte, pair) in id.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    (id != [0; N]).then_some(id)
}

/// The attributes of one record, as `LogRecord.attributes` fields, named after the OpenTelemetry
/// semantic conventions for code and threads, then the record's structured fields under their
/// own keys, typed, and the fields of the `tracing` spans it was logged in as
/// `span_name.key`, outermost first. Fields that make the trace context are not attributes:
/// they go into `trace`, the innermost span's over the outer ones and the record's over its
/// spans'.
pub(super) fn encode_attributes(line: &Line<'_>, out: &mut Vec<u8>, trace: &mut TraceContext) {
    put_key_value(
        out,
        RECORD_ATTRIBUTES,
        "code.namespace",
        Value::Str(line.target),
    );
    put_key_value(
        out,
        RECORD_ATTRIBUTES,
        "code.filepath",
        Value::Str(line.file),
    );
    put_key_value(
        out,
        RECORD_ATTRIBUTES,
        "code.lineno",
        Value::Int(i64::from(line.line_number)),
    );
    put_key_value(
        out,
        RECORD_ATTRIBUTES,
        "thread.name",
        Value::Str(line.thread_name),
    );
    // Thread ids are small positive numbers on every OS we run on; wrapping is the
    // two's-complement reading of a `u64` that cannot happen in practice.
    put_key_value(
        out,
        RECORD_ATTRIBUTES,
        "thread.id",
        Value::Int(line.thread_id as i64),
    );
    let mut digits = itoa::Buffer::new();
    for span in line.fields.spans() {
        for field in span.fields() {
            if trace.take(field.key, field.value) {
                continue;
            }
            let key = format!("{}.{}", span.name(), field.key);
            put_key_value(
                out,
                RECORD_ATTRIBUTES,
                &key,
                field_value(field.value, &mut digits),
            );
        }
    }
    for field in line.fields.iter() {
        if !trace.take(field.key, field.value) {
            put_key_value(
                out,
                RECORD_ATTRIBUTES,
                field.key,
                field_value(field.value, &mut digits),
            );
        }
    }
}

/// Encodes records into a batch: `ScopeLogs.log_records` fields, ready to be wrapped by
/// [`request`]. Lives on the back end's thread; its buffer is reused, so a record costs no
/// allocation once the buffers have grown.
#[derive(Default)]
pub(super) struct RecordEncoder {
    /// One `LogRecord` being built: its length must be known before it is appended.
    scratch: Vec<u8>,
}

impl RecordEncoder {
    /// Appends `line` as one `log_records` field of `ScopeLogs` to `batch`.
    pub(super) fn encode(&mut self, line: &Line<'_>, batch: &mut Vec<u8>) {
        let record = &mut self.scratch;
        record.clear();
        // Before 1970 is not a time a record can carry: clamp rather than wrap.
        let nanos = line.unix_nanos.max(0) as u64;
        put_fixed64_field(record, RECORD_TIME, nanos);
        put_varint_field(record, RECORD_SEVERITY_NUMBER, severity_number(line.level));
        put_len_field(record, RECORD_SEVERITY_TEXT, line.level.as_str().as_bytes());
        let body_len = any_value_len(Value::Str(line.message));
        put_tag(record, RECORD_BODY, LEN);
        put_varint(record, body_len as u64);
        put_any_value(record, Value::Str(line.message));
        let mut trace = TraceContext::default();
        encode_attributes(line, record, &mut trace);
        // The OpenTelemetry span the record was logged in (features `opentelemetry`,
        // `tracing-opentelemetry`) wins over fields that happen to carry ids.
        if let Some(span) = &line.trace {
            trace.trace_id = Some(span.trace_id);
            trace.span_id = Some(span.span_id);
            trace.flags = Some(span.flags);
        }
        trace.encode(record);
        // The record is stamped on the calling thread: that is also when it was observed.
        put_fixed64_field(record, RECORD_OBSERVED_TIME, nanos);
        put_len_field(batch, SCOPE_LOGS_LOG_RECORDS, record);
        // One huge record must not pin its memory for the rest of the run.
        if record.capacity() > 1 << 20 {
            *record = Vec::new();
        }
    }
}

/// An encoded `Resource` message (without its field tag).
pub(super) fn resource(attributes: &[(&str, Value<'_>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in attributes {
        put_key_value(&mut out, RESOURCE_ATTRIBUTES, key, *value);
    }
    out
}

/// An encoded `InstrumentationScope` message: tachylog and its version.
pub(super) fn scope() -> Vec<u8> {
    let mut out = Vec::new();
    put_len_field(&mut out, SCOPE_NAME, b"tachylog");
    put_len_field(
        &mut out,
        SCOPE_VERSION,
        env!("CARGO_PKG_VERSION").as_bytes(),
    );
    out
}

/// Writes into `out` (cleared first) the `ExportLogsServiceRequest` holding one
/// `ResourceLogs` with `resource`, one `ScopeLogs` with `scope`, and the `records` encoded by
/// [`RecordEncoder`].
pub(super) fn request(resource: &[u8], scope: &[u8], records: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let scope_logs_len = 1 + varint_len(scope.len() as u64) + scope.len() + records.len();
    let resource_logs_len = 1
        + varint_len(resource.len() as u64)
        + resource.len()
        + 1
        + varint_len(scope_logs_len as u64)
        + scope_logs_len;
    out.reserve(resource_logs_len + 8);
    put_tag(out, REQUEST_RESOURCE_LOGS, LEN);
    put_varint(out, resource_logs_len as u64);
    put_len_field(out, RESOURCE_LOGS_RESOURCE, resource);
    put_tag(out, RESOURCE_LOGS_SCOPE_LOGS, LEN);
    put_varint(out, scope_logs_len as u64);
    put_len_field(out, SCOPE_LOGS_SCOPE, scope);
    out.extend_from_slice(records);
}

/// How many `log_records` fields `records` holds, if it is nothing but such fields, each
/// whole: what an outbox frame must hold to be sent (`outbox.rs`).
#[cfg(unix)]
pub(super) fn count_log_records(records: &[u8]) -> Option<u64> {
    let mut reader = Reader(records);
    let mut count = 0;
    while !reader.0.is_empty() {
        match reader.field()? {
            (SCOPE_LOGS_LOG_RECORDS, Field::Len(_)) => count += 1,
            _ => return None,
        }
    }
    Some(count)
}

/// Whether `bytes` read as whole protobuf fields, nothing left over: what a `Resource` read
/// back from an outbox must be before it goes into a request.
#[cfg(unix)]
pub(super) fn is_message(bytes: &[u8]) -> bool {
    let mut reader = Reader(bytes);
    while !reader.0.is_empty() {
        if reader.field().is_none() {
            return false;
        }
    }
    true
}

/// What a collector said it rejected in a successful response: `(rejected_log_records,
/// error_message)`, or `None` when everything was accepted (or the body is not a response we
/// can read, which a success status makes an acceptance).
pub(super) fn partial_success(body: &[u8]) -> Option<(i64, String)> {
    let partial = Reader(body)
        .fields()
        .find(|(f, _)| *f == RESPONSE_PARTIAL_SUCCESS)?
        .1;
    let Field::Len(partial) = partial else {
        return None;
    };
    let (mut rejected, mut message) = (0i64, String::new());
    for (field, value) in Reader(partial).fields() {
        match (field, value) {
            (PARTIAL_REJECTED, Field::Varint(n)) => rejected = n as i64,
            (PARTIAL_MESSAGE, Field::Len(s)) => message = String::from_utf8_lossy(s).into_owned(),
            _ => {}
        }
    }
    (rejected != 0 || !message.is_empty()).then_some((rejected, message))
}

/// One field's value, as far as we read them.
enum Field<'a> {
    Varint(u64),
    Len(&'a [u8]),
    Other,
}

/// A protobuf message being read field by field; stops at the first malformed byte.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.0.split_first()?;
            self.0 = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn field(&mut self) -> Option<(u32, Field<'a>)> {
        let tag = self.varint()?;
        let field = u32::try_from(tag >> 3).ok()?;
        let value = match tag & 7 {
            0 => Field::Varint(self.varint()?),
            1 => self.take(8).map(|_| Field::Other)?,
            2 => {
                let n = usize::try_from(self.varint()?).ok()?;
                Field::Len(self.take(n)?)
            }
            5 => self.take(4).map(|_| Field::Other)?,
            _ => return None,
        };
        Some((field, value))
    }

    fn fields(mut self) -> impl Iterator<Item = (u32, Field<'a>)> {
        std::iter::from_fn(move || self.field())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_the_protobuf_examples() {
        let enc = |v| {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(1), [1]);
        assert_eq!(enc(150), [0x96, 0x01]);
        assert_eq!(enc(u64::MAX).len(), 10);
        for shift in 0..64 {
            enc(1 << shift);
            enc((1 << shift) - 1);
        }
    }

    #[test]
    fn severities_start_each_otlp_range() {
        assert_eq!(
            [
                Level::Trace,
                Level::Debug,
                Level::Info,
                Level::Warn,
                Level::Error
            ]
            .map(severity_number),
            [1, 5, 9, 13, 17]
        );
    }

    #[test]
    fn key_values_read_back() {
        let mut out = Vec::new();
        put_key_value(&mut out, 6, "k", Value::Int(-1));
        let (field, Field::Len(kv)) = Reader(&out).field().unwrap() else {
            panic!()
        };
        assert_eq!(field, 6);
        let fields: Vec<_> = Reader(kv).fields().collect();
        assert_eq!(fields.len(), 2);
        assert!(matches!(fields[0], (1, Field::Len(b"k"))));
        let (2, Field::Len(any)) = fields[1] else {
            panic!()
        };
        let (3, Field::Varint(v)) = Reader(any).field().unwrap() else {
            panic!()
        };
        assert_eq!(v as i64, -1);
    }

    #[test]
    fn trace_context_takes_valid_ids_only() {
        let mut t = TraceContext::default();
        assert!(t.take(
            "trace_id",
            FieldValue::Str("4bf92f3577b34da6a3ce929d0e0e4736")
        ));
        assert!(t.take("span_id", FieldValue::Str("00F067AA0BA902B7")));
        assert!(t.take("trace_flags", FieldValue::U64(1)));
        assert_eq!(t.trace_id.unwrap()[..3], [0x4b, 0xf9, 0x2f]);
        assert_eq!(
            t.span_id.unwrap(),
            [0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        for (key, value) in [
            (
                "trace_id",
                FieldValue::Str("00000000000000000000000000000000"),
            ),
            (
                "trace_id",
                FieldValue::Str("4bf92f3577b34da6a3ce929d0e0e473"),
            ),
            (
                "trace_id",
                FieldValue::Str("4bf92f3577b34da6a3ce929d0e0e473g"),
            ),
            ("span_id", FieldValue::Str("é0f067aa0ba902b")),
            ("span_id", FieldValue::I64(7)),
            ("trace_flags", FieldValue::I64(256)),
            ("trace_flags", FieldValue::I64(-1)),
            ("trace", FieldValue::Str("4bf92f3577b34da6a3ce929d0e0e4736")),
        ] {
            assert!(!t.take(key, value), "{key} = {value:?}");
        }
        let mut out = Vec::new();
        t.encode(&mut out);
        let fields: Vec<_> = Reader(&out).fields().map(|(f, _)| f).collect();
        assert_eq!(fields, [RECORD_FLAGS, RECORD_TRACE_ID, RECORD_SPAN_ID]);
        assert_eq!(out.len(), 5 + 18 + 10);
    }

    #[test]
    fn partial_success_is_read_and_junk_is_not_a_rejection() {
        let mut partial = Vec::new();
        put_varint_field(&mut partial, PARTIAL_REJECTED, 3);
        put_len_field(&mut partial, PARTIAL_MESSAGE, b"too old");
        let mut response = Vec::new();
        put_len_field(&mut response, RESPONSE_PARTIAL_SUCCESS, &partial);
        assert_eq!(partial_success(&response), Some((3, "too old".to_string())));
        assert_eq!(partial_success(b""), None);
        assert_eq!(partial_success(b"{\"json\": true}"), None);
        let mut empty = Vec::new();
        put_len_field(&mut empty, RESPONSE_PARTIAL_SUCCESS, b"");
        assert_eq!(partial_success(&empty), None);
    }
}
