//! SIGTERM while two threads log as fast as they can into a file: the process dies of SIGTERM,
//! and in every run the file ends with a whole line and each thread's records are a gap-free
//! prefix of what it logged. Two things make that hold: the back end stops writing ahead of
//! the signal's default action, so the death never cuts a `write(2)` short (the file would end
//! mid-line, at a multiple of 4096 bytes); and the drain that precedes the halt ends at its
//! snapshot although the threads keep logging (`Source::reached_snapshot`,
//! `backend/merge.rs`), or the signal thread gives up after 5 s and the process dies
//! mid-write. Each child is signalled once the back end is busy writing.
// Unix only: SIGTERM and its handler are Linux-only.
#![cfg(unix)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

const RUNS: usize = 20;
const SCOPES: [&str; 2] = ["left", "right"];

/// Long lines: the more of its time the back end spends inside `write(2)`, the likelier the
/// signal lands there. Even so, a debug build formats for most of its time, so the signal
/// rarely lands in a write; `.ci/run` therefore runs this test in release too, where a back end
/// that wrote on through the signal tore the last line in the first or second run.
const PADDING: &str = concat!(
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
);

/// Logs `"{scope} record {i} {padding}"` for ever, counting itself in `started` after its
/// first record.
fn log_for_ever(scope: &'static str, started: &AtomicUsize) {
    let padding = PADDING;
    let mut i = 0u64;
    loop {
        tachylog::info!("{} record {} {}", scope, i, padding);
        if i == 0 {
            started.fetch_add(1, Ordering::SeqCst);
        }
        i += 1;
    }
}

#[test]
fn sigterm_while_logging_at_full_speed_leaves_whole_lines() {
    if let Some(log) = common::child_role("sigterm_while_logging_at_full_speed_leaves_whole_lines")
    {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let _guard = common::expect_init(tachylog::builder().file(&log).init());
        for scope in SCOPES {
            thread::Builder::new()
                .name(scope.into())
                .spawn(move || log_for_ever(scope, &STARTED))
                .expect("spawn a logging thread");
        }
        // Both threads have logged, and the back end has written thousands of lines: it is
        // in its steady state, writing while they log.
        common::wait_until(
            "both threads logging and 4 MiB in the file",
            Duration::from_secs(30),
            || {
                STARTED.load(Ordering::SeqCst) == SCOPES.len()
                    && std::fs::metadata(&log).is_ok_and(|m| m.len() >= 4 << 20)
            },
        );
        // SAFETY: sending a signal to our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        common::await_fatal_signal(Duration::from_secs(30));
    }
    for run in 0..RUNS {
        let child = common::run_child(
            "sigterm_while_logging_at_full_speed_leaves_whole_lines",
            Duration::from_secs(60),
        );
        assert_eq!(
            child.status.signal(),
            Some(libc::SIGTERM),
            "run {run}: {child}"
        );
        assert!(
            child.log.ends_with('\n'),
            "run {run}: the log ends inside a line ({} bytes); tail: {:?}\n{child}",
            child.log.len(),
            common::tail(&child.log, 200)
        );
        let lines = common::parse_log(&child.log);
        for scope in SCOPES {
            let written = assert_gap_free_prefix(&lines, scope, run);
            assert!(
                written > 0,
                "run {run}: no record of {scope} reached the file\n{child}"
            );
        }
    }
}

/// Asserts that `scope`'s records in `lines` are `0, 1, 2, ...` with no gap and no repeat, and
/// returns how many there are.
fn assert_gap_free_prefix(lines: &[common::Line<'_>], scope: &str, run: usize) -> u64 {
    let prefix = format!("{scope} record ");
    let mut next = 0u64;
    for line in lines.iter().filter(|l| l.thread_name == scope) {
        let number = line
            .message
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok());
        assert_eq!(
            number,
            Some(next),
            "run {run}: {scope}'s record {next} was expected, found {:?}",
            line.message
        );
        next += 1;
    }
    next
}
