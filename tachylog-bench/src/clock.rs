//! The latency harness's clock: the CPU's time-stamp counter on x86_64, `Instant` elsewhere.
//!
//! `stamp()` fences with `lfence` on both sides of `rdtsc`, so the instructions of the timed
//! call can neither start before the first stamp nor still be in flight at the second; the
//! fences cost a few ns, which is what the "harness overhead" column measures (the same two
//! stamps around an empty body). Ticks are converted to ns with a ratio calibrated against
//! `Instant` at the start of every child process.

use std::time::{Duration, Instant};

/// A point on the harness clock, in ticks. Only differences are meaningful.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn stamp() -> u64 {
    use core::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: `lfence` needs SSE2 and `rdtsc` needs nothing; SSE2 is part of the x86_64
    // baseline, and neither instruction touches memory.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// A cheap read of the clock for spin-waiting; no fences, since nothing is being timed.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn now() -> u64 {
    // SAFETY: `rdtsc` is available on every x86_64 CPU and touches no memory.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// A point on the harness clock, in ns since the first call in this process.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn stamp() -> u64 {
    use std::sync::OnceLock;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A cheap read of the clock for spin-waiting.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn now() -> u64 {
    stamp()
}

/// Name of the clock source, for the report.
pub const SOURCE: &str = if cfg!(target_arch = "x86_64") {
    "rdtsc (lfence on both sides)"
} else {
    "std::time::Instant"
};

/// Converts harness ticks to nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Calibration {
    /// Clock ticks per nanosecond (1.0 for the `Instant` fallback).
    pub ticks_per_ns: f64,
    /// Typical difference between two consecutive distinct clock reads, in ticks. Some CPUs
    /// and hypervisors advance the TSC in coarse steps (e.g. 10 ns); no latency below this can
    /// be resolved, and every figure is quantised to it.
    pub step_ticks: u64,
}

impl Calibration {
    /// Measures ticks per ns against `Instant` by spinning for `span` (~50 ms is plenty: the
    /// error of the two `Instant` reads is tens of ns out of 50 ms).
    pub fn measure(span: Duration) -> Self {
        let step_ticks = typical_step();
        if !cfg!(target_arch = "x86_64") {
            return Calibration {
                ticks_per_ns: 1.0,
                step_ticks,
            };
        }
        let i0 = Instant::now();
        let t0 = stamp();
        while i0.elapsed() < span {
            std::hint::spin_loop();
        }
        let t1 = stamp();
        let ns = i0.elapsed().as_nanos() as f64;
        Calibration {
            ticks_per_ns: (t1 - t0) as f64 / ns,
            step_ticks,
        }
    }

    /// `ticks` expressed in ns, rounded to the nearest ns.
    pub fn to_ns(self, ticks: u64) -> u64 {
        (ticks as f64 / self.ticks_per_ns).round() as u64
    }

    /// `ns` expressed in ticks, rounded up so a wait is never shorter than asked.
    pub fn to_ticks(self, ns: u64) -> u64 {
        (ns as f64 * self.ticks_per_ns).ceil() as u64
    }
}

/// Typical increment of `now()`: the median over 1,001 tries, each starting right after the
/// clock changed, so a try measures a whole step (or one read, if that takes longer). The
/// median, not the minimum: some TSCs advance in coarse steps (26 ticks on the AMD EPYC VM
/// this was written on) with occasional 1-tick corrections that keep reads monotonic.
fn typical_step() -> u64 {
    let mut steps = [0u64; 1_001];
    for step in steps.iter_mut() {
        let edge = now();
        let mut a = now();
        while a == edge {
            a = now();
        }
        let mut b = now();
        while b == a {
            b = now();
        }
        *step = b - a;
    }
    steps.sort_unstable();
    steps[steps.len() / 2]
}

/// Busy-waits until the clock reaches `deadline` (in ticks). Spinning rather than sleeping
/// keeps the calling core awake, as in Quill's and our anchors' harnesses.
#[inline(always)]
pub fn spin_until(deadline: u64) {
    while now() < deadline {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_round_trips_and_is_plausible() {
        let cal = Calibration::measure(Duration::from_millis(20));
        // Any CPU this runs on counts between 0.1 and 10 ticks per ns.
        assert!(
            cal.ticks_per_ns > 0.1 && cal.ticks_per_ns < 10.0,
            "ticks/ns = {}",
            cal.ticks_per_ns
        );
        let ns = cal.to_ns(cal.to_ticks(2_000));
        assert!((1_999..=2_001).contains(&ns), "2000 ns -> {ns} ns");
        assert!(cal.step_ticks >= 1 && cal.to_ns(cal.step_ticks) < 1_000);
    }

    #[test]
    fn spin_until_waits_at_least_the_span() {
        let cal = Calibration::measure(Duration::from_millis(20));
        let start = Instant::now();
        spin_until(now() + cal.to_ticks(1_000_000));
        assert!(start.elapsed() >= Duration::from_micros(990));
    }
}
