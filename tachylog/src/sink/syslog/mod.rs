//! Records sent to a syslog collector as RFC 5424 messages, over UDP, TCP (RFC 6587
//! octet-counting framing) or, on Unix, a Unix datagram socket such as `/dev/log`.
//!
//! Runs on the back end's thread only, like every sink. It may block, but never for long: TCP
//! connects and writes carry timeouts, and while the collector is unreachable records wait in a
//! bounded memory buffer and reconnection is retried with exponential backoff, checked on each
//! write, flush and timer tick (the sink asks for a tick while it has records waiting).
//!
//! Accounting, to fit [`SinkSlot`](super::SinkSlot)'s rule: a record buffered for resending is
//! not lost, so `write_line` and `flush` return `Ok` for it. A record dropped because the TCP
//! buffer is full (the *newest* is dropped: the buffer keeps the oldest, so the collector gets
//! an unbroken prefix) makes `write_line` return an error marked as [`RecordDropped`], which
//! the slot counts as exactly that one record lost, without counting the buffered ones.

mod builder;
mod tcp;
#[cfg(unix)]
mod unix;

pub use builder::{Facility, SyslogBuilder};

use super::{system_hostname, Line, RecordDropped, Sink};
use crate::format::escape::EscapingWriter;
use crate::format::time::TimeCache;
use std::fmt::Write as _;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::Instant;
use tcp::Tcp;
#[cfg(unix)]
use unix::UnixTransport;

/// The private enterprise number in the structured-data ID `meta@32473`: 32473 is the example
/// PEN reserved for documentation by RFC 5612 and used by RFC 5424's own examples. It marks
/// the element as ours without claiming a registered number.
const META_SD_ID: &str = "meta@32473";

/// The structured-data ID of the element that carries a record's structured fields, under the
/// same documentation PEN.
const FIELDS_SD_ID: &str = "fields@32473";

/// Marks a UDP message cut to fit the datagram limit.
const TRUNCATION_MARK: &[u8] = b"...[truncated]";

/// Sends each record to a syslog collector as an RFC 5424 message:
///
/// `<14>1 2026-11-21T16:04:05.125049Z web-1 shop 4211 - [meta@32473 target="shop::net"
/// file="src/net.rs" line="20" thread="main" tid="4211"][fields@32473 user_id="42"
/// peer="10.0.0.7"] connection reset`
///
/// The record's structured fields, if it has any, form the second element, `fields@32473`
/// (keys made valid SD-NAMEs: other characters become `_`, at most 32 bytes); the spans of a
/// `tracing` event are the `spans` parameter of `meta@32473`, as `outer{id=7}:inner`.
///
/// PRI is facility × 8 + severity (ERROR 3, WARN 4, INFO 6, DEBUG and TRACE 7); the time is
/// UTC with microseconds; HOSTNAME, APP-NAME and MSGID come from the [`SyslogBuilder`], PROCID
/// is the process id. Parameter values escape `"`, `\` and `]` with a backslash; in them and
/// in the message, control characters are escaped as in text lines (`\n` becomes the two
/// characters `\n`), so one record is always one message. The message is UTF-8, without BOM.
///
/// Transports:
/// - **UDP**: one datagram per record, cut to [`SyslogBuilder::max_datagram`]. Nothing is
///   acknowledged: a collector that is down shows only through ICMP errors, which fail the
///   *next* send (counted lost), so while it is down about every other record is counted and
///   the rest vanish unreported.
/// - **TCP**: octet-counting framing, batched. The connect and each write time out (1 s by
///   default). On any error the connection is dropped and records wait in memory (up to
///   [`SyslogBuilder::buffer_limit`]); reconnection is tried on each write, flush and timer
///   tick, after 100 ms, then twice as long each time up to 10 s. Before each batch the
///   connection is checked for an end-of-stream from the collector, so a restarted collector
///   is noticed before records are written into a dead connection. TCP has no
///   acknowledgement: records already handed to the kernel when a connection breaks may
///   still be lost, unreported; nothing is ever sent twice (a record cut short by the break
///   is sent again whole, and collectors drop an incomplete frame). When the logger stops,
///   records still waiting get one last attempt; any left are reported on stderr.
/// - **Unix datagram** (`/dev/log`; Unix only): one datagram per record, cut like UDP.
///
/// Loss accounting: while records wait for the collector, `write_line` and `flush` succeed.
/// When the buffer is full the newest record is dropped, `write_line` fails for it, and the
/// logger counts exactly that record as lost, reports the first loss on stderr and, once the
/// collector takes records again, sends a WARN record saying how many were lost. A failed UDP
/// or Unix send loses that one record, counted the same way.
///
/// ```
/// let sink = tachylog::SyslogSink::builder()
///     .app_name("shop")
///     .udp("127.0.0.1:9")
///     .unwrap();
/// let guard = tachylog::builder().sink(sink).init().unwrap();
/// tachylog::error!("payment {} failed", 42);
/// drop(guard);
/// ```
pub struct SyslogSink {
    transport: Transport,
    facility: Facility,
    /// ` HOSTNAME APP-NAME PROCID MSGID `, fixed for the sink's life.
    header_tail: String,
    time: TimeCache,
    /// The message being built; reused.
    message: Vec<u8>,
    max_datagram: usize,
    /// Records dropped so far (full TCP buffer, failed datagram sends).
    dropped: u64,
}

