//! The back end's thread: drains the rings in timestamp order, formats, writes to the sinks,
//! flushes when the queues run empty (and at least every flush interval), answers `flush()`,
//! and sleeps when there is nothing to do.
//!
//! Idle strategy: a server pays for the back end's CPU per second, not per record, so the back
//! end does not poll. When the queues run empty it writes what it formatted (one `write(2)` per
//! sink), announces its sleep in [`GATE`]'s `backend_sleeping` and parks until the next drain is
//! due: one flush interval later (100 ms by default), or earlier for a sink's timer. Producers
//! wake it sooner only when a ring passes a quarter full (see `frontend::producer`), and a ring
//! that keeps doing so grows instead; `flush()`, a blocked producer, an oversize record, a
//! signal and shutdown wake it at once. So at moderate rates it wakes about ten times a second
//! and handles a few hundred records per wake, and under sustained load it never sleeps. The
//! price is latency to disk: a record reaches the file within the flush interval, not at once
//! (`Builder::flush_interval` trades CPU for it).

use super::backtrace::{BacktraceConfig, BacktraceRing};
use super::clock::{WallClock, RESYNC_INTERVAL};
use super::merge::{DrainMode, Merger, SLACK, STALL_LIMIT};
use super::stats;
use crate::fields::wire::FieldWriter;
use crate::fields::{FieldValue, Fields};
use crate::format::pattern::{LineFormatter, Message, RecordView, SiteMessage};
use crate::format::Format;
use crate::frontend::gate::GATE;
use crate::frontend::limit::pending::{self as rate_limits, Suppressed};
use crate::queue::control::{self, Control};
use crate::queue::registry::{ThreadInfo, ThreadQueue, REGISTRY};
use crate::record::{
    Decode, Site, TraceContext, CALL_SITE_PREFIX, KIND_CALL_SITE, KIND_CALL_SITE_TRACED,
    KIND_DYNAMIC, TRACED_PREFIX,
};
use crate::sink::{Line, SinkSlot};
use crate::Level;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// When the back end looks for rate-limited calls that no later call reported (see
/// `frontend::limit::pending`).
struct LimitScan {
    /// The clock at the previous scan: a period that ended before it with no call passing
    /// since has ended for good.
    cutoff: u64,
    /// The clock at which the next scan after a drain is due.
    next: u64,
    /// Ticks between scans after drains: the flush interval.
    interval: u64,
    found: Vec<Suppressed>,
    fields: Vec<u8>,
}

impl LimitScan {
    fn new(interval: u64) -> Self {
        let now = crate::frontend::clock::now();
        LimitScan {
            cutoff: now,
            next: now.saturating_add(interval),
            interval,
            found: Vec::new(),
            fields: Vec::new(),
        }
    }

    /// Writes a summary for each call site with such calls (every one with `force`); returns
    /// whether it wrote any.
    fn run(&mut self, out: &mut Output, force: bool) -> bool {
        let now = crate::frontend::clock::now();
        rate_limits::collect(self.cutoff, force, &mut self.found);
        self.cutoff = now;
        self.next = now.saturating_add(self.interval);
        let wrote = !self.found.is_empty();
        for found in self.found.drain(..) {
            out.suppressed(&found, &mut self.fields);
        }
        wrote
    }
}

/// One line buffer per [`Format`], plus one for coloured text.
const FORMATS: usize = 4;
const COLORED_TEXT: usize = 3;

/// Records formatted per drain before the worker checks for flush requests again.
const BATCH: usize = 4096;

pub(crate) struct Worker {
    pub(crate) control: std::sync::Arc<Control>,
    pub(crate) merger: Merger,
    pub(crate) formatter: LineFormatter,
    pub(crate) sinks: Vec<SinkSlot>,
    pub(crate) clock: WallClock,
    pub(crate) flush_interval: Duration,
    pub(crate) backtrace: Option<BacktraceConfig>,
    /// The spool's cuts, when `Builder::spool` installed one.
    #[cfg(all(unix, not(loom)))]
    pub(crate) spool: Option<super::spool_cut::SpoolCut>,
}

