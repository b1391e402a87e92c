//! Helpers shared by the behaviour tests in `tests/`: a parser for the default line format,
//! numbered-record writers and checkers, a runner for scenarios that must happen in a child
//! process (exit, panic), a lock for tests that share the process-global logger, a watchdog
//! that turns a hang into a failure, waits for a condition with a deadline that only bounds a
//! hang, a sink that keeps each line as a string, values whose `Display` panics or fails, and
//! real binary logs with where their blocks start.
//!
//! Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod forged_tlog;

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use std::{env, fmt, fs, thread};

/// One record line in the default format:
/// `2026-11-21 16:04:05.125049 INFO  [main/4211] app::net: message (src/net.rs:20)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// `2026-11-21 16:04:05.125049`; fixed width, so byte order is time order.
    pub timestamp: &'a str,
    /// `TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR` (padding removed).
    pub level: &'a str,
    pub thread_name: &'a str,
    pub tid: u64,
    /// Module path, or the `log` target for records from the `log` crate.
    pub module: &'a str,
    pub message: &'a str,
    pub file: &'a str,
    pub line: u32,
}

/// Parses one line (without its `\n`) in the default format, or says what is wrong with it.
pub fn parse_line(line: &str) -> Result<Line<'_>, String> {
    let bad = |why: &str| Err(format!("{why}: {line:?}"));
    let b = line.as_bytes();
    if b.len() < 34 {
        return bad("line too short");
    }
    // yyyy-mm-dd hh:mm:ss.uuuuuu
    for (i, &c) in b[..26].iter().enumerate() {
        let ok = match i {
            4 | 7 => c == b'-',
            10 => c == b' ',
            13 | 16 => c == b':',
            19 => c == b'.',
            _ => c.is_ascii_digit(),
        };
        if !ok {
            return bad("malformed date-time prefix");
        }
    }
    if b[26] != b' ' || b[32] != b' ' || b[33] != b'[' {
        return bad("malformed separators after the date-time");
    }
    let level = match &line[27..32] {
        "TRACE" => "TRACE",
        "DEBUG" => "DEBUG",
        "INFO " => "INFO",
        "WARN " => "WARN",
        "ERROR" => "ERROR",
        _ => return bad("unknown level field"),
    };
    let rest = &line[34..];
    let Some(close) = rest.find("] ") else {
        return bad("no `] ` after the thread field");
    };
    let Some((thread_name, tid)) = rest[..close].rsplit_once('/') else {
        return bad("thread field is not name/tid");
    };
    let Ok(tid) = tid.parse::<u64>() else {
        return bad("thread id is not a number");
    };
    if thread_name.is_empty() || thread_name.contains(char::is_whitespace) {
        return bad("thread name empty or contains whitespace");
    }
    let rest = &rest[close + 2..];
    let Some((module, rest)) = rest.split_once(": ") else {
        return bad("no `: ` after the module path");
    };
    if module.is_empty() || module.contains(char::is_whitespace) {
        return bad("module path empty or contains whitespace");
    }
    let Some(rest) = rest.strip_suffix(')') else {
        return bad("line does not end with `(file:line)`");
    };
    let Some(open) = rest.rfind(" (") else {
        return bad("no ` (` before the location");
    };
    let (message, location) = (&rest[..open], &rest[open + 2..]);
    let Some((file, line_no)) = location.rsplit_once(':') else {
        return bad("location is not file:line");
    };
    let Ok(line_no) = line_no.parse::<u32>() else {
        return bad("location line is not a number");
    };
    if file.is_empty() {
        return bad("location file is empty");
    }
    Ok(Line {
        timestamp: &line[..26],
        level,
        thread_name,
        tid,
        module,
        message,
        file,
        line: line_no,
    })
}

/// Reads a whole log file as UTF-8, failing the test with the path if it cannot.
pub fn read_log(path: &Path) -> String {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    String::from_utf8(bytes)
        .unwrap_or_else(|e| panic!("{} is not valid UTF-8: {e}", path.display()))
}

/// Splits a log into lines, asserting that the last one is complete and every one parses.
pub fn parse_log(text: &str) -> Vec<Line<'_>> {
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "log does not end with a newline: last line torn? tail: {:?}",
        tail(text, 200)
    );
    text.lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The last `n` bytes (or fewer, on a char boundary) of `text`, for failure messages.
