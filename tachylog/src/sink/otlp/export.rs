//! The exporter: a thread owned by an [`OtlpSink`](super::OtlpSink) that takes finished
//! batches from a bounded queue and `POST`s them, retrying on 429, 502, 503, 504 and transport
//! errors (not on a certificate the sink does not trust) with exponential backoff and jitter (or the collector's `Retry-After`), within a
//! retry budget per batch. It is the only thread that touches the network, so the back end
//! never waits on the collector.
//!
//! The queue is the one point shared by the two threads: a mutex held only to push or pop a
//! batch, and a condition variable that wakes the exporter for a new batch or for the stop.
//!
//! Loss accounting on this side, where the logger cannot see it: a
//! batch that fails for good (a status that is not retryable, or the retry budget spent) or
//! that the collector partly rejects is counted lost; the first loss is reported on stderr; when
//! a batch goes through again, stderr says how many records were lost and the collector gets a
//! WARN record saying so, as the logger does for every other sink. At the stop, what cannot be
//! sent before the shutdown deadline is counted and reported on stderr. A run of retryable
//! failures is reported once, at its first failure, so an operator sees a collector that is
//! down while its records still wait, not only when the retry budget runs out.

use super::encode::{self, RecordEncoder};
use super::http::{Client, Response};
use super::instant_after;
use crate::{Level, Line};
#[cfg(unix)]
use crate::{Outbox, OutboxBatch, OutboxReport};
use std::collections::VecDeque;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// First and longest pause between attempts at one batch when the collector gives no
/// `Retry-After`.
const BACKOFF_START: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// How much of an error response's body goes into a report.
const SNIPPET: usize = 200;

/// A run of encoded `LogRecord`s (see [`RecordEncoder`]) and how many they are.
pub(super) struct Batch {
    pub(super) records: Vec<u8>,
    pub(super) count: u64,
}

/// What the exporter did, for [`OtlpStats`](super::OtlpStats). Written by one thread each
/// (`dropped` by the back end, the rest by the exporter); `Relaxed`: they are counters that
/// order nothing else.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) accepted: AtomicU64,
    pub(super) exported: AtomicU64,
    pub(super) lost: AtomicU64,
    pub(super) rejected: AtomicU64,
    pub(super) dropped: AtomicU64,
    pub(super) requests: AtomicU64,
}

/// The queue between the sink (back end) and the exporter.
pub(super) struct Shared {
    state: Mutex<State>,
    /// Signalled on a new batch, on the stop, and when the exporter finishes a batch (for
    /// `before_exit`): waiters re-check their own condition, so one variable serves all.
    wake: Condvar,
    max_batches: usize,
    max_bytes: usize,
    pub(super) counters: Counters,
    /// Records an outbox lost that no notice to the collector has counted yet.
    #[cfg(unix)]
    unannounced: AtomicU64,
    /// Whether the outbox's removals to make room were reported since it last delivered.
    #[cfg(unix)]
    full_reported: std::sync::atomic::AtomicBool,
    /// What the outbox held when the exporter closed it: left for the next start.
    #[cfg(unix)]
    left_on_disk: AtomicU64,
}

struct State {
    batches: VecDeque<Batch>,
    /// Sum of the queued batches' `records.len()`.
    bytes: usize,
    /// Set once, by the sink's `Drop`: the instant by which the exporter must give up.
    stop_by: Option<Instant>,
    /// Emptied batch buffers, back from the exporter for the sink to fill again.
    spare: Vec<Vec<u8>>,
    /// Records of the batch the exporter is sending; 0 while it waits for one.
    in_flight: u64,
    /// A durable sink's outbox: batches go through it instead of `batches`.
    #[cfg(unix)]
    outbox: Option<Outbox>,
}

impl State {
    /// Records queued or being sent: for a durable sink, those in its outbox.
    fn pending(&self) -> u64 {
        #[cfg(unix)]
        if let Some(outbox) = &self.outbox {
            return outbox.records();
        }
        self.in_flight + self.batches.iter().map(|b| b.count).sum::<u64>()
    }
}

