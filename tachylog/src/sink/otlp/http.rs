//! A minimal HTTP/1.1 client for one job: `POST` a body to the collector and read the status,
//! `Retry-After` and a bounded piece of the response body. Runs on the exporter's thread only.
//!
//! Why not a client crate (`ureq`, `hyper`): we send one kind of request to one host, over
//! plain TCP (no TLS), and need every step bounded by the time left before a deadline (connect,
//! write and each read take the remaining time as their timeout), which is simplest to see in
//! 200 lines over `std::net::TcpStream`. The connection is kept alive between requests when
//! the collector allows it; a request that fails on a reused connection is tried once more on a
//! fresh one, since the collector may have closed an idle connection.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// At most this much of a response body is kept (for error reports and `partial_success`).
const BODY_KEPT: usize = 64 * 1024;
/// A response body longer than this is not read to its end: the connection is dropped instead.
const BODY_DRAINED: usize = 4 << 20;
/// The status line and headers may not exceed this.
const HEAD_MAX: usize = 64 * 1024;

/// A parsed `http://host:port/path` URL.
#[derive(Debug, Clone)]
pub(super) struct Endpoint {
    /// `host` or `[v6]`, as written.
    pub(super) host: String,
    pub(super) port: u16,
    /// The request path, such as `/v1/logs`.
    pub(super) path: String,
}

impl Endpoint {
    /// Parses `url`, appending `/v1/logs` to its path unless it already ends so. `Err` says
    /// what is wrong.
    pub(super) fn parse(url: &str) -> Result<Endpoint, &'static str> {
        if url
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
        {
            return Err("https is not supported (no TLS): send to a collector over http://, such as a local OpenTelemetry Collector");
        }
        let rest = match url.get(..7) {
            Some(scheme) if scheme.eq_ignore_ascii_case("http://") => &url[7..],
            _ => return Err("the URL must start with http://"),
        };
        let (authority, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
        if path.contains(['?', '#']) {
            return Err("a query or fragment is not supported");
        }
        if authority.contains('@') {
            return Err("credentials in the URL are not supported: use a header");
        }
        let (host, port) = match authority.rfind(':') {
            // `[::1]` alone has colons but no port.
            Some(i) if !authority[i..].contains(']') => {
                let port = authority[i + 1..]
                    .parse::<u16>()
                    .map_err(|_| "the port is not a number from 1 to 65535")?;
                (&authority[..i], port)
            }
            _ => (authority, 80),
        };
        if host.is_empty() || port == 0 {
            return Err("the host or port is missing");
        }
        if host.starts_with('[') != host.ends_with(']') || host.contains(char::is_whitespace) {
            return Err("the host is malformed");
        }
        let base = path.trim_end_matches('/');
        let path = if base.ends_with("/v1/logs") {
            base.to_string()
        } else {
            format!("{base}/v1/logs")
        };
        Ok(Endpoint {
            host: host.to_string(),
            port,
            path,
        })
    }

    /// The value of the `Host` header.
    fn host_header(&self) -> String {
        if self.port == 80 {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn resolve(&self) -> io::Result<Vec<SocketAddr>> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        Ok((host, self.port).to_socket_addrs()?.collect())
    }
}

/// What the collector answered.
#[derive(Debug)]
pub(super) struct Response {
    pub(super) status: u16,
    /// The `Retry-After` header, if present and readable.
    pub(super) retry_after: Option<Duration>,
    /// The body's first [`BODY_KEPT`] bytes.
    pub(super) body: Vec<u8>,
}

/// A connection to the collector, opened on demand and kept alive.
pub(super) struct Client {
    endpoint: Endpoint,
    /// The request line and fixed headers, up to and without `Content-Length`.
    head_prefix: String,
    stream: Option<TcpStream>,
    connect_timeout: Duration,
}

impl Client {
    /// `headers` are the extra header lines (`Name: value`), already validated.
    pub(super) fn new(
        endpoint: Endpoint,
        headers: &[(String, String)],
        gzip: bool,
        connect_timeout: Duration,
    ) -> Client {
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: tachylog/{}\r\nContent-Type: application/x-protobuf\r\n",
            endpoint.path,
            endpoint.host_header(),
            env!("CARGO_PKG_VERSION")
        );
        if gzip {
            head.push_str("Content-Encoding: gzip\r\n");
        }
        for (name, value) in headers {
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
        Client {
            endpoint,
            head_prefix: head,
            stream: None,
            connect_timeout,
        }
    }

