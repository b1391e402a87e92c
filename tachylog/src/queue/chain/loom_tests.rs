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

/// A producer that outgrows its 64-byte ring (four 16-byte frames) while the consumer reads:
/// the consumer sees every frame once, in order and whole, follows the producer into the new
/// ring, and frees the old one only after its last frame (loom reports a race on the storage
/// or on `next` otherwise).
#[test]
fn loom_the_consumer_follows_a_growing_producer() {
    loom::model(|| {
        let (chain, mut producer, mut consumer) = RingChain::new(64, 256);
        let chain = Arc::new(chain);
        let handle = loom::thread::spawn(move || {
            for value in 1..=5u8 {
                push(&mut producer, value);
            }
            producer
        });
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
