//! Bridges from the logging facades applications already use into tachylog's queue.
//!
//! Both facades receive type-erased values, so they format the message and encode the fields
//! on the calling thread, into this thread's reused buffers ([`with_scratch`]).
//!
//! Layer 7 (see `ARCHITECTURE.md`), after `filter`: imports layers 1 to 6 and `filter`.

pub(crate) mod log;
#[cfg(feature = "tracing")]
pub(crate) mod tracing;

use std::cell::RefCell;

thread_local! {
    static MESSAGE: RefCell<String> = const { RefCell::new(String::new()) };
    static FIELDS: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `send` with this thread's message and field buffers, so that a record costs no
/// allocation once they have grown. A `Display`/`Debug` impl that logs re-enters with the
/// buffers borrowed, and a thread being torn down has none: both get fresh ones.
pub(crate) fn with_scratch(send: impl FnOnce(&mut String, &mut Vec<u8>)) {
    let mut send = Some(send);
    let _ = MESSAGE.try_with(|m| {
        FIELDS.try_with(|f| {
            if let (Ok(mut m), Ok(mut f)) = (m.try_borrow_mut(), f.try_borrow_mut()) {
                if let Some(send) = send.take() {
                    send(&mut m, &mut f);
                }
            }
        })
    });
    if let Some(send) = send {
        send(&mut String::new(), &mut Vec::new());
    }
}