pub fn tail(text: &str, n: usize) -> &str {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Initialises or fails the test with the error's `Display`.
pub fn expect_init(result: Result<tachylog::Guard, tachylog::Error>) -> tachylog::Guard {
    match result {
        Ok(guard) => guard,
        Err(e) => panic!("tachylog init failed: {e}"),
    }
}

/// Logs `count` records `"{scope} record {i} of {count}"`, `i` from 0, at INFO.
pub fn log_numbered(scope: &str, count: u64) {
    for i in 0..count {
        tachylog::info!("{} record {} of {}", scope, i, count);
    }
}

/// Logs `count` numbered records from a thread named `other` (joined), then `count` from the
/// calling thread under the scope `main`: a record from a thread that has exited, and one from
/// a thread still running, for the exit and crash scenarios.
pub fn log_numbered_from_two_threads(other: &'static str, count: u64) {
    thread::Builder::new()
        .name(other.into())
        .spawn(move || log_numbered(other, count))
        .expect("spawn a logging thread")
        .join()
        .expect("the logging thread panicked");
    log_numbered("main", count);
}

/// Runs `scenario` in `runs` fresh children; each must die of signal `signal` with every record
/// of `log_numbered_from_two_threads("other", count)` in its log.
#[cfg(unix)]
pub fn assert_killed_by_after_writing_all(scenario: &str, signal: i32, runs: usize, count: u64) {
    use std::os::unix::process::ExitStatusExt;
    for _ in 0..runs {
        let child = run_child(scenario, Duration::from_secs(60));
        assert_eq!(child.status.signal(), Some(signal), "{child}");
        let lines = parse_log(&child.log);
        assert_numbered(&lines, "other", count);
        assert_numbered(&lines, "main", count);
    }
}

/// Asserts that the records `log_numbered(scope, count)` wrote are all in `lines`, each exactly
/// once and in order.
pub fn assert_numbered(lines: &[Line<'_>], scope: &str, count: u64) {
    let prefix = format!("{scope} record ");
    let suffix = format!(" of {count}");
    let mut next = 0u64;
    let mut errors = Vec::new();
    for line in lines {
        let Some(rest) = line.message.strip_prefix(&prefix) else {
            continue;
        };
        let i = rest
            .strip_suffix(&suffix)
            .and_then(|n| n.parse::<u64>().ok());
        match i {
            Some(i) if i == next => next += 1,
            _ if errors.len() < 10 => errors.push(format!(
                "expected record {next}, found {:?} (line at {})",
                line.message, line.timestamp
            )),
            _ => {}
        }
    }
    assert!(
        errors.is_empty(),
        "records of {scope:?} out of order, duplicated or torn:\n{}",
        errors.join("\n")
    );
    assert_eq!(
        next, count,
        "{scope:?}: only the first {next} of {count} records are in the log"
    );
}

/// Asserts that `lines` hold every record `log_numbered(scope, count)` wrote, for each of
/// `scopes`, once and in order, and nothing else; `context` (a child's output) explains a
/// failure.
pub fn assert_only_numbered(
    lines: &[Line<'_>],
    scopes: &[&str],
    count: u64,
    context: impl fmt::Display,
) {
    for scope in scopes {
        assert_numbered(lines, scope, count);
    }
    assert_eq!(
        lines.len() as u64,
        scopes.len() as u64 * count,
        "unexpected extra lines\n{context}"
    );
}

/// The names of the entries of `dir`, sorted.
pub fn sorted_file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Serialises the tests of one binary that initialise the process-global logger.
/// A test that failed while holding the lock does not poison it for the others.
pub fn logger_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Aborts the whole test process, with a message, if dropped later than `limit` after creation:
/// a hung logger (a deadlocked flush, a worker that died) fails the run instead of stalling it.
pub struct Watchdog {
    _cancel: mpsc::Sender<()>,
}

pub fn watchdog(what: &str, limit: Duration) -> Watchdog {
    let (cancel, cancelled) = mpsc::channel::<()>();
    let what = what.to_owned();
    thread::Builder::new()
        .name("test-watchdog".into())
        .spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = cancelled.recv_timeout(limit) {
                eprintln!("WATCHDOG: {what} still running after {limit:?}: hung; aborting");
                std::process::abort();
            }
        })
        .expect("spawn watchdog thread");
    Watchdog { _cancel: cancel }
}

/// How often [`poll_until`] checks its condition.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// Checks `condition` every few milliseconds until it holds (`true`) or `limit` has passed
/// (`false`): for a state that offers nothing to block on (a file appearing, a counter, a
/// child's exit), when the caller reports the timeout itself.
pub fn poll_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(POLL_INTERVAL);
    }
}

