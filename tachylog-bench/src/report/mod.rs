//! Results: what a child reports, what the parent verified, and how repeated runs combine
//! into table rows; saved as JSON under `target/bench-report/` (rendering is in `markdown`).
//!
//! Repeated runs (`--full`, `--runs N`) are combined per (logger, workload): the median of
//! every figure, except `max`, which is the largest seen. Each row keeps its runs'
//! measurements too, so a table can show how far they spread (`spread`) and rank two loggers
//! only where the runs, or for a single run this machine's measured run-to-run noise
//! (`noise`), tell them apart.

mod binary;
mod charts;
mod compare;
mod load;
mod markdown;
mod noise;
mod rates;
mod spread;
pub(crate) mod targets;

pub use load::{PacedRun, ThreadsRun};
pub use markdown::group_digits;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::BenchError;
use crate::machine::Machine;
use crate::stats::{median_f64, median_u64, Percentiles};

/// What one child measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Measurement {
    /// From `seed_1m`.
    Throughput(Throughput),
    /// From `latency*` and `batch20_*`.
    Latency(Latency),
    /// From `server_*`.
    Server(ServerRun),
    /// From `idle_cpu`.
    Idle(Idle),
    /// From `backend_*`.
    Backend(BackendRun),
    /// From `paced_*`.
    Paced(PacedRun),
    /// From `threads_*`.
    Threads(ThreadsRun),
}

/// The back end alone: records queued while it was held, then the drain timed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendRun {
    /// Records queued while held (the one warm-up record before the hold is not counted).
    pub records: u64,
    /// The ring's capacity in bytes, sized to hold them all.
    pub ring_bytes: u64,
    /// Seconds the calling thread took to queue them, with the back end held (no competition
    /// for the cores, no consumer touching the ring).
    pub fill_s: f64,
    /// Seconds from the release until `tachylog::flush()` returned: every record formatted
    /// and written to the file (handed to the kernel).
    pub drain_s: f64,
    /// CPU seconds the back end thread ran during the drain: the formatting, with no kernel
    /// copy in it (`None` where `/proc/self/task/*/schedstat` cannot be read).
    #[serde(default)]
    pub backend_cpu_s: Option<f64>,
    /// CPU seconds the file's writing thread ran during the drain: mostly the kernel copying
    /// the lines into the page cache, which on a VM that hands free pages back to its host
    /// includes a host page fault per fresh page.
    #[serde(default)]
    pub writer_cpu_s: Option<f64>,
}

/// The server workload's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerRun {
    /// Requests the load generator got answers to.
    pub requests: u64,
    /// Requests the server answered and logged (must equal `requests`).
    pub served: u64,
    /// Concurrent client connections.
    pub connections: u32,
    /// Seconds from the first request to the last answer.
    pub elapsed_s: f64,
    /// `requests / elapsed_s`.
    pub requests_per_s: f64,
    /// Client-side median latency, µs.
    pub p50_us: f64,
    /// Client-side 99th percentile, µs.
    pub p99_us: f64,
    /// Process CPU seconds (user + system, every thread) from the server's start until the
    /// logger's finish returned: server, logger and load generator.
    #[serde(default)]
    pub cpu_s: Option<f64>,
    /// Of that, the load generator's client threads (each thread's own `getrusage`).
    #[serde(default)]
    pub client_cpu_s: Option<f64>,
}

impl ServerRun {
    /// The server's CPU per request answered, µs: the process's minus its clients'.
    pub fn server_cpu_us_per_request(&self) -> Option<f64> {
        let server_s = self.cpu_s? - self.client_cpu_s?;
        (self.requests > 0).then(|| server_s * 1e6 / self.requests as f64)
    }
}

/// CPU an idle logger used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Idle {
    /// Process CPU seconds (user + system) in the window.
    pub cpu_s: f64,
    /// The window, wall seconds.
    pub wall_s: f64,
}

/// Whole-run time for a fixed number of lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Lines logged.
    pub lines: u64,
    /// Seconds in the calling thread's logging loop.
    pub loop_s: f64,
    /// Seconds from the first call until the logger's shutdown returned.
    pub total_s: f64,
    /// The process's CPU time (user + system, all threads) over `total_s`.
    #[serde(default)]
    pub cpu_s: Option<f64>,
}

