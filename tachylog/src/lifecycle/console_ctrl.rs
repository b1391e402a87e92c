//! Ctrl-C, Ctrl-Break and the console window closing, on Windows: drain the queues, then let
//! the next console control handler decide what happens to the process.
//!
//! Windows delivers a console control event on a thread it creates for the purpose, and calls
//! the process's handlers newest first until one returns `TRUE`; the last, the system's own,
//! ends the process (`ExitProcess`). Ours writes and flushes what is queued, waiting at most
//! [`DRAIN_LIMIT`], and returns `FALSE`, so that:
//! - **a handler installed before `init`** (the application's, `ctrlc`'s) runs next, as if
//!   ours were not there: the process lives on if it says so, and may keep logging;
//! - **with no other handler**, the system ends the process, with every record published
//!   before the event written;
//! - **a handler installed after `init`** runs before ours: ours runs only if it returns
//!   `FALSE` too.
//!
//! The handler never ends the process itself, and the back end keeps writing after the drain
//! (unlike the halt after SIGTERM on Linux): whether the process ends is the next handler's
//! choice. A record logged between the drain and the end may be lost; a line cut short is not
//! expected, as Windows ends a thread only once a `WriteFile` to a local file has returned.
//!
//! Installed once per process, by the first `init` with
//! [`handle_termination`](crate::Builder::handle_termination) on; it stays, and does nothing
//! while no logger runs. It is an ordinary thread, so nothing here needs to be signal-safe.

use super::{drain_bounded, AfterDrain};
use std::sync::Once;
use std::time::Duration;
use windows_sys::core::BOOL;
use windows_sys::Win32::Foundation::FALSE;
use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;

/// How long an event waits for the back end: under the 5 s Windows grants a process between
/// closing its console (or logging off, or shutting down) and ending it.
pub(crate) const DRAIN_LIMIT: Duration = Duration::from_secs(4);

/// Adds the handler, once per process.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a function that lives as long as the process. The call fails only
        // for a process without the console API (never for a console or GUI program); then
        // there are no console events to handle either.
        unsafe { SetConsoleCtrlHandler(Some(on_event), 1) };
    });
}

/// Every event drains: Ctrl-C, Ctrl-Break, close, logoff and shutdown all end the process
/// unless a handler says otherwise.
unsafe extern "system" fn on_event(_event: u32) -> BOOL {
    drain_bounded(DRAIN_LIMIT, true, AfterDrain::Continue);
    FALSE
}
