//! `server_keepalive` and `server_close`: the socket-server seed. A small HTTP/1.1 server
//! (std `TcpListener`, one acceptor thread handing connections to a fixed pool of worker
//! threads) logs one access record per request through the logger under test, while a load
//! generator in the same process drives it over 127.0.0.1 with a fixed number of concurrent
//! connections for a fixed time. We report requests/s, the client-side p50/p99 latency and
//! the server's CPU per request: the process's CPU time from the server's start until the
//! logger's finish returned, minus what the client threads used (each reads its own), so
//! that the figure holds the server, the logger and its back end, and no load generator.
//!
//! Everything is bounded: the clients stop at the deadline or the request cap, every socket
//! has a read timeout, and the acceptor is woken by one last connection so it stops too.
//! Only the loopback address is ever used.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use super::Scale;
use crate::error::BenchError;
use crate::loggers::BenchLogger;
use crate::machine::Usage;
use crate::report::ServerRun;
use crate::stats::nearest_rank;

/// The response to every request.
const BODY: &[u8] = b"ok";

/// No socket waits longer than this for a byte; a stuck peer ends its connection.
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// Load and pool sizes.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Concurrent client connections (one client thread each).
    pub connections: usize,
    /// Server worker threads (each serves one connection at a time).
    pub workers: usize,
    /// How long the clients send requests.
    pub duration: Duration,
    /// Requests at most (all clients together), whichever comes first.
    pub max_requests: u64,
}

impl Params {
    /// The sizes for each scale.
    pub fn for_scale(scale: Scale) -> Self {
        let small = scale == Scale::Smoke;
        Params {
            connections: if small { 4 } else { 32 },
            workers: if small { 4 } else { 32 },
            duration: match scale {
                Scale::Quick => Duration::from_secs(2),
                Scale::Full => Duration::from_secs(3),
                Scale::Smoke => Duration::from_millis(200),
            },
            // Connection-per-request mode leaves a TIME_WAIT socket per request; the cap
            // keeps one run well inside the ephemeral port range.
            max_requests: 15_000_000,
        }
    }

    /// One line for the report header.
    pub fn describe(self, name: &str, keep_alive: bool) -> String {
        format!(
            "{name}: HTTP/1.1 on 127.0.0.1, {} client connections ({}), {} server workers, \
             {} s; one access-log record per request (logged by the worker); requests/s, \
             client-side p50/p99, and the server's CPU per request (process CPU minus the \
             client threads', the logger's finish included)",
            self.connections,
            if keep_alive {
                "keep-alive"
            } else {
                "a new connection per request, at most 15,000 requests"
            },
            self.workers,
            self.duration.as_secs()
        )
    }

    fn cap(self, keep_alive: bool) -> u64 {
        if keep_alive {
            self.max_requests
        } else {
            self.max_requests.min(15_000)
        }
    }
}

/// Runs the server and the load generator in this (child) process.
pub fn run<L: BenchLogger>(
    file: &Path,
    p: Params,
    keep_alive: bool,
) -> Result<ServerRun, BenchError> {
    let logger = L::init(file)?;
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| BenchError::io("127.0.0.1:0", e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| BenchError::io("127.0.0.1:0", e))?;
    let served = AtomicU64::new(0);
    let before = Usage::process();
    let load = serve_while(&listener, p.workers, &served, &logger, || {
        generate_load(addr, p, keep_alive)
    });
    logger.finish()?;
    let cpu_s = Usage::process().since(before).cpu_s;
    let mut load = load.map_err(|e| BenchError::io(addr.to_string(), e))?;
    let mut run = summarize(&mut load, served.into_inner(), p.connections);
    run.cpu_s = Some(cpu_s);
    run.client_cpu_s = Some(load.client_cpu_s);
    Ok(run)
}

/// What the load generator saw.
pub struct Load {
    /// Per-request latency, ns (answered requests only).
    pub latencies_ns: Vec<u64>,
    /// From the first request to the last answer.
    pub elapsed: Duration,
    /// CPU seconds the client threads used, together.
    pub client_cpu_s: f64,
}

/// Serves `listener` with `workers` threads while `clients` runs; returns what it returned.
/// `served` counts the requests answered (and logged).
pub fn serve_while<L: BenchLogger, T>(
    listener: &TcpListener,
    workers: usize,
    served: &AtomicU64,
    logger: &L,
    clients: impl FnOnce() -> T,
) -> T {
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<TcpStream>();
    let rx = Mutex::new(rx);
    std::thread::scope(|s| {
        let stop = &stop;
        s.spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                if let Ok(conn) = conn {
                    if tx.send(conn).is_err() {
                        break;
                    }
                }
            }
            // Dropping `tx` here lets the workers finish once the queue is empty.
        });
        for _ in 0..workers {
            s.spawn(|| loop {
                let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                match next {
                    Ok(conn) => {
                        // A broken connection ends only itself.
                        let _ = handle(conn, logger, served);
                    }
                    Err(_) => break,
                }
            });
        }
        let result = clients();
        stop.store(true, Ordering::Release);
        // Wakes the acceptor, which then sees `stop`. If this fails the acceptor is already
        // gone (its listener errored), which ends it too.
        if let Ok(addr) = listener.local_addr() {
            let _ = TcpStream::connect_timeout(&addr, IO_TIMEOUT);
        }
        result
    })
}

