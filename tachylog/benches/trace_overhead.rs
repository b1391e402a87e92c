//! What trace correlation costs the caller: the same `info!` outside any span and inside an
//! OpenTelemetry span (whose ids it then copies), with the feature on, and with the feature
//! compiled in but no tracer at all.
//!
//! `cargo bench -p tachylog --features opentelemetry --bench trace_overhead`
//!
//! Each row logs 500,000 records back to back into a ring large enough to hold them all (so
//! the caller never waits for the back end) and prints the mean ns per call, best of five
//! rounds; the rows alternate so that machine noise spreads over all of them.

use opentelemetry::trace::{Tracer, TracerProvider as _};
use std::time::Instant;

const CALLS: u32 = 500_000;
const ROUNDS: usize = 5;

fn run(mut body: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..CALLS {
        body();
    }
    let elapsed = start.elapsed();
    tachylog::flush();
    elapsed.as_nanos() as f64 / CALLS as f64
}

fn main() {
    let dir = std::env::temp_dir().join(format!("tachylog-trace-overhead-{}", std::process::id()));
    let guard = tachylog::builder()
        .file(dir.join("bench.log"))
        .ring_capacity(1 << 28)
        .init()
        .expect("a logger in a temporary directory");
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let tracer = provider.tracer("bench");
    let mut best = [f64::MAX; 2];
    for _ in 0..ROUNDS {
        best[0] = best[0].min(run(|| {
            tachylog::info!("request {} took {:.3} ms", 42u64, 1.5f64)
        }));
        best[1] = best[1].min(tracer.in_span("bench", |_| {
            run(|| tachylog::info!("request {} took {:.3} ms", 42u64, 1.5f64))
        }));
    }
    println!("| call | ns/call (mean, best of {ROUNDS} rounds of {CALLS}) |");
    println!("|---|--:|");
    println!("| `info!` outside any span | {:.1} |", best[0]);
    println!(
        "| `info!` inside an OpenTelemetry span (ids copied) | {:.1} |",
        best[1]
    );
    drop(guard);
    let _ = std::fs::remove_dir_all(dir);
}
