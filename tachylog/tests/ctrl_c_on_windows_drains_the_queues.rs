//! Ctrl-C on Windows: the console control handler `init` installs writes and flushes what is
//! queued before the next handler runs. Each scenario runs in a child with a console of its own,
//! which sends itself Ctrl-C (`GenerateConsoleCtrlEvent`) right after logging 300 records into
//! a file whose every write is slowed down, so that nearly all of them are still queued then.
//! With no other handler the system then ends the child, with every record in its file; with
//! `handle_termination(false)` records are lost (so the file can tell); and a handler the
//! application installed before `init` runs after the drain, and the process lives on.
// Windows only: console control events.
#![cfg(all(windows, feature = "testing"))]

mod common;

use std::os::windows::process::CommandExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tachylog::{FaultSink, FileSink};
use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    GenerateConsoleCtrlEvent, SetConsoleCtrlHandler, CTRL_C_EVENT,
};

const RECORDS: u64 = 300;

/// `CREATE_NEW_CONSOLE`: Ctrl-C reaches every process of a console, so the child gets its
/// own, where it is alone.
const CREATE_NEW_CONSOLE: u32 = 0x10;

/// How the child ends if the event did not end it.
const STILL_ALIVE: i32 = 99;

/// In the child: a logger whose file sink sleeps 5 ms per record (1.5 s for all of them, under
/// the handler's 4 s limit), 300 numbered records, then Ctrl-C to this console.
fn log_then_ctrl_c(log: &std::path::Path, handle_termination: bool) -> tachylog::Guard {
    let (sink, faults) = FaultSink::new(FileSink::open(log).expect("open the log"));
    faults.delay(Duration::from_millis(5));
    let guard = common::expect_init(
        tachylog::builder()
            .sink(sink)
            .handle_termination(handle_termination)
            .init(),
    );
    common::log_numbered("main", RECORDS);
    // SAFETY: no pointers; group 0 is every process of this console, which is this one alone.
    let sent = unsafe { GenerateConsoleCtrlEvent(CTRL_C_EVENT, 0) };
    assert_ne!(sent, 0, "{}", std::io::Error::last_os_error());
    guard
}

fn run(scenario: &str) -> common::ChildRun {
    let dir = tempfile::tempdir().unwrap();
    common::run_child_with_command(
        scenario,
        &dir.path().join("child.log"),
        |command| {
            command.creation_flags(CREATE_NEW_CONSOLE);
        },
        Duration::from_secs(60),
    )
}

#[test]
fn with_no_other_handler_the_queues_drain_then_the_process_ends() {
    const SCENARIO: &str = "with_no_other_handler_the_queues_drain_then_the_process_ends";
    if let Some(log) = common::child_role(SCENARIO) {
        let _guard = log_then_ctrl_c(&log, true);
        std::thread::sleep(Duration::from_secs(30));
        std::process::exit(STILL_ALIVE);
    }
    for _ in 0..3 {
        let child = run(SCENARIO);
        assert_ne!(child.status.code(), Some(STILL_ALIVE), "{child}");
        assert!(
            !child.stdout.contains("test result:"),
            "the child ended by itself, not by the event\n{child}"
        );
        let lines = common::parse_log(&child.log);
        common::assert_only_numbered(&lines, &["main"], RECORDS, &child);
    }
}

/// The control: the same child without tachylog's handler loses what is queued, so the test
/// above could fail.
#[test]
fn without_the_handler_what_is_queued_is_lost() {
    const SCENARIO: &str = "without_the_handler_what_is_queued_is_lost";
    if let Some(log) = common::child_role(SCENARIO) {
        let _guard = log_then_ctrl_c(&log, false);
        std::thread::sleep(Duration::from_secs(30));
        std::process::exit(STILL_ALIVE);
    }
    let child = run(SCENARIO);
    assert_ne!(child.status.code(), Some(STILL_ALIVE), "{child}");
    let lines = common::parse_log(&child.log);
    assert!(
        (lines.len() as u64) < RECORDS,
        "all {RECORDS} records were written without the handler: the test proves nothing\n{child}"
    );
}

/// What the application's handler saw: lines in the log when it ran (`usize::MAX`: not yet).
static LINES_SEEN: AtomicUsize = AtomicUsize::new(usize::MAX);
static HANDLED: AtomicBool = AtomicBool::new(false);
static LOG_PATH: OnceLock<std::path::PathBuf> = OnceLock::new();

/// An application's handler: counts the lines already in the log, says it handled the event.
unsafe extern "system" fn application_handler(_event: u32) -> BOOL {
    let path = LOG_PATH.get().expect("set before the handler");
    let lines = std::fs::read_to_string(path).map_or(0, |text| text.lines().count());
    LINES_SEEN.store(lines, Ordering::SeqCst);
    HANDLED.store(true, Ordering::SeqCst);
    1
}

#[test]
fn a_handler_installed_before_init_runs_after_the_drain_and_the_process_lives_on() {
    const SCENARIO: &str =
        "a_handler_installed_before_init_runs_after_the_drain_and_the_process_lives_on";
    if let Some(log) = common::child_role(SCENARIO) {
        LOG_PATH.set(log.clone()).unwrap();
        // SAFETY: registers a function that lives as long as the process.
        unsafe { SetConsoleCtrlHandler(Some(application_handler), 1) };
        let guard = log_then_ctrl_c(&log, true);
        let started = Instant::now();
        while !HANDLED.load(Ordering::SeqCst) {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the application's handler never ran"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        println!("SEEN {}", LINES_SEEN.load(Ordering::SeqCst));
        tachylog::info!("after the event");
        drop(guard);
        return;
    }
    let child = run(SCENARIO);
    assert!(child.status.success(), "{child}");
    assert!(
        child.stdout.contains(&format!("SEEN {RECORDS}\n")),
        "the application's handler ran before every queued record was written\n{child}"
    );
    let lines = common::parse_log(&child.log);
    common::assert_numbered(&lines, "main", RECORDS);
    assert_eq!(
        lines.last().map(|l| l.message),
        Some("after the event"),
        "{child}"
    );
}
