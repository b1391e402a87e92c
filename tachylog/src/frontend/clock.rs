//! The timestamp taken in every log call.
//!
//! On x86-64 with an invariant TSC (constant rate, running in all power states, synchronised
//! across cores: CPUID leaf 0x8000_0007, EDX bit 8) it is one `rdtsc` (~7 ns, no system
//! call, no memory access). Elsewhere it is the system's monotonic clock in nanoseconds:
//! `CLOCK_MONOTONIC` through the vDSO on Unix, `QueryPerformanceCounter` on Windows.
//! Either way the back end converts ticks to wall-clock time ([`crate::backend::clock`]); ticks
//! are only compared and subtracted on the front end.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether [`now`] reads the TSC. Decided once, before the first record (see [`select`]).
/// Every call reads it: padded to a line of its own, so that no counter the back end bumps
/// shares it: each wake would cost the next call a cache miss.
static USE_TSC: CachePadded<AtomicBool> = CachePadded::new(AtomicBool::new(false));

/// The source [`now`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The CPU's time-stamp counter.
    Tsc,
    /// The system's monotonic clock in nanoseconds ([`monotonic_nanos`]).
    Monotonic,
}

/// Chooses the clock source: the TSC if it is invariant, unless `TACHYLOG_CLOCK=monotonic`
/// (another value is reported on stderr and ignored). Must not change while records are in
/// flight, so it is called once per process.
pub(crate) fn select() -> Source {
    static CHOSEN: std::sync::OnceLock<Source> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        // `init` is the first to choose, so a warning here is printed at start-up.
        let forced_monotonic = match std::env::var_os("TACHYLOG_CLOCK") {
            Some(value) if value.eq_ignore_ascii_case("monotonic") => true,
            Some(value) if !value.is_empty() => {
                eprintln!(
                    "tachylog: $TACHYLOG_CLOCK is {value:?}, not `monotonic`, the one value it \
                     takes; it is ignored"
                );
                false
            }
            _ => false,
        };
        let source = if !forced_monotonic && tsc_is_invariant() {
            Source::Tsc
        } else {
            Source::Monotonic
        };
        USE_TSC.store(source == Source::Tsc, Ordering::Relaxed);
        source
    })
}

/// The current time in ticks of the selected source.
#[inline(always)]
pub(crate) fn now() -> u64 {
    if tsc::AVAILABLE && USE_TSC.load(Ordering::Relaxed) {
        return tsc::read();
    }
    monotonic_nanos()
}

/// The name of the source in use, for tests and diagnostics (`select` must have run).
pub(crate) fn source_name() -> &'static str {
    match select() {
        Source::Tsc => "tsc",
        Source::Monotonic => "monotonic",
    }
}

/// The system's monotonic clock in nanoseconds (from an arbitrary origin).
pub(crate) fn monotonic_nanos() -> u64 {
    os::monotonic_nanos()
}

/// The wall clock in nanoseconds since the Unix epoch.
pub(crate) fn realtime_nanos() -> u64 {
    os::realtime_nanos()
}

#[cfg(unix)]
mod os {
    /// `CLOCK_MONOTONIC`: never steps, and the vDSO reads it without a system call.
    pub(super) fn monotonic_nanos() -> u64 {
        clock_nanos(libc::CLOCK_MONOTONIC)
    }

    pub(super) fn realtime_nanos() -> u64 {
        clock_nanos(libc::CLOCK_REALTIME)
    }

    fn clock_nanos(clock: libc::clockid_t) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out-pointer; both clocks exist on every supported system.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

#[cfg(windows)]
mod os {
    use std::sync::atomic::{AtomicU64, Ordering};
    use windows_sys::Win32::System::Performance::{
        QueryPerformanceCounter, QueryPerformanceFrequency,
    };

    /// `QueryPerformanceCounter` in nanoseconds: what `std::time::Instant` reads too, but as a
    /// number the front end can subtract. Its rate is fixed at boot, so it is read once.
    pub(super) fn monotonic_nanos() -> u64 {
        static FREQUENCY: AtomicU64 = AtomicU64::new(0);
        let mut frequency = FREQUENCY.load(Ordering::Relaxed);
        if frequency == 0 {
            let mut f = 0i64;
            // SAFETY: `f` is a valid out-pointer; the call cannot fail since Windows XP.
            unsafe { QueryPerformanceFrequency(&mut f) };
            frequency = (f as u64).max(1);
            FREQUENCY.store(frequency, Ordering::Relaxed);
        }
        let mut counter = 0i64;
        // SAFETY: as above.
        unsafe { QueryPerformanceCounter(&mut counter) };
        let counter = counter as u64;
        // Split so that neither product overflows: the remainder is below the frequency.
        counter / frequency * 1_000_000_000 + counter % frequency * 1_000_000_000 / frequency
    }

    /// `GetSystemTimePreciseAsFileTime`, through `SystemTime`.
    pub(super) fn realtime_nanos() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos() as u64)
    }
}

fn tsc_is_invariant() -> bool {
    tsc::AVAILABLE && tsc::is_invariant()
}

/// The one place that depends on the CPU: the time-stamp counter where there is one (x86-64),
/// a stand-in that is never used elsewhere. Everything else in the crate reads time through
/// [`now`], whichever source [`select`] chose.
#[cfg(target_arch = "x86_64")]
mod tsc {
    pub(super) const AVAILABLE: bool = true;

    #[inline(always)]
    pub(super) fn read() -> u64 {
        // SAFETY: `rdtsc` is available on every x86-64 CPU and has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    /// CPUID leaf 0x8000_0007, EDX bit 8: constant rate, running in all power states.
    // `__cpuid` is an unsafe fn before Rust 1.94 and a safe one from 1.94 on: the `unsafe`
    // blocks keep the crate building on its MSRV, and the `allow` keeps newer compilers quiet.
    #[allow(unused_unsafe)]
    pub(super) fn is_invariant() -> bool {
        // SAFETY: `cpuid` exists on every x86-64 CPU and reading any leaf has no side effect.
        let max_extended = unsafe { core::arch::x86_64::__cpuid(0x8000_0000) }.eax;
        if max_extended < 0x8000_0007 {
            return false;
        }
        // SAFETY: as above; the extended leaf is within the maximum the CPU just reported.
        let edx = unsafe { core::arch::x86_64::__cpuid(0x8000_0007) }.edx;
        edx & (1 << 8) != 0
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod tsc {
    pub(super) const AVAILABLE: bool = false;

    #[inline(always)]
    pub(super) fn read() -> u64 {
        unreachable!("no time-stamp counter on this architecture")
    }

    pub(super) fn is_invariant() -> bool {
        false
    }
}
