//! Once warmed up, a `tracing` event through tachylog's layer (message with arguments, typed
//! and `Debug` fields, inside nested spans with fields) allocates nothing on the calling
//! thread: the message and field buffers are reused, the span walk stays on the stack, and the
//! record goes into the thread's ring (preallocated at full size: growing it is the one
//! allocation a log call may make, a few times in a thread's life). Counted by a global allocator that counts the calls made
//! by the test's own thread while the measured loop runs.
#![cfg(feature = "tracing")]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use tracing_subscriber::layer::SubscriberExt as _;

struct CountingAllocator;

thread_local! {
    /// Whether this thread's allocations are being counted.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

// SAFETY: every call is forwarded unchanged to `System`; counting touches only const-initialised
// thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// How many allocations `f` makes on this thread.
fn allocations_in(f: impl FnOnce()) -> u64 {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

fn events(n: u64, items: &[&str]) {
    for i in 0..n {
        tracing::info!(
            i,
            ratio = 0.5,
            ok = true,
            who = "ada",
            ?items,
            "event {} of {}",
            i,
            n
        );
    }
}

#[test]
fn a_warm_tracing_event_allocates_nothing_on_the_calling_thread() {
    let _watchdog = common::watchdog(
        "tracing allocation test",
        std::time::Duration::from_secs(60),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.log");
    // A thread's ring grows with what it logs, allocating a few times in its life; a ring at
    // its full size from the first record leaves only the event path to count.
    let guard = common::expect_init(
        tachylog::builder()
            .file(&path)
            .initial_ring_capacity(1 << 20)
            .init(),
    );
    let subscriber = tracing_subscriber::registry().with(tachylog::tracing_layer());
    let items = ["tea", "scones"];
    let counted = allocations_in(|| drop(std::hint::black_box(Vec::<u8>::with_capacity(8))));
    assert_eq!(counted, 1, "the counting allocator counts");
    let allocations = tracing::subscriber::with_default(subscriber, || {
        let _outer = tracing::info_span!("outer", id = 7u64, user = "ada").entered();
        let _inner = tracing::info_span!("inner", q = ?Some(1)).entered();
        events(1_000, &items);
        allocations_in(|| events(1_000, &items))
    });
    drop(guard);
    assert_eq!(allocations, 0, "allocations in 1,000 warm events");
    let text = common::read_log(&path);
    let lines = common::parse_log(&text);
    assert_eq!(lines.len(), 2_000);
    assert_eq!(
        lines[1_999].message,
        "outer{id=7 user=ada}:inner{q=Some(1)}: event 999 of 1000 i=999 ratio=0.5 ok=true \
         who=ada items=\"[\\\"tea\\\", \\\"scones\\\"]\""
    );
}
