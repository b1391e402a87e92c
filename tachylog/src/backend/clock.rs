//! Converts the front end's clock ticks into wall-clock time, on the back end only.
//!
//! The tick rate is measured against `CLOCK_MONOTONIC_RAW` (never slewed or stepped; on Windows
//! `QueryPerformanceCounter`) over an ever longer baseline, so it gets more precise the longer
//! the program runs; the offset to wall-clock time is re-read from the system's wall clock at
//! every resync (once a second), so NTP corrections and steps show up within a second.

use crate::frontend::clock::{self, Source};
use std::time::Duration;

#[derive(Debug, Clone, Copy)]
struct Sample {
    ticks: u64,
    raw_nanos: u64,
    wall_nanos: u64,
}

fn sample() -> Sample {
    // Bracket the two clock reads with ticks and keep the tightest of a few tries, so the tick
    // value matches the instant the clocks were read to within the bracket.
    let mut best: Option<(u64, Sample)> = None;
    for _ in 0..5 {
        let before = clock::now();
        let raw_nanos = raw_nanos();
        let wall_nanos = clock::realtime_nanos();
        let after = clock::now();
        let width = after.wrapping_sub(before);
        let s = Sample {
            ticks: before + width / 2,
            raw_nanos,
            wall_nanos,
        };
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, s));
        }
    }
    best.expect("at least one sample").1
}

#[cfg(unix)]
fn raw_nanos() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_MONOTONIC_RAW exists on Linux (and falls back below).
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    if rc != 0 {
        return clock::monotonic_nanos();
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `QueryPerformanceCounter` is a hardware count that nothing slews or steps: it is the raw
/// clock already.
#[cfg(windows)]
fn raw_nanos() -> u64 {
    clock::monotonic_nanos()
}

/// Tick-to-wall-time conversion. See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct WallClock {
    source: Source,
    first: Sample,
    base: Sample,
    nanos_per_tick: f64,
}

/// How often [`WallClock::resync`] should be called.
pub(crate) const RESYNC_INTERVAL: Duration = Duration::from_secs(1);

impl WallClock {
    /// Calibrates the clock. With the TSC this measures its rate for about 10 ms.
    pub(crate) fn calibrate() -> WallClock {
        let source = clock::select();
        let first = sample();
        let nanos_per_tick = match source {
            Source::Monotonic => 1.0,
            Source::Tsc => {
                std::thread::sleep(Duration::from_millis(10));
                let second = sample();
                rate(&first, &second)
            }
        };
        WallClock {
            source,
            first,
            base: first,
            nanos_per_tick,
        }
    }

    /// Refines the rate and re-reads the wall-clock offset.
    pub(crate) fn resync(&mut self) {
        let now = sample();
        if self.source == Source::Tsc && now.raw_nanos > self.first.raw_nanos + 50_000_000 {
            self.nanos_per_tick = rate(&self.first, &now);
        }
        self.base = now;
    }

    /// Wall-clock time of `ticks`, in nanoseconds since the Unix epoch.
    pub(crate) fn unix_nanos(&self, ticks: u64) -> i64 {
        let delta = ticks.wrapping_sub(self.base.ticks) as i64 as f64 * self.nanos_per_tick;
        self.base.wall_nanos as i64 + delta as i64
    }

    /// Ticks that correspond to `duration`.
    /// Clock ticks in one microsecond, at least 1.
    /// The conversion now, for another process to apply: ticks at the base, the wall time then
    /// in ns since the Unix epoch, and ns per tick.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn calibration(&self) -> (u64, i64, f64) {
        (
            self.base.ticks,
            self.base.wall_nanos as i64,
            self.nanos_per_tick,
        )
    }

    pub(crate) fn ticks_per_micro(&self) -> u64 {
        ((1_000.0 / self.nanos_per_tick) as u64).max(1)
    }

    pub(crate) fn ticks_for(&self, duration: Duration) -> u64 {
        (duration.as_nanos() as f64 / self.nanos_per_tick) as u64
    }
}

fn rate(a: &Sample, b: &Sample) -> f64 {
    let ticks = b.ticks.wrapping_sub(a.ticks);
    if ticks == 0 {
        return 1.0;
    }
    (b.raw_nanos - a.raw_nanos) as f64 / ticks as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converted_ticks_match_the_wall_clock() {
        let clock = WallClock::calibrate();
        let wall = clock::realtime_nanos() as i64;
        let converted = clock.unix_nanos(clock::now());
        // Within 5 ms: generous for a loaded machine, tight enough to catch a wrong rate or
        // offset (which would be off by seconds or more).
        assert!(
            (converted - wall).abs() < 5_000_000,
            "{converted} vs {wall}"
        );
    }

    #[test]
    fn ticks_for_inverts_the_rate() {
        let clock = WallClock::calibrate();
        let ticks = clock.ticks_for(Duration::from_millis(1));
        let start = clock::now();
        let nanos = clock.unix_nanos(start + ticks) - clock.unix_nanos(start);
        assert!((nanos - 1_000_000).abs() < 1_000, "{nanos}");
    }
}
