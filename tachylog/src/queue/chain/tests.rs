use super::*;
use proptest::prelude::*;

/// Publishes a frame whose body is `len` copies of `value`, growing the chain when the current
/// ring is full or too small, as the producer's slow path does. Returns `false` when the chain
/// is at its maximum and full.
fn push(producer: &mut ChainProducer, value: u8, len: usize) -> bool {
    if len > producer.ring().max_inline_body() && !producer.grow(len) {
        return false;
    }
    let reservation = match producer.try_reserve(len, 1) {
        Some(r) => r,
        None if producer.grow(len) => producer.try_reserve(len, 1).expect("a new ring has room"),
        None => return false,
    };
    let (ring, cursor) = producer.parts();
    // SAFETY: a fresh reservation of `len` bytes.
    unsafe { ring.write_body(&reservation, 0, &vec![value; len]) };
    ring.commit(cursor, reservation);
    true
}

/// Reads every visible frame: (first byte, body length rounded to the frame alignment).
fn pop_all(chain: &RingChain, cursor: &mut ConsumerCursor) -> Vec<(u8, usize)> {
    let mut out = Vec::new();
    while let Some(frame) = chain.peek(cursor) {
        // SAFETY: the test wrote every body byte.
        out.push(frame.read_body(|b| (unsafe { b[0].assume_init() }, b.len())));
        frame.advance();
        chain.release(cursor);
    }
    out
}

#[test]
fn a_full_ring_grows_and_the_consumer_follows_in_order() {
    let (chain, mut producer, mut consumer) = RingChain::new(256, 4096);
    for value in 0..40u8 {
        assert!(push(&mut producer, value, 24), "record {value}");
    }
    assert!(producer.capacity() > 256, "the ring grew");
    let read = pop_all(&chain, &mut consumer);
    assert_eq!(
        read.iter().map(|r| r.0).collect::<Vec<_>>(),
        (0..40).collect::<Vec<_>>()
    );
    assert_eq!(
        chain.oldest_capacity(),
        producer.capacity(),
        "the used-up rings were freed"
    );
}

#[test]
fn a_frame_too_large_for_the_ring_gets_a_ring_that_holds_it() {
    let (chain, mut producer, mut consumer) = RingChain::new(256, 1 << 16);
    assert!(push(&mut producer, 1, 8));
    assert!(push(&mut producer, 2, 3000));
    assert!(producer.ring().max_inline_body() >= 3000);
    assert_eq!(pop_all(&chain, &mut consumer), vec![(1, 8), (2, 3000)]);
}

#[test]
fn growth_stops_at_the_maximum() {
    let (_chain, mut producer, _consumer) = RingChain::new(256, 1024);
    assert!(producer.grow(0));
    assert!(producer.grow(0));
    assert_eq!(producer.capacity(), 1024);
    assert!(!producer.grow(0));
    assert!(!producer.grow(2000), "a body no ring may hold");
    assert_eq!(producer.capacity(), 1024);
    let mut pushed = 0;
    while push(&mut producer, 7, 24) {
        pushed += 1;
    }
    assert!(
        (30..=32).contains(&pushed),
        "a full 1 KiB ring holds about 32 frames, got {pushed}"
    );
}

#[test]
fn the_high_water_mark_follows_the_ring() {
    let (chain, mut producer, mut consumer) = RingChain::new(1024, 1 << 16);
    let mut pushed = 0;
    while !producer.over_high_water() {
        assert!(push(&mut producer, 1, 24));
        pushed += 1;
    }
    assert_eq!(pushed, 256 / 32, "a quarter of 1 KiB in 32-byte frames");
    assert_eq!(pop_all(&chain, &mut consumer).len(), pushed);
    // The producer's copy of the consumer's position is stale until it looks again.
    assert!(producer.over_high_water());
    assert_eq!(producer.refresh_fill(), (consumer.position(), false));
    assert!(producer.grow(0));
    assert!(!producer.over_high_water(), "an empty new ring");
}

