//! Skipped calls that no later call has reported yet, kept where the back end can find them.
//!
//! A call site's skipped calls are reported by the next call that passes. When none comes (the
//! flood stopped), the back end reports them instead: [`collect`] runs on the back end's thread
//! after a drain (at most once per flush interval), and on every `flush()`, at shutdown and on a
//! signal's drain. What it reaches:
//! - [`Tally`]: one thread's count at one `every` or `sample` call site without a key, on the
//!   heap, in the lock-free list [`TALLIES`]. The thread pushes it there at its first skipped
//!   call; then it counts into it with a relaxed load and store, on a cache line that no other
//!   thread writes while the flood lasts. The back end reads it once per scan.
//! - `every` sites: the back end lists each site it has seen a tally of ([`KNOWN`]), so the
//!   counts that threads handed over (as they exited, or at a period's end) stay reachable after
//!   their tallies are freed.
//! - keyed sites, which list themselves at their first call ([`KEYED`]).
//!
//! A count is split between claimants by a watermark ([`Tally::claim`]): each skipped call is
//! reported once, by the call that passes or by the back end, never by both.
//!
//! Who may do what: producers push (tallies, keyed sites) and never unlink, free, or read
//! another thread's tally; only [`collect`] unlinks and frees, one scan at a time. No lock
//! anywhere: [`collect`] never waits for a producer (a scan that finds another one running
//! returns empty), and a producer never waits for the back end. A tally is freed only after its
//! thread marked it exited, its last touch of it.

use super::{Destination, Every, Keyed, KEYED_EVERY};
use crate::level::Level;
use std::cell::Cell;
use std::panic::Location;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