/// Waits until `condition` holds (see [`poll_until`]); fails the test, naming `what`, if it
/// still does not after `limit`. The limit only turns a hang into a failure, so it is
/// generous: a test never depends on how fast the condition comes true.
pub fn wait_until(what: impl fmt::Display, limit: Duration, condition: impl FnMut() -> bool) {
    assert!(
        poll_until(limit, condition),
        "waited {limit:?} for {what}: it did not happen"
    );
}

/// In a child that has just sent itself a fatal signal: lets the signal end the process,
/// and exits with status 99 if it has not after `limit`, which the parent reports as a wrong
/// status. Never returns.
#[cfg(unix)]
pub fn await_fatal_signal(limit: Duration) -> ! {
    // Not synchronisation: the signal ends the process during this sleep, which only bounds
    // how long that may take.
    thread::sleep(limit);
    eprintln!("still alive {limit:?} after a fatal signal");
    // SAFETY: ends the process at once without atexit hooks, which is also sound in a child
    // forked from a multi-threaded process.
    unsafe { libc::_exit(99) }
}

/// In a child with a spool: logs `records` as a batch whose cut is never committed, then
/// flushes, which writes the batch and dies by SIGKILL before the commit
/// (`kill_before_next_commit`); never returns. The back end is held while `records` runs: woken
/// halfway (the flush interval passing while the machine stalls the thread), it would commit a
/// cut of the first records, and the hook would kill the process before it logged the rest.
#[cfg(all(unix, feature = "testing"))]
pub fn log_uncommitted_and_die(records: impl FnOnce()) -> ! {
    tachylog::__private::kill_before_next_commit();
    tachylog::__private::hold_backend(true);
    records();
    tachylog::__private::hold_backend(false);
    tachylog::flush();
    await_fatal_signal(Duration::from_secs(30))
}

/// How many times each exit or crash scenario runs in a fresh child process: the interleavings
/// that lose a record are rare, so one run proves little.
pub const REPEATS: usize = 5;

/// Environment variable naming the scenario a child process must play.
const CHILD_SCENARIO: &str = "TACHYLOG_TEST_CHILD_SCENARIO";
/// Environment variable naming the log file the child writes.
const CHILD_LOG: &str = "TACHYLOG_TEST_CHILD_LOG";

/// In a child started by [`run_child`] for `scenario`, the log file to write; `None` in the
/// parent. A child test is the same `#[test]` function as its parent: it checks this first.
pub fn child_role(scenario: &str) -> Option<PathBuf> {
    match env::var(CHILD_SCENARIO) {
        Ok(s) if s == scenario => Some(PathBuf::from(
            env::var_os(CHILD_LOG).expect("child started without a log path"),
        )),
        _ => None,
    }
}

/// What a child process left behind.
pub struct ChildRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// The log file's contents (empty if the child never created it).
    pub log: String,
}

impl fmt::Display for ChildRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "child {}\n--- child stdout ---\n{}\n--- child stderr ---\n{}\n--- log tail ---\n{}",
            self.status,
            tail(&self.stdout, 4000),
            tail(&self.stderr, 4000),
            tail(&self.log, 2000)
        )
    }
}

/// Re-executes this test binary as a child running only the test named `scenario` (which must
/// be a top-level `#[test] fn` calling [`child_role`] with the same name), with its log file in
/// a fresh directory; waits at most `limit`, killing the child after that.
pub fn run_child(scenario: &str, limit: Duration) -> ChildRun {
    let dir = tempfile::tempdir().expect("create temp dir");
    run_child_with_log(scenario, &dir.path().join("child.log"), limit)
}

/// [`run_child`] with the child's log file at `log_path`.
pub fn run_child_with_log(scenario: &str, log_path: &Path, limit: Duration) -> ChildRun {
    run_child_with_env(scenario, log_path, &[], limit)
}

/// [`run_child_with_log`] with environment variables set (`Some`) or removed (`None`) in the
/// child only: for what a process reads from its environment once, such as `TZ`.
pub fn run_child_with_env(
    scenario: &str,
    log_path: &Path,
    vars: &[(&str, Option<&str>)],
    limit: Duration,
) -> ChildRun {
    run_child_with_command(
        scenario,
        log_path,
        |command| {
            for (name, value) in vars {
                match value {
                    Some(value) => command.env(name, value),
                    None => command.env_remove(name),
                };
            }
        },
        limit,
    )
}

/// [`run_child_with_log`] with the child's `Command` adjusted by `configure` first: for what
/// a child needs from its parent besides its environment (a console of its own on Windows).
pub fn run_child_with_command(
    scenario: &str,
    log_path: &Path,
    configure: impl FnOnce(&mut Command),
    limit: Duration,
) -> ChildRun {
    let mut run = run_child_leaving_log(scenario, log_path, configure, limit);
    if log_path.exists() {
        run.log = read_log(log_path);
    }
    run
}

