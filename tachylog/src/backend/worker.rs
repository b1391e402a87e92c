//! The back end's thread: drains the rings in timestamp order, formats, writes to the sinks,
//! flushes when the queues run empty (and at least every flush interval), answers `flush()`,
//! and sleeps when there is nothing to do.
//!
//! Idle strategy: a server pays for the back end's CPU per second, not per record, so the back
//! end does not poll. When the queues run empty it writes what it formatted (one `write(2)` per
//! sink), announces its sleep in [`GATE`]'s `backend_sleeping` and parks until the next drain is
//! due: one flush interval later (100 ms by default), or earlier for a sink's timer. Producers
//! wake it sooner only when a ring passes a quarter full (see `frontend::producer`), and a ring
//! that keeps doing so grows instead; `flush()`, a blocked producer, an oversize record, a
//! signal and shutdown wake it at once. A producer's wake is a system call on the producer's
//! thread, so after a wake by a ring that can grow no more the back end sleeps shorter
//! ([`Nap`]) and wakes itself before that ring reaches its mark again. So at moderate rates it
//! wakes about ten times a second and handles a few hundred records per wake, at high rates it
//! wakes itself more often, and under sustained load it never sleeps. The price is latency to
//! disk: a record reaches the file within the flush interval, not at once
//! (`Builder::flush_interval` trades CPU for it).

use super::backtrace::{BacktraceConfig, BacktraceRing};
use super::clock::{WallClock, RESYNC_INTERVAL};
use super::merge::{DrainMode, Merger, SLACK, STALL_LIMIT};
use super::output::Output;
use super::stats;
use crate::format::pattern::LineFormatter;
use crate::frontend::gate::GATE;
use crate::frontend::limit::pending::{self as rate_limits, Suppressed};
use crate::queue::control::{self, Control};
use crate::queue::registry::{ThreadQueue, REGISTRY};
use crate::sink::SinkSlot;
use crate::Level;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// When the back end looks for rate-limited calls that no later call reported (see
/// `frontend::limit::pending`).
struct LimitScan {
    /// The clock at the previous scan: a period that ended before it with no call passing
    /// since has ended for good.
    cutoff: u64,
    /// The clock at which the next scan after a drain is due.
    next: u64,
    /// Ticks between scans after drains: the flush interval.
    interval: u64,
    found: Vec<Suppressed>,
    fields: Vec<u8>,
}

