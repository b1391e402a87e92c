//! `backend_*`: tachylog's back end alone, with no producer competing for the cores.
//!
//! The child installs tachylog with one file sink in the run's line format and a ring big
//! enough for every record (`OnFull` left at its default, `Block`). It logs one warm-up record
//! (which allocates this thread's ring and touches its pages) and flushes it, then holds the
//! back end (`tachylog::__private::hold_backend(true)`, a `#[doc(hidden)]` hook that exists
//! for this workload), queues N records of one shape, and times from the release until
//! `tachylog::flush()` returns: the drain of N records, formatted and written to the file.
//! ns/record = that time / N. The time to queue them (the caller's cost with nobody draining)
//! is reported beside it.
//!
//! Beside the drain, the CPU time that tachylog's back end thread and the file's writing
//! thread ran during it (`/proc/self/task/*/schedstat`): the first is the formatting alone,
//! the second mostly the kernel copying the lines into the page cache. The drain can take
//! longer than the formatting when the writing thread lags, as on this VM when the host has
//! taken back the free pages that the page cache is then given (free page reporting): each
//! such page costs a host page fault on first touch.
//!
//! Had the ring been too small, the producer would block while held: a watchdog then releases
//! the back end and the run fails saying so, rather than hanging or measuring something else.
//! The file's size is checked before the release: a back end that wrote while held fails
//! the run too.

use std::fmt;
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use tachylog::__private::hold_backend;

use super::{latency, Scale, Shape};
use crate::error::BenchError;
use crate::report::{group_digits, BackendRun};

/// Records queued while held: 1M (a thousandth, at least 10, in smoke).
pub const RECORDS: u64 = 1_000_000;

/// Records per request scope in `backend_*_scope_*`: the 20 DEBUG records of a request.
const SCOPE_RECORDS: u64 = 20;

/// Ring bytes reserved per record: above any shape's frame here (8-byte header, 8-byte
/// timestamp, 8-byte call site and decode pointers, then the arguments: 24 B for `Iteration`,
/// ~110 B for the 100-byte string, 8-aligned), so 1M records fit in a 256 MiB ring.
const RING_BYTES_PER_RECORD: u64 = 256;

/// How long queueing may take before the watchdog decides the producer is blocked on a full
/// ring (it takes well under a second when the ring is big enough).
const FILL_LIMIT: Duration = Duration::from_secs(30);

/// The shapes of the matrix, in table order.
pub const SHAPES: [Shape; 7] = [
    Shape::Static,
    Shape::Ints,
    Shape::Float,
    Shape::Payload,
    Shape::Iteration,
    Shape::Display,
    Shape::Fields,
];

/// The sink's line format (`tachylog::Format`, which is `#[non_exhaustive]`, so not matched on
/// here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineFormat {
    /// The default pattern's text line.
    Text,
    /// JSON lines.
    Json,
    /// JSON lines shaped as a collector asks (`LineShape`: keys renamed, two static fields,
    /// the fields at the top level).
    JsonShaped,
    /// logfmt.
    Logfmt,
    /// The binary log, checked by reading it back as default-pattern text lines.
    Binary,
    /// The default pattern, the records logged 20 to a request scope that holds their level,
    /// each scope then written by `Scope::flush`: what a failing request's records cost.
    ScopeWritten,
    /// The same records held 20 to a scope that then ends quietly: discarded, counted, never
    /// formatted (what every request that does not fail costs the back end).
    ScopeDiscarded,
}

impl LineFormat {
    /// Every format, in table order.
    pub const ALL: [LineFormat; 5] = [
        LineFormat::Text,
        LineFormat::Json,
        LineFormat::JsonShaped,
        LineFormat::Logfmt,
        LineFormat::Binary,
    ];

    /// The request-scope variants, run with the `Iteration` shape only, beside its plain text
    /// row.
    pub const SCOPED: [LineFormat; 2] = [LineFormat::ScopeWritten, LineFormat::ScopeDiscarded];

