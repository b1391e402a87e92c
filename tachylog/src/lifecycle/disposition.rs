//! What both kinds of handlers (termination in [`super::signals`], crashes in
//! [`super::crash`]) need to live beside the application's own: the disposition a signal had
//! before tachylog's handler ([`SavedAction`]), calling it ([`call_previous`]), and keeping
//! `errno` unchanged across a handler ([`Errno`]). Everything here is async-signal-safe.

use libc::c_int;
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

/// The disposition a signal had before tachylog's handler, restorable from signal context.
pub(crate) struct SavedAction {
    /// Set by the first [`SavedAction::install`]: the slot is filled once, whoever calls.
    claimed: AtomicBool,
    saved: AtomicBool,
    action: UnsafeCell<MaybeUninit<libc::sigaction>>,
}

// SAFETY: `action` is written once, by the one `install` that claimed the slot, before `saved`
// is set (Release) and before the handler that reads it is installed; afterwards it is only
// read.
unsafe impl Sync for SavedAction {}

impl SavedAction {
    pub(crate) const fn new() -> Self {
        SavedAction {
            claimed: AtomicBool::new(false),
            saved: AtomicBool::new(false),
            action: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Saves `sig`'s current disposition and installs `handler` (an `sa_sigaction` function),
    /// unless the current disposition is `SIG_IGN` and `respect_ignore`. Returns whether it
    /// installed. Only the first call on a slot does anything: a second would overwrite the
    /// saved disposition while a handler may be reading it.
    pub(crate) fn install(
        &self,
        sig: c_int,
        handler: extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void),
        flags: c_int,
        respect_ignore: bool,
    ) -> bool {
        if self.claimed.swap(true, Ordering::AcqRel) {
            return false;
        }
        // SAFETY: sigaction with a null new action only reads the current one into `action`,
        // which nothing reads yet (`saved` is false) and no other call writes (we claimed it).
        let old = unsafe {
            let slot = (*self.action.get()).as_mut_ptr();
            if libc::sigaction(sig, std::ptr::null(), slot) != 0 {
                return false;
            }
            &*slot
        };
        if respect_ignore && old.sa_sigaction == libc::SIG_IGN {
            return false;
        }
        self.saved.store(true, Ordering::Release);
        // SAFETY: an all-zero sigaction is valid; we then fill in the handler, flags and an
        // empty mask.
        let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
        new.sa_sigaction = handler as usize;
        new.sa_flags = flags | libc::SA_SIGINFO;
        // SAFETY: `new.sa_mask` is a valid sigset_t to initialise; `new` is fully initialised.
        unsafe {
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(sig, &new, std::ptr::null_mut()) == 0
        }
    }

    /// Puts the saved disposition back (the default one if none was saved). Async-signal-safe.
    pub(crate) fn restore(&self, sig: c_int) {
        if self.saved.load(Ordering::Acquire) {
            // SAFETY: `action` was initialised before `saved` was set.
            unsafe { libc::sigaction(sig, (*self.action.get()).as_ptr(), std::ptr::null_mut()) };
        } else {
            // SAFETY: SIG_DFL is always a valid disposition.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }

    /// The saved disposition's handler, when it was a function (not default, not ignore).
    pub(crate) fn previous_handler(&self) -> Option<(usize, bool)> {
        if !self.saved.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: initialised before `saved` was set, never written again.
        let old = unsafe { (*self.action.get()).assume_init_ref() };
        let handler = old.sa_sigaction;
        (handler != libc::SIG_DFL && handler != libc::SIG_IGN)
            .then_some((handler, old.sa_flags & libc::SA_SIGINFO != 0))
    }
}

/// Calls the handler `saved` held before tachylog's, if it was a function.
///
/// # Safety
/// Only from a signal handler for `sig`, with the arguments the kernel passed to it.
pub(crate) unsafe fn call_previous(
    saved: &SavedAction,
    sig: c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    let Some((handler, siginfo)) = saved.previous_handler() else {
        return;
    };
    if siginfo {
        // SAFETY: the application installed this address as an SA_SIGINFO handler.
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, context);
    } else {
        // SAFETY: the application installed this address as a plain handler.
        let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}

/// `errno` saved on entry to a handler and restored on exit, so the interrupted code does not
/// see it change.
pub(crate) struct Errno(c_int);

impl Errno {
    pub(crate) fn save() -> Errno {
        // SAFETY: `__errno_location` returns this thread's errno slot.
        Errno(unsafe { *libc::__errno_location() })
    }

    pub(crate) fn restore(self) {
        // SAFETY: as in `save`.
        unsafe { *libc::__errno_location() = self.0 };
    }
}
