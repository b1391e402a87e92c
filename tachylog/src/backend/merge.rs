//! Merging the threads' rings into one stream ordered by timestamp.
//!
//! Each ring is in timestamp order on its own, so the merge repeatedly takes the ring whose next
//! record is oldest. The hard part is a ring that shows no record *yet*: its thread may have
//! taken a timestamp and be about to publish (or have been preempted right there, for a whole
//! scheduler slice). Emitting a younger record from another ring first would break the order.
//!
//! So every producer bumps an activity counter to odd before it takes its timestamp and back to
//! even after it publishes (`Ring::begin_activity`/`end_activity`), and the back end keeps, per
//! ring, a *bound*: a tick value that no unpublished record of that ring can be older than.
//! When it reads the counter at time `now` (before reading `head`):
//! - even: the thread is outside a log call, so its next record is stamped after `now`;
//! - odd and changed since the last read at `t_prev`: the call in flight began after `t_prev`;
//! - odd and unchanged: the same call is still in flight; the bound stays.
//!
//! A record is emitted only if it is not younger than any other ring's bound, nor than the
//! clock reading the drain began with (a ring registered since may come first), minus a small
//! slack (20 µs) that covers the store buffer and out-of-order execution of `rdtsc`. The cost:
//! records wait at most until every other active thread has published or been seen idle, in
//! practice microseconds. A thread stopped inside a log call (a debugger, SIGSTOP) would hold
//! everyone back, so a bound older than [`STALL_LIMIT`] is ignored: order is then best effort
//! for that one record, and nothing is ever lost.

use crate::queue::registry::{Adopted, ThreadQueue};
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long a thread may sit inside a log call before the merge stops waiting for it.
pub(crate) const STALL_LIMIT: Duration = Duration::from_millis(50);
/// Tolerance for the producer's timestamp being taken slightly before its activity store became
/// visible.
pub(crate) const SLACK: Duration = Duration::from_micros(20);

/// How far ahead of the record being emitted the ring is prefetched: a few records, so the
/// line arrives before it is needed, and no more, since 1024 bytes and beyond are slower
/// (measured: 201 ns/record at 512 bytes vs 204 at 256,
/// `cargo run --release -p tachylog-bench -- --only tachylog,backend_iteration`).
const PREFETCH_DISTANCE: usize = 512;

/// How far a drain may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DrainMode {
    /// Only records that can no longer be preceded by an unpublished one.
    Ordered,
    /// Everything published before [`Merger::snapshot`] was called, regardless of bounds (for
    /// `flush()` and shutdown, which must not wait for threads that stay busy).
    UntilSnapshot,
}

struct Source {
    queue: std::sync::Arc<ThreadQueue>,
    cursor: crate::queue::ring::ConsumerCursor,
    last_activity: usize,
    last_observed: u64,
    /// See the module docs. In ticks.
    bound: u64,
    /// When the current odd activity value was first seen.
    busy_since: u64,
    /// The timestamp of the next record, if one is visible. The record's `Frame` is not kept
    /// between runs: it borrows `cursor` until it is consumed (which is what makes consuming it
    /// twice a compile error), so a run's first record is peeked again to emit it. That second
    /// look reads the same 8-byte header, still in cache, and no atomic: the frame lies before
    /// the cached head. Within a run, each record is looked at once.
    head: Option<u64>,
    /// `head` position recorded by [`Merger::snapshot`].
    snapshot: usize,
    /// Frames advanced over but not yet released to the producer.
    unreleased: usize,
    /// The ring is in the spool: frames are released only once a cut has written them to the
    /// files and committed (see `backend::spool_cut`), not as they are read.
    held: bool,
    /// Positions of the large records (saved in the spool beside the ring) read since the
    /// last cut: their saved bodies go when the cut is committed.
    large: Vec<usize>,
    /// The cursor's position when the ring was adopted.
    #[cfg(all(unix, not(loom)))]
    adopted_at: usize,
    /// When the back end last prepared this queue's next ring after a wake (clock ticks), until
    /// it withdraws it.
    prepared_at: Option<u64>,
}

