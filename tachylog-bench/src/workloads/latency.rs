//! `latency*` and `batch20_t*`: the cost of one log call as the calling thread sees it.
//!
//! Each call is timed alone, between two fenced rdtsc reads (see `clock`), and followed by
//! a ~2 µs busy-wait before the next, so a logger is measured in steady state rather than
//! in a burst that fills its queue. Arguments are built and passed through `black_box`
//! before the first stamp. 10,000 warm-up calls (logged, not timed) come first, so rings,
//! thread-locals and channels are already allocated. The harness overhead is measured
//! the same way around an empty body before the logger is installed; it is reported, not
//! subtracted.
//!
//! `batch20_t1`/`batch20_t2` reproduce Quill's published method instead, so our figures can
//! be set beside the C++ loggers' tables: 20 calls timed together (the sample is the batch
//! time / 20), 2 ms of sleep between batches, from 1 or 2 producer threads at once.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use super::Scale;
use crate::clock::{self, Calibration};
use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::report::{group_digits, Latency};
use crate::stats::Percentiles;

/// How many calls, how spaced.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Timed calls.
    pub calls: u64,
    /// Untimed calls before them (they are logged, so they count as lines).
    pub warmup: u64,
    /// Busy-wait after each call, in ns.
    pub gap_ns: u64,
}

impl Params {
    /// The sizes for each scale.
    pub fn for_scale(scale: Scale) -> Self {
        match scale {
            Scale::Quick => Params {
                calls: 200_000,
                warmup: 10_000,
                gap_ns: 2_000,
            },
            Scale::Full => Params {
                calls: 1_000_000,
                warmup: 10_000,
                gap_ns: 2_000,
            },
            Scale::Smoke => Params {
                calls: 200,
                warmup: 20,
                gap_ns: 2_000,
            },
        }
    }

    /// One line for the report header.
    pub fn describe(self, call: &str) -> String {
        format!(
            "{call}: {} timed calls after {} warm-up calls, {} ns busy-wait after each, \
             clock {}",
            group_digits(self.calls),
            group_digits(self.warmup),
            self.gap_ns,
            clock::SOURCE
        )
    }
}

/// The `latency_str100` argument: exactly 100 bytes.
pub const PAYLOAD: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\
                           0123456789abcdefghijklmnopqrstuvwxyzAB";

/// The `latency_vec` argument, logged through `{:?}`.
pub fn items() -> Vec<String> {
    ["alpha", "beta", "gamma", "delta"]
        .map(String::from)
        .to_vec()
}

/// The `latency` workload's arguments for call `i`: a u64 id, a float, a path, all varying.
pub fn request_args(i: u64) -> (u64, f64, &'static str) {
    const PATHS: [&str; 4] = [
        "/index.html",
        "/api/v1/users/42",
        "/static/js/app.min.js",
        "/healthz",
    ];
    (
        1_000_000 + i,
        (i % 5_000) as f64 * 0.0137,
        PATHS[(i % 4) as usize],
    )
}

/// Times `n` calls of `body(make(i))`, each alone, with `gap` ticks of spinning after each.
/// Returns the samples in ticks.
#[inline(always)]
fn timed_loop<A>(n: u64, gap: u64, make: &impl Fn(u64) -> A, mut body: impl FnMut(A)) -> Vec<u64> {
    let mut samples = Vec::with_capacity(n as usize);
    for i in 0..n {
        let args = black_box(make(i));
        let t0 = clock::stamp();
        body(args);
        let t1 = clock::stamp();
        samples.push(t1.saturating_sub(t0));
        clock::spin_until(t1 + gap);
    }
    samples
}

/// Runs the workload in this (child) process: calibrate, measure the harness, install `L`,
/// warm up, measure, shut `L` down.
pub fn run<L: BenchLogger, A>(
    file: &Path,
    p: Params,
    make: impl Fn(u64) -> A,
    call: impl Fn(&L, A),
) -> Result<Latency, BenchError> {
    let cal = Calibration::measure(Duration::from_millis(50));
    let gap = cal.to_ticks(p.gap_ns);

    let mut overhead = timed_loop(p.calls, gap, &make, |_| {});

    let logger = L::init(file)?;
    drop(timed_loop(p.warmup, gap, &make, |a| call(&logger, a)));
    let mut samples = timed_loop(p.calls, gap, &make, |a| call(&logger, a));
    let finish = Instant::now();
    logger.finish()?;
    let finish_s = finish.elapsed().as_secs_f64();

    Ok(summarize(&cal, p, &mut samples, &mut overhead, finish_s))
}

