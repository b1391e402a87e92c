//! `OtlpSink` against an OTLP/HTTP receiver started by the test on loopback, which decodes
//! every request with the official protobuf definitions (`opentelemetry-proto`, `prost`):
//! every record arrives exactly once with its body, severity, times and attributes, with gzip
//! and without, in batches; 503 and 429 with `Retry-After` are retried no sooner than asked;
//! a 400 loses the batch, counted and announced; a collector that starts late still gets
//! everything; hostile messages arrive intact; a full queue drops records and counts each one;
//! what cannot be sent before the shutdown deadline is reported on stderr; `exit()` with the
//! logger running still delivers, and so does SIGTERM; the OpenTelemetry environment variables
//! set the endpoint, headers and compression; records that the sink's own HTTP stack logs are
//! not fed back to it. The receiver is in `otlp/receiver.rs`.
#![cfg(feature = "otlp")]

#[path = "otlp/child.rs"]
mod child;
mod common;
#[path = "otlp/receiver.rs"]
mod receiver;

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use prost::Message as _;
use receiver::{attributes, body, delivered, int, numbers, string, Receiver, Reply};
use std::collections::HashMap;
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tachylog::{OtlpBuilder, OtlpSink};

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn builder(receiver: &Receiver) -> OtlpBuilder {
    OtlpSink::builder(receiver.url())
        .service_name("otlp-test")
        .batch_timeout(Duration::from_millis(50))
}

fn init(sink: OtlpSink) -> tachylog::Guard {
    common::expect_init(
        tachylog::builder()
            .sink(sink)
            .level(tachylog::Level::Trace)
            .init(),
    )
}

/// The WARN records tachylog wrote about lost records, with their counts.
fn loss_notices(records: &[LogRecord]) -> Vec<u64> {
    records
        .iter()
        .filter(|r| body(r).contains(" records lost while otlp http://"))
        .map(|r| {
            assert_eq!(r.severity_text, "WARN");
            body(r).split(' ').next().unwrap().parse().unwrap()
        })
        .collect()
}