/// Per-call latency distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Timed calls.
    pub calls: u64,
    /// Untimed warm-up calls before them.
    pub warmup: u64,
    /// Busy-wait between calls, ns.
    pub gap_ns: u64,
    /// Calibrated clock ticks per ns.
    pub ticks_per_ns: f64,
    /// Typical clock step, ns: the resolution of every latency figure.
    pub clock_step_ns: f64,
    /// The log call, ns.
    pub call_ns: Percentiles,
    /// Mean of the log call, ns.
    pub mean_ns: f64,
    /// Two clock stamps around an empty body, ns: included in every `call_ns` figure.
    pub overhead_ns: Percentiles,
    /// Seconds the logger's shutdown took after the last timed call.
    pub finish_s: f64,
    /// (percentile, ns) points of the distribution, for the percentile-curve charts.
    #[serde(default)]
    pub curve: Vec<(f64, u64)>,
}

/// The one line a child prints on stdout, after [`RESULT_PREFIX`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildResult {
    /// Logger name.
    pub logger: String,
    /// Workload name.
    pub workload: String,
    /// Lines the workload logged.
    pub lines_logged: u64,
    /// What it measured.
    pub measurement: Measurement,
}

/// Marks the child's result line, so anything a logger prints on stdout is ignored.
pub const RESULT_PREFIX: &str = "TACHYLOG-BENCH-RESULT ";

/// The parent's count of the lines on disk after the child exited.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// Lines the workload must have produced.
    pub expected: u64,
    /// Files found in the run's directory.
    pub files: u32,
    /// Bytes in them.
    pub bytes: u64,
    /// Newline-terminated lines in them.
    pub lines: u64,
    /// Of those, lines containing the workload's marker text.
    pub marked_lines: u64,
    /// Bytes after the last newline (a torn last line), summed over files.
    pub trailing_bytes: u64,
    /// An exact rendered message (arguments included) that must appear `probe_expected`
    /// times: checks that the logger formatted the arguments right, not just wrote lines.
    pub probe: String,
    /// How many lines must contain `probe`.
    pub probe_expected: u64,
    /// How many do.
    pub probe_found: u64,
}

impl Verification {
    /// Every expected line is on disk, whole, with its arguments rendered right. Extra lines
    /// are allowed (a logger may add a banner); missing, torn or misformatted ones are not.
    pub fn ok(&self) -> bool {
        self.marked_lines == self.expected
            && self.trailing_bytes == 0
            && self.probe_found == self.probe_expected
    }

    /// Human explanation of a failed check.
    pub fn explain(&self) -> String {
        let mut s = format!(
            "{} of {} expected lines on disk ({} missing); {} lines in {} file(s), {} bytes \
             after the last newline",
            group_digits(self.marked_lines),
            group_digits(self.expected),
            group_digits(self.expected.saturating_sub(self.marked_lines)),
            group_digits(self.lines),
            self.files,
            self.trailing_bytes
        );
        if self.probe_found != self.probe_expected {
            s.push_str(&format!(
                "; `{}` found {} times, expected {}",
                shorten(&self.probe, 80),
                self.probe_found,
                self.probe_expected
            ));
        }
        s
    }
}

/// `s` cut to `max` characters with `...` (a 4 KB probe would drown the message).
fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// One child run as the parent saw it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    /// Logger name.
    pub logger: String,
    /// Workload name.
    pub workload: String,
    /// Repetition, from 1.
    pub run: u32,
    /// The child's result, if it produced one.
    pub result: Option<ChildResult>,
    /// The line count, if the child got that far.
    pub verification: Option<Verification>,
    /// Why this run failed, if it did.
    pub failure: Option<String>,
    /// Peak resident set of the child process, KiB (`ru_maxrss` from `wait4`).
    #[serde(default)]
    pub peak_rss_kib: Option<u64>,
}

/// Everything written to the JSON file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The machine.
    pub machine: Machine,
    /// When the suite started, UTC.
    pub date: String,
    /// argv as given.
    pub command: String,
    /// Load averages (1, 5, 15 min) before the first run.
    pub load_before: Option<[f64; 3]>,
    /// Share (0..1) of all CPUs' time during the suite used by other processes (hypervisor
    /// steal included): anything above a few % means the figures are noisy.
    pub others_cpu_share: Option<f64>,
    /// Whether `cargo run` launched the binary.
    pub via_cargo: bool,
    /// The compiler that built the binary.
    pub rustc: String,
    /// `quick` or `full`.
    pub scale: String,
    /// Runs per (logger, workload).
    pub runs_per_pair: u32,
    /// Whether the binary was built with debug assertions (numbers then mean nothing).
    pub debug_build: bool,
    /// Workload descriptions.
    pub workloads: Vec<String>,
    /// Every logger run.
    pub loggers: Vec<LoggerInfo>,
    /// Every run.
    pub runs: Vec<RunRecord>,
    /// Selected (logger, workload) pairs that were not run, with the reason.
    #[serde(default)]
    pub not_run: Vec<String>,
    /// Wall seconds the whole suite took.
    #[serde(default)]
    pub suite_s: f64,
    /// Whether the report checks tachylog's internal targets and recorded baseline
    /// (`--targets`); the tables are the same either way.
    #[serde(default)]
    pub targets: bool,
    /// The commit whose own bench binary ran as `tachylog_baseline` in this suite, if any.
    #[serde(default)]
    pub baseline_commit: Option<String>,
}

