//! Records sent to the systemd journal in its native protocol: one datagram per record on
//! journald's Unix socket, each field `NAME=value\n` (or, when the value holds a newline,
//! `NAME\n`, its length as 64-bit little-endian, the bytes, `\n`). A record too large for one
//! datagram goes in a sealed memfd whose descriptor is passed in an otherwise empty datagram,
//! as `sd_journal_send` does. Linux only: journald exists nowhere else, and memfd is Linux's.
//!
//! Runs on the back end's thread only, like every sink. A send waits at most the write timeout
//! (journald's queue full); a record that cannot be handed over is counted lost, never retried,
//! since journald has no acknowledgement that would make a retry safe from duplicates.

use super::{Line, RecordDropped, Sink};
use rustix::fs::{MemfdFlags, SealFlags};
use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketAddrUnix};
use std::fmt::Write as _;
use std::io::{self, IoSlice, Write as _};
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where journald takes native-protocol datagrams on every systemd host.
pub const JOURNALD_SOCKET: &str = "/run/systemd/journal/socket";

/// The fields this sink writes itself: a record's field with one of these names (after
/// upper-casing) is written as `F_<NAME>`, so it never adds a second `MESSAGE` or `PRIORITY`.
const OWN_FIELDS: [&str; 13] = [
    "MESSAGE",
    "PRIORITY",
    "SYSLOG_IDENTIFIER",
    "TARGET",
    "CODE_FILE",
    "CODE_LINE",
    "THREAD_NAME",
    "TID",
    "RECORD_REALTIME_USEC",
    "SPANS",
    "TRACE_ID",
    "SPAN_ID",
    "FIELDS_LEFT_OUT",
];

/// journald's own limit on a field name's length.
const MAX_FIELD_NAME: usize = 64;

/// journald refuses an entry with more fields than this (`ENTRY_FIELD_COUNT_MAX`); the
/// record's own fields beyond it are left out and counted in `FIELDS_LEFT_OUT`.
const MAX_FIELDS: usize = 1024;

/// Sends each record to the systemd journal (feature `journald`, Linux only), as journal
/// fields:
///
/// | field | value |
/// |---|---|
/// | `MESSAGE` | the message, unescaped (a multi-line message stays multi-line) |
/// | `PRIORITY` | syslog severity: ERROR 3, WARN 4, INFO 6, DEBUG and TRACE 7 |
/// | `SYSLOG_IDENTIFIER` | [`JournaldBuilder::identifier`], by default the program's name |
/// | `TARGET`, `CODE_FILE`, `CODE_LINE` | the call site |
/// | `THREAD_NAME`, `TID` | the thread that logged the record |
/// | `RECORD_REALTIME_USEC` | when the record was logged, µs since the Unix epoch (the journal's own `__REALTIME_TIMESTAMP` is when the back end handed it over) |
/// | `SPANS` | the `tracing` spans, `outer{id=7}:inner`, if any |
/// | `TRACE_ID`, `SPAN_ID` | the OpenTelemetry span, if any |
/// | the record's fields | `user_id` → `USER_ID`, `http.method` → `HTTP_METHOD` |
///
/// A field's name is upper-cased, every character other than `A-Z`, `0-9` and `_` becomes
/// `_`, leading `_` are dropped (journald reserves them for the fields it adds itself), a name
/// starting with a digit or equal to one of the names above gets the prefix `F_`, and names are
/// cut to 64 bytes. Values are written as they are, newlines included, in the protocol's
/// binary-safe form.
///
/// Each record is one datagram on journald's socket ([`JOURNALD_SOCKET`]); a record too large
/// for a datagram (the socket's send buffer, raised to 8 MiB where allowed) goes in a sealed
/// memfd passed over the socket, up to journald's own limit (768 MiB). A record journald does
/// not take (not running, its queue full past the write timeout) is counted lost by the logger
/// and reported. journald's own rate limit (10,000 records in 30 s per service by default) is
/// journald's: what it suppresses it reports in the journal itself.
///
/// ```no_run
/// let sink = tachylog::JournaldSink::builder().identifier("shop").build().unwrap();
/// let guard = tachylog::builder().sink(sink).init().unwrap();
/// tachylog::error!(user_id = 42; "payment failed");
/// drop(guard);
/// ```
pub struct JournaldSink {
    socket: UnixDatagram,
    path: PathBuf,
    address: SocketAddrUnix,
    identifier: String,
    /// The entry being built; reused.
    entry: Vec<u8>,
    /// Records journald did not take.
    dropped: u64,
}

/// The settings of a [`JournaldSink`], finished by [`JournaldBuilder::build`].
///
/// ```
/// let builder = tachylog::JournaldSink::builder()
///     .identifier("shop")
///     .socket("/run/systemd/journal/socket");
/// ```
#[derive(Debug, Clone)]
pub struct JournaldBuilder {
    identifier: Option<String>,
    path: PathBuf,
    write_timeout: Duration,
}

