//! `tracing` events go through tachylog's layer with their message, level, target, location
//! and typed fields, inside the names and fields of their spans (outermost first, latest
//! values), from any thread; they stack with `EnvFilter` and with other layers, which keep
//! getting every event whatever tachylog's own filter says; hostile text stays one valid line
//! and a panicking `Debug` leaves a marker.
//!
//! Each test installs its subscriber for its own thread (`with_default`) and a fresh tachylog
//! logger writing JSON lines, under the lock that serialises the process-global logger.
#![cfg(feature = "tracing")]

mod common;

use serde_json::{json, Value};
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tracing::dispatcher::Dispatch;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::EnvFilter;

/// Runs `body` with a fresh tachylog logger (JSON lines into a file, `filter` in force) and
/// returns the records it wrote, parsed.
fn json_records(filter: &str, body: impl FnOnce()) -> Vec<Value> {
    json_lines(filter, body)
        .iter()
        .map(|l| parse_json(l))
        .collect()
}

/// [`json_records`], unparsed.
fn json_lines(filter: &str, body: impl FnOnce()) -> Vec<String> {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("tracing layer test", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let guard = common::expect_init(
        tachylog::builder()
            .file_with(
                &path,
                tachylog::SinkOptions::new().format(tachylog::Format::Json),
            )
            .filter(filter)
            .init(),
    );
    body();
    drop(guard);
    common::read_log(&path)
        .lines()
        .map(str::to_string)
        .collect()
}

fn parse_json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("invalid JSON {line:?}: {e}"))
}

fn parse_json_lines(path: &Path) -> Vec<Value> {
    common::read_log(path).lines().map(parse_json).collect()
}

/// The registry with tachylog's layer alone.
fn tachylog_only() -> Dispatch {
    Dispatch::new(tracing_subscriber::registry().with(tachylog::tracing_layer()))
}

/// The span list of a record as `[(name, {fields})]`, fields without the name.
fn spans(record: &Value) -> Vec<(String, Value)> {
    let Some(spans) = record.get("spans") else {
        return Vec::new();
    };
    spans
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mut fields = s.as_object().unwrap().clone();
            let name = fields.remove("name").unwrap().as_str().unwrap().to_string();
            (name, Value::Object(fields))
        })
        .collect()
}

