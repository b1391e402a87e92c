//! `std::process::exit` with request scopes still open writes their held records, after the
//! notice that says so, as a guard's drop and a termination signal do; also when the program
//! flushed just before it exited. Each case is a child process that exits with a scope open.
// Unix only: `std::process::exit` is `ExitProcess` on Windows, which ends the back end's thread
// before any hook could drain (see the README's Platforms).
#![cfg(unix)]

mod common;

use std::time::Duration;
use tachylog::Scope;

fn exit_with_a_scope_open(log: &std::path::Path, flush_first: bool) -> ! {
    std::mem::forget(common::expect_init(tachylog::builder().file(log).init()));
    tachylog::info!("before the scope");
    let open = Scope::new();
    open.in_scope(|| {
        tachylog::debug!("held 1 of the open scope");
        tachylog::debug!("held 2 of the open scope");
    });
    std::mem::forget(open);
    if flush_first {
        tachylog::flush();
    }
    std::process::exit(0)
}

#[test]
fn exits_with_a_scope_open() {
    if let Some(log) = common::child_role("exits_with_a_scope_open") {
        exit_with_a_scope_open(&log, false);
    }
}

#[test]
fn flushes_then_exits_with_a_scope_open() {
    if let Some(log) = common::child_role("flushes_then_exits_with_a_scope_open") {
        exit_with_a_scope_open(&log, true);
    }
}

#[test]
fn exit_writes_the_held_records_after_their_notice() {
    for scenario in [
        "exits_with_a_scope_open",
        "flushes_then_exits_with_a_scope_open",
    ] {
        let child = common::run_child(scenario, Duration::from_secs(60));
        assert!(child.status.success(), "{scenario}: {child}");
        let lines: Vec<&str> = child.log.lines().collect();
        let notice = lines
            .iter()
            .position(|l| l.contains("1 still open at shutdown"))
            .unwrap_or_else(|| panic!("{scenario}: no notice in {child}"));
        assert!(
            lines[notice + 1].contains("held 1 of the open scope")
                && lines[notice + 2].contains("held 2 of the open scope"),
            "{scenario}: the held records after the notice, in order: {lines:#?}"
        );
    }
}