/// A logger as the report introduces it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoggerInfo {
    /// Name in the tables.
    pub name: String,
    /// Its crates and their locked versions ("std" for the baselines).
    pub crates: String,
    /// How it is configured.
    pub config: String,
}

/// The median of a back-end figure over the runs that have it, or `None` if none has.
fn median_of_some(ms: &[&Measurement], figure: fn(&BackendRun) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = ms
        .iter()
        .filter_map(|m| match m {
            Measurement::Backend(b) => figure(b),
            _ => None,
        })
        .collect();
    (!values.is_empty()).then(|| median_f64(&values))
}

/// Combined figures for one (logger, workload).
#[derive(Clone, Debug, PartialEq)]
pub enum Summary {
    /// Medians of the runs' throughput figures.
    Throughput {
        /// Lines per run.
        lines: u64,
        /// Bytes on disk per line (formats differ; more bytes is more work).
        bytes_per_line: f64,
        /// Median loop seconds.
        loop_s: f64,
        /// Median total seconds.
        total_s: f64,
        /// Bytes on disk (the first run's).
        bytes: u64,
        /// Median process CPU seconds, where measured.
        cpu_s: Option<f64>,
    },
    /// Medians of the back-end-alone runs.
    Backend {
        /// Records drained per run.
        records: u64,
        /// Bytes on disk per line.
        bytes_per_line: f64,
        /// Bytes on disk (the first run's).
        bytes: u64,
        /// Median seconds to queue them while held.
        fill_s: f64,
        /// Median seconds to drain them.
        drain_s: f64,
        /// Median CPU seconds of the back end thread during the drain, where measured.
        backend_cpu_s: Option<f64>,
        /// Median CPU seconds of the file's writing thread during the drain, where measured.
        writer_cpu_s: Option<f64>,
    },
    /// Combined latency percentiles.
    Latency {
        /// Log call, ns.
        call: Percentiles,
        /// Harness overhead, ns.
        overhead: Percentiles,
    },
    /// Medians of the server runs.
    Server {
        /// Requests/s.
        requests_per_s: f64,
        /// Client-side p99, µs.
        p99_us: f64,
        /// Client-side p50, µs.
        p50_us: f64,
        /// Server CPU per request, µs, where measured.
        cpu_us_per_request: Option<f64>,
    },
    /// Median idle CPU share (0..1 of one core).
    Idle {
        /// CPU seconds per wall second.
        cpu_share: f64,
    },
    /// Combined `paced_*` runs.
    Paced(load::Paced),
    /// Combined `threads_*` runs.
    Threads(load::Threads),
    /// At least one run failed; the table says so instead of showing numbers.
    Failed,
}

/// A table row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Logger name.
    pub logger: String,
    /// Workload name.
    pub workload: String,
    /// Its combined figures.
    pub summary: Summary,
    /// Median peak RSS of its runs, KiB, where measured.
    pub peak_rss_kib: Option<u64>,
    /// What each successful run measured, in run order: the spread behind `summary`.
    pub measurements: Vec<Measurement>,
}

