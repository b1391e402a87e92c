//! The settings of a [`SyslogSink`] and the facilities.

use super::tcp::Tcp;
use super::{header_field, resolve, system_hostname, SyslogSink, Transport, TRUNCATION_MARK};
use crate::format::time::TimeCache;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
#[cfg(unix)]
use std::path::Path;
use std::time::Duration;

/// The syslog facility of every record a [`SyslogSink`] sends (RFC 5424, table 1).
///
/// ```
/// assert_eq!(tachylog::Facility::Local3.code(), 19);
/// assert_eq!(tachylog::Facility::default(), tachylog::Facility::User);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[allow(missing_docs)] // the names are the RFC's
pub enum Facility {
    Kern = 0,
    #[default]
    User = 1,
    Mail = 2,
    Daemon = 3,
    Auth = 4,
    Syslog = 5,
    Lpr = 6,
    News = 7,
    Uucp = 8,
    Cron = 9,
    AuthPriv = 10,
    Ftp = 11,
    Ntp = 12,
    Audit = 13,
    Alert = 14,
    Clock = 15,
    Local0 = 16,
    Local1 = 17,
    Local2 = 18,
    Local3 = 19,
    Local4 = 20,
    Local5 = 21,
    Local6 = 22,
    Local7 = 23,
}

impl Facility {
    /// The facility's numeric code, 0 to 23.
    ///
    /// ```
    /// assert_eq!(tachylog::Facility::Kern.code(), 0);
    /// ```
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Settings of a [`SyslogSink`]; finish with [`udp`](SyslogBuilder::udp),
/// [`tcp`](SyslogBuilder::tcp) or, on Unix, [`unix`](SyslogBuilder::unix).
///
/// ```
/// let sink = tachylog::SyslogSink::builder()
///     .facility(tachylog::Facility::Local0)
///     .hostname("web-1")
///     .app_name("shop")
///     .msg_id("req")
///     .udp("127.0.0.1:9")
///     .unwrap();
/// assert_eq!(sink.describe_target(), "syslog udp 127.0.0.1:9");
/// ```
#[derive(Debug, Clone)]
pub struct SyslogBuilder {
    facility: Facility,
    hostname: Option<String>,
    app_name: Option<String>,
    msg_id: String,
    max_datagram: usize,
    buffer_records: usize,
    buffer_bytes: usize,
    connect_timeout: Duration,
    write_timeout: Duration,
}

impl Default for SyslogBuilder {
    fn default() -> Self {
        SyslogBuilder {
            facility: Facility::User,
            hostname: None,
            app_name: None,
            msg_id: "-".to_string(),
            max_datagram: 2048,
            buffer_records: 10_000,
            buffer_bytes: 4 << 20,
            connect_timeout: Duration::from_secs(1),
            write_timeout: Duration::from_secs(1),
        }
    }
}

impl SyslogBuilder {
    /// The facility of every record (default [`Facility::User`]).
    ///
    /// ```
    /// let b = tachylog::SyslogSink::builder().facility(tachylog::Facility::Daemon);
    /// ```
    pub fn facility(mut self, facility: Facility) -> Self {
        self.facility = facility;
        self
    }

    /// The HOSTNAME field (default: `gethostname`). Characters outside printable US-ASCII are
    /// replaced by `_`; at most 255 are kept.
    ///
    /// ```
    /// let b = tachylog::SyslogSink::builder().hostname("web-1.example.com");
    /// ```
    pub fn hostname(mut self, hostname: impl Into<String>) -> Self {
        self.hostname = Some(hostname.into());
        self
    }

    /// The APP-NAME field (default: the executable's file name), at most 48 characters.
    ///
    /// ```
    /// let b = tachylog::SyslogSink::builder().app_name("shop");
    /// ```
    pub fn app_name(mut self, app_name: impl Into<String>) -> Self {
        self.app_name = Some(app_name.into());
        self
    }

    /// The MSGID field of every record (default `-`, none), at most 32 characters.
    ///
    /// ```
    /// let b = tachylog::SyslogSink::builder().msg_id("audit");
    /// ```
    pub fn msg_id(mut self, msg_id: impl Into<String>) -> Self {
        self.msg_id = msg_id.into();
        self
    }

    /// The largest UDP or Unix datagram, in bytes (default 2048, the size RFC 5426 says every
    /// receiver should take). A longer message is cut on a character boundary and ends in
    /// `...[truncated]`. TCP messages are never cut.
    ///
    /// ```
    /// let b = tachylog::SyslogSink::builder().max_datagram(8192);
    /// ```
    pub fn max_datagram(mut self, bytes: usize) -> Self {
        self.max_datagram = bytes.max(TRUNCATION_MARK.len() + 64);
        self
    }

