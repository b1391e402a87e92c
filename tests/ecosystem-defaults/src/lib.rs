//! tachylog the way users depend on it: beside `tracing`, `tracing-subscriber`, `log` and
//! `tokio` with their default features, which this crate's `Cargo.toml` keeps on.
//!
//! The repository's README is this crate's documentation below, so `cargo test` compiles and
//! runs every Rust block in it as a doctest, each in its own process, with these
//! dependencies: the README cannot drift from the code. Blocks that need a collector on the
//! network are marked `no_run` and only compiled. The tests in `tests/` check what the README
//! promises about the `log` slot and the `tracing` layer, one process per scenario (the `log`
//! slot is process-wide).
#![doc = include_str!("../../../README.md")]
