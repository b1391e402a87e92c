//! The workloads: what each child process does with the logger it installed.
//!
//! Every workload is generic over [`BenchLogger`] and identical for every logger. Each one
//! knows how many lines it writes and a text that every one of those lines contains, so the
//! parent can count them on disk afterwards.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::BenchError;
use crate::loggers::{BenchLogger, Tachylog, SPDLOG_LIKE_PATTERN};
use crate::report::Measurement;
use crate::verify::Expected;

pub mod backend;
mod cat;
mod floor;
mod idle;
mod latency;
mod limlog;
pub mod mix;
mod paced;
mod seed;
pub mod server;
mod threads;

pub use backend::LineFormat;

/// Run size: `quick` is the default suite, `full` runs everything, more calls, 3 times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// A few minutes for the whole suite: a subset of the workloads, one run each.
    Quick,
    /// Every workload at its full size, three runs of everything.
    Full,
    /// Tiny counts, for the harness's own tests (`--smoke`): checks plumbing, measures
    /// nothing worth reading.
    Smoke,
}

impl Scale {
    /// Command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Full => "full",
            Scale::Smoke => "smoke",
        }
    }

    /// Parses the command-line spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "quick" => Some(Scale::Quick),
            "full" => Some(Scale::Full),
            "smoke" => Some(Scale::Smoke),
            _ => None,
        }
    }

    /// Separate processes per (logger, workload); the table shows the median run.
    pub fn runs(self) -> u32 {
        match self {
            Scale::Quick | Scale::Smoke => 1,
            Scale::Full => 3,
        }
    }

    /// `n` records at this scale: a thousandth of them (at least 10) in the smoke test.
    pub fn count(self, n: u64) -> u64 {
        match self {
            Scale::Smoke => (n / 1_000).max(10),
            Scale::Quick | Scale::Full => n,
        }
    }
}

/// The log call a workload makes: one method of [`BenchLogger`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `info!("Hello World!")`.
    HelloWorld,
    /// `info!("{}", "1 logged")`.
    OneLogged,
    /// `info!("request {} took {:.3} ms: {}", u64, f64, &str)`.
    Request,
    /// `info!("static message with no arguments")`.
    Static,
    /// `info!("payload {}", s)` with a 100-byte `s`.
    Payload,
    /// `info!("items {:?}", v)` with a `Vec<String>`.
    Items,
    /// `info!("Iteration: {} int: {} double: {}", u64, i64, f64)`.
    Iteration,
    /// `info!("Logging iteration: {}, message: {}, double: {}", u64, u64, f64)`: Quill's
    /// latency harness's record.
    Quill,
    /// limlog's mix of bool, char, ints, f64 and a string.
    Mixed,
    /// The server's access-log record.
    Access,
    /// `info!("GET /index.html {} {} bytes in {:.3} ms", u16, u64, f64)`: the paced
    /// workloads' access-log-like record.
    Response,
    /// `info!(user_id = u64, latency_ms = f64, path = &str; "request served")`: structured
    /// fields, for the loggers that have them.
    Fields,
    /// `info!("ints: {} {} {}", u64, i64, u32)` (`backend_*` only).
    Ints,
    /// `info!("float: {}", f64)`, a float with 16 significant digits (`backend_*` only).
    Float,
    /// `info!("connected to {}", peer)`, `peer` a type with only `Display`: tachylog's
    /// caller-side fallback (`backend_*` only).
    Display,
}

/// Runs of the headline `latency` workload in the quick suite (see [`Workload::runs`]).
pub const HEADLINE_RUNS: u32 = 3;

/// The sizes of the limlog matrix's string argument: records of ~80 B, ~1 KiB and ~4 KiB.
pub const LIMLOG_SIZES: [usize; 3] = [16, 1_000, 4_000];

