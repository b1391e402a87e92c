//! Running users' `Display`/`Debug` code so that a panic in it costs one value, not the logger.
//!
//! Layer 1 (see `ARCHITECTURE.md`): imports nothing from the crate. Called by whichever thread
//! formats a user's value: the calling thread for fallback arguments and the facades, the back
//! end for `CopyArg` values and `%`/`?` fields. The panic hook ([`crate::lifecycle`]) asks
//! [`containing_user_panic`] so that it stays quiet about a panic that is already handled.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// Set while tachylog runs a user's `fmt` impl under `catch_unwind`: a panic there is
    /// contained and written into the record, so the hook must stay quiet about it.
    static CONTAINING_USER_PANIC: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, a user's formatting code, turning a panic into its message.
pub(crate) fn catch_user_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let previous = CONTAINING_USER_PANIC.with(|c| c.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    CONTAINING_USER_PANIC.with(|c| c.set(previous));
    outcome.map_err(|payload| panic_message(&*payload).to_string())
}

/// Whether the current thread is inside [`catch_user_panic`] (false on a thread being torn
/// down).
pub(crate) fn containing_user_panic() -> bool {
    CONTAINING_USER_PANIC.try_with(|c| c.get()).unwrap_or(false)
}

/// The text of a panic's payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "non-string panic payload"
    }
}