#[test]
fn events_carry_message_level_target_location_and_typed_fields() {
    let mut line = 0;
    let lines = json_lines("trace", || {
        tracing::dispatcher::with_default(&tachylog_only(), || {
            line = line!() + 1;
            tracing::info!(target: "app::db", int = -3i64, uint = 7u64, float = 1.5, flag = true, text = "hi", big = u128::MAX, neg = i128::MIN, dbg = ?vec![1, 2], shown = %"display", "rows {} in {:?}", 5, "users");
            tracing::trace!("t");
            tracing::debug!("d");
            tracing::warn!("w");
            tracing::error!("e");
            tracing::info!(only = 1, "");
            tracing::info!(message = "as a field", after = 2);
        })
    });
    // 128-bit integers are JSON numbers too, beyond what serde_json's `Value` holds.
    assert!(
        lines[0].contains(r#""big":340282366920938463463374607431768211455,"neg":-170141183460469231731687303715884105728,"#),
        "{}",
        lines[0]
    );
    let records: Vec<Value> = lines.iter().map(|l| parse_json(l)).collect();
    assert_eq!(records.len(), 7, "{records:#?}");
    let r = &records[0];
    assert_eq!(r["message"], "rows 5 in \"users\"");
    assert_eq!(r["level"], "INFO");
    assert_eq!(r["target"], "app::db");
    assert!(
        r["file"]
            .as_str()
            .unwrap()
            .ends_with("tracing_layer_sends_events_and_spans.rs"),
        "{r}"
    );
    assert_eq!(r["line"], line);
    assert_eq!(
        r["fields"],
        json!({
            "int": -3, "uint": 7, "float": 1.5, "flag": true, "text": "hi",
            "big": u128::MAX as f64, "neg": i128::MIN as f64, "dbg": "[1, 2]", "shown": "display"
        })
    );
    assert!(r["fields"]["float"].is_f64() && r["fields"]["int"].is_i64());
    assert!(
        r.get("spans").is_none(),
        "an event outside spans has none: {r}"
    );
    let levels: Vec<_> = records[1..5]
        .iter()
        .map(|r| (r["level"].as_str().unwrap(), r["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        levels,
        [
            ("TRACE", "t"),
            ("DEBUG", "d"),
            ("WARN", "w"),
            ("ERROR", "e")
        ]
    );
    assert_eq!(records[1]["target"], module_path!());
    assert_eq!(records[5]["message"], "");
    assert_eq!(records[5]["fields"], json!({"only": 1}));
    assert_eq!(
        records[6]["message"], "as a field",
        "the field named message is the message"
    );
    assert_eq!(records[6]["fields"], json!({"after": 2}));
}

#[test]
fn nested_spans_come_outermost_first_with_their_latest_fields() {
    let lines = json_lines("trace", || {
        tracing::dispatcher::with_default(&tachylog_only(), || {
            let outer = tracing::info_span!("outer", id = 7u64, user = "a");
            let _outer = outer.enter();
            let inner = tracing::debug_span!("inner", q = ?Some(1), later = tracing::field::Empty, ok = true);
            let _inner = inner.enter();
            tracing::info!(n = 1, "first");
            inner.record("later", 5);
            outer.record("id", 8u64);
            outer.record("user", "b");
            tracing::info!(n = 2, "second");
            let empty = tracing::info_span!("empty");
            empty.in_scope(|| tracing::info!("third"));
            drop(_inner);
            tracing::info!("only outer");
        })
    });
    let records: Vec<Value> = lines.iter().map(|l| parse_json(l)).collect();
    assert_eq!(records.len(), 4, "{records:#?}");
    assert_eq!(
        spans(&records[0]),
        [
            ("outer".into(), json!({"id": 7, "user": "a"})),
            ("inner".into(), json!({"q": "Some(1)", "ok": true})),
        ]
    );
    assert_eq!(
        records[0]["fields"],
        json!({"n": 1}),
        "span fields are not the event's"
    );
    // Each field once, with its latest value (a parsed object would hide a duplicate key).
    assert_eq!(
        spans(&records[1]),
        [
            ("outer".into(), json!({"id": 8, "user": "b"})),
            (
                "inner".into(),
                json!({"q": "Some(1)", "ok": true, "later": 5})
            ),
        ]
    );
    assert!(
        lines[1].contains(r#""spans":[{"name":"outer","id":8,"user":"b"},{"name":"inner","q":"Some(1)","ok":true,"later":5}]"#),
        "{}",
        lines[1]
    );
    assert_eq!(
        spans(&records[2]),
        [
            ("outer".into(), json!({"id": 8, "user": "b"})),
            (
                "inner".into(),
                json!({"q": "Some(1)", "ok": true, "later": 5})
            ),
            ("empty".into(), json!({})),
        ]
    );
    assert_eq!(
        spans(&records[3]),
        [("outer".into(), json!({"id": 8, "user": "b"}))]
    );
}

#[test]
fn span_fields_appear_once_in_text_lines_after_record() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());
    tracing::dispatcher::with_default(&tachylog_only(), || {
        let span = tracing::info_span!("req", id = 1u64, user = "ada");
        let _entered = span.enter();
        span.record("id", 2u64);
        span.record("id", 3u64);
        tracing::info!(k = "v", "hello");
    });
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0].message, "req{user=ada id=3}: hello k=v");
}

#[test]
fn events_on_another_thread_carry_the_span_they_run_in() {
    let records = json_records("info", || {
        let dispatch = tachylog_only();
        tracing::dispatcher::with_default(&dispatch, || {
            let request = tracing::info_span!("request", id = 42u64);
            let worker = {
                let (dispatch, request) = (dispatch.clone(), request.clone());
                std::thread::Builder::new()
                    .name("worker".into())
                    .spawn(move || {
                        tracing::dispatcher::with_default(&dispatch, || {
                            request.in_scope(|| {
                                let _step = tracing::info_span!("step", n = 1).entered();
                                tracing::info!("on the worker");
                            })
                        })
                    })
                    .unwrap()
            };
            worker.join().unwrap();
            tracing::info!("on main, outside the span");
            request.in_scope(|| tracing::info!("on main, inside"));
        })
    });
    assert_eq!(records.len(), 3, "{records:#?}");
    let by_message = |m: &str| records.iter().find(|r| r["message"] == m).unwrap();
    let worker = by_message("on the worker");
    assert_eq!(worker["thread"], "worker");
    assert_eq!(
        spans(worker),
        [
            ("request".into(), json!({"id": 42})),
            ("step".into(), json!({"n": 1}))
        ]
    );
    assert!(by_message("on main, outside the span")
        .get("spans")
        .is_none());
    let inside = by_message("on main, inside");
    assert_eq!(spans(inside), [("request".into(), json!({"id": 42}))]);
    assert_ne!(inside["thread"], "worker");
}

