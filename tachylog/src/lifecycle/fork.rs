//! `fork()`: logging is cleanly disabled in the child.
//!
//! The child of a multi-threaded process has one thread: the back end is not there, and any
//! lock another thread held at the fork stays locked forever. A `pthread_atfork` child handler
//! therefore switches logging off with atomic stores only: log calls then cost the disabled
//! check and do nothing, `flush` and `reopen` return at once, dropping the inherited guard does
//! not wait for the parent's back end, and SIGTERM/SIGINT end the child directly (the signal
//! thread is the parent's too). The parent is unaffected. `init` cannot be called again in the
//! child (it reports `AlreadyInitialized`); a child that needs logs should `exec`.

use crate::frontend::gate::GATE;
use std::sync::atomic::Ordering;

/// Registers the child handler, once per process (called under the lifecycle `Once`).
pub(crate) fn install() {
    // SAFETY: registering a plain `extern "C"` function with no arguments as the child hook.
    unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
}

extern "C" fn after_fork_in_child() {
    GATE.set_max_level(None);
    crate::queue::control::BACKEND_RUNNING.store(false, Ordering::Release);
    log::set_max_level(log::LevelFilter::Off);
    super::signals::forget_thread_after_fork();
}
