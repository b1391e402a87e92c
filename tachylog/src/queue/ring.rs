//! A bounded single-producer single-consumer ring of variable-length frames.
//!
//! Contract:
//! - Memory is allocated once, in [`Ring::new`]; pushing and popping never allocate, except that
//!   a frame too large for the ring ([`Ring::max_inline_body`]) travels as a heap block that the
//!   producer allocates and the consumer frees (counted in [`Ring::boxed_bytes`]).
//! - Exactly one thread produces (`try_reserve`/`commit`/`push_boxed`) and exactly one thread
//!   consumes (`peek`, then `Frame::read_body`/`Frame::advance`, then `release`). Both sides are
//!   wait-free: a full or empty ring is reported, never waited on; what to do then is the
//!   caller's policy.
//! - The consumer sees a frame as a [`Frame`], a move-only token that borrows the consumer
//!   cursor and is consumed by advancing over it. Each frame is thus advanced over (and a boxed
//!   body freed) at most once and never read after, and this is checked by the compiler, not by
//!   the callers' care; the type's documentation shows what does not compile.
//! - A frame is published by one release store of `head`; the consumer frees space by one
//!   release store of `tail`. Each side keeps a possibly stale copy of the other's index and
//!   reloads it only when the copy says "full" or "empty", so in the steady state neither side
//!   touches the other's cache line per frame.
//! - Every frame is contiguous in memory: when a frame does not fit before the end of the
//!   storage, the producer writes a padding frame up to the end and starts again at offset 0.
//!   Likewise a frame of up to 4 KiB never straddles a page boundary of the (page-aligned)
//!   storage: it is padded to the next page instead (see [`Ring::padding_before`] for why).
//!
//! Indices `head` and `tail` count bytes since creation and wrap at `usize::MAX`; all
//! arithmetic on them is wrapping, and `head - tail` (wrapping) is always in `0 ..= capacity`.

use super::sync::{AtomicPtr, AtomicUsize, Ordering, Storage};
use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;

/// Frame kind of the filler written when a frame does not fit before the end of the storage.
pub(crate) const KIND_PADDING: u32 = 0;
/// Bit set in a frame's kind when its body lives in a heap block rather than in the ring.
const BOXED_FLAG: u32 = 1 << 31;
/// Bytes of the frame header: `u32` frame length (header included), `u32` kind.
pub(crate) const FRAME_HEADER: usize = 8;
/// Frames start on 8-byte boundaries so that headers are aligned.
pub(crate) const FRAME_ALIGN: usize = 8;
/// Bytes of a boxed frame's body in the ring: the block's pointer and length.
const BOXED_BODY: usize = 16;
/// Bytes of a boxed frame in the ring, header included.
const BOXED_FRAME: usize = (FRAME_HEADER + BOXED_BODY + FRAME_ALIGN - 1) & !(FRAME_ALIGN - 1);
/// Frames of up to a page never straddle a page boundary of the storage, which is aligned to
/// one ([`super::sync::STORAGE_ALIGN`]).
const PAGE: usize = super::sync::STORAGE_ALIGN;

/// Fields written by the producer, on their own cache line.
struct ProducerSide {
    /// Bytes published so far (wrapping). Written by the producer with `Release` after the
    /// frame's bytes; read by the consumer with `Acquire`.
    head: AtomicUsize,
    /// Odd while the producer is between [`Ring::begin_activity`] and [`Ring::end_activity`]
    /// (that is, inside a log call after it took its timestamp's place in line); even
    /// otherwise. The back end reads it to know whether a record with an older timestamp may
    /// still appear (see `backend::merge`). Written by the producer only.
    activity: AtomicUsize,
}

/// Fields written by the consumer, on their own cache line.
struct ConsumerSide {
    /// Bytes consumed so far (wrapping). Written by the consumer with `Release` once it no longer
    /// reads the freed bytes; read by the producer with `Acquire` before reusing them.
    tail: AtomicUsize,
}

/// The producer's private view of the ring. Owned by the producing thread only.
#[derive(Debug)]
pub(crate) struct ProducerCursor {
    /// Equal to the ring's `head`: only this producer writes `head`.
    head: usize,
    /// A copy of the ring's `tail`, possibly stale (older), which is safe: it under-reports free
    /// space.
    cached_tail: usize,
    /// Equal to the ring's `activity`.
    activity: usize,
}

