//! One process logs every kind of record to a text file, a JSON file, a logfmt file and a
//! binary log at once; the binary log read back and rendered with the same pattern (JSON,
//! logfmt) gives exactly the bytes of each of the other files. Escaping, failed and panicking
//! `Display`s, cut messages, fields of every type, widths, counts, `log` records and (with the
//! feature) `tracing` events and spans included.

mod common;

use std::fmt;
use std::path::Path;
use tachylog::read::{Reader, Renderer};
use tachylog::{FieldValue, Format, SinkOptions, TimeZone};

#[derive(Clone, Copy, Debug)]
struct OrderId(u64);
impl fmt::Display for OrderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "order-{}", self.0)
    }
}
impl tachylog::CopyArg for OrderId {}

fn log_everything() {
    tachylog::info!("Iteration: {} int: {} double: {}", 7u64, -42i64, 2.5f64);
    tachylog::info!(
        "ints {} {} {} {} {} {} {}",
        0u8,
        u64::MAX,
        i64::MIN,
        -1i32,
        u128::MAX,
        i128::MIN,
        usize::MAX
    );
    tachylog::info!(
        "floats {:.3} {:?} {} {} {:e}",
        1.0f64 / 3.0,
        0.1f32,
        1e300f64,
        f64::NAN,
        1234.5f64
    );
    tachylog::info!(
        "typed {} {} {} {} {} {} {:?} {}",
        0.1f32,
        -0.0f64,
        f64::INFINITY,
        1.5e10f64,
        true,
        u128::MAX,
        7u8,
        f32::MAX
    );
    tachylog::info!("cut by the limit: {}", 1e-300f64);
    tachylog::warn!("escaped {} and \"{}\"", "two\nlines", "tab\tbell\x07");
    tachylog::info!("unicode {} ✓ {} {}", "Ünïcödé", '\u{2028}', 'x');
    tachylog::info!(
        "bools {} {:?} text {} {:?}",
        true,
        false,
        String::from("owned"),
        "dbg\"q"
    );
    tachylog::info!(
        "width [{:>8}] [{:<6}] [{:^7.2}] [{:+}] [{:#x}] [{:08.2}] [{:.*}]",
        "r",
        5u8,
        1.23456f64,
        9i32,
        255u32,
        -2.71f64,
        2,
        1.5f64
    );
    tachylog::info!("leading zeros {:03} {:+} {}", 7u32, 5i64, "0012");
    tachylog::info!("custom {} {:?}", OrderId(7), OrderId(8));
    tachylog::info!(
        "debug {:?} {:?} {:?}",
        vec![1u32, 2, 3],
        Some("a\nb"),
        std::time::Duration::from_millis(1500)
    );
    tachylog::error!(user = "ann", attempts = 3u32, ok = false, ratio = 0.25, delta = -3i32,
        big = u128::MAX, order = %OrderId(9), dbg = ?Some(1), nothing = None::<u8>, grade = 'A';
        "with fields {}", 1);
    tachylog::info!(only = 1u8; "fields and no placeholder");
    tachylog::info!(id = 7u64, when = None::<u32>, ok = Some(true), who = "eve";
        "native fields {} {:.1}", 4u8, 0.25f64);
    tachylog::info!(grade = 'B', name = "bea"; "a char field first {}", 1u8);
    tachylog::info!(name = "cy", grade = 'C'; "a char field after a text {}", 2u8);
    tachylog::info!(note = "z".repeat(300); "a field longer than the limit {}", 3u8);
    tachylog::warn!(table = "orders", rows = 12u64;
        "slow query {} took {:.3} ms on [{:>6}] {:x} {:?}", 17u64, 2.0 / 3.0, "db1", 255u8, 'q');
    tachylog::warn!(n = 2u8; "count {:>4$} {:.*} {}", 7u64, 2, 0.5f64, -1i64, 6);
    tachylog::info!("panics {}", common::Panics);
    tachylog::info!("fails {}", common::Fails);
    tachylog::info!("long {}", "x".repeat(300));
    // Values already in the block when a later one fails, or when the message passes the
    // limit, are taken back with the texts they defined: the next use defines them again.
    tachylog::info!("defined {} then {}", "a repeated text", common::Fails);
    tachylog::info!("defined again {}", "a repeated text");
    tachylog::info!("then referred to {}", "a repeated text");
    tachylog::info!("cut {} after {}", "a second text", "y".repeat(300));
    tachylog::info!("defined again {}", "a second text");
    tachylog::info!("then referred to {}", "a second text");
    tachylog::info!("static, no arguments");
    tachylog::info!("");
    tachylog::debug!("filtered out at INFO {}", 1);
    log::info!(user = 7, ratio = 0.5, admin = false, who = "bob"; "from log {}", "with kv");
    log::warn!(target: "plain", "log without key-values\tand a tab");
    #[cfg(feature = "tracing")]
    {
        let span = tracing::info_span!("request", id = 7u64, path = "/a b");
        let _entered = span.enter();
        tracing::info!(status = 200u16, "served {}", "page");
    }
    for i in 0..50u64 {
        tachylog::info!("loop {} of {}", i, 50u64);
    }
}

