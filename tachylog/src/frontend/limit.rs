//! Rate limits and sampling at the call site: `info!(every = Duration::from_secs(1); "...")`,
//! `info!(sample = 100; "...")`, and either per key: `warn!(every = Duration::from_secs(10),
//! key = peer; "...")`. A call that is let through carries `suppressed = N`, the calls skipped
//! since the last one that passed. Skipped calls that no later call reports (the flood
//! stopped) are reported by the back end, in a summary record of the call site (see
//! `pending`), so no skipped call goes uncounted.
//!
//! Runs on the calling thread, before the arguments are evaluated. The costs:
//! - `sample` (no key): counters of the call site's thread-local; a rejected call is a
//!   thread-local decrement, a branch and an increment of the thread's own `pending::Tally`
//!   (a relaxed load and store on a cache line no other thread writes), no clock, no locked
//!   instruction. Sampling is per thread: one call in N *of each thread* passes.
//! - `every` (no key): one clock read and one relaxed load of the site's deadline; the skipped
//!   calls are counted in the thread's tally, which a thread adds to the site's shared count
//!   once per period (when it first sees that another call passed), not once per call, so a
//!   flood from many threads does not make them fight over one cache line. A thread's count
//!   reaches the log with the next record that passes after it was added; a thread that exits
//!   adds its count as it goes.
//! - with a key: the key's hash picks one of [`KEY_SLOTS`] slots of the site (bounded memory:
//!   keys that share a slot share a limit), whose deadline and count are atomics, contended
//!   only by calls whose keys share the slot.
//!
//! The first skipped call of a thread at a call site allocates its tally (cold, once per
//! thread and site); nothing here locks or waits, except a keyed site's very first calls,
//! which may spin a moment while another thread registers the site.
//!
//! Layer 3 (see `ARCHITECTURE.md`): imports layers 1 and 2 only.

pub(crate) mod pending;

use self::pending::{Owner, Tally, TallyCell};
use super::clock;
use super::gate::GATE;
use crate::level::Level;
use std::cell::Cell;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::thread::LocalKey;
use std::time::Duration;

/// Where a rate-limited call site's records go: its level and target. The summary of its
/// skipped calls goes there too, so a sink or filter that keeps the site's records keeps its
/// summaries.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Destination {
    pub(crate) level: Level,
    pub(crate) target: &'static str,
}

impl Destination {
    pub const fn new(level: Level, target: &'static str) -> Self {
        Destination { level, target }
    }
}

/// Slots per keyed call site.
pub const KEY_SLOTS: usize = 64;

/// This file: the back end's scans leave the call sites of its unit tests alone (see
/// `pending::collect`).
const UNIT_TESTS: &str = file!();

/// The unit tests' call sites' destination.
#[cfg(test)]
const TEST_SITE: Destination = Destination::new(Level::Warn, "limit tests");

fn period_ticks(period: Duration) -> u64 {
    let micros = period.as_micros().min(u64::MAX as u128) as u64;
    micros.saturating_mul(GATE.ticks_per_micro.load(Ordering::Relaxed))
}

/// Whether this call opens a new period of `deadline` (a clock tick), moving it `period` on:
/// false while the current period runs, or when another call opened the new one first.
#[inline(always)]
fn opens_period(deadline: &AtomicU64, period: Duration) -> bool {
    let now = clock::now();
    let current = deadline.load(Ordering::Relaxed);
    now >= current
        && deadline
            .compare_exchange(
                current,
                now.saturating_add(period_ticks(period)),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
}

/// A call site's shared state for `every` without a key.
#[doc(hidden)]
pub struct Every {
    /// The clock tick before which calls are skipped. Written by the call that passes (a
    /// compare-and-swap), read relaxed by every call and by the back end.
    deadline: AtomicU64,
    /// Incremented by each call that passes: threads compare it with the one they counted in.
    passes: AtomicU64,
    /// Skipped calls that threads have handed over since the last pass (added by threads,
    /// taken by the call that passes or by the back end, with one read-modify-write each).
    handed_over: AtomicU64,
    /// Whether the back end lists this site in `pending::KNOWN`; written by the back end only.
    known: AtomicBool,
    /// The next site in `pending::KNOWN`; written by the back end only.
    next_known: AtomicPtr<Every>,
    /// Where the call site is, for the back end's summary; set by the back end.
    at: OnceLock<&'static Location<'static>>,
    /// Where the summary goes.
    to: Destination,
}

/// A call site's per-thread count of skipped calls, for [`Every`].
#[doc(hidden)]
pub struct EveryLocal {
    /// This thread's count, created at its first skipped call.
    tally: TallyCell,
    /// `Every::passes` when this thread started counting.
    passes_seen: Cell<u64>,
}

impl EveryLocal {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        EveryLocal {
            tally: TallyCell::new(),
            passes_seen: Cell::new(0),
        }
    }

    /// A skipped call that found a call passed since this thread last counted (or that is the
    /// thread's first): hands the count of the previous period to the site, then counts.
    #[cold]
    #[inline(never)]
    fn count_in_new_period(
        &self,
        site: &'static Every,
        passes: u64,
        at: &'static Location<'static>,
    ) {
        let tally = match self.tally.get() {
            Some(tally) => {
                hand_over(site, tally);
                tally
            }
            None => self.tally.create(Owner::Every(site), at, site.to),
        };
        self.passes_seen.set(passes);
        tally.count();
    }
}