impl Default for JournaldBuilder {
    fn default() -> Self {
        JournaldBuilder {
            identifier: None,
            path: PathBuf::from(JOURNALD_SOCKET),
            write_timeout: Duration::from_secs(1),
        }
    }
}

impl JournaldBuilder {
    /// `SYSLOG_IDENTIFIER`, what `journalctl -t` selects on. By default the program's file
    /// name.
    ///
    /// ```
    /// let builder = tachylog::JournaldSink::builder().identifier("shop");
    /// ```
    pub fn identifier(mut self, identifier: impl Into<String>) -> Self {
        self.identifier = Some(identifier.into());
        self
    }

    /// The socket to send to; by default [`JOURNALD_SOCKET`]. A journald namespace
    /// (`systemd-journald@NAME`) listens on `/run/systemd/journal.NAME/socket`.
    ///
    /// ```
    /// let builder = tachylog::JournaldSink::builder().socket("/run/systemd/journal.app/socket");
    /// ```
    pub fn socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = path.into();
        self
    }

    /// How long one send may wait while journald's queue is full (1 s by default); the
    /// record is then counted lost.
    ///
    /// ```
    /// use std::time::Duration;
    /// let builder = tachylog::JournaldSink::builder().write_timeout(Duration::from_millis(100));
    /// ```
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// The sink. Fails with an error naming the socket when nothing listens there (journald
    /// is not running, or the path is not a datagram socket).
    ///
    /// ```no_run
    /// let sink = tachylog::JournaldSink::builder().build().unwrap();
    /// ```
    pub fn build(self) -> io::Result<JournaldSink> {
        let in_context = |e: io::Error| {
            io::Error::new(e.kind(), format!("journald {}: {e}", self.path.display()))
        };
        let address = SocketAddrUnix::new(&self.path).map_err(|e| in_context(e.into()))?;
        let socket = UnixDatagram::unbound().map_err(in_context)?;
        // Sent to by address, not connected: a restarted journald's new socket is reached
        // without a reconnect. The connect here only proves that something listens.
        let probe = UnixDatagram::unbound().map_err(in_context)?;
        probe.connect(&self.path).map_err(in_context)?;
        socket
            .set_write_timeout(Some(self.write_timeout.max(Duration::from_millis(1))))
            .map_err(in_context)?;
        // As `sd_journal_send`: a larger send buffer keeps more records as plain datagrams.
        // Refused above `wmem_max` for an unprivileged process, which only means more memfds.
        let _ = rustix::net::sockopt::set_socket_send_buffer_size(&socket, 8 << 20);
        let identifier = self.identifier.unwrap_or_else(program_name);
        Ok(JournaldSink {
            socket,
            path: self.path,
            address,
            identifier,
            entry: Vec::new(),
            dropped: 0,
        })
    }
}

/// The program's file name, as `SYSLOG_IDENTIFIER`'s default.
fn program_name() -> String {
    std::env::args_os()
        .next()
        .as_deref()
        .map(Path::new)
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tachylog".to_string())
}

impl JournaldSink {
    /// The settings, with journald's socket and the program's name as identifier.
    ///
    /// ```
    /// let builder = tachylog::JournaldSink::builder();
    /// ```
    pub fn builder() -> JournaldBuilder {
        JournaldBuilder::default()
    }

    /// How many records journald did not take so far.
    ///
    /// ```no_run
    /// let sink = tachylog::JournaldSink::builder().build().unwrap();
    /// assert_eq!(sink.dropped(), 0);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Writes `line`'s entry into `self.entry` (cleared first).
    fn build_entry(&mut self, line: &Line<'_>) {
        let out = &mut self.entry;
        out.clear();
        put(out, "MESSAGE", line.message.as_bytes());
        put(
            out,
            "PRIORITY",
            &[b'0' + super::syslog_severity(line.level)],
        );
        put(out, "SYSLOG_IDENTIFIER", self.identifier.as_bytes());
        put(out, "TARGET", line.target.as_bytes());
        put(out, "CODE_FILE", line.file.as_bytes());
        let mut number = itoa::Buffer::new();
        put(out, "CODE_LINE", number.format(line.line_number).as_bytes());
        put(out, "THREAD_NAME", line.thread_name.as_bytes());
        put(out, "TID", number.format(line.thread_id).as_bytes());
        let micros = line.unix_nanos.div_euclid(1000);
        put(
            out,
            "RECORD_REALTIME_USEC",
            number.format(micros).as_bytes(),
        );
        if line.fields.has_spans() {
            let mut path = Vec::new();
            crate::format::fields::write_span_path(line.fields, &mut path);
            put(out, "SPANS", &path);
        }
        if let Some(trace) = line.trace {
            let mut hex = Vec::with_capacity(32);
            crate::record::write_hex(&trace.trace_id, &mut hex);
            put(out, "TRACE_ID", &hex);
            hex.clear();
            crate::record::write_hex(&trace.span_id, &mut hex);
            put(out, "SPAN_ID", &hex);
        }
        let room = MAX_FIELDS - OWN_FIELDS.len();
        let mut name = String::new();
        let mut value = String::new();
        let mut left_out = 0usize;
        for (i, field) in line.fields.iter().enumerate() {
            if i >= room {
                left_out += 1;
                continue;
            }
            field_name(field.key, &mut name);
            value.clear();
            let _ = write!(value, "{}", field.value);
            put(out, &name, value.as_bytes());
        }
        if left_out > 0 {
            put(out, "FIELDS_LEFT_OUT", number.format(left_out).as_bytes());
        }
    }