/// A workload, as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// 1,000,000 × `info!("Hello World!")`, one thread, timed until the logger's shutdown.
    Seed1m,
    /// 2 threads × 100,000 × `info!("{}", "1 logged")` to one file.
    Seed2x100k,
    /// Per-call latency of one shape, each call timed alone.
    Latency(Shape),
    /// Quill's harness: batches of 20 calls of its record timed together, 2.0-2.2 ms apart,
    /// from N pinned threads.
    Batch(u8),
    /// Records/s of `Iteration: ..` from one thread until the logger's shutdown returns.
    Throughput,
    /// `Throughput` with tachylog's line cut to the content of spdlog-rs's default line
    /// (tachylog only).
    ThroughputLikeSpdlog,
    /// `Throughput` into a binary log (`Format::Binary`) instead of text lines (tachylog
    /// only).
    ThroughputBinary,
    /// `scaling_t2` into a binary log: 2 threads × 1M `Iteration` records (tachylog only).
    ScalingBinary,
    /// A mix of call sites (`mix.rs`: a web back end's four, or records of a user's own types)
    /// from one thread until the logger's shutdown returns, into text lines (`false`) or a
    /// binary log (`true`) (tachylog only).
    ThroughputMix(mix::Mix, bool),
    /// `CatBinary` on the binary log of `ThroughputMix(Mix::Web, true)` (tachylog only).
    CatMix,
    /// How fast `tachylog cat` turns the binary log of `throughput_binary` back into the text
    /// lines of the default pattern: written first, untimed, then read and rendered, timed
    /// (tachylog only).
    CatBinary,
    /// The floor under `throughput` (`false`) or `throughput_like_spdlog` (`true`): tachylog's
    /// very lines, already formatted, written by one thread in its file sink's batches.
    Floor(bool),
    /// 1, 2, 4 or 8 threads × 1M `Iteration` records to one file.
    Scaling(u8),
    /// The back end alone: records of one shape queued while it is held, then the drain to
    /// disk timed, in one line format (tachylog only).
    Backend(Shape, LineFormat),
    /// The limlog matrix: index into [`LIMLOG_SIZES`] × threads, 100,000 records each.
    Limlog(u8, u8),
    /// The HTTP server under load: keep-alive (`true`) or connection-per-request.
    Server(bool),
    /// CPU used by the idle logger over 5 s.
    IdleCpu,
    /// This many records/s in a burst every millisecond: CPU and context switches against
    /// `nolog`'s.
    Paced(u32),
    /// This many threads alive at once, each logging 100 records: peak RSS against `nolog`'s.
    Threads(u32),
}

impl Workload {
    /// Every workload, in table order.
    pub fn all() -> Vec<Workload> {
        let mut all = vec![
            Workload::Seed1m,
            Workload::Seed2x100k,
            Workload::Latency(Shape::Request),
            Workload::Latency(Shape::Static),
            Workload::Latency(Shape::Payload),
            Workload::Latency(Shape::Items),
            Workload::Latency(Shape::Fields),
            Workload::Batch(1),
            Workload::Batch(4),
            Workload::Throughput,
            Workload::ThroughputLikeSpdlog,
            Workload::ThroughputBinary,
            Workload::Floor(false),
            Workload::Floor(true),
            Workload::Scaling(1),
            Workload::Scaling(2),
            Workload::Scaling(4),
            Workload::Scaling(8),
            Workload::ScalingBinary,
            Workload::CatBinary,
            Workload::ThroughputMix(mix::Mix::Web, false),
            Workload::ThroughputMix(mix::Mix::Web, true),
            Workload::CatMix,
            Workload::ThroughputMix(mix::Mix::UserTypes, false),
            Workload::ThroughputMix(mix::Mix::UserTypes, true),
        ];
        for format in LineFormat::ALL {
            all.extend(backend::SHAPES.map(|s| Workload::Backend(s, format)));
        }
        all.extend(LineFormat::SCOPED.map(|f| Workload::Backend(Shape::Iteration, f)));
        all.extend([
            Workload::Limlog(0, 1),
            Workload::Limlog(0, 2),
            Workload::Limlog(0, 4),
            Workload::Limlog(1, 1),
            Workload::Limlog(1, 2),
            Workload::Limlog(1, 4),
            Workload::Limlog(2, 1),
            Workload::Limlog(2, 2),
            Workload::Limlog(2, 4),
            Workload::Server(true),
            Workload::Server(false),
        ]);
        all.extend(paced::RATES.map(Workload::Paced));
        all.extend(threads::COUNTS.map(Workload::Threads));
        all.push(Workload::IdleCpu);
        all
    }

