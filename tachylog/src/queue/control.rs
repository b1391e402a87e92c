//! The running logger's control block, and the one home of what crosses from the callers, the
//! guard and the process hooks to the back end besides the records: the flush barrier
//! ([`flush`]), reopening ([`reopen`]), waking the back end's thread ([`wake_backend`]), and
//! whether a back end runs at all ([`is_running`]).
//!
//! Layer 1 (see `ARCHITECTURE.md`): imports only the rest of `queue`. Everything above that
//! must wait for the back end (`sync_level` records, `flush()`, the exit and signal hooks,
//! sinks delivering at exit) comes here instead of to `logger` or `backend`.
//!
//! Threads: [`flush`], [`reopen`] and [`wake_backend`] are called from any thread but the back
//! end's and take a lock (cold paths only). [`Control::for_signals`] and the atomics are what a
//! signal handler may touch: no lock, no allocation.

use super::handshake::FlushHandshake;
use super::sync::lock;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// What the callers, the guard and the hooks share with the back end's worker.
pub(crate) struct Control {
    /// The `flush()` barrier: tickets requested by callers, served by the worker.
    pub(crate) flush: FlushHandshake,
    /// Set by the guard's drop: drain everything, flush, exit.
    pub(crate) shutdown: AtomicBool,
    /// Incremented by each `reopen()` call (and `SIGHUP`, when handled); the worker reopens
    /// every sink when it differs from the last value it served.
    pub(crate) reopen_requested: AtomicU64,
    /// Set (SeqCst) by a signal's drain right before it requests its flush ticket, when the
    /// process is about to die of the signal: once the worker has served that flush it writes
    /// nothing more, so the death never cuts a `write(2)` short (no torn last line).
    pub(crate) halt: AtomicBool,
    /// Incremented by each `dump_backtrace()` call; the worker writes the backtrace ring when
    /// it differs from the last value it served (before serving the flush that follows).
    pub(crate) backtrace_dump: AtomicU64,
    /// Set (SeqCst) before a flush ticket is requested when the process is ending (`exit()`, a
    /// termination signal it is about to die of): once that flush has drained the queues, the
    /// worker gives every sink its [`Sink::before_exit`](crate::Sink::before_exit), once.
    pub(crate) exiting: AtomicBool,
}

impl Control {
    pub(crate) fn new() -> Self {
        Control {
            flush: FlushHandshake::new(),
            shutdown: AtomicBool::new(false),
            reopen_requested: AtomicU64::new(0),
            halt: AtomicBool::new(false),
            backtrace_dump: AtomicU64::new(0),
            exiting: AtomicBool::new(false),
        }
    }

    /// Makes `control` the one signal handlers drain. Called by `init` before the back end
    /// runs.
    pub(crate) fn publish_for_signals(control: &Arc<Control>) {
        // Leaked on purpose: a signal handler may read it at any moment, so it must never be
        // freed (one small block per `init`).
        let leaked = Arc::into_raw(control.clone()).cast_mut();
        SIGNAL_CONTROL.store(leaked, Ordering::Release);
    }

    /// The slot of the running logger's control block, locked: `init` and the guard's drop
    /// fill and empty it, and a filter change holds it so that it cannot re-enable a logger
    /// that is stopping.
    pub(crate) fn lock_running() -> MutexGuard<'static, Option<Arc<Control>>> {
        lock(&RUNNING)
    }

    /// The running logger's control block (a lock; never from signal context).
    pub(crate) fn running() -> Option<Arc<Control>> {
        lock(&RUNNING).clone()
    }

    /// The running (or last) logger's control block, for signal handlers, which cannot lock.
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    pub(crate) fn for_signals() -> Option<&'static Control> {
        let control = SIGNAL_CONTROL.load(Ordering::Acquire);
        // SAFETY: published controls are leaked, never freed (see `publish_for_signals`).
        (!control.is_null()).then(|| unsafe { &*control })
    }
}