#[test]
fn every_record_arrives_once_with_its_metadata_in_batches() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("metadata test", Duration::from_secs(60));
    let receiver = Receiver::start();
    let sink = builder(&receiver)
        .header("authorization", "Bearer token-1")
        .resource_attribute("deployment.environment", "test")
        .max_batch_records(100)
        .build()
        .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    let before = unix_nanos();
    let logger_tid = thread::Builder::new()
        .name("otlp-logger".into())
        .spawn(|| {
            for i in 0..1000u64 {
                tachylog::info!("record {}", i);
            }
            tachylog::error!("an error");
            tachylog::warn!("a warning");
            tachylog::debug!("a debug");
            tachylog::trace!("a trace");
            // The kernel's own id where there is a call for it, as an oracle independent of
            // the library; elsewhere the id tachylog reads.
            #[cfg(target_os = "linux")]
            // SAFETY: gettid has no preconditions.
            let tid = i64::from(unsafe { libc::gettid() });
            #[cfg(not(target_os = "linux"))]
            let tid = tachylog::current_thread_id() as i64;
            tid
        })
        .unwrap()
        .join()
        .unwrap();
    receiver.wait_until("1004 records", |r| delivered(r).len() >= 1004);
    let after = unix_nanos();
    drop(guard);

    let received = receiver.received.lock().unwrap();
    let records = delivered(&received);
    assert_eq!(records.len(), 1004);
    assert_eq!(numbers(&records), (0..1000).collect::<Vec<_>>());
    assert!(
        received.len() < 100,
        "{} requests for 1004 records: not batched",
        received.len()
    );
    for r in received.iter() {
        assert_eq!(r.path, "/v1/logs");
        assert_eq!(r.headers["content-type"], "application/x-protobuf");
        assert_eq!(r.headers["content-encoding"], "gzip");
        assert_eq!(r.headers["authorization"], "Bearer token-1");
        assert_eq!(r.request.resource_logs.len(), 1);
        let rl = &r.request.resource_logs[0];
        let resource = attributes(&rl.resource.as_ref().expect("a resource").attributes);
        assert_eq!(string(&resource["service.name"]), "otlp-test");
        assert!(!string(&resource["host.name"]).is_empty());
        assert_eq!(int(&resource["process.pid"]), i64::from(std::process::id()));
        assert_eq!(string(&resource["telemetry.sdk.name"]), "tachylog");
        assert_eq!(string(&resource["telemetry.sdk.language"]), "rust");
        assert_eq!(
            string(&resource["telemetry.sdk.version"]),
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(string(&resource["deployment.environment"]), "test");
        assert_eq!(rl.scope_logs.len(), 1);
        assert_eq!(
            rl.scope_logs[0].scope.as_ref().expect("a scope").name,
            "tachylog"
        );
        assert!(
            rl.scope_logs[0].log_records.len() <= 100,
            "batch over max_batch_records"
        );
    }
    for record in &records {
        assert!(
            record.time_unix_nano + 1_000_000_000 >= before
                && record.time_unix_nano <= after + 1_000_000_000,
            "time {} not between {before} and {after}",
            record.time_unix_nano
        );
        assert_eq!(record.observed_time_unix_nano, record.time_unix_nano);
        let attrs = attributes(&record.attributes);
        assert_eq!(string(&attrs["code.namespace"]), module_path!());
        assert!(
            string(&attrs["code.filepath"]).ends_with("otlp_reaches_a_receiver.rs"),
            "{attrs:?}"
        );
        assert!(int(&attrs["code.lineno"]) > 0);
        assert_eq!(string(&attrs["thread.name"]), "otlp-logger");
        assert_eq!(int(&attrs["thread.id"]), logger_tid);
        assert_eq!(attrs.len(), 5, "{attrs:?}");
    }
    // Records from one thread keep their order, in time too.
    assert!(records
        .windows(2)
        .all(|w| w[0].time_unix_nano <= w[1].time_unix_nano));
    let by_body: HashMap<&str, &LogRecord> = records.iter().map(|r| (body(r), r)).collect();
    for (message, number, text) in [
        ("record 7", 9, "INFO"),
        ("an error", 17, "ERROR"),
        ("a warning", 13, "WARN"),
        ("a debug", 5, "DEBUG"),
        ("a trace", 1, "TRACE"),
    ] {
        assert_eq!(by_body[message].severity_number, number, "{message}");
        assert_eq!(by_body[message].severity_text, text, "{message}");
    }
    assert_eq!(
        (stats.exported(), stats.lost(), stats.dropped()),
        (1004, 0, 0)
    );
    assert_eq!(stats.requests(), received.len() as u64);
}

#[test]
fn gzip_off_sends_plain_protobuf() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("gzip off test", Duration::from_secs(60));
    let receiver = Receiver::start();
    let guard = init(builder(&receiver).gzip(false).build().unwrap());
    for i in 0..300u64 {
        tachylog::info!("record {}", i);
    }
    drop(guard);
    let received = receiver.received.lock().unwrap();
    assert!(received
        .iter()
        .all(|r| !r.headers.contains_key("content-encoding")));
    assert_eq!(numbers(&delivered(&received)), (0..300).collect::<Vec<_>>());
}

