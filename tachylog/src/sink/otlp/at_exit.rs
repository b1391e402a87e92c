//! Delivery at `exit()`: a process that ends with the logger still running (`std::process::exit`,
//! or `main` returning with the guard alive in a static) runs this hook, on the exiting thread,
//! while the other threads (the back end, the exporters) still run. The SIGTERM/SIGINT handling
//! calls the same function on its own thread, before the process dies of the signal.
//!
//! The logger's own `atexit` hook only flushes, and an [`OtlpSink`](super::OtlpSink) flush does
//! not send a partial batch early; without this hook the records in the batch being filled and
//! in the queue would vanish with the process, unreported. So: mark every live sink as exiting,
//! flush the logger (everything logged reaches the sinks; each sink then asks for an immediate
//! timer tick, in which it queues its batch whatever the limits), and wait for each sink's
//! batch and queue to drain, up to its shutdown timeout; report what did not go. The order of
//! this hook and the logger's does not matter: flushing twice is harmless.

use super::export::Shared;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Once, Weak};
use std::time::Instant;

/// Every sink built in this process; dead entries are pruned at the next registration.
static LIVE: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// Makes the sink whose queue is `shared` part of the exit hook, installing the hook once.
pub(super) fn register(shared: &Arc<Shared>) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        // SAFETY: registering a plain `extern "C"` function with no arguments.
        unsafe { libc::atexit(deliver_at_exit) };
    });
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    live.retain(|w| w.strong_count() > 0);
    live.push(Arc::downgrade(shared));
}

/// Marks every live sink as exiting, so that the logger's next flush makes each queue its
/// batch at once, and returns them. The signal thread calls it before its last drain: after
/// that drain the back end writes nothing more (see `AfterDrain::Halt`), so the flush that
/// [`deliver_before_exit`] asks for would come too late.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn mark_exiting() {
    live_sinks_marked_exiting();
}

fn live_sinks_marked_exiting() -> Vec<Arc<Shared>> {
    let live: Vec<Arc<Shared>> = LIVE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .filter(|shared| !shared.stopped())
        .collect();
    for shared in &live {
        shared.exiting.store(true, Ordering::SeqCst);
    }
    live
}

extern "C" fn deliver_at_exit() {
    deliver_before_exit("the process exited");
}

/// Sends what every live sink holds or queues, each within its shutdown timeout, and reports
/// what did not go; `ending` says why, for the report. Called at `exit()` and, with the
/// logger's SIGTERM/SIGINT handling, by the signal thread after its drain and before the
/// process dies of the signal (which runs no `atexit` hook).
pub(crate) fn deliver_before_exit(ending: &str) {
    let live = live_sinks_marked_exiting();
    if live.is_empty() {
        return;
    }
    // Returns at once on the back end's thread, or when no logger runs.
    crate::queue::control::flush();
    for shared in &live {
        let left = shared.drain(Instant::now() + shared.shutdown_timeout);
        if left > 0 {
            shared.counters.lost.fetch_add(left, Ordering::Relaxed);
            eprintln!(
                "tachylog: sink {}: {left} record(s) could not be delivered before {ending}",
                shared.describe
            );
        }
    }
}
