//! Request scopes, the back end's half: the records each open scope holds, and what happens
//! to them when the scope fails (written) or ends quietly (discarded and counted).
//!
//! The front end (`frontend::scope`) tags records with their scope's id and sends each scope's
//! begin, flush and end as frames of their own; the merge orders them with the records, so a
//! scope's records arrive here after its begin and before its end, whatever thread logged
//! them. Holding is the back end's work: the caller's cost is the 8-byte tag.
//!
//! **Memory** is bounded three ways: per scope (its `max_records` and `max_bytes`, oldest held
//! records dropped first and counted), in total ([`MAX_HELD_BYTES`] over every scope: past it a
//! new record is dropped and counted in its scope) and in scopes ([`MAX_OPEN_SCOPES`]: past it
//! a new scope is not tracked and its records are written as if it did not exist). A scope's
//! held records share one arena, reused by the next scope once they are written or discarded.
//!
//! Back end only.

use super::stats;
use crate::format::AddressHasher;
use crate::queue::registry::ThreadInfo;
use crate::record::{ScopeEvent, ScopeEventKind};
use crate::Level;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::mem::MaybeUninit;
use std::rc::Rc;

/// Bytes held by every open scope together.
pub(crate) const MAX_HELD_BYTES: usize = 64 << 20;
/// Scopes tracked at once.
pub(crate) const MAX_OPEN_SCOPES: usize = 1 << 20;
/// Spare arenas kept for the next scopes, and the largest one kept.
const SPARE_ARENAS: usize = 256;
const SPARE_ARENA_BYTES: usize = 1 << 20;

/// Where one held record is: its bytes in its scope's arena, its frame kind and its thread.
struct Slot {
    start: usize,
    len: usize,
    kind: u32,
    thread: Rc<ThreadInfo>,
}

/// One held record to write: its bytes are `arenas[arena][start..start + len]` of the
/// [`Released`] it is in.
pub(crate) struct Held {
    pub(crate) thread: Rc<ThreadInfo>,
    pub(crate) kind: u32,
    arena: usize,
    start: usize,
    len: usize,
    ticks: u64,
}

/// The timestamp a record's body starts with, in clock ticks.
fn ticks_of(body: &[MaybeUninit<u8>]) -> u64 {
    let mut bytes = [0u8; 8];
    for (b, held) in bytes.iter_mut().zip(body) {
        // SAFETY: every record body starts with its 8-byte timestamp, written whole.
        *b = unsafe { held.assume_init() };
    }
    u64::from_ne_bytes(bytes)
}

struct Open {
    parent: u64,
    hold: Level,
    trigger: Level,
    max_records: usize,
    max_bytes: usize,
    /// The held records' bodies, back to back: one allocation per scope, not one per record,
    /// so that holding a record costs a copy.
    arena: Vec<MaybeUninit<u8>>,
    /// Bytes at the front of `arena` whose records were dropped for the bounds.
    dead: usize,
    held: VecDeque<Slot>,
    held_bytes: usize,
    /// Held records dropped for the bounds, reported when the others are written.
    dropped: u64,
    /// Triggered or flushed: its records are written as they come.
    writing: bool,
}

impl Open {
    /// Drops the oldest held record, counted.
    fn drop_oldest(&mut self) -> usize {
        let Some(oldest) = self.held.pop_front() else {
            return 0;
        };
        self.dead = oldest.start + oldest.len;
        self.held_bytes -= oldest.len;
        self.dropped += 1;
        // Reclaim the front once it is most of the arena: amortised, each byte moves once.
        if self.dead > self.arena.len() / 2 && self.dead >= 4096 {
            self.arena.drain(..self.dead);
            for slot in &mut self.held {
                slot.start -= self.dead;
            }
            self.dead = 0;
        }
        oldest.len
    }
}

/// What to do with a record of a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Write it now, as any record.
    Write,
    /// Write it now, as its scope was triggered: to every sink that takes released records.
    WriteReleased,
    /// Held: nothing to write.
    Held,
    /// It triggers its scope: write the scope's held records ([`Scopes::release`]), then it.
    Trigger,
}