    fn tachylog(self) -> tachylog::Format {
        match self {
            LineFormat::Text | LineFormat::ScopeWritten | LineFormat::ScopeDiscarded => {
                tachylog::Format::Text
            }
            LineFormat::Json | LineFormat::JsonShaped => tachylog::Format::Json,
            LineFormat::Logfmt => tachylog::Format::Logfmt,
            LineFormat::Binary => tachylog::Format::Binary,
        }
    }

    /// Name in the tables.
    pub fn label(self) -> &'static str {
        match self {
            LineFormat::Text => "default pattern",
            LineFormat::Json => "JSON",
            LineFormat::JsonShaped => "JSON, collector-shaped",
            LineFormat::Logfmt => "logfmt",
            LineFormat::Binary => "binary log",
            LineFormat::ScopeWritten => "default pattern, held in a request scope, then written",
            LineFormat::ScopeDiscarded => "held in a request scope, then discarded",
        }
    }
}

/// `backend_<shape>` (default pattern), `backend_<shape>_json`, `backend_<shape>_json_shaped`,
/// `backend_<shape>_logfmt`, `backend_<shape>_binary`.
pub fn name(shape: Shape, format: LineFormat) -> String {
    let shape = match shape {
        Shape::Payload => "str100".to_string(),
        other => format!("{other:?}").to_lowercase(),
    };
    match format {
        LineFormat::Text => format!("backend_{shape}"),
        LineFormat::Json => format!("backend_{shape}_json"),
        LineFormat::JsonShaped => format!("backend_{shape}_json_shaped"),
        LineFormat::Logfmt => format!("backend_{shape}_logfmt"),
        LineFormat::Binary => format!("backend_{shape}_binary"),
        LineFormat::ScopeWritten => format!("backend_{shape}_scope_written"),
        LineFormat::ScopeDiscarded => format!("backend_{shape}_scope_discarded"),
    }
}

/// Lines in the file after a run at `scale`: the warm-up record and the queued ones, or the
/// warm-up alone when they were discarded.
pub fn lines(format: LineFormat, scale: Scale) -> u64 {
    match format {
        LineFormat::ScopeDiscarded => 1,
        _ => records(scale) + 1,
    }
}

/// Records queued while held at `scale`.
pub fn records(scale: Scale) -> u64 {
    scale.count(RECORDS)
}

/// The ring's capacity at `scale`.
fn ring_bytes(scale: Scale) -> usize {
    ((records(scale) + 1) * RING_BYTES_PER_RECORD).next_power_of_two() as usize
}

/// A type with only `Display`: tachylog formats it on the calling thread (its fallback) and
/// queues the text, so the back end copies a string.
struct Peer(u64);

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "peer<{}>", self.0)
    }
}

/// The exact text record 1 leaves in a line of `format`, and how many lines contain it
/// (`lines` for the shapes whose arguments never vary).
pub fn probe(shape: Shape, format: LineFormat, lines: u64) -> (String, u64) {
    if format == LineFormat::ScopeDiscarded {
        // Only the warm-up record, logged outside the scope, is in the file.
        return ("Iteration: 0 int: 0 double: 0".into(), 1);
    }
    match shape {
        Shape::Static => ("static message with no arguments".into(), lines),
        Shape::Payload => (format!("payload {}", latency::PAYLOAD), lines),
        Shape::Ints => ("ints: 1 -1 7".into(), 1),
        Shape::Float => (format!("float: {}", 1.0 / 3.0), 1),
        Shape::Display => ("connected to peer<1>".into(), 1),
        Shape::Fields => {
            let (id, _, _) = latency::request_args(1);
            match format {
                LineFormat::Json | LineFormat::JsonShaped => (format!("\"user_id\":{id},"), 1),
                _ => (format!("user_id={id} "), 1),
            }
        }
        _ => (super::seed::iteration_probe(), 1),
    }
}