/// The spool's cuts, or nothing where there is no spool.
#[cfg(all(unix, not(loom)))]
type Cuts = Option<super::spool_cut::SpoolCut>;
#[cfg(not(all(unix, not(loom))))]
type Cuts = Option<std::convert::Infallible>;

/// After the sinks were flushed: commits a cut if records went to them since the last one.
#[allow(unused_variables)]
fn cut(cuts: &mut Cuts, merger: &mut Merger) {
    #[cfg(all(unix, not(loom)))]
    if let Some(cuts) = cuts {
        if cuts.pending() {
            cuts.commit(merger);
        }
    }
}

/// Notes that records went to the sinks (a cut is due after the next flush).
#[allow(unused_variables)]
fn note_written(cuts: &mut Cuts) {
    #[cfg(all(unix, not(loom)))]
    if let Some(cuts) = cuts {
        cuts.records_written();
    }
}

/// Publishes the clock's calibration to the spool, if there is one.
#[allow(unused_variables)]
fn publish_clock(cuts: &Cuts, clock: &WallClock) {
    #[cfg(all(unix, not(loom)))]
    if let Some(cuts) = cuts {
        cuts.publish_clock(clock);
    }
}

/// Formats records and hands them to the sinks.
struct Output {
    formatter: LineFormatter,
    sinks: Vec<SinkSlot>,
    clock: WallClock,
    /// The current record's message, unescaped, shared by every format.
    message: String,
    /// The current record's structured fields, shared by every format.
    fields: Fields,
    /// The current record's line in each [`Format`], formatted only if a sink uses it.
    lines: [Vec<u8>; FORMATS],
    /// The last time written, to keep the column monotonic across small clock resyncs.
    last_unix_nanos: i64,
    most_verbose_sink: Level,
    /// The earliest [`Sink::next_deadline`](crate::Sink::next_deadline) of the sinks.
    deadline: Option<i64>,
    /// The back end's own thread, for the lines it writes itself (sink recovery notices).
    backend_thread: ThreadInfo,
    /// The kept records, with [`Builder::backtrace`](crate::Builder::backtrace).
    backtrace: Option<BacktraceRing>,
    /// Every sink takes plain text lines only: a call-site record's line is laid out in one
    /// pass ([`LineFormatter::format_site`]), straight into the file's buffer when a file is
    /// the only sink.
    text_only: bool,
}

impl Output {
    /// A record from a thread's ring: kept in the backtrace ring, or written (after the kept
    /// records, if its level triggers them).
    #[inline]
    fn record(&mut self, queue: &ThreadQueue, body: &[MaybeUninit<u8>], kind: u32) {
        if let Some(ring) = &mut self.backtrace {
            if let Some(level) = level_of(body, kind) {
                if ring.keeps(level) {
                    ring.keep(&queue.thread, kind, body);
                    return;
                }
                if ring.triggered_by(level) {
                    self.dump_backtrace();
                }
            }
        }
        self.decode_and_write(&queue.thread, body, kind, false);
    }

    /// Writes the kept records, oldest first, marked, with their own timestamps.
    fn dump_backtrace(&mut self) {
        let Some(ring) = &mut self.backtrace else {
            return;
        };
        let kept = ring.take();
        for record in &kept {
            self.decode_and_write(&record.thread, &record.body, record.kind, true);
        }
        if let Some(ring) = &mut self.backtrace {
            ring.recycle(kept);
        }
    }