impl Source {
    fn new(adopted: Adopted, hold: bool) -> Self {
        let created = adopted.queue.created_ticks;
        let adopted_held = hold && adopted.queue.rings.is_spooled();
        let snapshot = adopted.cursor.position();
        Source {
            last_activity: adopted.queue.rings.activity(&adopted.cursor) & !1,
            queue: adopted.queue,
            cursor: adopted.cursor,
            last_observed: created,
            bound: created,
            busy_since: created,
            head: None,
            snapshot,
            unreleased: 0,
            held: adopted_held,
            large: Vec::new(),
            #[cfg(all(unix, not(loom)))]
            adopted_at: snapshot,
            prepared_at: None,
        }
    }

    fn observe(&mut self, now: u64) {
        let activity = self.queue.rings.activity(&self.cursor);
        if activity % 2 == 0 {
            self.bound = now;
        } else if activity != self.last_activity {
            self.bound = self.last_observed;
            self.busy_since = now;
        }
        self.last_activity = activity;
        self.last_observed = now;
        self.peek();
    }

    fn peek(&mut self) {
        if self.head.is_none() {
            // The frame is dropped unconsumed, so the next `peek` returns it again.
            let frame = self.queue.rings.peek(&mut self.cursor);
            self.head = frame.map(|frame| frame.read_body(read_timestamp));
        }
    }

    /// The oldest timestamp an unpublished record of this source could have.
    fn bound(&self, now: u64, slack: u64, stall: u64) -> u64 {
        if self.last_activity % 2 == 1 && now.wrapping_sub(self.busy_since) > stall {
            return u64::MAX;
        }
        self.bound.saturating_sub(slack)
    }

    /// Whether the cursor is at or past the position [`Merger::snapshot`] recorded. "Past", not
    /// only "at": peeking skips padding, and padding the producer wrote after the snapshot
    /// starts exactly at it, so the cursor can step over the snapshot without stopping there.
    /// With an equality test the drain of a flush then never ended while threads kept logging
    /// (seen as a SIGTERM drain that ran into its 5 s limit and a torn last line). Positions
    /// wrap at `usize::MAX` (continuously across a queue's chain of rings) and the cursor is
    /// never more than the chain's capacity away from the snapshot, so the wrapping difference
    /// read as signed says which is ahead.
    #[inline]
    fn reached_snapshot(&self) -> bool {
        at_or_past(self.cursor.position(), self.snapshot)
    }

    fn release(&mut self) {
        if self.unreleased > 0 {
            self.queue.rings.release(&self.cursor);
            self.unreleased = 0;
        }
    }
}

/// Whether ring position `position` is at or past `snapshot` (see
/// [`Source::reached_snapshot`]).
#[inline]
fn at_or_past(position: usize, snapshot: usize) -> bool {
    (position.wrapping_sub(snapshot) as isize) >= 0
}

/// The timestamp a record body starts with. One 8-byte load: a copy of "up to 8 bytes" is a
/// call to `memcpy` per record (callgrind: 12 instructions per record,
/// `tachylog-bench --only tachylog,backend_iteration`).
/// A body too short to hold one (never written by a producer) reads as zero-padded.
#[inline]
fn read_timestamp(body: &[MaybeUninit<u8>]) -> u64 {
    match body.first_chunk::<8>() {
        // SAFETY: every record body starts with the 8-byte timestamp the producer wrote.
        Some(head) => u64::from_ne_bytes(head.map(|byte| unsafe { byte.assume_init() })),
        None => read_short_timestamp(body),
    }
}

