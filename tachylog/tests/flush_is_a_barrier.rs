//! `tachylog::flush()` is a barrier: when it returns, every record logged before it was called,
//! by any thread, is in the file. The tests read the file right after `flush` returns, with
//! the guard still alive.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

const THREADS: usize = 4;
const ROUNDS: u64 = 10;
const PER_ROUND: u64 = 2_000;

/// Several threads log a batch, meet at a barrier, and the test thread flushes and checks that
/// all batches so far are in the file; ten rounds.
#[test]
fn flush_waits_for_records_of_every_thread() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog(
        "flush_waits_for_records_of_every_thread",
        Duration::from_secs(120),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("barrier.log");
    // A long flush interval: only `flush` can explain the records being on disk.
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .flush_interval(Duration::from_secs(3600))
            .init(),
    );

    let logged = Arc::new(Barrier::new(THREADS + 1));
    let checked = Arc::new(Barrier::new(THREADS + 1));
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (logged, checked) = (Arc::clone(&logged), Arc::clone(&checked));
            thread::Builder::new()
                .name(format!("writer-{t}"))
                .spawn(move || {
                    for round in 0..ROUNDS {
                        for i in 0..PER_ROUND {
                            tachylog::info!("writer {} record {}", t, round * PER_ROUND + i);
                        }
                        logged.wait();
                        checked.wait();
                    }
                })
                .unwrap()
        })
        .collect();
    for round in 0..ROUNDS {
        logged.wait();
        tachylog::flush();
        let text = common::read_log(&path);
        let lines = common::parse_log(&text);
        let expected = (round + 1) * PER_ROUND;
        for t in 0..THREADS {
            let prefix = format!("writer {t} record ");
            let count = lines
                .iter()
                .filter(|l| l.message.starts_with(&prefix))
                .count() as u64;
            assert_eq!(
                count, expected,
                "round {round}: writer {t} has {count} of {expected} records in the file after flush"
            );
        }
        checked.wait();
    }
    for w in writers {
        w.join().unwrap();
    }
    drop(guard);
}

/// Each thread flushes after each of its own records, and finds that record in the file.
#[test]
fn flush_from_any_thread_covers_its_own_records() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog(
        "flush_from_any_thread_covers_its_own_records",
        Duration::from_secs(120),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("own.log");
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .flush_interval(Duration::from_secs(3600))
            .init(),
    );
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let path = path.clone();
            thread::spawn(move || {
                for i in 0..50 {
                    let message = format!("thread {t} flushes after record {i}");
                    tachylog::info!("{}", message);
                    tachylog::flush();
                    let text = common::read_log(&path);
                    assert!(
                        text.lines()
                            .any(|l| common::parse_line(l).is_ok_and(|l| l.message == message)),
                        "{message:?} not in the file after flush"
                    );
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    drop(guard);
}
