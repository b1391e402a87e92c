//! The calling thread's side of a log call: find this thread's ring, reserve space, stamp the
//! time, copy the arguments, publish.
//!
//! Hot path (a call whose record fits in the ring and finds room): one thread-local load, the
//! ring's reservation arithmetic, two stores of the activity counter, `rdtsc`, the copies, one
//! release store, one relaxed load of [`GATE`]. No lock, no allocation, no system call.
//! Everything else (the thread's first record, a full ring, an oversize record, a ring past its
//! high-water mark while the back end sleeps) is on `#[cold]` out-of-line paths.
//!
//! Waking the back end: it sleeps between drains (see `backend::worker`), so a producer wakes
//! it only when its ring passes a quarter full. A thread that reaches that mark again soon after
//! the back end emptied its ring (within two flush intervals) logs faster than a ring of this
//! size can hold between two drains: its ring grows instead (up to `ring_capacity`), and the
//! back end keeps draining on its own schedule. So a thread that logs at a steady rate ends up
//! with a ring that holds what it logs between two drains, and its calls make no system call
//! (`tests/a_warm_log_call_makes_no_system_call.rs`); a back end that spins
//! (`Builder::spin_backend`) is never woken at all. The larger ring is usually one the back
//! end allocated beforehand (`RingChain::prepare_successor`): after a wake for the rings at
//! their mark, and always when it spins, so growing costs the caller no allocation either.

use super::args::{Args, Encode, Stage};
use super::clock;
use super::gate::{synchronous, write_through, OnFull, GATE};
use crate::codec::ArgWriter;
use crate::queue::chain::ChainProducer;
use crate::queue::control::{self, wake_backend};
use crate::queue::registry::{ThreadQueue, REGISTRY};
use crate::queue::ring::Reservation;
use crate::record::{
    CallSiteLayout, Decode, ScopeEvent, Site, TraceContext, CALL_SITE_PREFIX, KIND_DYNAMIC,
    KIND_DYNAMIC_SCOPED, KIND_SCOPE_EVENT,
};
use std::cell::{Cell, RefCell, UnsafeCell};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// This thread's producer: its queue and the producer side of its rings, which only this thread
/// touches.
pub(crate) struct Producer {
    queue: Arc<ThreadQueue>,
    chain: UnsafeCell<ChainProducer>,
    /// When this thread last woke the back end for its ring's high-water mark, and where the
    /// consumer stood then; `None` after the ring grew.
    woke: Cell<Option<Woke>>,
}

#[derive(Clone, Copy)]
struct Woke {
    /// The consumer's position in the ring when the wake was sent: while it has not moved, the
    /// back end has not answered yet.
    tail: usize,
    /// Clock ticks.
    at: u64,
}

impl Producer {
    fn new() -> Producer {
        let max = GATE.ring_capacity.load(Ordering::Relaxed);
        let initial = GATE.initial_ring_capacity.load(Ordering::Relaxed);
        let (queue, chain) = REGISTRY.register(initial, max, clock::now());
        Producer {
            queue,
            chain: UnsafeCell::new(chain),
            woke: Cell::new(None),
        }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        // Later calls on this thread (from other thread-locals' destructors) must not use the
        // dangling pointer: they take the one-off path instead.
        let this: *const Producer = self;
        let _ = CURRENT.try_with(|c| {
            if c.get() == this {
                c.set(std::ptr::null());
            }
        });
        // The back end frees the ring once it has drained it and seen this flag.
        self.queue.closed.store(true, Ordering::Release);
    }
}

thread_local! {
    /// Fast access to this thread's producer: a plain pointer with a `const` initialiser and no
    /// destructor, so reading it compiles to a single load relative to the thread pointer.
    static CURRENT: Cell<*const Producer> = const { Cell::new(std::ptr::null()) };
    /// Owns the producer and closes its queue when the thread exits.
    static OWNER: RefCell<Option<Box<Producer>>> = const { RefCell::new(None) };
}

/// Returns this thread's producer, creating it on the thread's first record. `None` while the
/// thread is being torn down (its thread-locals are gone).
#[cold]
#[inline(never)]
fn init_producer() -> Option<*const Producer> {
    OWNER
        .try_with(|owner| {
            let mut owner = owner.try_borrow_mut().ok()?;
            let producer = owner.get_or_insert_with(|| Box::new(Producer::new()));
            let ptr: *const Producer = &**producer;
            CURRENT.with(|c| c.set(ptr));
            Some(ptr)
        })
        .ok()
        .flatten()
}

