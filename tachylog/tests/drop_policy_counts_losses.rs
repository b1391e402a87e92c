//! With `OnFull::Drop`, a full ring drops records instead of blocking, and every loss is
//! accounted for: the records written plus the N of the `N records dropped` lines equal the
//! records logged.

mod common;

use std::thread;
use std::time::Duration;

const BURST: u64 = 200_000;

/// Returns (records of each scope seen, in order, no duplicates) and the total reported dropped.
fn count(lines: &[common::Line<'_>], scopes: &[String]) -> (Vec<u64>, u64) {
    let mut seen = vec![0u64; scopes.len()];
    let mut last = vec![None::<u64>; scopes.len()];
    let mut dropped = 0u64;
    for line in lines {
        if let Some((n, rest)) = line.message.split_once(' ') {
            if let Ok(n) = n.parse::<u64>() {
                if rest.starts_with("records dropped") || rest.starts_with("record dropped") {
                    assert_eq!(line.level, "WARN", "drop report not at WARN: {line:?}");
                    dropped += n;
                    continue;
                }
            }
        }
        let Some((s, i)) = scopes.iter().enumerate().find_map(|(s, scope)| {
            let rest = line.message.strip_prefix(scope.as_str())?;
            let i = rest
                .strip_prefix(" record ")?
                .strip_suffix(&format!(" of {BURST}"))?;
            Some((s, i.parse::<u64>().ok()?))
        }) else {
            panic!("unexpected line {line:?}");
        };
        assert!(
            !matches!(last[s], Some(l) if i <= l),
            "{}: record {i} after {:?}: out of order or duplicated",
            scopes[s],
            last[s]
        );
        last[s] = Some(i);
        seen[s] += 1;
    }
    (seen, dropped)
}

fn burst(threads: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("drop.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .ring_capacity(4096)
            .on_full(tachylog::OnFull::Drop)
            .init(),
    );
    let scopes: Vec<String> = (0..threads).map(|t| format!("burst-{t}")).collect();
    let writers: Vec<_> = scopes
        .iter()
        .map(|scope| {
            let scope = scope.clone();
            thread::spawn(move || common::log_numbered(&scope, BURST))
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    drop(guard);

    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    let (seen, dropped) = count(&lines, &scopes);
    let written: u64 = seen.iter().sum();
    let logged = BURST * threads as u64;
    eprintln!(
        "{threads} thread(s): {logged} logged, {written} written, {dropped} reported dropped"
    );
    assert_eq!(
        written + dropped,
        logged,
        "{written} written + {dropped} reported dropped != {logged} logged (per thread {seen:?})"
    );
    assert!(
        dropped > 0,
        "a {BURST}-record burst into a 4 KiB ring dropped nothing: the policy was not exercised"
    );
    assert!(written > 0, "nothing written at all");
}

#[test]
fn one_thread_burst() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("one_thread_burst", Duration::from_secs(120));
    burst(1);
}

#[test]
fn four_thread_burst() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("four_thread_burst", Duration::from_secs(120));
    burst(4);
}

/// Losses are reported once: a logger initialised after a lossy one does not report the old
/// losses again, not even for a thread (here the test's own) that logged under both.
#[test]
fn next_logger_does_not_report_old_losses() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog(
        "next_logger_does_not_report_old_losses",
        Duration::from_secs(120),
    );
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first.log"), dir.path().join("second.log"));
    let guard = common::expect_init(
        tachylog::builder()
            .file(&first)
            .ring_capacity(4096)
            .on_full(tachylog::OnFull::Drop)
            .init(),
    );
    let scope = "lossy".to_string();
    common::log_numbered(&scope, BURST);
    drop(guard);
    let text = common::read_log(&first);
    let (seen, dropped) = count(&common::parse_log(&text), std::slice::from_ref(&scope));
    assert_eq!(seen[0] + dropped, BURST, "first logger's accounting");

    let guard = common::expect_init(tachylog::builder().file(&second).init());
    tachylog::info!("second logger");
    drop(guard);
    let text = common::read_log(&second);
    let messages: Vec<&str> = common::parse_log(&text).iter().map(|l| l.message).collect();
    assert_eq!(
        messages,
        ["second logger"],
        "the second logger reports losses it never had"
    );
}
