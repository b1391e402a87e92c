//! A failing destination never stops or blocks the logger: a real `ENOSPC` from `/dev/full`
//! is reported once on stderr with the path while the other sinks get every record; injected
//! `EIO` failures and short writes are counted and, once writes succeed again, a WARN line in
//! that sink says how many records were lost; a sink stalled for seconds never blocks callers
//! under `OnFull::Drop`, and every record is either written or counted as dropped.

mod common;

use std::time::Duration;
use tachylog::{FaultSink, FileSink};

const RECORDS: u64 = 20_000;

/// A real `ENOSPC`, in a child so its stderr can be read. Repeated: the report must come out
/// exactly once however the flushes fall.
// Linux only: `/dev/full`.
#[cfg(target_os = "linux")]
#[test]
fn dev_full_is_reported_once_and_other_sinks_get_everything() {
    if let Some(log) =
        common::child_role("dev_full_is_reported_once_and_other_sinks_get_everything")
    {
        let guard = common::expect_init(tachylog::builder().file("/dev/full").file(&log).init());
        for chunk in 0..10 {
            common::log_numbered(&format!("chunk-{chunk}"), RECORDS / 10);
            tachylog::flush();
        }
        drop(guard);
        return;
    }
    for _ in 0..3 {
        let child = common::run_child(
            "dev_full_is_reported_once_and_other_sinks_get_everything",
            Duration::from_secs(120),
        );
        assert!(child.status.success(), "{child}");
        let lines = common::parse_log(&child.log);
        for chunk in 0..10 {
            common::assert_numbered(&lines, &format!("chunk-{chunk}"), RECORDS / 10);
        }
        let reports: Vec<&str> = child
            .stderr
            .lines()
            .filter(|l| l.starts_with("tachylog:"))
            .collect();
        assert_eq!(reports.len(), 1, "expected one report on stderr\n{child}");
        assert!(
            reports[0].contains("/dev/full") && reports[0].contains("No space left on device"),
            "the report names neither the path nor the error: {:?}",
            reports[0]
        );
    }
}

fn fault_file(path: &std::path::Path) -> (FaultSink<FileSink>, tachylog::Faults) {
    FaultSink::new(FileSink::open(path).expect("open log file"))
}

/// The lines whose message is exactly `N records lost while <path> failed: <error>`.
fn loss_notices<'a>(lines: &[common::Line<'a>]) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|l| l.message.contains(" records lost while "))
        .map(|l| {
            assert_eq!(l.level, "WARN", "loss notice not at WARN: {l:?}");
            l.message
        })
        .collect()
}

#[test]
fn injected_eio_is_counted_exactly_and_announced_on_recovery() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("EIO test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eio.log");
    let (sink, faults) = fault_file(&path);
    let guard = common::expect_init(tachylog::builder().sink(sink).init());
    common::log_numbered("before", 1000);
    tachylog::flush();
    // An I/O error in the platform's own numbering.
    #[cfg(unix)]
    let code = libc::EIO;
    #[cfg(windows)]
    let code = 1117; // ERROR_IO_DEVICE
    faults.fail_next(250, code);
    for i in 0..1000u64 {
        tachylog::info!("during record {i}");
    }
    tachylog::flush();
    common::log_numbered("after", 1000);
    drop(guard);
    assert_eq!(faults.injected(), 250);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    common::assert_numbered(&lines, "before", 1000);
    common::assert_numbered(&lines, "after", 1000);
    let during: Vec<u64> = lines
        .iter()
        .filter_map(|l| l.message.strip_prefix("during record ")?.parse().ok())
        .collect();
    assert_eq!(
        during,
        (250..1000).collect::<Vec<u64>>(),
        "wrong records lost"
    );
    let expected = format!(
        "250 records lost while {} failed: {}",
        path.display(),
        std::io::Error::from_raw_os_error(code)
    );
    assert_eq!(loss_notices(&lines), vec![expected.as_str()]);
}

/// Short writes leave a torn fragment of each failed line in the file (what a real partial
/// `write(2)` would leave), but they are counted and the logger carries on.
#[test]
fn short_writes_are_counted_and_the_logger_carries_on() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("short-write test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.log");
    let (sink, faults) = fault_file(&path);
    let guard = common::expect_init(tachylog::builder().sink(sink).init());
    tachylog::flush();
    faults.short_writes(true);
    for i in 0..10u64 {
        tachylog::info!("torn record {i}");
    }
    tachylog::flush();
    faults.short_writes(false);
    for i in 0..100u64 {
        tachylog::info!("whole record {i}");
    }
    drop(guard);
    assert_eq!(faults.injected(), 10);
    let text = common::read_log(&path);
    for i in 1..100u64 {
        assert_eq!(
            text.matches(&format!(": whole record {i} (")).count(),
            1,
            "record {i} after recovery missing\n{}",
            common::tail(&text, 3000)
        );
    }
    assert!(
        text.contains(": 10 records lost while "),
        "no loss notice\n{}",
        common::tail(&text, 3000)
    );
}