    /// How much a TCP sink holds in memory while the collector is unreachable (default 10,000
    /// records or 4 MiB, whichever is reached first). When it is full the newest record is
    /// dropped and counted.
    ///
    /// ```
    /// let b = tachylog::SyslogSink::builder().buffer_limit(1_000, 1 << 20);
    /// ```
    pub fn buffer_limit(mut self, records: usize, bytes: usize) -> Self {
        self.buffer_records = records.max(1);
        self.buffer_bytes = bytes.max(1);
        self
    }

    /// How long a TCP connect and each TCP write may block the back end (default 1 s each).
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tachylog::SyslogSink::builder().timeouts(Duration::from_millis(500), Duration::from_secs(2));
    /// ```
    pub fn timeouts(mut self, connect: Duration, write: Duration) -> Self {
        self.connect_timeout = connect.max(Duration::from_millis(1));
        self.write_timeout = write.max(Duration::from_millis(1));
        self
    }

    /// A sink sending one datagram per record to `addr` (`host:port`; 514 is the standard
    /// port). Fails only if `addr` does not resolve or no socket can be made.
    ///
    /// ```
    /// // Nobody needs to listen: a UDP send succeeds anyway.
    /// let sink = tachylog::SyslogSink::builder().udp("127.0.0.1:9").unwrap();
    /// let guard = tachylog::builder().sink(sink).init().unwrap();
    /// tachylog::info!("sent as one datagram");
    /// drop(guard);
    /// ```
    pub fn udp(self, addr: impl ToSocketAddrs) -> io::Result<SyslogSink> {
        let addr = resolve(addr)?;
        let bind: SocketAddr = if addr.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = UdpSocket::bind(bind)?;
        socket.connect(addr)?;
        socket.set_write_timeout(Some(self.write_timeout))?;
        Ok(self.finish(Transport::Udp { socket, addr }))
    }

    /// A sink sending records over TCP to `addr`, framed by octet counting (RFC 6587:
    /// `LEN SP MSG`). The first connection is tried at once; if it fails the sink starts
    /// disconnected and buffers (see [`SyslogSink`]). Fails only if `addr` does not resolve.
    ///
    /// ```no_run
    /// let sink = tachylog::SyslogSink::builder().tcp("logs.example.com:6514").unwrap();
    /// let guard = tachylog::builder().sink(sink).init().unwrap();
    /// tachylog::warn!("over TCP");
    /// drop(guard);
    /// ```
    pub fn tcp(self, addr: impl ToSocketAddrs) -> io::Result<SyslogSink> {
        let addr = resolve(addr)?;
        let tcp = Tcp::connect(
            addr,
            (self.buffer_records, self.buffer_bytes),
            self.connect_timeout,
            self.write_timeout,
        );
        Ok(self.finish(Transport::Tcp(tcp)))
    }

    /// A sink sending one datagram per record to the Unix datagram socket at `path`, such as
    /// `/dev/log`. Stream sockets are not supported: connecting to one fails with an error
    /// saying so. Unix only.
    ///
    /// ```no_run
    /// let sink = tachylog::SyslogSink::builder().unix("/dev/log").unwrap();
    /// let guard = tachylog::builder().sink(sink).init().unwrap();
    /// tachylog::info!("to the local syslog daemon");
    /// drop(guard);
    /// ```
    #[cfg(unix)]
    pub fn unix(self, path: impl AsRef<Path>) -> io::Result<SyslogSink> {
        let unix = super::UnixTransport::connect(path.as_ref().to_path_buf(), self.write_timeout)?;
        Ok(self.finish(Transport::Unix(unix)))
    }

    fn finish(self, transport: Transport) -> SyslogSink {
        let hostname = self.hostname.unwrap_or_else(system_hostname);
        let app_name = self.app_name.unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default()
        });
        let mut header_tail = String::new();
        header_tail.push(' ');
        header_tail.push_str(&header_field(&hostname, 255));
        header_tail.push(' ');
        header_tail.push_str(&header_field(&app_name, 48));
        header_tail.push(' ');
        header_tail.push_str(&std::process::id().to_string());
        header_tail.push(' ');
        header_tail.push_str(&header_field(&self.msg_id, 32));
        header_tail.push(' ');
        SyslogSink {
            transport,
            facility: self.facility,
            header_tail,
            time: TimeCache::new(crate::zone::TimeZone::utc()),
            message: Vec::with_capacity(1024),
            max_datagram: self.max_datagram,
            dropped: 0,
        }
    }
}