/// Whose skipped calls a [`Tally`] counts.
#[derive(Clone, Copy)]
pub(super) enum Owner {
    /// A thread's calls at an `every` call site without a key.
    Every(&'static Every),
    /// A thread's calls at a `sample` call site without a key, named by the address of its
    /// thread-local key (a `static`, one per call site).
    Sample(usize),
}

/// One thread's skipped calls at one call site.
///
/// Aligned to its own cache lines: the owner writes `skipped` at every skipped call, and a
/// neighbour written by another thread would make them contend after all.
#[repr(align(128))]
pub(super) struct Tally {
    /// Skipped calls, ever. Written by the owner only (a relaxed load and store, no locked
    /// instruction); read by whoever claims.
    skipped: AtomicU64,
    /// How much of `skipped` has been claimed (reported, or handed to the site). Raised with
    /// `fetch_max` by the owner and by the back end: whoever raises it from `a` to `b` owns the
    /// calls `a..b`, so no call is claimed twice, whatever the interleaving.
    claimed: AtomicU64,
    /// Set by the owner (release) after its last write, when its thread-local is dropped; the
    /// back end then claims what is left and frees the tally.
    exited: AtomicBool,
    /// The next tally in [`TALLIES`]: written by the owner before it pushes, then by the back
    /// end only (when it unlinks a neighbour).
    next: AtomicPtr<Tally>,
    owner: Owner,
    /// The call site, for the summary.
    at: &'static Location<'static>,
    /// Where the summary goes.
    to: Destination,
}

/// Every tally not yet freed, newest first. Producers push at the head; [`collect`] unlinks.
static TALLIES: AtomicPtr<Tally> = AtomicPtr::new(ptr::null_mut());

impl Tally {
    /// A new, empty tally of the calling thread, already in [`TALLIES`].
    fn push(owner: Owner, at: &'static Location<'static>, to: Destination) -> NonNull<Tally> {
        let tally: &'static Tally = Box::leak(Box::new(Tally {
            skipped: AtomicU64::new(0),
            claimed: AtomicU64::new(0),
            exited: AtomicBool::new(false),
            next: AtomicPtr::new(ptr::null_mut()),
            owner,
            at,
            to,
        }));
        let new = tally as *const Tally as *mut Tally;
        let mut head = TALLIES.load(Ordering::Relaxed);
        loop {
            tally.next.store(head, Ordering::Relaxed);
            // Release: the back end that reads the head sees the tally's fields. Pushing needs
            // only that the head did not change, so a freed and reused address (ABA) is harmless.
            match TALLIES.compare_exchange_weak(head, new, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return NonNull::from(tally),
                Err(current) => head = current,
            }
        }
    }

    /// One more skipped call. Owner only.
    #[inline(always)]
    pub(super) fn count(&self) {
        self.skipped
            .store(self.skipped.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// The calls counted and not claimed yet, now claimed by the caller.
    pub(super) fn claim(&self) -> u64 {
        let skipped = self.skipped.load(Ordering::Relaxed);
        skipped.saturating_sub(self.claimed.fetch_max(skipped, Ordering::Relaxed))
    }

    pub(super) fn owner(&self) -> Owner {
        self.owner
    }
}

/// A thread-local's handle on its thread's [`Tally`] at its call site.
pub(super) struct TallyCell(Cell<Option<NonNull<Tally>>>);

impl TallyCell {
    pub(super) const fn new() -> Self {
        TallyCell(Cell::new(None))
    }

    #[inline(always)]
    pub(super) fn get(&self) -> Option<&Tally> {
        // SAFETY: the tally was leaked by `Tally::push` and is freed only by `collect`, after
        // its `exited` is set, which only `exit` does, taking the pointer out first; the
        // reference borrows `self`, so it cannot outlive the pointer.
        self.0.get().map(|tally| unsafe { tally.as_ref() })
    }

    /// The thread's first skipped call at this site: its tally.
    #[cold]
    #[inline(never)]
    pub(super) fn create(
        &self,
        owner: Owner,
        at: &'static Location<'static>,
        to: Destination,
    ) -> &Tally {
        self.0.set(Some(Tally::push(owner, at, to)));
        self.get().expect("just set")
    }

    /// The thread is exiting: the back end may claim the rest and free the tally.
    pub(super) fn exit(&mut self) {
        if let Some(tally) = self.0.take() {
            // SAFETY: as in `get`; this is the pointer's last use.
            unsafe { tally.as_ref() }
                .exited
                .store(true, Ordering::Release);
        }
    }
}

/// `every` sites the back end has seen a tally of, newest first; written by [`collect`] only.
static KNOWN: AtomicPtr<Every> = AtomicPtr::new(ptr::null_mut());

/// Keyed sites, listed by their first call; producers push, nothing is ever unlinked.
static KEYED: AtomicPtr<Keyed> = AtomicPtr::new(ptr::null_mut());

/// `Keyed::listing`: not in [`KEYED`] yet, being pushed, in it.
pub(super) const UNLISTED: u8 = 0;
const LISTING: u8 = 1;
pub(super) const LISTED: u8 = 2;

/// Spins a thread waits for another one to finish listing a keyed site: a few pushes' time.
/// Past it (the lister was preempted), the call goes on; its count is in the site's slot, which
/// the back end reaches as soon as the listing completes.
const LISTING_SPINS: u32 = 10_000;

/// Puts a keyed site in [`KEYED`], once; `kind` and `at` describe it for the summary.
#[cold]
#[inline(never)]
pub(super) fn list_keyed(site: &'static Keyed, kind: u8, at: &'static Location<'static>) {
    match site
        .listing
        .compare_exchange(UNLISTED, LISTING, Ordering::Acquire, Ordering::Acquire)
    {
        Ok(_) => {
            site.kind.store(kind, Ordering::Relaxed);
            let _ = site.at.set(at);
            let new = site as *const Keyed as *mut Keyed;
            let mut head = KEYED.load(Ordering::Relaxed);
            loop {
                site.next.store(head, Ordering::Relaxed);
                match KEYED.compare_exchange_weak(head, new, Ordering::Release, Ordering::Relaxed) {
                    Ok(_) => break,
                    Err(current) => head = current,
                }
            }
            site.listing.store(LISTED, Ordering::Release);
        }
        Err(_) => {
            for _ in 0..LISTING_SPINS {
                if site.listing.load(Ordering::Acquire) == LISTED {
                    return;
                }
                std::hint::spin_loop();
            }
        }
    }
}

/// One call site's skipped calls that no call reported, found by [`collect`].
pub(crate) struct Suppressed {
    /// The call site's state's address, which tells call sites apart.
    site: usize,
    /// The call site.
    pub(crate) at: &'static Location<'static>,
    /// The call site's level: the summary's.
    pub(crate) level: Level,
    /// The call site's target: the summary's.
    pub(crate) target: &'static str,
    /// The kind of limit: `every`, `sample`, `every per key` or `sample per key`.
    pub(crate) limit: &'static str,
    /// The skipped calls.
    pub(crate) calls: u64,
}

/// Held by the scan running; a second one (a stray back end) returns empty rather than wait.
static SCANNING: AtomicBool = AtomicBool::new(false);

/// Takes the skipped calls that no call has reported into `found`, one entry per call site:
/// - with `force` (`flush()`, shutdown, a signal's drain): all of them;
/// - otherwise, those of exited threads at `sample` sites, and those of `every` sites (with or
///   without a key) whose deadline had passed by `cutoff` with no call passing since: the
///   period ended and none passed. `cutoff` is the clock at the caller's previous scan.
///
/// Frees the tallies of exited threads. For the back end's thread only; lock-free, never waits.
pub(crate) fn collect(cutoff: u64, force: bool, found: &mut Vec<Suppressed>) {
    if SCANNING.swap(true, Ordering::Acquire) {
        return;
    }
    collect_tallies(cutoff, force, found);
    // After the tallies: an exited thread handed its count over before it marked its tally
    // exited, so a site's count is read after every exit seen above.
    let mut site = KNOWN.load(Ordering::Relaxed);
    // SAFETY: `KNOWN` holds `&'static Every`s only (see `know`).
    while let Some(every) = unsafe { site.as_ref() } {
        let due = force || every.deadline.load(Ordering::Relaxed) <= cutoff;
        if let (true, Some(at)) = (due, every.at.get()) {
            if every.handed_over.load(Ordering::Relaxed) > 0 {
                let calls = every.handed_over.swap(0, Ordering::Relaxed);
                add(
                    found,
                    every as *const Every as usize,
                    at,
                    every.to,
                    "every",
                    calls,
                );
            }
        }
        site = every.next_known.load(Ordering::Relaxed);
    }
    let mut site = KEYED.load(Ordering::Acquire);
    // SAFETY: `KEYED` holds `&'static Keyed`s only (see `list_keyed`).
    while let Some(keyed) = unsafe { site.as_ref() } {
        collect_keyed(keyed, cutoff, force, found);
        site = keyed.next.load(Ordering::Relaxed);
    }
    SCANNING.store(false, Ordering::Release);
}

fn collect_tallies(cutoff: u64, force: bool, found: &mut Vec<Suppressed>) {
    let mut previous: Option<&Tally> = None;
    let mut current = TALLIES.load(Ordering::Acquire);
    while let Some(node) = NonNull::new(current) {
        // SAFETY: tallies in the list are freed only below, by this (the only) scan.
        let tally = unsafe { node.as_ref() };
        let next = tally.next.load(Ordering::Relaxed);
        current = next;
        if ignored(tally.at) {
            previous = Some(tally);
            continue;
        }
        // Acquire: an exited thread's last count and hand-over are visible.
        let exited = tally.exited.load(Ordering::Acquire);
        match tally.owner {
            Owner::Every(site) => {
                know(site, tally.at);
                if exited || force || site.deadline.load(Ordering::Relaxed) <= cutoff {
                    add(
                        found,
                        site as *const Every as usize,
                        tally.at,
                        tally.to,
                        "every",
                        tally.claim(),
                    );
                }
            }
            Owner::Sample(id) => {
                if exited || force {
                    add(found, id, tally.at, tally.to, "sample", tally.claim());
                }
            }
        }
        if !exited {
            previous = Some(tally);
            continue;
        }
        unlink(previous, node, next);
        // SAFETY: made by `Box::leak` in `Tally::push`; now out of the list, and its owner
        // is done with it (`exited`): nothing else can reach it.
        drop(unsafe { Box::from_raw(node.as_ptr()) });
    }
}

/// Takes `node` out of [`TALLIES`]; `previous` is the node before it as this scan found it.
fn unlink(previous: Option<&Tally>, node: NonNull<Tally>, next: *mut Tally) {
    if let Some(previous) = previous {
        // Producers never write a listed node's `next`: only this scan does.
        previous.next.store(next, Ordering::Release);
        return;
    }
    if TALLIES
        .compare_exchange(node.as_ptr(), next, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        return;
    }
    // Threads pushed in front of it since the scan began: find its new predecessor.
    let mut current = TALLIES.load(Ordering::Acquire);
    // SAFETY: as in `collect_tallies`.
    while let Some(tally) = unsafe { current.as_ref() } {
        let after = tally.next.load(Ordering::Relaxed);
        if after == node.as_ptr() {
            tally.next.store(next, Ordering::Release);
            return;
        }
        current = after;
    }
}

/// Lists an `every` site in [`KNOWN`], once.
fn know(site: &'static Every, at: &'static Location<'static>) {
    if site.known.load(Ordering::Relaxed) {
        return;
    }
    let _ = site.at.set(at);
    site.next_known
        .store(KNOWN.load(Ordering::Relaxed), Ordering::Relaxed);
    KNOWN.store(site as *const Every as *mut Every, Ordering::Relaxed);
    site.known.store(true, Ordering::Relaxed);
}

fn collect_keyed(site: &'static Keyed, cutoff: u64, force: bool, found: &mut Vec<Suppressed>) {
    let Some(&at) = site.at.get() else {
        return;
    };
    if ignored(at) {
        return;
    }
    let every = site.kind.load(Ordering::Relaxed) == KEYED_EVERY;
    let mut calls = 0;
    for slot in &site.slots {
        if slot.skipped.load(Ordering::Relaxed) == 0 {
            continue;
        }
        // A `sample` slot has no period: its count waits for a pass, or for `force`.
        if force || (every && slot.deadline_or_calls.load(Ordering::Relaxed) <= cutoff) {
            calls += slot.skipped.swap(0, Ordering::Relaxed);
        }
    }
    let limit = if every {
        "every per key"
    } else {
        "sample per key"
    };
    add(
        found,
        site as *const Keyed as usize,
        at,
        site.to,
        limit,
        calls,
    );
}

/// Adds `calls` to the entry of call site `site` (at `at`): one summary per call site and
/// scan. Sites are told apart by address: two of them can share a location (a `macro_rules!`
/// of the application's that expands to two limited calls).
fn add(
    found: &mut Vec<Suppressed>,
    site: usize,
    at: &'static Location<'static>,
    to: Destination,
    limit: &'static str,
    calls: u64,
) {
    if calls == 0 {
        return;
    }
    match found.iter_mut().find(|s| s.site == site) {
        Some(entry) => entry.calls += calls,
        None => found.push(Suppressed {
            site,
            at,
            level: to.level,
            target: to.target,
            limit,
            calls,
        }),
    }
}

/// The unit tests of `limit` check exact counts at their own call sites, while other unit
/// tests run back ends whose scans would take those counts: scans leave them alone.
fn ignored(at: &Location<'_>) -> bool {
    cfg!(test) && at.file() == super::UNIT_TESTS
}