/// The collector answers the first request `status` with `Retry-After: 1`: the batch is sent
/// again no sooner than 1 s later and every record arrives once.
fn retry_after_is_honoured(status: u16) {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("retry test", Duration::from_secs(60));
    let receiver = Receiver::start();
    receiver.reply_next(Reply::retry_after(status, 1));
    let sink = builder(&receiver)
        .batch_timeout(Duration::from_secs(60))
        .max_batch_records(100)
        .build()
        .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    for i in 0..100u64 {
        tachylog::info!("record {}", i);
    }
    receiver.wait_until("the retried batch", |r| r.len() >= 2);
    drop(guard);
    let received = receiver.received.lock().unwrap();
    assert_eq!(received.len(), 2, "one refused request, one retry");
    assert_eq!(received[0].status, status);
    assert_eq!(
        received[0].request.resource_logs[0].scope_logs[0]
            .log_records
            .len(),
        100
    );
    let waited = received[1].at - received[0].at;
    assert!(
        waited >= Duration::from_secs(1),
        "retried after {waited:?}, before Retry-After: 1"
    );
    assert_eq!(numbers(&delivered(&received)), (0..100).collect::<Vec<_>>());
    assert_eq!(
        (stats.exported(), stats.lost(), stats.requests()),
        (100, 0, 2)
    );
}

#[test]
fn http_503_with_retry_after_is_retried_after_the_delay() {
    retry_after_is_honoured(503);
}

#[test]
fn http_429_with_retry_after_is_retried_after_the_delay() {
    retry_after_is_honoured(429);
}

/// A collector may answer anything: `Retry-After: 18446744073709551615` (2^64 - 1 seconds) is
/// past any retry budget, so that batch is given up at once, counted and announced, and the
/// exporter goes on with the next one (adding it to the clock panicked the exporter's thread).
#[test]
fn a_retry_after_of_two_to_the_sixty_four_seconds_gives_the_batch_up_and_goes_on() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("huge Retry-After test", Duration::from_secs(60));
    let receiver = Receiver::start();
    receiver.reply_next(Reply {
        status: 503,
        headers: vec![("Retry-After", u64::MAX.to_string())],
        body: b"busy".to_vec(),
    });
    let sink = builder(&receiver).build().unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    for i in 0..10u64 {
        tachylog::info!("refused {}", i);
    }
    common::wait_until("the batch to be given up", Duration::from_secs(30), || {
        stats.lost() >= 10
    });
    assert_eq!(stats.requests(), 1, "no retry after 2^64 - 1 seconds");
    for i in 0..10u64 {
        tachylog::info!("record {}", i);
    }
    receiver.wait_until("records and the notice", |r| delivered(r).len() >= 11);
    drop(guard);
    let records = receiver.delivered();
    assert_eq!(numbers(&records), (0..10).collect::<Vec<_>>());
    assert_eq!(loss_notices(&records), [10], "one notice of 10 lost");
    assert_eq!(
        (stats.exported(), stats.lost(), stats.dropped()),
        (10, 10, 0)
    );
}

#[test]
fn http_400_loses_the_batch_counted_and_announced() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("400 test", Duration::from_secs(60));
    let receiver = Receiver::start();
    receiver.reply_otherwise(Some(Reply::status(
        400,
        b"bad request: malformed\nlog data".to_vec(),
    )));
    let sink = builder(&receiver).build().unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    for i in 0..10u64 {
        tachylog::info!("refused {}", i);
    }
    common::wait_until(
        "the 400 to be counted lost",
        Duration::from_secs(30),
        || stats.lost() >= 10,
    );
    // Not retried: a 400 is final.
    assert_eq!(stats.requests(), receiver.count() as u64);
    receiver.reply_otherwise(None);
    for i in 0..10u64 {
        tachylog::info!("record {}", i);
    }
    receiver.wait_until("records and the notice", |r| delivered(r).len() >= 11);
    drop(guard);
    let records = receiver.delivered();
    assert_eq!(numbers(&records), (0..10).collect::<Vec<_>>());
    assert!(records.iter().all(|r| !body(r).starts_with("refused")));
    assert_eq!(loss_notices(&records), [10], "one notice of 10 lost");
    let notice = records
        .iter()
        .find(|r| body(r).contains("records lost"))
        .unwrap();
    assert!(
        body(notice).contains("HTTP 400") && body(notice).contains("bad request"),
        "{}",
        body(notice)
    );
    assert_eq!(
        (stats.exported(), stats.lost(), stats.dropped()),
        (10, 10, 0)
    );
}