impl Report {
    /// Combines the runs into rows, in the order the pairs were first run.
    pub fn rows(&self) -> Vec<Row> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for r in &self.runs {
            if !pairs.contains(&(r.logger.as_str(), r.workload.as_str())) {
                pairs.push((&r.logger, &r.workload));
            }
        }
        pairs
            .into_iter()
            .map(|(logger, workload)| {
                let runs: Vec<&RunRecord> = self
                    .runs
                    .iter()
                    .filter(|r| r.logger == logger && r.workload == workload)
                    .collect();
                let rss: Vec<u64> = runs.iter().filter_map(|r| r.peak_rss_kib).collect();
                Row {
                    logger: logger.to_string(),
                    workload: workload.to_string(),
                    summary: summarize(&runs),
                    peak_rss_kib: (!rss.is_empty()).then(|| median_u64(&rss)),
                    measurements: runs
                        .iter()
                        .filter(|r| r.failure.is_none())
                        .filter_map(|r| r.result.as_ref().map(|c| c.measurement.clone()))
                        .collect(),
                }
            })
            .collect()
    }

    /// Runs that failed.
    pub fn failures(&self) -> Vec<&RunRecord> {
        self.runs.iter().filter(|r| r.failure.is_some()).collect()
    }

    /// Writes `<stamp>-<scale>.json` and `latest.json` (plus `latest.md`) into `dir`.
    pub fn write(&self, dir: &Path, stamp: &str) -> Result<PathBuf, BenchError> {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
        let json = serde_json::to_string_pretty(self)?;
        let path = dir.join(format!("{stamp}-{}.json", self.scale));
        for p in [&path, &dir.join("latest.json")] {
            std::fs::write(p, &json).map_err(|e| BenchError::io(p, e))?;
        }
        let md = dir.join("latest.md");
        std::fs::write(&md, self.markdown()).map_err(|e| BenchError::io(&md, e))?;
        // A chart that cannot be drawn is reported, but the figures above are already saved.
        match charts::write_all(self, dir) {
            Ok(files) => eprintln!("{} SVG chart(s) written to {}", files.len(), dir.display()),
            Err(e) => eprintln!("tachylog-bench: CHARTS NOT WRITTEN: {e}"),
        }
        Ok(path)
    }
}

