//! Formats records and hands them to the sinks: the back end's half that turns a record of a
//! ring (or a notice of its own, or a record recovered from a spool) into each sink's line.
//! Called by the worker's loop only (`worker.rs`), on the back end's thread.

use super::backtrace::BacktraceRing;
use super::clock::WallClock;
use super::scopes::{Released, Route, Scopes};
use crate::fields::wire::FieldWriter;
use crate::fields::{FieldValue, Fields};
use crate::format::pattern::{LineFormatter, Message, RecordView, SiteMessage};
use crate::format::Format;
use crate::frontend::limit::pending::Suppressed;
use crate::queue::registry::{ThreadInfo, ThreadQueue};
use crate::record::{
    CallSiteLayout, Decode, ScopeEvent, Site, TraceContext, CALL_SITE_PREFIX,
    KIND_CALL_SITE_SCOPED, KIND_DYNAMIC, KIND_DYNAMIC_SCOPED, KIND_SCOPE_EVENT,
};
use crate::sink::{Line, SinkSlot};
use crate::Level;
use std::mem::MaybeUninit;
use std::time::Duration;

/// One line buffer per [`Format`], plus one for coloured text.
const FORMATS: usize = 5;
const COLORED_TEXT: usize = 3;
/// The line of a sink with a shape of its own: formatted for that sink alone.
const SHAPED: usize = 4;

/// Formats records and hands them to the sinks.
pub(super) struct Output {
    formatter: LineFormatter,
    pub(super) sinks: Vec<SinkSlot>,
    pub(super) clock: WallClock,
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
    /// The request scopes' held records.
    scopes: Scopes,
    /// Every sink takes plain text lines only: a call-site record's line is laid out in one
    /// pass ([`LineFormatter::format_site`]), straight into the file's buffer when a file is
    /// the only sink.
    text_only: bool,
}

