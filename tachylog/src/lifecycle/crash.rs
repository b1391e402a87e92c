//! SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT: a best-effort, bounded drain of what the rings
//! already hold, then the signal's own ending.
//!
//! The handler runs on the crashing thread, on an alternate signal stack (so a stack overflow
//! can be handled), and does only async-signal-safe things: [`drain_bounded`] (atomics,
//! `gettid`, `nanosleep`) asks the back end, which is an ordinary thread still running, to write
//! and flush everything published so far, and waits at most [`CRASH_DRAIN_LIMIT`]. No
//! allocation, no lock, no formatting happens in the handler. Then it restores the disposition
//! found at install time (usually the default; for SIGSEGV and SIGBUS the Rust runtime's stack
//! overflow reporter, which is thereby chained) and lets the signal take its course: a hardware
//! fault re-executes the faulting instruction and meets that disposition; a signal sent with
//! `kill`/`raise`/`abort` is raised again. The exit status and the core dump are the signal's.
//!
//! Guaranteed: nothing. Best effort, and in practice: every record that other threads and the
//! crashing thread had completely published before the crash, provided the back end and the
//! sinks are healthy and finish within the limit. Not covered: a record the crashing thread was
//! in the middle of writing; a crash on the back end's own thread (no drain); memory corruption
//! that reached the logger's own data; anything the back end cannot finish within the limit
//! (a back end parked for its flush interval notices the request within that interval, so a
//! flush interval above about a second shortens the effective drain).

use super::disposition::{Errno, SavedAction};
use super::{drain_bounded, AfterDrain};
use libc::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::Duration;

/// The longest a crashing thread waits for the back end.
pub(crate) const CRASH_DRAIN_LIMIT: Duration = Duration::from_millis(1500);

const FATAL: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
];

static SAVED: [SavedAction; 5] = [
    SavedAction::new(),
    SavedAction::new(),
    SavedAction::new(),
    SavedAction::new(),
    SavedAction::new(),
];

/// Set by the first crashing thread: later crashes (another thread, or the runtime's stack
/// overflow reporter aborting after us) go straight to their ending.
static DRAINING: AtomicBool = AtomicBool::new(false);

/// Installs the handlers, once per process; also gives the calling thread an alternate signal
/// stack if it has none (threads spawned by Rust's `std` have one already).
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ensure_alternate_stack();
        for (sig, saved) in FATAL.iter().zip(&SAVED) {
            saved.install(*sig, on_crash, libc::SA_ONSTACK, true);
        }
    });
}

fn ensure_alternate_stack() {
    // SAFETY: querying the current alternate stack into a zeroed struct.
    let mut current: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new stack only queries.
    if unsafe { libc::sigaltstack(std::ptr::null(), &mut current) } != 0
        || current.ss_flags & libc::SS_DISABLE == 0
    {
        return;
    }
    const SIZE: usize = 64 * 1024;
    // SAFETY: an anonymous private mapping; checked for failure below.
    let stack = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if stack == libc::MAP_FAILED {
        return;
    }
    let new = libc::stack_t {
        ss_sp: stack,
        ss_flags: 0,
        ss_size: SIZE,
    };
    // SAFETY: `stack` is SIZE bytes that stay mapped for the life of the process (leaked on
    // purpose: the thread may take a signal at any time).
    unsafe { libc::sigaltstack(&new, std::ptr::null_mut()) };
}

extern "C" fn on_crash(sig: c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    let errno = Errno::save();
    if !DRAINING.swap(true, Ordering::AcqRel) {
        drain_bounded(CRASH_DRAIN_LIMIT, false, AfterDrain::Continue);
    }
    let Some(saved) = FATAL.iter().position(|&s| s == sig).map(|i| &SAVED[i]) else {
        return;
    };
    saved.restore(sig);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler (checked for null).
    let sent = info.is_null() || unsafe { (*info).si_code } <= 0;
    if sent {
        // Sent by kill/raise/abort: nothing re-executes, so raise it again. It stays pending
        // (blocked while this handler runs) and is delivered, with the restored disposition,
        // when we return.
        // SAFETY: raise is async-signal-safe.
        unsafe { libc::raise(sig) };
    }
    errno.restore();
}