impl LimitScan {
    fn new(interval: u64) -> Self {
        let now = crate::frontend::clock::now();
        LimitScan {
            cutoff: now,
            next: now.saturating_add(interval),
            interval,
            found: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Writes a summary for each call site with such calls (every one with `force`); returns
    /// whether it wrote any.
    fn run(&mut self, out: &mut Output, force: bool) -> bool {
        let now = crate::frontend::clock::now();
        rate_limits::collect(self.cutoff, force, &mut self.found);
        self.cutoff = now;
        self.next = now.saturating_add(self.interval);
        let wrote = !self.found.is_empty();
        for found in self.found.drain(..) {
            out.suppressed(&found, &mut self.fields);
        }
        wrote
    }
}

/// Pause hints between two looks of a spinning back end with nothing to do (a few hundred
/// nanoseconds): short enough that a record waits no longer than its formatting takes, long
/// enough that the core's other hardware thread gets its share.
const SPIN_PAUSES: u32 = 64;

/// The shortest sleep [`Nap`] shortens to: at most a thousand self-timed wakes a second, and
/// only while producers log fast enough to need them.
const SHORTEST_NAP: Duration = Duration::from_millis(1);

/// How long the sleeping back end sleeps between drains when nothing else is due.
///
/// A producer that finds its ring a quarter full while the back end sleeps wakes it, and that
/// wake is a system call on the producer's thread, the largest cost in its tail. A ring that
/// may still grow grows instead the next time, so those wakes stop by themselves; a ring at its
/// largest size cannot. So when a producer whose ring is at its largest had to wake the back
/// end, the back end sleeps half as long as it just slept, waking itself before that ring
/// reaches its mark again; it sleeps longer again, a step at a time up to the flush interval,
/// while its own wakes find every such ring less than an eighth full. At moderate rates no
/// ring reaches its largest size and the back end sleeps the whole flush interval.
struct Nap {
    /// The next sleep.
    length: Duration,
    /// The longest sleep: the flush interval.
    longest: Duration,
}

/// Below this fill of the fullest ring at its largest size (in thousandths), a self-timed wake
/// came early enough to sleep longer: half of the producers' mark, a quarter.
const EARLY_FILL_PER_MILLE: usize = 125;

/// At or above this fill of the fullest ring at its largest size (in thousandths), a wake by a
/// producer came from such a ring reaching its mark (a quarter), not from a ring that grows.
const WOKEN_AT_FULL_SIZE_PER_MILLE: usize = 200;

impl Nap {
    fn new(longest: Duration) -> Self {
        Nap {
            length: longest,
            longest,
        }
    }

    /// After a sleep of `slept`, which a producer cut short or not, that ended with the
    /// fullest ring at its largest size `fill_per_mille` full: the next sleep.
    fn after(&mut self, slept: Duration, woken_by_producer: bool, fill_per_mille: usize) {
        if woken_by_producer {
            if fill_per_mille >= WOKEN_AT_FULL_SIZE_PER_MILLE {
                self.length = (slept / 2).max(SHORTEST_NAP).min(self.longest);
            }
        } else if fill_per_mille < EARLY_FILL_PER_MILLE {
            self.length = self
                .length
                .saturating_add(self.length / 2)
                .min(self.longest);
        }
    }
}

/// Records formatted per drain before the worker checks for flush requests again.
const BATCH: usize = 4096;

pub(crate) struct Worker {
    pub(crate) control: std::sync::Arc<Control>,
    pub(crate) merger: Merger,
    pub(crate) formatter: LineFormatter,
    pub(crate) sinks: Vec<SinkSlot>,
    pub(crate) clock: WallClock,
    pub(crate) flush_interval: Duration,
    /// Spins when idle instead of sleeping (`Builder::spin_backend`).
    pub(crate) spin: bool,
    /// The CPU the back end's thread runs on (`Builder::pin_backend`).
    pub(crate) cpu: Option<usize>,
    pub(crate) backtrace: Option<BacktraceConfig>,
    /// The spool's cuts, when `Builder::spool` installed one.
    #[cfg(all(unix, not(loom)))]
    pub(crate) spool: Option<super::spool_cut::SpoolCut>,
    /// The spool whose dead processes' records go to the sinks first (`Builder::spool`,
    /// `Builder::recover_from`).
    #[cfg(all(unix, not(loom)))]
    pub(crate) recover_from: Option<std::path::PathBuf>,
}

/// The spool's cuts, or nothing where there is no spool.
#[cfg(all(unix, not(loom)))]
type Cuts = Option<super::spool_cut::SpoolCut>;
#[cfg(not(all(unix, not(loom))))]
type Cuts = Option<std::convert::Infallible>;

/// After the sinks were flushed: commits a cut if records went to them since the last one.
#[allow(unused_variables)]
fn cut(cuts: &mut Cuts, merger: &mut Merger) {
    #[cfg(all(unix, not(loom)))]
    if let Some(cuts) = cuts {
        if cuts.pending() {
            cuts.commit(merger);
        }
    }
}

/// With a spool: the cut of the batch the sinks were writing, then the next batch handed to
/// them (see `SpoolCut::overlap`).
#[allow(unused_variables)]
fn overlap(cuts: &mut Cuts, merger: &mut Merger, out: &mut Output) {
    #[cfg(all(unix, not(loom)))]
    if let Some(cuts) = cuts {
        cuts.overlap(merger, &mut out.sinks);
    }
}

/// Notes that records went to the sinks (a cut is due after the next flush).
#[allow(unused_variables)]
fn note_written(cuts: &mut Cuts) {
    #[cfg(all(unix, not(loom)))]
    if let Some(cuts) = cuts {
        cuts.records_written();
    }
}

/// Publishes the clock's calibration to the spool, if there is one.
#[allow(unused_variables)]
fn publish_clock(cuts: &Cuts, clock: &WallClock) {
    #[cfg(all(unix, not(loom)))]
    if let Some(cuts) = cuts {
        cuts.publish_clock(clock);
    }
}

impl Worker {
    /// The worker thread's body. Returns when the guard asks it to shut down, after draining and
    /// flushing everything.
    pub(crate) fn run(self) {
        control::mark_backend_thread();
        let Worker {
            control,
            mut merger,
            formatter,
            sinks,
            clock,
            flush_interval,
            spin,
            cpu,
            backtrace,
            #[cfg(all(unix, not(loom)))]
            spool,
            #[cfg(all(unix, not(loom)))]
            recover_from,
        } = self;
        #[cfg(all(unix, not(loom)))]
        let mut cuts: Cuts = spool;
        #[cfg(all(unix, not(loom)))]
        if cuts.is_some() {
            merger.hold_spooled();
        }
        #[cfg(not(all(unix, not(loom))))]
        let mut cuts: Cuts = None;
        let mut out = Output::new(formatter, sinks, clock, backtrace.map(BacktraceRing::new));
        if let Some(cpu) = cpu {
            if let Err(e) = pin_current_thread(cpu) {
                out.backend_notice(
                    Level::Warn,
                    &format!("the back end could not be pinned to CPU {cpu}: {e}"),
                );
            }
        }
        // A hold set before the logger started holds its first step too: tests kill a process
        // whose back end never ran.
        while control::backend_held() && !control.shutdown.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(100));
        }
        // What dead processes left goes to the sinks before any record of ours; then the
        // ledger starts again from the files as they are.
        #[cfg(all(unix, not(loom)))]
        {
            if let Some(root) = &recover_from {
                super::recovery::recover(root, &mut out);
            }
            if let Some(cuts) = &cuts {
                // From now on every batch a file sink writes is noted in the spool's journal.
                crate::queue::spool::journal::activate(Some(cuts.journal()));
            }
        }
        let mut dumped_up_to = 0u64;
        out.refresh_deadline();
        let mut reopened_up_to = 0u64;
        let mut generation = usize::MAX;
        let mut flushed_up_to = 0u64;
        let mut last_flush = Instant::now();
        let mut last_resync = Instant::now();
        let mut dirty = false;
        // Whether the sinks had their `before_exit`: once, as the process ends.
        let mut gave_last_chance = false;
        let mut limits = LimitScan::new(out.clock.ticks_for(flush_interval));
        let mut nap = Nap::new(flush_interval);
        publish_clock(&cuts, &out.clock);
        loop {
            // Bench-only hold (`__private::hold_backend`): no drain, no flush until released;
            // a shutdown ends it.
            if control::backend_held() && !control.shutdown.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_micros(100));
                continue;
            }
            // Read the clock, then adopt new queues: see `Merger::drain` for why in this order.
            let now = crate::frontend::clock::now();
            let current = REGISTRY.generation();
            if current != generation {
                generation = current;
                merger.adopt(REGISTRY.adopt());
            }
            if last_resync.elapsed() >= RESYNC_INTERVAL {
                out.clock.resync();
                publish_clock(&cuts, &out.clock);
                last_resync = Instant::now();
            }
            #[cfg(all(unix, not(loom)))]
            if let Some(warning) = crate::queue::spool::take_warning() {
                out.backend_notice(Level::Warn, &warning);
            }
            let until_timer = out.run_timers(now);
            let flush_target = control.flush.requested();
            // Read after the ticket: a halt and an exit are stored before their ticket is
            // requested.
            let halting = control.halt.load(Ordering::SeqCst);
            let exiting = control.exiting.load(Ordering::SeqCst);
            let shutting_down = control.shutdown.load(Ordering::Acquire);
            if flush_target > flushed_up_to || shutting_down {
                // Everything published before now, by every thread, then the sinks.
                merger.adopt(REGISTRY.adopt());
                generation = REGISTRY.generation();
                merger.snapshot();
                while merger
                    .drain(
                        crate::frontend::clock::now(),
                        DrainMode::UntilSnapshot,
                        BATCH,
                        |q, body, kind| out.record(q, body, kind),
                    )
                    .emitted
                    > 0
                {
                    note_written(&mut cuts);
                    out.release_huge_buffers();
                    if merger.has_held() {
                        // The spooled rings are not released until their records are in the
                        // files: a cut per batch keeps their producers going.
                        out.flush();
                        cut(&mut cuts, &mut merger);
                    }
                }
                merger.report_drops(|q, n| report_drop(&mut out, q, n));
                // Skipped calls that no later call reported, up to now: `flush()`, shutdown and
                // a signal's drain leave none behind.
                limits.run(&mut out, true);
                // The scopes still open when the process ends (a guard's drop, `exit`) or
                // dies: their held records.
                if shutting_down || halting || exiting {
                    out.release_open_scopes();
                }
                // `dump_backtrace()` asks for its dump, then a flush: the records logged before
                // it are in the ring by now.
                let dump_target = control.backtrace_dump.load(Ordering::SeqCst);
                if dump_target != dumped_up_to {
                    dumped_up_to = dump_target;
                    out.dump_backtrace();
                }
                out.flush();
                cut(&mut cuts, &mut merger);
                // `reopen()` requests a reopen, then a flush: everything logged before it went
                // to the old files, and it returns once the new ones are open.
                reopen_if_requested(&control, &mut reopened_up_to, &mut out);
                dirty = false;
                last_flush = Instant::now();
                if exiting && !gave_last_chance {
                    gave_last_chance = true;
                    let deadline = Instant::now() + control::EXIT_DELIVERY_LIMIT;
                    for sink in out.sinks.iter_mut() {
                        sink.before_exit(deadline);
                    }
                }
                if halting {
                    // Nothing may be written between this flush and the process's death.
                    control.flush.serve(flush_target);
                    control.flush.close();
                    halt_until_shutdown(&control);
                    return;
                }
                if flush_target > flushed_up_to {
                    flushed_up_to = flush_target;
                    control.flush.serve(flushed_up_to);
                }
                if shutting_down {
                    break;
                }
                continue;
            }
            let drained = merger.drain(now, DrainMode::Ordered, BATCH, |q, body, kind| {
                out.record(q, body, kind)
            });
            out.release_huge_buffers();
            merger.report_drops(|q, n| report_drop(&mut out, q, n));
            if now >= limits.next && limits.run(&mut out, false) {
                dirty = true;
            }
            if drained.emitted > 0 {
                dirty = true;
                note_written(&mut cuts);
                // Writing may have moved a sink to another file, with another deadline.
                out.refresh_deadline();
                // The spooled rings are not released until their records are in the files:
                // a cut per batch keeps their producers going, each batch written while the
                // next is formatted.
                if merger.has_held() {
                    overlap(&mut cuts, &mut merger, &mut out);
                } else if last_flush.elapsed() >= flush_interval {
                    out.flush();
                    cut(&mut cuts, &mut merger);
                    dirty = false;
                    last_flush = Instant::now();
                }
                continue;
            }
            if drained.held_back {
                // Another thread is mid-call; its record is microseconds away.
                std::thread::yield_now();
                continue;
            }
            // The queues ran empty: hand what we have to the sinks.
            if dirty {
                out.flush();
                cut(&mut cuts, &mut merger);
                dirty = false;
                last_flush = Instant::now();
            }
            reopen_if_requested(&control, &mut reopened_up_to, &mut out);
            merger.reap();
            if spin {
                // A core of its own: look again in a moment, never asleep, so that no
                // producer ever has to wake it. Its rings are replaced only when full, which
                // a stall of this thread brings about: the larger ones are ready beforehand.
                merger.prepare_successors();
                for _ in 0..SPIN_PAUSES {
                    std::hint::spin_loop();
                }
                continue;
            }
            // Announce the sleep, then look for what must not wait for it (SeqCst both sides: a
            // request stored after our look rings the doorbell, which ends or skips the sleep).
            // Records do not count: they wait for the next drain.
            GATE.backend_sleeping.store(true, Ordering::SeqCst);
            let requested = || {
                control.flush.requested() > flushed_up_to
                    || control.reopen_requested.load(Ordering::SeqCst) != reopened_up_to
                    || control.shutdown.load(Ordering::SeqCst)
            };
            if !requested() {
                stats::record_backend_cpu();
                // Wake at the next sink deadline (a file period boundary) when it comes before
                // the nap ends, so rotation happens on time with no traffic.
                let length = until_timer.map_or(nap.length, |t| t.min(nap.length));
                let started = Instant::now();
                let woken = control::sleep_until_woken(length);
                // A doorbell with no request behind it was a producer's (a ring at its mark,
                // or full).
                let woken_by_producer = woken && !requested();
                nap.after(
                    started.elapsed(),
                    woken_by_producer,
                    merger.fullest_at_full_size(),
                );
                let now = crate::frontend::clock::now();
                if woken_by_producer {
                    merger.prepare_successors_at_mark(now);
                }
                merger.withdraw_unused_successors(
                    now,
                    GATE.grow_window_ticks.load(Ordering::Relaxed),
                );
                stats::count_wakeup();
            }
            GATE.backend_sleeping.store(false, Ordering::Relaxed);
        }
        out.flush();
        cut(&mut cuts, &mut merger);
        #[cfg(all(unix, not(loom)))]
        if let Some(cuts) = cuts {
            crate::queue::spool::journal::activate(None);
            cuts.finish();
        }
        REGISTRY.give_back(merger.into_queues());
        stats::backend_ended();
    }
}

