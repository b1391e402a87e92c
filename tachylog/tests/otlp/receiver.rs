//! An OTLP/HTTP receiver for the tests, on loopback: a listener thread and one thread per
//! connection (HTTP/1.1, keep-alive), decoding each request with the official protobuf
//! definitions (`opentelemetry-proto`, `prost`) after gunzipping it if it says gzip, and
//! answering as the test scripts it. Every loop is bounded: it stops when dropped or after
//! 120 s. Also the helpers that read what it received.
#![allow(dead_code)] // each test binary uses its own part

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use prost::Message as _;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How the receiver answers one request.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::status(200, ExportLogsServiceResponse::default().encode_to_vec())
    }

    pub fn status(status: u16, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body,
        }
    }

    pub fn retry_after(status: u16, seconds: u32) -> Reply {
        Reply {
            status,
            headers: vec![("Retry-After", seconds.to_string())],
            body: b"busy".to_vec(),
        }
    }
}

/// One request the receiver took, decoded.
#[derive(Debug)]
pub struct Received {
    pub at: Instant,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub request: ExportLogsServiceRequest,
    /// The status it was answered with.
    pub status: u16,
}

#[derive(Default)]
struct Script {
    /// Replies for the next requests, in order.
    next: VecDeque<Reply>,
    /// The reply once `next` is empty (200 if `None`).
    otherwise: Option<Reply>,
}

/// An OTLP/HTTP receiver on 127.0.0.1: a listener thread and one thread per connection, all
/// stopping when the receiver is dropped or after 120 s.
pub struct Receiver {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<Script>>,
    stop: Arc<AtomicBool>,
    listener: Option<JoinHandle<()>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        Receiver::start_on(TcpListener::bind("127.0.0.1:0").unwrap())
    }

    pub fn start_on(listener: TcpListener) -> Receiver {
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(Script::default()));
        let stop = Arc::new(AtomicBool::new(false));
        listener.set_nonblocking(true).unwrap();
        let (r, s, st) = (received.clone(), script.clone(), stop.clone());
        let handle = thread::spawn(move || {
            let started = Instant::now();
            let mut connections = Vec::new();
            while !st.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(120) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        // Windows hands out accepted sockets in the listener's non-blocking
                        // mode; `serve` blocks, with timeouts.
                        stream.set_nonblocking(false).unwrap();
                        let (r, s, st) = (r.clone(), s.clone(), st.clone());
                        connections
                            .push(thread::spawn(move || serve(stream, &r, &s, &st, started)));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
            for c in connections {
                let _ = c.join();
            }
        });
        Receiver {
            addr,
            received,
            script,
            stop,
            listener: Some(handle),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn reply_next(&self, reply: Reply) {
        self.script.lock().unwrap().next.push_back(reply);
    }

    pub fn reply_otherwise(&self, reply: Option<Reply>) {
        self.script.lock().unwrap().otherwise = reply;
    }

    pub fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }

    /// Polls (at most 30 s) until `enough` holds for the requests so far.
    pub fn wait_until(&self, what: &str, enough: impl Fn(&[Received]) -> bool) {
        let started = Instant::now();
        while !enough(&self.received.lock().unwrap()) {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "waited 30 s for {what}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// The records of the requests answered 200, in arrival order.
    pub fn delivered(&self) -> Vec<LogRecord> {
        delivered(&self.received.lock().unwrap())
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.listener.take() {
            let _ = h.join();
        }
    }
}

pub fn delivered(received: &[Received]) -> Vec<LogRecord> {
    received
        .iter()
        .filter(|r| r.status == 200)
        .flat_map(|r| &r.request.resource_logs)
        .flat_map(|rl| &rl.scope_logs)
        .flat_map(|sl| sl.log_records.iter().cloned())
        .collect()
}

pub fn attributes(list: &[KeyValue]) -> HashMap<String, any_value::Value> {
    list.iter()
        .map(|kv| {
            (
                kv.key.clone(),
                kv.value
                    .clone()
                    .and_then(|v| v.value)
                    .expect("attribute without a value"),
            )
        })
        .collect()
}

pub fn string(v: &any_value::Value) -> &str {
    match v {
        any_value::Value::StringValue(s) => s,
        other => panic!("not a string: {other:?}"),
    }
}

pub fn int(v: &any_value::Value) -> i64 {
    match v {
        any_value::Value::IntValue(i) => *i,
        other => panic!("not an int: {other:?}"),
    }
}

pub fn body(record: &LogRecord) -> &str {
    string(
        record
            .body
            .as_ref()
            .and_then(|b| b.value.as_ref())
            .expect("record without a body"),
    )
}

/// The numbers `n` of the `record n` bodies, asserting none arrived twice.
pub fn numbers(records: &[LogRecord]) -> Vec<u64> {
    let mut seen = HashSet::new();
    let mut out: Vec<u64> = records
        .iter()
        .filter_map(|r| body(r).strip_prefix("record ")?.parse().ok())
        .inspect(|n| assert!(seen.insert(*n), "record {n} arrived twice"))
        .collect();
    out.sort_unstable();
    out
}

/// Serves one keep-alive connection until the peer closes it or the receiver stops.
fn serve(
    stream: TcpStream,
    received: &Mutex<Vec<Received>>,
    script: &Mutex<Script>,
    stop: &AtomicBool,
    started: Instant,
) {
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(120) {
        let mut request_line = String::new();
        match reader.read_line(&mut request_line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if !request_line.is_empty() {
                    panic!("request line split across a timeout: {request_line:?}");
                }
                continue;
            }
            Err(_) => return,
        }
        let at = Instant::now();
        // The rest of the request comes at once: no more timeouts expected, but wait longer.
        reader
            .get_ref()
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut parts = request_line.split_whitespace();
        assert_eq!(parts.next(), Some("POST"), "{request_line:?}");
        let path = parts.next().unwrap().to_string();
        assert_eq!(parts.next(), Some("HTTP/1.1"));
        let mut headers = HashMap::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end_matches("\r\n");
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("header without a colon");
            assert!(
                headers
                    .insert(name.to_ascii_lowercase(), value.trim().to_string())
                    .is_none(),
                "duplicate header {name}"
            );
        }
        let length: usize = headers["content-length"].parse().unwrap();
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).unwrap();
        reader
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        if headers.get("content-encoding").map(String::as_str) == Some("gzip") {
            let mut plain = Vec::new();
            flate2::read::GzDecoder::new(&body[..])
                .read_to_end(&mut plain)
                .expect("valid gzip");
            body = plain;
        }
        let request =
            ExportLogsServiceRequest::decode(&body[..]).expect("a valid ExportLogsServiceRequest");
        let reply = {
            let mut script = script.lock().unwrap();
            script
                .next
                .pop_front()
                .or_else(|| script.otherwise.clone())
                .unwrap_or_else(Reply::ok)
        };
        received.lock().unwrap().push(Received {
            at,
            path,
            headers,
            request,
            status: reply.status,
        });
        let mut head = format!(
            "HTTP/1.1 {} X\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\n",
            reply.status,
            reply.body.len()
        );
        for (name, value) in &reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(&reply.body))
            .is_err()
        {
            return;
        }
    }
}