/// Held records to write, oldest first, and how many of their scopes' records were dropped.
#[derive(Default)]
pub(crate) struct Released {
    pub(crate) records: Vec<Held>,
    arenas: Vec<Vec<MaybeUninit<u8>>>,
    pub(crate) dropped: u64,
    /// Scopes whose records these are.
    pub(crate) scopes: usize,
}

impl Released {
    /// The bytes of `held`, one of this release's records.
    pub(crate) fn body(&self, held: &Held) -> &[MaybeUninit<u8>] {
        &self.arenas[held.arena][held.start..held.start + held.len]
    }

    /// Takes a scope's held records.
    fn take(&mut self, open: &mut Open) {
        let arena = self.arenas.len();
        for slot in open.held.drain(..) {
            let body = &open.arena[slot.start..slot.start + slot.len];
            self.records.push(Held {
                ticks: ticks_of(body),
                thread: slot.thread,
                kind: slot.kind,
                arena,
                start: slot.start,
                len: slot.len,
            });
        }
        self.arenas.push(std::mem::take(&mut open.arena));
        open.dead = 0;
        self.scopes += 1;
        self.dropped += std::mem::take(&mut open.dropped);
    }
}

/// The open scopes.
#[derive(Default)]
pub(crate) struct Scopes {
    open: HashMap<u64, Open, BuildHasherDefault<AddressHasher>>,
    held_bytes: usize,
    spare: Vec<Vec<MaybeUninit<u8>>>,
    /// The thread of the last held record, shared by the next ones from the same thread.
    last_thread: Option<Rc<ThreadInfo>>,
    /// A scope was not tracked for [`MAX_OPEN_SCOPES`]; reported once.
    pub(crate) overflowed: bool,
}

impl Scopes {
    /// Applies a scope's begin, flush or end; returns what must be written now.
    pub(crate) fn event(&mut self, event: ScopeEvent) -> Option<Released> {
        match event.what {
            ScopeEventKind::Begin {
                parent,
                hold,
                trigger,
                max_records,
                max_bytes,
            } => {
                if self.open.len() >= MAX_OPEN_SCOPES {
                    self.overflowed = true;
                    return None;
                }
                let arena = self.spare.pop().unwrap_or_default();
                self.open.insert(
                    event.scope,
                    Open {
                        parent,
                        hold,
                        trigger,
                        max_records: max_records.max(1) as usize,
                        max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
                        arena,
                        dead: 0,
                        held: VecDeque::new(),
                        held_bytes: 0,
                        dropped: 0,
                        writing: false,
                    },
                );
                None
            }
            ScopeEventKind::Flush => Some(self.release(event.scope)),
            ScopeEventKind::End { failed } => {
                let released = failed.then(|| self.release(event.scope));
                if let Some(open) = self.open.remove(&event.scope) {
                    // What the bounds dropped would have been discarded with the rest.
                    stats::count_scoped_discarded(open.held.len() as u64 + open.dropped);
                    self.held_bytes -= open.held_bytes;
                    self.recycle_arena(open.arena);
                }
                if self.open.is_empty() {
                    self.last_thread = None;
                }
                released
            }
        }
    }

    /// Whether no scope is open.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Routes a record at `level` of scope `scope`, holding a copy of it if its scope holds it.
    pub(crate) fn route(
        &mut self,
        scope: u64,
        level: Level,
        thread: &ThreadInfo,
        kind: u32,
        body: &[MaybeUninit<u8>],
    ) -> Route {
        let Some(open) = self.open.get_mut(&scope) else {
            return Route::Write;
        };
        if open.writing {
            return Route::WriteReleased;
        }
        if level <= open.trigger {
            return Route::Trigger;
        }
        if level < open.hold {
            return Route::Write;
        }
        if body.len() > open.max_bytes || self.held_bytes + body.len() > MAX_HELD_BYTES {
            open.dropped += 1;
            return Route::Held;
        }
        while !open.held.is_empty()
            && (open.held.len() >= open.max_records
                || open.held_bytes + body.len() > open.max_bytes)
        {
            self.held_bytes -= open.drop_oldest();
        }
        let thread = match &self.last_thread {
            Some(last) if last.serial == thread.serial => last.clone(),
            _ => {
                let shared = Rc::new(thread.clone());
                self.last_thread = Some(shared.clone());
                shared
            }
        };
        let start = open.arena.len();
        open.arena.extend_from_slice(body);
        open.held.push_back(Slot {
            start,
            len: body.len(),
            kind,
            thread,
        });
        open.held_bytes += body.len();
        self.held_bytes += body.len();
        Route::Held
    }

