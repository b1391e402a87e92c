//! A thread's queue: a chain of rings that grows with what the thread logs.
//!
//! A thread that logs a few records should not hold a megabyte, and one that logs at full speed
//! should not wait on a small ring. So a queue starts as one small ring ([`INITIAL_CAPACITY`],
//! its pages touched at creation like every ring's) and the producer replaces it by a larger one
//! when it needs more room, up to the configured maximum:
//! - the producer takes the successor (at least twice the size, large enough for the frame at
//!   hand) from the current ring's `prepared` slot, where the back end leaves one ready for a
//!   producer that is likely to need it ([`RingChain::prepare_successor`]), or else allocates
//!   it; it links it from the current ring's `next` with one release store after its last
//!   commit there, and writes only to the successor from then on;
//! - the consumer reads the oldest ring; when that one shows nothing and has a successor, it
//!   looks once more (the `next` it acquired makes every frame of that ring visible), then frees
//!   it and continues in the successor at the same position: the successor's indices start where
//!   the old ring's head stopped, so positions are continuous across the chain.
//!
//! Contract:
//! - One producer ([`ChainProducer`], owned by the logging thread) and one consumer (whoever
//!   holds the chain's one [`ConsumerCursor`]), as for a single [`Ring`]. Growing without a
//!   prepared ring allocates, on the producer's cold path only; preparing one allocates on the
//!   consumer's side; nothing else here allocates or locks.
//! - A ring is freed by the consumer, and only once it has a successor: the producer never
//!   touches a ring again after linking its successor, and the consumer's methods take its
//!   cursor, which a [`Frame`] borrows, so no frame outlives its ring.
//! - Memory: at most the maximum capacity plus the smaller rings not yet drained (less than the
//!   maximum again), and only while the thread logs that much; a prepared ring (at most the
//!   maximum, and only while the current ring is smaller) adds up to as much again.
//!
//! Layer 1 (see `ARCHITECTURE.md`): part of the queue; imports only the rest of `queue`.

use super::ring::{ConsumerCursor, Frame, ProducerCursor, Reservation, Ring, FRAME_HEADER};
use super::sync::{AtomicPtr, Ordering};
use std::ptr::NonNull;
use std::sync::atomic::AtomicUsize;

/// The size of a thread's first ring: enough for about a hundred typical records (56 to 80
/// bytes each) between two drains of the back end, two pages of memory.
pub(crate) const INITIAL_CAPACITY: usize = 8 << 10;

