//! The calling thread's half of logging: the level gate ([`gate`]), argument encoding
//! ([`args`], [`field_args`]), the clock ([`clock`]) and the per-thread producer ([`producer`]).
//!
//! Code here runs inside the application's threads. It never formats (except the documented
//! fallback for types without a raw encoding), never locks, never allocates and never makes a
//! system call on the hot path; everything that might is `#[cold]` and out of line.
//!
//! Layer 3 (see `ARCHITECTURE.md`): imports layers 1 and 2 only; waiting for the back end
//! (`sync_level`, a full ring) goes through [`crate::queue::control`].

pub(crate) mod args;
pub(crate) mod clock;
pub(crate) mod field_args;
pub(crate) mod gate;
pub mod limit;
pub(crate) mod mute;
pub(crate) mod producer;
pub(crate) mod scope;
pub(crate) mod spool;
pub(crate) mod trace;