    /// Decodes a record's header and writes it; `from_backtrace` marks it and keeps its own
    /// timestamp (the column's monotonic clamp is for live records). Inlined into `record`,
    /// with the call-site path of `write`, so a call-site record into one file goes from the
    /// merge loop to the formatter through no call of ours: three nested calls there cost 5%
    /// of the back end's instructions (callgrind, `tachylog-bench --only tachylog,backend_static`).
    /// The dynamic records' decoding stays out of line.
    #[inline(always)]
    fn decode_and_write(
        &mut self,
        thread: &ThreadInfo,
        body: &[MaybeUninit<u8>],
        kind: u32,
        from_backtrace: bool,
    ) {
        if body.len() < 16 {
            return;
        }
        let ts = u64::from_ne_bytes(init(&body[..8]));
        let unix_nanos = if from_backtrace {
            self.clock.unix_nanos(ts)
        } else {
            self.wall_time(ts)
        };
        match kind {
            KIND_CALL_SITE | KIND_CALL_SITE_TRACED => {
                if body.len() < CALL_SITE_PREFIX {
                    return;
                }
                let site_addr = usize::from_ne_bytes(init(&body[8..16]));
                let decode_addr = usize::from_ne_bytes(init(&body[16..CALL_SITE_PREFIX]));
                // SAFETY: call-site records are written only by `log_record`, which stores the
                // addresses of a `&'static Site` and of a `&'static Decode`.
                let (site, decode): (&'static Site, &'static Decode) = unsafe {
                    (
                        &*(site_addr as *const Site),
                        &*(decode_addr as *const Decode),
                    )
                };
                if site.level > self.most_verbose_sink {
                    return;
                }
                let (trace, args) = if kind == KIND_CALL_SITE_TRACED {
                    if body.len() < TRACED_PREFIX {
                        return;
                    }
                    let encoded = &body[CALL_SITE_PREFIX..CALL_SITE_PREFIX + TraceContext::ENCODED];
                    (
                        TraceContext::decode(&init::<{ TraceContext::ENCODED }>(encoded)),
                        &body[TRACED_PREFIX..],
                    )
                } else {
                    (None, &body[CALL_SITE_PREFIX..])
                };
                self.write(&RecordView {
                    unix_nanos,
                    level: site.level,
                    target: site.target,
                    file: site.file,
                    line: site.line,
                    thread,
                    message: Message::Site(SiteMessage { site, decode, args }),
                    static_metadata: true,
                    backtrace: from_backtrace,
                    recovered: false,
                    trace,
                });
            }
            KIND_DYNAMIC => self.write_dynamic(thread, body, unix_nanos, from_backtrace),
            _ => {}
        }
    }

    /// Decodes and writes a dynamic record (one whose metadata was not static: `log` and
    /// `tracing` records).
    #[inline(never)]
    fn write_dynamic(
        &mut self,
        thread: &ThreadInfo,
        body: &[MaybeUninit<u8>],
        unix_nanos: i64,
        from_backtrace: bool,
    ) {
        let mut fields = DynamicFields { rest: &body[8..] };
        let (Some(level), Some(line), Some(target), Some(file), Some(message)) = (
            fields.u64(),
            fields.u64(),
            fields.text(),
            fields.text(),
            fields.text(),
        ) else {
            return;
        };
        let encoded_fields = fields.bytes().unwrap_or(&[]);
        let trace = fields.bytes().and_then(TraceContext::decode);
        self.write(&RecordView {
            unix_nanos,
            level: Level::from_u8(level as u8).unwrap_or(Level::Error),
            target: &target,
            file: &file,
            line: line as u32,
            thread,
            message: Message::Dynamic {
                text: &message,
                fields: encoded_fields,
            },
            static_metadata: false,
            backtrace: from_backtrace,
            recovered: false,
            trace,
        });
    }

    /// A record of the back end's own, on its thread.
    #[cfg(all(unix, not(loom)))]
    fn backend_notice(&mut self, level: Level, message: &str) {
        let thread = self.backend_thread.clone();
        self.notice_on(&thread, level, message);
    }

    fn notice(&mut self, queue: &ThreadQueue, level: Level, message: &str) {
        self.notice_on(&queue.thread, level, message);
    }

