//! The connector chain of the exporter's `ureq` agent: ureq's own links (SOCKS or CONNECT
//! proxy, TCP, rustls) with one of ours between the socket and TLS, [`ReadAfterPeerClosed`].
//!
//! Why ours is there: a collector may answer and close before it has read the whole request.
//! A collector that requires a client certificate does this on every TLS 1.3 connection without
//! one: the client's handshake is over before the server has checked the (absent) certificate,
//! so the client starts writing its request while the server sends the `certificate_required`
//! alert and closes. An HTTP server that refuses a request early (`413`) does the same. The next
//! write then fails with "broken pipe" or "connection reset", and ureq reports that, although
//! the collector's answer is already in the socket's receive buffer (Linux keeps received data
//! readable after a reset). A broken pipe is retried for the whole retry budget; the alert is
//! final. Which one the sink saw depended on thread scheduling: on a loaded host, nearly always
//! the broken pipe. So our link holds such a write error back and lets the response be read;
//! the error is reported only if nothing can be read.
//!
//! ureq calls these types `unversioned` (not covered by semver), so `Cargo.toml` keeps ureq to
//! one minor version.

use std::io;

use ureq::unversioned::transport::{
    Buffers, ConnectProxyConnector, ConnectionDetails, Connector, NextTimeout, SocksConnector,
    TcpConnector, Transport,
};

/// The chain ureq's default connector builds for our features, with [`ReadAfterPeerClosed`]
/// right above the socket (so below TLS, and below nothing else: the proxy's `CONNECT` exchange
/// happens inside `ConnectProxyConnector`, before our link sees the socket).
pub(super) fn connector() -> impl Connector<(), Out = impl Transport> {
    let chain =
        ().chain(SocksConnector::default())
            .chain(ConnectProxyConnector::default())
            .chain(TcpConnector::default())
            .chain(ReadAfterPeerClosed);
    #[cfg(feature = "otlp-tls")]
    let chain = chain.chain(ureq::unversioned::transport::RustlsConnector::default());
    chain
}

/// Wraps each new connection in [`PeerClosedTransport`].
#[derive(Debug)]
pub(super) struct ReadAfterPeerClosed;

impl<In: Transport> Connector<In> for ReadAfterPeerClosed {
    type Out = PeerClosedTransport<In>;

    fn connect(
        &self,
        _: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        Ok(chained.map(|inner| PeerClosedTransport {
            inner,
            write_error: None,
        }))
    }
}

/// A connection whose writes, once the peer has closed it, are discarded until a read shows
/// what the peer said before closing.
#[derive(Debug)]
pub(super) struct PeerClosedTransport<T> {
    inner: T,
    /// The write error that showed the peer closed the connection, reported by the next read
    /// that finds nothing more to read.
    write_error: Option<io::Error>,
}

/// Whether a write failed because the peer closed or reset the connection, the case where what
/// it sent before may still be read.
fn closed_by_peer(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
    )
}

impl<T: Transport> Transport for PeerClosedTransport<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        if self.write_error.is_some() {
            // The peer is gone: these bytes cannot reach it. Say they left, so the caller goes
            // on to read the response, where the saved error is reported if there is none.
            return Ok(());
        }
        match self.inner.transmit_output(amount, timeout) {
            Err(ureq::Error::Io(error)) if closed_by_peer(&error) => {
                self.write_error = Some(error);
                Ok(())
            }
            other => other,
        }
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let read = self.inner.await_input(timeout);
        match (read, self.write_error.take()) {
            // Something the peer sent before closing: the caller decodes it (a TLS alert, an
            // HTTP response) and reports that instead of the broken pipe.
            (Ok(true), saved) => {
                self.write_error = saved;
                Ok(true)
            }
            // Nothing more to read (end of stream, a reset, a timeout): the write error is the
            // first thing that went wrong, so it is the one reported.
            (_, Some(error)) => Err(ureq::Error::Io(error)),
            (read, None) => read,
        }
    }

    fn is_open(&mut self) -> bool {
        // Never back to the pool once the peer closed it.
        self.write_error.is_none() && self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

#[cfg(test)]
mod tests {
    use super::super::http::{Client, Endpoint, TlsFiles};
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::{Duration, Instant};

    /// A server that answers before reading the request and closes with the request unread,
    /// so the kernel resets the connection while the client is still writing a body larger
    /// than the socket buffers. Runs on a real loopback socket.
    fn answer_early_and_reset(answer: &'static [u8]) -> (u16, std::thread::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            // Wait until the request has started to arrive, so that closing now, with bytes
            // unread, resets the connection.
            let mut first = [0u8; 1];
            socket.read_exact(&mut first).unwrap();
            socket.write_all(answer).unwrap();
            drop(socket);
        });
        (port, server)
    }

    fn client(port: u16) -> Client {
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}"), false).unwrap();
        Client::new(
            &endpoint,
            &[],
            false,
            Duration::from_secs(5),
            None,
            &TlsFiles::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_response_sent_before_a_reset_is_read_not_the_broken_pipe() {
        let (port, server) = answer_early_and_reset(
            b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbig!",
        );
        // 64 MiB: far more than loopback's socket buffers, so the write is cut by the reset.
        let body = vec![b'x'; 64 << 20];
        let response = client(port)
            .post(&body, Instant::now() + Duration::from_secs(20))
            .expect("the 413 the server sent before resetting");
        assert_eq!(
            (response.status, response.body.as_slice()),
            (413, &b"big!"[..])
        );
        server.join().unwrap();
    }

    #[test]
    fn a_reset_without_a_response_is_still_a_retryable_transport_error() {
        let (port, server) = answer_early_and_reset(b"");
        let body = vec![b'x'; 64 << 20];
        let failure = client(port)
            .post(&body, Instant::now() + Duration::from_secs(20))
            .expect_err("nothing was answered");
        assert!(failure.retryable, "{}", failure.message);
        assert!(
            ["Broken pipe", "Connection reset"]
                .iter()
                .any(|cause| failure.message.contains(cause)),
            "the write error is reported: {}",
            failure.message
        );
        server.join().unwrap();
    }
}
