//! Request scopes, the calling thread's half: which scope this thread's records belong to, and
//! the [`Scope`] value an application creates per request.
//!
//! A record logged while a scope is entered carries the scope's id (8 bytes in its prefix); the
//! back end (`backend::scopes`) holds the scope's verbose records and writes them only if the
//! scope fails. The caller's cost is one thread-local load per call and the 8 bytes.
//!
//! **Following a request.** The current scope is a thread-local id. [`Scope::enter`] sets it
//! for a block, [`Scope::bind`] for every poll of a future, so the scope follows a task across
//! `.await` points and the threads of a multi-thread runtime, and two requests interleaved on
//! one thread each keep their own records.
//!
//! **Verbose call sites.** Production runs at INFO, so DEBUG call sites are normally disabled
//! and cost a load and a branch. The first scope that holds a level the filter leaves out
//! raises a *scope floor*: call sites down to that level are then enabled only while a scope is
//! entered (one more thread-local load on their disabled path), and stay off elsewhere.
//!
//! The lifecycle (begin, flush, end) travels through the thread's ring as [`ScopeEvent`]
//! frames, ordered with the records by the back end's merge, so the back end never sees a
//! scope's record before its beginning or after its end.

use crate::record::{ScopeEvent, ScopeEventKind};
use crate::Level;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::task::{Context, Poll};

thread_local! {
    /// The id of the scope this thread is in (0: none). `const`-initialised with no
    /// destructor, so reading it is one load relative to the thread pointer.
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// Ids of scopes, unique for the process's life (0 means no scope).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The most verbose level any scope created so far holds, as `u8` (0: no scope yet).
static FLOOR: AtomicU8 = AtomicU8::new(0);

/// Called after [`FLOOR`] is raised: re-resolves every call site against the new floor. Set by
/// the logger (the filter lives above this layer).
static ON_FLOOR_RAISED: OnceLock<fn()> = OnceLock::new();

/// The current scope's id, or 0. While the thread is being torn down, 0.
#[inline(always)]
pub(crate) fn current() -> u64 {
    CURRENT.try_with(Cell::get).unwrap_or(0)
}

/// Whether this thread is in a scope.
#[inline(always)]
pub(crate) fn active() -> bool {
    current() != 0
}

/// The scope floor: the most verbose level a scope holds, if any scope was ever created.
pub(crate) fn floor() -> Option<Level> {
    Level::from_u8(FLOOR.load(Ordering::Relaxed))
}

/// Sets what to call when the floor rises (once per process; later calls keep the first).
pub(crate) fn on_floor_raised(hook: fn()) {
    let _ = ON_FLOOR_RAISED.set(hook);
}

fn set_current(id: u64) -> u64 {
    CURRENT.try_with(|c| c.replace(id)).unwrap_or(0)
}

/// A request's scope: records at its hold level or more verbose (DEBUG by default) that are
/// logged while it is entered are held by the back end instead of written. Call sites at the
/// hold level that the filter leaves out are enabled inside scopes (only there, and not for a
/// target the filter turns `off`); more verbose ones (TRACE, by default) are held only if the
/// filter enables them. A record at
/// its trigger level or more severe (ERROR by default) logged in it, a call of
/// [`Scope::flush`], or a panic that drops it writes them, in their order and before the
/// trigger, and every later record of the scope is then written as it comes. When the scope
/// ends without any of these, its held records are discarded and counted in
/// [`Stats::scoped_records_discarded`](crate::Stats::scoped_records_discarded).
///
/// Records at levels between the two (INFO and WARN by default) are written as usual, and
/// records outside any scope are not affected.
///
/// - **Bounded:** at most [`ScopeBuilder::max_records`] held records and
///   [`ScopeBuilder::max_bytes`] of their encoded bytes per scope (1,000 and 1 MiB by
///   default); past either, the oldest go, and the written block starts with a WARN notice
///   counting them.
/// - **Nested scopes:** a scope created while another is entered is its child. A record
///   belongs to the innermost entered scope; a trigger in a child writes the held records of
///   the child and of every enclosing scope, merged in time order; a child that ends quietly
///   discards only its own.
/// - **Shutdown** (guard dropped, `exit`, a fatal signal): the held records of scopes still
///   open are written, after a notice, since whether their request would have failed is not
///   known. After a SIGKILL, held records are lost; what the spool recovers is written as it
///   was logged, scoped or not.
///
/// ```
/// let dir = std::env::temp_dir().join("tachylog-doc-scope");
/// let guard = tachylog::builder().file(dir.join("app.log")).init()?;
/// for (request, fails) in [(1, false), (2, true)] {
///     let scope = tachylog::Scope::new();
///     let _entered = scope.enter();
///     tachylog::debug!("request {}: cache lookup", request);
///     if fails {
///         tachylog::error!("request {}: upstream timed out", request);
///     }
/// }
/// tachylog::flush();
/// let text = std::fs::read_to_string(dir.join("app.log")).unwrap();
/// assert!(!text.contains("request 1: cache lookup"));
/// let debug = text.find("request 2: cache lookup").unwrap();
/// assert!(debug < text.find("request 2: upstream timed out").unwrap());
/// # drop(guard);
/// # std::fs::remove_dir_all(dir).unwrap();
/// # Ok::<(), tachylog::Error>(())
/// ```
#[derive(Debug)]
pub struct Scope {
    id: u64,
}

/// How a [`Scope`] holds its records: from [`Scope::builder`].
///
/// ```
/// use tachylog::{Level, Scope};
/// let scope = Scope::builder().hold(Level::Trace).trigger(Level::Warn).max_records(200).begin();
/// # drop(scope);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeBuilder {
    hold: Level,
    trigger: Level,
    max_records: u32,
    max_bytes: u64,
}