    /// A record of tachylog's own, shown on `thread`.
    fn notice_on(&mut self, thread: &ThreadInfo, level: Level, message: &str) {
        let unix_nanos = self.wall_time(crate::frontend::clock::now());
        self.write(&RecordView {
            unix_nanos,
            level,
            target: "tachylog",
            file: file!(),
            line: line!(),
            thread,
            message: Message::Text(message),
            static_metadata: true,
            backtrace: false,
            recovered: false,
            trace: None,
        });
    }

    /// A rate-limited call site's skipped calls that no later call reported: a WARN record at
    /// the site's file and line, with the count in `suppressed` like the site's own records.
    #[cold]
    fn suppressed(&mut self, found: &Suppressed, fields: &mut Vec<u8>) {
        fields.clear();
        let mut writer = FieldWriter::new(fields);
        writer.value("suppressed", FieldValue::U64(found.calls));
        writer.value("limit", FieldValue::Str(found.limit));
        let at = found.at;
        let message = format!(
            "rate limit summary: {} calls suppressed at {}:{}:{} ({}), not reported by a later call",
            found.calls,
            at.file(),
            at.line(),
            at.column(),
            found.limit
        );
        let unix_nanos = self.wall_time(crate::frontend::clock::now());
        let thread = self.backend_thread.clone();
        self.write(&RecordView {
            unix_nanos,
            level: Level::Warn,
            target: "tachylog",
            file: at.file(),
            line: at.line(),
            thread: &thread,
            message: Message::Dynamic {
                text: &message,
                fields: &fields[..],
            },
            static_metadata: false,
            backtrace: false,
            recovered: false,
            trace: None,
        });
    }

    fn wall_time(&mut self, ts: u64) -> i64 {
        let mut unix_nanos = self.clock.unix_nanos(ts);
        // A resync can move the conversion back by microseconds; keep the column monotonic
        // then. A real step back of the wall clock (more than 10 ms) is shown as it is.
        if unix_nanos < self.last_unix_nanos && self.last_unix_nanos - unix_nanos < 10_000_000 {
            unix_nanos = self.last_unix_nanos;
        }
        self.last_unix_nanos = unix_nanos;
        unix_nanos
    }

    /// Writes `record` to the sinks that take its level. When the only sink takes plain text
    /// and has a buffer of its own (a file), a call-site record's line is formatted straight
    /// into that buffer, here, inlined; anything else goes to `write_to`.
    #[inline]
    fn write(&mut self, record: &RecordView<'_>) {
        let Output {
            formatter,
            sinks,
            message,
            fields,
            text_only,
            ..
        } = self;
        if let (Message::Site(site_message), true, [sink]) =
            (&record.message, *text_only, &mut sinks[..])
        {
            let in_place = sink.write_text_in_place(record.level, |buffer| {
                formatter.format_site(record, site_message, fields, message, buffer)
            });
            if in_place {
                return;
            }
        }
        // A binary log alone: straight to its encoder, which checks the level itself (the
        // sinks loop of `write_to` was a tenth of the binary back end's time).
        if let [sink] = &mut sinks[..] {
            if sink.format() == Format::Binary {
                sink.write_binary(record, true);
                return;
            }
        }
        self.write_to(record, None);
    }

