//! Records sent to an OpenTelemetry collector as OTLP/HTTP logs: protobuf
//! `ExportLogsServiceRequest`s `POST`ed to `{endpoint}/v1/logs`, batched, gzip-compressed.
//!
//! Two threads. The back end's thread runs [`OtlpSink`]'s [`Sink`] methods: `write_line`
//! encodes the record into the batch being filled (no system call, and no allocation once the
//! buffers have grown) and hands a full or timed-out batch to a bounded queue; it never waits
//! on the network. The sink's own exporter thread (`tachylog-otlp`, in `export.rs`) takes
//! batches from that queue and does the HTTP, with its retries and backoff; `http.rs` is its
//! client (`ureq`, rustls with `otlp-tls`), `encode.rs` the protobuf both sides write, `env.rs`
//! the OpenTelemetry environment variables the builder starts from.
//!
//! A durable sink (`OtlpBuilder::durable`) puts an outbox between the two (`crate::Outbox`,
//! in `sink/outbox/`): the
//! back end writes each finished batch there (and what it holds at every flush, which is when
//! a spool lets go of the records), the exporter reads its requests from there and retires
//! them only once the collector answered, and the next process on the same directory sends
//! what a dead one left.
//!
//! Accounting, to fit the logger's rule ([`RecordDropped`]): a record in a batch waiting for
//! the exporter is not lost, so `write_line` returns `Ok` for it. When the queue is full and
//! the batch being filled is full too, the *newest* record is dropped and `write_line` returns
//! an error marked [`RecordDropped`], which the slot counts as exactly that one record lost.
//! Losses only the exporter sees (a batch refused for good, the retry budget spent, records
//! the collector rejects, what is still queued when the shutdown deadline passes) are counted
//! by the exporter, reported on stderr and, when batches go through again, announced to the
//! collector by a WARN record (see `export.rs`).

mod builder;
mod encode;
mod env;
mod export;
mod http;
mod transport;

pub use builder::{OtlpBuilder, OtlpError};

use crate::{Line, RecordDropped, Sink};
use encode::RecordEncoder;
use export::{Batch, Shared};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use std::{fmt, io};

/// A batch goes to the exporter once it holds this many bytes of encoded records, whatever
/// [`OtlpBuilder::max_batch_records`] says: requests stay far below the collectors' usual
/// limits on a body (the OpenTelemetry Collector's default is 20 MiB).
const MAX_BATCH_BYTES: usize = 1 << 20;

/// How soon a batch that found the queue full is offered again.
const HAND_OFF_RETRY: Duration = Duration::from_millis(50);

/// How many finished batches a durable sink holds in memory while its outbox takes none (full,
/// or its disk failing) before it drops the newest record.
const MAX_HELD_BATCHES: usize = 4;