/// Logs one record from a macro call site: its slots' encodings, after the timestamp, the
/// site's address and the address of its arguments' [`Args::DECODE`].
///
/// Generic over the slots' types only, not over the call site: call sites whose arguments have
/// the same types share one instance, and the cold paths take the slots as `&dyn Encode`, so
/// they exist once. It is called, never inlined into the call site: a call site's code is then
/// the arguments' evaluation, their slots and this call, which keeps the compile time and the
/// binary of a program with thousands of log calls close to those of `tracing`'s
/// (`cargo run --release -p tachylog-bench --bin compile-cost` measures both). The call costs
/// the caller a few instructions, which
/// `cargo run --release -p tachylog-bench -- --only tachylog,latency` measures.
#[doc(hidden)]
#[inline(never)]
pub fn log_record<A: Args>(site: &'static Site, stage: &Stage, args: &A) {
    // The call site's cached interest passed; the global switch still wins (shutdown started,
    // or this is a forked child), and costs one load of a shared, read-mostly line.
    let decode: &'static Decode = const { &A::DECODE };
    // A site is armed with its argument list once its definitions are in the spool, if one is
    // installed (see `super::spool`); Acquire, so that this record is published after them.
    let armed = site.armed.load(Ordering::Acquire);
    let ready = super::gate::enabled_raw(site.level as u8)
        && (armed == decode as *const Decode as usize || armed == Site::ANY_ARGUMENTS);
    if !ready && !super::spool::arm(site, decode, super::args::shape_of::<A>) {
        return;
    }
    let args_len = args.encoded_len(stage);
    // Inside an OpenTelemetry span (feature `opentelemetry`), the span's ids travel too, and
    // inside a request scope, its id.
    let trace = super::trace::current();
    let scope = super::scope::current();
    let layout = CallSiteLayout::of_call(&trace, scope);
    let (prefix, kind) = (layout.prefix(), layout.kind());
    let body_len = prefix + args_len;
    let mut producer = CURRENT.with(|c| c.get());
    if producer.is_null() {
        match init_producer() {
            Some(p) => producer = p,
            None => return log_without_producer(site, decode, stage, args, (trace, scope)),
        }
    }
    // SAFETY: `CURRENT` points at this thread's boxed producer, which lives until its `Drop`
    // clears `CURRENT` at thread exit; only this thread uses it.
    let producer = unsafe { &*producer };
    // SAFETY: only this thread touches the chain's producer side, and no other reference to it
    // is live: the code below runs none of the user's code while it holds it.
    let chain = unsafe { &mut *producer.chain.get() };
    if body_len > chain.ring().max_inline_body() {
        return log_boxed(producer, chain, site, decode, stage, args, (trace, scope));
    }
    let Some(reservation) = chain
        .try_reserve(body_len, kind)
        .or_else(|| wait_for_room(producer, chain, body_len, kind))
    else {
        return;
    };
    let (ring, cursor) = chain.parts();
    ring.begin_activity(cursor);
    let body = ring.body_ptr(&reservation);
    // SAFETY: the reservation holds `body_len = prefix + args_len` writable bytes at `body`,
    // and the layout's prefix has room for the scope id and the trace context after the two
    // pointers.
    let mut writer = unsafe {
        std::ptr::write_unaligned(body as *mut u64, clock::now());
        std::ptr::write_unaligned(body.add(8) as *mut usize, site as *const Site as usize);
        std::ptr::write_unaligned(body.add(16) as *mut usize, decode as *const Decode as usize);
        if scope != 0 {
            std::ptr::write_unaligned(body.add(CALL_SITE_PREFIX) as *mut u64, scope);
        }
        if let Some(trace) = &trace {
            let encoded = trace.encode();
            std::ptr::copy_nonoverlapping(
                encoded.as_ptr(),
                body.add(CALL_SITE_PREFIX + layout.trace_offset()),
                encoded.len(),
            );
        }
        ArgWriter::new(body.add(prefix), args_len)
    };
    args.write(&mut writer, stage);
    debug_assert_eq!(writer.remaining(), 0);
    ring.commit(cursor, reservation);
    ring.end_activity(cursor);
    if GATE.backend_sleeping.load(Ordering::Relaxed) && chain.over_high_water() {
        on_high_water(producer, chain);
    }
    if synchronous(site.level) {
        write_through();
    }
}