    /// Sends `body` and reads the response, all before `deadline`. `Err` is a transport error
    /// (no connection, a timeout, a broken or malformed response): worth retrying.
    pub(super) fn post(&mut self, body: &[u8], deadline: Instant) -> io::Result<Response> {
        let reused = self.stream.is_some();
        match self.try_post(body, deadline) {
            Err(_) if reused && Instant::now() < deadline => {
                self.stream = None;
                self.try_post(body, deadline)
            }
            result => result,
        }
    }

    fn try_post(&mut self, body: &[u8], deadline: Instant) -> io::Result<Response> {
        let result = self.exchange(body, deadline);
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    fn exchange(&mut self, body: &[u8], deadline: Instant) -> io::Result<Response> {
        if self.stream.is_none() {
            self.stream = Some(self.connect(deadline)?);
        }
        let stream = self.stream.as_mut().expect("connected above");
        let mut head = String::with_capacity(self.head_prefix.len() + 32);
        head.push_str(&self.head_prefix);
        head.push_str("Content-Length: ");
        head.push_str(itoa::Buffer::new().format(body.len()));
        head.push_str("\r\n\r\n");
        stream.set_write_timeout(Some(remaining(deadline)?))?;
        stream.write_all(head.as_bytes())?;
        write_until(stream, body, deadline)?;
        let (response, keep_alive) = read_response(stream, deadline)?;
        if !keep_alive {
            self.stream = None;
        }
        Ok(response)
    }

    fn connect(&self, deadline: Instant) -> io::Result<TcpStream> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the host resolves to no address");
        for addr in self.endpoint.resolve()? {
            let timeout = remaining(deadline)?.min(self.connect_timeout);
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// The time left before `deadline`, or a timeout error if none is.
fn remaining(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"))
    } else {
        Ok(left)
    }
}

/// Writes all of `data` in pieces, each write bounded by the time left.
fn write_until(stream: &mut TcpStream, data: &[u8], deadline: Instant) -> io::Result<()> {
    for piece in data.chunks(256 * 1024) {
        stream.set_write_timeout(Some(remaining(deadline)?))?;
        stream.write_all(piece)?;
    }
    Ok(())
}

/// A reader of one response, each read bounded by the time left.
struct Incoming<'a> {
    stream: &'a mut TcpStream,
    buf: Vec<u8>,
    /// Bytes of `buf` consumed.
    pos: usize,
    deadline: Instant,
}

impl Incoming<'_> {
    /// Reads more bytes into `buf`; `Ok(false)` at end of stream.
    fn fill(&mut self) -> io::Result<bool> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        self.stream
            .set_read_timeout(Some(remaining(self.deadline)?))?;
        let mut chunk = [0u8; 16 * 1024];
        let n = loop {
            match self.stream.read(&mut chunk) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other?,
            }
        };
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    /// Takes the next line (without `\r\n`).
    fn line(&mut self) -> io::Result<String> {
        loop {
            if let Some(i) = self.buf[self.pos..].windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[self.pos..self.pos + i]).into_owned();
                self.pos += i + 2;
                return Ok(line);
            }
            if self.buf.len() - self.pos > HEAD_MAX {
                return Err(malformed("response line too long"));
            }
            if !self.fill()? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-response",
                ));
            }
        }
    }

    /// Reads `n` body bytes, keeping those that fit in `body`.
    fn body(&mut self, mut n: usize, body: &mut Vec<u8>) -> io::Result<()> {
        while n > 0 {
            if self.pos == self.buf.len() && !self.fill()? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-body",
                ));
            }
            let take = n.min(self.buf.len() - self.pos);
            let keep = take.min(BODY_KEPT.saturating_sub(body.len()));
            body.extend_from_slice(&self.buf[self.pos..self.pos + keep]);
            self.pos += take;
            n -= take;
        }
        Ok(())
    }
}

fn malformed(why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed HTTP response: {why}"),
    )
}

