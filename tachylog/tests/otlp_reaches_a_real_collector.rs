//! `OtlpSink` against a real OpenTelemetry Collector (`otlp/collector.rs`: built by
//! `.ci/build-otelcol.sh`, found through `TACHYLOG_OTELCOL`; without it these tests fail, saying
//! how to build it). Each test starts its own collector on a free loopback port; the collector
//! forwards what it accepts to the test's receiver, which decodes it with `opentelemetry-proto`,
//! and its debug exporter prints every record it understood. Proved here: every record arrives
//! once with its typed attributes, trace ids and resource; over TLS with a CA made by the test,
//! with the CA given in code or through `SSL_CERT_FILE` (the system's roots) and the
//! environment variables; mutual TLS; through an `HTTPS_PROXY` and a SOCKS5 proxy; an untrusted certificate is not
//! retried and its records are counted lost; and a collector that goes down and comes back:
//! every record logged is either delivered once or counted lost and announced.
// Unix only: the collector is a Linux program (built with Go by `.ci/build-otelcol.sh`), and the
// proxies it goes through (microsocks) too.
#![cfg(all(feature = "otlp-tls", unix))]

#[path = "otlp/child.rs"]
mod child;
#[path = "otlp/collector.rs"]
mod collector;
mod common;
#[path = "otlp/receiver.rs"]
mod receiver;

use collector::{free_port, Collector, ConnectProxy, Pki, ServerTls, SocksProxy};
use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use receiver::{attributes, body, int, numbers, string, Receiver};
use std::collections::HashMap;
use std::time::Duration;
use tachylog::{OtlpBuilder, OtlpSink};

fn init(sink: OtlpSink) -> tachylog::Guard {
    common::expect_init(
        tachylog::builder()
            .sink(sink)
            .level(tachylog::Level::Trace)
            .init(),
    )
}

fn fast(builder: OtlpBuilder) -> OtlpBuilder {
    builder
        .batch_timeout(Duration::from_millis(50))
        .max_batch_records(100)
}

/// Logs `record from..to` with fields, and with a trace context whose ids are the record's
/// number plus one (zero ids are invalid).
fn log_records(from: u64, to: u64) {
    for i in from..to {
        let trace_id = format!("{:032x}", u128::from(i) + 1);
        let span_id = format!("{:016x}", i + 1);
        tachylog::info!(
            n = i, even = i % 2 == 0, ratio = i as f64 / 4.0, who = "ada",
            trace_id = trace_id.as_str(), span_id = span_id.as_str(), trace_flags = 1u8;
            "record {}", i
        );
    }
}

/// Every record of `records` numbered `n` has its fields as typed attributes, its trace
/// context, and the code and thread attributes.
fn assert_record_metadata(records: &[LogRecord]) {
    for record in records.iter().filter(|r| body(r).starts_with("record ")) {
        let n: u64 = body(record)["record ".len()..].parse().unwrap();
        let a = attributes(&record.attributes);
        assert_eq!(a["n"], V::IntValue(n as i64), "{record:?}");
        assert_eq!(a["even"], V::BoolValue(n % 2 == 0));
        assert_eq!(a["ratio"], V::DoubleValue(n as f64 / 4.0));
        assert_eq!(string(&a["who"]), "ada");
        assert_eq!(string(&a["code.namespace"]), module_path!());
        assert!(int(&a["code.lineno"]) > 0);
        assert!(
            !a.contains_key("trace_id")
                && !a.contains_key("span_id")
                && !a.contains_key("trace_flags")
        );
        assert_eq!(a.len(), 9, "{a:?}");
        assert_eq!(
            record.trace_id,
            (u128::from(n) + 1).to_be_bytes(),
            "record {n}"
        );
        assert_eq!(record.span_id, (n + 1).to_be_bytes(), "record {n}");
        assert_eq!(record.flags, 1);
        assert_eq!(
            (record.severity_number, record.severity_text.as_str()),
            (9, "INFO")
        );
    }
}

/// The resource attributes of every request `receiver` got.
fn resources(receiver: &Receiver) -> Vec<HashMap<String, V>> {
    let received = receiver.received.lock().unwrap();
    received
        .iter()
        .flat_map(|r| &r.request.resource_logs)
        .map(|rl| attributes(&rl.resource.as_ref().expect("a resource").attributes))
        .collect()
}