/// One line for the report header.
pub fn describe(name: &str, shape: Shape, format: LineFormat, scale: Scale) -> String {
    let call = match shape {
        Shape::Static => r#"info!("static message with no arguments")"#,
        Shape::Ints => r#"info!("ints: {} {} {}", u64, i64, u32)"#,
        Shape::Float => r#"info!("float: {}", f64), 16 significant digits"#,
        Shape::Payload => r#"info!("payload {}", s), s a 100-byte &str"#,
        Shape::Display => {
            r#"info!("connected to {}", peer), peer a Display-only type (the fallback)"#
        }
        Shape::Fields => r#"info!(user_id = u64, latency_ms = f64, path = &str; "request served")"#,
        _ => r#"info!("Iteration: {} int: {} double: {}", u64, i64, f64)"#,
    };
    format!(
        "{name}: the back end alone, {}: {} x {call} queued while the back end is held \
         (ring {} MiB), then release -> flush() returned timed; ns/record = drain / records",
        format.label(),
        group_digits(records(scale)),
        ring_bytes(scale) >> 20
    )
}

/// Releases the back end if queueing has not finished within [`FILL_LIMIT`].
struct Watchdog {
    done: mpsc::Sender<()>,
    fired: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Watchdog {
    fn start() -> Self {
        let (done, rx) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&fired);
        let thread = std::thread::spawn(move || {
            if rx.recv_timeout(FILL_LIMIT) == Err(mpsc::RecvTimeoutError::Timeout) {
                flag.store(true, Ordering::SeqCst);
                hold_backend(false);
            }
        });
        Watchdog {
            done,
            fired,
            thread,
        }
    }

    /// Whether it had to release the back end.
    fn stop(self) -> bool {
        let _ = self.done.send(());
        let _ = self.thread.join();
        self.fired.load(Ordering::SeqCst)
    }
}

fn file_len(file: &Path) -> Result<u64, BenchError> {
    std::fs::metadata(file)
        .map(|m| m.len())
        .map_err(|e| BenchError::io(file, e))
}

/// Runs one cell of the matrix in this (child) process.
pub fn run(
    file: &Path,
    shape: Shape,
    format: LineFormat,
    scale: Scale,
) -> Result<BackendRun, BenchError> {
    // Each shape's call is inlined into its own queueing loop, as in every other workload.
    match shape {
        Shape::Static => measure(file, format, scale, |_| {
            tachylog::info!("static message with no arguments")
        }),
        Shape::Ints => measure(file, format, scale, |i| {
            tachylog::info!("ints: {} {} {}", i, -(i as i64), (i as u32).wrapping_mul(7))
        }),
        Shape::Float => measure(file, format, scale, |i| {
            tachylog::info!("float: {}", i as f64 / 3.0)
        }),
        Shape::Payload => measure(file, format, scale, |_| {
            tachylog::info!("payload {}", latency::PAYLOAD)
        }),
        Shape::Display => measure(file, format, scale, |i| {
            tachylog::info!("connected to {}", Peer(i))
        }),
        Shape::Fields => measure(file, format, scale, |i| {
            let (id, ms, path) = latency::request_args(i);
            tachylog::info!(user_id = id, latency_ms = ms, path; "request served")
        }),
        _ => measure(file, format, scale, |i| {
            tachylog::info!(
                "Iteration: {} int: {} double: {}",
                i,
                i as i64 * 2,
                i as f64 / 2.0
            )
        }),
    }
}

