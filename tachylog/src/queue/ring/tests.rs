use super::*;
use proptest::prelude::*;
use std::collections::VecDeque;

fn push(ring: &Ring, p: &mut ProducerCursor, body: &[u8]) -> bool {
    if body.len() > ring.max_inline_body() {
        return ring.push_boxed(p, body.into(), 7, |_| {}).is_ok();
    }
    match ring.try_reserve(p, body.len(), 7) {
        Some(r) => {
            // SAFETY: fresh reservation of exactly `body.len()` bytes.
            unsafe { ring.write_body(&r, 0, body) };
            ring.commit(p, r);
            true
        }
        None => false,
    }
}

fn pop(ring: &Ring, c: &mut ConsumerCursor) -> Option<Vec<u8>> {
    let frame = ring.peek(c)?;
    assert_eq!(frame.kind(), 7);
    let bytes = frame.read_body(|b| {
        b.iter()
            // SAFETY: the tests' producer writes every byte of each body it reserves.
            .map(|x| unsafe { x.assume_init() })
            .collect::<Vec<u8>>()
    });
    frame.advance();
    ring.release(c);
    Some(bytes)
}

/// Bodies come back padded to 8-byte frames; tests carry their length in the first byte.
fn body(len: u8, fill: u8) -> Vec<u8> {
    let mut v = vec![fill; len as usize];
    if !v.is_empty() {
        v[0] = len;
    }
    v
}

fn trimmed(mut bytes: Vec<u8>) -> Vec<u8> {
    if let Some(&len) = bytes.first() {
        bytes.truncate(len as usize);
    }
    bytes
}

#[test]
fn frames_come_back_in_order_across_many_laps() {
    let (ring, mut p, mut c) = Ring::new(256);
    // Fewer laps under Miri, which interprets every byte copy: 500 still wrap the ring ~50 times.
    let frames = if cfg!(miri) { 500 } else { 10_000u32 };
    for i in 0..frames {
        let b = body((i % 40 + 1) as u8, i as u8);
        assert!(push(&ring, &mut p, &b));
        assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), b);
    }
    assert!(pop(&ring, &mut c).is_none());
}

#[test]
fn indices_wrap_around_usize_max() {
    let start = usize::MAX - 300;
    let (ring, mut p, mut c) = Ring::with_start_index(128, start);
    let mut expected = VecDeque::new();
    for i in 0..200u32 {
        let b = body(20, i as u8);
        while !push(&ring, &mut p, &b) {
            assert_eq!(
                trimmed(pop(&ring, &mut c).unwrap()),
                expected.pop_front().unwrap()
            );
        }
        expected.push_back(b);
    }
    while let Some(got) = pop(&ring, &mut c) {
        assert_eq!(trimmed(got), expected.pop_front().unwrap());
    }
    assert!(expected.is_empty());
    // The head really did pass usize::MAX.
    assert!(p.head < start);
}

#[test]
fn a_frame_that_does_not_fit_before_the_end_starts_at_offset_zero() {
    let (ring, mut p, mut c) = Ring::new(64); // max inline body: 8 bytes
    assert!(push(&ring, &mut p, &body(8, 1))); // frame 16 bytes at 0
    assert!(push(&ring, &mut p, &body(8, 2))); // at 16
    assert!(push(&ring, &mut p, &body(8, 3))); // at 32
    assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), body(8, 1));
    assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), body(8, 2));
    assert!(push(&ring, &mut p, &body(8, 4))); // at 48, ends exactly at the end
    assert!(push(&ring, &mut p, &body(8, 5))); // wraps to 0
    assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), body(8, 3));
    assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), body(8, 4));
    assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), body(8, 5));
    assert!(pop(&ring, &mut c).is_none());
}

#[test]
fn a_frame_placed_after_padding_wraps_correctly() {
    let (ring, mut p, mut c) = Ring::new(64);
    assert!(push(&ring, &mut p, &body(8, 1))); // 0..16
    assert!(push(&ring, &mut p, &body(8, 2))); // 16..32
    assert!(push(&ring, &mut p, &body(1, 3))); // 32..48 (9 bytes -> 16)
    assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), body(8, 1));
    assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), body(8, 2));
    // 48..64 is free, 0..32 is free: a 16-byte frame fits at 48 ...
    assert!(push(&ring, &mut p, &body(4, 4)));
    // ... and the next one starts at 0.
    assert!(push(&ring, &mut p, &body(8, 5)));
    for expected in [body(1, 3), body(4, 4), body(8, 5)] {
        assert_eq!(trimmed(pop(&ring, &mut c).unwrap()), expected);
    }
}