#[test]
fn every_record_reaches_the_collector_with_its_attributes_trace_ids_and_resource() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("collector metadata test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let collector = Collector::start(dir.path(), free_port(), receiver.addr, None);
    let sink = fast(OtlpSink::builder(format!(
        "http://127.0.0.1:{}",
        collector.port
    )))
    .service_name("collector-test")
    .resource_attribute("deployment.environment", "ci")
    .build()
    .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    log_records(0, 1000);
    tachylog::warn!(user = "bob"; "a warning");
    receiver.wait_until("1001 records", |r| receiver::delivered(r).len() >= 1001);
    drop(guard);

    let records = receiver.delivered();
    assert_eq!(records.len(), 1001);
    assert_eq!(numbers(&records), (0..1000).collect::<Vec<_>>());
    assert_record_metadata(&records);
    let warning = records.iter().find(|r| body(r) == "a warning").unwrap();
    assert_eq!(
        (warning.severity_number, warning.severity_text.as_str()),
        (13, "WARN")
    );
    assert!(warning.trace_id.is_empty() && warning.span_id.is_empty());
    assert_eq!(string(&attributes(&warning.attributes)["user"]), "bob");
    for resource in resources(&receiver) {
        assert_eq!(string(&resource["service.name"]), "collector-test");
        assert_eq!(string(&resource["deployment.environment"]), "ci");
        assert_eq!(string(&resource["telemetry.sdk.name"]), "tachylog");
        assert_eq!(int(&resource["process.pid"]), i64::from(std::process::id()));
    }
    assert_eq!(
        (stats.exported(), stats.lost(), stats.dropped()),
        (1001, 0, 0)
    );

    // The collector's own view, from its debug exporter.
    let output = collector.output();
    let shown = output
        .lines()
        .filter(|l| l.starts_with("LogRecord #"))
        .count();
    assert_eq!(
        shown,
        1001,
        "records the debug exporter printed:\n{}",
        tail(&output)
    );
    for line in [
        "Body: Str(record 999)",
        "Trace ID: 000000000000000000000000000003e8",
        "Span ID: 00000000000003e8",
        "Flags: 1",
        "-> service.name: Str(collector-test)",
        "-> n: Int(999)",
        "-> even: Bool(false)",
        "-> ratio: Double(249.75)",
    ] {
        assert!(
            output.contains(line),
            "the collector did not print {line:?}:\n{}",
            tail(&output)
        );
    }
}

fn tail(text: &str) -> &str {
    &text[text.len().saturating_sub(4000)..]
}

/// A collector with TLS, its certificate signed by a CA the test made.
fn tls_collector(
    dir: &std::path::Path,
    receiver: &Receiver,
    require_client: bool,
) -> (Pki, Collector) {
    let pki = Pki::make(dir);
    let tls = ServerTls {
        cert: pki.server_cert.clone(),
        key: pki.server_key.clone(),
        client_ca: require_client.then(|| pki.ca.clone()),
    };
    let collector = Collector::start(dir, free_port(), receiver.addr, Some(&tls));
    (pki, collector)
}

#[test]
fn a_collector_behind_tls_gets_every_record_when_its_ca_is_given() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("TLS test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let (pki, collector) = tls_collector(dir.path(), &receiver, false);
    let sink = fast(OtlpSink::builder(format!(
        "https://127.0.0.1:{}",
        collector.port
    )))
    .ca_certificate_pem(std::fs::read(&pki.ca).unwrap())
    .build()
    .unwrap();
    assert_eq!(
        sink.describe_target(),
        format!("otlp https://127.0.0.1:{}/v1/logs", collector.port)
    );
    let stats = sink.stats();
    let guard = init(sink);
    log_records(0, 300);
    receiver.wait_until("300 records", |r| receiver::delivered(r).len() >= 300);
    drop(guard);
    let records = receiver.delivered();
    assert_eq!(numbers(&records), (0..300).collect::<Vec<_>>());
    assert_record_metadata(&records);
    assert_eq!((stats.exported(), stats.lost()), (300, 0));
}

#[test]
fn an_untrusted_certificate_is_not_retried_and_its_records_are_counted_lost() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("untrusted TLS test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let (pki, collector) = tls_collector(dir.path(), &receiver, false);
    let sink = fast(OtlpSink::builder(format!(
        "https://127.0.0.1:{}",
        collector.port
    )))
    .ca_certificate_file(&pki.other_ca)
    .max_batch_records(10)
    .build()
    .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    log_records(0, 30);
    wait_until_lost(&stats, 30, Duration::from_secs(30));
    drop(guard);
    assert_eq!(receiver.count(), 0);
    assert_eq!((stats.exported(), stats.lost()), (0, 30));
    // One attempt per batch of 10: a certificate problem is final.
    assert_eq!(stats.requests(), 3);
}

