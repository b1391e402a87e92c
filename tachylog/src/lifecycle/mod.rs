//! What keeps records from being lost when the program ends abnormally: a panic hook and an
//! `atexit` hook, both installed once per process by the first `init`, and the helper that
//! contains panics raised by users' `fmt` implementations; signal handlers
//! ([`signals`]: SIGTERM, SIGINT, SIGHUP; [`crash`]: SIGSEGV and the other fatal signals) and
//! the `fork()` child handler ([`fork`]).
//!
//! The signal and fork handlers are built for Linux (they use `pipe2`, `gettid` and
//! `__errno_location`); elsewhere `init` installs only the panic and atexit hooks.
//!
//! What a signal handler may touch: [`drain_bounded`] is the one entry into the logger from
//! signal context. It uses only atomics, `gettid` and `nanosleep` (all async-signal-safe): it
//! raises the flush request counter that the back end polls, then waits, bounded, for the back
//! end (a normal thread, unaffected by the signal) to report the flush done.

#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod crash;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod fork;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod signals;

use crate::backend::worker::Control;
#[cfg(any(target_os = "linux", target_os = "android"))]
use crate::frontend::gate::GATE;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Arc;
#[cfg(any(target_os = "linux", target_os = "android"))]
use std::time::Duration;

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Set while tachylog runs a user's `fmt` impl under `catch_unwind`: a panic there is
    /// contained and written into the record, so the hook must stay quiet about it.
    static CONTAINING_USER_PANIC: Cell<bool> = const { Cell::new(false) };
    /// Set on the back end's thread, which must never wait for itself.
    static ON_BACKEND_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, a user's formatting code, turning a panic into its message.
pub(crate) fn catch_user_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let previous = CONTAINING_USER_PANIC.with(|c| c.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    CONTAINING_USER_PANIC.with(|c| c.set(previous));
    outcome.map_err(|payload| panic_message(&*payload).to_string())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "non-string panic payload"
    }
}

/// Marks the current thread as the back end's.
pub(crate) fn mark_backend_thread() {
    ON_BACKEND_THREAD.with(|c| c.set(true));
    BACKEND_TID.store(crate::queue::registry::ThreadInfo::current().id, Ordering::Release);
}

/// The OS thread id of the running back end (0 before the first): a signal handler compares it
/// with `gettid()`, as thread-locals are not safe to touch from signal context.
static BACKEND_TID: AtomicU64 = AtomicU64::new(0);

/// The running (or last) logger's control block, for signal handlers, which cannot take the
/// `RUNNING` mutex. Each points at a `Control` leaked on purpose by [`publish_control`]: a
/// handler may read it at any moment, so it must never be freed (one small block per `init`).
static SIGNAL_CONTROL: AtomicPtr<Control> = AtomicPtr::new(std::ptr::null_mut());

/// Makes `control` the one signal handlers drain. Called by `init` before the back end runs.
pub(crate) fn publish_control(control: &Arc<Control>) {
    let leaked = Arc::into_raw(control.clone()).cast_mut();
    SIGNAL_CONTROL.store(leaked, Ordering::Release);
}

/// What the back end does after a bounded drain.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterDrain {
    /// Goes on logging: the process lives on.
    Continue,
    /// Writes nothing more, ever: the process is about to die, and a write cut short by its
    /// death would leave a torn line (the kernel stops a `write(2)` to a file part-way when a
    /// fatal signal is pending).
    Halt,
}

/// Asks the back end to write and flush everything published so far, then waits for it at most
/// `limit`. Returns whether the flush completed. Async-signal-safe (see the module doc); also
/// used from ordinary threads. `wake` may unpark the back end (not from signal context: it
/// takes a lock); otherwise it notices within its flush interval.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn drain_bounded(limit: Duration, wake: bool, after: AfterDrain) -> bool {
    let control = SIGNAL_CONTROL.load(Ordering::Acquire);
    if control.is_null()
        || !GATE.backend_running.load(Ordering::Acquire)
        || current_tid() == BACKEND_TID.load(Ordering::Acquire)
    {
        return false;
    }
    // SAFETY: published controls are leaked, never freed (see `SIGNAL_CONTROL`).
    let control = unsafe { &*control };
    if after == AfterDrain::Halt {
        // Before the ticket: a back end that sees the ticket sees the halt (see `Worker::run`).
        control.halt.store(true, Ordering::SeqCst);
    }
    let ticket = control.flush.request();
    if wake {
        crate::frontend::gate::wake_backend();
    }
    const STEP: Duration = Duration::from_millis(2);
    let mut waited = Duration::ZERO;
    while waited < limit {
        if control.flush.served_without_lock(ticket) {
            return true;
        }
        if !GATE.backend_running.load(Ordering::Acquire) {
            return false;
        }
        sleep_signal_safe(STEP);
        waited += STEP;
    }
    false
}

#[cfg(target_os = "linux")]
fn current_tid() -> u64 {
    // SAFETY: gettid has no preconditions and is async-signal-safe.
    unsafe { libc::gettid() as u64 }
}

#[cfg(target_os = "android")]
fn current_tid() -> u64 {
    u64::MAX // never the back end's id (which comes from a counter starting at 1)
}

/// `nanosleep`, which (unlike `std::thread::sleep` on every platform) is async-signal-safe.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn sleep_signal_safe(d: Duration) {
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; a null remainder pointer is allowed.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// Whether the current thread is the back end's.
pub(crate) fn on_backend_thread() -> bool {
    ON_BACKEND_THREAD.try_with(|c| c.get()).unwrap_or(false)
}

/// Installs the panic hook and the `atexit` hook, once per process.
pub(crate) fn install_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CONTAINING_USER_PANIC.try_with(|c| c.get()).unwrap_or(false) {
                return;
            }
            if crate::logger::is_running() && !on_backend_thread() {
                let thread = std::thread::current();
                let message = format!(
                    "thread '{}' panicked at {}: {}",
                    thread.name().unwrap_or("<unnamed>"),
                    info.location()
                        .map_or_else(|| "?".to_string(), |l| l.to_string()),
                    panic_message(info.payload())
                );
                let (file, line) = info.location().map_or(("?", 0), |l| (l.file(), l.line()));
                crate::frontend::producer::log_dynamic(
                    crate::Level::Error,
                    "panic",
                    file,
                    line,
                    &message,
                    &[],
                );
                crate::flush();
            }
            previous(info);
        }));
        // SAFETY: registering a plain `extern "C"` function with no arguments.
        unsafe { libc::atexit(flush_at_exit) };
        #[cfg(any(target_os = "linux", target_os = "android"))]
        fork::install();
    });
}

/// Runs during `exit()`: other threads are still alive, so the back end can drain everything
/// logged so far while this thread waits.
extern "C" fn flush_at_exit() {
    if crate::logger::is_running() && !on_backend_thread() {
        crate::flush();
    }
}