/// Sends records to an OpenTelemetry collector over OTLP/HTTP (protobuf, `POST /v1/logs`).
///
/// Each request is one `ExportLogsServiceRequest` with one `ResourceLogs` (attributes
/// `service.name`, `host.name`, `process.pid`, `telemetry.sdk.name` = `tachylog`,
/// `telemetry.sdk.language`, `telemetry.sdk.version`, and any
/// [`resource_attribute`](OtlpBuilder::resource_attribute)) and one `ScopeLogs` (scope
/// `tachylog`). Each record is a `LogRecord`: `time_unix_nano` and `observed_time_unix_nano`
/// are the record's time; `severity_number` is TRACE 1, DEBUG 5, INFO 9, WARN 13, ERROR 17 and
/// `severity_text` the level's name; the body is the message as a string, unescaped; the
/// attributes are `code.namespace` (the module path or `log` target), `code.filepath`,
/// `code.lineno`, `thread.name` and `thread.id`, then the record's structured
/// [`Fields`](crate::Fields) under their own keys, typed (integers, doubles, booleans, strings;
/// integers beyond `i64` as decimal text; null as an empty value), and the fields of the
/// `tracing` spans it was logged in as `span_name.key`. The sink's [`Format`](crate::Format)
/// is not used.
///
/// Batching: records go out in batches of up to
/// [`max_batch_records`](OtlpBuilder::max_batch_records) (512) or 1 MiB, or when the oldest has
/// waited [`batch_timeout`](OtlpBuilder::batch_timeout) (1 s). [`flush`](crate::flush) does
/// not send a partial batch early: the back end flushes whenever its queues run empty, which
/// would make every batch one record under light traffic.
///
/// Delivery: a dedicated thread sends the batches, so the logger never waits on the network.
/// It retries on HTTP 429, 502, 503 and 504 and on connection errors and timeouts, after the
/// collector's `Retry-After` (seconds or HTTP-date) or else after 100 ms, doubling up to 5 s,
/// with jitter, for at most [`max_retry_time`](OtlpBuilder::max_retry_time) (30 s) per batch;
/// then its records are counted lost. Any other status is final: the status and the start of
/// the response body are reported on stderr and the batch's records counted lost. Records the
/// collector reports as rejected (`partial_success`) are counted lost too. A certificate the
/// sink does not trust is final as well: retrying cannot fix it.
///
/// Transport: `http://`, or `https://` with the `otlp-tls` feature (rustls; the system's roots,
/// or the CA given with `OtlpBuilder::ca_certificate_pem`; a client certificate for mutual
/// TLS with `client_certificate_pem`). Through the proxy that `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY` names unless `NO_PROXY` excludes the host, or the
/// one given with [`proxy`](OtlpBuilder::proxy). Connections are kept alive between requests.
///
/// Environment: every builder starts from the OpenTelemetry variables,
/// `OTEL_EXPORTER_OTLP_LOGS_*` over `OTEL_EXPORTER_OTLP_*` (`ENDPOINT`, `HEADERS`,
/// `COMPRESSION`, `TIMEOUT`, `CERTIFICATE`, `CLIENT_CERTIFICATE`, `CLIENT_KEY`), and
/// `OTEL_SERVICE_NAME` over `OTEL_RESOURCE_ATTRIBUTES`; what the code sets wins. The endpoint
/// is read only by [`OtlpSink::from_env`]: the signal's variable is used as is, the generic one
/// gets `/v1/logs`. A value that cannot be used is ignored with a warning on stderr.
///
/// Trace context: a structured field `trace_id` of 32 hex digits and `span_id` of 16, on the
/// record or on one of its `tracing` spans (the innermost wins, the record over its spans),
/// fill the `LogRecord`'s `trace_id` and `span_id` instead of becoming attributes, and
/// `trace_flags` (an integer from 0 to 255) its `flags`.
///
/// What the sink's own HTTP stack (`ureq`, `rustls`) logs on its exporter thread is dropped,
/// as OpenTelemetry SDKs suppress their exporters' own telemetry: each request would log more.
///
/// Losses are never silent: when the queue of finished batches is full (see
/// [`queue_limit`](OtlpBuilder::queue_limit)) the newest record is dropped and counted by the
/// logger like any sink's loss; losses in the exporter are reported on stderr and, once batches
/// go through again, announced to the collector in a WARN record `N records lost while otlp
/// ... failed: ...`. When the logger stops, the exporter gets up to
/// [`shutdown_timeout`](OtlpBuilder::shutdown_timeout) (5 s) to send what is queued, then
/// reports on stderr how many records it could not deliver. The same goes when the process ends
/// with the logger still running: at `std::process::exit` and after the logger's SIGTERM/SIGINT
/// drain, the batch being filled and the queue are sent first, within the shutdown timeout.
/// Crash signals and SIGKILL do not wait for the network: records not yet sent then are lost,
/// unless the sink is [durable](OtlpBuilder::durable): then what it took is on disk until the
/// collector acknowledges it, whatever the outage, the crash or the shutdown deadline.
/// [`OtlpSink::stats`] counts it all.
///
/// ```no_run
/// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318")
///     .service_name("shop")
///     .header("authorization", "Bearer secret")
///     .build()
///     .unwrap();
/// let stats = sink.stats();
/// let guard = tachylog::builder().sink(sink).init().unwrap();
/// tachylog::info!("order {} paid", 42);
/// drop(guard); // sends what is queued, for up to 5 s
/// println!("{} exported, {} lost", stats.exported(), stats.lost() + stats.dropped());
/// ```
pub struct OtlpSink {
    /// `otlp http://host:port/v1/logs`.
    describe: String,
    encoder: RecordEncoder,
    /// Encoded records of the batch being filled.
    batch: Vec<u8>,
    batch_count: u64,
    /// When the batch being filled must go (wall clock, nanoseconds since the Unix epoch): set
    /// by its first record, moved later when the queue was full. `None` while it is empty.
    batch_due: Option<i64>,
    max_batch_records: u64,
    batch_timeout: Duration,
    shared: Arc<Shared>,
    /// The exporter's thread, and the channel on which it says it has finished.
    exporter: Option<(JoinHandle<()>, mpsc::Receiver<()>)>,
    shutdown_timeout: Duration,
    /// Durable: finished batches go to the outbox, through `held` when it takes none.
    durable: bool,
    held: std::collections::VecDeque<Batch>,
    /// Whether the outbox's refusal was reported (once per run of refusals).
    #[cfg(unix)]
    refusal_reported: bool,
}