fn render(path: &Path, mut renderer: Renderer) -> String {
    let mut reader = Reader::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(record) = reader.next_record() {
        renderer.render(record.unwrap(), &mut out);
    }
    String::from_utf8(out).unwrap()
}

/// Runs [`log_everything`] twice, a flush between (a second block, with its own tables), under
/// a logger with `sinks` added to UTC time, a 200-byte message limit and INFO, with `tracing`
/// events sent through it (feature `tracing`).
fn log_everything_twice(sinks: impl FnOnce(tachylog::Builder) -> tachylog::Builder) {
    let _lock = common::logger_lock();
    let builder = sinks(
        tachylog::builder()
            .utc(true)
            .max_message_bytes(200)
            .level(tachylog::Level::Info),
    );
    #[cfg(feature = "tracing")]
    let builder = builder.log_facade(tachylog::LogFacade::Required);
    let guard = common::expect_init(builder.init());
    #[cfg(feature = "tracing")]
    let _subscriber = {
        use tracing_subscriber::layer::SubscriberExt;
        tracing::subscriber::set_default(
            tracing_subscriber::registry().with(tachylog::tracing_layer()),
        )
    };
    log_everything();
    tachylog::flush();
    log_everything();
    drop(guard);
}

#[test]
fn text_json_and_logfmt_lines_rendered_from_the_binary_log_match_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name);
    log_everything_twice(|builder| {
        builder
            .file(file("app.log"))
            .file_with(file("app.jsonl"), SinkOptions::new().format(Format::Json))
            .file_with(
                file("app.logfmt"),
                SinkOptions::new().format(Format::Logfmt),
            )
            .file_with(file("app.tlog"), SinkOptions::new().format(Format::Binary))
    });

    let text = common::read_log(&file("app.log"));
    assert!(text.lines().count() > 100, "{text}");
    assert!(
        text.contains("from log with kv user=7 ratio=0.5 admin=false who=bob"),
        "{text}"
    );
    #[cfg(feature = "tracing")]
    assert!(
        text.contains(r#"request{id=7 path="/a b"}: served page status=200"#),
        "{text}"
    );
    let rendered = render(
        &file("app.tlog"),
        Renderer::text(tachylog::Pattern::default(), TimeZone::utc()),
    );
    assert_eq!(rendered, text);
    let json = common::read_log(&file("app.jsonl"));
    assert_eq!(
        render(&file("app.tlog"), Renderer::json(TimeZone::utc())),
        json
    );
    let logfmt = common::read_log(&file("app.logfmt"));
    assert_eq!(
        render(&file("app.tlog"), Renderer::logfmt(TimeZone::utc())),
        logfmt
    );

    // The values are typed where their text allows, and the fields are typed.
    let mut reader = Reader::open(file("app.tlog")).unwrap();
    let first = reader.next_record().unwrap().unwrap();
    assert_eq!(first.format(), Some("Iteration: {} int: {} double: {}"));
    assert_eq!(first.arg(0), Some(FieldValue::U64(7)));
    assert_eq!(first.arg(1), Some(FieldValue::I64(-42)));
    assert_eq!(first.arg(2), Some(FieldValue::F64(2.5)));
    let floats = Reader::open(file("app.tlog"))
        .unwrap()
        .map(Result::unwrap)
        .find(|r| r.message().starts_with("typed "))
        .unwrap();
    assert_eq!(floats.arg(0), Some(FieldValue::F64(f64::from(0.1f32))));
    assert_eq!(floats.arg(4), Some(FieldValue::Bool(true)));
    assert_eq!(floats.arg(5), Some(FieldValue::U128(u128::MAX)));
    assert_eq!(
        floats.arg(6),
        Some(FieldValue::U64(7)),
        "{{:?}} of a number"
    );
    // Under any spec the reader can apply, a number stays typed; the reader applies the spec.
    let find = |start: &str| {
        Reader::open(file("app.tlog"))
            .unwrap()
            .map(Result::unwrap)
            .find(|r| r.message().starts_with(start))
            .unwrap()
    };
    let zeros = find("leading zeros ");
    assert_eq!(zeros.message(), "leading zeros 007 +5 0012");
    assert_eq!(zeros.arg(0), Some(FieldValue::U64(7)), "{{:03}}");
    assert_eq!(zeros.arg(1), Some(FieldValue::I64(5)), "{{:+}}");
    assert_eq!(
        zeros.arg(2),
        Some(FieldValue::Str("0012")),
        "text stays text"
    );
    // A value whose precision is an argument (`{:.*}`) is kept as its text; the site's other
    // values stay typed, as the values of a site with fields do.
    let width = find("width ");
    assert_eq!(width.arg(1), Some(FieldValue::U64(5)), "{{:<6}}");
    assert_eq!(width.arg(6), Some(FieldValue::Str("1.50")), "{{:.*}}");
    let with_fields = Reader::open(file("app.tlog"))
        .unwrap()
        .map(Result::unwrap)
        .find(|r| r.message() == "with fields 1")
        .unwrap();
    assert_eq!(
        with_fields.fields().get("attempts"),
        Some(FieldValue::U64(3))
    );
    assert_eq!(
        with_fields.fields().get("ratio"),
        Some(FieldValue::F64(0.25))
    );
    assert_eq!(
        with_fields.fields().get("big"),
        Some(FieldValue::U128(u128::MAX))
    );

    // A site with fields keeps its message values typed under any spec as well, text where
    // the type has no typed form; its fields stay typed beside them.
    let slow = find("slow query ");
    assert_eq!(
        slow.message(),
        "slow query 17 took 0.667 ms on [   db1] ff 'q'"
    );
    assert_eq!(slow.arg(0), Some(FieldValue::U64(17)));
    assert_eq!(slow.arg(1), Some(FieldValue::F64(2.0 / 3.0)), "{{:.3}}");
    assert_eq!(
        slow.arg(2),
        Some(FieldValue::Str("   db1")),
        "{{:>6}} of a str"
    );
    assert_eq!(slow.arg(3), Some(FieldValue::U64(255)), "{{:x}}");
    assert_eq!(slow.fields().get("rows"), Some(FieldValue::U64(12)));
    assert_eq!(slow.fields().get("table"), Some(FieldValue::Str("orders")));
    // Counts (`{:>4$}`, `{:.*}`) travel before their values: the walk reads them in place.
    let counts = find("count ");
    assert_eq!(counts.message(), "count      7 0.50 -1");
    assert_eq!(counts.arg(2), Some(FieldValue::I64(-1)));

    // Smaller than the text: a quarter of it at most for records like the first.
    let binary = std::fs::metadata(file("app.tlog")).unwrap().len();
    assert!(
        binary < text.len() as u64,
        "{binary} bytes against {}",
        text.len()
    );
}

