//! Model checks of the publish/consume protocol: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p tachylog --release --lib loom`.

use super::*;
use loom::sync::Arc;

fn push(ring: &Ring, p: &mut ProducerCursor, value: u8, len: usize) -> bool {
    match ring.try_reserve(p, len, 1) {
        Some(r) => {
            // SAFETY: fresh reservation of `len` bytes.
            unsafe { ring.write_body(&r, 0, &vec![value; len]) };
            ring.commit(p, r);
            true
        }
        None => false,
    }
}

/// Every frame the consumer sees is complete (all its bytes carry the producer's value, never
/// a byte of an older lap), frames arrive in order, and the padding frame written at the wrap
/// point is never mistaken for data. Loom reports a data race if the producer could reuse
/// bytes the consumer is still reading.
#[test]
fn loom_consumer_never_sees_a_partial_or_recycled_frame() {
    loom::model(|| {
        // 64 bytes, frames of 16 bytes (8-byte bodies): the fifth push reuses the first slot.
        let (ring, mut p, mut c) = Ring::new(64);
        let ring = Arc::new(ring);
        let producer_ring = ring.clone();
        let producer = loom::thread::spawn(move || {
            let mut sent = 0u8;
            for _ in 0..6 {
                if sent == 5 {
                    break;
                }
                if push(&producer_ring, &mut p, sent + 1, 8) {
                    sent += 1;
                } else {
                    loom::thread::yield_now();
                }
            }
            sent
        });
        let mut received = 0u8;
        for _ in 0..3 {
            if let Some(frame) = ring.peek(&mut c) {
                assert_eq!(frame.kind(), 1, "padding or a torn header seen as data");
                let ok = frame.read_body(|b| {
                    b[..8]
                        .iter()
                        .all(|x| unsafe { x.assume_init() } == received + 1)
                });
                assert!(ok, "partial or recycled frame");
                frame.advance();
                ring.release(&c);
                received += 1;
            } else {
                loom::thread::yield_now();
            }
        }
        let sent = producer.join().unwrap();
        while let Some(frame) = ring.peek(&mut c) {
            assert_eq!(frame.kind(), 1, "padding or a torn header seen as data");
            let ok = frame.read_body(|b| unsafe { b[0].assume_init() } == received + 1);
            assert!(ok);
            frame.advance();
            ring.release(&c);
            received += 1;
        }
        assert_eq!(received, sent);
    });
}

/// The activity counter read before `head` tells the consumer the truth: if it reads the even
/// (idle) value the producer stored after a commit, the frame of that commit is visible.
#[test]
fn loom_idle_activity_implies_the_frame_is_visible() {
    loom::model(|| {
        let (ring, mut p, mut c) = Ring::new(64);
        let ring = Arc::new(ring);
        let producer_ring = ring.clone();
        let producer = loom::thread::spawn(move || {
            producer_ring.begin_activity(&mut p);
            assert!(push(&producer_ring, &mut p, 5, 8));
            producer_ring.end_activity(&mut p);
        });
        let activity = ring.activity();
        let visible = ring.peek(&mut c).is_some();
        if activity == 2 {
            assert!(visible, "idle after the call but its frame is not visible");
        }
        producer.join().unwrap();
    });
}