/// Counts of what an [`OtlpSink`] did, readable while the logger runs and after it stopped.
///
/// ```
/// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap();
/// let stats = sink.stats();
/// assert_eq!((stats.exported(), stats.lost(), stats.dropped(), stats.requests()), (0, 0, 0, 0));
/// ```
#[derive(Clone)]
pub struct OtlpStats(Arc<Shared>);

impl OtlpStats {
    /// Records the sink took from the logger (all but those [`dropped`](OtlpStats::dropped)
    /// on arrival).
    ///
    /// ```
    /// # let stats = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap().stats();
    /// assert_eq!(stats.accepted(), 0);
    /// ```
    pub fn accepted(&self) -> u64 {
        self.0.counters.accepted.load(Ordering::Relaxed)
    }

    /// Records a [durable](OtlpBuilder::durable) sink holds on disk that the collector has not
    /// acknowledged yet, those adopted from processes that ended before sending them included
    /// (0 for a sink that is not durable); once the sink stopped, what it left on disk for the
    /// next start.
    ///
    /// ```
    /// # let stats = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap().stats();
    /// assert_eq!(stats.on_disk(), 0);
    /// ```
    pub fn on_disk(&self) -> u64 {
        self.0.on_disk()
    }

    /// Records the collector refused: a status that retrying cannot change (such as 400), or
    /// a `partial_success` that rejects them. They are also counted in
    /// [`lost`](OtlpStats::lost).
    ///
    /// ```
    /// # let stats = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap().stats();
    /// assert_eq!(stats.rejected(), 0);
    /// ```
    pub fn rejected(&self) -> u64 {
        self.0.counters.rejected.load(Ordering::Relaxed)
    }

    /// Records the collector accepted.
    ///
    /// ```
    /// # let stats = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap().stats();
    /// assert_eq!(stats.exported(), 0);
    /// ```
    pub fn exported(&self) -> u64 {
        self.0.counters.exported.load(Ordering::Relaxed)
    }

    /// Records the exporter lost: refused for good, out of retry budget, rejected by the
    /// collector, or still unsent when the shutdown deadline passed; for a durable sink,
    /// removed from a full outbox
    /// ([`OutboxFull::DropOldest`](crate::OutboxFull::DropOldest)), unreadable in it, or not
    /// written to it by the end.
    ///
    /// ```
    /// # let stats = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap().stats();
    /// assert_eq!(stats.lost(), 0);
    /// ```
    pub fn lost(&self) -> u64 {
        self.0.counters.lost.load(Ordering::Relaxed)
    }

    /// Records dropped on arrival because the queue of batches was full.
    ///
    /// ```
    /// # let stats = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap().stats();
    /// assert_eq!(stats.dropped(), 0);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.0.counters.dropped.load(Ordering::Relaxed)
    }

    /// HTTP requests attempted, retries included.
    ///
    /// ```
    /// # let stats = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap().stats();
    /// assert_eq!(stats.requests(), 0);
    /// ```
    pub fn requests(&self) -> u64 {
        self.0.counters.requests.load(Ordering::Relaxed)
    }
}

impl OtlpSink {
    /// The settings for a sink sending to `endpoint`, the collector's base URL such as
    /// `http://127.0.0.1:4318` (`/v1/logs` is appended unless the path already ends so).
    ///
    /// ```
    /// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap();
    /// ```
    pub fn builder(endpoint: impl Into<String>) -> OtlpBuilder {
        OtlpBuilder::new(Some(endpoint.into()))
    }