#[test]
fn snapshot_positions_are_continuous_across_rings() {
    let (chain, mut producer, mut consumer) = RingChain::new(256, 1 << 16);
    assert!(push(&mut producer, 1, 24));
    assert!(producer.grow(0));
    assert!(push(&mut producer, 2, 24));
    // The consumer still reads the first ring; the published position is the second's.
    let published = chain.published_head(&consumer);
    assert_eq!(
        published, 64,
        "two 32-byte frames, the second in the successor"
    );
    assert_eq!(pop_all(&chain, &mut consumer), vec![(1, 24), (2, 24)]);
    assert_eq!(consumer.position(), published);
}

#[test]
fn activity_is_read_from_the_ring_being_written() {
    let (chain, mut producer, consumer) = RingChain::new(256, 1 << 16);
    let (ring, cursor) = producer.parts();
    ring.begin_activity(cursor);
    ring.end_activity(cursor);
    assert!(producer.grow(0));
    assert_eq!(chain.activity(&consumer), 2, "the counter carried over");
    let (ring, cursor) = producer.parts();
    ring.begin_activity(cursor);
    assert_eq!(
        chain.activity(&consumer),
        3,
        "a call in flight in the successor is seen"
    );
}

/// A ring prepared by the consumer is the one the producer grows into, with positions that
/// carry on; none is prepared for a producer that has published less than half its ring or
/// may not grow; one too small for the frame at hand, or left behind in a ring the producer
/// moved on from, is freed (Miri reports a leak otherwise).
#[test]
fn the_producer_grows_into_the_ring_the_consumer_prepared() {
    let slot = |producer: &ChainProducer| producer.ring().prepared.load(Ordering::Acquire);
    let (chain, mut producer, mut consumer) = RingChain::new(256, 4096);
    assert!(push(&mut producer, 1, 24));
    assert!(!chain.prepare_successor(&consumer));
    assert!(
        slot(&producer).is_null(),
        "32 of 256 bytes published: no need yet"
    );
    for value in 2..=4 {
        assert!(push(&mut producer, value, 24));
    }
    assert!(chain.prepare_successor(&consumer));
    let prepared = slot(&producer);
    assert!(!prepared.is_null(), "half the ring published");
    assert!(!chain.prepare_successor(&consumer));
    assert_eq!(slot(&producer), prepared, "one prepared ring at a time");
    assert!(producer.grow(0));
    assert!(std::ptr::eq(producer.ring(), prepared));
    assert_eq!(producer.capacity(), 512);
    assert!(push(&mut producer, 5, 24));
    let values = |read: Vec<(u8, usize)>| read.iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(values(pop_all(&chain, &mut consumer)), vec![1, 2, 3, 4, 5]);

    // A prepared ring too small for a 300-byte body is freed; one that holds it is allocated.
    for value in 6..=12 {
        assert!(push(&mut producer, value, 24));
    }
    assert!(chain.prepare_successor(&consumer));
    // SAFETY: a prepared ring is alive while it sits in the slot of the producer's ring.
    assert_eq!(unsafe { &*slot(&producer) }.capacity(), 1024);
    assert!(push(&mut producer, 13, 300));
    assert_eq!(producer.capacity(), 2048);
    assert_eq!(
        values(pop_all(&chain, &mut consumer)),
        (6..=13).collect::<Vec<_>>()
    );

    // Nothing is prepared for a ring at the maximum.
    let (chain, mut producer, consumer) = RingChain::new(256, 512);
    assert!(producer.grow(0));
    for value in 0..10 {
        assert!(push(&mut producer, value, 24));
    }
    assert!(!chain.prepare_successor(&consumer));
    assert!(slot(&producer).is_null());

    // A ring prepared for a ring the producer has just left (the consumer looked before the
    // producer linked its successor) goes with that ring.
    let (chain, mut producer, mut consumer) = RingChain::new(256, 4096);
    assert!(push(&mut producer, 1, 24));
    let left = producer.ring() as *const Ring;
    assert!(producer.grow(0));
    let (late, _, _) = Ring::new(512);
    // SAFETY: `left` is alive until the consumer retires it below.
    unsafe { &*left }
        .prepared
        .store(leak_ring(late).as_ptr(), Ordering::Release);
    assert!(push(&mut producer, 2, 24));
    assert_eq!(values(pop_all(&chain, &mut consumer)), vec![1, 2]);
}