/// Installs tachylog, logs record 0 (the warm-up) and flushes it, holds the back end, queues
/// records `1..=N` with `log`, releases and times the drain.
fn measure(
    file: &Path,
    format: LineFormat,
    scale: Scale,
    log: impl Fn(u64),
) -> Result<BackendRun, BenchError> {
    let fail = |message: String| BenchError::Logger {
        logger: "tachylog",
        message,
    };
    let n = records(scale);
    let ring = ring_bytes(scale);
    let mut options = tachylog::SinkOptions::new().format(format.tachylog());
    if format == LineFormat::JsonShaped {
        options = options.shape(
            tachylog::LineShape::new()
                .rename(tachylog::LineKey::Timestamp, "@timestamp")
                .rename(tachylog::LineKey::Level, "severity")
                .static_field("service", "bench")
                .static_field("env", "prod")
                .flatten_fields(true),
        );
    }
    let guard = tachylog::builder()
        .file_with(file, options)
        .ring_capacity(ring)
        .init()
        .map_err(|e| fail(e.to_string()))?;
    log(black_box(0));
    tachylog::flush();
    let warm_len = file_len(file)?;

    hold_backend(true);
    // The worker reads the hold once per round: let it finish the round it may be in.
    std::thread::sleep(Duration::from_millis(5));
    let watchdog = Watchdog::start();
    let t0 = Instant::now();
    if matches!(
        format,
        LineFormat::ScopeWritten | LineFormat::ScopeDiscarded
    ) {
        // A request's worth of records per scope, which holds the shapes' INFO records; each
        // scope is flushed (written) or ends quietly (discarded) behind its records.
        for first in (1..=n).step_by(SCOPE_RECORDS as usize) {
            let scope = tachylog::Scope::builder()
                .hold(tachylog::Level::Info)
                .begin();
            scope.in_scope(|| {
                for i in first..(first + SCOPE_RECORDS).min(n + 1) {
                    log(black_box(i));
                }
            });
            if format == LineFormat::ScopeWritten {
                scope.flush();
            }
        }
    } else {
        for i in 1..=n {
            log(black_box(i));
        }
    }
    let fill_s = t0.elapsed().as_secs_f64();
    let blocked = watchdog.stop();
    let wrote_while_held = file_len(file)? != warm_len;

    let cpu_before = (thread_cpu_s(BACKEND_THREAD), thread_cpu_s(WRITER_THREAD));
    let t1 = Instant::now();
    hold_backend(false);
    tachylog::flush();
    let drain_s = t1.elapsed().as_secs_f64();
    let backend_cpu_s = cpu_since(BACKEND_THREAD, cpu_before.0);
    let writer_cpu_s = cpu_since(WRITER_THREAD, cpu_before.1);
    drop(guard);

    if blocked {
        return Err(fail(format!(
            "queueing {n} records took over {} s with the back end held: the {} MiB ring \
             filled and the producer blocked (raise RING_BYTES_PER_RECORD)",
            FILL_LIMIT.as_secs(),
            ring >> 20
        )));
    }
    if wrote_while_held {
        return Err(fail(
            "the back end wrote while held: the drain was not measured alone".into(),
        ));
    }
    Ok(BackendRun {
        records: n,
        ring_bytes: ring as u64,
        fill_s,
        drain_s,
        backend_cpu_s,
        writer_cpu_s,
    })
}

/// The names tachylog gives its back end thread and a file's writing thread.
const BACKEND_THREAD: &str = "tachylog";
const WRITER_THREAD: &str = "tachylog-write";

/// CPU seconds this process's threads named `name` have run so far (the first field of
/// `/proc/self/task/<tid>/schedstat`, in nanoseconds); `None` if there is no such thread or
/// the file cannot be read.
fn thread_cpu_s(name: &str) -> Option<f64> {
    let mut total = None;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let path = task.path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("schedstat")).ok()?;
        let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
        total = Some(total.unwrap_or(0.0) + ns as f64 / 1e9);
    }
    total
}

/// CPU seconds `name`'s threads ran since `before` (a thread that did not exist then, such as
/// the writing thread, which starts with the first full batch, counts from zero).
fn cpu_since(name: &str, before: Option<f64>) -> Option<f64> {
    thread_cpu_s(name).map(|after| after - before.unwrap_or(0.0))
}