/// Bytes of ring storage alive in the process, for [`ring_bytes`].
static RING_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Bytes of ring storage the process holds now, over every thread's queue.
pub(crate) fn ring_bytes() -> usize {
    RING_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Moves `ring` to the heap, counted in [`ring_bytes`]; freed by [`free_ring`].
fn leak_ring(ring: Ring) -> NonNull<Ring> {
    RING_BYTES.fetch_add(ring.capacity(), std::sync::atomic::Ordering::Relaxed);
    NonNull::from(Box::leak(Box::new(ring)))
}

/// Frees `ring` and the ring prepared for it, if one is left there.
///
/// # Safety
/// `ring` came from [`leak_ring`], is freed once, and nothing refers to it any more.
unsafe fn free_ring(ring: NonNull<Ring>) {
    // SAFETY: forwarded contract: a leaked box, freed once.
    let ring = unsafe { Box::from_raw(ring.as_ptr()) };
    if let Some(prepared) = NonNull::new(ring.prepared.load(Ordering::Acquire)) {
        // SAFETY: a prepared ring came from `leak_ring` and belongs to the slot it sits in,
        // which goes with `ring`: nobody else can reach it any more.
        unsafe { free_ring(prepared) };
    }
    RING_BYTES.fetch_sub(ring.capacity(), std::sync::atomic::Ordering::Relaxed);
}

/// A spooled queue's one ring and the file mapping it lives in (see `queue::spool`).
#[cfg(all(unix, not(loom)))]
struct Spooled {
    ring: super::spool::RingFile,
}

/// The consumer's side of a thread's queue, shared with the producer through the queue's `Arc`.
pub(crate) struct RingChain {
    /// The oldest ring not yet freed, the one the consumer reads; never null. Written by the
    /// consumer only (it frees the rings); the producer never reads it.
    oldest: AtomicPtr<Ring>,
    /// Set when the queue's one ring lives in a spool file rather than on the heap: it never
    /// grows, and it is dropped in place.
    #[cfg(all(unix, not(loom)))]
    spooled: Option<Spooled>,
    /// The largest ring the producer may grow to: a producer whose ring is that large can only
    /// wake the back end when it fills.
    max_capacity: usize,
}

// SAFETY: the rings are `Sync` and reached through the chain only by the one producer (its
// current ring) and the one consumer (see the module contract).
unsafe impl Send for RingChain {}
// SAFETY: as above.
unsafe impl Sync for RingChain {}

/// The producer's side: the ring it writes (the newest) and its cursor there.
pub(crate) struct ChainProducer {
    /// The newest ring. Alive while the chain is: the consumer frees only rings that have a
    /// successor, and this one gets a successor only from this producer, which then moves on.
    ring: NonNull<Ring>,
    /// The producer's cursor in `ring`.
    cursor: ProducerCursor,
    /// A quarter of `ring`'s capacity, kept here so the check after each record reads no
    /// shared memory (see [`ChainProducer::over_high_water`]).
    high_water: usize,
    /// The largest ring this chain may grow to (a power of two).
    max_capacity: usize,
}

// SAFETY: the producer side is moved to another thread only with the whole producer (a
// one-off producer, or a test); it is used by one thread at a time.
unsafe impl Send for ChainProducer {}

impl RingChain {
    /// A queue whose first ring holds `initial` bytes and whose rings may grow to `max` (both
    /// rounded up to a power of two, `initial` to at most `max`).
    pub(crate) fn new(initial: usize, max: usize) -> (RingChain, ChainProducer, ConsumerCursor) {
        let max_capacity = max.max(64).next_power_of_two();
        let (ring, producer, consumer) = Ring::new(initial.min(max_capacity));
        let ring = leak_ring(ring);
        let chain = RingChain {
            oldest: AtomicPtr::new(ring.as_ptr()),
            #[cfg(all(unix, not(loom)))]
            spooled: None,
            max_capacity,
        };
        let producer = ChainProducer {
            ring,
            cursor: producer,
            high_water: 0,
            max_capacity,
        };
        let producer = ChainProducer {
            high_water: producer.capacity() / 4,
            ..producer
        };
        (chain, producer, consumer)
    }

    /// A queue whose one ring is built in `file`'s mapping and never grows (see
    /// `queue::spool`): what it holds survives the process.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn spooled(
        mut file: super::spool::RingFile,
    ) -> (RingChain, ChainProducer, ConsumerCursor) {
        let capacity = file.capacity();
        // SAFETY: the file's mapping holds a page for the ring's control block, then `capacity`
        // bytes of storage; it lives in `Spooled` for as long as the chain, which drops the ring
        // in place before it.
        let (ring, producer, consumer, head, tail) =
            unsafe { Ring::in_mapping(file.base(), super::spool::layout::PAGE, capacity, 0) };
        file.set_positions(head, tail, 0);
        RING_BYTES.fetch_add(capacity, std::sync::atomic::Ordering::Relaxed);
        let chain = RingChain {
            oldest: AtomicPtr::new(ring.as_ptr()),
            spooled: Some(Spooled { ring: file }),
            max_capacity: capacity,
        };
        let producer = ChainProducer {
            ring,
            cursor: producer,
            high_water: capacity / 4,
            max_capacity: capacity,
        };
        (chain, producer, consumer)
    }

    /// Whether the queue's ring lives in the spool.
    pub(crate) fn is_spooled(&self) -> bool {
        #[cfg(all(unix, not(loom)))]
        return self.spooled.is_some();
        #[cfg(not(all(unix, not(loom))))]
        return false;
    }

    /// The spool file of a spooled queue.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn spool_file(&self) -> Option<&super::spool::RingFile> {
        self.spooled.as_ref().map(|s| &s.ring)
    }

    /// The ring the consumer reads.
    #[inline]
    fn oldest(&self) -> &Ring {
        // SAFETY: never null, and freed only by `retire_oldest`, which the consumer calls with
        // its `&mut` cursor while nothing borrowed from the ring is alive (see the module
        // contract).
        unsafe { &*self.oldest.load(Ordering::Relaxed) }
    }

    /// The ring the producer writes now, as far as the consumer can tell.
    fn newest(&self, _consumer: &ConsumerCursor) -> &Ring {
        let mut ring = self.oldest();
        loop {
            let next = ring.next.load(Ordering::Acquire);
            if next.is_null() {
                return ring;
            }
            // SAFETY: a linked successor is alive until the consumer frees it, and the consumer
            // (whose cursor this call borrows) is not freeing anything during it.
            ring = unsafe { &*next };
        }
    }

    /// The next unread frame, moving on to (and freeing what precedes) a successor ring when
    /// the oldest one is used up. Consumer only; see [`Ring::peek`].
    #[inline]
    pub(crate) fn peek<'a>(&'a self, cursor: &'a mut ConsumerCursor) -> Option<Frame<'a>> {
        loop {
            let ring = self.oldest();
            if let Some(located) = ring.locate(cursor) {
                return Some(ring.frame(cursor, located));
            }
            let next = ring.next.load(Ordering::Acquire);
            if next.is_null() {
                return None;
            }
            // The producer linked `next` after its last commit here: this look sees them all.
            if let Some(located) = ring.locate(cursor) {
                return Some(ring.frame(cursor, located));
            }
            // SAFETY: `next` was just read non-null from the oldest ring, which is used up.
            unsafe { self.retire_oldest(cursor, next) };
        }
    }

    /// Frees the used-up oldest ring and moves the consumer to its successor `next`.
    ///
    /// # Safety
    /// The oldest ring's `next` is `next` (non-null), and `cursor` has read every frame of it.
    #[cold]
    unsafe fn retire_oldest(&self, cursor: &mut ConsumerCursor, next: *mut Ring) {
        let old = self.oldest.load(Ordering::Relaxed);
        self.oldest.store(next, Ordering::Relaxed);
        // The successor's indices begin where this ring's head stopped, which the cursor has
        // reached.
        *cursor = ConsumerCursor::at(cursor.position());
        // SAFETY: `old` came from `leak_ring`; the producer left it for good when it linked
        // `next`, and the consumer, which this is, holds no frame of it (the `&mut` cursor).
        unsafe { free_ring(NonNull::new_unchecked(old)) };
    }

    /// Gives every frame advanced over back to the producer. Consumer only.
    #[inline]
    pub(crate) fn release(&self, cursor: &ConsumerCursor) {
        self.oldest().release(cursor);
    }

    /// Gives the frames before `position` back to the producer; see [`Ring::release_to`].
    /// Consumer only, for a spooled queue's one ring.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn release_to(&self, cursor: &ConsumerCursor, position: usize) {
        self.oldest().release_to(cursor, position);
    }

    /// The producer's activity counter (see [`Ring::activity`]), from the ring it writes now.
    /// Consumer only.
    pub(crate) fn activity(&self, cursor: &ConsumerCursor) -> usize {
        self.newest(cursor).activity()
    }

    /// The producer's published position in the ring it writes now. Consumer only.
    pub(crate) fn published_head(&self, cursor: &ConsumerCursor) -> usize {
        self.newest(cursor).published_head()
    }

    /// How close a producer that can no longer grow its ring is to its high-water mark: the
    /// bytes published and not read yet, in thousandths of the ring's capacity; `None` while
    /// the ring may still grow (its producer grows it rather than wake the back end again).
    /// Consumer only.
    pub(crate) fn fill_at_full_size(&self, cursor: &ConsumerCursor) -> Option<usize> {
        let newest = self.newest(cursor);
        let capacity = newest.capacity();
        if capacity < self.max_capacity {
            return None;
        }
        let unread = newest.published_head().wrapping_sub(cursor.position());
        Some(unread.min(capacity) * 1000 / capacity.max(1))
    }

    /// Allocates, off the producer's thread, the ring its producer will move to when the one
    /// it writes is too small: twice as large, its pages touched, left in that ring's
    /// `prepared` slot for [`ChainProducer::grow`] to take, so that growing costs the producer
    /// no allocation and no page fault. Only for a producer that may still grow and has
    /// already published half its ring's capacity (a thread that logs a few records keeps its
    /// one small ring). Consumer only; a ring prepared for a ring that the producer has left
    /// meanwhile is freed with it. Returns whether it prepared one.
    pub(crate) fn prepare_successor(&self, cursor: &ConsumerCursor) -> bool {
        #[cfg(all(unix, not(loom)))]
        if self.spooled.is_some() {
            return false;
        }
        let newest = self.newest(cursor);
        let capacity = newest.capacity() * 2;
        if capacity > self.max_capacity
            || !newest.prepared.load(Ordering::Relaxed).is_null()
            || newest.published_head() < capacity / 4
        {
            return false;
        }
        let (ring, _, _) = Ring::new(capacity);
        let ring = leak_ring(ring);
        // Release: the ring's construction (and its touched pages) happens before the
        // producer's `Acquire` take.
        let offered = newest.prepared.compare_exchange(
            std::ptr::null_mut(),
            ring.as_ptr(),
            Ordering::Release,
            Ordering::Relaxed,
        );
        if offered.is_err() {
            // SAFETY: just leaked here and never shared.
            unsafe { free_ring(ring) };
        }
        offered.is_ok()
    }

    /// Whether the ring the producer writes holds a quarter of its capacity or more unread:
    /// the mark at which its producer wakes a sleeping back end. Consumer only.
    pub(crate) fn at_mark(&self, cursor: &ConsumerCursor) -> bool {
        let newest = self.newest(cursor);
        newest.published_head().wrapping_sub(cursor.position()) >= newest.capacity() / 4
    }

    /// Frees the ring prepared for the producer's current ring if the producer has not taken
    /// it. Consumer only.
    pub(crate) fn withdraw_prepared(&self, cursor: &ConsumerCursor) {
        let newest = self.newest(cursor);
        let prepared = newest
            .prepared
            .swap(std::ptr::null_mut(), Ordering::Acquire);
        if let Some(prepared) = NonNull::new(prepared) {
            // SAFETY: the swap took it out of the slot, where the producer can no longer take
            // it; it was never published.
            unsafe { free_ring(prepared) };
        }
    }

    /// The capacity of the ring the consumer reads.
    #[cfg(test)]
    pub(crate) fn oldest_capacity(&self) -> usize {
        self.oldest().capacity()
    }
}

