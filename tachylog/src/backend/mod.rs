//! The back end: one worker thread ([`worker`]) that merges the rings in timestamp order
//! ([`merge`]), converts ticks to wall time ([`clock`]), formats and writes to the sinks, and
//! counts what it costs ([`stats`]).
//!
//! Everything slow lives here, off the application's threads: formatting, time-zone math,
//! system calls, blocking on slow devices.
//!
//! Layer 6 (see `ARCHITECTURE.md`): imports layers 1 to 5; nothing below it knows it exists.

pub(crate) mod backtrace;
pub(crate) mod clock;
pub(crate) mod merge;
mod output;
#[cfg(all(unix, not(loom)))]
pub(crate) mod recovery;
mod scopes;
#[cfg(all(unix, not(loom)))]
pub(crate) mod spool_cut;
pub(crate) mod stats;
pub(crate) mod worker;
