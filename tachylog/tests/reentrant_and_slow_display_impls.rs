//! `Display` impls that misbehave without panicking: one that logs from inside `fmt`
//! (re-entrancy), on the calling thread and on the back end (a `CopyArg` type), and one that is
//! very slow. No deadlock (a watchdog aborts a hang), and no unrelated record is lost.

mod common;

use std::fmt;
use std::thread;
use std::time::Duration;

/// Not `Copy`: formatted on the calling thread, where it logs a record of its own.
struct LogsOnCaller(u64);

impl fmt::Display for LogsOnCaller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        tachylog::info!("inner record {} from inside fmt", self.0);
        write!(f, "outer-{}", self.0)
    }
}

const PAD: &str = concat!(
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
);

/// `CopyArg`: formatted by the back end, which thereby logs into its own ring.
#[derive(Clone, Copy)]
struct LogsOnBackEnd(u64);

impl fmt::Display for LogsOnBackEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Ten records of ~1 KiB each: more than the back end's 4 KiB ring holds.
        for _ in 0..10 {
            tachylog::info!("back-end inner record {} {}", self.0, PAD);
        }
        tachylog::flush(); // must not wait for itself
        write!(f, "outer-{}", self.0)
    }
}

impl tachylog::CopyArg for LogsOnBackEnd {}

/// Formatted on the calling thread and slow.
struct Slow(u64);

impl fmt::Display for Slow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The slowness is the scenario, not a wait for anything.
        thread::sleep(Duration::from_millis(50));
        write!(f, "slow-{}", self.0)
    }
}

/// `CopyArg`: slow on the back end.
#[derive(Clone, Copy)]
struct SlowOnBackEnd(u64);

impl fmt::Display for SlowOnBackEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The slowness is the scenario, not a wait for anything.
        thread::sleep(Duration::from_millis(50));
        write!(f, "slow-{}", self.0)
    }
}

impl tachylog::CopyArg for SlowOnBackEnd {}

const N: u64 = 2_000;

#[test]
fn logging_from_inside_fmt_on_the_caller() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("re-entrant caller fmt", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reentrant.log");
    let guard = common::expect_init(tachylog::builder().file(&path).ring_capacity(4096).init());
    for i in 0..N {
        tachylog::info!("outer record {}", LogsOnCaller(i));
    }
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    for i in 0..N {
        for needle in [
            format!("inner record {i} from inside fmt"),
            format!("outer record outer-{i}"),
        ] {
            assert_eq!(
                lines.iter().filter(|l| l.message == needle).count(),
                1,
                "{needle:?}"
            );
        }
    }
}

/// The back end's own ring is small here, so unless the back end refuses to wait for itself,
/// its re-entrant records fill the ring and it blocks forever (the watchdog turns that into a
/// failure). Its own records beyond the ring are dropped and counted instead.
#[test]
fn logging_from_inside_fmt_on_the_back_end() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("re-entrant back-end fmt", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reentrant-backend.log");
    let guard = common::expect_init(tachylog::builder().file(&path).ring_capacity(4096).init());
    for i in 0..N {
        tachylog::info!("outer record {}", LogsOnBackEnd(i));
    }
    common::log_numbered("unrelated", N);
    tachylog::flush();
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    common::assert_numbered(&lines, "unrelated", N);
    for i in 0..N {
        let outer = format!("outer record outer-{i}");
        assert_eq!(
            lines.iter().filter(|l| l.message == outer).count(),
            1,
            "{outer:?}"
        );
    }
    // The back end's own records are written or counted as dropped, never waited for.
    let inner = lines
        .iter()
        .filter(|l| l.message.starts_with("back-end inner record "))
        .count() as u64;
    let dropped: u64 = lines
        .iter()
        .filter_map(|l| l.message.split_once(" records dropped: "))
        .map(|(n, _)| n)
        .filter_map(|n| n.parse::<u64>().ok())
        .sum();
    assert_eq!(
        inner + dropped,
        10 * N,
        "{inner} written + {dropped} dropped"
    );
}

#[test]
fn slow_display_delays_only_its_own_records() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("slow fmt", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.log");
    let guard = common::expect_init(tachylog::builder().file(&path).init());
    let other = thread::Builder::new()
        .name("fast".into())
        .spawn(|| common::log_numbered("fast", 20_000))
        .unwrap();
    for i in 0..20 {
        tachylog::info!("slow caller {}", Slow(i));
        tachylog::info!("slow back end {}", SlowOnBackEnd(i));
    }
    other.join().unwrap();
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    common::assert_numbered(&lines, "fast", 20_000);
    for i in 0..20 {
        assert!(text.contains(&format!(": slow caller slow-{i} (")));
        assert!(text.contains(&format!(": slow back end slow-{i} (")));
    }
}
