//! Trace correlation: a record logged inside an OpenTelemetry span (a real `opentelemetry_sdk`
//! tracer) carries the span's `trace_id` and `span_id` in text, JSON and logfmt lines, whether
//! it comes from `tachylog::info!`, the `log` facade or, through `tracing-opentelemetry`, a
//! `tracing` event; a record outside any span carries none.
#![cfg(feature = "opentelemetry")]

use opentelemetry::trace::{TraceContextExt, Tracer, TracerProvider as _};

/// With the `otlp` feature, the records also go to an OTLP receiver on loopback, which checks
/// the `LogRecord`'s own `trace_id`, `span_id` and `flags`.
#[cfg(feature = "otlp")]
#[path = "otlp/receiver.rs"]
mod receiver;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn records_inside_a_span_carry_its_ids_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (text, json, logfmt) = (
        dir.path().join("a.log"),
        dir.path().join("a.jsonl"),
        dir.path().join("a.logfmt"),
    );
    #[cfg(feature = "otlp")]
    let collector = receiver::Receiver::start();
    let builder = tachylog::builder();
    #[cfg(feature = "otlp")]
    let builder = builder.sink(
        tachylog::OtlpSink::builder(collector.url())
            .batch_timeout(std::time::Duration::from_millis(50))
            .build()
            .unwrap(),
    );
    let guard = builder
        .file(&text)
        .file_with(
            &json,
            tachylog::SinkOptions::new().format(tachylog::Format::Json),
        )
        .file_with(
            &logfmt,
            tachylog::SinkOptions::new().format(tachylog::Format::Logfmt),
        )
        .init()
        .unwrap();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let tracer = provider.tracer("tachylog-test");

    let (trace_id, span_id) = tracer.in_span("checkout", |cx| {
        let span = cx.span();
        let ids = span.span_context();
        tachylog::info!(order = 7u32; "inside the span");
        log::warn!("from the log facade");
        (
            hex(&ids.trace_id().to_bytes()),
            hex(&ids.span_id().to_bytes()),
        )
    });
    tachylog::info!("outside any span");

    #[cfg(feature = "tracing-opentelemetry")]
    let (tracing_trace_id, tracing_span_id) = {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("tracing")))
            .with(tachylog::tracing_layer());
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("request");
            let ids = span.in_scope(|| {
                tracing::info!(user = 5, "tracing event in a span");
                let cx = span.context();
                let otel_span = cx.span();
                let ids = otel_span.span_context();
                (
                    hex(&ids.trace_id().to_bytes()),
                    hex(&ids.span_id().to_bytes()),
                )
            });
            tracing::info!("tracing event outside any span");
            ids
        })
    };
    tachylog::flush();
    drop(guard);

    #[cfg(feature = "otlp")]
    {
        let records = collector.delivered();
        let find = |marker: &str| {
            records
                .iter()
                .find(|r| receiver::body(r).contains(marker))
                .unwrap_or_else(|| panic!("no OTLP record with {marker}"))
                .clone()
        };
        for marker in ["inside the span", "from the log facade"] {
            let record = find(marker);
            assert_eq!(
                hex(&record.trace_id),
                trace_id,
                "the LogRecord's own trace_id"
            );
            assert_eq!(hex(&record.span_id), span_id);
            assert_eq!(record.flags & 0xff, 1);
            let attributes = receiver::attributes(&record.attributes);
            assert!(
                !attributes.contains_key("trace_id"),
                "ids are fields of the record, not attributes"
            );
        }
        let outside = find("outside any span");
        assert!(outside.trace_id.is_empty() && outside.span_id.is_empty());
    }

    let read = |path| std::fs::read_to_string(path).unwrap();
    let (text, json, logfmt) = (read(&text), read(&json), read(&logfmt));
    let line_with = |all: &str, marker: &str| {
        all.lines()
            .find(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("no line with {marker}:\n{all}"))
            .to_string()
    };

    for marker in ["inside the span", "from the log facade"] {
        let t = line_with(&text, marker);
        // After the message and its fields, before ` (file:line)`.
        assert!(
            t.contains(&format!(" trace_id={trace_id} span_id={span_id} (")),
            "{t}"
        );
        let j: serde_json::Value = serde_json::from_str(&line_with(&json, marker)).unwrap();
        assert_eq!(j["trace_id"], trace_id.as_str());
        assert_eq!(j["span_id"], span_id.as_str());
        assert_eq!(j["trace_flags"], 1, "sampled");
        let l = line_with(&logfmt, marker);
        assert!(
            l.contains(&format!(" trace_id={trace_id} span_id={span_id}")),
            "{l}"
        );
    }
    let outside = line_with(&text, "outside any span");
    assert!(!outside.contains(" trace_id="), "{outside}");
    let j: serde_json::Value = serde_json::from_str(&line_with(&json, "outside any span")).unwrap();
    assert!(j.get("trace_id").is_none());

    #[cfg(feature = "tracing-opentelemetry")]
    {
        let t = line_with(&text, "tracing event in a span");
        assert!(
            t.contains(&format!(
                " trace_id={tracing_trace_id} span_id={tracing_span_id}"
            )),
            "{t}"
        );
        let j: serde_json::Value =
            serde_json::from_str(&line_with(&json, "tracing event in a span")).unwrap();
        assert_eq!(j["trace_id"], tracing_trace_id.as_str());
        let t = line_with(&text, "tracing event outside any span");
        assert!(!t.contains(" trace_id="), "{t}");
    }
}
