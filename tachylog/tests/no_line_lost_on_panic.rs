//! A panic in any thread loses nothing: the panic hook installed by `init` logs the panic
//! message at ERROR and flushes everything. Each scenario runs in a child process that leaks its
//! guard, logs 50,000 records, and panics; where the process could otherwise be saved by the
//! atexit hook, it leaves through `_exit` or `abort` instead, so only the panic hook can have
//! written the records.

mod common;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const RECORDS: u64 = 50_000;

/// Checks the log of a child that logged `RECORDS` numbered records under `scope` and then
/// panicked with a message containing `payload`: every record, then the panic at ERROR.
fn assert_records_then_panic(child: &common::ChildRun, scope: &str, payload: &str) {
    let lines = common::parse_log(&child.log);
    common::assert_numbered(&lines, scope, RECORDS);
    let last_record = lines
        .iter()
        .rposition(|l| l.message.starts_with(&format!("{scope} record ")))
        .unwrap();
    let panic_line = lines
        .iter()
        .position(|l| l.message.contains(payload))
        .unwrap_or_else(|| panic!("no line with the panic message {payload:?}\n{child}"));
    assert_eq!(
        lines[panic_line].level, "ERROR",
        "panic not logged at ERROR: {:?}",
        lines[panic_line]
    );
    assert!(
        panic_line > last_record,
        "the panic line comes before records logged earlier: {:?}",
        lines[panic_line]
    );
}

fn leak_logger(log: &std::path::Path) {
    std::mem::forget(common::expect_init(tachylog::builder().file(log).init()));
}

/// The test's own thread panics and unwinds; the test harness catches it and exits with 101.
#[test]
fn panic_in_test_thread() {
    if let Some(log) = common::child_role("panic_in_test_thread") {
        leak_logger(&log);
        common::log_numbered("main", RECORDS);
        panic!("boom in the test thread 4f1c");
    }
    for _ in 0..common::REPEATS {
        let child = common::run_child("panic_in_test_thread", Duration::from_secs(60));
        assert_eq!(child.status.code(), Some(101), "{child}");
        assert_records_then_panic(&child, "main", "boom in the test thread 4f1c");
    }
}

/// As with `panic = "abort"`: a hook chained after tachylog's aborts the process as soon as
/// tachylog's hook returns, so no unwinding, no atexit hook.
#[test]
fn panic_then_abort() {
    if let Some(log) = common::child_role("panic_then_abort") {
        leak_logger(&log);
        let tachylog_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            tachylog_hook(info);
            std::process::abort();
        }));
        common::log_numbered("main", RECORDS);
        panic!("boom before abort 9d02");
    }
    for _ in 0..common::REPEATS {
        let child = common::run_child("panic_then_abort", Duration::from_secs(60));
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(child.status.signal(), Some(libc::SIGABRT), "{child}");
        }
        // `abort` is a fast-fail on Windows: STATUS_STACK_BUFFER_OVERRUN.
        #[cfg(windows)]
        assert_eq!(child.status.code(), Some(0xC000_0409_u32 as i32), "{child}");
        assert_records_then_panic(&child, "main", "boom before abort 9d02");
    }
}

/// Another thread logs and panics; the test thread joins it and leaves through `_exit`.
#[test]
fn panic_in_joined_thread() {
    if let Some(log) = common::child_role("panic_in_joined_thread") {
        leak_logger(&log);
        common::log_numbered("main", RECORDS);
        let worker = thread::Builder::new()
            .name("panicker".into())
            .spawn(|| {
                common::log_numbered("panicker", RECORDS);
                panic!("boom in a joined thread 61ab");
            })
            .unwrap();
        assert!(worker.join().is_err());
        // SAFETY: `_exit` ends the process at once; nothing here relies on destructors.
        unsafe { libc::_exit(0) };
    }
    for _ in 0..common::REPEATS {
        let child = common::run_child("panic_in_joined_thread", Duration::from_secs(60));
        assert_eq!(child.status.code(), Some(0), "{child}");
        let lines = common::parse_log(&child.log);
        common::assert_numbered(&lines, "main", RECORDS);
        assert_records_then_panic(&child, "panicker", "boom in a joined thread 61ab");
    }
}

/// Another thread logs and panics while the test thread goes on; nobody joins it: the test
/// thread only waits until it has finished (its panic hook has returned by then) and leaves
/// through `_exit`.
#[test]
fn panic_in_detached_thread() {
    if let Some(log) = common::child_role("panic_in_detached_thread") {
        leak_logger(&log);
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let worker = thread::Builder::new()
            .name("panicker".into())
            .spawn(move || {
                common::log_numbered("panicker", RECORDS);
                go_rx.recv().unwrap();
                panic!("boom in a detached thread 0c77");
            })
            .unwrap();
        // Every record of both threads is logged before the panic.
        common::log_numbered("main", RECORDS);
        go_tx.send(()).unwrap();
        common::wait_until(
            "the panicking thread to finish",
            Duration::from_secs(30),
            || worker.is_finished(),
        );
        // SAFETY: `_exit` ends the process at once; nothing here relies on destructors.
        unsafe { libc::_exit(0) };
    }
    for _ in 0..common::REPEATS {
        let child = common::run_child("panic_in_detached_thread", Duration::from_secs(60));
        assert_eq!(child.status.code(), Some(0), "{child}");
        let lines = common::parse_log(&child.log);
        common::assert_numbered(&lines, "main", RECORDS);
        assert_records_then_panic(&child, "panicker", "boom in a detached thread 0c77");
    }
}