#[test]
fn a_full_ring_refuses_until_the_consumer_releases() {
    let (ring, mut p, mut c) = Ring::new(64);
    let mut pushed = 0;
    while push(&ring, &mut p, &body(8, 9)) {
        pushed += 1;
    }
    assert_eq!(pushed, 4);
    assert_eq!(ring.used_bytes(), 64);
    // Peeking and advancing without releasing does not free space.
    ring.peek(&mut c).unwrap().advance();
    assert!(!push(&ring, &mut p, &body(8, 9)));
    ring.release(&c);
    assert!(push(&ring, &mut p, &body(8, 9)));
}

#[test]
fn a_body_larger_than_the_ring_travels_boxed() {
    let (ring, mut p, mut c) = Ring::new(64);
    let big: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
    assert!(push(&ring, &mut p, &big));
    assert_eq!(ring.boxed_bytes(), big.len());
    let frame = ring.peek(&mut c).unwrap();
    let got = frame.read_body(|b| {
        b.iter()
            // SAFETY: `push_boxed` took a fully initialised `Vec<u8>`.
            .map(|x| unsafe { x.assume_init() })
            .collect::<Vec<u8>>()
    });
    assert_eq!(got, big);
    frame.advance();
    assert_eq!(ring.boxed_bytes(), 0);
}

/// A boxed frame keeps its ring space until the consumer releases it, like an inline one (a
/// spooled ring must keep every frame until a cut wrote it), and a ring dropped with such a
/// frame between `tail` and the read position frees its block once: at `advance`, not again
/// (a double free aborts the test process; Miri reports one).
#[test]
fn a_boxed_frame_keeps_its_space_until_released_and_is_freed_once() {
    let (ring, mut p, mut c) = Ring::new(64);
    let mut placed = None;
    ring.push_boxed(&mut p, vec![5u8; 500].into(), 7, |position| {
        placed = Some(position)
    })
    .unwrap();
    assert!(push(&ring, &mut p, &body(8, 1)));
    let frame = ring.peek(&mut c).unwrap();
    assert!(frame.is_boxed());
    assert_eq!(
        Some(frame.position()),
        placed,
        "the position given before publishing"
    );
    let used = ring.used_bytes();
    frame.advance();
    assert_eq!(ring.boxed_bytes(), 0, "the block is freed at advance");
    assert_eq!(
        ring.used_bytes(),
        used,
        "its ring space is not released yet"
    );
    let frame = ring.peek(&mut c).unwrap();
    assert!(!frame.is_boxed());
    frame.advance();
    drop(ring);
}

/// Releasing up to a position read past frees exactly the frames before it; a position the
/// consumer has not read, or has released already, frees nothing.
#[test]
fn release_to_frees_only_what_was_read() {
    let (ring, mut p, mut c) = Ring::new(64);
    for fill in 1..=4 {
        assert!(push(&ring, &mut p, &body(8, fill)));
    }
    let first = c.position();
    ring.peek(&mut c).unwrap().advance();
    let second = c.position();
    ring.peek(&mut c).unwrap().advance();
    ring.release_to(&c, second.wrapping_add(64));
    assert_eq!(ring.used_bytes(), 64, "past the read position: nothing");
    ring.release_to(&c, second);
    assert_eq!(ring.used_bytes(), 48, "the first frame only");
    ring.release_to(&c, first);
    assert_eq!(ring.used_bytes(), 48, "behind the tail: nothing");
    assert!(push(&ring, &mut p, &body(8, 5)));
    assert!(!push(&ring, &mut p, &body(8, 6)));
}

fn second_byte(frame: &Frame) -> u8 {
    // SAFETY: every body in these tests is at least 8 bytes long and fully written.
    frame.read_body(|b| unsafe { b[1].assume_init() })
}