    /// Formats `record` once per format its sinks use (the message once for all) and hands it
    /// to every sink whose level takes it, or, for a notice, to sink `only` whatever its level.
    #[inline(never)]
    fn write_to(&mut self, record: &RecordView<'_>, only: Option<usize>) {
        let Output {
            formatter,
            sinks,
            message,
            fields,
            lines,
            text_only,
            ..
        } = self;
        if let (Message::Site(site_message), true, None) = (&record.message, *text_only, only) {
            // Several sinks, or one without a buffer of its own: the line is formatted once.
            let text = &mut lines[Format::Text as usize];
            text.clear();
            formatter.format_site(record, site_message, fields, message, text);
            for sink in sinks
                .iter_mut()
                .filter(|sink| record.level <= sink.min_level())
            {
                sink.write_line(&line_of(record, text, "", fields));
            }
            return;
        }
        let mut rendered = false;
        let mut formatted = [false; FORMATS];
        for (i, sink) in sinks.iter_mut().enumerate() {
            let wanted = match only {
                Some(only) => only == i,
                None => record.level <= sink.min_level(),
            };
            if !wanted {
                continue;
            }
            let format = sink.format();
            // The binary log encodes the record itself, without a line.
            if format == Format::Binary {
                sink.write_binary(record, only.is_none());
                continue;
            }
            if !rendered {
                rendered = true;
                formatter.render_message(&record.message, message, fields);
            }
            let slot = if sink.colored() {
                COLORED_TEXT
            } else {
                format as usize
            };
            let text = &mut lines[slot];
            if !formatted[slot] {
                formatted[slot] = true;
                text.clear();
                match format {
                    Format::Text => {
                        formatter.format(record, message, fields, slot == COLORED_TEXT, text)
                    }
                    Format::Json => formatter.format_json(record, message, fields, text),
                    Format::Logfmt => formatter.format_logfmt(record, message, fields, text),
                    Format::Binary => {}
                }
            }
            let line = line_of(record, text, message, fields);
            match only {
                Some(_) => sink.write_notice_line(&line),
                None => sink.write_line(&line),
            }
        }
    }

    /// Lets go of scratch buffers a huge record grew past 1 MiB, so one huge record does not
    /// pin its memory for the rest of the run. Called after each batch of records and on every
    /// flush rather than per record: its checks were 1% of the back end's time.
    fn release_huge_buffers(&mut self) {
        for text in self.lines.iter_mut().filter(|t| t.capacity() > 1 << 20) {
            *text = Vec::with_capacity(1024);
        }
        if self.message.capacity() > 1 << 20 {
            self.message = String::with_capacity(1024);
        }
    }

    fn flush(&mut self) {
        self.release_huge_buffers();
        for sink in self.sinks.iter_mut() {
            sink.flush();
        }
        self.write_recovery_notices();
        // Flushing may have changed what a sink waits for (a syslog connection found broken
        // wants a reconnection timer).
        self.refresh_deadline();
    }

    /// A sink that works again gets one WARN line saying how many records it lost and why.
    #[cold]
    fn write_recovery_notices(&mut self) {
        for i in 0..self.sinks.len() {
            let Some(message) = self.sinks[i].take_notice() else {
                continue;
            };
            let unix_nanos = self.wall_time(crate::frontend::clock::now());
            let thread = self.backend_thread.clone();
            self.write_to(
                &RecordView {
                    unix_nanos,
                    level: Level::Warn,
                    target: "tachylog",
                    file: file!(),
                    line: line!(),
                    thread: &thread,
                    message: Message::Text(&message),
                    static_metadata: true,
                    backtrace: false,
                    recovered: false,
                    trace: None,
                },
                Some(i),
            );
            self.sinks[i].flush();
        }
    }

    fn reopen(&mut self) {
        for sink in self.sinks.iter_mut() {
            sink.flush();
            sink.reopen();
        }
        self.refresh_deadline();
    }

    /// Runs the timers that are due at `now` (back-end ticks); returns how long until the next.
    fn run_timers(&mut self, now: u64) -> Option<Duration> {
        let deadline = self.deadline?;
        let wall_now = self.clock.unix_nanos(now);
        if wall_now >= deadline {
            for sink in self.sinks.iter_mut() {
                if sink.next_deadline().is_some_and(|d| wall_now >= d) {
                    sink.tick(wall_now);
                }
            }
            self.refresh_deadline();
        }
        let wall_now = self.clock.unix_nanos(crate::frontend::clock::now());
        self.deadline
            .map(|d| Duration::from_nanos(d.saturating_sub(wall_now).max(0) as u64))
    }

