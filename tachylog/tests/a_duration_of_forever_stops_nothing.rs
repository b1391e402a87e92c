//! `Duration::MAX` is how Rust code says "never": every builder that takes a duration accepts
//! it, and no thread of the logger panics on it. Adding it to the clock used to panic the
//! back end (`flush_interval`, the OTLP sink's `batch_timeout` and `shutdown_timeout`) and the
//! OTLP exporter (`timeouts`, `max_retry_time`): the file lost its lines, or the process said
//! "the back-end thread panicked; logging is disabled". The child process sets every such
//! duration at once; the collector and the syslog server are closed loopback ports, so their
//! records are lost, counted and reported, and the file gets every line.

mod common;

use std::time::Duration;

const LINES: u64 = 10;

#[test]
fn every_duration_set_to_forever() {
    const NAME: &str = "every_duration_set_to_forever";
    if let Some(log) = common::child_role(NAME) {
        child(&log);
    }
    let child = common::run_child(NAME, Duration::from_secs(60));
    assert!(child.status.success(), "{child}");
    assert!(!child.stderr.contains("panicked"), "{child}");
    let lines = common::parse_log(&child.log);
    common::assert_numbered(&lines, "forever", LINES);
}

fn child(log: &std::path::Path) -> ! {
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
    let guard = common::expect_init(builder.init());
    common::log_numbered("forever", LINES);
    tachylog::flush();
    drop(guard);
    std::process::exit(0);
}