#[test]
fn rejections_in_partial_success_are_counted_lost() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("partial success test", Duration::from_secs(60));
    let receiver = Receiver::start();
    let partial = ExportLogsServiceResponse {
        partial_success: Some(ExportLogsPartialSuccess {
            rejected_log_records: 3,
            error_message: "too old".into(),
        }),
    };
    receiver.reply_next(Reply::status(200, partial.encode_to_vec()));
    let sink = builder(&receiver)
        .batch_timeout(Duration::from_secs(60))
        .max_batch_records(10)
        .build()
        .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    for i in 0..20u64 {
        tachylog::info!("record {}", i);
    }
    receiver.wait_until("two batches", |r| r.len() >= 2);
    drop(guard);
    assert_eq!((stats.exported(), stats.lost()), (17, 3));
}

#[test]
fn a_collector_that_starts_late_gets_every_record() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("late collector test", Duration::from_secs(60));
    // Reserve a port, then free it: nothing listens there until the receiver starts.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sink = OtlpSink::builder(format!("http://127.0.0.1:{port}"))
        .batch_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    for i in 0..500u64 {
        tachylog::info!("record {}", i);
    }
    tachylog::flush();
    // Connection refused, retried with backoff.
    common::wait_until(
        "retries while the collector is down",
        Duration::from_secs(30),
        || stats.requests() >= 3,
    );
    let receiver = Receiver::start_on(TcpListener::bind(("127.0.0.1", port)).unwrap());
    receiver.wait_until("500 records", |r| delivered(r).len() >= 500);
    for i in 500..600u64 {
        tachylog::info!("record {}", i);
    }
    drop(guard);
    assert_eq!(numbers(&receiver.delivered()), (0..600).collect::<Vec<_>>());
    assert_eq!(
        (stats.exported(), stats.lost(), stats.dropped()),
        (600, 0, 0)
    );
}

#[test]
fn hostile_messages_arrive_intact() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("hostile input test", Duration::from_secs(60));
    let receiver = Receiver::start();
    let guard = init(builder(&receiver).build().unwrap());
    let huge = "x".repeat(1 << 20);
    let forged = "line one\nPOST /v1/logs HTTP/1.1\r\nContent-Length: 0\r\n\r\n\"quoted\" \\ \0 \u{1b}[31m é ✓ 🦀";
    tachylog::info!("{}", forged);
    tachylog::info!("bytes {}", tachylog::lossy(b"ab\xffcd\xe2\x82"));
    tachylog::warn!("{}", huge);
    tachylog::info!("{}", "");
    drop(guard);
    let records = receiver.delivered();
    let bodies: Vec<&str> = records.iter().map(body).collect();
    assert_eq!(
        bodies.len(),
        4,
        "{:?}",
        bodies.iter().map(|b| b.len()).collect::<Vec<_>>()
    );
    assert_eq!(bodies[0], forged);
    assert_eq!(bodies[1], "bytes ab\u{FFFD}cd\u{FFFD}");
    assert_eq!(bodies[2].len(), huge.len());
    assert!(bodies[2] == huge);
    assert_eq!(bodies[3], "");
}