    /// Takes the held records of `scope` and of every scope it is nested in, merged oldest
    /// first, and has those scopes write their later records as they come.
    pub(crate) fn release(&mut self, scope: u64) -> Released {
        let mut released = Released::default();
        let mut next = scope;
        // Bounded by the number of open scopes, whatever parents a damaged chain names.
        for _ in 0..self.open.len() {
            let Some(open) = self.open.get_mut(&next) else {
                break;
            };
            if !open.writing {
                open.writing = true;
                self.held_bytes -= std::mem::take(&mut open.held_bytes);
                released.take(open);
            }
            if open.parent == next {
                break;
            }
            next = open.parent;
        }
        released.records.sort_by_key(|held| held.ticks);
        stats::count_scoped_released(released.records.len() as u64);
        released
    }

    /// Takes every open scope's held records, oldest first, for a shutdown: the scopes stay
    /// open, writing.
    pub(crate) fn release_all(&mut self) -> Released {
        let mut all = Released::default();
        for open in self.open.values_mut() {
            if !open.writing && (!open.held.is_empty() || open.dropped > 0) {
                open.writing = true;
                self.held_bytes -= std::mem::take(&mut open.held_bytes);
                all.take(open);
            }
        }
        all.records.sort_by_key(|held| held.ticks);
        stats::count_scoped_released(all.records.len() as u64);
        all
    }

    /// Keeps the arenas of written records for the next scopes.
    pub(crate) fn recycle(&mut self, released: Released) {
        for arena in released.arenas {
            self.recycle_arena(arena);
        }
    }