fn summarize(runs: &[&RunRecord]) -> Summary {
    if runs.iter().any(|r| r.failure.is_some()) {
        return Summary::Failed;
    }
    let ms: Vec<&Measurement> = runs
        .iter()
        .filter_map(|r| r.result.as_ref().map(|c| &c.measurement))
        .collect();
    // Median of one figure over the runs whose measurement has it.
    let med = |f: &dyn Fn(&Measurement) -> Option<f64>| {
        median_f64(&ms.iter().filter_map(|m| f(m)).collect::<Vec<_>>())
    };
    // What the first run left on disk (the verification of every run checked its lines).
    let first_v = runs.iter().find_map(|r| r.verification.as_ref());
    let bytes = first_v.map_or(0, |v| v.bytes);
    let bytes_per_line = first_v.map_or(0.0, |v| v.bytes as f64 / v.lines.max(1) as f64);
    match ms.first() {
        Some(Measurement::Throughput(t)) => {
            let tp = |f: fn(&Throughput) -> Option<f64>| {
                move |m: &Measurement| match m {
                    Measurement::Throughput(t) => f(t),
                    _ => None,
                }
            };
            let cpu: Vec<f64> = ms.iter().filter_map(|m| tp(|t| t.cpu_s)(m)).collect();
            Summary::Throughput {
                lines: t.lines,
                bytes_per_line,
                loop_s: med(&tp(|t| Some(t.loop_s))),
                total_s: med(&tp(|t| Some(t.total_s))),
                bytes,
                cpu_s: (!cpu.is_empty()).then(|| median_f64(&cpu)),
            }
        }
        Some(Measurement::Backend(b)) => {
            let bk = |f: fn(&BackendRun) -> f64| {
                move |m: &Measurement| match m {
                    Measurement::Backend(b) => Some(f(b)),
                    _ => None,
                }
            };
            Summary::Backend {
                records: b.records,
                bytes_per_line,
                bytes,
                fill_s: med(&bk(|b| b.fill_s)),
                drain_s: med(&bk(|b| b.drain_s)),
                backend_cpu_s: median_of_some(&ms, |b| b.backend_cpu_s),
                writer_cpu_s: median_of_some(&ms, |b| b.writer_cpu_s),
            }
        }
        Some(Measurement::Latency(_)) => {
            let lat: Vec<&Latency> = ms
                .iter()
                .filter_map(|m| match m {
                    Measurement::Latency(l) => Some(l),
                    _ => None,
                })
                .collect();
            Summary::Latency {
                call: Percentiles::combine(&lat.iter().map(|l| l.call_ns).collect::<Vec<_>>()),
                overhead: Percentiles::combine(
                    &lat.iter().map(|l| l.overhead_ns).collect::<Vec<_>>(),
                ),
            }
        }
        Some(Measurement::Server(_)) => {
            let sv = |f: fn(&ServerRun) -> f64| {
                move |m: &Measurement| match m {
                    Measurement::Server(s) => Some(f(s)),
                    _ => None,
                }
            };
            let cpu: Vec<f64> = ms
                .iter()
                .filter_map(|m| match m {
                    Measurement::Server(s) => s.server_cpu_us_per_request(),
                    _ => None,
                })
                .collect();
            Summary::Server {
                requests_per_s: med(&sv(|s| s.requests_per_s)),
                p99_us: med(&sv(|s| s.p99_us)),
                p50_us: med(&sv(|s| s.p50_us)),
                cpu_us_per_request: (!cpu.is_empty()).then(|| median_f64(&cpu)),
            }
        }
        Some(Measurement::Idle(_)) => Summary::Idle {
            cpu_share: med(&|m| match m {
                Measurement::Idle(i) => Some(i.cpu_s / i.wall_s.max(1e-9)),
                _ => None,
            }),
        },
        Some(Measurement::Paced(_)) => {
            load::paced_summary(&ms, first_v).map_or(Summary::Failed, Summary::Paced)
        }
        Some(Measurement::Threads(_)) => {
            load::threads_summary(&ms, first_v).map_or(Summary::Failed, Summary::Threads)
        }
        None => Summary::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn lat_run(logger: &str, run: u32, p50: u64, max: u64) -> RunRecord {
        let p = Percentiles {
            p50,
            p90: p50 + 1,
            p99: p50 + 2,
            p999: p50 * 10,
            p9999: p50 * 20,
            max,
        };
        RunRecord {
            logger: logger.into(),
            workload: "latency".into(),
            run,
            result: Some(ChildResult {
                logger: logger.into(),
                workload: "latency".into(),
                lines_logged: 10,
                measurement: Measurement::Latency(Latency {
                    calls: 8,
                    warmup: 2,
                    gap_ns: 2000,
                    ticks_per_ns: 2.0,
                    clock_step_ns: 0.5,
                    call_ns: p,
                    mean_ns: p50 as f64,
                    overhead_ns: Percentiles::default(),
                    finish_s: 0.0,
                    curve: Vec::new(),
                }),
            }),
            verification: None,
            failure: None,
            peak_rss_kib: None,
        }
    }

    pub(super) fn report(runs: Vec<RunRecord>) -> Report {
        Report {
            machine: Machine::detect(),
            date: "2026-01-01 00:00:00 UTC".into(),
            command: "tachylog-bench".into(),
            load_before: None,
            others_cpu_share: None,
            via_cargo: false,
            rustc: "rustc 1.0".into(),
            scale: "full".into(),
            runs_per_pair: 3,
            debug_build: false,
            workloads: vec![],
            loggers: vec![],
            runs,
            not_run: vec![],
            suite_s: 0.0,
            targets: false,
            baseline_commit: None,
        }
    }

    /// Three tachylog latency runs (p50 40, 20, 30; max 900, 100, 100) and one peer run.
    pub(super) fn three_runs_and_a_peer() -> Report {
        report(vec![
            lat_run("tachylog", 1, 40, 900),
            lat_run("tachylog", 2, 20, 100),
            lat_run("tachylog", 3, 30, 100),
            lat_run("peer", 1, 300, 50_000),
        ])
    }

    #[test]
    fn rows_take_the_median_run_and_the_worst_max() {
        let r = three_runs_and_a_peer();
        let rows = r.rows();
        assert_eq!(rows.len(), 2);
        match &rows[0].summary {
            Summary::Latency { call, .. } => assert_eq!((call.p50, call.max), (30, 900)),
            other => panic!("expected latency, got {other:?}"),
        }
    }

    #[test]
    fn one_failed_run_fails_the_row() {
        let mut bad = lat_run("peer", 2, 300, 50_000);
        bad.failure = Some("lines missing".into());
        let r = report(vec![lat_run("peer", 1, 300, 50_000), bad]);
        assert_eq!(r.rows()[0].summary, Summary::Failed);
        assert_eq!(r.failures().len(), 1);
    }

    #[test]
    fn verification_requires_every_line_whole() {
        let v = Verification {
            expected: 10,
            files: 1,
            bytes: 200,
            lines: 11,
            marked_lines: 10,
            trailing_bytes: 0,
            probe: "request 1 took 0.014 ms: /x".into(),
            probe_expected: 2,
            probe_found: 2,
        };
        assert!(v.ok());
        assert!(!Verification {
            probe_found: 0,
            ..v.clone()
        }
        .ok());
        assert!(!Verification {
            marked_lines: 9,
            ..v.clone()
        }
        .ok());
        assert!(!Verification {
            trailing_bytes: 3,
            ..v
        }
        .ok());
    }
}
