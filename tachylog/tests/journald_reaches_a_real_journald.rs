//! `JournaldSink` against a real `systemd-journald`, started by the test in a journal namespace
//! of its own (`systemd-journald NAME` listens on `/run/systemd/journal.NAME/socket` and
//! stores under `/var/log/journal/MACHINE-ID.NAME`), read back with `journalctl --namespace
//! NAME --output=json`: every record arrives once with its fields, a multi-line message and a
//! record larger than a datagram (sent in a sealed memfd) arrive whole, and records logged
//! while journald is down are counted and reported once it is back.
//!
//! `systemd-journald` and `journalctl` must be installed (Debian: `apt-get install systemd`;
//! `.ci/run` does it) and the test must run as root, which starting a journald namespace
//! needs: without them it fails, it does not skip.
#![cfg(all(target_os = "linux", feature = "journald"))]

mod common;

use serde_json::Value;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tachylog::JournaldSink;

/// A private journald in the namespace `name`, removed with its files on drop.
struct Journald {
    name: String,
    child: Option<Child>,
}

fn journald_binary() -> PathBuf {
    [
        "/lib/systemd/systemd-journald",
        "/usr/lib/systemd/systemd-journald",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
    .expect(
        "systemd-journald not found in /lib/systemd or /usr/lib/systemd: this test needs a \
             real journald; install it (Debian: apt-get install -y systemd; .ci/run does this)",
    )
}

impl Journald {
    fn start(test: &str) -> Journald {
        assert_eq!(
            // SAFETY: `geteuid` reads the process's credentials; it has no preconditions.
            unsafe { libc::geteuid() },
            0,
            "starting a journald namespace needs root (.ci/run runs as root)"
        );
        let mut journald = Journald {
            name: format!("tachylog-{test}-{}", std::process::id()),
            child: None,
        };
        journald.spawn();
        journald
    }

    /// A sink sending to this journald as `identifier`.
    fn sink(&self, identifier: &str) -> JournaldSink {
        JournaldSink::builder()
            .identifier(identifier)
            .socket(self.socket())
            .build()
            .unwrap()
    }

    fn socket(&self) -> PathBuf {
        PathBuf::from(format!("/run/systemd/journal.{}/socket", self.name))
    }

    fn spawn(&mut self) {
        let child = Command::new(journald_binary())
            .arg(&self.name)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start systemd-journald");
        self.child = Some(child);
        let socket = self.socket();
        let child = self.child.as_mut().unwrap();
        // The socket file outlives a journald that was stopped: ready means it takes a
        // datagram.
        let probe = std::os::unix::net::UnixDatagram::unbound().unwrap();
        common::wait_until(
            format_args!("journald to listen on {}", socket.display()),
            Duration::from_secs(30),
            || {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("systemd-journald exited with {status} before listening");
                }
                probe
                    .send_to(b"SYSLOG_IDENTIFIER=probe\nMESSAGE=probe\n", &socket)
                    .is_ok()
            },
        );
    }

    /// Stops journald as systemd does (SIGTERM: it closes its files cleanly).
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: `kill` with a pid of our own child that has not been waited for.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
        }
    }

    /// The entries of `identifier`, oldest first, as `journalctl --output=json --all` gives
    /// them (`--all`: fields over 4 KiB in full).
    fn entries(&self, identifier: &str) -> Vec<HashMap<String, Value>> {
        let output = Command::new("journalctl")
            .args([
                "--namespace",
                &self.name,
                "--output=json",
                "--all",
                "--no-pager",
            ])
            .arg(format!("SYSLOG_IDENTIFIER={identifier}"))
            .output()
            .expect("run journalctl");
        String::from_utf8(output.stdout)
            .expect("journalctl's JSON is UTF-8")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// Polls until `identifier` has `count` entries, or 30 s have passed; returns the entries
    /// so far, which the caller checks.
    fn wait_for(&self, identifier: &str, count: usize) -> Vec<HashMap<String, Value>> {
        let mut entries = Vec::new();
        common::poll_until(Duration::from_secs(30), || {
            entries = self.entries(identifier);
            entries.len() >= count
        });
        entries
    }
}

impl Drop for Journald {
    fn drop(&mut self) {
        self.stop();
        let machine_id = fs::read_to_string("/etc/machine-id").unwrap_or_default();
        let dir = format!("{}.{}", machine_id.trim(), self.name);
        for root in ["/var/log/journal", "/run/log/journal"] {
            let _ = fs::remove_dir_all(Path::new(root).join(&dir));
        }
        let _ = fs::remove_dir_all(format!("/run/systemd/journal.{}", self.name));
    }
}

/// A field's text: journalctl writes a value that is not printable UTF-8 as an array of bytes.
fn text(entry: &HashMap<String, Value>, field: &str) -> String {
    match entry.get(field) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(bytes)) => String::from_utf8(
            bytes
                .iter()
                .map(|b| b.as_u64().expect("a byte") as u8)
                .collect(),
        )
        .expect("UTF-8"),
        other => panic!("field {field}: {other:?} in {entry:?}"),
    }
}

fn message_of(entry: &HashMap<String, Value>) -> String {
    text(entry, "MESSAGE")
}