#[test]
fn mutual_tls_delivers_with_the_client_certificate_and_loses_without() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("mTLS test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let (pki, collector) = tls_collector(dir.path(), &receiver, true);
    let url = format!("https://127.0.0.1:{}", collector.port);

    // Short attempts: one that stalls on a loaded host (CI compiles beside this test) is cut
    // after 3 s and tried again, instead of using up the time this test waits.
    let without = fast(OtlpSink::builder(&url))
        .ca_certificate_file(&pki.ca)
        .timeouts(Duration::from_secs(2), Duration::from_secs(3))
        .max_retry_time(Duration::from_secs(90))
        .build()
        .unwrap();
    let stats = without.stats();
    let guard = init(without);
    log_records(0, 50);
    // Refused for good, not retried for the minute and a half the budget allows.
    wait_until_lost(&stats, 50, Duration::from_secs(45));
    drop(guard);
    assert_eq!(
        (stats.exported(), stats.lost()),
        (0, 50),
        "the collector took records without a client certificate"
    );
    assert_eq!(receiver.count(), 0);

    let with = fast(OtlpSink::builder(&url))
        .ca_certificate_file(&pki.ca)
        .client_certificate_files(&pki.client_cert, &pki.client_key)
        .build()
        .unwrap();
    let stats = with.stats();
    let guard = init(with);
    log_records(50, 250);
    receiver.wait_until("200 records", |r| receiver::delivered(r).len() >= 200);
    drop(guard);
    assert_eq!(
        numbers(&receiver.delivered()),
        (50..250).collect::<Vec<_>>()
    );
    assert_eq!((stats.exported(), stats.lost()), (200, 0));
}

/// In the child: the sink built from the environment alone.
fn log_from_env(count: u64) {
    let sink = OtlpSink::from_env()
        .batch_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let stats = sink.stats();
    println!("target: {}", sink.describe_target());
    let guard = init(sink);
    log_records(0, count);
    drop(guard);
    println!(
        "exported {} lost {} dropped {}",
        stats.exported(),
        stats.lost(),
        stats.dropped()
    );
}

/// `https://` with the system's roots (`SSL_CERT_FILE` names the test's CA, as an operator
/// would add a CA to the system), and the settings from the environment variables:
/// `OTEL_EXPORTER_OTLP_ENDPOINT` gets `/v1/logs`, `OTEL_SERVICE_NAME` wins over the
/// `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_COMPRESSION=none`.
#[test]
fn system_roots_and_the_environment_variables_reach_a_tls_collector() {
    let scenario = "system_roots_and_the_environment_variables_reach_a_tls_collector";
    if child::is_child(scenario) {
        log_from_env(200);
        return;
    }
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let (pki, collector) = tls_collector(dir.path(), &receiver, false);
    let run = child::run_child(
        scenario,
        &[
            ("SSL_CERT_FILE", pki.ca.display().to_string()),
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("https://127.0.0.1:{}", collector.port),
            ),
            ("OTEL_SERVICE_NAME", "from-env".into()),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=overridden,deployment.environment=ci%20eu".into(),
            ),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none".into()),
        ],
    );
    assert!(run.status.success(), "{run}");
    assert!(
        run.stdout.contains(&format!(
            "target: otlp https://127.0.0.1:{}/v1/logs",
            collector.port
        )),
        "{run}"
    );
    assert!(
        run.stdout.contains("exported 200 lost 0 dropped 0"),
        "{run}"
    );
    let records = receiver.delivered();
    assert_eq!(numbers(&records), (0..200).collect::<Vec<_>>());
    assert_record_metadata(&records);
    for resource in resources(&receiver) {
        assert_eq!(string(&resource["service.name"]), "from-env");
        assert_eq!(string(&resource["deployment.environment"]), "ci eu");
    }
}

/// `HTTPS_PROXY` names a CONNECT proxy: the TLS connection to the collector goes through it.
#[test]
fn https_proxy_tunnels_to_the_collector() {
    let scenario = "https_proxy_tunnels_to_the_collector";
    if child::is_child(scenario) {
        log_from_env(200);
        return;
    }
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let (pki, collector) = tls_collector(dir.path(), &receiver, false);
    let proxy = ConnectProxy::start();
    let run = child::run_child(
        scenario,
        &[
            ("HTTPS_PROXY", format!("http://{}", proxy.addr)),
            (
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                format!("https://localhost:{}/v1/logs", collector.port),
            ),
            (
                "OTEL_EXPORTER_OTLP_CERTIFICATE",
                pki.ca.display().to_string(),
            ),
        ],
    );
    assert!(run.status.success(), "{run}");
    assert!(
        run.stdout.contains("exported 200 lost 0 dropped 0"),
        "{run}"
    );
    assert_eq!(numbers(&receiver.delivered()), (0..200).collect::<Vec<_>>());
    let tunnels = proxy.tunnels.lock().unwrap();
    assert!(!tunnels.is_empty(), "nothing went through the proxy");
    assert!(
        tunnels
            .iter()
            .all(|t| *t == format!("localhost:{}", collector.port)),
        "{tunnels:?}"
    );
}