/// The mark is a quarter of the producer's ring unread; a prepared ring the producer has not
/// taken is withdrawn and freed (Miri reports a leak otherwise), and one it has taken stays.
#[test]
fn a_ring_at_its_mark_and_a_prepared_ring_withdrawn() {
    let (chain, mut producer, mut consumer) = RingChain::new(256, 4096);
    assert!(push(&mut producer, 1, 24));
    assert!(!chain.at_mark(&consumer), "32 of 256 bytes");
    assert!(push(&mut producer, 2, 24));
    assert!(chain.at_mark(&consumer), "64 of 256 bytes");
    assert!(push(&mut producer, 3, 24) && push(&mut producer, 4, 24));
    assert!(chain.prepare_successor(&consumer));
    chain.withdraw_prepared(&consumer);
    assert!(producer.ring().prepared.load(Ordering::Acquire).is_null());
    assert_eq!(pop_all(&chain, &mut consumer).len(), 4);
    assert!(!chain.at_mark(&consumer), "read");
    assert!(chain.prepare_successor(&consumer));
    assert!(producer.grow(0));
    chain.withdraw_prepared(&consumer);
    assert_eq!(
        producer.capacity(),
        512,
        "the taken ring stays the producer's"
    );
    assert!(push(&mut producer, 5, 24));
    assert_eq!(pop_all(&chain, &mut consumer).len(), 1);
}

/// Dropping a chain with unread frames in several rings, one of them boxed, frees each ring
/// and the boxed block exactly once: a double free aborts the test process, and Miri reports a
/// leak.
#[test]
fn dropping_a_chain_frees_rings_and_unread_boxed_frames_once() {
    let (chain, mut producer, _consumer) = RingChain::new(256, 1 << 16);
    assert!(push(&mut producer, 1, 24));
    let (ring, cursor) = producer.parts();
    ring.push_boxed(cursor, vec![9u8; 100_000].into_boxed_slice(), 1, |_| {})
        .expect("room for a boxed frame");
    assert_eq!(ring.boxed_bytes(), 100_000);
    assert!(producer.grow(0));
    assert!(push(&mut producer, 2, 24));
    drop(chain);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
    /// Any interleaving of pushes (of any size a ring may hold), reads, growths and rings
    /// prepared ahead or withdrawn delivers every frame once, in order, whole.
    #[test]
    fn every_frame_arrives_once_in_order(
        ops in proptest::collection::vec((0u8..6, 1usize..600), 1..200)
    ) {
        let (chain, mut producer, mut consumer) = RingChain::new(64, 8192);
        let mut sent = Vec::new();
        let mut received = Vec::new();
        let mut next = 0u8;
        for (op, len) in ops {
            match op {
                0 | 1 => {
                    if push(&mut producer, next, len) {
                        sent.push((next, len.div_ceil(8) * 8));
                        next = next.wrapping_add(1);
                    }
                }
                2 => received.extend(pop_all(&chain, &mut consumer)),
                3 => {
                    let _ = chain.prepare_successor(&consumer);
                }
                4 => chain.withdraw_prepared(&consumer),
                _ => {
                    producer.grow(0);
                }
            }
        }
        received.extend(pop_all(&chain, &mut consumer));
        prop_assert_eq!(received, sent);
    }
}