    fn refresh_deadline(&mut self) {
        self.deadline = self.sinks.iter().filter_map(|s| s.next_deadline()).min();
    }
}

/// What a sink is given of `record`: its `text` in the sink's format, and its message and fields.
fn line_of<'a>(
    record: &'a RecordView<'_>,
    text: &'a [u8],
    message: &'a str,
    fields: &'a Fields,
) -> Line<'a> {
    Line {
        level: record.level,
        unix_nanos: record.unix_nanos,
        text,
        message,
        target: record.target,
        file: record.file,
        line_number: record.line,
        thread_name: &record.thread.name,
        thread_id: record.thread.id,
        fields,
        trace: record.trace,
    }
}

/// The level of a record, read from its header without decoding it.
fn level_of(body: &[MaybeUninit<u8>], kind: u32) -> Option<Level> {
    if body.len() < 16 {
        return None;
    }
    match kind {
        KIND_CALL_SITE | KIND_CALL_SITE_TRACED => {
            let site_addr = usize::from_ne_bytes(init(&body[8..16]));
            // SAFETY: as in `Output::decode_and_write`.
            let site: &'static Site = unsafe { &*(site_addr as *const Site) };
            Some(site.level)
        }
        KIND_DYNAMIC => Level::from_u8(u64::from_ne_bytes(init(&body[8..16])) as u8),
        _ => None,
    }
}

/// Reads the run-time fields of a dynamic record, tolerating truncation.
struct DynamicFields<'a> {
    rest: &'a [MaybeUninit<u8>],
}

impl<'a> DynamicFields<'a> {
    fn u64(&mut self) -> Option<u64> {
        if self.rest.len() < 8 {
            return None;
        }
        let v = u64::from_ne_bytes(init(&self.rest[..8]));
        self.rest = &self.rest[8..];
        Some(v)
    }

    /// A length-prefixed text; the producer copied it from a `&str`, so it is borrowed as is
    /// (a damaged record is shown lossily rather than dropped).
    fn text(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        self.bytes().map(String::from_utf8_lossy)
    }

    /// A length-prefixed byte string: a text, or the encoded structured fields.
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.u64()? as usize;
        if self.rest.len() < len {
            return None;
        }
        let (bytes, rest) = self.rest.split_at(len);
        self.rest = rest;
        // SAFETY: dynamic records are written whole from initialised byte slices by
        // `log_dynamic`; `MaybeUninit<u8>` has the layout of `u8`.
        Some(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const u8, bytes.len()) })
    }
}

fn init<const N: usize>(bytes: &[MaybeUninit<u8>]) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, b) in out.iter_mut().zip(bytes) {
        // SAFETY: record headers (timestamp, site address, lengths) are always fully written.
        *o = unsafe { b.assume_init() };
    }
    out
}

