//! The queue between the calling threads and the back end: one bounded SPSC byte ring per
//! producing thread ([`ring`]), the registry through which the back end finds them
//! ([`registry`]), and the flush barrier between callers of `flush()` and the back end
//! ([`handshake`]).
//!
//! Nothing here formats, allocates after a ring's creation (except boxed oversize frames), locks
//! on the producer path, or makes a system call.
//!
//! Layer 1 (see `ARCHITECTURE.md`): imports nothing from the crate outside `queue`. Besides the
//! rings it holds [`control`], the one home of the flush barrier and the back end's wake-up,
//! so that every layer above can wait for the back end without importing it.

#[cfg(not(loom))]
pub(crate) mod control;
pub(crate) mod handshake;
#[cfg(not(loom))]
pub(crate) mod registry;
pub(crate) mod ring;
pub(crate) mod sync;