impl Default for ScopeBuilder {
    fn default() -> Self {
        ScopeBuilder {
            hold: Level::Debug,
            trigger: Level::Error,
            max_records: 1_000,
            max_bytes: 1 << 20,
        }
    }
}

impl ScopeBuilder {
    /// Records at this level or more verbose are held (default `Debug`). A hold level at or
    /// above the trigger level holds nothing: such records trigger.
    ///
    /// ```
    /// let scope = tachylog::Scope::builder().hold(tachylog::Level::Info).begin();
    /// # drop(scope);
    /// ```
    pub fn hold(mut self, level: Level) -> Self {
        self.hold = level;
        self
    }

    /// Records at this level or more severe write the held ones (default `Error`).
    ///
    /// ```
    /// let scope = tachylog::Scope::builder().trigger(tachylog::Level::Warn).begin();
    /// # drop(scope);
    /// ```
    pub fn trigger(mut self, level: Level) -> Self {
        self.trigger = level;
        self
    }

    /// The most records held at once (default 1,000; at least 1); past it, the oldest go.
    ///
    /// ```
    /// let scope = tachylog::Scope::builder().max_records(50).begin();
    /// # drop(scope);
    /// ```
    pub fn max_records(mut self, records: u32) -> Self {
        self.max_records = records.max(1);
        self
    }

    /// The most bytes held at once, counting each record's encoded size (default 1 MiB); past
    /// it, the oldest go. A single record larger than this is not held: it is counted as
    /// dropped.
    ///
    /// ```
    /// let scope = tachylog::Scope::builder().max_bytes(64 << 10).begin();
    /// # drop(scope);
    /// ```
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Opens the scope, inside the scope this thread is in, if any. It is not entered yet:
    /// see [`Scope::enter`] and [`Scope::bind`].
    ///
    /// ```
    /// let scope = tachylog::Scope::builder().begin();
    /// # drop(scope);
    /// ```
    pub fn begin(self) -> Scope {
        // A hold level at or above the trigger holds nothing, and needs no call site enabled.
        if self.hold > self.trigger {
            raise_floor(self.hold);
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        super::producer::log_scope_event(&ScopeEvent {
            scope: id,
            what: ScopeEventKind::Begin {
                parent: current(),
                hold: self.hold,
                trigger: self.trigger,
                max_records: self.max_records,
                max_bytes: self.max_bytes,
            },
        });
        Scope { id }
    }
}

/// Raises the floor to `level` if it is more verbose, and has the call sites re-resolved.
fn raise_floor(level: Level) {
    let previous = FLOOR.fetch_max(level as u8, Ordering::Relaxed);
    if previous < level as u8 {
        if let Some(hook) = ON_FLOOR_RAISED.get() {
            hook();
        }
    }
}

impl Default for Scope {
    fn default() -> Self {
        Scope::new()
    }
}

impl Scope {
    /// Opens a scope with the defaults: holds DEBUG and TRACE, triggered by ERROR, at most
    /// 1,000 records and 1 MiB held.
    ///
    /// ```
    /// let scope = tachylog::Scope::new();
    /// # drop(scope);
    /// ```
    pub fn new() -> Scope {
        ScopeBuilder::default().begin()
    }

