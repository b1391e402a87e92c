//! Where producing threads register their rings and the back end finds them.
//!
//! Registration happens once per thread, on its first record, under a mutex (a cold path). The
//! back end checks an atomic counter each loop and takes the mutex only when it moved. Queues
//! outlive back ends: when a logger shuts down, its back end hands the queues it adopted back
//! here, so a logger started later drains them.

use super::chain::{ChainProducer, RingChain};
use super::ring::ConsumerCursor;
use super::sync::lock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Who produces into a queue, for the thread column of log lines.
#[derive(Debug, Clone)]
pub(crate) struct ThreadInfo {
    /// The thread's name with whitespace replaced by `_`, or `-` when it has none.
    pub(crate) name: String,
    /// The OS thread id.
    pub(crate) id: u64,
    /// Unique to this registration in the process, unlike the OS id, which the kernel reuses:
    /// the back end's per-record caches compare it instead of the name.
    pub(crate) serial: u64,
}

impl ThreadInfo {
    /// A thread's identity with the next serial number.
    pub(crate) fn new(name: String, id: u64) -> Self {
        static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);
        ThreadInfo {
            name,
            id,
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The calling thread's identity.
    pub(crate) fn current() -> Self {
        ThreadInfo::named(std::thread::current().name().unwrap_or(""), os_thread_id())
    }

    /// A thread's identity with its name as every line shows it: `-` when it has none, and
    /// each whitespace, control, bidirectional or other invisible formatting character
    /// replaced by `_`, so that a name keeps a line one line and reads as what it is; past
    /// [`MAX_THREAD_NAME_CHARS`] characters, cut, with `…` as its last. Names read from files
    /// (the binary log, a spool) go through here like live threads' names, so a name read back
    /// is the name written.
    pub(crate) fn named(name: &str, id: u64) -> Self {
        let name = if name.is_empty() {
            "-".to_string()
        } else if name.chars().nth(MAX_THREAD_NAME_CHARS).is_some() {
            name.chars()
                .take(MAX_THREAD_NAME_CHARS - 1)
                .map(shown)
                .chain(['…'])
                .collect()
        } else {
            name.chars().map(shown).collect()
        };
        ThreadInfo::new(name, id)
    }
}

/// The most characters of a thread's name a line shows. Rust lets a thread's name be any
/// length (Linux shows 15 bytes of it, Windows any); one named from a request's data could
/// make every line it logs a megabyte long.
const MAX_THREAD_NAME_CHARS: usize = 64;

/// A thread name's character as lines show it (see [`ThreadInfo::named`]).
fn shown(c: char) -> char {
    if shown_as_is(c) {
        c
    } else {
        '_'
    }
}

/// Whether a thread name's character is written as it is (see [`ThreadInfo::named`]).
fn shown_as_is(c: char) -> bool {
    !(c.is_whitespace()
        || c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}'
        ))
}

#[cfg(target_os = "linux")]
pub(crate) fn os_thread_id() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u64 }
}

/// The id Windows tools (Process Explorer, debuggers, ETW) show for the thread.
#[cfg(windows)]
pub(crate) fn os_thread_id() -> u64 {
    // SAFETY: GetCurrentThreadId has no preconditions.
    u64::from(unsafe { windows_sys::Win32::System::Threading::GetCurrentThreadId() })
}

/// The id `lldb` and Instruments show for the thread.
#[cfg(target_vendor = "apple")]
pub(crate) fn os_thread_id() -> u64 {
    let mut id = 0u64;
    // SAFETY: a null thread means the calling thread; `id` is a valid out-pointer.
    unsafe { libc::pthread_threadid_np(0, &mut id) };
    id
}

