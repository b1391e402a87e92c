//! The few global switches a log call reads, kept on one read-mostly cache line.
//!
//! Every call reads `max_level` (the enabled check) and `backend_sleeping` (to wake an idle back
//! end); both are written only on configuration changes and the back end's naps, so between two
//! naps the line stays shared in every core's cache and each read is an L1 hit. The first call
//! after a nap's start or end takes a miss on it: reading the flag only past the ring's
//! high-water mark, from a line of its own, would spare that miss, but costs every call about
//! five instructions more (the fill compare first) and did not shorten the `latency` tail
//! measurably (BENCHMARKS.md, "The caller's tail: where it came from").

use crate::Level;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// What a producer does when its ring is full.
///
/// ```
/// let builder = tachylog::builder().on_full(tachylog::OnFull::Drop);
/// # drop(builder);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFull {
    /// Wait until the back end frees space: lossless. The wait spins briefly, then yields, then
    /// sleeps in short steps, so a blocked caller does not burn a core.
    #[default]
    Block,
    /// Discard the record and count it; the back end writes `N records dropped` into the log.
    Drop,
}

#[repr(align(64))]
pub(crate) struct Gate {
    /// The most verbose enabled level as `u8` (`0`: everything off). Written by `init`,
    /// `set_level` and shutdown; read relaxed by every call.
    pub(crate) max_level: AtomicU8,
    /// Set by the back end (`SeqCst`) right before it sleeps, cleared when it wakes. A producer
    /// that sees it set after publishing checks its ring's high-water mark (cold path past a
    /// compare of its own cursor): it wakes the back end only for a ring a quarter full.
    pub(crate) backend_sleeping: AtomicBool,
    /// `OnFull` as `u8`: 0 block, 1 drop. Read on the full-ring path only.
    pub(crate) on_full: AtomicU8,
    /// The largest ring a thread that registers from now on may grow to.
    pub(crate) ring_capacity: AtomicUsize,
    /// The first ring of a thread that registers from now on.
    pub(crate) initial_ring_capacity: AtomicUsize,
    /// Total heap bytes that oversize records may hold in one ring before their producer waits.
    pub(crate) max_boxed_bytes: AtomicUsize,
    /// Records at this level or more severe (as `u8`; `0`: none) make their caller wait until
    /// the back end has written them to the kernel. Read relaxed by every call, on this line.
    pub(crate) sync_level: AtomicU8,
    /// Under `OnFull::Block`, the longest one call waits for room before dropping its record,
    /// in nanoseconds (`0`: forever). Read on the full-ring path only.
    pub(crate) max_block_nanos: AtomicU64,
    /// Clock ticks per microsecond (the calibrated rate, at least 1), for the rate limits'
    /// periods. Written by `init`; read when a rate-limited record passes.
    pub(crate) ticks_per_micro: AtomicU64,
    /// Two flush intervals in clock ticks: a ring that reaches its high-water mark again
    /// within this long after a wake grows instead of waking the back end again. Written by
    /// `init`; read on the high-water path only.
    pub(crate) grow_window_ticks: AtomicU64,
}

pub(crate) static GATE: Gate = Gate {
    max_level: AtomicU8::new(0),
    backend_sleeping: AtomicBool::new(false),
    on_full: AtomicU8::new(0),
    ring_capacity: AtomicUsize::new(1 << 20),
    initial_ring_capacity: AtomicUsize::new(crate::queue::chain::INITIAL_CAPACITY),
    max_boxed_bytes: AtomicUsize::new(64 << 20),
    sync_level: AtomicU8::new(0),
    max_block_nanos: AtomicU64::new(0),
    ticks_per_micro: AtomicU64::new(1_000),
    grow_window_ticks: AtomicU64::new(200_000_000),
};

impl Gate {
    pub(crate) fn on_full(&self) -> OnFull {
        match self.on_full.load(Ordering::Relaxed) {
            0 => OnFull::Block,
            _ => OnFull::Drop,
        }
    }

    pub(crate) fn set_max_level(&self, level: Option<Level>) {
        self.max_level
            .store(level.map_or(0, |l| l as u8), Ordering::Relaxed);
    }
}

/// Whether records of `level` are wanted. One relaxed load and a compare.
#[doc(hidden)]
#[inline(always)]
pub fn enabled(level: Level) -> bool {
    level as u8 <= GATE.max_level.load(Ordering::Relaxed)
}

/// [`enabled`] for a level as a byte, or a site's unarmed gate (never enabled).
#[inline(always)]
pub(crate) fn enabled_raw(level: u8) -> bool {
    level <= GATE.max_level.load(Ordering::Relaxed)
}

/// Whether a record of `level` must be on its way to the kernel before its call returns.
#[inline(always)]
pub(crate) fn synchronous(level: Level) -> bool {
    level as u8 <= GATE.sync_level.load(Ordering::Relaxed)
}

/// Waits until the calling thread's records so far are written to the kernel (`sync_level`).
#[cold]
#[inline(never)]
pub(crate) fn write_through() {
    crate::queue::control::flush();
}