/// A `Frame` dropped without `advance` is not consumed: the next `peek` returns the same frame,
/// inline or boxed, and a boxed block is freed only by the one `advance`. The merge relies on
/// this (it peeks a frame for its timestamp and takes it again to emit it).
#[test]
fn a_frame_dropped_unadvanced_is_seen_again_and_consumed_once() {
    let (ring, mut p, mut c) = Ring::new(64);
    let big = vec![3u8; 1000];
    assert!(push(&ring, &mut p, &body(8, 1)));
    assert!(push(&ring, &mut p, &big));
    assert!(push(&ring, &mut p, &body(8, 2)));
    for expected in [1u8, 3, 2] {
        for _ in 0..3 {
            let frame = ring
                .peek(&mut c)
                .expect("an unconsumed frame stays visible");
            assert_eq!(second_byte(&frame), expected);
        }
        let frame = ring.peek(&mut c).unwrap();
        assert_eq!(second_byte(&frame), expected);
        let boxed_before = ring.boxed_bytes();
        frame.advance();
        if expected == 3 {
            assert_eq!((boxed_before, ring.boxed_bytes()), (big.len(), 0));
        }
    }
    assert!(ring.peek(&mut c).is_none());
    ring.release(&c);
    assert_eq!(ring.used_bytes(), 0);
}

#[test]
fn dropping_a_ring_frees_unconsumed_boxed_frames() {
    let (ring, mut p, _c) = Ring::new(64);
    assert!(push(&ring, &mut p, &[1u8; 4096]));
    assert!(push(&ring, &mut p, &[2u8; 4096]));
    assert_eq!(ring.boxed_bytes(), 8192);
    drop(ring); // frees both blocks (checked by LeakSanitizer runs); must not crash
}

#[test]
fn producer_and_consumer_threads_agree_on_every_byte() {
    let (ring, mut p, mut c) = Ring::new(1024);
    let ring = std::sync::Arc::new(ring);
    let producer_ring = ring.clone();
    // Fewer under Miri, which interprets every step (and every spin of a thread waiting for
    // the other): 500 frames, five of them boxed, still cross the ring's end over ten times.
    const N: u32 = if cfg!(miri) { 500 } else { 200_000 };
    const BOXED_EVERY: u32 = if cfg!(miri) { 100 } else { 1000 };
    let producer = std::thread::spawn(move || {
        for i in 0..N {
            let len = (i % 50) as usize + 4;
            let mut b = vec![(i % 251) as u8; len];
            b[..4].copy_from_slice(&i.to_le_bytes());
            // Some frames are boxed: larger than the ring keeps inline.
            let b = if i % BOXED_EVERY == 0 {
                vec![b[0]; 600]
            } else {
                b
            };
            while !push(&producer_ring, &mut p, &b) {
                std::thread::yield_now();
            }
        }
    });
    let mut i = 0u32;
    while i < N {
        match pop(&ring, &mut c) {
            Some(got) => {
                if i % BOXED_EVERY == 0 {
                    assert_eq!(got.len(), 600);
                } else {
                    assert_eq!(u32::from_le_bytes(got[..4].try_into().unwrap()), i);
                    let len = (i % 50) as usize + 4;
                    assert!(got[4..len].iter().all(|&x| x == (i % 251) as u8));
                }
                i += 1;
            }
            None => std::thread::yield_now(),
        }
    }
    producer.join().unwrap();
}

proptest! {
    /// The ring behaves like a bounded FIFO queue of byte strings, whatever the sizes, the
    /// interleaving of pushes and pops, and the starting index.
    #[test]
    fn ring_matches_a_fifo_model(
        start in prop_oneof![Just(0usize), Just(usize::MAX - 512), any::<usize>()],
        ops in proptest::collection::vec((any::<bool>(), 1u8..=120), 1..400),
    ) {
        let (ring, mut p, mut c) = Ring::with_start_index(256, start);
        let mut model = VecDeque::new();
        for (n, (is_push, len)) in ops.into_iter().enumerate() {
            if is_push {
                let b = body(len, n as u8);
                if push(&ring, &mut p, &b) {
                    model.push_back(b);
                } else {
                    // Refused: only possible when something is queued.
                    prop_assert!(!model.is_empty());
                }
            } else {
                let got = pop(&ring, &mut c).map(trimmed);
                prop_assert_eq!(got, model.pop_front());
            }
        }
        while let Some(expected) = model.pop_front() {
            prop_assert_eq!(pop(&ring, &mut c).map(trimmed), Some(expected));
        }
        prop_assert!(pop(&ring, &mut c).is_none());
    }
}

