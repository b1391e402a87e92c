//! `limits`: what a rate-limited or sampled call costs the caller, next to the plain call.
//! `cargo run --release -p tachylog-bench --bin limits`.
//!
//! Each row times 200,000 calls one by one with the harness clock (`rdtsc` between `lfence`s
//! on x86_64, calibrated against `Instant`), 2 µs apart so the back end keeps up, after
//! 10,000 warm-up calls, and prints the median and p99 in ns with the empty timed body
//! subtracted. The rows:
//! - `plain`: `info!("static message with no arguments")`, the reference;
//! - `sample rejected`: `info!(sample = 1_000_000; ...)`, all but the first call skipped;
//! - `every rejected`: `info!(every = Duration::from_secs(3600); ...)`, likewise;
//! - `every + key rejected`: `info!(every = ..., key = peer; ...)`, the key a `&str`;
//! - `sample passed`: `info!(sample = 1; ...)`, every call logged with `suppressed = 0`.

#[path = "../clock.rs"]
#[allow(dead_code)]
mod clock;

use std::time::Duration;

const CALLS: usize = 200_000;

/// A row of the table: its name and the call it times.
type Row<'a> = (&'static str, Box<dyn FnMut() + 'a>);
const WARM_UP: usize = 10_000;
const GAP_NS: f64 = 2_000.0;

fn measure(calibration: clock::Calibration, overhead: f64, mut call: impl FnMut()) -> (f64, f64) {
    let gap_ticks = calibration.to_ticks(GAP_NS as u64);
    let mut samples = Vec::with_capacity(CALLS);
    for i in 0..WARM_UP + CALLS {
        let start = clock::stamp();
        call();
        let end = clock::stamp();
        if i >= WARM_UP {
            samples.push(end - start);
        }
        clock::spin_until(clock::now() + gap_ticks);
    }
    samples.sort_unstable();
    let ns = |q: f64| {
        calibration.to_ns(samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)])
            as f64
            - overhead
    };
    (ns(0.5).max(0.0), ns(0.99).max(0.0))
}

fn main() {
    let dir = std::env::temp_dir().join(format!("tachylog-limits-{}", std::process::id()));
    let guard = tachylog::builder()
        .file(dir.join("limits.log"))
        .init()
        .expect("a logger in a temporary directory");
    let calibration = clock::Calibration::measure(Duration::from_millis(50));
    let (overhead, _) = measure(calibration, 0.0, || {});
    let peer = "10.0.0.7";
    let rows: [Row; 5] = [
        (
            "plain",
            Box::new(|| tachylog::info!("static message with no arguments")),
        ),
        (
            "sample rejected",
            Box::new(|| tachylog::info!(sample = 1_000_000; "static message with no arguments")),
        ),
        (
            "every rejected",
            Box::new(
                || tachylog::info!(every = Duration::from_secs(3600); "static message with no arguments"),
            ),
        ),
        (
            "every + key rejected",
            Box::new(
                move || tachylog::info!(every = Duration::from_secs(3600), key = peer; "static message with no arguments"),
            ),
        ),
        (
            "sample passed",
            Box::new(|| tachylog::info!(sample = 1; "static message with no arguments")),
        ),
    ];
    println!("Per-call cost on the caller, ns (median / p99), {CALLS} calls each, harness overhead {overhead:.1} ns subtracted:\n");
    println!("| call | p50 | p99 |");
    println!("|---|--:|--:|");
    for (name, mut call) in rows {
        let (p50, p99) = measure(calibration, overhead, &mut *call);
        println!("| {name} | {p50:.1} | {p99:.1} |");
    }
    drop(guard);
    let _ = std::fs::remove_dir_all(dir);
}
