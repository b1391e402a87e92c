//! [`Guard`]: the running logger's lifetime, and the changes a running logger takes from any
//! thread (its level, its filter).

use crate::filter::{Filter, FilterError};
use crate::queue::control::{self, is_running, Control};
use crate::Level;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Keeps the logger running. Dropping it stops new records, drains every queue, flushes every
/// sink and joins the back end's thread; after that `init` may be called again.
///
/// Records logged by other threads after the drop starts are discarded.
#[must_use = "dropping the guard stops the logger at once"]
pub struct Guard {
    control: Arc<Control>,
    handle: Option<JoinHandle<()>>,
    /// The process that started the logger: in a forked child the back end does not exist and
    /// must not be joined.
    pid: u32,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.pid != std::process::id() {
            // A forked child: logging is already off (see `lifecycle::fork`); the parent's
            // thread and locks are not ours to touch.
            std::mem::forget(self.handle.take());
            return;
        }
        super::apply_filter(None);
        self.control.shutdown.store(true, Ordering::Release);
        if let Some(handle) = self.handle.take() {
            control::wake_backend();
            if handle.join().is_err() {
                eprintln!("tachylog: the back-end thread panicked; some records may be lost");
            }
        }
        control::BACKEND_RUNNING.store(false, Ordering::Release);
        *Control::lock_running() = None;
    }
}

impl Guard {
    pub(super) fn new(control: Arc<Control>, handle: JoinHandle<()>) -> Guard {
        Guard {
            control,
            handle: Some(handle),
            pid: std::process::id(),
        }
    }

    /// What the recovery of the spool did ([`Builder::spool`](crate::Builder::spool),
    /// [`Builder::recover_from`](crate::Builder::recover_from)), once it is done: it runs on
    /// the back end before its first record, and this waits for it (a [`flush`](crate::flush)).
    /// `None` when this logger recovers no spool. Unix only.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join("tachylog-doc-guard-recovery");
    /// let guard = tachylog::builder()
    ///     .file(dir.join("app.log"))
    ///     .spool(dir.join("spool"))
    ///     .init()
    ///     .unwrap();
    /// let recovery = guard.recovery().unwrap();
    /// assert!(recovery.warnings.is_empty(), "{:?}", recovery.warnings);
    /// # drop(guard);
    /// # std::fs::remove_dir_all(dir).unwrap();
    /// ```
    #[cfg(all(unix, not(loom)))]
    pub fn recovery(&self) -> Option<crate::Recovery> {
        crate::flush();
        crate::backend::recovery::last()
    }
}

/// Changes the most verbose level logged by the running logger, for every target, from any
/// thread. This replaces any per-target filter ([`set_filter`] sets one). Does nothing when no
/// logger is running.
///
/// ```
/// let guard = tachylog::builder().stdout().init().unwrap();
/// tachylog::set_level(tachylog::Level::Warn);
/// assert!(!tachylog::enabled(tachylog::Level::Info));
/// # drop(guard);
/// ```
pub fn set_level(level: Level) {
    apply_filter_if_running(Filter::new(level));
}

/// Changes the filter of the running logger, from any thread: `RUST_LOG` syntax
/// (`info,my_crate::net=debug,hyper=warn`). Returns the first bad directive as an error and
/// changes nothing then. Does nothing when no logger is running (the next `init` sets its own).
///
/// ```
/// let guard = tachylog::builder().stdout().init().unwrap();
/// tachylog::set_filter("warn,my_app::db=trace").unwrap();
/// tachylog::info!("not written: this module is at warn now");
/// assert!(tachylog::set_filter("info,db=loud").is_err());
/// # drop(guard);
/// ```
pub fn set_filter(spec: &str) -> Result<(), FilterError> {
    let filter: Filter = spec.parse()?;
    apply_filter_if_running(filter);
    Ok(())
}

/// Puts `filter` in force if a logger is running (under the lock `init` and shutdown take, so
/// a late change cannot re-enable a logger that is stopping).
fn apply_filter_if_running(filter: Filter) {
    if !is_running() {
        return; // also in a forked child, where the lock may be held forever
    }
    let running = Control::lock_running();
    if running.is_some() {
        super::apply_filter(Some(filter));
    }
}