impl ProducerCursor {
    /// Bytes published and not yet released, as far as this cursor knows: its copy of `tail`
    /// may be stale, so this over-reports, never under-reports.
    #[inline(always)]
    pub(crate) fn cached_fill(&self) -> usize {
        self.head.wrapping_sub(self.cached_tail)
    }

    /// The consumer's position as this cursor last read it.
    pub(crate) fn cached_tail(&self) -> usize {
        self.cached_tail
    }
}

/// The consumer's private view of the ring. Owned by the consuming thread only.
#[derive(Debug)]
pub(crate) struct ConsumerCursor {
    /// Position of the next frame to read; `tail <= read <= head` (wrapping). Frames between the
    /// ring's `tail` and `read` have been read but not yet released.
    read: usize,
    /// A copy of the ring's `head`, possibly stale, which is safe: it under-reports data.
    cached_head: usize,
}

impl ConsumerCursor {
    /// A cursor at `position` of a ring that holds nothing before it (a successor ring).
    pub(super) fn at(position: usize) -> Self {
        ConsumerCursor {
            read: position,
            cached_head: position,
        }
    }

    /// Position of the next frame to read (padding not yet skipped).
    #[inline]
    pub(crate) fn position(&self) -> usize {
        self.read
    }
}

/// Space reserved by [`Ring::try_reserve`], to be filled and then [`Ring::commit`]ted.
///
/// Neither `Clone` nor `Copy`, and `commit` takes it by value: a second commit of the same
/// reservation would move `head` back over frames the consumer may already have read and
/// freed.
#[derive(Debug)]
pub(crate) struct Reservation {
    /// Storage offset of the frame body.
    pub(crate) body_offset: usize,
    /// Value of `head` once the frame is published.
    new_head: usize,
}

/// The frame at the consumer's read position: a move-only token, returned by [`Ring::peek`] and
/// consumed by [`Frame::advance`].
///
/// A boxed frame's heap block is freed by `advance`, and an inline frame's bytes may be
/// overwritten by the producer once they are released, so each frame must be advanced over at
/// most once and its body never read after that. The token carries that rule in its type
/// instead of in a comment:
/// - it is neither `Clone` nor `Copy`, and `advance` takes it by value, so it cannot be advanced
///   twice or read after it was advanced;
/// - it holds the consumer cursor's `&mut` borrow, so while it lives there is no second token
///   for the same frame (`peek` needs the cursor), and no `release` that would give its bytes
///   back to the producer;
/// - it holds the ring it came from, so its body is read from, and its block freed against,
///   that ring and no other.
///
/// Dropping a token without advancing leaves the frame unread: the next `peek` returns it again.
/// The back end's merge relies on this to look at a frame's timestamp and emit it later.
///
/// What the types do not check is that the cursor passed to `peek` (or `release`) is the one
/// [`Ring::new`] returned with this ring; the consumer cursor is not `Clone`, so with that
/// pairing there is one cursor per ring and the borrow above makes the token unique.
///
/// The compiler checks all this; `ring/frame_is_consumed_once.rs` has the examples that show
/// it (one that compiles, and each misuse above, which does not).
pub(crate) struct Frame<'a> {
    /// The ring the frame was read from.
    ring: &'a Ring,
    /// The consumer's cursor, at the frame's start (padding before it already skipped). Held for
    /// the token's whole life: see the type's documentation.
    cursor: &'a mut ConsumerCursor,
    /// The producer's kind, without the boxed flag.
    kind: u32,
    /// Length of the body in bytes. Private, like every field: a body length changed after
    /// `peek` would make `read_body` read past the body.
    body_len: usize,
    location: BodyLocation,
    /// Value of the consumer's `read` after this frame.
    next: usize,
}

/// Where a frame's body is. Not `Copy`, so that the pointer of a boxed body is not duplicated
/// by accident: the `Frame` that owns it is the only handle.
enum BodyLocation {
    Inline { offset: usize },
    Boxed { ptr: *mut u8 },
}