impl Shared {
    pub(super) fn new(max_batches: usize, max_bytes: usize) -> Shared {
        Shared {
            state: Mutex::new(State {
                batches: VecDeque::new(),
                bytes: 0,
                stop_by: None,
                spare: Vec::new(),
                in_flight: 0,
                #[cfg(unix)]
                outbox: None,
            }),
            wake: Condvar::new(),
            max_batches,
            max_bytes,
            counters: Counters::default(),
            #[cfg(unix)]
            unannounced: AtomicU64::new(0),
            #[cfg(unix)]
            full_reported: std::sync::atomic::AtomicBool::new(false),
            #[cfg(unix)]
            left_on_disk: AtomicU64::new(0),
        }
    }

    /// Makes this a durable sink's queue: batches go to `outbox`.
    #[cfg(unix)]
    pub(super) fn set_outbox(&self, outbox: Outbox) {
        self.lock().outbox = Some(outbox);
    }

    /// Writes `records` (`count` of them) to the outbox, room made first as its policy says.
    /// `Ok(false)`: no room.
    #[cfg(unix)]
    pub(super) fn persist(
        &self,
        records: &[u8],
        count: u64,
        describe: &str,
    ) -> std::io::Result<bool> {
        let mut state = self.lock();
        let Some(outbox) = state.outbox.as_mut() else {
            return Ok(false);
        };
        let written = outbox.push(records, count);
        let losses = outbox.take_report();
        drop(state);
        if written.as_ref().is_ok_and(|w| *w) {
            self.wake.notify_all();
        }
        self.account(losses, describe);
        written
    }

    /// Counts what an outbox lost and reports its warnings.
    #[cfg(unix)]
    fn account(&self, losses: OutboxReport, describe: &str) {
        if losses.lost > 0 {
            self.counters.lost.fetch_add(losses.lost, Ordering::Relaxed);
            self.unannounced.fetch_add(losses.lost, Ordering::Relaxed);
        }
        // Once per run of removals: the count goes to the collector when it answers again.
        if losses.removed_for_room > 0 && !self.full_reported.swap(true, Ordering::Relaxed) {
            eprintln!(
                "tachylog: sink {describe}: the outbox reached its size limit; its oldest \
                 records are removed to make room, counted lost and announced once the \
                 collector answers"
            );
        }
        for warning in losses.warnings {
            eprintln!("tachylog: sink {describe}: {warning}");
        }
    }

