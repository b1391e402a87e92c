//! The back end has three ways to a text line: formatted straight into the buffer of a file
//! that is the only sink, formatted once for several text-only sinks, and the general way
//! (message rendered on its own, for a sink that reads it, then laid out). The same records
//! must give the same bytes on all three: escaping, failed and panicking `Display`s, cut
//! messages, fields, widths, floats, Unicode.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

fn log_everything() {
    tachylog::info!("plain {} {} {}", 42u64, -7i64, 2.5f64);
    tachylog::info!("floats {:.3} {:?} {}", 1.0f64 / 3.0, 0.1f32, 1e300f64);
    tachylog::warn!("escaped {} and \"{}\"", "two\nlines", "tab\tbell\x07");
    tachylog::info!("unicode {} ✓ {}", "Ünïcödé", '\u{2028}');
    tachylog::info!(
        "width [{:>8}] [{:<6}] [{:^7.2}] [{:+}] [{:#x}]",
        "r",
        5u8,
        1.23456f64,
        9i32,
        255u32
    );
    tachylog::error!(user = "ann", attempts = 3u32, ok = false; "with fields {}", 1);
    tachylog::info!("panics {}", common::Panics);
    tachylog::info!("fails {}", common::Fails);
    tachylog::info!("long {}", "x".repeat(300));
    tachylog::info!("list {:?} {:?}", vec![1u32, 2, 3], ["a\nb", "c"]);
    tachylog::debug!("filtered out at INFO {}", 1);
    tachylog::info!("static, no arguments");
}

/// A sink that reads the message, so the back end takes its general path.
struct ReadsMessage(Arc<Mutex<Vec<String>>>);
impl tachylog::Sink for ReadsMessage {
    fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
        self.0.lock().unwrap().push(line.message.to_string());
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The lines of `path` without their date-time column (the only part that differs per run).
fn lines_without_time(path: &Path) -> Vec<String> {
    let text = common::read_log(path);
    text.lines().map(|line| line[26..].to_string()).collect()
}

#[test]
fn one_file_several_files_and_the_general_path_write_the_same_lines() {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let builder = || {
        tachylog::builder()
            .max_message_bytes(200)
            .level(tachylog::Level::Info)
    };

    // Only one file: formatted into its buffer.
    let guard = common::expect_init(builder().file(dir.path().join("alone.log")).init());
    log_everything();
    drop(guard);

    // Two files: formatted once, copied to each.
    let guard = common::expect_init(
        builder()
            .sink(tachylog::FileSink::open(dir.path().join("first.log")).unwrap())
            .sink(tachylog::FileSink::open(dir.path().join("second.log")).unwrap())
            .init(),
    );
    log_everything();
    drop(guard);

    // A file and a sink that reads the message: the general path.
    let messages = Arc::new(Mutex::new(Vec::new()));
    let guard = common::expect_init(
        builder()
            .file(dir.path().join("general.log"))
            .sink(ReadsMessage(messages.clone()))
            .init(),
    );
    log_everything();
    drop(guard);

    let alone = lines_without_time(&dir.path().join("alone.log"));
    assert_eq!(alone.len(), 11, "{alone:#?}");
    for other in ["first.log", "second.log", "general.log"] {
        assert_eq!(
            lines_without_time(&dir.path().join(other)),
            alone,
            "{other} differs from alone.log"
        );
    }
    // The lines are what they should be, not merely equal.
    let find = |prefix: &str| {
        alone
            .iter()
            .find(|line| line.contains(prefix))
            .unwrap_or_else(|| panic!("no line with {prefix:?}: {alone:#?}"))
            .clone()
    };
    assert!(find("plain 42 -7 2.5").ends_with(")"));
    assert!(find("floats ").contains("floats 0.333 0.1 1000000000000000000000000"));
    assert!(find("floats ").contains("…[truncated 118 bytes]"));
    assert!(find("escaped ").contains("escaped two\\nlines and \"tab\tbell\\x07\""));
    assert!(find("unicode ").contains("unicode Ünïcödé ✓ \\u{2028}"));
    assert!(find("width ").contains("width [       r] [5     ] [ 1.23  ] [+9] [0xff]"));
    assert!(find("with fields").contains("with fields 1 user=ann attempts=3 ok=false"));
    assert!(find("panics ").contains("panics <formatting panicked: display of Panics>"));
    assert!(find("fails ").contains("fails <formatting error>"));
    assert!(find("long x").contains("…[truncated 105 bytes]"));
    assert!(find("list ").contains(r#"list [1, 2, 3] ["a\nb", "c"]"#));
    // The general path rendered the message for the sink that reads it.
    let messages = messages.lock().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m == "escaped two\nlines and \"tab\tbell\x07\""),
        "{messages:#?}"
    );
}
