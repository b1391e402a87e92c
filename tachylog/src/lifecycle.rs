//! What keeps records from being lost when the program ends abnormally: a panic hook and an
//! `atexit` hook, both installed once per process by the first `init`, and the helper that
//! contains panics raised by users' `fmt` implementations.

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
                );
                crate::flush();
            }
            previous(info);
        }));
        // SAFETY: registering a plain `extern "C"` function with no arguments.
        unsafe { libc::atexit(flush_at_exit) };
    });
}

/// Runs during `exit()`: other threads are still alive, so the back end can drain everything
/// logged so far while this thread waits.
extern "C" fn flush_at_exit() {
    if crate::logger::is_running() && !on_backend_thread() {
        crate::flush();
    }
}