/// Adds what `tally` counted and nobody claimed yet to the site's shared count.
fn hand_over(site: &Every, tally: &Tally) {
    let skipped = tally.claim();
    if skipped > 0 {
        site.handed_over.fetch_add(skipped, Ordering::Relaxed);
    }
}

impl Drop for EveryLocal {
    /// A thread that exits hands its count over, for the next record that passes (or the
    /// back end's summary, if none passes).
    fn drop(&mut self) {
        if let Some(tally) = self.tally.get() {
            if let Owner::Every(site) = tally.owner() {
                hand_over(site, tally);
            }
        }
        self.tally.exit();
    }
}

impl Every {
    pub const fn new(to: Destination) -> Self {
        Every {
            deadline: AtomicU64::new(0),
            passes: AtomicU64::new(0),
            handed_over: AtomicU64::new(0),
            known: AtomicBool::new(false),
            next_known: AtomicPtr::new(std::ptr::null_mut()),
            at: OnceLock::new(),
            to,
        }
    }

    /// `Some(skipped)` if this call may log now, `None` if it is skipped (and counted).
    #[inline]
    #[track_caller]
    pub fn check(
        &'static self,
        local: &'static LocalKey<EveryLocal>,
        period: Duration,
    ) -> Option<u64> {
        if !opens_period(&self.deadline, period) {
            let at = Location::caller();
            let counted = local.try_with(|local| {
                let passes = self.passes.load(Ordering::Relaxed);
                match local.tally.get() {
                    Some(tally) if local.passes_seen.get() == passes => tally.count(),
                    _ => local.count_in_new_period(self, passes, at),
                }
            });
            if counted.is_err() {
                // The thread is being torn down and its count is gone: count on the site.
                self.handed_over.fetch_add(1, Ordering::Relaxed);
            }
            return None;
        }
        let passes = self.passes.fetch_add(1, Ordering::Relaxed) + 1;
        let own = local
            .try_with(|local| {
                local.passes_seen.set(passes);
                local.tally.get().map_or(0, Tally::claim)
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
    /// This thread's count of skipped calls, created at its first skipped call.
    tally: TallyCell,
    /// Where the summary goes.
    to: Destination,
}

impl SampleLocal {
    pub const fn new(to: Destination) -> Self {
        SampleLocal {
            left: Cell::new(0),
            tally: TallyCell::new(),
            to,
        }
    }
}

impl Drop for SampleLocal {
    /// A thread that exits leaves its count to the back end, which reports it at its next scan.
    fn drop(&mut self) {
        self.tally.exit();
    }
}

/// `Some(skipped)` for one call in `n` on this thread (the first passes), `None` otherwise.
#[doc(hidden)]
#[inline]
#[track_caller]
pub fn sample(local_key: &'static LocalKey<SampleLocal>, n: u64) -> Option<u64> {
    let at = Location::caller();
    local_key
        .try_with(|local| {
            let left = local.left.get();
            if left > 0 {
                local.left.set(left - 1);
                match local.tally.get() {
                    Some(tally) => tally.count(),
                    None => local
                        .tally
                        .create(Owner::Sample(local_key_id(local_key)), at, local.to)
                        .count(),
                }
                return None;
            }
            local.left.set(n.saturating_sub(1));
            Some(local.tally.get().map_or(0, Tally::claim))
        })
        // A thread being torn down: let the call through rather than lose it uncounted.
        .unwrap_or(Some(0))
}

/// A `sample` call site's name for the back end: its thread-local key, a `static`.
fn local_key_id(key: &'static LocalKey<SampleLocal>) -> usize {
    key as *const LocalKey<SampleLocal> as usize
}

/// One key slot: a deadline (for `every`) or a call counter (for `sample`), and the skipped
/// calls since the last pass (taken by the call that passes or by the back end).
struct KeySlot {
    deadline_or_calls: AtomicU64,
    skipped: AtomicU64,
}

/// A keyed site's `Keyed::kind`.
const KEYED_EVERY: u8 = 1;
const KEYED_SAMPLE: u8 = 2;

/// A call site's state for `every` or `sample` with a key.
#[doc(hidden)]
pub struct Keyed {
    slots: [KeySlot; KEY_SLOTS],
    /// `pending::UNLISTED`, `LISTING` or `LISTED` in `pending::KEYED`: set by the first call.
    listing: AtomicU8,
    /// The next site in `pending::KEYED`; written once, by the thread that lists this one.
    next: AtomicPtr<Keyed>,
    /// `KEYED_EVERY` or `KEYED_SAMPLE`: what `deadline_or_calls` holds. Set before listing.
    kind: AtomicU8,
    /// Where the call site is, for the back end's summary. Set before listing.
    at: OnceLock<&'static Location<'static>>,
    /// Where the summary goes.
    to: Destination,
}

impl Keyed {
    pub const fn new(to: Destination) -> Self {
        Keyed {
            slots: [const {
                KeySlot {
                    deadline_or_calls: AtomicU64::new(0),
                    skipped: AtomicU64::new(0),
                }
            }; KEY_SLOTS],
            listing: AtomicU8::new(pending::UNLISTED),
            next: AtomicPtr::new(std::ptr::null_mut()),
            kind: AtomicU8::new(0),
            at: OnceLock::new(),
            to,
        }
    }

    fn slot(&self, key: &(impl Hash + ?Sized)) -> &KeySlot {
        let mut hasher = KeyHasher(0xcbf2_9ce4_8422_2325);
        key.hash(&mut hasher);
        &self.slots[(hasher.finish() % KEY_SLOTS as u64) as usize]
    }

    /// `every` per key.
    #[track_caller]
    pub fn every(&'static self, key: &(impl Hash + ?Sized), period: Duration) -> Option<u64> {
        if self.listing.load(Ordering::Acquire) != pending::LISTED {
            pending::list_keyed(self, KEYED_EVERY, Location::caller());
        }
        let slot = self.slot(key);
        if !opens_period(&slot.deadline_or_calls, period) {
            slot.skipped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(slot.skipped.swap(0, Ordering::Relaxed))
    }

    /// `sample` per key: one call in `n` of the key passes (the first passes).
    #[track_caller]
    pub fn sample(&'static self, key: &(impl Hash + ?Sized), n: u64) -> Option<u64> {
        if self.listing.load(Ordering::Acquire) != pending::LISTED {
            pending::list_keyed(self, KEYED_SAMPLE, Location::caller());
        }
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
/// rate limit is for) and costs 40 ns a call (measured:
/// `cargo run --release -p tachylog-bench --bin limits`).
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
        thread_local!(static LOCAL: SampleLocal = const { SampleLocal::new(TEST_SITE) });
        let passed: Vec<Option<u64>> = (0..7).map(|_| sample(&LOCAL, 3)).collect();
        assert_eq!(passed, [Some(0), None, None, Some(2), None, None, Some(2)]);
    }

    #[test]
    fn every_passes_once_per_period_and_reports_what_it_skipped() {
        static SITE: Every = Every::new(TEST_SITE);
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
        static SITE: Keyed = Keyed::new(TEST_SITE);
        let hour = Duration::from_secs(3600);
        assert_eq!(SITE.every("10.0.0.1", hour), Some(0));
        assert_eq!(SITE.every("10.0.0.1", hour), None);
        let other = (0..100)
            .map(|i| format!("10.0.1.{i}"))
            .find(|k| !std::ptr::eq(SITE.slot(k.as_str()), SITE.slot("10.0.0.1")))
            .unwrap();
        assert_eq!(SITE.every(other.as_str(), hour), Some(0));
        static SAMPLED: Keyed = Keyed::new(TEST_SITE);
        let passed = (0..5)
            .filter(|_| SAMPLED.sample(&7u32, 2).is_some())
            .count();
        assert_eq!(passed, 3);
    }
}
#[cfg(test)]
mod claims {
    use super::pending::{Owner, TallyCell};
    use std::panic::Location;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// The owner's passes and the back end's scans claim from one count at once: together they
    /// get every call exactly once.
    #[test]
    fn a_count_claimed_from_two_threads_is_split_never_doubled() {
        let mut cell = TallyCell::new();
        let tally = cell.create(Owner::Sample(0), Location::caller(), super::TEST_SITE);
        let claimed = AtomicU64::new(0);
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !done.load(Ordering::Acquire) {
                    claimed.fetch_add(tally.claim(), Ordering::Relaxed);
                }
            });
            for i in 0..200_000u32 {
                tally.count();
                if i % 1000 == 0 {
                    claimed.fetch_add(tally.claim(), Ordering::Relaxed);
                }
            }
            done.store(true, Ordering::Release);
        });
        claimed.fetch_add(tally.claim(), Ordering::Relaxed);
        assert_eq!(claimed.load(Ordering::Relaxed), 200_000);
        assert_eq!(tally.claim(), 0);
        cell.exit();
    }
}

#[cfg(test)]
mod conservation {
    use super::*;

    #[test]
    fn counts_add_up_across_threads() {
        static SITE: Every = Every::new(TEST_SITE);
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
