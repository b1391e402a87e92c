//! Destinations of formatted lines, one file per kind. Sinks run on the back end's thread only:
//! nothing here is ever called from a log call, so a sink may block, allocate and make system
//! calls without slowing the application down (until the rings fill up).
//!
//! Layer 5 (see `ARCHITECTURE.md`): imports layers 1 to 4 (formats for syslog and OTLP); never
//! the worker, the hooks or the builder. Nothing above calls a sink by name: what a sink needs
//! from the core (a last chance to deliver at exit, keeping its own threads' records out,
//! counting one dropped record) is a public capability any third-party sink has too. The OTLP
//! sink uses nothing else (`tests/imports_only_go_down.rs` checks it); the file sinks also take
//! the sealed fast path (`Sink::text_buffer`) and syslog shares the text formats' time cache
//! and escaping.

pub(crate) mod append;
mod background_write;
mod console;
#[cfg(feature = "testing")]
mod fault;
mod file;
#[cfg(all(feature = "journald", target_os = "linux"))]
mod journald;
#[cfg(feature = "otlp")]
mod otlp;
pub(crate) mod outbox;
#[cfg(feature = "rolling")]
mod rolling;
#[cfg(feature = "syslog")]
mod syslog;

#[cfg(feature = "color")]
pub use console::ColorChoice;
#[cfg(feature = "color")]
pub(crate) use console::{is_terminal, use_color};
pub use console::{Stderr, Stdout};
#[cfg(feature = "testing")]
pub use fault::{FaultSink, Faults};
pub use file::FileSink;
#[cfg(all(feature = "journald", target_os = "linux"))]
pub use journald::{JournaldBuilder, JournaldSink, JOURNALD_SOCKET};
#[cfg(feature = "otlp")]
pub use otlp::{OtlpBuilder, OtlpError, OtlpSink, OtlpStats};
#[cfg(all(unix, not(loom)))]
pub use outbox::{Outbox, OutboxBatch};
pub use outbox::{OutboxFormat, OutboxFull, OutboxReport};
#[cfg(all(fuzzing, feature = "rolling"))]
pub(crate) use rolling::FuzzedNamePattern;
#[cfg(feature = "rolling")]
pub use rolling::{Compression, FileNamePatternError, Period, RollingFile, RollingFileBuilder};
#[cfg(feature = "syslog")]
pub use syslog::{Facility, SyslogBuilder, SyslogSink};

use crate::binary::encoder::Encoder;
use crate::codec::sealed::Internal;
use crate::format::line_shape::CompiledShape;
use crate::format::pattern::{RecordView, SiteMessage};
use crate::format::Format;
use crate::queue::registry::ThreadInfo;
use crate::{Fields, Level};
use std::{fmt, io};

/// The payload of an error from [`Sink::write_line`] that concerns that one record alone: it
/// was dropped, and what the sink took before is still on its way (a `SyslogSink` with a
/// full buffer, a `RollingFile` that could not open a new file, a batching sink whose queue is
/// full). The logger then counts exactly one record lost, where any other error counts every
/// line written since the sink's last successful flush; from [`Sink::tick`], none.
///
/// ```
/// use std::io;
///
/// struct Bounded(Vec<String>);
///
/// impl tachylog::Sink for Bounded {
///     fn write_line(&mut self, line: &tachylog::Line<'_>) -> io::Result<()> {
///         if self.0.len() == 1000 {
///             let why = tachylog::RecordDropped::new("the buffer is full; the newest record was dropped");
///             return Err(io::Error::other(why));
///         }
///         self.0.push(String::from_utf8_lossy(line.text).into_owned());
///         Ok(())
///     }
///     fn flush(&mut self) -> io::Result<()> {
///         Ok(())
///     }
/// }
/// # let guard = tachylog::builder().sink(Bounded(Vec::new())).init().unwrap();
/// # drop(guard);
/// ```
#[derive(Debug)]
pub struct RecordDropped(pub(crate) String);

impl RecordDropped {
    /// A dropped record, with why it was dropped (reported on standard error).
    pub fn new(why: impl Into<String>) -> Self {
        RecordDropped(why.into())
    }
}

