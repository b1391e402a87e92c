//! The atomics and cells the queue is built from, swapped for `loom`'s under `--cfg loom`, so
//! the model checker explores every interleaving of the real ring code, not of a copy.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning: every mutex in tachylog guards data that stays consistent
/// when a holder panics (a slot, a list, a counter), and a logger that stops working because
/// some thread once panicked would lose records.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The ring's byte storage.
///
/// Under loom every byte is its own tracked cell so that loom reports a data race if the
/// producer and the consumer ever touch the same byte concurrently; in a normal build it is one
/// heap block, aligned to [`STORAGE_ALIGN`], accessed through raw pointers.
pub(crate) struct Storage {
    #[cfg(not(loom))]
    ptr: std::ptr::NonNull<u8>,
    #[cfg(not(loom))]
    len: usize,
    /// The bytes belong to a spool file's mapping (see `queue::spool`), unmapped by its owner,
    /// not freed here.
    #[cfg(not(loom))]
    mapped: bool,
    #[cfg(loom)]
    bytes: Box<[loom::cell::UnsafeCell<u8>]>,
}

/// Alignment of the storage block: a 4 KiB page, so that the ring's page boundaries (offsets
/// that are multiples of 4096, see `Ring::try_reserve`) are the memory's page boundaries.
pub(crate) const STORAGE_ALIGN: usize = 4096;

/// A ring of this size or more is aligned to it and asks the kernel for huge pages (Linux's
/// transparent huge pages, when `/sys/kernel/mm/transparent_hugepage/enabled` allows them; a
/// hint, nothing fails without them). Why: the first store into each 4 KiB page of a lap waits
/// for the page's address translation, and on a VM that walk, through the guest's and the
/// host's page tables, often misses the caches. With 64-byte records, the calls that open a
/// page were a fifth to a half of the calls slower than 200 ns; on a 2 MiB page, which one
/// translation covers, they were a tenth or less of fewer such calls (`page_tail` in the bench,
/// BENCHMARKS.md, "The caller's tail: where it came from").
#[cfg(not(loom))]
const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back `len` bytes at `ptr` with huge pages. Best effort: an error (no
/// transparent huge pages, an old kernel) leaves ordinary pages.
#[cfg(not(loom))]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(all(target_os = "linux", not(miri)))]
    // SAFETY: `madvise` reads no memory; the range is one allocation of `len` bytes, aligned
    // to a page, and the advice changes how it is backed, not its contents or mapping.
    unsafe {
        libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(all(target_os = "linux", not(miri))))]
    let _ = (ptr, len);
}

impl Storage {
    pub(crate) fn new(len: usize) -> Self {
        #[cfg(not(loom))]
        {
            let layout = Self::layout(len);
            let huge = len >= HUGE_PAGE;
            // SAFETY: the layout's size is at least 1.
            let raw = unsafe {
                if huge {
                    std::alloc::alloc(layout)
                } else {
                    std::alloc::alloc_zeroed(layout)
                }
            };
            let Some(ptr) = std::ptr::NonNull::new(raw) else {
                std::alloc::handle_alloc_error(layout)
            };
            if huge {
                advise_huge_pages(raw, len);
                // SAFETY: the block is `len` bytes, just allocated, used by nothing else. Zeroed
                // after the advice, so that its pages are first touched under it (which also
                // spares them the page faults below).
                unsafe { std::ptr::write_bytes(raw, 0, len) };
            } else {
                // An allocator may hand out zeroed pages that the kernel maps only on first
                // write: left alone, the producer would take a page fault (about a microsecond)
                // on every 4 KiB of its first lap, enough for a p99.9 of 1.2-1.4 µs for 16-byte
                // records in `cargo run --release -p tachylog-bench -- --only
                // tachylog,latency`. Touch every page now, on the thread's first (cold) record
                // instead.
                for page in (0..len).step_by(4096) {
                    // SAFETY: in bounds of the block just allocated, which nothing else uses
                    // yet; a volatile write cannot be optimised away.
                    unsafe { std::ptr::write_volatile(raw.add(page), 0) };
                }
            }
            Storage {
                ptr,
                len,
                mapped: false,
            }
        }
        #[cfg(loom)]
        {
            let bytes = (0..len).map(|_| loom::cell::UnsafeCell::new(0)).collect();
            Storage { bytes }
        }
    }