/// A binary log alone, the way most programs that choose it run it, takes the records in
/// parts, straight from the merge loop: the same records logged by a logger with only a text
/// file and by one with only a binary log read back as the same lines (but for the time
/// column, as the two runs are at different times), every kind of record, failed and cut
/// values included.
#[test]
fn a_lone_binary_log_renders_what_a_lone_text_file_holds() {
    let dir = tempfile::tempdir().unwrap();
    let text_file = dir.path().join("alone.log");
    let binary_file = dir.path().join("alone.tlog");
    log_everything_twice(|builder| builder.file(&text_file));
    log_everything_twice(|builder| {
        builder.file_with(&binary_file, SinkOptions::new().format(Format::Binary))
    });
    let rendered = render(
        &binary_file,
        Renderer::text(tachylog::Pattern::default(), TimeZone::utc()),
    );
    // `2026-11-21 10:00:00.123456 `: the default pattern's time column.
    let without_time = |text: &str| -> Vec<String> {
        text.lines()
            .map(|line| line.get(27..).unwrap_or(line).to_string())
            .collect()
    };
    let text = common::read_log(&text_file);
    assert!(text.lines().count() > 150, "{text}");
    assert_eq!(without_time(&rendered), without_time(&text));
}

#[test]
fn a_sink_other_than_a_file_cannot_take_the_binary_format() {
    let _lock = common::logger_lock();
    let result = tachylog::builder()
        .stdout_with(SinkOptions::new().format(Format::Binary))
        .init();
    match result {
        Err(e @ tachylog::Error::BinaryNeedsFile { .. }) => {
            assert!(e.to_string().contains("file_with"), "{e}")
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("stdout took the binary format"),
    }
}

/// Runs `log` under one logger writing the same records, in UTC, to `{name}.log` (text lines)
/// and `{name}.tlog` (the binary log) in `dir`, with `configure`'s settings added; returns the
/// text file and the binary log rendered as default-pattern text lines.
fn log_text_and_binary(
    dir: &Path,
    name: &str,
    configure: impl FnOnce(tachylog::Builder) -> tachylog::Builder,
    log: impl FnOnce(),
) -> (String, String) {
    let _lock = common::logger_lock();
    let text_file = dir.join(format!("{name}.log"));
    let binary_file = dir.join(format!("{name}.tlog"));
    let builder = configure(tachylog::builder().utc(true))
        .file(&text_file)
        .file_with(&binary_file, SinkOptions::new().format(Format::Binary));
    let guard = common::expect_init(builder.init());
    log();
    drop(guard);
    let rendered = render(
        &binary_file,
        Renderer::text(tachylog::Pattern::default(), TimeZone::utc()),
    );
    (common::read_log(&text_file), rendered)
}

/// xorshift64*: a stream of bit patterns from `state` (not zero).
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Each block numbers its call sites from 0 in the order it meets them, so one number names
/// another site in the next block. A reader lays out each site's line once: every line must
/// still be its own site's (level, file, line), and a text value that needs escaping must be
/// escaped in a site whose own text needs none.
#[test]
fn sites_renumbered_by_each_block_read_back_as_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let (text, rendered) = log_text_and_binary(
        dir.path(),
        "sites",
        |builder| builder,
        || {
            for block in 0..9u64 {
                // Each block meets the sites in another order.
                let orders = [
                    [0, 1, 2],
                    [2, 1, 0],
                    [1, 2, 0],
                    [0, 2, 1],
                    [2, 0, 1],
                    [1, 0, 2],
                ];
                for site in orders[block as usize % 6] {
                    match site {
                        0 => tachylog::info!("first site {} {:.3}", block, block as f64 / 7.0),
                        1 => tachylog::warn!("second site {}", "line\nbreak"),
                        _ => tachylog::error!("third site \u{7f} {}", block),
                    }
                }
                // The next records go to a new block, with its own table of sites.
                tachylog::flush();
            }
        },
    );
    assert_eq!(text.lines().count(), 27, "{text}");
    assert!(text.contains("second site line\\nbreak"), "{text}");
    assert_eq!(rendered, text);
}

