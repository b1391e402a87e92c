//! The capabilities a third-party sink has, exactly as tachylog's own sinks use them:
//! [`Sink::before_exit`] as the process ends with the logger running (`exit()`, a termination
//! signal the logger handles alone), after every record logged before reached the sink and
//! never when the guard is dropped; and [`tachylog::mute_current_thread`], which keeps what a
//! sink's own threads log through the `log` and `tracing` facades out of the logger.

mod common;

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tachylog::{Line, Sink};

/// Writes `line <text>` for each record and `before_exit` when asked, each straight to a file
/// (no buffering, so what the parent reads is what the sink saw).
struct Recording(std::fs::File);

impl Recording {
    fn create(path: &PathBuf) -> Recording {
        Recording(std::fs::File::create(path).unwrap())
    }
}

impl Sink for Recording {
    fn write_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        self.0.write_all(b"line ")?;
        self.0.write_all(line.text)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn before_exit(&mut self, deadline: Instant) -> io::Result<()> {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(left > Duration::ZERO && left <= Duration::from_secs(60));
        self.0.write_all(b"before_exit\n")
    }
}

/// In the child: logs `record 0..20` into a [`Recording`] at `path`, then ends by `end`.
fn log_twenty_then(path: &PathBuf, end: impl FnOnce(tachylog::Guard)) {
    let guard = tachylog::builder()
        .sink(Recording::create(path))
        .flush_interval(Duration::from_secs(3600))
        .init()
        .unwrap();
    for i in 0..20 {
        tachylog::info!("record {}", i);
    }
    end(guard);
}

/// What the child's sink saw: `record` numbers in order, then whether `before_exit` came last.
fn seen(path: &PathBuf) -> (Vec<u64>, bool) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut numbers = Vec::new();
    let mut before_exit = false;
    for line in text.lines() {
        assert!(!before_exit, "a line after before_exit:\n{text}");
        if line == "before_exit" {
            before_exit = true;
        } else if let Some((_, after)) = line.rsplit_once(": record ") {
            let number = after.split(' ').next().unwrap_or_default();
            numbers.push(
                number
                    .parse()
                    .unwrap_or_else(|_| panic!("{line:?} in:\n{text}")),
            );
        }
    }
    (numbers, before_exit)
}

fn run(scenario: &str) -> (common::ChildRun, Vec<u64>, bool) {
    let _lock = common::logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sink.txt");
    let child = common::run_child_with_log(scenario, &path, Duration::from_secs(60));
    let (numbers, before_exit) = seen(&path);
    (child, numbers, before_exit)
}

/// `std::process::exit` with the guard alive: every record, then `before_exit`, once.
// Unix only: `std::process::exit` is `ExitProcess` on Windows, which ends every other thread (the back
// end's too) and runs no atexit hook, so what is still queued is lost there.
#[cfg(unix)]
#[test]
fn process_exit_gives_the_sink_its_last_chance_after_every_record() {
    let scenario = "process_exit_gives_the_sink_its_last_chance_after_every_record";
    if let Some(path) = common::child_role(scenario) {
        log_twenty_then(&path, |guard| {
            std::mem::forget(guard);
            std::process::exit(0)
        });
    }
    let (child, numbers, before_exit) = run(scenario);
    assert!(child.status.success(), "{child}");
    assert_eq!(numbers, (0..20).collect::<Vec<_>>(), "{child}");
    assert!(before_exit, "before_exit was not called at exit()\n{child}");
}

/// A SIGTERM nobody else handles: every record, `before_exit`, then death by the signal.
#[cfg(target_os = "linux")]
#[test]
fn sigterm_gives_the_sink_its_last_chance_then_dies() {
    use std::os::unix::process::ExitStatusExt;
    let scenario = "sigterm_gives_the_sink_its_last_chance_then_dies";
    if let Some(path) = common::child_role(scenario) {
        log_twenty_then(&path, |_guard| {
            // SAFETY: sending a signal to our own process.
            unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
            common::await_fatal_signal(Duration::from_secs(30));
        });
    }
    let (child, numbers, before_exit) = run(scenario);
    assert_eq!(child.status.signal(), Some(libc::SIGTERM), "{child}");
    assert_eq!(numbers, (0..20).collect::<Vec<_>>(), "{child}");
    assert!(
        before_exit,
        "before_exit was not called on SIGTERM\n{child}"
    );
}

/// Dropping the guard ends the logger, not the process: the sink is dropped, and
/// `before_exit` is not called (not even by the `exit()` that follows).
#[test]
fn dropping_the_guard_does_not_call_before_exit() {
    let scenario = "dropping_the_guard_does_not_call_before_exit";
    if let Some(path) = common::child_role(scenario) {
        log_twenty_then(&path, |guard| {
            drop(guard);
            std::process::exit(0)
        });
    }
    let (child, numbers, before_exit) = run(scenario);
    assert!(child.status.success(), "{child}");
    assert_eq!(numbers, (0..20).collect::<Vec<_>>(), "{child}");
    assert!(
        !before_exit,
        "before_exit was called after the guard's drop\n{child}"
    );
}

/// A thread that called `mute_current_thread` logs through `log` and through `tracing` to no
/// effect; the same calls from another thread arrive, and so does the muted thread's own
/// `tachylog::info!`.
#[cfg(feature = "tracing")]
#[test]
fn a_muted_thread_logs_nothing_through_the_facades() {
    use tracing_subscriber::layer::SubscriberExt;
    let _lock = common::logger_lock();
    let lines = common::CollectLines::default();
    let guard = tachylog::builder().sink(lines.clone()).init().unwrap();
    let subscriber = tracing_subscriber::registry().with(tachylog::tracing_layer());
    tracing::subscriber::with_default(subscriber, || {
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        std::thread::spawn(move || {
            let _default = tracing::dispatcher::set_default(&dispatch);
            tachylog::mute_current_thread();
            log::warn!("muted via log");
            tracing::warn!("muted via tracing");
            tachylog::warn!("own macro still logs");
        })
        .join()
        .unwrap();
        log::warn!("unmuted via log");
        tracing::warn!("unmuted via tracing");
    });
    tachylog::flush();
    drop(guard);
    let lines = lines.lines();
    let has = |text: &str| lines.iter().any(|l| l.contains(text));
    // " muted": not the "unmuted" lines.
    assert!(
        !lines
            .iter()
            .any(|l| l.contains(" muted via log") || l.contains(" muted via tracing")),
        "{lines:#?}"
    );
    for expected in [
        "own macro still logs",
        "unmuted via log",
        "unmuted via tracing",
    ] {
        assert!(has(expected), "missing {expected:?} in {lines:#?}");
    }
}
