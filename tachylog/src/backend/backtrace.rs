//! The backtrace ring: debug detail on disk only when something goes wrong.
//!
//! With [`Builder::backtrace`](crate::Builder::backtrace), records at the kept level or more
//! verbose take the normal path through the thread's ring (the caller's cost does not change)
//! and the back end, instead of writing them, keeps the last N here. A record at the trigger
//! level or more severe ([`Builder::backtrace_trigger`](crate::Builder::backtrace_trigger)), or
//! a call of [`dump_backtrace`](crate::dump_backtrace), writes the kept records first, marked
//! `[backtrace]`, in their original order with their original timestamps, and empties the ring.
//!
//! **One ring for the whole process, not one per thread.** The back end sees records already
//! merged in timestamp order, so one ring keeps the interleaving across threads that usually
//! explains a failure (the request thread's steps and the pool's, in the order they happened),
//! costs nothing on the calling threads, and bounds memory with one number.
//!
//! **Memory:** at most `capacity` records, each held as its encoded bytes (the same bytes it
//! had in the thread's ring) plus its thread's name. The buffers are reused as the ring turns,
//! so after warm-up keeping a record allocates nothing unless it is larger than the one it
//! replaces.
//!
//! Back end only.

use crate::queue::registry::ThreadInfo;
use crate::Level;
use std::collections::VecDeque;
use std::mem::MaybeUninit;

/// What is kept and what triggers the writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BacktraceConfig {
    /// Records at this level or more verbose are kept instead of written.
    pub(crate) kept: Level,
    /// How many are kept.
    pub(crate) capacity: usize,
    /// Records at this level or more severe write the kept ones first.
    pub(crate) trigger: Level,
}

/// One kept record: what the worker needs to format it later.
pub(crate) struct Kept {
    pub(crate) thread: ThreadInfo,
    pub(crate) kind: u32,
    pub(crate) body: Vec<MaybeUninit<u8>>,
}

/// The last `capacity` kept records, oldest first.
pub(crate) struct BacktraceRing {
    config: BacktraceConfig,
    records: VecDeque<Kept>,
}

impl BacktraceRing {
    pub(crate) fn new(config: BacktraceConfig) -> Self {
        BacktraceRing {
            config,
            records: VecDeque::with_capacity(config.capacity.min(1 << 16)),
        }
    }

    /// Whether a record at `level` is kept rather than written.
    #[inline]
    pub(crate) fn keeps(&self, level: Level) -> bool {
        level >= self.config.kept
    }

    /// Whether a record at `level` writes the kept records first.
    #[inline]
    pub(crate) fn triggered_by(&self, level: Level) -> bool {
        level <= self.config.trigger
    }

    /// Keeps a copy of a record, dropping the oldest when full.
    pub(crate) fn keep(&mut self, thread: &ThreadInfo, kind: u32, body: &[MaybeUninit<u8>]) {
        if self.config.capacity == 0 {
            return;
        }
        let mut slot = if self.records.len() == self.config.capacity {
            self.records.pop_front().expect("a full ring has a front")
        } else {
            Kept {
                thread: thread.clone(),
                kind,
                body: Vec::new(),
            }
        };
        // Same serial, same registration: the id and the name are the same too.
        if slot.thread.serial != thread.serial {
            slot.thread = thread.clone();
        }
        slot.kind = kind;
        slot.body.clear();
        slot.body.extend_from_slice(body);
        self.records.push_back(slot);
    }

    /// Takes the kept records, oldest first, leaving the ring empty.
    pub(crate) fn take(&mut self) -> VecDeque<Kept> {
        std::mem::take(&mut self.records)
    }

    /// Gives the buffers back after writing them, so the ring reuses them.
    pub(crate) fn recycle(&mut self, mut used: VecDeque<Kept>) {
        if self.records.is_empty() {
            used.clear();
            std::mem::swap(&mut self.records, &mut used);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(capacity: usize) -> BacktraceRing {
        BacktraceRing::new(BacktraceConfig {
            kept: Level::Debug,
            capacity,
            trigger: Level::Error,
        })
    }

    fn body(n: u8) -> Vec<MaybeUninit<u8>> {
        vec![MaybeUninit::new(n); 3]
    }

    #[test]
    fn keeps_the_last_n_in_order() {
        let mut r = ring(3);
        let thread = ThreadInfo::new("t".into(), 1);
        for n in 0..5 {
            r.keep(&thread, 1, &body(n));
        }
        let kept: Vec<u8> = r
            .take()
            .iter()
            // SAFETY: the test wrote these bytes initialised.
            .map(|k| unsafe { k.body[0].assume_init() })
            .collect();
        assert_eq!(kept, [2, 3, 4]);
        assert!(r.take().is_empty(), "taking empties the ring");
    }

    #[test]
    fn levels_decide_what_is_kept_and_what_triggers() {
        let r = ring(1);
        assert!(r.keeps(Level::Debug) && r.keeps(Level::Trace) && !r.keeps(Level::Info));
        assert!(r.triggered_by(Level::Error) && !r.triggered_by(Level::Warn));
    }
}
