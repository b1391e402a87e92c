//! SIGTERM and SIGINT sent to a process that logs: the handler `init` installed drains every
//! queue and flushes, then the process dies of the signal (status = the signal). A handler the
//! application installed before `init` is chained: it runs after the drain. The builder option
//! turns the handler off. SIGHUP, when enabled, reopens the file at its path. Every scenario
//! runs in real child processes, several times.
// Unix only: SIGTERM, SIGINT and their handlers are Linux-only.
#![cfg(unix)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const RECORDS: u64 = 20_000;
const RUNS: usize = 8;

/// Logs from this thread and a second one, then sends `sig` to the whole process and waits
/// (bounded) to be killed by it.
fn log_then_signal(sig: libc::c_int) -> ! {
    common::log_numbered_from_two_threads("other", RECORDS);
    // SAFETY: sending a signal to our own process.
    unsafe { libc::kill(libc::getpid(), sig) };
    common::await_fatal_signal(Duration::from_secs(30))
}

fn assert_drained_and_killed_by(scenario: &str, sig: libc::c_int) {
    common::assert_killed_by_after_writing_all(scenario, sig, RUNS, RECORDS);
}

#[test]
fn sigterm_drains_then_dies_of_sigterm() {
    if let Some(log) = common::child_role("sigterm_drains_then_dies_of_sigterm") {
        let _guard = common::expect_init(tachylog::builder().file(&log).init());
        log_then_signal(libc::SIGTERM);
    }
    assert_drained_and_killed_by("sigterm_drains_then_dies_of_sigterm", libc::SIGTERM);
}

#[test]
fn sigint_drains_then_dies_of_sigint() {
    if let Some(log) = common::child_role("sigint_drains_then_dies_of_sigint") {
        let _guard = common::expect_init(tachylog::builder().file(&log).init());
        log_then_signal(libc::SIGINT);
    }
    assert_drained_and_killed_by("sigint_drains_then_dies_of_sigint", libc::SIGINT);
}

static APP_HANDLER_RAN: AtomicBool = AtomicBool::new(false);

extern "C" fn app_handler(_sig: libc::c_int) {
    APP_HANDLER_RAN.store(true, Ordering::SeqCst);
}

/// The application's own SIGTERM handler, installed before `init`, runs after the drain; the
/// child then leaves with `_exit(7)`, which runs no atexit hook: whatever is in the file was
/// written before the application's handler ran.
#[test]
fn an_application_handler_is_chained_after_the_drain() {
    if let Some(log) = common::child_role("an_application_handler_is_chained_after_the_drain") {
        // SAFETY: installing a handler that only stores to an atomic.
        unsafe {
            libc::signal(
                libc::SIGTERM,
                app_handler as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
        let _guard = common::expect_init(tachylog::builder().file(&log).init());
        common::log_numbered("main", RECORDS);
        // SAFETY: sending a signal to our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        let ran = common::poll_until(Duration::from_secs(30), || {
            APP_HANDLER_RAN.load(Ordering::SeqCst)
        });
        let code = if ran { 7 } else { 98 };
        // SAFETY: ending the process without atexit hooks, on purpose.
        unsafe { libc::_exit(code) };
    }
    for _ in 0..RUNS {
        let child = common::run_child(
            "an_application_handler_is_chained_after_the_drain",
            Duration::from_secs(60),
        );
        assert_eq!(child.status.code(), Some(7), "{child}");
        common::assert_numbered(&common::parse_log(&child.log), "main", RECORDS);
    }
}

fn sigterm_disposition_is_default() -> bool {
    // SAFETY: querying only, into a zeroed struct.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut old);
        old.sa_sigaction == libc::SIG_DFL
    }
}

