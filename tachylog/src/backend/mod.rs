//! The back end: one worker thread ([`worker`]) that merges the rings in timestamp order
//! ([`merge`]), converts ticks to wall time ([`clock`]), formats and writes to the sinks.
//!
//! Everything slow lives here, off the application's threads: formatting, time-zone math,
//! system calls, blocking on slow devices.

pub(crate) mod clock;
pub(crate) mod merge;
pub(crate) mod worker;
