//! Structured fields from tachylog's macros and from `log`'s key-values: the same records as
//! text, JSON lines and logfmt, and as the typed `Line::fields` a sink receives. JSON gets
//! native types; text and logfmt get `key=value` pairs, quoted and escaped where needed; a
//! panicking `Display` in a field, a huge field and invalid UTF-8 lose nothing else.

mod common;

use std::sync::{Arc, Mutex};
use tachylog::FieldValue;

/// One record's fields as `(key, Debug of the value)`.
type Pairs = Vec<(String, String)>;

/// Keeps each record's fields.
#[derive(Clone, Default)]
struct Typed(Arc<Mutex<Vec<Pairs>>>);

impl tachylog::Sink for Typed {
    fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
        let fields = line
            .fields
            .iter()
            .map(|f| (f.key.to_string(), format!("{:?}", f.value)))
            .collect();
        self.0.lock().unwrap().push(fields);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn pairs(list: &[(&str, &str)]) -> Pairs {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[derive(Clone, Copy)]
struct OrderId(u32);
impl std::fmt::Display for OrderId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "order-{}", self.0)
    }
}
impl tachylog::CopyArg for OrderId {}

/// Formats on the back end (it is a `CopyArg`), and panics there.
#[derive(Clone, Copy, Debug)]
struct Explodes;
impl std::fmt::Display for Explodes {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        panic!("field display exploded")
    }
}
impl tachylog::CopyArg for Explodes {}

#[test]
fn macro_fields_in_every_format() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let (text, json, logfmt) = (
        dir.path().join("a.log"),
        dir.path().join("a.jsonl"),
        dir.path().join("a.logfmt"),
    );
    let typed = Typed::default();
    let guard = common::expect_init(
        tachylog::builder()
            .file(&text)
            .file_with(
                &json,
                tachylog::SinkOptions::new().format(tachylog::Format::Json),
            )
            .file_with(
                &logfmt,
                tachylog::SinkOptions::new().format(tachylog::Format::Logfmt),
            )
            .sink(typed.clone())
            .init(),
    );
    let user_id = 42u64;
    let path = std::path::Path::new("/srv/a b.txt");
    let name = String::from("ada");
    let retries: Option<u8> = None;
    let elapsed = std::time::Duration::from_millis(1500);
    tachylog::info!(
        user_id,
        path = %path.display(),
        latency_ms = 0.25,
        ok = true,
        delta = -3i32,
        big = u128::MAX,
        name,
        ?elapsed,
        retries,
        grade = 'A',
        order = %OrderId(7),
        http.method = "GET",
        "content-type" = "text/html";
        "served {} items", 3
    );
    tachylog::warn!(quote = "say \"hi\"\nbye", empty = ""; "hostile");
    tachylog::error!(bytes = tachylog::lossy(b"ok \xff done"), bad = %Explodes, after = 1u8; "still {}", "here");
    log::info!(user = 7, ratio = 0.5, admin = false, who = "bob"; "from log");
    log::info!(target: "plain", "log without key-values");
    drop(guard);

    // What a sink receives: typed values.
    let records = typed.0.lock().unwrap().clone();
    assert_eq!(records.len(), 5);
    assert_eq!(
        records[0],
        pairs(&[
            ("user_id", "U64(42)"),
            ("path", "Str(\"/srv/a b.txt\")"),
            ("latency_ms", "F64(0.25)"),
            ("ok", "Bool(true)"),
            ("delta", "I64(-3)"),
            ("big", "U128(340282366920938463463374607431768211455)"),
            ("name", "Str(\"ada\")"),
            ("elapsed", "Str(\"1.5s\")"),
            ("retries", "Null"),
            ("grade", "Str(\"A\")"),
            ("order", "Str(\"order-7\")"),
            ("http.method", "Str(\"GET\")"),
            ("content-type", "Str(\"text/html\")"),
        ])
    );
    assert_eq!(
        records[2],
        pairs(&[
            ("bytes", "Str(\"ok \u{fffd} done\")"),
            (
                "bad",
                "Str(\"<formatting panicked: field display exploded>\")"
            ),
            ("after", "U64(1)"),
        ])
    );
    assert_eq!(
        records[3],
        pairs(&[
            ("user", "I64(7)"),
            ("ratio", "F64(0.5)"),
            ("admin", "Bool(false)"),
            ("who", "Str(\"bob\")"),
        ])
    );
    assert!(
        records[4].is_empty(),
        "no key-values, no fields: {:?}",
        records[4]
    );

    // JSON: native types under "fields"; every line parses.
    let json_text = std::fs::read_to_string(&json).unwrap();
    assert!(
        json_text.contains(&format!("\"big\":{},", u128::MAX)),
        "128-bit integers are written exactly (parsers may round them)"
    );
    let json: Vec<serde_json::Value> = json_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("invalid JSON {l:?}: {e}")))
        .collect();
    assert_eq!(json.len(), 5);
    let f = &json[0]["fields"];
    assert_eq!(json[0]["message"], "served 3 items");
    assert_eq!(f["user_id"], 42);
    assert_eq!(f["path"], "/srv/a b.txt");
    assert_eq!(f["latency_ms"], 0.25);
    assert_eq!(f["ok"], true);
    assert_eq!(f["delta"], -3);
    assert!(f["retries"].is_null());
    assert_eq!(f["http.method"], "GET");
    assert_eq!(json[1]["fields"]["quote"], "say \"hi\"\nbye");
    assert_eq!(json[1]["fields"]["empty"], "");
    assert_eq!(json[2]["message"], "still here");
    assert_eq!(json[3]["fields"]["user"], 7);
    assert_eq!(json[3]["fields"]["admin"], false);
    assert!(json[4].get("fields").is_none());

    // Text: pairs after the message, quoted where needed, one record per line.
    let text = std::fs::read_to_string(&text).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[0].contains(
            "served 3 items user_id=42 path=\"/srv/a b.txt\" latency_ms=0.25 ok=true delta=-3 \
             big=340282366920938463463374607431768211455 name=ada elapsed=1.5s retries=null \
             grade=A order=order-7 http.method=GET content-type=text/html ("
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(r#"hostile quote="say \"hi\"\nbye" empty="""#),
        "{}",
        lines[1]
    );
    assert!(
        lines[3].contains("from log user=7 ratio=0.5 admin=false who=bob"),
        "{}",
        lines[3]
    );

    // logfmt: the same pairs after msg.
    let logfmt = std::fs::read_to_string(&logfmt).unwrap();
    let lines: Vec<&str> = logfmt.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(
        lines[0].contains("msg=\"served 3 items\" user_id=42 path=\"/srv/a b.txt\""),
        "{}",
        lines[0]
    );
}