#[cold]
fn read_short_timestamp(body: &[MaybeUninit<u8>]) -> u64 {
    let mut bytes = [0u8; 8];
    for (b, m) in bytes.iter_mut().zip(body) {
        // SAFETY: what there is of the body was written by the producer.
        *b = unsafe { m.assume_init() };
    }
    u64::from_ne_bytes(bytes)
}

/// The set of rings the back end drains, and the merge over them.
pub(crate) struct Merger {
    sources: Vec<Source>,
    /// Whether spooled rings are held until a cut (a back end with a spool); a back end
    /// without one (a later logger that adopted them) releases them as it reads.
    hold: bool,
    slack: u64,
    stall: u64,
}

/// How far a spooled ring had been read when a cut was marked (see [`Merger::held_marks`]).
#[cfg(all(unix, not(loom)))]
pub(crate) struct HeldMark {
    /// The ring's queue, by address.
    queue: usize,
    position: usize,
    /// How many of its large records had been read.
    large: usize,
}

/// What one drain did.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Drained {
    /// Records emitted.
    pub(crate) emitted: usize,
    /// Whether records are visible but held back by the ordering rule.
    pub(crate) held_back: bool,
}

impl Merger {
    pub(crate) fn new(slack_ticks: u64, stall_ticks: u64) -> Self {
        Merger {
            sources: Vec::new(),
            hold: false,
            slack: slack_ticks,
            stall: stall_ticks,
        }
    }

    pub(crate) fn adopt(&mut self, queues: Vec<Adopted>) {
        let hold = self.hold;
        self.sources
            .extend(queues.into_iter().map(|queue| Source::new(queue, hold)));
    }

    /// Gives every queue back, with its cursor, for the next back end.
    pub(crate) fn into_queues(self) -> Vec<Adopted> {
        self.sources
            .into_iter()
            .map(|mut s| {
                s.release();
                Adopted {
                    queue: s.queue,
                    cursor: s.cursor,
                }
            })
            .collect()
    }

    /// Among the rings that can grow no more, the fullest one's unread bytes in thousandths of
    /// its capacity (0 if none): how near its producer is to the high-water mark at which it
    /// wakes a sleeping back end.
    pub(crate) fn fullest_at_full_size(&self) -> usize {
        self.sources
            .iter()
            .filter_map(|s| s.queue.rings.fill_at_full_size(&s.cursor))
            .max()
            .unwrap_or(0)
    }

    /// Has every queue's next ring allocated ahead of need, so that its producer grows
    /// without allocating (see `RingChain::prepare_successor`): for a back end that spins,
    /// which never tells a producer to grow before its ring is full.
    pub(crate) fn prepare_successors(&self) {
        for s in &self.sources {
            let _ = s.queue.rings.prepare_successor(&s.cursor);
        }
    }

    /// After a producer's wake, at `now`: has the next ring allocated for every queue at its
    /// mark. Such a producer grows its ring if it reaches the mark again within
    /// `GATE.grow_window_ticks` (see `frontend::producer`), and then takes this one instead of
    /// allocating on its own thread.
    pub(crate) fn prepare_successors_at_mark(&mut self, now: u64) {
        for s in &mut self.sources {
            if s.queue.rings.at_mark(&s.cursor) && s.queue.rings.prepare_successor(&s.cursor) {
                s.prepared_at = Some(now);
            }
        }
    }

    /// Frees the rings prepared by [`Merger::prepare_successors_at_mark`] that their producers
    /// have not taken within `window` ticks: past it they would grow no more, and a thread
    /// that logged one burst keeps its one small ring.
    pub(crate) fn withdraw_unused_successors(&mut self, now: u64, window: u64) {
        for s in &mut self.sources {
            if s.prepared_at
                .is_some_and(|at| now.wrapping_sub(at) > window)
            {
                s.queue.rings.withdraw_prepared(&s.cursor);
                s.prepared_at = None;
            }
        }
    }

