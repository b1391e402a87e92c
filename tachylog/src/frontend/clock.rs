//! The timestamp taken in every log call.
//!
//! On x86-64 with an invariant TSC (constant rate, running in all power states, synchronised
//! across cores: CPUID leaf 0x8000_0007, EDX bit 8) it is one `rdtsc` (~7 ns, no system
//! call, no memory access). Elsewhere it is `CLOCK_MONOTONIC` in nanoseconds through the vDSO.
//! Either way the back end converts ticks to wall-clock time ([`crate::backend::clock`]); ticks
//! are only compared and subtracted on the front end.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether [`now`] reads the TSC. Decided once, before the first record (see [`select`]).
static USE_TSC: AtomicBool = AtomicBool::new(false);

/// The source [`now`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The CPU's time-stamp counter.
    Tsc,
    /// `CLOCK_MONOTONIC` in nanoseconds.
    Monotonic,
}

/// Chooses the clock source: the TSC if it is invariant, unless `TACHYLOG_CLOCK=monotonic`.
/// Must not change while records are in flight, so it is called once per process.
pub(crate) fn select() -> Source {
    static CHOSEN: std::sync::OnceLock<Source> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let forced_monotonic =
            std::env::var("TACHYLOG_CLOCK").is_ok_and(|v| v.eq_ignore_ascii_case("monotonic"));
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

/// `CLOCK_MONOTONIC` in nanoseconds.
pub(crate) fn monotonic_nanos() -> u64 {
    clock_nanos(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_REALTIME` in nanoseconds since the Unix epoch.
pub(crate) fn realtime_nanos() -> u64 {
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
    pub(super) fn is_invariant() -> bool {
        let max_extended = core::arch::x86_64::__cpuid(0x8000_0000).eax;
        if max_extended < 0x8000_0007 {
            return false;
        }
        let edx = core::arch::x86_64::__cpuid(0x8000_0007).edx;
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
