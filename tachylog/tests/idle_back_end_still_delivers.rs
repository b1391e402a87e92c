//! The back end sleeps between drains instead of polling, and threads' rings start small: none
//! of that may cost a record or hold one back for long. A record logged at a low rate reaches
//! the file within the flush interval with no `flush()`; a producer blocked on a full ring is
//! released although the back end sleeps; a burst after a long idle stretch arrives whole and in
//! order; a thread that logs a little holds a little memory, one that logs a lot gets a larger
//! ring, and the memory goes when the thread does.
//!
//! Waits are for the event itself (the file's content, the counter), polled up to a deadline
//! far beyond what is expected, so a slow machine makes the test slower, not red.

mod common;

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

fn file_holds(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|log| log.contains(text))
}

/// Records logged one at a time, 20 ms apart, each reach the file on their own: the back end,
/// asleep, writes them at its next scheduled drain. The flush interval is 50 ms; the deadline
/// per record, 10 s, only bounds a hang.
#[test]
fn records_at_a_low_rate_reach_the_file_without_a_flush() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("low-rate records", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("low.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .flush_interval(Duration::from_millis(50))
            .init(),
    );
    for i in 0..10 {
        tachylog::info!("low-rate record {}", i);
        common::wait_until(format!("record {i}"), Duration::from_secs(10), || {
            file_holds(&path, &format!("low-rate record {i}\u{20}"))
        });
        thread::sleep(Duration::from_millis(20));
    }
    drop(guard);
}

/// With a 4 KiB ring that may not grow and a flush interval of an hour, a thread logging 200,000
/// records fills its ring again and again: each time the back end is woken and frees room, so
/// the thread finishes (the watchdog fails a hang) and every record arrives. The records fill
/// the file sink's 1 MiB batches, so the back end also waits on the file's writing thread in
/// between: a wake-up lost there (as one through the thread's park token was) would stall the
/// thread for the whole hour.
#[test]
fn a_producer_blocked_on_a_full_ring_is_released() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("blocked producer", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blocked.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .ring_capacity(4096)
            .flush_interval(Duration::from_secs(3600))
            .init(),
    );
    thread::Builder::new()
        .name("blocked".into())
        .spawn(|| common::log_numbered("blocked", 200_000))
        .unwrap()
        .join()
        .unwrap();
    drop(guard);
    let log = common::read_log(&path);
    common::assert_numbered(&common::parse_log(&log), "blocked", 200_000);
}

/// The back end has slept through an idle stretch (several flush intervals with nothing
/// logged); then two threads log 50,000 records each as fast as they can. Everything arrives,
/// once and in order per thread.
#[test]
fn a_burst_after_a_long_idle_stretch_arrives_whole_and_in_order() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("burst after idle", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("burst.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .flush_interval(Duration::from_millis(20))
            .init(),
    );
    tachylog::info!("before the idle stretch");
    common::wait_until("the first record", Duration::from_secs(10), || {
        file_holds(&path, "before the idle stretch")
    });
    let wakeups = tachylog::stats().backend_wakeups;
    // The idle stretch is what this test is about: the back end must have slept through it.
    common::wait_until(
        "the back end sleeping and waking on its own",
        Duration::from_secs(10),
        || tachylog::stats().backend_wakeups >= wakeups + 5,
    );
    let burst: Vec<_> = ["burst-a", "burst-b"]
        .into_iter()
        .map(|name| {
            thread::Builder::new()
                .name(name.into())
                .spawn(move || common::log_numbered(name, 50_000))
                .unwrap()
        })
        .collect();
    for thread in burst {
        thread.join().unwrap();
    }
    drop(guard);
    let log = common::read_log(&path);
    let lines = common::parse_log(&log);
    common::assert_numbered(&lines, "burst-a", 50_000);
    common::assert_numbered(&lines, "burst-b", 50_000);
}

/// Runs `scenario` in a fresh child process, whose ring counter starts at zero, and fails with
/// its output unless it passed.
fn in_a_child(scenario: &str) {
    let child = common::run_child(scenario, Duration::from_secs(120));
    assert!(child.status.success(), "{child}");
}

/// 200 threads alive at once, each logging 100 records, hold about 8 KiB of ring each (at most
/// 24 KiB, if a thread's ring grew once), not the 1 MiB maximum: under 6.4 MiB in all, against
/// 200 MiB were every ring at its maximum.
#[test]
fn threads_that_log_a_little_hold_a_little() {
    let Some(log) = common::child_role("threads_that_log_a_little_hold_a_little") else {
        return in_a_child("threads_that_log_a_little_hold_a_little");
    };
    let guard = common::expect_init(tachylog::builder().file(&log).init());
    const THREADS: usize = 200;
    let logged = Arc::new(Barrier::new(THREADS + 1));
    let measured = Arc::new(Barrier::new(THREADS + 1));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (logged, measured) = (logged.clone(), measured.clone());
            thread::spawn(move || {
                common::log_numbered(&format!("small-{t}"), 100);
                logged.wait();
                measured.wait();
            })
        })
        .collect();
    logged.wait();
    let held = tachylog::stats().ring_bytes;
    measured.wait();
    for thread in threads {
        thread.join().unwrap();
    }
    drop(guard);
    assert!(
        held <= THREADS * (32 << 10),
        "{THREADS} threads of 100 records hold {held} bytes of rings"
    );
    let log = common::read_log(&log);
    let lines = common::parse_log(&log);
    for t in 0..THREADS {
        common::assert_numbered(&lines, &format!("small-{t}"), 100);
    }
}

/// A thread that logs more than its first ring holds before the back end drains (the back end
/// is held, as a slow disk would hold it) gets a larger ring instead of waiting, up to
/// `ring_capacity`; once it has exited and its records are written, the memory is freed.
#[test]
fn a_busy_thread_gets_a_larger_ring_and_gives_it_back_when_it_exits() {
    let scenario = "a_busy_thread_gets_a_larger_ring_and_gives_it_back_when_it_exits";
    let Some(log) = common::child_role(scenario) else {
        return in_a_child(scenario);
    };
    let guard = common::expect_init(tachylog::builder().file(&log).ring_capacity(1 << 20).init());
    tachylog::__private::hold_backend(true);
    let busy = thread::Builder::new()
        .name("busy".into())
        .spawn(|| {
            // About 500 KB of records: more than any ring but the largest holds.
            common::log_numbered("busy", 10_000);
            tachylog::stats().ring_bytes
        })
        .unwrap();
    let during = busy.join().unwrap();
    tachylog::__private::hold_backend(false);
    tachylog::flush();
    assert!(
        during >= 512 << 10,
        "the busy thread's rings hold {during} bytes"
    );
    assert!(
        during <= 2 << 20,
        "the busy thread's rings hold {during} bytes, more than twice the maximum"
    );
    common::wait_until(
        "the exited thread's rings freed",
        Duration::from_secs(10),
        || tachylog::stats().ring_bytes == 0,
    );
    drop(guard);
    let log = common::read_log(&log);
    common::assert_numbered(&common::parse_log(&log), "busy", 10_000);
}