impl fmt::Display for RecordDropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RecordDropped {}

fn is_record_dropped(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<RecordDropped>())
}

/// The syslog severity of a level, which journald's `PRIORITY` is too: ERROR is `err` (3),
/// WARN `warning` (4), INFO `info` (6), DEBUG and TRACE `debug` (7).
#[cfg(any(feature = "syslog", all(feature = "journald", target_os = "linux")))]
fn syslog_severity(level: Level) -> u8 {
    match level {
        Level::Error => 3,
        Level::Warn => 4,
        Level::Info => 6,
        Level::Debug | Level::Trace => 7,
    }
}

/// This host's name (`-` if it cannot be read), for syslog's HOSTNAME header field.
#[cfg(all(feature = "syslog", unix))]
fn system_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is what we pass; gethostname
    // writes at most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "-".to_string();
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..len]).into_owned()
}

/// This host's DNS name (`-` if it cannot be read): what `hostname` prints on Windows.
#[cfg(all(feature = "syslog", windows))]
fn system_hostname() -> String {
    use windows_sys::Win32::System::SystemInformation::{
        ComputerNamePhysicalDnsHostname, GetComputerNameExW,
    };
    let mut buf = [0u16; 256];
    let mut len = buf.len() as u32;
    // SAFETY: `buf` is writable for `len` UTF-16 units, which is what we pass; on success
    // `len` is set to the units written, without the terminating NUL.
    let ok =
        unsafe { GetComputerNameExW(ComputerNamePhysicalDnsHostname, buf.as_mut_ptr(), &mut len) };
    if ok == 0 {
        return "-".to_string();
    }
    String::from_utf16_lossy(&buf[..len as usize])
}

/// The operating system's id of the calling thread: what tachylog writes as a record's `tid`
/// and gives sinks as [`Line::thread_id`]. For a sink that writes records of its own (a notice
/// from its worker thread) with the same kind of id.
///
/// ```
/// let here = tachylog::current_thread_id();
/// assert_ne!(here, 0);
/// assert_eq!(here, tachylog::current_thread_id());
/// ```
pub fn current_thread_id() -> u64 {
    crate::queue::registry::os_thread_id()
}