/// The running logger's control block, for `flush()` and `reopen()`.
static RUNNING: Mutex<Option<Arc<Control>>> = Mutex::new(None);

/// The last control block made running, leaked; see [`Control::for_signals`].
static SIGNAL_CONTROL: AtomicPtr<Control> = AtomicPtr::new(std::ptr::null_mut());

/// Whether a back end is running and will drain rings. Set (Release) by `init` once the worker
/// runs, cleared by the guard's drop, by a worker that panicked and in a forked child. Producers
/// that find their ring full while it is false drop the record instead of waiting forever. Read
/// on cold paths only.
pub(crate) static BACKEND_RUNNING: AtomicBool = AtomicBool::new(false);

/// Whether a logger is running.
pub(crate) fn is_running() -> bool {
    BACKEND_RUNNING.load(Ordering::Acquire)
}

/// Bench-only: while set, the back end neither drains nor flushes (see [`hold_backend`]).
/// Written by the benchmark's thread, read by the worker at the top of each round (SeqCst
/// both sides; a cold path, read once per worker round only).
static BACKEND_HELD: AtomicBool = AtomicBool::new(false);

/// Holds (`true`) or releases (`false`) the back end, for `tachylog-bench`'s back-end-alone
/// workload: fill the rings while held, release, time the drain. Not a public API.
///
/// While held, the worker only sleeps ~100 µs at a time: it drains nothing, writes nothing and
/// serves no [`flush`], so producers **block** (or drop, under `OnFull::Drop`) once their rings
/// fill, and `flush()` waits until the release. Set before `init`, it also holds the back
/// end's first step (recovery, and the ledger's cut after it). Dropping the guard ends the hold
/// (the shutdown drains as always), so a forgotten release cannot hang the exit.
#[doc(hidden)]
pub fn hold_backend(held: bool) {
    BACKEND_HELD.store(held, Ordering::SeqCst);
    if !held {
        wake_backend();
    }
}

/// Whether [`hold_backend`] holds the back end (read by the worker loop).
pub(crate) fn backend_held() -> bool {
    BACKEND_HELD.load(Ordering::SeqCst)
}

/// The back end's wake-up: a flag and a condition variable of its own.
///
/// Not the thread's park token: `std::sync::mpsc` parks the calling thread too (the back end
/// waits on a file sink's writing thread through a channel), and a `recv` that returns consumes
/// any pending unpark. A producer's wake would then be lost, and it would wait out the whole
/// flush interval on a full ring (100 ms stalls in about one `seed_1m` run in four). A rung
/// doorbell stays rung until the back end's next sleep, which then returns at once.
struct Doorbell {
    rung: Mutex<bool>,
    bell: Condvar,
}

static DOORBELL: Doorbell = Doorbell {
    rung: Mutex::new(false),
    bell: Condvar::new(),
};

/// Wakes the back end if it sleeps, or makes its next sleep return at once.
#[cold]
#[inline(never)]
pub(crate) fn wake_backend() {
    *lock(&DOORBELL.rung) = true;
    DOORBELL.bell.notify_one();
}

/// The back end's sleep: returns after `timeout`, or as soon as [`wake_backend`] is (or was,
/// since the last sleep) called. Returns whether it was woken.
pub(crate) fn sleep_until_woken(timeout: Duration) -> bool {
    let rung = lock(&DOORBELL.rung);
    let (mut rung, _) = DOORBELL
        .bell
        .wait_timeout_while(rung, timeout, |rung| !*rung)
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    std::mem::take(&mut *rung)
}