/// What [`Ring::locate`] found at the consumer's read position: a frame, without the borrow
/// of the cursor that a [`Frame`] holds.
pub(super) struct Located {
    kind: u32,
    body_len: usize,
    location: BodyLocation,
    next: usize,
}

/// See the module documentation.
pub(crate) struct Ring {
    producer: CachePadded<ProducerSide>,
    consumer: CachePadded<ConsumerSide>,
    /// The ring the producer moved on to when this one was too small (see `queue::chain`), or
    /// null. Stored once, by the producer (`Release`), after its last commit here; read by the
    /// consumer (`Acquire`), which then sees every frame of this ring.
    pub(super) next: AtomicPtr<Ring>,
    /// A larger ring the consumer allocated ahead of need, for the producer to take over when
    /// this one is too small (see `queue::chain`), or null. Set by the consumer (`Release`),
    /// taken by the producer (`Acquire`); the one left here when the ring is freed goes with
    /// it.
    pub(super) prepared: AtomicPtr<Ring>,
    /// Heap bytes held by boxed frames not yet consumed. Incremented by the producer before
    /// publishing a boxed frame, decremented by the consumer after freeing it.
    boxed_bytes: CachePadded<AtomicUsize>,
    storage: Storage,
    /// `storage.len() - 1`; the capacity is a power of two.
    mask: usize,
    /// Frames of up to this many bytes never cross a multiple of it: the smaller of a 4 KiB
    /// page and the capacity (see [`Ring::try_reserve`]). A power of two that divides the
    /// capacity.
    segment: usize,
}

impl Ring {
    /// A ring of `capacity` bytes, rounded up to a power of two and at least 64.
    pub(crate) fn new(capacity: usize) -> (Ring, ProducerCursor, ConsumerCursor) {
        Self::with_start_index(capacity, 0)
    }

    /// Like [`Ring::new`] with both indices starting at `start`, so that tests can exercise
    /// the wrap-around of the indices at `usize::MAX`.
    pub(crate) fn with_start_index(
        capacity: usize,
        start: usize,
    ) -> (Ring, ProducerCursor, ConsumerCursor) {
        let capacity = capacity.max(64).next_power_of_two();
        Self::over(Storage::new(capacity), start)
    }

    /// A ring over `storage` (a power of two of at least 64 bytes), both indices at `start`
    /// rounded down to a frame boundary (frames are aligned relative to offset 0).
    fn over(storage: Storage, start: usize) -> (Ring, ProducerCursor, ConsumerCursor) {
        let capacity = storage.len();
        let start = start & !(FRAME_ALIGN - 1);
        let ring = Ring {
            producer: CachePadded::new(ProducerSide {
                head: AtomicUsize::new(start),
                activity: AtomicUsize::new(0),
            }),
            consumer: CachePadded::new(ConsumerSide {
                tail: AtomicUsize::new(start),
            }),
            next: AtomicPtr::new(std::ptr::null_mut()),
            prepared: AtomicPtr::new(std::ptr::null_mut()),
            boxed_bytes: CachePadded::new(AtomicUsize::new(0)),
            storage,
            mask: capacity - 1,
            segment: capacity.min(PAGE),
        };
        let producer = ProducerCursor {
            head: start,
            cached_tail: start,
            activity: 0,
        };
        let consumer = ConsumerCursor {
            read: start,
            cached_head: start,
        };
        (ring, producer, consumer)
    }