impl Drop for RingChain {
    fn drop(&mut self) {
        // `&mut self`: both sides are gone. Each ring's own drop frees its unread boxed frames.
        #[cfg(all(unix, not(loom)))]
        if self.spooled.is_some() {
            let ring = self.oldest.load(Ordering::Acquire);
            if let Some(ring) = NonNull::new(ring) {
                // SAFETY: the one ring, built in place in the mapping `spooled` still holds,
                // dropped once; its storage does not free the mapped bytes.
                unsafe { std::ptr::drop_in_place(ring.as_ptr()) };
                if let Some(spooled) = &self.spooled {
                    RING_BYTES.fetch_sub(
                        spooled.ring.capacity(),
                        std::sync::atomic::Ordering::Relaxed,
                    );
                }
            }
            return;
        }
        let mut ring = self.oldest.load(Ordering::Acquire);
        while let Some(current) = NonNull::new(ring) {
            // SAFETY: every ring of the chain is alive and reached once in this walk.
            ring = unsafe { current.as_ref() }.next.load(Ordering::Acquire);
            // SAFETY: from `leak_ring`, freed once, and nothing refers to it any more.
            unsafe { free_ring(current) };
        }
    }
}

impl ChainProducer {
    /// The ring the producer writes.
    #[inline(always)]
    pub(crate) fn ring(&self) -> &Ring {
        // SAFETY: see the field's invariant.
        unsafe { self.ring.as_ref() }
    }

