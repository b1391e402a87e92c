//! One record is one line: newlines, carriage returns, ESC and other control characters in a
//! message, whether they come from the format string or from an argument, are escaped
//! (`\n` becomes the two characters backslash n); tab is kept. `.escape_control_chars(false)`
//! turns this off.

mod common;

use std::time::Duration;

#[test]
fn control_chars_are_escaped() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("control_chars_are_escaped", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("escaped.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());

    tachylog::info!("first");
    tachylog::info!("arg: {}", "one\ntwo\rthree\r\nfour");
    tachylog::info!("literal: a\nb\rc");
    tachylog::info!(
        "esc: {} bell: {} nul: {}",
        "\x1b[31mred\x1b[0m",
        "\x07",
        "\0"
    );
    tachylog::info!("tab: {}", "a\tb");
    tachylog::info!("c1: {}", "x\u{85}y\u{9b}z");
    let owned = String::from("owned\nstring");
    tachylog::info!("owned: {owned}");
    // Numbers alone are never scanned for escapes; the site's own text and fill still are.
    tachylog::info!("count\n{} ratio {}\r", 7u64, 0.5f64);
    tachylog::info!("{} done\x1b", 5u8);
    tachylog::info!("pad {:\n>4}", 7u32);
    tachylog::info!("clean {} {} {}", true, -3i64, 2.5f32);
    tachylog::info!("last");
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    let messages: Vec<&str> = lines.iter().map(|l| l.message).collect();
    assert_eq!(
        messages.len(),
        12,
        "one record became several lines:\n{text}"
    );
    assert_eq!(messages[0], "first");
    assert_eq!(messages[1], r"arg: one\ntwo\rthree\r\nfour");
    assert_eq!(messages[2], r"literal: a\nb\rc");
    assert_eq!(messages[3], r"esc: \x1b[31mred\x1b[0m bell: \x07 nul: \x00");
    assert_eq!(messages[4], "tab: a\tb");
    assert!(
        messages[5].starts_with("c1: x")
            && messages[5].ends_with('z')
            && !messages[5].contains(['\u{85}', '\u{9b}']),
        "C1 controls not escaped: {:?}",
        messages[5]
    );
    assert_eq!(messages[6], r"owned: owned\nstring");
    assert_eq!(messages[7], r"count\n7 ratio 0.5\r");
    assert_eq!(messages[8], r"5 done\x1b");
    assert_eq!(messages[9], r"pad \n\n\n7");
    assert_eq!(messages[10], "clean true -3 2.5");
    assert_eq!(messages[11], "last");
    assert!(
        !text.contains(['\r', '\x1b', '\x07', '\0']),
        "raw control characters reached the file:\n{text:?}"
    );
}

#[test]
fn escaping_can_be_turned_off() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("escaping_can_be_turned_off", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raw.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .escape_control_chars(false)
            .init(),
    );
    tachylog::info!("raw: {}", "one\ntwo");
    drop(guard);

    let text = common::read_log(&path);
    let (first, second) = text
        .split_once('\n')
        .unwrap_or_else(|| panic!("no newline at all: {text:?}"));
    assert!(
        first.ends_with("raw: one") && second.starts_with("two ("),
        "newline not written raw: {text:?}"
    );
}

/// A thread's name can be any length in Rust: one of a megabyte (named from a request's data,
/// say) is cut to 64 characters, the last `…`, so each of its lines stays a line.
#[test]
fn a_thread_name_of_a_megabyte_is_cut() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog(
        "a_thread_name_of_a_megabyte_is_cut",
        Duration::from_secs(60),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long-name.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());
    std::thread::Builder::new()
        .name("n".repeat(1 << 20))
        .spawn(|| tachylog::info!("from a long name"))
        .unwrap()
        .join()
        .unwrap();
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0].thread_name, format!("{}…", "n".repeat(63)));
    assert!(text.len() < 300, "{} bytes", text.len());
}