    /// Records the current published position of every ring, for [`DrainMode::UntilSnapshot`].
    pub(crate) fn snapshot(&mut self) {
        for s in &mut self.sources {
            s.snapshot = s.queue.rings.published_head(&s.cursor);
        }
    }

    /// Emits up to `max` records in timestamp order through `emit(queue, frame, body)`.
    ///
    /// `now` must have been read from the clock *before* the caller last adopted new queues: a
    /// queue registered after that read holds only records younger than `now`. So in
    /// [`DrainMode::Ordered`] nothing younger than `now` (less the slack) goes out, even when
    /// every adopted ring shows a record: a thread that registered meanwhile may hold an older
    /// one. Without that cap, a drain of a whole batch from the rings it knew emitted records
    /// stamped while it ran, and the next drain's new ring came out before them.
    pub(crate) fn drain(
        &mut self,
        now: u64,
        mode: DrainMode,
        max: usize,
        mut emit: impl FnMut(&ThreadQueue, &[MaybeUninit<u8>], u32),
    ) -> Drained {
        for s in &mut self.sources {
            s.observe(now);
        }
        let mut drained = Drained::default();
        while drained.emitted < max {
            let mut best: Option<(usize, u64)> = None;
            for (i, s) in self.sources.iter().enumerate() {
                if let Some(ts) = s.head {
                    if mode == DrainMode::UntilSnapshot && s.reached_snapshot() {
                        continue;
                    }
                    if best.is_none_or(|(_, b)| ts < b) {
                        best = Some((i, ts));
                    }
                }
            }
            let Some((index, ts)) = best else { break };
            // What the other rings allow: the chosen ring may go on while its records are
            // older than every other visible head and not younger than any idle ring's bound.
            // Computed once per run, so a single busy ring (the common case) costs no scan of
            // the others per record.
            let mut older_than = u64::MAX;
            let mut up_to = match mode {
                DrainMode::Ordered => now.saturating_sub(self.slack),
                DrainMode::UntilSnapshot => u64::MAX,
            };
            let check_bounds = mode == DrainMode::Ordered && self.sources.len() > 1;
            for (i, s) in self.sources.iter().enumerate() {
                if i == index {
                    continue;
                }
                match s.head {
                    Some(_) if mode == DrainMode::UntilSnapshot && s.reached_snapshot() => {}
                    Some(head) => older_than = older_than.min(head),
                    None if check_bounds => up_to = up_to.min(s.bound(now, self.slack, self.stall)),
                    None => {}
                }
            }
            if ts > up_to {
                drained.held_back = true;
                break;
            }
            // The run: each frame's successor is peeked once, for its timestamp, and emitted
            // from that same look when the run goes on (a second look per record costs 21 of
            // the back end's instructions a record, callgrind, `throughput_mix_binary`).
            let Source {
                queue,
                cursor,
                head,
                snapshot,
                unreleased,
                held,
                large,
                ..
            } = &mut self.sources[index];
            let rings = &queue.rings;
            let mut frame = rings
                .peek(cursor)
                .expect("a visible frame stays visible until it is advanced over");
            loop {
                frame.prefetch_ahead(PREFETCH_DISTANCE);
                // What the sinks' journal notes as this record's (see `queue::spool::journal`).
                #[cfg(all(unix, not(loom)))]
                crate::queue::spool::journal::set_frame(
                    held.then(|| (queue.thread.serial, frame.position() as u64)),
                );
                frame.read_body(|body| emit(queue, body, frame.kind()));
                if *held && frame.is_boxed() {
                    large.push(frame.position());
                }
                frame.advance();
                *unreleased += 1;
                if *unreleased >= 64 && !*held {
                    rings.release(cursor);
                    *unreleased = 0;
                }
                drained.emitted += 1;
                let Some(next) = rings.peek(cursor) else {
                    *head = None;
                    break;
                };
                let ts = next.read_body(read_timestamp);
                // Ties go back to the full comparison, which prefers the lower index.
                let go_on = drained.emitted < max
                    && ts < older_than
                    && ts <= up_to
                    && !(mode == DrainMode::UntilSnapshot
                        && at_or_past(next.position(), *snapshot));
                if !go_on {
                    // Dropped unconsumed: the next look finds it again.
                    *head = Some(ts);
                    break;
                }
                frame = next;
            }
        }
        for s in self.sources.iter_mut().filter(|s| !s.held) {
            s.release();
        }
        drained
    }