    /// Storage in memory someone else owns: a spool file's mapping, page-aligned, every page
    /// already touched.
    ///
    /// # Safety
    /// `ptr` is valid for reads and writes of `len` bytes, aligned to [`STORAGE_ALIGN`], for as
    /// long as the storage lives, and nothing but the ring protocol touches those bytes.
    #[cfg(all(unix, not(loom)))]
    pub(crate) unsafe fn in_mapping(ptr: std::ptr::NonNull<u8>, len: usize) -> Self {
        debug_assert_eq!(ptr.as_ptr() as usize % STORAGE_ALIGN, 0);
        Storage {
            ptr,
            len,
            mapped: true,
        }
    }

    #[cfg(not(loom))]
    fn layout(len: usize) -> std::alloc::Layout {
        let align = if len >= HUGE_PAGE {
            HUGE_PAGE
        } else {
            STORAGE_ALIGN
        };
        std::alloc::Layout::from_size_align(len.max(1), align)
            .expect("ring capacity is a power of two far below isize::MAX")
    }

    /// Copies `src` into the storage at `offset`.
    ///
    /// # Safety
    /// `offset + src.len()` is within the storage and no other thread reads or writes that range
    /// during the call (the ring protocol hands the range to exactly one side).
    #[inline(always)]
    pub(crate) unsafe fn write(&self, offset: usize, src: &[u8]) {
        debug_assert!(offset + src.len() <= self.len());
        #[cfg(not(loom))]
        // SAFETY: in bounds and exclusively ours per the function contract; the block is
        // reached through a raw pointer, not through a shared reference, so writing is legal.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr_at(offset), src.len());
        }
        #[cfg(loom)]
        for (i, b) in src.iter().enumerate() {
            self.bytes[offset + i].with_mut(|p| unsafe { *p = *b });
        }
    }

    /// A raw pointer to the byte at `offset`, for writers that fill a reserved range in place.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn ptr_at(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset <= self.len);
        self.ptr.as_ptr().wrapping_add(offset)
    }

    /// Runs `f` on the bytes `offset .. offset + len`.
    ///
    /// # Safety
    /// The range is within the storage and the other side does not write it during the call.
    #[inline(always)]
    pub(crate) unsafe fn read<R>(
        &self,
        offset: usize,
        len: usize,
        f: impl FnOnce(&[std::mem::MaybeUninit<u8>]) -> R,
    ) -> R {
        debug_assert!(offset + len <= self.len());
        #[cfg(not(loom))]
        {
            // SAFETY: in bounds, and the range is not written while the slice lives (contract).
            let slice = unsafe {
                std::slice::from_raw_parts(
                    self.ptr_at(offset) as *const std::mem::MaybeUninit<u8>,
                    len,
                )
            };
            f(slice)
        }
        #[cfg(loom)]
        {
            let copy: Vec<std::mem::MaybeUninit<u8>> = (0..len)
                .map(|i| self.bytes[offset + i].with(|p| std::mem::MaybeUninit::new(unsafe { *p })))
                .collect();
            f(&copy)
        }
    }

    pub(crate) fn len(&self) -> usize {
        #[cfg(not(loom))]
        let len = self.len;
        #[cfg(loom)]
        let len = self.bytes.len();
        len
    }
}

// SAFETY: the storage is only accessed through `write`/`read`, whose contracts (upheld by the
// ring's head/tail protocol) guarantee that no byte is accessed by two threads at once unless
// both only read.
unsafe impl Sync for Storage {}
// SAFETY: it owns plain bytes.
unsafe impl Send for Storage {}

#[cfg(not(loom))]
impl Drop for Storage {
    fn drop(&mut self) {
        if self.mapped {
            return;
        }
        // SAFETY: `ptr` came from `alloc` or `alloc_zeroed` with this same layout (`layout` is a
        // function of `len`) and is freed only here.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
    }
}