    /// The current ring and the cursor into it, borrowed together.
    #[inline(always)]
    pub(crate) fn parts(&mut self) -> (&Ring, &mut ProducerCursor) {
        // SAFETY: see the field's invariant; the ring is a separate allocation from `self`.
        (unsafe { self.ring.as_ref() }, &mut self.cursor)
    }

    /// Reserves room for a frame in the current ring; see [`Ring::try_reserve`].
    #[inline(always)]
    pub(crate) fn try_reserve(&mut self, body_len: usize, kind: u32) -> Option<Reservation> {
        let (ring, cursor) = self.parts();
        ring.try_reserve(cursor, body_len, kind)
    }

    /// Whether the current ring holds a quarter of its capacity or more, counting from the
    /// possibly stale copy of the consumer's position: `true` may be refuted by
    /// [`ChainProducer::refresh_fill`], `false` is certain. Only the producer's own fields.
    #[inline(always)]
    pub(crate) fn over_high_water(&self) -> bool {
        self.cursor.cached_fill() >= self.high_water
    }

    /// Reloads the consumer's position; returns it, and whether the ring is still at or over
    /// its high-water mark.
    pub(crate) fn refresh_fill(&mut self) -> (usize, bool) {
        let (ring, cursor) = self.parts();
        ring.refresh_fill(cursor);
        (self.cursor.cached_tail(), self.over_high_water())
    }

