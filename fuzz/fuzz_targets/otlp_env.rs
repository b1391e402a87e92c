//! The `OTEL_*` variables an `OtlpSink` builder reads (`sink/otlp/env.rs`): headers and resource
//! attributes (comma-separated, percent-encoded `key=value` lists), the endpoint, compression,
//! timeout and protocol. The input's lines are the variables' values, in the order of `VARS`;
//! a missing line unsets the variable. Only the builder is made: `build` would start an
//! exporter thread.

#![no_main]

use libfuzzer_sys::fuzz_target;

const VARS: [&str; 9] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_SERVICE_NAME",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
];

fuzz_target!(|input: &str| {
    // The process environment cannot hold NUL; the fuzzer runs on one thread, so setting
    // variables races with nothing.
    if input.contains('\0') {
        return;
    }
    let mut values = input.split('\n');
    for name in VARS {
        match values.next() {
            Some(value) => std::env::set_var(name, value),
            None => std::env::remove_var(name),
        }
    }
    drop(tachylog::OtlpSink::from_env());
    drop(tachylog::OtlpSink::builder("http://127.0.0.1:4318"));
});