impl SyslogSink {
    /// The settings, to finish with a transport.
    ///
    /// ```
    /// let sink = tachylog::SyslogSink::builder().udp("127.0.0.1:9").unwrap();
    /// ```
    pub fn builder() -> SyslogBuilder {
        SyslogBuilder::default()
    }

    /// Where records go, such as `syslog tcp 127.0.0.1:514` (also the name in error reports).
    ///
    /// ```
    /// let sink = tachylog::SyslogSink::builder().udp("127.0.0.1:9").unwrap();
    /// assert_eq!(sink.describe_target(), "syslog udp 127.0.0.1:9");
    /// ```
    pub fn describe_target(&self) -> String {
        match &self.transport {
            Transport::Udp { addr, .. } => format!("syslog udp {addr}"),
            Transport::Tcp(tcp) => format!("syslog tcp {}", tcp.addr),
            #[cfg(unix)]
            Transport::Unix(unix) => format!("syslog unix {}", unix.path.display()),
        }
    }

    /// How many records this sink has dropped so far (full TCP buffer, failed datagram sends).
    ///
    /// ```
    /// let sink = tachylog::SyslogSink::builder().udp("127.0.0.1:9").unwrap();
    /// assert_eq!(sink.dropped(), 0);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Appends `line` as an RFC 5424 message to `self.message` (cleared first).
    fn build(&mut self, line: &Line<'_>) {
        let out = &mut self.message;
        out.clear();
        let pri = self.facility.code() as u32 * 8 + super::syslog_severity(line.level) as u32;
        out.push(b'<');
        out.extend_from_slice(itoa::Buffer::new().format(pri).as_bytes());
        out.extend_from_slice(b">1 ");
        self.time.write_rfc3339(line.unix_nanos, out);
        out.extend_from_slice(self.header_tail.as_bytes());
        out.push(b'[');
        out.extend_from_slice(META_SD_ID.as_bytes());
        sd_param("target", line.target, out);
        sd_param("file", line.file, out);
        sd_param("line", itoa::Buffer::new().format(line.line_number), out);
        sd_param("thread", line.thread_name, out);
        sd_param("tid", itoa::Buffer::new().format(line.thread_id), out);
        if line.fields.has_spans() {
            let mut path = Vec::new();
            crate::format::fields::write_span_path(line.fields, &mut path);
            sd_param("spans", &String::from_utf8_lossy(&path), out);
        }
        if !line.fields.is_empty() {
            out.extend_from_slice(b"][");
            out.extend_from_slice(FIELDS_SD_ID.as_bytes());
            let mut value = String::new();
            for field in line.fields.iter() {
                value.clear();
                let _ = write!(value, "{}", field.value);
                out.push(b' ');
                sd_name(field.key, out);
                sd_value(&value, out);
            }
        }
        out.extend_from_slice(b"] ");
        let _ = EscapingWriter { out, escape: true }.write_str(line.message);
    }

