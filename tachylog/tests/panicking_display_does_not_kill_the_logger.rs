//! A user `Display` that panics does not kill the logger. Formatted in the back end (the type
//! opts in with `CopyArg`), the record becomes an error marker naming the call site; formatted
//! on the calling thread (the fallback for other types), the panic reaches the caller or is
//! turned into a marker. Either way the records before and after are intact, the thread that
//! logged can go on logging, and `flush` still returns.

mod common;

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

const AFTER: u64 = 1_000;

/// Copied raw into the ring and formatted by the back end, where it panics.
#[derive(Clone, Copy)]
struct ExplodesInBackEnd(u32);

impl fmt::Display for ExplodesInBackEnd {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("back-end display exploded {}", self.0)
    }
}

impl tachylog::CopyArg for ExplodesInBackEnd {}

/// Not `Copy`: formatted on the calling thread, where it panics after writing some output.
struct ExplodesOnCaller(String);

impl fmt::Display for ExplodesOnCaller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("partial output ")?;
        panic!("caller display exploded {}", self.0)
    }
}

#[test]
fn panicking_display_in_back_end() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("panicking_display_in_back_end", Duration::from_secs(60));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("backend.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());

    tachylog::info!("before the panicking record");
    let site = line!() + 1;
    tachylog::info!("value {}", ExplodesInBackEnd(7));
    tachylog::info!("right after the panicking record");
    common::log_numbered("after", AFTER);
    tachylog::flush(); // returns only if the back end is alive
    let flushed = common::read_log(&path);
    assert!(
        flushed.contains("right after the panicking record"),
        "record after the panic missing after flush: {}",
        common::tail(&flushed, 2000)
    );
    common::log_numbered("after flush", AFTER);
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    let position = |message: &str| {
        lines
            .iter()
            .position(|l| l.message == message)
            .unwrap_or_else(|| panic!("{message:?} missing from the log:\n{text}"))
    };
    let before = position("before the panicking record");
    let after = position("right after the panicking record");
    let marker = lines
        .iter()
        .position(|l| l.message.contains("formatting panicked"))
        .unwrap_or_else(|| panic!("no `formatting panicked` marker in the log:\n{text}"));
    assert!(
        before < marker && marker < after,
        "marker out of place:\n{text}"
    );
    let call_site = format!("{}:{site}", file!());
    assert!(
        text.lines().nth(marker).unwrap().contains(&call_site),
        "marker does not name the call site {call_site}: {:?}",
        lines[marker]
    );
    common::assert_numbered(&lines, "after", AFTER);
    common::assert_numbered(&lines, "after flush", AFTER);
}

#[test]
fn panicking_display_on_calling_thread() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog(
        "panicking_display_on_calling_thread",
        Duration::from_secs(60),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("caller.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());

    tachylog::info!("before the panicking record");
    let value = ExplodesOnCaller("3b".into());
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        tachylog::info!("value {}", value);
    }));
    // Whether the panic reached us or was caught inside, the same thread goes on logging.
    tachylog::info!("right after the panicking record");
    common::log_numbered("after", AFTER);
    tachylog::flush();
    let flushed = common::read_log(&path);
    assert!(
        flushed.contains("right after the panicking record"),
        "record after the panic missing after flush: {}",
        common::tail(&flushed, 2000)
    );
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    let before = lines
        .iter()
        .position(|l| l.message == "before the panicking record")
        .unwrap_or_else(|| panic!("record before the panic missing:\n{text}"));
    let after = lines
        .iter()
        .position(|l| l.message == "right after the panicking record")
        .unwrap_or_else(|| panic!("record after the panic missing:\n{text}"));
    let marker = lines
        .iter()
        .position(|l| {
            l.message.contains("formatting panicked")
                || (l.level == "ERROR" && l.message.contains("caller display exploded 3b"))
        })
        .unwrap_or_else(|| {
            panic!(
                "no error marker (outcome {:?}) in the log:\n{text}",
                outcome.is_err()
            )
        });
    assert!(
        before < marker && marker < after,
        "marker out of place:\n{text}"
    );
    // Nothing else came out between the records: no half-written record.
    for line in &lines[before + 1..after] {
        assert!(
            line.message.contains("formatting panicked") || line.level == "ERROR",
            "unexpected line around the panic: {line:?}"
        );
    }
    common::assert_numbered(&lines, "after", AFTER);
}
