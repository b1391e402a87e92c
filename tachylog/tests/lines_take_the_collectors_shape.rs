//! JSON and logfmt lines shaped for a collector with `LineShape`: keys renamed and left out,
//! static fields, the record's fields at the top level, `tracing` span fields flattened into
//! the record; every line still valid, and the default shape unchanged beside a shaped sink.

mod common;

use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use tachylog::{Format, LineKey, LineShape, SinkOptions};

fn collector_shape() -> LineShape {
    LineShape::new()
        .rename(LineKey::Timestamp, "@timestamp")
        .rename(LineKey::Level, "severity")
        .rename(LineKey::Message, "msg")
        .omit(LineKey::File)
        .omit(LineKey::Line)
        .omit(LineKey::Thread)
        .static_field("service", "shop")
        .static_field("env", "prod \"eu\"")
}

/// Runs `body` with a logger writing `shaped.jsonl` (JSON in `shape`), `shaped.logfmt`
/// (logfmt in `shape`) and `plain.jsonl` (JSON, default shape); returns the three files'
/// lines.
fn log_with(shape: LineShape, body: impl FnOnce()) -> [Vec<String>; 3] {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("line shape test", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let names = ["shaped.jsonl", "shaped.logfmt", "plain.jsonl"];
    let guard = common::expect_init(
        tachylog::builder()
            .file_with(
                dir.path().join(names[0]),
                SinkOptions::new().format(Format::Json).shape(shape.clone()),
            )
            .file_with(
                dir.path().join(names[1]),
                SinkOptions::new().format(Format::Logfmt).shape(shape),
            )
            .file_with(
                dir.path().join(names[2]),
                SinkOptions::new().format(Format::Json),
            )
            .init(),
    );
    body();
    drop(guard);
    names.map(|name| lines(&dir.path().join(name)))
}

fn lines(path: &Path) -> Vec<String> {
    common::read_log(path).lines().map(str::to_owned).collect()
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("invalid JSON {line:?}: {e}"))
}

/// The keys of a JSON object line, in the order written (found by where each first appears:
/// enough for these lines, whose nested keys come after the top-level ones they repeat).
fn keys(line: &str) -> Vec<String> {
    let Value::Object(object) = parse(line) else {
        panic!("not an object: {line}")
    };
    let mut keys: Vec<(usize, String)> = object
        .keys()
        .map(|k| {
            let quoted = format!("{}:", Value::from(k.as_str()));
            (
                line.find(&quoted).expect("the key is in the line"),
                k.clone(),
            )
        })
        .collect();
    keys.sort();
    keys.into_iter().map(|(_, k)| k).collect()
}

