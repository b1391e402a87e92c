//! The workloads: what each child process does with the logger it installed.
//!
//! Every workload is generic over [`BenchLogger`] and identical for every logger. Each one
//! knows how many lines it writes and a text that every one of those lines contains, so the
//! parent can count them on disk afterwards.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::report::Measurement;
use crate::verify::Expected;

mod latency;
mod seed;

/// Run size: `quick` is the default suite, `full` runs more calls and repeats every run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// About a minute for the whole suite.
    Quick,
    /// Five times the latency samples, three runs of everything.
    Full,
}

impl Scale {
    /// Command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Full => "full",
        }
    }

    /// Parses the command-line spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "quick" => Some(Scale::Quick),
            "full" => Some(Scale::Full),
            _ => None,
        }
    }

    /// Separate processes per (logger, workload); the table shows the median run.
    pub fn runs(self) -> u32 {
        match self {
            Scale::Quick => 1,
            Scale::Full => 3,
        }
    }
}

/// A workload, as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// 1,000,000 × `info!("Hello World!")`, one thread, timed until the final flush returns.
    Seed1m,
    /// Per-call latency of `info!("request {} took {:.3} ms: {}", u64, f64, &str)`.
    Latency,
    /// Per-call latency of `info!("static message with no arguments")`.
    LatencyStatic,
}

impl Workload {
    /// Every workload, in table order.
    pub const ALL: [Workload; 3] = [Workload::Seed1m, Workload::Latency, Workload::LatencyStatic];

    /// Command-line and table name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Seed1m => "seed_1m",
            Workload::Latency => "latency",
            Workload::LatencyStatic => "latency_static",
        }
    }

    /// Looks a workload up by name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.name() == s)
    }

    /// Text that every line this workload logs contains, whatever the logger's format.
    pub fn marker(self) -> &'static str {
        match self {
            Workload::Seed1m => "Hello World!",
            Workload::Latency => "request ",
            Workload::LatencyStatic => "static message with no arguments",
        }
    }

    /// What this workload must leave on disk at `scale`.
    pub fn expected(self, scale: Scale) -> Expected {
        let lines = self.expected_lines(scale);
        let (probe, probe_count) = match self {
            // Call 1 of the warm-up and call 1 of the timed loop carry the same arguments.
            Workload::Latency => {
                let (id, ms, path) = latency::request_args(1);
                (format!("request {id} took {ms:.3} ms: {path}"), 2)
            }
            Workload::Seed1m | Workload::LatencyStatic => (self.marker().to_string(), lines),
        };
        Expected {
            marker: self.marker(),
            lines,
            probe,
            probe_count,
        }
    }

    /// Lines this workload logs at `scale` (warm-up included).
    pub fn expected_lines(self, scale: Scale) -> u64 {
        match self {
            Workload::Seed1m => seed::LINES,
            Workload::Latency | Workload::LatencyStatic => {
                let p = latency::Params::for_scale(scale);
                p.warmup + p.calls
            }
        }
    }

    /// What the workload does, for `--list` and the report header.
    pub fn describe(self, scale: Scale) -> String {
        match self {
            Workload::Seed1m => seed::describe(),
            Workload::Latency => latency::Params::for_scale(scale)
                .describe(r#"info!("request {} took {:.3} ms: {}", u64, f64, &str)"#),
            Workload::LatencyStatic => latency::Params::for_scale(scale)
                .describe(r#"info!("static message with no arguments")"#),
        }
    }
}

/// Installs `L` writing to `file`, runs `workload`, shuts `L` down; runs in a child process.
pub fn run<L: BenchLogger>(
    workload: Workload,
    scale: Scale,
    file: &Path,
) -> Result<Measurement, BenchError> {
    match workload {
        Workload::Seed1m => seed::run::<L>(file).map(Measurement::Throughput),
        Workload::Latency => latency::run(
            file,
            latency::Params::for_scale(scale),
            latency::request_args,
            |l: &mut L, (id, ms, path)| l.request(id, ms, path),
        )
        .map(Measurement::Latency),
        Workload::LatencyStatic => latency::run(
            file,
            latency::Params::for_scale(scale),
            |_| (),
            |l: &mut L, ()| l.static_message(),
        )
        .map(Measurement::Latency),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_probe_is_call_one_rendered_by_std() {
        let e = Workload::Latency.expected(Scale::Quick);
        assert_eq!(e.probe, "request 1000001 took 0.014 ms: /api/v1/users/42");
        assert_eq!(e.probe_count, 2);
        assert_eq!(e.lines, 210_000);
        assert!(e.probe.contains(e.marker));
        let s = Workload::Seed1m.expected(Scale::Full);
        assert_eq!((s.lines, s.probe_count), (1_000_000, 1_000_000));
    }
}