#[test]
fn numbers_of_every_bit_pattern_read_back_as_the_text_file_wrote_them() {
    let dir = tempfile::tempdir().unwrap();
    let (text, rendered) = log_text_and_binary(
        dir.path(),
        "n",
        |builder| builder,
        || {
            // Every bit pattern of the floats (subnormals, NaNs, huge and tiny values).
            let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
            for _ in 0..3000 {
                let bits = next();
                tachylog::info!(
                    "{} {} {} {} {} {}",
                    f64::from_bits(bits),
                    f32::from_bits(bits as u32),
                    bits,
                    bits as i64,
                    (bits as u128) << 64 | next() as u128,
                    bits as i16
                );
                tachylog::info!(
                    "short {} {}",
                    (bits % 1000) as f64 / 8.0,
                    (bits % 100) as f32 / 4.0
                );
            }
        },
    );
    assert_eq!(text.lines().count(), 6000);
    assert!(rendered == text, "the binary log renders other numbers");
    // Kept typed: no text formatted for them on the back end.
    let mut reader = Reader::open(dir.path().join("n.tlog")).unwrap();
    let record = reader.next_record().unwrap().unwrap();
    assert!(matches!(record.arg(0), Some(FieldValue::F64(_))));
    assert!(matches!(record.arg(4), Some(FieldValue::U128(_))));
    assert!(matches!(record.arg(5), Some(FieldValue::I64(_))));
}