/// Reads one response; also says whether the connection may carry the next request.
fn read_response(stream: &mut TcpStream, deadline: Instant) -> io::Result<(Response, bool)> {
    let mut incoming = Incoming {
        stream,
        buf: Vec::new(),
        pos: 0,
        deadline,
    };
    let (status, mut keep_alive) = loop {
        let status_line = incoming.line()?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default();
        let status = parts.next().and_then(|s| s.parse::<u16>().ok());
        let (Some(status), true) = (status, version.starts_with("HTTP/1.")) else {
            return Err(malformed("bad status line"));
        };
        if (100..200).contains(&status) {
            // An interim response (100 Continue): its headers end at an empty line.
            while !incoming.line()?.is_empty() {}
            continue;
        }
        break (status, version == "HTTP/1.1");
    };
    let (mut length, mut chunked, mut retry_after) = (None, false, None);
    loop {
        let line = incoming.line()?;
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(malformed("header without a colon"));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                length = Some(
                    value
                        .parse::<usize>()
                        .map_err(|_| malformed("bad Content-Length"))?,
                )
            }
            "transfer-encoding" => chunked = value.to_ascii_lowercase().ends_with("chunked"),
            "connection" => {
                let value = value.to_ascii_lowercase();
                if value.contains("close") {
                    keep_alive = false;
                } else if value.contains("keep-alive") {
                    keep_alive = true;
                }
            }
            "retry-after" => retry_after = parse_retry_after(value),
            _ => {}
        }
    }
    let mut body = Vec::new();
    if status == 204 || status == 304 {
        // No body, whatever the headers say.
    } else if chunked {
        let mut total = 0usize;
        loop {
            let size_line = incoming.line()?;
            let size = size_line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| malformed("bad chunk size"))?;
            total = total.saturating_add(size);
            if total > BODY_DRAINED {
                keep_alive = false;
                break;
            }
            if size == 0 {
                // Trailers, then the empty line.
                while !incoming.line()?.is_empty() {}
                break;
            }
            incoming.body(size, &mut body)?;
            if !incoming.line()?.is_empty() {
                return Err(malformed("chunk not followed by CRLF"));
            }
        }
    } else if let Some(length) = length {
        if length > BODY_DRAINED {
            keep_alive = false;
        } else {
            incoming.body(length, &mut body)?;
        }
    } else {
        // No length: the body ends with the connection.
        keep_alive = false;
        loop {
            let kept = BODY_KEPT
                .saturating_sub(body.len())
                .min(incoming.buf.len() - incoming.pos);
            body.extend_from_slice(&incoming.buf[incoming.pos..incoming.pos + kept]);
            incoming.pos = incoming.buf.len();
            if body.len() >= BODY_KEPT || !incoming.fill()? {
                break;
            }
        }
    }
    // Bytes beyond this response on a connection we keep would be a protocol error.
    if incoming.pos != incoming.buf.len() {
        keep_alive = false;
    }
    Ok((
        Response {
            status,
            retry_after,
            body,
        },
        keep_alive,
    ))
}

/// `Retry-After` as a delay: delta-seconds (`120`) or an HTTP-date (`Wed, 21 Oct 2015 07:28:00
/// GMT`, read as RFC 2822); a date in the past is no delay.
pub(super) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = jiff::fmt::rfc2822::parse(value).ok()?.timestamp();
    let delay = when
        .as_duration()
        .checked_sub(jiff::Timestamp::now().as_duration())?;
    Some(Duration::try_from(delay).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_and_get_the_logs_path() {
        let e = Endpoint::parse("http://127.0.0.1:4318").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("127.0.0.1", 4318, "/v1/logs")
        );
        let e = Endpoint::parse("HTTP://collector/otlp/").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("collector", 80, "/otlp/v1/logs")
        );
        let e = Endpoint::parse("http://[::1]:4318/v1/logs").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("[::1]", 4318, "/v1/logs")
        );
        assert_eq!(e.host_header(), "[::1]:4318");
        // A multi-byte character where the scheme would end must not panic the parser.
        assert_eq!(Endpoint::parse("http://é").unwrap().host, "é");
        let e = Endpoint::parse("http://[::1]").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("[::1]", 80));
        for bad in [
            "https://x:4318",
            "127.0.0.1:4318",
            "http://",
            "http://:4318",
            "http://x:99999",
            "http://x:0",
            "http://x:port",
            "http://u:p@x:1",
            "http://x/?q=1",
            "http://[::1:4318",
            "é",
            "httpé://x",
            "",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn retry_after_takes_seconds_and_http_dates() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 "), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let later = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30);
        let date = jiff::fmt::rfc2822::DateTimePrinter::new()
            .timestamp_to_rfc9110_string(&later)
            .unwrap();
        let delay = parse_retry_after(&date).unwrap();
        assert!(
            delay > Duration::from_secs(27) && delay <= Duration::from_secs(30),
            "{delay:?} from {date}"
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