/// Runs the calling thread on `cpu` alone.
#[cfg(target_os = "linux")]
fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::other(format!(
            "CPUs are numbered below {}",
            libc::CPU_SETSIZE
        )));
    }
    // SAFETY: a zeroed `cpu_set_t` is the empty set; `CPU_SET` sets a bit below
    // `CPU_SETSIZE` (checked); `sched_setaffinity` reads the set's size we pass.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn pin_current_thread(_cpu: usize) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "pinning a thread is done on Linux only",
    ))
}

/// After a halting drain: the process is dying of a signal. Producers that keep logging wait
/// (their rings fill) or drop as their `OnFull` says; should the signal not end the process
/// after all, the guard's drop still finds a worker to join.
fn halt_until_shutdown(control: &Control) {
    while !control.shutdown.load(Ordering::Acquire) {
        control::sleep_until_woken(Duration::from_millis(100));
    }
}

/// Reopens every sink if a reopen was requested since the last one served.
fn reopen_if_requested(control: &Control, reopened_up_to: &mut u64, out: &mut Output) {
    let target = control.reopen_requested.load(Ordering::SeqCst);
    if target != *reopened_up_to {
        *reopened_up_to = target;
        out.reopen();
    }
}

fn report_drop(out: &mut Output, queue: &ThreadQueue, dropped: u64) {
    let message = format!(
        "{dropped} records dropped: this thread's queue was full (OnFull::Drop, max_block, or logging from the back end) or no back end was running"
    );
    out.notice(queue, Level::Warn, &message);
}