#[test]
fn a_full_queue_drops_the_newest_records_and_counts_each() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("full queue test", Duration::from_secs(60));
    let receiver = Receiver::start();
    // Every request is refused for a second at a time until the test says otherwise.
    receiver.reply_otherwise(Some(Reply::retry_after(503, 1)));
    let sink = builder(&receiver)
        .max_batch_records(10)
        .queue_limit(1, 1 << 20)
        .build()
        .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    for i in 0..100u64 {
        tachylog::info!("record {}", i);
    }
    tachylog::flush();
    // At most one batch being retried, one queued, one being filled: 30 of 100 are kept (a
    // few more if the exporter took its first batch late).
    let dropped = stats.dropped();
    assert!((70..=80).contains(&dropped), "dropped {dropped}");
    receiver.reply_otherwise(None);
    receiver.wait_until("the kept records", |r| {
        delivered(r).len() as u64 + dropped == 100
    });
    // The logger announces its count once the sink takes records again.
    tachylog::info!("after");
    receiver.wait_until("the record after and the notice", |r| {
        let d = delivered(r);
        d.iter().any(|r| body(r) == "after") && !loss_notices(&d).is_empty()
    });
    drop(guard);
    let records = receiver.delivered();
    let kept = numbers(&records);
    assert_eq!(
        kept.len() as u64 + dropped,
        100,
        "kept {kept:?}, dropped {dropped}"
    );
    // The oldest are kept.
    assert!(kept[..20].iter().copied().eq(0..20), "{kept:?}");
    assert_eq!(loss_notices(&records), [dropped]);
    assert_eq!(stats.lost(), 0);
}