    fn recycle_arena(&mut self, mut arena: Vec<MaybeUninit<u8>>) {
        if self.spare.len() < SPARE_ARENAS && arena.capacity() <= SPARE_ARENA_BYTES {
            arena.clear();
            self.spare.push(arena);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREAD_SERIAL: u64 = 1;

    fn begin(scopes: &mut Scopes, scope: u64, parent: u64, max_records: u32) {
        let event = ScopeEvent {
            scope,
            what: ScopeEventKind::Begin {
                parent,
                hold: Level::Debug,
                trigger: Level::Error,
                max_records,
                max_bytes: 1 << 20,
            },
        };
        assert!(scopes.event(event).is_none());
    }

    fn end(scopes: &mut Scopes, scope: u64, failed: bool) -> Option<Released> {
        scopes.event(ScopeEvent {
            scope,
            what: ScopeEventKind::End { failed },
        })
    }

    fn body(ticks: u64) -> Vec<MaybeUninit<u8>> {
        ticks.to_ne_bytes().map(MaybeUninit::new).to_vec()
    }

    fn route(scopes: &mut Scopes, scope: u64, level: Level, ticks: u64) -> Route {
        let thread = ThreadInfo {
            name: "t".into(),
            id: 1,
            serial: THREAD_SERIAL,
        };
        scopes.route(scope, level, &thread, 1, &body(ticks))
    }

    fn ticks(released: &Released) -> Vec<u64> {
        released
            .records
            .iter()
            .map(|held| ticks_of(released.body(held)))
            .collect()
    }

    #[test]
    fn verbose_records_are_held_until_a_trigger_and_written_after_it() {
        let mut scopes = Scopes::default();
        begin(&mut scopes, 1, 0, 10);
        assert_eq!(route(&mut scopes, 1, Level::Debug, 1), Route::Held);
        assert_eq!(route(&mut scopes, 1, Level::Trace, 2), Route::Held);
        assert_eq!(route(&mut scopes, 1, Level::Info, 3), Route::Write);
        assert_eq!(route(&mut scopes, 1, Level::Error, 4), Route::Trigger);
        assert_eq!(ticks(&scopes.release(1)), [1, 2]);
        assert_eq!(route(&mut scopes, 1, Level::Debug, 5), Route::WriteReleased);
        assert!(end(&mut scopes, 1, false).is_none());
        assert!(scopes.is_empty());
    }

    #[test]
    fn a_record_of_no_open_scope_is_written() {
        let mut scopes = Scopes::default();
        assert_eq!(route(&mut scopes, 9, Level::Debug, 1), Route::Write);
        begin(&mut scopes, 9, 0, 10);
        assert!(end(&mut scopes, 9, false).is_none());
        assert_eq!(route(&mut scopes, 9, Level::Debug, 2), Route::Write);
    }

    #[test]
    fn the_oldest_go_past_the_bound_and_are_counted() {
        let mut scopes = Scopes::default();
        begin(&mut scopes, 1, 0, 3);
        for t in 0..5 {
            assert_eq!(route(&mut scopes, 1, Level::Debug, t), Route::Held);
        }
        let released = scopes.release(1);
        assert_eq!(ticks(&released), [2, 3, 4]);
        assert_eq!(released.dropped, 2);
    }

    #[test]
    fn the_arena_reclaims_the_dropped_front_and_keeps_the_newest_intact() {
        let mut scopes = Scopes::default();
        begin(&mut scopes, 1, 0, 3);
        let thread = ThreadInfo {
            name: "t".into(),
            id: 1,
            serial: THREAD_SERIAL,
        };
        for t in 0..100u64 {
            let mut large = body(t);
            large.resize(1000, MaybeUninit::new(t as u8));
            assert_eq!(
                scopes.route(1, Level::Debug, &thread, 1, &large),
                Route::Held
            );
        }
        let open = &scopes.open[&1];
        assert!(open.arena.len() <= 8 * 1000, "the front was reclaimed");
        let released = scopes.release(1);
        assert_eq!(ticks(&released), [97, 98, 99]);
        assert_eq!(released.dropped, 97);
        for held in &released.records {
            let body = released.body(held);
            assert_eq!(body.len(), 1000);
            // SAFETY: the test wrote every byte.
            assert_eq!(unsafe { body[999].assume_init() }, held.ticks as u8);
        }
        assert_eq!(scopes.held_bytes, 0);
    }

    #[test]
    fn a_child_trigger_writes_the_parents_records_merged_in_time() {
        let mut scopes = Scopes::default();
        begin(&mut scopes, 1, 0, 10);
        route(&mut scopes, 1, Level::Debug, 1);
        begin(&mut scopes, 2, 1, 10);
        route(&mut scopes, 2, Level::Debug, 2);
        route(&mut scopes, 1, Level::Debug, 3);
        route(&mut scopes, 2, Level::Debug, 4);
        let released = scopes.release(2);
        assert_eq!(ticks(&released), [1, 2, 3, 4]);
        assert_eq!(released.scopes, 2);
        assert_eq!(route(&mut scopes, 1, Level::Debug, 5), Route::WriteReleased);
    }

    #[test]
    fn a_quiet_child_discards_only_its_own() {
        let mut scopes = Scopes::default();
        begin(&mut scopes, 1, 0, 10);
        route(&mut scopes, 1, Level::Debug, 1);
        begin(&mut scopes, 2, 1, 10);
        route(&mut scopes, 2, Level::Debug, 2);
        assert!(end(&mut scopes, 2, false).is_none());
        assert_eq!(ticks(&end(&mut scopes, 1, true).unwrap()), [1]);
    }

    #[test]
    fn a_cycle_of_parents_ends() {
        let mut scopes = Scopes::default();
        begin(&mut scopes, 1, 2, 10);
        begin(&mut scopes, 2, 1, 10);
        route(&mut scopes, 1, Level::Debug, 1);
        route(&mut scopes, 2, Level::Debug, 2);
        assert_eq!(ticks(&scopes.release(1)), [1, 2]);
    }

    #[test]
    fn shutdown_takes_every_open_scopes_records() {
        let mut scopes = Scopes::default();
        begin(&mut scopes, 1, 0, 10);
        begin(&mut scopes, 2, 0, 10);
        route(&mut scopes, 2, Level::Debug, 1);
        route(&mut scopes, 1, Level::Debug, 2);
        let all = scopes.release_all();
        assert_eq!(ticks(&all), [1, 2]);
        assert_eq!(all.scopes, 2);
        assert_eq!(scopes.held_bytes, 0);
    }
}