    /// Whether the quick (default) suite runs it. Of the scaling series only 2 threads runs
    /// there (the smallest count where producers contend), the whole series being 15M records
    /// per logger, minutes; of the back-end-alone matrix, every shape in text and the
    /// `Iteration` shape in JSON and logfmt. `paced_*` and `threads_*` run whole: together a
    /// little over two minutes.
    pub fn in_quick(self) -> bool {
        matches!(
            self,
            Workload::Seed1m
                | Workload::Seed2x100k
                | Workload::Latency(_)
                | Workload::Throughput
                | Workload::ThroughputLikeSpdlog
                | Workload::ThroughputBinary
                | Workload::ScalingBinary
                | Workload::CatBinary
                | Workload::ThroughputMix(..)
                | Workload::CatMix
                | Workload::Floor(_)
                | Workload::Scaling(2)
                | Workload::Backend(_, LineFormat::Text)
                | Workload::Backend(Shape::Iteration, _)
                | Workload::Server(true)
                | Workload::Paced(_)
                | Workload::Threads(_)
        )
    }

    /// Whether `logger` takes part: the server runs four configurations only, the variants
    /// of tachylog's own configuration (`throughput_like_spdlog`, `floor*`, `backend_*`) run
    /// tachylog only, and `nolog` runs only where its figures are subtracted (the server,
    /// `paced_*`, `threads_*`).
    pub fn runs_logger(self, logger: &str) -> bool {
        // A record in a request scope, beside the plain one: the caller's cost only.
        if logger == "tachylog_scoped" {
            return self == Workload::Latency(Shape::Request);
        }
        match self {
            Workload::Server(_) => {
                matches!(
                    logger,
                    "nolog" | "tachylog" | "tracing_appender" | "mutex_file"
                )
            }
            Workload::ThroughputLikeSpdlog
            | Workload::ThroughputBinary
            | Workload::ScalingBinary
            | Workload::CatBinary
            | Workload::ThroughputMix(..)
            | Workload::CatMix
            | Workload::Floor(_)
            | Workload::Backend(..) => logger == "tachylog",
            // What sending to a collector costs, plain and durable, beside the row without.
            _ if logger.starts_with("tachylog_otlp") => {
                matches!(
                    self,
                    Workload::Latency(Shape::Request) | Workload::Throughput
                )
            }
            Workload::Paced(_) | Workload::Threads(_) => {
                logger != "tachylog_spool" && logger != "tachylog_spin"
            }
            // The spool's and the spinning back end's cost to the caller and to the whole run,
            // beside the rows without them.
            Workload::Latency(Shape::Request) | Workload::Throughput | Workload::Scaling(2) => {
                logger != "nolog"
            }
            Workload::Batch(_) => logger != "nolog" && logger != "tachylog_spool",
            _ => logger != "nolog" && logger != "tachylog_spool" && logger != "tachylog_spin",
        }
    }

    /// Command-line and table name.
    pub fn name(self) -> String {
        match self {
            Workload::Seed1m => "seed_1m".into(),
            Workload::Seed2x100k => "seed_2x100k".into(),
            Workload::Latency(Shape::Request) => "latency".into(),
            Workload::Latency(Shape::Static) => "latency_static".into(),
            Workload::Latency(Shape::Payload) => "latency_str100".into(),
            Workload::Latency(Shape::Items) => "latency_vec".into(),
            Workload::Latency(s) => format!("latency_{s:?}").to_lowercase(),
            Workload::Batch(t) => format!("batch20_t{t}"),
            Workload::Throughput => "throughput".into(),
            Workload::ThroughputLikeSpdlog => "throughput_like_spdlog".into(),
            Workload::ThroughputBinary => "throughput_binary".into(),
            Workload::ScalingBinary => "scaling_t2_binary".into(),
            Workload::CatBinary => "cat_binary".into(),
            Workload::ThroughputMix(mix, binary) => {
                format!("{}{}", mix.name(), if binary { "_binary" } else { "" })
            }
            Workload::CatMix => "cat_mix_binary".into(),
            Workload::Floor(false) => "floor".into(),
            Workload::Floor(true) => "floor_like_spdlog".into(),
            Workload::Scaling(t) => format!("scaling_t{t}"),
            Workload::Backend(s, f) => backend::name(s, f),
            Workload::Limlog(s, t) => {
                let size = match s {
                    0 => "80b",
                    1 => "1kb",
                    _ => "4kb",
                };
                format!("limlog_{size}_t{t}")
            }
            Workload::Server(true) => "server_keepalive".into(),
            Workload::Server(false) => "server_close".into(),
            Workload::IdleCpu => "idle_cpu".into(),
            Workload::Paced(rate) => format!("paced_{}k", rate / 1_000),
            Workload::Threads(n) => format!("threads_{n}"),
        }
    }