/// No thread id the OS shows: a number per call, unique in the process.
#[cfg(not(any(target_os = "linux", windows, target_vendor = "apple")))]
pub(crate) fn os_thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A queue whose ring lives in the spool, when one is installed: `None` without a spool, or
/// when the spool cannot take one more ring (a full or damaged directory), which is noted for
/// the back end to report; the thread then logs into a heap ring, unprotected.
#[cfg(all(unix, not(loom)))]
fn spooled_chain(thread: &ThreadInfo) -> Option<(RingChain, ChainProducer, ConsumerCursor)> {
    let spool = super::spool::active()?;
    match spool.ring_file(thread.serial, thread.id, &thread.name) {
        Ok(file) => Some(RingChain::spooled(file)),
        Err(e) => {
            super::spool::warn(format!(
                "spool {}: no ring for thread {}/{}: {e}; its records are not protected \
                 against SIGKILL",
                spool.dir().display(),
                thread.name,
                thread.id
            ));
            None
        }
    }
}

#[cfg(not(all(unix, not(loom))))]
fn spooled_chain(_thread: &ThreadInfo) -> Option<(RingChain, ChainProducer, ConsumerCursor)> {
    None
}

/// One producing thread's ring and what the back end needs to know about it.
pub(crate) struct ThreadQueue {
    /// The thread's records: a chain of rings that grows with what it logs.
    pub(crate) rings: RingChain,
    pub(crate) thread: ThreadInfo,
    /// Set (`Release`) by the producer after its last record, when its thread exits.
    pub(crate) closed: AtomicBool,
    /// Records this thread dropped because the ring was full under `OnFull::Drop`, or because no
    /// back end was running, and not yet reported. Incremented by the producer; the back end
    /// swaps it to zero when it writes the count into the log.
    pub(crate) dropped: AtomicU64,
    /// Clock ticks when the queue was created: none of its records is older.
    pub(crate) created_ticks: u64,
}

/// The back end's handle on a queue: the queue and the consumer's cursor.
pub(crate) struct Adopted {
    pub(crate) queue: Arc<ThreadQueue>,
    pub(crate) cursor: ConsumerCursor,
}

pub(crate) struct Registry {
    waiting: Mutex<Vec<Adopted>>,
    /// Incremented each time a queue is put in `waiting`.
    generation: AtomicUsize,
}

pub(crate) static REGISTRY: Registry = Registry {
    waiting: Mutex::new(Vec::new()),
    generation: AtomicUsize::new(0),
};

impl Registry {
    /// Creates and registers a queue for the calling thread, whose rings start at `initial`
    /// bytes and may grow to `max`.
    pub(crate) fn register(
        &self,
        initial: usize,
        max: usize,
        created_ticks: u64,
    ) -> (Arc<ThreadQueue>, ChainProducer) {
        let thread = ThreadInfo::current();
        let (rings, producer, consumer) =
            spooled_chain(&thread).unwrap_or_else(|| RingChain::new(initial, max));
        let queue = Arc::new(ThreadQueue {
            rings,
            thread,
            closed: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            created_ticks,
        });
        self.give_back(vec![Adopted {
            queue: queue.clone(),
            cursor: consumer,
        }]);
        (queue, producer)
    }

    /// Hands queues (back) to whichever back end runs next.
    pub(crate) fn give_back(&self, queues: Vec<Adopted>) {
        if queues.is_empty() {
            return;
        }
        lock(&self.waiting).extend(queues);
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// The generation counter: when it differs from the last one seen, call [`Registry::adopt`].
    pub(crate) fn generation(&self) -> usize {
        self.generation.load(Ordering::Acquire)
    }

    /// Takes every waiting queue.
    pub(crate) fn adopt(&self) -> Vec<Adopted> {
        std::mem::take(&mut *lock(&self.waiting))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_once_and_read_back_unchanged() {
        let long = "w".repeat(1 << 20);
        let shown = ThreadInfo::named(&long, 1).name;
        assert_eq!(shown.chars().count(), MAX_THREAD_NAME_CHARS);
        assert!(shown.starts_with(&"w".repeat(MAX_THREAD_NAME_CHARS - 1)) && shown.ends_with('…'));
        // A name read back from a file passes through `named` again.
        assert_eq!(ThreadInfo::named(&shown, 1).name, shown);
        let exact = "é\n".repeat(MAX_THREAD_NAME_CHARS / 2);
        assert_eq!(
            ThreadInfo::named(&exact, 1).name,
            "é_".repeat(MAX_THREAD_NAME_CHARS / 2)
        );
        assert_eq!(ThreadInfo::named("", 1).name, "-");
    }
}