/// A body of `len` bytes whose first eight carry `len`, so that the test can trim the padding
/// the ring adds.
fn long_body(len: usize, fill: u8) -> Vec<u8> {
    let mut v = vec![fill; len.max(8)];
    v[..8].copy_from_slice(&(len as u64).to_ne_bytes());
    v
}

fn long_trimmed(mut bytes: Vec<u8>) -> Vec<u8> {
    let len = u64::from_ne_bytes(bytes[..8].try_into().unwrap()) as usize;
    bytes.truncate(len.max(8));
    bytes
}

#[test]
fn the_storage_starts_on_a_page() {
    for capacity in [64, 4096, 1 << 16, 1 << 20] {
        let (ring, _, _) = Ring::new(capacity);
        assert_eq!(
            ring.storage.ptr_at(0) as usize % PAGE,
            0,
            "capacity {capacity}"
        );
    }
}

proptest! {
    /// In a ring of several pages, no frame of up to a page straddles a page boundary (a store
    /// split across two pages is slow, see `Ring::padding_before`), larger frames still travel
    /// inline, and the ring still behaves like a FIFO queue. Not under Miri: its megabytes of
    /// copies take Miri many minutes, and the other ring tests cover the same unsafe writes.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn frames_of_up_to_a_page_stay_within_one(
        ops in proptest::collection::vec(
            (any::<bool>(), prop_oneof![8usize..=200, 3_900usize..=4_200, 4_200usize..=9_000]),
            1..300,
        ),
    ) {
        let (ring, mut p, mut c) = Ring::new(1 << 16);
        let mut model = VecDeque::new();
        for (n, (is_push, len)) in ops.into_iter().enumerate() {
            if is_push {
                let b = long_body(len, n as u8);
                let Some(r) = ring.try_reserve(&mut p, b.len(), 7) else {
                    prop_assert!(!model.is_empty());
                    continue;
                };
                let frame_start = r.body_offset - FRAME_HEADER;
                let frame_len = (FRAME_HEADER + b.len()).next_multiple_of(FRAME_ALIGN);
                prop_assert!(frame_start + frame_len <= ring.capacity());
                if frame_len <= PAGE {
                    prop_assert_eq!(frame_start / PAGE, (frame_start + frame_len - 1) / PAGE);
                }
                // SAFETY: fresh reservation of exactly `b.len()` bytes.
                unsafe { ring.write_body(&r, 0, &b) };
                ring.commit(&mut p, r);
                model.push_back(b);
            } else {
                let got = pop(&ring, &mut c).map(long_trimmed);
                prop_assert_eq!(got, model.pop_front());
            }
        }
        while let Some(expected) = model.pop_front() {
            prop_assert_eq!(pop(&ring, &mut c).map(long_trimmed), Some(expected));
        }
        prop_assert!(pop(&ring, &mut c).is_none());
    }
}

#[test]
fn a_ring_of_huge_pages_starts_zeroed_on_a_huge_page_boundary_and_wraps() {
    // 2 MiB: the size from which the storage is aligned to a huge page and advised to use them.
    let capacity = 2 << 20;
    let (ring, mut p, mut c) = Ring::new(capacity);
    let start = ring.storage.ptr_at(0) as usize;
    assert_eq!(start % capacity, 0, "not on a 2 MiB boundary");
    // SAFETY: nothing is reserved yet, so the whole storage is the producer's and unshared.
    let zeroed = unsafe {
        ring.storage.read(0, capacity, |bytes| {
            bytes
                .iter()
                .step_by(4093)
                .chain(bytes.last())
                .all(|b| b.assume_init() == 0)
        })
    };
    assert!(zeroed, "the storage is not zeroed");
    // Frames of 2 KiB, through two laps: across every page boundary and the end of the
    // storage. Under Miri, which reads each byte of a frame one by one, across one page only.
    let frames = if cfg!(miri) {
        3
    } else {
        2 * capacity / 2048 + 3
    };
    for i in 0..frames {
        let b = [vec![i as u8; 2000], (i as u32).to_le_bytes().to_vec()].concat();
        assert!(push(&ring, &mut p, &b));
        assert_eq!(&pop(&ring, &mut c).unwrap()[..b.len()], &b[..]);
    }
    assert!(pop(&ring, &mut c).is_none());
}