    /// Looks a workload up by name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::all().into_iter().find(|w| w.name() == s)
    }

    /// The log call it makes.
    pub fn shape(self) -> Shape {
        match self {
            Workload::Seed1m | Workload::IdleCpu => Shape::HelloWorld,
            Workload::Seed2x100k => Shape::OneLogged,
            Workload::Latency(s) => s,
            Workload::Batch(_) => Shape::Quill,
            Workload::Throughput
            | Workload::ThroughputLikeSpdlog
            | Workload::ThroughputBinary
            | Workload::ScalingBinary
            | Workload::CatBinary
            | Workload::Floor(_)
            | Workload::Scaling(_) => Shape::Iteration,
            Workload::Backend(s, _) => s,
            Workload::Limlog(..) => Shape::Mixed,
            Workload::Server(_) => Shape::Access,
            Workload::Paced(_) => Shape::Response,
            // Every message of the mix holds the request shape's marker.
            Workload::Threads(_) | Workload::ThroughputMix(..) | Workload::CatMix => Shape::Request,
        }
    }

    /// Text that every line this workload logs contains, whatever the logger's format.
    pub fn marker(self) -> &'static str {
        match self.shape() {
            Shape::HelloWorld => "Hello World!",
            Shape::OneLogged => "1 logged",
            Shape::Request => "request ",
            Shape::Static => "static message with no arguments",
            Shape::Payload => "payload ",
            Shape::Items => "items [",
            Shape::Iteration => "Iteration: ",
            Shape::Quill => "Logging iteration: ",
            Shape::Mixed => "limlog b=",
            Shape::Access => "access 127.0.0.1",
            Shape::Response => "GET /index.html ",
            Shape::Fields => "request served",
            Shape::Ints => "ints: ",
            Shape::Float => "float: ",
            Shape::Display => "connected to peer<",
        }
    }

    /// What this workload must leave on disk at `scale`. The server's count is known only
    /// after the run: `served` is the number of requests the child's server answered.
    pub fn expected(self, scale: Scale, served: u64) -> Expected {
        let lines = match self {
            Workload::Server(_) => served,
            _ => self.expected_lines(scale),
        };
        let (probe, probe_count) = match self {
            // Call 1 of the warm-up and call 1 of the timed loop carry the same arguments.
            Workload::Latency(Shape::Request) => {
                let (id, ms, path) = latency::request_args(1);
                (format!("request {id} took {ms:.3} ms: {path}"), 2)
            }
            Workload::Latency(Shape::Items) => (format!("items {:?}", latency::items()), lines),
            Workload::Throughput
            | Workload::ThroughputLikeSpdlog
            | Workload::ThroughputBinary
            | Workload::CatBinary
            | Workload::Floor(_) => (seed::iteration_probe(), 1),
            Workload::Scaling(t) => (seed::iteration_probe(), u64::from(t)),
            Workload::ScalingBinary => (seed::iteration_probe(), 2),
            Workload::ThroughputMix(m, _) => (mix::probe(m), 1),
            Workload::CatMix => (mix::probe(mix::Mix::Web), 1),
            Workload::Backend(s, f) => backend::probe(s, f, lines),
            Workload::Limlog(s, threads) => (
                limlog::probe(LIMLOG_SIZES[s as usize]),
                u64::from(threads) * scale.count(limlog::RECORDS),
            ),
            Workload::Paced(_) => paced::probe(lines),
            // Every thread's first record.
            Workload::Threads(n) => {
                let (id, ms, path) = latency::request_args(1);
                (
                    format!("request {id} took {ms:.3} ms: {path}"),
                    u64::from(threads::threads(n, scale)),
                )
            }
            _ => (self.marker().to_string(), lines),
        };
        Expected {
            marker: self.marker(),
            lines,
            probe,
            probe_count,
        }
    }

    /// Lines this workload logs at `scale` (warm-up included); 0 for the server, whose
    /// count depends on how many requests it served.
    pub fn expected_lines(self, scale: Scale) -> u64 {
        match self {
            Workload::Seed1m => scale.count(seed::SEED_LINES),
            Workload::Seed2x100k => 2 * scale.count(seed::TWO_THREAD_LINES),
            Workload::Latency(_) => {
                let p = latency::Params::for_scale(scale);
                p.warmup + p.calls
            }
            Workload::Batch(t) => u64::from(t) * latency::Batch::for_scale(scale).lines(t),
            Workload::Throughput
            | Workload::ThroughputLikeSpdlog
            | Workload::ThroughputBinary
            | Workload::CatBinary
            | Workload::ThroughputMix(..)
            | Workload::CatMix
            | Workload::Floor(_) => seed::throughput_lines(scale),
            Workload::Scaling(t) => u64::from(t) * scale.count(seed::SCALING_LINES),
            Workload::ScalingBinary => 2 * scale.count(seed::SCALING_LINES),
            Workload::Backend(_, format) => backend::lines(format, scale),
            Workload::Limlog(_, t) => u64::from(t) * scale.count(limlog::RECORDS),
            Workload::Server(_) => 0,
            Workload::IdleCpu => 1,
            Workload::Paced(rate) => paced::records(rate, scale),
            Workload::Threads(n) => {
                u64::from(threads::threads(n, scale)) * threads::records_per_thread(scale)
            }
        }
    }

    /// How many runs of this workload a suite makes whose other workloads run `runs` times:
    /// the headline `latency` at least [`HEADLINE_RUNS`] times in the quick suite, so that its
    /// tail is ranked by the spread of several interleaved runs rather than by the wide bar a
    /// single run must clear (`report::noise`).
    pub fn runs(self, scale: Scale, runs: u32) -> u32 {
        match (self, scale) {
            (Workload::Latency(Shape::Request), Scale::Quick) => runs.max(HEADLINE_RUNS),
            _ => runs,
        }
    }

    /// The scale this workload runs at in a suite of `scale`: the headline `latency` at full
    /// scale (10^6 calls) in the quick suite too, so that its p99.9 and p99.99, the figures a
    /// tail is judged by, rest on the worst 1,000 and 100 calls rather than 200 and 20. A
    /// child is told its scale, so a baseline commit's binary runs the same calls.
    pub fn scale_in(self, scale: Scale) -> Scale {
        match (self, scale) {
            (Workload::Latency(Shape::Request), Scale::Quick) => Scale::Full,
            _ => scale,
        }
    }

    /// What the workload does, for `--list` and the report header.
    pub fn describe(self, scale: Scale) -> String {
        let call = |shape: &str| latency::Params::for_scale(scale).describe(shape);
        match self {
            Workload::Seed1m => seed::describe_seed(),
            Workload::Seed2x100k => seed::describe_two_threads(),
            Workload::Latency(Shape::Request) => {
                call(r#"latency: info!("request {} took {:.3} ms: {}", u64, f64, &str)"#)
            }
            Workload::Latency(Shape::Static) => {
                call(r#"latency_static: info!("static message with no arguments")"#)
            }
            Workload::Latency(Shape::Payload) => {
                call(r#"latency_str100: info!("payload {}", s), s a 100-byte &str"#)
            }
            Workload::Latency(Shape::Fields) => call(
                r#"latency_fields: info!(user_id = u64, latency_ms = f64, path = &str; "request served")"#,
            ),
            Workload::Latency(_) => {
                call(r#"latency_vec: info!("items {:?}", v), v a Vec<String> of 4 short strings"#)
            }
            Workload::Batch(t) => latency::Batch::for_scale(scale).describe(&self.name(), t),
            Workload::Throughput => seed::describe_throughput(scale),
            Workload::ThroughputLikeSpdlog => seed::describe_throughput_like_spdlog(scale),
            Workload::ThroughputBinary => seed::describe_throughput_binary(scale),
            Workload::ScalingBinary => seed::describe_scaling_binary(),
            Workload::CatBinary => cat::describe(scale),
            Workload::ThroughputMix(..) | Workload::CatMix => mix::describe(&self.name(), scale),
            Workload::Floor(like) => floor::describe(&self.name(), like, scale),
            Workload::Scaling(t) => seed::describe_scaling(t),
            Workload::Backend(s, f) => backend::describe(&self.name(), s, f, scale),
            Workload::Limlog(s, t) => limlog::describe(&self.name(), LIMLOG_SIZES[s as usize], t),
            Workload::Server(keep_alive) => {
                server::Params::for_scale(scale).describe(&self.name(), keep_alive)
            }
            Workload::IdleCpu => idle::describe(),
            Workload::Paced(rate) => paced::describe(&self.name(), rate, scale),
            Workload::Threads(n) => threads::describe(&self.name(), n, scale),
        }
    }
}

/// Installs `L` writing to `file`, runs `workload`, shuts `L` down; runs in a child process.
pub fn run<L: BenchLogger>(
    workload: Workload,
    scale: Scale,
    file: &Path,
) -> Result<Measurement, BenchError> {
    if !workload.runs_logger(L::NAME) {
        return Err(BenchError::Usage(format!(
            "{} does not run {}",
            L::NAME,
            workload.name()
        )));
    }
    let lat = latency::Params::for_scale(scale);
    match workload {
        Workload::Seed1m => seed::run::<L>(file, 1, scale.count(seed::SEED_LINES), |l, _| {
            l.hello_world()
        })
        .map(Measurement::Throughput),
        Workload::Seed2x100k => {
            seed::run::<L>(file, 2, scale.count(seed::TWO_THREAD_LINES), |l, _| {
                l.one_logged()
            })
            .map(Measurement::Throughput)
        }
        Workload::Throughput => {
            seed::run::<L>(file, 1, seed::throughput_lines(scale), seed::iterate)
                .map(Measurement::Throughput)
        }
        Workload::ThroughputLikeSpdlog => {
            let logger = Tachylog::with_pattern(file, SPDLOG_LIKE_PATTERN)?;
            seed::run_with(logger, 1, seed::throughput_lines(scale), seed::iterate)
                .map(Measurement::Throughput)
        }
        Workload::ThroughputBinary => {
            let logger = Tachylog::binary(file)?;
            seed::run_with(logger, 1, seed::throughput_lines(scale), seed::iterate)
                .map(Measurement::Throughput)
        }
        Workload::ScalingBinary => {
            let logger = Tachylog::binary(file)?;
            seed::run_with(logger, 2, scale.count(seed::SCALING_LINES), seed::iterate)
                .map(Measurement::Throughput)
        }
        Workload::CatBinary => {
            let logger = Tachylog::binary(file)?;
            seed::run_with(logger, 1, seed::throughput_lines(scale), seed::iterate)?;
            cat::run(file).map(Measurement::Throughput)
        }
        Workload::ThroughputMix(m, binary) => {
            let logger = if binary {
                Tachylog::binary(file)?
            } else {
                Tachylog::init(file)?
            };
            let log = match m {
                mix::Mix::Web => mix::log,
                mix::Mix::UserTypes => mix::log_user_types,
            };
            seed::run_with(logger, 1, seed::throughput_lines(scale), |_, i| log(i))
                .map(Measurement::Throughput)
        }
        Workload::CatMix => {
            let logger = Tachylog::binary(file)?;
            seed::run_with(logger, 1, seed::throughput_lines(scale), |_, i| mix::log(i))?;
            cat::run(file).map(Measurement::Throughput)
        }
        Workload::Floor(like) => floor::run(file, like, scale).map(Measurement::Throughput),
        Workload::Scaling(t) => {
            seed::run::<L>(file, t, scale.count(seed::SCALING_LINES), seed::iterate)
                .map(Measurement::Throughput)
        }
        Workload::Backend(s, f) => backend::run(file, s, f, scale).map(Measurement::Backend),
        Workload::Latency(Shape::Request) => {
            latency::run(file, lat, latency::request_args, |l: &L, (id, ms, path)| {
                l.request(id, ms, path)
            })
            .map(Measurement::Latency)
        }
        Workload::Latency(Shape::Static) => {
            latency::run(file, lat, |_| (), |l: &L, ()| l.static_message())
                .map(Measurement::Latency)
        }
        Workload::Latency(Shape::Payload) => {
            latency::run(file, lat, |_| latency::PAYLOAD, |l: &L, s| l.payload(s))
                .map(Measurement::Latency)
        }
        Workload::Latency(Shape::Fields) => {
            latency::run(file, lat, latency::request_args, |l: &L, (id, ms, path)| {
                l.fields(id, ms, path)
            })
            .map(Measurement::Latency)
        }
        Workload::Latency(_) => {
            let items = latency::items();
            latency::run(file, lat, |_| &items, |l: &L, v| l.items(v)).map(Measurement::Latency)
        }
        Workload::Batch(threads) => {
            latency::run_batches::<L>(file, latency::Batch::for_scale(scale), threads)
                .map(Measurement::Latency)
        }
        Workload::Limlog(s, t) => {
            let records = scale.count(limlog::RECORDS);
            limlog::run::<L>(file, LIMLOG_SIZES[s as usize], t, records)
                .map(Measurement::Throughput)
        }
        Workload::Server(keep_alive) => {
            server::run::<L>(file, server::Params::for_scale(scale), keep_alive)
                .map(Measurement::Server)
        }
        Workload::IdleCpu => idle::run::<L>(file, scale).map(Measurement::Idle),
        Workload::Paced(rate) => paced::run::<L>(file, rate, scale).map(Measurement::Paced),
        Workload::Threads(n) => threads::run::<L>(file, n, scale).map(Measurement::Threads),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_probe_is_call_one_rendered_by_std() {
        let e = Workload::Latency(Shape::Request).expected(Scale::Quick, 0);
        assert_eq!(e.probe, "request 1000001 took 0.014 ms: /api/v1/users/42");
        assert_eq!(e.probe_count, 2);
        assert_eq!(e.lines, 210_000);
        let headline = Workload::Latency(Shape::Request);
        assert_eq!(headline.scale_in(Scale::Quick), Scale::Full);
        assert_eq!(headline.scale_in(Scale::Smoke), Scale::Smoke);
        assert_eq!(
            Workload::Latency(Shape::Static).scale_in(Scale::Quick),
            Scale::Quick
        );
        assert_eq!(Workload::Latency(Shape::Request).runs(Scale::Quick, 1), 3);
        assert_eq!(Workload::Latency(Shape::Request).runs(Scale::Full, 5), 5);
        assert_eq!(Workload::Latency(Shape::Static).runs(Scale::Quick, 1), 1);
        assert!(e.probe.contains(e.marker));
        let s = Workload::Seed1m.expected(Scale::Full, 0);
        assert_eq!((s.lines, s.probe_count), (1_000_000, 1_000_000));
    }

    #[test]
    fn paced_and_threads_expect_every_record_and_a_probe_per_thousand_or_thread() {
        let p = Workload::parse("paced_10k")
            .unwrap()
            .expected(Scale::Quick, 0);
        assert_eq!((p.lines, p.probe_count), (30_000, 30));
        assert!(p.probe.contains(p.marker));
        let t = Workload::parse("threads_2000")
            .unwrap()
            .expected(Scale::Quick, 0);
        assert_eq!((t.lines, t.probe_count), (200_000, 2_000));
        let smoke = Workload::Threads(2_000).expected(Scale::Smoke, 0);
        assert_eq!((smoke.lines, smoke.probe_count), (200, 20));
        assert!(Workload::Paced(1_000).runs_logger("nolog"));
        assert!(Workload::Paced(1_000).in_quick() && Workload::Threads(100).in_quick());
    }

    #[test]
    fn names_are_unique_and_parse_back() {
        for w in Workload::all() {
            assert_eq!(Workload::parse(&w.name()), Some(w), "{}", w.name());
        }
    }
}