/// A destination for log lines. Implement it to send records anywhere; add it with
/// [`Builder::sink`](crate::Builder::sink).
///
/// The back end calls [`Sink::write_line`] once per record, in timestamp order, with a complete
/// line ending in `\n`, and [`Sink::flush`] when the queues run empty and at least every flush
/// interval. Buffer in `write_line` and do the I/O in `flush` (or when your buffer is full): the
/// back end's throughput is your throughput. Time-driven sinks (such as `RollingFile`) also get
/// [`Sink::tick`] at the instants they ask for with [`Sink::next_deadline`];
/// [`reopen`](crate::reopen) reaches every sink's [`Sink::reopen`].
///
/// An error is reported once on stderr, the failed lines are counted, and when the sink works
/// again a line says how many were lost; errors never stop the back end.
///
/// ```
/// use std::sync::{Arc, Mutex};
///
/// struct Collect(Arc<Mutex<Vec<String>>>);
///
/// impl tachylog::Sink for Collect {
///     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
///         self.0.lock().unwrap().push(String::from_utf8_lossy(line.text).into_owned());
///         Ok(())
///     }
///     fn flush(&mut self) -> std::io::Result<()> {
///         Ok(())
///     }
/// }
///
/// let lines = Arc::new(Mutex::new(Vec::new()));
/// let guard = tachylog::builder().sink(Collect(lines.clone())).init().unwrap();
/// tachylog::info!("hello {}", 42);
/// tachylog::flush();
/// assert!(lines.lock().unwrap()[0].contains("hello 42"));
/// drop(guard);
/// ```
pub trait Sink: Send + 'static {
    /// Takes one record's line.
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()>;

    /// Makes everything written so far durable as far as this sink goes (for a file: handed to
    /// the kernel).
    fn flush(&mut self) -> io::Result<()>;

    /// A short name for error messages, such as the file's path.
    fn describe(&self) -> String {
        std::any::type_name::<Self>().to_string()
    }

    /// Whether this sink reads [`Line::message`]. tachylog's file and console sinks read only
    /// [`Line::text`] (and the level and time): when every sink is like them, the back end
    /// lays out call-site lines in one pass and leaves `message` empty. Internal: the
    /// [`Internal`] argument keeps it tachylog's.
    #[doc(hidden)]
    fn reads_message(&self, _: Internal) -> bool {
        true
    }

    /// The sink's own buffer of text lines, for the back end to format a line straight into
    /// it (then it calls [`Sink::text_appended`] instead of [`Sink::write_line`]). Internal:
    /// only [`FileSink`] has one, and the back end uses it only when that sink is the only one.
    #[doc(hidden)]
    fn text_buffer(&mut self, _: Internal) -> Option<&mut Vec<u8>> {
        None
    }

    /// One whole line was appended to [`Sink::text_buffer`]. Internal.
    #[doc(hidden)]
    fn text_appended(&mut self, _: Internal) -> io::Result<()> {
        Ok(())
    }

    /// Starts writing what the sink holds without waiting for the write to end (a batch
    /// handed to a writing thread); [`Sink::flush_finish`] waits for it. A spool's back end
    /// formats the next batch meanwhile. Internal: the default flushes at once.
    #[doc(hidden)]
    fn flush_start(&mut self, _: Internal) -> io::Result<()> {
        self.flush()
    }

    /// Waits until what [`Sink::flush_start`] began is written. Internal.
    #[doc(hidden)]
    fn flush_finish(&mut self, _: Internal) -> io::Result<()> {
        Ok(())
    }

    /// The files of this sink where records of a process that died, stamped from `span.0`
    /// to `span.1`, may already be. Internal: a recovery compares them with the dead
    /// process's journal to write each record once (see `backend::recovery`).
    #[doc(hidden)]
    #[cfg(all(unix, not(loom)))]
    fn recovery_files(&mut self, span: (i64, i64), _: Internal) -> Vec<TailFile> {
        let _ = span;
        Vec::new()
    }

    /// Closes and reopens the destination, for example after an external tool moved the file
    /// away. Called by [`reopen`](crate::reopen) and on `SIGHUP` when that handler is enabled.
    /// The default does nothing.
    fn reopen(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// The next wall-clock instant (nanoseconds since the Unix epoch) at which this sink wants
    /// [`Sink::tick`] called even if no record arrives, such as the next period boundary of a
    /// time-patterned file. The default, `None`, asks for no timer.
    fn next_deadline(&self) -> Option<i64> {
        None
    }

    /// Called with the back end's current wall-clock time once [`Sink::next_deadline`] has
    /// passed (and possibly more often).
    fn tick(&mut self, now_unix_nanos: i64) -> io::Result<()> {
        let _ = now_unix_nanos;
        Ok(())
    }

    /// The last chance to deliver before the process ends: at `exit()` (including `main`
    /// returning while the [`Guard`](crate::Guard) lives on, in a static say) and on a
    /// termination signal that tachylog handles and that nobody else does (the process is about
    /// to die of it). Called once, on the back end's thread, after everything logged before
    /// has been written to this sink and flushed.
    ///
    /// A sink that sends from threads of its own (batches to a collector) hands over what it
    /// holds here and waits for it to go, until `deadline` at the latest; an error says what
    /// could not be delivered, and is reported on standard error. Return by `deadline`: the
    /// exiting thread waits for this call (on a signal, at most the logger's bounded drain). The
    /// default flushes.
    ///
    /// Not called when the guard is dropped: the sink itself is dropped then, and its `Drop`
    /// is where it finishes.
    ///
    /// ```
    /// use std::time::Instant;
    ///
    /// struct Batched(Vec<String>);
    ///
    /// impl tachylog::Sink for Batched {
    ///     fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
    ///         self.0.push(String::from_utf8_lossy(line.text).into_owned());
    ///         Ok(())
    ///     }
    ///     fn flush(&mut self) -> std::io::Result<()> {
    ///         Ok(()) // sends full batches only
    ///     }
    ///     fn before_exit(&mut self, deadline: Instant) -> std::io::Result<()> {
    ///         // Send the partial batch now, giving up at `deadline`.
    ///         let _ = deadline;
    ///         self.0.clear();
    ///         Ok(())
    ///     }
    /// }
    /// # let guard = tachylog::builder().sink(Batched(Vec::new())).init().unwrap();
    /// # drop(guard);
    /// ```
    fn before_exit(&mut self, deadline: std::time::Instant) -> io::Result<()> {
        let _ = deadline;
        self.flush()
    }
}

