//! Dropping the guard drains every thread's queue and flushes the file: a child process logs
//! 50,000 records from its test thread and 50,000 from a thread that has already exited, drops
//! the guard at the end of a scope, then leaves through `_exit`, which skips atexit hooks, so
//! only the guard's drop can have written the records.

mod common;

use std::time::Duration;

const RECORDS: u64 = 50_000;

#[test]
fn no_line_lost_on_guard_drop() {
    if let Some(log) = common::child_role("no_line_lost_on_guard_drop") {
        {
            let _guard = common::expect_init(tachylog::builder().file(&log).init());
            common::log_numbered_from_two_threads("helper", RECORDS);
        }
        // SAFETY: `_exit` ends the process at once; nothing here relies on destructors.
        unsafe { libc::_exit(0) };
    }

    for _ in 0..common::REPEATS {
        let child = common::run_child("no_line_lost_on_guard_drop", Duration::from_secs(60));
        assert_eq!(child.status.code(), Some(0), "{child}");
        let lines = common::parse_log(&child.log);
        common::assert_only_numbered(&lines, &["helper", "main"], RECORDS, &child);
    }
}