#[test]
fn huge_fields_are_cut_and_filtered_calls_evaluate_nothing() {
    let _lock = common::logger_lock();
    let typed = Typed::default();
    let guard = common::expect_init(
        tachylog::builder()
            .sink(typed.clone())
            .level(tachylog::Level::Info)
            .max_message_bytes(1024)
            .init(),
    );
    let huge = "x".repeat(5 << 20);
    tachylog::info!(blob = huge.as_str(), next = 1u8; "huge");
    let mut evaluated = false;
    tachylog::debug!(side_effect = { evaluated = true; 1u8 }; "filtered out");
    tachylog::info!(last = true; "after");
    drop(guard);
    assert!(
        !evaluated,
        "a filtered-out call must not evaluate its fields"
    );
    let records = typed.0.lock().unwrap().clone();
    assert_eq!(records.len(), 2);
    let blob = &records[0][0].1;
    assert!(blob.len() < 1200, "cut to the limit: {} bytes", blob.len());
    assert!(
        blob.contains(&format!("…[truncated {} bytes]", (5 << 20) - 1024)),
        "{blob}"
    );
    assert_eq!(records[0][1], ("next".to_string(), "U64(1)".to_string()));
    assert_eq!(records[1], pairs(&[("last", "Bool(true)")]));
}

/// A field value as a sink keeps it: matched on its `FieldValue` variant, text owned.
#[derive(Debug, Clone, PartialEq)]
enum Owned {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    I128(i128),
    U128(u128),
    F64(f64),
    Str(String),
    /// A variant this test does not know (`FieldValue` is non-exhaustive): fails the asserts.
    Unknown(String),
}

impl From<FieldValue<'_>> for Owned {
    fn from(value: FieldValue<'_>) -> Self {
        match value {
            FieldValue::Null => Owned::Null,
            FieldValue::Bool(v) => Owned::Bool(v),
            FieldValue::I64(v) => Owned::I64(v),
            FieldValue::U64(v) => Owned::U64(v),
            FieldValue::I128(v) => Owned::I128(v),
            FieldValue::U128(v) => Owned::U128(v),
            FieldValue::F64(v) => Owned::F64(v),
            FieldValue::Str(v) => Owned::Str(v.to_string()),
            other => Owned::Unknown(format!("{other:?}")),
        }
    }
}

