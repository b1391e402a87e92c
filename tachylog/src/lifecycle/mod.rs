//! What keeps records from being lost when the program ends abnormally: a panic hook and an
//! `atexit` hook, both installed once per process by the first `init`; signal handlers
//! ([`signals`]: SIGTERM, SIGINT, SIGHUP; [`crash`]: SIGSEGV and the other fatal signals) and
//! the `fork()` child handler ([`fork`]).
//!
//! The signal and fork handlers are built for Linux (they use `pipe2`, `gettid` and
//! `__errno_location`). On Windows, a console control handler ([`console_ctrl`]: Ctrl-C,
//! Ctrl-Break, closing the console) drains the queues instead. Elsewhere `init` installs only
//! the panic and atexit hooks.
//!
//! What a signal handler may touch: [`drain_bounded`] is the one entry into the logger from
//! signal context. It uses only atomics, `gettid` and `nanosleep` (all async-signal-safe): it
//! raises the flush request counter that the back end polls, then waits, bounded, for the back
//! end (a normal thread, unaffected by the signal) to report the flush done.
//!
//! Layer 7 (see `ARCHITECTURE.md`), after `facade`: imports everything below it except the
//! builder (`logger`), which installs these hooks.

#[cfg(windows)]
pub(crate) mod console_ctrl;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod crash;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod disposition;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod fork;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod signals;

#[cfg(any(target_os = "linux", target_os = "android", windows))]
use crate::queue::control::{self, Control};
#[cfg(any(target_os = "linux", target_os = "android", windows))]
use std::sync::atomic::Ordering;
#[cfg(any(target_os = "linux", target_os = "android", windows))]
use std::time::Duration;

use crate::queue::control::{is_running, on_backend_thread};
use std::sync::Once;

/// What the back end does after a bounded drain.
#[cfg(any(target_os = "linux", target_os = "android", windows))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterDrain {
    /// Goes on logging: the process lives on.
    Continue,
    /// Writes nothing more, ever: the process is about to die, and a write cut short by its
    /// death would leave a torn line (the kernel stops a `write(2)` to a file part-way when a
    /// fatal signal is pending).
    #[cfg_attr(windows, allow(dead_code))]
    Halt,
}

/// Asks the back end to write and flush everything published so far, then waits for it at most
/// `limit`. Returns whether the flush completed. Async-signal-safe (see the module doc); also
/// used from ordinary threads. `wake` may wake the back end (not from signal context: it
/// takes a lock); otherwise it notices within its flush interval.
#[cfg(any(target_os = "linux", target_os = "android", windows))]
pub(crate) fn drain_bounded(limit: Duration, wake: bool, after: AfterDrain) -> bool {
    let Some(shared) = Control::for_signals() else {
        return false;
    };
    if !is_running() || crate::queue::registry::os_thread_id() == control::backend_tid() {
        return false;
    }
    if after == AfterDrain::Halt {
        // Before the ticket: a back end that sees the ticket sees the halt (see `Worker::run`),
        // and gives the sinks their last chance to deliver before it stops writing.
        shared.exiting.store(true, Ordering::SeqCst);
        shared.halt.store(true, Ordering::SeqCst);
    }
    let ticket = shared.flush.request();
    if wake {
        control::wake_backend();
    }
    const STEP: Duration = Duration::from_millis(2);
    let mut waited = Duration::ZERO;
    while waited < limit {
        if shared.flush.served_without_lock(ticket) {
            return true;
        }
        if !is_running() {
            return false;
        }
        sleep_signal_safe(STEP);
        waited += STEP;
    }
    false
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

/// Windows has no signal context: the console control handler runs on an ordinary thread.
#[cfg(windows)]
fn sleep_signal_safe(d: Duration) {
    std::thread::sleep(d);
}

/// Installs the panic hook and the `atexit` hook, once per process.
pub(crate) fn install_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if crate::panic_guard::containing_user_panic() {
                return;
            }
            if is_running() && !on_backend_thread() {
                let thread = std::thread::current();
                let message = format!(
                    "thread '{}' panicked at {}: {}",
                    thread.name().unwrap_or("<unnamed>"),
                    info.location()
                        .map_or_else(|| "?".to_string(), |l| l.to_string()),
                    crate::panic_guard::panic_message(info.payload())
                );
                let (file, line) = info.location().map_or(("?", 0), |l| (l.file(), l.line()));
                crate::frontend::producer::log_dynamic(
                    crate::Level::Error,
                    "panic",
                    file,
                    line,
                    &message,
                    &[],
                    crate::frontend::trace::current(),
                );
                crate::queue::control::flush();
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
/// logged so far, and the sinks deliver what they hold ([`Sink::before_exit`](crate::Sink::before_exit)),
/// while this thread waits.
extern "C" fn flush_at_exit() {
    if is_running() && !on_backend_thread() {
        crate::queue::control::flush_before_exit();
    }
}
