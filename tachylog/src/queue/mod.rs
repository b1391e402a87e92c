//! The queue between the calling threads and the back end: per producing thread, a bounded
//! SPSC byte ring ([`ring`]) that is replaced by a larger one when the thread needs more room
//! ([`chain`]); the registry through which the back end finds them ([`registry`]); and the
//! flush barrier between callers of `flush()` and the back end ([`handshake`]).
//!
//! Nothing here formats, allocates after a ring's creation (except when a thread's ring grows,
//! and boxed oversize frames), locks on the producer path, or makes a system call.
//!
//! Layer 1 (see `ARCHITECTURE.md`): imports nothing from the crate outside `queue`. Besides the
//! rings it holds [`control`], the one home of the flush barrier and the back end's wake-up,
//! so that every layer above can wait for the back end without importing it.

// Under loom only the queue is built, without the layers that call much of it.
#![cfg_attr(loom, allow(dead_code))]

pub(crate) mod chain;
#[cfg(not(loom))]
pub(crate) mod control;
pub(crate) mod handshake;
#[cfg(not(loom))]
pub(crate) mod registry;
pub(crate) mod ring;
#[cfg(all(unix, not(loom)))]
pub(crate) mod spool;
pub(crate) mod sync;