/// The back end sleeps and this thread's ring is (by its stale count) a quarter full: wake the
/// back end, or grow the ring if it filled this far again soon after the last wake was served.
#[cold]
#[inline(never)]
fn on_high_water(producer: &Producer, chain: &mut ChainProducer) {
    let (tail, over) = chain.refresh_fill();
    if !over {
        return;
    }
    let woke = producer.woke.get();
    if woke.is_some_and(|w| w.tail == tail) {
        return; // the back end has not drained since our wake: it is on its way
    }
    let now = clock::now();
    let window = GATE.grow_window_ticks.load(Ordering::Relaxed);
    if woke.is_some_and(|w| now.wrapping_sub(w.at) < window) && chain.grow(0) {
        producer.woke.set(None);
        return;
    }
    producer.woke.set(Some(Woke { tail, at: now }));
    wake_backend();
}

/// The ring is full: grow it if it may grow, else apply the [`OnFull`] policy. Returns `None`
/// when the record is dropped.
#[cold]
#[inline(never)]
fn wait_for_room(
    producer: &Producer,
    chain: &mut ChainProducer,
    body_len: usize,
    kind: u32,
) -> Option<Reservation> {
    if chain.grow(body_len) {
        if let Some(reservation) = chain.try_reserve(body_len, kind) {
            return Some(reservation);
        }
    }
    retry_under_policy(producer, || chain.try_reserve(body_len, kind))
}