    /// The current ring's capacity.
    pub(crate) fn capacity(&self) -> usize {
        self.ring().capacity()
    }

    /// Replaces the current ring by one at least twice as large whose frames can hold a body of
    /// `body_len` bytes inline. Returns `false`, changing nothing, when that would exceed the
    /// maximum capacity. Takes the ring the consumer prepared when it is large enough;
    /// otherwise allocates and touches the new ring's pages: a cold path. Must be called
    /// between log calls (the activity counter even), with no reservation pending: `commit`
    /// publishes to the current ring, whatever ring a reservation came from.
    #[cold]
    pub(crate) fn grow(&mut self, body_len: usize) -> bool {
        let mut capacity = self.capacity() * 2;
        while capacity / 4 < body_len + FRAME_HEADER {
            capacity *= 2;
        }
        if capacity > self.max_capacity {
            return false;
        }
        let prepared = self
            .ring()
            .prepared
            .swap(std::ptr::null_mut(), Ordering::Acquire);
        let (successor, cursor) = match NonNull::new(prepared) {
            Some(mut prepared) => {
                // SAFETY: the consumer leaked it for this slot and let go of it there; the swap
                // gave it to us alone.
                let ring = unsafe { prepared.as_mut() };
                if ring.capacity() >= capacity {
                    let cursor = ring.take_over(&self.cursor);
                    (prepared, cursor)
                } else {
                    // SAFETY: ours alone (above), never published.
                    unsafe { free_ring(prepared) };
                    self.allocate_successor(capacity)
                }
            }
            None => self.allocate_successor(capacity),
        };
        // Release: every commit to the current ring happened before; the consumer acquires
        // `next` and then sees them all, and frees this ring, which we never touch again.
        self.ring()
            .next
            .store(successor.as_ptr(), Ordering::Release);
        self.ring = successor;
        self.cursor = cursor;
        // SAFETY: the successor is alive (see the field's invariant).
        self.high_water = unsafe { successor.as_ref() }.capacity() / 4;
        true
    }

    /// A new ring of `capacity` bytes to take over from the current one, on the heap.
    fn allocate_successor(&self, capacity: usize) -> (NonNull<Ring>, ProducerCursor) {
        let (mut successor, _, _) = Ring::new(capacity);
        let cursor = successor.take_over(&self.cursor);
        (leak_ring(successor), cursor)
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