/// Serves one connection until the client closes it, asks to close, or stalls.
fn handle<L: BenchLogger>(conn: TcpStream, logger: &L, served: &AtomicU64) -> std::io::Result<()> {
    conn.set_read_timeout(Some(IO_TIMEOUT))?;
    conn.set_nodelay(true)?;
    let peer = conn.peer_addr()?.ip().to_string();
    let mut writer = conn.try_clone()?;
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let start = Instant::now();
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        let mut close = false;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            close |= line.eq_ignore_ascii_case("connection: close\r\n");
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n",
            BODY.len(),
            if close { "close" } else { "keep-alive" }
        );
        writer.write_all(head.as_bytes())?;
        writer.write_all(BODY)?;
        let micros = start.elapsed().as_micros() as u64;
        logger.access(&peer, &path, 200, micros);
        served.fetch_add(1, Ordering::Relaxed);
        if close {
            return Ok(());
        }
    }
}

/// Drives `addr` with `p.connections` clients until the deadline or the request cap.
pub fn generate_load(addr: SocketAddr, p: Params, keep_alive: bool) -> std::io::Result<Load> {
    let sent = AtomicU64::new(0);
    let cap = p.cap(keep_alive);
    let start = Instant::now();
    let deadline = start + p.duration;
    let per_client: Vec<std::io::Result<(Vec<u64>, f64)>> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..p.connections)
            .map(|_| {
                s.spawn(|| {
                    let latencies = client(addr, keep_alive, deadline, &sent, cap)?;
                    Ok((latencies, Usage::thread().cpu_s))
                })
            })
            .collect();
        clients
            .into_iter()
            .map(|c| {
                c.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("client panicked")))
            })
            .collect()
    });
    let elapsed = start.elapsed();
    let mut latencies_ns = Vec::new();
    let mut client_cpu_s = 0.0;
    for r in per_client {
        let (latencies, cpu_s) = r?;
        latencies_ns.extend(latencies);
        client_cpu_s += cpu_s;
    }
    Ok(Load {
        latencies_ns,
        elapsed,
        client_cpu_s,
    })
}

/// One client: sends `GET` requests one after another, each answered before the next.
fn client(
    addr: SocketAddr,
    keep_alive: bool,
    deadline: Instant,
    sent: &AtomicU64,
    cap: u64,
) -> std::io::Result<Vec<u64>> {
    let mut latencies = Vec::new();
    let mut conn: Option<BufReader<TcpStream>> = None;
    let request: &[u8] = if keep_alive {
        b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    } else {
        b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    };
    while Instant::now() < deadline && sent.fetch_add(1, Ordering::Relaxed) < cap {
        let t0 = Instant::now();
        let reader = match conn.as_mut() {
            Some(r) => r,
            None => {
                let c = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
                c.set_read_timeout(Some(IO_TIMEOUT))?;
                c.set_nodelay(true)?;
                conn.insert(BufReader::new(c))
            }
        };
        reader.get_mut().write_all(request)?;
        read_response(reader)?;
        latencies.push(t0.elapsed().as_nanos() as u64);
        if !keep_alive {
            conn = None;
        }
    }
    Ok(latencies)
}

/// Reads one response: headers, then `Content-Length` bytes of body.
fn read_response(reader: &mut BufReader<TcpStream>) -> std::io::Result<()> {
    let mut line = String::new();
    let mut length = 0usize;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)
}

/// Turns the load generator's view into the report's figures.
pub fn summarize(load: &mut Load, served: u64, connections: usize) -> ServerRun {
    load.latencies_ns.sort_unstable();
    let requests = load.latencies_ns.len() as u64;
    let secs = load.elapsed.as_secs_f64();
    ServerRun {
        requests,
        served,
        connections: connections as u32,
        elapsed_s: secs,
        requests_per_s: requests as f64 / secs.max(1e-9),
        p50_us: nearest_rank(&load.latencies_ns, 50.0) as f64 / 1e3,
        p99_us: nearest_rank(&load.latencies_ns, 99.0) as f64 / 1e3,
        cpu_s: None,
        client_cpu_s: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loggers::log_calls;

    /// Access records logged by [`Counting`].
    static LOGGED: AtomicU64 = AtomicU64::new(0);

    macro_rules! count {
        ($($arg:tt)*) => {{
            let _ = format_args!($($arg)*);
            LOGGED.fetch_add(1, Ordering::Relaxed);
        }};
    }

    /// A logger that only counts its calls.
    struct Counting;

    impl BenchLogger for Counting {
        const NAME: &'static str = "counting";
        const CRATES: &'static [&'static str] = &[];
        const CONFIG: &'static str = "test";
        fn init(_: &Path) -> Result<Self, BenchError> {
            Ok(Counting)
        }
        log_calls!(count);
        fn finish(self) -> Result<(), BenchError> {
            Ok(())
        }
    }

    #[test]
    fn every_request_of_the_load_generator_is_answered_and_logged_once() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let p = Params {
            connections: 3,
            workers: 3,
            duration: Duration::from_secs(10),
            max_requests: 40,
        };
        let mut total = 0;
        for keep_alive in [true, false] {
            let served = AtomicU64::new(0);
            let mut load = serve_while(&listener, p.workers, &served, &Counting, || {
                generate_load(addr, p, keep_alive)
            })
            .unwrap();
            let run = summarize(&mut load, served.into_inner(), p.connections);
            // The cap, not the 10 s deadline, ends the run: exactly 40 requests.
            assert_eq!(
                (run.requests, run.served),
                (40, 40),
                "keep_alive {keep_alive}"
            );
            assert!(run.p50_us <= run.p99_us);
            assert!(load.client_cpu_s > 0.0);
            total += 40;
            // The listener is reused: serve_while's acceptor stopped, the socket stays open.
        }
        assert_eq!(LOGGED.load(Ordering::Relaxed), total);
    }
}