impl Worker {
    /// The worker thread's body. Returns when the guard asks it to shut down, after draining and
    /// flushing everything.
    pub(crate) fn run(self) {
        control::mark_backend_thread();
        let Worker {
            control,
            mut merger,
            formatter,
            sinks,
            clock,
            flush_interval,
            backtrace,
            #[cfg(all(unix, not(loom)))]
            spool,
        } = self;
        #[cfg(all(unix, not(loom)))]
        let mut cuts: Cuts = spool;
        #[cfg(all(unix, not(loom)))]
        if cuts.is_some() {
            merger.hold_spooled();
        }
        #[cfg(not(all(unix, not(loom))))]
        let mut cuts: Cuts = None;
        let most_verbose_sink = sinks
            .iter()
            .map(|s| s.min_level())
            .max()
            .unwrap_or(Level::Error);
        let mut out = Output {
            formatter,
            sinks,
            clock,
            message: String::with_capacity(1024),
            fields: Fields::new(),
            lines: Default::default(),
            last_unix_nanos: i64::MIN,
            most_verbose_sink,
            deadline: None,
            backend_thread: ThreadInfo::current(),
            backtrace: backtrace.map(BacktraceRing::new),
            text_only: false,
        };
        out.text_only = !out.sinks.is_empty() && out.sinks.iter().all(SinkSlot::takes_text_only);
        let mut dumped_up_to = 0u64;
        out.refresh_deadline();
        let mut reopened_up_to = 0u64;
        let mut generation = usize::MAX;
        let mut flushed_up_to = 0u64;
        let mut last_flush = Instant::now();
        let mut last_resync = Instant::now();
        let mut dirty = false;
        // Whether the sinks had their `before_exit`: once, as the process ends.
        let mut gave_last_chance = false;
        let mut limits = LimitScan::new(out.clock.ticks_for(flush_interval));
        publish_clock(&cuts, &out.clock);
        loop {
            // Bench-only hold (`__private::hold_backend`): no drain, no flush until released;
            // a shutdown ends it.
            if control::backend_held() && !control.shutdown.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_micros(100));
                continue;
            }
            // Read the clock, then adopt new queues: see `Merger::drain` for why in this order.
            let now = crate::frontend::clock::now();
            let current = REGISTRY.generation();
            if current != generation {
                generation = current;
                merger.adopt(REGISTRY.adopt());
            }
            if last_resync.elapsed() >= RESYNC_INTERVAL {
                out.clock.resync();
                publish_clock(&cuts, &out.clock);
                last_resync = Instant::now();
            }
            #[cfg(all(unix, not(loom)))]
            if let Some(warning) = crate::queue::spool::take_warning() {
                out.backend_notice(Level::Warn, &warning);
            }
            let until_timer = out.run_timers(now);
            let flush_target = control.flush.requested();
            // Read after the ticket: a halt and an exit are stored before their ticket is
            // requested.
            let halting = control.halt.load(Ordering::SeqCst);
            let exiting = control.exiting.load(Ordering::SeqCst);
            let shutting_down = control.shutdown.load(Ordering::Acquire);
            if flush_target > flushed_up_to || shutting_down {
                // Everything published before now, by every thread, then the sinks.
                merger.adopt(REGISTRY.adopt());
                generation = REGISTRY.generation();
                merger.snapshot();
                while merger
                    .drain(
                        crate::frontend::clock::now(),
                        DrainMode::UntilSnapshot,
                        BATCH,
                        |q, body, kind| out.record(q, body, kind),
                    )
                    .emitted
                    > 0
                {
                    note_written(&mut cuts);
                    out.release_huge_buffers();
                    if merger.has_held() {
                        // The spooled rings are not released until their records are in the
                        // files: a cut per batch keeps their producers going.
                        out.flush();
                        cut(&mut cuts, &mut merger);
                    }
                }
                merger.report_drops(|q, n| report_drop(&mut out, q, n));
                // Skipped calls that no later call reported, up to now: `flush()`, shutdown and
                // a signal's drain leave none behind.
                limits.run(&mut out, true);
                // `dump_backtrace()` asks for its dump, then a flush: the records logged before
                // it are in the ring by now.
                let dump_target = control.backtrace_dump.load(Ordering::SeqCst);
                if dump_target != dumped_up_to {
                    dumped_up_to = dump_target;
                    out.dump_backtrace();
                }
                out.flush();
                cut(&mut cuts, &mut merger);
                // `reopen()` requests a reopen, then a flush: everything logged before it went
                // to the old files, and it returns once the new ones are open.
                reopen_if_requested(&control, &mut reopened_up_to, &mut out);
                dirty = false;
                last_flush = Instant::now();
                if exiting && !gave_last_chance {
                    gave_last_chance = true;
                    let deadline = Instant::now() + control::EXIT_DELIVERY_LIMIT;
                    for sink in out.sinks.iter_mut() {
                        sink.before_exit(deadline);
                    }
                }
                if halting {
                    // Nothing may be written between this flush and the process's death.
                    control.flush.serve(flush_target);
                    control.flush.close();
                    halt_until_shutdown(&control);
                    return;
                }
                if flush_target > flushed_up_to {
                    flushed_up_to = flush_target;
                    control.flush.serve(flushed_up_to);
                }
                if shutting_down {
                    break;
                }
                continue;
            }
            let drained = merger.drain(now, DrainMode::Ordered, BATCH, |q, body, kind| {
                out.record(q, body, kind)
            });
            out.release_huge_buffers();
            merger.report_drops(|q, n| report_drop(&mut out, q, n));
            if now >= limits.next && limits.run(&mut out, false) {
                dirty = true;
            }
            if drained.emitted > 0 {
                dirty = true;
                note_written(&mut cuts);
                // Writing may have moved a sink to another file, with another deadline.
                out.refresh_deadline();
                // The spooled rings are not released until their records are in the files:
                // a cut per batch keeps their producers going.
                if last_flush.elapsed() >= flush_interval || merger.has_held() {
                    out.flush();
                    cut(&mut cuts, &mut merger);
                    dirty = false;
                    last_flush = Instant::now();
                }
                continue;
            }
            if drained.held_back {
                // Another thread is mid-call; its record is microseconds away.
                std::thread::yield_now();
                continue;
            }
            // The queues ran empty: hand what we have to the sinks.
            if dirty {
                out.flush();
                cut(&mut cuts, &mut merger);
                dirty = false;
                last_flush = Instant::now();
            }
            reopen_if_requested(&control, &mut reopened_up_to, &mut out);
            merger.reap();
            // Announce the sleep, then look for what must not wait for it (SeqCst both sides: a
            // request stored after our look rings the doorbell, which ends or skips the sleep).
            // Records do not count: they wait for the next drain.
            GATE.backend_sleeping.store(true, Ordering::SeqCst);
            let pending = control.flush.requested() > flushed_up_to
                || control.reopen_requested.load(Ordering::SeqCst) != reopened_up_to
                || control.shutdown.load(Ordering::SeqCst);
            if !pending {
                stats::record_backend_cpu();
                // Wake at the next sink deadline (a file period boundary) when it comes before
                // the flush interval, so rotation happens on time with no traffic.
                control::sleep_until_woken(
                    until_timer.map_or(flush_interval, |t| t.min(flush_interval)),
                );
                stats::count_wakeup();
            }
            GATE.backend_sleeping.store(false, Ordering::Relaxed);
        }
        out.flush();
        cut(&mut cuts, &mut merger);
        #[cfg(all(unix, not(loom)))]
        if let Some(cuts) = cuts {
            cuts.finish();
        }
        REGISTRY.give_back(merger.into_queues());
        stats::backend_ended();
    }
}

/// After a halting drain: the process is dying of a signal. Producers that keep logging wait
/// (their rings fill) or drop as their `OnFull` says; should the signal not end the process
/// after all, the guard's drop still finds a worker to join.
fn halt_until_shutdown(control: &Control) {
    while !control.shutdown.load(Ordering::Acquire) {
        control::sleep_until_woken(Duration::from_millis(100));
    }
}

/// Reopens every sink if a reopen was requested since the last one served.
fn reopen_if_requested(control: &Control, reopened_up_to: &mut u64, out: &mut Output) {
    let target = control.reopen_requested.load(Ordering::SeqCst);
    if target != *reopened_up_to {
        *reopened_up_to = target;
        out.reopen();
    }
}

fn report_drop(out: &mut Output, queue: &ThreadQueue, dropped: u64) {
    let message = format!(
        "{dropped} records dropped: this thread's queue was full (OnFull::Drop, max_block, or logging from the back end) or no back end was running"
    );
    out.notice(queue, Level::Warn, &message);
}

/// Builds the merger with tolerances converted to ticks.
pub(crate) fn new_merger(clock: &WallClock) -> Merger {
    Merger::new(clock.ticks_for(SLACK), clock.ticks_for(STALL_LIMIT))
}
