//! Where there is no invariant TSC (other architectures, some virtual machines) the log call
//! reads `CLOCK_MONOTONIC` instead. `TACHYLOG_CLOCK=monotonic` forces that fallback on this
//! machine: a child process that sets it logs from two threads, and every record is in the
//! file, in order per thread, with timestamps inside the child's run and never going back.

mod common;

use std::thread;
use std::time::Duration;

const RECORDS: u64 = 20_000;

#[test]
fn the_monotonic_fallback_keeps_every_record_in_order() {
    if let Some(log) = common::child_role("the_monotonic_fallback_keeps_every_record_in_order") {
        // Before anything reads the clock: the source is chosen once per process.
        std::env::set_var("TACHYLOG_CLOCK", "monotonic");
        let guard = common::expect_init(tachylog::builder().file(&log).utc(true).init());
        let source = tachylog::__private::clock_source();
        let started = jiff::Timestamp::now();
        println!("clock source: {source}");
        println!("started: {started}");
        let other = thread::spawn(|| common::log_numbered("other", RECORDS));
        common::log_numbered("main", RECORDS);
        other.join().unwrap();
        drop(guard);
        println!("ended: {}", jiff::Timestamp::now());
        std::process::exit(if source == "monotonic" { 0 } else { 3 });
    }
    let child = common::run_child(
        "the_monotonic_fallback_keeps_every_record_in_order",
        Duration::from_secs(60),
    );
    assert_eq!(
        child.status.code(),
        Some(0),
        "the fallback was not used\n{child}"
    );
    let lines = common::parse_log(&child.log);
    common::assert_only_numbered(&lines, &["main", "other"], RECORDS, &child);

    let moment = |label: &str| -> String {
        let value = child
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label:?} in the child's output\n{child}"));
        let instant: jiff::Timestamp = value.trim().parse().unwrap();
        // The default line's format, in UTC, to microseconds: comparable as text.
        instant.strftime("%Y-%m-%d %H:%M:%S%.6f").to_string()
    };
    let (started, ended) = (moment("started: "), moment("ended: "));
    let mut previous = "";
    for line in &lines {
        assert!(
            line.timestamp >= previous,
            "time went back: {previous} then {line:?}"
        );
        previous = line.timestamp;
    }
    let (first, last) = (lines[0].timestamp, lines[lines.len() - 1].timestamp);
    assert!(
        first >= started.as_str(),
        "first record at {first}, before the run started at {started}"
    );
    assert!(
        last <= ended.as_str(),
        "last record at {last}, after the run ended at {ended}"
    );
}

/// A value of `TACHYLOG_CLOCK` that is not `monotonic` (a typo) is reported at `init`, not
/// ignored without a word; logging goes on with the default clock.
#[test]
fn a_clock_name_it_does_not_know_is_reported() {
    if let Some(log) = common::child_role("a_clock_name_it_does_not_know_is_reported") {
        std::env::set_var("TACHYLOG_CLOCK", "monotnic");
        let guard = common::expect_init(tachylog::builder().file(&log).init());
        tachylog::info!("logged after the warning");
        drop(guard);
        return;
    }
    let child = common::run_child(
        "a_clock_name_it_does_not_know_is_reported",
        Duration::from_secs(30),
    );
    assert!(child.status.success(), "{child}");
    assert!(
        child.stderr.contains("$TACHYLOG_CLOCK is \"monotnic\""),
        "{child}"
    );
    let lines = common::parse_log(&child.log);
    assert_eq!(lines.len(), 1, "{child}");
    assert_eq!(lines[0].message, "logged after the warning");
}