    /// A ring built in place at the start of a spool file's mapping, `mapping`, with its
    /// storage `capacity` bytes (a power of two) from `storage_offset` on; returns the ring and
    /// where its `head` and `tail` sit, as byte offsets from `mapping`, for recovery to read.
    ///
    /// # Safety
    /// `mapping` is valid for reads and writes of `storage_offset + capacity` bytes for as long
    /// as the ring lives, page-aligned, with `storage_offset` a multiple of a page no smaller
    /// than the ring itself, and nothing else uses those bytes. The ring must be dropped in
    /// place (`drop_in_place`), never through a `Box`.
    #[cfg(all(unix, not(loom)))]
    pub(crate) unsafe fn in_mapping(
        mapping: std::ptr::NonNull<u8>,
        storage_offset: usize,
        capacity: usize,
        start: usize,
    ) -> (
        std::ptr::NonNull<Ring>,
        ProducerCursor,
        ConsumerCursor,
        usize,
        usize,
    ) {
        assert!(capacity.is_power_of_two() && capacity >= 64);
        assert!(std::mem::size_of::<Ring>() <= storage_offset / 2);
        assert!(std::mem::align_of::<Ring>() <= PAGE);
        // SAFETY: inside the mapping (contract), page-aligned.
        let storage_ptr =
            unsafe { std::ptr::NonNull::new_unchecked(mapping.as_ptr().add(storage_offset)) };
        // SAFETY: the storage part of the mapping, ours for the ring's life (contract).
        let storage = unsafe { Storage::in_mapping(storage_ptr, capacity) };
        let (ring, producer, consumer) = Self::over(storage, start);
        let at = mapping.cast::<Ring>();
        // SAFETY: the mapping's start is aligned for a ring and large enough (asserted), and
        // unused.
        unsafe { at.as_ptr().write(ring) };
        // SAFETY: just written.
        let placed = unsafe { at.as_ref() };
        let base = mapping.as_ptr() as usize;
        let head_offset = &placed.producer.head as *const AtomicUsize as usize - base;
        let tail_offset = &placed.consumer.tail as *const AtomicUsize as usize - base;
        (at, producer, consumer, head_offset, tail_offset)
    }

    /// Makes this ring, built by [`Ring::new`] and never written, take over from the one
    /// `producer` writes: its indices start where the producer's head stands and its activity
    /// counter goes on from the producer's, so the consumer's positions and the merge's view of
    /// the thread carry over; returns the producer's cursor in it. The exclusive borrow is the
    /// proof that nobody else holds it yet: it is published afterwards, by the `Release` store
    /// of the old ring's `next`.
    pub(super) fn take_over(&mut self, producer: &ProducerCursor) -> ProducerCursor {
        debug_assert_eq!(
            producer.activity % 2,
            0,
            "a ring is replaced between log calls"
        );
        let start = producer.head & !(FRAME_ALIGN - 1);
        debug_assert_eq!(start, producer.head, "heads are always frame-aligned");
        self.producer.head.store(start, Ordering::Relaxed);
        self.producer
            .activity
            .store(producer.activity, Ordering::Relaxed);
        self.consumer.tail.store(start, Ordering::Relaxed);
        ProducerCursor {
            head: start,
            cached_tail: start,
            activity: producer.activity,
        }
    }

    /// Size of the storage in bytes.
    pub(crate) fn capacity(&self) -> usize {
        self.storage.len()
    }

    /// The largest body that travels inside the ring; larger ones must use [`Ring::push_boxed`].
    ///
    /// A quarter of the capacity: any frame up to that size fits in an empty ring wherever the
    /// head stands (padding included), and big frames cannot monopolise the ring.
    pub(crate) fn max_inline_body(&self) -> usize {
        self.capacity() / 4 - FRAME_HEADER
    }

    /// Heap bytes held by boxed frames that the consumer has not freed yet.
    pub(crate) fn boxed_bytes(&self) -> usize {
        self.boxed_bytes.load(Ordering::Relaxed)
    }

    /// Bytes published and not yet released by the consumer (a snapshot).
    #[cfg(test)]
    pub(crate) fn used_bytes(&self) -> usize {
        let head = self.producer.head.load(Ordering::Acquire);
        let tail = self.consumer.tail.load(Ordering::Acquire);
        head.wrapping_sub(tail)
    }

    // ----- producer side -------------------------------------------------------------------

