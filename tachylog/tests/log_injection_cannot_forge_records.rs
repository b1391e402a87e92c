//! Log injection (CWE-117): an attacker who controls any part of a record (a `{}` or `{:?}`
//! argument, a `CopyArg` type's output formatted by the back end, the target and the file of a
//! `log` crate record, the name of a thread) and puts a newline, a carriage return, an ANSI
//! escape sequence or another control character in it cannot make the file show a second,
//! forged record, nor send escape sequences to a terminal that displays the log.

mod common;

use std::fmt;
use std::thread;
use std::time::Duration;

/// A complete, well-formed forged record, preceded by every kind of line break and followed by
/// ANSI sequences that would hide the real text and recolour the terminal.
const FORGED: &str = "\n2026-11-21 16:04:05.125049 ERROR [main/1] app: FORGED (src/x.rs:1)\r\
                      2026-11-21 16:04:05.125049 ERROR [main/1] app: FORGED (src/x.rs:2)\r\n\
                      \u{1b}[2K\u{1b}[1A\u{1b}]0;title\u{7}\u{85}\u{2028}\u{0}\u{7f}\u{9b}31m\u{202e}\u{2066}";

#[derive(Clone, Copy)]
struct Hostile;

impl fmt::Display for Hostile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(FORGED)
    }
}

impl tachylog::CopyArg for Hostile {}

#[test]
fn no_field_can_forge_a_record() {
    let _dog = common::watchdog("log injection", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("injection.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());
    let attacker = String::from(FORGED);
    tachylog::info!("user name {}", attacker);
    tachylog::info!("user name {:?}", attacker);
    tachylog::info!("user agent {:>300}", attacker.as_str());
    tachylog::info!("copied {}", Hostile);
    tachylog::info!("bytes {}", tachylog::lossy(attacker.as_bytes()));
    log::info!(target: FORGED, "facade message {}", attacker);
    log::logger().log(
        &log::Record::builder()
            .args(format_args!("facade file {}", 1))
            .level(log::Level::Warn)
            .target("t")
            .file(Some(FORGED))
            .line(Some(7))
            .build(),
    );
    thread::Builder::new()
        .name(FORGED.replace('\0', ""))
        .spawn(|| tachylog::info!("from a hostile thread name"))
        .unwrap()
        .join()
        .unwrap();
    drop(guard);

    let text = common::read_log(&path);
    // Not `parse_log`: a hostile `log` target legitimately puts spaces in the module column.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        8,
        "a record was split into several lines:\n{text}"
    );
    let today = &lines[0][..11];
    for line in &lines {
        assert!(
            line.starts_with(today) && !line.starts_with("2026-11-21 16:04:05.125049 ERROR"),
            "a line that is not one of our records: {line:?}"
        );
        assert!(!line.contains("] app: FORGED (src/x.rs:1)\n"), "{line:?}");
    }
    for byte in text.bytes() {
        assert!(
            byte == b'\n' || byte == b'\t' || !(byte < 0x20 || byte == 0x7f),
            "raw control byte {byte:#04x} in the log:\n{text}"
        );
    }
    // Bidi controls too, in the thread's name as in the rest.
    for c in ['\u{85}', '\u{9b}', '\u{2028}', '\u{202e}', '\u{2066}'] {
        assert!(!text.contains(c), "raw {c:?} in the log:\n{text}");
    }
}