    /// Records in the outbox not yet acknowledged (0 for a sink that is not durable).
    pub(super) fn on_disk(&self) -> u64 {
        #[cfg(unix)]
        {
            let left = self.left_on_disk.load(Ordering::Relaxed);
            self.lock().outbox.as_ref().map_or(left, Outbox::records)
        }
        #[cfg(not(unix))]
        0
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves a consistent queue (push and pop are single
        // calls), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `batch` if it fits, else gives it back. One batch always fits an empty queue,
    /// whatever its size, so a record larger than the byte limit still goes.
    pub(super) fn offer(&self, batch: Batch) -> Result<(), Batch> {
        let mut state = self.lock();
        let full = state.batches.len() >= self.max_batches
            || (!state.batches.is_empty() && state.bytes + batch.records.len() > self.max_bytes);
        if full {
            return Err(batch);
        }
        state.bytes += batch.records.len();
        state.batches.push_back(batch);
        drop(state);
        self.wake.notify_all();
        Ok(())
    }

    /// A buffer for the next batch: a recycled one if any, so steady logging allocates none.
    pub(super) fn spare_buffer(&self) -> Vec<u8> {
        self.lock().spare.pop().unwrap_or_default()
    }

    /// Gives an exported batch's buffer back, unless it grew past what a batch usually needs.
    pub(super) fn recycle(&self, mut records: Vec<u8>) {
        records.clear();
        let mut state = self.lock();
        if state.spare.len() < 2 && records.capacity() <= 2 * super::MAX_BATCH_BYTES {
            state.spare.push(records);
        }
    }

    /// Queues `batch` whatever the limits: the last one, at the end.
    pub(super) fn push_last(&self, batch: Batch) {
        let mut state = self.lock();
        state.bytes += batch.records.len();
        state.batches.push_back(batch);
        drop(state);
        self.wake.notify_all();
    }

    /// Tells the exporter to finish by `by`.
    pub(super) fn stop(&self, by: Instant) {
        let mut state = self.lock();
        state.stop_by = Some(by);
        drop(state);
        self.wake.notify_all();
    }

    /// The next batch, once the previous one (`done` records) is finished with; waits for one.
    /// `None` once stopping and nothing is left.
    fn next(&self, done: u64) -> Option<Batch> {
        let mut state = self.lock();
        if done > 0 {
            state.in_flight = 0;
            self.wake.notify_all();
        }
        loop {
            if let Some(batch) = state.batches.pop_front() {
                state.bytes -= batch.records.len();
                state.in_flight = batch.count;
                return Some(batch);
            }
            if state.stop_by.is_some() {
                return None;
            }
            state = self.wake.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until the queue and the exporter are empty, or until `by`; returns how many
    /// records are still queued or being sent.
    pub(super) fn drain(&self, by: Instant) -> u64 {
        let mut state = self.lock();
        loop {
            let left = state.pending();
            let time = by.saturating_duration_since(Instant::now());
            if left == 0 || time.is_zero() {
                return left;
            }
            state = self
                .wake
                .wait_timeout(state, time)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Records queued or being sent.
    pub(super) fn pending(&self) -> u64 {
        self.lock().pending()
    }

    fn stop_by(&self) -> Option<Instant> {
        self.lock().stop_by
    }

    /// Sleeps until `until`, or until the stop deadline if that comes first.
    fn pause_until(&self, until: Instant) {
        let mut state = self.lock();
        loop {
            let end = state.stop_by.map_or(until, |s| s.min(until));
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            state = self
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// How an export ended.
enum Outcome {
    /// The collector took the batch; it may have rejected some records.
    Delivered { rejected: u64, why: String },
    /// Not retryable, or the retry budget is spent.
    Failed(String),
    /// The shutdown deadline came first.
    Stopped,
}

/// Settings of the exporter thread.
pub(super) struct Settings {
    /// `otlp http://host:port/v1/logs`, for reports.
    pub(super) describe: String,
    /// Encoded `Resource` and `InstrumentationScope` messages.
    pub(super) resource: Vec<u8>,
    pub(super) scope: Vec<u8>,
    pub(super) gzip: bool,
    pub(super) request_timeout: Duration,
    pub(super) max_retry_time: Duration,
    /// A durable sink's batching, done here from the outbox.
    // Windows builds no durable sink (the outbox is Unix only): never read there.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(super) durable: Option<Durable>,
}

/// How a durable sink's exporter forms requests from the outbox.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(super) struct Durable {
    pub(super) max_records: u64,
    pub(super) batch_timeout: Duration,
}

/// The exporter thread's state.
pub(super) struct Exporter {
    pub(super) shared: Arc<Shared>,
    pub(super) client: Client,
    pub(super) settings: Settings,
    /// The request being sent, and its gzip form; reused.
    pub(super) body: Vec<u8>,
    pub(super) compressed: Vec<u8>,
    /// Jitter state (xorshift64).
    pub(super) rng: u64,
    /// While batches fail: records lost so far and the first reason.
    pub(super) failing: Option<(u64, String)>,
    /// Whether the current run of retryable failures was reported: once per run, so a
    /// collector that is down is announced while its records wait, not only when they are lost.
    pub(super) retry_reported: bool,
    /// Since when the collector has not answered (the first failure of the run).
    pub(super) outage_since: Option<Instant>,
}

impl Exporter {
    /// Exports batches until the sink stops; reports what could not be delivered.
    pub(super) fn run(self) {
        #[cfg(unix)]
        if let Some(durable) = self.settings.durable {
            return self.run_durable(durable);
        }
        self.run_from_memory();
    }

    /// A durable sink's exporter: batches are read from the outbox, and leave it only when the
    /// collector answered (with a success, or a refusal that retrying cannot change). At the
    /// stop, what the deadline leaves unsent stays on disk for the next start.
    #[cfg(unix)]
    fn run_durable(mut self, durable: Durable) {
        let describe = self.settings.describe.clone();
        while let Some(batch) = self.next_from_outbox(durable) {
            match self.export(batch.payload(), batch.meta(), true) {
                Outcome::Delivered { rejected, why } => {
                    let rejected = rejected.min(batch.count());
                    self.retire(&batch);
                    let counters = &self.shared.counters;
                    counters
                        .exported
                        .fetch_add(batch.count() - rejected, Ordering::Relaxed);
                    self.shared.full_reported.store(false, Ordering::Relaxed);
                    let unannounced = self.shared.unannounced.swap(0, Ordering::Relaxed);
                    if unannounced > 0 {
                        // Counted lost when they went; announced now that the collector answers.
                        match &mut self.failing {
                            Some((lost, _)) => *lost += unannounced,
                            None => {
                                self.failing = Some((
                                    unannounced,
                                    "the outbox was full, or held unreadable frames".into(),
                                ))
                            }
                        }
                    }
                    if rejected > 0 {
                        counters.rejected.fetch_add(rejected, Ordering::Relaxed);
                        self.lose(
                            rejected,
                            format!("{describe} rejected {rejected} record(s): {why}"),
                        );
                    } else {
                        self.recovered();
                    }
                }
                Outcome::Failed(why) => {
                    // The collector refused the batch, and would again.
                    self.retire(&batch);
                    self.shared
                        .counters
                        .rejected
                        .fetch_add(batch.count(), Ordering::Relaxed);
                    self.lose(batch.count(), why);
                }
                Outcome::Stopped => {
                    if let Some(outbox) = self.shared.lock().outbox.as_mut() {
                        outbox.put_back(&batch);
                    }
                    break;
                }
            }
        }
        let outbox = self.shared.lock().outbox.take();
        if let Some(outbox) = outbox {
            let path = outbox.path();
            let (left, losses) = outbox.close();
            self.shared.left_on_disk.store(left, Ordering::Relaxed);
            self.shared.account(losses, &describe);
            if left > 0 {
                eprintln!(
                    "tachylog: sink {describe}: {left} record(s) not yet acknowledged stay in {} \
                     (and the directories beside it) for the next start",
                    path.display()
                );
            }
        }
        if let Some((lost, why)) = self.failing.take() {
            eprintln!("tachylog: sink {describe}: {lost} record(s) were lost ({why})");
        }
    }

    /// The next batch from the outbox once one is due; `None` at the stop once nothing is left
    /// or its deadline passed.
    #[cfg(unix)]
    fn next_from_outbox(&mut self, durable: Durable) -> Option<OutboxBatch> {
        let describe = self.settings.describe.clone();
        let mut state = self.shared.lock();
        {
            // The previous batch is finished with.
            state.in_flight = 0;
            self.shared.wake.notify_all();
        }
        loop {
            let stop_by = state.stop_by;
            if stop_by.is_some_and(|s| Instant::now() >= s) {
                return None;
            }
            let outbox = state.outbox.as_mut()?;
            let wait = match outbox.due_in(
                durable.max_records,
                durable.batch_timeout,
                stop_by.is_some(),
            ) {
                Some(wait) if wait.is_zero() => {
                    let batch = outbox.take(durable.max_records, super::MAX_BATCH_BYTES);
                    let losses = outbox.take_report();
                    if let Some(batch) = &batch {
                        state.in_flight = batch.count();
                    }
                    drop(state);
                    self.shared.account(losses, &describe);
                    if batch.is_some() {
                        return batch;
                    }
                    state = self.shared.lock();
                    continue;
                }
                Some(wait) => Some(wait),
                None if stop_by.is_some() => return None,
                None => None,
            };
            let until_stop = stop_by.map(|s| s.saturating_duration_since(Instant::now()));
            let wait = match (wait, until_stop) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            state = match wait {
                Some(wait) => {
                    self.shared
                        .wake
                        .wait_timeout(state, wait)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self
                    .shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    #[cfg(unix)]
    fn retire(&self, batch: &OutboxBatch) {
        let losses = self.shared.lock().outbox.as_mut().map(|outbox| {
            outbox.retire(batch);
            outbox.take_report()
        });
        self.shared
            .account(losses.unwrap_or_default(), &self.settings.describe);
    }

    /// Exports batches from the in-memory queue until the sink stops; reports what could not
    /// be delivered.
    fn run_from_memory(mut self) {
        let mut undelivered = 0u64;
        let mut done = 0;
        while let Some(batch) = self.shared.next(done) {
            done = batch.count;
            let resource = std::mem::take(&mut self.settings.resource);
            let outcome = self.export(&batch.records, &resource, false);
            self.settings.resource = resource;
            match outcome {
                Outcome::Delivered { rejected, why } => {
                    let counters = &self.shared.counters;
                    counters
                        .exported
                        .fetch_add(batch.count - rejected.min(batch.count), Ordering::Relaxed);
                    if rejected > 0 {
                        counters.rejected.fetch_add(rejected, Ordering::Relaxed);
                        self.lose(
                            rejected,
                            format!(
                                "{} rejected {rejected} record(s): {why}",
                                self.settings.describe
                            ),
                        );
                    } else {
                        self.recovered();
                    }
                }
                Outcome::Failed(why) => self.lose(batch.count, why),
                Outcome::Stopped => undelivered += batch.count,
            }
            self.shared.recycle(batch.records);
        }
        self.shared
            .counters
            .lost
            .fetch_add(undelivered, Ordering::Relaxed);
        let describe = &self.settings.describe;
        if undelivered > 0 {
            eprintln!(
                "tachylog: sink {describe}: {undelivered} record(s) could not be delivered before the logger stopped"
            );
        }
        if let Some((lost, why)) = self.failing.take() {
            eprintln!("tachylog: sink {describe}: {lost} record(s) were lost ({why})");
        }
    }

    fn lose(&mut self, count: u64, why: String) {
        self.shared
            .counters
            .lost
            .fetch_add(count, Ordering::Relaxed);
        match &mut self.failing {
            Some((lost, _)) => *lost += count,
            None => {
                eprintln!(
                    "tachylog: sink {} failed: {why}; its records are counted as lost until it recovers",
                    self.settings.describe
                );
                self.failing = Some((count, why));
            }
        }
    }

    /// A batch went through: if records were lost before, say so on stderr and to the
    /// collector, once.
    fn recovered(&mut self) {
        let Some((lost, why)) = self.failing.take() else {
            return;
        };
        let describe = self.settings.describe.clone();
        eprintln!(
            "tachylog: sink {describe} works again; {lost} record(s) were lost while it failed"
        );
        let message = format!("{lost} records lost while {describe} failed: {why}");
        let mut line = Line::new(Level::Warn, unix_nanos_now(), b"");
        line.message = &message;
        line.target = "tachylog";
        line.file = file!();
        line.line_number = line!();
        line.thread_name = "tachylog-otlp";
        line.thread_id = crate::current_thread_id();
        let mut notice = Vec::new();
        RecordEncoder::default().encode(&line, &mut notice);
        let resource = std::mem::take(&mut self.settings.resource);
        let outcome = self.export(&notice, &resource, false);
        self.settings.resource = resource;
        if !matches!(outcome, Outcome::Delivered { .. }) {
            // The loss is still unannounced: the next recovery announces it.
            self.failing = Some((lost, why));
        }
    }

    /// Sends one batch of encoded records under `resource`, retrying as the collector and the
    /// budget allow. `durable`: the records are on disk, so there is no budget (only the stop
    /// ends the retries), and a transport failure that no retry fixes (a certificate not
    /// trusted) waits too, for an operator to fix it, rather than costing the records.
    fn export(&mut self, records: &[u8], resource: &[u8], durable: bool) -> Outcome {
        encode::request(resource, &self.settings.scope, records, &mut self.body);
        if self.settings.gzip {
            self.compressed.clear();
            // The fastest level: at the default one, gzip alone held the exporter to 210,000
            // records/s on this project's 2-core machine (535,000 at this level, delivered
            // end to end: `tachylog-bench --only tachylog_otlp_durable --only throughput`).
            let mut gz =
                flate2::write::GzEncoder::new(&mut self.compressed, flate2::Compression::fast());
            // Writing into a Vec cannot fail.
            let _ = gz.write_all(&self.body);
            let _ = gz.finish();
        }
        let payload = if self.settings.gzip {
            &self.compressed
        } else {
            &self.body
        };
        let started = Instant::now();
        let give_up_at = instant_after(started, self.settings.max_retry_time);
        let mut backoff = BACKOFF_START;
        let mut attempts = 0u32;
        loop {
            let now = Instant::now();
            let stop_by = self.shared.stop_by();
            if stop_by.is_some_and(|s| now >= s) {
                return Outcome::Stopped;
            }
            let timeout = instant_after(now, self.settings.request_timeout);
            let deadline = stop_by.map_or(timeout, |s| s.min(timeout));
            attempts += 1;
            self.shared
                .counters
                .requests
                .fetch_add(1, Ordering::Relaxed);
            let describe = &self.settings.describe;
            let (why, retry_after) = match self.client.post(payload, deadline) {
                Ok(Response {
                    status: 200..=299,
                    body,
                    ..
                }) => {
                    self.retry_reported = false;
                    if let Some(since) = self.outage_since.take() {
                        if durable {
                            eprintln!(
                                "tachylog: sink {describe} works again after {:.1} s; {} \
                                 record(s) wait on disk to be sent",
                                since.elapsed().as_secs_f64(),
                                self.shared.on_disk()
                            );
                        }
                    }
                    let (rejected, why) = encode::partial_success(&body).unwrap_or_default();
                    return Outcome::Delivered {
                        rejected: rejected.max(0) as u64,
                        why,
                    };
                }
                Ok(r) if matches!(r.status, 429 | 502 | 503 | 504) => (
                    format!("{describe} answered HTTP {}{}", r.status, snippet(&r.body)),
                    r.retry_after,
                ),
                Ok(r) => {
                    return Outcome::Failed(format!(
                        "{describe} answered HTTP {} (not retryable){}",
                        r.status,
                        snippet(&r.body)
                    ))
                }
                Err(failure) if !failure.retryable && !durable => {
                    return Outcome::Failed(format!(
                        "{describe}: {} (not retryable)",
                        failure.message
                    ))
                }
                Err(failure) => (format!("{describe}: {}", failure.message), None),
            };
            if !self.retry_reported {
                self.retry_reported = true;
                self.outage_since = Some(started);
                if durable {
                    eprintln!(
                        "tachylog: sink {why}; its records wait on disk and are retried until it \
                         answers"
                    );
                } else {
                    eprintln!(
                        "tachylog: sink {why}; retrying for up to {:?} per batch",
                        self.settings.max_retry_time
                    );
                }
            }
            let delay = retry_after.unwrap_or_else(|| jitter(&mut self.rng, backoff));
            backoff = (backoff * 2).min(BACKOFF_MAX);
            // A collector's `Retry-After` may say anything, up to 2^64 - 1 seconds.
            let retry_at = instant_after(Instant::now(), delay);
            if retry_at > give_up_at && !durable {
                return Outcome::Failed(format!(
                    "{why}; gave up after {attempts} attempt(s) in {:.1} s (retry budget {:?})",
                    started.elapsed().as_secs_f64(),
                    self.settings.max_retry_time
                ));
            }
            self.shared.pause_until(retry_at);
        }
    }
}

/// A delay between half of `backoff` and all of it, so that many processes retrying after one
/// outage spread out. `rng` is xorshift64 state.
fn jitter(rng: &mut u64, backoff: Duration) -> Duration {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    let fraction = (*rng >> 11) as f64 / (1u64 << 53) as f64;
    backoff.mul_f64(0.5 + fraction / 2.0)
}

/// A seed for the jitter that differs between processes and between sinks.
pub(super) fn seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    (nanos ^ u64::from(std::process::id()) << 32) | 1
}

/// `: <body>` with the first bytes of an error response, control characters replaced.
fn snippet(body: &[u8]) -> String {
    if body.is_empty() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(SNIPPET)]);
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let more = if body.len() > SNIPPET { "..." } else { "" };
    format!(": {}{more}", text.trim())
}

fn unix_nanos_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as i64
}
