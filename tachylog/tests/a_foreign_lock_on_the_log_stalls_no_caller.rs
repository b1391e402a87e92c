//! A process that can read the log file can take an exclusive `flock` on it: that must stall
//! neither the back end nor, through full rings, the callers. Here another process
//! (`flock -x LOG sleep`, util-linux) holds the lock from before the logger starts until after
//! it ends, while two threads log 100,000 numbered records each into small rings, with a spool
//! (lock stripes, journal) and without one. Every record arrives, in order, and the longest
//! log call stays far under the 2 s that writers used to wait for the lock (the bound asserted
//! is generous for a loaded machine; the figure is printed).
// Unix only: `flock`.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

const RECORDS: u64 = 100_000;

/// Another process holding an exclusive `flock` on `path` until dropped.
struct ForeignLock(std::process::Child);

impl ForeignLock {
    fn take(path: &Path) -> ForeignLock {
        std::fs::write(path, b"").unwrap();
        // A process group of its own, so that the drop ends `sleep` too (killing `flock` alone
        // would leave it running for 10 minutes), and no inherited output: a `sleep` that
        // outlived the test would hold the pipe of whatever reads the suite's output.
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("flock")
            .args(["-x", "-n"])
            .arg(path)
            .args(["sleep", "600"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .expect("run flock(1)");
        // Until the lock is taken: a shared lock of our own cannot be had.
        let file = std::fs::File::open(path).unwrap();
        assert!(
            common::poll_until(Duration::from_secs(10), || { shared_lock_refused(&file) }),
            "flock(1) took the lock"
        );
        ForeignLock(child)
    }
}

/// Whether a shared lock on `file` cannot be had now (someone holds the exclusive one).
fn shared_lock_refused(file: &std::fs::File) -> bool {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a valid descriptor.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if rc == 0 {
        // SAFETY: as above.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
    }
    rc != 0
}

impl Drop for ForeignLock {
    fn drop(&mut self) {
        // SAFETY: signals the process group this test made (`flock` and its `sleep`).
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

fn log_under_a_foreign_lock(with_spool: bool) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let _foreign = ForeignLock::take(&log);
    let mut builder = tachylog::builder().file(&log).ring_capacity(64 << 10);
    if with_spool {
        builder = builder.spool(dir.path().join("spool"));
    }
    let guard = common::expect_init(builder.init());
    let threads: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|scope| {
            std::thread::spawn(move || {
                let mut longest = Duration::ZERO;
                for i in 0..RECORDS {
                    let started = Instant::now();
                    tachylog::info!("{} record {} of {}", scope, i, RECORDS);
                    longest = longest.max(started.elapsed());
                }
                longest
            })
        })
        .collect();
    let longest = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .max()
        .unwrap();
    drop(guard);
    let text = common::read_log(&log);
    let lines = common::parse_log(&text);
    common::assert_numbered(&lines, "a", RECORDS);
    common::assert_numbered(&lines, "b", RECORDS);
    longest
}

#[test]
fn a_foreign_exclusive_flock_delays_no_log_call() {
    let _serial = common::logger_lock();
    for with_spool in [false, true] {
        let longest = log_under_a_foreign_lock(with_spool);
        eprintln!(
            "spool {with_spool}: the longest of {} log calls under a foreign exclusive flock took \
             {longest:?}",
            2 * RECORDS
        );
        assert!(
            longest < Duration::from_millis(500),
            "spool {with_spool}: a log call took {longest:?}"
        );
    }
}
