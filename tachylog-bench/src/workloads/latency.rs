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
//! `batch20_t1`/`batch20_t4` rebuild Quill's latency harness instead, so our figures can be
//! set beside the C++ loggers' tables: Quill's record, 20 calls per batch (shared out among
//! the threads) timed together, the sample the batch time / calls, 2.0-2.2 ms of busy-wait
//! between batches, the callers pinned to CPUs 1, 2, .. modulo the CPU count.

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

/// Quill's latency harness (`benchmarks/hot_path_latency` in its repository), rebuilt: how
/// many batches, of how many calls, how far apart.
#[derive(Clone, Copy, Debug)]
pub struct Batch {
    /// Timed batches per thread.
    pub batches: u64,
    /// Untimed batches per thread before them, in place of Quill's `preallocate()`, which
    /// not every logger has.
    pub warmup: u64,
    /// Calls per batch, shared out among the threads as Quill does (20 / threads each).
    pub size: u64,
    /// Busy-wait between batches: uniform between these two bounds.
    pub gap: (Duration, Duration),
}

impl Batch {
    /// The sizes for each scale.
    pub fn for_scale(scale: Scale) -> Self {
        Batch {
            batches: match scale {
                Scale::Quick => 2_000,
                Scale::Full => 10_000,
                Scale::Smoke => 5,
            },
            warmup: if scale == Scale::Smoke { 1 } else { 50 },
            size: 20,
            gap: (Duration::from_micros(2_000), Duration::from_micros(2_200)),
        }
    }

    /// Calls per batch of each of `threads` threads.
    fn per_thread(self, threads: u8) -> u64 {
        (self.size / u64::from(threads)).max(1)
    }

    /// Lines one of `threads` threads logs.
    pub fn lines(self, threads: u8) -> u64 {
        (self.batches + self.warmup) * self.per_thread(threads)
    }

    /// One line for the report header.
    pub fn describe(self, name: &str, threads: u8) -> String {
        format!(
            "{name}: Quill's harness, {threads} thread(s) pinned to CPUs 1.. (mod the CPU count; \
             the main thread, and the logger's threads it starts, on CPU 0) \
             x {} batches of {} x info!(\"Logging iteration: {{}}, message: {{}}, double: {{}}\", \
             u64, u64, f64), a batch timed with rdtsc (sample = batch / calls), {}-{} µs of \
             busy-wait between batches, after {} untimed warm-up batches",
            group_digits(self.batches),
            self.per_thread(threads),
            self.gap.0.as_micros(),
            self.gap.1.as_micros(),
            self.warmup
        )
    }
}

/// Pins the calling thread to one CPU, as Quill's harness pins its callers (Linux; elsewhere
/// the thread stays where the scheduler puts it).
fn pin_to_cpu(cpu: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: `set` is a zeroed `cpu_set_t` on this stack frame, filled by `CPU_SET` with an
    // index below `CPU_SETSIZE`; `sched_setaffinity` reads `size_of` bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu % libc::CPU_SETSIZE as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

/// A small xorshift generator for the gaps: Quill draws them uniformly too, and a fixed
/// gap could fall into step with the back end's flush interval.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Times `n` batches of `per_batch` calls of `body(batch, i, batch * 1.1)`, busy-waiting a
/// drawn gap after each; returns per-call ticks (batch time / calls), one sample per batch.
#[inline(always)]
fn time_batches(
    n: u64,
    per_batch: u64,
    gap: (u64, u64),
    seed: u64,
    body: &impl Fn(u64, u64, f64),
) -> Vec<u64> {
    let mut samples = Vec::with_capacity(n as usize);
    let mut state = seed | 1;
    for k in 0..n {
        let d = k as f64 + 0.1 * k as f64;
        let t0 = clock::stamp();
        for j in 0..per_batch {
            body(black_box(k), black_box(j), black_box(d));
        }
        let t1 = clock::stamp();
        samples.push(t1.saturating_sub(t0) / per_batch);
        let wait = gap.0 + next_random(&mut state) % (gap.1 - gap.0 + 1);
        clock::spin_until(clock::stamp() + wait);
    }
    samples
}

/// Runs Quill's harness with `threads` caller threads, each pinned as Quill pins them.
pub fn run_batches<L: BenchLogger>(
    file: &Path,
    b: Batch,
    threads: u8,
) -> Result<Latency, BenchError> {
    let cal = Calibration::measure(Duration::from_millis(50));
    let gap = (
        cal.to_ticks(b.gap.0.as_nanos() as u64),
        cal.to_ticks(b.gap.1.as_nanos() as u64),
    );
    let per_thread = b.per_thread(threads);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    pin_to_cpu(0);
    let mut overhead = time_batches(b.batches.min(200), per_thread, gap, 1, &|_, _, _| {});
    let logger = L::init(file)?;
    let call = |k: u64, i: u64, d: f64| logger.quill(k, i, d);
    let mut samples: Vec<u64> = std::thread::scope(|s| {
        let workers: Vec<_> = (1..=u64::from(threads))
            .map(|n| {
                let call = &call;
                s.spawn(move || {
                    pin_to_cpu(n as usize % cpus);
                    drop(time_batches(b.warmup, per_thread, gap, n, call));
                    time_batches(
                        b.batches,
                        per_thread,
                        gap,
                        n.wrapping_mul(0x9e37_79b9),
                        call,
                    )
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
        calls: u64::from(threads) * b.batches * per_thread,
        warmup: u64::from(threads) * b.warmup * per_thread,
        gap_ns: b.gap.0.as_nanos() as u64,
    };
    Ok(summarize(
        &cal,
        p,
        &mut samples,
        &mut overhead,
        finish.elapsed().as_secs_f64(),
    ))
}