    /// Hands `self.entry` to journald: one datagram, or a sealed memfd when the entry is too
    /// large for one.
    fn send(&mut self) -> io::Result<()> {
        match self.socket.send_to(&self.entry, &self.path) {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMSGSIZE | libc::ENOBUFS)) => {
                self.send_in_memfd()
            }
            Err(e) => Err(e),
        }
    }

    fn send_in_memfd(&mut self) -> io::Result<()> {
        let memfd = rustix::fs::memfd_create(
            "tachylog-journal-entry",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )?;
        let mut file = std::fs::File::from(memfd);
        file.write_all(&self.entry)?;
        // journald takes a memfd only sealed, so that the sender cannot change it while it
        // is read.
        rustix::fs::fcntl_add_seals(
            &file,
            SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE | SealFlags::SEAL,
        )?;
        let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        let fds = [file.as_fd()];
        if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
            return Err(io::Error::other("no room to pass the memfd"));
        }
        let nothing: [IoSlice<'_>; 0] = [];
        rustix::net::sendmsg_addr(
            &self.socket,
            &self.address,
            &nothing,
            &mut control,
            SendFlags::NOSIGNAL,
        )?;
        Ok(())
    }
}

impl Sink for JournaldSink {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        self.build_entry(line);
        self.send().map_err(|e| {
            self.dropped += 1;
            let why = match e.raw_os_error() {
                Some(libc::ENOENT | libc::ECONNREFUSED) => " (is systemd-journald running?)",
                Some(libc::EAGAIN) => " (journald's queue stayed full past the write timeout)",
                _ => "",
            };
            io::Error::other(RecordDropped(format!(
                "journald {}: {e}{why}",
                self.path.display()
            )))
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn describe(&self) -> String {
        format!("journald {}", self.path.display())
    }
}

/// Appends one field in the native protocol: `NAME=value\n`, or the binary-safe form when the
/// value holds a newline.
fn put(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    if value.contains(&b'\n') {
        out.push(b'\n');
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
    } else {
        out.push(b'=');
    }
    out.extend_from_slice(value);
    out.push(b'\n');
}

/// A record's field key as a journal field name, as [`JournaldSink`] says.
fn field_name(key: &str, name: &mut String) {
    name.clear();
    let mut chars = key.chars().skip_while(|&c| c == '_').peekable();
    let needs_prefix = match chars.peek() {
        None => true,
        Some(c) => c.is_ascii_digit(),
    };
    if needs_prefix {
        name.push_str("F_");
    }
    for c in chars {
        if name.len() >= MAX_FIELD_NAME {
            break;
        }
        name.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    if OWN_FIELDS.contains(&name.as_str()) {
        name.insert_str(0, "F_");
        name.truncate(MAX_FIELD_NAME);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(key: &str) -> String {
        let mut out = String::new();
        field_name(key, &mut out);
        out
    }

    #[test]
    fn field_names_are_what_journald_accepts() {
        assert_eq!(name("user_id"), "USER_ID");
        assert_eq!(name("http.method"), "HTTP_METHOD");
        assert_eq!(name("_secret"), "SECRET");
        assert_eq!(name("__"), "F_");
        assert_eq!(name(""), "F_");
        assert_eq!(name("2fa"), "F_2FA");
        assert_eq!(name("message"), "F_MESSAGE");
        assert_eq!(name("Priority"), "F_PRIORITY");
        assert_eq!(name("span_id"), "F_SPAN_ID");
        assert_eq!(name("é"), "_");
        assert_eq!(name(&"k".repeat(100)).len(), MAX_FIELD_NAME);
    }

    #[test]
    fn values_with_a_newline_take_the_binary_safe_form() {
        let mut out = Vec::new();
        put(&mut out, "A", b"one line");
        put(&mut out, "B", b"two\nlines");
        let mut expected = b"A=one line\nB\n".to_vec();
        expected.extend_from_slice(&9u64.to_le_bytes());
        expected.extend_from_slice(b"two\nlines\n");
        assert_eq!(out, expected);
    }

    #[test]
    fn a_socket_nobody_listens_on_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-journald");
        let error = JournaldSink::builder().socket(&path).build().err().unwrap();
        assert!(
            error.to_string().contains(&*path.to_string_lossy()),
            "{error}"
        );
    }
}
