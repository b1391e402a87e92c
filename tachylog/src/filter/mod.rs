//! Which records are wanted: `RUST_LOG`-style directives ([`Filter`]), resolved once per call
//! site and cached in the call site's own [`Interest`].
//!
//! A log call reads only its call site's interest (one relaxed load and a branch). The first
//! call from a site resolves it against the current filter and registers the site; changing the
//! filter ([`set_filter`], [`Guard::set_level`](crate::Guard::set_level), `init`) recomputes
//! every registered site under one lock, so a call never takes a lock after its first time.
//! The global kill switch (shutdown, a forked child) is [`GATE`]'s `max_level`, which
//! [`log_record`](crate::frontend::producer::log_record) checks again before writing.
//!
//! Layer 7 (see `ARCHITECTURE.md`): imports layers 1 to 3 (levels, the gate, the registry's
//! lock). Mirroring the level into the `log` crate is the caller's job (`logger`), so the
//! filter knows no facade.

mod directives;

pub use directives::{Filter, FilterError};

use crate::frontend::gate::GATE;
use crate::Level;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, RwLock};

const UNRESOLVED: u8 = 0;
const DISABLED: u8 = 1;
const ENABLED: u8 = 2;

/// A call site's cached verdict. Not a public API: the log macros create one per call site.
#[doc(hidden)]
pub struct Interest {
    /// `UNRESOLVED` until the site's first call, then `ENABLED` or `DISABLED` for the current
    /// filter. Written under `SITES`' lock; read relaxed by every call of the site.
    state: AtomicU8,
}

/// Every call site resolved so far, with what its verdict depends on.
static SITES: Mutex<Vec<(&'static Interest, Level, &'static str)>> = Mutex::new(Vec::new());

/// The filter in force; `None` while no logger runs. Written under `SITES`' lock.
static FILTER: RwLock<Option<Filter>> = RwLock::new(None);

/// Whether the filter in force has per-target directives. Without them the level alone
/// decides, and records with run-time targets (the `log` facade) skip `FILTER`'s lock, whose
/// reader count every logging thread would otherwise write.
static PER_TARGET: AtomicBool = AtomicBool::new(false);

impl Interest {
    /// A site not yet resolved.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Interest {
        Interest {
            state: AtomicU8::new(UNRESOLVED),
        }
    }

    /// Whether the call site (of `level`, in module `target`) is wanted.
    #[inline(always)]
    pub fn enabled(&'static self, level: Level, target: &'static str) -> bool {
        match self.state.load(Ordering::Relaxed) {
            ENABLED => true,
            DISABLED => false,
            _ => self.resolve(level, target),
        }
    }

    #[cold]
    #[inline(never)]
    fn resolve(&'static self, level: Level, target: &'static str) -> bool {
        // No logger (or a forked child, where another thread may have held the lock at the
        // fork): off, without locking and without caching.
        if GATE.max_level.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let mut sites = crate::queue::sync::lock(&SITES);
        if self.state.load(Ordering::Relaxed) == UNRESOLVED {
            sites.push((self, level, target));
        }
        let wanted = wanted(read_filter().as_ref(), level, target);
        self.state
            .store(if wanted { ENABLED } else { DISABLED }, Ordering::Relaxed);
        wanted
    }
}

fn read_filter() -> std::sync::RwLockReadGuard<'static, Option<Filter>> {
    FILTER
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn wanted(filter: Option<&Filter>, level: Level, target: &str) -> bool {
    filter
        .and_then(|f| f.level_for(target))
        .is_some_and(|max| level <= max)
}

/// Whether a record of `level` from `target` passes the current filter, for records whose
/// target is known only at run time (the `log` facade). Takes a read lock.
pub(crate) fn wanted_dynamic(level: Level, target: &str) -> bool {
    if level as u8 > GATE.max_level.load(Ordering::Relaxed) {
        return false;
    }
    !PER_TARGET.load(Ordering::Relaxed) || wanted(read_filter().as_ref(), level, target)
}

/// The backtrace ring's kept level as `Level as u8`, or 0: every filter put in force has its
/// default widened to it, so that the records the ring keeps reach the back end.
static BACKTRACE_FLOOR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets (or, with `None`, clears) the level every filter's default is widened to.
pub(crate) fn set_backtrace_floor(level: Option<Level>) {
    BACKTRACE_FLOOR.store(level.map_or(0, |l| l as u8), Ordering::Relaxed);
}

/// `filter` as it will be in force: its default widened to the backtrace ring's level.
pub(crate) fn widened(mut filter: Filter) -> Filter {
    if let Some(level) = Level::from_u8(BACKTRACE_FLOOR.load(Ordering::Relaxed)) {
        filter.widen_default(level);
    }
    filter
}

/// Puts `filter` in force (`None`: everything off) and re-resolves every known call site.
pub(crate) fn apply(filter: Option<Filter>) {
    let filter = filter.map(widened);
    let sites = crate::queue::sync::lock(&SITES);
    let max_level = filter.as_ref().and_then(Filter::max_level);
    *FILTER
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = filter.clone();
    PER_TARGET.store(
        filter.as_ref().is_some_and(Filter::has_targets),
        Ordering::Relaxed,
    );
    for (interest, level, target) in sites.iter() {
        let state = if wanted(filter.as_ref(), *level, target) {
            ENABLED
        } else {
            DISABLED
        };
        interest.state.store(state, Ordering::Relaxed);
    }
    GATE.set_max_level(max_level);
}