/// A file where a dead process's records may already be (see [`Sink::recovery_files`]).
#[doc(hidden)]
#[cfg(all(unix, not(loom)))]
#[derive(Debug)]
pub struct TailFile {
    pub(crate) path: std::path::PathBuf,
}

/// One record as a sink receives it: its level, its time and its formatted line.
///
/// ```
/// let line = tachylog::Line::new(tachylog::Level::Info, 0, b"hello\n");
/// assert_eq!(line.text, b"hello\n");
/// assert_eq!(line.unix_nanos, 0);
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Line<'a> {
    /// The record's level.
    pub level: Level,
    /// The record's timestamp, nanoseconds since the Unix epoch (UTC).
    pub unix_nanos: i64,
    /// The formatted line in this sink's [`Format`](crate::Format), ending in `\n`.
    pub text: &'a [u8],
    /// The record's message alone, unescaped, for sinks that frame records themselves.
    pub message: &'a str,
    /// The module path of the call site (or the `log` target).
    pub target: &'a str,
    /// The source file of the call site.
    pub file: &'a str,
    /// The source line of the call site.
    pub line_number: u32,
    /// The name of the thread that logged the record (`-` if it has none).
    pub thread_name: &'a str,
    /// The OS id of the thread that logged the record.
    pub thread_id: u64,
    /// The record's structured fields (`info!(user_id = 42; "...")`, `log` key-values,
    /// `tracing` fields) and the spans it was logged in, typed.
    pub fields: &'a Fields,
    /// The OpenTelemetry span the record was logged in (features `opentelemetry`,
    /// `tracing-opentelemetry`), if any.
    pub trace: Option<crate::record::TraceContext>,
}

impl<'a> Line<'a> {
    /// A line of `level`, stamped `unix_nanos`, reading `text` (which should end in `\n`),
    /// with empty metadata: for testing sinks.
    pub fn new(level: Level, unix_nanos: i64, text: &'a [u8]) -> Self {
        Line {
            level,
            unix_nanos,
            text,
            message: "",
            target: "",
            file: "",
            line_number: 0,
            thread_name: "",
            thread_id: 0,
            fields: &crate::fields::NO_FIELDS,
            trace: None,
        }
    }
}

/// A sink with its level filter and its error accounting, as the back end holds it.
///
/// Accounting rule: an error from [`Sink::write_line`] or [`Sink::flush`] is taken to lose every
/// line handed to the sink since its last successful flush (a buffered sink such as
/// [`FileSink`] drops its buffer on error, so the count is exact for it and an upper bound for a
/// sink that wrote part of it). The exception is an error carrying [`RecordDropped`]: it loses
/// that one record only, and the lines taken before it stay the sink's to deliver (neither
/// counted lost nor taken as proof of recovery by the next flush). The first error is reported
/// once on stderr; the sink counts as recovered only when a flush that carried lines succeeds,
/// and then one WARN line written *to that sink* says how many records were lost and why.
pub(crate) struct SinkSlot {
    sink: Box<dyn Sink>,
    min_level: Level,
    /// The most verbose level of the request scopes' held records this sink takes when a
    /// scope writes them: its own level if it was given one, else every level (the filter's
    /// default level is what `min_level` follows otherwise). Swapped with `min_level` while
    /// they are written.
    release_level: Level,
    format: Format,
    /// Text lines with the level coloured (a console sink on a terminal; never without the
    /// `color` feature).
    colored: bool,
    /// While the sink fails: lines lost so far and the first error; `None` while it works.
    failing: Option<(u64, String)>,
    /// Whether lines were written since the last flush.
    dirty: bool,
    /// Lines accepted by `write_line` since the last successful flush: lost if the next flush
    /// fails.
    unflushed: u64,
    /// Lines of a flush started ([`SinkSlot::flush_start`]) and not finished yet: lost, with
    /// `unflushed`, if it fails.
    in_flight: Option<u64>,
    /// The recovery notice waiting to be formatted and written to this sink.
    notice: Option<String>,
    /// The loss the pending notice announces, restored if the sink drops the notice.
    announced: Option<(u64, String)>,
    /// With [`Format::Binary`]: the open block, handed to the sink as one "line" when full and
    /// on every flush.
    binary: Option<Box<Encoder>>,
    /// The spooled records in the open block, for the spool's journal.
    #[cfg(all(unix, not(loom)))]
    block_records: Vec<crate::queue::spool::journal::RecordId>,
    /// The sink's failures so far (each failed write or flush): a recovery keeps the spool if
    /// any happened while it wrote.
    #[cfg(all(unix, not(loom)))]
    failures: u64,
    /// The shape of this sink's JSON or logfmt lines, if not the default.
    shape: Option<Box<CompiledShape>>,
}

