//! Rate limits and sampling at the call site: `info!(every = Duration::from_secs(1); "...")`,
//! `info!(sample = 100; "...")`, and either per key: `warn!(every = Duration::from_secs(10),
//! key = peer; "...")`. A call that is let through carries `suppressed = N`, the calls skipped
//! since the last one that passed, so nothing is skipped silently.
//!
//! Runs on the calling thread, before the arguments are evaluated. The costs:
//! - `sample` (no key): counters in a thread-local of the call site; a rejected call is a
//!   thread-local decrement and a branch, no clock, no shared memory. Sampling is per thread:
//!   one call in N *of each thread* passes.
//! - `every` (no key): one clock read and one relaxed load of the site's deadline; the skipped
//!   calls are counted in a thread-local, which a thread adds to the site's shared count once
//!   per period (when it first sees that another call passed), not once per call, so a flood
//!   from many threads does not make them fight over one cache line. A thread's count reaches
//!   the log with the next record that passes after it was added; a thread that exits adds
//!   its count as it goes.
//! - with a key: the key's hash picks one of [`KEY_SLOTS`] slots of the site (bounded memory:
//!   keys that share a slot share a limit), whose deadline and count are atomics, contended
//!   only by calls whose keys share the slot.

use super::clock;
use super::gate::GATE;
use std::cell::Cell;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::LocalKey;
use std::time::Duration;

/// Slots per keyed call site.
pub const KEY_SLOTS: usize = 64;

fn period_ticks(period: Duration) -> u64 {
    let micros = period.as_micros().min(u64::MAX as u128) as u64;
    micros.saturating_mul(GATE.ticks_per_micro.load(Ordering::Relaxed))
}

/// A call site's shared state for `every` without a key.
#[doc(hidden)]
pub struct Every {
    /// The clock tick before which calls are skipped.
    deadline: AtomicU64,
    /// Incremented by each call that passes: threads compare it with the one they counted in.
    passes: AtomicU64,
    /// Skipped calls that threads have handed over since the last pass.
    handed_over: AtomicU64,
}

/// A call site's per-thread count of skipped calls, for [`Every`].
#[doc(hidden)]
pub struct EveryLocal {
    site: Cell<Option<&'static Every>>,
    /// `Every::passes` when this thread started counting.
    passes_seen: Cell<u64>,
    skipped: Cell<u64>,
}

impl EveryLocal {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        EveryLocal {
            site: Cell::new(None),
            passes_seen: Cell::new(0),
            skipped: Cell::new(0),
        }
    }

    fn hand_over(&self) {
        if let Some(site) = self.site.get() {
            let skipped = self.skipped.replace(0);
            if skipped > 0 {
                site.handed_over.fetch_add(skipped, Ordering::Relaxed);
            }
        }
    }
}

impl Drop for EveryLocal {
    /// A thread that exits hands its count over, for the next record that passes.
    fn drop(&mut self) {
        self.hand_over();
    }
}

impl Every {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Every {
            deadline: AtomicU64::new(0),
            passes: AtomicU64::new(0),
            handed_over: AtomicU64::new(0),
        }
    }

    /// `Some(skipped)` if this call may log now, `None` if it is skipped (and counted).
    #[inline]
    pub fn check(&'static self, local: &'static LocalKey<EveryLocal>, period: Duration) -> Option<u64> {
        let now = clock::now();
        let deadline = self.deadline.load(Ordering::Relaxed);
        if now < deadline || self.deadline.compare_exchange(deadline, now.saturating_add(period_ticks(period)), Ordering::Relaxed, Ordering::Relaxed).is_err() {
            let _ = local.try_with(|local| {
                let passes = self.passes.load(Ordering::Relaxed);
                if local.passes_seen.get() != passes {
                    local.hand_over();
                    local.passes_seen.set(passes);
                }
                local.site.set(Some(self));
                local.skipped.set(local.skipped.get() + 1);
            });
            return None;
        }
        let passes = self.passes.fetch_add(1, Ordering::Relaxed) + 1;
        let own = local
            .try_with(|local| {
                local.passes_seen.set(passes);
                local.skipped.replace(0)
            })
            .unwrap_or(0);
        Some(own + self.handed_over.swap(0, Ordering::Relaxed))
    }
}

/// A call site's per-thread state for `sample` without a key.
#[doc(hidden)]
pub struct SampleLocal {
    /// Calls to skip before the next one passes.
    left: Cell<u64>,
    skipped: Cell<u64>,
}

impl SampleLocal {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        SampleLocal {
            left: Cell::new(0),
            skipped: Cell::new(0),
        }
    }
}

/// `Some(skipped)` for one call in `n` on this thread (the first passes), `None` otherwise.
#[doc(hidden)]
#[inline]
pub fn sample(local: &'static LocalKey<SampleLocal>, n: u64) -> Option<u64> {
    local
        .try_with(|local| {
            let left = local.left.get();
            if left > 0 {
                local.left.set(left - 1);
                local.skipped.set(local.skipped.get() + 1);
                return None;
            }
            local.left.set(n.saturating_sub(1));
            Some(local.skipped.replace(0))
        })
        // A thread being torn down: let the call through rather than lose it uncounted.
        .unwrap_or(Some(0))
}