/// Sorts the samples (ticks) and converts them into the report's figures.
fn summarize(
    cal: &Calibration,
    p: Params,
    samples: &mut [u64],
    overhead: &mut [u64],
    finish_s: f64,
) -> Latency {
    let mean_ticks = samples.iter().map(|&t| t as f64).sum::<f64>() / samples.len().max(1) as f64;
    let mut curve: Vec<(f64, u64)> = Vec::new();
    let call_ns = Percentiles::from_samples(samples).map(|t| cal.to_ns(t));
    for pct in CURVE_POINTS {
        curve.push((pct, cal.to_ns(crate::stats::nearest_rank(samples, pct))));
    }
    Latency {
        calls: p.calls,
        warmup: p.warmup,
        gap_ns: p.gap_ns,
        ticks_per_ns: cal.ticks_per_ns,
        clock_step_ns: cal.step_ticks as f64 / cal.ticks_per_ns,
        call_ns,
        mean_ns: mean_ticks / cal.ticks_per_ns,
        overhead_ns: Percentiles::from_samples(overhead).map(|t| cal.to_ns(t)),
        finish_s,
        curve,
    }
}

/// Percentiles kept for the SVG percentile curves.
const CURVE_POINTS: [f64; 12] = [
    1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0,
];

/// Quill's batch method: how many batches, of how many calls, how far apart.
#[derive(Clone, Copy, Debug)]
pub struct Batch {
    /// Timed batches per thread.
    pub batches: u64,
    /// Untimed batches per thread before them.
    pub warmup: u64,
    /// Calls per batch.
    pub size: u64,
    /// Sleep between batches.
    pub gap: Duration,
}

impl Batch {
    /// The sizes for each scale.
    pub fn for_scale(scale: Scale) -> Self {
        Batch {
            batches: match scale {
                Scale::Quick => 500,
                Scale::Full => 1_500,
                Scale::Smoke => 5,
            },
            warmup: if scale == Scale::Smoke { 1 } else { 50 },
            size: 20,
            gap: Duration::from_millis(2),
        }
    }

    /// Lines one thread logs.
    pub fn lines(self) -> u64 {
        (self.batches + self.warmup) * self.size
    }

    /// One line for the report header.
    pub fn describe(self, name: &str, threads: u8) -> String {
        format!(
            "{name}: Quill's method, {threads} thread(s) x {} batches of {} x              info!(\"request {{}} took {{:.3}} ms: {{}}\") timed per batch (sample = batch / {}), \
             {} ms sleep between batches, after {} warm-up batches",
            group_digits(self.batches),
            self.size,
            self.size,
            self.gap.as_millis(),
            self.warmup
        )
    }
}

/// Times `n` batches of `b.size` calls of `body(i)`, sleeping `b.gap` after each; returns
/// per-call ticks (batch time / size), one sample per batch.
#[inline(always)]
fn time_batches(n: u64, b: Batch, body: &impl Fn(u64)) -> Vec<u64> {
    let mut samples = Vec::with_capacity(n as usize);
    for k in 0..n {
        let t0 = clock::stamp();
        for j in 0..b.size {
            body(black_box(k * b.size + j));
        }
        let t1 = clock::stamp();
        samples.push(t1.saturating_sub(t0) / b.size);
        std::thread::sleep(b.gap);
    }
    samples
}

/// Times batches of `b.size` `request` calls from `threads` threads at once.
pub fn run_batches<L: BenchLogger>(
    file: &Path,
    b: Batch,
    threads: u8,
) -> Result<Latency, BenchError> {
    let cal = Calibration::measure(Duration::from_millis(50));
    let mut overhead = time_batches(b.batches.min(200), b, &|_| {});
    let logger = L::init(file)?;
    let call = |i: u64| {
        let (id, ms, path) = request_args(i);
        logger.request(id, ms, path);
    };
    let mut samples: Vec<u64> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    drop(time_batches(b.warmup, b, &call));
                    time_batches(b.batches, b, &call)
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let finish = Instant::now();
    logger.finish()?;
    let p = Params {
        calls: u64::from(threads) * b.batches * b.size,
        warmup: u64::from(threads) * b.warmup * b.size,
        gap_ns: b.gap.as_nanos() as u64,
    };
    Ok(summarize(
        &cal,
        p,
        &mut samples,
        &mut overhead,
        finish.elapsed().as_secs_f64(),
    ))
}
