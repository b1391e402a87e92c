//! inqjet, writing a `File` with `BackpressureMode::Backoff` (its default: a full ring makes
//! the caller back off and retry, never drop) and no ANSI colours.
//!
//! The calling thread copies plain-data arguments (formatting the others) into a shared
//! ring; the archiver thread formats and writes. `finish` drops the guard, which drains the
//! ring and joins the archiver.

use std::fs::File;
use std::path::Path;

use inqjet::{BackpressureMode, ColorMode, InqJetBuilder, LevelFilter};

use super::{log_calls, logger_err, BenchLogger};
use crate::error::BenchError;

/// Holds the guard whose drop drains and stops the archiver.
pub struct Inqjet {
    guard: inqjet::InqJetGuard,
}

impl BenchLogger for Inqjet {
    const NAME: &'static str = "inqjet";
    const CRATES: &'static [&'static str] = &["inqjet"];
    const CONFIG: &'static str = "InqJetBuilder: with_writer(File), Info, \
         BackpressureMode::Backoff, ColorMode::Never, other settings default";

    fn init(file: &Path) -> Result<Self, BenchError> {
        let f = File::create(file).map_err(|e| BenchError::io(file, e))?;
        let guard = InqJetBuilder::default()
            .with_writer(f)
            .with_log_level(LevelFilter::Info)
            .with_backpressure(BackpressureMode::Backoff)
            .with_color_mode(ColorMode::Never)
            .build()
            .map_err(logger_err(Self::NAME))?;
        Ok(Inqjet { guard })
    }

    log_calls!(inqjet::info);

    fn finish(self) -> Result<(), BenchError> {
        drop(self.guard);
        Ok(())
    }
}
