//! A setting at the end of its type's range is a setting like any other: the logger takes it
//! in its range, and no thread of it panics. Each scenario is a child process that sets them
//! all at once, logs to a file, and must exit cleanly with every line in the file and no panic
//! on its stderr.
//!
//! `Duration::MAX` is how Rust code says "never". Adding it to the clock used to panic the
//! back end (`flush_interval`, the OTLP sink's `batch_timeout` and `shutdown_timeout`) and the
//! OTLP exporter (`timeouts`, `max_retry_time`): the file lost its lines, or the process said
//! "the back-end thread panicked; logging is disabled". The collector and the syslog server
//! are closed loopback ports, so their records are lost, counted and reported.
//!
//! `usize::MAX` bytes of ring, rounded up to a power of two, overflowed in the first log call,
//! whose panic the panic hook then logged: a panic within a panic, and the process aborted.

mod common;

use std::time::Duration;

const LINES: u64 = 10;

/// Runs `scenario` as a child and checks it logged every line, cleanly.
fn assert_every_line_and_no_panic(scenario: &str) {
    let child = common::run_child(scenario, Duration::from_secs(60));
    assert!(child.status.success(), "{child}");
    assert!(!child.stderr.contains("panicked"), "{child}");
    let lines = common::parse_log(&child.log);
    common::assert_numbered(&lines, scenario, LINES);
}

/// Logs the scenario's lines, flushes, drops the guard and exits.
fn log_and_exit(scenario: &str, builder: tachylog::Builder) -> ! {
    let guard = common::expect_init(builder.init());
    common::log_numbered(scenario, LINES);
    tachylog::flush();
    drop(guard);
    std::process::exit(0);
}

#[test]
fn every_duration_set_to_forever() {
    const NAME: &str = "every_duration_set_to_forever";
    if let Some(log) = common::child_role(NAME) {
        forever(NAME, &log);
    }
    assert_every_line_and_no_panic(NAME);
}

#[test]
fn every_size_set_to_its_largest() {
    const NAME: &str = "every_size_set_to_its_largest";
    if let Some(log) = common::child_role(NAME) {
        let builder = tachylog::builder()
            .file(log)
            .ring_capacity(usize::MAX)
            .max_oversize_bytes(usize::MAX)
            .max_message_bytes(usize::MAX);
        log_and_exit(NAME, builder);
    }
    assert_every_line_and_no_panic(NAME);
}

fn forever(scenario: &str, log: &std::path::Path) -> ! {
    let forever = Duration::MAX;
    #[allow(unused_mut)]
    let mut builder = tachylog::builder()
        .file(log)
        .flush_interval(forever)
        .max_block(forever);
    // Connections to a port nothing listens on are refused at once.
    #[cfg(any(feature = "otlp", feature = "syslog"))]
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    #[cfg(feature = "otlp")]
    {
        let otlp = tachylog::OtlpSink::builder(format!("http://{closed}"))
            .batch_timeout(forever)
            .timeouts(forever, forever)
            // The one finite budget: the exporter gives the batch up, and shutdown's wait
            // (forever) ends when it has.
            .max_retry_time(Duration::from_secs(1))
            .shutdown_timeout(forever)
            .build()
            .unwrap();
        builder = builder.sink(otlp);
    }
    #[cfg(feature = "syslog")]
    {
        let syslog = tachylog::SyslogSink::builder()
            .timeouts(forever, forever)
            .tcp(closed)
            .unwrap();
        builder = builder.sink(syslog);
    }
    log_and_exit(scenario, builder)
}