    /// The settings for a sink sending where the environment says, as OpenTelemetry SDKs do:
    /// `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` as is, else `OTEL_EXPORTER_OTLP_ENDPOINT` with
    /// `/v1/logs` appended, else `http://localhost:4318/v1/logs`. The other variables apply as
    /// to every builder (see [`OtlpSink`]).
    ///
    /// ```
    /// // With OTEL_EXPORTER_OTLP_ENDPOINT unset:
    /// # if std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").is_none() && std::env::var_os("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT").is_none() {
    /// let sink = tachylog::OtlpSink::from_env().build().unwrap();
    /// assert_eq!(sink.describe_target(), "otlp http://localhost:4318/v1/logs");
    /// # }
    /// ```
    pub fn from_env() -> OtlpBuilder {
        OtlpBuilder::new(None)
    }

    fn new(
        describe: String,
        shared: Arc<Shared>,
        exporter: (JoinHandle<()>, mpsc::Receiver<()>),
        max_batch_records: u64,
        batch_timeout: Duration,
        shutdown_timeout: Duration,
    ) -> OtlpSink {
        OtlpSink {
            describe,
            encoder: RecordEncoder::default(),
            batch: Vec::new(),
            batch_count: 0,
            batch_due: None,
            max_batch_records,
            batch_timeout,
            shared,
            exporter: Some(exporter),
            shutdown_timeout,
            durable: false,
            held: std::collections::VecDeque::new(),
            #[cfg(unix)]
            refusal_reported: false,
        }
    }

    /// Seals the batch being filled, if any, for the outbox.
    fn seal(&mut self) {
        if self.batch_count == 0 {
            return;
        }
        let records = std::mem::replace(&mut self.batch, self.shared.spare_buffer());
        self.held.push_back(Batch {
            records,
            count: std::mem::take(&mut self.batch_count),
        });
    }

    /// Writes the sealed batches to the outbox, oldest first, until it takes no more.
    #[cfg(unix)]
    fn persist_held(&mut self) {
        while let Some(batch) = self.held.front() {
            let refusal = match self
                .shared
                .persist(&batch.records, batch.count, &self.describe)
            {
                Ok(true) => {
                    self.refusal_reported = false;
                    if let Some(batch) = self.held.pop_front() {
                        self.shared.recycle(batch.records);
                    }
                    continue;
                }
                Ok(false) => "it is full".to_string(),
                Err(e) => e.to_string(),
            };
            if !self.refusal_reported {
                self.refusal_reported = true;
                eprintln!(
                    "tachylog: sink {}: the outbox takes no records ({refusal}); up to {} \
                     batches wait in memory, then the newest records are dropped",
                    self.describe, MAX_HELD_BATCHES
                );
            }
            return;
        }
    }

    #[cfg(not(unix))]
    fn persist_held(&mut self) {}

    /// A durable sink's `write_line`: the record joins the batch being filled, which goes to
    /// the outbox once full.
    fn write_durable(&mut self, line: &Line<'_>) -> io::Result<()> {
        if self.held.len() >= MAX_HELD_BATCHES {
            self.persist_held();
            if self.held.len() >= MAX_HELD_BATCHES {
                self.shared.counters.dropped.fetch_add(1, Ordering::Relaxed);
                return Err(io::Error::other(RecordDropped::new(format!(
                    "{}: the outbox is full or cannot be written; the newest record was dropped",
                    self.describe
                ))));
            }
        }
        self.take(line);
        if self.batch_full() {
            self.seal();
            self.persist_held();
        }
        Ok(())
    }

