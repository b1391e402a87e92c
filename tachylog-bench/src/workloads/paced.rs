//! `paced_1k`, `paced_10k`, `paced_50k`: what a logger costs at the rates servers log at, not
//! at the peak. The child installs the logger, then logs an access-log-like record in a burst
//! every millisecond (rate / 1,000 records each) for 3 s, then finishes the logger. Over that
//! window, the finish included, it measures the process's CPU time (user + system, every
//! thread, `getrusage`), its context switches and the wall time.
//!
//! The schedule is absolute (`clock_nanosleep` to `start + k ms`): a late burst does not push
//! the later ones back, so every logger gets the same number of bursts in the same window, and
//! a logger that blocks its caller shows as late bursts rather than as a lower rate. `nolog`
//! runs the same loop and logs nothing; the report subtracts its figures, so what remains is
//! what the logger added: its calls, its back end's work and its wake-ups.

use std::path::Path;
use std::time::Instant;

use super::Scale;
use crate::error::BenchError;
use crate::loggers::{BackendStats, BenchLogger};
use crate::machine::Usage;
use crate::report::PacedRun;

/// The rates, records per second.
pub const RATES: [u32; 3] = [1_000, 10_000, 50_000];

/// Bursts per second: one a millisecond.
const TICKS_PER_S: u64 = 1_000;

/// Bursts per run: 3 s (20 ms in the smoke test).
pub fn ticks(scale: Scale) -> u64 {
    match scale {
        Scale::Smoke => 20,
        Scale::Quick | Scale::Full => 3_000,
    }
}

/// Records per burst at `rate`.
pub fn burst(rate: u32) -> u64 {
    u64::from(rate) / TICKS_PER_S
}

/// Records per run.
pub fn records(rate: u32, scale: Scale) -> u64 {
    ticks(scale) * burst(rate)
}

/// The arguments of record `i`: status, body bytes and milliseconds, repeating every 1,000
/// records so that the probe line recurs at a known count.
pub fn args(i: u64) -> (u16, u64, f64) {
    let k = i % 1_000;
    (200, 512 + k * 7, k as f64 * 0.0137)
}

/// Record 1 as std renders it, and how many of `records` records render the same.
pub fn probe(records: u64) -> (String, u64) {
    let (status, bytes, ms) = args(1);
    let line = format!("GET /index.html {status} {bytes} bytes in {ms:.3} ms");
    let count = records / 1_000 + u64::from(records % 1_000 > 1);
    (line, count)
}

/// One line for the report header.
pub fn describe(name: &str, rate: u32, scale: Scale) -> String {
    format!(
        "{name}: {rate} records/s, a burst of {} x info!(\"GET /index.html {{}} {{}} bytes in \
         {{:.3}} ms\", u16, u64, f64) every ms for {} ms on an absolute schedule, then the \
         logger's finish; process CPU (user+sys, getrusage) and context switches over the \
         window, finish included, `nolog`'s subtracted",
        burst(rate),
        ticks(scale)
    )
}

/// Runs the workload in this (child) process.
pub fn run<L: BenchLogger>(file: &Path, rate: u32, scale: Scale) -> Result<PacedRun, BenchError> {
    let ticks = ticks(scale);
    let burst = burst(rate);
    let logger = L::init(file)?;
    let stats_before = logger.backend_stats();
    let usage_before = Usage::process();
    let t0 = Instant::now();
    let schedule = Schedule::start();
    let mut late_bursts = 0;
    let mut i = 0;
    for tick in 0..ticks {
        late_bursts += u64::from(schedule.wait_for(tick));
        for _ in 0..burst {
            let (status, bytes, ms) = args(i);
            logger.response(status, bytes, ms);
            i += 1;
        }
    }
    // The window ends a period after the last burst, so every burst has its full millisecond.
    schedule.wait_for(ticks);
    let stats_after = logger.backend_stats();
    logger.finish()?;
    let used = Usage::process().since(usage_before);
    let wall_s = t0.elapsed().as_secs_f64();
    let backend = stats_after.map(|after| since(after, stats_before));
    Ok(PacedRun {
        rate,
        records: i,
        window_s: ticks as f64 / TICKS_PER_S as f64,
        wall_s,
        cpu_s: used.cpu_s,
        voluntary_switches: used.voluntary_switches,
        involuntary_switches: used.involuntary_switches,
        late_bursts,
        backend_wakeups: backend.map(|b| b.wakeups),
        backend_cpu_s: backend.and_then(|b| b.cpu_s),
    })
}