#[test]
fn backtrace_records_keep_their_mark_and_their_earlier_times() {
    let dir = tempfile::tempdir().unwrap();
    let (text, rendered) = log_text_and_binary(
        dir.path(),
        "b",
        |builder| builder.backtrace(tachylog::Level::Debug, 16),
        || {
            tachylog::debug!("cache miss for {}", "user:42");
            tachylog::debug!("retry {} of {}", 1u8, 3u8);
            tachylog::info!("request served");
            tachylog::error!("payment failed");
        },
    );
    assert!(
        text.contains("[backtrace] cache miss for user:42"),
        "{text}"
    );
    assert!(text.contains("[backtrace] retry 1 of 3"), "{text}");
    assert_eq!(rendered, text);
    let backtrace = Reader::open(dir.path().join("b.tlog"))
        .unwrap()
        .map(Result::unwrap)
        .filter(|r| r.is_backtrace())
        .count();
    assert_eq!(backtrace, 2);
}

/// One `info!` of `$value` and `$name`, from a call site with a field when `$fields` (whose
/// values the binary log takes one by one) or from one without.
macro_rules! logged {
    ($fields:expr, $format:literal, $value:expr, $name:expr) => {
        if $fields {
            tachylog::info!(with = "field"; $format, $value, $name)
        } else {
            tachylog::info!($format, $value, $name)
        }
    };
}

/// Logs `$value` once under each spec of `std`'s grammar that its type takes, beside its type's
/// name (the record's second value), from call sites with a field when `$fields`.
macro_rules! under_int_specs {
    ($value:expr, $name:expr, $fields:expr) => {{
        let (v, name, fields) = ($value, $name, $fields);
        logged!(fields, "{} {}", v, name);
        logged!(fields, "{:?} {}", v, name);
        logged!(fields, "{:#?} {}", v, name);
        logged!(fields, "{:>12} {}", v, name);
        logged!(fields, "{:<9} {}", v, name);
        logged!(fields, "{:^11} {}", v, name);
        logged!(fields, "{:*^+11} {}", v, name);
        logged!(fields, "{:✓>14} {}", v, name);
        logged!(fields, "{:+} {}", v, name);
        logged!(fields, "{:-} {}", v, name);
        logged!(fields, "{:08} {}", v, name);
        logged!(fields, "{:+06} {}", v, name);
        logged!(fields, "{:<08} {}", v, name);
        logged!(fields, "{:x} {}", v, name);
        logged!(fields, "{:#x} {}", v, name);
        logged!(fields, "{:#012X} {}", v, name);
        logged!(fields, "{:x?} {}", v, name);
        logged!(fields, "{:#X?} {}", v, name);
        logged!(fields, "{:o} {}", v, name);
        logged!(fields, "{:#o} {}", v, name);
        logged!(fields, "{:b} {}", v, name);
        logged!(fields, "{:#b} {}", v, name);
        logged!(fields, "{:e} {}", v, name);
        logged!(fields, "{:E} {}", v, name);
        logged!(fields, "{:.2e} {}", v, name);
        logged!(fields, "{:>+14.3E} {}", v, name);
    }};
}