    /// A scope with other levels or bounds.
    ///
    /// ```
    /// let scope = tachylog::Scope::builder().max_records(100).begin();
    /// # drop(scope);
    /// ```
    pub fn builder() -> ScopeBuilder {
        ScopeBuilder::default()
    }

    /// Makes this scope the calling thread's until the guard drops (the previous one comes
    /// back then). In async code, use [`Scope::bind`]: a guard held across an `.await` would
    /// tag whatever else the thread runs meanwhile.
    ///
    /// ```
    /// let scope = tachylog::Scope::new();
    /// let entered = scope.enter();
    /// tachylog::debug!("held until the scope fails");
    /// drop(entered);
    /// ```
    pub fn enter(&self) -> Entered<'_> {
        Entered {
            previous: set_current(self.id),
            _scope: std::marker::PhantomData,
        }
    }

    /// Runs `f` in this scope.
    ///
    /// ```
    /// let scope = tachylog::Scope::new();
    /// let n = scope.in_scope(|| { tachylog::debug!("step"); 42 });
    /// assert_eq!(n, 42);
    /// ```
    pub fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        let _entered = self.enter();
        f()
    }

    /// The future, polled in this scope wherever it runs; the scope ends when the future is
    /// dropped (after it completes, or cancelled). A panic while it is polled ends the scope
    /// as failed: its held records are written.
    ///
    /// ```
    /// # async fn handle() {}
    /// let request = tachylog::Scope::new().bind(async {
    ///     tachylog::debug!("parsed the headers");
    ///     handle().await;
    /// });
    /// # drop(request);
    /// ```
    pub fn bind<F: Future>(self, future: F) -> Bound<F> {
        Bound {
            future,
            scope: self,
        }
    }

    /// Writes the held records now, as a trigger would; later records of the scope are then
    /// written as they come.
    ///
    /// ```
    /// let scope = tachylog::Scope::new();
    /// scope.in_scope(|| tachylog::debug!("kept"));
    /// scope.flush(); // "kept" goes to the sinks
    /// ```
    pub fn flush(&self) {
        super::producer::log_scope_event(&ScopeEvent {
            scope: self.id,
            what: ScopeEventKind::Flush,
        });
    }

    /// The scope's id, unique in the process.
    ///
    /// ```
    /// assert_ne!(tachylog::Scope::new().id(), tachylog::Scope::new().id());
    /// ```
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        super::producer::log_scope_event(&ScopeEvent {
            scope: self.id,
            what: ScopeEventKind::End {
                failed: std::thread::panicking(),
            },
        });
    }
}

/// The guard of [`Scope::enter`]: restores the thread's previous scope when dropped.
///
/// ```
/// let request = tachylog::Scope::new();
/// let entered: tachylog::Entered<'_> = request.enter();
/// tachylog::debug!("in the request's scope");
/// drop(entered); // back to the scope the thread was in before, if any
/// ```
#[derive(Debug)]
#[must_use = "the scope is left when the guard drops"]
pub struct Entered<'a> {
    previous: u64,
    // Tied to the scope and to this thread: a guard sent elsewhere would restore another
    // thread's scope.
    _scope: std::marker::PhantomData<(&'a Scope, *const ())>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        set_current(self.previous);
    }
}

pin_project_lite::pin_project! {
    /// A future bound to a [`Scope`] by [`Scope::bind`]: each poll runs in the scope, and
    /// the scope ends when it is dropped.
    ///
    /// ```
    /// let request: tachylog::Bound<_> = tachylog::Scope::new().bind(async { 7 });
    /// # drop(request);
    /// ```
    #[derive(Debug)]
    pub struct Bound<F> {
        #[pin]
        future: F,
        scope: Scope,
    }
}

impl<F: Future> Future for Bound<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = this.scope.enter();
        this.future.poll(cx)
    }
}

/// Enters the scope `id` on this thread (for the `tracing` layer, whose spans own their
/// scopes); returns the previous one, for [`leave_raw`].
#[cfg(feature = "tracing")]
pub(crate) fn enter_raw(id: u64) -> u64 {
    set_current(id)
}

/// Restores the scope [`enter_raw`] returned.
#[cfg(feature = "tracing")]
pub(crate) fn leave_raw(previous: u64) {
    set_current(previous);
}
