//! Child processes for the OTLP tests that need their own environment (the OpenTelemetry
//! variables, proxies, `SSL_CERT_FILE`): the test binary runs again, playing one scenario.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::Duration;

/// Environment variable naming the scenario a child process plays.
const CHILD: &str = "TACHYLOG_OTLP_CHILD";

/// Whether this process is the child started for `scenario`.
pub fn is_child(scenario: &str) -> bool {
    std::env::var(CHILD).is_ok_and(|s| s == scenario)
}

/// What a child left.
pub struct ChildRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Display for ChildRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "child {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs this test binary again as a child playing `scenario` (a `#[test]` that checks
/// [`is_child`] first), with the OpenTelemetry and proxy variables of this process removed and
/// `env` set; kills it after 60 s.
pub fn run_child<V: AsRef<std::ffi::OsStr>>(scenario: &str, env: &[(&str, V)]) -> ChildRun {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([scenario, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, scenario)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars() {
        let lower = name.to_ascii_lowercase();
        if name.starts_with("OTEL_")
            || lower.ends_with("_proxy")
            || name == "SSL_CERT_FILE"
            || name == "SSL_CERT_DIR"
        {
            command.env_remove(&name);
        }
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let mut status = None;
    if !crate::common::poll_until(Duration::from_secs(60), || {
        status = child.try_wait().unwrap();
        status.is_some()
    }) {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "child {scenario} still running after 60 s: killed\n{}",
            stderr.join().unwrap_or_default()
        );
    }
    let status = status.expect("the child has exited");
    ChildRun {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}