#[test]
fn every_record_arrives_once_with_its_fields() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("journald test", Duration::from_secs(120));
    let journald = Journald::start("fields");
    let id = "tachylog-fields";
    let guard = tachylog::builder()
        .sink(journald.sink(id))
        .level(tachylog::Level::Trace)
        .init()
        .unwrap();
    for i in 0..500u64 {
        tachylog::info!("record {}", i);
    }
    let line = line!() + 1;
    tachylog::error!(user_id = 42u64, "http.method" = "GET", message = "shadow", _secret = true; "failed {}", "payment");
    tachylog::warn!("first line\nsecond line é ✓");
    tachylog::debug!("debug");
    tachylog::trace!("trace");
    // Larger than any datagram the sink can send (its send buffer is asked for 8 MiB, which
    // the kernel doubles): it must go in a sealed memfd.
    let large = "x".repeat(20 << 20);
    tachylog::info!("large {}", large);
    drop(guard);

    let entries = journald.wait_for(id, 505);
    assert_eq!(entries.len(), 505, "every record, once");
    let mut numbers: Vec<u64> = entries
        .iter()
        .filter_map(|e| message_of(e).strip_prefix("record ")?.parse().ok())
        .collect();
    numbers.sort_unstable();
    assert_eq!(
        numbers,
        (0..500).collect::<Vec<_>>(),
        "records 0..500 once each"
    );
    let by_message: HashMap<String, &HashMap<String, Value>> =
        entries.iter().map(|e| (message_of(e), e)).collect();

    let error = by_message["failed payment"];
    assert_eq!(text(error, "PRIORITY"), "3");
    assert_eq!(text(error, "USER_ID"), "42");
    assert_eq!(text(error, "HTTP_METHOD"), "GET");
    assert_eq!(
        text(error, "F_MESSAGE"),
        "shadow",
        "a field never adds a second MESSAGE"
    );
    assert_eq!(
        text(error, "SECRET"),
        "true",
        "journald's `_` prefix is not the client's"
    );
    assert_eq!(text(error, "CODE_LINE"), line.to_string());
    assert!(text(error, "CODE_FILE").ends_with("journald_reaches_a_real_journald.rs"));
    assert_eq!(text(error, "TARGET"), module_path!());
    assert_eq!(text(error, "SYSLOG_IDENTIFIER"), id);
    assert_eq!(text(error, "_PID"), std::process::id().to_string());
    let tid: u64 = text(error, "TID").parse().unwrap();
    assert!(tid > 0);
    let logged_at: i64 = text(error, "RECORD_REALTIME_USEC").parse().unwrap();
    let received_at: i64 = text(error, "__REALTIME_TIMESTAMP").parse().unwrap();
    assert!(
        (0..60_000_000).contains(&(received_at - logged_at)),
        "logged at {logged_at} µs, received at {received_at} µs"
    );

    let multi_line = by_message["first line\nsecond line é ✓"];
    assert_eq!(text(multi_line, "PRIORITY"), "4");
    assert_eq!(text(by_message["debug"], "PRIORITY"), "7");
    assert_eq!(text(by_message["trace"], "PRIORITY"), "7");
    let large_entry = entries
        .iter()
        .find(|e| message_of(e).starts_with("large "))
        .expect("the large record arrived");
    assert_eq!(message_of(large_entry), format!("large {large}"), "whole");
}

#[test]
fn records_journald_misses_are_counted_and_reported() {
    let _lock = common::logger_lock();
    let _watchdog = common::watchdog("journald restart test", Duration::from_secs(120));
    let mut journald = Journald::start("restart");
    let id = "tachylog-restart";
    let guard = tachylog::builder().sink(journald.sink(id)).init().unwrap();
    for i in 0..100u64 {
        tachylog::info!("record {}", i);
    }
    tachylog::flush();
    assert_eq!(journald.wait_for(id, 100).len(), 100, "before the stop");

    journald.stop();
    for i in 100..150u64 {
        tachylog::info!("record {}", i);
    }
    tachylog::flush();
    // The restarted journald is reached at the same path, with no reconnect.
    journald.spawn();
    for i in 150..200u64 {
        tachylog::info!("record {}", i);
    }
    drop(guard);

    // 100 before, 50 after, and one notice of the 50 lost.
    let entries = journald.wait_for(id, 151);
    let numbers: Vec<u64> = entries
        .iter()
        .filter_map(|e| message_of(e).strip_prefix("record ")?.parse().ok())
        .collect();
    assert_eq!(
        numbers,
        (0..100).chain(150..200).collect::<Vec<_>>(),
        "the records journald was there for, in order"
    );
    let notices: Vec<&HashMap<String, Value>> = entries
        .iter()
        .filter(|e| text(e, "TARGET") == "tachylog")
        .collect();
    assert_eq!(notices.len(), 1, "one loss notice: {notices:?}");
    assert_eq!(text(notices[0], "PRIORITY"), "4");
    let lost: u64 = message_of(notices[0])
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(lost, 50, "notice: {}", message_of(notices[0]));
    assert_eq!(entries.len(), 151);
}
