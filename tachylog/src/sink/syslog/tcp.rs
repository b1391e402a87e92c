//! The TCP transport of [`SyslogSink`](super::SyslogSink): one connection with connect and
//! write timeouts, a bounded buffer of framed records, and reconnection with backoff.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bytes of whole framed records gathered before a TCP `write`.
const TCP_BATCH: usize = 64 * 1024;

/// First and longest pause between TCP reconnection attempts.
const BACKOFF_START: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

/// A TCP connection to the collector, and the framed records waiting for it.
pub(super) struct Tcp {
    pub(super) addr: SocketAddr,
    /// `None` while disconnected.
    pub(super) stream: Option<TcpStream>,
    /// Framed records (`LEN SP MSG`) not yet handed to the kernel, oldest first.
    pub(super) pending: VecDeque<Vec<u8>>,
    /// Sum of `pending`'s lengths.
    pub(super) pending_bytes: usize,
    pub(super) max_records: usize,
    pub(super) max_bytes: usize,
    pub(super) connect_timeout: Duration,
    pub(super) write_timeout: Duration,
    /// Pause before the next reconnection attempt after this one fails.
    pub(super) backoff: Duration,
    /// No connection attempt before this instant.
    pub(super) next_attempt: Instant,
    /// `next_attempt` on the wall clock (nanoseconds since the Unix epoch), fixed when the
    /// retry is scheduled: the sink's timer deadline, which must not move while it waits.
    pub(super) retry_at_unix_nanos: i64,
    /// Reused buffer for one write of several records.
    pub(super) batch: Vec<u8>,
}

impl Tcp {
    /// A transport to `addr` holding at most `limit` (records, bytes) while disconnected; the
    /// first connection is tried at once, and its failure is not an error: records wait.
    pub(super) fn connect(
        addr: SocketAddr,
        limit: (usize, usize),
        connect_timeout: Duration,
        write_timeout: Duration,
    ) -> Tcp {
        let mut tcp = Tcp {
            addr,
            stream: None,
            pending: VecDeque::new(),
            pending_bytes: 0,
            max_records: limit.0,
            max_bytes: limit.1,
            connect_timeout,
            write_timeout,
            backoff: BACKOFF_START,
            next_attempt: Instant::now(),
            retry_at_unix_nanos: unix_nanos_in(Duration::ZERO),
            batch: Vec::new(),
        };
        let _ = tcp.ensure_connected();
        tcp
    }

    /// Queues one message framed; sends when a batch is full. `Err` says why the record was
    /// dropped (the buffer is full).
    pub(super) fn push(&mut self, message: &[u8]) -> Result<(), String> {
        if self.pending.len() >= self.max_records
            || self.pending_bytes + message.len() + 12 > self.max_bytes
        {
            // Make room if the collector is back; then decide.
            self.send_pending();
        }
        if self.pending.len() >= self.max_records
            || self.pending_bytes + message.len() + 12 > self.max_bytes
        {
            return Err(format!(
                "syslog tcp {}: collector unreachable and the buffer of {} records / {} bytes is \
                 full; the newest record was dropped",
                self.addr, self.max_records, self.max_bytes
            ));
        }
        let mut framed = Vec::with_capacity(message.len() + 8);
        framed.extend_from_slice(itoa::Buffer::new().format(message.len()).as_bytes());
        framed.push(b' ');
        framed.extend_from_slice(message);
        self.pending_bytes += framed.len();
        self.pending.push_back(framed);
        if self.pending_bytes >= TCP_BATCH {
            self.send_pending();
        }
        Ok(())
    }

    /// Connects if needed and allowed by the backoff; hands pending records to the kernel in
    /// batches. Never blocks longer than about one connect timeout plus a write timeout.
    pub(super) fn send_pending(&mut self) {
        if self.pending.is_empty() || !self.ensure_connected() {
            return;
        }
        let started = Instant::now();
        while !self.pending.is_empty() && started.elapsed() < self.write_timeout {
            self.batch.clear();
            for record in &self.pending {
                if !self.batch.is_empty() && self.batch.len() + record.len() > TCP_BATCH {
                    break;
                }
                self.batch.extend_from_slice(record);
            }
            let Some(stream) = self.stream.as_mut() else {
                return;
            };
            let (written, result) = write_counting(stream, &self.batch);
            // Records wholly handed to the kernel are done; one cut short is sent again whole.
            let mut done = 0;
            while let Some(front) = self.pending.front() {
                if done + front.len() > written {
                    break;
                }
                done += front.len();
                self.pending_bytes -= front.len();
                self.pending.pop_front();
            }
            if result.is_err() {
                self.disconnect();
                self.schedule_retry();
                return;
            }
        }
    }

    /// Whether a usable connection exists after trying to make one (if the backoff allows).
    pub(super) fn ensure_connected(&mut self) -> bool {
        if let Some(stream) = &self.stream {
            if peer_closed(stream) {
                self.disconnect();
            } else {
                return true;
            }
        }
        if Instant::now() < self.next_attempt {
            return false;
        }
        match TcpStream::connect_timeout(&self.addr, self.connect_timeout) {
            Ok(stream) => {
                let _ = stream.set_write_timeout(Some(self.write_timeout));
                let _ = stream.set_nodelay(true);
                self.stream = Some(stream);
                self.backoff = BACKOFF_START;
                true
            }
            Err(_) => {
                self.schedule_retry();
                false
            }
        }
    }

    pub(super) fn schedule_retry(&mut self) {
        self.next_attempt = Instant::now() + self.backoff;
        self.retry_at_unix_nanos = unix_nanos_in(self.backoff);
        self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
    }

    pub(super) fn disconnect(&mut self) {
        if let Some(stream) = self.stream.take() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// Whether the collector ended the connection: it never sends anything, so a readable socket
/// means end-of-stream or an error.
fn peer_closed(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    let closed = match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false, // unexpected data; the connection still works
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
    };
    closed || stream.set_nonblocking(false).is_err()
}

/// Writes `data`, returning how many bytes the kernel took and whether all of it went.
fn write_counting(stream: &mut TcpStream, data: &[u8]) -> (usize, io::Result<()>) {
    let mut written = 0;
    while written < data.len() {
        match stream.write(&data[written..]) {
            Ok(0) => return (written, Err(io::ErrorKind::WriteZero.into())),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (written, Err(e)),
        }
    }
    (written, Ok(()))
}

/// The wall-clock time `delay` from now, in nanoseconds since the Unix epoch.
fn unix_nanos_in(delay: Duration) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (now + delay).as_nanos() as i64
}
