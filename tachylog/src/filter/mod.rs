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
/// Left out by the filter but within the request scopes' floor: enabled while the calling
/// thread is in a scope (see `frontend::scope`).
const SCOPED: u8 = 3;

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
            SCOPED => crate::frontend::scope::active(),
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
        let state = verdict(read_filter().as_ref(), level, target);
        self.state.store(state, Ordering::Relaxed);
        state == ENABLED || (state == SCOPED && crate::frontend::scope::active())
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

/// A call site's state under `filter` and the request scopes' floor.
fn verdict(filter: Option<&Filter>, level: Level, target: &str) -> u8 {
    if wanted(filter, level, target) {
        ENABLED
    } else if scopes_may_enable(filter, level, target) {
        SCOPED
    } else {
        DISABLED
    }
}

/// Whether a record the filter leaves out is wanted inside a request scope: its level is
/// within the scopes' floor and its target is not turned off (`noisy=off` stays off).
fn scopes_may_enable(filter: Option<&Filter>, level: Level, target: &str) -> bool {
    crate::frontend::scope::floor().is_some_and(|floor| level <= floor)
        && filter.is_some_and(|f| f.level_for(target).is_some())
}

/// The filter's own most verbose level as `u8` (`GATE.max_level` may be wider: the scope
/// floor), for records whose target is known only at run time.
static FILTER_MAX: AtomicU8 = AtomicU8::new(0);

/// Whether a record of `level` from `target` passes the current filter, or is wanted by the
/// calling thread's request scope, for records whose target is known only at run time (the
/// `log` facade, `tracing`). Takes a read lock only under per-target directives.
pub(crate) fn wanted_dynamic(level: Level, target: &str) -> bool {
    if level as u8 > GATE.max_level.load(Ordering::Relaxed) {
        return false;
    }
    let by_filter = level as u8 <= FILTER_MAX.load(Ordering::Relaxed)
        && (!PER_TARGET.load(Ordering::Relaxed) || wanted(read_filter().as_ref(), level, target));
    by_filter
        || (crate::frontend::scope::active()
            && scopes_may_enable(read_filter().as_ref(), level, target))
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
/// Returns the most verbose level a call may now have: the filter's, or the request scopes'
/// floor if that is more verbose.
pub(crate) fn apply(filter: Option<Filter>) -> Option<Level> {
    let filter = filter.map(widened);
    let sites = crate::queue::sync::lock(&SITES);
    put_in_force(&sites, filter)
}

/// [`apply`] under `SITES`' lock.
fn put_in_force(
    sites: &[(&'static Interest, Level, &'static str)],
    filter: Option<Filter>,
) -> Option<Level> {
    let filter_max = filter.as_ref().and_then(Filter::max_level);
    FILTER_MAX.store(filter_max.map_or(0, |l| l as u8), Ordering::Relaxed);
    let max_level = match (filter.as_ref(), crate::frontend::scope::floor()) {
        (Some(_), Some(floor)) => filter_max.max(Some(floor)),
        _ => filter_max,
    };
    *FILTER
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = filter.clone();
    PER_TARGET.store(
        filter.as_ref().is_some_and(Filter::has_targets),
        Ordering::Relaxed,
    );
    for (interest, level, target) in sites.iter() {
        let state = verdict(filter.as_ref(), *level, target);
        interest.state.store(state, Ordering::Relaxed);
    }
    GATE.set_max_level(max_level);
    max_level
}

/// Re-resolves every known call site under the filter in force, after the request scopes'
/// floor changed; returns what [`apply`] returns.
pub(crate) fn refresh() -> Option<Level> {
    let sites = crate::queue::sync::lock(&SITES);
    let filter = read_filter().clone();
    put_in_force(&sites, filter)
}