    fn dropped_error(&mut self, why: String) -> io::Error {
        self.dropped += 1;
        io::Error::other(RecordDropped(why))
    }
}

impl Sink for SyslogSink {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        self.build(line);
        let max = self.max_datagram;
        let result = match &mut self.transport {
            Transport::Udp { socket, .. } => {
                truncate_datagram(&mut self.message, max);
                socket.send(&self.message).map(drop)
            }
            #[cfg(unix)]
            Transport::Unix(unix) => {
                truncate_datagram(&mut self.message, max);
                unix.send(&self.message)
            }
            Transport::Tcp(tcp) => {
                return tcp
                    .push(&self.message)
                    .map_err(|why| self.dropped_error(why))
            }
        };
        result.map_err(|e| {
            let why = format!("{}: {e}", self.describe_target());
            self.dropped_error(why)
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Transport::Tcp(tcp) = &mut self.transport {
            // Records that cannot go out yet wait for the next attempt: not an error.
            tcp.send_pending();
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.describe_target()
    }

    fn reopen(&mut self) -> io::Result<()> {
        match &mut self.transport {
            Transport::Tcp(tcp) => {
                tcp.disconnect();
                tcp.next_attempt = Instant::now();
                tcp.send_pending();
                Ok(())
            }
            #[cfg(unix)]
            Transport::Unix(unix) => unix.reconnect(),
            Transport::Udp { .. } => Ok(()),
        }
    }

    fn next_deadline(&self) -> Option<i64> {
        match &self.transport {
            Transport::Tcp(tcp) if tcp.stream.is_none() && !tcp.pending.is_empty() => {
                Some(tcp.retry_at_unix_nanos)
            }
            _ => None,
        }
    }

    fn tick(&mut self, now_unix_nanos: i64) -> io::Result<()> {
        if let Transport::Tcp(tcp) = &mut self.transport {
            // The back end's clock says the retry is due: trust it over `Instant`, so a tick
            // never ends without an attempt (the deadline would stay due and spin the worker).
            if now_unix_nanos >= tcp.retry_at_unix_nanos {
                tcp.next_attempt = Instant::now();
            }
        }
        self.flush()
    }
}

/// At the end (the logger shut down), records still waiting get one last try, whatever the
/// backoff says; any left are reported on stderr, since no later flush can count them.
impl Drop for SyslogSink {
    fn drop(&mut self) {
        if let Transport::Tcp(tcp) = &mut self.transport {
            if tcp.pending.is_empty() {
                return;
            }
            tcp.next_attempt = Instant::now();
            tcp.send_pending();
            if !tcp.pending.is_empty() {
                eprintln!(
                    "tachylog: sink syslog tcp {}: {} record(s) could not be delivered before the \
                     logger stopped",
                    tcp.addr,
                    tcp.pending.len()
                );
            }
        }
    }
}

enum Transport {
    Udp {
        socket: UdpSocket,
        addr: SocketAddr,
    },
    Tcp(Tcp),
    #[cfg(unix)]
    Unix(UnixTransport),
}

fn resolve(addr: impl ToSocketAddrs) -> io::Result<SocketAddr> {
    addr.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "syslog address resolves to nothing",
        )
    })
}

/// Cuts a message longer than `max` bytes on a character boundary and marks it.
fn truncate_datagram(message: &mut Vec<u8>, max: usize) {
    if message.len() <= max {
        return;
    }
    let mut cut = max - TRUNCATION_MARK.len();
    // The message is UTF-8: back up over continuation bytes (10xxxxxx).
    while cut > 0 && message[cut] & 0xc0 == 0x80 {
        cut -= 1;
    }
    message.truncate(cut);
    message.extend_from_slice(TRUNCATION_MARK);
}