impl Output {
    pub(super) fn new(
        formatter: LineFormatter,
        sinks: Vec<SinkSlot>,
        clock: WallClock,
        backtrace: Option<BacktraceRing>,
    ) -> Self {
        let most_verbose_sink = sinks
            .iter()
            .map(|s| s.min_level())
            .max()
            .unwrap_or(Level::Error);
        let text_only = !sinks.is_empty() && sinks.iter().all(SinkSlot::takes_text_only);
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
            backtrace,
            scopes: Scopes::default(),
            text_only,
        };
        out.refresh_deadline();
        out
    }

    /// A record from a thread's ring: kept in the backtrace ring, or written (after the kept
    /// records, if its level triggers them).
    #[inline]
    pub(super) fn record(&mut self, queue: &ThreadQueue, body: &[MaybeUninit<u8>], kind: u32) {
        if kind >= KIND_CALL_SITE_SCOPED && self.scoped(queue, body, kind) {
            return;
        }
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
        self.decode_and_write(&queue.thread, body, kind, Origin::Live);
    }

    /// Writes the kept records, oldest first, marked, with their own timestamps.
    pub(super) fn dump_backtrace(&mut self) {
        let Some(ring) = &mut self.backtrace else {
            return;
        };
        let kept = ring.take();
        for record in &kept {
            self.decode_and_write(&record.thread, &record.body, record.kind, Origin::Backtrace);
        }
        if let Some(ring) = &mut self.backtrace {
            ring.recycle(kept);
        }
    }

    /// A request scope's event, or a record of a scope: applies the event, holds the record,
    /// or writes the scope's held records before the record that triggers them. Returns whether
    /// the frame is dealt with (an event, a held record).
    #[cold]
    #[inline(never)]
    fn scoped(&mut self, queue: &ThreadQueue, body: &[MaybeUninit<u8>], kind: u32) -> bool {
        if kind == KIND_SCOPE_EVENT {
            let bytes: [u8; ScopeEvent::ENCODED] = init(body.get(8..).unwrap_or(&[]));
            if let Some(released) = ScopeEvent::decode(&bytes).and_then(|e| self.scopes.event(e)) {
                self.write_released(released);
            }
            if std::mem::take(&mut self.scopes.overflowed) {
                self.backend_notice(
                    Level::Warn,
                    &format!(
                        "request scopes: more than {} open at once; the records of the scopes \
                         past that are written as if they had none",
                        super::scopes::MAX_OPEN_SCOPES
                    ),
                );
            }
            return true;
        }
        if self.scopes.is_empty() {
            return false;
        }
        let (Some(scope), Some(level)) = (scope_of(body, kind), level_of(body, kind)) else {
            return false;
        };
        match self.scopes.route(scope, level, &queue.thread, kind, body) {
            Route::Write => false,
            Route::Held => true,
            Route::WriteReleased => {
                let saved = self.widen_levels_for_release();
                self.decode_and_write(&queue.thread, body, kind, Origin::Live);
                self.restore_levels(saved);
                true
            }
            Route::Trigger => {
                let released = self.scopes.release(scope);
                self.write_released(released);
                false
            }
        }
    }

    /// Writes a scope's held records, oldest first, with their own timestamps, to every sink
    /// that takes their level, a sink with no level of its own taking them whatever the
    /// logger's filter (they were logged because a scope asked for them). A notice first
    /// counts the ones its bounds dropped.
    fn write_released(&mut self, released: Released) {
        if released.dropped > 0 {
            self.backend_notice(
                Level::Warn,
                &format!(
                    "request scope: {} held records dropped for its bounds; the {} most recent \
                     follow",
                    released.dropped,
                    released.records.len()
                ),
            );
        }
        if released.records.is_empty() {
            return;
        }
        let saved = self.widen_levels_for_release();
        for held in &released.records {
            self.decode_and_write(&held.thread, released.body(held), held.kind, Origin::Scope);
        }
        self.restore_levels(saved);
        self.scopes.recycle(released);
    }

    /// Gives each sink the level it takes released scope records at; returns what
    /// [`Output::restore_levels`] needs to undo it.
    fn widen_levels_for_release(&mut self) -> Level {
        for sink in &mut self.sinks {
            sink.swap_release_level();
        }
        std::mem::replace(&mut self.most_verbose_sink, Level::Trace)
    }

    fn restore_levels(&mut self, most_verbose_sink: Level) {
        for sink in &mut self.sinks {
            sink.swap_release_level();
        }
        self.most_verbose_sink = most_verbose_sink;
    }

    /// Writes the held records of the scopes still open (at shutdown, a fatal signal): whether
    /// their requests would have failed is not known, and a crash is when they matter most.
    pub(super) fn release_open_scopes(&mut self) {
        let released = self.scopes.release_all();
        if released.records.is_empty() && released.dropped == 0 {
            return;
        }
        self.backend_notice(
            Level::Warn,
            &format!(
                "request scopes: {} still open at shutdown; their {} held records follow",
                released.scopes,
                released.records.len()
            ),
        );
        self.write_released(released);
    }

    /// Decodes a record's header and writes it; a record from the backtrace ring is marked,
    /// and one from there or from a scope keeps its own timestamp (the column's monotonic
    /// clamp is for live records). Inlined into `record`,
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
        origin: Origin,
    ) {
        if body.len() < 16 {
            return;
        }
        // A live record's lines are its frame's in the spool's journal; any other line (a
        // kept or held record, a notice) is no frame's.
        #[cfg(all(unix, not(loom)))]
        let _line = match origin {
            Origin::Live => crate::queue::spool::journal::LineOf::current_frame(),
            Origin::Backtrace | Origin::Scope => crate::queue::spool::journal::LineOf::record(None),
        };
        let ts = u64::from_ne_bytes(init(&body[..8]));
        let unix_nanos = match origin {
            Origin::Live => self.wall_time(ts),
            Origin::Backtrace | Origin::Scope => self.clock.unix_nanos(ts),
        };
        let from_backtrace = origin == Origin::Backtrace;
        if let Some(layout) = CallSiteLayout::of_kind(kind) {
            if body.len() < layout.prefix() {
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
            let trace = if layout.traced {
                let at = CALL_SITE_PREFIX + layout.trace_offset();
                let encoded = &body[at..at + TraceContext::ENCODED];
                TraceContext::decode(&init::<{ TraceContext::ENCODED }>(encoded))
            } else {
                None
            };
            let args = &body[layout.prefix()..];
            // A binary log alone: the record's parts straight to its encoder.
            if let ([sink], None, false) = (&mut self.sinks[..], &trace, from_backtrace) {
                if sink.format() == Format::Binary {
                    let site_message = SiteMessage { site, decode, args };
                    sink.write_binary_site(thread, unix_nanos, &site_message);
                    return;
                }
            }
            self.write(&RecordView {
                unix_nanos,
                level: site.level,
                target: site.target,
                file: site.file,
                line: site.line,
                thread,
                message: Message::Site(SiteMessage { site, decode, args }),
                static_metadata: site.plain_metadata,
                backtrace: from_backtrace,
                recovered: false,
                trace,
            });
        } else if kind == KIND_DYNAMIC || kind == KIND_DYNAMIC_SCOPED {
            self.write_dynamic(thread, body, unix_nanos, from_backtrace);
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
    pub(super) fn backend_notice(&mut self, level: Level, message: &str) {
        let thread = self.backend_thread.clone();
        self.notice_on(&thread, level, message);
    }

    pub(super) fn notice(&mut self, queue: &ThreadQueue, level: Level, message: &str) {
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

    /// A rate-limited call site's skipped calls that no later call reported: a record at the
    /// site's level, target, file and line, with the count in `suppressed` like the site's own
    /// records, so that it goes wherever they go.
    #[cold]
    pub(super) fn suppressed(&mut self, found: &Suppressed, fields: &mut Vec<u8>) {
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
            level: found.level,
            target: found.target,
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
    #[inline(always)]
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
        self.write_to(record, To::Taking);
    }

    /// Writes a recovered record to the sinks that take its level, but those `skip` names
    /// (they hold it already).
    #[cfg(all(unix, not(loom)))]
    pub(super) fn write_recovered(&mut self, record: &RecordView<'_>, skip: &[bool]) {
        self.write_to(record, To::TakingBut(skip));
    }

    /// Formats `record` once per format its sinks use (the message once for all) and hands it
    /// to the sinks `to` names.
    #[inline(never)]
    fn write_to(&mut self, record: &RecordView<'_>, to: To<'_>) {
        let Output {
            formatter,
            sinks,
            message,
            fields,
            lines,
            text_only,
            ..
        } = self;
        if let (Message::Site(site_message), true, To::Taking) = (&record.message, *text_only, to) {
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
            let wanted = match to {
                To::Notice(only) => only == i,
                To::Taking => record.level <= sink.min_level(),
                To::TakingBut(skip) => {
                    record.level <= sink.min_level() && !skip.get(i).copied().unwrap_or(false)
                }
            };
            if !wanted {
                continue;
            }
            let format = sink.format();
            // The binary log encodes the record itself, without a line.
            if format == Format::Binary {
                sink.write_binary(record, !matches!(to, To::Notice(_)));
                continue;
            }
            if !rendered {
                rendered = true;
                formatter.render_message(&record.message, message, fields);
            }
            let shape = sink.shape();
            let slot = if shape.is_some() {
                SHAPED
            } else if sink.colored() {
                COLORED_TEXT
            } else {
                format as usize
            };
            let text = &mut lines[slot];
            if slot == SHAPED || !formatted[slot] {
                formatted[slot] = true;
                text.clear();
                match format {
                    Format::Text => {
                        formatter.format(record, message, fields, slot == COLORED_TEXT, text)
                    }
                    Format::Json => formatter.format_json(record, message, fields, shape, text),
                    Format::Logfmt => formatter.format_logfmt(record, message, fields, shape, text),
                    Format::Binary => {}
                }
            }
            let line = line_of(record, text, message, fields);
            match to {
                To::Notice(_) => sink.write_notice_line(&line),
                To::Taking | To::TakingBut(_) => sink.write_line(&line),
            }
        }
    }

    /// Lets go of scratch buffers a huge record grew past 1 MiB, so one huge record does not
    /// pin its memory for the rest of the run. Called after each batch of records and on every
    /// flush rather than per record: its checks were 1% of the back end's time.
    pub(super) fn release_huge_buffers(&mut self) {
        for text in self.lines.iter_mut().filter(|t| t.capacity() > 1 << 20) {
            *text = Vec::with_capacity(1024);
        }
        if self.message.capacity() > 1 << 20 {
            self.message = String::with_capacity(1024);
        }
    }

    pub(super) fn flush(&mut self) {
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
                To::Notice(i),
            );
            self.sinks[i].flush();
        }
    }

    pub(super) fn reopen(&mut self) {
        for sink in self.sinks.iter_mut() {
            sink.flush();
            sink.reopen();
        }
        self.refresh_deadline();
    }

    /// Runs the timers that are due at `now` (back-end ticks); returns how long until the next.
    pub(super) fn run_timers(&mut self, now: u64) -> Option<Duration> {
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

    pub(super) fn refresh_deadline(&mut self) {
        self.deadline = self.sinks.iter().filter_map(|s| s.next_deadline()).min();
    }
}

/// The sinks a record goes to.
#[derive(Clone, Copy)]
enum To<'a> {
    /// Every sink whose level takes it.
    Taking,
    /// Those but the ones marked (a recovered record some sinks hold already).
    #[cfg_attr(not(all(unix, not(loom))), allow(dead_code))]
    TakingBut(&'a [bool]),
    /// One sink, whatever its level, uncounted: tachylog's notice to it.
    Notice(usize),
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

/// Where a record being written comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Straight from a thread's ring.
    Live,
    /// The backtrace ring: marked `[backtrace]`.
    Backtrace,
    /// A request scope's held records.
    Scope,
}

/// The level of a record, read from its header without decoding it.
fn level_of(body: &[MaybeUninit<u8>], kind: u32) -> Option<Level> {
    if body.len() < 16 {
        return None;
    }
    if CallSiteLayout::of_kind(kind).is_some() {
        let site_addr = usize::from_ne_bytes(init(&body[8..16]));
        // SAFETY: as in `Output::decode_and_write`.
        let site: &'static Site = unsafe { &*(site_addr as *const Site) };
        Some(site.level)
    } else if kind == KIND_DYNAMIC || kind == KIND_DYNAMIC_SCOPED {
        Level::from_u8(u64::from_ne_bytes(init(&body[8..16])) as u8)
    } else {
        None
    }
}

/// The request scope a record was logged in, if any.
fn scope_of(body: &[MaybeUninit<u8>], kind: u32) -> Option<u64> {
    if kind == KIND_DYNAMIC_SCOPED {
        let mut pieces = DynamicFields {
            rest: body.get(24..)?,
        };
        for _ in 0..5 {
            pieces.bytes()?;
        }
        return Some(u64::from_ne_bytes(pieces.bytes()?.try_into().ok()?));
    }
    let layout = CallSiteLayout::of_kind(kind)?;
    let at = CALL_SITE_PREFIX;
    (layout.scoped && body.len() >= at + 8).then(|| u64::from_ne_bytes(init(&body[at..at + 8])))
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