/// The back end's work between `before` (if read) and `after`.
fn since(after: BackendStats, before: Option<BackendStats>) -> BackendStats {
    let Some(before) = before else {
        return after;
    };
    BackendStats {
        wakeups: after.wakeups.saturating_sub(before.wakeups),
        cpu_s: after.cpu_s.map(|a| a - before.cpu_s.unwrap_or(0.0)),
    }
}

/// Ticks one millisecond apart from a fixed start, on the monotonic clock.
struct Schedule {
    start: libc::timespec,
}

impl Schedule {
    fn start() -> Schedule {
        Schedule {
            start: monotonic_now(),
        }
    }

    /// Sleeps until tick `k` (at once if it has passed); returns whether it was more than one
    /// period late, i.e. the previous burst overran its millisecond.
    fn wait_for(&self, k: u64) -> bool {
        let deadline = add_ns(self.start, k * (1_000_000_000 / TICKS_PER_S));
        loop {
            // SAFETY: `deadline` is a valid, normalised timespec that lives across the call;
            // the remaining-time pointer may be null with TIMER_ABSTIME.
            let r = unsafe {
                libc::clock_nanosleep(
                    libc::CLOCK_MONOTONIC,
                    libc::TIMER_ABSTIME,
                    &deadline,
                    std::ptr::null_mut(),
                )
            };
            if r != libc::EINTR {
                break;
            }
        }
        let late_by = ns_between(deadline, monotonic_now());
        late_by > i128::from(1_000_000_000 / TICKS_PER_S)
    }
}

fn monotonic_now() -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now
}

fn add_ns(t: libc::timespec, ns: u64) -> libc::timespec {
    let total = t.tv_nsec as u64 + ns;
    libc::timespec {
        tv_sec: t.tv_sec + (total / 1_000_000_000) as libc::time_t,
        tv_nsec: (total % 1_000_000_000) as libc::c_long,
    }
}

/// `later - earlier`, ns (negative if `later` is earlier).
fn ns_between(earlier: libc::timespec, later: libc::timespec) -> i128 {
    let ns = |t: libc::timespec| i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    ns(later) - ns(earlier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_is_record_one_and_recurs_every_thousand() {
        assert_eq!(probe(3_000).0, "GET /index.html 200 519 bytes in 0.014 ms");
        assert_eq!(probe(3_000).1, 3);
        assert_eq!(probe(20).1, 1);
        assert_eq!(probe(1_001).1, 1);
        assert_eq!(probe(1_002).1, 2);
        let renders_like_one = |i| {
            let (s, b, ms) = args(i);
            format!("GET /index.html {s} {b} bytes in {ms:.3} ms") == probe(1).0
        };
        assert_eq!((0..5_000).filter(|&i| renders_like_one(i)).count(), 5);
    }

    #[test]
    fn the_schedule_keeps_its_ticks_absolute() {
        let schedule = Schedule::start();
        let t0 = Instant::now();
        // A 20 ms stall makes tick 1 late. Tick 40 stays at 40 ms from the start; a schedule
        // relative to the late tick would put it at 59 ms.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(schedule.wait_for(1));
        schedule.wait_for(40);
        let elapsed = t0.elapsed();
        assert!(
            (39_900..55_000).contains(&elapsed.as_micros()),
            "{elapsed:?}"
        );
        assert_eq!(
            add_ns(
                libc::timespec {
                    tv_sec: 1,
                    tv_nsec: 999_999_999
                },
                2
            )
            .tv_nsec,
            1
        );
    }
}
