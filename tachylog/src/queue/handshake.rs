//! The flush barrier between the threads that call `flush()` (or wait for a synchronous record,
//! or drain on a signal) and the back end, including what happens when the back end stops.
//!
//! A caller raises `requested` (`SeqCst`, after publishing its records with release stores) and
//! waits on the condition variable until `served` reaches its ticket, or the back end has
//! closed the handshake. The back end reads `requested`, writes everything published before
//! that read, then raises `served` under the mutex and wakes every waiter. On exit it closes
//! the handshake, under the mutex too, so a request made after its last look is answered
//! (with "not served") instead of waiting forever. The loom models below check both promises.

use super::sync::{lock, AtomicBool, AtomicU64, Condvar, Mutex, Ordering};
use std::time::Duration;

pub(crate) struct FlushHandshake {
    /// Tickets handed out: incremented (`SeqCst`) by each request.
    requested: AtomicU64,
    /// The highest ticket fully served; written by the back end only.
    served: Mutex<u64>,
    served_changed: Condvar,
    /// A copy of `served` for signal handlers, which cannot take the mutex. Written (`Release`)
    /// by the back end right after `served`.
    served_for_signals: AtomicU64,
    /// Set by the back end, under the mutex, once it will serve nothing more.
    closed: AtomicBool,
}

impl FlushHandshake {
    pub(crate) fn new() -> Self {
        FlushHandshake {
            requested: AtomicU64::new(0),
            served: Mutex::new(0),
            served_changed: Condvar::new(),
            served_for_signals: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// Caller: asks for everything published so far to be written; returns the ticket to wait
    /// for. Async-signal-safe (one atomic add).
    pub(crate) fn request(&self) -> u64 {
        self.requested.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Back end: the newest ticket. Everything published before it was taken is visible after
    /// this load.
    pub(crate) fn requested(&self) -> u64 {
        self.requested.load(Ordering::SeqCst)
    }

    /// Back end: every ticket up to `up_to` is served (its records are written).
    pub(crate) fn serve(&self, up_to: u64) {
        let mut served = lock(&self.served);
        if up_to > *served {
            *served = up_to;
            self.served_for_signals.store(up_to, Ordering::Release);
        }
        drop(served);
        self.served_changed.notify_all();
    }

    /// Back end, on exit (or after a panic): serves nothing more, wakes every waiter.
    pub(crate) fn close(&self) {
        let served = lock(&self.served);
        self.closed.store(true, Ordering::SeqCst);
        drop(served);
        self.served_changed.notify_all();
    }

    /// Caller: waits until `ticket` is served (returns `true`) or the handshake is closed
    /// (`false`). The periodic timeout is only a safety net; every change is notified.
    pub(crate) fn wait(&self, ticket: u64) -> bool {
        let mut served = lock(&self.served);
        loop {
            if *served >= ticket {
                return true;
            }
            if self.closed.load(Ordering::SeqCst) {
                return false;
            }
            served = self
                .served_changed
                .wait_timeout(served, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// For signal handlers: whether `ticket` is served, without the mutex.
    // The signal handlers that call it are not compiled under loom, nor off Linux.
    #[cfg_attr(
        any(loom, not(any(target_os = "linux", target_os = "android"))),
        allow(dead_code)
    )]
    pub(crate) fn served_without_lock(&self, ticket: u64) -> bool {
        self.served_for_signals.load(Ordering::Acquire) >= ticket
    }
}

/// Model checks: run with `RUSTFLAGS="--cfg loom" cargo test -p tachylog --release --lib loom`.
/// The back end's loop is modelled by `back_end` below in the order the worker does it (read
/// the ticket, then drain, then serve; on shutdown a last round, then close); the ring and the
/// handshake are the real types.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::queue::ring::{ConsumerCursor, ProducerCursor, Ring};
    use loom::sync::Arc;

    fn publish(ring: &Ring, p: &mut ProducerCursor) {
        let r = ring.try_reserve(p, 8, 1).expect("room for one frame");
        // SAFETY: a fresh reservation of 8 bytes.
        unsafe { ring.write_body(&r, 0, &[7; 8]) };
        ring.commit(p, r);
    }

    /// The back end: until told to stop, read the ticket, drain, serve; then a last round and
    /// close. Returns how many records it wrote.
    fn back_end(
        ring: &Ring,
        mut c: ConsumerCursor,
        hs: &FlushHandshake,
        shutdown: &AtomicBool,
        written: &AtomicU64,
    ) {
        let mut served = 0;
        loop {
            let stopping = shutdown.load(Ordering::SeqCst);
            let ticket = hs.requested();
            while let Some(frame) = ring.peek(&mut c) {
                frame.advance();
                ring.release(&c);
                written.fetch_add(1, Ordering::SeqCst);
            }
            if ticket > served {
                served = ticket;
                hs.serve(ticket);
            }
            if stopping {
                break;
            }
            loom::thread::yield_now();
        }
        hs.close();
    }

    /// `flush()` is a barrier: when `wait` says served, the record published before the
    /// request has been written.
    #[test]
    fn loom_a_served_flush_covers_every_record_published_before_it() {
        loom::model(|| {
            let (ring, mut p, c) = Ring::new(64);
            let ring = Arc::new(ring);
            let hs = Arc::new(FlushHandshake::new());
            let shutdown = Arc::new(AtomicBool::new(false));
            let written = Arc::new(AtomicU64::new(0));
            let worker = {
                let (ring, hs, shutdown, written) =
                    (ring.clone(), hs.clone(), shutdown.clone(), written.clone());
                loom::thread::spawn(move || back_end(&ring, c, &hs, &shutdown, &written))
            };
            publish(&ring, &mut p);
            let ticket = hs.request();
            if hs.wait(ticket) {
                assert_eq!(
                    written.load(Ordering::SeqCst),
                    1,
                    "flush returned before the write"
                );
            }
            shutdown.store(true, Ordering::SeqCst);
            worker.join().unwrap();
            assert_eq!(written.load(Ordering::SeqCst), 1);
        });
    }

    /// A flush racing the shutdown never hangs: it is served, or the close wakes it. (Loom's
    /// condition variable never times out, so a lost wake-up is reported as a deadlock.)
    #[test]
    fn loom_a_flush_racing_shutdown_always_returns() {
        loom::model(|| {
            let (ring, _p, c) = Ring::new(64);
            let hs = Arc::new(FlushHandshake::new());
            let shutdown = Arc::new(AtomicBool::new(false));
            let written = Arc::new(AtomicU64::new(0));
            let flusher = {
                let hs = hs.clone();
                loom::thread::spawn(move || {
                    let ticket = hs.request();
                    hs.wait(ticket)
                })
            };
            shutdown.store(true, Ordering::SeqCst);
            back_end(&ring, c, &hs, &shutdown, &written);
            let _served = flusher.join().unwrap();
        });
    }
}