/// A header field: printable US-ASCII only (others become `_`), at most `max` characters,
/// `-` when empty.
fn header_field(value: &str, max: usize) -> String {
    let field: String = value
        .chars()
        .take(max)
        .map(|c| if c.is_ascii_graphic() { c } else { '_' })
        .collect();
    if field.is_empty() {
        "-".to_string()
    } else {
        field
    }
}

/// Appends ` name="value"`, `"`, `\` and `]` backslash-escaped, control characters escaped as
/// in text lines. `name` is one of ours, already a valid SD-NAME.
fn sd_param(name: &str, value: &str, out: &mut Vec<u8>) {
    out.push(b' ');
    out.extend_from_slice(name.as_bytes());
    sd_value(value, out);
}

/// A user's field key as an RFC 5424 SD-NAME: 1 to 32 printable US-ASCII characters other than
/// `=`, space, `]` and `"`; anything else becomes `_`, and longer keys are cut.
fn sd_name(key: &str, out: &mut Vec<u8>) {
    let mut written = 0;
    for c in key.chars().take(32) {
        let valid = c.is_ascii_graphic() && !matches!(c, '=' | ']' | '"');
        out.push(if valid { c as u8 } else { b'_' });
        written += 1;
    }
    if written == 0 {
        out.push(b'_');
    }
}

/// Appends `="value"`, escaped as [`sd_param`] says.
fn sd_value(value: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"=\"");
    let mut rest = value;
    while let Some(i) = rest.find(['"', '\\', ']']) {
        let _ = EscapingWriter { out, escape: true }.write_str(&rest[..i]);
        out.push(b'\\');
        out.push(rest.as_bytes()[i]);
        rest = &rest[i + 1..];
    }
    let _ = EscapingWriter { out, escape: true }.write_str(rest);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Level;

    fn message(sink: &mut SyslogSink, line: &Line<'_>) -> String {
        sink.build(line);
        String::from_utf8(sink.message.clone()).unwrap()
    }

    #[test]
    fn formats_rfc_5424_with_escaped_structured_data() {
        let mut sink = SyslogSink::builder()
            .facility(Facility::Local4)
            .hostname("h st")
            .app_name("app")
            .msg_id("ID")
            .udp("127.0.0.1:9")
            .unwrap();
        let mut line = Line::new(Level::Warn, 1_795_277_045_125_049_000, b"");
        line.message = "a\"b]c\\d\ne é";
        line.target = "t]\"\\";
        line.file = "src/x.rs";
        line.line_number = 20;
        line.thread_name = "main\n";
        line.thread_id = 7;
        let pid = std::process::id();
        assert_eq!(
            message(&mut sink, &line),
            format!(
                "<164>1 2026-11-21T16:04:05.125049Z h_st app {pid} ID [meta@32473 target=\"t\\]\\\"\\\\\" \
                 file=\"src/x.rs\" line=\"20\" thread=\"main\\n\" tid=\"7\"] a\"b]c\\d\\ne é"
            )
        );
    }

    #[test]
    fn severities_follow_the_levels() {
        assert_eq!(
            [
                Level::Error,
                Level::Warn,
                Level::Info,
                Level::Debug,
                Level::Trace
            ]
            .map(super::super::syslog_severity),
            [3, 4, 6, 7, 7]
        );
    }

    #[test]
    fn datagrams_are_cut_on_a_char_boundary_and_marked() {
        let mut m = "é".repeat(100).into_bytes();
        truncate_datagram(&mut m, 101);
        let s = String::from_utf8(m).unwrap();
        assert!(s.ends_with("...[truncated]") && s.len() <= 101, "{s}");
        let mut short = b"short".to_vec();
        truncate_datagram(&mut short, 101);
        assert_eq!(short, b"short");
    }

    #[test]
    fn header_fields_are_printable_ascii_and_bounded() {
        assert_eq!(header_field("", 5), "-");
        assert_eq!(header_field("a b\u{e9}cdef", 5), "a_b_c");
    }
}
