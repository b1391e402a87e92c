//! [`mute_current_thread`]: a thread whose records through the `log` and `tracing` facades are
//! discarded. Sinks run threads of their own (an exporter's HTTP client, a TLS stack) whose
//! libraries log through those facades; delivered to the sink, each request would log more,
//! without end, and a failing sink would look busy. OpenTelemetry SDKs suppress their
//! exporters' own telemetry for the same reason.
//!
//! One thread-local read per facade record; tachylog's own macros do not look at it (a sink's
//! own code does not call them on its worker threads, and they stay one branch on the hot path).

use std::cell::Cell;

thread_local! {
    static MUTED: Cell<bool> = const { Cell::new(false) };
}

/// Discards every record logged from the calling thread, from now on, through the `log` and
/// `tracing` facades (the way libraries log). For threads a [`Sink`](crate::Sink) runs itself:
/// what their libraries log would otherwise come back into the sink. tachylog's own macros
/// (`info!` ...) are not affected. There is no way back: a thread that needs its records again
/// should not be muted.
///
/// ```
/// std::thread::spawn(|| {
///     tachylog::mute_current_thread();
///     log::warn!("an exporter's HTTP client logging: discarded");
/// })
/// .join()
/// .unwrap();
/// ```
pub fn mute_current_thread() {
    let _ = MUTED.try_with(|m| m.set(true));
}

/// Whether [`mute_current_thread`] was called on this thread.
pub(crate) fn current_thread_muted() -> bool {
    MUTED.try_with(Cell::get).unwrap_or(false)
}
