//! ticklog, writing a `FileSink` with `Backpressure::Block` (its default, `Drop`, discards
//! records when a thread's buffer is full; `Block` spins until the drain thread frees space).
//!
//! The calling thread encodes the arguments into its own buffer; the drain thread formats and
//! writes. `finish` drops the guard, which flushes the sink and stops the drain thread.
//! ticklog's macros take only `{}` and `{:?}` of its own encodable types (integers, floats,
//! `bool`, strings): the shapes they cannot express are marked unsupported, not faked.

use std::path::Path;

use ticklog::FileSink;

// ticklog's logging macros read the level ceiling and the backpressure policy from two
// macros, `__ticklog_max_level!()` and `__ticklog_backpressure!()`, called by bare name.
// `configure!` defines them with `#[macro_export]`, which puts them at the crate root only,
// and Rust refuses to import macro-expanded exports by path; so outside the root module the
// logging macros would not compile. These local definitions repeat exactly what our
// `configure!` call below says (Info, Block) and are what every call in this module uses.
macro_rules! __ticklog_max_level {
    () => {
        ticklog::Level::Info
    };
}
macro_rules! __ticklog_backpressure {
    () => {
        ticklog::Backpressure::Block
    };
}

use super::{logger_err, BenchLogger};
use crate::error::BenchError;
use crate::workloads::Shape;

/// Holds the guard whose drop flushes and stops the drain thread.
pub struct Ticklog {
    guard: ticklog::Guard,
}

/// A body for the shapes listed in `UNSUPPORTED`: the parent never runs them.
#[cold]
fn unsupported(shape: &str) -> ! {
    unreachable!("ticklog cannot log the {shape} shape; the parent skips it")
}

impl BenchLogger for Ticklog {
    const NAME: &'static str = "ticklog";
    const CRATES: &'static [&'static str] = &["ticklog"];
    const CONFIG: &'static str =
        "configure!{ sink: FileSink::truncate(..), backpressure: Backpressure::Block }, defaults";
    const UNSUPPORTED: &'static [(Shape, &'static str)] = &[
        (
            Shape::Request,
            "no `{:.3}` precision in ticklog's format strings",
        ),
        (
            Shape::Items,
            "`{:?}` only of ticklog's own types; no Vec<String>",
        ),
        (Shape::Mixed, "no `char` argument type"),
        (
            Shape::Response,
            "no `{:.3}` precision in ticklog's format strings",
        ),
    ];

    fn init(file: &Path) -> Result<Self, BenchError> {
        let sink = FileSink::truncate(file).map_err(|e| BenchError::io(file, e))?;
        let guard = ticklog::configure! {
            sink: sink,
            backpressure: ticklog::Backpressure::Block,
        }
        .map_err(logger_err(Self::NAME))?;
        Ok(Ticklog { guard })
    }

    #[inline(always)]
    fn hello_world(&self) {
        ticklog::info!("Hello World!");
    }
    #[inline(always)]
    fn one_logged(&self) {
        ticklog::info!("{}", "1 logged");
    }
    fn request(&self, _: u64, _: f64, _: &str) {
        unsupported("request")
    }
    #[inline(always)]
    fn static_message(&self) {
        ticklog::info!("static message with no arguments");
    }
    #[inline(always)]
    fn payload(&self, s: &str) {
        ticklog::info!("payload {}", s);
    }
    fn items(&self, _: &[String]) {
        unsupported("items")
    }
    #[inline(always)]
    fn iteration(&self, i: u64, int: i64, double: f64) {
        ticklog::info!("Iteration: {} int: {} double: {}", i, int, double);
    }
    fn quill(&self, i: u64, message: u64, double: f64) {
        ticklog::info!(
            "Logging iteration: {}, message: {}, double: {}",
            i,
            message,
            double
        );
    }
    fn mixed(&self, _: bool, _: char, _: i32, _: u64, _: f64, _: &str) {
        unsupported("mixed")
    }
    #[inline(always)]
    fn access(&self, peer: &str, path: &str, status: u16, micros: u64) {
        ticklog::info!("access {} GET {} {} {}us", peer, path, status, micros);
    }
    fn response(&self, _: u16, _: u64, _: f64) {
        unsupported("response")
    }

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }
}
