//! `latency` and `latency_static`: the cost of one log call as the calling thread sees it.
//!
//! Each call is timed alone, between two fenced rdtsc reads (see `clock`), and followed by
//! a ~2 µs busy-wait before the next, so a logger is measured in steady state rather than
//! in a burst that fills its queue. Arguments are built and passed through `black_box`
//! before the first stamp. 10,000 warm-up calls (logged, not timed) come first, so rings,
//! thread-locals and channels are already allocated. The harness overhead is measured
//! the same way around an empty body before the logger is installed; it is reported, not
//! subtracted. Quill's published harness instead times batches of 20 calls with 2 ms gaps,
//! so its numbers are not directly comparable with ours.

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
    call: impl Fn(&mut L, A),
) -> Result<Latency, BenchError> {
    let cal = Calibration::measure(Duration::from_millis(50));
    let gap = cal.to_ticks(p.gap_ns);

    let mut overhead = timed_loop(p.calls, gap, &make, |_| {});

    let mut logger = L::init(file)?;
    drop(timed_loop(p.warmup, gap, &make, |a| call(&mut logger, a)));
    let mut samples = timed_loop(p.calls, gap, &make, |a| call(&mut logger, a));
    let finish = Instant::now();
    logger.finish()?;
    let finish_s = finish.elapsed().as_secs_f64();

    let mean_ticks = samples.iter().map(|&t| t as f64).sum::<f64>() / samples.len().max(1) as f64;
    Ok(Latency {
        calls: p.calls,
        warmup: p.warmup,
        gap_ns: p.gap_ns,
        ticks_per_ns: cal.ticks_per_ns,
        clock_step_ns: cal.step_ticks as f64 / cal.ticks_per_ns,
        call_ns: Percentiles::from_samples(&mut samples).map(|t| cal.to_ns(t)),
        mean_ns: mean_ticks / cal.ticks_per_ns,
        overhead_ns: Percentiles::from_samples(&mut overhead).map(|t| cal.to_ns(t)),
        finish_s,
    })
}
