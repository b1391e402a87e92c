//! A real server (`examples/axum_graceful.rs`: axum on tokio, tachylog with its defaults) that
//! handles SIGTERM or SIGINT itself keeps control of its shutdown, whichever library catches
//! the signal (`tokio::signal`, `signal-hook`, `ctrlc`) and whether it installs its handler
//! before or after tachylog's `init`: the requests in flight complete, the shutdown records are
//! written, every access line is in the log exactly once, and the process exits 0.
//!
//! Before tachylog decided at signal time whose handler was installed, a handler installed
//! after `init` (tokio's, signal-hook's) chained into tachylog's, which drained and re-raised:
//! the process died of SIGTERM right after "shutdown started".

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const REQUESTS: u64 = 6;

/// The example's binary, built by `cargo test` with the tests (or built here when a single
/// test target was asked for).
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let binary = profile_dir.join("examples").join("axum_graceful");
    if !binary.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args([
            "build",
            "-p",
            "ecosystem-defaults",
            "--example",
            "axum_graceful",
        ]);
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build for the example");
        assert!(
            status.success(),
            "building examples/axum_graceful.rs failed"
        );
    }
    binary
}

/// Kills the server if the test fails before it exits.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server and returns it with the address it listens on.
fn start(log: &std::path::Path, signals: &str, handler: &str) -> (Server, SocketAddr) {
    let mut child = Command::new(example_binary())
        .args([
            "--log",
            log.to_str().unwrap(),
            "--port",
            "0",
            "--work-ms",
            "400",
        ])
        .args(["--signals", signals, "--handler", handler])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start examples/axum_graceful");
    let stdout = child.stdout.take().unwrap();
    let (found, address) = mpsc::channel();
    thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(address) = line.strip_prefix("listening on ") {
                if !sent {
                    let _ = found.send(address.parse::<SocketAddr>().expect("an address"));
                    sent = true;
                }
            }
        }
    });
    let server = Server(child);
    let address = address
        .recv_timeout(Duration::from_secs(60))
        .expect("the server said where it listens within 60 s");
    (server, address)
}

/// One request on its own connection; returns the response's body.
fn get(address: SocketAddr, id: u64) -> String {
    let mut stream = TcpStream::connect(address).expect("connect to the server");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET /work/{id} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("read the response");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    assert!(
        head.starts_with("HTTP/1.1 200"),
        "request {id}: {response:?}"
    );
    body.to_string()
}

fn wait_for_exit(server: &mut Server, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = server.0.try_wait().expect("wait for the server") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit within {limit:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

fn graceful_shutdown(signals: &str, handler: &str, signal: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let (mut server, address) = start(&log, signals, handler);
    let clients: Vec<_> = (0..REQUESTS)
        .map(|id| thread::spawn(move || get(address, id)))
        .collect();
    // The requests work for 400 ms: the signal comes while every one is in flight.
    thread::sleep(Duration::from_millis(150));
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(server.0.id() as libc::pid_t, signal) };
    for (id, client) in clients.into_iter().enumerate() {
        assert_eq!(
            client.join().expect("client thread"),
            format!("done {id}\n")
        );
    }
    let status = wait_for_exit(&mut server, Duration::from_secs(60));
    let text = std::fs::read_to_string(&log).expect("the server's log");
    assert_eq!(
        status.code(),
        Some(0),
        "{signals}, handler {handler}: {status}\n{text}"
    );
    assert!(text.ends_with('\n'), "the log ends inside a line\n{text}");

    let lines: Vec<&str> = text.lines().collect();
    let position = |message: &str| {
        let needle = format!(": {message}");
        let found: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].contains(&needle))
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{signals}, {handler}: {message:?} must be logged once\n{text}"
        );
        found[0]
    };
    let started = position("shutdown started");
    let done = position("shutdown done");
    assert!(started < done, "{text}");
    for id in 0..REQUESTS {
        let access = position(&format!("GET /work/{id} 200 request_id={id} "));
        assert!(access < done, "request {id} logged after the end\n{text}");
    }
}

#[test]
fn tokio_signal_installed_after_init() {
    graceful_shutdown("tokio", "after-init", libc::SIGTERM);
}

#[test]
fn tokio_signal_installed_before_init() {
    graceful_shutdown("tokio", "before-init", libc::SIGTERM);
}

#[test]
fn signal_hook_installed_after_init() {
    graceful_shutdown("signal-hook", "after-init", libc::SIGTERM);
}

#[test]
fn signal_hook_installed_before_init() {
    graceful_shutdown("signal-hook", "before-init", libc::SIGTERM);
}

/// `ctrlc` with its default features handles SIGINT (SIGTERM needs its `termination` feature).
#[test]
fn ctrlc_installed_after_init() {
    graceful_shutdown("ctrlc", "after-init", libc::SIGINT);
}

#[test]
fn ctrlc_installed_before_init() {
    graceful_shutdown("ctrlc", "before-init", libc::SIGINT);
}

/// SIGINT reaches tokio's handler too (Ctrl-C in a terminal).
#[test]
fn tokio_sigint_installed_after_init() {
    graceful_shutdown("tokio", "after-init", libc::SIGINT);
}