/// A layer that counts the events it is shown.
struct Counting(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> Layer<S> for Counting {
    fn on_event(&self, _: &tracing::Event<'_>, _: Context<'_, S>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn env_filter_filters_for_every_layer_and_other_layers_see_every_event() {
    let count = Arc::new(AtomicUsize::new(0));
    let records = json_records("trace", || {
        let stack = tracing_subscriber::registry()
            .with(EnvFilter::new("info,noisy=warn"))
            .with(Counting(count.clone()))
            .with(tachylog::tracing_layer());
        tracing::subscriber::with_default(stack, || {
            tracing::info!("kept 1");
            tracing::debug!("dropped by EnvFilter: debug");
            tracing::info!(target: "noisy", "dropped by EnvFilter: noisy info");
            tracing::warn!(target: "noisy", "kept 2");
            let span = tracing::debug_span!("filtered_span", x = 1);
            span.in_scope(|| tracing::info!("kept 3, in a span the filter disabled"));
        })
    });
    let messages: Vec<_> = records
        .iter()
        .map(|r| r["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        ["kept 1", "kept 2", "kept 3, in a span the filter disabled"]
    );
    assert!(
        records[2].get("spans").is_none(),
        "a disabled span is not recorded"
    );
    assert_eq!(
        count.load(Ordering::Relaxed),
        3,
        "the counting layer saw what EnvFilter let through"
    );
}

#[test]
fn tachylogs_filter_applies_but_never_hides_events_from_other_layers() {
    let count = Arc::new(AtomicUsize::new(0));
    let records = json_records("info,quiet=error", || {
        let stack = tracing_subscriber::registry()
            .with(tachylog::tracing_layer())
            .with(Counting(count.clone()));
        tracing::subscriber::with_default(stack, || {
            tracing::info!("kept");
            tracing::debug!("below tachylog's level");
            tracing::warn!(target: "quiet", "below quiet's level");
            tracing::error!(target: "quiet::sub", "kept by quiet=error");
            tracing::trace!(target: "quiet", "below both");
        })
    });
    let messages: Vec<_> = records
        .iter()
        .map(|r| r["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["kept", "kept by quiet=error"]);
    assert_eq!(records[1]["target"], "quiet::sub");
    assert_eq!(
        count.load(Ordering::Relaxed),
        5,
        "the other layer must still get every event"
    );
}

#[test]
fn events_without_a_running_logger_are_dropped_quietly() {
    let records = {
        let _lock = common::logger_lock();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        tracing::dispatcher::with_default(&tachylog_only(), || {
            let _span = tracing::info_span!("before", x = 1).entered();
            tracing::error!("no logger yet: dropped");
            let guard = common::expect_init(
                tachylog::builder()
                    .file_with(
                        &path,
                        tachylog::SinkOptions::new().format(tachylog::Format::Json),
                    )
                    .init(),
            );
            tracing::info!("logged");
            drop(guard);
            tracing::error!("logger gone: dropped");
        });
        parse_json_lines(&path)
    };
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0]["message"], "logged");
    assert_eq!(spans(&records[0]), [("before".into(), json!({"x": 1}))]);
}

#[test]
fn hostile_text_stays_one_valid_json_line_and_one_text_line() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let (json_path, text_path) = (dir.path().join("t.jsonl"), dir.path().join("t.log"));
    let guard = common::expect_init(
        tachylog::builder()
            .file_with(
                &json_path,
                tachylog::SinkOptions::new().format(tachylog::Format::Json),
            )
            .file(&text_path)
            .init(),
    );
    let hostile = "two\nlines \"quoted\" back\\slash\r\n\u{1b}[31mred\u{2028}";
    tracing::dispatcher::with_default(&tachylog_only(), || {
        let _span = tracing::info_span!("s", v = hostile, d = ?hostile).entered();
        tracing::info!(target: "weird\ntarget", k = hostile, "msg {}", hostile);
    });
    drop(guard);
    let records = parse_json_lines(&json_path);
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r["message"], format!("msg {hostile}"));
    assert_eq!(r["fields"]["k"], hostile);
    assert_eq!(r["target"], "weird\ntarget");
    assert_eq!(
        spans(r),
        [(
            "s".into(),
            json!({"v": hostile, "d": format!("{hostile:?}")})
        )]
    );
    let text = common::read_log(&text_path);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{2028}'),
        "{text}"
    );
}

/// A `Debug` impl that panics.
struct Boom;

impl fmt::Debug for Boom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("partial")?;
        panic!("boom in Debug")
    }
}

#[test]
fn a_panicking_debug_leaves_a_marker_and_other_records_survive() {
    let records = json_records("info", || {
        tracing::dispatcher::with_default(&tachylog_only(), || {
            tracing::info!("before");
            let _span = tracing::info_span!("s", bad = ?Boom, good = 1).entered();
            tracing::info!(bad = ?Boom, good = 2, "field panics");
            tracing::info!("message panics {:?}", Boom);
            tracing::info!("after");
        })
    });
    let messages: Vec<_> = records
        .iter()
        .map(|r| r["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "before",
            "field panics",
            "<formatting panicked: boom in Debug>",
            "after"
        ]
    );
    let marker = "<formatting panicked: boom in Debug>";
    assert_eq!(records[1]["fields"], json!({"bad": marker, "good": 2}));
    assert_eq!(
        spans(&records[1]),
        [("s".into(), json!({"bad": marker, "good": 1}))]
    );
}