    /// Encodes `line` into the batch being filled: the sink has taken it.
    fn take(&mut self, line: &Line<'_>) {
        self.encoder.encode(line, &mut self.batch);
        self.batch_count += 1;
        self.shared
            .counters
            .accepted
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Records a durable sink holds in memory, not yet in its outbox.
    fn held_records(&self) -> u64 {
        self.batch_count + self.held.iter().map(|b| b.count).sum::<u64>()
    }

    /// For `examples/otlp_encoder_vs_prost.rs` only, the benchmark behind the choice of
    /// encoder: a function that encodes a record as `write_line` does, appending it to a batch.
    /// Not a public API.
    #[doc(hidden)]
    pub fn __bench_record_encoder() -> impl FnMut(&Line<'_>, &mut Vec<u8>) {
        let mut encoder = RecordEncoder::default();
        move |line, batch| encoder.encode(line, batch)
    }

    /// For `examples/otlp_encoder_vs_prost.rs` only: the request the exporter sends for a batch
    /// of encoded records, with a resource of string attributes and tachylog's scope. Not a
    /// public API.
    #[doc(hidden)]
    pub fn __bench_request(resource: &[(&str, &str)], records: &[u8], out: &mut Vec<u8>) {
        let resource: Vec<_> = resource
            .iter()
            .map(|(k, v)| (*k, encode::Value::Str(v)))
            .collect();
        encode::request(&encode::resource(&resource), &encode::scope(), records, out);
    }

    /// Where records go, such as `otlp http://127.0.0.1:4318/v1/logs` (also the name in error
    /// reports).
    ///
    /// ```
    /// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318/").build().unwrap();
    /// assert_eq!(sink.describe_target(), "otlp http://127.0.0.1:4318/v1/logs");
    /// ```
    pub fn describe_target(&self) -> String {
        self.describe.clone()
    }

    /// A handle on this sink's counters, to keep before the sink is moved into the logger.
    ///
    /// ```
    /// let sink = tachylog::OtlpSink::builder("http://127.0.0.1:4318").build().unwrap();
    /// let stats = sink.stats();
    /// assert_eq!(stats.exported(), 0);
    /// ```
    pub fn stats(&self) -> OtlpStats {
        OtlpStats(self.shared.clone())
    }

    /// Queues the batch being filled whatever the limits: at the end of the logger or of the
    /// process.
    fn queue_last(&mut self) {
        let count = std::mem::take(&mut self.batch_count);
        self.batch_due = None;
        self.shared.push_last(Batch {
            records: std::mem::take(&mut self.batch),
            count,
        });
    }

    fn batch_full(&self) -> bool {
        self.batch_count >= self.max_batch_records || self.batch.len() >= MAX_BATCH_BYTES
    }

    /// Offers the batch being filled to the exporter; if the queue is full the batch stays
    /// here and is offered again shortly.
    fn hand_off(&mut self) {
        if self.batch_count == 0 {
            return;
        }
        let batch = Batch {
            records: std::mem::take(&mut self.batch),
            count: self.batch_count,
        };
        match self.shared.offer(batch) {
            Ok(()) => {
                self.batch = self.shared.spare_buffer();
                self.batch_count = 0;
                self.batch_due = None;
            }
            Err(batch) => {
                self.batch = batch.records;
                self.batch_due = Some(unix_nanos_in(HAND_OFF_RETRY));
            }
        }
    }

    /// Hands the batch off if it is due at `now_unix_nanos`.
    fn hand_off_if_due(&mut self, now_unix_nanos: i64) {
        if self.batch_due.is_some_and(|due| now_unix_nanos >= due) {
            self.hand_off();
        }
    }
}

impl Sink for OtlpSink {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        if self.durable {
            return self.write_durable(line);
        }
        if self.batch_full() {
            self.hand_off();
            if self.batch_full() {
                self.shared.counters.dropped.fetch_add(1, Ordering::Relaxed);
                return Err(io::Error::other(RecordDropped::new(format!(
                    "{}: the queue of batches is full (the collector is slow or unreachable); the \
                     newest record was dropped",
                    self.describe
                ))));
            }
        }
        if self.batch_count == 0 {
            self.batch_due = Some(unix_nanos_in(self.batch_timeout));
        }
        self.take(line);
        if self.batch_full() {
            self.hand_off();
        }
        Ok(())
    }

    /// Sends nothing early (see [`OtlpSink`] on batching); hands the batch off if it is due.
    /// A durable sink writes what it took to its outbox, so that what the logger considers
    /// written (and a spool lets go of) is on disk.
    fn flush(&mut self) -> io::Result<()> {
        if self.durable {
            self.seal();
            self.persist_held();
            return Ok(());
        }
        self.hand_off_if_due(unix_nanos_in(Duration::ZERO));
        Ok(())
    }

    fn describe(&self) -> String {
        self.describe_target()
    }

    fn next_deadline(&self) -> Option<i64> {
        self.batch_due
    }

    fn tick(&mut self, now_unix_nanos: i64) -> io::Result<()> {
        // The back end's clock says the batch is due: trust it, so a tick never ends without a
        // hand-off attempt (the deadline would stay due and spin the worker).
        if self.batch_due.is_some_and(|due| now_unix_nanos >= due) {
            self.hand_off();
        }
        Ok(())
    }

