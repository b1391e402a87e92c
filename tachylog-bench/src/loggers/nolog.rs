//! `nolog`: logs nothing. The server workload's reference run (requests/s with no logging);
//! no other workload runs it.

use std::path::Path;

use super::BenchLogger;
use crate::error::BenchError;

/// Every call is a no-op.
pub struct NoLog;

impl BenchLogger for NoLog {
    const NAME: &'static str = "nolog";
    const CRATES: &'static [&'static str] = &[];
    const CONFIG: &'static str = "no logger: the server's reference run";

    fn init(_file: &Path) -> Result<Self, BenchError> {
        Ok(NoLog)
    }
    fn hello_world(&self) {}
    fn one_logged(&self) {}
    fn request(&self, _: u64, _: f64, _: &str) {}
    fn static_message(&self) {}
    fn payload(&self, _: &str) {}
    fn items(&self, _: &[String]) {}
    fn iteration(&self, _: u64, _: i64, _: f64) {}
    fn mixed(&self, _: bool, _: char, _: i32, _: u64, _: f64, _: &str) {}
    fn access(&self, _: &str, _: &str, _: u16, _: u64) {}
    fn finish(self) -> Result<(), BenchError> {
        Ok(())
    }
}
