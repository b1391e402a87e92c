//! `std::process::exit` loses nothing: its atexit hook drains and flushes. Each scenario runs
//! in a child process that logs 50,000 records from its test thread and 50,000 from another
//! thread, then calls `exit(3)` without dropping the guard; the file must hold all of them and
//! the child's exit code must be 3.
// Unix only: `std::process::exit` is `ExitProcess` on Windows, which ends every other thread (the back
// end's too) and runs no atexit hook, so what is still queued is lost there.
#![cfg(unix)]

mod common;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

const RECORDS: u64 = 50_000;

fn assert_all_records(scenario: &str) {
    for _ in 0..common::REPEATS {
        let child = common::run_child(scenario, Duration::from_secs(60));
        assert_eq!(child.status.code(), Some(3), "{child}");
        let lines = common::parse_log(&child.log);
        common::assert_only_numbered(&lines, &["other", "main"], RECORDS, &child);
    }
}

/// The guard is leaked with `mem::forget`; the other thread has exited before `exit`.
#[test]
fn exit_with_guard_forgotten() {
    if let Some(log) = common::child_role("exit_with_guard_forgotten") {
        std::mem::forget(common::expect_init(tachylog::builder().file(&log).init()));
        common::log_numbered_from_two_threads("other", RECORDS);
        std::process::exit(3);
    }
    assert_all_records("exit_with_guard_forgotten");
}

/// The guard is alive on the stack (`exit` runs no destructors) and the other thread is still
/// alive, blocked, when the process exits.
#[test]
fn exit_with_guard_alive_and_a_thread_still_running() {
    if let Some(log) = common::child_role("exit_with_guard_alive_and_a_thread_still_running") {
        let _guard = common::expect_init(tachylog::builder().file(&log).init());
        let (done_tx, done_rx) = mpsc::channel();
        let (_never_tx, never_rx) = mpsc::channel::<()>();
        thread::Builder::new()
            .name("other".into())
            .spawn(move || {
                common::log_numbered("other", RECORDS);
                done_tx.send(()).unwrap();
                let _ = never_rx.recv(); // stay alive until the process ends
            })
            .unwrap();
        common::log_numbered("main", RECORDS);
        done_rx.recv().unwrap();
        std::process::exit(3);
    }
    assert_all_records("exit_with_guard_alive_and_a_thread_still_running");
}
