//! SIGTERM and SIGINT: drain and flush; then die of the signal, unless the application handles
//! it. SIGHUP (opt-in): reopen the files.
//!
//! The handler itself only writes the signal's number into a pipe (`write(2)` is
//! async-signal-safe); the `tachylog-signals` thread reads it and does the work on an ordinary
//! thread. Who owns the process's reaction is decided when the signal arrives, so that it holds
//! whatever the order in which the application and tachylog installed their handlers:
//! - **A handler installed after `init` called ours** (`signal-hook`, and so `tokio::signal`,
//!   chain to the handler they replaced; the handler sees that the installed disposition is not
//!   its own): a bounded drain ([`TERMINATION_DRAIN_LIMIT`]), and nothing else. The application
//!   runs its shutdown and keeps logging.
//! - **A handler installed before `init`** (found at install time and saved): a bounded drain,
//!   then that handler's disposition is restored and the signal raised again, so it runs, once.
//! - **A handler installed after `init` that does not chain** (`ctrlc`, a plain `sigaction`):
//!   ours never runs; the application has it all.
//! - **No handler but ours:** a drain of everything published before the signal, after which
//!   the back end writes nothing more (so dying never cuts a write short and tears a line);
//!   then the default disposition is restored and the signal raised again: the exit status is
//!   the signal's.
//!
//! A disposition of `SIG_IGN` found at install time (a job started with `nohup`, or in the
//! background by a non-interactive shell) is respected: no handler. SIGHUP asks for
//! [`reopen`](crate::reopen) and then calls the application's previous handler, if it had one.
//!
//! The handlers are installed once per process, by the first `init` that asks for them, and
//! stay: with no logger running a SIGTERM still dies at once, as it would have without them.

use super::disposition::{call_previous, Errno, SavedAction};
use super::{drain_bounded, AfterDrain};
use crate::queue::control::EXIT_DELIVERY_LIMIT;
use libc::c_int;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;
use std::time::Duration;

/// How long a SIGTERM or SIGINT waits for the back end before dying anyway: a sink stuck on a
/// dead NFS mount must not make the process unkillable.
pub(crate) const TERMINATION_DRAIN_LIMIT: Duration = Duration::from_secs(5);

static TERM: SavedAction = SavedAction::new();
static INT: SavedAction = SavedAction::new();
static HUP: SavedAction = SavedAction::new();

/// The write end of the pipe to the signal thread; -1 while there is none (not started, or in a
/// forked child, where the thread does not exist): handlers then act at once without it.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

fn saved(sig: c_int) -> &'static SavedAction {
    match sig {
        libc::SIGTERM => &TERM,
        libc::SIGINT => &INT,
        _ => &HUP,
    }
}

/// Installs the SIGTERM/SIGINT handler (when `termination`) and the SIGHUP handler (when
/// `hangup`), each once per process.
pub(crate) fn install(termination: bool, hangup: bool) {
    static THREAD: Once = Once::new();
    static TERMINATION: Once = Once::new();
    static HANGUP: Once = Once::new();
    if !termination && !hangup {
        return;
    }
    THREAD.call_once(start_thread);
    if termination {
        TERMINATION.call_once(|| {
            TERM.install(libc::SIGTERM, on_signal, libc::SA_RESTART, true);
            INT.install(libc::SIGINT, on_signal, libc::SA_RESTART, true);
        });
    }
    if hangup {
        HANGUP.call_once(|| {
            HUP.install(libc::SIGHUP, on_signal, libc::SA_RESTART, false);
        });
    }
}

/// Forgets the pipe: in a forked child the signal thread does not exist.
pub(crate) fn forget_thread_after_fork() {
    PIPE_WRITE.store(-1, Ordering::Relaxed);
}