    /// The process is ending with the logger still running (`exit()`, or the logger's
    /// SIGTERM/SIGINT drain): the batch being filled is queued whatever the limits, and the
    /// exporter gets until the shutdown timeout (or `deadline`, if sooner) to send the queue.
    fn before_exit(&mut self, deadline: Instant) -> io::Result<()> {
        if self.durable {
            self.seal();
            self.persist_held();
        } else if self.batch_count > 0 {
            self.queue_last();
        }
        let left = self
            .shared
            .drain(deadline.min(instant_after(Instant::now(), self.shutdown_timeout)));
        if self.durable {
            // What is on disk stays there for the next start; only what the outbox did not
            // take is lost.
            let unwritten = self.held_records();
            if unwritten == 0 {
                return Ok(());
            }
            self.shared
                .counters
                .lost
                .fetch_add(unwritten, Ordering::Relaxed);
            return Err(io::Error::other(format!(
                "{unwritten} record(s) could not be written to the outbox before the process ended"
            )));
        }
        if left == 0 {
            return Ok(());
        }
        self.shared.counters.lost.fetch_add(left, Ordering::Relaxed);
        Err(io::Error::other(format!(
            "{left} record(s) could not be delivered before the process ended"
        )))
    }
}

/// At the end (the logger stopped, after its last flush): the last batch is queued whatever
/// the limits, the exporter gets until the shutdown deadline to send everything, and reports
/// what it could not. The wait is bounded even if the exporter is stuck (name resolution has
/// no timeout): it is then left behind, with a report.
impl Drop for OtlpSink {
    fn drop(&mut self) {
        if self.durable {
            self.seal();
            self.persist_held();
            let unwritten = self.held_records();
            if unwritten > 0 {
                self.shared
                    .counters
                    .lost
                    .fetch_add(unwritten, Ordering::Relaxed);
                eprintln!(
                    "tachylog: sink {}: {unwritten} record(s) could not be written to the outbox \
                     and are lost",
                    self.describe
                );
            }
        } else if self.batch_count > 0 {
            self.queue_last();
        }
        self.shared
            .stop(instant_after(Instant::now(), self.shutdown_timeout));
        let Some((handle, done)) = self.exporter.take() else {
            return;
        };
        match done.recv_timeout(self.shutdown_timeout.saturating_add(Duration::from_secs(1))) {
            Err(mpsc::RecvTimeoutError::Timeout) if self.durable => eprintln!(
                "tachylog: sink {}: the exporter did not finish within {:?}; what it had not \
                 sent stays in the outbox for the next start",
                self.describe, self.shutdown_timeout,
            ),
            Err(mpsc::RecvTimeoutError::Timeout) => eprintln!(
                "tachylog: sink {}: the exporter did not finish within {:?}; {} record(s) still \
                 queued or being sent are lost",
                self.describe,
                self.shutdown_timeout,
                self.shared.pending()
            ),
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                if handle.join().is_err() {
                    eprintln!("tachylog: sink {}: the exporter thread panicked; records still queued were lost", self.describe);
                }
            }
        }
    }
}

impl fmt::Debug for OtlpSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpSink")
            .field("target", &self.describe)
            .field("batch_records", &self.batch_count)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for OtlpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpStats")
            .field("accepted", &self.accepted())
            .field("exported", &self.exported())
            .field("on_disk", &self.on_disk())
            .field("rejected", &self.rejected())
            .field("lost", &self.lost())
            .field("dropped", &self.dropped())
            .field("requests", &self.requests())
            .finish()
    }
}

/// A century: "never" for a deadline. `Duration::MAX` is how Rust code says "never", and
/// `Instant + Duration` panics past what the clock holds, which would stop the exporter or the
/// back end.
const NEVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `now + duration`, at most a century ahead.
fn instant_after(now: Instant, duration: Duration) -> Instant {
    now + duration.min(NEVER)
}

/// The wall-clock time `delay` from now, in nanoseconds since the Unix epoch, saturated at
/// `i64::MAX` (the year 2262).
fn unix_nanos_in(delay: Duration) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.saturating_add(delay).as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_of_forever_is_a_century_not_a_panic() {
        let now = Instant::now();
        assert_eq!(instant_after(now, Duration::MAX) - now, NEVER);
        assert_eq!(
            instant_after(now, Duration::from_millis(5)) - now,
            Duration::from_millis(5)
        );
        assert_eq!(unix_nanos_in(Duration::MAX), i64::MAX);
    }
}
