//! A fault-injecting wrapper around any sink, for testing how an application (and tachylog)
//! behaves when the destination fails: the next N writes fail with a chosen OS error, writes come
//! out short, or every write stalls. The faults are switched from any thread through a
//! [`Faults`] handle while the back end owns the sink.
//!
//! A test tool, behind the `testing` feature (not a default): as useful to an application
//! testing its own failure handling (enable the feature in its `[dev-dependencies]`) as to
//! tachylog's own tests.

use super::{Line, Sink};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Wraps a sink and injects the faults its [`Faults`] handle asks for. A test tool (feature
/// `testing`): `tachylog = { version = "0.1", features = ["testing"] }` under
/// `[dev-dependencies]` makes it available to an application's tests only.
///
/// ```
/// let dir = std::env::temp_dir().join("tachylog-doc-fault-sink");
/// let file = tachylog::FileSink::open(dir.join("app.log")).unwrap();
/// let (sink, faults) = tachylog::FaultSink::new(file);
/// let guard = tachylog::builder().sink(sink).init().unwrap();
/// tachylog::info!("written");
/// tachylog::flush();
/// faults.fail_next(1, libc::EIO); // the next record is lost...
/// tachylog::info!("lost");
/// tachylog::info!("written again"); // ...and recovery is announced in the log
/// drop(guard);
/// let text = std::fs::read_to_string(dir.join("app.log")).unwrap();
/// assert!(text.contains("1 records lost while"));
/// assert!(!text.contains(": lost ("));
/// # std::fs::remove_dir_all(dir).unwrap();
/// ```
pub struct FaultSink<S> {
    inner: S,
    faults: Faults,
}

/// The switchboard of a [`FaultSink`]; clone it freely.
///
/// ```
/// let (_sink, faults) = tachylog::FaultSink::new(tachylog::Stderr::new());
/// faults.fail_next(3, libc::ENOSPC);
/// faults.short_writes(true);
/// faults.delay(std::time::Duration::from_millis(1));
/// assert_eq!(faults.injected(), 0);
/// ```
#[derive(Clone, Default)]
pub struct Faults {
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    /// Writes still to fail.
    fail_next: AtomicU64,
    /// The raw OS error code of injected failures.
    errno: AtomicI32,
    /// Whether each write passes only the first half of its line, then fails.
    short: AtomicBool,
    /// Nanoseconds every write sleeps before doing anything.
    delay_nanos: AtomicU64,
    /// Faults injected so far (failed and short writes).
    injected: AtomicU64,
}

impl<S: Sink> FaultSink<S> {
    /// Wraps `inner`; no fault is armed until the returned handle asks for one.
    pub fn new(inner: S) -> (FaultSink<S>, Faults) {
        let faults = Faults::default();
        (
            FaultSink {
                inner,
                faults: faults.clone(),
            },
            faults,
        )
    }
}

impl Faults {
    /// Makes the next `writes` calls of `write_line` fail with the raw OS error `code` without
    /// reaching the inner sink. The code is what [`io::Error::from_raw_os_error`] takes: an
    /// `errno` on Unix (`libc::EIO`, `libc::ENOSPC`), a Win32 error code on Windows
    /// (`ERROR_DISK_FULL` is 112, `ERROR_WRITE_FAULT` 29).
    ///
    /// ```
    /// let (_sink, faults) = tachylog::FaultSink::new(tachylog::Stderr::new());
    /// #[cfg(unix)]
    /// faults.fail_next(1, libc::ENOSPC);
    /// #[cfg(windows)]
    /// faults.fail_next(1, 112); // ERROR_DISK_FULL
    /// ```
    pub fn fail_next(&self, writes: u64, code: i32) {
        self.state.errno.store(code, Ordering::Relaxed);
        self.state.fail_next.store(writes, Ordering::Release);
    }

    /// While on, each write hands the inner sink only the first half of the line, then fails
    /// with `WriteZero`, as a `write(2)` that came back short and then could not continue.
    pub fn short_writes(&self, on: bool) {
        self.state.short.store(on, Ordering::Release);
    }

    /// Makes every write and flush sleep `delay` first (`Duration::ZERO` turns it off), as a
    /// destination that blocks.
    pub fn delay(&self, delay: Duration) {
        let nanos = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        self.state.delay_nanos.store(nanos, Ordering::Release);
    }

    /// How many writes have failed or come out short because of this handle.
    pub fn injected(&self) -> u64 {
        self.state.injected.load(Ordering::Acquire)
    }

    fn stall(&self) {
        let nanos = self.state.delay_nanos.load(Ordering::Acquire);
        if nanos > 0 {
            std::thread::sleep(Duration::from_nanos(nanos));
        }
    }

    /// Consumes one armed failure, if any.
    fn take_failure(&self) -> Option<io::Error> {
        let taken = self
            .state
            .fail_next
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok();
        taken.then(|| {
            self.state.injected.fetch_add(1, Ordering::AcqRel);
            io::Error::from_raw_os_error(self.state.errno.load(Ordering::Relaxed))
        })
    }
}

impl<S: Sink> Sink for FaultSink<S> {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        self.faults.stall();
        if let Some(error) = self.faults.take_failure() {
            return Err(error);
        }
        if self.faults.state.short.load(Ordering::Acquire) {
            self.faults.state.injected.fetch_add(1, Ordering::AcqRel);
            let half = Line::new(
                line.level,
                line.unix_nanos,
                &line.text[..line.text.len() / 2],
            );
            self.inner.write_line(&half)?;
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "short write (injected)",
            ));
        }
        self.inner.write_line(line)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.faults.stall();
        self.inner.flush()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.inner.reopen()
    }

    fn next_deadline(&self) -> Option<i64> {
        self.inner.next_deadline()
    }

    fn tick(&mut self, now_unix_nanos: i64) -> io::Result<()> {
        self.inner.tick(now_unix_nanos)
    }
}
