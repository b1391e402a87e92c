//! What the logger costs the process, counted where it is spent and read by [`stats`] from any
//! thread: the back end's wake-ups and CPU time, and the memory its rings hold.
//!
//! The back end updates its counters when it goes to sleep (a relaxed store and one
//! `clock_gettime`, on Windows `GetThreadTimes`, per sleep), never per record; nothing here runs on a logging thread.

use crate::queue::chain;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Times the back end's thread came back from a sleep, since the process started.
static WAKEUPS: AtomicU64 = AtomicU64::new(0);
/// CPU time of back-end threads that have ended, in nanoseconds.
static ENDED_CPU_NANOS: AtomicU64 = AtomicU64::new(0);
/// CPU time of the running back end's thread when it last went to sleep, in nanoseconds.
static RUNNING_CPU_NANOS: AtomicU64 = AtomicU64::new(0);
/// Held records of request scopes that ended without a trigger.
static SCOPED_DISCARDED: AtomicU64 = AtomicU64::new(0);
/// Held records of request scopes written after a trigger, a flush or at shutdown.
static SCOPED_RELEASED: AtomicU64 = AtomicU64::new(0);

/// A snapshot of what the logger has cost so far, from [`stats`].
///
/// The back end sleeps between drains: at moderate rates it wakes once per flush interval (or
/// when a thread's ring passes a quarter full), formats what accumulated, and writes it with one
/// system call. These figures let an operator check that cost in production.
///
/// ```
/// let guard = tachylog::builder().stdout().init().unwrap();
/// tachylog::info!("hello");
/// tachylog::flush();
/// let stats = tachylog::stats();
/// assert!(stats.ring_bytes > 0); // this thread's ring
/// println!("back end woke {} times, used {:?} of CPU", stats.backend_wakeups, stats.backend_cpu);
/// # drop(guard);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// How many times the back end's thread woke from a sleep, over every logger this process
    /// has run.
    pub backend_wakeups: u64,
    /// CPU time (user and system) the back end's threads have used, as of the running back
    /// end's last sleep; `None` where the platform does not report a thread's CPU time.
    pub backend_cpu: Option<Duration>,
    /// Bytes of ring memory held now by every thread's queue. A thread's ring starts at 8 KiB
    /// and grows, up to [`Builder::ring_capacity`](crate::Builder::ring_capacity), only if the
    /// thread logs more between two drains; it is freed once the thread has exited and its
    /// records are written.
    pub ring_bytes: usize,
    /// Records of request scopes ([`Scope`](crate::Scope)) that ended without a trigger, held
    /// or already dropped for the scope's bounds, and so never written, over every logger this
    /// process has run.
    pub scoped_records_discarded: u64,
    /// Records held by request scopes and written when the scope was triggered or flushed, or
    /// at shutdown.
    pub scoped_records_released: u64,
}

/// What the logger has cost so far: see [`Stats`]. Cheap (a few relaxed loads); callable from
/// any thread, with or without a running logger.
///
/// ```
/// let stats = tachylog::stats();
/// println!("{} bytes of rings", stats.ring_bytes);
/// ```
pub fn stats() -> Stats {
    Stats {
        backend_wakeups: WAKEUPS.load(Ordering::Relaxed),
        backend_cpu: thread_cpu_supported().then(|| {
            let nanos =
                ENDED_CPU_NANOS.load(Ordering::Relaxed) + RUNNING_CPU_NANOS.load(Ordering::Relaxed);
            Duration::from_nanos(nanos)
        }),
        ring_bytes: chain::ring_bytes(),
        scoped_records_discarded: SCOPED_DISCARDED.load(Ordering::Relaxed),
        scoped_records_released: SCOPED_RELEASED.load(Ordering::Relaxed),
    }
}

pub(crate) fn count_scoped_discarded(records: u64) {
    SCOPED_DISCARDED.fetch_add(records, Ordering::Relaxed);
}

pub(crate) fn count_scoped_released(records: u64) {
    SCOPED_RELEASED.fetch_add(records, Ordering::Relaxed);
}

/// Counts one wake-up of the back end.
pub(crate) fn count_wakeup() {
    WAKEUPS.fetch_add(1, Ordering::Relaxed);
}

/// Records the calling (back-end) thread's CPU time so far; called when it goes to sleep.
pub(crate) fn record_backend_cpu() {
    if let Some(nanos) = this_thread_cpu_nanos() {
        RUNNING_CPU_NANOS.store(nanos, Ordering::Relaxed);
    }
}

/// Moves the calling (back-end) thread's CPU time to the ended total; called as it exits.
pub(crate) fn backend_ended() {
    if let Some(nanos) = this_thread_cpu_nanos() {
        RUNNING_CPU_NANOS.store(0, Ordering::Relaxed);
        ENDED_CPU_NANOS.fetch_add(nanos, Ordering::Relaxed);
    }
}

fn thread_cpu_supported() -> bool {
    cfg!(any(unix, windows))
}

#[cfg(unix)]
fn this_thread_cpu_nanos() -> Option<u64> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes only the struct we pass; the clock id is a constant every
    // Unix we build for defines.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64)
}

#[cfg(windows)]
fn this_thread_cpu_nanos() -> Option<u64> {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle of the current thread is always valid and needs no closing;
    // the four out-pointers are valid `FILETIME`s.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    // FILETIMEs count 100 ns intervals.
    let hundreds = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    (ok != 0).then(|| (hundreds(kernel) + hundreds(user)) * 100)
}

#[cfg(not(any(unix, windows)))]
fn this_thread_cpu_nanos() -> Option<u64> {
    None
}