/// The sink sleeps 2 s per write; under `OnFull::Drop` the caller's 50,000 calls return anyway
/// (with `Block` they would need hours: the watchdog would fire). Afterwards the lines written
/// plus the reported drops equal the records logged.
#[test]
fn a_stalled_sink_never_blocks_callers_under_drop() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("stalled-sink test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stall.log");
    let (sink, faults) = fault_file(&path);
    faults.delay(Duration::from_secs(2));
    let guard = common::expect_init(
        tachylog::builder()
            .sink(sink)
            .ring_capacity(4096)
            .on_full(tachylog::OnFull::Drop)
            .init(),
    );
    const N: u64 = 50_000;
    for i in 0..N {
        tachylog::info!("stalled record {i}");
    }
    faults.delay(Duration::ZERO);
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    let mut written = 0u64;
    let mut dropped = 0u64;
    for line in &lines {
        if line.message.starts_with("stalled record ") {
            written += 1;
        } else if let Some((n, rest)) = line.message.split_once(' ') {
            assert!(rest.starts_with("records dropped"), "unexpected {line:?}");
            dropped += n.parse::<u64>().unwrap();
        }
    }
    assert!(dropped > 0, "nothing dropped: the sink did not stall");
    assert_eq!(
        written + dropped,
        N,
        "{written} written + {dropped} dropped"
    );
}

/// Under the default `OnFull::Block` a stalled sink makes callers wait, not lose records, and
/// they go on as soon as it moves again: every record arrives.
#[test]
fn a_stalled_sink_under_block_delays_callers_but_loses_nothing() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("stalled-sink block test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stall-block.log");
    let (sink, faults) = fault_file(&path);
    faults.delay(Duration::from_millis(500));
    let guard = common::expect_init(tachylog::builder().sink(sink).ring_capacity(4096).init());
    let release = {
        let faults = faults.clone();
        std::thread::spawn(move || {
            // The stall lasts 2 s: the scenario, not a wait for anything.
            std::thread::sleep(Duration::from_secs(2));
            faults.delay(Duration::ZERO);
        })
    };
    common::log_numbered("blocked", RECORDS);
    release.join().unwrap();
    drop(guard);
    common::assert_numbered(
        &common::parse_log(&common::read_log(&path)),
        "blocked",
        RECORDS,
    );
}

/// A sink writing to a TCP socket whose peer goes away: `EPIPE`/`ECONNRESET` (not a SIGPIPE
/// death: Rust programs ignore SIGPIPE) is reported once and counted; the back end carries on
/// and the other sink gets every record.
#[test]
fn a_socket_peer_that_disappears() {
    struct Tcp(std::net::TcpStream, String);
    impl tachylog::Sink for Tcp {
        fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
            std::io::Write::write_all(&mut self.0, line.text)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
        fn describe(&self) -> String {
            self.1.clone()
        }
    }
    let _lock = common::logger_lock();
    let _dog = common::watchdog("socket test", Duration::from_secs(120));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let stream = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (peer, _) = listener.accept().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("beside-socket.log");
    let guard = common::expect_init(
        tachylog::builder()
            .sink(Tcp(
                stream,
                format!("tcp://{}", listener.local_addr().unwrap()),
            ))
            .file(&path)
            .init(),
    );
    common::log_numbered("connected", 100);
    tachylog::flush();
    drop(peer); // the peer disappears; later writes fail with EPIPE or ECONNRESET
    drop(listener);
    common::log_numbered("disconnected", RECORDS);
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    common::assert_numbered(&lines, "connected", 100);
    common::assert_numbered(&lines, "disconnected", RECORDS);
}

/// `max_block` bounds how long a call waits under `OnFull::Block`: with the sink stuck (5 s
/// per write) 200 calls return anyway (without the limit they would take minutes: the watchdog
/// would fire), and every record is written or counted as dropped.
#[test]
fn max_block_bounds_the_wait_on_a_stuck_sink() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("max_block test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("max-block.log");
    let (sink, faults) = fault_file(&path);
    faults.delay(Duration::from_secs(5));
    let guard = common::expect_init(
        tachylog::builder()
            .sink(sink)
            .ring_capacity(4096)
            .max_block(Duration::from_millis(20))
            .init(),
    );
    const N: u64 = 200;
    for i in 0..N {
        tachylog::info!("stuck record {i}");
    }
    faults.delay(Duration::ZERO);
    drop(guard);
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    let written = lines
        .iter()
        .filter(|l| l.message.starts_with("stuck record "))
        .count() as u64;
    let dropped: u64 = lines
        .iter()
        .filter_map(|l| l.message.split_once(" records dropped"))
        .map(|(n, _)| n.parse::<u64>().unwrap())
        .sum();
    assert!(
        dropped > 0,
        "nothing dropped: the calls did not hit the limit"
    );
    assert_eq!(
        written + dropped,
        N,
        "{written} written + {dropped} dropped"
    );
}