#[test]
fn keys_are_renamed_left_out_and_static_fields_added() {
    let [json, logfmt, plain] = log_with(collector_shape(), || {
        tachylog::warn!(user_id = 42u64, message = "shadowed"; "card {} declined", 7);
    });
    assert_eq!(json.len(), 1, "{json:?}");
    let record = parse(&json[0]);
    assert!(json[0].starts_with(r#"{"@timestamp":""#), "{}", json[0]);
    assert_eq!(
        keys(&json[0]),
        [
            "@timestamp",
            "severity",
            "service",
            "env",
            "target",
            "tid",
            "msg",
            "fields"
        ],
        "{}",
        json[0]
    );
    assert_eq!(record["severity"], "WARN");
    assert_eq!(record["service"], "shop");
    assert_eq!(record["env"], "prod \"eu\"");
    assert_eq!(record["msg"], "card 7 declined");
    assert_eq!(
        record["fields"],
        json!({"user_id": 42, "message": "shadowed"})
    );

    let line = &logfmt[0];
    assert!(line.starts_with("@timestamp="), "{line}");
    assert!(
        line.contains(r#" severity=warn service=shop env="prod \"eu\"" target="#),
        "{line}"
    );
    assert!(
        line.ends_with(r#" msg="card 7 declined" user_id=42 message=shadowed"#),
        "{line}"
    );
    assert!(
        !line.contains(" file=") && !line.contains(" thread="),
        "{line}"
    );

    // A sink without a shape beside it keeps the default keys.
    assert_eq!(
        keys(&plain[0]),
        [
            "timestamp",
            "level",
            "target",
            "file",
            "line",
            "thread",
            "tid",
            "message",
            "fields"
        ]
    );
}

#[test]
fn flattened_fields_sit_at_the_top_level_without_repeating_a_key() {
    let shape = collector_shape().flatten_fields(true);
    let [json, _, _] = log_with(shape, || {
        tachylog::error!(user_id = 42u64, msg = "mine", service = "theirs", ok = true; "failed");
    });
    let record = parse(&json[0]);
    assert_eq!(record["user_id"], 42);
    assert_eq!(record["ok"], true);
    assert_eq!(record["msg"], "failed", "the line's own msg stays");
    assert_eq!(
        record["fields.msg"], "mine",
        "a field that would repeat a key is renamed"
    );
    assert_eq!(record["service"], "shop");
    assert_eq!(record["fields.service"], "theirs");
    assert!(record.get("fields").is_none(), "{}", json[0]);
}

#[test]
fn a_shape_that_leaves_out_the_first_keys_still_writes_valid_lines() {
    let only_the_message = [
        LineKey::Timestamp,
        LineKey::Level,
        LineKey::Target,
        LineKey::File,
        LineKey::Line,
        LineKey::Thread,
        LineKey::Tid,
    ]
    .into_iter()
    .fold(LineShape::new(), LineShape::omit);
    let shape = only_the_message.clone().flatten_fields(true);
    let [json, logfmt, _] = log_with(shape, || {
        tachylog::info!("only the message");
        tachylog::info!(n = 1u64; "and a field");
    });
    assert_eq!(json[0], r#"{"message":"only the message"}"#);
    assert_eq!(json[1], r#"{"message":"and a field","n":1}"#);
    assert_eq!(logfmt[0], r#"msg="only the message""#);
    assert_eq!(logfmt[1], r#"msg="and a field" n=1"#);
    let nothing = only_the_message.omit(LineKey::Message);
    let [json, logfmt, _] = log_with(nothing, || tachylog::info!("gone"));
    assert_eq!(json, ["{}"]);
    assert_eq!(logfmt, [""]);
}

#[cfg(feature = "tracing")]
#[test]
fn span_fields_are_flattened_into_the_record_the_innermost_winning() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let shape = collector_shape().flatten_fields(true).flatten_spans(true);
    let [json, logfmt, plain] = log_with(shape, || {
        let dispatch =
            tracing::Dispatch::new(tracing_subscriber::registry().with(tachylog::tracing_layer()));
        tracing::dispatcher::with_default(&dispatch, || {
            let request =
                tracing::info_span!("request", request_id = 7u64, user = "ada", stage = "outer");
            let _request = request.enter();
            let db = tracing::info_span!("db", stage = "inner", table = "orders");
            let _db = db.enter();
            tracing::info!(user = "bob", rows = 3u64, "query done");
        });
    });
    let record = parse(&json[0]);
    assert_eq!(record["msg"], "query done");
    assert_eq!(record["rows"], 3);
    assert_eq!(record["user"], "bob", "the event's own value wins");
    assert_eq!(record["stage"], "inner", "the innermost span's value wins");
    assert_eq!(record["table"], "orders");
    assert_eq!(record["request_id"], 7);
    assert_eq!(record["spans"], "request:db");
    assert_eq!(
        json[0].matches("\"stage\"").count(),
        1,
        "each key once: {}",
        json[0]
    );

    let line = &logfmt[0];
    assert!(line.contains(" spans=request:db "), "{line}");
    assert!(
        line.contains(" user=bob rows=3 stage=inner table=orders request_id=7"),
        "{line}"
    );

    let plain = parse(&plain[0]);
    assert_eq!(
        plain["spans"][0]["name"], "request",
        "the default shape keeps the list"
    );
    assert_eq!(plain["spans"][1]["stage"], "inner");
}