/// One key slot: a deadline (for `every`) or a call counter (for `sample`), and the skipped
/// calls since the last pass.
struct KeySlot {
    deadline_or_calls: AtomicU64,
    skipped: AtomicU64,
}

/// A call site's state for `every` or `sample` with a key.
#[doc(hidden)]
pub struct Keyed {
    slots: [KeySlot; KEY_SLOTS],
}

impl Keyed {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Keyed {
            slots: [const {
                KeySlot {
                    deadline_or_calls: AtomicU64::new(0),
                    skipped: AtomicU64::new(0),
                }
            }; KEY_SLOTS],
        }
    }

    fn slot(&self, key: &(impl Hash + ?Sized)) -> &KeySlot {
        let mut hasher = KeyHasher(0xcbf2_9ce4_8422_2325);
        key.hash(&mut hasher);
        &self.slots[(hasher.finish() % KEY_SLOTS as u64) as usize]
    }

    /// `every` per key.
    pub fn every(&self, key: &(impl Hash + ?Sized), period: Duration) -> Option<u64> {
        let slot = self.slot(key);
        let now = clock::now();
        let deadline = slot.deadline_or_calls.load(Ordering::Relaxed);
        if now < deadline
            || slot
                .deadline_or_calls
                .compare_exchange(deadline, now.saturating_add(period_ticks(period)), Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            slot.skipped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(slot.skipped.swap(0, Ordering::Relaxed))
    }

    /// `sample` per key: one call in `n` of the key passes (the first passes).
    pub fn sample(&self, key: &(impl Hash + ?Sized), n: u64) -> Option<u64> {
        let slot = self.slot(key);
        let calls = slot.deadline_or_calls.fetch_add(1, Ordering::Relaxed);
        if calls % n.max(1) != 0 {
            slot.skipped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(slot.skipped.swap(0, Ordering::Relaxed))
    }
}

/// FNV-1a with a final mix: the key only picks one of 64 slots, so SipHash's resistance to
/// chosen keys buys nothing here (a flood of colliding keys shares one limit, which is what a
/// rate limit is for) and cost 40 ns a call in the `limits` bench.
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        let h = self.0;
        (h ^ (h >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_passes_one_call_in_n_and_counts_the_rest() {
        thread_local!(static LOCAL: SampleLocal = const { SampleLocal::new() });
        let passed: Vec<Option<u64>> = (0..7).map(|_| sample(&LOCAL, 3)).collect();
        assert_eq!(passed, [Some(0), None, None, Some(2), None, None, Some(2)]);
    }

    #[test]
    fn every_passes_once_per_period_and_reports_what_it_skipped() {
        static SITE: Every = Every::new();
        thread_local!(static LOCAL: EveryLocal = const { EveryLocal::new() });
        assert_eq!(SITE.check(&LOCAL, Duration::from_secs(3600)), Some(0));
        for _ in 0..5 {
            assert_eq!(SITE.check(&LOCAL, Duration::from_secs(3600)), None);
        }
        // Another thread's skipped calls, handed over when it exits.
        std::thread::spawn(|| {
            for _ in 0..4 {
                assert_eq!(SITE.check(&LOCAL, Duration::from_secs(3600)), None);
            }
        })
        .join()
        .unwrap();
        // Open the period by hand and check the count that comes with the next pass.
        SITE.deadline.store(0, Ordering::Relaxed);
        assert_eq!(SITE.check(&LOCAL, Duration::from_secs(3600)), Some(9));
    }

    #[test]
    fn keys_have_their_own_limits() {
        static SITE: Keyed = Keyed::new();
        let hour = Duration::from_secs(3600);
        assert_eq!(SITE.every("10.0.0.1", hour), Some(0));
        assert_eq!(SITE.every("10.0.0.1", hour), None);
        let other = (0..100).map(|i| format!("10.0.1.{i}")).find(|k| !std::ptr::eq(SITE.slot(k.as_str()), SITE.slot("10.0.0.1"))).unwrap();
        assert_eq!(SITE.every(other.as_str(), hour), Some(0));
        static SAMPLED: Keyed = Keyed::new();
        let passed = (0..5).filter(|_| SAMPLED.sample(&7u32, 2).is_some()).count();
        assert_eq!(passed, 3);
    }
}
#[cfg(test)]
mod conservation {
    use super::*;

    #[test]
    fn counts_add_up_across_threads() {
        static SITE: Every = Every::new();
        thread_local!(static LOCAL: EveryLocal = const { EveryLocal::new() });
        static CALLS: AtomicU64 = AtomicU64::new(0);
        static PASSED: AtomicU64 = AtomicU64::new(0);
        static REPORTED: AtomicU64 = AtomicU64::new(0);
        let period = Duration::from_micros(500);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        CALLS.fetch_add(1, Ordering::Relaxed);
                        if let Some(n) = SITE.check(&LOCAL, period) {
                            PASSED.fetch_add(1, Ordering::Relaxed);
                            REPORTED.fetch_add(n, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
        CALLS.fetch_add(1, Ordering::Relaxed);
        let last = SITE.check(&LOCAL, period).expect("the period is over");
        PASSED.fetch_add(1, Ordering::Relaxed);
        REPORTED.fetch_add(last, Ordering::Relaxed);
        assert_eq!(
            PASSED.load(Ordering::Relaxed) + REPORTED.load(Ordering::Relaxed),
            CALLS.load(Ordering::Relaxed)
        );
    }
}