    /// Makes spooled rings adopted from now on wait for a cut before their space is released
    /// (a back end with a spool's cuts).
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn hold_spooled(&mut self) {
        self.hold = true;
    }

    /// Whether any ring is held until the next cut.
    pub(crate) fn has_held(&self) -> bool {
        self.sources.iter().any(|s| s.held)
    }

    /// Writes every spooled ring's slot of cut `seq`: how far it has been read, all of which the
    /// cut wrote. Then [`Merger::release_held`] once the cut is committed.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn commit_held(&self, seq: u64) {
        for s in self.sources.iter().filter(|s| s.held) {
            if let Some(file) = s.queue.rings.spool_file() {
                file.commit(seq, s.cursor.position());
            }
        }
    }

    /// How far each spooled ring has been read now: a cut to commit once what was read is
    /// written ([`Merger::commit_marks`], [`Merger::release_marks`]), while reading goes on.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn held_marks(&self) -> Vec<HeldMark> {
        self.sources
            .iter()
            .filter(|s| s.held)
            .map(|s| HeldMark {
                queue: std::sync::Arc::as_ptr(&s.queue) as usize,
                position: s.cursor.position(),
                large: s.large.len(),
            })
            .collect()
    }

    /// Writes every spooled ring's slot of cut `seq`: at its mark, or where it was adopted
    /// for a ring adopted since the marks were taken (none of its records was written yet).
    /// Every ring's slot is written: recovery reads a ring whose slot is not the committed
    /// cut's from its start.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn commit_marks(&self, seq: u64, marks: &[HeldMark]) {
        for s in self.sources.iter().filter(|s| s.held) {
            let queue = std::sync::Arc::as_ptr(&s.queue) as usize;
            let position = marks
                .iter()
                .find(|m| m.queue == queue)
                .map_or(s.adopted_at, |m| m.position);
            if let Some(file) = s.queue.rings.spool_file() {
                file.commit(seq, position);
            }
        }
    }

    /// Gives each spooled ring's frames before its mark back to its producer, and removes the
    /// saved bodies of the large records among them.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn release_marks(&mut self, marks: &[HeldMark]) {
        for s in self.sources.iter_mut().filter(|s| s.held) {
            let Some(mark) = marks
                .iter()
                .find(|m| m.queue == std::sync::Arc::as_ptr(&s.queue) as usize)
            else {
                continue;
            };
            s.queue.rings.release_to(&s.cursor, mark.position);
            if let Some(file) = s.queue.rings.spool_file() {
                for position in s.large.drain(..mark.large.min(s.large.len())) {
                    file.remove_large(position);
                }
            }
        }
    }

    /// Gives the spooled rings' frames read so far back to their producers, and removes the
    /// saved bodies of the large records among them.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn release_held(&mut self) {
        for s in self.sources.iter_mut().filter(|s| s.held) {
            s.release();
            if let Some(file) = s.queue.rings.spool_file() {
                for position in s.large.drain(..) {
                    file.remove_large(position);
                }
            }
        }
    }

    /// Drops the rings of exited threads that are fully drained.
    pub(crate) fn reap(&mut self) {
        self.sources.retain_mut(|s| {
            // A spooled ring read past its last cut keeps its file until the next one.
            if !s.queue.closed.load(Ordering::Acquire) || (s.held && s.unreleased > 0) {
                return true;
            }
            s.peek();
            s.head.is_some() || s.queue.dropped.load(Ordering::Relaxed) != 0
        });
    }

    /// Calls `notice(queue, newly_dropped)` for every ring that dropped records since the last
    /// call. The count is taken out of the queue (swapped to zero), so each loss is reported
    /// exactly once, by whichever back end sees it, across logger restarts too.
    pub(crate) fn report_drops(&mut self, mut notice: impl FnMut(&ThreadQueue, u64)) {
        for s in &mut self.sources {
            if s.queue.dropped.load(Ordering::Relaxed) != 0 {
                let dropped = s.queue.dropped.swap(0, Ordering::Relaxed);
                notice(&s.queue, dropped);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::queue::chain::{ChainProducer, RingChain};
    use crate::queue::registry::ThreadInfo;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicBool, AtomicU64};
    use std::sync::Arc;

    /// Publishes one 16-byte record body: its timestamp, then its ring's number.
    fn publish(producer: &mut ChainProducer, ts: u64, id: u64) {
        let (ring, producer) = producer.parts();
        ring.begin_activity(producer);
        let reservation = ring
            .try_reserve(producer, 16, 1)
            .expect("room for the test's records");
        // SAFETY: a fresh, uncommitted reservation of 16 bytes.
        unsafe {
            ring.write_body(&reservation, 0, &ts.to_ne_bytes());
            ring.write_body(&reservation, 8, &id.to_ne_bytes());
        }
        ring.commit(producer, reservation);
        ring.end_activity(producer);
    }

    /// Rings holding records with the given timestamps (each ring's in ascending order), their
    /// producers idle, adopted by a merger with no slack.
    fn merger_over(rings: &[Vec<u64>]) -> (Merger, Vec<ChainProducer>) {
        let mut merger = Merger::new(0, u64::MAX);
        let mut producers = Vec::new();
        for (id, stamps) in rings.iter().enumerate() {
            let (rings, mut producer, consumer) = RingChain::new(1 << 16, 1 << 16);
            for &ts in stamps {
                publish(&mut producer, ts, id as u64);
            }
            let queue = Arc::new(ThreadQueue {
                rings,
                thread: ThreadInfo::new(format!("t{id}"), id as u64),
                closed: AtomicBool::new(false),
                dropped: AtomicU64::new(0),
                created_ticks: 0,
            });
            merger.adopt(vec![Adopted {
                queue,
                cursor: consumer,
            }]);
            producers.push(producer);
        }
        (merger, producers)
    }

    /// (timestamp, ring) of every record, as a merge by timestamp that prefers the lower ring on
    /// ties gives them.
    fn expected(rings: &[Vec<u64>]) -> Vec<(u64, u64)> {
        let mut all: Vec<(u64, u64)> = rings
            .iter()
            .enumerate()
            .flat_map(|(id, stamps)| stamps.iter().map(move |&ts| (ts, id as u64)))
            .collect();
        all.sort();
        all
    }

    fn drain_all(merger: &mut Merger, mode: DrainMode, max: usize) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if mode == DrainMode::UntilSnapshot {
            merger.snapshot();
        }
        loop {
            let drained = merger.drain(u64::MAX / 2, mode, max, |_, body, _| {
                let word = |i: usize| {
                    let mut bytes = [0u8; 8];
                    for (b, m) in bytes.iter_mut().zip(&body[i..i + 8]) {
                        // SAFETY: the test wrote all 16 bytes of every body.
                        *b = unsafe { m.assume_init() };
                    }
                    u64::from_ne_bytes(bytes)
                };
                out.push((word(0), word(8)));
            });
            if drained.emitted == 0 {
                return out;
            }
        }
    }

    fn rings() -> impl Strategy<Value = Vec<Vec<u64>>> {
        // Few distinct timestamps, so ties across rings are common.
        proptest::collection::vec(
            proptest::collection::vec(0u64..40, 0..60).prop_map(|mut v| {
                v.sort();
                v
            }),
            1..5,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Runs from one ring stop where another ring's record is as old or older, so the output
        /// is the reference merge in both modes and whatever the drain's batch size.
        #[test]
        fn drains_in_timestamp_order_lower_ring_first_on_ties(rings in rings(), max in 1usize..70) {
            for mode in [DrainMode::Ordered, DrainMode::UntilSnapshot] {
                let (mut merger, _producers) = merger_over(&rings);
                prop_assert_eq!(drain_all(&mut merger, mode, max), expected(&rings));
            }
        }
    }

    /// A snapshot taken where the producer later writes padding (its next record did not fit
    /// before the end of the ring) still stops the drain there: the records published after it
    /// wait for an ordinary drain. Over two full turns of the ring, so the padding falls at the
    /// snapshot at least once (a 24-byte frame does not divide the ring's size).
    #[test]
    fn a_snapshot_stops_the_drain_even_where_padding_follows_it() {
        let (mut merger, mut producers) = merger_over(&[vec![]]);
        let capacity = 1 << 16;
        for ts in 0..(2 * capacity / 24) as u64 {
            merger.snapshot();
            publish(&mut producers[0], ts, 0);
            let after_snapshot =
                merger.drain(u64::MAX / 2, DrainMode::UntilSnapshot, 100, |_, _, _| {});
            assert_eq!(
                after_snapshot.emitted, 0,
                "record {ts}, published after the snapshot, was drained"
            );
            let ordinary = merger.drain(u64::MAX / 2, DrainMode::Ordered, 100, |_, _, _| {});
            assert_eq!(ordinary.emitted, 1, "record {ts}");
        }
    }

    /// A ring the merger does not know yet (its thread registered after the drain read the
    /// clock) can only hold records younger than that reading: the drain emits nothing
    /// younger, however many records the known rings show.
    #[test]
    fn records_stamped_after_the_drain_began_wait_for_rings_registered_meanwhile() {
        let (mut merger, _producers) = merger_over(&[vec![10, 20, 30]]);
        let mut out = Vec::new();
        let drained = merger.drain(15, DrainMode::Ordered, 100, |_, body, _| {
            out.push(read_timestamp(body))
        });
        assert_eq!((drained.emitted, drained.held_back), (1, true));
        let (late, _late_producers) = merger_over(&[vec![17]]);
        merger.adopt(late.into_queues());
        while merger
            .drain(40, DrainMode::Ordered, 100, |_, body, _| {
                out.push(read_timestamp(body))
            })
            .emitted
            > 0
        {}
        assert_eq!(out, [10, 17, 20, 30]);
    }

    #[test]
    fn a_ring_inside_a_log_call_holds_back_younger_records() {
        let (mut merger, mut producers) = merger_over(&[vec![10, 20, 30], vec![]]);
        // The second thread begins a call at tick 15 (first seen then) and has not published.
        merger.sources[1].observe(5);
        let (ring, cursor) = producers[1].parts();
        ring.begin_activity(cursor);
        let mut out = Vec::new();
        let drained = merger.drain(15, DrainMode::Ordered, 100, |_, _, _| out.push(()));
        // Its bound is 5, the last time it was seen outside a call: nothing younger goes out.
        assert_eq!(drained.emitted, 0);
        assert!(drained.held_back);
        let (ring, cursor) = producers[1].parts();
        ring.end_activity(cursor);
        // Seen idle at 25: records up to 25 go, 30 waits (the thread's next call could still
        // be stamped before it).
        let drained = merger.drain(25, DrainMode::Ordered, 100, |_, _, _| out.push(()));
        assert_eq!((drained.emitted, drained.held_back), (2, true));
        let drained = merger.drain(35, DrainMode::Ordered, 100, |_, _, _| out.push(()));
        assert_eq!((drained.emitted, drained.held_back), (1, false));
    }
}
