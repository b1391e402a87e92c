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
    /// `nanos_per_tick` in fixed point, `RATE_BITS` fractional bits: every record's ticks are
    /// converted, and an integer multiply costs the back end fewer cycles than the float
    /// conversions and saturation checks of `ticks as f64 * rate as i64`.
    fixed_rate: u64,
}

/// Fractional bits of [`WallClock`]'s fixed-point rate: rounded, the rate is off by at most
/// 2^-45 ns per tick, a fifth of a nanosecond over five minutes of a 24 GHz counter (the base
/// moves every second), and any rate below 2^20 ns per tick fits.
const RATE_BITS: u32 = 44;

/// `nanos_per_tick` as a fixed-point rate, saturated at what 64 bits hold.
fn fixed_rate(nanos_per_tick: f64) -> u64 {
    (nanos_per_tick * (1u64 << RATE_BITS) as f64).round() as u64
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
            fixed_rate: fixed_rate(nanos_per_tick),
        }
    }

    /// Refines the rate and re-reads the wall-clock offset.
    pub(crate) fn resync(&mut self) {
        let now = sample();
        if self.source == Source::Tsc && now.raw_nanos > self.first.raw_nanos + 50_000_000 {
            self.nanos_per_tick = rate(&self.first, &now);
            self.fixed_rate = fixed_rate(self.nanos_per_tick);
        }
        self.base = now;
    }

    /// Wall-clock time of `ticks`, in nanoseconds since the Unix epoch.
    pub(crate) fn unix_nanos(&self, ticks: u64) -> i64 {
        let ticks = i128::from(ticks.wrapping_sub(self.base.ticks) as i64);
        let half = 1 << (RATE_BITS - 1);
        let delta = (ticks.wrapping_mul(i128::from(self.fixed_rate)) + half) >> RATE_BITS;
        (self.base.wall_nanos as i64).wrapping_add(delta as i64)
    }

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

    /// Clock ticks in one microsecond, at least 1.
    pub(crate) fn ticks_per_micro(&self) -> u64 {
        ((1_000.0 / self.nanos_per_tick) as u64).max(1)
    }

    /// Ticks that correspond to `duration`.
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
    fn the_fixed_point_rate_converts_as_the_float_rate_does() {
        let mut clock = WallClock::calibrate();
        for nanos_per_tick in [
            1.0,
            0.384_615_384_6,
            0.333_333_333_3,
            1.0 / 24.0,
            41.666_666_7,
        ] {
            clock.nanos_per_tick = nanos_per_tick;
            clock.fixed_rate = fixed_rate(nanos_per_tick);
            // Ticks around the base, either side, up to five minutes' worth.
            for nanos in [
                0i64,
                1,
                -1,
                999,
                -1_000_000,
                1_000_000_007,
                -60_000_000_000,
                300e9 as i64,
            ] {
                let ticks_away = (nanos as f64 / nanos_per_tick) as i64;
                let ticks = clock.base.ticks.wrapping_add(ticks_away as u64);
                let float =
                    clock.base.wall_nanos as i64 + (ticks_away as f64 * nanos_per_tick) as i64;
                let fixed = clock.unix_nanos(ticks);
                assert!(
                    (fixed - float).abs() <= 1,
                    "{nanos_per_tick} ns/tick, {ticks_away} ticks: {fixed} vs {float}"
                );
            }
        }
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