#[test]
fn a_socks5_proxy_carries_the_records() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("SOCKS test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let collector = Collector::start(dir.path(), free_port(), receiver.addr, None);
    let proxy = SocksProxy::start();
    let sink = fast(OtlpSink::builder(format!(
        "http://127.0.0.1:{}",
        collector.port
    )))
    .proxy(format!("socks5://127.0.0.1:{}", proxy.port))
    .build()
    .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    log_records(0, 200);
    receiver.wait_until("200 records", |r| receiver::delivered(r).len() >= 200);
    // The exporter keeps its connection for the next batch, so the proxy still carries it.
    assert!(
        proxy.connection_sockets() >= 2,
        "the records did not go through the proxy ({} socket(s) besides its listener)",
        proxy.connection_sockets()
    );
    drop(guard);
    let records = receiver.delivered();
    assert_eq!(numbers(&records), (0..200).collect::<Vec<_>>());
    assert_record_metadata(&records);
    assert_eq!((stats.exported(), stats.lost()), (200, 0));
}

/// The WARN records the exporter sent about lost records, with their counts.
fn loss_notices(records: &[LogRecord]) -> Vec<u64> {
    records
        .iter()
        .filter(|r| body(r).contains(" records lost while otlp "))
        .map(|r| body(r).split(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// The collector stops (SIGTERM) for longer than the retry budget while the application keeps
/// logging, then starts again on the same port: every record logged is delivered exactly once
/// or counted lost, the losses are announced to the collector once it is back, and none of
/// what was logged before or after the outage is lost.
#[test]
fn a_collector_down_then_restarted_delivers_or_reports_every_record() {
    let _lock = common::logger_lock();
    let _dog = common::watchdog("collector restart test", Duration::from_secs(120));
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let mut collector = Collector::start(dir.path(), free_port(), receiver.addr, None);
    let sink = OtlpSink::builder(format!("http://127.0.0.1:{}", collector.port))
        .batch_timeout(Duration::from_millis(50))
        .max_batch_records(50)
        .max_retry_time(Duration::from_secs(1))
        .timeouts(Duration::from_millis(500), Duration::from_secs(5))
        .build()
        .unwrap();
    let stats = sink.stats();
    let guard = init(sink);
    let paced = |from: u64, to: u64| {
        for i in (from..to).step_by(10) {
            log_records(i, i + 10);
            // Pacing, not synchronisation: 200 records a second, before, during and after
            // the outage.
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    paced(0, 500);
    receiver.wait_until("the first 500", |r| receiver::delivered(r).len() >= 500);
    collector.stop();
    // 3 s of logging with the collector down: three times the retry budget.
    paced(500, 1100);
    collector.restart();
    paced(1100, 1500);
    receiver.wait_until("the last record", |r| {
        receiver::delivered(r)
            .iter()
            .any(|rec| body(rec) == "record 1499")
    });
    drop(guard);

    let records = receiver.delivered();
    let delivered = numbers(&records); // asserts none arrived twice
    let (lost, dropped) = (stats.lost(), stats.dropped());
    println!(
        "delivered {}, lost {lost}, dropped {dropped}, notices {:?}",
        delivered.len(),
        loss_notices(&records)
    );
    assert_eq!(
        delivered.len() as u64 + lost + dropped,
        1500,
        "delivered {} + lost {lost} + dropped {dropped} != 1500 logged",
        delivered.len()
    );
    assert!(
        lost > 0,
        "the outage outlasted the retry budget, yet nothing was lost"
    );
    assert!(
        delivered
            .iter()
            .filter(|n| (500..1100).contains(*n))
            .count()
            > 0,
        "nothing logged during the outage arrived"
    );
    assert!(
        (0..500)
            .chain(1100..1500)
            .all(|n| delivered.binary_search(&n).is_ok()),
        "lost outside the outage"
    );
    assert_eq!(
        loss_notices(&records).iter().sum::<u64>(),
        lost,
        "the losses announced to the collector"
    );
    assert_eq!(stats.exported(), delivered.len() as u64);
    assert_record_metadata(&records);
}

/// Polls until the sink has counted `n` records lost, failing after `limit`.
fn wait_until_lost(stats: &tachylog::OtlpStats, n: u64, limit: Duration) {
    assert!(
        common::poll_until(limit, || stats.lost() >= n),
        "lost {} of {n} after {limit:?} and {} request(s): retried?",
        stats.lost(),
        stats.requests()
    );
}
