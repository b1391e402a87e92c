//! The queue between the calling threads and the back end: one bounded SPSC byte ring per
//! producing thread ([`ring`]), the registry through which the back end finds them
//! ([`registry`]), and the flush barrier between callers of `flush()` and the back end
//! ([`handshake`]).
//!
//! Nothing here formats, allocates after a ring's creation (except boxed oversize frames), locks
//! on the producer path, or makes a system call.

pub(crate) mod handshake;
#[cfg(not(loom))]
pub(crate) mod registry;
pub(crate) mod ring;
pub(crate) mod sync;