    /// Reserves a frame for a body of `body_len` bytes (at most [`Ring::max_inline_body`]) and
    /// writes its header, after a padding frame when the frame would otherwise cross a segment
    /// boundary or the end of the storage. Returns `None` when the ring has no room now.
    #[inline(always)]
    pub(crate) fn try_reserve(
        &self,
        cursor: &mut ProducerCursor,
        body_len: usize,
        kind: u32,
    ) -> Option<Reservation> {
        debug_assert!(body_len <= self.max_inline_body().max(BOXED_BODY));
        debug_assert!(kind != KIND_PADDING && kind & BOXED_FLAG == 0);
        let frame_len = (FRAME_HEADER + body_len + FRAME_ALIGN - 1) & !(FRAME_ALIGN - 1);
        let offset = cursor.head & self.mask;
        let to_segment_end = self.segment - (offset & (self.segment - 1));
        let padding = if frame_len <= to_segment_end {
            0
        } else {
            self.padding_before(offset, frame_len, to_segment_end)
        };
        let needed = padding + frame_len;
        if cursor.head.wrapping_sub(cursor.cached_tail) + needed > self.capacity() {
            cursor.cached_tail = self.consumer.tail.load(Ordering::Acquire);
            if cursor.head.wrapping_sub(cursor.cached_tail) + needed > self.capacity() {
                return None;
            }
        }
        let frame_offset = if padding == 0 {
            offset
        } else {
            // SAFETY: `offset .. offset + padding` is free (checked above) and only this
            // producer writes free space; the consumer cannot read it before `head` moves past
            // it.
            unsafe { self.write_header(offset, padding, KIND_PADDING) };
            (offset + padding) & self.mask
        };
        // SAFETY: as above, for the frame's range.
        unsafe { self.write_header(frame_offset, frame_len, kind) };
        Some(Reservation {
            body_offset: frame_offset + FRAME_HEADER,
            new_head: cursor.head.wrapping_add(needed),
        })
    }

    /// The padding a frame of `frame_len` bytes needs at storage offset `offset`, which has
    /// `to_segment_end` bytes before the next segment boundary and cannot hold it.
    ///
    /// A frame that fits in a segment starts at the next boundary, so that no frame of up to a
    /// page straddles a page boundary. Why: a store split across two pages is slow on the VMs we
    /// measure on. `memcpy`'s two overlapping 16-byte stores of a 21-byte argument that crosses
    /// a page take 100 ns or more in nearly every such call (40 ns anywhere else), and such
    /// calls are about 0.1 % of the `latency` workload's, enough to set its p99.9
    /// (`cargo run --release -p tachylog-bench -- --only tachylog,latency`). Padding costs half
    /// a frame per 4 KiB on average (under 1 % of the ring).
    /// A larger frame cannot avoid page boundaries; it only must not run past the end of the
    /// storage.
    #[inline(always)]
    fn padding_before(&self, offset: usize, frame_len: usize, to_segment_end: usize) -> usize {
        if frame_len <= self.segment {
            return to_segment_end;
        }
        let to_end = self.capacity() - offset;
        if frame_len <= to_end {
            0
        } else {
            to_end
        }
    }

    /// Writes `bytes` into a reserved body at `offset` bytes from its start.
    ///
    /// # Safety
    /// `reservation` comes from this ring's producer, is not committed yet, and
    /// `offset + bytes.len()` does not exceed the body length it was reserved for.
    #[inline(always)]
    pub(crate) unsafe fn write_body(&self, reservation: &Reservation, offset: usize, bytes: &[u8]) {
        // SAFETY: the range belongs to the uncommitted reservation (contract).
        unsafe { self.storage.write(reservation.body_offset + offset, bytes) }
    }

