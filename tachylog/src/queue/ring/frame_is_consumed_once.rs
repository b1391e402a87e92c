//! What the compiler refuses to do with a [`Frame`](super::Frame): the examples below are
//! doctests that compile the real `ring.rs` (not a copy) as a module of the example, because a
//! crate-private type cannot be named from a doctest any other way. The module exists only
//! when rustdoc collects doctests (`cfg(doctest)`); it has no code.
//!
//! The first example uses a frame correctly and must compile and run. Every other one repeats
//! its setup and adds one misuse, so it fails to compile because of that misuse, not because
//! the setup broke. (Stable rustdoc does not check the error code after `compile_fail`; the
//! codes are there for the reader and for nightly. When changing the setup, change it in the
//! first example too, and check that each failing example fails with its code.)
//!
//! A frame read, then advanced over once: the heap block of a boxed body is freed.
//!
//! ```
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! let (ring, mut producer, mut consumer) = ring::Ring::new(64);
//! ring.push_boxed(&mut producer, vec![7u8; 1000].into(), 1, |_| {}).unwrap();
//! let frame = ring.peek(&mut consumer).unwrap();
//! // SAFETY: the producer wrote every byte of the body.
//! let body: Vec<u8> = frame.read_body(|b| b.iter().map(|x| unsafe { x.assume_init() }).collect());
//! assert_eq!(body, [7u8; 1000]);
//! frame.advance();
//! assert_eq!(ring.boxed_bytes(), 0);
//! ring.release(&consumer);
//! assert!(ring.peek(&mut consumer).is_none());
//! # }
//! ```
//!
//! Advancing twice, which would free the block twice: the first `advance` moved the frame.
//!
//! ```compile_fail,E0382
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, mut consumer) = ring::Ring::new(64);
//! # ring.push_boxed(&mut producer, vec![7u8; 1000].into(), 1, |_| {}).unwrap();
//! let frame = ring.peek(&mut consumer).unwrap();
//! frame.advance();
//! frame.advance();
//! # }
//! ```
//!
//! Reading the body after advancing, which would read a freed block (or, inline, bytes the
//! producer may be overwriting):
//!
//! ```compile_fail,E0382
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, mut consumer) = ring::Ring::new(64);
//! # ring.push_boxed(&mut producer, vec![7u8; 1000].into(), 1, |_| {}).unwrap();
//! let frame = ring.peek(&mut consumer).unwrap();
//! frame.advance();
//! frame.read_body(|body| body.len());
//! # }
//! ```
//!
//! Taking a second token for the same frame, which would free the block twice once both are
//! advanced: the first token still borrows the cursor.
//!
//! ```compile_fail,E0499
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, mut consumer) = ring::Ring::new(64);
//! # ring.push_boxed(&mut producer, vec![7u8; 1000].into(), 1, |_| {}).unwrap();
//! let first = ring.peek(&mut consumer).unwrap();
//! let second = ring.peek(&mut consumer).unwrap();
//! first.advance();
//! second.advance();
//! # }
//! ```
//!
//! Releasing the ring space of a frame whose body may still be read, which would let the
//! producer overwrite it under the reader: the token still borrows the cursor.
//!
//! ```compile_fail,E0502
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, mut consumer) = ring::Ring::new(64);
//! # ring.push_boxed(&mut producer, vec![7u8; 1000].into(), 1, |_| {}).unwrap();
//! let frame = ring.peek(&mut consumer).unwrap();
//! ring.release(&consumer);
//! frame.read_body(|body| body.len());
//! # }
//! ```
//!
//! Copying the token, the way around all of the above: `Frame` is not `Clone`.
//!
//! ```compile_fail,E0599
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, mut consumer) = ring::Ring::new(64);
//! # ring.push_boxed(&mut producer, vec![7u8; 1000].into(), 1, |_| {}).unwrap();
//! let frame = ring.peek(&mut consumer).unwrap();
//! let copy = frame.clone();
//! frame.advance();
//! copy.advance();
//! # }
//! ```
//!
//! The producer's twin, [`Reservation`](super::Reservation), is move-only too: a second commit
//! of the same reservation would move `head` back over frames the consumer may already have
//! read (and freed, for boxed ones). The control, one reservation committed once:
//!
//! ```
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, mut consumer) = ring::Ring::new(64);
//! let reservation = ring.try_reserve(&mut producer, 8, 1).unwrap();
//! // SAFETY: a fresh reservation of 8 bytes.
//! unsafe { ring.write_body(&reservation, 0, &[1; 8]) };
//! ring.commit(&mut producer, reservation);
//! assert!(ring.peek(&mut consumer).is_some());
//! # }
//! ```
//!
//! Committing it twice:
//!
//! ```compile_fail,E0382
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, _consumer) = ring::Ring::new(64);
//! let reservation = ring.try_reserve(&mut producer, 8, 1).unwrap();
//! ring.commit(&mut producer, reservation);
//! ring.commit(&mut producer, reservation);
//! # }
//! ```
//!
//! Copying it:
//!
//! ```compile_fail,E0599
//! # #[path = "../sync.rs"] mod sync;
//! # #[path = "../ring.rs"] mod ring;
//! # fn main() {
//! # let (ring, mut producer, _consumer) = ring::Ring::new(64);
//! let reservation = ring.try_reserve(&mut producer, 8, 1).unwrap();
//! let copy = reservation.clone();
//! ring.commit(&mut producer, reservation);
//! ring.commit(&mut producer, copy);
//! # }
//! ```