/// The child's collector never answers: the sink says so once while it retries; its shutdown
/// waits 500 ms, then reports.
#[test]
fn undelivered_records_are_reported_at_shutdown() {
    if common::child_role("undelivered_records_are_reported_at_shutdown").is_some() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let sink = OtlpSink::builder(format!("http://127.0.0.1:{port}"))
            .shutdown_timeout(Duration::from_millis(500))
            .build()
            .unwrap();
        let guard = init(sink);
        for i in 0..5u64 {
            tachylog::info!("record {}", i);
        }
        let started = Instant::now();
        drop(guard);
        println!("shutdown took {} ms", started.elapsed().as_millis());
        return;
    }
    let child = common::run_child(
        "undelivered_records_are_reported_at_shutdown",
        Duration::from_secs(60),
    );
    assert!(child.status.success(), "{child}");
    assert!(
        child
            .stderr
            .contains("5 record(s) could not be delivered before the logger stopped"),
        "{child}"
    );
    // The refused connections are announced while they are retried, once for the whole run.
    assert_eq!(
        child
            .stderr
            .matches("; retrying for up to 30s per batch")
            .count(),
        1,
        "{child}"
    );
    let took: u64 = child
        .stdout
        .lines()
        .find_map(|l| {
            l.split("shutdown took ")
                .nth(1)?
                .strip_suffix(" ms")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{child}"));
    // Bounds, not speed: no sooner than the deadline, and far sooner than the 30 s the sink
    // would spend retrying without it.
    assert!(
        (400..15_000).contains(&took),
        "shutdown took {took} ms for a 500 ms deadline"
    );
}

/// In the child: logs `record 0..50` to the receiver whose URL is in `url_file`, with a batch
/// timeout that never expires, then ends the process by `end`.
#[cfg(unix)]
fn log_fifty_then(url_file: &std::path::Path, end: impl FnOnce()) {
    let url = std::fs::read_to_string(url_file).unwrap();
    let sink = OtlpSink::builder(url.trim())
        .batch_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let _guard = init(sink);
    for i in 0..50u64 {
        tachylog::info!("record {}", i);
    }
    end();
}

/// In the parent: runs `scenario` against a fresh receiver, checks how it ended with
/// `check_status`, and that every record arrived exactly once.
#[cfg(unix)]
fn run_fifty(scenario: &str, check_status: impl FnOnce(&common::ChildRun)) {
    let _lock = common::logger_lock();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("url");
    std::fs::write(&url_file, receiver.url()).unwrap();
    let child = common::run_child_with_log(scenario, &url_file, Duration::from_secs(60));
    check_status(&child);
    assert_eq!(
        numbers(&receiver.delivered()),
        (0..50).collect::<Vec<_>>(),
        "{child}"
    );
}

/// `std::process::exit` with the logger running: the exit hook sends the batch being filled
/// (not yet due) and everything queued before the process ends.
// Unix only: `std::process::exit` is `ExitProcess` on Windows, which ends every other thread (the back
// end's too) and runs no atexit hook, so what is still queued is lost there.
#[cfg(unix)]
#[test]
fn process_exit_delivers_what_is_batched() {
    let scenario = "process_exit_delivers_what_is_batched";
    if let Some(url_file) = common::child_role(scenario) {
        log_fifty_then(&url_file, || std::process::exit(0));
    }
    run_fifty(scenario, |child| assert!(child.status.success(), "{child}"));
}

/// SIGTERM with the logger running: after the logger's drain, the batch being filled and the
/// queue are sent before the process dies of the signal.
// Unix only: SIGTERM and its handler.
#[cfg(unix)]
#[test]
fn sigterm_delivers_what_is_batched_then_dies() {
    use std::os::unix::process::ExitStatusExt;
    let scenario = "sigterm_delivers_what_is_batched_then_dies";
    if let Some(url_file) = common::child_role(scenario) {
        log_fifty_then(&url_file, || {
            // SAFETY: sending a signal to our own process.
            unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
            common::await_fatal_signal(Duration::from_secs(30));
        });
    }
    run_fifty(scenario, |child| {
        assert_eq!(child.status.signal(), Some(libc::SIGTERM), "{child}")
    });
}

/// Structured fields become typed attributes after the code and thread ones: integers, doubles,
/// booleans and strings as such, integers beyond `i64` as exact decimal text, `None` as an
/// empty value.
#[test]
fn structured_fields_arrive_as_typed_attributes() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("fields test", Duration::from_secs(60));
    let receiver = Receiver::start();
    let guard = init(builder(&receiver).build().unwrap());
    let retries: Option<u8> = None;
    tachylog::info!(
        user_id = 42u64, delta = -3i32, ratio = 0.5, ok = true, path = "/a b",
        big = u64::MAX, retries, elapsed = ?std::time::Duration::from_millis(5);
        "with fields"
    );
    log::warn!(user = 7, admin = false; "log key-values");
    drop(guard);
    let received = receiver.received.lock().unwrap();
    let records = delivered(&received);
    let typed = |body_text: &str| -> HashMap<String, Option<any_value::Value>> {
        let record = records
            .iter()
            .find(|r| body(r) == body_text)
            .unwrap_or_else(|| panic!("{body_text:?} did not arrive"));
        record
            .attributes
            .iter()
            .map(|kv| (kv.key.clone(), kv.value.clone().and_then(|v| v.value)))
            .collect()
    };
    use any_value::Value as V;
    let a = typed("with fields");
    assert_eq!(a["user_id"], Some(V::IntValue(42)));
    assert_eq!(a["delta"], Some(V::IntValue(-3)));
    assert_eq!(a["ratio"], Some(V::DoubleValue(0.5)));
    assert_eq!(a["ok"], Some(V::BoolValue(true)));
    assert_eq!(a["path"], Some(V::StringValue("/a b".into())));
    assert_eq!(a["big"], Some(V::StringValue(u64::MAX.to_string())));
    assert_eq!(a["retries"], None, "None is an empty AnyValue");
    assert_eq!(a["elapsed"], Some(V::StringValue("5ms".into())));
    assert_eq!(
        a["code.namespace"],
        Some(V::StringValue(module_path!().into())),
        "the code attributes stay"
    );
    let b = typed("log key-values");
    assert_eq!(b["user"], Some(V::IntValue(7)));
    assert_eq!(b["admin"], Some(V::BoolValue(false)));
}