    /// A pointer to the start of a reserved body, for writing it in place.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn body_ptr(&self, reservation: &Reservation) -> *mut u8 {
        self.storage.ptr_at(reservation.body_offset)
    }

    /// Publishes a reserved frame to the consumer.
    #[inline(always)]
    pub(crate) fn commit(&self, cursor: &mut ProducerCursor, reservation: Reservation) {
        cursor.head = reservation.new_head;
        self.producer.head.store(cursor.head, Ordering::Release);
    }

    /// Publishes `body` as a frame whose bytes stay on the heap, for bodies larger than
    /// [`Ring::max_inline_body`]. Gives the body back when the ring has no room for the small
    /// in-ring part now. `before_publish` is called with the frame's position once its place
    /// in the ring is reserved, before it is published: a spooled ring saves the body under
    /// that position there (see `queue::spool`).
    pub(crate) fn push_boxed(
        &self,
        cursor: &mut ProducerCursor,
        body: Box<[u8]>,
        kind: u32,
        before_publish: impl FnOnce(usize),
    ) -> Result<(), Box<[u8]>> {
        let Some(reservation) = self.try_reserve(cursor, BOXED_BODY, kind) else {
            return Err(body);
        };
        before_publish(reservation.new_head.wrapping_sub(BOXED_FRAME));
        let len = body.len();
        let ptr = Box::into_raw(body) as *mut u8;
        // Re-mark the frame as boxed; `try_reserve` refuses the flag to keep its fast path
        // simple.
        let header_offset = reservation.body_offset - FRAME_HEADER;
        // SAFETY: the header and body belong to our uncommitted reservation.
        unsafe {
            self.storage
                .write(header_offset + 4, &(kind | BOXED_FLAG).to_ne_bytes());
            self.write_body(&reservation, 0, &(ptr as usize).to_ne_bytes());
            self.write_body(&reservation, 8, &len.to_ne_bytes());
        }
        self.boxed_bytes.fetch_add(len, Ordering::Relaxed);
        self.commit(cursor, reservation);
        Ok(())
    }

    /// Reloads the consumer's position into the producer's `cursor` (`Acquire`) and returns the
    /// bytes published and not yet released.
    pub(crate) fn refresh_fill(&self, cursor: &mut ProducerCursor) -> usize {
        cursor.cached_tail = self.consumer.tail.load(Ordering::Acquire);
        cursor.cached_fill()
    }

    /// Marks the start of a log call's critical section; see [`ProducerSide::activity`].
    #[inline(always)]
    pub(crate) fn begin_activity(&self, cursor: &mut ProducerCursor) {
        cursor.activity = cursor.activity.wrapping_add(1);
        self.producer
            .activity
            .store(cursor.activity, Ordering::Relaxed);
    }

    /// Marks the end of a log call's critical section, after its frame is committed.
    #[inline(always)]
    pub(crate) fn end_activity(&self, cursor: &mut ProducerCursor) {
        cursor.activity = cursor.activity.wrapping_add(1);
        self.producer
            .activity
            .store(cursor.activity, Ordering::Release);
    }

    /// The producer's activity counter (odd: inside a log call). Read by the consumer before
    /// it reads `head`.
    pub(crate) fn activity(&self) -> usize {
        self.producer.activity.load(Ordering::Acquire)
    }

    /// # Safety
    /// `offset .. offset + FRAME_HEADER` is owned by the producer.
    #[inline(always)]
    unsafe fn write_header(&self, offset: usize, frame_len: usize, kind: u32) {
        let mut header = [0u8; FRAME_HEADER];
        header[..4].copy_from_slice(&(frame_len as u32).to_ne_bytes());
        header[4..].copy_from_slice(&kind.to_ne_bytes());
        // SAFETY: forwarded contract.
        unsafe { self.storage.write(offset, &header) }
    }

    // ----- consumer side -------------------------------------------------------------------

    /// The next unread frame, skipping padding, or `None` when everything published was read.
    ///
    /// The frame borrows `cursor` until it is advanced over or dropped; see [`Frame`].
    // `#[inline]` on the consumer's per-record calls (`peek`, `kind`, `advance`, `position`):
    // the worker's merge, in another module, does not inline them without the hint, which
    // costs the back-end-bound `seed_1m` 6% (measured: 0.213 vs 0.226 µs/record,
    // `cargo run --release -p tachylog-bench -- --only tachylog,seed_1m`).
    #[inline]
    pub(crate) fn peek<'a>(&'a self, cursor: &'a mut ConsumerCursor) -> Option<Frame<'a>> {
        let located = self.locate(cursor)?;
        Some(self.frame(cursor, located))
    }

    /// What [`Ring::peek`] finds, without borrowing `cursor` beyond the call (padding before
    /// the frame is skipped), so that a caller may look again after `None`.
    #[inline]
    pub(super) fn locate(&self, cursor: &mut ConsumerCursor) -> Option<Located> {
        loop {
            if cursor.read == cursor.cached_head {
                cursor.cached_head = self.producer.head.load(Ordering::Acquire);
                if cursor.read == cursor.cached_head {
                    return None;
                }
            }
            let offset = cursor.read & self.mask;
            // SAFETY: `read < head`, so the header at `read` was published by the release store
            // of `head` we acquired, and the producer does not touch it until we release it.
            let (frame_len, kind) = unsafe {
                self.storage.read(offset, FRAME_HEADER, |h| {
                    let len = u32::from_ne_bytes(init_bytes(&h[..4]));
                    let kind = u32::from_ne_bytes(init_bytes(&h[4..]));
                    (len as usize, kind)
                })
            };
            debug_assert!(frame_len >= FRAME_HEADER && frame_len % FRAME_ALIGN == 0);
            let next = cursor.read.wrapping_add(frame_len);
            if kind == KIND_PADDING {
                cursor.read = next;
                continue;
            }
            let body_offset = offset + FRAME_HEADER;
            let (kind, body_len, location) = if kind & BOXED_FLAG != 0 {
                // SAFETY: as above; the body holds the pointer and length the producer wrote.
                let (ptr, len) = unsafe {
                    self.storage.read(body_offset, BOXED_BODY, |b| {
                        (
                            usize::from_ne_bytes(init_bytes(&b[..8])),
                            usize::from_ne_bytes(init_bytes(&b[8..16])),
                        )
                    })
                };
                let ptr = ptr as *mut u8;
                (kind & !BOXED_FLAG, len, BodyLocation::Boxed { ptr })
            } else {
                let location = BodyLocation::Inline {
                    offset: body_offset,
                };
                (kind, frame_len - FRAME_HEADER, location)
            };
            return Some(Located {
                kind,
                body_len,
                location,
                next,
            });
        }
    }

    /// The token for the frame `located` found at `cursor`'s position in this ring.
    #[inline]
    pub(super) fn frame<'a>(
        &'a self,
        cursor: &'a mut ConsumerCursor,
        located: Located,
    ) -> Frame<'a> {
        let Located {
            kind,
            body_len,
            location,
            next,
        } = located;
        Frame {
            ring: self,
            cursor,
            kind,
            body_len,
            location,
            next,
        }
    }

    /// The producer's published position now (`Acquire`): frames before it are readable.
    pub(crate) fn published_head(&self) -> usize {
        self.producer.head.load(Ordering::Acquire)
    }

    /// Asks the CPU to start loading the ring's bytes `distance` past the cursor: records the
    /// back end reaches in a few hundred nanoseconds. Only a hint; it reads nothing and cannot
    /// fault. When the rings have filled while the back end was busy, each record is a cache
    /// miss otherwise (measured: ~20 ns of the back end's ~210 ns per record with 1M records
    /// queued, `backend_iteration`).
    #[inline(always)]
    pub(crate) fn prefetch(&self, cursor: &ConsumerCursor, distance: usize) {
        #[cfg(all(target_arch = "x86_64", not(loom)))]
        {
            let offset = cursor.read.wrapping_add(distance) & self.mask;
            let address = self.storage.ptr_at(offset) as *const i8;
            // SAFETY: `_mm_prefetch` only hints the cache; it dereferences nothing and does
            // not fault, and `address` lies within the storage anyway (masked offset).
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address)
            };
        }
        #[cfg(not(all(target_arch = "x86_64", not(loom))))]
        let _ = (cursor, distance);
    }

    /// Gives every frame advanced over back to the producer.
    pub(crate) fn release(&self, cursor: &ConsumerCursor) {
        self.consumer.tail.store(cursor.read, Ordering::Release);
    }

    /// Gives the frames before `position` back to the producer, where `position` is a frame
    /// boundary the consumer has read past and not yet released (a spooled ring's frames
    /// written by a cut while later ones are being read). A position outside that range
    /// releases nothing: the producer may never reuse a byte the consumer may still read.
    #[cfg_attr(not(all(unix, not(loom))), allow(dead_code))]
    pub(crate) fn release_to(&self, cursor: &ConsumerCursor, position: usize) {
        let tail = self.consumer.tail.load(Ordering::Relaxed);
        if cursor.read.wrapping_sub(position) <= cursor.read.wrapping_sub(tail) {
            self.consumer.tail.store(position, Ordering::Release);
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // Free the heap blocks of boxed frames nobody consumed. `&mut self` means both sides are
        // gone, so reading from the tail is race-free.
        let mut cursor = ConsumerCursor {
            read: self.consumer.tail.load(Ordering::Acquire),
            cached_head: self.consumer.tail.load(Ordering::Acquire),
        };
        while let Some(frame) = self.peek(&mut cursor) {
            frame.advance();
        }
    }
}

