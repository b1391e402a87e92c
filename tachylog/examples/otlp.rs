//! Sends a few records to an OpenTelemetry Collector over OTLP/HTTP: where
//! `OTEL_EXPORTER_OTLP_ENDPOINT` says, else `http://localhost:4318`.
//! `cargo run -p tachylog --features otlp --example otlp`
//!
//! A collector that prints what it receives (the one the tests use; Go 1.24+, a few minutes
//! the first time):
//!
//! ```sh
//! bash .ci/build-otelcol.sh          # builds target/otelcol/otelcol
//! cat > /tmp/otelcol.yaml <<'YAML'
//! receivers:
//!   otlp:
//!     protocols:
//!       http:
//!         endpoint: 127.0.0.1:4318
//! exporters:
//!   debug:
//!     verbosity: detailed
//! service:
//!   pipelines:
//!     logs:
//!       receivers: [otlp]
//!       exporters: [debug]
//! YAML
//! target/otelcol/otelcol --config /tmp/otelcol.yaml &
//! cargo run -p tachylog --features otlp --example otlp   # "4 exported, 0 lost, 0 dropped"
//! kill %1
//! ```

use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sink = tachylog::OtlpSink::from_env() // OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME, ...
        .service_name("shop")
        .resource_attribute("deployment.environment", "dev")
        .batch_timeout(Duration::from_millis(200))
        .build()?;
    println!("sending to {}", sink.describe_target());
    let stats = sink.stats();
    let guard = tachylog::builder().sink(sink).init()?;
    for order in 1..=3u64 {
        tachylog::info!(
            order_id = order, amount = 19.99, paid = true,
            trace_id = "4bf92f3577b34da6a3ce929d0e0e4736", span_id = "00f067aa0ba902b7";
            "order {} paid", order
        );
    }
    tachylog::warn!(retries = 2u8; "payment provider slow");
    drop(guard); // sends what is queued, for up to 5 s
    println!(
        "{} exported, {} lost, {} dropped",
        stats.exported(),
        stats.lost(),
        stats.dropped()
    );
    Ok(())
}