/// As [`under_int_specs`], for floats.
macro_rules! under_float_specs {
    ($value:expr, $name:expr, $fields:expr) => {{
        let (v, name, fields) = ($value, $name, $fields);
        logged!(fields, "{} {}", v, name);
        logged!(fields, "{:?} {}", v, name);
        logged!(fields, "{:#?} {}", v, name);
        logged!(fields, "{:.0} {}", v, name);
        logged!(fields, "{:.3} {}", v, name);
        logged!(fields, "{:.17} {}", v, name);
        logged!(fields, "{:.3?} {}", v, name);
        logged!(fields, "{:>10.2} {}", v, name);
        logged!(fields, "{:_<12.1} {}", v, name);
        logged!(fields, "{:^9} {}", v, name);
        logged!(fields, "{:+} {}", v, name);
        logged!(fields, "{:+.4} {}", v, name);
        logged!(fields, "{:010.3} {}", v, name);
        logged!(fields, "{:+012?} {}", v, name);
        logged!(fields, "{:e} {}", v, name);
        logged!(fields, "{:E} {}", v, name);
        logged!(fields, "{:.3e} {}", v, name);
        logged!(fields, "{:>+16.2E} {}", v, name);
        logged!(fields, "{:x?} {}", v, name);
        logged!(fields, "{:#} {}", v, name);
    }};
}

#[test]
fn values_under_every_spec_read_back_as_the_text_file_wrote_them() {
    let dir = tempfile::tempdir().unwrap();
    let (text, rendered) = log_text_and_binary(
        dir.path(),
        "s",
        |builder| builder,
        || {
            let mut next = xorshift(0x2545_F491_4F6C_DD1D);
            for round in 0..12 {
                // Every other round from call sites with a field.
                let fields = round % 4 >= 2;
                // Every bit pattern, then small values (where widths and zeros show), and 0.
                let bits = match round {
                    0 => 0,
                    1 => u64::MAX,
                    r if r % 2 == 0 => next(),
                    _ => next() % 2000,
                };
                let wide = (bits as u128) << 64 | next() as u128;
                under_int_specs!(bits as u8, "u8", fields);
                under_int_specs!(bits as i8, "i8", fields);
                under_int_specs!(bits as i16, "i16", fields);
                under_int_specs!(bits as i32, "i32", fields);
                under_int_specs!(bits as u32, "u32", fields);
                under_int_specs!(bits as i64, "i64", fields);
                under_int_specs!(bits, "u64", fields);
                under_int_specs!(bits as isize, "isize", fields);
                under_int_specs!(wide, "u128", fields);
                under_int_specs!(wide as i128, "i128", fields);
                let float = match round {
                    0 => 0.0,
                    1 => f64::NAN,
                    r if r % 2 == 0 => f64::from_bits(bits),
                    _ => bits as f64 / 64.0 - 10.0,
                };
                under_float_specs!(float, "f64", fields);
                under_float_specs!(float as f32, "f32", fields);
                under_float_specs!(f32::from_bits(bits as u32), "f32", fields);
                tachylog::info!(
                    "{:>6} {:<7?} {:^8} {:.2} {}",
                    bits & 1 == 1,
                    true,
                    false,
                    true,
                    "bool"
                );
            }
        },
    );
    assert!(text.lines().count() > 3000);
    for (line, (written, read)) in text.lines().zip(rendered.lines()).enumerate() {
        assert_eq!(read, written, "line {line}");
    }
    assert_eq!(rendered, text);

    // Every number is kept typed but a negative integer of at most 64 bits under a trait other
    // than `Display`, whose radix digits depend on its width, and under `{:-}`, a flag that
    // `std` accepts and ignores, and the reader's spec does not keep.
    let (mut typed, mut typed_with_field) = (0, 0);
    for record in Reader::open(dir.path().join("s.tlog")).unwrap() {
        let record = record.unwrap();
        let format = record.format().unwrap();
        let Some(FieldValue::Str(name)) = record.arg(record.arg_count() - 1) else {
            panic!("{format}: no type name");
        };
        for index in 0..record.arg_count() - 1 {
            let value = record.arg(index).unwrap();
            if format.starts_with("{:-}") {
                continue;
            }
            let trait_not_display = format.contains(['?', 'x', 'X', 'o', 'b', 'e', 'E']);
            match value {
                FieldValue::Str(text) => {
                    assert!(
                        trait_not_display && name.starts_with('i'),
                        "{format} of {name} kept as text: {text}"
                    );
                    assert_ne!(name, "i128");
                }
                _ if record.fields().get("with").is_some() => typed_with_field += 1,
                _ => typed += 1,
            }
        }
    }
    assert!(typed > 1500, "{typed}");
    assert!(typed_with_field > 1500, "{typed_with_field}");
}