impl Frame<'_> {
    /// The producer's kind (never [`KIND_PADDING`]).
    #[inline]
    pub(crate) fn kind(&self) -> u32 {
        self.kind
    }

    /// Runs `f` on the body. Inline bodies may carry up to 7 bytes of alignment padding at the
    /// end. `&self` keeps the token, and so the body, alive for the call.
    pub(crate) fn read_body<R>(&self, f: impl FnOnce(&[MaybeUninit<u8>]) -> R) -> R {
        match &self.location {
            // SAFETY: the frame is published (see `peek`), and not released: releasing needs the
            // cursor, which this token borrows until it is consumed.
            BodyLocation::Inline { offset } => unsafe {
                self.ring.storage.read(*offset, self.body_len, f)
            },
            BodyLocation::Boxed { ptr } => {
                // SAFETY: the producer leaked a `Box<[u8]>` of exactly this pointer and length
                // and gave up all access to it when publishing. Only `advance` frees it, and
                // `advance` consumes this token, which is the only one for the frame (it holds
                // the `&mut` of the ring's one consumer cursor; see the type's documentation),
                // so the block is alive while `&self` is.
                let body = unsafe {
                    std::slice::from_raw_parts(*ptr as *const MaybeUninit<u8>, self.body_len)
                };
                f(body)
            }
        }
    }

    /// Whether the body travelled in a heap block (it was larger than
    /// [`Ring::max_inline_body`]).
    #[inline]
    pub(crate) fn is_boxed(&self) -> bool {
        matches!(self.location, BodyLocation::Boxed { .. })
    }

    /// See [`Ring::prefetch`]: `distance` past this frame, in its ring.
    #[inline(always)]
    pub(crate) fn prefetch_ahead(&self, distance: usize) {
        self.ring.prefetch(self.cursor, distance);
    }

    /// The frame's position in the ring (what `before_publish` of [`Ring::push_boxed`] was
    /// given for a boxed frame).
    #[inline]
    pub(crate) fn position(&self) -> usize {
        self.cursor.read
    }

    /// Moves past the frame, freeing its heap block if it has one. Its ring space is given back
    /// to the producer only by [`Ring::release`], boxed or not: a spooled ring keeps every
    /// frame, and the position a boxed body was saved under, until a cut has written it.
    #[inline]
    pub(crate) fn advance(self) {
        let Frame {
            ring,
            cursor,
            body_len,
            location,
            next,
            ..
        } = self;
        if let BodyLocation::Boxed { ptr } = location {
            if !ptr.is_null() {
                // SAFETY: see `read_body`. This consumes the only token for the frame and moves
                // `read` past it, so no later token refers to it, and the pointer left in the
                // ring is cleared below: the block is freed exactly once.
                drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, body_len)) });
                ring.boxed_bytes.fetch_sub(body_len, Ordering::Relaxed);
            }
            // The frame stays in the ring until it is released; `Drop`, which frees the blocks
            // of the frames from `tail` on, must find no pointer to free here.
            let body_offset = (cursor.read & ring.mask) + FRAME_HEADER;
            // SAFETY: the frame lies between `tail` and `read`, which the consumer owns until
            // it releases them: the producer does not touch these bytes now.
            unsafe { ring.storage.write(body_offset, &0usize.to_ne_bytes()) };
        }
        cursor.read = next;
    }
}

/// Reads initialised bytes out of ring memory. Frame headers are always fully written by the
/// producer before publication, so these bytes are initialised.
#[inline(always)]
fn init_bytes<const N: usize>(bytes: &[MaybeUninit<u8>]) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, b) in out.iter_mut().zip(bytes) {
        // SAFETY: the caller passes header bytes, which the producer wrote in full.
        *o = unsafe { b.assume_init() };
    }
    out
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(doctest)]
mod frame_is_consumed_once;

#[cfg(all(test, loom))]
mod loom_tests;