/// [`run_child_with_command`] without reading the child's log back (`log` is empty): for a log
/// that another writer still appends to when the child has exited, which a read could catch
/// in the middle of a line, even inside a character.
pub fn run_child_leaving_log(
    scenario: &str,
    log_path: &Path,
    configure: impl FnOnce(&mut Command),
    limit: Duration,
) -> ChildRun {
    let log_path = log_path.to_path_buf();
    let exe = env::current_exe().expect("current_exe");
    let mut command = Command::new(exe);
    configure(&mut command);
    // The children start with SIGINT and SIGTERM at their default action, as under an
    // interactive shell or a service manager, whatever this process inherited: a suite started
    // with `nohup` or in the background by a script inherits SIG_IGN, which tachylog respects
    // (it installs no handler), and the tests of its handlers would then test nothing.
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe, is called.
    #[cfg(unix)]
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = command
        .args([scenario, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_SCENARIO, scenario)
        .env(CHILD_LOG, &log_path)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn child test process");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let mut status = None;
    if !poll_until(limit, || {
        status = child.try_wait().expect("wait for child");
        status.is_some()
    }) {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "child scenario {scenario:?} still running after {limit:?}: killed (hang?)\n\
             --- stderr ---\n{}",
            stderr.join().unwrap_or_default()
        );
    }
    let status = status.expect("the child has exited");
    ChildRun {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        log: String::new(),
    }
}

/// Asserts that no message appears twice in `lines` (all our messages are unique).
pub fn assert_no_duplicates(lines: &[Line<'_>]) {
    let mut seen = HashSet::new();
    for line in lines {
        assert!(
            seen.insert(line.message),
            "message logged once appears twice: {:?}",
            line.message
        );
    }
}

/// A sink that keeps every line it gets, without its newline, for tests that compare lines
/// with what `format!` makes of the same call.
#[derive(Clone, Default)]
pub struct CollectLines(pub std::sync::Arc<Mutex<Vec<String>>>);

impl CollectLines {
    /// The lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl tachylog::Sink for CollectLines {
    fn write_line(&mut self, line: &tachylog::Line<'_>) -> std::io::Result<()> {
        let text = String::from_utf8(line.text.to_vec()).expect("lines are UTF-8");
        self.0
            .lock()
            .unwrap()
            .push(text.trim_end_matches('\n').to_string());
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A value whose `Display` panics: the line must still come out, with the failure shown.
pub struct Panics;
impl fmt::Display for Panics {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("display of Panics");
    }
}

/// A value whose `Display` returns an error.
pub struct Fails;
impl fmt::Display for Fails {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Err(fmt::Error)
    }
}

/// The bytes of a real binary log of what `log` logs (each `tachylog::flush` in it closes a
/// block), written by a logger of this process.
pub fn binary_log_of(log: impl FnOnce()) -> Vec<u8> {
    let _lock = logger_lock();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.tlog");
    let guard = expect_init(
        tachylog::builder()
            .file_with(
                &path,
                tachylog::SinkOptions::new().format(tachylog::Format::Binary),
            )
            .init(),
    );
    log();
    drop(guard);
    fs::read(path).unwrap()
}

/// Where each block of a clean binary log starts, by its headers.
pub fn block_starts(bytes: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at + 16 <= bytes.len() {
        starts.push(at);
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + len;
    }
    assert_eq!(at, bytes.len(), "a clean log ends with a whole block");
    starts
}

/// The process directories in the spool root `spool` (its `locks` directory, which stays,
/// left out; none if the root does not exist).
#[allow(dead_code)]
pub fn process_dirs(spool: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(spool)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.file_name().is_some_and(|n| n != "locks"))
                .collect()
        })
        .unwrap_or_default()
}

/// `count` counters in a file mapped shared (made, zeroed, with `create`): what a thread of a
/// child stores there is in the file when its process dies.
#[cfg(unix)]
#[allow(dead_code)]
pub fn shared_counters(
    path: &Path,
    count: usize,
    create: bool,
) -> &'static [std::sync::atomic::AtomicU64] {
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(create)
        .open(path)
        .expect("progress file");
    let len = count * 8;
    file.set_len(len as u64).expect("size the progress file");
    // SAFETY: a shared mapping of the whole file, checked below, never unmapped (leaked for the
    // process's life), its words only accessed atomically.
    unsafe {
        let ptr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(ptr, libc::MAP_FAILED, "mmap the progress file");
        std::slice::from_raw_parts(ptr as *const std::sync::atomic::AtomicU64, count)
    }
}