/// A variable that is not UTF-8 is ignored with a warning that names it, as an unusable value
/// is, not read as unset without a word.
#[cfg(unix)]
#[test]
fn a_variable_that_is_not_utf8_is_ignored_with_a_warning() {
    use std::os::unix::ffi::OsStrExt;
    let scenario = "a_variable_that_is_not_utf8_is_ignored_with_a_warning";
    if child::is_child(scenario) {
        let sink = OtlpSink::from_env().build().unwrap();
        println!("target: {}", sink.describe_target());
        return;
    }
    let endpoint = std::ffi::OsStr::from_bytes(b"http://collector.caf\xe9:4318/logs");
    let run = child::run_child(scenario, &[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", endpoint)]);
    assert!(run.status.success(), "{run}");
    assert!(
        run.stderr
            .contains("ignoring OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=\"http://collector.caf\\xE9")
            && run.stderr.contains("not valid UTF-8"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("target: otlp http://localhost:4318/v1/logs"),
        "{run}"
    );
}

/// `OtlpSink::from_env` in a child with the OpenTelemetry variables set: the logs endpoint is
/// used as is (no `/v1/logs` appended), the logs headers replace the generic ones and their
/// values are percent-decoded, compression is off, the timeout parses; an unusable protocol or
/// header is ignored with a warning.
#[test]
fn the_environment_variables_set_endpoint_headers_and_compression() {
    let scenario = "the_environment_variables_set_endpoint_headers_and_compression";
    if child::is_child(scenario) {
        let sink = OtlpSink::from_env()
            .batch_timeout(Duration::from_millis(50))
            .build()
            .unwrap();
        println!("target: {}", sink.describe_target());
        let guard = init(sink);
        for i in 0..20u64 {
            tachylog::info!("record {}", i);
        }
        drop(guard);
        return;
    }
    let _lock = common::logger_lock();
    let receiver = Receiver::start();
    let run = child::run_child(
        scenario,
        &[
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://127.0.0.1:9/generic".to_string(),
            ),
            (
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                format!("{}/custom/logs", receiver.url()),
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20generic".into(),
            ),
            (
                "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
                "authorization=Bearer%20logs%3D%3D,x-tenant=shop,content-type=text%2Fplain".into(),
            ),
            ("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "none".into()),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "3000".into()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".into()),
        ],
    );
    assert!(run.status.success(), "{run}");
    assert!(
        run.stdout
            .contains(&format!("target: otlp {}/custom/logs", receiver.url())),
        "{run}"
    );
    assert!(
        run.stderr.contains(
            "ignoring OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\": tachylog sends http/protobuf only"
        ),
        "{run}"
    );
    assert!(
        run.stderr.contains("ignoring the header \"content-type\""),
        "{run}"
    );
    let received = receiver.received.lock().unwrap();
    assert_eq!(numbers(&delivered(&received)), (0..20).collect::<Vec<_>>());
    for r in received.iter() {
        assert_eq!(r.path, "/custom/logs");
        assert_eq!(r.headers["authorization"], "Bearer logs==");
        assert_eq!(r.headers["x-tenant"], "shop");
        assert_eq!(r.headers["content-type"], "application/x-protobuf");
        assert!(!r.headers.contains_key("content-encoding"));
    }
}

/// `ureq` and `rustls` log through the `log` crate, which tachylog serves: at TRACE, every
/// request would log records that the sink would send, which would log more. What the exporter's
/// thread logs is dropped; the same crates used by the application still log.
#[test]
fn the_exporters_own_logs_are_not_sent_back() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("feedback test", Duration::from_secs(60));
    let receiver = Receiver::start();
    let guard = init(builder(&receiver).build().unwrap());
    for i in 0..200u64 {
        tachylog::info!("record {}", i);
    }
    log::debug!(target: "ureq::pool", "the application's own ureq");
    receiver.wait_until("200 records", |r| delivered(r).len() >= 201);
    // Each request made ureq log. Once a record logged after them has arrived, so has
    // whatever of that was queued before it; what came later is sent by the guard's drop.
    tachylog::info!("logged after the requests");
    receiver.wait_until("the record logged after the requests", |r| {
        delivered(r)
            .iter()
            .any(|record| body(record) == "logged after the requests")
    });
    drop(guard);
    let records = receiver.delivered();
    assert_eq!(
        records.len(),
        202,
        "{:?}",
        records
            .iter()
            .map(body)
            .filter(|b| !b.starts_with("record "))
            .collect::<Vec<_>>()
    );
}