thread_local! {
    /// Set on the back end's thread, which must never wait for itself.
    static ON_BACKEND_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// The OS thread id of the running back end (0 before the first): a signal handler compares it
/// with `gettid()`, as thread-locals are not safe to touch from signal context.
static BACKEND_TID: AtomicU64 = AtomicU64::new(0);

/// Marks the current thread as the back end's.
pub(crate) fn mark_backend_thread() {
    ON_BACKEND_THREAD.with(|c| c.set(true));
    BACKEND_TID.store(super::registry::os_thread_id(), Ordering::Release);
}

/// Whether the current thread is the back end's.
pub(crate) fn on_backend_thread() -> bool {
    ON_BACKEND_THREAD.try_with(|c| c.get()).unwrap_or(false)
}

/// The back end's OS thread id (0 before the first back end), for signal handlers.
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
pub(crate) fn backend_tid() -> u64 {
    BACKEND_TID.load(Ordering::Acquire)
}

/// Blocks until every record logged before this call, by any thread, has been written and the
/// sinks flushed. Returns at once when no logger is running or when called from the back end.
///
/// ```
/// let guard = tachylog::builder().stdout().init().unwrap();
/// tachylog::info!("visible on stdout once flush returns");
/// tachylog::flush();
/// # drop(guard);
/// ```
pub fn flush() {
    if !is_running() || on_backend_thread() {
        return; // also in a forked child, where `RUNNING`'s lock may be held forever
    }
    let Some(control) = Control::running() else {
        return;
    };
    let ticket = control.flush.request();
    wake_backend();
    control.flush.wait(ticket);
}

/// How long the sinks get, together, for [`Sink::before_exit`](crate::Sink::before_exit) as the
/// process ends: bounded, since a collector that does not answer must not keep a dying process
/// alive (a container's grace period after SIGTERM is often 10 to 30 s).
pub(crate) const EXIT_DELIVERY_LIMIT: Duration = Duration::from_secs(10);

/// A [`flush`] at `exit()`: after it, the back end gives every sink its last chance to deliver
/// ([`Sink::before_exit`](crate::Sink::before_exit)) before the ticket is served.
pub(crate) fn flush_before_exit() {
    if !is_running() || on_backend_thread() {
        return;
    }
    let Some(control) = Control::running() else {
        return;
    };
    // Before the ticket: a back end that sees the ticket sees this.
    control.exiting.store(true, Ordering::SeqCst);
    flush();
}

/// Writes the records kept by the backtrace ring ([`Builder::backtrace`](crate::Builder::backtrace))
/// now, marked `[backtrace]`, oldest first, and empties it; returns once they are written (it
/// is a [`flush`] too). Does nothing more than a flush without a backtrace ring, or when no
/// logger is running.
///
/// ```
/// let guard = tachylog::builder()
///     .stderr()
///     .backtrace(tachylog::Level::Debug, 64)
///     .init()
///     .unwrap();
/// tachylog::debug!("kept, not written");
/// tachylog::dump_backtrace(); // written now, marked [backtrace]
/// # drop(guard);
/// ```
pub fn dump_backtrace() {
    if !is_running() || on_backend_thread() {
        return;
    }
    if let Some(control) = Control::running() {
        control.backtrace_dump.fetch_add(1, Ordering::SeqCst);
    }
    flush();
}

/// Closes and reopens every sink's destination, as needed after `logrotate` moved the files
/// away. Records logged before the call go to the old files; the call returns once the new ones
/// are open (it is a [`flush`] too). Does nothing when no logger is running.
///
/// ```
/// let dir = std::env::temp_dir().join("tachylog-doc-reopen");
/// let guard = tachylog::builder().file(dir.join("app.log")).init().unwrap();
/// tachylog::info!("before the move");
/// tachylog::flush();
/// std::fs::rename(dir.join("app.log"), dir.join("app.log.1")).unwrap();
/// tachylog::reopen();
/// assert!(dir.join("app.log").exists());
/// tachylog::info!("after the move");
/// drop(guard);
/// assert!(std::fs::read_to_string(dir.join("app.log")).unwrap().contains("after the move"));
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
pub fn reopen() {
    if !is_running() {
        return; // also in a forked child, where `RUNNING`'s lock may be held forever
    }
    let Some(control) = Control::running() else {
        return;
    };
    // Requested before the flush, so the flush that `flush()` waits for also serves it.
    control.reopen_requested.fetch_add(1, Ordering::SeqCst);
    wake_backend();
    drop(control);
    flush();
}