#[test]
fn handle_termination_false_installs_nothing() {
    if let Some(log) = common::child_role("handle_termination_false_installs_nothing") {
        let guard = common::expect_init(
            tachylog::builder()
                .file(&log)
                .handle_termination(false)
                .init(),
        );
        let untouched = sigterm_disposition_is_default();
        drop(guard);
        let guard = common::expect_init(tachylog::builder().file(&log).init());
        let installed = !sigterm_disposition_is_default();
        drop(guard);
        std::process::exit(if untouched && installed { 0 } else { 1 });
    }
    let child = common::run_child(
        "handle_termination_false_installs_nothing",
        Duration::from_secs(60),
    );
    assert_eq!(child.status.code(), Some(0), "{child}");
}

/// `mv app.log app.log.1; kill -HUP`: later records go to a new `app.log`, earlier ones stay in
/// `app.log.1`, none lost or duplicated.
#[test]
fn sighup_reopens_the_file_at_its_path() {
    if let Some(log) = common::child_role("sighup_reopens_the_file_at_its_path") {
        let guard =
            common::expect_init(tachylog::builder().file(&log).reopen_on_sighup(true).init());
        common::log_numbered("before", RECORDS);
        tachylog::flush();
        let moved = log.with_extension("log.1");
        std::fs::rename(&log, &moved).unwrap();
        // SAFETY: sending a signal to our own process.
        unsafe { libc::kill(libc::getpid(), libc::SIGHUP) };
        common::wait_until(
            format_args!("SIGHUP to reopen {}", log.display()),
            Duration::from_secs(30),
            || log.exists(),
        );
        common::log_numbered("after", RECORDS);
        drop(guard);
        let old = common::read_log(&moved);
        let old_lines = common::parse_log(&old);
        common::assert_numbered(&old_lines, "before", RECORDS);
        assert_eq!(
            old_lines.len() as u64,
            RECORDS,
            "the moved file got later records"
        );
        return;
    }
    for _ in 0..3 {
        let child = common::run_child(
            "sighup_reopens_the_file_at_its_path",
            Duration::from_secs(60),
        );
        assert!(child.status.success(), "{child}");
        let lines = common::parse_log(&child.log);
        common::assert_numbered(&lines, "after", RECORDS);
        assert_eq!(
            lines.len() as u64,
            RECORDS,
            "earlier records in the new file\n{child}"
        );
    }
}

/// The sink is stuck (every write sleeps 60 s), so the logging threads block on their full
/// rings: a SIGTERM from elsewhere still ends the process, after the bounded drain (5 s), not
/// after the sink. `run_child`'s limit turns a hang into a failure.
#[cfg(feature = "testing")]
#[test]
fn sigterm_with_a_stuck_sink_still_dies() {
    use std::os::unix::process::ExitStatusExt;

    if let Some(log) = common::child_role("sigterm_with_a_stuck_sink_still_dies") {
        let (sink, faults) = tachylog::FaultSink::new(tachylog::FileSink::open(&log).unwrap());
        let _guard = common::expect_init(tachylog::builder().sink(sink).init());
        faults.delay(Duration::from_secs(60));
        std::thread::spawn(|| {
            // Signals once the rings hold 1 MiB, one ring's limit: the logging thread's ring
            // is then at or near that limit, and with the back end stuck in the sink nothing
            // drains it, so the thread blocks as it fills.
            let blocking = common::poll_until(Duration::from_secs(30), || {
                tachylog::stats().ring_bytes >= 1 << 20
            });
            if !blocking {
                eprintln!("the logging thread's ring never reached 1 MiB");
                // SAFETY: ends the process at once; the parent reports the status.
                unsafe { libc::_exit(97) };
            }
            // SAFETY: sending a signal to our own process.
            unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        });
        common::log_numbered("main", 1_000_000); // blocks: the ring fills, the sink is stuck
        std::process::exit(99);
    }
    for _ in 0..2 {
        let child = common::run_child(
            "sigterm_with_a_stuck_sink_still_dies",
            Duration::from_secs(50),
        );
        assert_eq!(child.status.signal(), Some(libc::SIGTERM), "{child}");
    }
}