/// Retries `attempt`, which failed once for want of room, under the [`OnFull`] policy: waits
/// (waking the back end, then backing off) until it succeeds, or, when the producer must not
/// wait, counts the record as dropped and returns `None`. The one waiting loop of the producer.
fn retry_under_policy<T>(producer: &Producer, mut attempt: impl FnMut() -> Option<T>) -> Option<T> {
    let mut backoff = Backoff::default();
    loop {
        if must_not_wait(&mut backoff) {
            producer.queue.dropped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if backoff.step == 0 {
            wake_backend();
        }
        backoff.wait();
        if let Some(done) = attempt() {
            return Some(done);
        }
    }
}

/// Whether a producer facing a full ring must drop (and count) instead of waiting: under
/// `OnFull::Drop`, with no back end to make room, on the back end's own thread (a `CopyArg`
/// type's `fmt` that logs), which would wait for itself forever, and once this call has waited
/// longer than `Builder::max_block`.
fn must_not_wait(backoff: &mut Backoff) -> bool {
    GATE.on_full() == OnFull::Drop
        || !control::is_running()
        || control::on_backend_thread()
        || backoff.waited_too_long()
}

/// A record larger than the ring's inline limit: built on the heap, then copied into a ring
/// grown to hold it when the maximum capacity allows (so a thread that logs such records keeps
/// logging them without allocating), else handed over as a boxed frame. Memory stays bounded:
/// while this ring's boxed records in flight exceed the limit, the producer waits (or drops,
/// under `OnFull::Drop`), except that a single record always passes.
#[cold]
#[inline(never)]
fn log_boxed(
    producer: &Producer,
    chain: &mut ChainProducer,
    site: &'static Site,
    decode: &'static Decode,
    stage: &Stage,
    args: &dyn Encode,
    (trace, scope): (Option<TraceContext>, u64),
) {
    let args_len = args.encoded_len(stage);
    let layout = CallSiteLayout::of_call(&trace, scope);
    let (prefix, kind) = (layout.prefix(), layout.kind());
    let mut body = vec![0u8; prefix + args_len].into_boxed_slice();
    body[8..16].copy_from_slice(&(site as *const Site as usize).to_ne_bytes());
    body[16..24].copy_from_slice(&(decode as *const Decode as usize).to_ne_bytes());
    if scope != 0 {
        body[CALL_SITE_PREFIX..CALL_SITE_PREFIX + 8].copy_from_slice(&scope.to_ne_bytes());
    }
    if let Some(trace) = &trace {
        let at = CALL_SITE_PREFIX + layout.trace_offset();
        body[at..at + TraceContext::ENCODED].copy_from_slice(&trace.encode());
    }
    // SAFETY: `body[prefix..]` is `args_len` writable bytes owned by us.
    let mut writer = unsafe { ArgWriter::new(body.as_mut_ptr().add(prefix), args_len) };
    args.write(&mut writer, stage);
    if !push_pieces(producer, chain, body.len(), &[&body[8..]], kind) {
        push_boxed(producer, chain, body, kind);
    }
    if synchronous(site.level) {
        write_through();
    }
}

/// Publishes a heap-built body (its first 8 bytes are overwritten with the timestamp). In a
/// spooled ring the body is first saved in the spool, where it outlives the process (see
/// `queue::spool`).
fn push_boxed(producer: &Producer, chain: &mut ChainProducer, body: Box<[u8]>, kind: u32) {
    let limit = GATE.max_boxed_bytes.load(Ordering::Relaxed);
    let mut large = super::spool::LargeRecord::stage(&producer.queue, &body);
    let mut body = Some(body);
    let mut attempt = || {
        let mut pending = body.take()?;
        let in_flight = chain.ring().boxed_bytes();
        if in_flight == 0 || in_flight + pending.len() <= limit {
            loop {
                let (ring, cursor) = chain.parts();
                ring.begin_activity(cursor);
                let ticks = clock::now();
                pending[..8].copy_from_slice(&ticks.to_ne_bytes());
                let pushed = ring.push_boxed(cursor, pending, kind, |position| {
                    if let Some(large) = large.take() {
                        large.place(position, ticks);
                    }
                });
                ring.end_activity(cursor);
                match pushed {
                    Ok(()) => {
                        wake_backend();
                        return Some(());
                    }
                    Err(back) => pending = back,
                }
                // No room for the frame's 16 bytes in the ring: a larger ring has room.
                if !chain.grow(0) {
                    break;
                }
            }
        }
        body = Some(pending);
        None
    };
    if attempt().is_none() {
        let _ = retry_under_policy(producer, attempt);
    }
}

/// A call made while this thread's thread-locals are being destroyed (from another
/// thread-local's destructor). Uses a one-off queue that is closed right after the record.
#[cold]
#[inline(never)]
fn log_without_producer(
    site: &'static Site,
    decode: &'static Decode,
    stage: &Stage,
    args: &dyn Encode,
    (trace, scope): (Option<TraceContext>, u64),
) {
    let producer = Producer::new();
    // SAFETY: the producer is local to this call.
    let chain = unsafe { &mut *producer.chain.get() };
    log_boxed(&producer, chain, site, decode, stage, args, (trace, scope));
    // Dropping the producer closes the queue; the back end drains and frees it.
}

/// Logs a record whose metadata is known only at run time (the `log` facade, `tracing`, the
/// panic hook). The message is already formatted; `fields` are structured fields already
/// encoded by a [`FieldWriter`](crate::fields::wire::FieldWriter) (empty for none).
///
/// A record that fits the ring is written straight into it, piece by piece: no allocation.
/// `trace` is the OpenTelemetry span it was logged in, if any.
pub(crate) fn log_dynamic(
    level: crate::Level,
    target: &str,
    file: &str,
    line: u32,
    message: &str,
    fields: &[u8],
    trace: Option<TraceContext>,
) {
    // The layout of `crate::record`'s dynamic records. Ring frames are padded, so the fields
    // and the trace context carry their length like the texts do.
    let encoded_trace = trace.map(|t| t.encode());
    let trace_bytes: &[u8] = encoded_trace.as_ref().map_or(&[], |t| &t[..]);
    let scope = super::scope::current().to_ne_bytes();
    let (scope_bytes, kind): (&[u8], u32) = if scope == [0; 8] {
        (&[], KIND_DYNAMIC)
    } else {
        (&scope, KIND_DYNAMIC_SCOPED)
    };
    let texts = [
        target.as_bytes(),
        file.as_bytes(),
        message.as_bytes(),
        fields,
        trace_bytes,
        scope_bytes,
    ];
    let numbers = [level as u64, line as u64].map(u64::to_ne_bytes);
    let lengths = texts.map(|t| t.len().to_ne_bytes());
    let ordered: [&[u8]; 14] = [
        &numbers[0],
        &numbers[1],
        &lengths[0],
        texts[0],
        &lengths[1],
        texts[1],
        &lengths[2],
        texts[2],
        &lengths[3],
        texts[3],
        &lengths[4],
        texts[4],
        &lengths[5],
        texts[5],
    ];
    // The timestamp first, stamped when the record is published.
    let body_len = 8 + ordered.iter().map(|piece| piece.len()).sum::<usize>();
    with_producer(|p, chain| push_dynamic(p, chain, body_len, &ordered, kind));
    if synchronous(level) {
        write_through();
    }
}

/// Runs `push` with this thread's producer, or with a one-off one while the thread's
/// thread-locals are being destroyed.
fn with_producer(push: impl FnOnce(&Producer, &mut ChainProducer)) {
    let producer = CURRENT.with(|c| c.get());
    let producer = if producer.is_null() {
        init_producer()
    } else {
        Some(producer)
    };
    match producer {
        // SAFETY: as in `log_record`.
        Some(p) => unsafe {
            let p = &*p;
            push(p, &mut *p.chain.get());
        },
        None => {
            let p = Producer::new();
            // SAFETY: the producer is local to this call.
            push(&p, unsafe { &mut *p.chain.get() });
        }
    }
}

/// Sends a request scope's begin, flush or end to the back end, ordered with the records.
/// Sent whatever the level and the filter (a scope's end must reach the back end even if no
/// record of it did), but not while no logger runs.
pub(crate) fn log_scope_event(event: &ScopeEvent) {
    if GATE.max_level.load(Ordering::Relaxed) == 0 {
        return;
    }
    let encoded = event.encode();
    with_producer(|p, chain| {
        push_pieces(p, chain, 8 + encoded.len(), &[&encoded], KIND_SCOPE_EVENT);
    });
}

/// Publishes a dynamic record made of `pieces` (after the 8-byte timestamp): copied into the
/// ring when it fits, built on the heap and handed over boxed when it does not.
fn push_dynamic(
    producer: &Producer,
    chain: &mut ChainProducer,
    body_len: usize,
    pieces: &[&[u8]],
    kind: u32,
) {
    if push_pieces(producer, chain, body_len, pieces, kind) {
        return;
    }
    let mut body = Vec::with_capacity(body_len);
    body.extend_from_slice(&[0; 8]); // the timestamp, stamped when published
    for piece in pieces {
        body.extend_from_slice(piece);
    }
    push_boxed(producer, chain, body.into_boxed_slice(), kind);
}

/// Copies a record of `body_len` bytes, the timestamp (stamped now) followed by `pieces`, into
/// the ring, growing the ring first if that lets it fit. Returns `false`, publishing nothing,
/// when the record is too large for any ring this thread may have (the caller boxes it);
/// `true` once it is published or dropped under the [`OnFull`] policy.
fn push_pieces(
    producer: &Producer,
    chain: &mut ChainProducer,
    body_len: usize,
    pieces: &[&[u8]],
    kind: u32,
) -> bool {
    if body_len > chain.ring().max_inline_body() && !chain.grow(body_len) {
        return false;
    }
    let Some(reservation) = chain
        .try_reserve(body_len, kind)
        .or_else(|| wait_for_room(producer, chain, body_len, kind))
    else {
        return true;
    };
    let (ring, cursor) = chain.parts();
    ring.begin_activity(cursor);
    // SAFETY: the reservation is ours, uncommitted, and exactly `body_len` bytes long, which is
    // 8 plus the pieces' total length.
    unsafe {
        ring.write_body(&reservation, 0, &clock::now().to_ne_bytes());
        let mut offset = 8;
        for piece in pieces {
            ring.write_body(&reservation, offset, piece);
            offset += piece.len();
        }
    }
    ring.commit(cursor, reservation);
    ring.end_activity(cursor);
    if GATE.backend_sleeping.load(Ordering::Relaxed) && chain.over_high_water() {
        on_high_water(producer, chain);
    }
    true
}

/// Waiting on a full ring: spin very briefly (room often appears within a microsecond), yield
/// a few times, then sleep in growing steps up to 1 ms. A full ring means the back end is the
/// bottleneck, and a producer that spins takes a core it needs. With 2 producers on 2 cores,
/// sleeping after ~60 pauses and four yields takes 0.47 CPU-s where spinning up to ~600
/// pauses per wait takes 0.63 (measured with
/// `cargo run --release -p tachylog-bench -- --only tachylog,scaling_t2`); one producer and
/// the latency workloads do as well or better.
#[derive(Default)]
struct Backoff {
    step: u32,
    /// When this call started waiting, read only if `Builder::max_block` is set.
    started: Option<std::time::Instant>,
}

impl Backoff {
    fn wait(&mut self) {
        match self.step {
            0..=5 => {
                for _ in 0..(1 << self.step) {
                    std::hint::spin_loop();
                }
            }
            6..=9 => std::thread::yield_now(),
            n => std::thread::sleep(Duration::from_micros(((n - 9) * 20).min(1000) as u64)),
        }
        self.step = self.step.saturating_add(1);
    }

    /// Whether this wait has lasted longer than `GATE.max_block_nanos` (never when it is 0).
    fn waited_too_long(&mut self) -> bool {
        let limit = GATE.max_block_nanos.load(Ordering::Relaxed);
        if limit == 0 {
            return false;
        }
        let started = *self.started.get_or_insert_with(std::time::Instant::now);
        started.elapsed() >= Duration::from_nanos(limit)
    }
}