/// Builds the merger with tolerances converted to ticks.
pub(crate) fn new_merger(clock: &WallClock) -> Merger {
    Merger::new(clock.ticks_for(SLACK), clock.ticks_for(STALL_LIMIT))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERVAL: Duration = Duration::from_millis(100);

    #[test]
    fn a_nap_stays_the_flush_interval_while_no_producer_wakes_the_back_end() {
        let mut nap = Nap::new(INTERVAL);
        for fill in [0, 100, 240] {
            nap.after(INTERVAL, false, fill);
            assert_eq!(nap.length, INTERVAL);
        }
    }

    #[test]
    fn a_producers_wake_halves_the_nap_until_the_back_end_comes_first() {
        let mut nap = Nap::new(INTERVAL);
        // A producer's ring reached its mark 30 ms into the sleep.
        nap.after(Duration::from_millis(30), true, 250);
        assert_eq!(nap.length, Duration::from_millis(15));
        // Self-timed wakes that find the fullest ring past half the mark keep the nap...
        nap.after(nap.length, false, 130);
        assert_eq!(nap.length, Duration::from_millis(15));
        // A wake by a producer whose ring may still grow changes nothing: it grows next time.
        nap.after(Duration::from_millis(2), true, 0);
        assert_eq!(nap.length, Duration::from_millis(15));
        // And the nap is never below the shortest, however often producers wake it.
        for _ in 0..20 {
            nap.after(Duration::from_micros(100), true, 250);
        }
        assert_eq!(nap.length, SHORTEST_NAP);
    }

    #[test]
    fn a_nap_grows_back_to_the_flush_interval_when_the_rings_stay_nearly_empty() {
        let mut nap = Nap::new(INTERVAL);
        nap.after(Duration::from_millis(10), true, 250);
        let mut steps = 0;
        while nap.length < INTERVAL {
            nap.after(nap.length, false, 20);
            steps += 1;
            assert!(steps < 20, "{:?}", nap.length);
        }
        assert_eq!(nap.length, INTERVAL);
    }
}
