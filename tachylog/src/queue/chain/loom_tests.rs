//! Model check of a ring's replacement: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p tachylog --release --lib loom`.

use super::*;
use loom::sync::Arc;

/// Pushes one 8-byte frame of `value`, replacing the ring when it is full.
fn push(producer: &mut ChainProducer, value: u8) {
    let reservation = match producer.try_reserve(8, 1) {
        Some(r) => r,
        None => {
            assert!(producer.grow(8), "the model's maximum is never reached");
            producer.try_reserve(8, 1).expect("a new ring has room")
        }
    };
    let (ring, cursor) = producer.parts();
    // SAFETY: a fresh reservation of 8 bytes.
    unsafe { ring.write_body(&reservation, 0, &[value; 8]) };
    ring.commit(cursor, reservation);
}

/// A chain whose 64-byte ring may grow to 256 bytes, and a thread producing frames 1 to 5 into
/// it (four 16-byte frames fill the first ring), which hands its producer back when done.
fn growing_producer() -> (
    Arc<RingChain>,
    ConsumerCursor,
    loom::thread::JoinHandle<ChainProducer>,
) {
    let (chain, mut producer, consumer) = RingChain::new(64, 256);
    let handle = loom::thread::spawn(move || {
        for value in 1..=5u8 {
            push(&mut producer, value);
        }
        producer
    });
    (Arc::new(chain), consumer, handle)
}

/// A producer that outgrows its 64-byte ring (four 16-byte frames) while the consumer reads:
/// the consumer sees every frame once, in order and whole, follows the producer into the new
/// ring, and frees the old one only after its last frame (loom reports a race on the storage
/// or on `next` otherwise).
#[test]
fn loom_the_consumer_follows_a_growing_producer() {
    loom::model(|| {
        let (chain, mut consumer, handle) = growing_producer();
        let mut expected = 1u8;
        let mut read = |consumer: &mut ConsumerCursor| {
            while let Some(frame) = chain.peek(consumer) {
                let whole = frame.read_body(|b| {
                    // SAFETY: the producer wrote all 8 bytes before publishing.
                    b[..8]
                        .iter()
                        .all(|x| unsafe { x.assume_init() } == expected)
                });
                assert!(whole, "frame {expected} torn, recycled or out of order");
                frame.advance();
                chain.release(consumer);
                expected += 1;
            }
        };
        read(&mut consumer);
        let producer = handle.join().unwrap();
        read(&mut consumer);
        assert_eq!(expected, 6, "every frame arrives");
        drop(producer);
    });
}

/// The consumer prepares the next ring while the producer fills its ring and grows, taking
/// that ring or moving on without it: the producer takes a prepared ring only whole (loom
/// reports a race on its construction otherwise), every frame arrives once and in order, and
/// a ring prepared too late is freed with the ring it was left in.
#[test]
fn loom_a_ring_prepared_by_the_consumer_is_taken_whole() {
    static PREPARED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    loom::model(|| {
        let (chain, mut consumer, handle) = growing_producer();
        if chain.prepare_successor(&consumer) {
            PREPARED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let producer = handle.join().unwrap();
        let mut expected = 1u8;
        while let Some(frame) = chain.peek(&mut consumer) {
            // SAFETY: the producer wrote all 8 bytes before publishing.
            let first = frame.read_body(|b| unsafe { b[0].assume_init() });
            assert_eq!(first, expected, "frames arrive once, in order");
            frame.advance();
            chain.release(&consumer);
            expected += 1;
        }
        assert_eq!(expected, 6, "every frame arrives");
        drop(producer);
    });
    assert!(
        PREPARED.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "some interleavings prepare a ring"
    );
}
