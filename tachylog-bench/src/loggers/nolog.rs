//! `nolog`: logs nothing. The reference run of the workloads that measure what logging adds:
//! the server's (requests/s and CPU per request with no logging), `paced_*` (the CPU and
//! context switches of the pacing loop itself) and `threads_*` (the threads' own memory).

use std::path::Path;

use super::BenchLogger;
use crate::error::BenchError;

/// Every call is a no-op.
pub struct NoLog;

impl BenchLogger for NoLog {
    const NAME: &'static str = "nolog";
    const CRATES: &'static [&'static str] = &[];
    const CONFIG: &'static str = "no logger: the reference run of server_*, paced_* and threads_*";

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
    fn quill(&self, _: u64, _: u64, _: f64) {}
    fn mixed(&self, _: bool, _: char, _: i32, _: u64, _: f64, _: &str) {}
    fn access(&self, _: &str, _: &str, _: u16, _: u64) {}
    fn response(&self, _: u16, _: u64, _: f64) {}
    fn finish(self) -> Result<(), BenchError> {
        Ok(())
    }
}