/// What a sink saw of one record: its fields in order, `Fields::get("a_u64")` and
/// `Fields::is_empty()`.
type Seen = (Vec<(String, Owned)>, Option<Owned>, bool);

/// Matches each record's field values the way a custom sink does and keeps them, to be
/// checked after the guard is dropped (a failed assert inside a sink would not fail the test:
/// the back end survives a sink's panic).
#[derive(Clone, Default)]
struct Matching(Arc<Mutex<Vec<Seen>>>);

impl tachylog::Sink for Matching {
    fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
        let fields = line
            .fields
            .iter()
            .map(|f| (f.key.to_string(), Owned::from(f.value)))
            .collect();
        let looked_up = line.fields.get("a_u64").map(Owned::from);
        self.0
            .lock()
            .unwrap()
            .push((fields, looked_up, line.fields.is_empty()));
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Each Rust type of a field value reaches a sink as the `FieldValue` variant the docs
/// promise, with its exact value: integers by signedness and width, floats as `F64`, `char`
/// and text as `Str`, `Option` as its value or `Null`, `%` and `?` as their text.
#[test]
fn field_values_are_typed_for_sinks() {
    let _lock = common::logger_lock();
    let sink = Matching::default();
    let guard = common::expect_init(tachylog::builder().sink(sink.clone()).init());
    let (wide, narrow) = (usize::MAX, -1isize);
    tachylog::info!(
        a_u8 = 7u8,
        a_u16 = 65_535u16,
        a_u32 = 4_000_000_000u32,
        a_u64 = u64::MAX,
        a_usize = wide,
        a_non_zero = std::num::NonZeroU32::new(9).unwrap(),
        a_i8 = -8i8,
        a_i16 = -16i16,
        a_i32 = i32::MIN,
        a_i64 = i64::MIN,
        an_isize = narrow,
        a_i128 = i128::MIN,
        a_u128 = u128::MAX,
        a_f32 = 0.5f32,
        a_f64 = -1.25e300,
        a_bool = true,
        a_char = 'é',
        a_str = "plain",
        a_string = String::from("owned"),
        some = Some(3u16),
        none = None::<u32>,
        unit = (),
        shown = %std::net::Ipv4Addr::LOCALHOST,
        debugged = ?("a", 1);
        "typed"
    );
    tachylog::info!("no fields");
    drop(guard);

    let seen = sink.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    let expected: Vec<(String, Owned)> = [
        ("a_u8", Owned::U64(7)),
        ("a_u16", Owned::U64(65_535)),
        ("a_u32", Owned::U64(4_000_000_000)),
        ("a_u64", Owned::U64(u64::MAX)),
        ("a_usize", Owned::U64(usize::MAX as u64)),
        ("a_non_zero", Owned::U64(9)),
        ("a_i8", Owned::I64(-8)),
        ("a_i16", Owned::I64(-16)),
        ("a_i32", Owned::I64(i32::MIN.into())),
        ("a_i64", Owned::I64(i64::MIN)),
        ("an_isize", Owned::I64(-1)),
        ("a_i128", Owned::I128(i128::MIN)),
        ("a_u128", Owned::U128(u128::MAX)),
        ("a_f32", Owned::F64(0.5)),
        ("a_f64", Owned::F64(-1.25e300)),
        ("a_bool", Owned::Bool(true)),
        ("a_char", Owned::Str("é".into())),
        ("a_str", Owned::Str("plain".into())),
        ("a_string", Owned::Str("owned".into())),
        ("some", Owned::U64(3)),
        ("none", Owned::Null),
        ("unit", Owned::Null),
        ("shown", Owned::Str("127.0.0.1".into())),
        ("debugged", Owned::Str("(\"a\", 1)".into())),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let (fields, looked_up, empty) = &seen[0];
    for (got, want) in fields.iter().zip(&expected) {
        assert_eq!(got, want);
    }
    assert_eq!(fields.len(), expected.len(), "{fields:?}");
    assert_eq!(looked_up, &Some(Owned::U64(u64::MAX)), "Fields::get");
    assert!(!empty);
    assert_eq!(seen[1], (Vec::new(), None, true), "a record without fields");
}