fn start_thread() {
    let mut fds = [0 as c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 returns.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        eprintln!("tachylog: cannot create the signal pipe; signals end the process at once");
        return;
    }
    let [read_fd, write_fd] = fds;
    // A full pipe must never block a signal handler: the byte is dropped instead (the thread
    // is then already busy with the same kind of signal).
    // SAFETY: `write_fd` is ours; F_SETFL with O_NONBLOCK has no other effect.
    unsafe { libc::fcntl(write_fd, libc::F_SETFL, libc::O_NONBLOCK) };
    let spawned = std::thread::Builder::new()
        .name("tachylog-signals".into())
        .spawn(move || signal_thread(read_fd));
    match spawned {
        Ok(_) => PIPE_WRITE.store(write_fd, Ordering::Release),
        Err(e) => eprintln!(
            "tachylog: cannot start the signal thread ({e}); signals end the process at once"
        ),
    }
}

/// Set in the byte a handler sends when it was called by another handler (one the application
/// installed after `init`, which chains to ours): the application owns that signal.
const CHAINED: u8 = 0x80;

fn signal_thread(read_fd: c_int) {
    loop {
        let mut byte = 0u8;
        // SAFETY: reading one byte into a local.
        let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
        if n != 1 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        let sig = c_int::from(byte & !CHAINED);
        if sig == libc::SIGHUP {
            crate::reopen();
            continue;
        }
        if byte & CHAINED != 0 {
            // The application's handler, installed after ours, runs the shutdown: write what
            // is queued, and let the process live.
            drain_bounded(TERMINATION_DRAIN_LIMIT, true, AfterDrain::Continue);
            continue;
        }
        if saved(sig).previous_handler().is_some() {
            // The application's handler, installed before ours: drain first, then hand the
            // signal to it (restored and raised: it runs once, with a real siginfo). It decides
            // what happens next, so the back end keeps writing.
            drain_bounded(TERMINATION_DRAIN_LIMIT, true, AfterDrain::Continue);
            die_of(sig);
            continue;
        }
        // Nobody else handles it: write everything published before the signal, give the
        // sinks their last chance to deliver (dying of the signal runs no `atexit` hook), stop
        // writing, then die of it. Records logged after the drain began are not waited for.
        drain_bounded(
            TERMINATION_DRAIN_LIMIT + EXIT_DELIVERY_LIMIT,
            true,
            AfterDrain::Halt,
        );
        die_of(sig);
    }
}

/// Restores `sig`'s previous disposition and raises it on this thread: the default action ends
/// the process with the signal's status; an application's handler runs instead (chained).
fn die_of(sig: c_int) {
    saved(sig).restore(sig);
    // SAFETY: raise has no preconditions; it is async-signal-safe.
    unsafe { libc::raise(sig) };
}

/// Whether `sig`'s installed disposition is [`on_signal`] itself. When it is not, yet
/// `on_signal` runs, a handler installed after ours called it: `signal-hook` (under
/// `tokio::signal`) chains to the handler it found. Asked at signal time, so the answer holds
/// whatever the order of installation. `sigaction` is async-signal-safe.
fn installed_handler_is_ours(sig: c_int) -> bool {
    // SAFETY: a null new action only reads the current one into a zeroed struct.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction
                == on_signal as extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void)
                    as usize
    }
}

extern "C" fn on_signal(sig: c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let errno = Errno::save();
    let chained = sig != libc::SIGHUP && !installed_handler_is_ours(sig);
    let fd = PIPE_WRITE.load(Ordering::Acquire);
    if fd >= 0 {
        let byte = sig as u8 | if chained { CHAINED } else { 0 };
        // SAFETY: write(2) of one byte from a local; async-signal-safe.
        unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    } else if sig != libc::SIGHUP && !chained {
        // No thread to drain for us: end as if tachylog were not here.
        die_of(sig);
    }
    if sig == libc::SIGHUP {
        // SAFETY: the saved handler was installed for this very signal by the application.
        unsafe { call_previous(&HUP, sig, info, context) };
    }
    errno.restore();
}
