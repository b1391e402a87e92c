//! The benchmark behind `OtlpSink`'s hand-written protobuf encoder (`src/sink/otlp/encode.rs`):
//! the same record encoded by it, and by `prost` with the `opentelemetry-proto` types as an
//! SDK-style exporter would (a `LogRecord` with owned strings per record, the
//! `ExportLogsServiceRequest` encoded per batch of 512). Both produce the same bytes (checked
//! first). Run in release: `cargo run -p tachylog --release --features otlp --example
//! otlp_encoder_vs_prost`.
//!
//! The record is a real one: logged through tachylog to a sink that runs the benchmark on the
//! `Line` it is handed, so it carries what `OtlpSink` sees (a message, the code and thread
//! attributes, four typed fields and a trace context).

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message as _;
use std::hint::black_box;
use std::time::Instant;
use tachylog::{FieldValue, Line, OtlpSink, Sink};

const BATCH: usize = 512;
const RECORDS: usize = 200 * BATCH;
const RUNS: usize = 5;
const RESOURCE: [(&str, &str); 2] = [("service.name", "bench"), ("host.name", "localhost")];

fn kv(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

fn hex<const N: usize>(text: &str) -> Option<Vec<u8>> {
    (text.len() == 2 * N)
        .then(|| {
            (0..N)
                .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
                .collect()
        })
        .flatten()
}

/// What an encoder built on the generated types does per record: own every string.
fn prost_record(line: &Line<'_>) -> LogRecord {
    use any_value::Value as V;
    let nanos = line.unix_nanos as u64;
    let mut record = LogRecord {
        time_unix_nano: nanos,
        observed_time_unix_nano: nanos,
        severity_number: 9,
        severity_text: line.level.as_str().to_string(),
        body: Some(AnyValue {
            value: Some(V::StringValue(line.message.to_string())),
        }),
        ..Default::default()
    };
    record.attributes = vec![
        kv("code.namespace", V::StringValue(line.target.to_string())),
        kv("code.filepath", V::StringValue(line.file.to_string())),
        kv("code.lineno", V::IntValue(i64::from(line.line_number))),
        kv("thread.name", V::StringValue(line.thread_name.to_string())),
        kv("thread.id", V::IntValue(line.thread_id as i64)),
    ];
    for field in line.fields.iter() {
        match (field.key, field.value) {
            ("trace_id", FieldValue::Str(s)) if hex::<16>(s).is_some() => {
                record.trace_id = hex::<16>(s).unwrap()
            }
            ("span_id", FieldValue::Str(s)) if hex::<8>(s).is_some() => {
                record.span_id = hex::<8>(s).unwrap()
            }
            (key, FieldValue::Str(s)) => record
                .attributes
                .push(kv(key, V::StringValue(s.to_string()))),
            (key, FieldValue::I64(i)) => record.attributes.push(kv(key, V::IntValue(i))),
            (key, FieldValue::U64(u)) => record.attributes.push(kv(key, V::IntValue(u as i64))),
            (key, FieldValue::F64(d)) => record.attributes.push(kv(key, V::DoubleValue(d))),
            (key, FieldValue::Bool(b)) => record.attributes.push(kv(key, V::BoolValue(b))),
            (key, other) => record
                .attributes
                .push(kv(key, V::StringValue(other.to_string()))),
        }
    }
    record
}

fn prost_request(records: Vec<LogRecord>) -> ExportLogsServiceRequest {
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource {
                attributes: RESOURCE
                    .iter()
                    .map(|(k, v)| kv(k, any_value::Value::StringValue(v.to_string())))
                    .collect(),
                ..Default::default()
            }),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope {
                    name: "tachylog".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                log_records: records,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// Best of `RUNS` of `RECORDS` records, in ns per record.
fn best(mut run: impl FnMut()) -> f64 {
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed().as_nanos() as f64 / RECORDS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn bench(line: &Line<'_>) {
    // Same bytes first, or the comparison means nothing.
    let mut encode = OtlpSink::__bench_record_encoder();
    let (mut batch, mut ours) = (Vec::new(), Vec::new());
    encode(line, &mut batch);
    OtlpSink::__bench_request(&RESOURCE, &batch, &mut ours);
    let theirs = prost_request(vec![prost_record(line)]).encode_to_vec();
    assert_eq!(ours, theirs, "the two encoders disagree");
    println!("one record: {} bytes of request", ours.len());

    let (mut batch, mut out) = (Vec::with_capacity(1 << 20), Vec::with_capacity(1 << 20));
    let hand_records = best(|| {
        for _ in 0..RECORDS / BATCH {
            batch.clear();
            for _ in 0..BATCH {
                encode(black_box(line), &mut batch);
            }
            black_box(&batch);
        }
    });
    let hand_total = best(|| {
        for _ in 0..RECORDS / BATCH {
            batch.clear();
            for _ in 0..BATCH {
                encode(black_box(line), &mut batch);
            }
            OtlpSink::__bench_request(&RESOURCE, &batch, &mut out);
            black_box(&out);
        }
    });
    let prost_records = best(|| {
        for _ in 0..RECORDS / BATCH {
            let records: Vec<LogRecord> =
                (0..BATCH).map(|_| prost_record(black_box(line))).collect();
            black_box(&records);
        }
    });
    let prost_total = best(|| {
        for _ in 0..RECORDS / BATCH {
            let records: Vec<LogRecord> =
                (0..BATCH).map(|_| prost_record(black_box(line))).collect();
            out.clear();
            prost_request(records).encode(&mut out).unwrap();
            black_box(&out);
        }
    });
    println!("per record, best of {RUNS} runs of {RECORDS} records in batches of {BATCH}:");
    println!("  hand-written: {hand_records:6.1} ns to encode into the batch (the back end), {hand_total:6.1} ns with the request");
    println!("  prost:        {prost_records:6.1} ns to build the LogRecord (the back end),   {prost_total:6.1} ns with the request");
    println!(
        "  prost / hand-written, whole request: {:.2}x",
        prost_total / hand_total
    );
}

struct Bench;

impl Sink for Bench {
    fn write_line(&mut self, line: &Line<'_>) -> std::io::Result<()> {
        if line.message.starts_with("GET ") {
            bench(line);
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {
    if cfg!(debug_assertions) {
        eprintln!("note: a debug build; run with --release for meaningful figures");
    }
    let guard = tachylog::builder().sink(Bench).init().unwrap();
    tachylog::info!(
        user_id = 42u64, path = "/api/orders", ok = true, ratio = 0.25,
        trace_id = "4bf92f3577b34da6a3ce929d0e0e4736", span_id = "00f067aa0ba902b7";
        "GET {} took {} ms", "/api/orders", 12
    );
    drop(guard);
}