impl SinkSlot {
    pub(crate) fn new(sink: Box<dyn Sink>, min_level: Level, format: Format) -> Self {
        SinkSlot {
            sink,
            min_level,
            release_level: min_level,
            format,
            colored: false,
            failing: None,
            dirty: false,
            unflushed: 0,
            in_flight: None,
            notice: None,
            announced: None,
            binary: None,
            #[cfg(all(unix, not(loom)))]
            block_records: Vec::new(),
            #[cfg(all(unix, not(loom)))]
            failures: 0,
            shape: None,
        }
    }

    /// How many writes and flushes of this sink failed so far.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn failures(&self) -> u64 {
        self.failures
    }

    /// Notes the record being encoded into the open block, for the spool's journal.
    #[inline(always)]
    fn note_block_record(&mut self) {
        #[cfg(all(unix, not(loom)))]
        if let Some(id) = crate::queue::spool::journal::line() {
            self.block_records.push(id);
        }
    }

    /// The level this sink takes a request scope's held records at (see `release_level`).
    pub(crate) fn set_release_level(&mut self, level: Level) {
        self.release_level = level;
    }

    /// Swaps the sink's level with the level it takes released scope records at: once before
    /// writing them, once after.
    pub(crate) fn swap_release_level(&mut self) {
        std::mem::swap(&mut self.min_level, &mut self.release_level);
    }

    /// Shapes this sink's JSON or logfmt lines (a text or binary sink has no use for it).
    pub(crate) fn set_shape(&mut self, shape: &crate::format::LineShape) {
        self.shape = match self.format {
            Format::Json => Some(Box::new(shape.compile(false))),
            Format::Logfmt => Some(Box::new(shape.compile(true))),
            Format::Text | Format::Binary => None,
        };
    }

    /// The shape of this sink's lines, if not the default.
    pub(crate) fn shape(&self) -> Option<&CompiledShape> {
        self.shape.as_deref()
    }

    /// A file sink writing the binary log; messages cut past `max_message` bytes, as text
    /// lines cut them.
    pub(crate) fn new_binary(sink: Box<dyn Sink>, min_level: Level, max_message: usize) -> Self {
        let mut slot = SinkSlot::new(sink, min_level, Format::Binary);
        slot.binary = Some(Box::new(Encoder::new(max_message)));
        slot
    }

    /// Encodes `record` into the binary log's open block (a sink of [`Format::Binary`]), with
    /// the accounting of [`SinkSlot::write_line`]; a notice (`counted` false) is written
    /// whatever the level and not counted.
    #[inline(always)]
    pub(crate) fn write_binary(&mut self, record: &RecordView<'_>, counted: bool) {
        if counted && record.level > self.min_level {
            return;
        }
        let Some(encoder) = &mut self.binary else {
            return;
        };
        self.dirty = true;
        if counted {
            self.unflushed += 1;
        }
        let full = encoder.encode(record);
        self.note_block_record();
        if full {
            self.close_block();
        }
    }

    /// [`SinkSlot::write_binary`] for a live call-site record with no trace context, given as
    /// its parts ([`Encoder::encode_site`]).
    #[inline(always)]
    pub(crate) fn write_binary_site(
        &mut self,
        thread: &ThreadInfo,
        unix_nanos: i64,
        site_message: &SiteMessage<'_>,
    ) {
        if site_message.site.level > self.min_level {
            return;
        }
        let Some(encoder) = &mut self.binary else {
            return;
        };
        self.dirty = true;
        self.unflushed += 1;
        let full = encoder.encode_site(thread, unix_nanos, site_message);
        self.note_block_record();
        if full {
            self.close_block();
        }
    }

    /// Hands the binary log's open block, if any, to the sink.
    fn close_block(&mut self) {
        let Some(encoder) = &mut self.binary else {
            return;
        };
        let sink = &mut self.sink;
        #[cfg(all(unix, not(loom)))]
        let (written, mut records) = crate::queue::spool::journal::with_block(
            std::mem::take(&mut self.block_records),
            || encoder.close_block(|block| sink.write_line(&Line::new(Level::Info, 0, block))),
        );
        #[cfg(all(unix, not(loom)))]
        {
            records.clear();
            self.block_records = records;
        }
        #[cfg(not(all(unix, not(loom))))]
        let written =
            encoder.close_block(|block| sink.write_line(&Line::new(Level::Info, 0, block)));
        if let Some(Err(e)) = written {
            self.fail(e);
        }
    }

    /// The most verbose level this sink takes.
    pub(crate) fn min_level(&self) -> Level {
        self.min_level
    }

    /// How this sink's lines are written.
    pub(crate) fn format(&self) -> Format {
        self.format
    }

    /// Colours the level of this sink's text lines.
    #[cfg(feature = "color")]
    pub(crate) fn set_colored(&mut self, colored: bool) {
        self.colored = colored && self.format == Format::Text;
    }

    pub(crate) fn colored(&self) -> bool {
        self.colored
    }

    /// Whether the sink takes uncoloured text lines and reads nothing of the message but
    /// what the line holds (see [`Sink::reads_message`]).
    pub(crate) fn takes_text_only(&self) -> bool {
        self.format == Format::Text && !self.colored && !self.sink.reads_message(Internal::TOKEN)
    }

    pub(crate) fn write_line(&mut self, line: &Line<'_>) {
        if line.level > self.min_level {
            return;
        }
        self.dirty = true;
        self.unflushed += 1;
        let result = self.sink.write_line(line);
        if let Err(e) = result {
            if is_record_dropped(&e) {
                // The lines taken before are the sink's to deliver, not lost; and a flush
                // must not take them as proof that the sink works again.
                self.unflushed = 0;
                self.fail_counting(e, 1);
            } else {
                self.fail(e);
            }
        }
    }

    /// Formats a line with `format` straight into the sink's own buffer, if it has one (see
    /// [`Sink::text_buffer`]), with the accounting of [`SinkSlot::write_line`]; returns false,
    /// having done nothing, if it has none.
    #[inline]
    pub(crate) fn write_text_in_place(
        &mut self,
        level: Level,
        format: impl FnOnce(&mut Vec<u8>),
    ) -> bool {
        if level > self.min_level {
            return true;
        }
        let Some(buffer) = self.sink.text_buffer(Internal::TOKEN) else {
            return false;
        };
        format(buffer);
        self.dirty = true;
        self.unflushed += 1;
        if let Err(e) = self.sink.text_appended(Internal::TOKEN) {
            self.fail(e);
        }
        true
    }

    /// Writes tachylog's own line (a recovery notice), whatever this sink's level. It is not a
    /// record, so it is not counted among the lines that a later failure loses.
    pub(crate) fn write_notice_line(&mut self, line: &Line<'_>) {
        self.dirty = true;
        let announced = self.announced.take();
        if let Err(e) = self.sink.write_line(line) {
            match announced {
                // The notice itself was dropped: the loss it announced is still unreported.
                Some((lost, error)) if is_record_dropped(&e) => match &mut self.failing {
                    Some((count, _)) => *count += lost,
                    None => self.failing = Some((lost, error)),
                },
                _ => self.fail(e),
            }
        }
    }

    pub(crate) fn reopen(&mut self) {
        if let Err(e) = self.sink.reopen() {
            self.fail(e);
        }
    }

    pub(crate) fn next_deadline(&self) -> Option<i64> {
        self.sink.next_deadline()
    }

    pub(crate) fn tick(&mut self, now_unix_nanos: i64) {
        match self.sink.tick(now_unix_nanos) {
            Ok(()) => {}
            // A timer's error marked so loses no line the sink took (a rolling file that could
            // not open the next period's file had flushed the last one): the failure counts
            // from here, the lines before it are delivered.
            Err(e) if is_record_dropped(&e) => {
                self.unflushed = 0;
                self.fail_counting(e, 0);
            }
            Err(e) => self.fail(e),
        }
    }

    pub(crate) fn flush(&mut self) {
        self.flush_finish();
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.close_block();
        let flushed = self.sink.flush();
        let lines = std::mem::take(&mut self.unflushed);
        self.flushed(flushed, lines);
    }

    /// Starts a flush that [`SinkSlot::flush_finish`] completes (see [`Sink::flush_start`]);
    /// the lines written meanwhile wait for the next flush.
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn flush_start(&mut self) {
        self.flush_finish();
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.close_block();
        let lines = std::mem::take(&mut self.unflushed);
        match self.sink.flush_start(Internal::TOKEN) {
            Ok(()) => self.in_flight = Some(lines),
            Err(e) => self.flushed(Err(e), lines),
        }
    }

    /// Waits for the flush [`SinkSlot::flush_start`] started, if any.
    pub(crate) fn flush_finish(&mut self) {
        if let Some(lines) = self.in_flight.take() {
            let finished = self.sink.flush_finish(Internal::TOKEN);
            self.flushed(finished, lines);
        }
    }

    /// A flush of `lines` lines ended: the accounting of [`SinkSlot::flush`].
    fn flushed(&mut self, result: io::Result<()>, lines: u64) {
        match result {
            // The lines since are lost too: a failed write drops the buffer.
            Err(e) => {
                self.unflushed += lines;
                self.fail(e)
            }
            // Recovered only when lines went through: a flush after nothing but failed writes
            // proves nothing.
            Ok(()) if lines == 0 => {}
            Ok(()) => {
                if let Some((lost, error)) = self.failing.take() {
                    eprintln!(
                        "tachylog: sink {} works again; {lost} record(s) were lost while it failed",
                        self.sink.describe()
                    );
                    self.notice = Some(format!(
                        "{lost} records lost while {} failed: {error}",
                        self.sink.describe()
                    ));
                    self.announced = Some((lost, error));
                }
            }
        }
    }

    /// See [`Sink::before_exit`]: what the sink reports it could not deliver goes to standard
    /// error, where it is still seen as the process ends (a line logged now would reach no sink).
    pub(crate) fn before_exit(&mut self, deadline: std::time::Instant) {
        self.flush();
        if let Err(e) = self.sink.before_exit(deadline) {
            eprintln!(
                "tachylog: sink {}: before the process ended: {e}",
                self.sink.describe()
            );
        }
    }

    /// See [`Sink::recovery_files`].
    #[cfg(all(unix, not(loom)))]
    pub(crate) fn recovery_files(&mut self, span: (i64, i64)) -> Vec<TailFile> {
        self.sink.recovery_files(span, Internal::TOKEN)
    }

    /// The recovery notice to write into this sink, once.
    pub(crate) fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    fn fail(&mut self, error: io::Error) {
        let lost = std::mem::take(&mut self.unflushed);
        self.fail_counting(error, lost);
    }

    fn fail_counting(&mut self, error: io::Error, lost: u64) {
        #[cfg(all(unix, not(loom)))]
        {
            self.failures += 1;
        }
        match &mut self.failing {
            Some((count, _)) => *count += lost,
            None => {
                eprintln!(
                    "tachylog: sink {} failed: {error}; its records are counted as lost until it \
                     recovers",
                    self.sink.describe()
                );
                self.failing = Some((lost, error.to_string()));
            }
        }
    }
}
